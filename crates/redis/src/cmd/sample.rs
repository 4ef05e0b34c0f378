//! What SRANDMEMBER, HRANDFIELD and ZRANDMEMBER share: their count argument, checked as
//! Redis 7.0 checks it, and the random sample itself.

use engine::{Engine, Rng};

use super::{Ctx, is};
use crate::error::{CmdError, CmdResult};
use crate::number::int_arg;

/// Most elements a negative count (repeats allowed) may ask for. Redis has no bound and
/// builds a reply of any size (`HRANDFIELD h -4611686018427387903 WITHVALUES` runs
/// redis-server 7.0 out of memory); docdb answers "value is out of range" beyond this.
const MAX_REPEATED: u64 = 1 << 24;

/// How many random elements a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Count {
    /// No count: one element, or null.
    One,
    /// A count: that many distinct elements (at most all of them) when positive, that many
    /// with repeats when negative.
    Many(i64),
}

/// The count at argument 2 (if any) and whether argument 3 is `with_word` (WITHVALUES,
/// WITHSCORES; `None` for SRANDMEMBER, which takes no such word), checked in Redis's order:
/// the count's range, then the word, then the range a paired reply allows.
pub(super) fn parse_count(args: &[Vec<u8>], with_word: Option<&str>) -> CmdResult<(Count, bool)> {
    let Some(arg) = args.get(2) else {
        return Ok((Count::One, false));
    };
    let n = int_arg(arg)?;
    if n == i64::MIN {
        return Err(CmdError::err(format!(
            "value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    let paired = match (args.get(3), with_word) {
        (None, _) => false,
        (Some(word), Some(with)) if args.len() == 4 && is(word, with) => true,
        _ => return Err(CmdError::Syntax),
    };
    let out_of_range = || CmdError::err("value is out of range");
    if paired && n.unsigned_abs() > (i64::MAX / 2) as u64 {
        return Err(out_of_range());
    }
    if n < 0 && n.unsigned_abs() > MAX_REPEATED {
        return Err(out_of_range());
    }
    Ok((Count::Many(n), paired))
}

/// A random generator for one request: different per connection and per moment.
pub(super) fn request_rng<E: Engine>(ctx: &Ctx<'_, '_, E>) -> Rng {
    Rng::new(ctx.read_time().0 ^ ctx.session.id.rotate_left(32))
}

/// `count` elements of `all` (see [`Count::Many`]): distinct ones by a partial
/// Fisher-Yates shuffle, or picks with repeats.
pub(super) fn sample<T: Clone>(mut all: Vec<T>, count: i64, rng: &mut Rng) -> Vec<T> {
    if all.is_empty() {
        return all;
    }
    if count < 0 {
        return (0..count.unsigned_abs())
            .map(|_| rng.pick(&all).clone())
            .collect();
    }
    let wanted = usize::try_from(count).unwrap_or(usize::MAX).min(all.len());
    for i in 0..wanted {
        let j = i + rng.below((all.len() - i) as u64) as usize;
        all.swap(i, j);
    }
    all.truncate(wanted);
    all
}

/// One element of `all` at random, if any.
pub(super) fn sample_one<T>(mut all: Vec<T>, rng: &mut Rng) -> Option<T> {
    if all.is_empty() {
        return None;
    }
    let i = rng.below(all.len() as u64) as usize;
    Some(all.swap_remove(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn reply(result: CmdResult<(Count, bool)>) -> String {
        match result {
            Ok(parsed) => format!("{parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// The replies redis-server 7.0.15 gives to the same arguments of HRANDFIELD.
    #[test]
    fn counts_are_checked_as_redis_checks_them() {
        let hrandfield = |words: &[&str]| reply(parse_count(&args(words), Some("withvalues")));
        assert_eq!(hrandfield(&["hrandfield", "h"]), "(One, false)");
        assert_eq!(hrandfield(&["hrandfield", "h", "-3"]), "(Many(-3), false)");
        assert_eq!(
            hrandfield(&["hrandfield", "h", "2", "WithValues"]),
            "(Many(2), true)"
        );
        assert_eq!(
            hrandfield(&["hrandfield", "h", "x"]),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            hrandfield(&["hrandfield", "h", "1", "bogus"]),
            "ERR syntax error"
        );
        assert_eq!(
            hrandfield(&["hrandfield", "h", "1", "withvalues", "x"]),
            "ERR syntax error"
        );
        assert_eq!(
            hrandfield(&["hrandfield", "h", "-9223372036854775808"]),
            "ERR value is out of range, value must between -9223372036854775807 and \
             9223372036854775807"
        );
        assert_eq!(
            hrandfield(&["hrandfield", "h", "-4611686018427387904", "withvalues"]),
            "ERR value is out of range"
        );
        // A non-integer count is reported before a bad word, as Redis does.
        assert_eq!(
            hrandfield(&["hrandfield", "h", "x", "bogus"]),
            "ERR value is not an integer or out of range"
        );
        let srandmember = |words: &[&str]| reply(parse_count(&args(words), None));
        assert_eq!(
            srandmember(&["srandmember", "s", "1", "withvalues"]),
            "ERR syntax error"
        );
        // docdb's own bound on repeats; positive counts have none (they stop at the size).
        assert_eq!(
            srandmember(&["srandmember", "s", "-16777217"]),
            "ERR value is out of range"
        );
        assert_eq!(
            srandmember(&["srandmember", "s", "9223372036854775807"]),
            "(Many(9223372036854775807), false)"
        );
    }

    #[test]
    fn positive_counts_sample_distinct_elements_and_negative_ones_repeat() {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let all: Vec<u32> = (0..10).collect();
            let mut picked = sample(all.clone(), 4, &mut rng);
            assert_eq!(picked.len(), 4, "seed {seed}");
            picked.sort_unstable();
            picked.dedup();
            assert_eq!(picked.len(), 4, "seed {seed}: repeats in {picked:?}");
            let mut whole = sample(all.clone(), 99, &mut rng);
            whole.sort_unstable();
            assert_eq!(whole, all, "seed {seed}");
            let repeated = sample(vec![7u32], -5, &mut rng);
            assert_eq!(repeated, vec![7; 5], "seed {seed}");
            assert!(sample(Vec::<u32>::new(), -5, &mut rng).is_empty());
            assert!(sample(all.clone(), 0, &mut rng).is_empty());
        }
    }

    #[test]
    fn every_element_can_be_drawn() {
        let mut rng = Rng::new(42);
        let mut seen = [false; 5];
        for _ in 0..500 {
            let i = sample_one((0..5).collect(), &mut rng).expect("an element");
            seen[i] = true;
        }
        assert_eq!(seen, [true; 5]);
        assert_eq!(sample_one(Vec::<u8>::new(), &mut rng), None);
    }
}
