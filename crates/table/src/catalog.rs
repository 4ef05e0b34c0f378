//! The persistent catalog: namespaces, tables and their schema versions, stored as metadata
//! records of the same DocDb (`DocDb::put_meta`, outside the document key space) so that
//! reopening the database finds every table.
//!
//! Records (names, then JSON values):
//! - `table.ns.<namespace>` → `{"name": …}`
//! - `table.t.<id as 8 hex digits>` → the [`TableRecord`], every schema version included, so
//!   one DDL statement is one atomic record write
//! - `table.next_id` → the next table id, decimal (ids are never reused)

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use docdb::DocDb;
use engine::Engine;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, corruption, invalid};
use crate::schema::{ColumnSpec, TableSpec, add_column, drop_column, initial_schema};
use crate::table::{Table, TableRecord};

const NAMESPACE_PREFIX: &str = "table.ns.";
const TABLE_PREFIX: &str = "table.t.";
const NEXT_ID: &str = "table.next_id";

#[derive(Debug, Serialize, Deserialize)]
struct NamespaceRecord {
    name: String,
}

/// A schema change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterTable {
    /// `ADD column`: a regular or static column with a new id.
    AddColumn(ColumnSpec),
    /// `DROP column`: its data is ignored on reads from now on.
    DropColumn(String),
}

/// The in-memory catalog; every change is written through to the database first.
#[derive(Debug, Default)]
pub struct Catalog {
    namespaces: BTreeSet<String>,
    tables: BTreeMap<u32, Arc<Table>>,
    next_table_id: u32,
}

impl Catalog {
    /// Reads every catalog record of `db`.
    pub fn load<E: Engine>(db: &DocDb<E>) -> Result<Self> {
        let mut catalog = Catalog {
            next_table_id: 1,
            ..Catalog::default()
        };
        for (name, value) in db.scan_meta(NAMESPACE_PREFIX.as_bytes())? {
            let record: NamespaceRecord = decode_json(&name, &value)?;
            catalog.namespaces.insert(record.name);
        }
        for (name, value) in db.scan_meta(TABLE_PREFIX.as_bytes())? {
            let record: TableRecord = decode_json(&name, &value)?;
            catalog.next_table_id = catalog.next_table_id.max(record.id + 1);
            catalog
                .tables
                .insert(record.id, Arc::new(Table::new(record)?));
        }
        if let Some((_, value)) = db.scan_meta(NEXT_ID.as_bytes())?.into_iter().next() {
            let next = std::str::from_utf8(&value)
                .ok()
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or_else(|| corruption!("catalog record {NEXT_ID} is not a number"))?;
            catalog.next_table_id = catalog.next_table_id.max(next);
        }
        Ok(catalog)
    }

    /// Namespace names.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.iter().map(String::as_str)
    }

    /// Every table.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<Table>> {
        self.tables.values()
    }

    /// The table `namespace.name`.
    pub fn table(&self, namespace: &str, name: &str) -> Result<Arc<Table>> {
        self.tables
            .values()
            .find(|t| t.namespace() == namespace && t.name() == name)
            .cloned()
            .ok_or_else(|| Error::NotFound(format!("table {namespace}.{name}")))
    }

    /// The table with catalog id `id`.
    pub fn table_by_id(&self, id: u32) -> Option<Arc<Table>> {
        self.tables.get(&id).cloned()
    }

    /// Creates a namespace.
    pub fn create_namespace<E: Engine>(&mut self, db: &DocDb<E>, name: &str) -> Result<()> {
        if self.namespaces.contains(name) {
            return Err(Error::AlreadyExists(format!("namespace {name}")));
        }
        let record = encode_json(&NamespaceRecord { name: name.into() })?;
        db.put_meta(
            format!("{NAMESPACE_PREFIX}{name}").as_bytes(),
            Some(&record),
        )?;
        self.namespaces.insert(name.into());
        Ok(())
    }

    /// Drops an empty namespace.
    pub fn drop_namespace<E: Engine>(&mut self, db: &DocDb<E>, name: &str) -> Result<()> {
        if !self.namespaces.contains(name) {
            return Err(Error::NotFound(format!("namespace {name}")));
        }
        if self.tables.values().any(|t| t.namespace() == name) {
            return Err(invalid!("namespace {name} still has tables"));
        }
        db.put_meta(format!("{NAMESPACE_PREFIX}{name}").as_bytes(), None)?;
        self.namespaces.remove(name);
        Ok(())
    }

    /// Creates a table at schema version 0.
    pub fn create_table<E: Engine>(
        &mut self,
        db: &DocDb<E>,
        namespace: &str,
        spec: &TableSpec,
    ) -> Result<Arc<Table>> {
        if !self.namespaces.contains(namespace) {
            return Err(Error::NotFound(format!("namespace {namespace}")));
        }
        if self.table(namespace, &spec.name).is_ok() {
            return Err(Error::AlreadyExists(format!(
                "table {namespace}.{}",
                spec.name
            )));
        }
        let version = initial_schema(spec)?;
        let id = self.next_table_id;
        let record = TableRecord {
            id,
            namespace: namespace.into(),
            name: spec.name.clone(),
            options: spec.options.clone(),
            next_column_id: i32::try_from(version.columns.len())
                .map_err(|_| invalid!("too many columns"))?,
            versions: vec![version],
        };
        let table = Table::new(record)?;
        self.check_key_space(&table)?;
        db.put_meta(NEXT_ID.as_bytes(), Some((id + 1).to_string().as_bytes()))?;
        self.next_table_id = id + 1;
        self.store(db, table)
    }

    /// A table's rows must not share keys with another table's.
    fn check_key_space(&self, table: &Table) -> Result<()> {
        let clash = self
            .tables
            .values()
            .find(|t| t.prefix_bytes() == table.prefix_bytes());
        match clash {
            None => Ok(()),
            Some(other) if table.prefix_bytes().is_empty() => Err(invalid!(
                "table {} already owns the un-prefixed key space of this database; \
                 create {} as a colocated table",
                other.name(),
                table.name()
            )),
            Some(other) => Err(Error::AlreadyExists(format!(
                "colocation id of table {} (used by {})",
                table.name(),
                other.name()
            ))),
        }
    }

    /// Applies a schema change, producing the next schema version.
    pub fn alter_table<E: Engine>(
        &mut self,
        db: &DocDb<E>,
        id: u32,
        change: AlterTable,
    ) -> Result<Arc<Table>> {
        let table = self
            .tables
            .get(&id)
            .ok_or_else(|| Error::NotFound(format!("table id {id}")))?;
        let mut record = table.record().clone();
        let current = table.schema();
        let next = match change {
            AlterTable::AddColumn(column) => {
                let next = add_column(current, column, record.next_column_id, &record.options)?;
                record.next_column_id += 1;
                next
            }
            AlterTable::DropColumn(name) => drop_column(current, &name)?,
        };
        record.versions.push(next);
        self.store(db, Table::new(record)?)
    }

    /// Removes a table's catalog record (its rows are deleted by the caller).
    pub fn remove_table<E: Engine>(&mut self, db: &DocDb<E>, id: u32) -> Result<()> {
        db.put_meta(table_meta_name(id).as_bytes(), None)?;
        self.tables.remove(&id);
        Ok(())
    }

    fn store<E: Engine>(&mut self, db: &DocDb<E>, table: Table) -> Result<Arc<Table>> {
        let value = encode_json(table.record())?;
        db.put_meta(table_meta_name(table.id()).as_bytes(), Some(&value))?;
        let table = Arc::new(table);
        self.tables.insert(table.id(), table.clone());
        Ok(table)
    }
}

fn table_meta_name(id: u32) -> String {
    format!("{TABLE_PREFIX}{id:08x}")
}

fn encode_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| invalid!("cannot encode catalog record: {e}"))
}

fn decode_json<T: for<'de> Deserialize<'de>>(name: &[u8], value: &[u8]) -> Result<T> {
    serde_json::from_slice(value)
        .map_err(|e| corruption!("catalog record {}: {e}", dockv::escape::format_bytes(name)))
}
