//! The table layer's part of compaction (format.md §7, §9): per-table GC rules under one
//! DocDb (default TTL, dropped columns) and repacking rows into one packed row at the latest
//! schema version.
//!
//! `docdb`'s GC gathers what readers at or after the history cutoff see of a row
//! ([`RowToRepack`]); [`TableRepacker`] folds it. The new packed row is written at the time
//! of the newest record it folds, so it hides exactly what it replaces. Readers must see the
//! same row afterwards, which sets the limits:
//!
//! - A row needs a live packed row or liveness column to start it: a packed row implies
//!   liveness, and a row made only of UPDATEd columns must vanish when they do.
//! - A record the packing cannot hold (a collection element, a jsonb or static column, a
//!   value with a TTL of its own, a deleted liveness) must stay visible, so only columns
//!   written before the oldest such record are folded.
//! - Rows with TTLs are left alone: a TTL counts from its record's time, and moving a value
//!   to the new row's time would move its expiry (YCQL tables with a default TTL, rows
//!   written `USING TTL`).
//! - YCQL keeps each column's `WRITETIME` as a user timestamp (`u`) where it differs from the
//!   new row's time, as YugabyteDB's compaction does.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use docdb::repack::{ColumnVersion, Repacked, Repacker, RowToRepack, TableRules, TableRulesSource};
use dockv::KeyEntryValue;
use dockv::packed_row::{
    PackedRowVersion, RowPackerV1, RowPackerV2, SchemaPacking, decode_packed_row_with,
};
use dockv::value::{PrimitiveValue, Value, ValueControlFields};
use dockv::{DocHybridTime, ValueEntryType};

use crate::codec::{from_packed_v2, from_value, to_value, with_packed_v2};
use crate::error::{Result, invalid};
use crate::schema::{Flavour, PackedFormat};
use crate::table::Table;
use crate::types::Datum;

/// The GC rules of every table of one database, by key prefix.
#[derive(Debug, Default)]
pub struct TableGcRules {
    by_prefix: RwLock<HashMap<Vec<u8>, Arc<TableRules>>>,
}

impl TableGcRules {
    /// Replaces the rules with those of `tables`.
    pub fn update<'t>(&self, tables: impl IntoIterator<Item = &'t Arc<Table>>) {
        let rules = tables
            .into_iter()
            .map(|t| (t.prefix_bytes().to_vec(), Arc::new(rules_of(t))))
            .collect();
        *self.by_prefix.write().unwrap_or_else(|e| e.into_inner()) = rules;
    }
}

impl TableRulesSource for TableGcRules {
    fn rules(&self, prefix: &[u8]) -> Option<Arc<TableRules>> {
        let rules = self.by_prefix.read().unwrap_or_else(|e| e.into_inner());
        rules.get(prefix).cloned()
    }
}

/// What the GC applies to `table`'s rows.
fn rules_of(table: &Arc<Table>) -> TableRules {
    let current: std::collections::HashSet<i32> = table.columns().iter().map(|c| c.id).collect();
    let deleted_columns = table
        .record()
        .versions
        .iter()
        .flat_map(|v| v.columns.iter().map(|c| c.id))
        .filter(|id| !current.contains(id))
        .collect();
    let ycql = table.flavour() == Flavour::Ycql;
    TableRules {
        table_ttl: table.options().default_ttl.filter(|_| ycql),
        deleted_columns,
        // YSQL reads ignore TTLs (a row written with one, as vectors.md C1 is, stays).
        ignore_ttls: !ycql,
        local_expiry: true,
        repacker: table.options().packed.then(|| {
            Arc::new(TableRepacker {
                table: table.clone(),
            }) as Arc<dyn Repacker>
        }),
    }
}

/// Repacks the rows of one table (see the module docs).
#[derive(Debug)]
pub struct TableRepacker {
    table: Arc<Table>,
}

/// A packed column of the new row: its value (`None` = NULL) and `WRITETIME`.
type ColumnValue = Option<(Datum, i64)>;

impl Repacker for TableRepacker {
    fn repack(&self, row: &RowToRepack) -> Option<Repacked> {
        match self.try_repack(row) {
            Ok(repacked) => repacked,
            Err(e) => {
                tracing::warn!(error = %e, "row left unpacked: it could not be repacked");
                None
            }
        }
    }
}

impl TableRepacker {
    /// A repacker for `table`'s current schema.
    pub fn new(table: Arc<Table>) -> Self {
        TableRepacker { table }
    }

    fn try_repack(&self, row: &RowToRepack) -> Result<Option<Repacked>> {
        let table = &self.table;
        let ycql = table.flavour() == Flavour::Ycql;
        if ycql && table.options().default_ttl.is_some() {
            return Ok(None);
        }
        let version = table.schema().version;
        let packing = table
            .packing(version)
            .ok_or_else(|| invalid!("no packing for schema version {version}"))?;
        let mut values: HashMap<i32, ColumnValue> = HashMap::new();
        let mut start = match &row.packed {
            Some((value, time)) => match self.old_packed_values(value, *time)? {
                Some((old_version, old)) => {
                    values = old;
                    Some((*time, old_version == version))
                }
                None => return Ok(None),
            },
            None => None,
        };
        // Cells not newer than the packed row are hidden by it (the GC drops them later).
        let row_time = start.map(|(time, _)| time);
        let cells = row
            .columns
            .iter()
            .filter(|c| row_time.is_none_or(|t| c.time > t));
        // Only columns older than every record the new row cannot hold are folded.
        let limit = cells
            .clone()
            .filter(|c| !foldable(c, packing))
            .map(|c| c.time)
            .chain(row.oldest_other)
            .min();
        let mut newest = row_time;
        let mut folded = 0;
        for cell in cells.filter(|c| limit.is_none_or(|l| c.time < l)) {
            if !foldable(cell, packing) {
                continue;
            }
            newest = newest.max(Some(cell.time));
            folded += 1;
            match cell.column {
                KeyEntryValue::SystemColumnId(_) => start = start.or(Some((cell.time, false))),
                KeyEntryValue::ColumnId(id) => {
                    values.insert(id, self.cell_value(id, cell)?);
                }
                _ => {}
            }
        }
        let (Some(time), Some((_, current))) = (newest, start) else {
            return Ok(None);
        };
        if folded == 0 && current {
            return Ok(None);
        }
        let Some(value) = self.pack(packing, &values, time)? else {
            return Ok(None);
        };
        Ok(Some(Repacked { time, value }))
    }

    /// The columns of an old packed row by id, with its schema version; `None` if the row
    /// has a TTL (row or column).
    fn old_packed_values(
        &self,
        value: &[u8],
        time: DocHybridTime,
    ) -> Result<Option<(u32, HashMap<i32, ColumnValue>)>> {
        let (control, body) = ValueControlFields::decode(value)?;
        if control.ttl.is_some() {
            return Ok(None);
        }
        let row_write_time = control
            .user_timestamp
            .unwrap_or(time.ht.physical_micros() as i64);
        let decoded = decode_packed_row_with(body, |v| self.table.packing(v))?;
        let mut out = HashMap::new();
        for (id, data) in decoded.columns {
            let Some(column) = self.table.column_by_id(id) else {
                continue; // dropped
            };
            let Some(data) = data else {
                out.insert(id, None);
                continue;
            };
            let (datum, write_time) = match decoded.header.version {
                PackedRowVersion::V1 => {
                    let value = Value::decode(data)?;
                    if value.control.ttl.is_some() {
                        return Ok(None);
                    }
                    let write_time = value.control.user_timestamp.unwrap_or(row_write_time);
                    (from_value(&value.payload, &column.data_type)?, write_time)
                }
                PackedRowVersion::V2 => (from_packed_v2(data, &column.data_type)?, row_write_time),
            };
            out.insert(id, (!datum.is_null()).then_some((datum, write_time)));
        }
        Ok(Some((decoded.header.schema_version, out)))
    }

    /// A folded column cell's value: NULL for a tombstone or an expired value.
    fn cell_value(&self, id: i32, cell: &ColumnVersion) -> Result<ColumnValue> {
        let Some(column) = self.table.column_by_id(id) else {
            return Ok(None);
        };
        if cell.expired || cell.payload.first() == Some(&ValueEntryType::Tombstone.as_u8()) {
            return Ok(None);
        }
        let datum = from_value(&PrimitiveValue::decode(&cell.payload)?, &column.data_type)?;
        let write_time = cell
            .control
            .user_timestamp
            .unwrap_or(cell.time.ht.physical_micros() as i64);
        Ok((!datum.is_null()).then_some((datum, write_time)))
    }

    /// The new packed value at `time`, or `None` if a value does not fit the size limit
    /// (the row then stays as it is).
    fn pack(
        &self,
        packing: &SchemaPacking,
        values: &HashMap<i32, ColumnValue>,
        time: DocHybridTime,
    ) -> Result<Option<Vec<u8>>> {
        let table = &self.table;
        let options = table.options();
        let version = table.schema().version;
        let row_time = time.ht.physical_micros() as i64;
        let value_of = |id: i32| -> Option<(&Datum, i64)> {
            values
                .get(&id)
                .and_then(|v| v.as_ref())
                .map(|(d, t)| (d, *t))
        };
        let type_of = |id: i32| table.column_by_id(id).map(|c| &c.data_type);
        let mut all_packed = true;
        let encoded = match options.format() {
            PackedFormat::V1 => {
                let ycql = options.flavour == Flavour::Ycql;
                let mut packer = RowPackerV1::new(version, packing, options.packed_size_limit, &[]);
                for spec in packing.columns() {
                    let bytes = match (value_of(spec.id), type_of(spec.id)) {
                        (Some((datum, write_time)), Some(ty)) => {
                            let control = ValueControlFields {
                                user_timestamp: (ycql && write_time != row_time)
                                    .then_some(write_time),
                                ..ValueControlFields::default()
                            };
                            let mut bytes = Vec::new();
                            control.encode_to(&mut bytes);
                            to_value(datum, ty)?.encode_to(&mut bytes);
                            Some(bytes)
                        }
                        _ => None,
                    };
                    all_packed &= packer.add_value(spec.id, bytes.as_deref())?;
                }
                packer.complete()?
            }
            PackedFormat::V2 => {
                let limit = options.packed_size_limit;
                let mut packer = RowPackerV2::new(version, packing, limit, &[], false)?;
                for spec in packing.columns() {
                    all_packed &= match (value_of(spec.id), type_of(spec.id)) {
                        (Some((datum, _)), Some(ty)) => {
                            with_packed_v2(datum, ty, |v| packer.add_value(spec.id, Some(v)))??
                        }
                        _ => packer.add_value(spec.id, None)?,
                    };
                }
                packer.complete()?
            }
        };
        Ok(all_packed.then_some(encoded))
    }
}

/// Whether the new packed row can hold `cell`: a packed column's value, NULL or expired
/// value (not one whose own TTL still runs), or a live liveness column without a TTL (which
/// a packed row implies).
fn foldable(cell: &ColumnVersion, packing: &SchemaPacking) -> bool {
    let tombstone = cell.payload.first() == Some(&ValueEntryType::Tombstone.as_u8());
    let no_ttl = cell.control.ttl.is_none();
    match cell.column {
        KeyEntryValue::SystemColumnId(0) => !tombstone && !cell.expired && no_ttl,
        KeyEntryValue::ColumnId(id) => packing.index_of(id).is_some() && (cell.expired || no_ttl),
        _ => false,
    }
}
