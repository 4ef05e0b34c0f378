//! [`TableDb`]: tables over one [`DocDb`], with their catalog stored in it.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use docdb::{
    DocDb, InitMarkerBehavior, Probed, ReadOptions, SweepStats, Upkeep, UpkeepOptions, UpkeepRound,
};
use dockv::doc_key::DocKey;
use dockv::value::{PrimitiveValue, Value};
use dockv::{DocHybridTime, HybridTime, KeyEntryValue};
use engine::{Engine, EngineIterator, IterOptions};

use crate::catalog::{AlterTable, Catalog};
use crate::error::{Result, invalid};
use crate::query::{ResultPage, ScanFrom, Select, paged_bounds};
use crate::read::{Cell, ReadContext, RowBuffers, read_row_into};
use crate::repack::TableGcRules;
use crate::row::{RowValues, assemble_into};
use crate::schema::{Flavour, TableSpec};
use crate::table::Table;
use crate::types::Datum;
use crate::write::{TableBatch, make_row_id};

/// Tables stored in one DocDb: the catalog, row writes, reads and scans.
///
/// The DocDb must use optional init markers (the YCQL/YSQL layout). Every write and read
/// takes an explicit hybrid time, so callers control time (tests) or take it from
/// [`DocDb::write_now`] / [`DocDb::safe_time`] (servers).
pub struct TableDb<E: Engine> {
    db: DocDb<E>,
    catalog: RwLock<Catalog>,
    row_ids: AtomicU64,
    /// The tables' GC rules, registered with the DocDb's GC policy.
    gc_rules: Arc<TableGcRules>,
}

impl<E: Engine> TableDb<E> {
    /// Opens the tables of `db`, loading the catalog stored in it.
    pub fn open(db: DocDb<E>) -> Result<Self> {
        if db.options().init_markers != InitMarkerBehavior::Optional {
            return Err(invalid!("tables need a DocDb with optional init markers"));
        }
        let catalog = Catalog::load(&db)?;
        let gc_rules = Arc::new(TableGcRules::default());
        gc_rules.update(catalog.tables());
        db.gc_policy().set_table_rules(gc_rules.clone());
        Ok(TableDb {
            db,
            catalog: RwLock::new(catalog),
            row_ids: AtomicU64::new(0),
            gc_rules,
        })
    }

    /// Runs `ddl` on the catalog, then gives the GC the tables' new rules.
    fn change_catalog<T>(&self, ddl: impl FnOnce(&mut Catalog) -> Result<T>) -> Result<T> {
        let mut catalog = self.catalog_mut();
        let result = ddl(&mut catalog);
        self.gc_rules.update(catalog.tables());
        result
    }

    /// The document layer.
    pub fn docdb(&self) -> &DocDb<E> {
        &self.db
    }

    /// Closes the table layer and returns the DocDb (to reopen it).
    pub fn into_docdb(self) -> DocDb<E> {
        self.db
    }

    fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    fn catalog_mut(&self) -> RwLockWriteGuard<'_, Catalog> {
        self.catalog.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates a namespace (keyspace / database).
    pub fn create_namespace(&self, name: &str) -> Result<()> {
        self.catalog_mut().create_namespace(&self.db, name)
    }

    /// Drops an empty namespace.
    pub fn drop_namespace(&self, name: &str) -> Result<()> {
        self.catalog_mut().drop_namespace(&self.db, name)
    }

    /// Namespace names, sorted.
    pub fn namespaces(&self) -> Vec<String> {
        self.catalog().namespaces().map(str::to_string).collect()
    }

    /// Creates a table.
    pub fn create_table(&self, namespace: &str, spec: &TableSpec) -> Result<Arc<Table>> {
        self.change_catalog(|catalog| catalog.create_table(&self.db, namespace, spec))
    }

    /// The current handle of `namespace.name`.
    pub fn table(&self, namespace: &str, name: &str) -> Result<Arc<Table>> {
        self.catalog().table(namespace, name)
    }

    /// Every table.
    pub fn tables(&self) -> Vec<Arc<Table>> {
        self.catalog().tables().cloned().collect()
    }

    /// Reads the runs of documents and rows deleted since the last sweep, for every kind of
    /// scan run so far, SELECTs on each table included, so that the first scan after a mass
    /// delete skips them with a seek each; stops once `budget` has passed and leaves the
    /// rest for the next sweep. See [`DocDb::sweep_deleted_with`]; a server runs it in the
    /// background now and then.
    pub fn sweep_deleted(&self, budget: Option<Duration>) -> Result<SweepStats> {
        self.db
            .sweep_deleted_with(budget, |table_id, doc_key, read_ht, deadline| {
                // A table dropped since its scans ran has no rows left to keep runs of.
                let Some(table) = self.catalog().table_by_id(table_id) else {
                    return Ok(Probed::NotMine);
                };
                self.probe_rows(&table, doc_key, read_ht, deadline)
            })
    }

    /// One round of background upkeep: [`DocDb::maintain`], then [`Self::sweep_deleted`]
    /// within `sweep_budget`, rows included (see [`DocDb::upkeep_round`]).
    pub fn upkeep_round(&self, sweep_budget: Duration) -> Result<UpkeepRound> {
        UpkeepRound::of(
            self.db.maintain().map_err(Into::into),
            self.sweep_deleted(Some(sweep_budget)),
        )
    }

    /// Starts a thread running [`Self::upkeep_round`] every `options.every` until the
    /// returned handle is dropped, or the database is (see [`docdb::upkeep`]).
    pub fn start_upkeep(self: &Arc<Self>, options: UpkeepOptions) -> Result<Upkeep> {
        let upkeep = Upkeep::spawn(
            "docdb-table-upkeep",
            self,
            options.every,
            move |db: &Self| db.upkeep_round(options.sweep_budget),
        )?;
        Ok(upkeep)
    }

    /// ALTER TABLE: the new schema version's handle.
    pub fn alter_table(
        &self,
        namespace: &str,
        name: &str,
        change: AlterTable,
    ) -> Result<Arc<Table>> {
        self.change_catalog(|catalog| {
            let id = catalog.table(namespace, name)?.id();
            catalog.alter_table(&self.db, id, change)
        })
    }

    /// TRUNCATE at `ht`: a colocated table gets a table-level tombstone (format.md §3); a
    /// table owning its key space gets a row tombstone on every row.
    pub fn truncate_table(&self, namespace: &str, name: &str, ht: HybridTime) -> Result<()> {
        let table = self.table(namespace, name)?;
        self.delete_all_rows(&table, ht)
    }

    /// DROP TABLE at `ht`: its rows are deleted as by TRUNCATE, then its catalog record.
    pub fn drop_table(&self, namespace: &str, name: &str, ht: HybridTime) -> Result<()> {
        self.change_catalog(|catalog| {
            let table = catalog.table(namespace, name)?;
            self.delete_all_rows(&table, ht)?;
            catalog.remove_table(&self.db, table.id())
        })
    }

    fn delete_all_rows(&self, table: &Table, ht: HybridTime) -> Result<()> {
        let mut batch = self.db.batch(ht);
        if let Some(key) = table.table_tombstone_key() {
            batch.set_encoded_path(key, Value::tombstone())?;
        } else {
            let mut iter = self.db.engine().iterator(IterOptions::new())?;
            let mut doc_keys = Vec::new();
            let mut next = crate::query::table_lower(table);
            loop {
                iter.seek(&next);
                let Some(doc_key) = crate::query::next_doc_key(table, &mut iter, None)? else {
                    break;
                };
                next = doc_key.clone();
                next.push(0xFF);
                doc_keys.push(doc_key);
            }
            for doc_key in doc_keys {
                batch.set_encoded_path(doc_key, Value::tombstone())?;
            }
        }
        batch.commit()?;
        Ok(())
    }

    /// A new batch of row operations at `ht`.
    pub fn batch(&self, ht: HybridTime) -> TableBatch<'_, E> {
        TableBatch::new(self, ht)
    }

    /// How rows of `table` are read at `read_ht` (its TTL rules and table tombstone).
    pub(crate) fn read_context(&self, table: &Table, read_ht: HybridTime) -> Result<ReadContext> {
        let mut table_tombstone = DocHybridTime::MIN;
        if let Some(key) = table.table_tombstone_key()
            && let Some(record) = self.db.visible_record(&key, ReadOptions::at(read_ht))?
            && record.payload.is_tombstone()
        {
            table_tombstone = record.time;
        }
        Ok(ReadContext {
            read_ht,
            table_ttl: table.options().default_ttl,
            check_ttl: table.flavour() == Flavour::Ycql,
            table_tombstone,
        })
    }

    /// The visible records of one document (an encoded DocKey of `table`).
    pub(crate) fn read_cells(&self, doc_key: &[u8], ctx: &ReadContext) -> Result<Vec<Cell>> {
        self.reader().read_cells(doc_key, ctx)
    }

    /// A reader for many point reads, sharing one engine iterator.
    pub fn reader(&self) -> RowReader<'_, E> {
        RowReader {
            tdb: self,
            iter: None,
            doc_key: Vec::new(),
            upper: Vec::new(),
            bufs: RowBuffers::default(),
            values: RowValues::default(),
        }
    }

    /// The non-key values of the row with full key `key` (hash then range values) as of
    /// `read_ht`, with write times and TTLs; `None` if the row does not exist. For many
    /// reads, [`RowReader::row_values`] is cheaper.
    pub fn row_values(
        &self,
        table: &Table,
        key: &[Datum],
        read_ht: HybridTime,
    ) -> Result<Option<RowValues>> {
        self.reader().row_values(table, key, read_ht)
    }

    /// The live elements of list column `column_id` of the row at `doc_key`, in list order:
    /// `(array index, value)`.
    pub(crate) fn list_elements(
        &self,
        table: &Table,
        doc_key: &[u8],
        column_id: i32,
        read_ht: HybridTime,
    ) -> Result<Vec<(i64, PrimitiveValue)>> {
        let ctx = self.read_context(table, read_ht)?;
        let column = KeyEntryValue::ColumnId(column_id).encoded();
        let mut out = Vec::new();
        for cell in self.read_cells(doc_key, &ctx)? {
            if cell.depth() != 2 || cell.first_subkey() != Some(&column[..]) || !cell.is_live() {
                continue;
            }
            let start = cell.ends.first().copied().unwrap_or(0);
            if let Some(bytes) = cell.subkeys.get(start..)
                && let Ok(KeyEntryValue::ArrayIndex(index)) = KeyEntryValue::decode_exact(bytes)
            {
                out.push((index, cell.payload));
            }
        }
        Ok(out)
    }

    /// The array indexes of the live elements of a list column, in list order.
    pub(crate) fn list_indexes(
        &self,
        table: &Table,
        doc_key: &[u8],
        column_id: i32,
        read_ht: HybridTime,
    ) -> Result<Vec<i64>> {
        Ok(self
            .list_elements(table, doc_key, column_id, read_ht)?
            .into_iter()
            .map(|(i, _)| i)
            .collect())
    }

    /// A fresh `ybrowid` for a row inserted at `ht`.
    pub(crate) fn next_row_id(&self, ht: HybridTime) -> Datum {
        make_row_id(ht, &self.row_ids)
    }

    /// Every stored record in key order, one `key -> value` line each, like
    /// [`DocDb::dump`] but with packed rows decoded with their table's schema version:
    /// `{ <column id>: <value> ... }` (YugabyteDB's packed-row dump form).
    pub fn dump(&self) -> Result<String> {
        let tables = self.tables();
        let mut iter = self
            .db
            .engine()
            .iterator(IterOptions::new().lower(b"$".to_vec()).fill_cache(false))?;
        iter.seek(b"$");
        let mut out = String::new();
        while iter.valid()? {
            let key = dockv::doc_key::format_key(iter.key())
                .unwrap_or_else(|e| format!("<undecodable key: {e}>"));
            let value = crate::dump::format_value(&tables, iter.key(), iter.value());
            out.push_str(&format!("{key} -> {value}\n"));
            iter.next();
        }
        Ok(out)
    }
}

/// Whether the DocKey of `key` decodes (used to skip foreign records).
pub(crate) fn doc_key_len(key: &[u8]) -> Result<usize> {
    Ok(DocKey::encoded_len(key)?)
}

/// Point reads of rows that share one engine iterator: each read re-aims it
/// ([`EngineIterator::reset`]) instead of building a new one, which on RocksDB saves the
/// iterator tree's construction per read. Every read still sees the latest committed
/// writes. Keep one per query or per batch of requests rather than forever: between reads it
/// holds RocksDB's view of the memtables and files it last read, keeping them from being freed.
pub struct RowReader<'a, E: Engine> {
    tdb: &'a TableDb<E>,
    iter: Option<E::Iter<'a>>,
    /// The current document's key and upper bound, reused across reads.
    doc_key: Vec<u8>,
    upper: Vec<u8>,
    /// The current document's cells and read buffers, reused across reads.
    bufs: RowBuffers,
    /// The row [`Self::row`] lends out, its map reused across reads.
    values: RowValues,
}

impl<'a, E: Engine> RowReader<'a, E> {
    /// The non-key values of the row with full key `key` as of `read_ht`, as
    /// [`TableDb::row_values`], lent until the next read: the cheapest point read, since
    /// nothing is allocated for the row but its values.
    pub fn row(
        &mut self,
        table: &Table,
        key: &[Datum],
        read_ht: HybridTime,
    ) -> Result<Option<&RowValues>> {
        self.doc_key.clear();
        table.encode_doc_key(key, &mut self.doc_key)?;
        let exists = self.read_values(table, read_ht)?;
        Ok(exists.then_some(&self.values))
    }

    /// The non-key values of the row with full key `key` as of `read_ht`, as
    /// [`TableDb::row_values`].
    pub fn row_values(
        &mut self,
        table: &Table,
        key: &[Datum],
        read_ht: HybridTime,
    ) -> Result<Option<RowValues>> {
        if self.row(table, key, read_ht)?.is_none() {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut self.values)))
    }

    /// Whether the row at `doc_key` (an encoded DocKey of `table`) exists at `read_ht`.
    pub(crate) fn row_exists(
        &mut self,
        table: &Table,
        doc_key: &[u8],
        read_ht: HybridTime,
    ) -> Result<bool> {
        self.doc_key.clear();
        self.doc_key.extend_from_slice(doc_key);
        self.read_values(table, read_ht)
    }

    /// The visible records of one document (an encoded DocKey).
    pub(crate) fn read_cells(&mut self, doc_key: &[u8], ctx: &ReadContext) -> Result<Vec<Cell>> {
        self.doc_key.clear();
        self.doc_key.extend_from_slice(doc_key);
        self.read_doc_cells(ctx)?;
        Ok(std::mem::take(&mut self.bufs.cells))
    }

    /// Reads the row at `self.doc_key` into `self.values`; returns whether it exists.
    fn read_values(&mut self, table: &Table, read_ht: HybridTime) -> Result<bool> {
        let ctx = self.tdb.read_context(table, read_ht)?;
        self.read_doc_cells(&ctx)?;
        assemble_into(table, &self.bufs.cells, &ctx, &mut self.values)?;
        Ok(self.values.exists)
    }

    /// Runs a SELECT like [`TableDb::select`], on the reader's iterator.
    pub fn select(&mut self, table: &Table, select: &Select) -> Result<ResultPage> {
        let (lower, upper) = paged_bounds(table, select)?;
        let walk = self.tdb.span_walk(table, select);
        let iter = made_on_first_use(&mut self.iter, self.tdb)?;
        iter.reset(Some(&lower), upper.as_deref())?;
        let from = ScanFrom {
            iter,
            lower: &lower,
            walk,
        };
        self.tdb.select_on(from, table, select)
    }

    /// Reads the visible records of the document `self.doc_key` into `self.bufs.cells`.
    fn read_doc_cells(&mut self, ctx: &ReadContext) -> Result<()> {
        self.upper.clear();
        self.upper.extend_from_slice(&self.doc_key);
        self.upper.push(0xFF);
        let iter = made_on_first_use(&mut self.iter, self.tdb)?;
        iter.reset(Some(&self.doc_key), Some(&self.upper))?;
        read_row_into(iter, &self.doc_key, ctx, &mut self.bufs)
    }
}

/// A reader's iterator, made on first use (unbounded: every read resets it to its bounds).
fn made_on_first_use<'s, 'a, E: Engine>(
    slot: &'s mut Option<E::Iter<'a>>,
    tdb: &'a TableDb<E>,
) -> Result<&'s mut E::Iter<'a>> {
    let iter = match slot.take() {
        Some(iter) => iter,
        None => tdb.db.engine().iterator(IterOptions::new())?,
    };
    Ok(slot.insert(iter))
}
