//! YugabyteDB's "fast" varints (format.md §2.1, `util/fast_varint.cc`).
//!
//! The signed form is order-preserving: `cmp(a, b) == cmp(encode(a), encode(b))`. It carries
//! column ids, TTLs and the parts of a DocHybridTime. The unsigned form (merge flags, packed-row
//! schema versions) is length-prefixed but is *not* LEB128.

use crate::error::{Result, corruption, take};

/// Longest signed or unsigned fast varint.
pub const MAX_VARINT_LEN: usize = 10;

/// Byte length of the signed encoding of a magnitude `v` (`SignedPositiveVarIntLength`).
fn signed_len(mut v: u64) -> usize {
    v >>= 6;
    let mut n = 1;
    while v != 0 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Appends the order-preserving signed encoding of `v`.
///
/// Layout for a magnitude needing `n` bytes: a sign bit (1 = positive), `n - 1` ones, a zero,
/// then the magnitude big-endian; negative values are the ones' complement of that.
pub fn encode_signed(v: i64, out: &mut Vec<u8>) {
    let negative = v < 0;
    let magnitude = v.unsigned_abs();
    let n = signed_len(magnitude);
    let mask = if negative { 0xFF } else { 0x00 };
    if n <= 8 {
        // Common case: header and value fit a u64 (7n ≤ 56 bits of header shift).
        let word = (((1u64 << n) - 1) << (7 * n)) | magnitude;
        let bytes = (word ^ if negative { u64::MAX } else { 0 }).to_be_bytes();
        out.extend_from_slice(&bytes[8 - n..]);
        return;
    }
    // Header: n ones (sign + n-1 length ones) at the top of an 8n-bit big-endian number,
    // followed by a zero; for n = 10 that leaves 69 value bits.
    let header = ((1u128 << n) - 1) << (7 * n);
    let word = header | u128::from(magnitude);
    let bytes = word.to_be_bytes();
    let start = bytes.len() - n;
    out.extend(bytes[start..].iter().map(|b| b ^ mask));
}

/// Appends the descending form of `v`: the signed encoding of `-v`.
pub fn encode_signed_descending(v: i64, out: &mut Vec<u8>) {
    // -i64::MIN overflows; its magnitude still fits the 10-byte form, so encode it via i128.
    match v.checked_neg() {
        Some(neg) => encode_signed(neg, out),
        None => {
            // +2^63: positive, 10 bytes, header FF C0, then the magnitude.
            out.extend_from_slice(&[0xFF, 0xC0]);
            out.extend_from_slice(&(1u64 << 63).to_be_bytes());
        }
    }
}

/// Decodes a signed varint from the front of `input`, returning the value and the rest.
pub fn decode_signed(input: &[u8]) -> Result<(i64, &[u8])> {
    let (negative, magnitude, rest) = decode_signed_parts(input)?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    let value = value.ok_or_else(|| corruption!("signed varint out of int64 range"))?;
    Ok((value, rest))
}

/// Decodes the descending form written by [`encode_signed_descending`].
pub fn decode_signed_descending(input: &[u8]) -> Result<(i64, &[u8])> {
    let (negative, magnitude, rest) = decode_signed_parts(input)?;
    // The stored number is -v: a positive stored magnitude means v is negative.
    let value = if negative {
        i64::try_from(magnitude).ok()
    } else {
        0i64.checked_sub_unsigned(magnitude)
    };
    let value = value.ok_or_else(|| corruption!("descending varint out of int64 range"))?;
    Ok((value, rest))
}

/// The length of the signed varint at the front of `input` (ascending or descending), read
/// from its header alone; `None` if there is none or it is cut short.
pub fn signed_len_at(input: &[u8]) -> Option<usize> {
    let (_, n) = signed_header(input)?;
    (n <= input.len()).then_some(n)
}

/// Sign and byte length of the signed varint at the front of `input`, from its header.
fn signed_header(input: &[u8]) -> Option<(bool, usize)> {
    let &first = input.first()?;
    let negative = first & 0x80 == 0;
    let flip = if negative { 0xFFu8 } else { 0 };
    let second = input.get(1).map_or(0, |b| b ^ flip);
    let n = u16::from_be_bytes([first ^ flip, second]).leading_ones() as usize;
    (1..=MAX_VARINT_LEN).contains(&n).then_some((negative, n))
}

/// Sign, magnitude and rest of a signed varint.
fn decode_signed_parts(input: &[u8]) -> Result<(bool, u64, &[u8])> {
    let (&first, _) = input
        .split_first()
        .ok_or_else(|| corruption!("cannot decode a varint of zero size"))?;
    let (negative, n) =
        signed_header(input).ok_or_else(|| corruption!("invalid varint header {first:#04x}"))?;
    let flip = if negative { 0xFFu8 } else { 0 };
    let (body, rest) = take(input, n, "varint")?;
    let value_bits = 7 * n - 1;
    if n <= 8 {
        // Common case (|v| < 2^55): the whole encoding fits a u64.
        let word = body
            .iter()
            .fold(0u64, |w, &b| (w << 8) | u64::from(b ^ flip));
        return Ok((negative, word & ((1u64 << value_bits) - 1), rest));
    }
    let word = body
        .iter()
        .fold(0u128, |w, &b| (w << 8) | u128::from(b ^ flip));
    let magnitude = word & ((1u128 << value_bits) - 1);
    let magnitude = u64::try_from(magnitude).map_err(|_| corruption!("varint exceeds 64 bits"))?;
    Ok((negative, magnitude, rest))
}

/// Appends the unsigned fast varint: `n - 1` leading ones, a zero, then the value; the
/// 9-byte form is `FF` + 8 bytes' worth of 63 bits and the 10-byte form `FF 80` + 8 bytes.
pub fn encode_unsigned(v: u64, out: &mut Vec<u8>) {
    let bits = 64 - v.leading_zeros() as usize;
    let n = bits.div_ceil(7).max(1);
    match n {
        10 => {
            out.extend_from_slice(&[0xFF, 0x80]);
            out.extend_from_slice(&v.to_be_bytes());
        }
        9 => {
            out.push(0xFF);
            out.extend_from_slice(&v.to_be_bytes());
        }
        _ => {
            let header = !((1u64 << (9 - n)) - 1) << (8 * (n - 1));
            let word = header | v;
            out.extend_from_slice(&word.to_be_bytes()[8 - n..]);
        }
    }
}

/// Decodes an unsigned fast varint from the front of `input`.
pub fn decode_unsigned(input: &[u8]) -> Result<(u64, &[u8])> {
    let (&first, _) = input
        .split_first()
        .ok_or_else(|| corruption!("cannot decode a varint of zero size"))?;
    let mut n = (first.leading_ones() as usize + 1).min(9);
    let mut skip = 1;
    if n == 9 {
        let second = *input
            .get(1)
            .ok_or_else(|| corruption!("varint: need 9 bytes, only 1 left"))?;
        if second & 0x80 != 0 {
            n = 10;
            skip = 2;
        }
    }
    let (body, rest) = take(input, n, "varint")?;
    let first_bits = if n >= 9 {
        0
    } else {
        u64::from(first) & ((1 << (8 - n)) - 1)
    };
    let value = body[skip..]
        .iter()
        .fold(first_bits, |acc, &b| (acc << 8) | u64::from(b));
    Ok((value, rest))
}

/// Appends a packed-row V2 field length: one byte `len << 1` below 0x80, else four bytes
/// little-endian of `(len << 1) | 1`.
pub fn encode_field_length(len: u32, out: &mut Vec<u8>) {
    if len < 0x80 {
        out.push((len << 1) as u8);
    } else {
        out.extend_from_slice(&((len << 1) | 1).to_le_bytes());
    }
}

/// Decodes a field length written by [`encode_field_length`].
pub fn decode_field_length(input: &[u8]) -> Result<(u32, &[u8])> {
    let &first = input
        .first()
        .ok_or_else(|| corruption!("field length: no bytes"))?;
    if first & 1 == 0 {
        return Ok((u32::from(first >> 1), &input[1..]));
    }
    let (bytes, rest) = crate::error::take_array::<4>(input, "field length")?;
    Ok((u32::from_le_bytes(bytes) >> 1, rest))
}

/// A decoder that returns the value and the unread rest of its input.
pub type Decoder<T> = fn(&[u8]) -> Result<(T, &[u8])>;

/// Decodes a value that must use all of `input` (trailing bytes are corruption).
pub fn decode_exact<T>(input: &[u8], decode: Decoder<T>) -> Result<T> {
    let (value, rest) = decode(input)?;
    if !rest.is_empty() {
        return Err(corruption!("{} trailing bytes after varint", rest.len()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn signed(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_signed(v, &mut out);
        out
    }

    fn unsigned(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_unsigned(v, &mut out);
        out
    }

    #[test]
    fn signed_vectors() {
        // vectors.md A4 and format.md §2.1.
        let cases: &[(i64, &[u8])] = &[
            (0, b"\x80"),
            (1, b"\x81"),
            (-1, b"~"),
            (63, b"\xbf"),
            (-63, b"\x40"),
            (64, b"\xc0\x40"),
            (-64, b"\x3f\xbf"),
            (8191, b"\xdf\xff"),
            (1000, b"\xc3\xe8"),
            (-1000, b"\x3c\x17"),
            (3_600_000, b"\xf0\x36\xee\x80"),
        ];
        for &(v, bytes) in cases {
            assert_eq!(signed(v), bytes, "encode {v}");
            assert_eq!(decode_exact(bytes, decode_signed), Ok(v), "decode {v}");
        }
    }

    #[test]
    fn signed_lengths() {
        assert_eq!(signed_len(0), 1);
        assert_eq!(signed_len(63), 1);
        assert_eq!(signed_len(64), 2);
        for (n, bits) in (6..=62).step_by(7).enumerate() {
            assert_eq!(signed_len((1u64 << bits) - 1), n + 1, "2^{bits}-1");
            assert_eq!(signed_len(1u64 << bits), n + 2, "2^{bits}");
        }
        assert_eq!(signed(i64::MIN).len(), 10);
        assert_eq!(signed(i64::MAX).len(), 10);
    }

    #[test]
    fn extremes_roundtrip() {
        for v in [i64::MIN, i64::MIN + 1, i64::MAX, -(1 << 62), 1 << 62] {
            assert_eq!(decode_exact(&signed(v), decode_signed), Ok(v));
            let mut d = Vec::new();
            encode_signed_descending(v, &mut d);
            assert_eq!(decode_exact(&d, decode_signed_descending), Ok(v));
        }
    }

    /// vectors.md A4 `TestDecodeIncorrectValues`.
    fn incorrect_inputs() -> Vec<Vec<u8>> {
        let mut inputs: Vec<Vec<u8>> = vec![vec![]];
        inputs.extend(
            b"01<=> -,;:!?/.'()$*\"&#%+23456789"
                .iter()
                .map(|&b| vec![b]),
        );
        inputs.extend((0x00..=0x1f).map(|b| vec![b]));
        inputs.extend((0xc0..=0xff).map(|b| vec![b]));
        for s in [
            &b"\x00\x00"[..],
            b"\x00\x00\x00",
            b"\x00\x00\x00\x00",
            b"\x00\x00\x00\x00\x00",
            b"\x00\x00\x00\x00\x01",
            b"\x00\x00\x00\x01",
            b"\x00\x00\x01",
            b"\x00\x01",
            b"\x00\x00\x00\x00\x00+g!J",
        ] {
            inputs.push(s.to_vec());
        }
        inputs.extend((2..=6).map(|n| vec![0xff; n]));
        inputs
    }

    #[test]
    fn incorrect_values_fail() {
        for input in incorrect_inputs() {
            assert!(
                decode_exact(&input, decode_signed).is_err(),
                "signed accepted {input:02x?}"
            );
            let unsigned_ok = input.len() == 1 && input[0] & 0x80 == 0;
            assert_eq!(
                decode_exact(&input, decode_unsigned).is_ok(),
                unsigned_ok,
                "unsigned on {input:02x?}"
            );
        }
    }

    #[test]
    fn unsigned_layout() {
        assert_eq!(unsigned(0), [0x00]);
        assert_eq!(unsigned(127), [0x7f]);
        assert_eq!(unsigned(128), [0x80, 0x80]);
        assert_eq!(
            unsigned((1 << 56) - 1),
            [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(unsigned(1 << 56).len(), 9);
        assert_eq!(unsigned(u64::MAX)[..2], [0xff, 0x80]);
        assert_eq!(unsigned(u64::MAX).len(), 10);
    }

    #[test]
    fn field_length() {
        for (len, bytes) in [(5u32, vec![10u8]), (0x80, vec![0x01, 0x01, 0, 0])] {
            let mut out = Vec::new();
            encode_field_length(len, &mut out);
            assert_eq!(out, bytes);
            assert_eq!(decode_field_length(&out), Ok((len, &[][..])));
        }
    }

    proptest! {
        #[test]
        fn signed_order_and_roundtrip(a: i64, b: i64) {
            let (ea, eb) = (signed(a), signed(b));
            prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
            prop_assert_eq!(decode_exact(&ea, decode_signed), Ok(a));
            let (mut da, mut db) = (Vec::new(), Vec::new());
            encode_signed_descending(a, &mut da);
            encode_signed_descending(b, &mut db);
            prop_assert_eq!(b.cmp(&a), da.cmp(&db));
            prop_assert_eq!(decode_exact(&da, decode_signed_descending), Ok(a));
        }

        #[test]
        fn unsigned_roundtrip(v: u64, shift in 0u32..64) {
            let v = v >> shift;
            prop_assert_eq!(decode_exact(&unsigned(v), decode_unsigned), Ok(v));
        }

        #[test]
        fn decoders_never_panic(bytes: Vec<u8>) {
            let _ = decode_signed(&bytes);
            let _ = decode_signed_descending(&bytes);
            let _ = decode_unsigned(&bytes);
            let _ = decode_field_length(&bytes);
        }
    }
}
