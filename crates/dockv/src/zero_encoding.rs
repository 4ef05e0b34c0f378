//! Zero-escaped strings inside keys (format.md §2, YugabyteDB's `doc_kv_util.cc`).
//!
//! Ascending: every `0x00` byte of the input becomes `00 01`, and `00 00` terminates the string,
//! so the encoding sorts exactly like the raw bytes and a shorter string sorts before any string
//! it is a prefix of. Descending ("complement"): the same escaping, then every byte is XORed with
//! `0xFF`, terminated by `FF FF`; the encodings sort in reverse order of the strings.
//!
//! Encoded size = `len + number of zero bytes + 2`. Decoders borrow their input and return the
//! bytes after the terminator; a missing terminator or an invalid escape is
//! [`Error::Corruption`](crate::Error::Corruption).

use crate::error::{Result, corruption};

/// Two-byte terminator of an ascending zero-encoded string.
pub const TERMINATOR: [u8; 2] = [0x00, 0x00];
/// Two-byte terminator of a complement (descending) zero-encoded string.
pub const COMPLEMENT_TERMINATOR: [u8; 2] = [0xFF, 0xFF];

/// Size of the ascending or complement encoding of `s`, terminator included.
pub fn encoded_len(s: &[u8]) -> usize {
    s.len() + count_byte(s, 0) + TERMINATOR.len()
}

/// Appends `s` with each `0x00` escaped as `00 01`, without a terminator
/// (`AppendZeroEncodedStrToKey`).
pub fn append_escaped(s: &[u8], out: &mut Vec<u8>) {
    out.reserve(s.len() + 2);
    let mut rest = s;
    while let Some(pos) = find_byte(rest, 0x00) {
        let (head, tail) = rest.split_at(pos);
        out.extend_from_slice(head);
        out.extend_from_slice(&[0x00, 0x01]);
        rest = tail.get(1..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
}

/// Appends the `00 00` terminator (`TerminateZeroEncodedKeyStr`).
pub fn terminate(out: &mut Vec<u8>) {
    out.extend_from_slice(&TERMINATOR);
}

/// Appends the complete ascending encoding of `s`: escaped bytes, then `00 00`.
pub fn encode_to(s: &[u8], out: &mut Vec<u8>) {
    append_escaped(s, out);
    terminate(out);
}

/// Appends the complement escaping of `s` without a terminator: each `0x00` becomes `FF FE`,
/// every other byte `b` becomes `!b` (`AppendComplementZeroEncodedStrToKey`).
pub fn append_complement_escaped(s: &[u8], out: &mut Vec<u8>) {
    out.reserve(s.len() + 2);
    let mut rest = s;
    while let Some(pos) = find_byte(rest, 0x00) {
        let (head, tail) = rest.split_at(pos);
        out.extend(head.iter().map(|b| !b));
        out.extend_from_slice(&[0xFF, 0xFE]);
        rest = tail.get(1..).unwrap_or_default();
    }
    out.extend(rest.iter().map(|b| !b));
}

/// Appends the `FF FF` terminator (`TerminateComplementZeroEncodedKeyStr`).
pub fn terminate_complement(out: &mut Vec<u8>) {
    out.extend_from_slice(&COMPLEMENT_TERMINATOR);
}

/// Appends the complete complement (descending) encoding of `s`: escaped and flipped bytes, then
/// `FF FF`.
pub fn encode_complement_to(s: &[u8], out: &mut Vec<u8>) {
    append_complement_escaped(s, out);
    terminate_complement(out);
}

/// Decodes an ascending zero-encoded string from the front of `input`; the inverse of
/// [`encode_to`]. Returns the raw bytes and the input after the `00 00` terminator.
pub fn decode(input: &[u8]) -> Result<(Vec<u8>, &[u8])> {
    let mut out = Vec::new();
    let rest = decode_into(input, &mut out)?;
    Ok((out, rest))
}

/// Like [`decode`] but appends the raw bytes to `out` (which is left partially filled on error).
pub fn decode_into<'a>(input: &'a [u8], out: &mut Vec<u8>) -> Result<&'a [u8]> {
    let mut rest = input;
    loop {
        let Some(pos) = find_byte(rest, 0x00) else {
            return Err(corruption!(
                "zero-encoded string is not terminated by 00 00 ({} bytes scanned)",
                input.len()
            ));
        };
        let (head, tail) = rest.split_at(pos);
        out.extend_from_slice(head);
        match tail.get(1) {
            Some(0x00) => return Ok(tail.get(2..).unwrap_or_default()),
            Some(0x01) => {
                out.push(0x00);
                rest = tail.get(2..).unwrap_or_default();
            }
            Some(&other) => {
                return Err(corruption!(
                    "invalid sequence in zero-encoded string: 00 {other:02x} (must be 00 00 or 00 01)"
                ));
            }
            None => return Err(corruption!("zero-encoded string ends with a single 00")),
        }
    }
}

/// Decodes a complement (descending) zero-encoded string from the front of `input`; the inverse
/// of [`encode_complement_to`]. Returns the raw bytes and the input after the `FF FF` terminator.
pub fn decode_complement(input: &[u8]) -> Result<(Vec<u8>, &[u8])> {
    let mut out = Vec::new();
    let rest = decode_complement_into(input, &mut out)?;
    Ok((out, rest))
}

/// Like [`decode_complement`] but appends the raw bytes to `out`.
pub fn decode_complement_into<'a>(input: &'a [u8], out: &mut Vec<u8>) -> Result<&'a [u8]> {
    let mut rest = input;
    loop {
        let Some(pos) = find_byte(rest, 0xFF) else {
            return Err(corruption!(
                "complement zero-encoded string is not terminated by ff ff ({} bytes scanned)",
                input.len()
            ));
        };
        let (head, tail) = rest.split_at(pos);
        out.extend(head.iter().map(|b| !b));
        match tail.get(1) {
            Some(0xFF) => return Ok(tail.get(2..).unwrap_or_default()),
            Some(0xFE) => {
                out.push(0x00);
                rest = tail.get(2..).unwrap_or_default();
            }
            Some(&other) => {
                return Err(corruption!(
                    "invalid sequence in complement zero-encoded string: ff {other:02x} \
                     (must be ff ff or ff fe)"
                ));
            }
            None => {
                return Err(corruption!(
                    "complement zero-encoded string ends with a single ff"
                ));
            }
        }
    }
}

/// Checks an ascending zero-encoded string at the front of `input` without copying it and returns
/// the input after its terminator.
pub fn skip(input: &[u8]) -> Result<&[u8]> {
    skip_with(input, 0x00)
}

/// Checks a complement zero-encoded string at the front of `input` without copying it and
/// returns the input after its terminator.
pub fn skip_complement(input: &[u8]) -> Result<&[u8]> {
    skip_with(input, 0xFF)
}

fn skip_with(input: &[u8], end: u8) -> Result<&[u8]> {
    let escape = end ^ 1;
    let mut rest = input;
    loop {
        let Some(pos) = find_byte(rest, end) else {
            return Err(corruption!(
                "zero-encoded string is not terminated by {end:02x} {end:02x}"
            ));
        };
        let tail = rest.get(pos..).unwrap_or_default();
        match tail.get(1) {
            Some(&b) if b == end => return Ok(tail.get(2..).unwrap_or_default()),
            Some(&b) if b == escape => rest = tail.get(2..).unwrap_or_default(),
            Some(&b) => {
                return Err(corruption!(
                    "invalid sequence in zero-encoded string: {end:02x} {b:02x}"
                ));
            }
            None => {
                return Err(corruption!(
                    "zero-encoded string ends with a single {end:02x}"
                ));
            }
        }
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Position of the first `needle` in `haystack`, scanning eight bytes per step (a portable
/// `memchr`: a word has a matching byte iff `(x - LO) & !x & HI != 0` for `x = word ^ needle*LO`).
fn find_byte(haystack: &[u8], needle: u8) -> Option<usize> {
    let pattern = LO.wrapping_mul(u64::from(needle));
    let mut chunks = haystack.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            // The lowest flagged byte is the first match (borrows only propagate upwards).
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|p| offset + p)
}

fn count_byte(haystack: &[u8], needle: u8) -> usize {
    haystack.iter().filter(|&&b| b == needle).count()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_to(s, &mut out);
        out
    }

    fn enc_c(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_complement_to(s, &mut out);
        out
    }

    #[test]
    fn append_and_terminate_vectors_a5() {
        let mut buf = b"a".to_vec();
        append_escaped(b"bc", &mut buf);
        assert_eq!(buf, b"abc");
        append_escaped(b"f\x00g", &mut buf);
        assert_eq!(buf.len(), 7);
        assert_eq!(&buf[3..7], b"f\x00\x01g");

        let mut buf = b"a".to_vec();
        terminate(&mut buf);
        assert_eq!(buf, b"a\x00\x00");
    }

    #[test]
    fn known_encodings() {
        assert_eq!(enc(b"foo\x00bar\x01"), b"foo\x00\x01bar\x01\x00\x00");
        assert_eq!(enc(b""), b"\x00\x00");
        assert_eq!(enc_c(b"val1"), b"\x89\x9e\x93\xce\xff\xff");
        assert_eq!(enc_c(b"val1\x00"), b"\x89\x9e\x93\xce\xff\xfe\xff\xff");
        assert_eq!(enc_c(b"\x01\x02\x03\x04"), b"\xfe\xfd\xfc\xfb\xff\xff");
    }

    #[test]
    fn decode_zero_encoding_malformed_a5() {
        let bad: &[&[u8]] = &[
            b"",
            b"abc",
            b"\x00\x01 abc",
            b"\x00",
            b"abc\x00",
            b"\x00\x01 abc\x00",
            b"\x00\x02 abc\x00\x00",
            &b"\x00\x00"[..1],
            &b"\x00\x01"[..1],
            &b"\x00\x02"[..1],
        ];
        for input in bad {
            assert!(decode(input).is_err(), "{input:?}");
            assert!(skip(input).is_err(), "{input:?}");
        }
    }

    #[test]
    fn decode_complement_zero_encoding_malformed_a5() {
        let bad: &[&[u8]] = &[
            b"",
            b"abc",
            b"\xff\xfe abc",
            b"\xff",
            b"abc\xff",
            b"\xff\xfe abc\xff",
            b"\xff\x02 abc\xff\xff",
            &b"\xff\xff"[..1],
            &b"\xff\xfe"[..1],
            &b"\xff\x02"[..1],
        ];
        for input in bad {
            assert!(decode_complement(input).is_err(), "{input:?}");
            assert!(skip_complement(input).is_err(), "{input:?}");
        }
    }

    #[test]
    fn decode_returns_rest() {
        assert_eq!(
            decode(b"ab\x00\x01c\x00\x00xyz"),
            Ok((b"ab\x00c".to_vec(), &b"xyz"[..]))
        );
        assert_eq!(
            decode_complement(b"\x9e\xff\xfe\xff\xff\x00"),
            Ok((b"a\x00".to_vec(), &b"\x00"[..]))
        );
        assert_eq!(skip(b"ab\x00\x01c\x00\x00xyz"), Ok(&b"xyz"[..]));
    }

    #[test]
    fn find_byte_matches_naive() {
        let data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) | 1).collect();
        for needle in [0x00, 0xFF, 0x25, 0x80] {
            for start in 0..data.len() {
                for pos in start..data.len() {
                    let mut d = data.clone();
                    d[pos] = needle;
                    let hay = &d[start..];
                    let naive = hay.iter().position(|&b| b == needle);
                    assert_eq!(find_byte(hay, needle), naive);
                }
            }
        }
    }

    /// Byte strings rich in the bytes the zero encodings escape (00, 01, FE, FF).
    pub(crate) fn bytes_up_to(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                any::<u8>(),
                Just(0u8),
                Just(1u8),
                Just(0xFEu8),
                Just(0xFFu8)
            ],
            0..max_len,
        )
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        bytes_up_to(40)
    }

    proptest! {
        #[test]
        fn ascending_roundtrip_and_order(a in bytes(), b in bytes(), tail in bytes()) {
            let (ea, eb) = (enc(&a), enc(&b));
            prop_assert_eq!(ea.len(), encoded_len(&a));
            prop_assert_eq!(a.cmp(&b), ea.cmp(&eb));
            let mut with_tail = ea.clone();
            with_tail.extend_from_slice(&tail);
            prop_assert_eq!(decode(&with_tail), Ok((a.clone(), &tail[..])));
            prop_assert_eq!(skip(&with_tail), Ok(&tail[..]));
        }

        #[test]
        fn complement_roundtrip_and_order(a in bytes(), b in bytes(), tail in bytes()) {
            let (ea, eb) = (enc_c(&a), enc_c(&b));
            prop_assert_eq!(ea.len(), encoded_len(&a));
            prop_assert_eq!(b.cmp(&a), ea.cmp(&eb));
            let mut with_tail = ea.clone();
            with_tail.extend_from_slice(&tail);
            prop_assert_eq!(decode_complement(&with_tail), Ok((a.clone(), &tail[..])));
            prop_assert_eq!(skip_complement(&with_tail), Ok(&tail[..]));
        }

        #[test]
        fn decoders_never_panic(input in bytes()) {
            let plain = decode(&input);
            prop_assert_eq!(plain.as_ref().map(|r| r.1).ok(), skip(&input).ok());
            let comp = decode_complement(&input);
            prop_assert_eq!(comp.as_ref().map(|r| r.1).ok(), skip_complement(&input).ok());
        }
    }
}
