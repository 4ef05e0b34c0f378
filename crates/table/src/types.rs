//! Column types ([`DataType`]) and values ([`Datum`]).
//!
//! How each type is stored (key encoding, value encoding, hash input, packed form) lives in
//! [`crate::codec`]; this module only describes the types and checks values against them.

use std::fmt::{self, Write as _};
use std::net::IpAddr;

use dockv::key_entry::format_uuid;
use dockv::{Decimal, VarInt};
use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};

/// A column type: the CQL types (with YSQL's through the same names) plus collections.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataType {
    /// `boolean`.
    Boolean,
    /// `tinyint` (8-bit).
    TinyInt,
    /// `smallint` (16-bit).
    SmallInt,
    /// `int` (32-bit).
    Int,
    /// `bigint` (64-bit).
    BigInt,
    /// `float` (32-bit IEEE).
    Float,
    /// `double` (64-bit IEEE).
    Double,
    /// `decimal` (arbitrary precision).
    Decimal,
    /// `varint` (arbitrary precision integer).
    VarInt,
    /// `text` (UTF-8).
    Text,
    /// `blob` (bytes).
    Blob,
    /// `timestamp`: microseconds since the Unix epoch.
    Timestamp,
    /// `date`: days, with 2^31 = 1970-01-01 (CQL's unsigned day count).
    Date,
    /// `time`: nanoseconds since midnight.
    Time,
    /// `uuid`.
    Uuid,
    /// `timeuuid` (version 1 UUID).
    TimeUuid,
    /// `inet` (IPv4 or IPv6 address).
    Inet,
    /// `jsonb`: a JSON document, stored as a DocDB subdocument (see [`crate::jsonb`]).
    Jsonb,
    /// `map<k, v>`: elements are separate cells keyed by `k`.
    Map(Box<DataType>, Box<DataType>),
    /// `set<e>`: elements are separate cells keyed by `e`, valued null.
    Set(Box<DataType>),
    /// `list<e>`: elements are separate cells keyed by array index.
    List(Box<DataType>),
    /// `frozen<collection>`: the whole collection as one primitive value.
    Frozen(Box<DataType>),
}

impl DataType {
    /// `map<key, value>`.
    pub fn map(key: DataType, value: DataType) -> Self {
        DataType::Map(Box::new(key), Box::new(value))
    }

    /// `set<element>`.
    pub fn set(element: DataType) -> Self {
        DataType::Set(Box::new(element))
    }

    /// `list<element>`.
    pub fn list(element: DataType) -> Self {
        DataType::List(Box::new(element))
    }

    /// `frozen<inner>`.
    pub fn frozen(inner: DataType) -> Self {
        DataType::Frozen(Box::new(inner))
    }

    /// A non-frozen collection: stored as one cell per element.
    pub fn is_collection(&self) -> bool {
        matches!(
            self,
            DataType::Map(..) | DataType::Set(_) | DataType::List(_)
        )
    }

    /// Stored as one primitive value (everything except collections and jsonb).
    pub fn is_primitive(&self) -> bool {
        !self.is_collection() && *self != DataType::Jsonb
    }

    /// Checks the nesting rules: collection elements and frozen contents are primitives, a
    /// frozen type wraps a collection.
    pub fn validate(&self) -> Result<()> {
        match self {
            DataType::Map(k, v) => {
                element_type(k)?;
                element_type(v)
            }
            DataType::Set(e) | DataType::List(e) => element_type(e),
            DataType::Frozen(inner) if inner.is_collection() => match inner.as_ref() {
                DataType::Map(k, v) => {
                    element_type(k)?;
                    element_type(v)
                }
                DataType::Set(e) | DataType::List(e) => element_type(e),
                _ => Ok(()),
            },
            DataType::Frozen(inner) => Err(invalid!("frozen<{inner}>: only collections freeze")),
            _ => Ok(()),
        }
    }

    /// Whether a key column may have this type (primitives except jsonb).
    pub fn can_be_key(&self) -> bool {
        self.is_primitive()
    }
}

/// Collection elements must be primitive (a nested collection must be frozen).
fn element_type(ty: &DataType) -> Result<()> {
    if !ty.is_primitive() {
        return Err(invalid!(
            "collection element type {ty} must be primitive or frozen"
        ));
    }
    ty.validate()
}

/// CQL type names: `int`, `map<text, int>`, `frozen<list<int>>`.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DataType::Boolean => "boolean",
            DataType::TinyInt => "tinyint",
            DataType::SmallInt => "smallint",
            DataType::Int => "int",
            DataType::BigInt => "bigint",
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::Decimal => "decimal",
            DataType::VarInt => "varint",
            DataType::Text => "text",
            DataType::Blob => "blob",
            DataType::Timestamp => "timestamp",
            DataType::Date => "date",
            DataType::Time => "time",
            DataType::Uuid => "uuid",
            DataType::TimeUuid => "timeuuid",
            DataType::Inet => "inet",
            DataType::Jsonb => "jsonb",
            DataType::Map(k, v) => return write!(f, "map<{k}, {v}>"),
            DataType::Set(e) => return write!(f, "set<{e}>"),
            DataType::List(e) => return write!(f, "list<{e}>"),
            DataType::Frozen(inner) => return write!(f, "frozen<{inner}>"),
        };
        f.write_str(name)
    }
}

/// A column value. Frozen collections use the same `Map`/`Set`/`List` variants as
/// non-frozen ones; the column type says which it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// No value.
    Null,
    /// `boolean`.
    Bool(bool),
    /// `tinyint`.
    TinyInt(i8),
    /// `smallint`.
    SmallInt(i16),
    /// `int`.
    Int(i32),
    /// `bigint`.
    BigInt(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `decimal`.
    Decimal(Decimal),
    /// `varint`.
    VarInt(VarInt),
    /// `text`.
    Text(String),
    /// `blob`.
    Blob(Vec<u8>),
    /// `timestamp`, microseconds since the Unix epoch.
    Timestamp(i64),
    /// `date` (2^31 = 1970-01-01).
    Date(u32),
    /// `time`, nanoseconds since midnight.
    Time(i64),
    /// `uuid`, standard (RFC 4122) byte order.
    Uuid([u8; 16]),
    /// `timeuuid`, standard byte order.
    TimeUuid([u8; 16]),
    /// `inet`.
    Inet(IpAddr),
    /// `jsonb`.
    Jsonb(serde_json::Value),
    /// `map` (key order as read: ascending by the key's encoding).
    Map(Vec<(Datum, Datum)>),
    /// `set` (ascending by encoding as read).
    Set(Vec<Datum>),
    /// `list`, in list order.
    List(Vec<Datum>),
}

impl Datum {
    /// A `text` value.
    pub fn text(s: impl Into<String>) -> Self {
        Datum::Text(s.into())
    }

    /// Whether this is [`Datum::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// Checks that this value fits a column of type `ty` (NULL fits every type; collection
    /// elements must not be NULL).
    pub fn check(&self, ty: &DataType) -> Result<()> {
        if self.is_null() {
            return Ok(());
        }
        let ok = match (self, ty) {
            (Datum::Map(entries), DataType::Map(k, v)) => {
                return check_elements(entries.iter().flat_map(|(a, b)| [(a, &**k), (b, &**v)]));
            }
            (Datum::Set(items), DataType::Set(e)) | (Datum::List(items), DataType::List(e)) => {
                return check_elements(items.iter().map(|i| (i, &**e)));
            }
            (_, DataType::Frozen(inner)) => return self.check(inner),
            (Datum::Bool(_), DataType::Boolean)
            | (Datum::TinyInt(_), DataType::TinyInt)
            | (Datum::SmallInt(_), DataType::SmallInt)
            | (Datum::Int(_), DataType::Int)
            | (Datum::BigInt(_), DataType::BigInt)
            | (Datum::Float(_), DataType::Float)
            | (Datum::Double(_), DataType::Double)
            | (Datum::Decimal(_), DataType::Decimal)
            | (Datum::VarInt(_), DataType::VarInt)
            | (Datum::Text(_), DataType::Text)
            | (Datum::Blob(_), DataType::Blob)
            | (Datum::Timestamp(_), DataType::Timestamp)
            | (Datum::Date(_), DataType::Date)
            | (Datum::Time(_), DataType::Time)
            | (Datum::Uuid(_), DataType::Uuid)
            | (Datum::Inet(_), DataType::Inet)
            | (Datum::Jsonb(_), DataType::Jsonb) => true,
            (Datum::TimeUuid(u), DataType::TimeUuid) => u[6] >> 4 == 1,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(invalid!("value {self} does not fit type {ty}"))
        }
    }
}

fn check_elements<'a>(items: impl Iterator<Item = (&'a Datum, &'a DataType)>) -> Result<()> {
    for (item, ty) in items {
        if item.is_null() {
            return Err(invalid!("collection elements cannot be null"));
        }
        item.check(ty)?;
    }
    Ok(())
}

/// CQL literal notation: `'text'`, `0x0102`, `{k: v}`, `{a, b}`, `[a, b]`, `null`.
impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => f.write_str("null"),
            Datum::Bool(v) => write!(f, "{v}"),
            Datum::TinyInt(v) => write!(f, "{v}"),
            Datum::SmallInt(v) => write!(f, "{v}"),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::BigInt(v) | Datum::Timestamp(v) | Datum::Time(v) => write!(f, "{v}"),
            Datum::Float(v) => write!(f, "{v}"),
            Datum::Double(v) => write!(f, "{v}"),
            Datum::Decimal(v) => write!(f, "{v}"),
            Datum::VarInt(v) => write!(f, "{v}"),
            Datum::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Datum::Blob(b) => {
                f.write_str("0x")?;
                b.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
            }
            Datum::Date(v) => write!(f, "{v}"),
            Datum::Uuid(u) | Datum::TimeUuid(u) => f.write_str(&format_uuid(u)),
            Datum::Inet(ip) => write!(f, "'{ip}'"),
            Datum::Jsonb(j) => write!(f, "'{j}'"),
            Datum::Map(entries) => {
                let mut s = String::from("{");
                for (i, (k, v)) in entries.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    let _ = write!(s, "{sep}{k}: {v}");
                }
                write!(f, "{s}}}")
            }
            Datum::Set(items) => write_items(f, "{", items, "}"),
            Datum::List(items) => write_items(f, "[", items, "]"),
        }
    }
}

fn write_items(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[Datum],
    close: &str,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str(close)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_rules() {
        assert!(
            DataType::map(DataType::Text, DataType::Int)
                .validate()
                .is_ok()
        );
        assert!(
            DataType::list(DataType::list(DataType::Int))
                .validate()
                .is_err()
        );
        let frozen = DataType::frozen(DataType::list(DataType::Int));
        assert!(DataType::list(frozen.clone()).validate().is_ok());
        assert!(frozen.can_be_key());
        assert!(DataType::frozen(DataType::Int).validate().is_err());
        assert!(!DataType::Jsonb.can_be_key());
        assert_eq!(
            DataType::map(DataType::Text, frozen).to_string(),
            "map<text, frozen<list<int>>>"
        );
    }

    #[test]
    fn values_fit_types() {
        assert!(Datum::Int(1).check(&DataType::Int).is_ok());
        assert!(Datum::BigInt(1).check(&DataType::Int).is_err());
        assert!(Datum::Null.check(&DataType::Int).is_ok());
        let m = Datum::Map(vec![(Datum::text("a"), Datum::Int(1))]);
        assert!(
            m.check(&DataType::map(DataType::Text, DataType::Int))
                .is_ok()
        );
        let bad = Datum::Set(vec![Datum::Null]);
        assert!(bad.check(&DataType::set(DataType::Int)).is_err());
        assert_eq!(m.to_string(), "{'a': 1}");
    }
}
