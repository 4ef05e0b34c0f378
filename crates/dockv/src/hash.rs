//! The 16-bit hash that places a row in the hash space, and Redis's slot hash (format.md §6).
//!
//! YCQL and YSQL tables hash the concatenation of their hash-column values (each in the
//! "AppendToKey" form of [`HashColumnValue`], without type bytes) with Bob Jenkins' lookup2
//! 64-bit hash ([`hash64_with_seed`], seed 97), then fold the 64 bits into 16 ([`yb_hash16`]).
//! Redis keys use `crc16(key or {hashtag}) % 16384` instead ([`redis_hash_slot`]).
//!
//! These values are persisted in every DocKey and decide which tablet owns a row; they must
//! never change.

/// The seed YugabyteDB passes to the Jenkins hash for row hashing (`HashColumnCompoundValue`).
pub const YB_HASH_SEED: u64 = 97;

/// Number of Redis cluster slots (`kRedisClusterSlots`).
pub const REDIS_CLUSTER_SLOTS: u16 = 16384;

/// Initial value of `a` and `b` in the 64-bit lookup2 hash (`0xe08c1d668b756f82`).
const LOOKUP2_GOLDEN_64: u64 = 0xe08c_1d66_8b75_6f82;

/// The 64-bit lookup2 `mix`: twelve subtract / xor-shift steps over `a`, `b`, `c`.
fn mix(a: &mut u64, b: &mut u64, c: &mut u64) {
    // Each row: x -= y; x -= z; x ^= (z >> s) or (z << s), rotating the roles.
    macro_rules! step {
        ($x:ident, $y:ident, $z:ident, >> $s:literal) => {
            *$x = $x.wrapping_sub(*$y).wrapping_sub(*$z) ^ (*$z >> $s);
        };
        ($x:ident, $y:ident, $z:ident, << $s:literal) => {
            *$x = $x.wrapping_sub(*$y).wrapping_sub(*$z) ^ (*$z << $s);
        };
    }
    step!(a, b, c, >> 43);
    step!(b, c, a, << 9);
    step!(c, a, b, >> 8);
    step!(a, b, c, >> 38);
    step!(b, c, a, << 23);
    step!(c, a, b, >> 5);
    step!(a, b, c, >> 35);
    step!(b, c, a, << 49);
    step!(c, a, b, >> 11);
    step!(a, b, c, >> 12);
    step!(b, c, a, << 18);
    step!(c, a, b, >> 22);
}

/// Little-endian value of up to 8 bytes (missing high bytes are zero).
fn le_word(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Bob Jenkins' lookup2 hash, 64-bit variant, exactly as YugabyteDB's
/// `Hash64StringWithSeed` (`gutil/hash/jenkins.cc`).
///
/// `a = b = 0xe08c1d668b756f82`, `c = seed`; every full 24-byte block adds three
/// little-endian words to `a`, `b`, `c` and mixes. Then `c += len` and the 0..=23-byte tail
/// is added: bytes 0..8 to `a`, 8..16 to `b` (both little-endian), 16..23 to `c` shifted left
/// by 8 (the low byte of `c` is reserved for the length); a final mix, and the result is `c`.
pub fn hash64_with_seed(bytes: &[u8], seed: u64) -> u64 {
    let mut a = LOOKUP2_GOLDEN_64;
    let mut b = LOOKUP2_GOLDEN_64;
    let mut c = seed;

    let mut blocks = bytes.chunks_exact(24);
    for block in &mut blocks {
        let (wa, rest) = block.split_at(8);
        let (wb, wc) = rest.split_at(8);
        a = a.wrapping_add(le_word(wa));
        b = b.wrapping_add(le_word(wb));
        c = c.wrapping_add(le_word(wc));
        mix(&mut a, &mut b, &mut c);
    }

    // The C++ code takes the length as uint32.
    c = c.wrapping_add(u64::from(bytes.len() as u32));
    let tail = blocks.remainder();
    let (ta, rest) = tail.split_at(tail.len().min(8));
    let (tb, tc) = rest.split_at(rest.len().min(8));
    a = a.wrapping_add(le_word(ta));
    b = b.wrapping_add(le_word(tb));
    // At most 7 bytes here, so the shift never drops bits.
    c = c.wrapping_add(le_word(tc) << 8);
    mix(&mut a, &mut b, &mut c);
    c
}

/// Folds a 64-bit hash into the 16-bit hash code:
/// `(h >> 48) ^ 3·(h >> 32) ^ 5·(h >> 16) ^ 7·(h & 0xFFFF)` in wrapping 64-bit arithmetic,
/// truncated to 16 bits.
pub fn fold_hash64(h: u64) -> u16 {
    let h1 = h >> 48;
    let h2 = (h >> 32).wrapping_mul(3);
    let h3 = (h >> 16).wrapping_mul(5);
    let h4 = (h & 0xFFFF).wrapping_mul(7);
    ((h1 ^ h2 ^ h3 ^ h4) & 0xFFFF) as u16
}

/// The 16-bit hash code of already concatenated hash-column bytes
/// (`YBPartition::HashColumnCompoundValue`): [`hash64_with_seed`] with seed 97, then
/// [`fold_hash64`].
pub fn yb_hash16(bytes: &[u8]) -> u16 {
    fold_hash64(hash64_with_seed(bytes, YB_HASH_SEED))
}

/// The 16-bit hash code of a row whose hash-column values, each already in its
/// [`HashColumnValue`] byte form, are `parts` (in hash-column order).
pub fn hash_columns(parts: &[&[u8]]) -> u16 {
    yb_hash16(&parts.concat())
}

/// The 16-bit hash code of a row's hash-column values, in hash-column order.
pub fn hash_column_values(values: &[HashColumnValue<'_>]) -> u16 {
    let mut bytes = Vec::new();
    for value in values {
        value.append_to(&mut bytes);
    }
    yb_hash16(&bytes)
}

/// One hash-column value in the form YugabyteDB feeds to the hash (`AppendToKey(QLValuePB)` in
/// `common/ql_value.cc`): no type byte, integers big-endian two's complement in their natural
/// width, floats canonicalized, variable-length values as their raw stored bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HashColumnValue<'a> {
    /// One byte, 0 or 1.
    Bool(bool),
    /// One byte.
    Int8(i8),
    /// Two bytes big-endian.
    Int16(i16),
    /// Four bytes big-endian.
    Int32(i32),
    /// Eight bytes big-endian.
    Int64(i64),
    /// Four bytes big-endian.
    UInt32(u32),
    /// Eight bytes big-endian.
    UInt64(u64),
    /// Timestamp in microseconds: eight bytes big-endian.
    Timestamp(i64),
    /// Date (days, stored as uint32): four bytes big-endian.
    Date(u32),
    /// Time of day (nanoseconds, int64): eight bytes big-endian.
    Time(i64),
    /// Canonicalized (one NaN) IEEE bits, four bytes big-endian.
    Float(f32),
    /// Canonicalized (one NaN) IEEE bits, eight bytes big-endian.
    Double(f64),
    /// Raw stored bytes: string, binary, UUID/TimeUUID (the 16 standard bytes), inet (4 or 16
    /// address bytes), decimal and varint (their comparable encodings).
    Bytes(&'a [u8]),
    /// A frozen collection or UDT: its elements, each in this same form, back to back.
    Frozen(&'a [HashColumnValue<'a>]),
}

impl HashColumnValue<'_> {
    /// Appends the hash-input bytes of this value to `out`.
    pub fn append_to(&self, out: &mut Vec<u8>) {
        match *self {
            HashColumnValue::Bool(v) => out.push(u8::from(v)),
            HashColumnValue::Int8(v) => out.extend_from_slice(&v.to_be_bytes()),
            HashColumnValue::Int16(v) => out.extend_from_slice(&v.to_be_bytes()),
            HashColumnValue::Int32(v) => out.extend_from_slice(&v.to_be_bytes()),
            HashColumnValue::Int64(v)
            | HashColumnValue::Timestamp(v)
            | HashColumnValue::Time(v) => out.extend_from_slice(&v.to_be_bytes()),
            HashColumnValue::UInt32(v) | HashColumnValue::Date(v) => {
                out.extend_from_slice(&v.to_be_bytes())
            }
            HashColumnValue::UInt64(v) => out.extend_from_slice(&v.to_be_bytes()),
            HashColumnValue::Float(v) => {
                out.extend_from_slice(&canonical_float_bits(v).to_be_bytes())
            }
            HashColumnValue::Double(v) => {
                out.extend_from_slice(&canonical_double_bits(v).to_be_bytes())
            }
            HashColumnValue::Bytes(v) => out.extend_from_slice(v),
            HashColumnValue::Frozen(elems) => {
                for elem in elems {
                    elem.append_to(out);
                }
            }
        }
    }

    /// The hash-input bytes of this value.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.append_to(&mut out);
        out
    }
}

/// `util::CanonicalizeFloat`: every NaN becomes `0x7FC00000`; other values keep their bits.
fn canonical_float_bits(v: f32) -> u32 {
    if v.is_nan() { 0x7FC0_0000 } else { v.to_bits() }
}

/// `util::CanonicalizeDouble`: every NaN becomes `0x7FF8000000000000`.
fn canonical_double_bits(v: f64) -> u64 {
    if v.is_nan() {
        0x7FF8_0000_0000_0000
    } else {
        v.to_bits()
    }
}

/// Converts a CQL token (`token()` value, int64) to the 16-bit hash code
/// (`YBPartition::CqlToYBHashCode`): the top 16 bits with the sign bit flipped.
pub fn cql_to_yb_hash_code(cql_hash: i64) -> u16 {
    ((cql_hash >> 48) as u16) ^ 0x8000
}

/// Converts a 16-bit hash code to the smallest CQL token that maps to it
/// (`YBPartition::YBToCqlHashCode`).
pub fn yb_to_cql_hash_code(hash: u16) -> i64 {
    (u64::from(hash ^ 0x8000) << 48) as i64
}

/// Lookup table of the CRC-16/XMODEM polynomial 0x1021.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// Redis cluster's CRC16 (CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection,
/// no final xor), as in YugabyteDB's `common/crc16.h`. `crc16(b"123456789") == 0x31C3`.
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        let idx = usize::from(((crc >> 8) as u8) ^ b);
        (crc << 8) ^ CRC16_TABLE.get(idx).copied().unwrap_or(0)
    })
}

/// The part of a Redis key that is hashed: the text between the first `{` and the first `}`
/// after it, if that text is non-empty; otherwise the whole key
/// (`PartitionSchema::EncodeRedisKey`).
pub fn redis_hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        let after = key.get(open + 1..).unwrap_or_default();
        if let Some(close) = after.iter().position(|&b| b == b'}')
            && close > 0
        {
            return after.get(..close).unwrap_or_default();
        }
    }
    key
}

/// The Redis cluster slot of a key: `crc16(hash tag) % 16384` (see [`redis_hash_tag`]). This
/// is the 16-bit hash code Redis DocKeys carry.
pub fn redis_hash_slot(key: &[u8]) -> u16 {
    crc16(redis_hash_tag(key)) % REDIS_CLUSTER_SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
            .collect()
    }

    #[test]
    fn jenkins_vectors_a6() {
        // vectors.md A6 (jenkins-test.cc, Jenkins.TestHash64, seed 97).
        let b1 = hex("c7 25 1d 5d 75 3a 4e 46 22 29 4d 6c 67 7a a8 25 71");
        assert_eq!(hash64_with_seed(&b1, 97), 1_789_751_740_810_280_356);
        let b2 = hex(
            "83 8e 7e f0 71 ef 9b 3e 4a e6 12 60 c0 a1 f9 94 5a 85 9b b1 f6 86 97 e1 ab 87 \
             c8 ab c1 28 d1 72 73 0b da 50 e3 e6 f9 42",
        );
        assert_eq!(hash64_with_seed(&b2, 97), 4_001_818_822_847_464_429);
        let b3 = hex(
            "ad e3 aa b7 d2 bc 3a e6 60 e4 c6 c1 02 0a 3a 50 66 b2 26 6c 1d 1b 16 b1 1b 51 74 9c a7 bb ad 46
             25 54 ca 30 3a 31 d0 34 56 ac b1 ca af 7f 5c f3 9e 16 94 78 84 ca 60 66 27 59 e1 99 b4 c4 bd 50
             48 50 cb a6 0b e1 71 31 49 27 11 9e cc cd d8 19 09 c6 df 15 64 0d f7 25 5c 48 19 c7 6b 10 02 7e
             31 54 2a d8 92 e5 c5 ab e9 3d 57 99 9a 93 4f 48 3f fa 73 36 03 e1 bd 27 e5 06 8a 21 33 ff 91 80
             36 4d 2d 04 c7 11 cc 2a c0 a9 17 18 73 ff d5 0e 0d 8b 6f 8b ba 8c 37 49 b1 31 5b f4 4d d7 19 10
             40 6e 61 41 f1 55 aa 44 79 13 57 3b 72 ac fe ce f8 d7 07 82 05 ef 0f 53 6c fe 7d 94 48 a5 48 42
             47 70 29 e7 7e 53 ca 88 89 8a ec e5 01 44 f5 c5 c9 89 6d 6a f1 26 61 ae 30 50 61 68 41 ac 82 40
             db 12 00 68 ad 34 52 b2 bb c5 74 f1 3e 00 98 6e 1d c2 d7 7d c6 c7 10 b2 ac cf 8b 25 d9 7d d5 20",
        );
        assert_eq!(b3.len(), 256);
        assert_eq!(hash64_with_seed(&b3, 97), 15_240_025_333_683_105_143);
    }

    #[test]
    fn derived_hash16_values() {
        // format.md §13 derived values.
        assert_eq!(yb_hash16(&1i32.to_be_bytes()), 4624);
        assert_eq!(yb_hash16(b"a"), 44389);
        assert_eq!(yb_hash16(b""), 19780);
        assert_eq!(hash_column_values(&[HashColumnValue::Int32(1)]), 4624);
        assert_eq!(hash_columns(&[b"a"]), 44389);
        assert_eq!(hash_columns(&[]), 19780);
    }

    #[test]
    fn hash_column_parts_concatenate() {
        let parts: [&[u8]; 2] = [b"ab", b"c"];
        assert_eq!(hash_columns(&parts), yb_hash16(b"abc"));
        let values = [
            HashColumnValue::Bytes(b"x"),
            HashColumnValue::Int64(-2),
            HashColumnValue::Bool(true),
        ];
        let mut expected = b"x".to_vec();
        expected.extend_from_slice(&(-2i64).to_be_bytes());
        expected.push(1);
        assert_eq!(hash_column_values(&values), yb_hash16(&expected));
        let frozen = [HashColumnValue::Frozen(&values)];
        assert_eq!(hash_column_values(&frozen), yb_hash16(&expected));
    }

    #[test]
    fn hash_column_value_bytes() {
        assert_eq!(HashColumnValue::Int8(-1).to_bytes(), [0xFF]);
        assert_eq!(HashColumnValue::Int16(0x1234).to_bytes(), [0x12, 0x34]);
        assert_eq!(HashColumnValue::Date(7).to_bytes(), [0, 0, 0, 7]);
        assert_eq!(HashColumnValue::Bool(false).to_bytes(), [0]);
        assert_eq!(
            HashColumnValue::Float(f32::from_bits(0x7FC0_1234)).to_bytes(),
            [0x7F, 0xC0, 0, 0]
        );
        assert_eq!(
            HashColumnValue::Double(-f64::NAN).to_bytes(),
            0x7FF8_0000_0000_0000u64.to_be_bytes()
        );
        assert_eq!(
            HashColumnValue::Double(1.5).to_bytes(),
            1.5f64.to_bits().to_be_bytes()
        );
    }

    #[test]
    fn crc16_check_value() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn redis_tags_a8() {
        // vectors.md A8 (partition-test.cc, TestRedisEncoding).
        let slot = |k: &[u8]| crc16(k) % 16384;
        assert_eq!(redis_hash_slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(redis_hash_slot(b"{user1000}.followers"), slot(b"user1000"));
        assert_eq!(redis_hash_slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_eq!(redis_hash_slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(redis_hash_slot(b"foo{bar}{zap}"), slot(b"bar"));
        assert_eq!(redis_hash_slot(b"{}foobar"), slot(b"{}foobar"));
        assert_eq!(redis_hash_slot(b"foobar{}"), slot(b"foobar{}"));
        assert_eq!(redis_hash_slot(b"foobar{z}"), slot(b"z"));
        assert_eq!(redis_hash_slot(b"foobar"), slot(b"foobar"));
        assert_eq!(redis_hash_slot(b"a"), redis_hash_slot(b"{a}"));
        // Tags themselves.
        assert_eq!(redis_hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(redis_hash_tag(b"foo{"), b"foo{");
        assert_eq!(redis_hash_tag(b"}{"), b"}{");
    }

    #[test]
    fn cql_token_mapping() {
        assert_eq!(cql_to_yb_hash_code(i64::MIN), 0);
        assert_eq!(cql_to_yb_hash_code(-1), 0x7FFF);
        assert_eq!(cql_to_yb_hash_code(0), 0x8000);
        assert_eq!(cql_to_yb_hash_code(i64::MAX), 0xFFFF);
        assert_eq!(yb_to_cql_hash_code(0), i64::MIN);
        assert_eq!(yb_to_cql_hash_code(0x8000), 0);
        assert_eq!(yb_to_cql_hash_code(0xFFFF), 0x7FFF_0000_0000_0000);
    }

    /// A byte-by-byte transcription of the C++ tail `switch`, to check the word-based code.
    fn reference_hash64(s: &[u8], seed: u64) -> u64 {
        let word = |i: usize| -> u64 {
            (0..8).fold(0u64, |acc, k| acc | (u64::from(s[i + k]) << (8 * k)))
        };
        let (mut a, mut b, mut c) = (LOOKUP2_GOLDEN_64, LOOKUP2_GOLDEN_64, seed);
        let mut off = 0;
        let mut keylen = s.len();
        while keylen >= 24 {
            a = a.wrapping_add(word(off));
            b = b.wrapping_add(word(off + 8));
            c = c.wrapping_add(word(off + 16));
            mix(&mut a, &mut b, &mut c);
            off += 24;
            keylen -= 24;
        }
        c = c.wrapping_add(s.len() as u64);
        let byte = |i: usize| u64::from(s[off + i]);
        if keylen == 16 {
            b = b.wrapping_add(word(off + 8));
            a = a.wrapping_add(word(off));
        } else if keylen == 8 {
            a = a.wrapping_add(word(off));
        } else if keylen > 16 {
            for i in (16..keylen).rev() {
                c = c.wrapping_add(byte(i) << (8 * (i - 15)));
            }
            b = b.wrapping_add(word(off + 8));
            a = a.wrapping_add(word(off));
        } else if keylen > 8 {
            for i in (8..keylen).rev() {
                b = b.wrapping_add(byte(i) << (8 * (i - 8)));
            }
            a = a.wrapping_add(word(off));
        } else {
            for i in (0..keylen).rev() {
                a = a.wrapping_add(byte(i) << (8 * i));
            }
        }
        mix(&mut a, &mut b, &mut c);
        c
    }

    proptest! {
        #[test]
        fn cql_token_round_trip(h in any::<u16>()) {
            prop_assert_eq!(cql_to_yb_hash_code(yb_to_cql_hash_code(h)), h);
        }

        #[test]
        fn cql_token_mapping_is_monotonic(a in any::<i64>(), b in any::<i64>()) {
            if a <= b {
                prop_assert!(cql_to_yb_hash_code(a) <= cql_to_yb_hash_code(b));
            }
        }

        #[test]
        fn redis_slot_in_range(key in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assert!(redis_hash_slot(&key) < REDIS_CLUSTER_SLOTS);
        }

        #[test]
        fn matches_reference_switch(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            prop_assert_eq!(hash64_with_seed(&bytes, 97), reference_hash64(&bytes, 97));
        }
    }
}
