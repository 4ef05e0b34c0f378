//! Table schemas: columns with stable ids, key layout, table options, schema versions and
//! the packing of each version (format.md §3, §9).
//!
//! Column ids are assigned in schema order (hash key columns, range key columns, then the
//! other columns in declaration order) starting at 0, as YugabyteDB does in release builds
//! (`kFirstColumnIdRep = 0`); a column added later takes the next unused id, and ids are
//! never reused. Every ALTER produces a new [`SchemaVersion`]; packed rows name the version
//! they were packed with, so every version is kept.

use std::collections::HashMap;

use dockv::doc_key::TablePrefix;
use dockv::packed_row::{ColumnPackingSpec, SchemaPacking, TableKind};
use dockv::value::Ttl;
use serde::{Deserialize, Serialize};

use crate::codec::packed_data_type;
use crate::error::{Error, Result, invalid};
use crate::types::DataType;

/// Which query layer's semantics a table follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Flavour {
    /// YCQL: TTLs and user timestamps, per-column TTL in packed rows (V1), upserts.
    #[default]
    Ycql,
    /// YSQL: no TTL checks on reads, packed rows V2, INSERT of an existing key fails,
    /// tables without a primary key get a `ybrowid`.
    Ysql,
}

/// Packed row format (format.md §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PackedFormat {
    /// `z`: YCQL, and YSQL before V2.
    V1,
    /// `|`: YSQL only.
    V2,
}

/// Sort order of a range key column. NULLs sort first (`$`) or last (`|`) in the key order
/// of the column, whichever its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RangeOrder {
    /// Descending (`DESC`): the column is stored with descending key encodings.
    pub descending: bool,
    /// `NULLS FIRST` (`$`); otherwise `NULLS LAST` (`|`).
    pub nulls_first: bool,
}

impl RangeOrder {
    /// `ASC NULLS FIRST` (YCQL's ascending).
    pub const ASC: RangeOrder = RangeOrder {
        descending: false,
        nulls_first: true,
    };
    /// `DESC NULLS FIRST` (YCQL's descending, PostgreSQL's default DESC).
    pub const DESC: RangeOrder = RangeOrder {
        descending: true,
        nulls_first: true,
    };
    /// `ASC NULLS LAST` (PostgreSQL's default ASC).
    pub const ASC_NULLS_LAST: RangeOrder = RangeOrder {
        descending: false,
        nulls_first: false,
    };
    /// `DESC NULLS LAST`.
    pub const DESC_NULLS_LAST: RangeOrder = RangeOrder {
        descending: true,
        nulls_first: false,
    };

    /// The key encoding direction.
    pub fn sort_order(self) -> dockv::SortOrder {
        if self.descending {
            dockv::SortOrder::Descending
        } else {
            dockv::SortOrder::Ascending
        }
    }
}

/// What a column is in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ColumnKind {
    /// Part of the hash (partition) key.
    Hash,
    /// A range (clustering) key column.
    Range(RangeOrder),
    /// A regular column.
    Regular,
    /// A YCQL static column: one value per hash key, stored under the DocKey with the hash
    /// components only.
    Static,
}

impl ColumnKind {
    /// Hash or range key column.
    pub fn is_key(self) -> bool {
        matches!(self, ColumnKind::Hash | ColumnKind::Range(_))
    }
}

/// One column of a schema version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Stable id: the `ColumnId` subkey of the column's cells.
    pub id: i32,
    /// Name.
    pub name: String,
    /// Type.
    pub data_type: DataType,
    /// Key, regular or static.
    pub kind: ColumnKind,
    /// Whether it may be NULL (always true for YCQL value columns).
    pub nullable: bool,
    /// Generated columns (`ybrowid`) are left out of `SELECT *`.
    pub hidden: bool,
}

/// A column as a CREATE or ALTER statement gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Name.
    pub name: String,
    /// Type.
    pub data_type: DataType,
    /// Key, regular or static.
    pub kind: ColumnKind,
    /// `NOT NULL` clears this (YSQL only).
    pub nullable: bool,
}

impl ColumnSpec {
    /// A nullable regular column.
    pub fn regular(name: impl Into<String>, data_type: DataType) -> Self {
        ColumnSpec {
            name: name.into(),
            data_type,
            kind: ColumnKind::Regular,
            nullable: true,
        }
    }

    /// A static column.
    pub fn static_column(name: impl Into<String>, data_type: DataType) -> Self {
        ColumnSpec {
            kind: ColumnKind::Static,
            ..Self::regular(name, data_type)
        }
    }

    /// The same column, `NOT NULL`.
    pub fn not_null(mut self) -> Self {
        self.nullable = false;
        self
    }
}

/// Table properties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableOptions {
    /// YCQL or YSQL semantics.
    pub flavour: Flavour,
    /// `default_time_to_live`, applied on reads to values without a TTL of their own (not
    /// stored in the values, as in YugabyteDB).
    #[serde(with = "ttl_millis")]
    pub default_ttl: Option<Ttl>,
    /// Whether INSERTs write packed rows (default on).
    pub packed: bool,
    /// Packed format; `None` picks V1 for YCQL and V2 for YSQL.
    pub packed_format: Option<PackedFormat>,
    /// Largest packed value in bytes; 0 = 32 KiB (`ycql/ysql_packed_row_size_limit`).
    pub packed_size_limit: usize,
    /// Whether rows live under a `ColocationId` prefix, sharing the key space with other
    /// tables; otherwise the table owns the un-prefixed key space (one such table per DocDb).
    pub colocated: bool,
    /// The colocation id; `None` assigns the table id.
    pub colocation_id: Option<u32>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            flavour: Flavour::Ycql,
            default_ttl: None,
            packed: true,
            packed_format: None,
            packed_size_limit: 0,
            colocated: false,
            colocation_id: None,
        }
    }
}

impl TableOptions {
    /// The packed format in force.
    pub fn format(&self) -> PackedFormat {
        match (self.packed_format, self.flavour) {
            (Some(format), _) => format,
            (None, Flavour::Ycql) => PackedFormat::V1,
            (None, Flavour::Ysql) => PackedFormat::V2,
        }
    }
}

/// Serializes an optional TTL as milliseconds.
mod ttl_millis {
    use dockv::value::Ttl;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ttl: &Option<Ttl>, s: S) -> Result<S::Ok, S::Error> {
        match ttl {
            Some(ttl) => s.serialize_some(&ttl.millis()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Ttl>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(Ttl))
    }
}

/// A CREATE TABLE statement: columns in declaration order, and options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    /// Table name.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnSpec>,
    /// Properties.
    pub options: TableOptions,
}

impl TableSpec {
    /// A table with no columns yet and default (YCQL) options.
    pub fn new(name: impl Into<String>) -> Self {
        TableSpec {
            name: name.into(),
            columns: Vec::new(),
            options: TableOptions::default(),
        }
    }

    /// The same table with YSQL semantics.
    pub fn ysql(mut self) -> Self {
        self.options.flavour = Flavour::Ysql;
        self
    }

    /// Adds a hash key column.
    pub fn hash_key(self, name: impl Into<String>, data_type: DataType) -> Self {
        self.with_column(ColumnSpec {
            kind: ColumnKind::Hash,
            nullable: false,
            ..ColumnSpec::regular(name, data_type)
        })
    }

    /// Adds an ascending range key column (NULLs as the flavour orders them by default).
    pub fn range_key(self, name: impl Into<String>, data_type: DataType) -> Self {
        let order = match self.options.flavour {
            Flavour::Ycql => RangeOrder::ASC,
            Flavour::Ysql => RangeOrder::ASC_NULLS_LAST,
        };
        self.range_key_ordered(name, data_type, order)
    }

    /// Adds a range key column with an explicit order.
    pub fn range_key_ordered(
        self,
        name: impl Into<String>,
        data_type: DataType,
        order: RangeOrder,
    ) -> Self {
        self.with_column(ColumnSpec {
            kind: ColumnKind::Range(order),
            nullable: false,
            ..ColumnSpec::regular(name, data_type)
        })
    }

    /// Adds a nullable regular column.
    pub fn column(self, name: impl Into<String>, data_type: DataType) -> Self {
        self.with_column(ColumnSpec::regular(name, data_type))
    }

    /// Adds a static column.
    pub fn static_column(self, name: impl Into<String>, data_type: DataType) -> Self {
        self.with_column(ColumnSpec::static_column(name, data_type))
    }

    /// Adds any column.
    pub fn with_column(mut self, column: ColumnSpec) -> Self {
        self.columns.push(column);
        self
    }

    /// Changes the options.
    pub fn with_options(mut self, f: impl FnOnce(&mut TableOptions)) -> Self {
        f(&mut self.options);
        self
    }
}

/// Name of the generated row id column of a YSQL table without a primary key.
pub const YBROWID: &str = "ybrowid";

/// The columns of one schema version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaVersion {
    /// Version number (0 at CREATE, +1 per ALTER).
    pub version: u32,
    /// Columns in schema order.
    pub columns: Vec<Column>,
}

/// Builds the first schema version of `spec`: key columns first (hash, then range, in
/// declaration order), then the rest, ids from 0. A YSQL table without a key gets a hidden
/// `ybrowid` blob hash column; a YCQL table must have a hash key column.
pub fn initial_schema(spec: &TableSpec) -> Result<SchemaVersion> {
    let mut specs: Vec<ColumnSpec> = Vec::with_capacity(spec.columns.len() + 1);
    let has_key = spec.columns.iter().any(|c| c.kind.is_key());
    let mut hidden = None;
    if !has_key {
        if spec.options.flavour == Flavour::Ycql {
            return Err(invalid!(
                "table {}: a YCQL table needs a primary key",
                spec.name
            ));
        }
        specs.push(ColumnSpec {
            kind: ColumnKind::Hash,
            nullable: false,
            ..ColumnSpec::regular(YBROWID, DataType::Blob)
        });
        hidden = Some(YBROWID);
    }
    let rank = |kind: ColumnKind| match kind {
        ColumnKind::Hash => 0,
        ColumnKind::Range(_) => 1,
        _ => 2,
    };
    let mut ordered: Vec<&ColumnSpec> = spec.columns.iter().collect();
    ordered.sort_by_key(|c| rank(c.kind));
    specs.extend(ordered.into_iter().cloned());
    let mut columns = Vec::with_capacity(specs.len());
    for (id, c) in specs.into_iter().enumerate() {
        let id = i32::try_from(id).map_err(|_| invalid!("too many columns"))?;
        let hidden = hidden == Some(c.name.as_str()) && id == 0;
        columns.push(make_column(id, c, spec.options.flavour, hidden)?);
    }
    let version = SchemaVersion {
        version: 0,
        columns,
    };
    validate(&version, &spec.options)?;
    Ok(version)
}

/// A checked column: types valid for its role, YCQL value columns nullable.
fn make_column(id: i32, spec: ColumnSpec, flavour: Flavour, hidden: bool) -> Result<Column> {
    spec.data_type.validate()?;
    if spec.kind.is_key() && !spec.data_type.can_be_key() {
        return Err(invalid!(
            "column {}: type {} cannot be a key",
            spec.name,
            spec.data_type
        ));
    }
    let nullable = match (spec.kind.is_key(), flavour) {
        (true, _) => false,
        (false, Flavour::Ycql) => true,
        (false, Flavour::Ysql) => spec.nullable,
    };
    Ok(Column {
        id,
        name: spec.name,
        data_type: spec.data_type,
        kind: spec.kind,
        nullable,
        hidden,
    })
}

/// Names are unique; statics need range columns and YCQL.
fn validate(version: &SchemaVersion, options: &TableOptions) -> Result<()> {
    let mut seen = HashMap::new();
    for c in &version.columns {
        if seen.insert(c.name.as_str(), c.id).is_some() {
            return Err(Error::AlreadyExists(format!("column {}", c.name)));
        }
    }
    let has_range = version
        .columns
        .iter()
        .any(|c| matches!(c.kind, ColumnKind::Range(_)));
    let has_static = version.columns.iter().any(|c| c.kind == ColumnKind::Static);
    if has_static && (!has_range || options.flavour == Flavour::Ysql) {
        return Err(invalid!(
            "static columns need a YCQL table with range key columns"
        ));
    }
    Ok(())
}

/// The next schema version with `column` added under `id`.
pub fn add_column(
    current: &SchemaVersion,
    column: ColumnSpec,
    id: i32,
    options: &TableOptions,
) -> Result<SchemaVersion> {
    if column.kind.is_key() {
        return Err(invalid!("cannot add key column {}", column.name));
    }
    if options.flavour == Flavour::Ysql && !column.nullable {
        return Err(invalid!(
            "column {}: an added column must be nullable (no default values)",
            column.name
        ));
    }
    let mut next = current.clone();
    next.version += 1;
    next.columns
        .push(make_column(id, column, options.flavour, false)?);
    validate(&next, options)?;
    Ok(next)
}

/// The next schema version without the column called `name`.
pub fn drop_column(current: &SchemaVersion, name: &str) -> Result<SchemaVersion> {
    let column = current
        .columns
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| Error::NotFound(format!("column {name}")))?;
    if column.kind.is_key() {
        return Err(invalid!("cannot drop key column {name}"));
    }
    let mut next = current.clone();
    next.version += 1;
    next.columns.retain(|c| c.name != name);
    Ok(next)
}

/// The packing of a schema version (`SchemaPacking`): the packable regular columns in schema
/// order; statics, collections, jsonb, and (for V2) types V2 cannot store are skipped columns,
/// written as separate cells.
pub fn schema_packing(version: &SchemaVersion, options: &TableOptions) -> Result<SchemaPacking> {
    let kind = match options.flavour {
        Flavour::Ycql => TableKind::Ycql,
        Flavour::Ysql => TableKind::Ysql,
    };
    let v2 = options.format() == PackedFormat::V2;
    let mut packed = Vec::new();
    let mut skipped = Vec::new();
    for c in version.columns.iter().filter(|c| !c.kind.is_key()) {
        let packed_type = packed_data_type(&c.data_type)
            .filter(|t| c.kind == ColumnKind::Regular && (!v2 || t.v2_layout().is_some()));
        match packed_type {
            Some(data_type) => packed.push(ColumnPackingSpec {
                id: c.id,
                data_type,
                nullable: c.nullable,
            }),
            None => skipped.push(c.id),
        }
    }
    Ok(SchemaPacking::with_skipped_columns(
        kind, &packed, &skipped,
    )?)
}

/// The key prefix of a table's rows.
pub fn table_prefix(options: &TableOptions, table_id: u32) -> TablePrefix {
    if options.colocated {
        TablePrefix::ColocationId(options.colocation_id.unwrap_or(table_id))
    } else {
        TablePrefix::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs() -> TableSpec {
        TableSpec::new("msgs")
            .column("msg", DataType::Text)
            .hash_key("user_id", DataType::Text)
            .column("msg_props", DataType::map(DataType::Text, DataType::Text))
            .range_key("msg_id", DataType::Int)
    }

    #[test]
    fn ids_follow_schema_order() {
        let v = initial_schema(&msgs()).expect("schema");
        let names: Vec<(i32, &str)> = v.columns.iter().map(|c| (c.id, c.name.as_str())).collect();
        assert_eq!(
            names,
            [(0, "user_id"), (1, "msg_id"), (2, "msg"), (3, "msg_props")]
        );
    }

    #[test]
    fn alter_bumps_version_and_never_reuses_ids() {
        let options = TableOptions::default();
        let v0 = initial_schema(&msgs()).expect("schema");
        let v1 = drop_column(&v0, "msg").expect("drop");
        let v2 =
            add_column(&v1, ColumnSpec::regular("msg", DataType::Text), 4, &options).expect("add");
        assert_eq!((v1.version, v2.version), (1, 2));
        assert_eq!(v2.columns.last().map(|c| c.id), Some(4));
        assert!(drop_column(&v2, "user_id").is_err());
        assert!(drop_column(&v2, "nope").is_err());
        assert!(add_column(&v2, ColumnSpec::regular("msg", DataType::Int), 5, &options).is_err());
    }

    #[test]
    fn ybrowid_and_packing() {
        let spec = TableSpec::new("t")
            .ysql()
            .column("a", DataType::Int)
            .column("b", DataType::Timestamp)
            .column("c", DataType::list(DataType::Int));
        let v = initial_schema(&spec).expect("schema");
        assert_eq!(v.columns[0].name, YBROWID);
        assert!(v.columns[0].hidden);
        let packing = schema_packing(&v, &spec.options).expect("packing");
        assert_eq!(
            packing.columns().iter().map(|c| c.id).collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(packing.skipped_column_ids().collect::<Vec<_>>(), [2, 3]);
        assert!(initial_schema(&TableSpec::new("t").column("a", DataType::Int)).is_err());
    }
}
