//! Row operations as DocDB writes (format.md §8, §9, §11), YCQL semantics with the YSQL
//! differences:
//!
//! - INSERT writes the liveness column (`SystemColumnId(0)` → null) and the given columns;
//!   in a packed table it writes one packed row instead (which implies liveness), plus
//!   separate cells for what is not packed (collections, jsonb, statics, oversized values).
//!   A packed row hides every older cell of the row, so a YCQL INSERT (an upsert: columns it
//!   leaves out keep their values) is packed only when it gives every non-static column; a
//!   YSQL INSERT always writes a whole new row.
//! - UPDATE writes only the columns (no liveness); a YSQL UPDATE of a missing row does
//!   nothing.
//! - A NULL column value is a tombstone; DELETE of columns writes column tombstones, DELETE
//!   of a row a row tombstone (with `USING TIMESTAMP`: a tombstone per column and on the
//!   liveness column). A range DELETE (the hash key and at most part of the range key) reads
//!   the matching rows and tombstones each, the partition's static row too when only the
//!   hash key is given; there is no partition-level tombstone in YugabyteDB's format.
//! - An INSERT of the hash key and static columns only writes the partition's static row.
//! - USING TTL / USING TIMESTAMP become the `t` / `u` control fields of every value written
//!   (YCQL repeats them per column inside a V1 packed row).
//! - Collections: a replace writes an init marker (`{` map/set, `A` list) then the elements;
//!   additions write elements; removals write element tombstones; list positions
//!   (`l[i]`) are resolved against the list as stored at the batch's hybrid time.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use docdb::DocWriteBatch;
use dockv::doc_key::DocKey;
use dockv::packed_row::{RowPackerV1, RowPackerV2};
use dockv::value::{PrimitiveValue, Ttl, Value, ValueControlFields};
use dockv::{HybridTime, KeyEntryValue, SortOrder};
use engine::Engine;
use serde_json::Value as Json;

use crate::codec::{to_key_entry, to_value, with_packed_v2};
use crate::db::{RowReader, TableDb};
use crate::error::{Error, Result, invalid};
use crate::query::{PagingState, RangeCondition, Select};
use crate::row::IdHash;
use crate::schema::{Column, ColumnKind, Flavour, PackedFormat};
use crate::table::Table;
use crate::types::{DataType, Datum};

/// Statement options: `USING TTL`, `USING TIMESTAMP`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `USING TTL`: `Ttl::RESET` (0) = never expires, even under a table TTL.
    pub ttl: Option<Ttl>,
    /// `USING TIMESTAMP`: the user timestamp in µs (YCQL).
    pub timestamp: Option<i64>,
}

impl WriteOptions {
    /// `USING TTL secs`.
    pub fn ttl_secs(secs: i64) -> Self {
        WriteOptions {
            ttl: Some(Ttl::from_secs(secs)),
            timestamp: None,
        }
    }

    /// `USING TIMESTAMP micros`.
    pub fn timestamp(micros: i64) -> Self {
        WriteOptions {
            ttl: None,
            timestamp: Some(micros),
        }
    }

    fn control(&self) -> ValueControlFields {
        ValueControlFields {
            ttl: self.ttl,
            user_timestamp: self.timestamp,
            ..ValueControlFields::default()
        }
    }
}

/// One column change of an UPDATE.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// `c = v`: NULL deletes; a collection or jsonb value replaces the whole column.
    Set(Datum),
    /// `m = m + {k: v, …}` or `m[k] = v`.
    MapPut(Vec<(Datum, Datum)>),
    /// `s = s + {e, …}`.
    SetAdd(Vec<Datum>),
    /// `s = s - {e, …}`, or for a map `m = m - {k, …}` (keys).
    Remove(Vec<Datum>),
    /// `l = l + [e, …]`.
    Append(Vec<Datum>),
    /// `l = [e, …] + l`.
    Prepend(Vec<Datum>),
    /// `l = l - [e, …]`: every element equal to one of these is deleted.
    ListRemove(Vec<Datum>),
    /// `l[i] = v` (0-based among the live elements); NULL deletes the element.
    ListSet(usize, Datum),
    /// jsonb: replace the member at a path of names (`jsonb_set`, `j->'a'->'b' = v`).
    JsonSet(Vec<String>, Json),
    /// jsonb `j = j || '{…}'`: each top-level member of the object replaces the column's.
    JsonConcat(Json),
    /// jsonb `j = j - 'name'`.
    JsonRemove(String),
}

/// Row operations of one atomic write at one hybrid time. Created by [`TableDb::batch`];
/// nothing is stored until [`TableBatch::commit`].
pub struct TableBatch<'a, E: Engine> {
    tdb: &'a TableDb<E>,
    batch: DocWriteBatch<'a, E>,
    ht: HybridTime,
    /// Reads the batch's statements make (a YSQL INSERT's duplicate-key check), sharing one
    /// engine iterator across statements and [`Self::commit_and_continue`].
    reader: Option<RowReader<'a, E>>,
}

impl<'a, E: Engine> TableBatch<'a, E> {
    pub(crate) fn new(tdb: &'a TableDb<E>, ht: HybridTime) -> Self {
        TableBatch {
            tdb,
            batch: tdb.docdb().batch(ht),
            ht,
            reader: None,
        }
    }

    /// Writes everything atomically, like [`Self::commit`], and starts the next batch at
    /// `ht` on the same object, keeping its reader: a session writing one statement at a
    /// time saves building an engine iterator per statement. Returns the number of pairs.
    pub fn commit_and_continue(&mut self, ht: HybridTime) -> Result<usize> {
        let next = self.tdb.docdb().batch(ht);
        let done = std::mem::replace(&mut self.batch, next);
        self.ht = ht;
        Ok(done.commit()?)
    }

    /// Whether the row at `doc_key` exists at the batch's time (committed writes only).
    fn row_exists(&mut self, table: &Table, doc_key: &[u8]) -> Result<bool> {
        let tdb = self.tdb;
        let reader = self.reader.get_or_insert_with(|| tdb.reader());
        reader.row_exists(table, doc_key, self.ht)
    }

    /// The batch's hybrid time.
    pub fn hybrid_time(&self) -> HybridTime {
        self.ht
    }

    /// The pending pairs as YugabyteDB prints a write batch.
    pub fn explain(&self) -> String {
        self.batch.explain()
    }

    /// Writes everything atomically; returns the number of pairs.
    pub fn commit(self) -> Result<usize> {
        Ok(self.batch.commit()?)
    }

    /// INSERT: `values` name columns, the key columns included (a YSQL table without a
    /// primary key generates its `ybrowid` when it is not given).
    pub fn insert(
        &mut self,
        table: &Table,
        values: &[(&str, Datum)],
        opts: &WriteOptions,
    ) -> Result<()> {
        let resolved = resolve(table, values)?;
        if is_static_only(table, &resolved) {
            // `INSERT INTO t (h, s) VALUES (…)`: the static row alone, without liveness
            // (YugabyteDB builds no primary-key DocKey for it, so writes none).
            let hash = hash_values_of(table, &resolved)?;
            let path = table.static_doc_key(&hash)?.encode();
            for (column, datum) in &resolved {
                if column.kind == ColumnKind::Static {
                    self.write_column(&path, column, datum, opts)?;
                }
            }
            return Ok(());
        }
        let key = self.insert_key(table, &resolved)?;
        let (hash, _) = table.split_key(&key)?;
        let statics: Vec<&(&Column, &Datum)> = resolved
            .iter()
            .filter(|(c, _)| c.kind == ColumnKind::Static)
            .collect();
        if !statics.is_empty() {
            let path = table.static_doc_key(hash)?.encode();
            for (column, datum) in statics {
                self.write_column(&path, column, datum, opts)?;
            }
        }
        let regular: Vec<(&Column, &Datum)> = resolved
            .iter()
            .filter(|(c, _)| c.kind == ColumnKind::Regular)
            .copied()
            .collect();
        let doc_key = table.doc_key(&key)?.encode();
        if table.flavour() == Flavour::Ysql && self.row_exists(table, &doc_key)? {
            return Err(Error::AlreadyExists(format!(
                "duplicate key in table {}",
                table.name()
            )));
        }
        if self.should_pack(table, &regular) {
            self.insert_packed(table, &doc_key, &regular, opts)
        } else {
            self.insert_unpacked(table, &doc_key, &regular, opts)
        }
    }

    /// The full key of an INSERT, generating a `ybrowid` when the table has one and it is
    /// missing.
    fn insert_key(&self, table: &Table, resolved: &[(&Column, &Datum)]) -> Result<Vec<Datum>> {
        let mut key = Vec::new();
        for column in table.hash_columns().chain(table.range_columns()) {
            match resolved.iter().find(|(c, _)| c.id == column.id) {
                Some((_, datum)) => key.push((*datum).clone()),
                None if column.hidden => key.push(self.tdb.next_row_id(self.ht)),
                None => return Err(invalid!("INSERT needs key column {}", column.name)),
            }
        }
        Ok(key)
    }

    fn should_pack(&self, table: &Table, regular: &[(&Column, &Datum)]) -> bool {
        let options = table.options();
        if !options.packed {
            return false;
        }
        let Some(packing) = table.packing(table.schema().version) else {
            return false;
        };
        // A packed row hides every older cell of the row, so a YCQL INSERT (an upsert that
        // must keep the columns it leaves out) is packed only when it gives every column.
        let given = |id: i32| regular.iter().any(|(c, _)| c.id == id);
        options.flavour == Flavour::Ysql
            || (packing.columns().iter().all(|p| given(p.id))
                && packing.skipped_column_ids().all(|id| {
                    given(id)
                        || table
                            .column_by_id(id)
                            .is_some_and(|c| c.kind == ColumnKind::Static)
                }))
    }

    fn insert_unpacked(
        &mut self,
        table: &Table,
        doc_key: &[u8],
        regular: &[(&Column, &Datum)],
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut liveness = doc_key.to_vec();
        KeyEntryValue::LIVENESS_COLUMN.encode_to(&mut liveness);
        let control = opts.control();
        self.put(liveness, control, PrimitiveValue::Null)?;
        for (column, datum) in regular {
            // A new YSQL row has no old value for a NULL to delete.
            if datum.is_null() && table.flavour() == Flavour::Ysql {
                continue;
            }
            self.write_column(doc_key, column, datum, opts)?;
        }
        Ok(())
    }

    fn insert_packed(
        &mut self,
        table: &Table,
        doc_key: &[u8],
        regular: &[(&Column, &Datum)],
        opts: &WriteOptions,
    ) -> Result<()> {
        let values: ColumnValues = regular.iter().map(|(c, d)| (c.id, *d)).collect();
        let (packed, unpacked) = pack_row(table, &values, opts)?;
        self.batch.set_encoded_value(doc_key, &packed)?;
        for (column, datum) in regular {
            if unpacked.contains(&column.id) && !datum.is_null() {
                self.write_column(doc_key, column, datum, opts)?;
            }
        }
        Ok(())
    }

    /// UPDATE: `key` names the key columns (only the hash columns when every change is to a
    /// static column).
    pub fn update(
        &mut self,
        table: &Table,
        key: &[(&str, Datum)],
        updates: &[(&str, Update)],
        opts: &WriteOptions,
    ) -> Result<()> {
        let (row_key, static_key) = self.target_keys(table, key, updates.iter().map(|u| u.0))?;
        if table.flavour() == Flavour::Ysql {
            let exists = match &row_key {
                Some(k) => self.row_exists(table, k)?,
                None => true,
            };
            if !exists {
                return Ok(());
            }
        }
        for (name, update) in updates {
            let column = table.column(name)?;
            let doc_key = match column.kind {
                ColumnKind::Static => static_key.as_ref(),
                _ => row_key.as_ref(),
            }
            .ok_or_else(|| invalid!("UPDATE of {name} needs the full primary key"))?;
            self.apply_update(table, doc_key, column, update, opts)?;
        }
        Ok(())
    }

    /// DELETE of columns: a tombstone per column.
    pub fn delete_columns(
        &mut self,
        table: &Table,
        key: &[(&str, Datum)],
        columns: &[&str],
        opts: &WriteOptions,
    ) -> Result<()> {
        let (row_key, static_key) = self.target_keys(table, key, columns.iter().copied())?;
        for name in columns {
            let column = table.column(name)?;
            let doc_key = match column.kind {
                ColumnKind::Static => static_key.as_ref(),
                _ => row_key.as_ref(),
            }
            .ok_or_else(|| invalid!("DELETE of {name} needs the full primary key"))?;
            self.write_column(doc_key, column, &Datum::Null, opts)?;
        }
        Ok(())
    }

    /// DELETE of a row: a row tombstone at its DocKey (see [`Self::delete_doc`]).
    pub fn delete_row(
        &mut self,
        table: &Table,
        key: &[(&str, Datum)],
        opts: &WriteOptions,
    ) -> Result<()> {
        let key = key_values(table, key)?;
        let doc_key = table.doc_key(&key)?.encode();
        self.delete_doc(table, doc_key, opts)
    }

    /// `DELETE FROM t WHERE <every hash column> = …` in a table with range columns: every
    /// row of the partition and its static columns (see [`Self::delete_range`]). Returns
    /// the number of rows deleted, the static row counted as one.
    pub fn delete_partition(
        &mut self,
        table: &Table,
        hash_key: &[(&str, Datum)],
        opts: &WriteOptions,
    ) -> Result<usize> {
        self.delete_range(table, hash_key, None, opts)
    }

    /// A range DELETE, `DELETE FROM t WHERE <hash columns> = … [AND <leading range columns>
    /// = …] [AND <next range column> <comparison> …]`: `key` names every hash column and a
    /// prefix of the range columns, `range` bounds the next range column.
    ///
    /// As YugabyteDB's `QLWriteOperation::ApplyDelete` (`cql_operation.cc`) does it: the
    /// rows that exist at the batch's hybrid time and match are read in key order, and each
    /// gets its own row tombstone; when only the hash columns are given, the partition's
    /// static row (if it exists) is deleted too, first, as that scan meets it first
    /// (`include_static_columns_in_scan`). There is no partition-level tombstone: rows
    /// written later in the partition are unaffected. The whole DELETE is one atomic batch;
    /// see [`Self::delete_range_bounded`] for a large partition. Returns the number of rows
    /// deleted, a static row counted as one.
    pub fn delete_range(
        &mut self,
        table: &Table,
        key: &[(&str, Datum)],
        range: Option<&RangeCondition>,
        opts: &WriteOptions,
    ) -> Result<usize> {
        Ok(self
            .delete_range_bounded(table, key, range, usize::MAX, None, opts)?
            .deleted)
    }

    /// [`Self::delete_range`] with bounded progress: at most `max_rows` clustering rows in
    /// this batch, resuming after `resume` (the previous batch's [`DeleteProgress::resume`]).
    /// Each batch reads the rows as of its own hybrid time, so a range deleted in several
    /// batches is not atomic: a row written between two batches behind the resume point
    /// survives (YugabyteDB's own range delete takes no locks either). The static row goes
    /// with the first batch.
    pub fn delete_range_bounded(
        &mut self,
        table: &Table,
        key: &[(&str, Datum)],
        range: Option<&RangeCondition>,
        max_rows: usize,
        resume: Option<&PagingState>,
        opts: &WriteOptions,
    ) -> Result<DeleteProgress> {
        if max_rows == 0 {
            return Err(invalid!("a bounded DELETE needs max_rows > 0"));
        }
        let (hash, range_eq) = range_delete_key(table, key)?;
        if range_eq.len() == table.num_range_columns() {
            if range.is_some() {
                return Err(invalid!(
                    "a range condition needs a range column without one"
                ));
            }
            // The whole primary key: a plain row DELETE, existing or not.
            let doc_key = table.doc_key(&[hash, range_eq].concat())?.encode();
            self.delete_doc(table, doc_key, opts)?;
            return Ok(DeleteProgress {
                deleted: 1,
                resume: None,
            });
        }
        let mut deleted = 0;
        if range_eq.is_empty() && range.is_none() && resume.is_none() {
            let static_key = table.static_doc_key(&hash)?.encode();
            if table.has_static_columns() && self.row_exists(table, &static_key)? {
                self.delete_doc(table, static_key, opts)?;
                deleted += 1;
            }
        }
        let mut select = Select::all(self.ht).partition(hash).range_eq(range_eq);
        select.range = range.cloned();
        select.page_size = Some(max_rows);
        select.paging_state = resume.cloned();
        let (doc_keys, resume) = self
            .tdb
            .scan(table, &select, false, |found| found.doc_key.clone())?;
        for doc_key in doc_keys {
            self.delete_doc(table, doc_key, opts)?;
            deleted += 1;
        }
        Ok(DeleteProgress { deleted, resume })
    }

    /// Deletes the document `doc_key` as YugabyteDB's `QLWriteOperation::DeleteRow` does: a
    /// row tombstone; with `USING TIMESTAMP`, instead a tombstone carrying the timestamp on
    /// every non-key column of the current schema, then on the liveness column.
    fn delete_doc(&mut self, table: &Table, doc_key: Vec<u8>, opts: &WriteOptions) -> Result<()> {
        let Some(timestamp) = opts.timestamp else {
            return self.put(
                doc_key,
                ValueControlFields::default(),
                PrimitiveValue::Tombstone,
            );
        };
        let control = ValueControlFields {
            user_timestamp: Some(timestamp),
            ..ValueControlFields::default()
        };
        for column in table.columns().iter().filter(|c| !c.kind.is_key()) {
            self.put(
                column_path(&doc_key, column),
                control,
                PrimitiveValue::Tombstone,
            )?;
        }
        let mut liveness = doc_key;
        KeyEntryValue::LIVENESS_COLUMN.encode_to(&mut liveness);
        self.put(liveness, control, PrimitiveValue::Tombstone)
    }

    /// The row DocKey (when every key column is given) and the static DocKey (when the
    /// table has static columns and the hash columns are given).
    fn target_keys<'n>(
        &self,
        table: &Table,
        key: &[(&str, Datum)],
        columns: impl Iterator<Item = &'n str>,
    ) -> Result<TargetKeys> {
        for name in columns {
            if table.column(name)?.kind.is_key() {
                return Err(invalid!("key column {name} cannot be changed"));
            }
        }
        let row_key = match key_values(table, key) {
            Ok(values) => Some(table.doc_key(&values)?.encode()),
            Err(_) if table.has_static_columns() => None,
            Err(e) => return Err(e),
        };
        let static_key = if table.has_static_columns() {
            let hash = hash_values(table, key)?;
            Some(table.static_doc_key(&hash)?.encode())
        } else {
            None
        };
        Ok((row_key, static_key))
    }

    fn apply_update(
        &mut self,
        table: &Table,
        doc_key: &[u8],
        column: &Column,
        update: &Update,
        opts: &WriteOptions,
    ) -> Result<()> {
        if !matches!(update, Update::Set(_)) && opts.timestamp.is_some() {
            return Err(invalid!(
                "USING TIMESTAMP is only allowed when replacing a whole column"
            ));
        }
        let path = column_path(doc_key, column);
        let ty = &column.data_type;
        match (update, ty) {
            (Update::Set(datum), _) => self.write_column(doc_key, column, datum, opts),
            (Update::MapPut(entries), DataType::Map(k, v)) => {
                for (key, value) in entries {
                    self.put_element(&path, key, k, Some((value, &**v)), opts)?;
                }
                Ok(())
            }
            (Update::SetAdd(items), DataType::Set(e)) => {
                self.put_set_members(&path, items, e, opts)
            }
            (Update::Remove(items), DataType::Set(e) | DataType::Map(e, _)) => {
                for item in items {
                    self.put_element(&path, item, e, None, opts)?;
                }
                Ok(())
            }
            (Update::Append(items) | Update::Prepend(items), DataType::List(e)) => {
                let values = element_values(items, e)?;
                let prepend = matches!(update, Update::Prepend(_));
                self.batch.push_list(&path, &values, opts.ttl, prepend)?;
                Ok(())
            }
            (Update::ListSet(pos, datum), DataType::List(e)) => {
                let indexes = self.tdb.list_indexes(table, doc_key, column.id, self.ht)?;
                let index = *indexes.get(*pos).ok_or_else(|| {
                    invalid!("list {} has no element at position {pos}", column.name)
                })?;
                let mut element = path.clone();
                KeyEntryValue::ArrayIndex(index).encode_to(&mut element);
                self.put_value(element, datum, e, opts)
            }
            (Update::ListRemove(items), DataType::List(e)) => {
                self.remove_list_values(table, doc_key, column, items, e)
            }
            (Update::JsonSet(names, json), DataType::Jsonb) => {
                self.put_json(crate::jsonb::member_path(path, names), json, opts)
            }
            (Update::JsonConcat(Json::Object(members)), DataType::Jsonb) => {
                for (name, member) in members {
                    let member_path =
                        crate::jsonb::member_path(path.clone(), std::slice::from_ref(name));
                    self.put_json(member_path, member, opts)?;
                }
                Ok(())
            }
            (Update::JsonRemove(name), DataType::Jsonb) => {
                let member_path = crate::jsonb::member_path(path, std::slice::from_ref(name));
                self.put(
                    member_path,
                    ValueControlFields::default(),
                    PrimitiveValue::Tombstone,
                )
            }
            _ => Err(invalid!(
                "{update:?} does not apply to column {} of type {ty}",
                column.name
            )),
        }
    }

    /// `l = l - [..]`: tombstones the live elements equal to any of `items`.
    fn remove_list_values(
        &mut self,
        table: &Table,
        doc_key: &[u8],
        column: &Column,
        items: &[Datum],
        element_type: &DataType,
    ) -> Result<()> {
        let current = self.tdb.list_elements(table, doc_key, column.id, self.ht)?;
        let targets = element_values(items, element_type)?;
        let path = column_path(doc_key, column);
        for (index, value) in current {
            if targets.contains(&value) {
                let mut element = path.clone();
                KeyEntryValue::ArrayIndex(index).encode_to(&mut element);
                self.put(
                    element,
                    ValueControlFields::default(),
                    PrimitiveValue::Tombstone,
                )?;
            }
        }
        Ok(())
    }

    /// Writes a whole column value: NULL → tombstone, a primitive, or a collection / jsonb
    /// replace (init marker, then elements; an empty collection is a tombstone).
    fn write_column(
        &mut self,
        doc_key: &[u8],
        column: &Column,
        datum: &Datum,
        opts: &WriteOptions,
    ) -> Result<()> {
        datum.check(&column.data_type)?;
        let path = column_path(doc_key, column);
        let control = opts.control();
        match (&column.data_type, datum) {
            (_, Datum::Null) => {
                let control = ValueControlFields {
                    user_timestamp: opts.timestamp,
                    ..ValueControlFields::default()
                };
                self.put(path, control, PrimitiveValue::Tombstone)
            }
            (DataType::Jsonb, Datum::Jsonb(json)) => self.put_json(path, json, opts),
            (DataType::Map(k, v), Datum::Map(entries)) if !entries.is_empty() => {
                self.put(path.clone(), control, PrimitiveValue::Object)?;
                for (key, value) in entries {
                    self.put_element(&path, key, k, Some((value, &**v)), opts)?;
                }
                Ok(())
            }
            (DataType::Set(e), Datum::Set(items)) if !items.is_empty() => {
                self.put(path.clone(), control, PrimitiveValue::Object)?;
                self.put_set_members(&path, items, e, opts)
            }
            (DataType::List(e), Datum::List(items)) if !items.is_empty() => {
                self.put(path.clone(), control, PrimitiveValue::Array)?;
                let values = element_values(items, e)?;
                self.batch.push_list(&path, &values, opts.ttl, false)?;
                Ok(())
            }
            (ty, Datum::Map(_) | Datum::Set(_) | Datum::List(_)) if ty.is_collection() => self.put(
                path,
                ValueControlFields::default(),
                PrimitiveValue::Tombstone,
            ),
            (ty, datum) => self.put(path, control, to_value(datum, ty)?),
        }
    }

    /// Adds set members below the set column at `path` (each a key holding null).
    fn put_set_members(
        &mut self,
        path: &[u8],
        items: &[Datum],
        element_type: &DataType,
        opts: &WriteOptions,
    ) -> Result<()> {
        for item in items {
            let null = Some((&Datum::Null, &DataType::Boolean));
            self.put_element(path, item, element_type, null, opts)?;
        }
        Ok(())
    }

    /// Writes one collection element: `value` = `Some((v, type))` to set it (a set member's
    /// value is null), `None` to delete it.
    fn put_element(
        &mut self,
        path: &[u8],
        key: &Datum,
        key_type: &DataType,
        value: Option<(&Datum, &DataType)>,
        opts: &WriteOptions,
    ) -> Result<()> {
        if key.is_null() {
            return Err(invalid!("collection keys cannot be null"));
        }
        key.check(key_type)?;
        let mut element = path.to_vec();
        to_key_entry(key, key_type, SortOrder::Ascending, false)?.encode_to(&mut element);
        match value {
            None => self.put(
                element,
                ValueControlFields::default(),
                PrimitiveValue::Tombstone,
            ),
            Some((Datum::Null, _)) => self.put(element, opts.control(), PrimitiveValue::Null),
            Some((value, ty)) => self.put_value(element, value, ty, opts),
        }
    }

    fn put_value(
        &mut self,
        path: Vec<u8>,
        datum: &Datum,
        ty: &DataType,
        opts: &WriteOptions,
    ) -> Result<()> {
        datum.check(ty)?;
        if datum.is_null() {
            return self.put(
                path,
                ValueControlFields::default(),
                PrimitiveValue::Tombstone,
            );
        }
        self.put(path, opts.control(), to_value(datum, ty)?)
    }

    fn put_json(&mut self, path: Vec<u8>, json: &Json, opts: &WriteOptions) -> Result<()> {
        let mut pairs = Vec::new();
        crate::jsonb::flatten(path, json, &mut pairs)?;
        for (path, payload) in pairs {
            self.put(path, opts.control(), payload)?;
        }
        Ok(())
    }

    fn put(
        &mut self,
        path: Vec<u8>,
        control: ValueControlFields,
        payload: PrimitiveValue,
    ) -> Result<()> {
        Ok(self
            .batch
            .set_encoded_path(path, Value { control, payload })?)
    }
}

/// The encoded row DocKey and static DocKey a statement writes to, where it has them.
type TargetKeys = (Option<Vec<u8>>, Option<Vec<u8>>);

/// How far a bounded range DELETE got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteProgress {
    /// Rows deleted by this batch, a static row counted as one.
    pub deleted: usize,
    /// Set when rows may remain: pass it to the next batch's
    /// [`TableBatch::delete_range_bounded`].
    pub resume: Option<PagingState>,
}

/// Whether an INSERT gives the hash key and static columns only (no range column, no
/// regular column), which YCQL allows: it writes the partition's static row alone.
fn is_static_only(table: &Table, resolved: &[(&Column, &Datum)]) -> bool {
    table.has_static_columns()
        && resolved.iter().any(|(c, _)| c.kind == ColumnKind::Static)
        && resolved
            .iter()
            .all(|(c, _)| matches!(c.kind, ColumnKind::Hash | ColumnKind::Static))
}

/// The hash key values among resolved INSERT values.
fn hash_values_of(table: &Table, resolved: &[(&Column, &Datum)]) -> Result<Vec<Datum>> {
    table
        .hash_columns()
        .map(|column| {
            resolved
                .iter()
                .find(|(c, _)| c.id == column.id)
                .map(|(_, d)| (*d).clone())
                .ok_or_else(|| invalid!("INSERT needs key column {}", column.name))
        })
        .collect()
}

/// The hash values and the leading range equalities of a range DELETE's key.
fn range_delete_key(table: &Table, named: &[(&str, Datum)]) -> Result<(Vec<Datum>, Vec<Datum>)> {
    for (name, _) in named {
        if !table.column(name)?.kind.is_key() {
            return Err(invalid!("a DELETE key cannot name non-key column {name}"));
        }
    }
    let hash = hash_values(table, named)?;
    let mut range_eq = Vec::new();
    let mut gap = None;
    for column in table.range_columns() {
        match named.iter().find(|(n, _)| *n == column.name) {
            Some(_) if gap.is_some() => {
                return Err(invalid!(
                    "range column {} is restricted but {} before it is not",
                    column.name,
                    gap.unwrap_or_default()
                ));
            }
            Some((_, datum)) => range_eq.push(datum.clone()),
            None => gap = gap.or(Some(column.name.as_str())),
        }
    }
    Ok((hash, range_eq))
}

/// Columns named by a statement, checked against their types, in schema order.
fn resolve<'t, 'v>(
    table: &'t Table,
    values: &'v [(&str, Datum)],
) -> Result<Vec<(&'t Column, &'v Datum)>> {
    // Each name is looked up once; the sort then uses the column's position.
    let mut indexed = Vec::with_capacity(values.len());
    for (name, datum) in values {
        let index = table.column_position(name)?;
        if indexed.iter().any(|&(i, _)| i == index) {
            return Err(invalid!("column {name} given twice"));
        }
        datum.check(&table.columns()[index].data_type)?;
        indexed.push((index, datum));
    }
    indexed.sort_unstable_by_key(|&(i, _)| i);
    Ok(indexed
        .into_iter()
        .map(|(i, datum)| (&table.columns()[i], datum))
        .collect())
}

/// The full key (hash then range columns) from named values.
pub(crate) fn key_values(table: &Table, named: &[(&str, Datum)]) -> Result<Vec<Datum>> {
    table
        .hash_columns()
        .chain(table.range_columns())
        .map(|column| lookup(named, column))
        .collect()
}

/// The hash key values from named values.
fn hash_values(table: &Table, named: &[(&str, Datum)]) -> Result<Vec<Datum>> {
    table.hash_columns().map(|c| lookup(named, c)).collect()
}

fn lookup(named: &[(&str, Datum)], column: &Column) -> Result<Datum> {
    named
        .iter()
        .find(|(n, _)| *n == column.name)
        .map(|(_, d)| d.clone())
        .ok_or_else(|| invalid!("key column {} is not given", column.name))
}

/// The encoded path of a column cell: DocKey + `ColumnId`.
fn column_path(doc_key: &[u8], column: &Column) -> Vec<u8> {
    let mut path = Vec::with_capacity(doc_key.len() + 6);
    path.extend_from_slice(doc_key);
    KeyEntryValue::ColumnId(column.id).encode_to(&mut path);
    path
}

fn element_values(items: &[Datum], ty: &DataType) -> Result<Vec<PrimitiveValue>> {
    items
        .iter()
        .map(|item| {
            if item.is_null() {
                return Err(invalid!("list elements cannot be null"));
            }
            item.check(ty)?;
            to_value(item, ty)
        })
        .collect()
}

/// An INSERT's values by column id (hashed as [`ColumnMap`](crate::row::ColumnMap) is).
type ColumnValues<'v> = HashMap<i32, &'v Datum, IdHash>;

/// Packs the regular columns of an INSERT at the current schema version. Returns the encoded
/// value (row control fields + `z`/`|` + version + body) and the ids of the given columns
/// that are not in it: outside the packing (collections, jsonb, …) or refused by the packer
/// (over the size limit). The caller writes those as separate cells.
fn pack_row(
    table: &Table,
    values: &ColumnValues,
    opts: &WriteOptions,
) -> Result<(Vec<u8>, Vec<i32>)> {
    let version = table.schema().version;
    let packing = table
        .packing(version)
        .ok_or_else(|| invalid!("no packing for schema version {version}"))?;
    let mut row_control = Vec::new();
    opts.control().encode_to(&mut row_control);
    let mut unpacked: Vec<i32> = values
        .keys()
        .copied()
        .filter(|id| packing.index_of(*id).is_none())
        .collect();
    let encoded = match table.options().format() {
        PackedFormat::V1 => pack_v1(table, packing, values, &row_control, &mut unpacked)?,
        PackedFormat::V2 => pack_v2(table, packing, values, &row_control, &mut unpacked)?,
    };
    Ok((encoded, unpacked))
}

/// The value of packed column `id` in an INSERT: NULL when not given.
fn packed_input<'v>(
    table: &'v Table,
    values: &ColumnValues<'v>,
    id: i32,
) -> Option<(&'v Datum, &'v DataType)> {
    let datum = values.get(&id).copied().filter(|d| !d.is_null())?;
    table.column_by_id(id).map(|c| (datum, &c.data_type))
}

/// V1: each column's value encoding, preceded in YCQL by the statement's control fields.
fn pack_v1(
    table: &Table,
    packing: &dockv::packed_row::SchemaPacking,
    values: &ColumnValues,
    row_control: &[u8],
    refused: &mut Vec<i32>,
) -> Result<Vec<u8>> {
    let options = table.options();
    let ycql = options.flavour == Flavour::Ycql;
    let version = table.schema().version;
    let mut packer = RowPackerV1::new(version, packing, options.packed_size_limit, row_control);
    for spec in packing.columns() {
        let bytes = match packed_input(table, values, spec.id) {
            Some((datum, ty)) => {
                let mut bytes = if ycql {
                    row_control.to_vec()
                } else {
                    Vec::new()
                };
                to_value(datum, ty)?.encode_to(&mut bytes);
                Some(bytes)
            }
            None => None,
        };
        if !packer.add_value(spec.id, bytes.as_deref())? {
            refused.push(spec.id);
        }
    }
    Ok(packer.complete()?)
}

/// V2 (YSQL): raw values, no per-column control fields.
fn pack_v2(
    table: &Table,
    packing: &dockv::packed_row::SchemaPacking,
    values: &ColumnValues,
    row_control: &[u8],
    refused: &mut Vec<i32>,
) -> Result<Vec<u8>> {
    let limit = table.options().packed_size_limit;
    let version = table.schema().version;
    let mut packer = RowPackerV2::new(version, packing, limit, row_control, false)?;
    for spec in packing.columns() {
        let packed = match packed_input(table, values, spec.id) {
            Some((datum, ty)) => {
                with_packed_v2(datum, ty, |v| packer.add_value(spec.id, Some(v)))??
            }
            None => packer.add_value(spec.id, None)?,
        };
        if !packed {
            refused.push(spec.id);
        }
    }
    Ok(packer.complete()?)
}

/// A YSQL `ybrowid`: the batch's hybrid time and a per-database sequence number, 16 bytes
/// big-endian, so ids are unique and grow with time.
pub(crate) fn make_row_id(ht: HybridTime, counter: &std::sync::atomic::AtomicU64) -> Datum {
    let seq = counter.fetch_add(1, Ordering::Relaxed);
    let mut bytes = Vec::with_capacity(16);
    bytes.extend_from_slice(&ht.0.to_be_bytes());
    bytes.extend_from_slice(&seq.to_be_bytes());
    Datum::Blob(bytes)
}

/// The DocKey of a row from its full key values (for callers outside a batch).
pub fn row_doc_key(table: &Table, key: &[(&str, Datum)]) -> Result<DocKey> {
    table.doc_key(&key_values(table, key)?)
}
