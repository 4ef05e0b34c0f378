//! `DocWriteBatch`: the key/value pairs of one atomic write at one hybrid time.
//!
//! Operations append `(path, value)` pairs; at commit every pair gets the batch's hybrid time
//! and the next write id (0, 1, 2, …), so later pairs of the batch are "newer". Operations see
//! the effects of earlier operations of the same batch (init markers, tombstones, user
//! timestamps), and, where YugabyteDB's semantics need it, the stored state.

use std::borrow::Borrow;
use std::cell::Cell;
use std::fmt::Write as _;

use dockv::doc_key::{SubDocKey, component_ends};
use dockv::escape::write_quoted;
use dockv::value::{PrimitiveValue, TTL_MERGE_FLAG, Ttl, Value, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryType, KeyEntryValue};
use engine::Engine;

use crate::db::DocDb;
use crate::error::{Error, Result};
use crate::reader::{ReadOptions, VisibleRecord};
use crate::subdoc::{ObjectKind, SubDocument};

/// Whether writes below a path that has no object also write the parent's init marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitMarkerBehavior {
    /// YCQL/YSQL style: no parent init markers, deletes are written blind.
    #[default]
    Optional,
    /// Every object has a `{` marker; writes create missing ones, deletes of missing paths
    /// write nothing (vectors.md D1).
    Required,
}

/// A document to insert or extend, children in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum DocLiteral {
    /// A value.
    Value(PrimitiveValue),
    /// An object: keys and children in write order.
    Object(Vec<(KeyEntryValue, DocLiteral)>),
    /// A list: elements get new array indexes.
    List(Vec<DocLiteral>),
}

impl DocLiteral {
    /// A document from JSON: objects become objects keyed by strings (in serde_json's key
    /// order), arrays lists, numbers int64 or double, `null` the null value.
    pub fn from_json(json: &serde_json::Value) -> Result<Self> {
        use serde_json::Value as J;
        Ok(match json {
            J::Object(map) => DocLiteral::Object(
                map.iter()
                    .map(|(k, v)| {
                        Ok((
                            KeyEntryValue::string(k.as_bytes()),
                            DocLiteral::from_json(v)?,
                        ))
                    })
                    .collect::<Result<_>>()?,
            ),
            J::Array(items) => DocLiteral::List(
                items
                    .iter()
                    .map(DocLiteral::from_json)
                    .collect::<Result<_>>()?,
            ),
            scalar => DocLiteral::Value(crate::subdoc::json_to_primitive(scalar)?),
        })
    }
}

/// One pending key/value pair: the path (no hybrid time) and the encoded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// DocKey + subkeys.
    pub path: &'a [u8],
    /// Encoded value (control fields + payload).
    pub value: &'a [u8],
}

/// Builds one atomic write. Created by [`DocDb::batch`]; nothing is stored until
/// [`DocWriteBatch::commit`].
pub struct DocWriteBatch<'db, E: Engine> {
    db: &'db DocDb<E>,
    init_markers: InitMarkerBehavior,
    /// The time the batch will be written at; also the time its existence checks read at.
    ht: HybridTime,
    /// The pairs so far, each a put of its path + `#` + (batch time, `first_id` + its index
    /// as the write id): one buffer for all of them, which a commit whose write ids start at
    /// `first_id` (unless another batch of the same `DocDb::write_now` committed first)
    /// hands to the engine as it is.
    entries: engine::WriteBatch,
    /// The write id of the first pair: the next one unclaimed when the batch was made.
    first_id: u32,
    /// The encoding of the batch time, which every key's hybrid time starts with.
    time_prefix: Vec<u8>,
    /// List indexes reserved by this batch: (first, count).
    reserved: Option<(i64, i64)>,
}

impl<'db, E: Engine> DocWriteBatch<'db, E> {
    pub(crate) fn new(db: &'db DocDb<E>, ht: HybridTime, init_markers: InitMarkerBehavior) -> Self {
        let mut time_prefix = Vec::with_capacity(dockv::hybrid_time::MAX_ENCODED_LEN);
        DocHybridTime::encode_time_prefix(ht, &mut time_prefix);
        DocWriteBatch {
            db,
            init_markers,
            ht,
            entries: spare_batch(),
            first_id: db.next_write_id(ht),
            time_prefix,
            reserved: None,
        }
    }

    /// The pairs so far, in write order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = BatchEntry<'_>> + ExactSizeIterator {
        self.entries.iter().map(|op| match op {
            engine::WriteOp::Put(key, value) => BatchEntry {
                path: without_time(key),
                value,
            },
            // Only puts are added.
            engine::WriteOp::Delete(key) => BatchEntry {
                path: without_time(key),
                value: &[],
            },
        })
    }

    /// The number of pairs so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The batch's hybrid time.
    pub fn hybrid_time(&self) -> HybridTime {
        self.ht
    }

    /// True when nothing would be written.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds the pair `path` → `value`, encoding the value straight into the batch.
    fn push(&mut self, path: &[u8], value: &Value) {
        self.push_with(path, |out| value.encode_to(out));
    }

    /// Adds the pair `path` → the value `encode` appends, the key with the batch time and
    /// the pair's index as its write id.
    fn push_with(&mut self, path: &[u8], encode: impl FnOnce(&mut Vec<u8>)) {
        let id = self.first_id + self.entries.len() as u32;
        let prefix = &self.time_prefix;
        self.entries
            .put_with(|out| timed_key(path, prefix, id, out), encode);
    }

    /// Writes `value` at `path` (a primitive, init marker or tombstone), with the init-marker
    /// and user-timestamp rules of shell.md.
    /// A tombstone set this way is always written (shell.md rule 1); see [`Self::delete`].
    pub fn set(&mut self, path: &SubDocKey, value: Value) -> Result<()> {
        self.set_encoded(&path.encode(), &value)
    }

    /// [`Self::set`] for a path encoded by the caller (DocKey + subkeys, no hybrid time), e.g.
    /// a row's DocKey encoded once for all its columns. The value is encoded into the batch
    /// at once, so a borrowed one serves (a caller writing values it keeps need not clone).
    pub fn set_encoded_path(
        &mut self,
        path: impl AsRef<[u8]>,
        value: impl Borrow<Value>,
    ) -> Result<()> {
        let (path, value) = (path.as_ref(), value.borrow());
        if self.init_markers == InitMarkerBehavior::Optional
            && value.control.user_timestamp.is_none()
        {
            // Nothing to check: write as is.
            self.push(path, value);
            return Ok(());
        }
        self.set_encoded(path, value)
    }

    /// [`Self::set_encoded_path`] for a value given in its stored encoding (control fields,
    /// then the payload), e.g. a packed row built already encoded: without a user timestamp
    /// it is stored as is, without decoding and re-encoding its payload.
    pub fn set_encoded_value(&mut self, path: &[u8], encoded: &[u8]) -> Result<()> {
        let (control, _) = ValueControlFields::decode(encoded)?;
        if self.init_markers == InitMarkerBehavior::Optional && control.user_timestamp.is_none() {
            self.push_with(path, |out| out.extend_from_slice(encoded));
            return Ok(());
        }
        self.set_encoded(path, &Value::decode(encoded)?)
    }

    fn set_encoded(&mut self, path: &[u8], value: &Value) -> Result<()> {
        self.write_value(path, value, false)
    }

    fn write_value(&mut self, path: &[u8], value: &Value, skip_if_missing: bool) -> Result<()> {
        if let Some(user_ts) = value.control.user_timestamp {
            if self.init_markers == InitMarkerBehavior::Required {
                return Err(Error::InvalidArgument(
                    "user timestamps cannot be used with required init markers".into(),
                ));
            }
            if self.newer_timestamp_exists(path, user_ts)? {
                return Ok(());
            }
        }
        let is_delete = value.payload.is_tombstone();
        if self.init_markers == InitMarkerBehavior::Required {
            if skip_if_missing && !self.state_at(path)?.is_some_and(|s| s.live) {
                return Ok(());
            }
            // A tombstone needs no init markers above it.
            if !is_delete {
                self.ensure_ancestors(path)?;
            }
        }
        self.push(path, value);
        Ok(())
    }

    /// Writes a tombstone at `path`. With required init markers, nothing is written when the
    /// path holds nothing (shell.md rule 1).
    pub fn delete(&mut self, path: &SubDocKey) -> Result<()> {
        self.write_value(&path.encode(), &Value::tombstone(), true)
    }

    /// Replaces the subdocument at `path`: an init marker, then the children in order.
    pub fn insert(&mut self, path: &SubDocKey, doc: &DocLiteral, ttl: Option<Ttl>) -> Result<()> {
        let encoded = path.encode();
        let marker = match doc {
            DocLiteral::Value(v) => {
                return self.set_encoded(&encoded, &Value::with_ttl(v.clone(), ttl));
            }
            DocLiteral::Object(_) => PrimitiveValue::Object,
            DocLiteral::List(_) => PrimitiveValue::Array,
        };
        if self.init_markers == InitMarkerBehavior::Required {
            self.ensure_ancestors(&encoded)?;
        }
        self.push(&encoded, &Value::with_ttl(marker, ttl));
        self.write_children(&encoded, doc, ttl)
    }

    /// Writes the children of `doc` under `path` without an init marker at `path`.
    pub fn extend(&mut self, path: &SubDocKey, doc: &DocLiteral, ttl: Option<Ttl>) -> Result<()> {
        let encoded = path.encode();
        match doc {
            DocLiteral::Value(v) => self.set_encoded(&encoded, &Value::with_ttl(v.clone(), ttl)),
            _ if self.init_markers == InitMarkerBehavior::Required => {
                // Each leaf creates whatever markers it is missing.
                let mut leaves = Vec::new();
                self.flatten(&encoded, doc, &mut leaves);
                for (leaf, value) in leaves {
                    self.set_encoded(&leaf, &Value::with_ttl(value, ttl))?;
                }
                Ok(())
            }
            _ => self.write_children(&encoded, doc, ttl),
        }
    }

    /// Children of an inserted/extended document, nested containers without markers.
    fn write_children(&mut self, path: &[u8], doc: &DocLiteral, ttl: Option<Ttl>) -> Result<()> {
        let mut leaves = Vec::new();
        self.flatten(path, doc, &mut leaves);
        for (leaf, value) in leaves {
            self.push(&leaf, &Value::with_ttl(value, ttl));
        }
        Ok(())
    }

    /// The leaves of `doc` below `path` in write order; list elements take new indexes.
    fn flatten(&mut self, path: &[u8], doc: &DocLiteral, out: &mut Vec<(Vec<u8>, PrimitiveValue)>) {
        match doc {
            DocLiteral::Value(v) => out.push((path.to_vec(), v.clone())),
            DocLiteral::Object(children) => {
                for (key, child) in children {
                    let mut child_path = path.to_vec();
                    key.encode_to(&mut child_path);
                    self.flatten(&child_path, child, out);
                }
            }
            DocLiteral::List(items) => {
                let first = self.reserve_indexes(items.len() as i64);
                for (i, item) in items.iter().enumerate() {
                    let mut child_path = path.to_vec();
                    KeyEntryValue::ArrayIndex(first + i as i64).encode_to(&mut child_path);
                    self.flatten(&child_path, item, out);
                }
            }
        }
    }

    /// Appends list elements with new positive indexes.
    pub fn append(
        &mut self,
        path: &SubDocKey,
        values: &[PrimitiveValue],
        ttl: Option<Ttl>,
    ) -> Result<()> {
        self.push_list(&path.encode(), values, ttl, false)
            .map(|_| ())
    }

    /// Prepends list elements: negative indexes, written last-first so that the block reads in
    /// the order given (YugabyteDB's PREPEND_BLOCK).
    pub fn prepend(
        &mut self,
        path: &SubDocKey,
        values: &[PrimitiveValue],
        ttl: Option<Ttl>,
    ) -> Result<()> {
        self.push_list(&path.encode(), values, ttl, true)
            .map(|_| ())
    }

    /// Writes a block of list elements below the encoded `path` with freshly reserved
    /// indexes: `+first, +first+1, …` in order, or for a prepend `-first, -(first+1), …` over
    /// the values in reverse. Returns the lowest and highest index written.
    pub fn push_list(
        &mut self,
        path: &[u8],
        values: &[PrimitiveValue],
        ttl: Option<Ttl>,
        prepend: bool,
    ) -> Result<(i64, i64)> {
        let count = values.len() as i64;
        let first = self.reserve_indexes(count);
        let ordered: Box<dyn Iterator<Item = &PrimitiveValue>> = if prepend {
            Box::new(values.iter().rev())
        } else {
            Box::new(values.iter())
        };
        for (i, value) in ordered.enumerate() {
            let index = first + i as i64;
            let mut child = path.to_vec();
            KeyEntryValue::ArrayIndex(if prepend { -index } else { index }).encode_to(&mut child);
            self.set_encoded(&child, &Value::with_ttl(value.clone(), ttl))?;
        }
        let last = first + count - 1;
        Ok(if prepend {
            (-last, -first)
        } else {
            (first, last)
        })
    }

    /// Replaces (or with `None`, deletes) the element at 0-based position `pos` among the list
    /// elements visible at `read_ht`.
    pub fn list_set(
        &mut self,
        path: &SubDocKey,
        pos: usize,
        value: Option<PrimitiveValue>,
        read_ht: HybridTime,
    ) -> Result<()> {
        let list = self.db.get(
            path,
            &ReadOptions {
                read_ht,
                ..self.db.read_options(read_ht)
            },
        )?;
        let index = match &list {
            Some(SubDocument::Object { children, .. }) => children
                .values()
                .filter_map(|(key, _)| match key {
                    KeyEntryValue::ArrayIndex(i) => Some(*i),
                    _ => None,
                })
                .nth(pos),
            _ => None,
        };
        let Some(index) = index else {
            return Err(Error::InvalidArgument(format!(
                "list has no element at position {pos}"
            )));
        };
        let mut child = path.clone();
        child.subkeys.push(KeyEntryValue::ArrayIndex(index));
        self.set(
            &child,
            Value::new(value.unwrap_or(PrimitiveValue::Tombstone)),
        )
    }

    /// A TTL merge record (Redis EXPIRE, or PERSIST with `None`) at an existing path.
    pub fn expire(&mut self, path: &SubDocKey, ttl: Option<Ttl>) -> Result<()> {
        self.expire_encoded(path.encode(), ttl)
    }

    /// [`Self::expire`] for a path encoded by the caller.
    pub fn expire_encoded(&mut self, encoded: Vec<u8>, ttl: Option<Ttl>) -> Result<()> {
        let Some(state) = self.state_at(&encoded)?.filter(|s| s.live) else {
            return Err(Error::InvalidArgument(
                "expire/persist of a path that holds nothing".into(),
            ));
        };
        let payload = match ObjectKind::from_marker(&state.payload) {
            Some(kind) => kind.marker(),
            None => PrimitiveValue::String(Vec::new()),
        };
        let control = ValueControlFields {
            merge_flags: TTL_MERGE_FLAG,
            ttl,
            ..ValueControlFields::default()
        };
        self.push(&encoded, &Value { control, payload });
        Ok(())
    }

    /// Reserves `count` list indexes; returns the first.
    fn reserve_indexes(&mut self, count: i64) -> i64 {
        let first = self.db.reserve_list_indexes(count);
        self.reserved = Some(match self.reserved {
            Some((start, n)) => (start, n + count),
            None => (first, count),
        });
        first
    }

    /// With required init markers: makes sure every ancestor of `path` is an object, adding
    /// `{` markers where not.
    fn ensure_ancestors(&mut self, path: &[u8]) -> Result<()> {
        let mut ends = Vec::new();
        component_ends(path, &mut ends)?;
        for &end in &ends[..ends.len() - 1] {
            let ancestor = &path[..end];
            let is_object = self
                .state_at(ancestor)?
                .is_some_and(|s| s.live && ObjectKind::from_marker(&s.payload).is_some());
            if !is_object {
                self.push(ancestor, &Value::new(PrimitiveValue::Object));
            }
        }
        Ok(())
    }

    /// What `path` holds now: the latest pair of this batch at the path or an overwritten
    /// ancestor, else the stored state as of the batch time.
    fn state_at(&self, path: &[u8]) -> Result<Option<PathState>> {
        for entry in self.entries().rev() {
            if entry.path == path {
                let value = Value::decode(entry.value)?;
                let live = !value.payload.is_tombstone();
                return Ok(Some(PathState {
                    payload: value.payload,
                    live,
                }));
            }
            if path.starts_with(entry.path) && !is_merge(entry.value) {
                // An ancestor written by this batch replaced everything below it.
                return Ok(None);
            }
        }
        let record = self
            .db
            .visible_record(path, self.db.read_options(self.ht))?;
        Ok(record.map(PathState::from))
    }

    /// Whether the newest version at `path` or an ancestor carries a later timestamp than
    /// `user_ts` (its user timestamp, else its hybrid time's physical µs).
    fn newer_timestamp_exists(&self, path: &[u8], user_ts: i64) -> Result<bool> {
        let batch_ts = self.ht.physical_micros() as i64;
        for entry in self.entries().rev() {
            if path.starts_with(entry.path) {
                let value = Value::decode(entry.value)?;
                if value.control.user_timestamp.unwrap_or(batch_ts) > user_ts {
                    return Ok(true);
                }
            }
        }
        let mut ends = Vec::new();
        component_ends(path, &mut ends)?;
        for &end in &ends {
            let opts = self.db.read_options(self.ht);
            if let Some(record) = self.db.visible_record(&path[..end], opts)? {
                let written = record.time.ht.physical_micros() as i64;
                let ts = if record.expired {
                    written
                } else {
                    record.control.user_timestamp.unwrap_or(written)
                };
                if ts > user_ts {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The batch as YugabyteDB prints a DocWriteBatch: `N. PutCF('<key>', '<value>')`, keys
    /// without hybrid time (format.md §12).
    pub fn explain(&self) -> String {
        let mut out = String::new();
        for (i, entry) in self.entries().enumerate() {
            let _ = write!(out, "{}. PutCF(", i + 1);
            let _ = write_quoted(&mut out, entry.path, '\'');
            out.push_str(", ");
            let _ = write_quoted(&mut out, entry.value, '\'');
            out.push_str(")\n");
        }
        out
    }

    /// Gives back reserved list indexes (when the batch is not committed).
    pub fn abandon(self) {
        if let Some((first, count)) = self.reserved {
            self.db.release_list_indexes(first, count);
        }
    }

    /// Writes the batch atomically: pair `i` gets key `path + '#' + (ht, write id i)`, the
    /// write ids numbered on from earlier batches of the same `DocDb::write_now`.
    pub fn commit(self) -> Result<usize> {
        let count = self.entries.len();
        let first_id = self.db.claim_write_ids(self.ht, count as u32);
        let mut batch = if first_id == self.first_id {
            // The keys hold their write ids already.
            self.entries
        } else {
            renumbered(&self.entries, &self.time_prefix, first_id)
        };
        if let Some((first, count)) = self.reserved {
            self.db.persist_list_counter(&mut batch, first + count - 1);
        }
        if batch.is_empty() {
            return Ok(0);
        }
        self.db.write_engine_batch(batch, self.ht)?;
        Ok(count)
    }
}

thread_local! {
    /// The buffers of this thread's last batch written, cleared, for its next batch: a
    /// thread writing one small batch after another allocates none.
    static SPARE_BATCH: Cell<Option<engine::WriteBatch>> = const { Cell::new(None) };
}

/// Largest buffers [`recycle`] keeps (a bulk load's are dropped).
const MAX_SPARE_BYTES: usize = 64 << 10;

/// An empty batch, on this thread's spare buffers if it has some.
fn spare_batch() -> engine::WriteBatch {
    SPARE_BATCH
        .take()
        // Room for a few rows' pairs, so a small batch never regrows its buffer.
        .unwrap_or_else(|| engine::WriteBatch::with_capacity_bytes(8, 512))
}

/// Keeps the buffers of `batch`, written now, for this thread's next batch.
pub(crate) fn recycle(mut batch: engine::WriteBatch) {
    if batch.allocated_bytes() <= MAX_SPARE_BYTES {
        batch.clear();
        SPARE_BATCH.set(Some(batch));
    }
}

/// Appends `path` + `#` + the hybrid time of `prefix` (from
/// [`DocHybridTime::encode_time_prefix`]) with write id `id`: a record's engine key.
fn timed_key(path: &[u8], prefix: &[u8], id: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(path);
    out.push(KeyEntryType::HybridTime.as_u8());
    DocHybridTime::encode_with_prefix(prefix, id, out);
}

/// The path of a key [`timed_key`] made.
fn without_time(key: &[u8]) -> &[u8] {
    DocHybridTime::split_from_end(key).map_or(key, |(path, _)| path)
}

/// `entries` with write ids from `first_id` on instead of the ones they were made with
/// (another batch of the same `DocDb::write_now` committed between).
fn renumbered(entries: &engine::WriteBatch, prefix: &[u8], first_id: u32) -> engine::WriteBatch {
    // Room for the longer write ids, and for the list counter.
    let bytes = entries.approximate_size() + entries.len() * 4;
    let mut batch = engine::WriteBatch::with_capacity_bytes(entries.len() + 1, bytes);
    for (id, op) in (first_id..).zip(entries.iter()) {
        if let engine::WriteOp::Put(key, value) = op {
            batch.put_with(
                |out| timed_key(without_time(key), prefix, id, out),
                |out| out.extend_from_slice(value),
            );
        }
    }
    batch
}

/// Whether an encoded value is a TTL merge record (one that changes the version below it).
pub(crate) fn is_merge(value: &[u8]) -> bool {
    ValueControlFields::decode(value).is_ok_and(|(c, _)| c.is_ttl_merge())
}

/// What a path holds, for write-time checks.
#[derive(Debug, Clone)]
struct PathState {
    payload: PrimitiveValue,
    live: bool,
}

impl From<VisibleRecord> for PathState {
    fn from(r: VisibleRecord) -> Self {
        let live = r.is_live();
        PathState {
            payload: r.payload,
            live,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_key_is_the_path_and_its_hybrid_time_and_gives_the_path_back() {
        let ht = HybridTime::new(1_700_000_000_123_456, 7);
        let mut prefix = Vec::new();
        DocHybridTime::encode_time_prefix(ht, &mut prefix);
        let paths: [&[u8]; 3] = [b"", b"S\x00\x01k\x00\x00!", b"G\x12\x34Sa\x00\x00!!K\x0a"];
        for path in paths {
            for id in [0, 1, 63, 64, 70_000, u32::MAX - 1] {
                let mut key = Vec::new();
                timed_key(path, &prefix, id, &mut key);
                let mut expected = path.to_vec();
                expected.push(b'#');
                DocHybridTime::new(ht, id).encode_to(&mut expected);
                assert_eq!(key, expected, "path {path:?}, write id {id}");
                assert_eq!(without_time(&key), path, "write id {id}");
            }
        }
    }
}
