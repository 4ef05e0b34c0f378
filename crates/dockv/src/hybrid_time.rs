//! `HybridTime` and `DocHybridTime` (format.md §4).
//!
//! A hybrid time is `physical µs << 12 | logical`. A DocHybridTime adds the write id that
//! orders the key/value pairs of one write batch. Its key encoding is descending (newer sorts
//! first) and ends with its own length in the low 5 bits of the last byte, so a decoder can
//! find it at the end of a key.

use std::fmt;

use crate::error::{Result, corruption};
use crate::varint::{decode_signed_descending, encode_signed_descending};

/// Bits of a hybrid time used by the logical component.
pub const LOGICAL_BITS: u32 = 12;
const LOGICAL_MASK: u64 = (1 << LOGICAL_BITS) - 1;

/// Physical times in DocHybridTime encodings are relative to this epoch (µs, 2017-07-14).
pub const YUGABYTE_EPOCH_MICROS: i64 = 1_500_000_000_000_000;

/// Bits of the last encoded byte that hold the encoded length.
const SIZE_BITS: u32 = 5;
/// Longest encoded DocHybridTime.
pub const MAX_ENCODED_LEN: usize = 30;

/// A point in hybrid time: physical microseconds and a 12-bit logical counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HybridTime(pub u64);

impl HybridTime {
    /// The smallest time (`kMin`).
    pub const MIN: HybridTime = HybridTime(0);
    /// `kInitial`.
    pub const INITIAL: HybridTime = HybridTime(1);
    /// The largest time (`kMax`).
    pub const MAX: HybridTime = HybridTime(u64::MAX);
    /// `kInvalid`.
    pub const INVALID: HybridTime = HybridTime(u64::MAX - 1);

    /// The time at `micros` with logical component 0.
    pub const fn from_micros(micros: u64) -> Self {
        HybridTime(micros << LOGICAL_BITS)
    }

    /// The time at `micros` with the given logical component (only its low 12 bits count).
    pub const fn new(micros: u64, logical: u32) -> Self {
        HybridTime((micros << LOGICAL_BITS) | (logical as u64 & LOGICAL_MASK))
    }

    /// Physical component in microseconds.
    pub const fn physical_micros(self) -> u64 {
        self.0 >> LOGICAL_BITS
    }

    /// Logical component.
    pub const fn logical(self) -> u32 {
        (self.0 & LOGICAL_MASK) as u32
    }

    /// The name of a special value, if this is one.
    fn special_name(self) -> Option<&'static str> {
        match self {
            HybridTime::MIN => Some("<min>"),
            HybridTime::INITIAL => Some("<initial>"),
            HybridTime::MAX => Some("<max>"),
            HybridTime::INVALID => Some("<invalid>"),
            _ => None,
        }
    }

    /// Writes the body of the debug form without the `HT` prefix and closing brace.
    fn write_fields(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "physical: {}", self.physical_micros())?;
        if self.logical() != 0 {
            write!(f, " logical: {}", self.logical())?;
        }
        Ok(())
    }
}

/// `HT{ physical: P [logical: L] }` or `HT<max>`, as YugabyteDB's `ToDebugString`.
impl fmt::Display for HybridTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.special_name() {
            Some(name) => write!(f, "HT{name}"),
            None => {
                f.write_str("HT{ ")?;
                self.write_fields(f)?;
                f.write_str(" }")
            }
        }
    }
}

/// Write id used for the encoded history cutoff and `DocHybridTime::MAX`.
pub const MAX_WRITE_ID: u32 = u32::MAX;

/// A hybrid time plus the intra-batch write id; ordered by time, then write id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DocHybridTime {
    /// The batch's hybrid time.
    pub ht: HybridTime,
    /// Position of the key/value pair within its batch.
    pub write_id: u32,
}

impl DocHybridTime {
    /// The smallest value.
    pub const MIN: DocHybridTime = DocHybridTime {
        ht: HybridTime::MIN,
        write_id: 0,
    };
    /// The largest value.
    pub const MAX: DocHybridTime = DocHybridTime {
        ht: HybridTime::MAX,
        write_id: MAX_WRITE_ID,
    };

    /// A DocHybridTime.
    pub const fn new(ht: HybridTime, write_id: u32) -> Self {
        DocHybridTime { ht, write_id }
    }

    /// The value at `micros` (logical 0) with write id 0.
    pub const fn from_micros(micros: u64) -> Self {
        DocHybridTime {
            ht: HybridTime::from_micros(micros),
            write_id: 0,
        }
    }

    /// Appends the descending encoding (without the `#` type byte).
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        let start = out.len();
        encode_signed_descending(0, out); // generation number
        let physical = self.ht.physical_micros() as i64 - YUGABYTE_EPOCH_MICROS;
        encode_signed_descending(physical, out);
        encode_signed_descending(i64::from(self.ht.logical()), out);
        encode_signed_descending((i64::from(self.write_id) + 1) << SIZE_BITS, out);
        let len = out.len() - start;
        if let Some(last) = out.last_mut() {
            *last = (*last & !((1 << SIZE_BITS) - 1)) | len as u8;
        }
    }

    /// The part of the encoding that depends only on the hybrid time (generation, physical,
    /// logical); [`Self::encode_with_prefix`] appends the write id. Batches encode it once.
    pub fn encode_time_prefix(ht: HybridTime, out: &mut Vec<u8>) {
        encode_signed_descending(0, out); // generation number
        let physical = ht.physical_micros() as i64 - YUGABYTE_EPOCH_MICROS;
        encode_signed_descending(physical, out);
        encode_signed_descending(i64::from(ht.logical()), out);
    }

    /// Appends the encoding of `(ht, write_id)` given `prefix` from [`Self::encode_time_prefix`]
    /// of the same `ht`; byte-identical to [`Self::encode_to`].
    pub fn encode_with_prefix(prefix: &[u8], write_id: u32, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(prefix);
        encode_signed_descending((i64::from(write_id) + 1) << SIZE_BITS, out);
        let len = out.len() - start;
        if let Some(last) = out.last_mut() {
            *last = (*last & !((1 << SIZE_BITS) - 1)) | len as u8;
        }
    }

    /// The encoding as a new vector.
    pub fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12);
        self.encode_to(&mut out);
        out
    }

    /// The length of the encoding at the front of `input` (no `#`), from its four varints'
    /// headers and the size in its last byte, without decoding the values: `None` unless
    /// they agree. Cheaper than [`Self::decode`] where only the shape matters.
    pub fn encoded_len_at(input: &[u8]) -> Option<usize> {
        let mut len = 0;
        for _ in 0..4 {
            len += crate::varint::signed_len_at(input.get(len..)?)?;
        }
        let stored = usize::from(input.get(len - 1)? & 0x1F);
        (stored == len).then_some(len)
    }

    /// Decodes an encoding at the front of `input` (no `#`), returning the rest.
    pub fn decode(input: &[u8]) -> Result<(Self, &[u8])> {
        let (generation, rest) = decode_signed_descending(input)?;
        if generation != 0 {
            return Err(corruption!(
                "DocHybridTime: generation {generation} is not 0"
            ));
        }
        let (physical, rest) = decode_signed_descending(rest)?;
        let (logical, rest) = decode_signed_descending(rest)?;
        let (shifted_write_id, rest) = decode_signed_descending(rest)?;
        let len = input.len() - rest.len();
        let stored_len = input.get(len - 1).map_or(0, |b| usize::from(b & 0x1F));
        if stored_len != len {
            return Err(corruption!(
                "DocHybridTime: encoded size {stored_len} does not match {len} bytes read"
            ));
        }
        let micros = physical
            .checked_add(YUGABYTE_EPOCH_MICROS)
            .and_then(|p| u64::try_from(p).ok())
            .filter(|&p| p < (1 << (64 - LOGICAL_BITS)))
            .ok_or_else(|| corruption!("DocHybridTime: physical time {physical} out of range"))?;
        let logical = u32::try_from(logical)
            .ok()
            .filter(|&l| u64::from(l) <= LOGICAL_MASK)
            .ok_or_else(|| corruption!("DocHybridTime: logical {logical} out of range"))?;
        // The low 5 bits of the last byte were replaced by the size; only the rest counts.
        let write_id = (shifted_write_id >> SIZE_BITS)
            .checked_sub(1)
            .and_then(|w| u32::try_from(w).ok())
            .ok_or_else(|| corruption!("DocHybridTime: bad write id field {shifted_write_id}"))?;
        Ok((
            DocHybridTime::new(HybridTime::new(micros, logical), write_id),
            rest,
        ))
    }

    /// Splits `key` into what precedes its trailing `#` + encoded time, and that encoding,
    /// from the size in its last byte alone (nothing is decoded); `None` unless the key ends
    /// that way.
    pub fn split_from_end(key: &[u8]) -> Option<(&[u8], &[u8])> {
        let len = usize::from(key.last()? & 0x1F);
        let (head, encoded) = key.split_at(key.len().checked_sub(len)?);
        let (&tag, prefix) = head.split_last()?;
        (len > 0 && tag == b'#').then_some((prefix, encoded))
    }

    /// Decodes the DocHybridTime that ends `key` (`DecodeFromEnd`): its length is in the low
    /// bits of the last byte and the byte before it must be `#`. Returns the key prefix
    /// without the `#` and the time.
    pub fn decode_from_end(key: &[u8]) -> Result<(&[u8], Self)> {
        let (prefix, encoded) = Self::split_from_end(key).ok_or_else(|| {
            corruption!(
                "key of {} bytes does not end with '#' and a hybrid time of the size its last byte gives",
                key.len()
            )
        })?;
        let (time, rest) = Self::decode(encoded)?;
        if !rest.is_empty() {
            return Err(corruption!(
                "hybrid time at the end of the key has trailing bytes"
            ));
        }
        Ok((prefix, time))
    }
}

/// `HT{ physical: 1000 }`, `HT{ physical: 1000 logical: 1 w: 2 }`, `HT{ <max> w: Max }`.
impl fmt::Display for DocHybridTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.write_id == 0 {
            return self.ht.fmt(f);
        }
        f.write_str("HT{ ")?;
        match self.ht.special_name() {
            Some(name) => f.write_str(name)?,
            None => self.ht.write_fields(f)?,
        }
        if self.write_id == MAX_WRITE_ID {
            f.write_str(" w: Max }")
        } else {
            write!(f, " w: {} }}", self.write_id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::format_bytes;
    use proptest::prelude::*;

    fn key_string(ht: HybridTime) -> String {
        let mut out = vec![b'#'];
        DocHybridTime::new(ht, 0).encode_to(&mut out);
        format_bytes(&out)
    }

    #[test]
    fn vectors_a1() {
        let epoch = YUGABYTE_EPOCH_MICROS as u64;
        assert_eq!(
            key_string(HybridTime::new(1234567890123, 3456)),
            r##""#\x80\xff\x05S\x1e\x85.\xbb52\x7fL""##
        );
        assert_eq!(
            key_string(HybridTime::from_micros(epoch)),
            r##""#\x80\x80\x80D""##
        );
        assert_eq!(
            key_string(HybridTime::from_micros(epoch - 1)),
            r##""#\x80\x81\x80D""##
        );
        assert_eq!(
            key_string(HybridTime::from_micros(epoch + 1)),
            r##""#\x80~\x80D""##
        );
        assert_eq!(
            key_string(HybridTime::from_micros(1000)),
            r##""#\x80\xff\x05T=\xf7)\xbc\x18\x80K""##
        );
    }

    #[test]
    fn display_vectors() {
        assert_eq!(
            HybridTime(100200300400500 * 4096 + 1234).to_string(),
            "HT{ physical: 100200300400500 logical: 1234 }"
        );
        assert_eq!(HybridTime(0).to_string(), "HT<min>");
        assert_eq!(HybridTime(1).to_string(), "HT<initial>");
        assert_eq!(HybridTime(u64::MAX).to_string(), "HT<max>");
        let dht = |ht, w| DocHybridTime::new(ht, w).to_string();
        assert_eq!(
            dht(HybridTime::from_micros(1000), 0),
            "HT{ physical: 1000 }"
        );
        assert_eq!(
            dht(HybridTime::from_micros(1000), 2),
            "HT{ physical: 1000 w: 2 }"
        );
        assert_eq!(
            dht(HybridTime::new(1000, 1), 2),
            "HT{ physical: 1000 logical: 1 w: 2 }"
        );
        assert_eq!(dht(HybridTime::MAX, 1), "HT{ <max> w: 1 }");
        assert_eq!(dht(HybridTime::MAX, MAX_WRITE_ID), "HT{ <max> w: Max }");
    }

    proptest! {
        #[test]
        fn prefix_encoding_matches(ht: u64, w: u32) {
            let mut prefix = Vec::new();
            DocHybridTime::encode_time_prefix(HybridTime(ht), &mut prefix);
            let mut out = Vec::new();
            DocHybridTime::encode_with_prefix(&prefix, w, &mut out);
            prop_assert_eq!(out, DocHybridTime::new(HybridTime(ht), w).encoded());
        }
    }

    #[test]
    fn write_id_sizes() {
        assert_eq!(
            DocHybridTime::from_micros(1000).encoded().last(),
            Some(&0x4B)
        );
        let extremes = [
            DocHybridTime::MAX,
            DocHybridTime::MIN,
            DocHybridTime::new(HybridTime::INVALID, 7),
        ];
        for t in extremes {
            let enc = t.encoded();
            assert!(enc.len() <= MAX_ENCODED_LEN);
            assert_eq!(DocHybridTime::decode(&enc), Ok((t, &[][..])));
        }
    }

    #[test]
    fn decode_from_end_checks_tag() {
        let mut key = b"Sa\x00\x00!#".to_vec();
        let t = DocHybridTime::new(HybridTime::new(5000, 3), 9);
        t.encode_to(&mut key);
        assert_eq!(
            DocHybridTime::decode_from_end(&key),
            Ok((&b"Sa\x00\x00!"[..], t))
        );
        let len = key.len();
        key[len - 13] = b'$';
        assert!(DocHybridTime::decode_from_end(&key).is_err());
        assert!(DocHybridTime::decode_from_end(b"").is_err());
        assert!(DocHybridTime::decode_from_end(b"\x1f").is_err());
    }

    fn any_doc_ht() -> impl Strategy<Value = DocHybridTime> {
        (any::<u64>(), any::<u32>()).prop_map(|(ht, w)| DocHybridTime::new(HybridTime(ht), w))
    }

    proptest! {
        #[test]
        fn encoding_is_descending_and_roundtrips(a in any_doc_ht(), b in any_doc_ht()) {
            let (ea, eb) = (a.encoded(), b.encoded());
            prop_assert_eq!(b.cmp(&a), ea.cmp(&eb), "{} vs {}", a, b);
            prop_assert_eq!(DocHybridTime::decode(&ea), Ok((a, &[][..])));
        }

        #[test]
        fn decode_never_panics(bytes: Vec<u8>) {
            let _ = DocHybridTime::decode(&bytes);
            let _ = DocHybridTime::decode_from_end(&bytes);
            // Whatever decodes has the shape `encoded_len_at` reads.
            if let Ok((_, rest)) = DocHybridTime::decode(&bytes) {
                prop_assert_eq!(DocHybridTime::encoded_len_at(&bytes), Some(bytes.len() - rest.len()));
            }
        }

        /// The shape of an encoding is its length; the time without its write id has none.
        /// A key ending in `#` and a time splits there without decoding.
        #[test]
        fn split_from_end_finds_the_time(t in any_doc_ht(), path: Vec<u8>) {
            let mut key = path.clone();
            key.push(b'#');
            key.extend_from_slice(&t.encoded());
            let encoded = t.encoded();
            prop_assert_eq!(DocHybridTime::split_from_end(&key), Some((&path[..], &encoded[..])));
            // Whatever decodes from the end splits there too.
            if DocHybridTime::decode_from_end(&path).is_ok() {
                prop_assert!(DocHybridTime::split_from_end(&path).is_some());
            }
        }

        #[test]
        fn encoded_len_at_reads_the_shape(t in any_doc_ht(), tail: Vec<u8>) {
            let mut enc = t.encoded();
            let len = enc.len();
            enc.extend_from_slice(&tail);
            prop_assert_eq!(DocHybridTime::encoded_len_at(&enc), Some(len));
            let mut prefix = Vec::new();
            DocHybridTime::encode_time_prefix(t.ht, &mut prefix);
            prop_assert_eq!(DocHybridTime::encoded_len_at(&prefix), None);
        }
    }
}
