//! Primitive key components and their binary-comparable encodings (format.md §2).
//!
//! `KeyEntryValue::encode_to` appends the type byte and body; `KeyEntryValue::decode` is its
//! inverse and returns the unread rest. For two values `a`, `b` of the same variant and order,
//! `cmp(a, b) == cmp(encode(a), encode(b))`; across variants the type byte decides.
//! [`KeyEntryValue::cmp_key_order`] computes that order from the values alone.
//!
//! Body layouts (type byte first; `esc` = zero-escaped string with `00 00` terminator, `cesc` =
//! its complement form with `FF FF` terminator, see [`crate::zero_encoding`]):
//!
//! | variant | ascending | descending |
//! |---|---|---|
//! | Int32 | `H` BE32(v ^ 2^31) | `e` BE32(!v ^ 2^31) |
//! | Int64, Timestamp, ArrayIndex | `I`/`s`/`[` BE64(v ^ 2^63) | `b`/`c` BE64(!v ^ 2^63) |
//! | UInt32, UInt64 | `O`/`U` BE(v) | `g`/`j` BE(!v) |
//! | Float, Double | `C`/`D` BE(sign-adjusted bits) | `M`/`L` BE(!that) |
//! | String, CollString, Bson | `S`/`\`/`o` esc | `a`/`]`/`p` cesc |
//! | Uuid | `_` esc(comparable uuid) | `` ` `` cesc(comparable uuid) |
//! | Inet | `-` esc(4 or 16 address bytes) | `.` cesc(address bytes) |
//! | Decimal | `E` comparable, `A`/`N`/`P` for −∞/+∞/NaN | `d` comparable(−v), `q`/`@`/`?` |
//! | VarInt | `B` comparable | `f` comparable(−v) |
//! | Frozen | `<` elements `!` | `>` elements `}` |
//! | Bool | `F`/`T` | `i`/`h` |
//!
//! plus `K`/`J` column ids (signed fast varint), `G` BE16 hash, `#` DocHybridTime, `0`/`n` BE32,
//! `y` 16 raw comparable UUID bytes, `x` esc(comparable UUID), `v` one byte, `V` 16 raw bytes,
//! and payload-less `$ | % & ' { \0 ~`.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::net::IpAddr;

use crate::entry_type::KeyEntryType;
use crate::error::{Error, Result, corruption, take_array};
use crate::escape::format_bytes;
use crate::hybrid_time::{DocHybridTime, HybridTime};
use crate::numeric::{Decimal, VarInt};
use crate::varint;
use crate::zero_encoding;

/// Deepest nesting of frozen collections the decoder accepts (bounds its recursion).
pub const MAX_FROZEN_DEPTH: usize = 64;

/// Sort direction of a key component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum SortOrder {
    /// Ascending (the default; every subkey is ascending).
    #[default]
    Ascending,
    /// Descending: the component is written so that byte order is the reverse of value order.
    Descending,
}

impl SortOrder {
    /// Whether this is [`SortOrder::Descending`].
    pub fn is_descending(self) -> bool {
        self == SortOrder::Descending
    }

    /// `ordering` as seen in this direction (reversed when descending).
    pub fn apply(self, ordering: Ordering) -> Ordering {
        match self {
            SortOrder::Ascending => ordering,
            SortOrder::Descending => ordering.reverse(),
        }
    }

    fn pick(self, ascending: KeyEntryType, descending: KeyEntryType) -> KeyEntryType {
        match self {
            SortOrder::Ascending => ascending,
            SortOrder::Descending => descending,
        }
    }
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

// ---------------------------------------------------------------------------------------------
// Fixed-width bodies
// ---------------------------------------------------------------------------------------------

const SIGN32: u32 = 1 << 31;
const SIGN64: u64 = 1 << 63;

fn int32_body(v: i32, order: SortOrder) -> [u8; 4] {
    let v = if order.is_descending() { !v } else { v };
    ((v as u32) ^ SIGN32).to_be_bytes()
}

fn int32_from_body(bytes: [u8; 4], order: SortOrder) -> i32 {
    let v = (u32::from_be_bytes(bytes) ^ SIGN32) as i32;
    if order.is_descending() { !v } else { v }
}

fn int64_body(v: i64, order: SortOrder) -> [u8; 8] {
    let v = if order.is_descending() { !v } else { v };
    ((v as u64) ^ SIGN64).to_be_bytes()
}

fn int64_from_body(bytes: [u8; 8], order: SortOrder) -> i64 {
    let v = (u64::from_be_bytes(bytes) ^ SIGN64) as i64;
    if order.is_descending() { !v } else { v }
}

/// Float bits → order-preserving key word (`AppendFloatToKey`): negative values are
/// complemented, non-negative ones get their sign bit set; descending flips everything.
fn float_body(bits: u32, order: SortOrder) -> [u8; 4] {
    let u = if bits & SIGN32 != 0 {
        !bits
    } else {
        bits ^ SIGN32
    };
    let u = if order.is_descending() { !u } else { u };
    u.to_be_bytes()
}

fn float_from_body(bytes: [u8; 4], order: SortOrder) -> f32 {
    let u = u32::from_be_bytes(bytes);
    let u = if order.is_descending() { !u } else { u };
    f32::from_bits(if u & SIGN32 != 0 { u ^ SIGN32 } else { !u })
}

fn double_body(bits: u64, order: SortOrder) -> [u8; 8] {
    let u = if bits & SIGN64 != 0 {
        !bits
    } else {
        bits ^ SIGN64
    };
    let u = if order.is_descending() { !u } else { u };
    u.to_be_bytes()
}

fn double_from_body(bytes: [u8; 8], order: SortOrder) -> f64 {
    let u = u64::from_be_bytes(bytes);
    let u = if order.is_descending() { !u } else { u };
    f64::from_bits(if u & SIGN64 != 0 { u ^ SIGN64 } else { !u })
}

fn string_body(bytes: &[u8], order: SortOrder, out: &mut Vec<u8>) {
    match order {
        SortOrder::Ascending => zero_encoding::encode_to(bytes, out),
        SortOrder::Descending => zero_encoding::encode_complement_to(bytes, out),
    }
}

fn string_from_body(input: &[u8], order: SortOrder) -> Result<(Vec<u8>, &[u8])> {
    match order {
        SortOrder::Ascending => zero_encoding::decode(input),
        SortOrder::Descending => zero_encoding::decode_complement(input),
    }
}

// ---------------------------------------------------------------------------------------------
// UUIDs and inet addresses
// ---------------------------------------------------------------------------------------------

/// The binary-comparable form of a UUID given in standard (RFC 4122) byte order
/// (`Uuid::EncodeToComparable`). For a time UUID (version 1) the first eight bytes are reordered
/// to `d6 d7 d4 d5 d0 d1 d2 d3` so that the bytes sort by timestamp; other versions put the
/// version nibble first and shift the next 15 nibbles right. Bytes 8..16 are unchanged.
pub fn uuid_to_comparable(uuid: &[u8; 16]) -> [u8; 16] {
    let d = uuid;
    let mut out = *uuid;
    if d[6] >> 4 == 1 {
        out[..8].copy_from_slice(&[d[6], d[7], d[4], d[5], d[0], d[1], d[2], d[3]]);
    } else {
        out[0] = (d[6] & 0xF0) | (d[0] >> 4);
        for i in 1..6 {
            out[i] = (d[i - 1] << 4) | (d[i] >> 4);
        }
        out[6] = (d[5] << 4) | (d[6] & 0x0F);
        out[7] = d[7];
    }
    out
}

/// The inverse of [`uuid_to_comparable`] (`Uuid::FromComparable`): a leading nibble of 1 marks
/// the time-UUID layout.
pub fn uuid_from_comparable(comparable: &[u8; 16]) -> [u8; 16] {
    let c = comparable;
    let mut out = *comparable;
    if c[0] >> 4 == 1 {
        out[..8].copy_from_slice(&[c[4], c[5], c[6], c[7], c[2], c[3], c[0], c[1]]);
    } else {
        for i in 0..5 {
            out[i] = (c[i] << 4) | (c[i + 1] >> 4);
        }
        out[5] = (c[5] << 4) | (c[6] >> 4);
        out[6] = (c[0] & 0xF0) | (c[6] & 0x0F);
        out[7] = c[7];
    }
    out
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex (boost's `to_string`).
pub fn format_uuid(uuid: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in uuid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// An inet address as YugabyteDB prints it (boost's `address::to_string`, i.e. `inet_ntop`):
/// dotted quad for 4 bytes; for 16 bytes lowercase hex groups with the first longest run of two
/// or more zero groups shortened to `::`, and a dotted tail for `::ffff:a.b.c.d` and
/// `::a.b.c.d`. Other lengths (not a valid address) print as escaped bytes.
pub fn format_inet(bytes: &[u8]) -> String {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return format!("{}.{}.{}.{}", v4[0], v4[1], v4[2], v4[3]);
    }
    let Ok(v6) = <[u8; 16]>::try_from(bytes) else {
        return format_bytes(bytes);
    };
    let words: Vec<u16> = v6
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    // First longest run of zero words, if it is at least two long.
    let (mut best_start, mut best_len) = (0usize, 0usize);
    let mut i = 0;
    while i < 8 {
        if words[i] == 0 {
            let start = i;
            while i < 8 && words[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                (best_start, best_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let run = if best_len >= 2 {
        Some((best_start, best_len))
    } else {
        None
    };
    let mut s = String::new();
    let mut i = 0;
    while i < 8 {
        if let Some((start, len)) = run
            && i >= start
            && i < start + len
        {
            if i == start {
                s.push(':');
            }
            i += 1;
            continue;
        }
        if i != 0 {
            s.push(':');
        }
        if i == 6
            && let Some((0, len)) = run
            && (len == 6 || (len == 5 && words[5] == 0xFFFF))
        {
            let _ = write!(s, "{}.{}.{}.{}", v6[12], v6[13], v6[14], v6[15]);
            return s;
        }
        let _ = write!(s, "{:x}", words[i]);
        i += 1;
    }
    if let Some((start, len)) = run
        && start + len == 8
    {
        s.push(':');
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Floating point text (`RealToString`)
// ---------------------------------------------------------------------------------------------

/// YugabyteDB's `RealToString`: C's `%f` (six decimals) with trailing zeros removed but one digit
/// kept after the point (`3.1415`, `100.0`); a non-zero value that would print as `0.0` uses
/// `%E` instead (`1.000000E-100`). Infinities and NaN print as C does: `inf`, `-inf`, `nan`,
/// `-nan`. Floats are formatted after widening to double, as C++ does.
pub fn real_to_string(val: f64) -> String {
    if val.is_nan() {
        return if val.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_string();
    }
    if val.is_infinite() {
        return if val < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let mut s = format!("{val:.6}");
    if let Some(dot) = s.find('.') {
        let last_kept = s.rfind(|c| c != '0').unwrap_or(dot);
        s.truncate((dot + 1).max(last_kept) + 1);
    }
    if s == "0.0" && val != 0.0 {
        return c_exponential(val);
    }
    s
}

/// C's `%E`: six decimals, uppercase `E`, signed exponent of at least two digits.
fn c_exponential(val: f64) -> String {
    let rust = format!("{val:.6e}");
    let Some((mantissa, exponent)) = rust.split_once('e') else {
        return rust;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}E{sign}{:02}", exponent.unsigned_abs())
}

// ---------------------------------------------------------------------------------------------
// KeyEntryValue
// ---------------------------------------------------------------------------------------------

/// Prefixes a decoder's corruption message with what was being decoded.
fn context(err: Error, what: &str) -> Error {
    match err {
        Error::Corruption(msg) => Error::Corruption(format!("{what}: {msg}")),
        other => other,
    }
}

impl KeyEntryValue {
    /// The liveness column of a row, `SystemColumnId(0)` (encoded `J\x80`).
    pub const LIVENESS_COLUMN: KeyEntryValue = KeyEntryValue::SystemColumnId(0);

    /// An ascending string component.
    pub fn string(s: impl Into<Vec<u8>>) -> Self {
        KeyEntryValue::String(s.into(), SortOrder::Ascending)
    }

    /// An ascending collated string (YSQL strings whose first byte is `\0`).
    pub fn coll_string(s: impl Into<Vec<u8>>) -> Self {
        KeyEntryValue::CollString(s.into(), SortOrder::Ascending)
    }

    /// An ascending BSON component.
    pub fn bson(s: impl Into<Vec<u8>>) -> Self {
        KeyEntryValue::Bson(s.into(), SortOrder::Ascending)
    }

    /// An ascending boolean.
    pub fn bool(v: bool) -> Self {
        KeyEntryValue::Bool(v, SortOrder::Ascending)
    }

    /// An ascending int32.
    pub fn int32(v: i32) -> Self {
        KeyEntryValue::Int32(v, SortOrder::Ascending)
    }

    /// An ascending int64.
    pub fn int64(v: i64) -> Self {
        KeyEntryValue::Int64(v, SortOrder::Ascending)
    }

    /// An ascending uint32.
    pub fn uint32(v: u32) -> Self {
        KeyEntryValue::UInt32(v, SortOrder::Ascending)
    }

    /// An ascending uint64.
    pub fn uint64(v: u64) -> Self {
        KeyEntryValue::UInt64(v, SortOrder::Ascending)
    }

    /// An ascending float (not canonicalized: every bit pattern round-trips).
    pub fn float(v: f32) -> Self {
        KeyEntryValue::Float(v, SortOrder::Ascending)
    }

    /// An ascending double (not canonicalized: every bit pattern round-trips).
    pub fn double(v: f64) -> Self {
        KeyEntryValue::Double(v, SortOrder::Ascending)
    }

    /// An ascending timestamp in microseconds since the Unix epoch.
    pub fn timestamp(micros: i64) -> Self {
        KeyEntryValue::Timestamp(micros, SortOrder::Ascending)
    }

    /// An ascending UUID given in standard byte order.
    pub fn uuid(bytes: [u8; 16]) -> Self {
        KeyEntryValue::Uuid(bytes, SortOrder::Ascending)
    }

    /// An ascending inet address.
    pub fn inet(addr: IpAddr) -> Self {
        let bytes = match addr {
            IpAddr::V4(v4) => v4.octets().to_vec(),
            IpAddr::V6(v6) => v6.octets().to_vec(),
        };
        KeyEntryValue::Inet(bytes, SortOrder::Ascending)
    }

    /// An ascending decimal (NaN and ±∞ included).
    pub fn decimal(d: Decimal) -> Self {
        KeyEntryValue::Decimal(d, SortOrder::Ascending)
    }

    /// An ascending varint.
    pub fn varint(v: VarInt) -> Self {
        KeyEntryValue::VarInt(v, SortOrder::Ascending)
    }

    /// An ascending frozen collection of `elements` (taken as they are).
    pub fn frozen(elements: Vec<KeyEntryValue>) -> Self {
        KeyEntryValue::Frozen(elements, SortOrder::Ascending)
    }

    /// A column id subkey (`MakeColumnId`).
    pub fn column_id(id: i32) -> Self {
        KeyEntryValue::ColumnId(id)
    }

    /// A system column id subkey.
    pub fn system_column_id(id: i32) -> Self {
        KeyEntryValue::SystemColumnId(id)
    }

    /// A list element index.
    pub fn array_index(index: i64) -> Self {
        KeyEntryValue::ArrayIndex(index)
    }

    /// The 16-bit hash that starts a hashed DocKey.
    pub fn uint16_hash(hash: u16) -> Self {
        KeyEntryValue::UInt16Hash(hash)
    }

    /// A hybrid time component.
    pub fn hybrid_time(time: DocHybridTime) -> Self {
        KeyEntryValue::HybridTime(time)
    }

    /// The sort order of an orderable variant; `None` for the others.
    pub fn sort_order(&self) -> Option<SortOrder> {
        use KeyEntryValue as V;
        match self {
            V::Bool(_, o)
            | V::Int32(_, o)
            | V::Int64(_, o)
            | V::UInt32(_, o)
            | V::UInt64(_, o)
            | V::Float(_, o)
            | V::Double(_, o)
            | V::String(_, o)
            | V::CollString(_, o)
            | V::Timestamp(_, o)
            | V::Uuid(_, o)
            | V::Inet(_, o)
            | V::Decimal(_, o)
            | V::VarInt(_, o)
            | V::Frozen(_, o)
            | V::Bson(_, o) => Some(*o),
            _ => None,
        }
    }

    /// The value with sort order `order` (variants without an order are returned unchanged).
    /// A frozen collection converts its elements too, and its null elements become
    /// [`KeyEntryValue::NullHigh`] when descending / [`KeyEntryValue::NullLow`] when ascending,
    /// as YugabyteDB builds frozen keys (`FromQLValuePB`).
    pub fn with_order(self, order: SortOrder) -> Self {
        use KeyEntryValue as V;
        match self {
            V::Bool(v, _) => V::Bool(v, order),
            V::Int32(v, _) => V::Int32(v, order),
            V::Int64(v, _) => V::Int64(v, order),
            V::UInt32(v, _) => V::UInt32(v, order),
            V::UInt64(v, _) => V::UInt64(v, order),
            V::Float(v, _) => V::Float(v, order),
            V::Double(v, _) => V::Double(v, order),
            V::String(v, _) => V::String(v, order),
            V::CollString(v, _) => V::CollString(v, order),
            V::Timestamp(v, _) => V::Timestamp(v, order),
            V::Uuid(v, _) => V::Uuid(v, order),
            V::Inet(v, _) => V::Inet(v, order),
            V::Decimal(v, _) => V::Decimal(v, order),
            V::VarInt(v, _) => V::VarInt(v, order),
            V::Bson(v, _) => V::Bson(v, order),
            V::Frozen(elements, _) => {
                let elements = elements
                    .into_iter()
                    .map(|e| match (e, order) {
                        (V::NullLow | V::NullHigh, SortOrder::Ascending) => V::NullLow,
                        (V::NullLow | V::NullHigh, SortOrder::Descending) => V::NullHigh,
                        (e, _) => e.with_order(order),
                    })
                    .collect();
                V::Frozen(elements, order)
            }
            other => other,
        }
    }

    /// The value in descending order; see [`Self::with_order`].
    pub fn desc(self) -> Self {
        self.with_order(SortOrder::Descending)
    }

    /// The type byte this value is encoded with.
    pub fn key_entry_type(&self) -> KeyEntryType {
        use KeyEntryType as K;
        use KeyEntryValue as V;
        match self {
            V::Lowest => K::Lowest,
            V::Highest => K::Highest,
            V::NullLow => K::NullLow,
            V::NullHigh => K::NullHigh,
            V::Bool(true, o) => o.pick(K::True, K::TrueDescending),
            V::Bool(false, o) => o.pick(K::False, K::FalseDescending),
            V::Int32(_, o) => o.pick(K::Int32, K::Int32Descending),
            V::Int64(_, o) => o.pick(K::Int64, K::Int64Descending),
            V::UInt32(_, o) => o.pick(K::UInt32, K::UInt32Descending),
            V::UInt64(_, o) => o.pick(K::UInt64, K::UInt64Descending),
            V::Float(_, o) => o.pick(K::Float, K::FloatDescending),
            V::Double(_, o) => o.pick(K::Double, K::DoubleDescending),
            V::String(_, o) => o.pick(K::String, K::StringDescending),
            V::CollString(_, o) => o.pick(K::CollString, K::CollStringDescending),
            V::Timestamp(_, o) => o.pick(K::Timestamp, K::TimestampDescending),
            V::Uuid(_, o) => o.pick(K::Uuid, K::UuidDescending),
            V::Inet(_, o) => o.pick(K::Inetaddress, K::InetaddressDescending),
            V::Decimal(d, o) => match d {
                Decimal::Finite { .. } => o.pick(K::Decimal, K::DecimalDescending),
                Decimal::NaN => o.pick(K::DecimalNaN, K::DecimalNaNDescending),
                Decimal::PosInfinity => {
                    o.pick(K::DecimalPosInfinity, K::DecimalPosInfinityDescending)
                }
                Decimal::NegInfinity => {
                    o.pick(K::DecimalNegInfinity, K::DecimalNegInfinityDescending)
                }
            },
            V::VarInt(_, o) => o.pick(K::VarInt, K::VarIntDescending),
            V::Frozen(_, o) => o.pick(K::Frozen, K::FrozenDescending),
            V::Bson(_, o) => o.pick(K::Bson, K::BsonDescending),
            V::ColumnId(_) => K::ColumnId,
            V::SystemColumnId(_) => K::SystemColumnId,
            V::ArrayIndex(_) => K::ArrayIndex,
            V::UInt16Hash(_) => K::UInt16Hash,
            V::HybridTime(_) => K::HybridTime,
            V::Counter => K::Counter,
            V::SsForward => K::SsForward,
            V::SsReverse => K::SsReverse,
            V::Object => K::Object,
            V::ColocationId(_) => K::ColocationId,
            V::TableId(_) => K::TableId,
            V::TransactionId(_) => K::TransactionId,
            V::SubTransactionId(_) => K::SubTransactionId,
            V::GinNull(_) => K::GinNull,
            V::VectorId(_) => K::VectorId,
        }
    }

    /// Appends type byte and body.
    ///
    /// Values are written as given: floats are not canonicalized (−0.0 and every NaN keep their
    /// bits), inet addresses are not length-checked, decimals are assumed canonical. Column ids
    /// must be non-negative to decode again (YugabyteDB's `ColumnId` rejects negatives).
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        use KeyEntryValue as V;
        out.push(self.key_entry_type().as_u8());
        match self {
            V::Lowest
            | V::Highest
            | V::NullLow
            | V::NullHigh
            | V::Bool(..)
            | V::Counter
            | V::SsForward
            | V::SsReverse
            | V::Object => {}
            V::Int32(v, o) => out.extend_from_slice(&int32_body(*v, *o)),
            V::Int64(v, o) | V::Timestamp(v, o) => out.extend_from_slice(&int64_body(*v, *o)),
            V::ArrayIndex(v) => out.extend_from_slice(&int64_body(*v, SortOrder::Ascending)),
            V::UInt32(v, o) => {
                let v = if o.is_descending() { !v } else { *v };
                out.extend_from_slice(&v.to_be_bytes());
            }
            V::UInt64(v, o) => {
                let v = if o.is_descending() { !v } else { *v };
                out.extend_from_slice(&v.to_be_bytes());
            }
            V::Float(v, o) => out.extend_from_slice(&float_body(v.to_bits(), *o)),
            V::Double(v, o) => out.extend_from_slice(&double_body(v.to_bits(), *o)),
            V::String(s, o) | V::CollString(s, o) | V::Bson(s, o) | V::Inet(s, o) => {
                string_body(s, *o, out);
            }
            V::Uuid(u, o) => string_body(&uuid_to_comparable(u), *o, out),
            V::Decimal(d, o) => d.write_comparable(o.is_descending(), out),
            V::VarInt(v, SortOrder::Ascending) => v.encode_comparable(0, out),
            V::VarInt(v, SortOrder::Descending) => v.encode_comparable_descending(out),
            V::Frozen(elements, o) => {
                for element in elements {
                    element.encode_to(out);
                }
                out.push(
                    o.pick(KeyEntryType::GroupEnd, KeyEntryType::GroupEndDescending)
                        .as_u8(),
                );
            }
            V::ColumnId(id) | V::SystemColumnId(id) => varint::encode_signed(i64::from(*id), out),
            V::UInt16Hash(h) => out.extend_from_slice(&h.to_be_bytes()),
            V::HybridTime(t) => t.encode_to(out),
            V::ColocationId(v) | V::SubTransactionId(v) => out.extend_from_slice(&v.to_be_bytes()),
            V::TableId(u) => out.extend_from_slice(&uuid_to_comparable(u)),
            V::TransactionId(u) => zero_encoding::encode_to(&uuid_to_comparable(u), out),
            V::GinNull(b) => out.push(*b),
            V::VectorId(u) => out.extend_from_slice(u),
        }
    }

    /// The encoding (type byte and body) as a new vector.
    pub fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out);
        out
    }

    /// Decodes one component from the front of `input`, returning the rest.
    ///
    /// Malformed input (unknown or unsupported type byte, truncated body, bad escape, column id
    /// outside `0..=i32::MAX`, inet length other than 4 or 16, frozen nesting deeper than
    /// [`MAX_FROZEN_DEPTH`], …) is an [`Error::Corruption`] naming the problem; it never panics.
    pub fn decode(input: &[u8]) -> Result<(Self, &[u8])> {
        Self::decode_nested(input, 0)
    }

    /// Decodes a component that must use all of `input` (`FullyDecodeFromKey`).
    pub fn decode_exact(input: &[u8]) -> Result<Self> {
        let (value, rest) = Self::decode(input)?;
        if !rest.is_empty() {
            return Err(corruption!(
                "{} extra bytes after key entry value {value}: {}",
                rest.len(),
                format_bytes(rest)
            ));
        }
        Ok(value)
    }

    fn decode_nested(input: &[u8], depth: usize) -> Result<(Self, &[u8])> {
        use KeyEntryType as K;
        use KeyEntryValue as V;
        use SortOrder::{Ascending as Asc, Descending as Desc};

        let Some((&byte, body)) = input.split_first() else {
            return Err(corruption!(
                "cannot decode a key entry value from an empty slice"
            ));
        };
        let Some(ty) = KeyEntryType::from_u8(byte) else {
            return Err(corruption!("unknown key entry type byte {byte:#04x}"));
        };
        let what = || format!("{ty:?} ({byte:#04x})");
        let wrap = |e: Error| context(e, &what());
        let order = match ty {
            K::Int32Descending
            | K::Int64Descending
            | K::UInt32Descending
            | K::UInt64Descending
            | K::FloatDescending
            | K::DoubleDescending
            | K::StringDescending
            | K::CollStringDescending
            | K::TimestampDescending
            | K::UuidDescending
            | K::InetaddressDescending
            | K::DecimalDescending
            | K::DecimalNaNDescending
            | K::DecimalPosInfinityDescending
            | K::DecimalNegInfinityDescending
            | K::VarIntDescending
            | K::FrozenDescending
            | K::BsonDescending
            | K::TrueDescending
            | K::FalseDescending => Desc,
            _ => Asc,
        };

        let (value, rest) = match ty {
            K::Lowest => (V::Lowest, body),
            K::Highest => (V::Highest, body),
            K::NullLow => (V::NullLow, body),
            K::NullHigh => (V::NullHigh, body),
            K::False | K::FalseDescending => (V::Bool(false, order), body),
            K::True | K::TrueDescending => (V::Bool(true, order), body),
            K::Counter => (V::Counter, body),
            K::SsForward => (V::SsForward, body),
            K::SsReverse => (V::SsReverse, body),
            K::Object => (V::Object, body),
            K::Int32 | K::Int32Descending => {
                let (b, rest) = take_array::<4>(body, "int32").map_err(wrap)?;
                (V::Int32(int32_from_body(b, order), order), rest)
            }
            K::Int64 | K::Int64Descending => {
                let (b, rest) = take_array::<8>(body, "int64").map_err(wrap)?;
                (V::Int64(int64_from_body(b, order), order), rest)
            }
            K::Timestamp | K::TimestampDescending => {
                let (b, rest) = take_array::<8>(body, "timestamp").map_err(wrap)?;
                (V::Timestamp(int64_from_body(b, order), order), rest)
            }
            K::ArrayIndex => {
                let (b, rest) = take_array::<8>(body, "array index").map_err(wrap)?;
                (V::ArrayIndex(int64_from_body(b, Asc)), rest)
            }
            K::UInt32 | K::UInt32Descending => {
                let (b, rest) = take_array::<4>(body, "uint32").map_err(wrap)?;
                let v = u32::from_be_bytes(b);
                (
                    V::UInt32(if order.is_descending() { !v } else { v }, order),
                    rest,
                )
            }
            K::UInt64 | K::UInt64Descending => {
                let (b, rest) = take_array::<8>(body, "uint64").map_err(wrap)?;
                let v = u64::from_be_bytes(b);
                (
                    V::UInt64(if order.is_descending() { !v } else { v }, order),
                    rest,
                )
            }
            K::Float | K::FloatDescending => {
                let (b, rest) = take_array::<4>(body, "float").map_err(wrap)?;
                (V::Float(float_from_body(b, order), order), rest)
            }
            K::Double | K::DoubleDescending => {
                let (b, rest) = take_array::<8>(body, "double").map_err(wrap)?;
                (V::Double(double_from_body(b, order), order), rest)
            }
            K::String | K::StringDescending => {
                let (s, rest) = string_from_body(body, order).map_err(wrap)?;
                (V::String(s, order), rest)
            }
            K::CollString | K::CollStringDescending => {
                let (s, rest) = string_from_body(body, order).map_err(wrap)?;
                (V::CollString(s, order), rest)
            }
            K::Bson | K::BsonDescending => {
                let (s, rest) = string_from_body(body, order).map_err(wrap)?;
                (V::Bson(s, order), rest)
            }
            K::Inetaddress | K::InetaddressDescending => {
                let (s, rest) = string_from_body(body, order).map_err(wrap)?;
                if s.len() != 4 && s.len() != 16 {
                    return Err(corruption!(
                        "{}: invalid number of bytes to decode IPv4/IPv6: {}, need 4 or 16",
                        what(),
                        s.len()
                    ));
                }
                (V::Inet(s, order), rest)
            }
            K::Uuid | K::UuidDescending => {
                let (s, rest) = string_from_body(body, order).map_err(wrap)?;
                (V::Uuid(uuid_from_escaped(&s, &what())?, order), rest)
            }
            K::TransactionId => {
                let (s, rest) = zero_encoding::decode(body).map_err(wrap)?;
                (V::TransactionId(uuid_from_escaped(&s, &what())?), rest)
            }
            K::TableId => {
                let (b, rest) = take_array::<16>(body, "cotable id").map_err(wrap)?;
                (V::TableId(uuid_from_comparable(&b)), rest)
            }
            K::VectorId => {
                let (b, rest) = take_array::<16>(body, "vector id").map_err(wrap)?;
                (V::VectorId(b), rest)
            }
            K::Decimal | K::DecimalDescending => {
                let (d, rest) = Decimal::decode_comparable(body).map_err(wrap)?;
                let d = if order.is_descending() {
                    d.negated()
                } else {
                    d
                };
                (V::Decimal(d, order), rest)
            }
            K::DecimalNaN | K::DecimalNaNDescending => (V::Decimal(Decimal::NaN, order), body),
            K::DecimalPosInfinity | K::DecimalPosInfinityDescending => {
                (V::Decimal(Decimal::PosInfinity, order), body)
            }
            K::DecimalNegInfinity | K::DecimalNegInfinityDescending => {
                (V::Decimal(Decimal::NegInfinity, order), body)
            }
            K::VarInt => {
                let (v, rest) = VarInt::decode_comparable(body, 0).map_err(wrap)?;
                (V::VarInt(v, Asc), rest)
            }
            K::VarIntDescending => {
                let (v, rest) = VarInt::decode_comparable_descending(body).map_err(wrap)?;
                (V::VarInt(v, Desc), rest)
            }
            K::Frozen | K::FrozenDescending => {
                if depth >= MAX_FROZEN_DEPTH {
                    return Err(corruption!(
                        "{}: frozen values nested deeper than {MAX_FROZEN_DEPTH}",
                        what()
                    ));
                }
                let end = order.pick(K::GroupEnd, K::GroupEndDescending).as_u8();
                let mut elements = Vec::new();
                let mut rest = body;
                loop {
                    match rest.split_first() {
                        None => {
                            return Err(corruption!(
                                "{}: reached end of slice looking for frozen group end marker",
                                what()
                            ));
                        }
                        Some((&b, after)) if b == end => {
                            rest = after;
                            break;
                        }
                        Some(_) => {
                            let (element, after) =
                                Self::decode_nested(rest, depth + 1).map_err(wrap)?;
                            elements.push(element);
                            rest = after;
                        }
                    }
                }
                (V::Frozen(elements, order), rest)
            }
            K::ColumnId | K::SystemColumnId => {
                let (id, rest) = varint::decode_signed(body).map_err(wrap)?;
                let id = i32::try_from(id)
                    .ok()
                    .filter(|&id| id >= 0)
                    .ok_or_else(|| corruption!("{}: {id} not valid for column id", what()))?;
                let value = if ty == K::ColumnId {
                    V::ColumnId(id)
                } else {
                    V::SystemColumnId(id)
                };
                (value, rest)
            }
            K::UInt16Hash => {
                let (b, rest) = take_array::<2>(body, "16-bit hash").map_err(wrap)?;
                (V::UInt16Hash(u16::from_be_bytes(b)), rest)
            }
            K::HybridTime => {
                let (t, rest) = DocHybridTime::decode(body).map_err(wrap)?;
                (V::HybridTime(t), rest)
            }
            K::ColocationId => {
                let (b, rest) = take_array::<4>(body, "colocation id").map_err(wrap)?;
                (V::ColocationId(u32::from_be_bytes(b)), rest)
            }
            K::SubTransactionId => {
                let (b, rest) = take_array::<4>(body, "subtransaction id").map_err(wrap)?;
                (V::SubTransactionId(u32::from_be_bytes(b)), rest)
            }
            K::GinNull => {
                let (b, rest) = take_array::<1>(body, "gin null").map_err(wrap)?;
                (V::GinNull(b[0]), rest)
            }
            K::IntentTypeSet | K::ObsoleteIntentTypeSet | K::ObsoleteIntentType => {
                if body.is_empty() {
                    return Err(corruption!(
                        "{}: not enough bytes to decode an intent type set",
                        what()
                    ));
                }
                return Err(corruption!(
                    "{}: intent types are not supported key entry values",
                    what()
                ));
            }
            K::VectorIndexMetadata
            | K::TransactionApplyState
            | K::ExternalTransactionId
            | K::WeakObjectLock
            | K::StrongObjectLock
            | K::ExternalIntents => {
                return Err(corruption!("{}: unsupported key entry type", what()));
            }
            K::ObsoleteIntentPrefix
            | K::GreaterThanIntentType
            | K::GroupEnd
            | K::GroupEndDescending
            | K::MergeFlags
            | K::BitSet
            | K::Ttl
            | K::UserTimestamp
            | K::Invalid
            | K::MaxByte => {
                return Err(corruption!("cannot decode {} as a key entry value", what()));
            }
        };
        Ok((value, rest))
    }

    /// Compares two values in the order of their encodings: `a.cmp_key_order(b) ==
    /// a.encoded().cmp(&b.encoded())` (YugabyteDB's `KeyEntryValue::CompareTo`, made exact).
    ///
    /// Different type bytes decide first; within a type the logical order applies, reversed for
    /// descending values: numbers numerically (floats by IEEE total order, so −0.0 < +0.0 and
    /// NaNs sort outside the infinities by sign), strings and inet addresses bytewise, UUIDs by
    /// their comparable form, hybrid times newest first, frozen collections element by element.
    pub fn cmp_key_order(&self, other: &Self) -> Ordering {
        use KeyEntryValue as V;
        let (ta, tb) = (self.key_entry_type(), other.key_entry_type());
        if ta != tb {
            return ta.cmp(&tb);
        }
        match (self, other) {
            (V::Int32(a, o), V::Int32(b, _)) => o.apply(a.cmp(b)),
            (V::Int64(a, o), V::Int64(b, _)) | (V::Timestamp(a, o), V::Timestamp(b, _)) => {
                o.apply(a.cmp(b))
            }
            (V::UInt32(a, o), V::UInt32(b, _)) => o.apply(a.cmp(b)),
            (V::UInt64(a, o), V::UInt64(b, _)) => o.apply(a.cmp(b)),
            (V::Float(a, o), V::Float(b, _)) => o.apply(a.total_cmp(b)),
            (V::Double(a, o), V::Double(b, _)) => o.apply(a.total_cmp(b)),
            (V::String(a, o), V::String(b, _))
            | (V::CollString(a, o), V::CollString(b, _))
            | (V::Bson(a, o), V::Bson(b, _))
            | (V::Inet(a, o), V::Inet(b, _)) => o.apply(a.cmp(b)),
            (V::Uuid(a, o), V::Uuid(b, _)) => {
                o.apply(uuid_to_comparable(a).cmp(&uuid_to_comparable(b)))
            }
            (V::Decimal(a, o), V::Decimal(b, _)) => o.apply(a.cmp(b)),
            (V::VarInt(a, o), V::VarInt(b, _)) => o.apply(a.cmp(b)),
            (V::Frozen(a, o), V::Frozen(b, _)) => {
                let end = o.pick(KeyEntryType::GroupEnd, KeyEntryType::GroupEndDescending);
                let mut i = 0;
                loop {
                    match (a.get(i), b.get(i)) {
                        (None, None) => return Ordering::Equal,
                        (None, Some(y)) => return end.cmp(&y.key_entry_type()),
                        (Some(x), None) => return x.key_entry_type().cmp(&end),
                        (Some(x), Some(y)) => match x.cmp_key_order(y) {
                            Ordering::Equal => i += 1,
                            unequal => return unequal,
                        },
                    }
                }
            }
            (V::ColumnId(a), V::ColumnId(b)) | (V::SystemColumnId(a), V::SystemColumnId(b)) => {
                a.cmp(b)
            }
            (V::ArrayIndex(a), V::ArrayIndex(b)) => a.cmp(b),
            (V::UInt16Hash(a), V::UInt16Hash(b)) => a.cmp(b),
            (V::HybridTime(a), V::HybridTime(b)) => b.cmp(a),
            (V::ColocationId(a), V::ColocationId(b))
            | (V::SubTransactionId(a), V::SubTransactionId(b)) => a.cmp(b),
            (V::TableId(a), V::TableId(b)) | (V::TransactionId(a), V::TransactionId(b)) => {
                uuid_to_comparable(a).cmp(&uuid_to_comparable(b))
            }
            (V::VectorId(a), V::VectorId(b)) => a.cmp(b),
            (V::GinNull(a), V::GinNull(b)) => a.cmp(b),
            // Same type byte and no body (nulls, bools, markers, decimal specials).
            _ => Ordering::Equal,
        }
    }
}

fn uuid_from_escaped(bytes: &[u8], what: &str) -> Result<[u8; 16]> {
    let comparable = <[u8; 16]>::try_from(bytes).map_err(|_| {
        corruption!(
            "{what}: invalid number of bytes to decode a UUID: {}, need 16",
            bytes.len()
        )
    })?;
    Ok(uuid_from_comparable(&comparable))
}

impl From<&str> for KeyEntryValue {
    fn from(s: &str) -> Self {
        KeyEntryValue::string(s)
    }
}

impl From<String> for KeyEntryValue {
    fn from(s: String) -> Self {
        KeyEntryValue::string(s)
    }
}

impl From<i32> for KeyEntryValue {
    fn from(v: i32) -> Self {
        KeyEntryValue::int32(v)
    }
}

impl From<i64> for KeyEntryValue {
    fn from(v: i64) -> Self {
        KeyEntryValue::int64(v)
    }
}

impl From<DocHybridTime> for KeyEntryValue {
    fn from(t: DocHybridTime) -> Self {
        KeyEntryValue::HybridTime(t)
    }
}

impl From<HybridTime> for KeyEntryValue {
    fn from(t: HybridTime) -> Self {
        KeyEntryValue::HybridTime(DocHybridTime::new(t, 0))
    }
}

/// YugabyteDB's `KeyEntryValue::ToString`: strings quoted and escaped (`"foo\x00"`), numbers in
/// decimal, floats per [`real_to_string`], `null`, `true`/`false`, `ArrayIndex(3)`,
/// `UInt16Hash(65535)`, `ColumnId(10)`, `SystemColumnId(0)`, `HT{ physical: 1000 }`, frozen
/// values as `<a,b>`, UUIDs and inet addresses in their usual text forms, `-Inf`/`+Inf` for the
/// scan bounds.
impl fmt::Display for KeyEntryValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use KeyEntryValue as V;
        match self {
            V::Lowest => f.write_str("-Inf"),
            V::Highest => f.write_str("+Inf"),
            V::NullLow | V::NullHigh => f.write_str("null"),
            V::Bool(b, _) => f.write_str(if *b { "true" } else { "false" }),
            V::Int32(v, _) => write!(f, "{v}"),
            V::Int64(v, _) | V::Timestamp(v, _) => write!(f, "{v}"),
            V::UInt32(v, _) => write!(f, "{v}"),
            V::UInt64(v, _) => write!(f, "{v}"),
            V::Float(v, _) => f.write_str(&real_to_string(f64::from(*v))),
            V::Double(v, _) => f.write_str(&real_to_string(*v)),
            V::String(s, _) | V::CollString(s, _) | V::Bson(s, _) => f.write_str(&format_bytes(s)),
            V::Uuid(u, _) => f.write_str(&format_uuid(u)),
            V::Inet(b, _) => f.write_str(&format_inet(b)),
            V::Decimal(d, _) => write!(f, "{d}"),
            V::VarInt(v, _) => write!(f, "{v}"),
            V::Frozen(elements, _) => {
                f.write_str("<")?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(">")
            }
            V::ColumnId(id) => write!(f, "ColumnId({id})"),
            V::SystemColumnId(id) => write!(f, "SystemColumnId({id})"),
            V::ArrayIndex(i) => write!(f, "ArrayIndex({i})"),
            V::UInt16Hash(h) => write!(f, "UInt16Hash({h})"),
            V::HybridTime(t) => write!(f, "{t}"),
            V::Counter => f.write_str("counter"),
            V::SsForward => f.write_str("SSforward"),
            V::SsReverse => f.write_str("SSreverse"),
            V::Object => f.write_str("Object"),
            V::ColocationId(v) => write!(f, "ColocationId({v})"),
            V::TableId(u) => write!(f, "TableId({})", format_uuid(u)),
            V::TransactionId(u) => write!(f, "TransactionId({})", format_uuid(u)),
            V::SubTransactionId(v) => write!(f, "SubTransactionId({v})"),
            V::GinNull(1) => f.write_str("GinNullKey"),
            V::GinNull(2) => f.write_str("GinEmptyItem"),
            V::GinNull(3) => f.write_str("GinNullItem"),
            V::GinNull(other) => write!(f, "GinNull({other})"),
            V::VectorId(u) => write!(f, "VectorId({})", format_uuid(u)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hybrid_time::YUGABYTE_EPOCH_MICROS;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    use KeyEntryValue as V;
    use SortOrder::{Ascending as Asc, Descending as Desc};

    fn key(v: &KeyEntryValue) -> String {
        format_bytes(&v.encoded())
    }

    fn dec(s: &str) -> Decimal {
        match s.parse() {
            Ok(d) => d,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn ht(micros: u64, logical: u32) -> KeyEntryValue {
        KeyEntryValue::from(HybridTime::new(micros, logical))
    }

    /// A descending decimal whose mantissa starts with a zero digit (found by the random-bytes
    /// property): it decodes to its canonical value, whose encoding is a byte longer because
    /// dropping the zero lowers the exponent into the next varint length.
    #[test]
    fn a_decimal_with_a_leading_zero_decodes_to_its_canonical_form() {
        let input = b"d\x2f\xfd";
        let (value, rest) = KeyEntryValue::decode(input).expect("decodes");
        assert!(rest.is_empty());
        let canonical = value.encoded();
        assert_eq!(canonical.len(), input.len() + 1, "{canonical:02x?}");
        let (again, _) = KeyEntryValue::decode(&canonical).expect("decodes");
        assert_eq!(again.encoded(), canonical);
        assert_eq!(format!("{again:?}"), format!("{value:?}"));
    }

    /// vectors.md A1 (`PrimitiveValueTest.TestEncoding`).
    #[test]
    fn encoding_vectors_a1() {
        let epoch = YUGABYTE_EPOCH_MICROS as u64;
        let cases: Vec<(KeyEntryValue, &str)> = vec![
            (V::string("foo"), r#""Sfoo\x00\x00""#),
            (
                V::string(&b"foo\0bar\x01"[..]),
                r#""Sfoo\x00\x01bar\x01\x00\x00""#,
            ),
            (V::int64(123), r#""I\x80\x00\x00\x00\x00\x00\x00{""#),
            (V::int64(i64::MIN), r#""I\x00\x00\x00\x00\x00\x00\x00\x00""#),
            (V::int64(i64::MAX), r#""I\xff\xff\xff\xff\xff\xff\xff\xff""#),
            (V::int32(123), r#""H\x80\x00\x00{""#),
            (V::int32(i32::MIN), r#""H\x00\x00\x00\x00""#),
            (V::int32(i32::MAX), r#""H\xff\xff\xff\xff""#),
            (
                ht(1234567890123, 3456),
                r##""#\x80\xff\x05S\x1e\x85.\xbb52\x7fL""##,
            ),
            (ht(epoch, 0), r##""#\x80\x80\x80D""##),
            (ht(epoch - 1, 0), r##""#\x80\x81\x80D""##),
            (ht(epoch + 1, 0), r##""#\x80~\x80D""##),
            (ht(1000, 0), r##""#\x80\xff\x05T=\xf7)\xbc\x18\x80K""##),
            (
                V::bson(&b"foo\0bar\x01"[..]),
                r#""ofoo\x00\x01bar\x01\x00\x00""#,
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(key(&value), expected, "{value:?}");
            assert_eq!(
                KeyEntryValue::decode_exact(&value.encoded()),
                Ok(value.clone())
            );
        }
        // Ordering facts the A1 test states about hybrid times.
        assert!(ht(epoch - 1, 0).encoded() > ht(epoch, 0).encoded());
        assert!(ht(epoch + 1, 0).encoded() < ht(epoch, 0).encoded());
    }

    /// vectors.md A2 (`PrimitiveValueTest.TestToString`).
    #[test]
    #[expect(
        clippy::approx_constant,
        reason = "the YugabyteDB vector prints 3.1415"
    )]
    fn to_string_vectors_a2() {
        let cases: Vec<(KeyEntryValue, &str)> = vec![
            (V::string("foo"), r#""foo""#),
            (
                V::string(&b"foo\"\x00\x01\x02\"bar"[..]),
                r#""foo\"\x00\x01\x02\"bar""#,
            ),
            (V::int64(123456789000), "123456789000"),
            (V::int64(-123456789000), "-123456789000"),
            (V::int64(i64::MAX), "9223372036854775807"),
            (V::int64(i64::MIN), "-9223372036854775808"),
            (V::int32(123456789), "123456789"),
            (V::int32(-123456789), "-123456789"),
            (V::uint64(0), "0"),
            (V::uint64(u64::MAX), "18446744073709551615"),
            (V::double(3.1415), "3.1415"),
            (V::double(100.0), "100.0"),
            (V::double(1e-100), "1.000000E-100"),
            (V::float(3.1415), "3.1415"),
            (V::float(100.0), "100.0"),
            (V::float(1e-37), "1.000000E-37"),
            (V::array_index(123), "ArrayIndex(123)"),
            (V::array_index(-123), "ArrayIndex(-123)"),
            (
                V::from(HybridTime(100200300400500 * 4096 + 1234)),
                "HT{ physical: 100200300400500 logical: 1234 }",
            ),
            (V::from(HybridTime(0)), "HT<min>"),
            (V::from(HybridTime(1)), "HT<initial>"),
            (V::from(HybridTime(u64::MAX)), "HT<max>"),
            (V::uint16_hash(65535), "UInt16Hash(65535)"),
            (V::uint16_hash(-1i16 as u16), "UInt16Hash(65535)"),
            (V::uint16_hash(0), "UInt16Hash(0)"),
            (V::column_id(i32::MAX), "ColumnId(2147483647)"),
            (V::column_id(0), "ColumnId(0)"),
            (V::system_column_id(i32::MAX), "SystemColumnId(2147483647)"),
            (V::system_column_id(0), "SystemColumnId(0)"),
        ];
        for (value, expected) in cases {
            assert_eq!(value.to_string(), expected, "{value:?}");
        }
    }

    #[test]
    fn to_string_other_variants() {
        let uuid = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x1d, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
            0xcd, 0xef,
        ];
        let cases: Vec<(KeyEntryValue, &str)> = vec![
            (V::Lowest, "-Inf"),
            (V::Highest, "+Inf"),
            (V::NullLow, "null"),
            (V::NullHigh, "null"),
            (V::bool(true), "true"),
            (V::Bool(false, Desc), "false"),
            (V::uint32(7), "7"),
            (V::Timestamp(-5, Desc), "-5"),
            (V::uuid(uuid), "12345678-9abc-1def-0123-456789abcdef"),
            (
                V::TableId(uuid),
                "TableId(12345678-9abc-1def-0123-456789abcdef)",
            ),
            (
                V::TransactionId(uuid),
                "TransactionId(12345678-9abc-1def-0123-456789abcdef)",
            ),
            (
                V::VectorId(uuid),
                "VectorId(12345678-9abc-1def-0123-456789abcdef)",
            ),
            (V::inet(Ipv4Addr::new(1, 2, 3, 4).into()), "1.2.3.4"),
            (V::inet(Ipv6Addr::LOCALHOST.into()), "::1"),
            (V::decimal(dec("100.02")), "100.02"),
            (V::Decimal(dec("-0.001"), Desc), "-0.001"),
            (V::decimal(Decimal::NaN), "NaN"),
            (V::varint(VarInt::from(-42)), "-42"),
            (
                V::frozen(vec![V::string("a"), V::int32(1), V::NullLow]),
                r#"<"a",1,null>"#,
            ),
            (V::frozen(vec![]), "<>"),
            (V::Counter, "counter"),
            (V::SsForward, "SSforward"),
            (V::SsReverse, "SSreverse"),
            (V::Object, "Object"),
            (V::ColocationId(16384), "ColocationId(16384)"),
            (V::SubTransactionId(2), "SubTransactionId(2)"),
            (V::GinNull(1), "GinNullKey"),
            (V::GinNull(2), "GinEmptyItem"),
            (V::GinNull(3), "GinNullItem"),
            (V::coll_string(&b"\0x"[..]), r#""\x00x""#),
            (V::double(-0.0), "-0.0"),
            (V::double(-1e-100), "-0.0"),
            (V::double(f64::INFINITY), "inf"),
            (V::double(f64::NEG_INFINITY), "-inf"),
            (V::double(f64::NAN), "nan"),
            (V::double(1.5e-7), "1.500000E-07"),
            (V::double(5e-7), "5.000000E-07"),
            (V::double(6e-7), "0.000001"),
            (V::double(123456789.125), "123456789.125"),
            (V::double(0.0078125), "0.007812"),
        ];
        for (value, expected) in cases {
            assert_eq!(value.to_string(), expected, "{value:?}");
        }
    }

    #[test]
    fn inet_text_matches_inet_ntop() {
        let cases = [
            ("::", "::"),
            ("1::", "1::"),
            ("2001:db8::ff00:42:8329", "2001:db8::ff00:42:8329"),
            ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
            ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("::0.0.0.2", "::2"),
            ("fe80::1:2", "fe80::1:2"),
        ];
        for (input, shown) in cases {
            let addr: Ipv6Addr = match input.parse() {
                Ok(a) => a,
                Err(e) => panic!("{input}: {e}"),
            };
            assert_eq!(format_inet(&addr.octets()), shown, "{input}");
        }
        assert_eq!(format_inet(&[1, 2, 3]), r#""\x01\x02\x03""#);
    }

    /// vectors.md A3 (`TestVarintStorage`, `TestCorruption`).
    #[test]
    fn column_ids_and_corruption_a3() {
        assert_eq!(V::column_id(63).encoded().len(), 1 + 1);
        assert_eq!(V::column_id(64).encoded().len(), 1 + 2);
        assert_eq!(V::column_id(i32::MAX).encoded().len(), 1 + 5);
        assert_eq!(V::LIVENESS_COLUMN.encoded(), b"J\x80");

        let corrupt = |input: &[u8]| matches!(V::decode(input), Err(Error::Corruption(_)));
        assert!(corrupt(b"K"));
        let mut k_int64_max = b"K".to_vec();
        k_int64_max.extend_from_slice(&[0xFF; 8]);
        assert!(corrupt(&k_int64_max));
        assert!(corrupt(b"\x14"));
        // Column ids outside 0..=i32::MAX.
        for id in [-1i64, i64::from(i32::MAX) + 1, i64::MIN] {
            let mut input = b"J".to_vec();
            varint::encode_signed(id, &mut input);
            assert!(corrupt(&input), "{id}");
        }
    }

    #[test]
    fn corruption_messages_name_the_problem() {
        let message = |input: &[u8]| match V::decode(input) {
            Err(Error::Corruption(m)) => m,
            other => panic!("{input:?} decoded to {other:?}"),
        };
        assert!(message(b"").contains("empty"));
        assert!(message(b"\x01").contains("0x01"));
        assert!(message(b"R").contains("0x52"));
        assert!(message(b"!").contains("GroupEnd"));
        assert!(message(b"\x14").contains("intent type set"));
        assert!(message(b"\x14\x01").contains("not supported"));
        assert!(message(b"\x07").contains("TransactionApplyState"));
        assert!(message(b"H\x80\x00").contains("int32"));
        assert!(message(b"Sabc").contains("not terminated"));
        assert!(message(b"-\x01\x02\x03\x00\x00").contains("IPv4/IPv6"));
        assert!(message(b"_\x01\x00\x00").contains("UUID"));
        assert!(message(b"<Sa\x00\x00").contains("group end"));
        assert!(message(b"<}").contains("GroupEndDescending"));
        assert!(message(&[b'<'; 100_000]).contains("nested deeper"));
    }

    /// The component bytes of vectors.md B3 (`TestDocKeyEncoding`) and B4.
    #[test]
    fn doc_key_component_vectors_b3_b4() {
        let join = |values: &[KeyEntryValue]| {
            let mut out = Vec::new();
            for v in values {
                v.encode_to(&mut out);
            }
            out.push(b'!');
            format_bytes(&out)
        };
        assert_eq!(
            join(&[
                V::string("val1"),
                V::int64(1000),
                V::string("val2"),
                V::int64(2000)
            ]),
            r#""Sval1\x00\x00I\x80\x00\x00\x00\x00\x00\x03\xe8Sval2\x00\x00I\x80\x00\x00\x00\x00\x00\x07\xd0!""#
        );
        assert_eq!(
            join(&[
                V::string("val1").desc(),
                V::int64(1000),
                V::int64(1000).desc(),
                V::string(&b"val1\x00"[..]).desc(),
                V::inet(Ipv4Addr::new(1, 2, 3, 4).into()).desc(),
                V::timestamp(1000).desc(),
                V::decimal(dec("100.02")).desc(),
                V::decimal(dec("0.001")),
            ]),
            r#""a\x89\x9e\x93\xce\xff\xffI\x80\x00\x00\x00\x00\x00\x03\xe8b\x7f\xff\xff\xff\xff\xff\xfc\x17a\x89\x9e\x93\xce\xff\xfe\xff\xff.\xfe\xfd\xfc\xfb\xff\xffc\x7f\xff\xff\xff\xff\xff\xfc\x17d\x1c\xea\xfe\xd7E\xdd\x14!""#
        );
        let mut hashed = V::uint16_hash(0xcafe).encoded();
        for v in [V::string("hashed1"), V::string("hashed2")] {
            v.encode_to(&mut hashed);
        }
        assert_eq!(
            format_bytes(&hashed),
            r#""G\xca\xfeShashed1\x00\x00Shashed2\x00\x00""#
        );
        assert_eq!(
            key(&V::string(&b"sk3\x00"[..]).desc()),
            r#""a\x8c\x94\xcc\xff\xfe\xff\xff""#
        );
        assert_eq!(
            key(&ht(1000, 0)),
            r##""#\x80\xff\x05T=\xf7)\xbc\x18\x80K""##
        );
        // Each component decodes back from the B3 bytes.
        let bytes = b"d\x1c\xea\xfe\xd7E\xdd\x14";
        let (first, rest) = match V::decode(bytes) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(first, V::decimal(dec("100.02")).desc());
        assert_eq!(V::decode_exact(rest), Ok(V::decimal(dec("0.001"))));
    }

    #[test]
    fn special_bodies() {
        let uuid_v4 = [
            0xf8, 0x1d, 0x4f, 0xae, 0x7d, 0xec, 0x41, 0xd0, 0xa7, 0x65, 0x00, 0xa0, 0xc9, 0x1e,
            0x6b, 0xf6,
        ];
        let uuid_v1 = [
            0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
            0x30, 0xc8,
        ];
        assert_eq!(
            uuid_to_comparable(&uuid_v1),
            [
                0x11, 0xd1, 0x9d, 0xad, 0x6b, 0xa7, 0xb8, 0x10, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
                0x30, 0xc8
            ]
        );
        assert_eq!(
            uuid_to_comparable(&uuid_v4),
            [
                0x4f, 0x81, 0xd4, 0xfa, 0xe7, 0xde, 0xc1, 0xd0, 0xa7, 0x65, 0x00, 0xa0, 0xc9, 0x1e,
                0x6b, 0xf6
            ]
        );
        // TableId is raw (DocKeyEncoder::CotableId), TransactionId escaped, VectorId raw.
        let table = V::TableId(uuid_v4).encoded();
        assert_eq!(table.len(), 17);
        assert_eq!(&table[1..], &uuid_to_comparable(&uuid_v4));
        let txn = V::TransactionId(uuid_v4).encoded();
        assert_eq!(&txn[txn.len() - 3..], b"\xf6\x00\x00");
        assert_eq!(V::VectorId(uuid_v4).encoded()[1..], uuid_v4);
        assert_eq!(V::GinNull(2).encoded(), b"v\x02");
        assert_eq!(V::ColocationId(0x01020304).encoded(), b"0\x01\x02\x03\x04");
        assert_eq!(V::SubTransactionId(1).encoded(), b"n\x00\x00\x00\x01");
        assert_eq!(V::uint16_hash(0xcafe).encoded(), b"G\xca\xfe");
        assert_eq!(V::UInt32(1, Desc).encoded(), b"g\xff\xff\xff\xfe");
        assert_eq!(V::Int32(1000, Desc).encoded(), b"e\x7f\xff\xfc\x17");
        assert_eq!(V::decimal(Decimal::NegInfinity).encoded(), b"A");
        assert_eq!(V::decimal(Decimal::PosInfinity).encoded(), b"N");
        assert_eq!(V::decimal(Decimal::NaN).encoded(), b"P");
        assert_eq!(V::decimal(Decimal::NaN).desc().encoded(), b"?");
        assert_eq!(V::decimal(Decimal::PosInfinity).desc().encoded(), b"@");
        assert_eq!(V::decimal(Decimal::NegInfinity).desc().encoded(), b"q");
        assert_eq!(V::decimal(Decimal::zero()).desc().encoded(), b"d\x80");
        assert_eq!(V::varint(VarInt::zero()).desc().encoded(), b"f\x80");
        assert_eq!(V::varint(VarInt::from(1000)).desc().encoded(), b"f\x3c\x17");
        assert_eq!(
            V::frozen(vec![V::string("a"), V::NullLow]).desc().encoded(),
            b">a\x9e\xff\xff|}"
        );
        assert_eq!(
            V::frozen(vec![V::int32(1), V::NullLow]).encoded(),
            b"<H\x80\x00\x00\x01$!"
        );
        assert_eq!(
            V::double(-0.0).encoded(),
            b"D\x7f\xff\xff\xff\xff\xff\xff\xff"
        );
        assert_eq!(
            V::double(0.0).encoded(),
            b"D\x80\x00\x00\x00\x00\x00\x00\x00"
        );
        assert_eq!(V::float(1.0).encoded(), b"C\xbf\x80\x00\x00");
        assert_eq!(V::Float(1.0, Desc).encoded(), b"M\x40\x7f\xff\xff");
    }

    /// vectors.md A5 `FloatEncoding`/`DoubleEncoding`, both orders.
    #[test]
    fn floats_sort_and_roundtrip_a5() {
        let numbers = [-123.45f32, -0.00123, -0.0, 0.0, 0.00123, 123.45];
        for order in [Asc, Desc] {
            let floats: Vec<Vec<u8>> = numbers
                .iter()
                .map(|&x| V::Float(x, order).encoded())
                .collect();
            let doubles: Vec<Vec<u8>> = numbers
                .iter()
                .map(|&x| V::Double(f64::from(x), order).encoded())
                .collect();
            for pair in floats.windows(2).chain(doubles.windows(2)) {
                assert_eq!(pair[0].cmp(&pair[1]), order.apply(Ordering::Less));
            }
            for (&x, bytes) in numbers.iter().zip(&floats) {
                match V::decode_exact(bytes) {
                    Ok(V::Float(y, o)) => assert_eq!((y.to_bits(), o), (x.to_bits(), order)),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    // --- property tests ---

    fn order() -> impl Strategy<Value = SortOrder> {
        prop_oneof![Just(Asc), Just(Desc)]
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        crate::zero_encoding::tests::bytes_up_to(12)
    }

    fn uuid() -> impl Strategy<Value = [u8; 16]> {
        prop_oneof![
            any::<[u8; 16]>(),
            any::<[u8; 16]>().prop_map(|mut u| {
                u[6] = (u[6] & 0x0F) | 0x10;
                u
            }),
            any::<[u8; 16]>().prop_map(|mut u| {
                u[0] = 0;
                u[6] &= 0x0F;
                u
            }),
        ]
    }

    fn inet_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            any::<[u8; 4]>().prop_map(Vec::from),
            any::<[u8; 16]>().prop_map(Vec::from),
            any::<[u8; 4]>().prop_map(|v4| {
                let mut v6 = vec![0u8; 16];
                v6[10] = 0xFF;
                v6[11] = 0xFF;
                v6[12..].copy_from_slice(&v4);
                v6
            }),
        ]
    }

    fn float() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            proptest::sample::select(vec![
                0.0f32,
                -0.0,
                1.0,
                -1.0,
                f32::INFINITY,
                f32::MIN_POSITIVE
            ]),
        ]
    }

    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            proptest::sample::select(vec![0.0f64, -0.0, 1.0, -1.0, f64::NEG_INFINITY, f64::NAN]),
        ]
    }

    fn decimal() -> impl Strategy<Value = Decimal> {
        prop_oneof![
            6 => (any::<bool>(), proptest::collection::vec(0u8..10, 0..12), -40i64..40)
                .prop_map(|(n, d, e)| Decimal::new(n, d, e).unwrap_or_default()),
            1 => any::<i64>().prop_map(Decimal::from_i64),
            1 => Just(Decimal::NaN),
            1 => Just(Decimal::PosInfinity),
            1 => Just(Decimal::NegInfinity),
        ]
    }

    fn varint_value() -> impl Strategy<Value = VarInt> {
        prop_oneof![
            any::<i64>().prop_map(VarInt::from),
            (-300i64..300).prop_map(VarInt::from),
            (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..20))
                .prop_map(|(n, m)| VarInt::new(n, m)),
        ]
    }

    fn doc_ht() -> impl Strategy<Value = DocHybridTime> {
        (any::<u64>(), any::<u32>()).prop_map(|(t, w)| DocHybridTime::new(HybridTime(t), w))
    }

    /// Pairs of values of one variant and order, so that comparisons exercise the bodies.
    fn same_kind_pair() -> impl Strategy<Value = (KeyEntryValue, KeyEntryValue)> {
        let numeric = prop_oneof![
            (any::<i32>(), any::<i32>(), order())
                .prop_map(|(a, b, o)| (V::Int32(a, o), V::Int32(b, o))),
            (any::<i64>(), any::<i64>(), order())
                .prop_map(|(a, b, o)| (V::Int64(a, o), V::Int64(b, o))),
            (any::<u32>(), any::<u32>(), order())
                .prop_map(|(a, b, o)| (V::UInt32(a, o), V::UInt32(b, o))),
            (any::<u64>(), any::<u64>(), order())
                .prop_map(|(a, b, o)| (V::UInt64(a, o), V::UInt64(b, o))),
            (float(), float(), order()).prop_map(|(a, b, o)| (V::Float(a, o), V::Float(b, o))),
            (double(), double(), order()).prop_map(|(a, b, o)| (V::Double(a, o), V::Double(b, o))),
            (any::<i64>(), any::<i64>(), order())
                .prop_map(|(a, b, o)| (V::Timestamp(a, o), V::Timestamp(b, o))),
            (decimal(), decimal(), order())
                .prop_map(|(a, b, o)| (V::Decimal(a, o), V::Decimal(b, o))),
            (varint_value(), varint_value(), order())
                .prop_map(|(a, b, o)| (V::VarInt(a, o), V::VarInt(b, o))),
        ];
        let textual = prop_oneof![
            (bytes(), bytes(), order()).prop_map(|(a, b, o)| (V::String(a, o), V::String(b, o))),
            (bytes(), bytes(), order())
                .prop_map(|(a, b, o)| (V::CollString(a, o), V::CollString(b, o))),
            (bytes(), bytes(), order()).prop_map(|(a, b, o)| (V::Bson(a, o), V::Bson(b, o))),
            (uuid(), uuid(), order()).prop_map(|(a, b, o)| (V::Uuid(a, o), V::Uuid(b, o))),
            (inet_bytes(), inet_bytes(), order())
                .prop_map(|(a, b, o)| (V::Inet(a, o), V::Inet(b, o))),
            (any::<bool>(), any::<bool>(), order())
                .prop_map(|(a, b, o)| (V::Bool(a, o), V::Bool(b, o))),
        ];
        let ids = prop_oneof![
            (0..=i32::MAX, 0..=i32::MAX).prop_map(|(a, b)| (V::ColumnId(a), V::ColumnId(b))),
            (0..=i32::MAX, 0..=i32::MAX)
                .prop_map(|(a, b)| (V::SystemColumnId(a), V::SystemColumnId(b))),
            (any::<i64>(), any::<i64>()).prop_map(|(a, b)| (V::ArrayIndex(a), V::ArrayIndex(b))),
            (any::<u16>(), any::<u16>()).prop_map(|(a, b)| (V::UInt16Hash(a), V::UInt16Hash(b))),
            (doc_ht(), doc_ht()).prop_map(|(a, b)| (V::HybridTime(a), V::HybridTime(b))),
            (any::<u32>(), any::<u32>())
                .prop_map(|(a, b)| (V::ColocationId(a), V::ColocationId(b))),
            (any::<u32>(), any::<u32>())
                .prop_map(|(a, b)| (V::SubTransactionId(a), V::SubTransactionId(b))),
            (uuid(), uuid()).prop_map(|(a, b)| (V::TableId(a), V::TableId(b))),
            (uuid(), uuid()).prop_map(|(a, b)| (V::TransactionId(a), V::TransactionId(b))),
            (uuid(), uuid()).prop_map(|(a, b)| (V::VectorId(a), V::VectorId(b))),
        ];
        let frozen = (
            proptest::collection::vec(leaf(), 0..4),
            proptest::collection::vec(leaf(), 0..4),
            order(),
            any::<bool>(),
        )
            .prop_map(|(a, b, o, share_prefix)| {
                let b = if share_prefix {
                    a.iter().cloned().chain(b).collect()
                } else {
                    b
                };
                (V::Frozen(a, o), V::Frozen(b, o))
            });
        prop_oneof![
            4 => numeric,
            3 => textual,
            3 => ids,
            1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| (V::GinNull(a), V::GinNull(b))),
            2 => frozen,
        ]
    }

    fn leaf() -> impl Strategy<Value = KeyEntryValue> {
        let markers = proptest::sample::select(vec![
            V::Lowest,
            V::Highest,
            V::NullLow,
            V::NullHigh,
            V::Counter,
            V::SsForward,
            V::SsReverse,
            V::Object,
        ]);
        let scalars = prop_oneof![
            (any::<bool>(), order()).prop_map(|(v, o)| V::Bool(v, o)),
            (any::<i32>(), order()).prop_map(|(v, o)| V::Int32(v, o)),
            (any::<i64>(), order()).prop_map(|(v, o)| V::Int64(v, o)),
            (any::<u32>(), order()).prop_map(|(v, o)| V::UInt32(v, o)),
            (any::<u64>(), order()).prop_map(|(v, o)| V::UInt64(v, o)),
            (float(), order()).prop_map(|(v, o)| V::Float(v, o)),
            (double(), order()).prop_map(|(v, o)| V::Double(v, o)),
            (any::<i64>(), order()).prop_map(|(v, o)| V::Timestamp(v, o)),
            (decimal(), order()).prop_map(|(v, o)| V::Decimal(v, o)),
            (varint_value(), order()).prop_map(|(v, o)| V::VarInt(v, o)),
        ];
        let texts = prop_oneof![
            (bytes(), order()).prop_map(|(v, o)| V::String(v, o)),
            (bytes(), order()).prop_map(|(v, o)| V::CollString(v, o)),
            (bytes(), order()).prop_map(|(v, o)| V::Bson(v, o)),
            (uuid(), order()).prop_map(|(v, o)| V::Uuid(v, o)),
            (inet_bytes(), order()).prop_map(|(v, o)| V::Inet(v, o)),
        ];
        let ids = prop_oneof![
            (0..=i32::MAX).prop_map(V::ColumnId),
            (0..=i32::MAX).prop_map(V::SystemColumnId),
            any::<i64>().prop_map(V::ArrayIndex),
            any::<u16>().prop_map(V::UInt16Hash),
            doc_ht().prop_map(V::HybridTime),
            any::<u32>().prop_map(V::ColocationId),
            any::<u32>().prop_map(V::SubTransactionId),
            uuid().prop_map(V::TableId),
            uuid().prop_map(V::TransactionId),
            uuid().prop_map(V::VectorId),
        ];
        prop_oneof![
            1 => markers,
            4 => scalars,
            3 => texts,
            3 => ids,
            1 => any::<u8>().prop_map(V::GinNull),
        ]
    }

    fn any_value() -> impl Strategy<Value = KeyEntryValue> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            (proptest::collection::vec(inner, 0..4), order()).prop_map(|(e, o)| V::Frozen(e, o))
        })
    }

    /// Equality that also distinguishes float bit patterns (NaN payloads, −0.0).
    fn identical(a: &KeyEntryValue, b: &KeyEntryValue) -> bool {
        a.encoded() == b.encoded() && format!("{a:?}") == format!("{b:?}")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(2000)))]

        #[test]
        fn same_kind_order_matches_bytes((a, b) in same_kind_pair()) {
            let expected = a.cmp_key_order(&b);
            prop_assert_eq!(expected, a.encoded().cmp(&b.encoded()), "{:?} vs {:?}", a, b);
            prop_assert_eq!(b.cmp_key_order(&a), expected.reverse());
        }

        #[test]
        fn mixed_order_matches_bytes(a in any_value(), b in any_value()) {
            prop_assert_eq!(a.cmp_key_order(&b), a.encoded().cmp(&b.encoded()), "{:?} vs {:?}", a, b);
        }

        #[test]
        fn roundtrip(value in any_value(), tail in bytes()) {
            let mut input = value.encoded();
            input.extend_from_slice(&tail);
            match KeyEntryValue::decode(&input) {
                Ok((decoded, rest)) => {
                    prop_assert!(identical(&decoded, &value), "{:?} != {:?}", decoded, value);
                    prop_assert_eq!(rest, &tail[..]);
                }
                Err(e) => prop_assert!(false, "{:?} failed to decode: {}", value, e),
            }
            let _ = value.to_string();
        }

        #[test]
        fn desc_reverses_order((a, b) in same_kind_pair()) {
            let (da, db) = (a.clone().desc(), b.clone().desc());
            if a.sort_order().is_some() && !matches!(a, V::Frozen(..)) {
                let asc = a.clone().with_order(Asc);
                let bsc = b.clone().with_order(Asc);
                prop_assert_eq!(da.encoded().cmp(&db.encoded()), bsc.encoded().cmp(&asc.encoded()));
            }
        }

        #[test]
        fn decode_never_panics_on_random_bytes(first in any::<u8>(), body in bytes()) {
            let mut input = vec![first];
            input.extend_from_slice(&body);
            if let Ok((value, _rest)) = KeyEntryValue::decode(&input) {
                // Whatever decodes re-encodes to something that decodes to the same value.
                // Not always as short: a decimal with a leading zero digit decodes (as in
                // YugabyteDB) to its canonical form, whose exponent may take another byte.
                let again = value.encoded();
                match KeyEntryValue::decode_exact(&again) {
                    Ok(v) => prop_assert!(identical(&v, &value)),
                    Err(e) => prop_assert!(false, "{:?}: {}", value, e),
                }
                let _ = value.to_string();
            }
        }

        #[test]
        fn decode_never_panics_on_damaged_encodings(value in any_value(), cut in any::<usize>(),
                                                    flip in any::<usize>(), xor in 1u8..) {
            let bytes = value.encoded();
            let truncated = &bytes[..cut % (bytes.len() + 1)];
            let _ = KeyEntryValue::decode(truncated);
            let mut damaged = bytes.clone();
            let i = flip % damaged.len();
            damaged[i] ^= xor;
            if let Ok((v, _)) = KeyEntryValue::decode(&damaged) {
                let _ = v.to_string();
            }
        }

        #[test]
        fn inet_text_matches_std_for_non_compat_addresses(bytes in inet_bytes()) {
            let shown = format_inet(&bytes);
            if let Ok(v4) = <[u8; 4]>::try_from(&bytes[..]) {
                prop_assert_eq!(shown, Ipv4Addr::from(v4).to_string());
            } else if let Ok(v6) = <[u8; 16]>::try_from(&bytes[..]) {
                // std prints `::a.b.c.d` (IPv4-compatible) in hex; inet_ntop does not.
                if v6[..12] != [0; 12] {
                    prop_assert_eq!(shown, Ipv6Addr::from(v6).to_string());
                }
            }
        }

        #[test]
        fn uuid_comparable_roundtrips(u in uuid()) {
            prop_assert_eq!(uuid_from_comparable(&uuid_to_comparable(&u)), u);
        }
    }
}

/// Skips one key component at the front of `input` without building it, returning the rest.
/// Accepts exactly what [`KeyEntryValue::decode`] accepts for the common types and falls back
/// to it for the rest; hot paths (reads, GC) use it to find component boundaries.
pub fn skip_key_entry(input: &[u8]) -> Result<&[u8]> {
    use KeyEntryType as K;
    let (&tag, body) = input
        .split_first()
        .ok_or_else(|| crate::error::Error::Corruption("empty key component".into()))?;
    let fixed = |n: usize| crate::error::take(body, n, "key component").map(|(_, rest)| rest);
    match KeyEntryType::from_u8(tag) {
        Some(
            K::NullLow
            | K::NullHigh
            | K::False
            | K::True
            | K::FalseDescending
            | K::TrueDescending
            | K::Counter
            | K::SsForward
            | K::SsReverse
            | K::Object,
        ) => Ok(body),
        Some(K::UInt16Hash) => fixed(2),
        Some(
            K::Int32
            | K::Int32Descending
            | K::UInt32
            | K::UInt32Descending
            | K::Float
            | K::FloatDescending
            | K::ColocationId
            | K::SubTransactionId,
        ) => fixed(4),
        Some(
            K::Int64
            | K::Int64Descending
            | K::UInt64
            | K::UInt64Descending
            | K::Double
            | K::DoubleDescending
            | K::Timestamp
            | K::TimestampDescending
            | K::ArrayIndex,
        ) => fixed(8),
        Some(K::String) => crate::zero_encoding::skip(body),
        Some(K::StringDescending) => crate::zero_encoding::skip_complement(body),
        Some(K::ColumnId | K::SystemColumnId) => {
            let (id, rest) = crate::varint::decode_signed(body)?;
            if !(0..=i64::from(i32::MAX)).contains(&id) {
                return Err(crate::error::Error::Corruption(format!(
                    "column id {id} out of range"
                )));
            }
            Ok(rest)
        }
        _ => KeyEntryValue::decode(input).map(|(_, rest)| rest),
    }
}

#[cfg(test)]
mod skip_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `skip_key_entry` agrees with `decode` on every input: same success, same rest.
        #[test]
        fn skip_agrees_with_decode(bytes: Vec<u8>) {
            let skipped = skip_key_entry(&bytes).ok();
            let decoded = KeyEntryValue::decode(&bytes).ok().map(|(_, rest)| rest);
            prop_assert_eq!(skipped, decoded);
        }

        #[test]
        fn skip_agrees_on_valid_encodings(s: Vec<u8>, i: i64, c in 0i32..=i32::MAX, h: u16) {
            for value in [
                KeyEntryValue::string(s.clone()),
                KeyEntryValue::String(s.clone(), SortOrder::Descending),
                KeyEntryValue::int64(i),
                KeyEntryValue::ColumnId(c),
                KeyEntryValue::UInt16Hash(h),
                KeyEntryValue::ArrayIndex(i),
            ] {
                let mut enc = value.encoded();
                enc.extend_from_slice(b"rest");
                prop_assert_eq!(skip_key_entry(&enc).ok(), Some(&b"rest"[..]));
            }
        }
    }
}
