//! Rows from a document's visible records (format.md §8, §9, §11): the packed row and the
//! liveness column make a row exist, column cells override packed columns, collections and
//! jsonb are assembled from their element cells, and dropped columns are ignored.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use docdb::expiration::{Expiration, is_expired_at};
use dockv::KeyEntryValue;
use dockv::packed_row::{PackedRowVersion, decode_packed_row_v1, decode_packed_row_v2};
use dockv::value::{PrimitiveValue, Value};
use dockv::varint::decode_unsigned;

use crate::codec::{from_key_entry, from_packed_v2, from_value};
use crate::error::{Result, corruption};
use crate::read::{Cell, ReadContext, ttl_remaining_secs};
use crate::table::Table;
use crate::types::{DataType, Datum};

/// A non-null column value with what `WRITETIME()` and `TTL()` report.
#[derive(Debug, Clone, PartialEq)]
pub struct CellValue {
    /// The value.
    pub datum: Datum,
    /// `WRITETIME`: the user timestamp or the write's physical µs (primitives only).
    pub write_time: Option<i64>,
    /// `TTL`: remaining whole seconds, `None` without a TTL (primitives only).
    pub ttl: Option<i64>,
}

/// The non-key content of one row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowValues {
    /// Whether the row exists: a live liveness column or packed row, or any live column.
    pub exists: bool,
    /// Non-null column values by column id.
    pub columns: ColumnMap,
}

/// Column values by column id. Ids are small trusted integers, so they hash by a multiply
/// rather than SipHash (which was a tenth of a packed point read).
pub type ColumnMap = HashMap<i32, CellValue, IdHash>;

/// Hashing of small trusted integer ids (column ids, schema versions) by [`ColumnIdHasher`].
pub type IdHash = BuildHasherDefault<ColumnIdHasher>;

/// The hasher of [`ColumnMap`]: Fibonacci hashing of the column id.
#[derive(Debug, Default, Clone, Copy)]
pub struct ColumnIdHasher(u64);

impl Hasher for ColumnIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i32(&mut self, id: i32) {
        self.write_u32(id as u32);
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Builds the row of `table` from the visible cells of its document.
pub fn assemble(table: &Table, cells: &[Cell], ctx: &ReadContext) -> Result<RowValues> {
    let mut row = RowValues::default();
    assemble_into(table, cells, ctx, &mut row)?;
    Ok(row)
}

/// Like [`assemble`], into `row`, which is cleared first. A scan passes the same `row` for
/// every document, so its map is allocated once rather than per row (a map of ten columns
/// is over a kilobyte, and glibc consolidates its free lists before every such request).
pub fn assemble_into(
    table: &Table,
    cells: &[Cell],
    ctx: &ReadContext,
    row: &mut RowValues,
) -> Result<()> {
    row.exists = false;
    row.columns.clear();
    // Sized for every column up front: growing the map 3 → 7 → 14 rehashes it twice per row.
    // A missing row (an INSERT's duplicate-key check) allocates nothing.
    if !cells.is_empty() {
        row.columns.reserve(table.columns().len());
    }
    let mut rest = cells;
    if let Some((root, tail)) = cells.split_first()
        && root.depth() == 0
    {
        apply_root(table, root, ctx, row)?;
        rest = tail;
    }
    while let Some(first) = rest.first() {
        let column = first.first_subkey().unwrap_or_default();
        let len = rest
            .iter()
            .take_while(|c| c.first_subkey() == Some(column))
            .count()
            .max(1);
        let (group, tail) = rest.split_at(len);
        apply_column(table, column, group, ctx, row)?;
        rest = tail;
    }
    row.exists |= !row.columns.is_empty();
    Ok(())
}

/// The row-level record: a packed row provides liveness and every packed column.
fn apply_root(table: &Table, root: &Cell, ctx: &ReadContext, row: &mut RowValues) -> Result<()> {
    // The payload holds the packed value after its type byte: schema version, then the body.
    let (version, value) = match &root.payload {
        PrimitiveValue::PackedRowV1(value) => (PackedRowVersion::V1, value),
        PrimitiveValue::PackedRowV2(value) => (PackedRowVersion::V2, value),
        // A row tombstone only hides; other row-level values are not written by tables.
        _ => return Ok(()),
    };
    if root.expired {
        return Ok(());
    }
    row.exists = true;
    let (schema_version, body) = decode_unsigned(value)?;
    let packing = u32::try_from(schema_version)
        .ok()
        .and_then(|v| table.packing(v))
        .ok_or_else(|| corruption!("packed row: no schema packing for version {schema_version}"))?;
    let columns = match version {
        PackedRowVersion::V1 => decode_packed_row_v1(body, packing)?,
        PackedRowVersion::V2 => decode_packed_row_v2(body, packing)?.1,
    };
    for (id, data) in columns {
        let (Some(column), Some(data)) = (table.column_by_id(id), data) else {
            continue;
        };
        let value = match version {
            PackedRowVersion::V1 => packed_v1_column(&column.data_type, data, root, ctx)?,
            PackedRowVersion::V2 => Some(CellValue {
                datum: from_packed_v2(data, &column.data_type)?,
                write_time: Some(root.write_time()),
                ttl: ctx
                    .check_ttl
                    .then(|| ttl_of(root.expiration, root, ctx))
                    .flatten(),
            }),
        };
        if let Some(value) = value.filter(|v| !v.datum.is_null()) {
            row.columns.insert(id, value);
        }
    }
    Ok(())
}

/// A V1 packed column: its own control fields (YCQL TTL, user timestamp), else the row's.
fn packed_v1_column(
    ty: &DataType,
    data: &[u8],
    root: &Cell,
    ctx: &ReadContext,
) -> Result<Option<CellValue>> {
    let value = Value::decode(data)?;
    let exp = value.control.ttl.map_or_else(Expiration::default, |ttl| {
        Expiration::new(root.time.ht, Some(ttl))
    });
    if ctx.check_ttl && is_expired_at(exp, root.time.ht, ctx.table_ttl, ctx.read_ht) {
        return Ok(None);
    }
    let write_time = value
        .control
        .user_timestamp
        .unwrap_or_else(|| root.write_time());
    Ok(Some(CellValue {
        datum: from_value(&value.payload, ty)?,
        write_time: Some(write_time),
        ttl: ctx.check_ttl.then(|| ttl_of(exp, root, ctx)).flatten(),
    }))
}

fn ttl_of(exp: Expiration, cell: &Cell, ctx: &ReadContext) -> Option<i64> {
    ttl_remaining_secs(exp, cell.time.ht, ctx.table_ttl, ctx.read_ht)
}

/// The cells of one first-level subkey: the liveness column, or a column and its elements.
fn apply_column(
    table: &Table,
    subkey: &[u8],
    group: &[Cell],
    ctx: &ReadContext,
    row: &mut RowValues,
) -> Result<()> {
    let top = group.iter().find(|c| c.depth() == 1);
    let id = match KeyEntryValue::decode_exact(subkey)? {
        KeyEntryValue::SystemColumnId(0) => {
            // A liveness cell is newer than any packed row (else it would be hidden): it
            // replaces the liveness the packed row implies, expired or deleted included.
            if let Some(top) = top {
                row.exists = top.is_live();
            }
            return Ok(());
        }
        KeyEntryValue::ColumnId(id) => id,
        _ => return Ok(()),
    };
    // A dropped column's data is ignored.
    let Some(column) = table.column_by_id(id) else {
        return Ok(());
    };
    let below: Vec<&Cell> = group.iter().filter(|c| c.depth() > 1).collect();
    let value = match &column.data_type {
        DataType::Jsonb => crate::jsonb::from_cells(top, &below)?.map(|j| CellValue {
            datum: Datum::Jsonb(j),
            write_time: None,
            ttl: None,
        }),
        ty if ty.is_collection() => collection(ty, &below)?.map(|datum| CellValue {
            datum,
            write_time: None,
            ttl: None,
        }),
        ty => match top {
            Some(cell) if cell.is_live() => Some(CellValue {
                datum: from_value(&cell.payload, ty)?,
                write_time: Some(cell.write_time()),
                ttl: ctx
                    .check_ttl
                    .then(|| ttl_of(cell.expiration, cell, ctx))
                    .flatten(),
            }),
            _ => None,
        },
    };
    // A visible column cell is newer than the packed row: it decides, NULL included.
    match value.filter(|v| !v.datum.is_null()) {
        Some(value) => row.columns.insert(id, value),
        None if top.is_some() || !below.is_empty() => row.columns.remove(&id),
        None => None,
    };
    Ok(())
}

/// A map, set or list from its live element cells; `None` when empty (CQL reads an empty
/// collection as NULL).
fn collection(ty: &DataType, below: &[&Cell]) -> Result<Option<Datum>> {
    let live = below.iter().filter(|c| c.depth() == 2 && c.is_live());
    let element_key = |cell: &Cell| -> Result<KeyEntryValue> {
        let start = cell.ends.first().copied().unwrap_or(0);
        let bytes = cell
            .subkeys
            .get(start..)
            .ok_or_else(|| corruption!("element subkey out of range"))?;
        Ok(KeyEntryValue::decode_exact(bytes)?)
    };
    let datum = match ty {
        DataType::Map(k, v) => Datum::Map(
            live.map(|c| {
                Ok((
                    from_key_entry(&element_key(c)?, k)?,
                    from_value(&c.payload, v)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?,
        ),
        DataType::Set(e) => Datum::Set(
            live.map(|c| from_key_entry(&element_key(c)?, e))
                .collect::<Result<Vec<_>>>()?,
        ),
        DataType::List(e) => Datum::List(
            live.map(|c| match element_key(c)? {
                KeyEntryValue::ArrayIndex(_) => from_value(&c.payload, e),
                other => Err(corruption!("list element key {other}")),
            })
            .collect::<Result<Vec<_>>>()?,
        ),
        other => return Err(corruption!("{other} is not a collection")),
    };
    let empty = matches!(&datum, Datum::Map(m) if m.is_empty())
        || matches!(&datum, Datum::Set(s) | Datum::List(s) if s.is_empty());
    Ok((!empty).then_some(datum))
}

/// The positions of the live elements of a list column, in list order: `(array index, cell)`.
pub fn list_indexes(group: &[Cell]) -> Vec<i64> {
    group
        .iter()
        .filter(|c| c.depth() == 2 && c.is_live())
        .filter_map(|c| {
            let start = c.ends.first().copied()?;
            match KeyEntryValue::decode_exact(c.subkeys.get(start..)?) {
                Ok(KeyEntryValue::ArrayIndex(i)) => Some(i),
                _ => None,
            }
        })
        .collect()
}
