//! Collection roots read by the writer of [`crate::DocDb::write_now`], kept until a write
//! changes them: a server's write commands on one big collection (HSET after HSET on one
//! hash) then skip the seek to its root. With a root, its counter subkey (`%`: the length a
//! Redis list or sorted set keeps, rewritten by every push, pop or add) is kept too, and
//! follows the writes to it.
//!
//! Only a collection root that is live and never expires is kept, so what it says holds at
//! every later time until a record is written at the root itself (a replacement, tombstone
//! or TTL merge record): nothing else can hide a root. Likewise a kept counter is a live value
//! without TTL or user timestamp under such a root, read once; a newer value of the same
//! kind written there replaces it, anything else drops it. Every write goes through
//! [`RootCache::apply_written`] before it reaches the engine. Only reads at the in-flight
//! write's own time use the cache, and those run under the writer lock, after every earlier
//! write has landed. A record read while some batch committed (a writer not using
//! `write_now`) is not kept: it may predate that batch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use dockv::doc_key::DocKey;
use dockv::value::Value;
use dockv::{DocHybridTime, KeyEntryType};
use engine::WriteBatch;

use crate::expiration::effective_expiration;
use crate::reader::{ReadOptions, RootLevel, VisibleRecord};
use crate::subdoc::ObjectKind;

/// At most this many roots are kept; the cache starts over when full.
const MAX_ROOTS: usize = 65_536;

/// A kept root and, once read, its counter.
struct Kept {
    root: VisibleRecord,
    level: RootLevel,
    counter: Option<VisibleRecord>,
}

/// Encoded DocKey → what is kept of that document.
#[derive(Default)]
pub(crate) struct RootCache {
    roots: Mutex<HashMap<Vec<u8>, Kept>>,
    /// Batches committed so far (counted before each reaches the engine).
    commits: AtomicU64,
}

/// Whether `path` is the counter subkey of the document whose DocKey is `doc_key_len` long.
pub(crate) fn is_counter_path(path: &[u8], doc_key_len: usize) -> bool {
    path.len() == doc_key_len + 1 && path[doc_key_len] == KeyEntryType::Counter.as_u8()
}

/// A record that stays visible, unchanged, until the next write at its own path or above.
fn lasting(record: &VisibleRecord) -> bool {
    record.is_live()
        && record.control.ttl.is_none()
        && record.control.user_timestamp.is_none()
        && record.control.merge_flags == 0
        && record.expiration.ttl.is_none()
}

impl RootCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<Vec<u8>, Kept>> {
        self.roots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lock, unless a batch committed since [`Self::commits`] returned `commits_before`:
    /// what was read since may predate it. (Checked under the lock: a batch counted after
    /// the check sees, and updates, what goes in.)
    fn lock_unchanged(
        &self,
        commits_before: u64,
    ) -> Option<MutexGuard<'_, HashMap<Vec<u8>, Kept>>> {
        let roots = self.lock();
        (self.commits() == commits_before).then_some(roots)
    }

    /// Forgets everything kept (writes it followed did not land).
    pub(crate) fn clear(&self) {
        self.lock().clear();
        self.commits.fetch_add(1, Ordering::SeqCst);
    }

    /// The commit count to pass to [`Self::remember`] for reads starting now.
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// The root of `doc_key`, if kept.
    pub(crate) fn get(&self, doc_key: &[u8]) -> Option<(VisibleRecord, RootLevel)> {
        self.lock()
            .get(doc_key)
            .map(|kept| (kept.root.clone(), kept.level))
    }

    /// The counter of `doc_key`, if kept.
    pub(crate) fn counter(&self, doc_key: &[u8]) -> Option<VisibleRecord> {
        self.lock().get(doc_key)?.counter.clone()
    }

    /// Keeps the root of `doc_key` as read with `opts`, if it is a live collection root
    /// that never expires and no batch committed since [`Self::commits`] returned
    /// `commits_before` (before the read).
    pub(crate) fn remember(
        &self,
        doc_key: &[u8],
        record: &VisibleRecord,
        level: RootLevel,
        opts: &ReadOptions,
        commits_before: u64,
    ) {
        let keeps = lasting(record)
            && opts.table_ttl.is_none()
            && ObjectKind::from_marker(&record.payload).is_some();
        if !keeps {
            return;
        }
        let Some(mut roots) = self.lock_unchanged(commits_before) else {
            return;
        };
        if roots.len() >= MAX_ROOTS {
            roots.clear();
        }
        let kept = Kept {
            root: record.clone(),
            level,
            counter: None,
        };
        roots.insert(doc_key.to_vec(), kept);
    }

    /// Keeps the counter of `doc_key` as read, on the same terms as [`Self::remember`], if
    /// its root is kept.
    pub(crate) fn remember_counter(
        &self,
        doc_key: &[u8],
        record: &VisibleRecord,
        commits_before: u64,
    ) {
        if !lasting(record) {
            return;
        }
        let Some(mut roots) = self.lock_unchanged(commits_before) else {
            return;
        };
        if let Some(kept) = roots.get_mut(doc_key) {
            kept.counter = Some(record.clone());
        }
    }

    /// Forgets every root `batch` writes a record at, and brings kept counters up to date
    /// (called before the batch reaches the engine).
    pub(crate) fn apply_written(&self, batch: &WriteBatch) {
        let mut roots = self.lock();
        self.commits.fetch_add(1, Ordering::SeqCst);
        if roots.is_empty() {
            return;
        }
        for op in batch.iter() {
            let key = op.key();
            let Ok(len) = DocKey::encoded_len(key) else {
                continue;
            };
            let rest = &key[len..];
            if rest.first() == Some(&KeyEntryType::HybridTime.as_u8()) {
                roots.remove(&key[..len]);
            } else if rest.first() == Some(&KeyEntryType::Counter.as_u8())
                && rest.get(1) == Some(&KeyEntryType::HybridTime.as_u8())
                && let Some(kept) = roots.get_mut(&key[..len])
            {
                let value = match op {
                    engine::WriteOp::Put(_, value) => Some(value.as_slice()),
                    engine::WriteOp::Delete(_) => None,
                };
                let written = value.and_then(|v| written_record(&rest[2..], v, kept.level));
                // Only a newer version replaces the kept one (a writer outside `write_now`
                // may write the past); anything else leaves the counter to the next read.
                kept.counter = match (kept.counter.take(), written) {
                    (Some(old), Some(new)) if new.time > old.time => Some(new),
                    _ => None,
                };
            }
        }
    }
}

/// The record a read would find for a value just written at a kept root's counter: the
/// newest version there, so visible as it is, if it is [`lasting`].
fn written_record(time: &[u8], value: &[u8], root: RootLevel) -> Option<VisibleRecord> {
    let (time, rest) = DocHybridTime::decode(time).ok()?;
    if !rest.is_empty() {
        return None;
    }
    let value = Value::decode(value).ok()?;
    let record = VisibleRecord {
        time,
        control: value.control,
        payload: value.payload,
        expired: false,
        // No TTL of its own: what the root passes down, as a read works it out.
        expiration: effective_expiration(None, [root.expiration()], time.ht),
    };
    lasting(&record).then_some(record)
}
