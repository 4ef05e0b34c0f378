//! The documents each recent batch wrote, kept while a scan may need them.
//!
//! A scan keeps the runs of invisible documents it read ([`crate::dead_spans`]) only for
//! documents nothing was written to since it began: its iterator may have missed such a
//! write. Rather than keeping nothing whenever any write was under way (on a busy server,
//! always), a scan takes its place in this log before making its iterator and, when it ends,
//! cuts out of its runs every document a batch from that place on wrote, whether the
//! iterator saw the batch or not.
//!
//! **Numbering.** Every batch gets the next number when the database is told of it, before
//! it reaches the engine, and is marked when it has landed (or failed). A scan's place is
//! the lowest number not yet landed: every batch below it had landed before the scan's
//! iterator was made, so the iterator saw it; every batch from it on is cut out.
//!
//! **Memory.** Batches are dropped once landed and below every scan's place. While a long
//! scan runs under load, the log holds at most [`MAX_LOG_BYTES`] of keys; past that the
//! oldest go, and the scans that needed them keep nothing (they stay correct, and the
//! next scan learns again).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use dockv::HybridTime;

use crate::dead_spans::BatchDocs;

/// Bytes of document keys the log holds at most while scans need them.
pub const MAX_LOG_BYTES: usize = 16 << 20;

/// Documents of one batch listed one by one; a batch with more is kept as the range from
/// its first document to its last.
const MAX_LISTED_DOCS: usize = 16;

/// Longest DocKey kept inside a log entry rather than in an allocation of its own.
const SHORT_KEY: usize = 46;

/// The documents one batch wrote.
#[derive(Debug)]
enum Docs {
    /// One encoded DocKey of at most [`SHORT_KEY`] bytes (most batches: a row, a Redis key),
    /// kept without allocating, since every write passes through the log.
    Short { len: u8, bytes: [u8; SHORT_KEY] },
    /// Each encoded DocKey.
    Listed(Vec<Vec<u8>>),
    /// Every document from the first encoded DocKey to the last, both included.
    Between(Vec<u8>, Vec<u8>),
}

impl Docs {
    /// The documents of the records in `batch` (engine metadata has none).
    fn of(batch: &BatchDocs<'_>) -> Self {
        if let Some(doc_key) = batch.only() {
            return Self::one(doc_key);
        }
        let mut listed: Vec<Vec<u8>> = Vec::new();
        let (mut first, mut last): (&[u8], &[u8]) = (&[], &[]);
        for (_, doc_key) in batch.records() {
            // A batch's records of one document usually come together.
            if listed.last().is_some_and(|l| l.as_slice() == doc_key) {
                continue;
            }
            if listed.is_empty() || doc_key < first {
                first = doc_key;
            }
            last = last.max(doc_key);
            if listed.len() <= MAX_LISTED_DOCS {
                listed.push(doc_key.to_vec());
            }
        }
        if listed.len() > MAX_LISTED_DOCS {
            Docs::Between(first.to_vec(), last.to_vec())
        } else {
            Docs::Listed(listed)
        }
    }

    fn one(doc_key: &[u8]) -> Self {
        let mut bytes = [0; SHORT_KEY];
        match bytes.get_mut(..doc_key.len()) {
            Some(short) => {
                short.copy_from_slice(doc_key);
                Docs::Short {
                    len: doc_key.len() as u8,
                    bytes,
                }
            }
            None => Docs::Listed(vec![doc_key.to_vec()]),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Docs::Short { len, .. } => usize::from(*len) + 24,
            Docs::Listed(keys) => keys.iter().map(|k| k.len() + 24).sum(),
            Docs::Between(first, last) => first.len() + last.len() + 48,
        }
    }

    /// Calls `cut(first, last)` for each range of documents written.
    fn each(&self, cut: &mut impl FnMut(&[u8], &[u8])) {
        match self {
            Docs::Short { len, bytes } => {
                let key = &bytes[..usize::from(*len)];
                cut(key, key);
            }
            Docs::Listed(keys) => keys.iter().for_each(|k| cut(k, k)),
            Docs::Between(first, last) => cut(first, last),
        }
    }
}

/// One batch the database was told of.
#[derive(Debug)]
struct Entry {
    docs: Docs,
    /// The newest hybrid time of its records.
    newest: HybridTime,
    /// Committed inside `write_now`, landing when that ends.
    deferred: bool,
    landed: bool,
}

/// Where a scan began in the log: it cuts out what every batch from there on wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogPlace(u64);

#[derive(Debug, Default)]
struct Log {
    /// The number of `entries[0]`.
    first: u64,
    entries: VecDeque<Entry>,
    /// Every batch numbered below it has landed.
    settled: u64,
    /// The newest hybrid time of the batches below `settled`, and of what was stored before
    /// the database opened.
    settled_newest: HybridTime,
    /// Scans under way, by place, with how many began there.
    scans: BTreeMap<u64, usize>,
    /// Scans whose place is below it lost batches they needed.
    lost_below: u64,
    bytes: usize,
}

impl Log {
    fn next(&self) -> u64 {
        self.first + self.entries.len() as u64
    }

    fn entry(&mut self, number: u64) -> Option<&mut Entry> {
        let index = number.checked_sub(self.first)?;
        self.entries.get_mut(usize::try_from(index).ok()?)
    }

    /// Moves `settled` past the batches that have landed.
    fn settle(&mut self) {
        while self.settled < self.next() {
            let number = self.settled;
            let Some(entry) = self.entry(number) else {
                break;
            };
            if !entry.landed {
                break;
            }
            let newest = entry.newest;
            self.settled_newest = self.settled_newest.max(newest);
            self.settled += 1;
        }
        self.trim();
    }

    /// Drops the batches no scan needs, and the oldest past the byte budget.
    fn trim(&mut self) {
        let needed = self
            .scans
            .keys()
            .next()
            .map_or(self.settled, |&place| place.min(self.settled));
        while self.first < self.settled
            && (self.first < needed || self.bytes > MAX_LOG_BYTES)
            && let Some(entry) = self.entries.pop_front()
        {
            self.bytes -= entry.docs.bytes();
            self.first += 1;
            if self.first > needed {
                self.lost_below = self.lost_below.max(self.first);
            }
        }
    }

    fn leave(&mut self, place: LogPlace) {
        if let Some(count) = self.scans.get_mut(&place.0) {
            *count -= 1;
            if *count == 0 {
                self.scans.remove(&place.0);
            }
        }
        self.trim();
    }
}

/// The log (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RecentWrites(Mutex<Log>);

impl RecentWrites {
    /// A log for a database whose stored records are no newer than `ceiling`.
    pub(crate) fn new(ceiling: HybridTime) -> Self {
        RecentWrites(Mutex::new(Log {
            settled_newest: ceiling,
            ..Log::default()
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers `batch`, whose records are no newer than `newest`, before it reaches the
    /// engine (`deferred`: committed inside `write_now`, landing when that ends).
    pub(crate) fn applied(&self, batch: &BatchDocs<'_>, newest: HybridTime, deferred: bool) -> u64 {
        let docs = Docs::of(batch);
        let mut log = self.lock();
        log.bytes += docs.bytes();
        let number = log.next();
        log.entries.push_back(Entry {
            docs,
            newest,
            deferred,
            landed: false,
        });
        number
    }

    /// The batch numbered `number` landed, or failed for good.
    pub(crate) fn landed(&self, number: u64) {
        let mut log = self.lock();
        if let Some(entry) = log.entry(number) {
            entry.landed = true;
        }
        log.settle();
    }

    /// The number the next batch gets.
    pub(crate) fn next_number(&self) -> u64 {
        self.lock().next()
    }

    /// The deferred batches numbered in `numbers` landed, or were discarded: those of one
    /// `write_now` (they run one at a time, but one may begin while the last one's batches
    /// are staged to land on another thread).
    pub(crate) fn landed_deferred(&self, numbers: Range<u64>) {
        let mut log = self.lock();
        let from = log.settled.max(numbers.start);
        let to = log.next().min(numbers.end);
        for number in from..to {
            if let Some(entry) = log.entry(number)
                && entry.deferred
            {
                entry.landed = true;
            }
        }
        log.settle();
    }

    /// A scan reading at `read_ht` begins (before making its iterator): its place, or
    /// `None` if a landed batch holds records newer than `read_ht`, which could show a
    /// document the scan finds invisible to later reads.
    pub(crate) fn begin(&self, read_ht: HybridTime) -> Option<LogPlace> {
        let mut log = self.lock();
        if log.settled_newest > read_ht {
            return None;
        }
        let place = log.settled;
        *log.scans.entry(place).or_default() += 1;
        Some(LogPlace(place))
    }

    /// The scan that began at `place` ends: calls `cut(first, last)` for every range of
    /// documents written from there on, and returns whether it saw all of them (false if
    /// some were dropped for memory).
    pub(crate) fn end(&self, place: LogPlace, mut cut: impl FnMut(&[u8], &[u8])) -> bool {
        let mut log = self.lock();
        let complete = place.0 >= log.lost_below;
        if complete {
            let from = usize::try_from(place.0.saturating_sub(log.first)).unwrap_or(usize::MAX);
            for entry in log.entries.iter().skip(from) {
                entry.docs.each(&mut cut);
            }
        }
        log.leave(place);
        complete
    }

    /// The scan that began at `place` ends without keeping anything.
    pub(crate) fn abandon(&self, place: LogPlace) {
        self.lock().leave(place);
    }

    /// Batches held now, for tests.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.lock().entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::KeyEntryValue;
    use dockv::doc_key::DocKey;
    use engine::WriteBatch;

    fn doc(i: i64) -> Vec<u8> {
        DocKey::from_range(vec![KeyEntryValue::int64(i)]).encode()
    }

    fn batch(docs: impl IntoIterator<Item = i64>) -> WriteBatch {
        let mut batch = WriteBatch::default();
        for i in docs {
            let mut key = doc(i);
            key.extend_from_slice(b"K\x01#t");
            batch.put(key, b"v");
        }
        batch
    }

    fn cuts(log: &RecentWrites, place: LogPlace) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut found = Vec::new();
        let complete = log.end(place, |first, last| {
            found.push((first.to_vec(), last.to_vec()))
        });
        complete.then_some(found)
    }

    #[test]
    fn a_scan_cuts_what_was_unlanded_or_written_after_it_began() {
        let log = RecentWrites::new(HybridTime(0));
        let landed_before = log.applied(&BatchDocs::of(&batch([1])), HybridTime(5), false);
        log.landed(landed_before);
        let in_flight = log.applied(&BatchDocs::of(&batch([2])), HybridTime(6), false);
        let place = log.begin(HybridTime(10)).expect("begins");
        let after = log.applied(&BatchDocs::of(&batch([3, 3, 4])), HybridTime(7), false);
        log.landed(after);
        log.landed(in_flight);
        let cut = cuts(&log, place).expect("complete");
        let expected: Vec<_> = [2, 3, 4].into_iter().map(|i| (doc(i), doc(i))).collect();
        assert_eq!(cut, expected);
        // Everything landed and no scan is under way: nothing is held.
        assert_eq!(log.held(), 0);
    }

    #[test]
    fn a_single_document_is_cut_whether_its_key_is_short_or_long() {
        let log = RecentWrites::new(HybridTime(0));
        let place = log.begin(HybridTime(10)).expect("begins");
        let long = DocKey::from_range(vec![KeyEntryValue::string(vec![b'x'; SHORT_KEY * 2])]);
        let docs = [doc(1), long.encode()];
        for doc_key in &docs {
            let mut one = WriteBatch::default();
            for column in [b"K\x01#t", b"K\x02#t"] {
                one.put([doc_key.as_slice(), column].concat(), b"v");
            }
            // Engine metadata in the batch is no document.
            one.put(b"\x01meta", b"m");
            let number = log.applied(&BatchDocs::of(&one), HybridTime(5), false);
            log.landed(number);
        }
        let expected: Vec<_> = docs.iter().map(|d| (d.clone(), d.clone())).collect();
        assert_eq!(cuts(&log, place), Some(expected));
    }

    #[test]
    fn deferred_batches_land_together() {
        let log = RecentWrites::new(HybridTime(0));
        log.applied(&BatchDocs::of(&batch([1])), HybridTime(5), true);
        log.applied(&BatchDocs::of(&batch([2])), HybridTime(5), true);
        let direct = log.applied(&BatchDocs::of(&batch([3])), HybridTime(4), false);
        log.landed(direct);
        assert_eq!(log.held(), 3);
        log.landed_deferred(0..u64::MAX);
        assert_eq!(log.held(), 0);
    }

    #[test]
    fn a_staged_write_lands_apart_from_the_next() {
        let log = RecentWrites::new(HybridTime(0));
        let staged_from = log.next_number();
        log.applied(&BatchDocs::of(&batch([1])), HybridTime(5), true);
        let next_from = log.next_number();
        // The next `write_now` commits while the staged one is still landing.
        log.applied(&BatchDocs::of(&batch([2])), HybridTime(6), true);
        let place = log.begin(HybridTime(9)).expect("begins");
        log.abandon(place);
        log.landed_deferred(staged_from..next_from);
        // The next write's batch is not landed: a scan beginning now still cuts it out.
        let place = log.begin(HybridTime(9)).expect("begins");
        assert_eq!(cuts(&log, place), Some(vec![(doc(2), doc(2))]));
        log.landed_deferred(next_from..u64::MAX);
        assert_eq!(log.held(), 0);
    }

    #[test]
    fn a_landed_batch_newer_than_the_read_time_stops_learning() {
        let log = RecentWrites::new(HybridTime(3));
        assert!(log.begin(HybridTime(2)).is_none());
        let number = log.applied(&BatchDocs::of(&batch([1])), HybridTime(9), false);
        // Not landed yet: the scan cuts it out instead.
        let place = log.begin(HybridTime(5)).expect("begins");
        log.abandon(place);
        log.landed(number);
        assert!(log.begin(HybridTime(5)).is_none());
        assert!(log.begin(HybridTime(9)).is_some());
    }

    #[test]
    fn a_large_batch_is_kept_as_a_range() {
        let log = RecentWrites::new(HybridTime(0));
        let place = log.begin(HybridTime(1)).expect("begins");
        let docs = (0..MAX_LISTED_DOCS as i64 + 1).rev();
        log.applied(&BatchDocs::of(&batch(docs)), HybridTime(1), false);
        let last = MAX_LISTED_DOCS as i64;
        assert_eq!(cuts(&log, place), Some(vec![(doc(0), doc(last))]));
    }

    #[test]
    fn a_scan_whose_batches_were_dropped_for_memory_is_told_so() {
        let log = RecentWrites::new(HybridTime(0));
        let place = log.begin(HybridTime(1)).expect("begins");
        let big = batch(0..MAX_LISTED_DOCS as i64);
        let per_batch = Docs::of(&BatchDocs::of(&big)).bytes();
        for _ in 0..MAX_LOG_BYTES / per_batch + 2 {
            let number = log.applied(&BatchDocs::of(&big), HybridTime(1), false);
            log.landed(number);
        }
        assert!(log.lock().bytes <= MAX_LOG_BYTES);
        let later = log.begin(HybridTime(1)).expect("begins");
        assert_eq!(cuts(&log, place), None);
        assert_eq!(cuts(&log, later), Some(vec![]));
        assert_eq!(log.held(), 0);
    }
}
