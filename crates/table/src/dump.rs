//! Debug dumps with packed rows decoded by their table's schema version.

use std::fmt::Write as _;
use std::sync::Arc;

use dockv::doc_key::{DocKey, TablePrefix};
use dockv::packed_row::{PackedRowVersion, decode_packed_row_with};
use dockv::value::{PrimitiveValue, Value};

use crate::codec::{from_packed_v2, to_value};
use crate::table::Table;

/// The dump text of a stored value: YugabyteDB's `Value::ToString`, except that a packed row
/// of a known table prints as `{ <column id>: <value> ... }` (NULL as `NULL`) followed by the
/// row's control fields. V1 columns show their own control fields only where they differ
/// from the row's.
pub fn format_value(tables: &[Arc<Table>], key: &[u8], value: &[u8]) -> String {
    let decoded = match Value::decode(value) {
        Ok(v) => v,
        Err(e) => return format!("<undecodable value: {e}>"),
    };
    let packed = matches!(
        decoded.payload,
        PrimitiveValue::PackedRowV1(_) | PrimitiveValue::PackedRowV2(_)
    );
    let table = packed.then(|| table_of(tables, key)).flatten();
    match table.and_then(|t| format_packed(t, &decoded)) {
        Some(text) => format!("{text}{}", decoded.control),
        None => decoded.to_string(),
    }
}

/// The table whose rows `key` belongs to.
fn table_of<'t>(tables: &'t [Arc<Table>], key: &[u8]) -> Option<&'t Table> {
    let (doc_key, _) = DocKey::decode(key).ok()?;
    tables
        .iter()
        .map(|t| &**t)
        .find(|t| match (doc_key.prefix, t.prefix()) {
            (TablePrefix::None, TablePrefix::None) => true,
            (a, b) => a == b && a != TablePrefix::None,
        })
}

fn format_packed(table: &Table, value: &Value) -> Option<String> {
    let version = match value.payload {
        PrimitiveValue::PackedRowV1(_) => PackedRowVersion::V1,
        _ => PackedRowVersion::V2,
    };
    let encoded = value.payload.encoded();
    let row = decode_packed_row_with(&encoded, |v| table.packing(v)).ok()?;
    let mut out = String::from("{");
    for (id, data) in row.columns {
        let _ = write!(out, " {id}: ");
        let Some(data) = data else {
            out.push_str("NULL");
            continue;
        };
        let text = match version {
            PackedRowVersion::V1 => {
                let column = Value::decode(data).ok()?;
                if column.control == value.control {
                    column.payload.to_string()
                } else {
                    column.to_string()
                }
            }
            PackedRowVersion::V2 => {
                // The column may have been dropped since: its type is in the old version.
                let ty = table
                    .record()
                    .versions
                    .iter()
                    .rev()
                    .find_map(|v| v.columns.iter().find(|c| c.id == id))
                    .map(|c| c.data_type.clone())?;
                let datum = from_packed_v2(data, &ty).ok()?;
                to_value(&datum, &ty).ok()?.to_string()
            }
        };
        out.push_str(&text);
    }
    out.push_str(" }");
    Some(out)
}
