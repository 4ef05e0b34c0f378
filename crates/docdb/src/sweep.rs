//! Deleted documents waiting for a background sweep, so that the first scan after a mass
//! delete can skip them too.
//!
//! [`crate::dead_spans`] keeps the runs of invisible documents a scan read, so every scan
//! after the first skips a run with one seek. The first still steps over every deleted
//! document's records: a run can only be known by reading it, since a tombstone says nothing
//! of the documents beside it. A sweep does that reading in the background instead:
//! every document tombstone a batch writes queues its DocKey here, and
//! [`crate::DocDb::sweep_deleted`] later reads from each queued document not yet in a run
//! to the next visible document, with the kinds of scan the database has run, which keeps
//! the run as such a scan would (the same rules, so the same guarantees). A scan that comes
//! after the sweep seeks past the run, as a second scan would. Whether a table's row exists
//! only the table layer knows, so the runs of its SELECTs ([`crate::SpanSet::Rows`]) are swept
//! through [`crate::DocDb::sweep_deleted_with`], with a probe the table layer gives.
//!
//! The queue holds at most [`MAX_QUEUED`] documents. One sweep probe covers a whole run, so
//! the documents left out of a full queue are mostly found by the probes of their
//! neighbours; the rest are learned by the first scan, as without a sweep.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use dockv::value::peek_value_type;
use dockv::{KeyEntryType, ValueEntryType};
use engine::WriteOp;

use crate::dead_spans::BatchDocs;

/// Deleted documents queued at most; later ones are counted and left to the scans.
pub const MAX_QUEUED: usize = 1 << 18;

/// How often a sweep's probe looks at the clock, in documents read.
pub const DEADLINE_CHECK_EVERY: u32 = 64;

/// What one probe of a sweep did: a read from a deleted document to the next visible one,
/// for one kind of scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probed {
    /// The document is not one this kind of scan reads (another table's row): nothing read.
    NotMine,
    /// It read up to the next visible document (or the end), keeping the runs it found.
    Read,
    /// Its time was up before the document given; the runs read so far are kept, and the
    /// next sweep goes on from there.
    StoppedAt(Vec<u8>),
}

/// What a sweep did, for statistics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepStats {
    /// Queued documents the sweep took.
    pub taken: u64,
    /// Of those, documents a kept run already held, for every kind of scan that reads them.
    pub covered: u64,
    /// Reads from a queued document to the next visible one.
    pub probes: u64,
    /// Taken documents that no kind of scan swept reads (rows of a table never scanned).
    pub unread: u64,
    /// Runs kept while the sweep ran (by its reads, and by any scan running alongside).
    pub learned: u64,
    /// Documents left in the queue for the next sweep (its time was up).
    pub left: u64,
}

/// The DocKeys of documents whose root a batch deleted, in the order written.
#[derive(Debug, Default)]
pub(crate) struct DeletedQueue {
    keys: Mutex<Vec<Vec<u8>>>,
    /// Documents a sweep running now took, until it ends.
    sweeping: AtomicUsize,
    /// Tombstones not queued because the queue was full.
    overflowed: AtomicU64,
}

impl DeletedQueue {
    /// Queues the documents `batch` puts a root tombstone on.
    pub(crate) fn written(&self, batch: &BatchDocs<'_>) {
        if !batch.at_roots() {
            return;
        }
        let mut deleted = batch.records().filter_map(|(op, doc_key)| match op {
            WriteOp::Put(key, value) => {
                is_root_tombstone(&key[doc_key.len()..], value).then_some(doc_key)
            }
            WriteOp::Delete(_) => None,
        });
        let Some(first) = deleted.next() else {
            return;
        };
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        for doc_key in std::iter::once(first).chain(deleted) {
            if keys.len() < MAX_QUEUED {
                keys.push(doc_key.to_vec());
            } else {
                self.overflowed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Takes every queued document, in key order without repeats, for a sweep; they count
    /// as queued until it ends.
    pub(crate) fn take(&self) -> Taken<'_> {
        let mut queued = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let counted = queued.len();
        self.sweeping.fetch_add(counted, Ordering::SeqCst);
        let mut keys = std::mem::take(&mut *queued);
        drop(queued);
        keys.sort_unstable();
        keys.dedup();
        Taken {
            keys,
            queue: self,
            counted,
        }
    }

    /// Puts back documents a sweep had no time for; those a queue refilled meanwhile has no
    /// room for are counted as left out.
    pub(crate) fn put_back(&self, rest: impl Iterator<Item = Vec<u8>>) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let room = MAX_QUEUED.saturating_sub(keys.len());
        let mut rest = rest;
        keys.extend(rest.by_ref().take(room));
        let dropped = rest.count() as u64;
        if dropped > 0 {
            self.overflowed.fetch_add(dropped, Ordering::Relaxed);
        }
    }

    /// Documents queued or being swept now.
    pub(crate) fn len(&self) -> usize {
        let queued = self.keys.lock().unwrap_or_else(|e| e.into_inner()).len();
        queued + self.sweeping.load(Ordering::SeqCst)
    }

    /// Tombstones left out so far because the queue was full.
    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }
}

/// Whether a record whose key goes on with `below` after its DocKey, holding `value`, is
/// a tombstone at the document's root.
fn is_root_tombstone(below: &[u8], value: &[u8]) -> bool {
    // A tombstone's payload is its type byte alone, last in the value: one comparison
    // passes over almost every other value before any parsing.
    value.last() == Some(&ValueEntryType::Tombstone.as_u8())
        && below.first() == Some(&KeyEntryType::HybridTime.as_u8())
        && matches!(peek_value_type(value), Ok((_, ValueEntryType::Tombstone)))
}

/// The documents one sweep took from the queue (see [`DeletedQueue::take`]).
pub(crate) struct Taken<'q> {
    /// In key order, without repeats.
    pub(crate) keys: Vec<Vec<u8>>,
    queue: &'q DeletedQueue,
    counted: usize,
}

impl Drop for Taken<'_> {
    /// The sweep ended, having put back what it did not sweep.
    fn drop(&mut self) {
        self.queue
            .sweeping
            .fetch_sub(self.counted, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::doc_key::{DocKey, SubDocKey};
    use dockv::value::{PrimitiveValue, Value};
    use dockv::{DocHybridTime, KeyEntryValue};
    use engine::WriteBatch;

    fn doc(name: &str) -> DocKey {
        DocKey::from_range(vec![KeyEntryValue::string(name)])
    }

    /// The record of `doc`'s root, or of its `column`, at `micros`.
    fn record(doc: &DocKey, column: Option<i32>, micros: u64) -> Vec<u8> {
        let subkeys = column.map(KeyEntryValue::ColumnId).into_iter().collect();
        SubDocKey::new(doc.clone(), subkeys)
            .at(DocHybridTime::from_micros(micros))
            .encode()
    }

    #[test]
    fn queues_root_tombstones_only() {
        let (a, b, c) = (doc("a"), doc("b"), doc("c"));
        let tombstone = Value::new(PrimitiveValue::Tombstone).encode();
        let mut batch = WriteBatch::default();
        batch.put(record(&c, None, 5), &tombstone);
        // A column's tombstone deletes no document.
        batch.put(record(&b, Some(1), 5), &tombstone);
        // A string ending in the tombstone's byte is no tombstone.
        batch.put(
            record(&b, None, 5),
            Value::new(PrimitiveValue::string("X")).encode(),
        );
        batch.put(record(&a, None, 5), &tombstone);
        batch.put(record(&c, None, 6), &tombstone);
        let queue = DeletedQueue::default();
        queue.written(&BatchDocs::of(&batch));
        assert_eq!(queue.len(), 3);
        let taken = queue.take();
        assert_eq!(
            taken.keys,
            vec![a.encode(), c.encode()],
            "sorted, without repeats"
        );
        assert_eq!(queue.len(), 3, "taken by a sweep still running");
        drop(taken);
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn a_full_queue_counts_what_it_leaves_out() {
        let queue = DeletedQueue::default();
        let tombstone = Value::new(PrimitiveValue::Tombstone).encode();
        let mut batch = WriteBatch::default();
        for i in 0..MAX_QUEUED + 3 {
            batch.put(record(&doc(&format!("{i:08}")), None, 5), &tombstone);
        }
        queue.written(&BatchDocs::of(&batch));
        assert_eq!(queue.len(), MAX_QUEUED);
        assert_eq!(queue.overflowed(), 3);
        let taken = queue.take();
        queue.put_back(taken.keys[..10].iter().cloned());
        drop(taken);
        assert_eq!(queue.len(), 10);
        // A queue refilled while a sweep ran takes back only what fits.
        let mut taken = queue.take();
        queue.written(&BatchDocs::of(&batch));
        queue.put_back(std::mem::take(&mut taken.keys).into_iter());
        drop(taken);
        assert_eq!(queue.len(), MAX_QUEUED);
        assert_eq!(queue.overflowed(), 3 + 3 + 10);
    }
}
