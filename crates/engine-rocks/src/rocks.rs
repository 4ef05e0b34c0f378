//! [`RocksEngine`]: the [`engine::Engine`] implementation over RocksDB.

use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use engine::{
    CompactionOutcome, Engine, EngineIterator, EngineStatistics, IterOptions, KvRead, PrefixMode,
    Result, Snapshot, WriteBatch, WriteOp, WriteOptions,
};
use rocksdb::statistics::Ticker;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, BottommostLevelCompaction, CompactOptions, DB,
    DBCompactionStyle, DBRawIteratorWithThreadMode, Options, ReadOptions, properties,
};

use crate::config::{BlockCache, CompactionStyle, RocksConfig};
use crate::error::convert;
use crate::filter::{FactoryAdapter, ManualCompaction};

/// Replacements are checked and written back in chunks of this many keys, so writers are
/// held off only briefly at a time.
const REWRITE_CHUNK: usize = 1024;

/// A RocksDB database (default column family) behind the [`Engine`] trait.
pub struct RocksEngine {
    // Declared first so its iterators are dropped before the database they read.
    pool: IterPool,
    // Declared before the options so it is dropped (closed) before them.
    db: DB,
    /// The options the database was opened with; they own its statistics object.
    options: Options,
    statistics: bool,
    path: PathBuf,
    /// Present when a compaction filter is configured.
    manual: Option<Arc<ManualCompaction>>,
    /// Serialises `compact_all`.
    compaction_lock: Mutex<()>,
    /// Writes take it shared; `compact_all` takes it exclusively while it checks that a key
    /// still holds the value a filter saw and writes the filter's replacement. Only used
    /// when a compaction filter is configured.
    write_gate: RwLock<()>,
}

impl std::fmt::Debug for RocksEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksEngine")
            .field("path", &self.path)
            .field("has_compaction_filter", &self.manual.is_some())
            .finish_non_exhaustive()
    }
}

impl RocksEngine {
    /// Opens (or, with `create_if_missing`, creates) the database described by `config`.
    pub fn open(config: RocksConfig) -> Result<Self> {
        let mut options = Options::default();
        options.create_if_missing(config.create_if_missing);
        options.set_max_background_jobs(config.max_background_jobs);
        options.set_max_subcompactions(1);
        options.set_write_buffer_size(config.write_buffer_size);
        options.set_memtable_huge_page_size(config.huge_pages_for_memtables());
        options.set_compression_type(config.compression.to_rocks());
        options.set_bottommost_compression_type(config.compression.to_rocks());
        options.set_keep_log_file_num(10);
        options.set_manual_wal_flush(config.manual_wal_flush);
        match config.compaction_style {
            CompactionStyle::Level => {
                options.set_compaction_style(DBCompactionStyle::Level);
                options.set_level_compaction_dynamic_level_bytes(true);
            }
            CompactionStyle::Universal => {
                options.set_compaction_style(DBCompactionStyle::Universal);
            }
        }

        let cache = config
            .shared_block_cache
            .clone()
            .unwrap_or_else(|| BlockCache::lru(config.block_cache_bytes));
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache.0);
        // Whole keys go into the filters only without a prefix extractor. With one, every
        // read is a seek, which only prefix filters serve: a DocDB key ends in its hybrid
        // time, which no read knows, and the only exact-key gets are of a few keys at open.
        // Whole keys would double the filters' entries and their memory, and add a hash to
        // every memtable insert.
        let whole_keys = config.prefix_extractor.is_none();
        if config.bloom_bits_per_key > 0.0 {
            table.set_bloom_filter(config.bloom_bits_per_key, false);
            table.set_whole_key_filtering(whole_keys);
        }
        // Partitioned (two-level) index and filters: a large SST's filter is read in 4 KiB
        // partitions through the block cache instead of as one block that may not fit a
        // cache shard (and is then read from disk and checksummed on every prefix seek).
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_metadata_block_size(4096);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_top_level_index_and_filter(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        options.set_block_based_table_factory(&table);

        if let Some(extractor) = config.prefix_extractor {
            options.set_prefix_extractor(extractor.to_rocks());
        }
        if config.memtable_bloom_ratio > 0.0 {
            options.set_memtable_prefix_bloom_ratio(config.memtable_bloom_ratio);
            options.set_memtable_whole_key_filtering(whole_keys);
        }
        if config.statistics {
            options.enable_statistics();
            options.set_statistics_level(rocksdb::statistics::StatsLevel::ExceptHistogramOrTimers);
        }
        let manual = config.compaction_filter_factory.map(|factory| {
            let manual = Arc::new(ManualCompaction::default());
            options.set_compaction_filter_factory(FactoryAdapter {
                inner: factory,
                manual: Arc::clone(&manual),
            });
            manual
        });

        let db = if config.read_only {
            // RocksDB would create the directory of a missing database for its log file.
            if !config.path.join("CURRENT").is_file() {
                return Err(engine::Error::InvalidArgument(format!(
                    "no database at {}",
                    config.path.display()
                )));
            }
            // Records only in the log are replayed into memory, not an error.
            DB::open_for_read_only(&options, &config.path, false)
        } else {
            DB::open(&options, &config.path)
        }
        .map_err(convert)?;
        Ok(Self {
            pool: IterPool::default(),
            db,
            options,
            statistics: config.statistics,
            path: config.path,
            manual,
            compaction_lock: Mutex::new(()),
            write_gate: RwLock::new(()),
        })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits until no flush or compaction is running or pending.
    pub fn wait_for_background_work(&self) -> Result<()> {
        self.db
            .wait_for_compact(&rocksdb::WaitForCompactOptions::default())
            .map_err(convert)
    }

    /// Turns background compactions off or on, for bulk loads; files pile up in level 0
    /// while they are off, and turning them on schedules what is due at once.
    pub fn set_auto_compactions(&self, enabled: bool) -> Result<()> {
        let disabled = if enabled { "false" } else { "true" };
        self.db
            .set_options(&[("disable_auto_compactions", disabled)])
            .map_err(convert)
    }

    /// An integer RocksDB property (for example `rocksdb.num-files-at-level0`), if known.
    pub fn property_int(&self, name: &str) -> Result<Option<u64>> {
        self.db.property_int_value(name).map_err(convert)
    }

    fn write_inner(&self, batch: rocksdb::WriteBatch, sync: bool) -> Result<()> {
        let mut opts = rocksdb::WriteOptions::default();
        opts.set_sync(sync);
        self.db.write_opt(batch, &opts).map_err(convert)
    }

    /// Writes back the computed replacements of a `compact_all`, each only if its key still
    /// holds the value the filter saw. Returns how many were written.
    fn apply_replacements(
        &self,
        replacements: BTreeMap<Vec<u8>, crate::filter::Replacement>,
    ) -> Result<u64> {
        let mut written = 0;
        let mut pending = replacements.into_iter().peekable();
        while pending.peek().is_some() {
            let _exclusive = self
                .write_gate
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let mut batch = rocksdb::WriteBatch::default();
            for (key, replacement) in pending.by_ref().take(REWRITE_CHUNK) {
                let current = self.db.get_pinned(&key).map_err(convert)?;
                if current.as_deref() == Some(replacement.seen.as_slice()) {
                    batch.put(&key, &replacement.new);
                    written += 1;
                }
            }
            self.write_inner(batch, false)?;
        }
        Ok(written)
    }
}

/// Translates iterator options; bounds move into the `ReadOptions`, which the iterator
/// owns.
fn read_options(opts: IterOptions) -> ReadOptions {
    let mut read = ReadOptions::default();
    let IterOptions {
        lower,
        upper,
        prefix,
        fill_cache,
    } = opts;
    // RocksDB expects lower <= upper; an inverted range is simply empty.
    let upper = match (&lower, upper) {
        (Some(lower), Some(upper)) if upper < *lower => Some(lower.clone()),
        (_, upper) => upper,
    };
    if let Some(lower) = lower {
        read.set_iterate_lower_bound(lower);
    }
    if let Some(upper) = upper {
        read.set_iterate_upper_bound(upper);
    }
    read.fill_cache(fill_cache);
    read.set_prefix_same_as_start(prefix == PrefixMode::SameAsStart);
    // With a prefix extractor configured, RocksDB only guarantees a total-order scan when
    // asked for one; without an extractor this is a no-op.
    read.set_total_order_seek(prefix == PrefixMode::Total);
    read
}

impl KvRead for RocksEngine {
    type Iter<'a> = RocksIter<'a>;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self
            .db
            .get_pinned(key)
            .map_err(convert)?
            .map(|value| value.to_vec()))
    }

    fn iterator(&self, opts: IterOptions) -> Result<RocksIter<'_>> {
        let Some(kind) = PoolKind::of(&opts) else {
            return Ok(RocksIter::opened(opts, true, None, |read| {
                self.db.raw_iterator_opt(read)
            }));
        };
        let pool = (&self.pool, kind);
        match self.pool.take(kind) {
            // A kept iterator still reads the state of its last use.
            Some(kept) => RocksIter::kept(kept, pool),
            None => Ok(RocksIter::opened(opts, true, Some(pool), |read| {
                self.db.raw_iterator_opt(read)
            })),
        }
    }

    fn iterator_within(
        &self,
        opts: IterOptions,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Result<RocksIter<'_>> {
        // New or kept, the iterator reads the latest state already: no second refresh.
        let mut iter = self.iterator(opts)?;
        iter.created.check_within(lower, upper)?;
        iter.narrow(lower, upper);
        Ok(iter)
    }
}

impl Engine for RocksEngine {
    type Snapshot<'a> = RocksSnapshot<'a>;

    fn snapshot(&self) -> RocksSnapshot<'_> {
        RocksSnapshot {
            inner: self.db.snapshot(),
        }
    }

    fn write(&self, batch: &WriteBatch, opts: WriteOptions) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut rocks_batch = rocksdb::WriteBatch::with_capacity_bytes(
            batch.approximate_size() + 12, // + RocksDB's batch header
        );
        for op in batch {
            match op {
                WriteOp::Put(key, value) => rocks_batch.put(key, value),
                WriteOp::Delete(key) => rocks_batch.delete(key),
            }
        }
        let _shared = self.manual.as_ref().map(|_| {
            self.write_gate
                .read()
                .unwrap_or_else(PoisonError::into_inner)
        });
        self.write_inner(rocks_batch, opts.sync)
    }

    fn flush(&self) -> Result<()> {
        self.db.flush().map_err(convert)
    }

    fn flush_wal(&self, sync: bool) -> Result<()> {
        self.db.flush_wal(sync).map_err(convert)
    }

    fn compact_all(&self) -> Result<CompactionOutcome> {
        let _serialised = self
            .compaction_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut compact = CompactOptions::default();
        compact.set_exclusive_manual_compaction(true);
        compact.set_bottommost_level_compaction(BottommostLevelCompaction::Force);

        if let Some(manual) = &self.manual {
            manual.begin();
        }
        let compacted = self.db.flush().map(|()| {
            self.db
                .compact_range_opt(None::<&[u8]>, None::<&[u8]>, &compact)
        });
        // Kept iterators pin the files the compaction replaced: let them go, so the space
        // comes back now rather than at their next use.
        self.pool.clear();
        let Some(manual) = &self.manual else {
            compacted.map_err(convert)?;
            return Ok(CompactionOutcome::default());
        };
        let run = manual.finish();
        compacted.map_err(convert)?;
        let mut outcome = run.outcome;
        outcome.rewritten = self.apply_replacements(run.replacements)?;
        Ok(outcome)
    }

    /// Drops the iterators kept for reuse if none was taken since the previous call, so
    /// that an idle database does not pin memtables and files it no longer needs.
    fn trim_idle(&self) {
        self.pool.trim_idle();
    }

    fn last_sequence(&self) -> u64 {
        self.db.latest_sequence_number()
    }

    fn statistics(&self) -> Result<EngineStatistics> {
        let mut counters = BTreeMap::new();
        let mut text = String::new();
        if self.statistics {
            for ticker in Ticker::iter() {
                counters.insert(
                    ticker.name().to_owned(),
                    self.options.get_ticker_count(*ticker),
                );
            }
            text.push_str(&self.options.get_statistics().unwrap_or_default());
        }
        for property in [
            properties::ESTIMATE_NUM_KEYS,
            properties::TOTAL_SST_FILES_SIZE,
            properties::LIVE_SST_FILES_SIZE,
            properties::CUR_SIZE_ALL_MEM_TABLES,
            properties::BLOCK_CACHE_USAGE,
            properties::NUM_SNAPSHOTS,
            properties::NUM_RUNNING_COMPACTIONS,
            properties::ESTIMATE_PENDING_COMPACTION_BYTES,
        ] {
            if let Some(value) = self.db.property_int_value(property).map_err(convert)? {
                counters.insert(property.to_string(), value);
            }
        }
        if let Some(stats) = self.db.property_value(properties::STATS).map_err(convert)? {
            text.push_str(&stats);
        }
        Ok(EngineStatistics { counters, text })
    }
}

/// A RocksDB snapshot; borrows its engine.
pub struct RocksSnapshot<'a> {
    inner: rocksdb::SnapshotWithThreadMode<'a, DB>,
}

impl KvRead for RocksSnapshot<'_> {
    type Iter<'b>
        = RocksIter<'b>
    where
        Self: 'b;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self
            .inner
            .get_pinned_opt(key, ReadOptions::default())
            .map_err(convert)?
            .map(|value| value.to_vec()))
    }

    fn iterator(&self, opts: IterOptions) -> Result<RocksIter<'_>> {
        Ok(RocksIter::opened(opts, false, None, |read| {
            self.inner.raw_iterator_opt(read)
        }))
    }
}

impl Snapshot for RocksSnapshot<'_> {}

/// A RocksDB iterator (`DBRawIterator`) behind [`EngineIterator`].
///
/// RocksDB fixes an iterator's bounds when it is created, so the narrower bounds of a
/// [`reset`](EngineIterator::reset) are enforced here: seeks are clamped to them and a key
/// outside them ends the iteration.
pub struct RocksIter<'a> {
    /// Taken out only when dropped, to go back to `pool`.
    inner: ManuallyDrop<RawIter<'a>>,
    /// Where an unbounded iterator goes when dropped, to be reused.
    pool: Option<(&'a IterPool, PoolKind)>,
    /// The bounds it was created with (RocksDB's own).
    created: IterOptions,
    /// Whether a reset moves it to the latest state (false for a snapshot's iterator).
    refreshable: bool,
    /// Bounds set by a reset, checked here; `None` until the first reset.
    narrowed: Option<Narrowed>,
    /// Whether `inner` is on a key within the bounds.
    on_key: bool,
}

type RawIter<'a> = DBRawIteratorWithThreadMode<'a, DB>;

/// The kinds of iterator kept for reuse: unbounded ones (callers narrow them with
/// [`EngineIterator::reset`]), by `(prefix, fill_cache)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PoolKind(PrefixMode, bool);

impl PoolKind {
    fn of(opts: &IterOptions) -> Option<PoolKind> {
        (opts.lower.is_none() && opts.upper.is_none())
            .then_some(PoolKind(opts.prefix, opts.fill_cache))
    }
}

/// Iterators kept for reuse. Building an iterator's tree over the memtables and files, and
/// freeing it, costs more than the seek a point read makes; refreshing a kept one costs an
/// atomic load unless a flush or compaction changed the files since its last use.
///
/// A kept iterator pins the memtables and files of its last use, so what it holds is freed
/// late: [`RocksEngine::trim_idle`] drops the iterators of a pool unused since its previous
/// call.
#[derive(Default)]
struct IterPool {
    /// `'static` stands for the engine's lifetime: the pool is a field of the engine,
    /// dropped before its database, and hands iterators out only as `RocksIter<'a>`
    /// borrowing the engine.
    kept: Mutex<Vec<(PoolKind, RawIter<'static>)>>,
    used: AtomicBool,
}

/// Iterators kept at most: about one per thread reading at once.
const POOL_CAPACITY: usize = 16;

impl IterPool {
    fn take(&self, kind: PoolKind) -> Option<RawIter<'static>> {
        self.used.store(true, Ordering::Relaxed);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let at = kept.iter().rposition(|(k, _)| *k == kind)?;
        Some(kept.swap_remove(at).1)
    }

    /// Keeps `iter` unless the pool is full.
    ///
    /// # Safety
    /// `iter` must read the database owning this pool.
    #[allow(unsafe_code)]
    unsafe fn put(&self, kind: PoolKind, iter: RawIter<'_>) {
        // SAFETY: the database outlives the pool (see `kept`).
        let iter = unsafe { std::mem::transmute::<RawIter<'_>, RawIter<'static>>(iter) };
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < POOL_CAPACITY {
            kept.push((kind, iter));
        }
    }

    fn trim_idle(&self) {
        if !self.used.swap(false, Ordering::Relaxed) {
            self.clear();
        }
    }

    /// Drops every kept iterator (outside the lock).
    fn clear(&self) {
        let kept = std::mem::take(&mut *self.kept.lock().unwrap_or_else(PoisonError::into_inner));
        drop(kept);
    }
}

impl Drop for RocksIter<'_> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: `inner` is not used after this.
        let inner = unsafe { ManuallyDrop::take(&mut self.inner) };
        if let Some((pool, kind)) = self.pool {
            // SAFETY: only the engine's own iterators carry its pool.
            unsafe { pool.put(kind, inner) };
        }
    }
}

/// Bounds a reset narrowed a [`RocksIter`] to. The buffers are reused across resets.
#[derive(Default)]
struct Narrowed {
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

impl Narrowed {
    fn contains(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|lower| key >= lower)
            && self.upper.as_deref().is_none_or(|upper| key < upper)
    }
}

/// Copies `bound` into `slot`, reusing its buffer.
fn copy_bound(slot: &mut Option<Vec<u8>>, bound: Option<&[u8]>) {
    match (slot.as_mut(), bound) {
        (Some(buf), Some(bound)) => {
            buf.clear();
            buf.extend_from_slice(bound);
        }
        (None, Some(bound)) => *slot = Some(bound.to_vec()),
        (_, None) => *slot = None,
    }
}

impl<'a> RocksIter<'a> {
    /// A new RocksDB iterator, opened by `open` with the read options `opts` make.
    fn opened(
        opts: IterOptions,
        refreshable: bool,
        pool: Option<(&'a IterPool, PoolKind)>,
        open: impl FnOnce(ReadOptions) -> RawIter<'a>,
    ) -> Self {
        let created = IterOptions {
            lower: opts.lower.clone(),
            upper: opts.upper.clone(),
            ..IterOptions::default()
        };
        RocksIter {
            inner: ManuallyDrop::new(open(read_options(opts))),
            pool,
            created,
            refreshable,
            narrowed: None,
            on_key: false,
        }
    }

    /// A kept iterator of `pool` (unbounded, as every kept one is), refreshed to the
    /// latest state.
    fn kept(kept: RawIter<'a>, pool: (&'a IterPool, PoolKind)) -> Result<Self> {
        let mut iter = RocksIter {
            inner: ManuallyDrop::new(kept),
            pool: Some(pool),
            created: IterOptions::default(),
            refreshable: true,
            narrowed: None,
            on_key: false,
        };
        iter.refresh()?;
        Ok(iter)
    }

    /// Moves the iterator to the engine's latest state (a snapshot's stays on its own).
    fn refresh(&mut self) -> Result<()> {
        if self.refreshable {
            // Cheap unless a flush or compaction changed the files since the last time:
            // RocksDB then rebuilds the iterator tree.
            self.inner.refresh().map_err(convert)?;
        }
        Ok(())
    }

    /// Narrows the iterator to `[lower, upper)`, unpositioned, on the state it reads; the
    /// bounds must be within those it was created with (checked by the caller).
    fn narrow(&mut self, lower: Option<&[u8]>, upper: Option<&[u8]>) {
        let narrowed = self.narrowed.get_or_insert_with(Narrowed::default);
        copy_bound(&mut narrowed.lower, lower);
        copy_bound(&mut narrowed.upper, upper);
        self.on_key = false;
    }

    /// Notes whether the iterator now rests on a key inside the bounds.
    fn settle(&mut self) {
        self.on_key = self.inner.valid()
            && self
                .narrowed
                .as_ref()
                .is_none_or(|n| n.contains(self.inner.key().unwrap_or_default()));
    }
}

/// Positions `inner` at the last key below `upper` (exclusive).
fn seek_below(inner: &mut RawIter<'_>, upper: &[u8]) {
    inner.seek_for_prev(upper);
    if inner.valid() && inner.key() == Some(upper) {
        inner.prev();
    }
}

impl EngineIterator for RocksIter<'_> {
    fn seek(&mut self, key: &[u8]) {
        match self.narrowed.as_ref().and_then(|n| n.lower.as_deref()) {
            Some(lower) if key < lower => self.inner.seek(lower),
            _ => self.inner.seek(key),
        }
        self.settle();
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        match self.narrowed.as_ref().and_then(|n| n.upper.as_deref()) {
            Some(upper) if key >= upper => seek_below(&mut self.inner, upper),
            _ => self.inner.seek_for_prev(key),
        }
        self.settle();
    }

    fn seek_to_first(&mut self) {
        match self.narrowed.as_ref().and_then(|n| n.lower.as_deref()) {
            Some(lower) => self.inner.seek(lower),
            None => self.inner.seek_to_first(),
        }
        self.settle();
    }

    fn seek_to_last(&mut self) {
        match self.narrowed.as_ref().and_then(|n| n.upper.as_deref()) {
            Some(upper) => seek_below(&mut self.inner, upper),
            None => self.inner.seek_to_last(),
        }
        self.settle();
    }

    fn next(&mut self) {
        if self.on_key {
            self.inner.next();
            self.settle();
        }
    }

    fn prev(&mut self) {
        if self.on_key {
            self.inner.prev();
            self.settle();
        }
    }

    fn valid(&self) -> Result<bool> {
        if self.on_key {
            Ok(true)
        } else {
            self.inner.status().map_err(convert).map(|()| false)
        }
    }

    fn key(&self) -> &[u8] {
        if self.on_key {
            self.inner.key().unwrap_or_default()
        } else {
            &[]
        }
    }

    fn value(&self) -> &[u8] {
        if self.on_key {
            self.inner.value().unwrap_or_default()
        } else {
            &[]
        }
    }

    fn reset(&mut self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Result<()> {
        // Checked before the refresh, so that a refused reset changes nothing.
        self.created.check_within(lower, upper)?;
        self.refresh()?;
        self.narrow(lower, upper);
        Ok(())
    }
}
