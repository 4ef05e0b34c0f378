//! SELECT: point reads, partitions, clustering ranges in either order, full scans,
//! projections with `WRITETIME`/`TTL`, LIMIT and resumable paging, at any hybrid time.
//!
//! Key restrictions become engine bounds: the hash key and equalities on leading range
//! columns form a key prefix, and a range condition on the next range column narrows it
//! (for a descending column a lower value bound is an upper key bound). Every restriction is
//! also checked on the decoded key, so the bounds only need to be a superset. The paging
//! state is the encoded DocKey of the last row returned: the next page starts after it.
//!
//! Static columns live in their partition's static row (the DocKey with the hash part and no
//! range components), joined to every clustering row of the partition. A partition whose
//! static row exists but none of whose clustering rows does is returned as one row with NULL
//! clustering and regular columns, when the SELECT reads a static column (`SELECT *`
//! included) and restricts no range column: YugabyteDB's `QLReadOperation::Execute`
//! (`cql_operation.cc`) and its `TestStaticColumn` (`select * from t` returns
//! `Row[4, h4, NULL, NULL, 40, s40, NULL, NULL]`), as Cassandra does.

use std::collections::HashMap;
use std::ops::Bound;
use std::time::Instant;

use docdb::sweep::DEADLINE_CHECK_EVERY;
use docdb::{DeletedDocs, Probed, ReadOptions, ReadStats, SpanSet, SpanWalk};
use dockv::HybridTime;
use dockv::SortOrder;
use engine::{Engine, EngineIterator, IterOptions};

use crate::codec::to_key_entry;
use crate::db::{TableDb, doc_key_len};
use crate::error::{Result, corruption, invalid};
use crate::read::{ReadContext, RowBuffers, read_row_into};
use crate::row::{CellValue, RowValues, assemble, assemble_into};
use crate::schema::{Column, ColumnKind};
use crate::table::Table;
use crate::types::Datum;

/// One output column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The column's value.
    Column(String),
    /// `WRITETIME(c)`: µs (user timestamp or write time) as a bigint, NULL when unset.
    WriteTime(String),
    /// `TTL(c)`: remaining seconds as a bigint, NULL without a TTL.
    Ttl(String),
}

/// A condition on the range column after the equality prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeCondition {
    /// Lower value bound.
    pub lower: Bound<Datum>,
    /// Upper value bound.
    pub upper: Bound<Datum>,
}

/// A SELECT.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// Output columns; empty = every visible column in schema order.
    pub selectors: Vec<Selector>,
    /// Equality on every hash column (a partition), in hash-key order.
    pub hash_key: Option<Vec<Datum>>,
    /// Equality on the leading range columns.
    pub range_eq: Vec<Datum>,
    /// A condition on the next range column.
    pub range: Option<RangeCondition>,
    /// Rows in descending key order.
    pub reverse: bool,
    /// LIMIT over all pages.
    pub limit: Option<usize>,
    /// At most this many rows per page.
    pub page_size: Option<usize>,
    /// Where the previous page stopped.
    pub paging_state: Option<PagingState>,
    /// Read the table as of this time.
    pub read_ht: HybridTime,
}

impl Select {
    /// Every row, every visible column, as of `read_ht`.
    pub fn all(read_ht: HybridTime) -> Self {
        Select {
            selectors: Vec::new(),
            hash_key: None,
            range_eq: Vec::new(),
            range: None,
            reverse: false,
            limit: None,
            page_size: None,
            paging_state: None,
            read_ht,
        }
    }

    /// The row with full key `key` (hash values then range values).
    pub fn row(table: &Table, key: Vec<Datum>, read_ht: HybridTime) -> Self {
        let mut select = Select::all(read_ht);
        let mut key = key;
        let range = key.split_off(table.num_hash_columns().min(key.len()));
        if table.num_hash_columns() > 0 {
            select.hash_key = Some(key);
            select.range_eq = range;
        } else {
            select.range_eq = [key, range].concat();
        }
        select
    }

    /// Only these output columns.
    pub fn columns(mut self, selectors: Vec<Selector>) -> Self {
        self.selectors = selectors;
        self
    }

    /// Only the partition with these hash values.
    pub fn partition(mut self, hash_key: Vec<Datum>) -> Self {
        self.hash_key = Some(hash_key);
        self
    }

    /// Equalities on the leading range columns.
    pub fn range_eq(mut self, values: Vec<Datum>) -> Self {
        self.range_eq = values;
        self
    }

    /// A condition on the range column after the equalities.
    pub fn range(mut self, lower: Bound<Datum>, upper: Bound<Datum>) -> Self {
        self.range = Some(RangeCondition { lower, upper });
        self
    }

    /// Descending key order.
    pub fn reversed(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// LIMIT.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Page size.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Continue after a previous page.
    pub fn after(mut self, state: PagingState) -> Self {
        self.paging_state = Some(state);
        self
    }
}

/// Where a paged SELECT stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagingState {
    /// Encoded DocKey of the last row returned.
    pub last_key: Vec<u8>,
    /// Rows still allowed by LIMIT, if there is one.
    pub remaining: Option<u64>,
}

/// Version byte of [`PagingState::encode`].
const PAGING_STATE_VERSION: u8 = 1;

impl PagingState {
    /// `[version 1][remaining: 8 bytes BE, all ones = no limit][last key]`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + self.last_key.len());
        out.push(PAGING_STATE_VERSION);
        out.extend_from_slice(&self.remaining.unwrap_or(u64::MAX).to_be_bytes());
        out.extend_from_slice(&self.last_key);
        out
    }

    /// Inverse of [`Self::encode`]; bad bytes are `Corruption`.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let (&version, rest) = bytes
            .split_first()
            .ok_or_else(|| corruption!("empty paging state"))?;
        if version != PAGING_STATE_VERSION {
            return Err(corruption!("paging state version {version}"));
        }
        let (remaining, key) = rest
            .split_first_chunk::<8>()
            .ok_or_else(|| corruption!("paging state too short"))?;
        let remaining = u64::from_be_bytes(*remaining);
        doc_key_len(key)?;
        Ok(PagingState {
            last_key: key.to_vec(),
            remaining: (remaining != u64::MAX).then_some(remaining),
        })
    }
}

/// One page of a SELECT.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultPage {
    /// Output column labels (`c`, `writetime(c)`, `ttl(c)`).
    pub columns: Vec<String>,
    /// Rows, each with one value per output column.
    pub rows: Vec<Vec<Datum>>,
    /// Set when more rows may follow; pass it to [`Select::after`].
    pub paging_state: Option<PagingState>,
}

/// A resolved output column.
enum Output<'t> {
    Key(usize, &'t Column),
    Value(&'t Column),
    WriteTime(&'t Column),
    Ttl(&'t Column),
}

impl Output<'_> {
    /// The non-key column it reads, if any.
    fn column_id(&self) -> Option<i32> {
        match self {
            Output::Value(c) | Output::WriteTime(c) | Output::Ttl(c) => Some(c.id),
            Output::Key(..) => None,
        }
    }
}

impl<E: Engine> TableDb<E> {
    /// Runs a SELECT on `table`. For many small SELECTs,
    /// [`RowReader::select`](crate::RowReader::select) is cheaper.
    pub fn select(&self, table: &Table, select: &Select) -> Result<ResultPage> {
        let (lower, upper) = paged_bounds(table, select)?;
        let walk = self.span_walk(table, select);
        let mut iter = self.scan_iterator(&lower, upper.as_deref())?;
        let from = ScanFrom {
            iter: &mut iter,
            lower: &lower,
            walk,
        };
        self.select_on(from, table, select)
    }

    /// The walk over deleted rows of a SELECT's scan (see [`docdb::dead_spans`]): made
    /// before the scan's iterator.
    pub(crate) fn span_walk(&self, table: &Table, select: &Select) -> SpanWalk<'_> {
        let read = ReadOptions::at(select.read_ht);
        self.docdb()
            .span_walk(SpanSet::Rows(table.id()), &read, select.reverse)
    }

    /// A SELECT on an iterator bounded to the select's [`paged_bounds`], `lower` first.
    pub(crate) fn select_on<I: EngineIterator>(
        &self,
        from: ScanFrom<'_, '_, I>,
        table: &Table,
        select: &Select,
    ) -> Result<ResultPage> {
        let outputs = outputs(table, &select.selectors)?;
        let columns = labels(&select.selectors, &outputs);
        // A partition's static row stands alone (YCQL/Cassandra) only when statics are read.
        let static_rows = outputs.iter().any(|o| match o {
            Output::Value(c) | Output::WriteTime(c) | Output::Ttl(c) => {
                c.kind == ColumnKind::Static
            }
            Output::Key(..) => false,
        });
        let (rows, paging_state) = self.scan_on(from, table, select, static_rows, |found| {
            project(
                &outputs,
                &found.key,
                &mut found.values,
                found.statics.as_ref(),
            )
        })?;
        Ok(ResultPage {
            columns,
            rows,
            paging_state,
        })
    }

    /// The rows a SELECT's key restrictions, LIMIT and paging allow, each mapped by `emit`,
    /// and the paging state when more may follow. With `static_rows`, a partition whose
    /// static row exists but none of whose clustering rows does is one row (NULL clustering
    /// and regular columns), as YugabyteDB's `QLReadOperation::Execute` returns it.
    pub(crate) fn scan<T>(
        &self,
        table: &Table,
        select: &Select,
        static_rows: bool,
        emit: impl FnMut(&mut Found) -> T,
    ) -> Result<(Vec<T>, Option<PagingState>)> {
        let (lower, upper) = paged_bounds(table, select)?;
        let walk = self.span_walk(table, select);
        let mut iter = self.scan_iterator(&lower, upper.as_deref())?;
        let from = ScanFrom {
            iter: &mut iter,
            lower: &lower,
            walk,
        };
        self.scan_on(from, table, select, static_rows, emit)
    }

    /// An iterator over `[lower, upper)`.
    fn scan_iterator(&self, lower: &[u8], upper: Option<&[u8]>) -> Result<E::Iter<'_>> {
        let mut opts = IterOptions::new().lower(lower);
        if let Some(upper) = upper {
            opts = opts.upper(upper);
        }
        Ok(self.docdb().engine().iterator(opts)?)
    }

    /// [`Self::scan`] from `from`.
    pub(crate) fn scan_on<I: EngineIterator, T>(
        &self,
        from: ScanFrom<'_, '_, I>,
        table: &Table,
        select: &Select,
        static_rows: bool,
        mut emit: impl FnMut(&mut Found) -> T,
    ) -> Result<(Vec<T>, Option<PagingState>)> {
        let remaining = match &select.paging_state {
            Some(state) => state
                .remaining
                .map(|r| usize::try_from(r).unwrap_or(usize::MAX)),
            None => select.limit,
        };
        let cap = remaining
            .unwrap_or(usize::MAX)
            .min(select.page_size.unwrap_or(usize::MAX));
        let ScanFrom {
            iter,
            lower,
            mut walk,
        } = from;
        let ctx = self.read_context(table, select.read_ht)?;
        if ctx.table_ttl.is_some() {
            // Raising the TTL later would bring rows back.
            walk.keep_nothing();
        }
        let mut scan = Scan::new(self, table, ctx, walk);
        scan.static_rows = static_rows && table.has_static_columns();
        // A reverse page resumes below a row whose partition has rows.
        scan.last_row = select
            .paging_state
            .as_ref()
            .filter(|_| select.reverse)
            .map(|s| s.last_key.clone());
        if select.reverse {
            iter.seek_to_last();
        } else {
            iter.seek(lower);
        }
        let mut rows = Vec::new();
        let mut last_key = None;
        let mut more = false;
        while let Some(mut found) = scan.next_row(iter, select.reverse)? {
            if !matches(table, select, &found.key)? {
                scan.spare = found.values;
                continue;
            }
            if rows.len() >= cap {
                more = true;
                break;
            }
            rows.push(emit(&mut found));
            last_key = Some(found.doc_key);
            scan.spare = found.values;
        }
        scan.walk.finish();
        let paging_state = match (more, last_key) {
            (true, Some(last_key)) => Some(PagingState {
                last_key,
                remaining: remaining.map(|r| (r - rows.len()) as u64),
            }),
            _ => None,
        };
        Ok((rows, paging_state))
    }

    /// A sweep's probe (see [`docdb::sweep`]): reads `table` forward from the deleted row at
    /// `doc_key` to the first row that exists at `read_ht`, as a SELECT would, so that its
    /// walk keeps the run of rows that do not exist; past `deadline` it stops before a row.
    pub(crate) fn probe_rows(
        &self,
        table: &Table,
        doc_key: &[u8],
        read_ht: HybridTime,
        deadline: Option<Instant>,
    ) -> Result<Probed> {
        // A table with a default TTL keeps no runs (see `scan_on`).
        if table.options().default_ttl.is_some() || !owns_row_key(table, doc_key) {
            return Ok(Probed::NotMine);
        }
        let ctx = self.read_context(table, read_ht)?;
        let walk =
            self.docdb()
                .span_walk(SpanSet::Rows(table.id()), &ReadOptions::at(read_ht), false);
        let upper = table_upper(table);
        let mut iter = self.scan_iterator(doc_key, upper.as_deref())?;
        let mut scan = Scan::new(self, table, ctx, walk);
        scan.deadline = deadline;
        iter.seek(doc_key);
        scan.next_row(&mut iter, false)?;
        let stopped = scan.stopped_at.take();
        scan.walk.finish();
        Ok(match stopped {
            Some(at) => Probed::StoppedAt(at),
            None => Probed::Read,
        })
    }
}

/// Whether `doc_key` is the DocKey of one of `table`'s rows (or static rows), by where it is
/// in the key space.
fn owns_row_key(table: &Table, doc_key: &[u8]) -> bool {
    doc_key >= table_lower(table).as_slice()
        && table_upper(table).is_none_or(|upper| doc_key < upper.as_slice())
        && foreign_region(table, doc_key).is_none()
        && table.table_tombstone_key().as_deref() != Some(doc_key)
}

/// Where a SELECT's scan reads: an iterator bounded to the select's [`paged_bounds`], the
/// key it starts from, and its walk over runs of deleted rows, made before the iterator.
pub(crate) struct ScanFrom<'s, 'd, I> {
    pub iter: &'s mut I,
    pub lower: &'s [u8],
    pub walk: SpanWalk<'d>,
}

/// A row as a scan found it.
pub(crate) struct Found {
    /// Its encoded DocKey (a static row's: the hash part only).
    pub doc_key: Vec<u8>,
    /// Its key column values (a static row: the hash columns only).
    pub key: Vec<Datum>,
    /// Its non-key, non-static values.
    pub values: RowValues,
    /// Its partition's static values (tables with static columns).
    pub statics: Option<RowValues>,
}

/// Scan state: the table, how to read it, the static rows read so far by static DocKey,
/// and what the static-only rows need: a forward scan holds a partition's static row back
/// until it knows whether a clustering row of the partition follows; a reverse scan meets
/// the static row after the partition's rows.
struct Scan<'a, 'd, E: Engine> {
    tdb: &'a TableDb<E>,
    table: &'a Table,
    ctx: ReadContext,
    /// Skips runs of rows that do not exist, as earlier scans found them, and keeps the
    /// runs this one finds. A partition's static row ends a run.
    walk: SpanWalk<'d>,
    /// Steps over deleted rows without decoding them.
    deleted: DeletedDocs,
    statics: HashMap<Vec<u8>, RowValues>,
    /// Whether static-only rows are returned.
    static_rows: bool,
    /// Forward: a static row waiting for its partition's first row.
    pending: Option<Found>,
    /// Forward: a row found after a static row that turned out to stand alone.
    queued: Option<Found>,
    /// Reverse: the DocKey of the last clustering row returned.
    last_row: Option<Vec<u8>>,
    /// The current document's cells and read buffers, reused across documents.
    bufs: RowBuffers,
    /// A returned row's values, whose map the next row reuses.
    spare: RowValues,
    /// A sweep's probe: when to stop reading (forward, without static-only rows).
    deadline: Option<Instant>,
    /// Documents read, for how often to look at the clock.
    docs: u32,
    /// The document a scan past its deadline stopped before.
    stopped_at: Option<Vec<u8>>,
}

impl<'a, 'd, E: Engine> Scan<'a, 'd, E> {
    /// A scan of `table` reading with `ctx`; no static-only rows, no deadline.
    fn new(tdb: &'a TableDb<E>, table: &'a Table, ctx: ReadContext, walk: SpanWalk<'d>) -> Self {
        Scan {
            tdb,
            table,
            deleted: DeletedDocs::new(ctx.read_ht),
            ctx,
            walk,
            statics: HashMap::new(),
            static_rows: false,
            pending: None,
            queued: None,
            last_row: None,
            bufs: RowBuffers::default(),
            spare: RowValues::default(),
            deadline: None,
            docs: 0,
            stopped_at: None,
        }
    }

    /// Whether the scan's time is up before `doc`, which it then notes.
    fn out_of_time(&mut self, doc: &[u8]) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        self.docs = self.docs.wrapping_add(1);
        if self.docs.is_multiple_of(DEADLINE_CHECK_EVERY) && Instant::now() >= deadline {
            // The runs read so far hold: each ends at a row read as not existing.
            self.stopped_at = Some(doc.to_vec());
            return true;
        }
        false
    }

    /// The next existing row in scan direction, static-only rows included when wanted.
    fn next_row<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        reverse: bool,
    ) -> Result<Option<Found>> {
        if let Some(found) = self.queued.take() {
            return Ok(Some(found));
        }
        loop {
            let doc = if reverse {
                prev_doc_key(self.table, iter)?
            } else {
                next_doc_key(self.table, iter, None)?
            };
            let Some(doc) = doc else {
                return Ok(self.pending.take());
            };
            if self.out_of_time(&doc) {
                return Ok(self.pending.take());
            }
            if self.table.is_static_key(&doc) {
                self.walk.visible();
                if reverse && !self.static_rows {
                    // Rows read their partition's statics themselves.
                    iter.seek_for_prev(&doc);
                    continue;
                }
                let statics = self.read_doc(iter, &doc, reverse)?;
                self.statics.insert(doc.clone(), statics.clone());
                let partition = &doc[..doc.len() - 1];
                let joined = reverse
                    && self
                        .last_row
                        .as_ref()
                        .is_some_and(|row| row.starts_with(partition));
                let alone = (self.static_rows && statics.exists && !joined)
                    .then(|| -> Result<Found> {
                        Ok(Found {
                            key: self.table.decode_key(&doc)?,
                            doc_key: doc,
                            values: RowValues::default(),
                            statics: Some(statics),
                        })
                    })
                    .transpose()?;
                if reverse {
                    match alone {
                        Some(found) => return Ok(Some(found)),
                        None => continue,
                    }
                }
                // Forward: the previous partition's static row had no row after it.
                if let Some(previous) = std::mem::replace(&mut self.pending, alone) {
                    return Ok(Some(previous));
                }
                continue;
            }
            if self.walk.skip(iter, &doc) {
                continue;
            }
            let Some(found) = self.read(iter, doc, reverse)? else {
                continue;
            };
            if let Some(pending) = self.pending.take() {
                let partition = &pending.doc_key[..pending.doc_key.len() - 1];
                if !found.doc_key.starts_with(partition) {
                    self.queued = Some(found);
                    return Ok(Some(pending));
                }
            }
            if reverse {
                self.last_row = Some(found.doc_key.clone());
            }
            return Ok(Some(found));
        }
    }

    /// Reads the document at `doc_key` (the iterator is on one of its keys) and moves past
    /// it in scan direction.
    fn read_doc<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        doc_key: &[u8],
        reverse: bool,
    ) -> Result<RowValues> {
        if reverse {
            iter.seek(doc_key);
        }
        let values = self.read_here(iter, doc_key)?;
        if reverse {
            iter.seek_for_prev(doc_key);
        }
        Ok(values)
    }

    /// Reads the document at `doc_key` from the iterator's place on its first record,
    /// leaving the iterator past it.
    fn read_here<I: EngineIterator>(&mut self, iter: &mut I, doc_key: &[u8]) -> Result<RowValues> {
        read_row_into(iter, doc_key, &self.ctx, &mut self.bufs)?;
        let mut values = std::mem::take(&mut self.spare);
        assemble_into(self.table, &self.bufs.cells, &self.ctx, &mut values)?;
        Ok(values)
    }

    /// Reads the clustering row at `doc_key` like [`Self::read_doc`]; a plainly deleted row
    /// is stepped over unread ([`DeletedDocs`]). `None` when the row does not exist.
    fn read<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        doc_key: Vec<u8>,
        reverse: bool,
    ) -> Result<Option<Found>> {
        if reverse {
            // On the row's last record: it is read from its first.
            iter.seek(&doc_key);
        }
        let deleted = self
            .deleted
            .step_over(iter, &doc_key, &mut ReadStats::default())?;
        let values = if deleted {
            None
        } else {
            Some(self.read_here(iter, &doc_key)?)
        };
        if reverse {
            iter.seek_for_prev(&doc_key);
        }
        let values = match values {
            Some(values) if values.exists => values,
            unread_or_absent => {
                self.walk.invisible(&doc_key);
                if let Some(values) = unread_or_absent {
                    self.spare = values;
                }
                return Ok(None);
            }
        };
        self.walk.visible();
        let key = self.table.decode_key(&doc_key)?;
        let statics = self.statics_for(&key)?;
        Ok(Some(Found {
            doc_key,
            key,
            values,
            statics,
        }))
    }

    /// The static values of a row's partition (read once per partition).
    fn statics_for(&mut self, key: &[Datum]) -> Result<Option<RowValues>> {
        if !self.table.has_static_columns() {
            return Ok(None);
        }
        let hash = &key[..self.table.num_hash_columns().min(key.len())];
        let static_key = self.table.static_doc_key(hash)?.encode();
        if let Some(found) = self.statics.get(&static_key) {
            return Ok(Some(found.clone()));
        }
        let cells = self.tdb.read_cells(&static_key, &self.ctx)?;
        let values = assemble(self.table, &cells, &self.ctx)?;
        self.statics.insert(static_key, values.clone());
        Ok(Some(values))
    }
}

/// The first key of the table's key space.
pub(crate) fn table_lower(table: &Table) -> Vec<u8> {
    if table.prefix_bytes().is_empty() {
        // Row keys start at `$` (the lowest value type); below are metadata and `!`.
        b"$".to_vec()
    } else {
        table.prefix_bytes().to_vec()
    }
}

/// The end (exclusive) of the table's key space; `None` = the end of the database.
fn table_upper(table: &Table) -> Option<Vec<u8>> {
    (!table.prefix_bytes().is_empty()).then(|| [table.prefix_bytes(), &[0xFF]].concat())
}

/// Whether a key's first byte starts another table's key space (colocated `0`, cotable
/// `y`): an un-prefixed table skips those regions.
fn foreign_region(table: &Table, key: &[u8]) -> Option<u8> {
    let first = *key.first()?;
    (table.prefix_bytes().is_empty() && (first == b'0' || first == b'y')).then_some(first)
}

/// From the iterator's position forward: the DocKey of the first record of `table`, skipping
/// other tables' regions and the table-level tombstone. `None` when the table's keys end.
pub(crate) fn next_doc_key<I: EngineIterator>(
    table: &Table,
    iter: &mut I,
    upper: Option<&[u8]>,
) -> Result<Option<Vec<u8>>> {
    let tombstone = table.table_tombstone_key();
    while iter.valid()? {
        let key = iter.key();
        if upper.is_some_and(|u| key >= u) || !key.starts_with(table.prefix_bytes()) {
            return Ok(None);
        }
        if let Some(region) = foreign_region(table, key) {
            iter.seek(&[region + 1]);
            continue;
        }
        let doc = key[..doc_key_len(key)?].to_vec();
        if tombstone.as_deref() == Some(&doc[..]) {
            let mut past = doc;
            past.push(0xFF);
            iter.seek(&past);
            continue;
        }
        return Ok(Some(doc));
    }
    Ok(None)
}

/// Like [`next_doc_key`], backwards from the iterator's position.
fn prev_doc_key<I: EngineIterator>(table: &Table, iter: &mut I) -> Result<Option<Vec<u8>>> {
    let tombstone = table.table_tombstone_key();
    while iter.valid()? {
        let key = iter.key();
        if !key.starts_with(table.prefix_bytes()) || key < b"$".as_slice() {
            return Ok(None);
        }
        if let Some(region) = foreign_region(table, key) {
            iter.seek_for_prev(&[region]);
            continue;
        }
        let doc = key[..doc_key_len(key)?].to_vec();
        if tombstone.as_deref() == Some(&doc[..]) {
            iter.seek_for_prev(&doc);
            continue;
        }
        return Ok(Some(doc));
    }
    Ok(None)
}

/// Engine bounds of a SELECT, narrowed by its paging state.
pub(crate) fn paged_bounds(table: &Table, select: &Select) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    let (mut lower, mut upper) = key_bounds(table, select)?;
    if let Some(state) = &select.paging_state {
        if select.reverse {
            upper = Some(match upper {
                Some(u) if u < state.last_key => u,
                _ => state.last_key.clone(),
            });
        } else {
            let mut after = state.last_key.clone();
            after.push(0xFF);
            lower = lower.max(after);
        }
    }
    Ok((lower, upper))
}

/// The key range holding every row the restrictions allow.
fn key_bounds(table: &Table, select: &Select) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    if select.range_eq.len() > table.num_range_columns() {
        return Err(invalid!("more range values than range columns"));
    }
    let mut prefix = table.prefix_bytes().to_vec();
    if table.num_hash_columns() > 0 {
        let Some(hash) = &select.hash_key else {
            return Ok((table_lower(table), table_upper(table)));
        };
        if hash.len() != table.num_hash_columns() {
            return Err(invalid!("a partition needs every hash column"));
        }
        let key = table.static_doc_key(hash)?.encode();
        // Drop the final `!` (the empty range group): rows continue with range components.
        prefix = key[..key.len() - 1].to_vec();
    }
    for (column, value) in table.range_columns().zip(&select.range_eq) {
        table.range_entry(column, value)?.encode_to(&mut prefix);
    }
    let mut lower = prefix.clone();
    let mut upper = [&prefix[..], &[0xFF]].concat();
    let next = table.range_columns().nth(select.range_eq.len());
    if let (Some(cond), Some(column)) = (&select.range, next) {
        let ColumnKind::Range(order) = column.kind else {
            return Err(invalid!("{} is not a range column", column.name));
        };
        let bound = |b: &Bound<Datum>, low_side: bool| -> Result<Option<Vec<u8>>> {
            let (value, inclusive) = match b {
                Bound::Included(v) => (v, true),
                Bound::Excluded(v) => (v, false),
                Bound::Unbounded => return Ok(None),
            };
            let mut key = prefix.clone();
            table.range_entry(column, value)?.encode_to(&mut key);
            // The low key side includes the value's rows itself; the high side ends past them.
            if inclusive != low_side {
                key.push(0xFF);
            }
            Ok(Some(key))
        };
        // A descending column stores larger values first: value bounds swap key sides.
        let (low, high) = if order.descending {
            (bound(&cond.upper, true)?, bound(&cond.lower, false)?)
        } else {
            (bound(&cond.lower, true)?, bound(&cond.upper, false)?)
        };
        if let Some(low) = low {
            lower = lower.max(low);
        }
        if let Some(high) = high {
            upper = upper.min(high);
        }
    }
    Ok((lower, Some(upper)))
}

/// Whether a row's key values satisfy every restriction.
fn matches(table: &Table, select: &Select, key: &[Datum]) -> Result<bool> {
    let nh = table.num_hash_columns();
    let columns: Vec<&Column> = table.hash_columns().chain(table.range_columns()).collect();
    let enc = |i: usize, d: &Datum| -> Result<Vec<u8>> {
        let column = columns
            .get(i)
            .ok_or_else(|| invalid!("too many key values"))?;
        Ok(to_key_entry(d, &column.data_type, SortOrder::Ascending, false)?.encoded())
    };
    if let Some(hash) = &select.hash_key
        && nh > 0
    {
        for (i, value) in hash.iter().enumerate() {
            if key.get(i).map(|k| enc(i, k)).transpose()? != Some(enc(i, value)?) {
                return Ok(false);
            }
        }
    }
    let first_range = if nh > 0 { nh } else { 0 };
    for (j, value) in select.range_eq.iter().enumerate() {
        let i = first_range + j;
        if key.get(i).map(|k| enc(i, k)).transpose()? != Some(enc(i, value)?) {
            return Ok(false);
        }
    }
    let Some(cond) = &select.range else {
        return Ok(true);
    };
    let i = first_range + select.range_eq.len();
    let Some(value) = key.get(i).filter(|v| !v.is_null()) else {
        return Ok(false);
    };
    let value = enc(i, value)?;
    let lower_ok = match &cond.lower {
        Bound::Included(b) => value >= enc(i, b)?,
        Bound::Excluded(b) => value > enc(i, b)?,
        Bound::Unbounded => true,
    };
    let upper_ok = match &cond.upper {
        Bound::Included(b) => value <= enc(i, b)?,
        Bound::Excluded(b) => value < enc(i, b)?,
        Bound::Unbounded => true,
    };
    Ok(lower_ok && upper_ok)
}

/// Resolves the selectors; no selectors = every visible column.
fn outputs<'t>(table: &'t Table, selectors: &[Selector]) -> Result<Vec<Output<'t>>> {
    let key_position = |c: &Column| {
        table
            .hash_columns()
            .chain(table.range_columns())
            .position(|k| k.id == c.id)
    };
    if selectors.is_empty() {
        return Ok(table
            .columns()
            .iter()
            .filter(|c| !c.hidden)
            .map(|c| match key_position(c) {
                Some(i) => Output::Key(i, c),
                None => Output::Value(c),
            })
            .collect());
    }
    selectors
        .iter()
        .map(|s| {
            let (name, kind) = match s {
                Selector::Column(n) => (n, 0),
                Selector::WriteTime(n) => (n, 1),
                Selector::Ttl(n) => (n, 2),
            };
            let column = table.column(name)?;
            match (key_position(column), kind) {
                (Some(i), 0) => Ok(Output::Key(i, column)),
                (Some(_), _) => Err(invalid!("WRITETIME/TTL of key column {name}")),
                (None, 0) => Ok(Output::Value(column)),
                (None, _) if !column.data_type.is_primitive() => {
                    Err(invalid!("WRITETIME/TTL of non-primitive column {name}"))
                }
                (None, 1) => Ok(Output::WriteTime(column)),
                (None, _) => Ok(Output::Ttl(column)),
            }
        })
        .collect()
}

fn labels(selectors: &[Selector], outputs: &[Output<'_>]) -> Vec<String> {
    if selectors.is_empty() {
        return outputs
            .iter()
            .map(|o| match o {
                Output::Key(_, c) | Output::Value(c) | Output::WriteTime(c) | Output::Ttl(c) => {
                    c.name.clone()
                }
            })
            .collect();
    }
    selectors
        .iter()
        .map(|s| match s {
            Selector::Column(n) => n.clone(),
            Selector::WriteTime(n) => format!("writetime({n})"),
            Selector::Ttl(n) => format!("ttl({n})"),
        })
        .collect()
}

fn project(
    outputs: &[Output<'_>],
    key: &[Datum],
    values: &mut RowValues,
    statics: Option<&RowValues>,
) -> Vec<Datum> {
    let mut row = Vec::with_capacity(outputs.len());
    for (i, output) in outputs.iter().enumerate() {
        let datum = match output {
            Output::Key(k, _) => key.get(*k).cloned().unwrap_or(Datum::Null),
            Output::Value(c) if c.kind != ColumnKind::Static => {
                // The row's values are the caller's to give away: move each out at its last
                // use rather than cloning strings and collections.
                let used_again = outputs[i + 1..].iter().any(|o| o.column_id() == Some(c.id));
                let value = if used_again {
                    values.columns.get(&c.id).cloned()
                } else {
                    values.columns.remove(&c.id)
                };
                value.map_or(Datum::Null, |v| v.datum)
            }
            Output::Value(c) => cell(c, values, statics).map_or(Datum::Null, |v| v.datum.clone()),
            Output::WriteTime(c) => cell(c, values, statics)
                .and_then(|v| v.write_time)
                .map_or(Datum::Null, Datum::BigInt),
            Output::Ttl(c) => cell(c, values, statics)
                .and_then(|v| v.ttl)
                .map_or(Datum::Null, Datum::BigInt),
        };
        row.push(datum);
    }
    row
}

/// Column `c`'s value in a row: from the partition's statics for a static column.
fn cell<'v>(
    c: &Column,
    values: &'v RowValues,
    statics: Option<&'v RowValues>,
) -> Option<&'v CellValue> {
    let source = if c.kind == ColumnKind::Static {
        statics
    } else {
        Some(values)
    };
    source.and_then(|s| s.columns.get(&c.id))
}
