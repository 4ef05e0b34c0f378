//! The newest record at each document root read more than once or just written by a
//! `write_now`, kept in memory: a Redis string's value (so GET after SET, and GET and INCR of
//! a hot key, skip RocksDB), a collection's root (so HSET after HSET on one hash seeks it
//! once) and that collection's counter subkey (`%`: the length a Redis list or sorted set
//! keeps, rewritten by every push, pop or add).
//!
//! **What an entry means.** An entry holds the newest record at its path of all the records
//! written, and only a record that stays visible unchanged until a newer one is written at the
//! same path or above: live, no TTL, no user timestamp, no merge flags
//! ([`lasting`]). Nothing written below a root can hide it, so a read at any time at or after
//! the kept record's own time sees exactly it. A kept counter is the newest record at the
//! counter path under a root kept (or written, see below), on the same terms.
//!
//! **How that stays true.**
//! - Reads add entries ([`RootCache::remember`]) only if no batch was counted since
//!   before they made their iterator and none is between being applied and landing (so the
//!   iterator has every batch applied), no other `write_now` was in flight then (its pending
//!   writes were not in the iterator), and their read time is at or after every time written
//!   (so what they found at their read time is also the newest record). The newest time
//!   written starts at the ceiling the database stored (see `DocDb::open`), so records from
//!   before a restart count too.
//! - A `write_now`'s batch adds the lasting records it writes at roots not kept, if its time
//!   is at or after every time written before it ([`Adds`]): each is then the newest record
//!   at its root. Batches written outside `write_now` add nothing (they may write the past).
//! - Every batch goes through [`RootCache::apply_written`] before it reaches the engine, and it
//!   is counted twice: there, and again once it has landed ([`RootCache::finished`]). A write
//!   at a kept root replaces the entry when it is the newer record and lasting, and drops it
//!   otherwise.
//! - A read uses an entry only if the entry's time is at or before its read time.
//! - Anything that breaks the count (a write that did not land) clears the cache.
//!
//! The cache holds up to a byte budget, split over shards; a full shard starts over. A
//! doorkeeper admits a root on its second read (see [`Shard`]), or on its write.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use dockv::value::{Value, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryType, ValueEntryType};
use engine::WriteOp;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::dead_spans::BatchDocs;
use crate::expiration::{Expiration, effective_expiration};
use crate::reader::{ReadOptions, RootLevel, VisibleRecord};
use crate::written_roots::WrittenRoots;

/// Shards of the cache, each with its own lock and an equal part of the byte budget.
const SHARDS: usize = 16;

/// Bytes an entry costs beyond its own allocation: its table slot and the allocator's
/// bookkeeping, roughly.
const ENTRY_OVERHEAD: usize = 40;

/// A kept record's bytes: `[path length: u32][path][hybrid time: u64][write id:
/// u32][value bytes]`. The value is as stored, with no control fields ([`lasting`]); the
/// rest of the record follows from that: not expired, the expiration a read works out.
#[derive(Clone, Copy)]
struct EntryRef<'a>(&'a [u8]);

/// The parts of the entry of a record at `path`, as [`EntryRef`] lays them out, to `emit`.
fn entry_parts<R>(
    path: &[u8],
    time: DocHybridTime,
    value: &[u8],
    emit: impl FnOnce(&[&[u8]]) -> R,
) -> R {
    let len = (path.len() as u32).to_le_bytes();
    let ht = time.ht.0.to_le_bytes();
    let write_id = time.write_id.to_le_bytes();
    emit(&[&len, path, &ht, &write_id, value])
}

impl<'a> EntryRef<'a> {
    fn path_len(self) -> usize {
        let mut len = [0; 4];
        len.copy_from_slice(&self.0[..4]);
        u32::from_le_bytes(len) as usize
    }

    fn path(self) -> &'a [u8] {
        &self.0[4..4 + self.path_len()]
    }

    fn time(self) -> DocHybridTime {
        let at = 4 + self.path_len();
        let mut ht = [0; 8];
        ht.copy_from_slice(&self.0[at..at + 8]);
        let mut write_id = [0; 4];
        write_id.copy_from_slice(&self.0[at + 8..at + 12]);
        DocHybridTime::new(
            HybridTime(u64::from_le_bytes(ht)),
            u32::from_le_bytes(write_id),
        )
    }

    fn value(self) -> &'a [u8] {
        &self.0[4 + self.path_len() + 12..]
    }

    /// The record a read finds here, whose expiration is `exp`.
    fn record(self, exp: Expiration) -> Option<VisibleRecord> {
        let value = Value::decode(self.value()).ok()?;
        Some(VisibleRecord {
            time: self.time(),
            control: ValueControlFields::default(),
            payload: value.payload,
            expired: false,
            expiration: exp,
        })
    }
}

/// A kept record in one allocation, laid out as [`EntryRef`]. Hashed and compared by its
/// path alone, so a set of entries is a map from paths.
struct Entry(Box<[u8]>);

impl Entry {
    fn new(path: &[u8], time: DocHybridTime, value: &[u8]) -> Self {
        entry_parts(path, time, value, |parts| {
            Entry(parts.concat().into_boxed_slice())
        })
    }

    fn get(&self) -> EntryRef<'_> {
        EntryRef(&self.0)
    }

    fn path(&self) -> &[u8] {
        self.get().path()
    }

    fn time(&self) -> DocHybridTime {
        self.get().time()
    }

    fn bytes(&self) -> usize {
        self.0.len() + ENTRY_OVERHEAD
    }
}

impl Hash for Entry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.path().hash(state);
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.path() == other.path()
    }
}

impl Eq for Entry {}

impl Borrow<[u8]> for Entry {
    fn borrow(&self) -> &[u8] {
        self.path()
    }
}

/// The expiration a read works out for a root record with no TTL of its own.
fn root_expiration(time: DocHybridTime) -> Expiration {
    effective_expiration(None, [], time.ht)
}

/// The expiration a read works out for a counter record (no TTL) under a kept root.
fn counter_expiration(root: DocHybridTime, time: DocHybridTime) -> Expiration {
    effective_expiration(None, [root_expiration(root)], time.ht)
}

/// A record that stays visible, unchanged, until the next write at its own path or above,
/// and that an [`Entry`] holds whole.
fn lasting(record: &VisibleRecord) -> bool {
    record.is_live()
        && record.control == ValueControlFields::default()
        && record.expiration.ttl.is_none()
}

/// The stored bytes of a lasting record's payload.
fn value_bytes(record: &VisibleRecord) -> Vec<u8> {
    let mut out = Vec::new();
    record.payload.encode_to(&mut out);
    out
}

/// The fewest bits of a shard's doorkeeper (8 KiB).
const MIN_SEEN_BITS: usize = 1 << 16;

/// Roots by DocKey, the counters of some of them (collections' lengths), and a doorkeeper:
/// one bit per hash of the DocKeys read recently. A root read is kept only when read a
/// second time (its bit set by the first), so a stream of keys read once (a uniform random
/// read load larger than the cache) costs a bit each, not an entry; and a key whose bit is
/// clear has no entry, so reads of it skip the table. When half the bits are set they start
/// over with only the kept keys', at least four bits per kept key, so that those never
/// fill it.
///
/// Roots a `write_now` wrote go to `written` instead, unless kept in `roots` already: a
/// root is in one of the two at most.
struct Shard {
    roots: HashSet<Entry, FxBuildHasher>,
    counters: FxHashMap<Box<[u8]>, Entry>,
    bytes: usize,
    seen: Box<[u64]>,
    seen_count: usize,
    written: WrittenRoots,
}

/// A DocKey's hash: the high bits pick the shard, the low ones its doorkeeper bit.
fn key_hash(doc_key: &[u8]) -> u64 {
    FxBuildHasher.hash_one(doc_key)
}

impl Shard {
    /// A shard with `written_budget` bytes for roots written.
    fn new(written_budget: usize) -> Self {
        Shard {
            roots: HashSet::default(),
            counters: FxHashMap::default(),
            bytes: 0,
            seen: vec![0; MIN_SEEN_BITS / 64].into_boxed_slice(),
            seen_count: 0,
            written: WrittenRoots::new(written_budget),
        }
    }

    /// Forgets the roots read (and their counters and doorkeeper bits); the roots written
    /// stay.
    fn start_over(&mut self) {
        self.roots = HashSet::default();
        self.counters = FxHashMap::default();
        self.bytes = 0;
        self.seen = vec![0; MIN_SEEN_BITS / 64].into_boxed_slice();
        self.seen_count = 0;
    }

    fn seen_bits(&self) -> usize {
        self.seen.len() * 64
    }

    fn seen(&self, hash: u64) -> bool {
        let bit = hash as usize % self.seen_bits();
        self.seen[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Sets the bit of `hash`. Once half the bits are set, starts them over with only the
    /// kept roots' bits (an entry's bit stays set while it is kept).
    fn mark_seen(&mut self, hash: u64) {
        if self.seen(hash) {
            return;
        }
        if self.seen_count >= self.seen_bits() / 2 {
            let roots = self.roots.iter().map(|e| key_hash(e.path()));
            let counters = self.counters.keys().map(|doc_key| key_hash(doc_key));
            let kept: Vec<u64> = roots.chain(counters).collect();
            // At least four bits per kept key: else the kept keys' bits alone soon fill half
            // again, and every first read would start over, a pass over every kept key.
            let bits = (kept.len() * 4).max(self.seen_bits()).next_power_of_two();
            self.seen = vec![0; bits / 64].into_boxed_slice();
            self.seen_count = 0;
            for hash in kept {
                self.set_bit(hash);
            }
        }
        self.set_bit(hash);
    }

    fn set_bit(&mut self, hash: u64) {
        let bit = hash as usize % self.seen_bits();
        let word = &mut self.seen[bit / 64];
        if *word & (1 << (bit % 64)) == 0 {
            *word |= 1 << (bit % 64);
            self.seen_count += 1;
        }
    }

    fn root(&self, doc_key: &[u8]) -> Option<&Entry> {
        self.roots.get(doc_key)
    }

    fn insert_root(&mut self, entry: Entry, budget: usize) {
        let bytes = entry.bytes();
        if self.bytes + bytes > budget {
            // Full (counting what this replaces too): start over.
            self.start_over();
            if bytes > budget {
                return;
            }
        }
        self.bytes += bytes;
        let hash = key_hash(entry.path());
        self.set_bit(hash);
        // Kept here now, not there.
        if self.written_root(hash, entry.path()).is_some() {
            self.written.clear(hash);
        }
        if let Some(old) = self.roots.replace(entry) {
            self.bytes -= old.bytes();
            self.remove_counter(old.path());
        }
    }

    /// Forgets the root of `doc_key` and its counter.
    fn remove(&mut self, doc_key: &[u8]) {
        if let Some(old) = self.roots.take(doc_key) {
            self.bytes -= old.bytes();
            self.remove_counter(doc_key);
        }
    }

    fn remove_counter(&mut self, doc_key: &[u8]) {
        if self.counters.is_empty() {
            return;
        }
        if let Some(old) = self.counters.remove(doc_key) {
            self.bytes -= old.bytes() + doc_key.len();
        }
    }

    /// The written root of `doc_key`, whose hash is `hash`, if its slot holds it.
    fn written_root(&self, hash: u64, doc_key: &[u8]) -> Option<EntryRef<'_>> {
        let entry = EntryRef(self.written.get(hash)?);
        (entry.path() == doc_key).then_some(entry)
    }

    /// Holds `time` and `value` as the written root of `doc_key` (whose hash is `hash`), or,
    /// if they do not fit a slot, empties the slot.
    fn put_written(&mut self, hash: u64, doc_key: &[u8], time: DocHybridTime, value: &[u8]) {
        let put = entry_parts(doc_key, time, value, |parts| {
            self.written
                .put(hash, parts, |entry| key_hash(EntryRef(entry).path()))
        });
        if !put {
            self.written.clear(hash);
        }
    }

    /// Keeps `counter` for the root (kept or written) of `doc_key`, whose hash is `hash`
    /// (within the budget, else not at all).
    fn set_counter(&mut self, doc_key: &[u8], hash: u64, counter: Entry, budget: usize) {
        let bytes = counter.bytes() + doc_key.len();
        let fits = |used: usize| used + bytes <= budget;
        if self.root_time(hash, doc_key).is_none() {
            self.remove_counter(doc_key);
        } else if let Some(old) = self.counters.get_mut(doc_key) {
            // Replaced in place: every push or pop rewrites it.
            let used = self.bytes - old.bytes() - doc_key.len();
            if fits(used) {
                *old = counter;
                self.bytes = used + bytes;
            } else {
                self.remove_counter(doc_key);
            }
        } else if fits(self.bytes) {
            self.bytes += bytes;
            self.counters.insert(doc_key.into(), counter);
            // The root may be a written one, whose bit is not set: a counter's must be.
            self.set_bit(hash);
        }
    }

    /// The root of `doc_key` (whose hash is `hash`), kept or written.
    fn any_root(&self, hash: u64, doc_key: &[u8]) -> Option<EntryRef<'_>> {
        let read = self.seen(hash).then(|| self.root(doc_key)).flatten();
        match read {
            Some(entry) => Some(entry.get()),
            None => self.written_root(hash, doc_key),
        }
    }

    /// The time of [`Self::any_root`].
    fn root_time(&self, hash: u64, doc_key: &[u8]) -> Option<DocHybridTime> {
        self.any_root(hash, doc_key).map(EntryRef::time)
    }
}

/// Encoded DocKey → what is kept of that document (see the module docs).
pub(crate) struct RootCache {
    shards: Box<[Mutex<Shard>]>,
    /// Bytes each shard may hold of roots read (its roots written have their own).
    shard_budget: usize,
    /// Batches counted so far: once when applied here, once when landed.
    commits: AtomicU64,
    /// Batches written outside `write_now` that are between being applied here and landing
    /// (no reader can tell whether its iterator has them).
    unlanded: AtomicU64,
    /// The newest hybrid time of every batch applied (or stored before the engine opened).
    newest: AtomicU64,
    /// Whether roots written are kept (`write_now`'s batches add them).
    adds_written: bool,
}

/// Whether `path` is the counter subkey of the document whose DocKey is `doc_key_len` long.
pub(crate) fn is_counter_path(path: &[u8], doc_key_len: usize) -> bool {
    path.len() == doc_key_len + 1 && path[doc_key_len] == KeyEntryType::Counter.as_u8()
}

impl RootCache {
    /// A cache holding up to about `bytes` (0 keeps nothing), half of them for roots
    /// written if it keeps them (`written`), for an engine whose records are no newer than
    /// `ceiling`.
    pub(crate) fn new(bytes: usize, written: bool, ceiling: HybridTime) -> Self {
        let written_budget = if written { bytes / 2 / SHARDS } else { 0 };
        let shard_budget = bytes / SHARDS - written_budget;
        RootCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard::new(written_budget)))
                .collect(),
            shard_budget,
            commits: AtomicU64::new(0),
            unlanded: AtomicU64::new(0),
            newest: AtomicU64::new(ceiling.0),
            adds_written: written,
        }
    }

    /// The shard of `doc_key`, locked, and the key's hash.
    fn shard(&self, doc_key: &[u8]) -> (MutexGuard<'_, Shard>, u64) {
        let hash = key_hash(doc_key);
        let index = (hash >> 60) as usize % SHARDS;
        let shard = self.shards[index].lock().unwrap_or_else(|e| e.into_inner());
        (shard, hash)
    }

    /// The shard of `doc_key`, locked, and the key's hash, if the key's doorkeeper bit is
    /// set (as it is for every key with a counter, or a root read more than once).
    fn shard_with(&self, doc_key: &[u8]) -> Option<(MutexGuard<'_, Shard>, u64)> {
        let (shard, hash) = self.shard(doc_key);
        shard.seen(hash).then_some((shard, hash))
    }

    fn newest(&self) -> HybridTime {
        HybridTime(self.newest.load(Ordering::SeqCst))
    }

    /// The shard of `doc_key` and the key's hash, unless a batch was counted since
    /// [`Self::commits`] returned `commits_before`, a batch is landing, or something newer
    /// than `read_ht` was written: what was read may then not be the newest record. (Checked under the shard's lock: a batch counted after
    /// the check sees, and updates, what goes in.)
    fn shard_unchanged(
        &self,
        doc_key: &[u8],
        read_ht: HybridTime,
        commits_before: u64,
    ) -> Option<(MutexGuard<'_, Shard>, u64)> {
        if self.shard_budget == 0 {
            return None;
        }
        let (shard, hash) = self.shard(doc_key);
        self.unchanged(read_ht, commits_before)
            .then_some((shard, hash))
    }

    /// Whether a read at `read_ht` by an iterator made after [`Self::commits`] returned
    /// `commits_before` read the newest state: no batch was counted since, none is landing,
    /// and nothing newer than `read_ht` was written.
    pub(crate) fn unchanged(&self, read_ht: HybridTime, commits_before: u64) -> bool {
        self.commits() == commits_before
            && self.unlanded.load(Ordering::SeqCst) == 0
            && self.newest() <= read_ht
    }

    /// Forgets everything kept (writes it followed did not land).
    pub(crate) fn clear(&self) {
        self.commits.fetch_add(1, Ordering::SeqCst);
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            shard.start_over();
            shard.written.clear_all();
        }
    }

    /// The commit count to pass to [`Self::remember`] for reads starting now.
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// Counts a batch given to [`Self::apply_written`] as having reached the engine, or, if
    /// it did not (`landed` false), forgets everything.
    pub(crate) fn finished(&self, direct: bool, landed: bool) {
        if landed {
            self.commits.fetch_add(1, Ordering::SeqCst);
        } else {
            self.clear();
        }
        // After the count: a read between the two sees the count change.
        if direct {
            self.unlanded.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The root of `doc_key` as a read at `read_ht` sees it, if kept.
    pub(crate) fn get(
        &self,
        doc_key: &[u8],
        read_ht: HybridTime,
    ) -> Option<(VisibleRecord, RootLevel)> {
        let (shard, hash) = self.shard(doc_key);
        let entry = shard.any_root(hash, doc_key)?;
        let time = entry.time();
        if time.ht > read_ht {
            return None;
        }
        let exp = root_expiration(time);
        Some((entry.record(exp)?, RootLevel::of_root(time, exp)))
    }

    /// The counter of `doc_key` as a read at `read_ht` sees it, if kept (and newer than the
    /// root, which would hide it otherwise).
    pub(crate) fn counter(&self, doc_key: &[u8], read_ht: HybridTime) -> Option<VisibleRecord> {
        // A counter's bit is set (its root may be a written one, with no bit of its own).
        let (shard, hash) = self.shard_with(doc_key)?;
        let counter = shard.counters.get(doc_key)?;
        let root = shard.root_time(hash, doc_key)?;
        let time = counter.time();
        if root.ht > read_ht || time.ht > read_ht || time <= root {
            return None;
        }
        counter.get().record(counter_expiration(root, time))
    }

    /// Keeps the root of `doc_key` as read with `opts` by an iterator made after
    /// [`Self::commits`] returned `commits_before`, on the terms of the module docs.
    pub(crate) fn remember(
        &self,
        doc_key: &[u8],
        record: &VisibleRecord,
        opts: &ReadOptions,
        commits_before: u64,
    ) {
        let keeps = lasting(record)
            && opts.table_ttl.is_none()
            && record.expiration == root_expiration(record.time);
        if !keeps {
            return;
        }
        let Some((mut shard, hash)) = self.shard_unchanged(doc_key, opts.read_ht, commits_before)
        else {
            return;
        };
        if shard.seen(hash) {
            let entry = Entry::new(doc_key, record.time, &value_bytes(record));
            shard.insert_root(entry, self.shard_budget);
        } else {
            // The first read: kept from the second on.
            shard.mark_seen(hash);
        }
    }

    /// Keeps the counter of `doc_key` as read, on the same terms as [`Self::remember`], if
    /// its root is kept.
    pub(crate) fn remember_counter(
        &self,
        doc_key: &[u8],
        record: &VisibleRecord,
        opts: &ReadOptions,
        commits_before: u64,
    ) {
        if !lasting(record) || opts.table_ttl.is_some() {
            return;
        }
        let Some((mut shard, hash)) = self.shard_unchanged(doc_key, opts.read_ht, commits_before)
        else {
            return;
        };
        let matches = shard.root_time(hash, doc_key).is_some_and(|root| {
            record.time > root && record.expiration == counter_expiration(root, record.time)
        });
        if matches {
            let entry = Entry::new(doc_key, record.time, &value_bytes(record));
            shard.set_counter(doc_key, hash, entry, self.shard_budget);
        }
    }

    /// Brings the cache up to date with `batch`, whose records are no newer than `newest`
    /// (called before the batch reaches the engine; [`Self::finished`] follows if it returns
    /// true). `direct`: written outside `write_now`, landing at once.
    ///
    /// A batch with no record at a root or counter is not counted: it changes no entry,
    /// and a read racing it still finds the newest record at a root.
    pub(crate) fn apply_written(
        &self,
        batch: &BatchDocs<'_>,
        newest: HybridTime,
        direct: bool,
    ) -> bool {
        if !batch.at_roots() {
            return false;
        }
        if direct {
            self.unlanded.fetch_add(1, Ordering::SeqCst);
        }
        let before = self.newest.fetch_max(newest.0, Ordering::SeqCst);
        self.commits.fetch_add(1, Ordering::SeqCst);
        if self.shard_budget == 0 {
            return true;
        }
        let mut adds = Adds {
            newest: (self.adds_written && !direct && newest.0 >= before).then_some(newest),
            hidden: Vec::new(),
        };
        for (op, doc_key) in batch.records() {
            let rest = &op.key()[doc_key.len()..];
            let value = match op {
                WriteOp::Put(_, value) => Some(value),
                WriteOp::Delete(_) => None,
            };
            if rest.first() == Some(&KeyEntryType::HybridTime.as_u8()) {
                self.root_written(doc_key, &rest[1..], value, &mut adds);
            } else if rest.first() == Some(&KeyEntryType::Counter.as_u8())
                && rest.get(1) == Some(&KeyEntryType::HybridTime.as_u8())
            {
                self.counter_written(doc_key, &rest[2..], value);
            }
        }
        true
    }

    /// A record written at the root of `doc_key`: replaces the root kept or written before
    /// if it is newer and lasting, else drops it. A root neither kept nor written before is
    /// added to the written ones if `adds` allows it.
    fn root_written<'b>(
        &self,
        doc_key: &'b [u8],
        time: &[u8],
        value: Option<&[u8]>,
        adds: &mut Adds<'b>,
    ) {
        let (mut shard, hash) = self.shard(doc_key);
        let seen = shard.seen(hash);
        if !seen && adds.newest.is_none() && shard.written.is_empty() {
            // Nothing kept of the root, nothing to add.
            return;
        }
        let written = value.and_then(|v| Some((lasting_time(time, v)?, v)));
        if let Some(kept) = seen.then(|| shard.root(doc_key).map(Entry::time)).flatten() {
            match written {
                // The same time replaces the same engine key.
                Some((time, value)) if time >= kept => {
                    shard.insert_root(Entry::new(doc_key, time, value), self.shard_budget);
                }
                // Older: the kept root stays the newest.
                Some(_) => {}
                // A tombstone, a TTL, a merge record, or an engine-level delete.
                None => shard.remove(doc_key),
            }
            return;
        }
        if adds.newest.is_some() {
            // The newest record at the root, or one that hides it: whatever the slot held
            // goes, another root's record included.
            match written {
                Some((time, value)) if adds.allows(doc_key, time) => {
                    shard.put_written(hash, doc_key, time, value);
                }
                Some(_) => {}
                None => {
                    adds.hidden.push(doc_key);
                    shard.written.clear(hash);
                }
            }
            return;
        }
        let held = shard.written_root(hash, doc_key).map(EntryRef::time);
        match (held, written) {
            (Some(held), Some((time, value))) if time >= held => {
                shard.put_written(hash, doc_key, time, value);
            }
            (Some(_), Some(_)) | (None, _) => {}
            (Some(_), None) => shard.written.clear(hash),
        }
    }

    /// A record written at the counter of `doc_key`: kept if it is newer than the kept one.
    fn counter_written(&self, doc_key: &[u8], time: &[u8], value: Option<&[u8]>) {
        let Some((mut shard, hash)) = self.shard_with(doc_key) else {
            return;
        };
        let Some(old) = shard.counters.get(doc_key).map(Entry::time) else {
            return;
        };
        let written = value.and_then(|v| Some((lasting_time(time, v)?, v)));
        // Only a newer version replaces the kept one (a writer outside `write_now` may write
        // the past); anything else leaves the counter to the next read.
        match written {
            Some((time, value)) if time > old => {
                let entry = Entry::new(doc_key, time, value);
                shard.set_counter(doc_key, hash, entry, self.shard_budget);
            }
            _ => shard.remove_counter(doc_key),
        }
    }
}

/// Which roots not kept a batch may add: only a `write_now`'s, at its own time, when nothing
/// newer was written before it (so each record is the newest at its root), and not a root
/// the batch also wrote a record there that is not lasting (a newer tombstone, say, may
/// come before an older value among its records).
struct Adds<'b> {
    /// The batch's time, if its records may add roots.
    newest: Option<HybridTime>,
    /// Roots with a record that is not lasting earlier in the batch.
    hidden: Vec<&'b [u8]>,
}

impl Adds<'_> {
    fn allows(&self, doc_key: &[u8], time: DocHybridTime) -> bool {
        self.newest == Some(time.ht) && !self.hidden.contains(&doc_key)
    }
}

/// The time of a record just written (`time` encoded, `value` stored), if it is [`lasting`]
/// as a root or counter: live, no control fields.
fn lasting_time(time: &[u8], value: &[u8]) -> Option<DocHybridTime> {
    let (time, rest) = DocHybridTime::decode(time).ok()?;
    if !rest.is_empty() {
        return None;
    }
    // The payload is decoded when read; here only its type matters (and it copies nothing).
    let (control, payload) = ValueControlFields::decode(value).ok()?;
    let kind = ValueEntryType::from_u8(*payload.first()?)?;
    let live = kind != ValueEntryType::Tombstone && control == ValueControlFields::default();
    live.then_some(time)
}

#[cfg(test)]
mod tests {
    use dockv::KeyEntryValue;
    use dockv::doc_key::DocKey;
    use dockv::value::PrimitiveValue;
    use engine::WriteBatch;

    use super::*;

    fn root_key(doc_key: &[u8], time: DocHybridTime) -> Vec<u8> {
        let mut key = doc_key.to_vec();
        key.push(KeyEntryType::HybridTime.as_u8());
        time.encode_to(&mut key);
        key
    }

    /// A batch whose newer tombstone comes before an older value at the same root (records
    /// out of their time order): the value is not the newest record, so it is not added.
    #[test]
    fn a_value_under_a_newer_record_of_its_batch_is_not_added() {
        let doc_key = DocKey::with_hash(7, vec![KeyEntryValue::string("k")], vec![]).encode();
        let ht = HybridTime::from_micros(1_000);
        let value = Value::new(PrimitiveValue::String(b"v".to_vec())).encode();
        for tombstone_first in [true, false] {
            let cache = RootCache::new(1 << 20, true, HybridTime::from_micros(1));
            let (tombstone_id, value_id) = if tombstone_first { (1, 0) } else { (0, 1) };
            let mut batch = WriteBatch::default();
            let tombstone = (
                root_key(&doc_key, DocHybridTime::new(ht, tombstone_id)),
                Value::tombstone().encode(),
            );
            let put = (
                root_key(&doc_key, DocHybridTime::new(ht, value_id)),
                value.clone(),
            );
            let (first, second) = if tombstone_first {
                (tombstone, put)
            } else {
                (put, tombstone)
            };
            batch.put(first.0, first.1);
            batch.put(second.0, second.1);
            assert!(cache.apply_written(&BatchDocs::of(&batch), ht, false));
            cache.finished(false, true);
            let kept = cache.get(&doc_key, ht).map(|(record, _)| record.payload);
            // Either way the tombstone is in the batch: nothing is kept (conservatively so
            // when the value is the newer record).
            assert_eq!(kept, None, "tombstone first: {tombstone_first}");
        }
    }

    /// With more kept roots than a quarter of the doorkeeper's bits, a first read that
    /// starts the bits over grows them: every kept root's bit stays set, and the bits do
    /// not fill half again before many more first reads.
    #[test]
    fn the_doorkeeper_grows_with_the_kept_roots() {
        let mut shard = Shard::new(0);
        let kept = 40_000;
        let time = DocHybridTime::new(HybridTime::from_micros(1), 0);
        for i in 0..kept {
            let path = format!("root {i}");
            shard.insert_root(Entry::new(path.as_bytes(), time, b"S"), usize::MAX);
        }
        for i in 0..200_000u64 {
            shard.mark_seen(key_hash(format!("read {i}").as_bytes()));
        }
        assert!(shard.seen_bits() >= 4 * kept, "{} bits", shard.seen_bits());
        assert!(shard.seen_count < shard.seen_bits() / 2);
        for i in 0..kept {
            let hash = key_hash(format!("root {i}").as_bytes());
            assert!(shard.seen(hash), "kept root {i} lost its bit");
        }
    }

    /// A lone value of a `write_now` batch is added; a value written outside `write_now`
    /// is not.
    #[test]
    fn a_lone_value_of_a_write_now_batch_is_added() {
        let doc_key = DocKey::with_hash(7, vec![KeyEntryValue::string("k")], vec![]).encode();
        let ht = HybridTime::from_micros(1_000);
        let cache = RootCache::new(1 << 20, true, HybridTime::from_micros(1));
        let value = Value::new(PrimitiveValue::String(b"v".to_vec())).encode();
        let mut batch = WriteBatch::default();
        batch.put(root_key(&doc_key, DocHybridTime::new(ht, 0)), value);
        assert!(cache.apply_written(&BatchDocs::of(&batch), ht, false));
        cache.finished(false, true);
        let kept = cache.get(&doc_key, ht).map(|(record, _)| record.payload);
        assert_eq!(kept, Some(PrimitiveValue::String(b"v".to_vec())));
        // Not for a read of the past, nor for a batch written outside `write_now`.
        assert!(cache.get(&doc_key, HybridTime::from_micros(999)).is_none());
        let other = DocKey::with_hash(8, vec![KeyEntryValue::string("o")], vec![]).encode();
        let later = HybridTime::from_micros(2_000);
        let mut direct = WriteBatch::default();
        let value = Value::new(PrimitiveValue::String(b"w".to_vec())).encode();
        direct.put(root_key(&other, DocHybridTime::new(later, 0)), value);
        assert!(cache.apply_written(&BatchDocs::of(&direct), later, true));
        cache.finished(true, true);
        assert!(cache.get(&other, later).is_none());
    }
}
