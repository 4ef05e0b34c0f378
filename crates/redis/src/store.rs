//! The Redis data model on DocDB (format.md §10; YugabyteDB's YEDIS).
//!
//! Every Redis key is one document: `G` + its cluster slot + the key, prefixed with a
//! `ColocationId` for databases other than `0`. The root record says the type: a string is
//! the root value itself, a collection is an init marker (`{` hash, `(` set, `,` sorted set,
//! `+` time series, `)` list) with its elements as subkeys. TTLs are value control fields, and
//! EXPIRE/PERSIST write TTL merge records on the root.
//!
//! Beyond YEDIS, lists keep their length in a `%` counter subkey as sorted sets do, so that
//! `LPUSH` can return it without reading the list.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use docdb::reader::ChildRange;
use docdb::{DocDb, DocView, DocWriteBatch, ReadOptions, Staged, SubDocument, VisibleRecord};
use dockv::doc_key::{DocKey, TablePrefix};
use dockv::hash::redis_hash_slot;
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryType, KeyEntryValue};
use engine::Engine;

use crate::error::{CmdError, CmdResult};
use crate::list_ends::{Ends, ListEnds};

/// A database's id: its `ColocationId` prefix, or 0 for the default database (no prefix).
pub type DbId = u32;

/// Databases `0..NUMBERED_DBS` exist without CREATEDB, as Redis's `databases 16`.
pub const NUMBERED_DBS: u32 = 16;

/// Ids of databases made by CREATEDB start here (numbered databases use their number).
const FIRST_CREATED_ID: u32 = 1000;

/// Metadata name prefix of the database catalog: `redis.db.<name>` → 4-byte BE id.
const CATALOG_PREFIX: &[u8] = b"redis.db.";

/// Metadata name of the numbered databases' mapping to key spaces (SWAPDB): the latest
/// swap's time, then one 4-byte BE key space per index ([`encode_db_map`]). Absent until
/// the first SWAPDB: the identity.
const DB_MAP_META: &[u8] = b"redis.dbmap";

/// Metadata name prefix of the swap history: `redis.dbswap.<8-byte BE time>` → the two
/// indexes, one byte each.
const DB_SWAP_PREFIX: &[u8] = b"redis.dbswap.";

/// At most this many SWAPDBs are remembered (for WATCH and DOCDB.ASOF): a key watched
/// before the oldest of them counts as changed by a swap (EXEC fails rather than miss one);
/// a read before it sees the mapping of then.
const MAX_SWAPS_KEPT: usize = 4096;

/// At most this many lists keep an in-memory index bound.
const MAX_LIST_BOUNDS: usize = 100_000;

/// A key's type, from its root record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisType {
    /// A primitive root value.
    String,
    /// `{`: fields → values.
    Hash,
    /// `(`: members → null.
    Set,
    /// `,`: counter, score index, member index.
    SortedSet,
    /// `+`: descending timestamps → values.
    TimeSeries,
    /// `)`: array indexes → values.
    List,
    /// `*`: entry ids → fields and values, plus consumer groups ([`crate::stream`]).
    Stream,
}

impl RedisType {
    /// The name `TYPE` replies with.
    pub fn name(self) -> &'static str {
        match self {
            RedisType::String => "string",
            RedisType::Hash => "hash",
            RedisType::Set => "set",
            RedisType::SortedSet => "zset",
            RedisType::TimeSeries => "tskey",
            RedisType::List => "list",
            RedisType::Stream => "stream",
        }
    }

    /// The root init marker of a collection type (`None` for strings).
    pub fn marker(self) -> Option<PrimitiveValue> {
        Some(match self {
            RedisType::String => return None,
            RedisType::Hash => PrimitiveValue::Object,
            RedisType::Set => PrimitiveValue::RedisSet,
            RedisType::SortedSet => PrimitiveValue::RedisSortedSet,
            RedisType::TimeSeries => PrimitiveValue::RedisTs,
            RedisType::List => PrimitiveValue::RedisList,
            RedisType::Stream => PrimitiveValue::RedisStream,
        })
    }

    fn of(payload: &PrimitiveValue) -> Self {
        match payload {
            PrimitiveValue::Object | PrimitiveValue::Array => RedisType::Hash,
            PrimitiveValue::RedisSet => RedisType::Set,
            PrimitiveValue::RedisSortedSet => RedisType::SortedSet,
            PrimitiveValue::RedisTs => RedisType::TimeSeries,
            PrimitiveValue::RedisList => RedisType::List,
            PrimitiveValue::RedisStream => RedisType::Stream,
            _ => RedisType::String,
        }
    }
}

/// What a live key holds at a read time.
#[derive(Debug, Clone)]
pub struct KeyInfo {
    /// Its type.
    pub kind: RedisType,
    /// The root record (for strings, the value).
    pub record: VisibleRecord,
    /// When it expires, in physical microseconds.
    pub expires_at: Option<u64>,
}

impl KeyInfo {
    /// The string value (raw bytes of the root primitive).
    pub fn string_value(&self) -> Vec<u8> {
        primitive_bytes(&self.record.payload)
    }

    /// The TTL left at `ht`, for rewriting a value without losing it (`None`: no TTL).
    pub fn remaining_ttl(&self, ht: HybridTime) -> Option<Ttl> {
        let at = self.expires_at?;
        let left_us = at.saturating_sub(ht.physical_micros());
        Some(Ttl(i64::try_from(left_us.div_ceil(1000))
            .unwrap_or(i64::MAX)
            .max(1)))
    }

    /// Fails with WRONGTYPE unless the key is of `kind`.
    pub fn expect(&self, kind: RedisType) -> CmdResult<()> {
        if self.kind == kind {
            Ok(())
        } else {
            Err(CmdError::WrongType)
        }
    }
}

/// The bytes of a primitive as Redis sees them (strings are raw; numbers print as text).
pub fn primitive_bytes(value: &PrimitiveValue) -> Vec<u8> {
    match value {
        PrimitiveValue::String(bytes) | PrimitiveValue::CollString(bytes) => bytes.clone(),
        PrimitiveValue::Int64(n) => n.to_string().into_bytes(),
        PrimitiveValue::Int32(n) => n.to_string().into_bytes(),
        PrimitiveValue::Double(d) => crate::number::format_double(*d).into_bytes(),
        PrimitiveValue::Null => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

/// Redis keys stored as DocDB documents, with the database catalog and in-memory hints.
pub struct Store<E: Engine> {
    db: DocDb<E>,
    /// Databases made by CREATEDB: name → id.
    created: RwLock<BTreeMap<String, DbId>>,
    /// Which key space each numbered database shows (SWAPDB), and the recent swaps.
    db_map: RwLock<DbMap>,
    /// `db_map`'s current mapping packed by [`pack_db_map`], read by every request with one
    /// load instead of taking the lock.
    current_map: AtomicU64,
    /// Per list document key: no live element has an index below `.0` or above `.1`.
    list_bounds: Mutex<HashMap<Vec<u8>, (i64, i64)>>,
    /// The elements at the ends of lists pops take from ([`crate::list_ends`]).
    list_ends: Mutex<ListEnds>,
    /// Whether `list_ends` may hold anything: a write checks its batch against it only then.
    list_ends_busy: AtomicBool,
}

impl<E: Engine> Store<E> {
    /// Opens the Redis model over `db`, loading the database catalog.
    pub fn open(db: DocDb<E>) -> CmdResult<Self> {
        let mut created = BTreeMap::new();
        for (name, id) in db.scan_meta(CATALOG_PREFIX)? {
            let id: [u8; 4] = id
                .as_slice()
                .try_into()
                .map_err(|_| CmdError::Err("ERR corrupt database catalog".into()))?;
            let name = String::from_utf8_lossy(&name[CATALOG_PREFIX.len()..]).into_owned();
            created.insert(name, u32::from_be_bytes(id));
        }
        let db_map = DbMap::load(&db)?;
        Ok(Store {
            db,
            created: RwLock::new(created),
            current_map: AtomicU64::new(pack_db_map(&db_map.physical)),
            db_map: RwLock::new(db_map),
            list_bounds: Mutex::new(HashMap::new()),
            list_ends: Mutex::new(ListEnds::default()),
            list_ends_busy: AtomicBool::new(false),
        })
    }

    /// The document layer.
    pub fn docdb(&self) -> &DocDb<E> {
        &self.db
    }

    // ---- databases ----

    /// The id of the database called `name`: `0`–`15`, or one made by CREATEDB.
    pub fn db_id(&self, name: &str) -> Option<DbId> {
        lookup_db(&self.read_catalog(), name)
    }

    /// Every database name: the numbered ones, then those made by CREATEDB.
    pub fn db_names(&self) -> Vec<String> {
        let mut names: Vec<String> = (0..NUMBERED_DBS).map(|n| n.to_string()).collect();
        names.extend(self.read_catalog().keys().cloned());
        names
    }

    /// Every database's key space, in the order of [`Self::db_names`] (a numbered database's
    /// through the SWAPDB mapping, see [`Self::physical_db`]).
    pub fn db_ids(&self) -> Vec<DbId> {
        let mut ids: Vec<DbId> = self.read_db_map().physical.to_vec();
        ids.extend(self.read_catalog().values().copied());
        ids
    }

    /// Creates a database; false if the name is taken.
    pub fn create_db(&self, name: &str) -> CmdResult<bool> {
        let mut catalog = self.created.write().unwrap_or_else(|e| e.into_inner());
        if lookup_db(&catalog, name).is_some() {
            return Ok(false);
        }
        let id = catalog
            .values()
            .max()
            .map_or(FIRST_CREATED_ID, |max| max + 1);
        let meta = [CATALOG_PREFIX, name.as_bytes()].concat();
        self.db.put_meta(&meta, Some(&id.to_be_bytes()))?;
        catalog.insert(name.to_string(), id);
        Ok(true)
    }

    /// Removes a database made by CREATEDB and its keys; false if there is none by that name.
    pub fn delete_db(&self, name: &str) -> CmdResult<bool> {
        let Some(id) = self.read_catalog().get(name).copied() else {
            return Ok(false);
        };
        self.flush_db(id)?;
        let meta = [CATALOG_PREFIX, name.as_bytes()].concat();
        self.db.put_meta(&meta, None)?;
        self.created
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        Ok(true)
    }

    fn read_catalog(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, DbId>> {
        self.created.read().unwrap_or_else(|e| e.into_inner())
    }

    // ---- SWAPDB ----

    /// The key space (the id [`redis_doc_key`] encodes) that database `logical` shows now:
    /// SWAPDB exchanges those of two numbered databases; a CREATEDB database keeps its own.
    pub fn physical_db(&self, logical: DbId) -> DbId {
        if logical >= NUMBERED_DBS {
            return logical;
        }
        let packed = self.current_map.load(Ordering::Acquire);
        ((packed >> (DB_MAP_BITS * logical)) & DB_MAP_MASK) as DbId
    }

    /// SWAPDB: numbered databases `first` and `second` exchange their key spaces, in one
    /// durable metadata write made as the only writer, so that no write lands between the
    /// swap and its record, and every write after it resolves its database anew.
    pub fn swap_dbs(&self, first: DbId, second: DbId) -> CmdResult<()> {
        let (Ok(a), Ok(b)) = (usize::try_from(first), usize::try_from(second)) else {
            return Err(CmdError::err("DB index is out of range"));
        };
        if a.max(b) >= NUMBERED_DBS as usize {
            return Err(CmdError::err("DB index is out of range"));
        }
        if a == b {
            return Ok(());
        }
        self.db.write_now(|ht| {
            let mut map = self.db_map.write().unwrap_or_else(|e| e.into_inner());
            let mut physical = map.physical;
            physical.swap(a, b);
            let indexes = [u8::try_from(a), u8::try_from(b)];
            let [Ok(first), Ok(second)] = indexes else {
                return Ok(());
            };
            // The swaps of one EXEC share its time: numbered in order.
            let seq = map.swaps.iter().rev().take_while(|s| s.ht == ht).count();
            let at = (ht, u32::try_from(seq).unwrap_or(u32::MAX));
            // The record first: the mapping's write is the one that makes the swap happen.
            self.db
                .put_meta(&swap_meta_name(at), Some(&[first, second]))?;
            self.db
                .put_meta(DB_MAP_META, Some(&encode_db_map(at, &physical)))?;
            let swap = Swap {
                ht,
                seq: at.1,
                indexes: (a, b),
                spaces: (map.physical[a], map.physical[b]),
            };
            let dropped = map.record(physical, swap);
            self.current_map
                .store(pack_db_map(&map.physical), Ordering::Release);
            if let Some(dropped) = dropped {
                self.db
                    .put_meta(&swap_meta_name((dropped.ht, dropped.seq)), None)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The key space database `logical` showed at `ht` (DOCDB.ASOF): see
    /// [`Self::physical_db`]; through the latest [`MAX_SWAPS_KEPT`] swaps.
    pub fn physical_db_at(&self, logical: DbId, ht: HybridTime) -> DbId {
        usize::try_from(logical)
            .ok()
            .and_then(|i| self.read_db_map().at(ht).get(i).copied())
            .unwrap_or(logical)
    }

    /// Whether a SWAPDB after `since` changed what the key at `doc_key` (resolved at
    /// `since`) shows, as Redis 7.0 marks a watched key: the key existed, at the swap, in
    /// either of the databases swapped. Follows the key's database through later swaps.
    pub fn swapped_since(&self, doc_key: &[u8], since: HybridTime) -> CmdResult<bool> {
        let (swaps, forgotten_before) = {
            let map = self.read_db_map();
            let later: Vec<Swap> = map.swaps.iter().filter(|s| s.ht > since).cloned().collect();
            (later, map.forgotten_before)
        };
        if swaps.is_empty() {
            return Ok(false);
        }
        if forgotten_before > since {
            return Ok(true);
        }
        let Some((mut space, name)) = doc_key_db(doc_key).zip(key_name(doc_key)) else {
            return Ok(false);
        };
        for swap in swaps {
            let other = match space {
                s if s == swap.spaces.0 => swap.spaces.1,
                s if s == swap.spaces.1 => swap.spaces.0,
                _ => continue,
            };
            let mut reads = self.reads(swap.ht);
            for side in [space, other] {
                if reads.key_info(&redis_doc_key(side, &name))?.is_some() {
                    return Ok(true);
                }
            }
            space = other;
        }
        Ok(false)
    }

    fn read_db_map(&self) -> std::sync::RwLockReadGuard<'_, DbMap> {
        self.db_map.read().unwrap_or_else(|e| e.into_inner())
    }

    // ---- keys ----

    /// The encoded DocKey of `key` in database `db` ([`redis_doc_key`]).
    pub fn doc_key(&self, db: DbId, key: &[u8]) -> Vec<u8> {
        redis_doc_key(db, key)
    }

    /// The engine key range of database `db`'s documents.
    pub fn db_bounds(db: DbId) -> (Vec<u8>, Vec<u8>) {
        if db == 0 {
            return (
                vec![KeyEntryType::UInt16Hash.as_u8()],
                vec![KeyEntryType::UInt16Hash.as_u8() + 1],
            );
        }
        let prefix = |id: u32| {
            let mut out = Vec::with_capacity(5);
            KeyEntryValue::ColocationId(id).encode_to(&mut out);
            out
        };
        let upper = match db.checked_add(1) {
            Some(next) => prefix(next),
            None => vec![KeyEntryType::ColocationId.as_u8() + 1],
        };
        (prefix(db), upper)
    }

    /// Reads as of `ht` that share one iterator per document (see [`Reads`]).
    pub fn reads(&self, ht: HybridTime) -> Reads<'_, '_, E> {
        Reads {
            db: &self.db,
            ht,
            view: None,
            slot: None,
        }
    }

    /// Like [`Self::reads`], taking its engine iterator from `slot` and returning it there
    /// when done, so that the commands of one batch of requests share one iterator.
    pub fn reads_with<'s, 'c>(
        &'c self,
        ht: HybridTime,
        slot: &'s IterSlot<'c, E>,
    ) -> Reads<'s, 'c, E> {
        Reads {
            db: &self.db,
            ht,
            view: None,
            slot: Some(slot),
        }
    }

    /// Every live key's document key in database `db` from `start` (an engine key, inclusive)
    /// on, as of `ht`, calling `visit` with the key's name and info until it returns false.
    pub fn scan_keys(
        &self,
        db: DbId,
        start: Option<&[u8]>,
        ht: HybridTime,
        mut visit: impl FnMut(&[u8], Vec<u8>, &KeyInfo) -> bool,
    ) -> CmdResult<()> {
        let (lower, upper) = Self::db_bounds(db);
        let from = start.map_or(lower, <[u8]>::to_vec);
        self.db.scan_roots(&from, &upper, ht, |doc_key, record| {
            if !record.is_live() {
                return true;
            }
            let Some(name) = key_name(doc_key) else {
                return true;
            };
            let expires_at = record.expires_at_micros(None);
            let info = KeyInfo {
                kind: RedisType::of(&record.payload),
                record: record.clone(),
                expires_at,
            };
            visit(doc_key, name, &info)
        })?;
        Ok(())
    }

    // ---- writing ----

    /// Runs `write` as the only writer at a fresh hybrid time, committing the batch it fills.
    pub fn write<R>(
        &self,
        write: impl FnOnce(&mut DocWriteBatch<'_, E>, HybridTime) -> CmdResult<R>,
    ) -> CmdResult<R> {
        let mut outcome = None;
        let written = self.db.write_now(|ht| {
            let mut batch = self.db.batch(ht);
            match write(&mut batch, ht) {
                Ok(result) => {
                    self.forget_written_list_ends(&batch);
                    let committed = batch.commit();
                    self.settle_list_ends(committed.is_ok());
                    committed?;
                    outcome = Some(Ok(result));
                }
                Err(e) => {
                    batch.abandon();
                    self.settle_list_ends(false);
                    outcome = Some(Err(e));
                }
            }
            Ok(())
        });
        self.landed(written)?;
        outcome.unwrap_or_else(|| Err(CmdError::Err("ERR write did not run".into())))
    }

    /// Runs `run` inside one `DocDb::write_now`: the writes of the commands it runs (a
    /// pipeline's run of writes, a transaction) share its hybrid time and land together, in
    /// one engine write, when it returns; or, if that write fails, none of them does.
    pub fn write_together<R>(&self, run: impl FnOnce(HybridTime) -> R) -> CmdResult<R> {
        let written = self.db.write_now(|ht| Ok(run(ht)));
        self.landed(written)
    }

    /// [`Self::write_together`], staging the writes to land on another thread with
    /// [`Self::land`] instead of landing them (see `DocDb::write_now_staged`); `None` if
    /// nothing was written.
    pub fn write_together_staged<R>(
        &self,
        run: impl FnOnce(HybridTime) -> R,
    ) -> CmdResult<(R, Option<Staged<'_, E>>)> {
        let written = self.db.write_now_staged(|ht| Ok(run(ht)));
        self.landed(written)
    }

    /// Lands writes staged by [`Self::write_together_staged`].
    pub fn land(&self, staged: Staged<'_, E>) -> CmdResult<()> {
        self.landed(staged.land())
    }

    /// `written`, after forgetting what was learned from writes that did not land.
    fn landed<R>(&self, written: docdb::Result<R>) -> CmdResult<R> {
        written.map_err(|e| {
            // Bounds narrowed for a write that did not land would hide elements, and
            // elements kept for it would be served again.
            self.lock_bounds().clear();
            self.clear_list_ends();
            e.into()
        })
    }

    /// A read time that sees every acknowledged write.
    pub fn read_time(&self) -> HybridTime {
        self.db.safe_time()
    }

    /// Writes tombstones over every live key of database `db`, in batches.
    pub fn flush_db(&self, db: DbId) -> CmdResult<u64> {
        const CHUNK: usize = 1000;
        let mut removed = 0u64;
        // Each chunk resumes after the last one, not over the tombstones it just wrote.
        let mut resume: Option<Vec<u8>> = None;
        loop {
            let ht = self.read_time();
            let mut doomed = Vec::with_capacity(CHUNK);
            self.scan_keys(db, resume.as_deref(), ht, |doc_key, _, _| {
                doomed.push(doc_key.to_vec());
                doomed.len() < CHUNK
            })?;
            let Some(last) = doomed.last() else {
                return Ok(removed);
            };
            resume = Some([last.as_slice(), &[0xFF]].concat());
            removed += doomed.len() as u64;
            self.write(|batch, _| {
                for doc_key in doomed {
                    batch.set_encoded_path(doc_key, Value::tombstone())?;
                }
                Ok(())
            })?;
        }
    }

    // ---- list index bounds ----

    /// The index bounds known for the list at `doc_key` (`i64::MIN..=i64::MAX` if none).
    pub fn list_bounds(&self, doc_key: &[u8]) -> (i64, i64) {
        self.lock_bounds()
            .get(doc_key)
            .copied()
            .unwrap_or((i64::MIN, i64::MAX))
    }

    /// Records that no live element of the list lies below `low` or above `high`.
    ///
    /// Bounds stay valid however the list changes later, because new elements always take
    /// indexes beyond every index handed out before; pushes widen them.
    pub fn set_list_bounds(&self, doc_key: &[u8], low: i64, high: i64) {
        let mut bounds = self.lock_bounds();
        if bounds.len() >= MAX_LIST_BOUNDS && !bounds.contains_key(doc_key) {
            bounds.clear();
        }
        bounds.insert(doc_key.to_vec(), (low, high));
    }

    /// Widens the list's bounds to include `[low, high]` (new elements).
    pub fn widen_list_bounds(&self, doc_key: &[u8], low: i64, high: i64) {
        let mut bounds = self.lock_bounds();
        if let Some(b) = bounds.get_mut(doc_key) {
            b.0 = b.0.min(low);
            b.1 = b.1.max(high);
        }
    }

    /// Drops what is known of the list at `doc_key` (its elements moved: RENAME).
    pub fn forget_list_bounds(&self, doc_key: &[u8]) {
        self.lock_bounds().remove(doc_key);
    }

    fn lock_bounds(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, (i64, i64)>> {
        self.list_bounds.lock().unwrap_or_else(|e| e.into_inner())
    }

    // ---- list ends kept for pops ----

    /// Takes out what is kept of the ends of the list at `doc_key` (inside a [`Self::write`],
    /// to update and [`Self::claim_list_ends`]).
    pub fn take_list_ends(&self, doc_key: &[u8]) -> Option<Ends> {
        if !self.list_ends_busy.load(Ordering::Acquire) {
            return None;
        }
        self.lock_ends().take(doc_key)
    }

    /// Hands back the ends of the list at `doc_key` as the write under way leaves them: kept
    /// once its batch commits.
    pub fn claim_list_ends(&self, doc_key: &[u8], ends: Ends) {
        self.list_ends_busy.store(true, Ordering::Release);
        self.lock_ends().claim(doc_key, ends);
    }

    /// Before `batch` commits: drops what is kept of every list it writes to.
    fn forget_written_list_ends(&self, batch: &DocWriteBatch<'_, E>) {
        if !self.list_ends_busy.load(Ordering::Acquire) {
            return;
        }
        let mut ends = self.lock_ends();
        let mut doc: &[u8] = &[];
        for entry in batch.entries() {
            // A batch's records of one document come together.
            if !doc.is_empty() && entry.path.starts_with(doc) {
                continue;
            }
            let Ok(len) = DocKey::encoded_len(entry.path) else {
                ends.clear();
                return;
            };
            doc = &entry.path[..len];
            ends.forget(doc);
        }
    }

    /// After a batch committed (or not): keeps (or drops) the ends its write claimed.
    fn settle_list_ends(&self, committed: bool) {
        if !self.list_ends_busy.load(Ordering::Acquire) {
            return;
        }
        let mut ends = self.lock_ends();
        ends.settle(committed);
        self.list_ends_busy
            .store(!ends.is_idle(), Ordering::Release);
    }

    fn clear_list_ends(&self) {
        self.lock_ends().clear();
    }

    fn lock_ends(&self) -> std::sync::MutexGuard<'_, ListEnds> {
        self.list_ends.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An engine iterator kept between commands (one batch of requests from a connection):
/// each document a command reads re-aims it ([`DocDb::view_reusing`]) instead of building
/// one. Keep it no longer than the batch: between reads it holds RocksDB's view of the
/// memtables and files it last read.
pub struct IterSlot<'c, E: Engine + 'c>(RefCell<Option<E::Iter<'c>>>);

impl<'c, E: Engine + 'c> IterSlot<'c, E> {
    /// An empty slot.
    pub fn new() -> Self {
        IterSlot(RefCell::new(None))
    }
}

impl<'c, E: Engine + 'c> Default for IterSlot<'c, E> {
    fn default() -> Self {
        Self::new()
    }
}

/// A command's reads at one time. Consecutive lookups in the same document (the type check,
/// then fields or members) share one engine iterator and read the root once; with an
/// [`IterSlot`], documents and commands share it too.
pub struct Reads<'s, 'c, E: Engine> {
    db: &'c DocDb<E>,
    ht: HybridTime,
    view: Option<(Vec<u8>, DocView<'c, E>)>,
    slot: Option<&'s IterSlot<'c, E>>,
}

impl<E: Engine> Drop for Reads<'_, '_, E> {
    fn drop(&mut self) {
        if let (Some(slot), Some((_, view))) = (self.slot, self.view.take()) {
            *slot.0.borrow_mut() = Some(view.into_iterator());
        }
    }
}

impl<'c, E: Engine> Reads<'_, 'c, E> {
    /// The read time.
    pub fn time(&self) -> HybridTime {
        self.ht
    }

    fn view(&mut self, path: &[u8]) -> CmdResult<&mut DocView<'c, E>> {
        let doc_len = DocKey::encoded_len(path).map_err(docdb::Error::from)?;
        let doc_key = &path[..doc_len];
        let reuse = matches!(&self.view, Some((key, _)) if key.as_slice() == doc_key);
        if !reuse {
            let opts = ReadOptions::at(self.ht);
            let view = match self.slot {
                Some(slot) => {
                    let recycled = match self.view.take() {
                        Some((_, view)) => Some(view.into_iterator()),
                        None => slot.0.borrow_mut().take(),
                    };
                    self.db.view_reusing(recycled, doc_key, opts)?
                }
                None => self.db.view(doc_key, opts)?,
            };
            self.view = Some((doc_key.to_vec(), view));
        }
        match &mut self.view {
            Some((_, view)) => Ok(view),
            None => Err(CmdError::err("no document view")),
        }
    }

    /// The live key at `doc_key`, or `None`.
    pub fn key_info(&mut self, doc_key: &[u8]) -> CmdResult<Option<KeyInfo>> {
        let has_view = matches!(&self.view, Some((key, _)) if key.as_slice() == doc_key);
        // A cached root needs no view (no iterator) at all: GET, INCR, EXISTS...
        let cached = match has_view {
            false => self.db.cached_root(doc_key, &ReadOptions::at(self.ht)),
            true => None,
        };
        let record = match cached {
            Some(record) => record,
            None => {
                let view = self.view(doc_key)?;
                // Without a view, the cache was asked above: the view need not ask again.
                let found = match has_view {
                    true => view.record(doc_key)?,
                    false => view.root_record_past_cache(doc_key)?,
                };
                match found {
                    Some(record) => record,
                    None => return Ok(None),
                }
            }
        };
        if !record.is_live() {
            return Ok(None);
        }
        let expires_at = record.expires_at_micros(None);
        Ok(Some(KeyInfo {
            kind: RedisType::of(&record.payload),
            record,
            expires_at,
        }))
    }

    /// The live key of type `kind` at `doc_key`, `None` if absent, WRONGTYPE if another type.
    pub fn typed(&mut self, doc_key: &[u8], kind: RedisType) -> CmdResult<Option<KeyInfo>> {
        let info = self.key_info(doc_key)?;
        if let Some(info) = &info {
            info.expect(kind)?;
        }
        Ok(info)
    }

    /// The live record at an encoded subkey path (e.g. a hash field), honouring the root.
    pub fn child_record(&mut self, path: &[u8]) -> CmdResult<Option<VisibleRecord>> {
        // A list's or sorted set's length the root cache holds needs no view (LPUSH, ZCARD).
        if let Some(record) = self.db.cached_counter(path, &ReadOptions::at(self.ht)) {
            return Ok(Some(record).filter(VisibleRecord::is_live));
        }
        Ok(self
            .view(path)?
            .record(path)?
            .filter(VisibleRecord::is_live))
    }

    /// The whole document (or subdocument) at `path`.
    pub fn document(&mut self, path: &[u8]) -> CmdResult<Option<SubDocument>> {
        Ok(self.view(path)?.subdocument(path)?)
    }

    /// Live children of `path` within `range`.
    pub fn children(
        &mut self,
        path: &[u8],
        range: &ChildRange,
    ) -> CmdResult<Vec<(KeyEntryValue, SubDocument)>> {
        Ok(self.view(path)?.children(path, range)?)
    }
}

/// The numbered databases' key spaces, and the swaps that made them so.
struct DbMap {
    /// Logical index → key space.
    physical: [DbId; NUMBERED_DBS as usize],
    /// The latest swaps, oldest first (for WATCH and reads in the past).
    swaps: VecDeque<Swap>,
    /// Swaps before this time were dropped from `swaps`.
    forgotten_before: HybridTime,
}

impl DbMap {
    /// The stored mapping and swap history (the identity and none if never swapped). Swap
    /// records newer than the mapping belong to swaps that never finished: they are
    /// removed, as are the oldest beyond [`MAX_SWAPS_KEPT`].
    fn load<E: Engine>(db: &DocDb<E>) -> CmdResult<DbMap> {
        let corrupt = || CmdError::Err("ERR corrupt database mapping".into());
        let stored = db.scan_meta(DB_MAP_META)?;
        let (mapped_at, physical) = match stored.iter().find(|(name, _)| name == DB_MAP_META) {
            Some((_, bytes)) => decode_db_map(bytes).ok_or_else(corrupt)?,
            None => ((HybridTime(0), 0), identity_db_map()),
        };
        let mut swaps = VecDeque::new();
        let mut doomed = Vec::new();
        for (name, value) in db.scan_meta(DB_SWAP_PREFIX)? {
            let swap = decode_swap(&name, &value).ok_or_else(corrupt)?;
            if (swap.ht, swap.seq) > mapped_at {
                doomed.push(name);
            } else {
                swaps.push_back(swap);
            }
        }
        let mut forgotten_before = HybridTime(0);
        while swaps.len() > MAX_SWAPS_KEPT {
            let Some(oldest) = swaps.pop_front() else {
                break;
            };
            forgotten_before = oldest.ht;
            doomed.push(swap_meta_name((oldest.ht, oldest.seq)));
        }
        for name in doomed {
            db.put_meta(&name, None)?;
        }
        // Each swap's key spaces, from the mapping after it, newest first.
        let mut after = physical;
        for swap in swaps.iter_mut().rev() {
            after.swap(swap.indexes.0, swap.indexes.1);
            swap.spaces = (after[swap.indexes.0], after[swap.indexes.1]);
        }
        Ok(DbMap {
            physical,
            swaps,
            forgotten_before,
        })
    }

    /// Installs `physical`, made by `swap`; the swap dropped from the history to make room,
    /// if one was.
    fn record(&mut self, physical: [DbId; NUMBERED_DBS as usize], swap: Swap) -> Option<Swap> {
        self.physical = physical;
        let dropped = if self.swaps.len() >= MAX_SWAPS_KEPT {
            self.swaps.pop_front()
        } else {
            None
        };
        if let Some(oldest) = &dropped {
            self.forgotten_before = oldest.ht;
        }
        self.swaps.push_back(swap);
        dropped
    }

    /// The mapping in force at `ht`: today's with the later swaps undone (the oldest one
    /// remembered if `ht` is before all of them).
    fn at(&self, ht: HybridTime) -> [DbId; NUMBERED_DBS as usize] {
        let mut physical = self.physical;
        for swap in self.swaps.iter().rev().take_while(|s| s.ht > ht) {
            physical.swap(swap.indexes.0, swap.indexes.1);
        }
        physical
    }
}

/// One SWAPDB: when, the two indexes, and the two key spaces they exchanged.
#[derive(Debug, Clone)]
struct Swap {
    ht: HybridTime,
    /// Its place among the swaps of one hybrid time (one EXEC).
    seq: u32,
    indexes: (usize, usize),
    spaces: (DbId, DbId),
}

/// The identity mapping: database `n` shows key space `n`.
/// Bits per numbered database in a packed mapping: its key space is another numbered one.
const DB_MAP_BITS: u32 = 4;
const DB_MAP_MASK: u64 = (1 << DB_MAP_BITS) - 1;
const _: () = assert!(NUMBERED_DBS * DB_MAP_BITS <= u64::BITS);

/// A mapping of the numbered databases (a permutation of them) in one word: database `i`'s
/// key space at bits `4i..4i+4`.
fn pack_db_map(physical: &[DbId; NUMBERED_DBS as usize]) -> u64 {
    (0..NUMBERED_DBS)
        .zip(physical)
        .fold(0, |packed, (i, &space)| {
            packed | ((u64::from(space) & DB_MAP_MASK) << (DB_MAP_BITS * i))
        })
}

fn identity_db_map() -> [DbId; NUMBERED_DBS as usize] {
    std::array::from_fn(|i| DbId::try_from(i).unwrap_or(DbId::MAX))
}

/// When a swap was made: its hybrid time, and its place among the swaps of that time.
type SwapTime = (HybridTime, u32);

/// The stored mapping: when the swap that made it was (8 + 4 bytes BE), then 16 4-byte BE
/// key spaces.
fn encode_db_map(at: SwapTime, physical: &[DbId; NUMBERED_DBS as usize]) -> Vec<u8> {
    let mut out = at.0.0.to_be_bytes().to_vec();
    out.extend(at.1.to_be_bytes());
    out.extend(physical.iter().flat_map(|id| id.to_be_bytes()));
    out
}

/// A stored mapping, if well formed: a permutation of the numbered key spaces.
fn decode_db_map(bytes: &[u8]) -> Option<(SwapTime, [DbId; NUMBERED_DBS as usize])> {
    if bytes.len() != 12 + NUMBERED_DBS as usize * 4 {
        return None;
    }
    let (at, ids) = bytes.split_at(12);
    let mut physical = identity_db_map();
    for (slot, chunk) in physical.iter_mut().zip(ids.chunks_exact(4)) {
        *slot = u32::from_be_bytes(chunk.try_into().ok()?);
    }
    let mut sorted = physical;
    sorted.sort_unstable();
    (sorted == identity_db_map()).then_some((decode_swap_time(at)?, physical))
}

fn decode_swap_time(bytes: &[u8]) -> Option<SwapTime> {
    let (ht, seq) = bytes.split_at_checked(8)?;
    Some((
        HybridTime(u64::from_be_bytes(ht.try_into().ok()?)),
        u32::from_be_bytes(seq.try_into().ok()?),
    ))
}

/// The metadata name of the swap made `at` (names sort by time).
fn swap_meta_name(at: SwapTime) -> Vec<u8> {
    [DB_SWAP_PREFIX, &at.0.0.to_be_bytes(), &at.1.to_be_bytes()].concat()
}

/// A stored swap record: its name holds the time, its value the two indexes.
fn decode_swap(name: &[u8], value: &[u8]) -> Option<Swap> {
    let (ht, seq) = decode_swap_time(name.strip_prefix(DB_SWAP_PREFIX)?)?;
    let [a, b] = value.try_into().ok()?;
    let limit = NUMBERED_DBS as usize;
    let indexes = (usize::from(a), usize::from(b));
    (indexes.0 < limit && indexes.1 < limit).then_some(Swap {
        ht,
        seq,
        indexes,
        spaces: (0, 0),
    })
}

/// The key space of an encoded Redis DocKey (0 when it has no colocation prefix).
fn doc_key_db(doc_key: &[u8]) -> Option<DbId> {
    match DocKey::decode(doc_key).ok()?.0.prefix {
        TablePrefix::None => Some(0),
        TablePrefix::ColocationId(id) => Some(id),
        TablePrefix::CoTableId(_) => None,
    }
}

/// The id of database `name`: a numbered one (`0`–`15`, written canonically) or one in
/// `catalog`.
fn lookup_db(catalog: &BTreeMap<String, DbId>, name: &str) -> Option<DbId> {
    match name.parse::<u32>() {
        Ok(n) if n < NUMBERED_DBS && name == n.to_string() => Some(n),
        _ => catalog.get(name).copied(),
    }
}

/// The encoded DocKey of Redis key `key` in database `db`: its cluster slot as the hash, the
/// key as the one hashed component, and database `db`'s colocation id unless it is 0.
pub fn redis_doc_key(db: DbId, key: &[u8]) -> Vec<u8> {
    let prefix = match db {
        0 => TablePrefix::None,
        db => TablePrefix::ColocationId(db),
    };
    DocKey::encode_hashed_string(prefix, redis_hash_slot(key), key)
}

/// The Redis key name inside an encoded Redis DocKey.
pub fn key_name(doc_key: &[u8]) -> Option<Vec<u8>> {
    let (key, _) = DocKey::decode(doc_key).ok()?;
    match key.hashed.first()? {
        KeyEntryValue::String(bytes, _) => Some(bytes.clone()),
        _ => None,
    }
}

/// An encoded path: `base` followed by `subkeys`.
pub fn path(base: &[u8], subkeys: &[KeyEntryValue]) -> Vec<u8> {
    let mut out = Vec::with_capacity(base.len() + 24);
    out.extend_from_slice(base);
    for subkey in subkeys {
        subkey.encode_to(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use docdb::clock::HybridClock;
    use docdb::{DocDb, DocDbOptions, GcPolicy};
    use engine::MemEngine;

    use super::*;

    fn open(engine: MemEngine) -> Store<MemEngine> {
        let policy = GcPolicy::new(Arc::new(HybridClock::default()));
        let db = DocDb::open(engine, policy, DocDbOptions::default()).expect("open docdb");
        Store::open(db).expect("open store")
    }

    fn reopen(store: Store<MemEngine>) -> Store<MemEngine> {
        open(store.db.into_engine())
    }

    fn set(store: &Store<MemEngine>, db: DbId, key: &str, value: &str) {
        let doc_key = store.doc_key(store.physical_db(db), key.as_bytes());
        store
            .write(|batch, _| {
                batch.set_encoded_path(doc_key, Value::new(PrimitiveValue::string(value)))?;
                Ok(())
            })
            .expect("write");
    }

    fn get(store: &Store<MemEngine>, db: DbId, key: &str) -> Option<Vec<u8>> {
        let doc_key = store.doc_key(store.physical_db(db), key.as_bytes());
        let info = store
            .reads(store.read_time())
            .key_info(&doc_key)
            .expect("read")?;
        Some(info.string_value())
    }

    #[test]
    fn a_new_store_maps_every_database_to_itself() {
        let store = open(MemEngine::new());
        for db in 0..NUMBERED_DBS {
            assert_eq!(store.physical_db(db), db);
        }
        assert_eq!(store.physical_db(FIRST_CREATED_ID), FIRST_CREATED_ID);
        assert_eq!(store.db_ids()[..3], [0, 1, 2]);
    }

    #[test]
    fn swaps_persist_across_reopening() {
        let store = open(MemEngine::new());
        set(&store, 0, "k", "zero");
        set(&store, 3, "k", "three");
        store.swap_dbs(0, 3).expect("swap");
        store.swap_dbs(3, 7).expect("swap");
        let store = reopen(store);
        assert_eq!(store.physical_db(0), 3);
        assert_eq!(store.physical_db(7), 0);
        assert_eq!(store.physical_db(3), 7);
        assert_eq!(get(&store, 0, "k").as_deref(), Some(&b"three"[..]));
        assert_eq!(get(&store, 7, "k").as_deref(), Some(&b"zero"[..]));
        assert_eq!(get(&store, 3, "k"), None);
        assert_eq!(store.db_ids()[..4], [3, 1, 2, 7]);
        store.swap_dbs(0, 3).expect("swap");
        store.swap_dbs(0, 7).expect("swap");
        let store = reopen(store);
        for db in 0..NUMBERED_DBS {
            assert_eq!(store.physical_db(db), db);
        }
        assert_eq!(get(&store, 0, "k").as_deref(), Some(&b"zero"[..]));
    }

    #[test]
    fn swapping_out_of_range_or_in_place_changes_nothing() {
        let store = open(MemEngine::new());
        assert!(store.swap_dbs(0, NUMBERED_DBS).is_err());
        assert!(store.swap_dbs(NUMBERED_DBS, 0).is_err());
        store.swap_dbs(4, 4).expect("same index");
        let store = reopen(store);
        for db in 0..NUMBERED_DBS {
            assert_eq!(store.physical_db(db), db);
        }
    }

    #[test]
    fn a_corrupt_mapping_is_refused() {
        assert_eq!(decode_db_map(&[0; 3]), None);
        // Not a permutation: two databases on one key space.
        assert_eq!(decode_db_map(&[0; 12 + NUMBERED_DBS as usize * 4]), None);
        let mut swapped = identity_db_map();
        swapped.swap(1, 2);
        let at = (HybridTime(77), 2);
        assert_eq!(
            decode_db_map(&encode_db_map(at, &swapped)),
            Some((at, swapped))
        );
        assert!(decode_swap(&swap_meta_name(at), &[1, 16]).is_none());
        assert!(decode_swap(&swap_meta_name(at), &[1]).is_none());
        assert!(decode_swap(&swap_meta_name(at)[..15], &[1, 2]).is_none());
        let swap = decode_swap(&swap_meta_name(at), &[1, 2]).expect("decodes");
        assert_eq!((swap.ht, swap.seq, swap.indexes), (at.0, at.1, (1, 2)));
        let store = open(MemEngine::new());
        store.db.put_meta(DB_MAP_META, Some(b"junk")).expect("put");
        let engine = store.db.into_engine();
        let policy = GcPolicy::new(Arc::new(HybridClock::default()));
        let db = DocDb::open(engine, policy, DocDbOptions::default()).expect("open docdb");
        assert!(Store::open(db).is_err());
    }

    #[test]
    fn swapped_since_follows_the_watched_database() {
        let store = open(MemEngine::new());
        set(&store, 1, "k", "one");
        let since = store.read_time();
        let watched0 = redis_doc_key(0, b"k");
        let watched2 = redis_doc_key(2, b"k");
        assert!(!store.swapped_since(&watched0, since).expect("check"));
        // k exists in database 1 at the swap: a watcher of k in database 0 is touched.
        store.swap_dbs(0, 1).expect("swap");
        assert!(store.swapped_since(&watched0, since).expect("check"));
        assert!(!store.swapped_since(&watched2, since).expect("check"));
        let later = store.read_time();
        // Swaps of a key space holding no k touch nobody.
        store.swap_dbs(2, 3).expect("swap");
        assert!(!store.swapped_since(&watched2, later).expect("check"));
    }

    #[test]
    fn reads_in_the_past_see_the_mapping_of_then_across_reopening() {
        let store = open(MemEngine::new());
        let before = store.read_time();
        store.swap_dbs(0, 1).expect("swap");
        let between = store.read_time();
        store.swap_dbs(1, 2).expect("swap");
        let store = reopen(store);
        assert_eq!(store.physical_db_at(0, before), 0);
        assert_eq!(store.physical_db_at(1, before), 1);
        assert_eq!(store.physical_db_at(0, between), 1);
        assert_eq!(store.physical_db_at(1, between), 0);
        assert_eq!(store.physical_db_at(2, between), 2);
        let now = store.read_time();
        assert_eq!(store.physical_db_at(1, now), 2);
        assert_eq!(store.physical_db_at(2, now), 0);
        assert_eq!(
            store.physical_db_at(FIRST_CREATED_ID, before),
            FIRST_CREATED_ID
        );
        // WATCH after reopening: key spaces of each swap rebuilt from the history.
        set(&store, 2, "k", "v");
        let watched = redis_doc_key(0, b"k");
        assert!(!store.swapped_since(&watched, now).expect("check"));
        store.swap_dbs(0, 2).expect("swap");
        assert!(store.swapped_since(&watched, now).expect("check"));
    }

    #[test]
    fn a_swap_record_without_its_mapping_is_dropped() {
        let store = open(MemEngine::new());
        store.swap_dbs(0, 1).expect("swap");
        // As if the server stopped between the record and the mapping of a second swap.
        let unfinished = HybridTime(u64::MAX - 1);
        store
            .db
            .put_meta(&swap_meta_name((unfinished, 0)), Some(&[2, 3]))
            .expect("put");
        let store = reopen(store);
        assert_eq!(store.physical_db(2), 2);
        assert_eq!(store.physical_db(0), 1);
        assert_eq!(store.read_db_map().swaps.len(), 1);
        let left = store.db.scan_meta(DB_SWAP_PREFIX).expect("scan");
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn swaps_at_one_time_are_all_kept() {
        let store = open(MemEngine::new());
        let before = store.read_time();
        // As EXEC runs them: one write, one hybrid time.
        store
            .write_together(|_| {
                store.swap_dbs(0, 1).expect("swap");
                store.swap_dbs(1, 2).expect("swap");
            })
            .expect("together");
        let store = reopen(store);
        assert_eq!(store.read_db_map().swaps.len(), 2);
        assert_eq!(store.physical_db(0), 1);
        assert_eq!(store.physical_db(1), 2);
        assert_eq!(store.physical_db(2), 0);
        for db in 0..3 {
            assert_eq!(store.physical_db_at(db, before), db);
        }
    }
}
