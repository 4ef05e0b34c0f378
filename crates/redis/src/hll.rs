//! Redis's HyperLogLog as its `hyperloglog.c` (7.0) keeps it: the string an HLL is, adding
//! elements, merging, the cached cardinality and the estimator, byte for byte.
//!
//! An HLL is a plain string: a 16-byte header (`HYLL`, the encoding byte — 0 dense, 1
//! sparse —, three unused bytes, and the cached cardinality, little endian, whose top bit
//! marks it stale), then 16384 six-bit registers, either
//! - dense: 12288 bytes, each register packed from the least significant bit up, or
//! - sparse: run-length opcodes, `00xxxxxx` ZERO (1–64 zero registers), `01xxxxxx
//!   yyyyyyyy` XZERO (1–16384 zero registers, 14 bits big endian), `1vvvvvxx` VAL (1–4
//!   registers of value 1–32); a new HLL is one XZERO of 16384.
//!
//! An element is hashed with MurmurHash64A (seed `0xadc83b19`): the low 14 bits pick a
//! register, and the run of zeros above them, plus one, is the value it may raise it to. A
//! sparse HLL turns dense when a register must exceed 32, or when an update would grow it
//! past `hll-sparse-max-bytes` (Redis's default: [`SPARSE_MAX_BYTES`]).
//!
//! The values are user data (SET writes any bytes), so everything here reads any bytes
//! without panicking, and reads them as Redis does: a sparse string must cover exactly
//! 16384 registers, and a trailing half XZERO opcode reads its missing byte from the C
//! string's NUL terminator, which [`Hll`] keeps as Redis's memory holds it while a command
//! runs. Pure functions over bytes: reading and writing keys, and the error replies, are
//! `cmd::hyperloglog`'s.

#![deny(clippy::indexing_slicing)]

/// The header's length: magic, encoding, three unused bytes, cached cardinality.
pub const HEADER_LEN: usize = 16;
/// How many registers an HLL has (`2^14`).
pub const REGISTERS: usize = 1 << P;
/// The length of a dense HLL (header and 16384 six-bit registers).
pub const DENSE_LEN: usize = HEADER_LEN + (REGISTERS * BITS).div_ceil(8);
/// Redis's default `hll-sparse-max-bytes`: the longest a sparse HLL may grow.
pub const SPARSE_MAX_BYTES: usize = 3000;

/// Bits of the hash that pick a register.
const P: u32 = 14;
/// Bits of the hash above them, whose run of zeros is counted.
const Q: u32 = 64 - P;
/// Bits per dense register.
const BITS: usize = 6;
/// The encoding byte of a dense HLL.
const DENSE: u8 = 0;
/// The encoding byte of a sparse HLL.
const SPARSE: u8 = 1;
/// Where the encoding byte is.
const ENCODING_AT: usize = 4;
/// Where the cached cardinality is.
const CARD_AT: usize = 8;
/// The largest value a sparse VAL opcode holds.
const SPARSE_VAL_MAX: u8 = 32;
/// The most registers one VAL opcode covers.
const SPARSE_VAL_MAX_LEN: usize = 4;
/// The most registers one ZERO opcode covers.
const SPARSE_ZERO_MAX_LEN: usize = 64;
/// The hash seed Redis uses.
const SEED: u32 = 0xadc8_3b19;
/// `0.5 / ln 2`, the estimator's constant (Redis's `0.721347520444481703680`, which is
/// this double).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Why a string is not an HLL Redis can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllError {
    /// Not an HLL string at all (too short, no `HYLL`, an unknown encoding, a dense one of
    /// the wrong length): Redis's `WRONGTYPE Key is not a valid HyperLogLog string value.`
    NotHll,
    /// A sparse HLL whose opcodes do not cover exactly 16384 registers: `INVALIDOBJ`.
    Corrupt,
}

/// MurmurHash2, 64-bit version (`MurmurHash64A`), reading 8-byte blocks little endian, as
/// Redis computes it on every architecture.
pub fn murmur_hash64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = u64::from(seed) ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k = block
            .iter()
            .rev()
            .fold(0u64, |k, &b| (k << 8) | u64::from(b));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `element` falls in, and the value it may raise it to (1–51): Redis's
/// `hllPatLen`.
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur_hash64a(element, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // The bit above the Q bits ends the run when they are all zero.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Dense register `index` of `registers` (the bytes after the header; a byte past the end
/// reads as 0, as the string's NUL terminator does in Redis).
fn dense_get(registers: &[u8], index: usize) -> u8 {
    let byte = index * BITS / 8;
    let shift = (index * BITS) & 7;
    let b0 = u32::from(registers.get(byte).copied().unwrap_or(0));
    let b1 = u32::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> shift) | (b1 << (8 - shift))) & 63) as u8
}

/// Sets dense register `index` of `registers` to `value` (at most 63).
fn dense_put(registers: &mut [u8], index: usize, value: u8) {
    let byte = index * BITS / 8;
    let shift = (index * BITS) & 7;
    let v = u32::from(value);
    if let Some(b) = registers.get_mut(byte) {
        *b = (*b & !((63u32 << shift) as u8)) | ((v << shift) as u8);
    }
    if let Some(b) = registers.get_mut(byte + 1) {
        *b = (*b & !((63u32 >> (8 - shift)) as u8)) | ((v >> (8 - shift)) as u8);
    }
}

/// Raises dense register `index` to `count` if it is lower; whether it did.
fn dense_raise(registers: &mut [u8], index: usize, count: u8) -> bool {
    if count > dense_get(registers, index) {
        dense_put(registers, index, count);
        true
    } else {
        false
    }
}

fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}

fn is_xzero(op: u8) -> bool {
    op & 0xc0 == 0x40
}

fn is_val(op: u8) -> bool {
    op & 0x80 != 0
}

fn zero_len(op: u8) -> usize {
    usize::from(op & 0x3f) + 1
}

fn xzero_len(op: u8, low: u8) -> usize {
    ((usize::from(op & 0x3f) << 8) | usize::from(low)) + 1
}

fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}

fn val_len(op: u8) -> usize {
    usize::from(op & 3) + 1
}

/// A VAL opcode: `len` (1–4) registers of `value` (1–32).
fn val_op(value: u8, len: usize) -> u8 {
    (value.wrapping_sub(1) << 2) | ((len as u8).wrapping_sub(1) & 3) | 0x80
}

/// Appends the ZERO or XZERO opcode for `len` (1–16384) zero registers, as Redis picks it.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    let n = len - 1;
    if len > SPARSE_ZERO_MAX_LEN {
        seq.push(((n >> 8) as u8 & 0x3f) | 0x40);
        seq.push(n as u8);
    } else {
        seq.push(n as u8);
    }
}

/// One decoded sparse opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opcode {
    /// ZERO or XZERO: this many zero registers.
    Zeros(usize),
    /// VAL: `len` registers of `value`.
    Vals { value: u8, len: usize },
}

/// The sparse opcodes of `bytes` (the registers part of a value followed by its NUL
/// terminator), up to `end`.
struct Opcodes<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

impl Iterator for Opcodes<'_> {
    type Item = Opcode;

    fn next(&mut self) -> Option<Opcode> {
        if self.at >= self.end {
            return None;
        }
        let op = self.bytes.get(self.at).copied()?;
        Some(if is_zero(op) {
            self.at += 1;
            Opcode::Zeros(zero_len(op))
        } else if is_xzero(op) {
            let low = self.bytes.get(self.at + 1).copied().unwrap_or(0);
            self.at += 2;
            Opcode::Zeros(xzero_len(op, low))
        } else {
            self.at += 1;
            Opcode::Vals {
                value: val_value(op),
                len: val_len(op),
            }
        })
    }
}

/// A register histogram: how many registers hold each value (C `int`s, which wrap as
/// Redis's do on absurdly long sparse strings).
type Histogram = [i32; 64];

/// The cardinality estimate from a register histogram: Redis 7's `hllCount`, Otmar Ertl's
/// improved estimator ("New cardinality estimation algorithms for HyperLogLog sketches").
/// The result is what Redis computes in C, out-of-range estimates included (they come out
/// as `2^63`, which PFCOUNT replies as a negative integer).
fn estimate(histogram: &Histogram) -> u64 {
    let m = REGISTERS as f64;
    let h = |j: usize| f64::from(histogram.get(j).copied().unwrap_or(0));
    let q = Q as usize;
    let mut z = m * tau((m - h(q + 1)) / m);
    for j in (1..=q).rev() {
        z += h(j);
        z *= 0.5;
    }
    z += m * sigma(h(0) / m);
    let e = ALPHA_INF * m * m / z;
    // C's llroundl: half away from zero; out of range (or infinite) gives LLONG_MIN on x86.
    let rounded = if e.abs() < 9_223_372_036_854_775_808.0 {
        e.round() as i64
    } else {
        i64::MIN
    };
    // Then stored in a double and converted to uint64_t.
    let e = rounded as f64;
    if e < 0.0 { e as i64 as u64 } else { e as u64 }
}

/// The estimator's loops run until a double stops changing; this bound is far beyond any
/// input's iterations and only guards against hanging.
const MAX_ITERATIONS: u32 = 100_000;

/// Ertl's sigma (Redis's `hllSigma`).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    for _ in 0..MAX_ITERATIONS {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            break;
        }
    }
    z
}

/// Ertl's tau (Redis's `hllTau`).
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    for _ in 0..MAX_ITERATIONS {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        // GCC turns Redis's pow(1 - x, 2) into this multiplication.
        z -= (1.0 - x) * (1.0 - x) * y;
        if before == z {
            break;
        }
    }
    z / 3.0
}

/// Adds one to `histogram[value]`.
fn bump(histogram: &mut Histogram, value: usize, by: i32) {
    if let Some(slot) = histogram.get_mut(value) {
        *slot = slot.wrapping_add(by);
    }
}

/// Registers as plain bytes, one per register: what PFCOUNT of several keys and PFMERGE
/// gather (the largest of each register over the HLLs merged in).
#[derive(Clone)]
pub struct Registers(Box<[u8; REGISTERS]>);

impl Registers {
    /// All zero.
    pub fn new() -> Self {
        Registers(Box::new([0; REGISTERS]))
    }

    /// The estimated cardinality of these registers.
    pub fn count(&self) -> u64 {
        let mut histogram = [0; 64];
        for &v in self.0.iter() {
            bump(&mut histogram, usize::from(v), 1);
        }
        estimate(&histogram)
    }

    /// The value of each register.
    pub fn values(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// Raises register `index` to `value` if lower.
    fn raise(&mut self, index: usize, value: u8) {
        if let Some(slot) = self.0.get_mut(index) {
            *slot = (*slot).max(value);
        }
    }
}

impl Default for Registers {
    fn default() -> Self {
        Self::new()
    }
}

/// An HLL string being read or changed, as Redis's C string holds it: the value's bytes and
/// the NUL terminator after them (which a trailing half XZERO opcode reads, and which one
/// of Redis's sparse updates may overwrite, for the rest of that command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hll {
    /// The value, then one terminator byte.
    buf: Vec<u8>,
}

impl Hll {
    /// A new, empty HLL: sparse, one XZERO of 16384, cached cardinality 0 (Redis's
    /// `createHLLObject`).
    pub fn new() -> Self {
        let mut buf = b"HYLL".to_vec();
        buf.extend_from_slice(&[SPARSE, 0, 0, 0]);
        buf.extend_from_slice(&[0; 8]);
        push_zeros(&mut buf, REGISTERS);
        buf.push(0);
        Hll { buf }
    }

    /// `value` if Redis takes it for an HLL (`isHLLObjectOrReply`): at least a header,
    /// `HYLL`, a known encoding, and for a dense one exactly [`DENSE_LEN`] bytes. A sparse
    /// one's opcodes are only checked as they are read.
    pub fn parse(mut value: Vec<u8>) -> Result<Self, HllError> {
        let encoding = value.get(ENCODING_AT).copied();
        let ok = value.len() >= HEADER_LEN
            && value.starts_with(b"HYLL")
            && (encoding == Some(SPARSE) || (encoding == Some(DENSE) && value.len() == DENSE_LEN));
        if !ok {
            return Err(HllError::NotHll);
        }
        value.push(0);
        Ok(Hll { buf: value })
    }

    /// The value's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        let len = self.len();
        self.buf.get(..len).unwrap_or(&[])
    }

    /// The value's bytes, owned.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.buf.pop();
        self.buf
    }

    /// The value's length.
    fn len(&self) -> usize {
        self.buf.len().saturating_sub(1)
    }

    /// Whether it is dense (else sparse).
    pub fn is_dense(&self) -> bool {
        self.byte(ENCODING_AT) == DENSE
    }

    /// Byte `at` of the buffer (0 beyond it).
    fn byte(&self, at: usize) -> u8 {
        self.buf.get(at).copied().unwrap_or(0)
    }

    fn set_byte(&mut self, at: usize, value: u8) {
        if let Some(b) = self.buf.get_mut(at) {
            *b = value;
        }
    }

    /// The registers part, terminator included.
    fn registers(&self) -> &[u8] {
        self.buf.get(HEADER_LEN..).unwrap_or(&[])
    }

    fn registers_mut(&mut self) -> &mut [u8] {
        self.buf.get_mut(HEADER_LEN..).unwrap_or(&mut [])
    }

    /// The sparse opcodes.
    fn opcodes(&self) -> Opcodes<'_> {
        Opcodes {
            bytes: self.registers(),
            at: 0,
            end: self.len().saturating_sub(HEADER_LEN),
        }
    }

    /// The cached cardinality, unless marked stale.
    pub fn cached(&self) -> Option<u64> {
        let card = (0..8).fold(0u64, |card, i| {
            card | (u64::from(self.byte(CARD_AT + i)) << (8 * i))
        });
        (card >> 63 == 0).then_some(card)
    }

    /// Stores `card` as the cached cardinality (a value with its top bit set reads as
    /// stale, as in Redis).
    pub fn set_cached(&mut self, card: u64) {
        for (i, b) in card.to_le_bytes().into_iter().enumerate() {
            self.set_byte(CARD_AT + i, b);
        }
    }

    /// Marks the cached cardinality stale.
    pub fn invalidate_cache(&mut self) {
        let top = self.byte(CARD_AT + 7) | 0x80;
        self.set_byte(CARD_AT + 7, top);
    }

    /// PFADD of one element: whether a register changed.
    pub fn add(&mut self, element: &[u8], sparse_max_bytes: usize) -> Result<bool, HllError> {
        let (index, count) = pattern(element);
        self.raise(index, count, sparse_max_bytes)
    }

    /// Raises register `index` to `count` if it is lower: whether it did. A sparse HLL may
    /// turn dense; one whose opcodes do not reach `index` is [`HllError::Corrupt`].
    pub fn raise(
        &mut self,
        index: usize,
        count: u8,
        sparse_max_bytes: usize,
    ) -> Result<bool, HllError> {
        if self.is_dense() {
            Ok(dense_raise(self.registers_mut(), index, count))
        } else {
            self.sparse_raise(index, count, sparse_max_bytes)
        }
    }

    /// Redis's `hllSparseSet`: finds the opcode covering `index`, and if the register is
    /// lower than `count`, splits that opcode around it (turning dense when the value does
    /// not fit a VAL opcode or the string would grow past `max_bytes`), then merges
    /// neighbouring VAL opcodes of equal value, and marks the cache stale.
    fn sparse_raise(
        &mut self,
        index: usize,
        count: u8,
        max_bytes: usize,
    ) -> Result<bool, HllError> {
        if count > SPARSE_VAL_MAX {
            return self.promote(index, count);
        }
        // Offsets are into the whole value; `end` is its length.
        let mut end = self.len();
        let mut p = HEADER_LEN;
        let mut first = 0usize;
        let mut prev = None;
        let mut span = 0usize;
        while p < end {
            let op = self.byte(p);
            let width;
            (span, width) = if is_zero(op) {
                (zero_len(op), 1)
            } else if is_val(op) {
                (val_len(op), 1)
            } else {
                (xzero_len(op, self.byte(p + 1)), 2)
            };
            if index < first + span {
                break;
            }
            prev = Some(p);
            p += width;
            first += span;
        }
        if span == 0 || p >= end {
            return Err(HllError::Corrupt);
        }
        let op = self.byte(p);
        let next = if is_xzero(op) { p + 2 } else { p + 1 };
        let next = (next < end).then_some(next);
        let in_place = if is_val(op) {
            if val_value(op) >= count {
                return Ok(false);
            }
            span == 1
        } else {
            is_zero(op) && span == 1
        };
        if in_place {
            self.set_byte(p, val_op(count, 1));
        } else {
            let last = first + span - 1;
            let mut seq = Vec::with_capacity(5);
            if is_val(op) {
                let current = val_value(op);
                if index != first {
                    seq.push(val_op(current, index - first));
                }
                seq.push(val_op(count, 1));
                if index != last {
                    seq.push(val_op(current, last - index));
                }
            } else {
                if index != first {
                    push_zeros(&mut seq, index - first);
                }
                seq.push(val_op(count, 1));
                if index != last {
                    push_zeros(&mut seq, last - index);
                }
            }
            let old_len = if is_xzero(op) { 2 } else { 1 };
            // At least 1: the opcode at `p` starts inside the value.
            let new_len = end + seq.len() - old_len;
            if seq.len() > old_len && new_len > max_bytes {
                return self.promote(index, count);
            }
            self.replace_opcode(p, &seq, old_len, next, end);
            end = new_len;
        }
        self.merge_vals(prev.unwrap_or(HEADER_LEN), end);
        self.invalidate_cache();
        Ok(true)
    }

    /// Puts `seq` in place of the `old_len`-byte opcode at `p` as Redis does: moves what
    /// follows (from `next`) by the difference, sets the length and its terminator, then
    /// copies `seq` in (which, after a half opcode at the very end, lands its last byte on
    /// the terminator).
    fn replace_opcode(
        &mut self,
        p: usize,
        seq: &[u8],
        old_len: usize,
        next: Option<usize>,
        end: usize,
    ) {
        let new_len = end + seq.len() - old_len;
        if new_len + 1 > self.buf.len() {
            self.buf.resize(new_len + 1, 0);
        }
        if seq.len() != old_len
            && let Some(next) = next
        {
            self.buf.copy_within(next..end, next + seq.len() - old_len);
        }
        self.buf.truncate(new_len + 1);
        self.set_byte(new_len, 0);
        for (i, &b) in seq.iter().enumerate() {
            self.set_byte(p + i, b);
        }
    }

    /// Merges adjacent VAL opcodes of the same value (up to 4 registers), scanning up to 5
    /// opcodes from `p`, as Redis does after an update.
    fn merge_vals(&mut self, mut p: usize, mut end: usize) {
        let mut scan = 5;
        while p < end && scan > 0 {
            scan -= 1;
            let op = self.byte(p);
            if is_xzero(op) {
                p += 2;
                continue;
            }
            if is_zero(op) {
                p += 1;
                continue;
            }
            let right = self.byte(p + 1);
            if p + 1 < end && is_val(right) && val_value(op) == val_value(right) {
                let len = val_len(op) + val_len(right);
                if len <= SPARSE_VAL_MAX_LEN {
                    self.set_byte(p + 1, val_op(val_value(op), len));
                    // memmove(p, p + 1, end - p), then the length shrinks by one.
                    if p < self.buf.len() {
                        self.buf.remove(p);
                    }
                    end -= 1;
                    self.set_byte(end, 0);
                    continue;
                }
            }
            p += 1;
        }
    }

    /// Turns a sparse HLL dense, then raises register `index` to `count` (Redis's
    /// `promote:` path).
    fn promote(&mut self, index: usize, count: u8) -> Result<bool, HllError> {
        self.to_dense()?;
        dense_raise(self.registers_mut(), index, count);
        Ok(true)
    }

    /// Turns a sparse HLL dense (Redis's `hllSparseToDense`), keeping the header's other
    /// bytes; whether it was sparse. Opcodes that do not cover exactly 16384 registers (a
    /// VAL past the last one fails at once) are [`HllError::Corrupt`], and leave it as it
    /// was.
    pub fn to_dense(&mut self) -> Result<bool, HllError> {
        if self.is_dense() {
            return Ok(false);
        }
        let mut dense = vec![0u8; DENSE_LEN + 1];
        for (d, &s) in dense.iter_mut().zip(self.buf.iter().take(HEADER_LEN)) {
            *d = s;
        }
        if let Some(e) = dense.get_mut(ENCODING_AT) {
            *e = DENSE;
        }
        let registers = dense.get_mut(HEADER_LEN..).unwrap_or(&mut []);
        // C ints, as in Redis.
        let mut idx: i32 = 0;
        for op in self.opcodes() {
            match op {
                Opcode::Zeros(n) => idx = idx.wrapping_add(n as i32),
                Opcode::Vals { value, len } => {
                    if idx.wrapping_add(len as i32) > REGISTERS as i32 {
                        return Err(HllError::Corrupt);
                    }
                    for _ in 0..len {
                        if let Ok(i) = usize::try_from(idx) {
                            dense_put(registers, i, value);
                        }
                        idx = idx.wrapping_add(1);
                    }
                }
            }
        }
        if idx != REGISTERS as i32 {
            return Err(HllError::Corrupt);
        }
        self.buf = dense;
        Ok(true)
    }

    /// The register histogram (`hllDenseRegHisto`, `hllSparseRegHisto`); sparse opcodes
    /// that do not cover exactly 16384 registers are [`HllError::Corrupt`].
    fn histogram(&self) -> Result<Histogram, HllError> {
        let mut histogram = [0; 64];
        if self.is_dense() {
            let registers = self.registers();
            for i in 0..REGISTERS {
                bump(&mut histogram, usize::from(dense_get(registers, i)), 1);
            }
            return Ok(histogram);
        }
        let mut idx: i32 = 0;
        for op in self.opcodes() {
            let (value, len) = match op {
                Opcode::Zeros(n) => (0, n),
                Opcode::Vals { value, len } => (usize::from(value), len),
            };
            idx = idx.wrapping_add(len as i32);
            bump(&mut histogram, value, len as i32);
        }
        if idx != REGISTERS as i32 {
            return Err(HllError::Corrupt);
        }
        Ok(histogram)
    }

    /// The estimated cardinality, computed (not the cached one).
    pub fn count(&self) -> Result<u64, HllError> {
        Ok(estimate(&self.histogram()?))
    }

    /// Raises each of `max` to this HLL's register (Redis's `hllMerge`); sparse opcodes that
    /// do not cover exactly 16384 registers (a VAL past the last one fails at once) are
    /// [`HllError::Corrupt`].
    pub fn merge_into(&self, max: &mut Registers) -> Result<(), HllError> {
        if self.is_dense() {
            let registers = self.registers();
            for i in 0..REGISTERS {
                max.raise(i, dense_get(registers, i));
            }
            return Ok(());
        }
        let mut i: i32 = 0;
        for op in self.opcodes() {
            match op {
                Opcode::Zeros(n) => i = i.wrapping_add(n as i32),
                Opcode::Vals { value, len } => {
                    if len as i64 + i64::from(i) > REGISTERS as i64 {
                        return Err(HllError::Corrupt);
                    }
                    for _ in 0..len {
                        if let Ok(index) = usize::try_from(i) {
                            max.raise(index, value);
                        }
                        i = i.wrapping_add(1);
                    }
                }
            }
        }
        if i != REGISTERS as i32 {
            return Err(HllError::Corrupt);
        }
        Ok(())
    }

    /// PFMERGE's last step: raises this HLL's registers to `max`, in register order (a
    /// sparse one may turn dense on the way), and marks the cache stale. Redis ignores a
    /// sparse update's failure here; so does this.
    pub fn raise_to(&mut self, max: &Registers, sparse_max_bytes: usize) {
        for (index, &value) in max.values().iter().enumerate() {
            if value != 0 {
                let _ = self.raise(index, value, sparse_max_bytes);
            }
        }
        self.invalidate_cache();
    }

    /// The dense registers' values (PFDEBUG GETREG), `None` if sparse.
    pub fn dense_registers(&self) -> Option<Vec<u8>> {
        let registers = self.registers();
        self.is_dense()
            .then(|| (0..REGISTERS).map(|i| dense_get(registers, i)).collect())
    }

    /// A sparse HLL's opcodes as PFDEBUG DECODE writes them (`Z:16384 v:1,1 z:3`), `None`
    /// if dense.
    pub fn decode(&self) -> Option<String> {
        if self.is_dense() {
            return None;
        }
        let mut words = Vec::new();
        let mut opcodes = self.opcodes();
        loop {
            let wide = is_xzero(self.registers().get(opcodes.at).copied().unwrap_or(0));
            words.push(match opcodes.next() {
                Some(Opcode::Zeros(n)) if wide => format!("Z:{n}"),
                Some(Opcode::Zeros(n)) => format!("z:{n}"),
                Some(Opcode::Vals { value, len }) => format!("v:{value},{len}"),
                None => break,
            });
        }
        Some(words.join(" "))
    }
}

impl Default for Hll {
    fn default() -> Self {
        Self::new()
    }
}

/// PFSELFTEST: Redis's self-test of the register layout and of the estimator (dense and
/// sparse alike, within six standard errors at 1, 10, ... 10^7 elements). `seed` stands in
/// for Redis's `rand()`. The error text is Redis's (`TESTFAILED ...`).
pub fn self_test(seed: u64, sparse_max_bytes: usize) -> Result<(), String> {
    let mut state = seed | 1;
    let mut rand = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut dense = vec![0u8; DENSE_LEN + 1];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..1000 {
        let registers = dense.get_mut(HEADER_LEN..).unwrap_or(&mut []);
        for (i, slot) in expected.iter_mut().enumerate() {
            let r = (rand() & 63) as u8;
            *slot = r;
            dense_put(registers, i, r);
        }
        for (i, &want) in expected.iter().enumerate() {
            let got = dense_get(registers, i);
            if got != want {
                return Err(format!(
                    "TESTFAILED Register {i} should be {want} but is {got}"
                ));
            }
        }
    }
    // Zeroed: a dense HLL with every register 0.
    let mut buf = b"HYLL".to_vec();
    buf.resize(DENSE_LEN + 1, 0);
    let mut dense = Hll { buf };
    let mut sparse = Hll::new();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint: u64 = 1;
    let salt = rand();
    for j in 1..=10_000_000u64 {
        let element = (j ^ salt).to_ne_bytes();
        let _ = dense.add(&element, sparse_max_bytes);
        let _ = sparse.add(&element, sparse_max_bytes);
        if j != checkpoint {
            continue;
        }
        if j < (sparse_max_bytes / 2) as u64 && sparse.is_dense() {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let card = estimate(&dense.histogram().unwrap_or([0; 64]));
        if card != estimate(&sparse.histogram().unwrap_or([0; 64])) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as i64).wrapping_sub(card as i64).unsigned_abs();
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// PFADD's effect on an existing HLL: the elements in order, then the cache marked
    /// stale if a register changed.
    fn pfadd<T: AsRef<[u8]>>(hll: &mut Hll, elements: impl IntoIterator<Item = T>) -> bool {
        let mut changed = false;
        for e in elements {
            changed |= hll
                .add(e.as_ref(), SPARSE_MAX_BYTES)
                .expect("a valid HLL takes any element");
        }
        if changed {
            hll.invalidate_cache();
        }
        changed
    }

    /// PFCOUNT of one key: the cached value, or the computed one, then cached.
    fn pfcount(hll: &mut Hll) -> u64 {
        if let Some(card) = hll.cached() {
            return card;
        }
        let card = hll.count().expect("a valid HLL");
        hll.set_cached(card);
        card
    }

    fn numbers(range: std::ops::RangeInclusive<u32>) -> impl Iterator<Item = String> {
        range.map(|n| n.to_string())
    }

    /// FNV-1a, 64 bits: a fingerprint of values too long to spell out.
    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn header(encoding: u8, card: [u8; 8]) -> Vec<u8> {
        let mut v = b"HYLL".to_vec();
        v.extend_from_slice(&[encoding, 0, 0, 0]);
        v.extend_from_slice(&card);
        v
    }

    #[test]
    fn murmur_hash64a_passes_smhasher_verification() {
        // SMHasher's VerificationTest: hash keys [], [0], [0, 1], ... with seeds 256 - i,
        // then hash the 256 results with seed 0; MurmurHash64A's value is 0x1F0D3804.
        let key: Vec<u8> = (0..=255u8).collect();
        let mut hashes = Vec::new();
        for i in 0..256 {
            let h = murmur_hash64a(&key[..i], 256 - i as u32);
            hashes.extend_from_slice(&h.to_le_bytes());
        }
        let last = murmur_hash64a(&hashes, 0);
        assert_eq!(last as u32, 0x1F0D_3804);
        assert_eq!(murmur_hash64a(b"", 0), 0);
    }

    #[test]
    fn elements_land_in_the_registers_redis_puts_them_in() {
        // redis-server 7.0.15: PFADD h a b c; PFDEBUG DECODE h
        // -> Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603
        let mut got: Vec<(usize, u8)> = ["a", "b", "c"]
            .iter()
            .map(|e| pattern(e.as_bytes()))
            .collect();
        got.sort();
        assert_eq!(got, [(8436, 1), (12711, 2), (15780, 1)]);
        let mut hll = Hll::new();
        assert!(pfadd(&mut hll, ["a", "b", "c"]));
        assert_eq!(
            hll.decode().as_deref(),
            Some("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603")
        );
        // GET h, byte for byte.
        assert_eq!(
            hex(hll.as_bytes()),
            "48594c4c01000000000000000000008060f38050b1844bfb80425a"
        );
        assert_eq!(pfcount(&mut hll), 3);
        assert_eq!(
            hex(hll.as_bytes()),
            "48594c4c01000000030000000000000060f38050b1844bfb80425a"
        );
        // Adding them again changes nothing.
        assert!(!pfadd(&mut hll, ["c", "a"]));
    }

    #[test]
    fn a_new_hll_is_one_xzero() {
        let hll = Hll::new();
        assert_eq!(hex(hll.as_bytes()), "48594c4c0100000000000000000000007fff");
        assert_eq!(hll.count(), Ok(0));
        assert_eq!(hll.decode().as_deref(), Some("Z:16384"));
        let mut empty = hll.clone();
        assert!(!pfadd(&mut empty, Vec::<&[u8]>::new()));
    }

    #[test]
    fn counts_and_bytes_match_redis() {
        // redis-server 7.0.15, PFADD of all elements in one command, then PFCOUNT.
        let mut az = Hll::new();
        pfadd(&mut az, (b'a'..=b'z').map(|c| [c]));
        assert_eq!(pfcount(&mut az), 25);
        assert_eq!(
            az.decode().as_deref(),
            Some(
                "Z:1094 v:4,1 Z:551 v:1,1 Z:138 v:3,1 Z:1769 v:6,1 Z:374 v:2,1 Z:237 v:2,1 \
                 z:15 v:1,1 Z:197 v:2,1 Z:1169 v:6,1 Z:1127 v:1,1 Z:611 v:1,1 Z:1085 v:2,1 \
                 z:57 v:1,1 Z:144 v:1,1 Z:429 v:1,1 Z:2002 v:1,1 Z:945 v:1,1 Z:750 v:2,1 \
                 Z:509 v:4,1 Z:916 v:2,1 Z:793 v:3,1 Z:224 v:1,1 Z:622 v:1,1 Z:465 v:1,1 \
                 Z:127 v:2,1 z:9"
            )
        );

        let mut n1000 = Hll::new();
        pfadd(&mut n1000, numbers(1..=1000));
        assert_eq!(pfcount(&mut n1000), 1001);
        assert!(!n1000.is_dense());
        let bytes = n1000.as_bytes();
        assert_eq!(bytes.len(), 1922);
        assert_eq!(
            hex(&bytes[..30]),
            "48594c4c01000000e9030000000000000b881f8017882c88228022900c84"
        );
        assert_eq!(fnv1a(bytes), 0x0a0d_d3e8_4971_cee9);

        // Added 5000 at a time: dense by the end.
        let mut n100k = Hll::new();
        let all: Vec<String> = numbers(1..=100_000).collect();
        for chunk in all.chunks(5000) {
            pfadd(&mut n100k, chunk);
        }
        assert_eq!(pfcount(&mut n100k), 99562);
        assert!(n100k.is_dense());
        assert_eq!(n100k.as_bytes().len(), DENSE_LEN);
        assert_eq!(fnv1a(n100k.as_bytes()), 0x7367_01e3_06df_8596);

        // PFCOUNT of several keys.
        let mut max = Registers::new();
        for hll in [&az, &n1000, &n100k] {
            hll.merge_into(&mut max).expect("valid");
        }
        assert_eq!(max.count(), 99583);
        let mut max = Registers::new();
        for hll in [&az, &n1000] {
            hll.merge_into(&mut max).expect("valid");
        }
        assert_eq!(max.count(), 1025);
    }

    #[test]
    fn sparse_turns_dense_past_3000_bytes_as_redis_does() {
        // redis-server 7.0.15: PFADD p e1, PFADD p e2, ... one at a time; the 1684th
        // element would grow the string past 3000 bytes.
        let mut p = Hll::new();
        for i in 1..=1683 {
            pfadd(&mut p, [format!("e{i}")]);
        }
        assert!(!p.is_dense());
        assert_eq!(p.as_bytes().len(), 3000);
        assert_eq!(fnv1a(p.as_bytes()), 0xcae8_2adb_7d0c_593f);
        let sparse = p.clone();
        assert!(pfadd(&mut p, ["e1684"]));
        assert!(p.is_dense());
        assert_eq!(p.as_bytes().len(), DENSE_LEN);
        assert_eq!(fnv1a(p.as_bytes()), 0xffff_ff4e_569d_d8bb);
        assert_eq!(pfcount(&mut p), 1685);
        // The dense registers are the sparse ones plus the new element's.
        let mut dense = sparse.clone();
        assert_eq!(dense.to_dense(), Ok(true));
        assert_eq!(dense.to_dense(), Ok(false));
        let (index, count) = pattern(b"e1684");
        dense.raise(index, count, SPARSE_MAX_BYTES).expect("dense");
        assert_eq!(dense.dense_registers(), p.dense_registers());
    }

    #[test]
    fn a_value_above_32_turns_sparse_dense() {
        let mut hll = Hll::new();
        pfadd(&mut hll, ["a"]);
        assert_eq!(hll.raise(100, 32, SPARSE_MAX_BYTES), Ok(true));
        assert!(!hll.is_dense());
        assert_eq!(hll.raise(100, 33, SPARSE_MAX_BYTES), Ok(true));
        assert!(hll.is_dense());
        let registers = hll.dense_registers().expect("dense");
        assert_eq!(registers[100], 33);
        let (a, count) = pattern(b"a");
        assert_eq!(registers[a], count);
        // The header (and its stale cache) is kept.
        assert_eq!(hll.cached(), None);
        assert_eq!(hll.raise(100, 33, SPARSE_MAX_BYTES), Ok(false));
    }

    #[test]
    fn sparse_updates_match_a_plain_register_array() {
        // Random raises on a sparse HLL (with a large limit, so it stays sparse as long as
        // it can) and on plain registers: the same registers, and neighbouring VALs of one
        // value merged as far as Redis merges them.
        let mut rng = engine::Rng::new(7);
        for round in 0..200 {
            let mut hll = Hll::new();
            let mut plain = Registers::new();
            let spread = [16, 64, 300, REGISTERS][round % 4] as u64;
            for _ in 0..rng.below(200) {
                let index = rng.below(spread) as usize;
                let value = 1 + rng.below(if round % 7 == 0 { 40 } else { 5 }) as u8;
                let before = plain.0[index];
                let raised = hll.raise(index, value, 100_000).expect("valid");
                assert_eq!(raised, value > before, "round {round}");
                plain.raise(index, value);
            }
            let mut got = Registers::new();
            hll.merge_into(&mut got).expect("valid");
            assert_eq!(got.values(), plain.values(), "round {round}");
            assert_eq!(hll.count(), Ok(plain.count()), "round {round}");
            let mut dense = hll.clone();
            dense.to_dense().expect("valid");
            assert_eq!(dense.dense_registers().as_deref(), Some(plain.values()));
            if let Some(decoded) = hll.decode() {
                let covered: usize = decoded
                    .split(' ')
                    .map(|w| match w.split_once(':') {
                        Some(("v", rest)) => rest
                            .split(',')
                            .nth(1)
                            .and_then(|n| n.parse().ok())
                            .unwrap_or(0),
                        Some((_, n)) => n.parse().unwrap_or(0),
                        None => 0,
                    })
                    .sum();
                assert_eq!(covered, REGISTERS, "round {round}: {decoded}");
            }
        }
    }

    #[test]
    fn raw_and_own_estimates_agree() {
        let mut hll = Hll::new();
        pfadd(&mut hll, numbers(1..=20000));
        let mut max = Registers::new();
        hll.merge_into(&mut max).expect("valid");
        assert_eq!(hll.count(), Ok(max.count()));
    }

    #[test]
    fn what_redis_does_not_take_for_an_hll() {
        assert_eq!(Hll::parse(b"HYLL".to_vec()), Err(HllError::NotHll));
        assert_eq!(
            Hll::parse(b"hello world, not an hll".to_vec()),
            Err(HllError::NotHll)
        );
        assert_eq!(Hll::parse(header(2, [0; 8])), Err(HllError::NotHll));
        // Dense of the wrong length.
        assert_eq!(Hll::parse(header(0, [0; 8])), Err(HllError::NotHll));
        let mut long = header(0, [0; 8]);
        long.resize(DENSE_LEN + 1, 0);
        assert_eq!(Hll::parse(long), Err(HllError::NotHll));
        let mut dense = header(0, [0; 8]);
        dense.resize(DENSE_LEN, 0);
        assert!(Hll::parse(dense).is_ok());
        // A sparse header alone is an HLL until read.
        let bare = Hll::parse(header(1, [0; 8])).expect("taken");
        assert_eq!(bare.count(), Err(HllError::Corrupt));
        assert_eq!(bare.cached(), Some(0));
        assert_eq!(
            bare.clone().add(b"a", SPARSE_MAX_BYTES),
            Err(HllError::Corrupt)
        );
        assert_eq!(bare.clone().to_dense(), Err(HllError::Corrupt));
        assert_eq!(
            bare.merge_into(&mut Registers::new()),
            Err(HllError::Corrupt)
        );
    }

    #[test]
    fn short_or_long_sparse_strings_are_corrupt() {
        // Covers 16383 registers, then 16385.
        let mut short = header(1, [0; 8]);
        short.extend_from_slice(&[0x7f, 0xfe]);
        let short = Hll::parse(short).expect("taken");
        assert_eq!(short.count(), Err(HllError::Corrupt));
        let mut long = header(1, [0; 8]);
        long.extend_from_slice(&[0x7f, 0xff, 0x00]);
        let long = Hll::parse(long).expect("taken");
        assert_eq!(long.count(), Err(HllError::Corrupt));
        // An element in the covered registers still lands (Redis's PFADD only fails on
        // a register past the opcodes).
        // Full coverage then a VAL: merging or turning dense fails at that VAL (counting
        // fails too), but PFADD still places its elements (redis-server 7.0.15).
        let mut extra = header(1, [0; 8]);
        extra.extend_from_slice(&[0x7f, 0xff, 0x80]);
        let extra = Hll::parse(extra).expect("taken");
        assert_eq!(extra.count(), Err(HllError::Corrupt));
        assert_eq!(
            extra.merge_into(&mut Registers::new()),
            Err(HllError::Corrupt)
        );
        assert_eq!(extra.clone().to_dense(), Err(HllError::Corrupt));
        let mut added = extra.clone();
        assert_eq!(added.add(b"a", SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(hex(&added.as_bytes()[HEADER_LEN - 1..]), "8071a6844e5780");
        let mut short_add = short.clone();
        assert_eq!(short_add.raise(5, 1, SPARSE_MAX_BYTES), Ok(true));
        assert_eq!(
            short_add.raise(16383, 1, SPARSE_MAX_BYTES),
            Err(HllError::Corrupt)
        );
    }

    #[test]
    fn a_trailing_half_xzero_reads_the_terminator() {
        // XZERO:127 ZERO:64 ZERO:64, then 0x7f without its second byte: XZERO of
        // (63 << 8 | 0) + 1 = 16129, 16384 in all.
        let mut value = header(1, [0; 8]);
        value.extend_from_slice(&[0x40, 0x7e, 0x3f, 0x3f, 0x7f]);
        let hll = Hll::parse(value).expect("taken");
        assert_eq!(hll.count(), Ok(0));
        assert_eq!(hll.decode().as_deref(), Some("Z:127 z:64 z:64 Z:16129"));
        // Raising a register in it splits it: XZERO:100 VAL XZERO:16028, of which the
        // last byte lands on the terminator, so the value ends with a half XZERO again.
        let mut split = hll.clone();
        assert_eq!(split.raise(255 + 100, 3, SPARSE_MAX_BYTES), Ok(true));
        let bytes = split.as_bytes();
        assert_eq!(hex(&bytes[HEADER_LEN..]), "407e3f3f4063887e");
        assert_eq!(split.buf.last(), Some(&0x9b));
        // Registers 0..=255+100 and the rest: (0x3e << 8 | 0x9b) + 1 = 16028 after it.
        assert_eq!(split.count().map(|c| c > 0), Ok(true));
        let mut dense = split.clone();
        assert_eq!(dense.to_dense(), Ok(true));
        let stored = Hll::parse(split.into_bytes()).expect("taken");
        // Read back from storage, the hidden byte is gone: 16384 - 16028 + 1 registers
        // short of Redis's reading while the command ran.
        assert_eq!(stored.count(), Err(HllError::Corrupt));
    }

    #[test]
    fn out_of_range_estimates_come_out_as_redis_computes_them() {
        // Every register 63: beyond the histogram's 51, so nothing is summed, z = 0, and
        // C's llroundl of infinity is LLONG_MIN, read back as 2^63.
        let mut value = header(0, [0; 8]);
        value.resize(DENSE_LEN, 0xff);
        let hll = Hll::parse(value).expect("dense");
        assert_eq!(hll.count(), Ok(1 << 63));
        let mut all_zero = header(0, [0; 8]);
        all_zero.resize(DENSE_LEN, 0);
        assert_eq!(Hll::parse(all_zero).expect("dense").count(), Ok(0));
    }

    #[test]
    fn self_test_passes() {
        assert_eq!(self_test(12345, SPARSE_MAX_BYTES), Ok(()));
    }

    /// A sparse-looking string: the header, then opcode-ish bytes.
    fn sparse_like() -> impl Strategy<Value = Vec<u8>> {
        let card = proptest::array::uniform8(any::<u8>());
        let opcode = prop_oneof![
            Just(0x7fu8),
            Just(0xffu8),
            0x00u8..0x40,
            0x40u8..0x80,
            0x80u8..=0xff,
        ];
        (card, proptest::collection::vec(opcode, 0..40)).prop_map(|(card, ops)| {
            let mut v = header(1, card);
            v.extend_from_slice(&ops);
            v
        })
    }

    /// Runs every reader and writer on `value`; none may panic.
    fn exercise(value: &[u8]) {
        let Ok(hll) = Hll::parse(value.to_vec()) else {
            return;
        };
        let _ = hll.count();
        let _ = hll.cached();
        let _ = hll.decode();
        let _ = hll.dense_registers();
        let mut max = Registers::new();
        let _ = hll.merge_into(&mut max);
        let mut added = hll.clone();
        for e in ["a", "b", "c", "x", "hello"] {
            let _ = added.add(e.as_bytes(), 40);
        }
        let _ = added.count();
        let mut raised = hll.clone();
        for (index, count) in [(0, 1), (16383, 2), (8000, 33), (100, 5), (101, 5)] {
            let _ = raised.raise(index, count, 30);
        }
        let _ = raised.decode();
        let mut merged = hll.clone();
        merged.raise_to(&max, SPARSE_MAX_BYTES);
        let mut dense = hll.clone();
        let _ = dense.to_dense();
        let _ = dense.count();
        let _ = Hll::parse(raised.into_bytes()).map(|h| h.count());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn decoding_sparse_like_bytes_never_panics(value in sparse_like()) {
            // proptest prints the (shrunk) failing value.
            exercise(&value);
        }

        #[test]
        fn decoding_any_bytes_never_panics(
            value in proptest::collection::vec(any::<u8>(), 0..64),
            sparse in any::<bool>(),
        ) {
            let mut value = value;
            if sparse {
                let mut v = header(1, [0; 8]);
                v.append(&mut value);
                value = v;
            }
            exercise(&value);
        }
    }
}
