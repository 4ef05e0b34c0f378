//! Values: control fields and payload encodings (format.md §5).
//!
//! ```text
//! value = [ 'k' merge-flags(unsigned varint) ] [ '#' intent DocHybridTime ]
//!         [ 't' ttl-ms(signed varint) ] [ 'u' user-timestamp-µs(8 BE) ] payload
//! ```
//! Payloads are *not* key encodings: integers are plain big-endian two's complement, strings
//! are raw bytes without escaping or terminator.

use std::fmt;

use crate::entry_type::{KeyEntryType, ValueEntryType};
use crate::error::{Result, corruption, take_array};
use crate::hybrid_time::DocHybridTime;
use crate::key_entry::{KeyEntryValue, SortOrder};
use crate::numeric::{Decimal, VarInt};
use crate::varint::{decode_signed, decode_unsigned, encode_signed, encode_unsigned};

/// Merge flag marking a TTL-only merge record (Redis EXPIRE/PERSIST, format.md §7 step 7).
pub const TTL_MERGE_FLAG: u64 = 1;

/// Time to live of a value, in milliseconds.
///
/// Absence of the `t` field (`Option::None` in [`ValueControlFields::ttl`]) means "no value
/// TTL: use the table's default". `Ttl::RESET` (0) means "never expires, ignore the table TTL".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ttl(pub i64);

impl Ttl {
    /// CQL `USING TTL 0`: never expires and overrides the table TTL.
    pub const RESET: Ttl = Ttl(0);

    /// A TTL of whole seconds.
    pub const fn from_secs(secs: i64) -> Self {
        Ttl(secs * 1000)
    }

    /// Milliseconds.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// Microseconds, saturating.
    pub const fn micros(self) -> i64 {
        self.0.saturating_mul(1000)
    }
}

/// `S.mmms`, as YugabyteDB's `MonoDelta::ToString` (`1.000s`, `0.001s`).
impl fmt::Display for Ttl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:03}s", abs / 1000, abs % 1000)
    }
}

/// The optional fields in front of a value's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ValueControlFields {
    /// `k`: merge flags; 0 when absent.
    pub merge_flags: u64,
    /// `#`: the hybrid time of the intent that wrote the value (transactions; decoded, never
    /// written by this project).
    pub intent_doc_ht: Option<DocHybridTime>,
    /// `t`: the value's own TTL; `None` = use the table default.
    pub ttl: Option<Ttl>,
    /// `u`: CQL `USING TIMESTAMP` in µs.
    pub user_timestamp: Option<i64>,
}

impl ValueControlFields {
    /// Fields with just a TTL.
    pub fn with_ttl(ttl: Option<Ttl>) -> Self {
        ValueControlFields {
            ttl,
            ..Self::default()
        }
    }

    /// True for a TTL merge record.
    pub fn is_ttl_merge(&self) -> bool {
        self.merge_flags & TTL_MERGE_FLAG != 0
    }

    /// Appends the fields that are present, in their fixed order.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        if self.merge_flags != 0 {
            out.push(KeyEntryType::MergeFlags.as_u8());
            encode_unsigned(self.merge_flags, out);
        }
        if let Some(ht) = &self.intent_doc_ht {
            out.push(KeyEntryType::HybridTime.as_u8());
            ht.encode_to(out);
        }
        if let Some(ttl) = self.ttl {
            out.push(KeyEntryType::Ttl.as_u8());
            encode_signed(ttl.0, out);
        }
        if let Some(ts) = self.user_timestamp {
            out.push(KeyEntryType::UserTimestamp.as_u8());
            out.extend_from_slice(&ts.to_be_bytes());
        }
    }

    /// Decodes the fields at the front of a value, returning the payload that follows.
    pub fn decode(mut input: &[u8]) -> Result<(Self, &[u8])> {
        let mut fields = ValueControlFields::default();
        if let Some(rest) = input.strip_prefix(&[KeyEntryType::MergeFlags.as_u8()]) {
            (fields.merge_flags, input) = decode_unsigned(rest)?;
        }
        if let Some(rest) = input.strip_prefix(&[KeyEntryType::HybridTime.as_u8()]) {
            let (ht, rest) = DocHybridTime::decode(rest)?;
            fields.intent_doc_ht = Some(ht);
            input = rest;
        }
        if let Some(rest) = input.strip_prefix(&[KeyEntryType::Ttl.as_u8()]) {
            let (ttl, rest) = decode_signed(rest)?;
            fields.ttl = Some(Ttl(ttl));
            input = rest;
        }
        if let Some(rest) = input.strip_prefix(&[KeyEntryType::UserTimestamp.as_u8()]) {
            let (bytes, rest) = take_array::<8>(rest, "user timestamp")?;
            fields.user_timestamp = Some(i64::from_be_bytes(bytes));
            input = rest;
        }
        Ok((fields, input))
    }
}

/// `; merge flags: N`, `; ttl: S.mmms`, `; timestamp: N` for the fields present.
impl fmt::Display for ValueControlFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.merge_flags != 0 {
            write!(f, "; merge flags: {}", self.merge_flags)?;
        }
        if let Some(ht) = &self.intent_doc_ht {
            write!(f, "; intent doc ht: {ht}")?;
        }
        if let Some(ttl) = self.ttl {
            write!(f, "; ttl: {ttl}")?;
        }
        if let Some(ts) = self.user_timestamp {
            write!(f, "; timestamp: {ts}")?;
        }
        Ok(())
    }
}

/// A value payload (`PrimitiveValue` in YugabyteDB), including the markers that are not
/// primitives: tombstone, init markers, Redis collection roots and packed rows.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveValue {
    /// `$`: null (liveness column, set member).
    Null,
    /// `T` / `F`.
    Bool(bool),
    /// `H`: int32 (CQL tinyint/smallint too).
    Int32(i32),
    /// `I`: int64 (CQL bigint, time).
    Int64(i64),
    /// `O`: uint32 (CQL date).
    UInt32(u32),
    /// `U`: uint64.
    UInt64(u64),
    /// `C`: float.
    Float(f32),
    /// `D`: double.
    Double(f64),
    /// `E`: decimal in comparable form.
    Decimal(Decimal),
    /// `B`: varint in comparable form.
    VarInt(VarInt),
    /// `S`: string or binary, raw.
    String(Vec<u8>),
    /// `\`: collated string, raw.
    CollString(Vec<u8>),
    /// `s`: timestamp µs.
    Timestamp(i64),
    /// `-`: 4 or 16 raw address bytes.
    Inet(Vec<u8>),
    /// `_`: UUID; standard byte order here, comparable form on disk.
    Uuid([u8; 16]),
    /// `2`: jsonb: 8-byte BE flags then the serialized document.
    Jsonb {
        /// Flags (1 = complete).
        flags: u64,
        /// Serialized jsonb bytes.
        data: Vec<u8>,
    },
    /// `<`: frozen collection, elements key-encoded ascending.
    Frozen(Vec<KeyEntryValue>),
    /// `v`: GIN null kind.
    GinNull(u8),
    /// `X`: tombstone.
    Tombstone,
    /// `{`: object init marker.
    Object,
    /// `A`: list (array) init marker.
    Array,
    /// `(`: Redis set root.
    RedisSet,
    /// `)`: Redis list root.
    RedisList,
    /// `+`: Redis time series root.
    RedisTs,
    /// `,`: Redis sorted set root.
    RedisSortedSet,
    /// `*`: Redis stream root (a docdb extension).
    RedisStream,
    /// `l`: row lock (intents).
    RowLock,
    /// `z`: packed row V1; the bytes after the `z`.
    PackedRowV1(Vec<u8>),
    /// `|`: packed row V2; the bytes after the `|`.
    PackedRowV2(Vec<u8>),
}

impl PrimitiveValue {
    /// A string value.
    pub fn string(s: impl Into<Vec<u8>>) -> Self {
        PrimitiveValue::String(s.into())
    }

    /// The payload's type byte.
    pub fn value_type(&self) -> ValueEntryType {
        use PrimitiveValue as P;
        use ValueEntryType as V;
        match self {
            P::Null => V::NullLow,
            P::Bool(true) => V::True,
            P::Bool(false) => V::False,
            P::Int32(_) => V::Int32,
            P::Int64(_) => V::Int64,
            P::UInt32(_) => V::UInt32,
            P::UInt64(_) => V::UInt64,
            P::Float(_) => V::Float,
            P::Double(_) => V::Double,
            P::Decimal(_) => V::Decimal,
            P::VarInt(_) => V::VarInt,
            P::String(_) => V::String,
            P::CollString(_) => V::CollString,
            P::Timestamp(_) => V::Timestamp,
            P::Inet(_) => V::Inetaddress,
            P::Uuid(_) => V::Uuid,
            P::Jsonb { .. } => V::Jsonb,
            P::Frozen(_) => V::Frozen,
            P::GinNull(_) => V::GinNull,
            P::Tombstone => V::Tombstone,
            P::Object => V::Object,
            P::Array => V::Array,
            P::RedisSet => V::RedisSet,
            P::RedisList => V::RedisList,
            P::RedisTs => V::RedisTs,
            P::RedisSortedSet => V::RedisSortedSet,
            P::RedisStream => V::RedisStream,
            P::RowLock => V::RowLock,
            P::PackedRowV1(_) => V::PackedRowV1,
            P::PackedRowV2(_) => V::PackedRowV2,
        }
    }

    /// True for the tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, PrimitiveValue::Tombstone)
    }

    /// True for object-like roots and the list init marker (`IsCollectionType`).
    pub fn is_collection(&self) -> bool {
        self.value_type().is_collection()
    }

    /// Appends type byte and payload.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        use PrimitiveValue as P;
        match self {
            // Frozen and decimal/varint payloads are identical to their ascending key form.
            P::Frozen(items) => {
                KeyEntryValue::Frozen(items.clone(), SortOrder::Ascending).encode_to(out)
            }
            P::Decimal(d) => KeyEntryValue::Decimal(d.clone(), SortOrder::Ascending).encode_to(out),
            P::VarInt(v) => KeyEntryValue::VarInt(v.clone(), SortOrder::Ascending).encode_to(out),
            _ => {
                out.push(self.value_type().as_u8());
                self.encode_body(out);
            }
        }
    }

    fn encode_body(&self, out: &mut Vec<u8>) {
        use PrimitiveValue as P;
        match self {
            P::Int32(v) => out.extend_from_slice(&v.to_be_bytes()),
            P::Int64(v) | P::Timestamp(v) => out.extend_from_slice(&v.to_be_bytes()),
            P::UInt32(v) => out.extend_from_slice(&v.to_be_bytes()),
            P::UInt64(v) => out.extend_from_slice(&v.to_be_bytes()),
            P::Float(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
            P::Double(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
            P::String(b) | P::CollString(b) | P::Inet(b) => out.extend_from_slice(b),
            P::PackedRowV1(b) | P::PackedRowV2(b) => out.extend_from_slice(b),
            P::Uuid(u) => out.extend_from_slice(&crate::key_entry::uuid_to_comparable(u)),
            P::Jsonb { flags, data } => {
                out.extend_from_slice(&flags.to_be_bytes());
                out.extend_from_slice(data);
            }
            P::GinNull(kind) => out.push(*kind),
            _ => {}
        }
    }

    /// The encoding as a new vector.
    pub fn encoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out);
        out
    }

    /// Decodes a payload that makes up all of `input`.
    pub fn decode(input: &[u8]) -> Result<Self> {
        use PrimitiveValue as P;
        use ValueEntryType as V;
        let (&tag, body) = input
            .split_first()
            .ok_or_else(|| corruption!("empty value payload"))?;
        let kind = ValueEntryType::from_u8(tag)
            .ok_or_else(|| corruption!("invalid value type byte {tag:#04x}"))?;
        let value = match kind {
            V::NullLow => fixed(body, P::Null)?,
            V::True => fixed(body, P::Bool(true))?,
            V::False => fixed(body, P::Bool(false))?,
            V::Tombstone => fixed(body, P::Tombstone)?,
            V::Object => fixed(body, P::Object)?,
            V::Array => fixed(body, P::Array)?,
            V::RedisSet => fixed(body, P::RedisSet)?,
            V::RedisList => fixed(body, P::RedisList)?,
            V::RedisTs => fixed(body, P::RedisTs)?,
            V::RedisSortedSet => fixed(body, P::RedisSortedSet)?,
            V::RedisStream => fixed(body, P::RedisStream)?,
            V::RowLock => fixed(body, P::RowLock)?,
            V::Int32 => P::Int32(i32::from_be_bytes(exact(body, "int32")?)),
            V::Int64 => P::Int64(i64::from_be_bytes(exact(body, "int64")?)),
            V::Timestamp => P::Timestamp(i64::from_be_bytes(exact(body, "timestamp")?)),
            V::UInt32 => P::UInt32(u32::from_be_bytes(exact(body, "uint32")?)),
            V::UInt64 => P::UInt64(u64::from_be_bytes(exact(body, "uint64")?)),
            V::Float => P::Float(f32::from_bits(u32::from_be_bytes(exact(body, "float")?))),
            V::Double => P::Double(f64::from_bits(u64::from_be_bytes(exact(body, "double")?))),
            V::String => P::String(body.to_vec()),
            V::CollString => P::CollString(body.to_vec()),
            V::Inetaddress => match body.len() {
                4 | 16 => P::Inet(body.to_vec()),
                n => return Err(corruption!("inet value of {n} bytes")),
            },
            V::Uuid => P::Uuid(crate::key_entry::uuid_from_comparable(&exact(
                body, "uuid",
            )?)),
            V::Jsonb => {
                let (flags, data) = take_array::<8>(body, "jsonb flags")?;
                P::Jsonb {
                    flags: u64::from_be_bytes(flags),
                    data: data.to_vec(),
                }
            }
            V::GinNull => P::GinNull(u8::from_be_bytes(exact(body, "gin null")?)),
            V::PackedRowV1 => P::PackedRowV1(body.to_vec()),
            V::PackedRowV2 => P::PackedRowV2(body.to_vec()),
            V::Decimal | V::VarInt | V::Frozen => decode_via_key(input)?,
            other => return Err(corruption!("unsupported value type {other:?}")),
        };
        Ok(value)
    }

    /// The key-entry form of a primitive, where one exists, for shared formatting.
    fn as_key_entry(&self) -> Option<KeyEntryValue> {
        use KeyEntryValue as K;
        use PrimitiveValue as P;
        let asc = SortOrder::Ascending;
        Some(match self {
            P::Null => K::NullLow,
            P::Bool(b) => K::Bool(*b, asc),
            P::Int32(v) => K::Int32(*v, asc),
            P::Int64(v) => K::Int64(*v, asc),
            P::UInt32(v) => K::UInt32(*v, asc),
            P::UInt64(v) => K::UInt64(*v, asc),
            P::Float(v) => K::Float(*v, asc),
            P::Double(v) => K::Double(*v, asc),
            P::Decimal(d) => K::Decimal(d.clone(), asc),
            P::VarInt(v) => K::VarInt(v.clone(), asc),
            P::String(s) => K::String(s.clone(), asc),
            P::CollString(s) => K::CollString(s.clone(), asc),
            P::Timestamp(t) => K::Timestamp(*t, asc),
            P::Inet(b) => K::Inet(b.clone(), asc),
            P::Uuid(u) => K::Uuid(*u, asc),
            P::Frozen(items) => K::Frozen(items.clone(), asc),
            P::GinNull(g) => K::GinNull(*g),
            _ => return None,
        })
    }
}

/// A payload-less value must have no body.
fn fixed(body: &[u8], value: PrimitiveValue) -> Result<PrimitiveValue> {
    if body.is_empty() {
        Ok(value)
    } else {
        Err(corruption!(
            "{} unexpected bytes after {:?}",
            body.len(),
            value.value_type()
        ))
    }
}

/// A body of exactly `N` bytes.
fn exact<const N: usize>(body: &[u8], what: &str) -> Result<[u8; N]> {
    let (bytes, rest) = take_array::<N>(body, what)?;
    if !rest.is_empty() {
        return Err(corruption!("{what}: {} trailing bytes", rest.len()));
    }
    Ok(bytes)
}

/// Payloads whose value form equals their ascending key form.
fn decode_via_key(input: &[u8]) -> Result<PrimitiveValue> {
    let (entry, rest) = KeyEntryValue::decode(input)?;
    if !rest.is_empty() {
        return Err(corruption!("{} trailing bytes after value", rest.len()));
    }
    match entry {
        KeyEntryValue::Decimal(d, SortOrder::Ascending) => Ok(PrimitiveValue::Decimal(d)),
        KeyEntryValue::VarInt(v, SortOrder::Ascending) => Ok(PrimitiveValue::VarInt(v)),
        KeyEntryValue::Frozen(items, SortOrder::Ascending) => Ok(PrimitiveValue::Frozen(items)),
        other => Err(corruption!("unexpected value payload {other}")),
    }
}

/// YugabyteDB's `PrimitiveValue::ToString`: primitives as in keys, markers as `DEL`, `{}`,
/// `[]`, `()`, `(->)`, `<>`, packed rows as `<PACKED ROW>`.
impl fmt::Display for PrimitiveValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PrimitiveValue as P;
        if let Some(entry) = self.as_key_entry() {
            return entry.fmt(f);
        }
        match self {
            P::Tombstone => f.write_str("DEL"),
            P::Object => f.write_str("{}"),
            P::Array | P::RedisList => f.write_str("[]"),
            P::RedisSet => f.write_str("()"),
            P::RedisSortedSet => f.write_str("(->)"),
            P::RedisTs => f.write_str("<>"),
            P::RedisStream => f.write_str("(*)"),
            P::RowLock => f.write_str("l"),
            P::Jsonb { data, .. } => crate::escape::write_quoted(f, data, '"'),
            P::PackedRowV1(_) | P::PackedRowV2(_) => f.write_str("<PACKED ROW>"),
            _ => Ok(()),
        }
    }
}

/// A decoded RocksDB value: control fields and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Merge flags, TTL, user timestamp.
    pub control: ValueControlFields,
    /// The payload.
    pub payload: PrimitiveValue,
}

impl Value {
    /// A value without control fields.
    pub fn new(payload: PrimitiveValue) -> Self {
        Value {
            control: ValueControlFields::default(),
            payload,
        }
    }

    /// A value with a TTL.
    pub fn with_ttl(payload: PrimitiveValue, ttl: Option<Ttl>) -> Self {
        Value {
            control: ValueControlFields::with_ttl(ttl),
            payload,
        }
    }

    /// The tombstone value.
    pub fn tombstone() -> Self {
        Value::new(PrimitiveValue::Tombstone)
    }

    /// Appends control fields and payload.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        self.control.encode_to(out);
        self.payload.encode_to(out);
    }

    /// The encoding as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let payload_len = match &self.payload {
            PrimitiveValue::String(s)
            | PrimitiveValue::PackedRowV1(s)
            | PrimitiveValue::PackedRowV2(s) => s.len(),
            _ => 16,
        };
        let mut out = Vec::with_capacity(payload_len + 24);
        self.encode_to(&mut out);
        out
    }

    /// Decodes a whole RocksDB value.
    pub fn decode(input: &[u8]) -> Result<Self> {
        let (control, payload) = ValueControlFields::decode(input)?;
        Ok(Value {
            control,
            payload: PrimitiveValue::decode(payload)?,
        })
    }
}

/// Payload text then the control fields: `"v"; ttl: 1.000s`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.payload, self.control)
    }
}

/// The payload type of an encoded value without decoding the payload (hot paths: is this a
/// tombstone, an init marker?). Control fields are skipped.
pub fn peek_value_type(input: &[u8]) -> Result<(ValueControlFields, ValueEntryType)> {
    let (control, payload) = ValueControlFields::decode(input)?;
    let &tag = payload
        .first()
        .ok_or_else(|| corruption!("value has no payload"))?;
    let kind = ValueEntryType::from_u8(tag)
        .ok_or_else(|| corruption!("invalid value type byte {tag:#04x}"))?;
    Ok((control, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::format_bytes;
    use proptest::prelude::*;

    #[test]
    fn control_fields_order_and_text() {
        let v = Value {
            control: ValueControlFields {
                merge_flags: 1,
                intent_doc_ht: None,
                ttl: Some(Ttl(1000)),
                user_timestamp: Some(5),
            },
            payload: PrimitiveValue::string("v"),
        };
        let enc = v.encode();
        assert_eq!(enc, b"k\x01t\xc3\xe8u\x00\x00\x00\x00\x00\x00\x00\x05Sv");
        assert_eq!(Value::decode(&enc), Ok(v.clone()));
        assert_eq!(
            v.to_string(),
            r#""v"; merge flags: 1; ttl: 1.000s; timestamp: 5"#
        );
        assert_eq!(Ttl(1).to_string(), "0.001s");
        assert_eq!(Ttl::from_secs(10).to_string(), "10.000s");
    }

    #[test]
    fn payload_layouts() {
        let cases: Vec<(PrimitiveValue, &[u8], &str)> = vec![
            (PrimitiveValue::Int32(42), b"H\x00\x00\x00\x2a", "42"),
            (
                PrimitiveValue::Int64(-1),
                b"I\xff\xff\xff\xff\xff\xff\xff\xff",
                "-1",
            ),
            (PrimitiveValue::string("hello"), b"Shello", "\"hello\""),
            (PrimitiveValue::Tombstone, b"X", "DEL"),
            (PrimitiveValue::Object, b"{", "{}"),
            (PrimitiveValue::Array, b"A", "[]"),
            (PrimitiveValue::RedisSet, b"(", "()"),
            (PrimitiveValue::RedisSortedSet, b",", "(->)"),
            (PrimitiveValue::RedisTs, b"+", "<>"),
            (PrimitiveValue::RedisList, b")", "[]"),
            (PrimitiveValue::RedisStream, b"*", "(*)"),
            (PrimitiveValue::Null, b"$", "null"),
            (PrimitiveValue::Bool(true), b"T", "true"),
            (
                PrimitiveValue::Inet(vec![1, 2, 3, 4]),
                b"-\x01\x02\x03\x04",
                "",
            ),
            (
                PrimitiveValue::PackedRowV2(vec![0, 0]),
                b"|\x00\x00",
                "<PACKED ROW>",
            ),
        ];
        for (value, bytes, text) in cases {
            assert_eq!(value.encoded(), bytes, "{}", format_bytes(bytes));
            assert_eq!(PrimitiveValue::decode(bytes), Ok(value.clone()));
            if !text.is_empty() {
                assert_eq!(value.to_string(), text);
            }
        }
    }

    #[test]
    fn bad_values_fail() {
        for bad in [
            &b""[..],
            b"H\x00",
            b"I\x00\x00\x00\x00\x00\x00\x00\x00\x00",
            b"X\x00",
            b"\x01",
            b"t",
            b"t\xc3",
            b"k",
            b"u\x00",
            b"-\x01",
        ] {
            assert!(Value::decode(bad).is_err(), "{}", format_bytes(bad));
        }
    }

    fn any_payload() -> impl Strategy<Value = PrimitiveValue> {
        prop_oneof![
            Just(PrimitiveValue::Null),
            Just(PrimitiveValue::Tombstone),
            Just(PrimitiveValue::Object),
            any::<bool>().prop_map(PrimitiveValue::Bool),
            any::<i32>().prop_map(PrimitiveValue::Int32),
            any::<i64>().prop_map(PrimitiveValue::Int64),
            any::<u64>().prop_map(PrimitiveValue::UInt64),
            any::<i64>().prop_map(PrimitiveValue::Timestamp),
            any::<[u8; 16]>().prop_map(PrimitiveValue::Uuid),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(PrimitiveValue::String),
            any::<f64>()
                .prop_filter("nan", |v| !v.is_nan())
                .prop_map(PrimitiveValue::Double),
        ]
    }

    fn any_control() -> impl Strategy<Value = ValueControlFields> {
        (
            any::<bool>(),
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
        )
            .prop_map(|(merge, ttl, user_timestamp)| ValueControlFields {
                merge_flags: u64::from(merge),
                intent_doc_ht: None,
                ttl: ttl.map(Ttl),
                user_timestamp,
            })
    }

    proptest! {
        #[test]
        fn value_roundtrip(control in any_control(), payload in any_payload()) {
            let value = Value { control, payload };
            prop_assert_eq!(Value::decode(&value.encode()), Ok(value));
        }

        #[test]
        fn decode_never_panics(bytes: Vec<u8>) {
            let _ = Value::decode(&bytes);
            let _ = peek_value_type(&bytes);
        }
    }
}
