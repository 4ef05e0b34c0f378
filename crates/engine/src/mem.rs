//! An in-memory engine over a `BTreeMap`, for fast tests.
//!
//! Multi-version: every key holds a short chain of versions tagged with the sequence
//! number of the batch that wrote them, so snapshots and iterators are cheap (they pin a
//! sequence number) and never block writers. A version is dropped as soon as no live
//! snapshot or iterator can see it (checked when its key is written again, and across the
//! whole map by [`Engine::compact_all`]).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::{
    CompactionContext, CompactionDecision, CompactionFilterFactory, CompactionOutcome, Engine,
    EngineIterator, EngineStatistics, IterOptions, KvRead, Result, Snapshot, WriteBatch, WriteOp,
    WriteOptions,
};

type Bytes = Arc<[u8]>;

/// One version of a key: `None` is a deletion.
#[derive(Debug, Clone)]
struct Version {
    seq: u64,
    value: Option<Bytes>,
}

#[derive(Debug, Default)]
struct State {
    /// Version chains in ascending `seq` order; never empty.
    map: BTreeMap<Bytes, Vec<Version>>,
    /// Sequence number of the last applied batch.
    seq: u64,
    /// Live read views (snapshots, iterators): sequence number → reference count.
    views: BTreeMap<u64, usize>,
    batches_written: u64,
    keys_written: u64,
    compactions: u64,
}

#[derive(Debug, Default)]
struct Shared {
    state: RwLock<State>,
    gets: AtomicU64,
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-updated in a way that
        // matters for tests (every mutation is a single push or replace), so recover.
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A registered read view; unregisters itself when dropped.
#[derive(Debug)]
struct View {
    shared: Arc<Shared>,
    seq: u64,
}

impl View {
    fn open(shared: &Arc<Shared>) -> Arc<View> {
        let mut state = shared.write();
        let seq = state.seq;
        *state.views.entry(seq).or_insert(0) += 1;
        Arc::new(View {
            shared: Arc::clone(shared),
            seq,
        })
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let mut state = self.shared.write();
        if let Some(count) = state.views.get_mut(&self.seq) {
            *count -= 1;
            if *count == 0 {
                state.views.remove(&self.seq);
            }
        }
    }
}

/// The value of a chain as seen at `seq`.
fn visible(chain: &[Version], seq: u64) -> Option<&Bytes> {
    chain
        .iter()
        .rev()
        .find(|v| v.seq <= seq)
        .and_then(|v| v.value.as_ref())
}

/// Drops versions no live view can see, and leading deletions (a deletion with nothing
/// older under it reads the same as no version at all).
fn prune(chain: &mut Vec<Version>, views: &BTreeMap<u64, usize>) {
    if chain.len() > 1 {
        let mut kept = Vec::with_capacity(chain.len());
        let mut versions = std::mem::take(chain).into_iter().peekable();
        while let Some(version) = versions.next() {
            // A version is visible to views in [its seq, the next version's seq).
            let needed = match versions.peek() {
                None => true,
                Some(newer) => views.range(version.seq..newer.seq).next().is_some(),
            };
            if needed {
                kept.push(version);
            }
        }
        *chain = kept;
    }
    let leading_deletes = chain.iter().take_while(|v| v.value.is_none()).count();
    chain.drain(..leading_deletes);
}

/// An in-memory [`Engine`] for tests: a multi-version `BTreeMap` behind an `RwLock`.
///
/// `flush` does nothing; `compact_all` runs the compaction filter over the latest value of
/// every key, in key order, as one full manual compaction in which `Replace` is honoured.
/// A decision is applied only if the key was not written again while the filter ran.
pub struct MemEngine {
    shared: Arc<Shared>,
    filter_factory: Option<Arc<dyn CompactionFilterFactory>>,
    compaction_lock: Mutex<()>,
}

impl Default for MemEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemEngine")
            .field("has_compaction_filter", &self.filter_factory.is_some())
            .finish_non_exhaustive()
    }
}

impl MemEngine {
    /// An empty engine without a compaction filter.
    pub fn new() -> Self {
        Self::with_compaction_filter(None)
    }

    /// An empty engine that runs `factory`'s filters in [`Engine::compact_all`].
    pub fn with_compaction_filter(factory: Option<Arc<dyn CompactionFilterFactory>>) -> Self {
        Self {
            shared: Arc::default(),
            filter_factory: factory,
            compaction_lock: Mutex::new(()),
        }
    }

    fn prune_all(&self) {
        let mut state = self.shared.write();
        let State { map, views, .. } = &mut *state;
        map.retain(|_, chain| {
            prune(chain, views);
            !chain.is_empty()
        });
    }
}

impl KvRead for MemEngine {
    type Iter<'a> = MemIter;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.shared.gets.fetch_add(1, Ordering::Relaxed);
        let state = self.shared.read();
        Ok(state
            .map
            .get(key)
            .and_then(|chain| chain.last())
            .and_then(|v| v.value.as_deref())
            .map(<[u8]>::to_vec))
    }

    fn iterator(&self, opts: IterOptions) -> Result<MemIter> {
        Ok(MemIter::new(
            View::open(&self.shared),
            Some(Arc::clone(&self.shared)),
            opts,
        ))
    }
}

impl Engine for MemEngine {
    type Snapshot<'a> = MemSnapshot;

    fn snapshot(&self) -> MemSnapshot {
        MemSnapshot {
            view: View::open(&self.shared),
        }
    }

    fn write(&self, batch: &WriteBatch, _opts: WriteOptions) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut state = self.shared.write();
        let State {
            map,
            seq,
            views,
            batches_written,
            keys_written,
            ..
        } = &mut *state;
        // One number per operation, as RocksDB counts; the batch's versions carry its last.
        *seq += batch.len() as u64;
        *batches_written += 1;
        for op in batch {
            *keys_written += 1;
            let value = match op {
                WriteOp::Put(_, value) => Some(Bytes::from(value)),
                WriteOp::Delete(_) => None,
            };
            let key = op.key();
            match map.get_mut(key) {
                Some(chain) => {
                    match chain.last_mut() {
                        // Written earlier in this same batch: the later op wins.
                        Some(last) if last.seq == *seq => last.value = value,
                        _ => chain.push(Version { seq: *seq, value }),
                    }
                    prune(chain, views);
                    if chain.is_empty() {
                        map.remove(key);
                    }
                }
                None => {
                    if value.is_some() {
                        map.insert(Bytes::from(key), vec![Version { seq: *seq, value }]);
                    }
                }
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn flush_wal(&self, _sync: bool) -> Result<()> {
        Ok(())
    }

    fn compact_all(&self) -> Result<CompactionOutcome> {
        let _serialised = self
            .compaction_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut outcome = CompactionOutcome::default();
        if let Some(factory) = &self.filter_factory {
            // Read the input without holding the lock while the filter runs, like a real
            // compaction: writers are not blocked.
            let input: Vec<(Bytes, u64, Bytes)> = {
                let state = self.shared.read();
                state
                    .map
                    .iter()
                    .filter_map(|(key, chain)| {
                        let last = chain.last()?;
                        let value = last.value.as_ref()?;
                        Some((Arc::clone(key), last.seq, Arc::clone(value)))
                    })
                    .collect()
            };
            let ctx = CompactionContext {
                is_full: true,
                is_manual: true,
                can_replace: true,
            };
            let mut filter = factory.create(&ctx);
            let mut changes = Vec::new();
            for (key, seq, value) in &input {
                let decision = filter.filter(key, value);
                outcome.count(&decision);
                let (new_value, computed) = match decision {
                    CompactionDecision::Keep => continue,
                    CompactionDecision::Remove => (None, false),
                    CompactionDecision::Replace(v) => (Some(Bytes::from(v)), true),
                    CompactionDecision::ReplaceWithStatic(v) => (Some(Bytes::from(v)), false),
                };
                changes.push((key, *seq, new_value, computed));
            }
            drop(filter);
            let mut state = self.shared.write();
            state.compactions += 1;
            for (key, seq, new_value, computed) in changes {
                let Some(last) = state.map.get_mut(&**key).and_then(|c| c.last_mut()) else {
                    continue;
                };
                if last.seq != seq {
                    continue; // Written again meanwhile: the newer write wins.
                }
                last.value = new_value;
                outcome.rewritten += u64::from(computed);
            }
        } else {
            self.shared.write().compactions += 1;
        }
        self.prune_all();
        Ok(outcome)
    }

    fn last_sequence(&self) -> u64 {
        self.shared.read().seq
    }

    fn statistics(&self) -> Result<EngineStatistics> {
        let state = self.shared.read();
        let versions = state.map.values().map(Vec::len).sum::<usize>() as u64;
        let counters: BTreeMap<String, u64> = [
            ("mem.keys", state.map.len() as u64),
            ("mem.versions", versions),
            ("mem.live_views", state.views.values().sum::<usize>() as u64),
            ("mem.batches_written", state.batches_written),
            ("mem.keys_written", state.keys_written),
            ("mem.gets", self.shared.gets.load(Ordering::Relaxed)),
            ("mem.compactions", state.compactions),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let text = counters
            .iter()
            .map(|(name, value)| format!("{name} COUNT : {value}\n"))
            .collect();
        Ok(EngineStatistics { counters, text })
    }
}

/// A snapshot of a [`MemEngine`]; owns its view, so it does not borrow the engine.
#[derive(Debug)]
pub struct MemSnapshot {
    view: Arc<View>,
}

impl KvRead for MemSnapshot {
    type Iter<'a> = MemIter;

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let state = self.view.shared.read();
        Ok(state
            .map
            .get(key)
            .and_then(|chain| visible(chain, self.view.seq))
            .map(|v| v.to_vec()))
    }

    fn iterator(&self, opts: IterOptions) -> Result<MemIter> {
        Ok(MemIter::new(Arc::clone(&self.view), None, opts))
    }
}

impl Snapshot for MemSnapshot {}

/// An iterator over a [`MemEngine`] or [`MemSnapshot`]. Each step is a `BTreeMap` range
/// lookup under a short read lock, so writers are never blocked by open iterators.
#[derive(Debug)]
pub struct MemIter {
    view: Arc<View>,
    /// The engine, for a reset to its latest state; `None` for an iterator of a snapshot.
    latest: Option<Arc<Shared>>,
    /// The bounds the iterator was created with, which resets must stay within.
    created: IterOptions,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    current: Option<(Bytes, Bytes)>,
}

impl MemIter {
    fn new(view: Arc<View>, latest: Option<Arc<Shared>>, opts: IterOptions) -> Self {
        Self {
            view,
            latest,
            lower: opts.lower.clone(),
            upper: opts.upper.clone(),
            created: opts,
            current: None,
        }
    }
}

/// First pair visible in `view` at or after `start`, below `upper`.
fn find_forward(view: &View, upper: Option<&[u8]>, start: Bound<&[u8]>) -> Option<(Bytes, Bytes)> {
    let state = view.shared.read();
    state
        .map
        .range::<[u8], _>((start, Bound::Unbounded))
        .take_while(|(key, _)| upper.is_none_or(|u| &***key < u))
        .find_map(|(key, chain)| visible(chain, view.seq).map(|v| (Arc::clone(key), Arc::clone(v))))
}

/// Last pair visible in `view` at or before `end`, not below `lower`.
fn find_backward(view: &View, lower: Option<&[u8]>, end: Bound<&[u8]>) -> Option<(Bytes, Bytes)> {
    let state = view.shared.read();
    state
        .map
        .range::<[u8], _>((Bound::Unbounded, end))
        .rev()
        .take_while(|(key, _)| lower.is_none_or(|l| &***key >= l))
        .find_map(|(key, chain)| visible(chain, view.seq).map(|v| (Arc::clone(key), Arc::clone(v))))
}

impl EngineIterator for MemIter {
    fn seek(&mut self, key: &[u8]) {
        let start = match self.lower.as_deref() {
            Some(lower) if key < lower => lower,
            _ => key,
        };
        self.current = find_forward(&self.view, self.upper.as_deref(), Bound::Included(start));
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        let end = match self.upper.as_deref() {
            Some(upper) if key >= upper => Bound::Excluded(upper),
            _ => Bound::Included(key),
        };
        self.current = find_backward(&self.view, self.lower.as_deref(), end);
    }

    fn seek_to_first(&mut self) {
        let start = self
            .lower
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Included);
        self.current = find_forward(&self.view, self.upper.as_deref(), start);
    }

    fn seek_to_last(&mut self) {
        let end = self
            .upper
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Excluded);
        self.current = find_backward(&self.view, self.lower.as_deref(), end);
    }

    fn next(&mut self) {
        if let Some((key, _)) = self.current.take() {
            self.current = find_forward(&self.view, self.upper.as_deref(), Bound::Excluded(&key));
        }
    }

    fn prev(&mut self) {
        if let Some((key, _)) = self.current.take() {
            self.current = find_backward(&self.view, self.lower.as_deref(), Bound::Excluded(&key));
        }
    }

    fn valid(&self) -> Result<bool> {
        Ok(self.current.is_some())
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(key, _)| key)
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, value)| value)
    }

    fn reset(&mut self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Result<()> {
        self.created.check_within(lower, upper)?;
        if let Some(shared) = &self.latest {
            self.view = View::open(shared);
        }
        self.lower = lower.map(<[u8]>::to_vec);
        self.upper = upper.map(<[u8]>::to_vec);
        self.current = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{OnceLock, Weak};

    use super::*;
    use crate::CompactionFilter;

    fn put(e: &MemEngine, key: &[u8], value: &[u8]) {
        let mut batch = WriteBatch::new();
        batch.put(key, value);
        e.write(&batch, WriteOptions::default()).expect("write");
    }

    fn versions(e: &MemEngine) -> u64 {
        e.statistics()
            .expect("stats")
            .counter("mem.versions")
            .expect("counter")
    }

    #[test]
    fn old_versions_are_pruned_once_no_view_needs_them() {
        let e = MemEngine::new();
        for i in 0..100u8 {
            put(&e, b"k", &[i]);
        }
        assert_eq!(versions(&e), 1, "no view: one version per key");

        let snap = e.snapshot();
        for i in 0..100u8 {
            put(&e, b"k", &[i]);
        }
        assert_eq!(versions(&e), 2, "the snapshot's version and the latest");
        assert_eq!(snap.get(b"k").expect("get"), Some(vec![99]));
        drop(snap);
        e.compact_all().expect("compact");
        assert_eq!(versions(&e), 1);

        let mut batch = WriteBatch::new();
        batch.delete(&b"k"[..]);
        e.write(&batch, WriteOptions::default()).expect("write");
        assert_eq!(
            versions(&e),
            0,
            "a deletion with nothing under it is dropped"
        );
        let stats = e.statistics().expect("stats");
        assert_eq!(stats.counter("mem.keys"), Some(0));
        assert_eq!(stats.counter("mem.live_views"), Some(0));
    }

    /// A filter that overwrites the key it is looking at, through the engine, to simulate a
    /// writer racing the compaction.
    struct RacingFactory {
        engine: OnceLock<Weak<MemEngine>>,
    }

    struct RacingFilter {
        engine: Option<Arc<MemEngine>>,
    }

    impl CompactionFilterFactory for RacingFactory {
        fn create(&self, _ctx: &CompactionContext) -> Box<dyn CompactionFilter> {
            Box::new(RacingFilter {
                engine: self.engine.get().and_then(Weak::upgrade),
            })
        }
    }

    impl CompactionFilter for RacingFilter {
        fn filter(&mut self, key: &[u8], _value: &[u8]) -> CompactionDecision {
            if let Some(engine) = &self.engine {
                put(engine, key, b"newer");
            }
            if key == b"remove" {
                CompactionDecision::Remove
            } else {
                CompactionDecision::Replace(b"replaced".to_vec())
            }
        }
    }

    #[test]
    fn decisions_lose_to_writes_made_during_the_compaction() {
        let factory = Arc::new(RacingFactory {
            engine: OnceLock::new(),
        });
        let e = Arc::new(MemEngine::with_compaction_filter(Some(
            Arc::clone(&factory) as Arc<dyn CompactionFilterFactory>,
        )));
        assert!(factory.engine.set(Arc::downgrade(&e)).is_ok());
        put(&e, b"remove", b"old");
        put(&e, b"replace", b"old");
        let outcome = e.compact_all().expect("compact");
        assert_eq!(outcome.rewritten, 0);
        assert_eq!(outcome.removed, 1);
        assert_eq!(e.get(b"remove").expect("get"), Some(b"newer".to_vec()));
        assert_eq!(e.get(b"replace").expect("get"), Some(b"newer".to_vec()));
    }
}
