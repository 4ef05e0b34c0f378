//! A small seedable random number generator, with no dependency: a seed replays a randomized
//! test exactly, and the server's random picks (SPOP, SRANDMEMBER) need nothing stronger.

/// xorshift64*: small, deterministic, dependency-free. Not for anything secret.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A randomized test's seed: the number in the environment variable `var` if it is set
    /// (to replay a run), else one from the clock. Panics if `var` is set but not a number:
    /// the run would otherwise not be the one asked for.
    pub fn seed_from_env(var: &str) -> u64 {
        match std::env::var(var) {
            Ok(text) => text
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("{var}={text:?} is not a u64")),
            Err(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64),
        }
    }

    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform enough in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `items`. Panics if `items` is empty: the caller's own mistake.
    #[allow(clippy::indexing_slicing)]
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}
