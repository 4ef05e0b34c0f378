//! Splitting the 16-bit hash space into tablets (format.md §6, `dockv/partition.cc`).
//!
//! A hash-partitioned table is split into `n` tablets, each owning a contiguous range of hash
//! codes. A tablet's bounds are 2-byte big-endian partition keys
//! ([`encode_hash_partition_key`]); the first tablet's start and the last tablet's end are
//! empty (open). [`lexicographic_middle_key`] picks a key between two partition bounds.

use crate::error::{Error, Result, corruption, take_array};

/// Largest hash code of the YCQL/YSQL hash space (`PartitionSchema::kMaxPartitionKey`).
pub const MAX_PARTITION_KEY: u16 = u16::MAX;

/// The `max_partition_key` YugabyteDB uses for Redis tables (`kRedisClusterSlots` = 16384).
///
/// Note that this is the slot *count*, so Redis tablets split the range `0..=16384` although
/// Redis slots only go up to 16383; this mirrors `CreatePartitions` exactly.
pub const REDIS_MAX_PARTITION_KEY: u16 = crate::hash::REDIS_CLUSTER_SLOTS;

/// Size of an encoded hash partition key (`kPartitionKeySize`).
pub const PARTITION_KEY_SIZE: usize = 2;

/// One tablet's range of hash codes: `start` inclusive, `end` exclusive; `None` means open
/// (the first tablet's start, the last tablet's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HashPartition {
    /// First hash code of the tablet, or `None` for the first tablet (from 0).
    pub start: Option<u16>,
    /// First hash code after the tablet, or `None` for the last tablet (through 0xFFFF).
    pub end: Option<u16>,
}

impl HashPartition {
    /// The inclusive bounds of hash codes in this tablet (`GetHashPartitionBounds`): an open
    /// start is 0, an open end is 0xFFFF; a closed end `e` gives `e - 1` (wrapping, as the C++
    /// does for an end of 0).
    pub fn bounds(&self) -> (u16, u16) {
        let start = self.start.unwrap_or(0);
        let end = self
            .end
            .map_or(MAX_PARTITION_KEY, |end| end.wrapping_sub(1));
        (start, end)
    }

    /// Whether `hash` falls in this tablet.
    pub fn contains(&self, hash: u16) -> bool {
        self.start.is_none_or(|start| hash >= start) && self.end.is_none_or(|end| hash < end)
    }

    /// The encoded start partition key: empty when open, else 2 bytes big-endian.
    pub fn partition_key_start(&self) -> Vec<u8> {
        self.start
            .map(|s| encode_hash_partition_key(s).to_vec())
            .unwrap_or_default()
    }

    /// The encoded end partition key: empty when open, else 2 bytes big-endian.
    pub fn partition_key_end(&self) -> Vec<u8> {
        self.end
            .map(|e| encode_hash_partition_key(e).to_vec())
            .unwrap_or_default()
    }
}

/// Splits the YCQL/YSQL hash space `0..=0xFFFF` into `num_tablets` tablets
/// (`PartitionSchema::CreateHashPartitions` with the default `max_partition_key`).
pub fn create_hash_partitions(num_tablets: u32) -> Result<Vec<HashPartition>> {
    create_hash_partitions_with_max(num_tablets, MAX_PARTITION_KEY)
}

/// Splits the hash space of a Redis table into `num_tablets` tablets (`max_partition_key` =
/// [`REDIS_MAX_PARTITION_KEY`]).
pub fn create_redis_partitions(num_tablets: u32) -> Result<Vec<HashPartition>> {
    create_hash_partitions_with_max(num_tablets, REDIS_MAX_PARTITION_KEY)
}

/// `PartitionSchema::CreateHashPartitions(num_tablets, max_partition_key)`: tablet `i` ends
/// at `pend_i = (i + 1) · (max + 1) / n` (integer division) and starts where tablet `i - 1`
/// ended; the first start and last end are open. Six tablets of the default space start at
/// 0x0000, 0x2AAA, 0x5555, 0x8000, 0xAAAA, 0xD555.
///
/// `num_tablets` must be in `1..=0xFFFF` and `max_partition_key` positive, as in YugabyteDB.
/// The products are computed in 64 bits; the C++ computes them in `int32`, which overflows
/// (undefined behaviour) only for more than 32767 tablets of the full space.
pub fn create_hash_partitions_with_max(
    num_tablets: u32,
    max_partition_key: u16,
) -> Result<Vec<HashPartition>> {
    if max_partition_key == 0 {
        return Err(Error::InvalidArgument(
            "max_partition_key should be in (0, 65535]".to_string(),
        ));
    }
    if num_tablets == 0 {
        return Err(Error::InvalidArgument(
            "num_tablets should be greater than 0".to_string(),
        ));
    }
    if num_tablets > 0xFFFF {
        return Err(Error::InvalidArgument(format!(
            "Too many tablets requested: {num_tablets}"
        )));
    }
    let n = u64::from(num_tablets);
    let space = u64::from(max_partition_key) + 1;
    let mut partitions = Vec::with_capacity(num_tablets as usize);
    let mut pend: u16 = 0;
    for i in 0..n {
        let pstart = pend;
        // Truncated to uint16 as in the C++ (only the last, unused, value can reach 65536).
        pend = ((i + 1) * space / n) as u16;
        partitions.push(HashPartition {
            start: (i != 0).then_some(pstart),
            end: (i + 1 < n).then_some(pend),
        });
    }
    Ok(partitions)
}

/// Index of the tablet in `partitions` (as returned by [`create_hash_partitions`]: sorted,
/// contiguous) that owns `hash`, or `None` if no tablet contains it.
pub fn partition_for_hash(partitions: &[HashPartition], hash: u16) -> Option<usize> {
    // First tablet whose end is open or above `hash`.
    let idx = partitions.partition_point(|p| p.end.is_some_and(|end| end <= hash));
    partitions
        .get(idx)
        .filter(|p| p.contains(hash))
        .map(|_| idx)
}

/// The partition key of a hash code: 2 bytes big-endian (`EncodeMultiColumnHashValue`).
pub fn encode_hash_partition_key(hash: u16) -> [u8; PARTITION_KEY_SIZE] {
    hash.to_be_bytes()
}

/// Reads the hash code from the first 2 bytes of a partition key
/// (`DecodeMultiColumnHashValue`).
pub fn decode_hash_partition_key(partition_key: &[u8]) -> Result<u16> {
    let (bytes, _) = take_array::<PARTITION_KEY_SIZE>(partition_key, "hash partition key")?;
    Ok(u16::from_be_bytes(bytes))
}

/// The key lexicographically halfway between `key_start` and `key_end`, exactly as
/// `PartitionSchema::GetLexicographicMiddleKey`.
///
/// Both keys are treated as base-256 fractions of length `max(len)`: missing start bytes are
/// 0, missing end bytes 255 (an empty end means "no upper bound"). Bytes are averaged from the
/// left, an odd sum carrying 256 into the next position, and a carry out of a position adds
/// one to the previous output byte (wrapping, as the C++ `char` does). `("", "")` gives
/// `[128]`. An end below the start (with a non-empty end) is `InvalidArgument`.
pub fn lexicographic_middle_key(key_start: &[u8], key_end: &[u8]) -> Result<Vec<u8>> {
    const BASE: u16 = 256;
    if !key_end.is_empty() && key_start > key_end {
        return Err(Error::InvalidArgument(format!(
            "key_start ({}) cannot be larger than key_end ({})",
            debug_hex(key_start),
            debug_hex(key_end)
        )));
    }
    let key_size = key_start.len().max(key_end.len());
    if key_size == 0 {
        return Ok(vec![(BASE / 2) as u8]);
    }
    let mut middle = Vec::with_capacity(key_size);
    let mut carry_over: u16 = 0;
    for i in 0..key_size {
        let left = u16::from(key_start.get(i).copied().unwrap_or(0));
        let right = u16::from(key_end.get(i).copied().unwrap_or(u8::MAX));
        let sum = left + right + carry_over;
        let mut avg = sum / 2;
        if avg >= BASE {
            // Only possible with a carry, hence never at i == 0.
            if let Some(last) = middle.last_mut() {
                *last = u8::wrapping_add(*last, 1);
            }
            avg -= BASE;
        }
        middle.push(avg as u8);
        carry_over = if sum % 2 == 1 { BASE } else { 0 };
    }
    Ok(middle)
}

/// Upper-case hex of a key for error messages (`Slice::ToDebugHexString`).
fn debug_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Decodes a hash partition bound that must be empty or exactly 2 bytes
/// (`IsValidHashPartitionKeyBound`): `None` for an empty (open) bound.
pub fn decode_hash_partition_bound(partition_key: &[u8]) -> Result<Option<u16>> {
    match partition_key.len() {
        0 => Ok(None),
        PARTITION_KEY_SIZE => decode_hash_partition_key(partition_key).map(Some),
        n => Err(corruption!(
            "hash partition bound must be empty or {PARTITION_KEY_SIZE} bytes, got {n}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// vectors.md A8 `PartitionTest.Distribution` for one tablet count and space.
    fn check_distribution(num_tablets: u32, max: u16) {
        let partitions = create_hash_partitions_with_max(num_tablets, max).expect("partitions");
        assert_eq!(partitions.len(), num_tablets as usize);
        assert_eq!(partitions.first().and_then(|p| p.start), None);
        assert_eq!(partitions.last().and_then(|p| p.end), None);
        let mut next: u32 = 0;
        let mut total: u32 = 0;
        let (mut min, mut max_size) = (u32::MAX, 0u32);
        for (i, p) in partitions.iter().enumerate() {
            let (first, last) = if i + 1 == partitions.len() {
                // The open end of the last tablet covers up to `max`.
                (p.start.unwrap_or(0), max)
            } else {
                let (first, last) = p.bounds();
                (first, last)
            };
            assert_eq!(u32::from(first), next, "tablets {num_tablets}, index {i}");
            assert!(first < last, "tablets {num_tablets}, index {i}");
            let size = u32::from(last) - u32::from(first) + 1;
            min = min.min(size);
            max_size = max_size.max(size);
            assert!(max_size - min <= 1, "tablets {num_tablets}, index {i}");
            total += size;
            next = u32::from(last) + 1;
        }
        assert_eq!(total, u32::from(max) + 1);
    }

    #[test]
    fn distribution_a8() {
        // The YugabyteDB test runs up to 10000 tablets in regular builds.
        for n in 1..=10_000 {
            check_distribution(n, MAX_PARTITION_KEY);
        }
    }

    #[test]
    fn redis_distribution() {
        for n in 1..=1000 {
            check_distribution(n, REDIS_MAX_PARTITION_KEY);
        }
        let parts = create_redis_partitions(3).expect("partitions");
        assert_eq!(parts[1].start, Some(16385 / 3));
    }

    #[test]
    fn six_tablet_boundaries() {
        let parts = create_hash_partitions(6).expect("partitions");
        let starts: Vec<u16> = parts.iter().map(|p| p.start.unwrap_or(0)).collect();
        assert_eq!(starts, [0x0000, 0x2AAA, 0x5555, 0x8000, 0xAAAA, 0xD555]);
        let ends: Vec<Option<u16>> = parts.iter().map(|p| p.end).collect();
        assert_eq!(
            ends,
            [
                Some(0x2AAA),
                Some(0x5555),
                Some(0x8000),
                Some(0xAAAA),
                Some(0xD555),
                None
            ]
        );
        assert_eq!(parts[1].partition_key_start(), [0x2A, 0xAA]);
        assert!(parts[0].partition_key_start().is_empty());
        assert!(parts[5].partition_key_end().is_empty());
        assert_eq!(partition_for_hash(&parts, 0), Some(0));
        assert_eq!(partition_for_hash(&parts, 0x2AA9), Some(0));
        assert_eq!(partition_for_hash(&parts, 0x2AAA), Some(1));
        assert_eq!(partition_for_hash(&parts, 0xD555), Some(5));
        assert_eq!(partition_for_hash(&parts, 0xFFFF), Some(5));
    }

    #[test]
    fn invalid_counts() {
        assert!(create_hash_partitions(0).is_err());
        assert!(create_hash_partitions(0x10000).is_err());
        assert!(create_hash_partitions(0xFFFF).is_ok());
        assert!(create_hash_partitions_with_max(1, 0).is_err());
    }

    #[test]
    fn partition_keys() {
        assert_eq!(encode_hash_partition_key(0x1234), [0x12, 0x34]);
        assert_eq!(decode_hash_partition_key(&[0x12, 0x34, 0x99]), Ok(0x1234));
        assert!(decode_hash_partition_key(&[0x12]).is_err());
        assert_eq!(decode_hash_partition_bound(&[]), Ok(None));
        assert_eq!(decode_hash_partition_bound(&[0, 7]), Ok(Some(7)));
        assert!(decode_hash_partition_bound(&[0, 7, 1]).is_err());
    }

    #[test]
    fn middle_keys_a8() {
        // vectors.md A8 (partition-test.cc, TestLexicographicMiddleKey).
        let cases: &[(&[u8], &[u8], &[u8])] = &[
            (b"", b"", &[128]),
            (&[0, 0], &[42, 170], &[21, 85]),
            (&[42, 170], &[85, 84], &[63, 255]),
            (&[85, 84], &[127, 253], &[106, 168]),
            (&[127, 253], &[170, 167], &[149, 82]),
            (&[170, 167], &[213, 81], &[191, 252]),
            (&[213, 81], &[255, 255], &[234, 168]),
            (&[255, 253], &[255, 255], &[255, 254]),
            (b"", b"AAAAAA", &[32, 160, 160, 160, 160, 160]),
            (b"AAAAAA", b"", &[160, 160, 160, 160, 160, 160]),
            (b"AAAAAA", b"CCCCCC", b"BBBBBB"),
            (b"AAAAAA", b"AAAAAC", b"AAAAAB"),
            (b"A", b"AAAAAA", &[65, 32, 160, 160, 160, 160]),
            (b"BBBBBB", b"D", &[67, 161, 33, 33, 33, 32]),
            (&[1, 255, 20], &[2, 5, 101], &[2, 2, 60]),
        ];
        for (start, end, expected) in cases {
            assert_eq!(
                lexicographic_middle_key(start, end).as_deref(),
                Ok(*expected),
                "middle of {start:?} and {end:?}"
            );
        }
        assert!(lexicographic_middle_key(b"B", b"A").is_err());
        assert!(lexicographic_middle_key(b"B", b"").is_ok());
    }

    proptest! {
        #[test]
        fn partition_for_hash_agrees_with_contains(n in 1u32..300, hash in any::<u16>()) {
            let parts = create_hash_partitions(n).expect("partitions");
            let idx = partition_for_hash(&parts, hash).expect("covered");
            prop_assert!(parts[idx].contains(hash));
            prop_assert_eq!(parts.iter().filter(|p| p.contains(hash)).count(), 1);
        }

        #[test]
        fn middle_key_never_panics(
            a in proptest::collection::vec(any::<u8>(), 0..8),
            b in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let (start, end) = if a <= b { (a, b) } else { (b, a) };
            let middle = lexicographic_middle_key(&start, &end).expect("ordered keys");
            prop_assert_eq!(middle.len(), start.len().max(end.len()).max(1));
        }
    }
}
