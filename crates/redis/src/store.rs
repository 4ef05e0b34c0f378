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
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, RwLock};

use docdb::reader::ChildRange;
use docdb::{DocDb, DocView, DocWriteBatch, ReadOptions, SubDocument, VisibleRecord};
use dockv::doc_key::{DocKey, TablePrefix};
use dockv::hash::redis_hash_slot;
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryType, KeyEntryValue};
use engine::Engine;

use crate::error::{CmdError, CmdResult};

/// A database's id: its `ColocationId` prefix, or 0 for the default database (no prefix).
pub type DbId = u32;

/// Databases `0..NUMBERED_DBS` exist without CREATEDB, as Redis's `databases 16`.
pub const NUMBERED_DBS: u32 = 16;

/// Ids of databases made by CREATEDB start here (numbered databases use their number).
const FIRST_CREATED_ID: u32 = 1000;

/// Metadata name prefix of the database catalog: `redis.db.<name>` → 4-byte BE id.
const CATALOG_PREFIX: &[u8] = b"redis.db.";

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
    /// Per list document key: no live element has an index below `.0` or above `.1`.
    list_bounds: Mutex<HashMap<Vec<u8>, (i64, i64)>>,
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
        Ok(Store {
            db,
            created: RwLock::new(created),
            list_bounds: Mutex::new(HashMap::new()),
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

    /// Every database id.
    pub fn db_ids(&self) -> Vec<DbId> {
        let mut ids: Vec<DbId> = (0..NUMBERED_DBS).collect();
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
                    batch.commit()?;
                    outcome = Some(Ok(result));
                }
                Err(e) => {
                    batch.abandon();
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

    /// `written`, after forgetting what was learned from writes that did not land.
    fn landed<R>(&self, written: docdb::Result<R>) -> CmdResult<R> {
        written.map_err(|e| {
            // Bounds narrowed for a write that did not land would hide elements.
            self.lock_bounds().clear();
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
            None => match self.view(doc_key)?.record(doc_key)? {
                Some(record) => record,
                None => return Ok(None),
            },
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
    let mut doc_key = DocKey::with_hash(
        redis_hash_slot(key),
        vec![KeyEntryValue::string(key)],
        Vec::new(),
    );
    if db != 0 {
        doc_key = doc_key.with_prefix(TablePrefix::ColocationId(db));
    }
    doc_key.encode()
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
