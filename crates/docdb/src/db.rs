//! `DocDb`: documents over a storage engine.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use dockv::doc_key::{DocKey, SubDocKey, format_key};
use dockv::value::{Ttl, Value};
use dockv::{DocHybridTime, HybridTime, KeyEntryType};
use engine::{
    CompactionContext, CompactionDecision, CompactionFilter, CompactionFilterFactory, Engine,
    EngineIterator, IterOptions, KeyPrefix, Layered, Overlay, PrefixMode, WriteBatch, WriteOp,
    WriteOptions,
};

use crate::clock::HybridClock;
use crate::dead_spans::{
    BatchDocs, DeadSpanStats, DeadSpans, MAX_DEAD_SPANS, Run, Span, SpanCursor, SpanSet, SpanSets,
};
use crate::error::{Error, Result};
use crate::gc::{GcDecision, GcFilter, GcParams, GcStats, Records, TOMBSTONE_VALUE};
use crate::reader::{
    ChildRange, DocScanner, HYBRID_TIME_BYTE, NEXTS_BEFORE_SEEK, ReadOptions, ReadStats, RootLevel,
    VisibleRecord, read_children, read_children_cached, read_subdocument, visible_record,
    visible_record_cached, visible_root_in_scan,
};
use crate::recent_writes::{LogPlace, RecentWrites};
use crate::repack::TableRulesSource;
use crate::root_cache::{RootCache, is_counter_path};
use crate::saved_spans::SavedSpans;
use crate::staged::{
    StageQueue, Staged, StagedWrite, any_failed, earlier_write_failed, overlay_of,
};
use crate::subdoc::SubDocument;
use crate::sweep::{DEADLINE_CHECK_EVERY, DeletedQueue, Probed, SweepStats};
use crate::unflushed::UnflushedWrites;
use crate::upkeep::{Upkeep, UpkeepOptions, UpkeepRound};
use crate::write_batch::{DocWriteBatch, InitMarkerBehavior, is_merge, recycle};

/// Compactions one [`DocDb::compact`] runs to write repacked rows, after the first.
const MAX_REPACK_ROUNDS: usize = 4;

/// [`DocDb::maintain`] flushes at most this often (with a history retention near 0).
const MIN_MAINTAIN_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Default budget of the root cache ([`DocDbOptions::root_cache_bytes`]): about 900 000
/// short Redis strings read more than once (with `cache_written_roots`, half of that and
/// 512 Ki slots of roots written).
pub const DEFAULT_ROOT_CACHE_BYTES: usize = 128 << 20;

/// YugabyteDB's default history retention (`timestamp_history_retention_interval_sec`).
pub const DEFAULT_HISTORY_RETENTION: Duration = Duration::from_secs(900);

/// Engine key of the persistent list-index counter. It sorts below every document record
/// (which start at [`FIRST_RECORD_BYTE`] or later), so scans, dumps and GC never see it.
const LIST_COUNTER_KEY: &[u8] = b"\x01docdb.list_counter";

/// Engine key of the hybrid-time ceiling: no document record in the engine is newer. Each
/// batch that would pass it carries a higher one, written with its records (so the ceiling
/// survives whatever they survive). At open it tells the root cache what is newest.
const CEILING_KEY: &[u8] = b"\x01docdb.ht_ceiling";

/// How far past a batch's time a ceiling it writes reaches: one more key at most ten times
/// a second.
const CEILING_STEP_MICROS: u64 = 100_000;

/// Engine key of the runs of invisible documents a clean close saved
/// ([`crate::saved_spans`]); the next open takes them and deletes it.
const SAVED_SPANS_KEY: &[u8] = b"\x01docdb.saved_spans";

/// Prefix of the engine keys of [`DocDb::put_meta`]: below every document record too.
const META_PREFIX: &[u8] = b"\x01docdb.meta.";

/// [`DocDb::write_now`]'s in-flight marker: no write is between taking its time and landing.
const NO_WRITE: u64 = 0;
/// A write is taking its time from the clock right now.
const TAKING_TIME: u64 = u64::MAX;

/// Document records start at `!` (the empty DocKey `DocKey([], [])` encodes as `!`); keys
/// below it are this layer's metadata.
pub const FIRST_RECORD_BYTE: u8 = b'!';

/// The DocKey at the front of a document record's key (the whole key for a bare DocKey): the
/// prefix extractor for engines whose bloom filters should answer "is this document here?".
/// Keys that are not document records are returned whole; [`is_doc_record`] tells them apart.
pub fn doc_key_prefix(key: &[u8]) -> &[u8] {
    match DocKey::encoded_len(key) {
        Ok(len) => &key[..len],
        Err(_) => key,
    }
}

/// Whether `key` starts with a DocKey (the domain of [`doc_key_prefix`]).
pub fn is_doc_record(key: &[u8]) -> bool {
    key.first().is_some_and(|&b| b >= FIRST_RECORD_BYTE) && DocKey::encoded_len(key).is_ok()
}

/// A record key's path (its DocKey and subkeys, without the hybrid time): the prefix
/// extractor for engines whose bloom filters should answer "has this path a version here?",
/// so that a lookup of one field, member or element among many skips the files without it.
/// Its domain is [`is_versioned_record`]; keys outside it are returned whole.
///
/// With this extractor, only a seek to `path` + `#` + a whole hybrid time consults the
/// filters ([`PrefixMode::Seek`](engine::PrefixMode::Seek)); a reader must seek to a
/// bare path, or to a truncated time, to see every key.
pub fn sub_doc_key_prefix(key: &[u8]) -> &[u8] {
    // Called on every write: keys of the domain hold the time's length in their last byte,
    // so the path's end is found without decoding.
    DocHybridTime::split_from_end(key).map_or(key, |(path, _)| path)
}

/// Whether `key` has a document record's shape: a DocKey, subkeys, `#` and one whole hybrid
/// time (the domain of [`sub_doc_key_prefix`]). Parsed from the front, so a bare path or a
/// seek target whose time is cut short is never mistaken for one.
pub fn is_versioned_record(key: &[u8]) -> bool {
    parse_versioned_record(key).is_some()
}

fn parse_versioned_record(key: &[u8]) -> Option<()> {
    if *key.first()? < FIRST_RECORD_BYTE {
        return None;
    }
    let mut rest = key.get(DocKey::encoded_len(key).ok()?..)?;
    while *rest.first()? != HYBRID_TIME_BYTE {
        rest = dockv::key_entry::skip_key_entry(rest).ok()?;
    }
    // The time's shape is enough (its values are checked where records are read); a time
    // cut short of its write id has three varints, not four.
    let time = &rest[1..];
    (DocHybridTime::encoded_len_at(time)? == time.len()).then_some(())
}

/// Bloom filters on whole DocKeys ([`doc_key_prefix`]): a read of a document skips the
/// files without it. What tables use, whose reads take whole rows.
pub const DOC_KEY_PREFIX: KeyPrefix = KeyPrefix {
    name: "docdb.DocKey",
    transform: doc_key_prefix,
    in_domain: is_doc_record,
};

/// Bloom filters on records' paths ([`sub_doc_key_prefix`]): a lookup of one field, member or
/// element skips the files without it, however large its document; reads of whole documents
/// consult no filter. What the Redis server uses, whose commands look up one path each.
pub const PATH_PREFIX: KeyPrefix = KeyPrefix {
    name: "docdb.SubDocKey",
    transform: sub_doc_key_prefix,
    in_domain: is_versioned_record,
};

/// Options of a [`DocDb`].
#[derive(Debug, Clone)]
pub struct DocDbOptions {
    /// Parent init markers on writes (default optional).
    pub init_markers: InitMarkerBehavior,
    /// Default TTL applied on reads and compactions (default none).
    pub table_ttl: Option<Ttl>,
    /// How much history background compactions keep (default 900 s).
    pub history_retention: Duration,
    /// Whether each commit waits for the WAL to reach the disk (default true).
    pub sync_writes: bool,
    /// Memory for the newest records at recently read or written document roots (a Redis
    /// string's value, a collection's root and length), which reads at or after their time
    /// then take from memory: half for roots read more than once, half for roots a
    /// `write_now` wrote (all for the first without `cache_written_roots`); 0 turns it off.
    /// Fixed when the database opens (default [`DEFAULT_ROOT_CACHE_BYTES`]).
    pub root_cache_bytes: usize,
    /// Whether the root cache keeps what a `write_now` writes at a root (a GET after a SET
    /// is then served from memory, for about one cache line written per root), or only
    /// roots read more than once (default: every write stays as cheap as it was).
    pub cache_written_roots: bool,
}

impl Default for DocDbOptions {
    fn default() -> Self {
        DocDbOptions {
            init_markers: InitMarkerBehavior::Optional,
            table_ttl: None,
            history_retention: DEFAULT_HISTORY_RETENTION,
            sync_writes: true,
            root_cache_bytes: DEFAULT_ROOT_CACHE_BYTES,
            cache_written_roots: false,
        }
    }
}

#[derive(Debug, Default)]
struct PolicyState {
    /// Set while an explicit "compact now with cutoff T" runs.
    manual_cutoff: Option<HybridTime>,
    retention: Duration,
    table_ttl: Option<Ttl>,
    deleted_columns: HashSet<i32>,
    tables: Option<Arc<dyn TableRulesSource>>,
}

/// Decides the GC parameters of every compaction; hand it to the engine as its compaction
/// filter factory.
#[derive(Debug)]
pub struct GcPolicy {
    clock: Arc<HybridClock>,
    state: Mutex<PolicyState>,
    stats: Arc<Mutex<GcStats>>,
    /// Rows repacked by manual compactions, waiting to be written.
    repacked: Arc<Mutex<Records>>,
    /// The times of records that may not be in files yet: a full compaction's cutoff stays
    /// below them.
    unflushed: UnflushedWrites,
}

impl GcPolicy {
    /// A policy keeping [`DEFAULT_HISTORY_RETENTION`] of history behind `clock`.
    pub fn new(clock: Arc<HybridClock>) -> Arc<Self> {
        Arc::new(GcPolicy {
            clock,
            state: Mutex::new(PolicyState {
                retention: DEFAULT_HISTORY_RETENTION,
                ..PolicyState::default()
            }),
            stats: Arc::default(),
            repacked: Arc::default(),
            unflushed: UnflushedWrites::default(),
        })
    }

    /// Registers per-table rules (the table layer does, for colocated tables' TTLs, dropped
    /// columns and repacking).
    pub fn set_table_rules(&self, tables: Arc<dyn TableRulesSource>) {
        self.state().tables = Some(tables);
    }

    fn take_repacked(&self) -> Records {
        std::mem::take(&mut *self.repacked.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, PolicyState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The history cutoff a compaction starting now would use (a full compaction's stays
    /// below every record that may not be in its files, see [`crate::unflushed`]).
    pub fn history_cutoff(&self) -> HybridTime {
        let state = self.state();
        if let Some(cutoff) = state.manual_cutoff {
            return cutoff;
        }
        let now = self.clock.now().physical_micros();
        let keep = u64::try_from(state.retention.as_micros()).unwrap_or(u64::MAX);
        HybridTime::from_micros(now.saturating_sub(keep))
    }

    /// Sets the table TTL and dropped columns GC applies.
    pub fn configure(
        &self,
        table_ttl: Option<Ttl>,
        retention: Duration,
        deleted_columns: HashSet<i32>,
    ) {
        let mut state = self.state();
        state.table_ttl = table_ttl;
        state.retention = retention;
        state.deleted_columns = deleted_columns;
    }

    /// The latest cutoff at which a full compaction still sees every record at or below it.
    fn full_compaction_floor(&self, ctx: &CompactionContext) -> HybridTime {
        let in_compact = self.state().manual_cutoff.is_some();
        if ctx.is_manual && in_compact {
            // [`DocDb::compact`] flushed what its checkpoint took before choosing the files.
            self.unflushed.cutoff_after_checkpoint()
        } else {
            self.unflushed.cutoff(self.clock.now().physical_micros())
        }
    }

    /// [`UnflushedWrites::checkpoint`] on this policy's clock.
    fn checkpoint<R>(&self, flush: impl FnOnce() -> engine::Result<R>) -> engine::Result<R> {
        let now = || self.clock.now().physical_micros();
        self.unflushed.checkpoint(now, flush)
    }

    /// [`UnflushedWrites::try_checkpoint`] on this policy's clock.
    fn try_checkpoint<R>(
        &self,
        flush: impl FnOnce() -> engine::Result<R>,
    ) -> Option<engine::Result<R>> {
        let now = || self.clock.now().physical_micros();
        self.unflushed.try_checkpoint(now, flush)
    }

    /// How long writes flushed by a [`DocDb::flush`] still hold back the cutoff of full
    /// compactions (see [`crate::unflushed`]); default
    /// [`crate::unflushed::FLUSH_GRACE_MICROS`]. It must exceed the time a compaction takes
    /// from choosing its files to starting; tests on a fast timeline shorten it.
    pub fn set_flush_grace(&self, grace: Duration) {
        let micros = u64::try_from(grace.as_micros()).unwrap_or(u64::MAX);
        self.unflushed.set_grace_micros(micros);
    }

    /// Counters summed over every compaction so far.
    pub fn stats(&self) -> GcStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl CompactionFilterFactory for GcPolicy {
    fn create(&self, ctx: &CompactionContext) -> Box<dyn CompactionFilter> {
        let mut history_cutoff = self.history_cutoff();
        if ctx.is_full {
            history_cutoff = history_cutoff.min(self.full_compaction_floor(ctx));
        }
        let state = self.state();
        let params = GcParams {
            history_cutoff,
            table_ttl: state.table_ttl,
            full: ctx.is_full,
            can_rewrite: ctx.can_replace,
            deleted_columns: state.deleted_columns.clone(),
            tables: state.tables.clone(),
        };
        Box::new(GcAdapter {
            filter: GcFilter::new(params),
            totals: self.stats.clone(),
            repacked: self.repacked.clone(),
        })
    }
}

/// Runs the pure GC inside an engine compaction and adds its counters to the totals when the
/// compaction ends.
struct GcAdapter {
    filter: GcFilter,
    totals: Arc<Mutex<GcStats>>,
    repacked: Arc<Mutex<Records>>,
}

impl CompactionFilter for GcAdapter {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> CompactionDecision {
        match self.filter.filter(key, value) {
            GcDecision::Keep => CompactionDecision::Keep,
            GcDecision::Discard => CompactionDecision::Remove,
            GcDecision::Tombstone => CompactionDecision::ReplaceWithStatic(TOMBSTONE_VALUE),
            GcDecision::Rewrite(v) => CompactionDecision::Replace(v),
        }
    }
}

impl Drop for GcAdapter {
    fn drop(&mut self) {
        let repacked = self.filter.take_repacked();
        if !repacked.is_empty() {
            self.repacked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(repacked);
        }
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(self.filter.stats());
    }
}

/// Which documents a scan returns.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Inclusive lower bound: an encoded DocKey or any key prefix (e.g. `G` + hash).
    pub lower: Option<Vec<u8>>,
    /// Exclusive upper bound.
    pub upper: Option<Vec<u8>>,
    /// Read time, table TTL, projection.
    pub read: ReadOptions,
    /// At most this many documents.
    pub limit: Option<usize>,
    /// Newest key first.
    pub reverse: bool,
}

/// The [`DocDbOptions`] every write reads.
#[derive(Debug)]
struct WriteFlags {
    sync: AtomicBool,
    markers_required: AtomicBool,
}

impl WriteFlags {
    fn of(options: &DocDbOptions) -> Self {
        let flags = WriteFlags {
            sync: AtomicBool::new(false),
            markers_required: AtomicBool::new(false),
        };
        flags.set(options);
        flags
    }

    fn set(&self, options: &DocDbOptions) {
        self.sync.store(options.sync_writes, Ordering::SeqCst);
        let required = options.init_markers == InitMarkerBehavior::Required;
        self.markers_required.store(required, Ordering::SeqCst);
    }

    fn sync(&self) -> bool {
        self.sync.load(Ordering::Relaxed)
    }

    fn init_markers(&self) -> InitMarkerBehavior {
        if self.markers_required.load(Ordering::Relaxed) {
            InitMarkerBehavior::Required
        } else {
            InitMarkerBehavior::Optional
        }
    }
}

/// Documents stored over an engine `E`.
pub struct DocDb<E: Engine> {
    engine: E,
    options: RwLock<DocDbOptions>,
    /// The options every write reads, kept apart so that a write takes no lock for them.
    write_flags: WriteFlags,
    clock: Arc<HybridClock>,
    policy: Arc<GcPolicy>,
    list_counter: Mutex<i64>,
    /// Serialises [`DocDb::write_now`] writers.
    writer: Mutex<()>,
    /// The hybrid time of the `write_now` write in flight ([`NO_WRITE`], [`TAKING_TIME`]).
    in_flight: AtomicU64,
    /// The next write id at the in-flight time: the batches a `write_now` commits (several,
    /// in a transaction) number their records on from one another.
    next_write_id: AtomicU32,
    /// Collection roots the `write_now` writer read.
    roots: RootCache,
    /// Runs of invisible documents that scans found, a set per kind of scan.
    spans: SpanSets,
    /// The documents recent batches wrote, for scans keeping runs.
    recent: RecentWrites,
    /// Documents deleted since the last sweep (see [`crate::sweep`]).
    deleted: DeletedQueue,
    /// The hybrid-time ceiling last written (see [`CEILING_KEY`]); raising it takes the
    /// lock, and it is read without.
    ceiling: Mutex<()>,
    ceiling_now: AtomicU64,
    /// The pairs the `write_now` in flight committed, written to the engine as one batch
    /// when it ends; its reads see them through [`Layered`] iterators.
    pending: Mutex<Pending>,
    /// The writes staged to land on another thread (see [`crate::staged`]).
    staged: StageQueue,
}

/// Whether `engine` holds any document record.
fn holds_documents<E: Engine>(engine: &E) -> Result<bool> {
    let mut iter = engine.iterator(IterOptions::new().lower(vec![FIRST_RECORD_BYTE]))?;
    iter.seek(&[FIRST_RECORD_BYTE]);
    Ok(iter.valid()?)
}

/// Whether a scan reading with `read` may keep the runs it finds (see
/// [`crate::dead_spans`]): no projection or table TTL hides a document that exists.
fn may_learn_spans(read: &ReadOptions) -> bool {
    read.projection.is_none() && read.table_ttl.is_none()
}

/// What a walk's visitor found at a document.
enum Seen {
    /// A visible document; the walk goes on.
    Visible,
    /// A visible document, the last the walk wants.
    Last,
    /// An invisible document.
    Invisible,
}

impl Seen {
    /// A visible document, the last unless the walk wants `more`.
    fn visible(more: bool) -> Self {
        if more { Seen::Visible } else { Seen::Last }
    }
}

/// A scan's use of one set of runs of invisible documents (see [`crate::dead_spans`]):
/// it skips the runs kept there and, when it ends, keeps the runs it read. Made by
/// [`DocDb::span_walk`] before the scan's iterator; the scan then tells it of each
/// document in scan order.
pub struct SpanWalk<'d> {
    log: &'d RecentWrites,
    spans: Arc<DeadSpans>,
    read_ht: HybridTime,
    reverse: bool,
    /// Where the walk began in the log of recent writes, if it may keep the runs it reads.
    learns: Option<LogPlace>,
    cursor: SpanCursor,
    run: Run,
    runs: Vec<Span>,
    stats: ReadStats,
}

impl SpanWalk<'_> {
    /// If the document at `doc_key` (an encoded DocKey) is in a kept run, moves `iter`
    /// past the run in scan direction (to the first record after it, or the last before
    /// it) and returns true.
    pub fn skip<I: EngineIterator>(&mut self, iter: &mut I, doc_key: &[u8]) -> bool {
        let Some(span) = self.cursor.covering(&self.spans, doc_key) else {
            return false;
        };
        self.stats.seeks += 1;
        self.stats.spans_skipped += 1;
        if self.reverse {
            iter.seek_for_prev(&span.start);
        } else {
            iter.seek(&span.end);
        }
        self.run.extend(span);
        true
    }

    /// The scan read the document at `doc_key` and found it invisible.
    pub fn invisible(&mut self, doc_key: &[u8]) {
        self.run.extend_document(doc_key, self.read_ht);
    }

    /// The scan read a visible document (or one it does not judge), which ends a run.
    pub fn visible(&mut self) {
        if let Some(span) = self.run.take()
            && self.learns.is_some()
            && self.runs.len() < MAX_DEAD_SPANS
        {
            self.runs.push(span);
        }
    }

    /// The scan's reads could hide a document that exists (a table TTL): it keeps nothing.
    pub fn keep_nothing(&mut self) {
        if let Some(place) = self.learns.take() {
            self.log.abandon(place);
        }
    }

    /// Ends the walk, keeping its runs less the documents written since it began; returns
    /// its seeks and skipped runs.
    pub fn finish(mut self) -> ReadStats {
        self.visible();
        self.spans.note_skipped(self.stats.spans_skipped);
        if let Some(place) = self.learns.take() {
            let runs = std::mem::take(&mut self.runs);
            self.spans.learn(runs, self.log, place);
        }
        self.stats
    }

    /// Calls `visit` at each document of `iter` not in a kept run, the iterator on the
    /// document's first record, until it returns [`Seen::Last`]; then [`Self::finish`].
    /// Walking forward, `visit` leaves the iterator past the document; in reverse, anywhere.
    /// Past `deadline`, it stops before the next document (checked every
    /// [`DEADLINE_CHECK_EVERY`] documents) and says which.
    fn run<I: EngineIterator>(
        mut self,
        iter: &mut I,
        deadline: Option<Instant>,
        mut visit: impl FnMut(&mut I, &[u8]) -> Result<Seen>,
    ) -> Result<Walked> {
        let mut doc_key = Vec::new();
        let mut docs = 0u32;
        while iter.valid()? {
            let doc_len = DocKey::encoded_len(iter.key())?;
            doc_key.clear();
            doc_key.extend_from_slice(&iter.key()[..doc_len]);
            docs = docs.wrapping_add(1);
            if docs.is_multiple_of(DEADLINE_CHECK_EVERY)
                && deadline.is_some_and(|d| Instant::now() >= d)
            {
                // The runs read so far hold: each ends at a document read invisible.
                return Ok(Walked {
                    stats: self.finish(),
                    stopped_at: Some(doc_key),
                });
            }
            if self.skip(iter, &doc_key) {
                continue;
            }
            if self.reverse {
                // On the document's last record: it is read from its first.
                self.stats.seeks += 1;
                iter.seek(&doc_key);
            }
            let seen = visit(iter, &doc_key)?;
            match seen {
                Seen::Invisible => self.invisible(&doc_key),
                Seen::Visible | Seen::Last => self.visible(),
            }
            if matches!(seen, Seen::Last) {
                break;
            }
            if self.reverse {
                self.stats.seeks += 1;
                iter.seek_for_prev(&doc_key);
            }
        }
        Ok(Walked {
            stats: self.finish(),
            stopped_at: None,
        })
    }
}

/// What a sweep did with one queued document.
enum Swept {
    /// At least one probe read from it.
    Probed,
    /// Kept runs held it for every kind of scan that reads it.
    Covered,
    /// No kind of scan swept reads it.
    Unread,
}

/// What [`SpanWalk::run`] did.
struct Walked {
    stats: ReadStats,
    /// The document a walk past its deadline stopped before.
    stopped_at: Option<Vec<u8>>,
}

impl Drop for SpanWalk<'_> {
    /// A walk that ended early (an error) keeps nothing.
    fn drop(&mut self) {
        self.keep_nothing();
    }
}

/// A `write_now`'s committed pairs that have not landed.
#[derive(Default)]
struct Pending {
    /// The pairs (puts only) in commit order.
    pairs: WriteBatch,
    /// The first `indexed` pairs by key (over `under`'s), for reads; brought up to date when
    /// a read asks, so that writes that read nothing (a pipeline of SETs) never pay for it.
    index: Arc<Overlay>,
    indexed: usize,
    /// The staged writes this `write_now` began over, oldest first, until they have landed:
    /// their pairs are read under its own.
    under: Vec<Arc<StagedWrite>>,
    /// Whether `index` holds `under`'s pairs yet.
    seeded: bool,
    /// The first number in the log of recent writes this `write_now`'s batches may have.
    log_from: u64,
}

impl Pending {
    /// The pairs of a `write_now` beginning over `under`, numbered from `log_from`.
    fn beginning(under: Vec<Arc<StagedWrite>>, log_from: u64) -> Self {
        Pending {
            under,
            log_from,
            ..Pending::default()
        }
    }

    /// The pairs by key, if there are any.
    fn overlay(&mut self) -> Option<Arc<Overlay>> {
        if !self.seeded {
            self.seeded = true;
            self.index = overlay_of(&self.under);
        }
        if self.indexed < self.pairs.len() {
            let new = self
                .pairs
                .iter()
                .skip(self.indexed)
                .filter_map(|op| match op {
                    WriteOp::Put(key, value) => Some((key.to_vec(), value.to_vec())),
                    WriteOp::Delete(_) => None,
                });
            // Copies the map only if a reader still holds it (usually none does by now).
            Arc::make_mut(&mut self.index).extend(new);
            self.indexed = self.pairs.len();
        }
        (!self.index.is_empty()).then(|| self.index.clone())
    }

    /// Whether it began over a staged write that failed to land.
    fn under_failed(&self) -> bool {
        any_failed(&self.under)
    }
}

/// Lookups in one document sharing an iterator (see [`DocDb::view`]). The iterator's view
/// of the engine is fixed when the view is made.
pub struct DocView<'a, E: Engine> {
    iter: Layered<E::Iter<'a>>,
    opts: ReadOptions,
    root: Option<RootLevel>,
    db: &'a DocDb<E>,
    /// The encoded DocKey's length: a lookup of a path this long is of the root.
    doc_key_len: usize,
    /// Whether what the view reads may go into the root cache: it reads at its own
    /// `write_now`'s time, or no `write_now` had writes pending when its iterator was made.
    may_keep: bool,
    /// The root cache's commit count when the view was made.
    commits_before: u64,
}

impl<'a, E: Engine> DocView<'a, E> {
    /// The view's engine iterator, for [`DocDb::view_reusing`].
    pub fn into_iterator(self) -> E::Iter<'a> {
        self.iter.into_base()
    }

    /// The record visible at the encoded `path` of this document.
    pub fn record(&mut self, path: &[u8]) -> Result<Option<VisibleRecord>> {
        if let Some(kept) = self.kept(path) {
            return Ok(Some(kept));
        }
        self.read_record(path)
    }

    /// The record at the document's root (`doc_key`), as [`Self::record`] reads it, for a
    /// caller that has just asked the root cache ([`DocDb::cached_root`]) and missed: asking
    /// again would cost a second lookup for nothing. Reads the engine, and offers the root
    /// cache what it finds.
    pub fn root_record_past_cache(&mut self, doc_key: &[u8]) -> Result<Option<VisibleRecord>> {
        if doc_key.len() != self.doc_key_len {
            return self.record(doc_key);
        }
        self.read_record(doc_key)
    }

    /// [`Self::record`] from the engine, past the root cache.
    fn read_record(&mut self, path: &[u8]) -> Result<Option<VisibleRecord>> {
        let root_known = self.root.is_some();
        let record = visible_record_cached(
            &mut self.iter,
            path,
            &self.opts,
            &mut ReadStats::default(),
            &mut self.root,
        )?;
        if self.may_keep
            && let Some(found) = &record
        {
            self.keep(path, found, root_known);
        }
        Ok(record)
    }

    /// The root cache's record for `path`: the root before the view read it, or the
    /// counter once the view knows the root. Learns the root's level from the cache on the
    /// way, for lookups below it.
    fn kept(&mut self, path: &[u8]) -> Option<VisibleRecord> {
        let is_root = path.len() == self.doc_key_len;
        let doc_key = path.get(..self.doc_key_len)?;
        if self.root.is_none() {
            let (record, level) = self.cached_root(doc_key)?;
            self.root = Some(level);
            if is_root {
                return Some(record);
            }
        }
        if is_counter_path(path, self.doc_key_len) && self.opts.table_ttl.is_none() {
            return self.db.roots.counter(doc_key, self.opts.read_ht);
        }
        None
    }

    /// The document's root as the root cache has it for this view's reads.
    fn cached_root(&self, doc_key: &[u8]) -> Option<(VisibleRecord, RootLevel)> {
        if self.opts.table_ttl.is_some() {
            return None;
        }
        self.db.roots.get(doc_key, self.opts.read_ht)
    }

    /// Offers the root cache what the view read at `path` (the root, read first when
    /// `root_known` is false, or the counter).
    fn keep(&self, path: &[u8], record: &VisibleRecord, root_known: bool) {
        let roots = &self.db.roots;
        if path.len() == self.doc_key_len && !root_known {
            roots.remember(path, record, &self.opts, self.commits_before);
        } else if is_counter_path(path, self.doc_key_len) {
            roots.remember_counter(
                &path[..self.doc_key_len],
                record,
                &self.opts,
                self.commits_before,
            );
        }
    }

    /// The visible first-level children of `path` within `range`.
    pub fn children(
        &mut self,
        path: &[u8],
        range: &ChildRange,
    ) -> Result<Vec<(dockv::KeyEntryValue, SubDocument)>> {
        if self.root.is_none()
            && let Some((_, level)) = path
                .get(..self.doc_key_len)
                .and_then(|doc_key| self.cached_root(doc_key))
        {
            self.root = Some(level);
        }
        read_children_cached(
            &mut self.iter,
            path,
            range,
            &self.opts,
            &mut ReadStats::default(),
            &mut self.root,
        )
    }

    /// The subdocument at `path`.
    pub fn subdocument(&mut self, path: &[u8]) -> Result<Option<SubDocument>> {
        // Earlier lookups may have left the iterator inside the subtree: start at its top.
        self.iter.seek(path);
        read_subdocument(&mut self.iter, path, &self.opts, &mut ReadStats::default())
    }

    /// The database the view reads.
    pub fn db(&self) -> &DocDb<E> {
        self.db
    }
}

/// Discards a `write_now`'s pending writes that did not land (it failed or panicked),
/// unless they were staged.
struct Unlanded<'a, E: Engine> {
    db: &'a DocDb<E>,
    staged: bool,
}

impl<E: Engine> Drop for Unlanded<'_, E> {
    fn drop(&mut self) {
        if !self.staged {
            self.db.discard_pending();
        }
    }
}

/// What a `write_now` holds from taking its time until it ends, in drop order.
struct Writing<'a, E: Engine> {
    unlanded: Unlanded<'a, E>,
    _here: WritingHere,
    _in_flight: InFlight<'a>,
    _writer: MutexGuard<'a, ()>,
    ht: HybridTime,
}

/// Resets the in-flight marker even if the write closure panics.
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.store(NO_WRITE, Ordering::SeqCst);
    }
}

thread_local! {
    /// The database whose [`DocDb::write_now`] this thread is inside (by [`DocDb::identity`]),
    /// or 0.
    static WRITING: Cell<usize> = const { Cell::new(0) };
}

/// Marks this thread as inside a database's `write_now` until dropped, then restores the
/// mark it replaced (a `write_now` of another database may enclose this one).
struct WritingHere(usize);

impl WritingHere {
    fn enter(identity: usize) -> Self {
        WritingHere(WRITING.with(|w| w.replace(identity)))
    }
}

impl Drop for WritingHere {
    fn drop(&mut self) {
        WRITING.with(|w| w.set(self.0));
    }
}

impl<E: Engine> DocDb<E> {
    /// Opens documents over `engine`, which must have been opened with `policy` as its
    /// compaction filter factory so that compactions collect garbage.
    pub fn open(engine: E, policy: Arc<GcPolicy>, options: DocDbOptions) -> Result<Self> {
        // Records an engine recovered from its log into memory were written by no one this
        // process tracks (see [`crate::unflushed`]): into files with them.
        engine.flush()?;
        let saved_spans = take_saved_spans(&engine)?;
        let counter = match engine.get(LIST_COUNTER_KEY)? {
            Some(bytes) => i64::from_be_bytes(
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| Error::Corruption("bad list counter".into()))?,
            ),
            None => 0,
        };
        let clock = policy.clock.clone();
        let ceiling = match engine.get(CEILING_KEY)? {
            Some(bytes) => {
                HybridTime(u64::from_be_bytes(bytes.as_slice().try_into().map_err(
                    |_| Error::Corruption("bad hybrid-time ceiling".into()),
                )?))
            }
            // A database written before ceilings: its records are taken to be in the past.
            None if holds_documents(&engine)? => clock.now(),
            // Nothing stored: any read time is after everything, even one far in the past
            // (the shell's `@1000`), so the first scans may keep their runs.
            None => HybridTime(0),
        };
        let roots = RootCache::new(
            options.root_cache_bytes,
            options.cache_written_roots,
            ceiling,
        );
        let db = DocDb {
            engine,
            write_flags: WriteFlags::of(&options),
            options: RwLock::new(options),
            clock,
            policy,
            list_counter: Mutex::new(counter),
            writer: Mutex::new(()),
            in_flight: AtomicU64::new(NO_WRITE),
            next_write_id: AtomicU32::new(0),
            roots,
            spans: SpanSets::default(),
            recent: RecentWrites::new(ceiling),
            deleted: DeletedQueue::default(),
            ceiling: Mutex::new(()),
            ceiling_now: AtomicU64::new(ceiling.0),
            pending: Mutex::new(Pending::default()),
            staged: StageQueue::default(),
        };
        db.sync_policy();
        if let Some(saved) = saved_spans {
            db.spans.restore(saved.sets);
        }
        Ok(db)
    }

    /// Saves the runs of invisible documents that scans keep, for the next open to take
    /// back if nothing is written before it (see [`crate::saved_spans`]); returns how many
    /// spans it saved. Call it when closing, after the last write: a write after it makes
    /// the next open drop them.
    pub fn save_spans(&self) -> Result<usize> {
        // Every batch landed by now cut the spans before it landed, so the spans taken
        // after this number hold at it.
        let before = self.engine.last_sequence();
        let saved = SavedSpans {
            sequence: before + 1,
            sets: self.spans.snapshot(),
        };
        let count = saved.span_count();
        if count == 0 {
            return Ok(0);
        }
        let mut batch = WriteBatch::with_capacity(1);
        batch.put(SAVED_SPANS_KEY, saved.encode());
        self.engine.write(&batch, WriteOptions { sync: true })?;
        if self.engine.last_sequence() != saved.sequence {
            // Another write came between: the next open finds the record stale.
            return Ok(0);
        }
        Ok(count)
    }

    fn sync_policy(&self) {
        let options = self.options();
        self.policy
            .configure(options.table_ttl, options.history_retention, HashSet::new());
    }

    /// Closes the document layer and returns the engine (to close or reopen it).
    pub fn into_engine(self) -> E {
        self.engine
    }

    /// The engine underneath.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The hybrid clock.
    pub fn clock(&self) -> &HybridClock {
        &self.clock
    }

    /// The GC policy.
    pub fn gc_policy(&self) -> &GcPolicy {
        &self.policy
    }

    /// A copy of the options.
    pub fn options(&self) -> DocDbOptions {
        self.options
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Changes the options.
    pub fn set_options(&self, options: DocDbOptions) {
        let mut kept = self.options.write().unwrap_or_else(|e| e.into_inner());
        self.write_flags.set(&options);
        *kept = options;
        drop(kept);
        self.sync_policy();
    }

    /// Read options at `read_ht` with this database's table TTL.
    pub fn read_options(&self, read_ht: HybridTime) -> ReadOptions {
        ReadOptions {
            read_ht,
            table_ttl: self.options().table_ttl,
            projection: None,
        }
    }

    /// A new write batch at `ht`.
    pub fn batch(&self, ht: HybridTime) -> DocWriteBatch<'_, E> {
        DocWriteBatch::new(self, ht, self.write_flags.init_markers())
    }

    /// The subdocument at `path` as of `opts.read_ht`.
    pub fn get(&self, path: &SubDocKey, opts: &ReadOptions) -> Result<Option<SubDocument>> {
        self.get_with_stats(path, opts).map(|(doc, _)| doc)
    }

    /// [`Self::get`] plus the read's counters.
    pub fn get_with_stats(
        &self,
        path: &SubDocKey,
        opts: &ReadOptions,
    ) -> Result<(Option<SubDocument>, ReadStats)> {
        let encoded = path.encode();
        let doc_len = DocKey::encoded_len(&encoded)?;
        let mut iter = self.doc_iterator(&encoded[..doc_len])?;
        let mut stats = ReadStats::default();
        let doc = read_subdocument(&mut iter, &encoded, opts, &mut stats)?;
        Ok((doc, stats))
    }

    /// The record visible at exactly the encoded `path`.
    pub fn visible_record(&self, path: &[u8], opts: ReadOptions) -> Result<Option<VisibleRecord>> {
        let doc_len = DocKey::encoded_len(path)?;
        let mut iter = self.doc_iterator(&path[..doc_len])?;
        visible_record(&mut iter, path, &opts, &mut ReadStats::default())
    }

    /// The record at the root of `doc_key` as of `opts`, if the root cache holds it: what
    /// [`DocView::record`] of the root would return, without making a view.
    pub fn cached_root(&self, doc_key: &[u8], opts: &ReadOptions) -> Option<VisibleRecord> {
        if opts.table_ttl.is_some() {
            return None;
        }
        self.roots
            .get(doc_key, opts.read_ht)
            .map(|(record, _)| record)
    }

    /// The record at `path` when it is a collection's counter (its DocKey, then the counter
    /// subkey) that the root cache holds for reads with `opts`, as [`DocView::record`] would
    /// return it: a length read without making a view (an iterator) at all. `None` for any
    /// other path, or a counter the cache does not hold.
    pub fn cached_counter(&self, path: &[u8], opts: &ReadOptions) -> Option<VisibleRecord> {
        // A counter path ends in the counter's type byte: other paths (a member, a field)
        // are told from their last byte, without parsing the DocKey.
        if opts.table_ttl.is_some() || path.last() != Some(&KeyEntryType::Counter.as_u8()) {
            return None;
        }
        let doc_key_len = DocKey::encoded_len(path).ok()?;
        if !is_counter_path(path, doc_key_len) {
            return None;
        }
        self.roots.counter(path.get(..doc_key_len)?, opts.read_ht)
    }

    /// Lookups in the document `doc_key` as of `opts.read_ht` through one iterator, reading
    /// the document's root once (a Redis command's type check and field lookups).
    pub fn view(&self, doc_key: &[u8], opts: ReadOptions) -> Result<DocView<'_, E>> {
        let commits_before = self.roots.commits();
        let iter = self.doc_iterator(doc_key)?;
        Ok(self.view_on(iter, doc_key, opts, commits_before))
    }

    /// A view on `iter`, made (or re-aimed) after the root cache counted `commits_before`.
    fn view_on<'a>(
        &'a self,
        iter: Layered<E::Iter<'a>>,
        doc_key: &[u8],
        opts: ReadOptions,
        commits_before: u64,
    ) -> DocView<'a, E> {
        // A `write_now` that ended since `commits_before` was taken counted its landing.
        let may_keep = match self.own_write_time() {
            Some(own) => own == opts.read_ht && !self.lock_pending().under_failed(),
            None => {
                self.in_flight.load(Ordering::SeqCst) == NO_WRITE && self.staged.oldest().is_none()
            }
        };
        DocView {
            iter,
            opts,
            root: None,
            db: self,
            doc_key_len: doc_key.len(),
            may_keep,
            commits_before,
        }
    }

    /// [`Self::view`] re-aiming `recycled` (an iterator from [`Self::view_iterator`] or
    /// [`DocView::into_iterator`]) at the document instead of building an iterator: a server
    /// running many small commands keeps one (see [`engine::EngineIterator::reset`]).
    pub fn view_reusing<'a>(
        &'a self,
        recycled: Option<E::Iter<'a>>,
        doc_key: &[u8],
        opts: ReadOptions,
    ) -> Result<DocView<'a, E>> {
        let commits_before = self.roots.commits();
        let iter = match recycled {
            Some(iter) => iter,
            None => self.view_iterator()?,
        };
        let iter = self.aimed(iter, doc_key)?;
        Ok(self.view_on(iter, doc_key, opts, commits_before))
    }

    /// An iterator for [`Self::view_reusing`]: unbounded, each view narrowing it to one
    /// document, and using prefix bloom filters where the engine has them.
    pub fn view_iterator(&self) -> Result<E::Iter<'_>> {
        Ok(self.engine.iterator(view_iterator_options())?)
    }

    /// An iterator narrowed to the document at `doc_key`. It is the engine's kept iterator
    /// ([`Self::view_iterator`]) when one is free: building and freeing an iterator's tree
    /// over the memtables and files costs a point read more than its seek does.
    fn doc_iterator(&self, doc_key: &[u8]) -> Result<Layered<E::Iter<'_>>> {
        let upper = doc_upper_bound(doc_key);
        let iter =
            self.engine
                .iterator_within(view_iterator_options(), Some(doc_key), Some(&upper))?;
        Ok(self.layered(iter, Some(doc_key), Some(&upper)))
    }

    /// `iter` (from [`Self::view_iterator`]) re-aimed at the document at `doc_key` alone.
    fn aimed<'a>(&self, mut iter: E::Iter<'a>, doc_key: &[u8]) -> Result<Layered<E::Iter<'a>>> {
        let upper = doc_upper_bound(doc_key);
        iter.reset(Some(doc_key), Some(&upper))?;
        Ok(self.layered(iter, Some(doc_key), Some(&upper)))
    }

    /// An engine iterator over `[lower, upper)` as the present thread must read it: with
    /// the pairs its `write_now` committed but has not written yet.
    fn bounded_iterator(&self, lower: &[u8], upper: Option<&[u8]>) -> Result<Layered<E::Iter<'_>>> {
        let mut opts = IterOptions::new().lower(lower.to_vec());
        if let Some(upper) = upper {
            opts = opts.upper(upper.to_vec());
        }
        let iter = self.engine.iterator(opts)?;
        Ok(self.layered(iter, Some(lower), upper))
    }

    /// `iter` (bounded by `lower..upper`) with this thread's pending writes layered over it.
    fn layered<'a>(
        &self,
        iter: E::Iter<'a>,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Layered<E::Iter<'a>> {
        Layered::new(iter, self.pending_overlay(), lower, upper)
    }

    /// The pairs this thread's `write_now` committed and has not written, if any (only its
    /// own reads may see them; every other reader waits until they land).
    fn pending_overlay(&self) -> Option<Arc<Overlay>> {
        self.own_write_time()?;
        self.lock_pending().overlay()
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The visible documents between the bounds, in key order (or reverse).
    ///
    /// Runs of invisible documents (deleted, expired) that an earlier scan read are skipped
    /// with one seek, and the runs this scan reads are kept for later ones (see
    /// [`crate::dead_spans`]).
    pub fn scan(&self, opts: &ScanOptions) -> Result<(Vec<(DocKey, SubDocument)>, ReadStats)> {
        let (docs, walked) = self.scan_until(opts, None)?;
        Ok((docs, walked.stats))
    }

    /// [`Self::scan`], stopping before its next document once `deadline` has passed (see
    /// [`SpanWalk::run`]).
    fn scan_until(
        &self,
        opts: &ScanOptions,
        deadline: Option<Instant>,
    ) -> Result<(Vec<(DocKey, SubDocument)>, Walked)> {
        let lower = opts
            .lower
            .clone()
            .unwrap_or_else(|| vec![FIRST_RECORD_BYTE]);
        let mut stats = ReadStats::default();
        let limit = opts.limit.unwrap_or(usize::MAX);
        if limit == 0 {
            let walked = Walked {
                stats,
                stopped_at: None,
            };
            return Ok((Vec::new(), walked));
        }
        let walk = self.span_walk(SpanSet::Documents, &opts.read, opts.reverse);
        let mut iter = self.bounded_iterator(&lower, opts.upper.as_deref())?;
        if opts.reverse {
            iter.seek_to_last();
        } else {
            iter.seek(&lower);
        }
        let mut scanner = DocScanner::new(&opts.read, &mut stats);
        let mut out = Vec::new();
        let mut walked = walk.run(&mut iter, deadline, |iter, doc_key| {
            Ok(match scanner.read(iter, doc_key)? {
                Some(doc) => {
                    out.push((DocKey::decode(doc_key)?.0, doc));
                    Seen::visible(out.len() < limit)
                }
                None => Seen::Invisible,
            })
        })?;
        walked.stats += stats;
        Ok((out, walked))
    }

    /// A walk over the documents of a scan reading with `read`, using the runs of `set`.
    /// Make it before the scan's iterator: it takes its place in the log of recent writes
    /// then, and every batch from that place on is cut out of the runs it keeps.
    pub fn span_walk(&self, set: SpanSet, read: &ReadOptions, reverse: bool) -> SpanWalk<'_> {
        // Before the iterator is made: see `crate::recent_writes`.
        let learns = may_learn_spans(read)
            .then(|| self.recent.begin(read.read_ht))
            .flatten();
        SpanWalk {
            log: &self.recent,
            spans: self.spans.get(set),
            read_ht: read.read_ht,
            reverse,
            learns,
            cursor: SpanCursor::new(read.read_ht, reverse),
            run: Run::default(),
            runs: Vec::new(),
            stats: ReadStats::default(),
        }
    }

    /// Reads, for each kind of scan this database has run ([`SpanSet::Documents`] and
    /// [`SpanSet::Roots`]), from every document deleted since the last sweep to the next
    /// visible document, unless a kept run holds it already, and keeps the runs of deleted
    /// documents found as those scans would (see [`crate::sweep`]): a scan after the sweep
    /// then skips each run with one seek, where without it the first scan would read every
    /// deleted document. Stops once `budget` has passed, leaving the rest queued for the next
    /// sweep. For a caller to run in the background now and then (`docdb serve` does every
    /// second). A database with tables sweeps with [`Self::sweep_deleted_with`] instead.
    pub fn sweep_deleted(&self, budget: Option<Duration>) -> Result<SweepStats> {
        self.sweep(
            budget,
            None::<fn(u32, &[u8], HybridTime, Option<Instant>) -> Result<Probed>>,
        )
    }

    /// [`Self::sweep_deleted`] for the table rows' sets too ([`SpanSet::Rows`]), whose rows
    /// only the table layer can read: `probe_rows(table, doc_key, read_ht, deadline)` reads
    /// from `doc_key` to the table's next row that exists at `read_ht`, with a walk of
    /// [`Self::span_walk`] so that it keeps the runs it finds, and stops past `deadline`.
    pub fn sweep_deleted_with<Err: From<Error>>(
        &self,
        budget: Option<Duration>,
        probe_rows: impl FnMut(
            u32,
            &[u8],
            HybridTime,
            Option<Instant>,
        ) -> std::result::Result<Probed, Err>,
    ) -> std::result::Result<SweepStats, Err> {
        self.sweep(budget, Some(probe_rows))
    }

    fn sweep<Err, P>(
        &self,
        budget: Option<Duration>,
        mut probe_rows: Option<P>,
    ) -> std::result::Result<SweepStats, Err>
    where
        Err: From<Error>,
        P: FnMut(u32, &[u8], HybridTime, Option<Instant>) -> std::result::Result<Probed, Err>,
    {
        let started = Instant::now();
        let mut taken = self.deleted.take();
        let mut stats = SweepStats {
            taken: taken.keys.len() as u64,
            ..SweepStats::default()
        };
        let sets: Vec<_> = self
            .spans
            .existing_sets()
            .into_iter()
            .filter(|(set, _)| probe_rows.is_some() || !matches!(set, SpanSet::Rows(_)))
            .collect();
        if taken.keys.is_empty() || sets.is_empty() {
            return Ok(stats);
        }
        let learned_before: u64 = sets.iter().map(|(_, spans)| spans.stats().learned).sum();
        let read_ht = self.safe_time();
        let deadline = budget.map(|budget| started + budget);
        let mut stopped = Vec::new();
        let mut swept = 0;
        for doc_key in &taken.keys {
            swept += 1;
            let probed = match self.sweep_document(
                &sets,
                doc_key,
                read_ht,
                deadline,
                &mut probe_rows,
                &mut stopped,
            )? {
                Swept::Probed => {
                    stats.probes += 1;
                    true
                }
                Swept::Covered => {
                    stats.covered += 1;
                    false
                }
                Swept::Unread => {
                    stats.unread += 1;
                    false
                }
            };
            // Covered documents cost a lookup each: only a probe spends the budget.
            let out_of_time = probed && deadline.is_some_and(|d| Instant::now() >= d);
            if !stopped.is_empty() || out_of_time {
                break;
            }
        }
        // The next sweep goes on where a probe stopped, and with the rest.
        let rest = taken.keys.split_off(swept);
        stats.left = (stopped.len() + rest.len()) as u64;
        self.deleted.put_back(stopped.into_iter().chain(rest));
        let learned_after: u64 = sets.iter().map(|(_, spans)| spans.stats().learned).sum();
        stats.learned = learned_after - learned_before;
        Ok(stats)
    }

    /// Probes, for each of `sets` that no kept run of holds `doc_key` yet, from `doc_key` to
    /// the next visible document; adds to `stopped` where a probe ran out of time.
    fn sweep_document<Err, P>(
        &self,
        sets: &[(SpanSet, Arc<DeadSpans>)],
        doc_key: &[u8],
        read_ht: HybridTime,
        deadline: Option<Instant>,
        probe_rows: &mut Option<P>,
        stopped: &mut Vec<Vec<u8>>,
    ) -> std::result::Result<Swept, Err>
    where
        Err: From<Error>,
        P: FnMut(u32, &[u8], HybridTime, Option<Instant>) -> std::result::Result<Probed, Err>,
    {
        let mut swept = Swept::Unread;
        for (set, spans) in sets {
            if spans.covers(doc_key, read_ht) {
                if matches!(swept, Swept::Unread) {
                    swept = Swept::Covered;
                }
                continue;
            }
            let outcome = match (set, probe_rows.as_mut()) {
                (SpanSet::Rows(table), Some(probe)) => probe(*table, doc_key, read_ht, deadline)?,
                (SpanSet::Rows(_), None) => Probed::NotMine,
                _ => self.probe_from(*set, doc_key, read_ht, deadline)?,
            };
            match outcome {
                Probed::NotMine => continue,
                Probed::Read => {}
                Probed::StoppedAt(at) => stopped.push(at),
            }
            swept = Swept::Probed;
        }
        Ok(swept)
    }

    /// Documents queued for the next [`Self::sweep_deleted`], and document tombstones left
    /// out because the queue was full.
    pub fn sweep_queue(&self) -> (usize, u64) {
        (self.deleted.len(), self.deleted.overflowed())
    }

    /// A scan of kind `set` (documents or roots) at `read_ht` from `doc_key` up to the first
    /// visible document, for the runs it keeps; past `deadline` it stops before a document.
    fn probe_from(
        &self,
        set: SpanSet,
        doc_key: &[u8],
        read_ht: HybridTime,
        deadline: Option<Instant>,
    ) -> Result<Probed> {
        let walked = match set {
            SpanSet::Documents => {
                let opts = ScanOptions {
                    lower: Some(doc_key.to_vec()),
                    upper: None,
                    read: ReadOptions::at(read_ht),
                    limit: Some(1),
                    reverse: false,
                };
                self.scan_until(&opts, deadline)?.1
            }
            SpanSet::Roots => {
                let stop = |_: &[u8], _: &VisibleRecord| false;
                self.scan_roots_until(doc_key, &[0xFF], read_ht, deadline, stop)?
            }
            SpanSet::Rows(_) => return Ok(Probed::NotMine),
        };
        Ok(match walked.stopped_at {
            Some(at) => Probed::StoppedAt(at),
            None => Probed::Read,
        })
    }

    /// Counters of the runs of invisible documents kept for the scans of `set`.
    pub fn span_stats(&self, set: SpanSet) -> DeadSpanStats {
        self.spans.stats(set)
    }

    /// [`Self::span_stats`] summed over every set.
    pub fn span_totals(&self) -> DeadSpanStats {
        self.spans.totals()
    }

    /// The visible first-level children of the encoded `path` within `range` (see
    /// [`read_children`]).
    pub fn read_children(
        &self,
        path: &[u8],
        range: &ChildRange,
        opts: &ReadOptions,
    ) -> Result<Vec<(dockv::KeyEntryValue, SubDocument)>> {
        let doc_len = DocKey::encoded_len(path)?;
        let mut iter = self.doc_iterator(&path[..doc_len])?;
        read_children(&mut iter, path, range, opts, &mut ReadStats::default())
    }

    /// The subdocument at the encoded `path` (DocKey plus subkeys).
    pub fn get_encoded(&self, path: &[u8], opts: &ReadOptions) -> Result<Option<SubDocument>> {
        let doc_len = DocKey::encoded_len(path)?;
        let mut iter = self.doc_iterator(&path[..doc_len])?;
        read_subdocument(&mut iter, path, opts, &mut ReadStats::default())
    }

    /// Visits the root record of each document between `lower` (inclusive) and `upper`
    /// (exclusive) as of `read_ht`, in key order, until `visit` returns false: one lookup per
    /// document, children never read (Redis `KEYS`, `SCAN`, `FLUSHDB`). Documents whose root
    /// is not live are not visited; runs of them are kept and skipped as [`Self::scan`] does
    /// its runs, apart from them (a document with no live root may have live children).
    pub fn scan_roots(
        &self,
        lower: &[u8],
        upper: &[u8],
        read_ht: HybridTime,
        visit: impl FnMut(&[u8], &VisibleRecord) -> bool,
    ) -> Result<ReadStats> {
        Ok(self
            .scan_roots_until(lower, upper, read_ht, None, visit)?
            .stats)
    }

    /// [`Self::scan_roots`], stopping before its next document once `deadline` has passed.
    fn scan_roots_until(
        &self,
        lower: &[u8],
        upper: &[u8],
        read_ht: HybridTime,
        deadline: Option<Instant>,
        mut visit: impl FnMut(&[u8], &VisibleRecord) -> bool,
    ) -> Result<Walked> {
        let opts = ReadOptions::at(read_ht);
        let walk = self.span_walk(SpanSet::Roots, &opts, false);
        let mut iter = self.bounded_iterator(lower, Some(upper))?;
        iter.seek(lower);
        let mut stats = ReadStats::default();
        let mut past = Vec::new();
        let mut walked = walk.run(&mut iter, deadline, |iter, doc_key| {
            let record = visible_root_in_scan(iter, doc_key, &opts, &mut stats)?;
            // Past the rest of the document (records below the root, which this scan does
            // not read): a Redis string has none, a small collection a few; a large one is
            // left with a seek.
            let mut stepped = 0;
            while iter.valid()? && iter.key().starts_with(doc_key) {
                if stepped == NEXTS_BEFORE_SEEK {
                    past.clear();
                    past.extend_from_slice(doc_key);
                    past.push(0xFF);
                    stats.seeks += 1;
                    iter.seek(&past);
                    break;
                }
                stepped += 1;
                iter.next();
            }
            Ok(match record {
                Some(record) if record.is_live() => Seen::visible(visit(doc_key, &record)),
                _ => Seen::Invisible,
            })
        })?;
        walked.stats += stats;
        Ok(walked)
    }

    /// Whether any record of the document at `doc_key` (an encoded DocKey), its root or
    /// anything below it, was written after `ht` (Redis's WATCH). Reads every version the
    /// document holds, so it costs in proportion to the document's size.
    pub fn written_since(&self, doc_key: &[u8], ht: HybridTime) -> Result<bool> {
        let mut iter = self.doc_iterator(doc_key)?;
        iter.seek(doc_key);
        while iter.valid()? {
            let (_, time) = DocHybridTime::decode_from_end(iter.key())?;
            if time.ht > ht {
                return Ok(true);
            }
            iter.next();
        }
        Ok(false)
    }

    /// Runs `write` as the only `write_now` writer, at a fresh hybrid time from the clock.
    ///
    /// Together with [`Self::safe_time`] this makes the clock the snapshot for a server: a
    /// read-modify-write reads at its own write time and sees every earlier write, and a
    /// read at `safe_time()` sees every write acknowledged before it started.
    ///
    /// The batches committed inside `write` (at its time) are gathered and written to the
    /// engine as one atomic write when `write` returns `Ok`; reads inside see them. If
    /// `write` fails or panics, none of them is written. Called again inside `write` (on the
    /// same thread), it runs at the same time, and the batches committed there get later
    /// write ids: the outer call is then one transaction that no other reader or writer sees
    /// in part, and that lands whole or not at all, in one engine write: a server's
    /// MULTI/EXEC, or a pipeline of commands run together.
    pub fn write_now<R>(&self, write: impl FnOnce(HybridTime) -> Result<R>) -> Result<R> {
        if let Some(ht) = self.own_write_time() {
            return write(ht);
        }
        let writing = self.begin_write();
        let result = write(writing.ht)?;
        self.land_pending()?;
        Ok(result)
    }

    /// [`Self::write_now`], except that the batches `write` committed are not written when it
    /// returns but staged: the returned [`Staged`] writes them, on any thread, while the next
    /// `write_now` runs (see [`crate::staged`]). Until it lands, reads at or after its time
    /// wait for it, and the next `write_now` reads its pairs as if they had landed, then
    /// waits for it before it lands itself. `None`: nothing was committed.
    ///
    /// A server's writer thread stages each group of commands and lands it on a second
    /// thread, which then sends the group's replies.
    pub fn write_now_staged<R>(
        &self,
        write: impl FnOnce(HybridTime) -> Result<R>,
    ) -> Result<(R, Option<Staged<'_, E>>)> {
        if self.own_write_time().is_some() {
            return Err(Error::InvalidArgument(
                "write_now_staged inside write_now".into(),
            ));
        }
        let mut writing = self.begin_write();
        let result = write(writing.ht)?;
        let staged = self.stage_pending(writing.ht)?;
        writing.unlanded.staged = staged.is_some();
        Ok((result, staged))
    }

    /// Takes the writer lock and a fresh hybrid time for a `write_now`.
    fn begin_write(&self) -> Writing<'_, E> {
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        // Announce before taking the time: a reader that takes a later time then waits.
        self.in_flight.store(TAKING_TIME, Ordering::SeqCst);
        let in_flight = InFlight(&self.in_flight);
        let ht = self.clock.now();
        // Its records wait in memory until it ends: in no file, like the memtable's.
        self.policy.unflushed.note(ht);
        self.next_write_id.store(0, Ordering::SeqCst);
        let under = self.staged.snapshot();
        *self.lock_pending() = Pending::beginning(under, self.recent.next_number());
        self.in_flight.store(ht.0, Ordering::SeqCst);
        Writing {
            _writer: writer,
            _in_flight: in_flight,
            _here: WritingHere::enter(self.identity()),
            unlanded: Unlanded {
                db: self,
                staged: false,
            },
            ht,
        }
    }

    /// Inside [`Self::write_now`]: writes the batches it committed so far to the engine now,
    /// in one write, rather than when it ends (for what may only follow their landing, such
    /// as a reply handed to another connection). Outside: does nothing.
    pub fn land_pending(&self) -> Result<()> {
        let Some(ht) = self.own_write_time() else {
            return Ok(());
        };
        self.await_staged()?;
        let (pairs, log_from) = {
            let mut pending = self.lock_pending();
            let log_from = pending.log_from;
            let pairs =
                std::mem::replace(&mut *pending, Pending::beginning(Vec::new(), log_from)).pairs;
            (pairs, log_from)
        };
        if pairs.is_empty() {
            return Ok(());
        }
        let written = self.write_with_ceiling(landing_batch(&pairs), ht);
        self.landed_deferred(written, log_from..u64::MAX)?;
        self.clock.update(ht);
        Ok(())
    }

    /// Waits for every staged write to land. Fails if the present `write_now` began over one
    /// that failed: what it read was never stored.
    fn await_staged(&self) -> Result<()> {
        self.staged.wait_empty();
        let under = std::mem::take(&mut self.lock_pending().under);
        if any_failed(&under) {
            return Err(earlier_write_failed());
        }
        Ok(())
    }

    /// Ends a [`Self::write_now_staged`]: stages what it committed (waiting while
    /// [`crate::staged::MAX_STAGED`] writes wait to land).
    fn stage_pending(&self, ht: HybridTime) -> Result<Option<Staged<'_, E>>> {
        let mut pending = self.lock_pending();
        if pending.under_failed() {
            return Err(earlier_write_failed());
        }
        if pending.pairs.is_empty() && pending.under.is_empty() {
            return Ok(None);
        }
        // With no pairs but over staged writes, it is staged all the same: what it read
        // must land before its caller answers from it.
        let taken = std::mem::take(&mut *pending);
        drop(pending);
        let log = taken.log_from..self.recent.next_number();
        let write = Arc::new(StagedWrite::new(taken.pairs, ht, log, &taken.under));
        // Before the in-flight marker clears: readers go on waiting for these pairs.
        self.staged.push(write.clone());
        Ok(Some(Staged::new(self, write)))
    }

    /// Writes a staged write's pairs to the engine in its turn (see [`Staged::land`]).
    pub(crate) fn land_staged(&self, write: &Arc<StagedWrite>) -> Result<()> {
        self.staged.wait_turn(write);
        let written = if write.read_over_a_failure() {
            Err(earlier_write_failed())
        } else if write.pairs.is_empty() {
            Ok(())
        } else {
            self.write_with_ceiling(landing_batch(&write.pairs), write.ht)
                .map_err(Error::from)
        };
        self.finish_staged(write, written)
    }

    /// Settles a staged write that landed or failed, and lets waiting reads and writes go on.
    pub(crate) fn finish_staged(
        &self,
        write: &Arc<StagedWrite>,
        written: Result<()>,
    ) -> Result<()> {
        if written.is_err() {
            // Before the root cache is cleared: a `write_now` reading over it keeps nothing.
            write.mark_failed();
        }
        self.roots.finished(false, written.is_ok());
        self.recent.landed_deferred(write.log.clone());
        if written.is_ok() {
            self.clock.update(write.ht);
        }
        self.staged.remove(write);
        written
    }

    /// Drops the pending writes of a `write_now` that failed (and what the root cache
    /// learned from them).
    fn discard_pending(&self) {
        let mut pending = self.lock_pending();
        let log_from = pending.log_from;
        if !pending.pairs.is_empty() {
            self.roots.clear();
        }
        *pending = Pending::default();
        drop(pending);
        // Whether they landed, were dropped, or the engine panicked on them.
        self.recent.landed_deferred(log_from..u64::MAX);
    }

    /// Whether this thread is inside [`Self::write_now`] (whose writes have not landed yet).
    pub fn is_writing(&self) -> bool {
        self.own_write_time().is_some()
    }

    /// This database, told apart from others in the process (for [`WRITING`]).
    fn identity(&self) -> usize {
        std::ptr::from_ref(&self.in_flight) as usize
    }

    /// The time of the `write_now` this thread is inside, if any.
    fn own_write_time(&self) -> Option<HybridTime> {
        if WRITING.with(Cell::get) != self.identity() {
            return None;
        }
        Some(HybridTime(self.in_flight.load(Ordering::SeqCst)))
    }

    /// The first of `count` write ids for a batch committing at `ht`: numbered on from the
    /// batches this thread's `write_now` committed at that time, else from 0.
    pub(crate) fn claim_write_ids(&self, ht: HybridTime, count: u32) -> u32 {
        self.write_ids_at(ht)
            .map_or(0, |next| next.fetch_add(count, Ordering::SeqCst))
    }

    /// The write id [`Self::claim_write_ids`] would give a batch at `ht` now, without taking
    /// it: a batch numbers its pairs from here, and keeps them if nothing claimed ids first.
    pub(crate) fn next_write_id(&self, ht: HybridTime) -> u32 {
        self.write_ids_at(ht)
            .map_or(0, |next| next.load(Ordering::SeqCst))
    }

    /// The counter of write ids a batch at `ht` numbers on from: this thread's `write_now`'s,
    /// if that writes at `ht` (else a batch's ids start at 0).
    fn write_ids_at(&self, ht: HybridTime) -> Option<&AtomicU32> {
        (self.own_write_time() == Some(ht)).then_some(&self.next_write_id)
    }

    /// A read time at which every [`Self::write_now`] write with an earlier time has landed:
    /// "now", after waiting out the write in flight (if it started earlier).
    pub fn safe_time(&self) -> HybridTime {
        // Inside `write_now`: its own time, which sees every earlier write and its own.
        if let Some(own) = self.own_write_time() {
            return own;
        }
        let now = self.clock.now();
        let mut spins = 0u32;
        loop {
            // In this order: a write that stages its pairs marks them before it clears the
            // in-flight marker.
            let in_flight = self.in_flight.load(Ordering::SeqCst);
            let staged = self.staged.oldest();
            let write_done =
                in_flight == NO_WRITE || (in_flight != TAKING_TIME && in_flight > now.0);
            if write_done && staged.is_none_or(|staged| staged > now) {
                return now;
            }
            // Usually the write lands within microseconds; a synced one may take a disk flush.
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 256 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// Stores (or with `None` removes) a metadata value under `name`, outside the document
    /// key space, with the database's sync setting.
    pub fn put_meta(&self, name: &[u8], value: Option<&[u8]>) -> Result<()> {
        let mut batch = WriteBatch::with_capacity(1);
        let key = [META_PREFIX, name].concat();
        match value {
            Some(v) => batch.put(key, v),
            None => batch.delete(key),
        }
        let opts = WriteOptions {
            sync: self.write_flags.sync(),
        };
        Ok(self.engine.write(&batch, opts)?)
    }

    /// Every metadata `(name, value)` whose name starts with `prefix`, in name order.
    pub fn scan_meta(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let lower = [META_PREFIX, prefix].concat();
        let mut upper = lower.clone();
        upper.push(0xFF);
        let mut iter = self
            .engine
            .iterator(IterOptions::new().lower(lower.clone()).upper(upper))?;
        iter.seek(&lower);
        let mut out = Vec::new();
        while iter.valid()? && iter.key().starts_with(&lower) {
            out.push((
                iter.key()[META_PREFIX.len()..].to_vec(),
                iter.value().to_vec(),
            ));
            iter.next();
        }
        Ok(out)
    }

    /// Writes buffered WAL records out and, with `sync`, syncs the log (group commit).
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        Ok(self.engine.flush_wal(sync)?)
    }

    /// Runs a full compaction now with history cutoff `cutoff`: every read at or after
    /// `cutoff` sees the same documents afterwards. Returns this compaction's GC counters.
    ///
    /// Rows repacked by the compaction (format.md §9) are written afterwards, and a second
    /// compaction drops what they replace (see [`crate::repack`]).
    pub fn compact(&self, cutoff: HybridTime) -> Result<GcStats> {
        let before = self.policy.stats();
        self.policy.take_repacked();
        self.policy.state().manual_cutoff = Some(cutoff);
        let result = self
            .compact_files()
            .and_then(|()| self.compact_and_repack());
        self.policy.state().manual_cutoff = None;
        result?;
        Ok(self.policy.stats().since(&before))
    }

    /// Compacts, writes the rows the compaction repacked and compacts again, until no row is
    /// repacked (a compaction holds at most [`crate::repack::MAX_REPACKED_BYTES`] of them) or
    /// [`MAX_REPACK_ROUNDS`] rounds ran.
    fn compact_and_repack(&self) -> Result<()> {
        for _ in 0..MAX_REPACK_ROUNDS {
            let repacked = self.policy.take_repacked();
            if repacked.is_empty() {
                break;
            }
            tracing::info!(rows = repacked.len(), "writing repacked rows");
            let oldest = repacked
                .iter()
                .map(|(key, _)| {
                    DocHybridTime::decode_from_end(key).map_or(HybridTime::MIN, |(_, t)| t.ht)
                })
                .min()
                .unwrap_or(HybridTime::MIN);
            let mut batch = WriteBatch::with_capacity(repacked.len());
            for (key, value) in repacked {
                batch.put(key, value);
            }
            let opts = WriteOptions {
                sync: self.write_flags.sync(),
            };
            // Repacked rows keep their times, which the cache has seen already.
            self.write_direct(batch, HybridTime::MIN, |batch| {
                self.policy
                    .unflushed
                    .write(oldest, || self.engine.write(&batch, opts))
            })?;
            self.compact_files()?;
        }
        // Rows gathered by the last round wait for the next compaction.
        self.policy.take_repacked();
        Ok(())
    }

    /// Flushes the memtable and compacts every file (a full compaction), as a checkpoint of
    /// what is unflushed: what was written before it is among the files compacted.
    fn compact_files(&self) -> Result<()> {
        self.policy.checkpoint(|| self.engine.compact_all())?;
        Ok(())
    }

    /// Flushes memtables to files.
    pub fn flush(&self) -> Result<()> {
        Ok(self.policy.checkpoint(|| self.engine.flush())?)
    }

    /// Background upkeep, for a caller to run every second or so: flushes the memtable once
    /// the oldest write in it may be older than half the history retention, so that full
    /// compactions (whose cutoff stays below unflushed writes, see [`crate::unflushed`]) keep
    /// collecting history up to the retention. Returns whether it flushed; it never waits for
    /// a flush or compaction already running. It also lets the engine drop the iterators it
    /// keeps for reads if none was used since the previous call
    /// ([`engine::Engine::trim_idle`]): a kept iterator pins the memtables and files it last
    /// read.
    pub fn maintain(&self) -> Result<bool> {
        self.engine.trim_idle();
        let Some(oldest) = self.policy.unflushed.oldest_since_checkpoint() else {
            return Ok(false);
        };
        let age = self
            .clock
            .now()
            .physical_micros()
            .saturating_sub(oldest.physical_micros());
        let every = (self.options().history_retention / 2).max(MIN_MAINTAIN_FLUSH_INTERVAL);
        if u128::from(age) < every.as_micros() {
            return Ok(false);
        }
        // A compaction or flush running now checkpoints anyway; never wait for it.
        match self.policy.try_checkpoint(|| self.engine.flush()) {
            Some(flushed) => flushed.map(|()| true).map_err(Error::from),
            None => Ok(false),
        }
    }

    /// One round of background upkeep: [`Self::maintain`], then [`Self::sweep_deleted`]
    /// within `sweep_budget` (run even when the first fails; the first error is returned).
    /// `docdb serve` runs one every second; [`Self::start_upkeep`] has a thread run them.
    pub fn upkeep_round(&self, sweep_budget: Duration) -> Result<UpkeepRound> {
        UpkeepRound::of(self.maintain(), self.sweep_deleted(Some(sweep_budget)))
    }

    /// Starts a thread running [`Self::upkeep_round`] every `options.every` until the
    /// returned handle is dropped, or the database is (see [`crate::upkeep`]). A database
    /// with tables starts its own instead, which sweeps table rows too.
    pub fn start_upkeep(self: &Arc<Self>, options: UpkeepOptions) -> Result<Upkeep> {
        Upkeep::spawn("docdb-upkeep", self, options.every, move |db: &Self| {
            db.upkeep_round(options.sweep_budget)
        })
    }

    /// Every stored document record in key order, one `key -> value` line each
    /// (format.md §12).
    pub fn dump(&self) -> Result<String> {
        let mut out = String::new();
        self.for_each_record(|line| {
            out.push_str(line);
            out.push('\n');
        })?;
        Ok(out)
    }

    /// Calls `emit` with each dump line (without newline).
    pub fn for_each_record(&self, emit: impl FnMut(&str)) -> Result<()> {
        for_each_record(&self.engine, emit)
    }

    pub(crate) fn reserve_list_indexes(&self, count: i64) -> i64 {
        let mut counter = self.list_counter.lock().unwrap_or_else(|e| e.into_inner());
        let first = *counter + 1;
        *counter += count;
        first
    }

    pub(crate) fn release_list_indexes(&self, first: i64, count: i64) {
        let mut counter = self.list_counter.lock().unwrap_or_else(|e| e.into_inner());
        if *counter == first + count - 1 {
            *counter = first - 1;
        }
    }

    pub(crate) fn persist_list_counter(&self, batch: &mut WriteBatch, last_used: i64) {
        let counter = *self.list_counter.lock().unwrap_or_else(|e| e.into_inner());
        batch.put(LIST_COUNTER_KEY, counter.max(last_used).to_be_bytes());
    }

    /// Writes `batch` at `ht`, or inside a `write_now` at that time adds it to the writes
    /// pending until that ends.
    pub(crate) fn write_engine_batch(&self, batch: WriteBatch, ht: HybridTime) -> Result<()> {
        let deferred = self.own_write_time() == Some(ht);
        if deferred && batch.iter().any(|op| matches!(op, WriteOp::Delete(_))) {
            return Err(Error::InvalidArgument(
                "a write_now batch holds puts only".into(),
            ));
        }
        if deferred {
            // Before the write lands: a root it changes must not be read from the cache after.
            self.before_write(&batch, ht, false);
            // Puts only (checked above).
            self.lock_pending().pairs.append(&batch);
            recycle(batch);
            return Ok(());
        }
        self.write_direct(batch, ht, |batch| self.write_with_ceiling(batch, ht))?;
        self.clock.update(ht);
        Ok(())
    }

    /// Writes `batch`, whose records are no newer than `newest`, outside `write_now` with
    /// `write`, telling the root cache, the dead spans and the log of recent writes before
    /// and after (a panic in `write` counts as a failed write).
    fn write_direct(
        &self,
        batch: WriteBatch,
        newest: HybridTime,
        write: impl FnOnce(WriteBatch) -> engine::Result<()>,
    ) -> Result<()> {
        let told = self.before_write(&batch, newest, true);
        let landing = DirectLanding {
            db: self,
            told: Some(told),
        };
        landing.landed(write(batch))
    }

    /// Tells the root cache, the log of recent writes and the dead spans of `batch` before
    /// it reaches the engine (see [`RootCache::apply_written`]); returns what its landing
    /// must tell them in turn.
    fn before_write(&self, batch: &WriteBatch, newest: HybridTime, direct: bool) -> Told {
        let docs = BatchDocs::of(batch);
        let roots_counted = self.roots.apply_written(&docs, newest, direct);
        // Numbered before the spans split: a scan keeping runs then either cuts this batch's
        // documents out of them itself, or has kept them already for `written` to split.
        let number = self.recent.applied(&docs, newest, !direct);
        self.spans.written(&docs);
        self.deleted.written(&docs);
        Told {
            number,
            roots_counted,
        }
    }

    /// Writes `batch`, whose records are at most as new as `ht`, with a higher ceiling if
    /// `ht` reaches the last one.
    fn write_with_ceiling(&self, mut batch: WriteBatch, ht: HybridTime) -> engine::Result<()> {
        let opts = WriteOptions {
            sync: self.write_flags.sync(),
        };
        let unflushed = &self.policy.unflushed;
        // The ceiling only grows: below it now, below it when the batch lands. A batch that
        // may raise it takes the lock, then looks again.
        let below = || ht.0 < self.ceiling_now.load(Ordering::SeqCst);
        let _raising = (!below()).then(|| self.ceiling.lock().unwrap_or_else(|e| e.into_inner()));
        // Raising writes go one at a time, so the ceiling stored only grows.
        let raised = (!below()).then(|| {
            let raised = HybridTime::new(ht.physical_micros() + CEILING_STEP_MICROS, 0);
            batch.put(CEILING_KEY, raised.0.to_be_bytes());
            raised
        });
        let written = unflushed.write(ht, || self.engine.write(&batch, opts));
        if let (Some(raised), Ok(())) = (raised, &written) {
            self.ceiling_now.store(raised.0, Ordering::SeqCst);
        }
        recycle(batch);
        written
    }

    /// Tells the root cache and the log whether the batches a `write_now` committed
    /// (numbered in `numbers` in the log) reached the engine.
    fn landed_deferred(&self, written: engine::Result<()>, numbers: Range<u64>) -> Result<()> {
        self.roots.finished(false, written.is_ok());
        self.recent.landed_deferred(numbers);
        Ok(written?)
    }
}

/// A `write_now`'s pairs as the engine batch that lands them.
///
/// In key order, RocksDB inserts each pair next to the previous one where they are close (a
/// collection's elements, its counter): its skiplist then reuses the last insert's position
/// instead of searching from the top. Of pairs on one key (the list-index counter every
/// push rewrites), only the last committed is written: the sort is stable, and the dedup
/// runs backwards to keep it. Of a path's versions at one hybrid time (a list's length that
/// each push of a pipeline rewrites under its own write id), only the newest is written, with
/// the TTL merge records above it: a read at a hybrid time sees all of its write ids, so no
/// read can see an older one, and a merge is the only record that reads the one below it.
fn landing_batch(pairs: &WriteBatch) -> WriteBatch {
    let mut ops: Vec<WriteOp<'_>> = pairs.iter().collect();
    ops.sort_by(|a, b| a.key().cmp(b.key()));
    ops.reverse();
    ops.dedup_by(|later, kept| later.key() == kept.key());
    ops.reverse();
    let mut batch = WriteBatch::with_capacity_bytes(ops.len() + 1, pairs.approximate_size());
    // The path and time of the last record written that hides its own older versions.
    let mut hiding: Option<(&[u8], HybridTime)> = None;
    for op in ops {
        let WriteOp::Put(key, value) = op else {
            continue;
        };
        if let Ok((path, time)) = DocHybridTime::decode_from_end(key) {
            if hiding == Some((path, time.ht)) {
                continue;
            }
            // A TTL merge record reads the version below it, which lands too.
            hiding = (!is_merge(value)).then_some((path, time.ht));
        }
        batch.put(key, value);
    }
    batch
}

/// Options of the iterators views and point reads use: unbounded, each read narrowing it
/// to one document, with prefix bloom filters where the engine has them. Reads stay within
/// the document, and the reader seeks so that either extractor's filters are safe to use:
/// [`doc_key_prefix`]'s skip the files that lack the document, [`sub_doc_key_prefix`]'s
/// those that lack a looked-up path.
fn view_iterator_options() -> IterOptions {
    IterOptions::new().prefix(PrefixMode::Seek)
}

/// The exclusive upper bound of the records of the document at `doc_key`.
fn doc_upper_bound(doc_key: &[u8]) -> Vec<u8> {
    let mut upper = Vec::with_capacity(doc_key.len() + 1);
    upper.extend_from_slice(doc_key);
    upper.push(0xFF);
    upper
}

/// A batch written outside `write_now`, between [`DocDb::before_write`] and its landing;
/// dropped before [`Self::landed`] (a panic in the engine), it counts as failed.
struct DirectLanding<'a, E: Engine> {
    db: &'a DocDb<E>,
    told: Option<Told>,
}

/// What [`DocDb::before_write`] told of a batch.
struct Told {
    /// Its number in the log of recent writes.
    number: u64,
    /// Whether the root cache counted it (see [`RootCache::apply_written`]).
    roots_counted: bool,
}

impl<E: Engine> DirectLanding<'_, E> {
    fn landed(mut self, written: engine::Result<()>) -> Result<()> {
        self.finish(written.is_ok());
        Ok(written?)
    }

    fn finish(&mut self, landed: bool) {
        if let Some(told) = self.told.take() {
            if told.roots_counted {
                self.db.roots.finished(true, landed);
            }
            self.db.recent.landed(told.number);
        }
    }
}

impl<E: Engine> Drop for DirectLanding<'_, E> {
    fn drop(&mut self) {
        self.finish(false);
    }
}

/// The runs a clean close saved, if nothing reached the engine since (see
/// [`crate::saved_spans`]). The record is deleted either way, before anything else is
/// written, so no later open can take runs older than its writes.
fn take_saved_spans<E: Engine>(engine: &E) -> Result<Option<SavedSpans>> {
    let Some(bytes) = engine.get(SAVED_SPANS_KEY)? else {
        return Ok(None);
    };
    let sequence = engine.last_sequence();
    let mut batch = WriteBatch::with_capacity(1);
    batch.delete(SAVED_SPANS_KEY);
    engine.write(&batch, WriteOptions { sync: true })?;
    match SavedSpans::decode(&bytes) {
        Ok(saved) if saved.sequence == sequence => Ok(Some(saved)),
        Ok(saved) => {
            tracing::info!(
                saved_at = saved.sequence,
                now = sequence,
                "saved runs of deleted documents dropped: written to since"
            );
            Ok(None)
        }
        Err(e) => {
            tracing::warn!(error = %e, "saved runs of deleted documents dropped");
            Ok(None)
        }
    }
}

/// Calls `emit` with the dump line (format.md §12, without newline) of each document record
/// `engine` holds, in key order. It only reads, so it serves an engine opened read-only (as
/// `docdb dump` opens one, next to a running server).
pub fn for_each_record<E: Engine>(engine: &E, mut emit: impl FnMut(&str)) -> Result<()> {
    let mut iter = engine.iterator(IterOptions::new().lower(b"$".to_vec()).fill_cache(false))?;
    iter.seek(b"$");
    let mut line = String::new();
    while iter.valid()? {
        line.clear();
        let key = format_key(iter.key()).unwrap_or_else(|e| format!("<undecodable key: {e}>"));
        let value = Value::decode(iter.value())
            .map(|v| v.to_string())
            .unwrap_or_else(|e| format!("<undecodable value: {e}>"));
        let _ = write!(line, "{key} -> {value}");
        emit(&line);
        iter.next();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::KeyEntryValue;
    use dockv::value::{PrimitiveValue, TTL_MERGE_FLAG};
    use proptest::prelude::*;

    /// The engine key of `path` at (`micros`, `write_id`).
    fn timed(path: &[u8], micros: u64, write_id: u32) -> Vec<u8> {
        let mut key = path.to_vec();
        key.push(KeyEntryType::HybridTime.as_u8());
        DocHybridTime::new(HybridTime::from_micros(micros), write_id).encode_to(&mut key);
        key
    }

    /// The keys [`landing_batch`] keeps of `pairs` (in commit order), in key order.
    fn landed(pairs: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
        let mut batch = WriteBatch::new();
        for (key, value) in pairs {
            batch.put(key.clone(), value.clone());
        }
        landing_batch(&batch)
            .iter()
            .map(|op| op.key().to_vec())
            .collect()
    }

    fn int(n: i64) -> Vec<u8> {
        Value::new(PrimitiveValue::Int64(n)).encode()
    }

    /// A list's length rewritten by each push of one `write_now` lands once, at its newest
    /// write id; the elements, the root and a version at another time all land.
    #[test]
    fn of_a_paths_versions_at_one_time_only_the_newest_lands() {
        let list = DocKey::with_hash(7, vec![KeyEntryValue::string("l")], vec![]).encode();
        let counter = SubDocKey::new(
            DocKey::decode(&list).expect("doc key").0,
            vec![KeyEntryValue::Counter],
        )
        .encode();
        let element = |i| {
            let mut path = list.clone();
            KeyEntryValue::ArrayIndex(i).encode_to(&mut path);
            path
        };
        let t = 1_000_000;
        let pairs = vec![
            (
                timed(&list, t, 0),
                Value::new(PrimitiveValue::RedisList).encode(),
            ),
            (timed(&element(1), t, 1), int(10)),
            (timed(&counter, t, 2), int(1)),
            (timed(&element(2), t, 3), int(20)),
            (timed(&counter, t, 4), int(2)),
            (timed(&counter, t, 5), Value::tombstone().encode()),
            (timed(&counter, t, 6), int(3)),
            (timed(&counter, t - 1, 9), int(0)),
        ];
        let kept = landed(&pairs);
        let mut expected = vec![
            timed(&list, t, 0),
            timed(&counter, t, 6),
            timed(&counter, t - 1, 9),
            timed(&element(1), t, 1),
            timed(&element(2), t, 3),
        ];
        expected.sort();
        assert_eq!(kept, expected);
    }

    /// TTL merge records read the version below them: those above the newest full record
    /// land with it, and only what is under that record is left out.
    #[test]
    fn merge_records_land_with_the_version_under_them() {
        let path = DocKey::with_hash(1, vec![KeyEntryValue::string("k")], vec![]).encode();
        let merge = |ms| {
            let mut value = Value::with_ttl(PrimitiveValue::Null, Some(Ttl(ms)));
            value.control.merge_flags = TTL_MERGE_FLAG;
            value.encode()
        };
        let t = 5_000_000;
        let pairs = vec![
            (timed(&path, t, 0), int(1)),
            (timed(&path, t, 1), merge(10)),
            (timed(&path, t, 2), int(2)),
            (timed(&path, t, 3), merge(20)),
            (timed(&path, t, 4), merge(30)),
        ];
        let kept = landed(&pairs);
        assert_eq!(
            kept,
            vec![timed(&path, t, 4), timed(&path, t, 3), timed(&path, t, 2)]
        );
    }

    fn component() -> impl Strategy<Value = KeyEntryValue> {
        prop_oneof![
            any::<i64>().prop_map(KeyEntryValue::int64),
            proptest::collection::vec(any::<u8>(), 0..12).prop_map(KeyEntryValue::string),
            Just(KeyEntryValue::NullLow),
        ]
    }

    /// A path (DocKey and subkeys, no time), and a hybrid time.
    fn path_and_time() -> impl Strategy<Value = (Vec<u8>, DocHybridTime)> {
        (
            any::<u16>(),
            proptest::collection::vec(component(), 1..3),
            proptest::collection::vec(component(), 0..3),
            proptest::collection::vec(component(), 0..4),
            1u64..u64::MAX >> 13,
            any::<u32>(),
        )
            .prop_map(|(hash, hashed, range, subkeys, micros, write_id)| {
                let doc_key = DocKey::with_hash(hash, hashed, range);
                let path = SubDocKey::new(doc_key, subkeys).encode();
                let time = DocHybridTime::new(HybridTime::from_micros(micros), write_id);
                (path, time)
            })
    }

    proptest! {
        /// Every record is in the domain, with its path as prefix; a lookup's target (the
        /// read time, largest write id) is too, but a bare path, a path's child-range
        /// bounds and a target whose time lacks its write id are not.
        #[test]
        fn path_prefix_domain((path, time) in path_and_time()) {
            let mut record = path.clone();
            record.push(HYBRID_TIME_BYTE);
            time.encode_to(&mut record);
            prop_assert!(is_versioned_record(&record));
            prop_assert_eq!(sub_doc_key_prefix(&record), &path[..]);

            let mut truncated = path.clone();
            truncated.push(HYBRID_TIME_BYTE);
            DocHybridTime::encode_time_prefix(time.ht, &mut truncated);
            prop_assert!(!is_versioned_record(&truncated));
            prop_assert!(!is_versioned_record(&path));
            let mut past = path.clone();
            past.push(HYBRID_TIME_BYTE + 1);
            prop_assert!(!is_versioned_record(&past));
            past.push(0xFF);
            prop_assert!(!is_versioned_record(&past));
        }

        /// Arbitrary bytes never panic either function, and whatever is in the domain has
        /// its prefix followed by `#` and one time's shape.
        #[test]
        fn path_prefix_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let prefix = sub_doc_key_prefix(&bytes);
            if is_versioned_record(&bytes) {
                let rest = &bytes[prefix.len()..];
                prop_assert_eq!(rest.first(), Some(&HYBRID_TIME_BYTE));
                prop_assert_eq!(DocHybridTime::encoded_len_at(&rest[1..]), Some(rest.len() - 1));
            }
        }
    }

    #[test]
    fn path_prefix_of_layer_metadata_and_bare_doc_keys() {
        let doc_key = DocKey::from_range(vec![KeyEntryValue::string("k")]).encode();
        assert!(!is_versioned_record(&doc_key));
        assert!(!is_versioned_record(b"\x01meta#"));
        assert!(!is_versioned_record(b""));
        let mut root = doc_key.clone();
        root.push(HYBRID_TIME_BYTE);
        DocHybridTime::from_micros(1_700_000_000_000_000).encode_to(&mut root);
        assert!(is_versioned_record(&root));
        assert_eq!(sub_doc_key_prefix(&root), &doc_key[..]);
    }
}
