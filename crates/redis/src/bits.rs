//! Redis's bitmap operations on byte strings, as its `bitops.c` defines them: SETBIT's and
//! GETBIT's single bits, BITCOUNT's and BITPOS's ranges, BITOP's combinations and BITFIELD's
//! integer fields with their overflow rules.
//!
//! Bits are numbered from the most significant bit of the first byte; bits past the end of a
//! string read as 0. Pure functions over bytes: reading and writing keys, and the error
//! replies, are `cmd::bits`'s.

/// Whether a BITCOUNT or BITPOS range counts bytes or bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `BYTE` (the default): the range's ends are byte indexes.
    Byte,
    /// `BIT`: the range's ends are bit indexes.
    Bit,
}

/// A BITCOUNT or BITPOS range: inclusive ends that count from the end when negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The first byte or bit.
    pub start: i64,
    /// The last byte or bit.
    pub end: i64,
    /// What the ends count.
    pub unit: Unit,
}

/// A bit offset argument as Redis reads it (`getBitOffsetFromArgument`): an integer; with
/// `width` (BITFIELD), `#n` means `n` fields of that width (the product wraps as in C).
/// `None` unless `0 <= offset` and `offset / 8 < max_bytes` (Redis's `proto-max-bulk-len`).
pub fn parse_offset(arg: &[u8], width: Option<u32>, max_bytes: u64) -> Option<u64> {
    let (digits, scale) = match (arg.split_first(), width) {
        (Some((b'#', rest)), Some(width)) => (rest, i64::from(width)),
        _ => (arg, 1),
    };
    let offset = crate::number::parse_i64(digits)?.wrapping_mul(scale);
    u64::try_from(offset).ok().filter(|&o| o >> 3 < max_bytes)
}

/// The value `name` (any case) stands for in `words`.
fn named<T: Copy>(name: &[u8], words: &[(&str, T)]) -> Option<T> {
    words
        .iter()
        .find(|(word, _)| name.eq_ignore_ascii_case(word.as_bytes()))
        .map(|&(_, value)| value)
}

/// `bytes` up to its first NUL byte (where C's `strlen` stops).
fn until_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Bit `offset` of `value` (0 past the end).
pub fn get_bit(value: &[u8], offset: u64) -> bool {
    let Some(&byte) = usize::try_from(offset / 8).ok().and_then(|i| value.get(i)) else {
        return false;
    };
    byte & (0x80 >> (offset % 8)) != 0
}

/// Grows `value` with zero bytes so that bit `offset` is inside it.
pub fn grow_to_bit(value: &mut Vec<u8>, offset: u64) {
    let len = usize::try_from(offset / 8 + 1).unwrap_or(usize::MAX);
    if value.len() < len {
        value.resize(len, 0);
    }
}

/// SETBIT: sets bit `offset` to `on`, growing `value` to reach it; returns the bit's old value.
pub fn set_bit(value: &mut Vec<u8>, offset: u64, on: bool) -> bool {
    grow_to_bit(value, offset);
    let old = get_bit(value, offset);
    let (index, mask) = ((offset / 8) as usize, 0x80u8 >> (offset % 8));
    if on {
        value[index] |= mask;
    } else {
        value[index] &= !mask;
    }
    old
}

/// BITCOUNT's shortcut: two negative ends with the start after the end count nothing, even
/// where clamping both to the string's start would leave a range.
pub fn reversed_negative(start: i64, end: i64) -> bool {
    start < 0 && end < 0 && start > end
}

/// The inclusive bit range that `range` names in a string of `len` bytes, clamped to it as
/// Redis clamps (negative ends count from the end, then stop at 0 and the last byte or bit);
/// `None` when empty.
pub fn bit_range(len: usize, range: Range) -> Option<(u64, u64)> {
    let bytes = i64::try_from(len).unwrap_or(i64::MAX >> 3);
    let total = match range.unit {
        Unit::Byte => bytes,
        Unit::Bit => bytes << 3,
    };
    let from_end = |i: i64| (if i < 0 { total + i } else { i }).max(0);
    let (start, end) = (from_end(range.start), from_end(range.end).min(total - 1));
    if start > end {
        return None;
    }
    let (start, end) = (start as u64, end as u64);
    Some(match range.unit {
        Unit::Byte => (start * 8, end * 8 + 7),
        Unit::Bit => (start, end),
    })
}

/// The bits of byte `index` that lie within the bit range `first..=last`.
fn range_mask(index: usize, first: u64, last: u64) -> u8 {
    let mut mask = 0xffu8;
    if index as u64 == first / 8 {
        mask &= 0xff >> (first % 8);
    }
    if index as u64 == last / 8 {
        mask &= 0xff << (7 - last % 8);
    }
    mask
}

/// The bytes holding the bit range `first..=last` (which must lie in `value`), with the
/// index of the first.
fn range_bytes(value: &[u8], first: u64, last: u64) -> (usize, &[u8]) {
    let (lo, hi) = ((first / 8) as usize, (last / 8) as usize);
    (lo, &value[lo..=hi])
}

/// BITCOUNT: the set bits of `value`, or of `range` within it.
pub fn count(value: &[u8], range: Option<Range>) -> u64 {
    let range = range.unwrap_or(Range {
        start: 0,
        end: -1,
        unit: Unit::Byte,
    });
    if reversed_negative(range.start, range.end) {
        return 0;
    }
    let Some((first, last)) = bit_range(value.len(), range) else {
        return 0;
    };
    let (lo, bytes) = range_bytes(value, first, last);
    let mut ones = 0u64;
    for (i, &byte) in bytes.iter().enumerate() {
        ones += u64::from((byte & range_mask(lo + i, first, last)).count_ones());
    }
    ones
}

/// BITPOS: the first bit equal to `bit` from `start` (0 if `None`) to `end` (the string's
/// end if `None`; it comes with its unit, bytes otherwise), or -1 if there is none. Without
/// an end, the string reads as followed by zeros: looking for a 0 in all ones finds the bit
/// just past the end.
pub fn position(value: &[u8], bit: bool, start: Option<i64>, end: Option<(i64, Unit)>) -> i64 {
    let (end_at, unit) = end.unwrap_or((-1, Unit::Byte));
    let range = Range {
        start: start.unwrap_or(0),
        end: end_at,
        unit,
    };
    let Some((first, last)) = bit_range(value.len(), range) else {
        return -1;
    };
    match find_bit(value, bit, first, last) {
        Some(at) => at as i64,
        None if !bit && end.is_none() => (last + 1) as i64,
        None => -1,
    }
}

/// The first bit equal to `bit` in the bit range `first..=last` of `value`.
fn find_bit(value: &[u8], bit: bool, first: u64, last: u64) -> Option<u64> {
    let (lo, bytes) = range_bytes(value, first, last);
    bytes.iter().enumerate().find_map(|(i, &byte)| {
        let wanted = if bit { byte } else { !byte };
        let hits = wanted & range_mask(lo + i, first, last);
        (hits != 0).then(|| (lo + i) as u64 * 8 + u64::from(hits.leading_zeros()))
    })
}

/// A BITOP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Bitwise not (of one source).
    Not,
}

impl BitOp {
    /// The operation named `name` (any case).
    pub fn parse(name: &[u8]) -> Option<BitOp> {
        named(
            name,
            &[
                ("and", BitOp::And),
                ("or", BitOp::Or),
                ("xor", BitOp::Xor),
                ("not", BitOp::Not),
            ],
        )
    }

    fn apply(self, a: u8, b: u8) -> u8 {
        match self {
            BitOp::And => a & b,
            BitOp::Or => a | b,
            BitOp::Xor => a ^ b,
            BitOp::Not => !a,
        }
    }
}

/// BITOP's result: as long as the longest source, shorter sources read as zero-padded (a
/// missing key is an empty source). NOT uses the first source only.
pub fn combine(op: BitOp, sources: &[Vec<u8>]) -> Vec<u8> {
    let Some((first, rest)) = sources.split_first() else {
        return Vec::new();
    };
    if op == BitOp::Not {
        return first.iter().map(|b| !b).collect();
    }
    let len = sources.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = first.clone();
    out.resize(len, 0);
    for source in rest {
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = op.apply(*byte, source.get(i).copied().unwrap_or(0));
        }
    }
    out
}

/// A BITFIELD integer type: `i1`..`i64` or `u1`..`u63`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    /// Two's complement (`i`) rather than unsigned (`u`).
    pub signed: bool,
    /// The width in bits.
    pub bits: u32,
}

impl FieldType {
    /// The type `arg` names, as Redis reads it: a lower-case `i` or `u`, then the width as
    /// an integer (read up to a NUL byte, as Redis reads it with `strlen`).
    pub fn parse(arg: &[u8]) -> Option<FieldType> {
        let (&sign, width) = until_nul(arg).split_first()?;
        let signed = match sign {
            b'i' => true,
            b'u' => false,
            _ => return None,
        };
        let bits = crate::number::parse_i64(width)?;
        let max = if signed { 64 } else { 63 };
        (1..=max).contains(&bits).then_some(FieldType {
            signed,
            bits: bits as u32,
        })
    }
}

/// What BITFIELD's SET and INCRBY do with a value outside the field's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the low bits (the default).
    Wrap,
    /// Stop at the type's minimum or maximum.
    Sat,
    /// Write nothing and reply nil.
    Fail,
}

impl Overflow {
    /// The behaviour named `name` (any case).
    pub fn parse(name: &[u8]) -> Option<Overflow> {
        named(
            name,
            &[
                ("wrap", Overflow::Wrap),
                ("sat", Overflow::Sat),
                ("fail", Overflow::Fail),
            ],
        )
    }
}

/// A BITFIELD write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldWrite {
    /// `SET`: store the value; the reply is the old one.
    Set(i64),
    /// `INCRBY`: add the increment; the reply is the new value.
    IncrBy(i64),
}

/// The `bits` bits of `value` from `offset`, most significant first, as an unsigned number.
fn get_unsigned(value: &[u8], offset: u64, bits: u32) -> u64 {
    (0..u64::from(bits)).fold(0, |acc, i| acc << 1 | u64::from(get_bit(value, offset + i)))
}

/// The field as a signed number: its top bit extended.
fn get_signed(value: &[u8], offset: u64, bits: u32) -> i64 {
    sign_extend(get_unsigned(value, offset, bits), bits) as i64
}

/// `raw` with bit `bits - 1` copied to every higher bit.
fn sign_extend(raw: u64, bits: u32) -> u64 {
    if bits < 64 && raw & (1 << (bits - 1)) != 0 {
        raw | (u64::MAX << bits)
    } else {
        raw
    }
}

/// Stores the low `bits` bits of `field` at `offset`, growing `value` if needed.
fn set_unsigned(value: &mut Vec<u8>, offset: u64, bits: u32, field: u64) {
    for i in 0..bits {
        let on = field >> (bits - 1 - i) & 1 == 1;
        set_bit(value, offset + u64::from(i), on);
    }
}

/// BITFIELD's GET: the field of type `ty` at `offset` (zero-padded past the end). Unsigned
/// fields are at most 63 bits wide, so every value fits.
pub fn get_field(value: &[u8], offset: u64, ty: FieldType) -> i64 {
    if ty.signed {
        get_signed(value, offset, ty.bits)
    } else {
        get_unsigned(value, offset, ty.bits) as i64
    }
}

/// What a BITFIELD write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldWritten {
    /// The reply: for SET the old value, for INCRBY the new one.
    pub reply: i64,
    /// Whether the field's value changed (Redis then counts the key as modified).
    pub changed: bool,
}

/// BITFIELD's SET or INCRBY of the field of type `ty` at `offset`, growing `value` if
/// needed; `None` when the result overflows under [`Overflow::Fail`] and nothing is written.
pub fn write_field(
    value: &mut Vec<u8>,
    offset: u64,
    ty: FieldType,
    write: FieldWrite,
    mode: Overflow,
) -> Option<FieldWritten> {
    let old = get_field(value, offset, ty);
    let (base, incr) = match write {
        FieldWrite::Set(n) => (n, 0),
        FieldWrite::IncrBy(n) => (old, n),
    };
    let new = if ty.signed {
        signed_result(base, incr, ty.bits, mode)?
    } else {
        unsigned_result(base as u64, incr, ty.bits, mode)? as i64
    };
    set_unsigned(value, offset, ty.bits, new as u64);
    let reply = match write {
        FieldWrite::Set(_) => old,
        FieldWrite::IncrBy(_) => new,
    };
    Some(FieldWritten {
        reply,
        changed: old != new,
    })
}

/// Which way a value left its field's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overflowed {
    Up,
    Down,
}

/// `value + incr` in a signed field of `bits` bits under `mode`, as Redis's
/// `checkSignedBitfieldOverflow` decides it (its wrapping intermediate values included).
fn signed_result(value: i64, incr: i64, bits: u32, mode: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let narrow = bits != 64;
    let overflowed = if value > max
        || (narrow && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr)
    {
        Some(Overflowed::Up)
    } else if value < min
        || (narrow && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        Some(Overflowed::Down)
    } else {
        None
    };
    let wrapped = || {
        sign_extend(
            (value as u64).wrapping_add(incr as u64) & low_mask(bits),
            bits,
        )
    };
    match (overflowed, mode) {
        (None, _) => Some(value.wrapping_add(incr)),
        (Some(_), Overflow::Wrap) => Some(wrapped() as i64),
        (Some(Overflowed::Up), Overflow::Sat) => Some(max),
        (Some(Overflowed::Down), Overflow::Sat) => Some(min),
        (Some(_), Overflow::Fail) => None,
    }
}

/// `value + incr` in an unsigned field of `bits` (< 64) bits under `mode`, as Redis's
/// `checkUnsignedBitfieldOverflow` decides it.
fn unsigned_result(value: u64, incr: i64, bits: u32, mode: Overflow) -> Option<u64> {
    let max = low_mask(bits);
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let overflowed = if value > max || (incr > 0 && incr > max_incr) {
        Some(Overflowed::Up)
    } else if incr < 0 && incr < min_incr {
        Some(Overflowed::Down)
    } else {
        None
    };
    let sum = value.wrapping_add(incr as u64);
    match (overflowed, mode) {
        (None, _) => Some(sum),
        (Some(_), Overflow::Wrap) => Some(sum & max),
        (Some(Overflowed::Up), Overflow::Sat) => Some(max),
        (Some(Overflowed::Down), Overflow::Sat) => Some(0),
        (Some(_), Overflow::Fail) => None,
    }
}

/// The low `bits` bits set.
fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_BYTES: u64 = 512 << 20;

    fn range(start: i64, end: i64, unit: Unit) -> Option<Range> {
        Some(Range { start, end, unit })
    }

    /// [`write_field`]'s reply.
    fn reply(
        v: &mut Vec<u8>,
        offset: u64,
        ty: FieldType,
        write: FieldWrite,
        mode: Overflow,
    ) -> Option<i64> {
        write_field(v, offset, ty, write, mode).map(|w| w.reply)
    }

    fn field(text: &str) -> FieldType {
        FieldType::parse(text.as_bytes()).expect("a field type")
    }

    #[test]
    fn bitcount_matches_the_redis_io_examples() {
        // redis.io BITCOUNT: SET mykey "foobar".
        let v = b"foobar";
        assert_eq!(count(v, None), 26);
        assert_eq!(count(v, range(0, 0, Unit::Byte)), 4);
        assert_eq!(count(v, range(1, 1, Unit::Byte)), 6);
        assert_eq!(count(v, range(1, 1, Unit::Bit)), 1);
        assert_eq!(count(v, range(5, 30, Unit::Bit)), 17);
        assert_eq!(count(v, range(0, -1, Unit::Byte)), 26);
        assert_eq!(count(v, range(-2, -1, Unit::Byte)), 7);
    }

    #[test]
    fn bitcount_clamps_ranges_as_redis_does() {
        let ones = [0xffu8; 3];
        // Both negative, start after end: 0 without clamping (checked against redis 7.0).
        assert_eq!(count(&ones, range(-5, -6, Unit::Byte)), 0);
        assert_eq!(count(&ones, range(-5, -6, Unit::Bit)), 0);
        // A start before the string clamps to 0; an end past it to the last byte.
        assert_eq!(count(&ones, range(-100, 100, Unit::Byte)), 24);
        assert_eq!(count(&ones, range(-30, -26, Unit::Bit)), 1);
        assert_eq!(count(b"foobar", range(-30, -26, Unit::Bit)), 4);
        assert_eq!(count(&ones, range(2, 1, Unit::Byte)), 0);
        assert_eq!(count(&ones, range(3, 10, Unit::Byte)), 0);
        assert_eq!(count(&[], None), 0);
        assert_eq!(count(&[], range(0, -1, Unit::Bit)), 0);
        assert_eq!(count(&ones, range(i64::MIN, i64::MAX, Unit::Bit)), 24);
    }

    #[test]
    fn bitpos_matches_the_redis_io_examples() {
        assert_eq!(position(b"\xff\xf0\x00", false, None, None), 12);
        let v = b"\x00\xff\xf0";
        assert_eq!(position(v, true, Some(0), None), 8);
        assert_eq!(position(v, true, Some(2), None), 16);
        assert_eq!(position(v, true, Some(2), Some((-1, Unit::Byte))), 16);
        assert_eq!(position(v, true, Some(7), Some((15, Unit::Bit))), 8);
        let zeros = b"\x00\x00\x00";
        assert_eq!(position(zeros, true, None, None), -1);
        assert_eq!(position(zeros, true, Some(7), Some((-3, Unit::Bit))), -1);
    }

    #[test]
    fn bitpos_looks_past_the_end_for_a_zero_only_without_an_end() {
        let ones = [0xffu8; 3];
        assert_eq!(position(&ones, false, None, None), 24);
        assert_eq!(position(&ones, false, Some(1), None), 24);
        assert_eq!(position(&ones, false, Some(1), Some((-1, Unit::Byte))), -1);
        assert_eq!(position(&ones, false, Some(0), Some((-1, Unit::Bit))), -1);
        assert_eq!(position(&ones, false, Some(5), None), -1);
        assert_eq!(position(&ones, true, Some(-100), None), 0);
        // No shortcut for reversed negative ends here, unlike BITCOUNT.
        assert_eq!(position(&ones, true, Some(-5), Some((-6, Unit::Byte))), 0);
        assert_eq!(position(&ones, true, Some(-5), Some((-6, Unit::Bit))), -1);
        // An empty string has no bit at all.
        assert_eq!(position(&[], false, None, None), -1);
        assert_eq!(position(&[], true, None, None), -1);
    }

    #[test]
    fn bitpos_in_bit_ranges_matches_redis() {
        // Checked against redis-server 7.0 with SET f foobar.
        let v = b"foobar";
        assert_eq!(position(v, true, Some(-30), Some((-26, Unit::Bit))), 18);
        assert_eq!(position(v, false, Some(5), Some((30, Unit::Bit))), 7);
        assert_eq!(position(v, true, Some(7), Some((15, Unit::Bit))), 9);
        assert_eq!(position(v, false, Some(0), Some((-1, Unit::Bit))), 0);
        assert_eq!(position(v, true, Some(2), None), 17);
        assert_eq!(position(v, false, Some(-3), None), 24);
        assert_eq!(position(b"\x80", true, Some(1), Some((7, Unit::Bit))), -1);
        assert_eq!(position(b"\x01", true, Some(1), Some((7, Unit::Bit))), 7);
    }

    #[test]
    fn setbit_grows_and_returns_the_old_bit() {
        // redis.io SETBIT: SETBIT mykey 7 1, SETBIT mykey 7 0, GET mykey.
        let mut v = Vec::new();
        assert!(!set_bit(&mut v, 7, true));
        assert_eq!(v, b"\x01");
        assert!(set_bit(&mut v, 7, false));
        assert_eq!(v, b"\x00");
        assert!(!set_bit(&mut v, 17, true));
        assert_eq!(v, b"\x00\x00\x40");
        assert!(get_bit(&v, 17));
        assert!(!get_bit(&v, 16));
        assert!(!get_bit(&v, 1 << 40));
    }

    #[test]
    fn offsets_parse_as_redis_reads_them() {
        assert_eq!(parse_offset(b"0", None, MAX_BYTES), Some(0));
        assert_eq!(
            parse_offset(b"4294967295", None, MAX_BYTES),
            Some(4_294_967_295)
        );
        assert_eq!(parse_offset(b"4294967296", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"-1", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"+1", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"01", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"", None, MAX_BYTES), None);
        // Unlike a field type, an offset is read whole (checked against redis 7.0).
        assert_eq!(parse_offset(b"1\0junk", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"#1", None, MAX_BYTES), None);
        assert_eq!(parse_offset(b"#2", Some(8), MAX_BYTES), Some(16));
        assert_eq!(parse_offset(b"#", Some(8), MAX_BYTES), None);
        assert_eq!(parse_offset(b"#-1", Some(8), MAX_BYTES), None);
        assert_eq!(
            parse_offset(b"#536870911", Some(8), MAX_BYTES),
            Some(4_294_967_288)
        );
        assert_eq!(parse_offset(b"#536870912", Some(8), MAX_BYTES), None);
        // 2^63 - 1 fields of 8 bits wrap to -8, as the C multiplication does.
        let huge = b"#9223372036854775807";
        assert_eq!(parse_offset(huge, Some(8), MAX_BYTES), None);
        assert_eq!(parse_offset(b"8388608", None, 1 << 20), None);
        assert_eq!(parse_offset(b"8388607", None, 1 << 20), Some(8_388_607));
    }

    #[test]
    fn bitop_pads_shorter_sources_with_zeros() {
        // redis.io BITOP: key1 "foobar", key2 "abcdef".
        let sources = [b"foobar".to_vec(), b"abcdef".to_vec()];
        assert_eq!(combine(BitOp::And, &sources), b"`bc`ab");
        let sources = [b"\xff\x0f".to_vec(), Vec::new(), b"\x01".to_vec()];
        assert_eq!(combine(BitOp::And, &sources), b"\x00\x00");
        assert_eq!(combine(BitOp::Or, &sources), b"\xff\x0f");
        assert_eq!(combine(BitOp::Xor, &sources), b"\xfe\x0f");
        assert_eq!(combine(BitOp::Not, &sources[..1]), b"\x00\xf0");
        assert_eq!(combine(BitOp::Or, &[Vec::new(), Vec::new()]), b"");
        assert_eq!(BitOp::parse(b"xOr"), Some(BitOp::Xor));
        assert_eq!(BitOp::parse(b"nand"), None);
    }

    #[test]
    fn field_types_parse_as_redis_reads_them() {
        assert_eq!(
            field("i64"),
            FieldType {
                signed: true,
                bits: 64
            }
        );
        assert_eq!(
            field("u63"),
            FieldType {
                signed: false,
                bits: 63
            }
        );
        assert_eq!(
            field("u1"),
            FieldType {
                signed: false,
                bits: 1
            }
        );
        assert_eq!(
            field("u8\0junk"),
            FieldType {
                signed: false,
                bits: 8
            }
        );
        for bad in [
            "u64", "i65", "i0", "U8", "u08", "u+8", "u", "", "8", "i-1", "i\0",
        ] {
            assert_eq!(FieldType::parse(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(Overflow::parse(b"SaT"), Some(Overflow::Sat));
        assert_eq!(Overflow::parse(b"saturate"), None);
    }

    #[test]
    fn fields_read_like_redis() {
        // Checked against redis-server 7.0 on "\xff\xff\xff".
        let ones = [0xffu8; 3];
        assert_eq!(get_field(&ones, 0, field("i8")), -1);
        assert_eq!(get_field(&ones, 0, field("u1")), 1);
        assert_eq!(get_field(&ones, 0, field("i64")), -1_099_511_627_776);
        assert_eq!(get_field(&ones, 0, field("u63")), 9_223_371_487_098_961_920);
        assert_eq!(get_field(&ones, 22, field("i3")), -2);
        assert_eq!(get_field(&ones, 20, field("u8")), 240);
        assert_eq!(get_field(b"foobar", 1, field("u4")), 0b1100);
    }

    #[test]
    fn bitfield_overflow_matches_the_redis_io_example() {
        // BITFIELD mykey incrby u2 100 1 OVERFLOW SAT incrby u2 102 1, four times.
        let mut v = Vec::new();
        let (u2, incr) = (field("u2"), FieldWrite::IncrBy(1));
        let mut replies = Vec::new();
        for _ in 0..4 {
            replies.push(reply(&mut v, 100, u2, incr, Overflow::Wrap));
            replies.push(reply(&mut v, 102, u2, incr, Overflow::Sat));
        }
        let expected = [1, 1, 2, 2, 3, 3, 0, 3].map(Some);
        assert_eq!(replies, expected);
        // BITFIELD mykey INCRBY i5 100 1 GET u4 0.
        let mut v = Vec::new();
        let first = reply(&mut v, 100, field("i5"), incr, Overflow::Wrap);
        assert_eq!(first, Some(1));
        assert_eq!(get_field(&v, 0, field("u4")), 0);
    }

    #[test]
    fn bitfield_sets_report_the_old_value_and_saturate_or_fail() {
        // Checked against redis-server 7.0: BITFIELD f set u8 0 -1 overflow sat set u8 0 -1
        // set i8 0 200 overflow fail set i8 0 200 incrby u8 0 300, with f = "foobar".
        let mut v = b"foobar".to_vec();
        let (u8t, i8t) = (field("u8"), field("i8"));
        let set = FieldWrite::Set;
        assert_eq!(reply(&mut v, 0, u8t, set(-1), Overflow::Wrap), Some(102));
        assert_eq!(reply(&mut v, 0, u8t, set(-1), Overflow::Sat), Some(255));
        assert_eq!(reply(&mut v, 0, i8t, set(200), Overflow::Sat), Some(-1));
        assert_eq!(reply(&mut v, 0, i8t, set(200), Overflow::Fail), None);
        let incr = FieldWrite::IncrBy(300);
        assert_eq!(reply(&mut v, 0, u8t, incr, Overflow::Fail), None);
        assert_eq!(v, b"\x7foobar");
    }

    #[test]
    fn bitfield_wide_fields_overflow_like_redis() {
        // Checked against redis-server 7.0.
        let mut v = Vec::new();
        let (i64t, u63t) = (field("i64"), field("u63"));
        let w = |v: &mut Vec<u8>, ty, write, mode| reply(v, 0, ty, write, mode);
        let max = FieldWrite::Set(i64::MAX);
        assert_eq!(w(&mut v, i64t, max, Overflow::Wrap), Some(0));
        let one = FieldWrite::IncrBy(1);
        assert_eq!(w(&mut v, i64t, one, Overflow::Sat), Some(i64::MAX));
        assert_eq!(w(&mut v, i64t, one, Overflow::Wrap), Some(i64::MIN));
        let mut v = Vec::new();
        assert_eq!(
            w(&mut v, u63t, FieldWrite::IncrBy(i64::MAX), Overflow::Sat),
            Some(i64::MAX)
        );
        let down = FieldWrite::IncrBy(i64::MIN);
        assert_eq!(w(&mut v, u63t, down, Overflow::Sat), Some(0));
        let minus_one = FieldWrite::IncrBy(-1);
        assert_eq!(w(&mut v, u63t, minus_one, Overflow::Wrap), Some(i64::MAX));
        assert_eq!(w(&mut v, u63t, down, Overflow::Wrap), Some(i64::MAX));
    }

    #[test]
    fn bitfield_writes_report_whether_the_field_changed() {
        let mut v = b"\x05".to_vec();
        let u8t = field("u8");
        let same = write_field(&mut v, 0, u8t, FieldWrite::Set(5), Overflow::Wrap);
        assert_eq!(same.map(|w| w.changed), Some(false));
        let zero = write_field(&mut v, 0, u8t, FieldWrite::IncrBy(0), Overflow::Wrap);
        assert_eq!(zero.map(|w| w.changed), Some(false));
        let wrapped = write_field(&mut v, 0, u8t, FieldWrite::IncrBy(256), Overflow::Wrap);
        assert_eq!(wrapped.map(|w| w.changed), Some(false));
        let sat = write_field(&mut v, 0, u8t, FieldWrite::Set(300), Overflow::Sat);
        assert_eq!(
            sat,
            Some(FieldWritten {
                reply: 5,
                changed: true
            })
        );
        assert_eq!(v, b"\xff");
    }

    #[test]
    fn signed_overflow_keeps_redis_quirks() {
        // Redis computes max - value with wrapping, so i64::MIN into an i8 field reads as
        // an overflow upwards: SAT stores the maximum.
        assert_eq!(signed_result(i64::MIN, 0, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_result(i64::MIN, 0, 8, Overflow::Wrap), Some(0));
        assert_eq!(signed_result(-129, 0, 8, Overflow::Sat), Some(-128));
        assert_eq!(signed_result(-129, 0, 8, Overflow::Wrap), Some(127));
        assert_eq!(signed_result(100, 100, 8, Overflow::Wrap), Some(-56));
        assert_eq!(signed_result(-100, -100, 8, Overflow::Sat), Some(-128));
        assert_eq!(signed_result(-100, -100, 8, Overflow::Fail), None);
        assert_eq!(unsigned_result(5, -6, 8, Overflow::Sat), Some(0));
        assert_eq!(unsigned_result(5, -6, 8, Overflow::Wrap), Some(255));
        assert_eq!(
            unsigned_result(-1i64 as u64, 0, 8, Overflow::Sat),
            Some(255)
        );
    }
}
