//! How each column type is stored (format.md §2, §5, §6, §9):
//!
//! | type | key component | value payload | hash input | packed type |
//! |---|---|---|---|---|
//! | boolean | `F`/`T` | `F`/`T` | 1 byte | Bool |
//! | tinyint, smallint, int | `H` int32 | `H` int32 | 1/2/4 bytes BE | Int8/Int16/Int32 |
//! | bigint | `I` | `I` | 8 bytes BE | Int64 |
//! | float, double | `C`/`D` (NaN canonical) | `C`/`D` | canonical bits BE | Float/Double |
//! | decimal, varint | `E`/`B` comparable | `E`/`B` comparable | comparable bytes | Decimal/VarInt |
//! | text, blob | `S` escaped | `S` raw | raw bytes | String/Binary |
//! | timestamp | `s` µs | `s` µs | 8 bytes BE | Timestamp |
//! | date | `O` uint32 | `O` uint32 | 4 bytes BE | Date |
//! | time | `I` ns | `I` ns | 8 bytes BE | Time |
//! | uuid, timeuuid | `_` comparable | `_` comparable | 16 standard bytes | Uuid/TimeUuid |
//! | inet | `-` address bytes | `-` address bytes | address bytes | Inet |
//! | frozen | `<` elements `!` | `<` elements `!` | elements | Frozen |
//!
//! Descending key columns use the descending type bytes (`a`, `e`, `b`, …). Collections and
//! jsonb are not primitives: they are stored as subdocuments, never in keys or packed rows.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use dockv::hash::HashColumnValue;
use dockv::packed_row::{PackedDataType, PackedValueV2};
use dockv::value::PrimitiveValue;
use dockv::{KeyEntryValue, SortOrder};

use crate::error::{Result, corruption, invalid};
use crate::types::{DataType, Datum};

/// The key component of a non-null `datum` of type `ty` (a NULL becomes `$`, or `|` when
/// `nulls_high`), in `order`.
pub fn to_key_entry(
    datum: &Datum,
    ty: &DataType,
    order: SortOrder,
    nulls_high: bool,
) -> Result<KeyEntryValue> {
    use KeyEntryValue as K;
    let asc = SortOrder::Ascending;
    let entry = match (datum, ty) {
        (Datum::Null, _) if nulls_high => K::NullHigh,
        (Datum::Null, _) => K::NullLow,
        (Datum::Bool(v), DataType::Boolean) => K::Bool(*v, asc),
        (Datum::TinyInt(v), DataType::TinyInt) => K::Int32(i32::from(*v), asc),
        (Datum::SmallInt(v), DataType::SmallInt) => K::Int32(i32::from(*v), asc),
        (Datum::Int(v), DataType::Int) => K::Int32(*v, asc),
        (Datum::BigInt(v), DataType::BigInt) | (Datum::Time(v), DataType::Time) => {
            K::Int64(*v, asc)
        }
        (Datum::Float(v), DataType::Float) => K::Float(canonical_float(*v), asc),
        (Datum::Double(v), DataType::Double) => K::Double(canonical_double(*v), asc),
        (Datum::Decimal(v), DataType::Decimal) => K::Decimal(v.clone(), asc),
        (Datum::VarInt(v), DataType::VarInt) => K::VarInt(v.clone(), asc),
        (Datum::Text(s), DataType::Text) => K::String(s.as_bytes().to_vec(), asc),
        (Datum::Blob(b), DataType::Blob) => K::String(b.clone(), asc),
        (Datum::Timestamp(v), DataType::Timestamp) => K::Timestamp(*v, asc),
        (Datum::Date(v), DataType::Date) => K::UInt32(*v, asc),
        (Datum::Uuid(u), DataType::Uuid) | (Datum::TimeUuid(u), DataType::TimeUuid) => {
            K::Uuid(*u, asc)
        }
        (Datum::Inet(ip), DataType::Inet) => K::Inet(inet_bytes(ip), asc),
        (_, DataType::Frozen(inner)) => K::Frozen(frozen_elements(datum, inner)?, asc),
        _ => return Err(invalid!("value {datum} cannot be a key of type {ty}")),
    };
    Ok(entry.with_order(order))
}

/// The value of type `ty` that a key component holds (either sort order).
pub fn from_key_entry(entry: &KeyEntryValue, ty: &DataType) -> Result<Datum> {
    use KeyEntryValue as K;
    Ok(match (entry, ty) {
        (K::NullLow | K::NullHigh, _) => Datum::Null,
        (K::Bool(v, _), DataType::Boolean) => Datum::Bool(*v),
        (K::Int32(v, _), DataType::TinyInt) => Datum::TinyInt(narrow(*v)?),
        (K::Int32(v, _), DataType::SmallInt) => Datum::SmallInt(narrow(*v)?),
        (K::Int32(v, _), DataType::Int) => Datum::Int(*v),
        (K::Int64(v, _), DataType::BigInt) => Datum::BigInt(*v),
        (K::Int64(v, _), DataType::Time) => Datum::Time(*v),
        (K::Float(v, _), DataType::Float) => Datum::Float(*v),
        (K::Double(v, _), DataType::Double) => Datum::Double(*v),
        (K::Decimal(v, _), DataType::Decimal) => Datum::Decimal(v.clone()),
        (K::VarInt(v, _), DataType::VarInt) => Datum::VarInt(v.clone()),
        (K::String(s, _), DataType::Text) => Datum::Text(utf8(s.clone())?),
        (K::String(b, _), DataType::Blob) => Datum::Blob(b.clone()),
        (K::Timestamp(v, _), DataType::Timestamp) => Datum::Timestamp(*v),
        (K::UInt32(v, _), DataType::Date) => Datum::Date(*v),
        (K::Uuid(u, _), DataType::Uuid) => Datum::Uuid(*u),
        (K::Uuid(u, _), DataType::TimeUuid) => Datum::TimeUuid(*u),
        (K::Inet(b, _), DataType::Inet) => Datum::Inet(inet_from(b)?),
        (K::Frozen(items, _), DataType::Frozen(inner)) => from_frozen(items, inner)?,
        _ => return Err(corruption!("key component {entry} is not a {ty}")),
    })
}

/// The value payload of a non-null primitive `datum` of type `ty`.
pub fn to_value(datum: &Datum, ty: &DataType) -> Result<PrimitiveValue> {
    use PrimitiveValue as P;
    Ok(match (datum, ty) {
        (Datum::Bool(v), DataType::Boolean) => P::Bool(*v),
        (Datum::TinyInt(v), DataType::TinyInt) => P::Int32(i32::from(*v)),
        (Datum::SmallInt(v), DataType::SmallInt) => P::Int32(i32::from(*v)),
        (Datum::Int(v), DataType::Int) => P::Int32(*v),
        (Datum::BigInt(v), DataType::BigInt) | (Datum::Time(v), DataType::Time) => P::Int64(*v),
        (Datum::Float(v), DataType::Float) => P::Float(*v),
        (Datum::Double(v), DataType::Double) => P::Double(*v),
        (Datum::Decimal(v), DataType::Decimal) => P::Decimal(v.clone()),
        (Datum::VarInt(v), DataType::VarInt) => P::VarInt(v.clone()),
        (Datum::Text(s), DataType::Text) => P::String(s.as_bytes().to_vec()),
        (Datum::Blob(b), DataType::Blob) => P::String(b.clone()),
        (Datum::Timestamp(v), DataType::Timestamp) => P::Timestamp(*v),
        (Datum::Date(v), DataType::Date) => P::UInt32(*v),
        (Datum::Uuid(u), DataType::Uuid) | (Datum::TimeUuid(u), DataType::TimeUuid) => P::Uuid(*u),
        (Datum::Inet(ip), DataType::Inet) => P::Inet(inet_bytes(ip)),
        (_, DataType::Frozen(inner)) => P::Frozen(frozen_elements(datum, inner)?),
        _ => return Err(invalid!("value {datum} cannot be stored as {ty}")),
    })
}

/// The value of type `ty` a stored payload holds; a tombstone or `$` is NULL.
pub fn from_value(value: &PrimitiveValue, ty: &DataType) -> Result<Datum> {
    use PrimitiveValue as P;
    Ok(match (value, ty) {
        (P::Tombstone | P::Null, _) => Datum::Null,
        (P::Bool(v), DataType::Boolean) => Datum::Bool(*v),
        (P::Int32(v), DataType::TinyInt) => Datum::TinyInt(narrow(*v)?),
        (P::Int32(v), DataType::SmallInt) => Datum::SmallInt(narrow(*v)?),
        (P::Int32(v), DataType::Int) => Datum::Int(*v),
        (P::Int64(v), DataType::BigInt) => Datum::BigInt(*v),
        (P::Int64(v), DataType::Time) => Datum::Time(*v),
        (P::Float(v), DataType::Float) => Datum::Float(*v),
        (P::Double(v), DataType::Double) => Datum::Double(*v),
        (P::Decimal(v), DataType::Decimal) => Datum::Decimal(v.clone()),
        (P::VarInt(v), DataType::VarInt) => Datum::VarInt(v.clone()),
        (P::String(s), DataType::Text) => Datum::Text(utf8(s.clone())?),
        (P::String(b), DataType::Blob) => Datum::Blob(b.clone()),
        (P::Timestamp(v), DataType::Timestamp) => Datum::Timestamp(*v),
        (P::UInt32(v), DataType::Date) => Datum::Date(*v),
        (P::Uuid(u), DataType::Uuid) => Datum::Uuid(*u),
        (P::Uuid(u), DataType::TimeUuid) => Datum::TimeUuid(*u),
        (P::Inet(b), DataType::Inet) => Datum::Inet(inet_from(b)?),
        (P::Frozen(items), DataType::Frozen(inner)) => from_frozen(items, inner)?,
        _ => return Err(corruption!("stored value {value} is not a {ty}")),
    })
}

/// Appends the hash input of a hash-key value (format.md §6: no type bytes, natural widths).
pub fn append_hash_input(datum: &Datum, ty: &DataType, out: &mut Vec<u8>) -> Result<()> {
    use HashColumnValue as H;
    let owned;
    let value = match (datum, ty) {
        (Datum::Bool(v), _) => H::Bool(*v),
        (Datum::TinyInt(v), _) => H::Int8(*v),
        (Datum::SmallInt(v), _) => H::Int16(*v),
        (Datum::Int(v), _) => H::Int32(*v),
        (Datum::BigInt(v), _) => H::Int64(*v),
        (Datum::Float(v), _) => H::Float(*v),
        (Datum::Double(v), _) => H::Double(*v),
        (Datum::Timestamp(v), _) => H::Timestamp(*v),
        (Datum::Date(v), _) => H::Date(*v),
        (Datum::Time(v), _) => H::Time(*v),
        (Datum::Decimal(d), _) => {
            owned = d.encoded_comparable()?;
            H::Bytes(&owned)
        }
        (Datum::VarInt(v), _) => {
            owned = v.encoded_comparable(0);
            H::Bytes(&owned)
        }
        (Datum::Text(s), _) => H::Bytes(s.as_bytes()),
        (Datum::Blob(b), _) => H::Bytes(b),
        (Datum::Uuid(u) | Datum::TimeUuid(u), _) => H::Bytes(u),
        (Datum::Inet(ip), _) => {
            owned = inet_bytes(ip);
            H::Bytes(&owned)
        }
        (Datum::Map(_) | Datum::Set(_) | Datum::List(_), DataType::Frozen(inner)) => {
            return append_frozen_hash_input(datum, inner, out);
        }
        _ => return Err(invalid!("value {datum} cannot be a hash key of type {ty}")),
    };
    value.append_to(out);
    Ok(())
}

/// A frozen collection hashes as its elements, each in hash-input form, back to back.
fn append_frozen_hash_input(datum: &Datum, inner: &DataType, out: &mut Vec<u8>) -> Result<()> {
    for (item, ty) in sorted_elements(datum, inner)? {
        append_hash_input(&item, ty, out)?;
    }
    Ok(())
}

/// The packed-row type of a column, or `None` when the column is never packed
/// (collections, jsonb).
pub fn packed_data_type(ty: &DataType) -> Option<PackedDataType> {
    use PackedDataType as P;
    Some(match ty {
        DataType::Boolean => P::Bool,
        DataType::TinyInt => P::Int8,
        DataType::SmallInt => P::Int16,
        DataType::Int => P::Int32,
        DataType::BigInt => P::Int64,
        DataType::Float => P::Float,
        DataType::Double => P::Double,
        DataType::Decimal => P::Decimal,
        DataType::VarInt => P::VarInt,
        DataType::Text => P::String,
        DataType::Blob => P::Binary,
        DataType::Timestamp => P::Timestamp,
        DataType::Date => P::Date,
        DataType::Time => P::Time,
        DataType::Uuid => P::Uuid,
        DataType::TimeUuid => P::TimeUuid,
        DataType::Inet => P::Inet,
        DataType::Frozen(_) => P::Frozen,
        DataType::Jsonb | DataType::Map(..) | DataType::Set(_) | DataType::List(_) => return None,
    })
}

/// Calls `f` with the V2 packed form of a non-null `datum` (types V2 can store only).
pub fn with_packed_v2<R>(
    datum: &Datum,
    ty: &DataType,
    f: impl FnOnce(PackedValueV2<'_>) -> R,
) -> Result<R> {
    use PackedValueV2 as V;
    let decimal;
    let value = match (datum, ty) {
        (Datum::Bool(v), DataType::Boolean) => V::Bool(*v),
        (Datum::TinyInt(v), DataType::TinyInt) => V::Int8(*v),
        (Datum::SmallInt(v), DataType::SmallInt) => V::Int16(*v),
        (Datum::Int(v), DataType::Int) => V::Int32(*v),
        (Datum::BigInt(v), DataType::BigInt) => V::Int64(*v),
        (Datum::Float(v), DataType::Float) => V::Float(*v),
        (Datum::Double(v), DataType::Double) => V::Double(*v),
        (Datum::Text(s), DataType::Text) => V::VarLen(s.as_bytes()),
        (Datum::Blob(b), DataType::Blob) => V::VarLen(b),
        (Datum::Decimal(d), DataType::Decimal) => {
            decimal = d.encoded_comparable()?;
            V::VarLen(&decimal)
        }
        _ => {
            return Err(invalid!(
                "value {datum} of type {ty} cannot be packed in a V2 row"
            ));
        }
    };
    Ok(f(value))
}

/// The value a V2 packed column holds (`raw` as [`dockv::packed_row::decode_packed_row_v2`]
/// returns it).
pub fn from_packed_v2(raw: &[u8], ty: &DataType) -> Result<Datum> {
    use PackedValueV2 as V;
    let packed_type =
        packed_data_type(ty).ok_or_else(|| corruption!("type {ty} in a packed row"))?;
    Ok(match (V::decode(packed_type, raw)?, ty) {
        (V::Bool(v), _) => Datum::Bool(v),
        (V::Int8(v), _) => Datum::TinyInt(v),
        (V::Int16(v), _) => Datum::SmallInt(v),
        (V::Int32(v), _) => Datum::Int(v),
        (V::Int64(v), _) => Datum::BigInt(v),
        (V::Float(v), _) => Datum::Float(v),
        (V::Double(v), _) => Datum::Double(v),
        (V::VarLen(b), DataType::Text) => Datum::Text(utf8(b.to_vec())?),
        (V::VarLen(b), DataType::Blob) => Datum::Blob(b.to_vec()),
        (V::VarLen(b), DataType::Decimal) => {
            Datum::Decimal(dockv::Decimal::decode_comparable(b)?.0)
        }
        (other, _) => return Err(corruption!("packed V2 value {other:?} is not a {ty}")),
    })
}

/// The elements of a frozen collection as key components, in stored order: a map's keys
/// sorted with each followed by its value, a set's elements sorted and deduplicated, a
/// list's elements in order.
fn frozen_elements(datum: &Datum, inner: &DataType) -> Result<Vec<KeyEntryValue>> {
    sorted_elements(datum, inner)?
        .into_iter()
        .map(|(item, ty)| to_key_entry(&item, ty, SortOrder::Ascending, false))
        .collect()
}

/// The elements of a collection value with their types, in frozen (stored) order.
fn sorted_elements<'t>(datum: &Datum, inner: &'t DataType) -> Result<Vec<(Datum, &'t DataType)>> {
    let sort_key = |d: &Datum, ty: &DataType| -> Result<Vec<u8>> {
        Ok(to_key_entry(d, ty, SortOrder::Ascending, false)?.encoded())
    };
    Ok(match (datum, inner) {
        (Datum::Map(entries), DataType::Map(k, v)) => {
            let mut keyed = Vec::with_capacity(entries.len());
            for (key, value) in entries {
                keyed.push((sort_key(key, k)?, key, value));
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
            keyed
                .into_iter()
                .flat_map(|(_, key, value)| [(key.clone(), &**k), (value.clone(), &**v)])
                .collect()
        }
        (Datum::Set(items), DataType::Set(e)) => {
            let mut keyed = Vec::with_capacity(items.len());
            for item in items {
                keyed.push((sort_key(item, e)?, item));
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
            keyed.into_iter().map(|(_, i)| (i.clone(), &**e)).collect()
        }
        (Datum::List(items), DataType::List(e)) => {
            items.iter().map(|i| (i.clone(), &**e)).collect()
        }
        _ => return Err(invalid!("value {datum} is not a frozen {inner}")),
    })
}

/// Rebuilds a frozen collection from its stored elements.
fn from_frozen(items: &[KeyEntryValue], inner: &DataType) -> Result<Datum> {
    match inner {
        DataType::Map(k, v) => {
            if !items.len().is_multiple_of(2) {
                return Err(corruption!("frozen map with {} elements", items.len()));
            }
            let mut entries = Vec::with_capacity(items.len() / 2);
            for pair in items.chunks_exact(2) {
                if let [key, value] = pair {
                    entries.push((from_key_entry(key, k)?, from_key_entry(value, v)?));
                }
            }
            Ok(Datum::Map(entries))
        }
        DataType::Set(e) => Ok(Datum::Set(elements_from(items, e)?)),
        DataType::List(e) => Ok(Datum::List(elements_from(items, e)?)),
        other => Err(corruption!("frozen value of non-collection type {other}")),
    }
}

fn elements_from(items: &[KeyEntryValue], ty: &DataType) -> Result<Vec<Datum>> {
    items.iter().map(|i| from_key_entry(i, ty)).collect()
}

/// `CanonicalizeFloat`: one NaN bit pattern in keys.
fn canonical_float(v: f32) -> f32 {
    if v.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        v
    }
}

fn canonical_double(v: f64) -> f64 {
    if v.is_nan() {
        f64::from_bits(0x7FF8_0000_0000_0000)
    } else {
        v
    }
}

fn narrow<T: TryFrom<i32>>(v: i32) -> Result<T> {
    T::try_from(v).map_err(|_| corruption!("stored value {v} out of range for its column"))
}

fn utf8(bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| corruption!("text is not UTF-8: {e}"))
}

/// The 4 or 16 address bytes.
pub fn inet_bytes(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

fn inet_from(bytes: &[u8]) -> Result<IpAddr> {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return Ok(IpAddr::V4(Ipv4Addr::from(v4)));
    }
    <[u8; 16]>::try_from(bytes)
        .map(|v6| IpAddr::V6(Ipv6Addr::from(v6)))
        .map_err(|_| corruption!("inet address of {} bytes", bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::escape::format_bytes;

    fn all_primitives() -> Vec<(Datum, DataType)> {
        vec![
            (Datum::Bool(true), DataType::Boolean),
            (Datum::TinyInt(-3), DataType::TinyInt),
            (Datum::SmallInt(300), DataType::SmallInt),
            (Datum::Int(-70000), DataType::Int),
            (Datum::BigInt(1 << 40), DataType::BigInt),
            (Datum::Float(1.5), DataType::Float),
            (Datum::Double(-2.25), DataType::Double),
            (
                Datum::Decimal("100.02".parse().expect("decimal")),
                DataType::Decimal,
            ),
            (Datum::VarInt(dockv::VarInt::from_i64(-5)), DataType::VarInt),
            (Datum::text("a\0b"), DataType::Text),
            (Datum::Blob(vec![0, 1, 2]), DataType::Blob),
            (Datum::Timestamp(1_500_000_000_000_000), DataType::Timestamp),
            (Datum::Date(1 << 31), DataType::Date),
            (Datum::Time(3_600_000_000_000), DataType::Time),
            (Datum::Uuid([7; 16]), DataType::Uuid),
            (
                Datum::TimeUuid([1, 2, 3, 4, 5, 6, 0x11, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
                DataType::TimeUuid,
            ),
            (Datum::Inet("10.0.0.1".parse().expect("ip")), DataType::Inet),
            (Datum::Inet("::1".parse().expect("ip")), DataType::Inet),
            (
                Datum::Map(vec![
                    (Datum::text("b"), Datum::Int(2)),
                    (Datum::text("a"), Datum::Int(1)),
                ]),
                DataType::frozen(DataType::map(DataType::Text, DataType::Int)),
            ),
            (
                Datum::List(vec![Datum::Int(3), Datum::Int(1)]),
                DataType::frozen(DataType::list(DataType::Int)),
            ),
        ]
    }

    /// A frozen map/set comes back sorted by key; everything else exactly as written.
    fn normalized(d: &Datum) -> Datum {
        match d {
            Datum::Map(entries) => {
                let mut e = entries.clone();
                e.sort_by_key(|a| a.0.to_string());
                Datum::Map(e)
            }
            other => other.clone(),
        }
    }

    #[test]
    fn key_and_value_round_trips() {
        for (datum, ty) in all_primitives() {
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let key = to_key_entry(&datum, &ty, order, false).expect("key");
                let decoded = KeyEntryValue::decode_exact(&key.encoded()).expect("decode");
                assert_eq!(
                    from_key_entry(&decoded, &ty).expect("from"),
                    normalized(&datum)
                );
            }
            let value = to_value(&datum, &ty).expect("value");
            let decoded = PrimitiveValue::decode(&value.encoded()).expect("decode");
            assert_eq!(from_value(&decoded, &ty).expect("from"), normalized(&datum));
        }
    }

    #[test]
    fn key_layouts() {
        let key = |d: Datum, ty: DataType, o| {
            format_bytes(&to_key_entry(&d, &ty, o, false).expect("key").encoded())
        };
        let desc = SortOrder::Descending;
        assert_eq!(
            key(Datum::Int(10), DataType::Int, SortOrder::Ascending),
            "\"H\\x80\\x00\\x00\\x0a\""
        );
        assert_eq!(
            key(Datum::TinyInt(1), DataType::TinyInt, desc),
            "\"e\\x7f\\xff\\xff\\xfe\""
        );
        assert_eq!(
            key(Datum::text("a"), DataType::Text, desc),
            "\"a\\x9e\\xff\\xff\""
        );
        assert_eq!(
            to_key_entry(&Datum::Null, &DataType::Int, desc, true).expect("null"),
            KeyEntryValue::NullHigh
        );
    }

    #[test]
    fn hash_inputs() {
        let mut out = Vec::new();
        append_hash_input(&Datum::Int(1), &DataType::Int, &mut out).expect("hash");
        assert_eq!(dockv::hash::yb_hash16(&out), 4624);
        out.clear();
        append_hash_input(&Datum::text("a"), &DataType::Text, &mut out).expect("hash");
        assert_eq!(dockv::hash::yb_hash16(&out), 44389);
        out.clear();
        let frozen = DataType::frozen(DataType::set(DataType::SmallInt));
        let set = Datum::Set(vec![Datum::SmallInt(2), Datum::SmallInt(1)]);
        append_hash_input(&set, &frozen, &mut out).expect("hash");
        assert_eq!(out, [0, 1, 0, 2]);
    }

    #[test]
    fn packed_v2_round_trips() {
        for (datum, ty) in all_primitives() {
            let Ok(raw) = with_packed_v2(&datum, &ty, |v| v.to_raw()) else {
                assert!(
                    packed_data_type(&ty).and_then(|p| p.v2_layout()).is_none(),
                    "{ty}"
                );
                continue;
            };
            assert_eq!(from_packed_v2(&raw, &ty).expect("decode"), datum);
        }
    }
}
