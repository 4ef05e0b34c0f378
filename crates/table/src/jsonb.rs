//! jsonb columns as DocDB subdocuments.
//!
//! A jsonb value is stored the way the storage-model seed shows it: the column is an object
//! whose members are subkeys, so `j || '{"read": true}'` writes one pair and a nested field is
//! replaced by writing at its path. Mapping:
//!
//! | JSON | stored at the path |
//! |---|---|
//! | object | `{` init marker, then each member under `S`+name |
//! | array | `A` init marker, then each item under `[`+position (0, 1, …) |
//! | string | `S` |
//! | integer (fits i64) / other number | `I` / `D` |
//! | true, false | `T`, `F` |
//! | null | `$` |
//!
//! This is not YugabyteDB's YCQL jsonb encoding (one `2`-typed value holding its own binary
//! jsonb serialization, which format.md does not specify); it is the seed's logical model,
//! written with init markers so that a replaced value hides the old one.

use std::collections::BTreeMap;

use dockv::KeyEntryValue;
use dockv::value::PrimitiveValue;
use serde_json::{Map, Number, Value as Json};

use crate::error::{Result, corruption, invalid};
use crate::read::Cell;

/// The pairs that store `value` at `path` (encoded DocKey and subkeys), in write order.
pub fn flatten(
    path: Vec<u8>,
    value: &Json,
    out: &mut Vec<(Vec<u8>, PrimitiveValue)>,
) -> Result<()> {
    match value {
        Json::Object(members) => {
            out.push((path.clone(), PrimitiveValue::Object));
            for (name, member) in members {
                let mut child = path.clone();
                KeyEntryValue::string(name.as_bytes()).encode_to(&mut child);
                flatten(child, member, out)?;
            }
        }
        Json::Array(items) => {
            out.push((path.clone(), PrimitiveValue::Array));
            for (i, item) in items.iter().enumerate() {
                let index = i64::try_from(i).map_err(|_| invalid!("json array too long"))?;
                let mut child = path.clone();
                KeyEntryValue::ArrayIndex(index).encode_to(&mut child);
                flatten(child, item, out)?;
            }
        }
        scalar => out.push((path, scalar_value(scalar)?)),
    }
    Ok(())
}

fn scalar_value(value: &Json) -> Result<PrimitiveValue> {
    Ok(match value {
        Json::Null => PrimitiveValue::Null,
        Json::Bool(b) => PrimitiveValue::Bool(*b),
        Json::String(s) => PrimitiveValue::string(s.as_bytes()),
        Json::Number(n) => match n.as_i64() {
            Some(i) => PrimitiveValue::Int64(i),
            None => PrimitiveValue::Double(
                n.as_f64()
                    .ok_or_else(|| invalid!("json number {n} out of range"))?,
            ),
        },
        Json::Object(_) | Json::Array(_) => return Err(invalid!("not a json scalar")),
    })
}

/// The path of a nested member: `path` followed by one `S` subkey per name.
pub fn member_path(mut path: Vec<u8>, names: &[String]) -> Vec<u8> {
    for name in names {
        KeyEntryValue::string(name.as_bytes()).encode_to(&mut path);
    }
    path
}

#[derive(Debug, Default)]
struct Node {
    value: Option<PrimitiveValue>,
    children: BTreeMap<Vec<u8>, (KeyEntryValue, Node)>,
}

/// The jsonb value of a column from its visible cells: `top` at the column itself (if any),
/// `below` deeper ones, in key order. `None` when nothing live is there.
pub fn from_cells(top: Option<&Cell>, below: &[&Cell]) -> Result<Option<Json>> {
    let mut root = Node::default();
    if let Some(cell) = top.filter(|c| c.is_live()) {
        root.value = Some(cell.payload.clone());
    }
    for cell in below {
        let mut node = &mut root;
        let mut start = cell.ends.first().copied().unwrap_or(0);
        for &end in cell.ends.iter().skip(1) {
            let bytes = cell
                .subkeys
                .get(start..end)
                .ok_or_else(|| corruption!("jsonb subkey out of range"))?;
            start = end;
            let key = KeyEntryValue::decode_exact(bytes)?;
            node = &mut node
                .children
                .entry(bytes.to_vec())
                .or_insert_with(|| (key, Node::default()))
                .1;
        }
        node.value = cell.is_live().then(|| cell.payload.clone());
        node.children.clear();
    }
    to_json(root)
}

fn to_json(node: Node) -> Result<Option<Json>> {
    let mut items = Vec::with_capacity(node.children.len());
    for (_, (key, child)) in node.children {
        if let Some(value) = to_json(child)? {
            items.push((key, value));
        }
    }
    let as_array = match &node.value {
        Some(PrimitiveValue::Array) => true,
        Some(PrimitiveValue::Object) => false,
        Some(scalar) if items.is_empty() => return Ok(Some(json_scalar(scalar)?)),
        // Members written after a scalar or without a marker: an implicit container.
        _ if items.is_empty() => return Ok(None),
        _ => matches!(items.first(), Some((KeyEntryValue::ArrayIndex(_), _))),
    };
    if as_array {
        return Ok(Some(Json::Array(
            items.into_iter().map(|(_, v)| v).collect(),
        )));
    }
    let mut members = Map::new();
    for (key, value) in items {
        members.insert(member_name(&key)?, value);
    }
    Ok(Some(Json::Object(members)))
}

fn member_name(key: &KeyEntryValue) -> Result<String> {
    match key {
        KeyEntryValue::String(bytes, _) => String::from_utf8(bytes.clone())
            .map_err(|_| corruption!("jsonb member name is not UTF-8")),
        KeyEntryValue::ArrayIndex(i) => Ok(i.to_string()),
        other => Err(corruption!("jsonb member key {other}")),
    }
}

fn json_scalar(value: &PrimitiveValue) -> Result<Json> {
    Ok(match value {
        PrimitiveValue::Null => Json::Null,
        PrimitiveValue::Bool(b) => Json::Bool(*b),
        PrimitiveValue::Int64(i) => Json::Number((*i).into()),
        PrimitiveValue::Double(d) => Number::from_f64(*d).map_or(Json::Null, Json::Number),
        PrimitiveValue::String(s) => Json::String(
            String::from_utf8(s.clone()).map_err(|_| corruption!("jsonb string is not UTF-8"))?,
        ),
        other => return Err(corruption!("jsonb value {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use docdb::expiration::Expiration;
    use dockv::DocHybridTime;
    use dockv::value::ValueControlFields;
    use serde_json::json;

    /// Cells as the reader would return them for freshly written pairs below a column.
    fn cells(pairs: &[(Vec<u8>, PrimitiveValue)]) -> Vec<Cell> {
        pairs
            .iter()
            .map(|(path, payload)| {
                let mut ends = Vec::new();
                let mut rest = &path[..];
                while !rest.is_empty() {
                    rest = dockv::key_entry::skip_key_entry(rest).expect("subkey");
                    ends.push(path.len() - rest.len());
                }
                Cell {
                    subkeys: path.clone(),
                    ends,
                    time: DocHybridTime::MIN,
                    control: ValueControlFields::default(),
                    payload: payload.clone(),
                    expired: false,
                    expiration: Expiration::default(),
                }
            })
            .collect()
    }

    #[test]
    fn round_trip() {
        let doc = json!({"a": 1, "b": [true, null, 2.5], "c": {"d": "x"}, "e": {}});
        let mut pairs = Vec::new();
        flatten(KeyEntryValue::column_id(3).encoded(), &doc, &mut pairs).expect("flatten");
        assert_eq!(pairs.len(), 9);
        let cells = cells(&pairs);
        let below: Vec<&Cell> = cells.iter().skip(1).collect();
        assert_eq!(from_cells(cells.first(), &below).expect("read"), Some(doc));
        assert_eq!(from_cells(None, &[]).expect("read"), None);
    }
}
