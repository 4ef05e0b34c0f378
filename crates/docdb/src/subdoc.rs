//! Documents as trees (`SubDocument` in YugabyteDB), their debug rendering, and JSON.

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use dockv::value::PrimitiveValue;
use dockv::{KeyEntryValue, SortOrder, ValueEntryType};

use crate::error::{Error, Result};

/// What kind of container an object node is (from its init marker; plain objects for
/// implicit parents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ObjectKind {
    /// `{`: object / map / CQL row.
    #[default]
    Object,
    /// `A`: list (children keyed by `ArrayIndex`).
    Array,
    /// `(`: Redis set.
    RedisSet,
    /// `,`: Redis sorted set.
    RedisSortedSet,
    /// `+`: Redis time series.
    RedisTs,
    /// `)`: Redis list.
    RedisList,
    /// `*`: Redis stream (a docdb extension).
    RedisStream,
}

impl ObjectKind {
    /// The kind an init-marker payload starts, if it is one.
    pub fn from_marker(value: &PrimitiveValue) -> Option<Self> {
        Some(match value {
            PrimitiveValue::Object => ObjectKind::Object,
            PrimitiveValue::Array => ObjectKind::Array,
            PrimitiveValue::RedisSet => ObjectKind::RedisSet,
            PrimitiveValue::RedisSortedSet => ObjectKind::RedisSortedSet,
            PrimitiveValue::RedisTs => ObjectKind::RedisTs,
            PrimitiveValue::RedisList => ObjectKind::RedisList,
            PrimitiveValue::RedisStream => ObjectKind::RedisStream,
            _ => return None,
        })
    }

    /// The init-marker payload of this kind.
    pub fn marker(self) -> PrimitiveValue {
        match self {
            ObjectKind::Object => PrimitiveValue::Object,
            ObjectKind::Array => PrimitiveValue::Array,
            ObjectKind::RedisSet => PrimitiveValue::RedisSet,
            ObjectKind::RedisSortedSet => PrimitiveValue::RedisSortedSet,
            ObjectKind::RedisTs => PrimitiveValue::RedisTs,
            ObjectKind::RedisList => PrimitiveValue::RedisList,
            ObjectKind::RedisStream => PrimitiveValue::RedisStream,
        }
    }

    /// The value type byte of the marker.
    pub fn value_type(self) -> ValueEntryType {
        self.marker().value_type()
    }
}

/// Children of an object node, ordered by their encoded key (= DocDB order).
pub type Children = BTreeMap<Vec<u8>, (KeyEntryValue, SubDocument)>;

/// A document or any part of it.
#[derive(Debug, Clone, PartialEq)]
pub enum SubDocument {
    /// A leaf value.
    Primitive(PrimitiveValue),
    /// A container of children.
    Object {
        /// Which container.
        kind: ObjectKind,
        /// The children in key order.
        children: Children,
    },
}

impl SubDocument {
    /// An empty object of `kind`.
    pub fn object(kind: ObjectKind) -> Self {
        SubDocument::Object {
            kind,
            children: Children::new(),
        }
    }

    /// Adds or replaces a child; turns a primitive into an object first.
    pub fn set_child(&mut self, key: KeyEntryValue, child: SubDocument) {
        let children = self.children_mut();
        children.insert(key.encoded(), (key, child));
    }

    /// The children, turning this node into an (empty) object if it was a primitive.
    pub fn children_mut(&mut self) -> &mut Children {
        if let SubDocument::Primitive(_) = self {
            *self = SubDocument::object(ObjectKind::Object);
        }
        match self {
            SubDocument::Object { children, .. } => children,
            SubDocument::Primitive(_) => unreachable!("converted above"),
        }
    }

    /// The child at `key`, if this is an object that has it.
    pub fn child(&self, key: &KeyEntryValue) -> Option<&SubDocument> {
        match self {
            SubDocument::Object { children, .. } => children.get(&key.encoded()).map(|(_, c)| c),
            SubDocument::Primitive(_) => None,
        }
    }

    /// The one-line form used by `scan`: `{"a": 1, "b": {"c": 2}}`.
    pub fn to_one_line(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = self.write_one_line(&mut out);
        out
    }

    fn write_one_line(&self, out: &mut String) -> fmt::Result {
        match self {
            SubDocument::Primitive(v) => write!(out, "{v}"),
            SubDocument::Object { kind, children } => {
                let (open, close, keys_only) = delimiters(*kind);
                out.push_str(open);
                for (i, (key, child)) in children.values().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write!(out, "{key}")?;
                    if !keys_only {
                        out.push_str(": ");
                        child.write_one_line(out)?;
                    }
                }
                out.push_str(close);
                Ok(())
            }
        }
    }

    fn write_indented(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let SubDocument::Object { kind, children } = self else {
            let SubDocument::Primitive(v) = self else {
                unreachable!()
            };
            return write!(f, "{v}");
        };
        let (open, close, keys_only) = delimiters(*kind);
        f.write_str(open)?;
        for (i, (key, child)) in children.values().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "\n{:width$}{key}", "", width = indent + 2)?;
            if !keys_only {
                f.write_str(": ")?;
                child.write_indented(f, indent + 2)?;
            }
        }
        if !children.is_empty() {
            write!(f, "\n{:width$}", "", width = indent)?;
        }
        f.write_str(close)
    }

    /// Converts to JSON: objects become JSON objects keyed by the key's text (strings without
    /// quotes), sets become arrays of their members, lists arrays of their values.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            SubDocument::Primitive(v) => primitive_to_json(v),
            SubDocument::Object {
                kind: ObjectKind::RedisSet,
                children,
            } => J::Array(children.values().map(|(k, _)| key_to_json(k)).collect()),
            SubDocument::Object {
                kind: ObjectKind::Array | ObjectKind::RedisList,
                children,
            } => J::Array(children.values().map(|(_, c)| c.to_json()).collect()),
            // A nested list has no init marker of its own; its ArrayIndex keys say what it is.
            SubDocument::Object { children, .. }
                if !children.is_empty()
                    && children
                        .values()
                        .all(|(k, _)| matches!(k, KeyEntryValue::ArrayIndex(_))) =>
            {
                J::Array(children.values().map(|(_, c)| c.to_json()).collect())
            }
            SubDocument::Object { children, .. } => J::Object(
                children
                    .values()
                    .map(|(k, c)| (key_text(k), c.to_json()))
                    .collect(),
            ),
        }
    }

    /// Builds a document from JSON: objects → objects with string keys, arrays → lists
    /// (children get `ArrayIndex` keys 1, 2, …), numbers → int64 or double.
    pub fn from_json(json: &serde_json::Value) -> Result<Self> {
        use serde_json::Value as J;
        Ok(match json {
            J::Object(map) => {
                let mut doc = SubDocument::object(ObjectKind::Object);
                for (k, v) in map {
                    doc.set_child(
                        KeyEntryValue::string(k.as_bytes()),
                        SubDocument::from_json(v)?,
                    );
                }
                doc
            }
            J::Array(items) => {
                let mut doc = SubDocument::object(ObjectKind::Array);
                for (i, item) in items.iter().enumerate() {
                    doc.set_child(
                        KeyEntryValue::ArrayIndex(i as i64 + 1),
                        SubDocument::from_json(item)?,
                    );
                }
                doc
            }
            other => SubDocument::Primitive(json_to_primitive(other)?),
        })
    }
}

/// Opening, closing delimiter, and whether only keys are printed (YugabyteDB prints Redis
/// sets, lists and time series as their keys).
fn delimiters(kind: ObjectKind) -> (&'static str, &'static str, bool) {
    match kind {
        ObjectKind::Object
        | ObjectKind::Array
        | ObjectKind::RedisSortedSet
        | ObjectKind::RedisStream => ("{", "}", false),
        ObjectKind::RedisSet => ("(", ")", true),
        ObjectKind::RedisList => ("[", "]", true),
        ObjectKind::RedisTs => ("<", ">", true),
    }
}

/// YugabyteDB's `SubDocument::ToString`: objects as `{` + one `key: value` per line indented
/// by two spaces per level + `}`; `{}` when empty.
impl fmt::Display for SubDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_indented(f, 0)
    }
}

fn key_text(key: &KeyEntryValue) -> String {
    match key {
        KeyEntryValue::String(s, _) => String::from_utf8_lossy(s).into_owned(),
        other => other.to_string(),
    }
}

fn key_to_json(key: &KeyEntryValue) -> serde_json::Value {
    use serde_json::Value as J;
    match key {
        KeyEntryValue::String(s, _) => J::String(String::from_utf8_lossy(s).into_owned()),
        KeyEntryValue::Int64(v, _) | KeyEntryValue::ArrayIndex(v) => J::from(*v),
        KeyEntryValue::Int32(v, _) => J::from(*v),
        KeyEntryValue::Bool(b, _) => J::Bool(*b),
        KeyEntryValue::Double(d, _) => J::from(*d),
        KeyEntryValue::NullLow | KeyEntryValue::NullHigh => J::Null,
        other => J::String(other.to_string()),
    }
}

fn primitive_to_json(value: &PrimitiveValue) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        PrimitiveValue::Null => J::Null,
        PrimitiveValue::Bool(b) => J::Bool(*b),
        PrimitiveValue::Int32(v) => J::from(*v),
        PrimitiveValue::Int64(v) | PrimitiveValue::Timestamp(v) => J::from(*v),
        PrimitiveValue::UInt32(v) => J::from(*v),
        PrimitiveValue::UInt64(v) => J::from(*v),
        PrimitiveValue::Float(v) => J::from(f64::from(*v)),
        PrimitiveValue::Double(v) => J::from(*v),
        PrimitiveValue::String(s) => J::String(String::from_utf8_lossy(s).into_owned()),
        other => J::String(other.to_string()),
    }
}

pub(crate) fn json_to_primitive(json: &serde_json::Value) -> Result<PrimitiveValue> {
    use serde_json::Value as J;
    Ok(match json {
        J::Null => PrimitiveValue::Null,
        J::Bool(b) => PrimitiveValue::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => PrimitiveValue::Int64(i),
            (None, Some(f)) => PrimitiveValue::Double(f),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unsupported JSON number {n}"
                )));
            }
        },
        J::String(s) => PrimitiveValue::String(s.as_bytes().to_vec()),
        J::Array(_) | J::Object(_) => unreachable!("containers are handled by from_json"),
    })
}

/// An ascending key from a JSON object key (always a string).
pub fn json_key(text: &str) -> KeyEntryValue {
    KeyEntryValue::String(text.as_bytes().to_vec(), SortOrder::Ascending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_yugabyte() {
        let mut inner = SubDocument::object(ObjectKind::Object);
        inner.set_child(
            KeyEntryValue::string("subkey_c"),
            SubDocument::Primitive(PrimitiveValue::string("value_bc_prime")),
        );
        let mut doc = SubDocument::object(ObjectKind::Object);
        doc.set_child(KeyEntryValue::string("subkey_b"), inner);
        doc.set_child(
            KeyEntryValue::string("subkey_a"),
            SubDocument::Primitive(PrimitiveValue::string("value_a")),
        );
        let expected = "{\n  \"subkey_a\": \"value_a\",\n  \"subkey_b\": {\n    \"subkey_c\": \"value_bc_prime\"\n  }\n}";
        assert_eq!(doc.to_string(), expected);
        assert_eq!(
            doc.to_one_line(),
            r#"{"subkey_a": "value_a", "subkey_b": {"subkey_c": "value_bc_prime"}}"#
        );
        assert_eq!(SubDocument::object(ObjectKind::Object).to_string(), "{}");
    }

    #[test]
    fn json_roundtrip() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"a": 1, "b": {"c": "x", "d": [true, null, 2.5]}}"#)
                .expect("json");
        let doc = SubDocument::from_json(&json).expect("doc");
        assert_eq!(doc.to_json(), json);
    }
}
