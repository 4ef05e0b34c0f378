//! A table as readers and writers use it: its catalog record plus what is derived from it
//! (column lookups, the packing of every schema version, the key prefix), and the mapping
//! between primary-key values and DocKeys (format.md §3).

use std::collections::HashMap;

use dockv::doc_key::{DocKey, TablePrefix};
use dockv::packed_row::SchemaPacking;
use serde::{Deserialize, Serialize};

use crate::codec::{append_hash_input, from_key_entry, to_key_entry};
use crate::error::{Error, Result, corruption, invalid};
use crate::row::IdHash;
use crate::schema::{
    Column, ColumnKind, Flavour, SchemaVersion, TableOptions, schema_packing, table_prefix,
};
use crate::types::Datum;

/// What the catalog stores for a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Catalog id (also the default colocation id).
    pub id: u32,
    /// Namespace (keyspace / database) name.
    pub namespace: String,
    /// Table name.
    pub name: String,
    /// Properties.
    pub options: TableOptions,
    /// Every schema version, oldest first; the last is current.
    pub versions: Vec<SchemaVersion>,
    /// The id the next added column gets.
    pub next_column_id: i32,
}

/// A table handle: a snapshot of the table's catalog record with derived lookups. ALTER TABLE
/// produces a new handle; fetch it again from the database after DDL.
#[derive(Debug, Clone)]
pub struct Table {
    record: TableRecord,
    prefix: TablePrefix,
    prefix_bytes: Vec<u8>,
    packings: HashMap<u32, SchemaPacking, IdHash>,
    by_name: HashMap<String, usize>,
    by_id: HashMap<i32, usize, IdHash>,
    hash_columns: Vec<usize>,
    range_columns: Vec<usize>,
}

impl Table {
    /// Derives the handle of a catalog record.
    pub fn new(record: TableRecord) -> Result<Self> {
        let current = record
            .versions
            .last()
            .ok_or_else(|| corruption!("table {} has no schema version", record.name))?;
        let mut packings =
            HashMap::with_capacity_and_hasher(record.versions.len(), IdHash::default());
        for version in &record.versions {
            packings.insert(version.version, schema_packing(version, &record.options)?);
        }
        let prefix = table_prefix(&record.options, record.id);
        let mut prefix_bytes = Vec::new();
        prefix.encode_to(&mut prefix_bytes);
        let columns = &current.columns;
        let index_where = |f: fn(ColumnKind) -> bool| -> Vec<usize> {
            (0..columns.len()).filter(|&i| f(columns[i].kind)).collect()
        };
        let hash_columns = index_where(|k| k == ColumnKind::Hash);
        let range_columns = index_where(|k| matches!(k, ColumnKind::Range(_)));
        let by_name = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        let by_id = columns.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        Ok(Table {
            record,
            prefix,
            prefix_bytes,
            packings,
            by_name,
            by_id,
            hash_columns,
            range_columns,
        })
    }

    /// The catalog record.
    pub fn record(&self) -> &TableRecord {
        &self.record
    }

    /// Catalog id.
    pub fn id(&self) -> u32 {
        self.record.id
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.record.name
    }

    /// Namespace name.
    pub fn namespace(&self) -> &str {
        &self.record.namespace
    }

    /// Properties.
    pub fn options(&self) -> &TableOptions {
        &self.record.options
    }

    /// YCQL or YSQL.
    pub fn flavour(&self) -> Flavour {
        self.record.options.flavour
    }

    /// The current schema version.
    pub fn schema(&self) -> &SchemaVersion {
        // `new` checked that there is one.
        &self.record.versions[self.record.versions.len() - 1]
    }

    /// The current columns in schema order.
    pub fn columns(&self) -> &[Column] {
        &self.schema().columns
    }

    /// The current column called `name`.
    pub fn column(&self, name: &str) -> Result<&Column> {
        Ok(&self.columns()[self.column_position(name)?])
    }

    /// Index in [`Self::columns`] of the current column called `name`.
    pub fn column_position(&self, name: &str) -> Result<usize> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| Error::NotFound(format!("column {name} of table {}", self.name())))
    }

    /// The current column with id `id` (`None` if it was dropped or never existed).
    pub fn column_by_id(&self, id: i32) -> Option<&Column> {
        self.by_id.get(&id).map(|&i| &self.columns()[i])
    }

    /// Index of a current column in [`Self::columns`].
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The hash key columns in key order.
    pub fn hash_columns(&self) -> impl Iterator<Item = &Column> {
        self.hash_columns.iter().map(|&i| &self.columns()[i])
    }

    /// The range key columns in key order.
    pub fn range_columns(&self) -> impl Iterator<Item = &Column> {
        self.range_columns.iter().map(|&i| &self.columns()[i])
    }

    /// Number of hash key columns.
    pub fn num_hash_columns(&self) -> usize {
        self.hash_columns.len()
    }

    /// Number of range key columns.
    pub fn num_range_columns(&self) -> usize {
        self.range_columns.len()
    }

    /// The packing of schema version `version`.
    pub fn packing(&self, version: u32) -> Option<&SchemaPacking> {
        self.packings.get(&version)
    }

    /// The key prefix of the table's rows.
    pub fn prefix(&self) -> TablePrefix {
        self.prefix
    }

    /// The encoded key prefix (empty for a table that owns its key space).
    pub fn prefix_bytes(&self) -> &[u8] {
        &self.prefix_bytes
    }

    /// Whether any column is static.
    pub fn has_static_columns(&self) -> bool {
        self.columns().iter().any(|c| c.kind == ColumnKind::Static)
    }

    /// The 16-bit hash of the hash key values (format.md §6).
    pub fn hash_code(&self, hash_values: &[Datum]) -> Result<u16> {
        let mut input = Vec::with_capacity(32);
        for (column, value) in self.hash_columns().zip(hash_values) {
            if value.is_null() {
                return Err(invalid!("hash key column {} cannot be null", column.name));
            }
            value.check(&column.data_type)?;
            append_hash_input(value, &column.data_type, &mut input)?;
        }
        Ok(dockv::hash::yb_hash16(&input))
    }

    /// The DocKey of the row whose key column values (hash columns, then range columns, in
    /// key order) are `key`.
    pub fn doc_key(&self, key: &[Datum]) -> Result<DocKey> {
        let (hashed, range) = self.split_key(key)?;
        let range = self.range_entries(range)?;
        self.doc_key_with(hashed, range)
    }

    /// Appends the encoded DocKey of the row whose key column values are `key` to `out`.
    pub fn encode_doc_key(&self, key: &[Datum], out: &mut Vec<u8>) -> Result<()> {
        self.doc_key(key)?.encode_to(out);
        Ok(())
    }

    /// The DocKey holding the static columns of a hash key: the hash part only.
    pub fn static_doc_key(&self, hash_values: &[Datum]) -> Result<DocKey> {
        if hash_values.len() != self.num_hash_columns() {
            return Err(invalid!("static columns need every hash key column"));
        }
        self.doc_key_with(hash_values, Vec::new())
    }

    fn doc_key_with(&self, hashed: &[Datum], range: Vec<dockv::KeyEntryValue>) -> Result<DocKey> {
        let key = if self.hash_columns.is_empty() {
            DocKey::from_range(range)
        } else {
            let hash = self.hash_code(hashed)?;
            let entries = self
                .hash_columns()
                .zip(hashed)
                .map(|(c, v)| to_key_entry(v, &c.data_type, dockv::SortOrder::Ascending, false))
                .collect::<Result<_>>()?;
            DocKey::with_hash(hash, entries, range)
        };
        Ok(key.with_prefix(self.prefix))
    }

    /// Splits full key values into the hash and range parts, checking the count.
    pub fn split_key<'k>(&self, key: &'k [Datum]) -> Result<(&'k [Datum], &'k [Datum])> {
        let want = self.num_hash_columns() + self.num_range_columns();
        if key.len() != want {
            return Err(invalid!(
                "table {} has {want} key columns, {} values given",
                self.name(),
                key.len()
            ));
        }
        Ok(key.split_at(self.num_hash_columns()))
    }

    /// The key components of range column values (a prefix of the range columns).
    pub fn range_entries(&self, values: &[Datum]) -> Result<Vec<dockv::KeyEntryValue>> {
        self.range_columns()
            .zip(values)
            .map(|(c, v)| self.range_entry(c, v))
            .collect()
    }

    /// The key component of one range column value.
    pub fn range_entry(&self, column: &Column, value: &Datum) -> Result<dockv::KeyEntryValue> {
        let ColumnKind::Range(order) = column.kind else {
            return Err(invalid!("{} is not a range column", column.name));
        };
        if value.is_null() && self.flavour() == Flavour::Ycql {
            return Err(invalid!("range key column {} cannot be null", column.name));
        }
        value.check(&column.data_type)?;
        to_key_entry(
            value,
            &column.data_type,
            order.sort_order(),
            !order.nulls_first,
        )
    }

    /// The key column values of an encoded DocKey of this table, hash columns first.
    pub fn decode_key(&self, doc_key: &[u8]) -> Result<Vec<Datum>> {
        let (key, rest) = DocKey::decode(doc_key)?;
        if !rest.is_empty() || key.prefix != self.prefix {
            return Err(corruption!("key does not belong to table {}", self.name()));
        }
        if key.hashed.len() != self.num_hash_columns() || key.range.len() > self.num_range_columns()
        {
            return Err(corruption!(
                "key of the wrong shape for table {}",
                self.name()
            ));
        }
        let mut out = Vec::with_capacity(self.num_hash_columns() + self.num_range_columns());
        for (c, e) in self.hash_columns().zip(&key.hashed) {
            out.push(from_key_entry(e, &c.data_type)?);
        }
        for (c, e) in self.range_columns().zip(&key.range) {
            out.push(from_key_entry(e, &c.data_type)?);
        }
        Ok(out)
    }

    /// Whether an encoded DocKey is the static row of a partition (hash part, no range
    /// components, in a table with range columns).
    pub fn is_static_key(&self, doc_key: &[u8]) -> bool {
        !self.range_columns.is_empty()
            && self.num_hash_columns() > 0
            && doc_key.ends_with(b"!!")
            && DocKey::decode(doc_key).is_ok_and(|(k, _)| k.range.is_empty())
    }

    /// The encoded key of the table-level tombstone of a colocated table (`prefix !`).
    pub fn table_tombstone_key(&self) -> Option<Vec<u8>> {
        if self.prefix_bytes.is_empty() {
            return None;
        }
        let mut key = self.prefix_bytes.clone();
        key.push(dockv::KeyEntryType::GroupEnd.as_u8());
        Some(key)
    }
}
