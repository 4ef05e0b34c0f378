//! Collection roots read by the writer of [`crate::DocDb::write_now`], kept until a write
//! changes them: a server's write commands on one big collection (HSET after HSET on one
//! hash) then skip the seek to its root.
//!
//! Only a collection root that is live and never expires is kept, so what it says holds at
//! every later time until a record is written at the root itself (a replacement, tombstone
//! or TTL merge record): nothing else can hide a root. Every such write goes through
//! [`RootCache::forget_written`] before it reaches the engine. Only reads at the in-flight
//! write's own time use the cache, and those run under the writer lock, after every earlier
//! write has landed. A root read while some batch committed (a writer not using `write_now`)
//! is not kept: it may predate that batch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use dockv::KeyEntryType;
use dockv::doc_key::DocKey;
use engine::WriteBatch;

use crate::reader::{ReadOptions, RootLevel, VisibleRecord};
use crate::subdoc::ObjectKind;

/// At most this many roots are kept; the cache starts over when full.
const MAX_ROOTS: usize = 65_536;

/// Encoded DocKey → its root record and level.
#[derive(Default)]
pub(crate) struct RootCache {
    roots: Mutex<HashMap<Vec<u8>, (VisibleRecord, RootLevel)>>,
    /// Batches committed so far (counted before each reaches the engine).
    commits: AtomicU64,
}

impl RootCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<Vec<u8>, (VisibleRecord, RootLevel)>> {
        self.roots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The commit count to pass to [`Self::remember`] for reads starting now.
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// The root of `doc_key`, if kept.
    pub(crate) fn get(&self, doc_key: &[u8]) -> Option<(VisibleRecord, RootLevel)> {
        self.lock().get(doc_key).cloned()
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
        let keeps = record.is_live()
            && record.expiration.ttl.is_none()
            && opts.table_ttl.is_none()
            && ObjectKind::from_marker(&record.payload).is_some();
        if !keeps {
            return;
        }
        let mut roots = self.lock();
        // Under the lock: a batch counted after this check forgets the root once it is in.
        if self.commits() != commits_before {
            return;
        }
        if roots.len() >= MAX_ROOTS {
            roots.clear();
        }
        roots.insert(doc_key.to_vec(), (record.clone(), level));
    }

    /// Forgets every root `batch` writes a record at.
    pub(crate) fn forget_written(&self, batch: &WriteBatch) {
        let mut roots = self.lock();
        self.commits.fetch_add(1, Ordering::SeqCst);
        if roots.is_empty() {
            return;
        }
        for op in batch.iter() {
            let key = op.key();
            if let Ok(len) = DocKey::encoded_len(key)
                && key.get(len) == Some(&KeyEntryType::HybridTime.as_u8())
            {
                roots.remove(&key[..len]);
            }
        }
    }
}
