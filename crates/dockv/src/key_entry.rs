//! Primitive key components and their binary-comparable encodings (format.md §2).
//!
//! `KeyEntryValue::encode_to` appends the type byte and body; `KeyEntryValue::decode` is its
//! inverse and returns the unread rest. For two values `a`, `b` of the same variant and order,
//! `cmp(a, b) == cmp(encode(a), encode(b))`; across variants the type byte decides.

use std::fmt;

use crate::error::Result;
use crate::hybrid_time::DocHybridTime;
use crate::numeric::{Decimal, VarInt};

/// Sort direction of a key component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum SortOrder {
    /// Ascending (the default; every subkey is ascending).
    #[default]
    Ascending,
    /// Descending: the component is written so that byte order is the reverse of value order.
    Descending,
}

/// One primitive component of a DocKey or subkey path.
///
/// Variants that can be range columns carry a [`SortOrder`], which picks the ascending or the
/// descending type byte. `Display` prints YugabyteDB's `KeyEntryValue::ToString` (format.md §12),
/// which does not show the order.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyEntryValue {
    /// `\0`: scan lower bound; never stored.
    Lowest,
    /// `~`: scan upper bound; never stored.
    Highest,
    /// `$`: null sorting first (ASC, or DESC NULLS FIRST).
    NullLow,
    /// `|`: null sorting last.
    NullHigh,
    /// `F`/`T` (`i`/`h` descending).
    Bool(bool, SortOrder),
    /// `H`/`e`.
    Int32(i32, SortOrder),
    /// `I`/`b`.
    Int64(i64, SortOrder),
    /// `O`/`g`.
    UInt32(u32, SortOrder),
    /// `U`/`j`.
    UInt64(u64, SortOrder),
    /// `C`/`M`.
    Float(f32, SortOrder),
    /// `D`/`L`.
    Double(f64, SortOrder),
    /// `S`/`a`: string or binary.
    String(Vec<u8>, SortOrder),
    /// `\`/`]`: collated string (YSQL).
    CollString(Vec<u8>, SortOrder),
    /// `s`/`c`: timestamp in microseconds since the Unix epoch.
    Timestamp(i64, SortOrder),
    /// `_`/`` ` ``: UUID/TimeUUID; the 16 bytes here are the standard (RFC 4122) order.
    Uuid([u8; 16], SortOrder),
    /// `-`/`.`: IPv4 (4 bytes) or IPv6 (16 bytes) address.
    Inet(Vec<u8>, SortOrder),
    /// `E`/`d` (and the NaN/±∞ type bytes).
    Decimal(Decimal, SortOrder),
    /// `B`/`f`.
    VarInt(VarInt, SortOrder),
    /// `<`/`>`: frozen collection; elements are encoded with the same order.
    Frozen(Vec<KeyEntryValue>, SortOrder),
    /// `o`/`p`: BSON bytes (stored zero-escaped; no comparable transform is applied).
    Bson(Vec<u8>, SortOrder),
    /// `K`: column id (signed fast varint).
    ColumnId(i32),
    /// `J`: system column id (0 = liveness column).
    SystemColumnId(i32),
    /// `[`: list element index.
    ArrayIndex(i64),
    /// `G`: 16-bit hash.
    UInt16Hash(u16),
    /// `#`: hybrid time with write id.
    HybridTime(DocHybridTime),
    /// `%`: Redis sorted-set counter subkey.
    Counter,
    /// `&`: Redis sorted set score index.
    SsForward,
    /// `'`: Redis sorted set member index.
    SsReverse,
    /// `{`: object marker as a subkey.
    Object,
    /// `0`: colocation id (4-byte BE).
    ColocationId(u32),
    /// `y`: cotable id; 16 standard UUID bytes (stored comparable, not escaped).
    TableId([u8; 16]),
    /// `x`: transaction id as a key entry (comparable, escaped).
    TransactionId([u8; 16]),
    /// `n`: subtransaction id (4-byte BE).
    SubTransactionId(u32),
    /// `v`: GIN null kind byte.
    GinNull(u8),
    /// `V`: vector id, 16 raw bytes.
    VectorId([u8; 16]),
}

impl KeyEntryValue {
    /// An ascending string component.
    pub fn string(s: impl Into<Vec<u8>>) -> Self {
        KeyEntryValue::String(s.into(), SortOrder::Ascending)
    }

    /// Appends type byte and body.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        let _ = out;
        todo!("key_entry encode")
    }

    /// Decodes one component from the front of `input`, returning the rest.
    pub fn decode(input: &[u8]) -> Result<(Self, &[u8])> {
        let _ = input;
        todo!("key_entry decode")
    }
}

impl fmt::Display for KeyEntryValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ = f;
        todo!("key_entry display")
    }
}
