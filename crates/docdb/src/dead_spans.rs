//! Runs of documents that scans found invisible, so that later scans seek past a whole run
//! instead of reading every document in it again.
//!
//! After a mass delete, the documents' tombstones and old versions stay until a full
//! compaction; a scan must read at least one record per path of each deleted document to
//! learn that nothing under it is newer than its tombstone. Queues and "delete everything
//! before X" make that the common case of a `LIMIT 1` scan repeated over and over (YugabyteDB
//! issue #15098: 0.7 ms became 7 s). The first scan pays; the runs it finds are kept here, and
//! the scans after it take one seek per run.
//!
//! **What a span means.** A span `[start, end)` holds the records of the documents of one
//! run: documents that were next to one another in a scan's key order, every one invisible
//! to that scan, whose read time was at or after every record stored. With no records
//! newer than its read time, a document invisible then stays invisible at every later time
//! until something is written to it (TTLs only ever hide more), and no other document lies
//! between them until one is written. So a read at or after `since` may skip the span.
//!
//! **How that stays true.**
//! - Every batch goes through [`DeadSpans::written`] before it reaches the engine (the same
//!   place the root cache hears of it), which splits every span holding one of its keys
//!   around that key's document: the run's documents on either side stay runs, so a write
//!   into a huge run (a key set after FLUSHDB) costs the next scan one more seek, not the
//!   whole run again.
//! - A scan takes its place in the log of recent writes ([`crate::recent_writes`]) before
//!   making its iterator, and keeps its runs less every document a batch from that place on
//!   wrote, its iterator having seen the batch or not. Batches get their place before they
//!   pass [`DeadSpans::written`], and the runs are cut and inserted under the spans' lock: a
//!   batch either is in the log by then, or splits the inserted runs after.
//! - A scan keeps nothing if a batch that landed before it holds records newer than its
//!   read time (they could show a document later reads find).
//! - Only reads with no projection and no table TTL teach spans (either could hide a live
//!   document); reads with them may use spans, since they only hide more.
//!
//! Spans live in memory. A clean close may save them ([`crate::saved_spans`]), and the next
//! open takes them back if nothing was written in between; otherwise the first scans after
//! a restart learn them again.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use dockv::doc_key::DocKey;
use dockv::{HybridTime, KeyEntryType};
use engine::{WriteBatch, WriteOp};

use crate::db::FIRST_RECORD_BYTE;

use crate::recent_writes::{LogPlace, RecentWrites};

/// Spans kept at most; when full, every other one is dropped to make room (see
/// [`thin_out`]). A span costs its two keys and about 80 bytes.
pub const MAX_DEAD_SPANS: usize = 65_536;

/// One run of invisible documents (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// No record of the run sorts before it, and every record of a document before the run
    /// does: the first document's DocKey, or, where a write split the span, the written
    /// document's DocKey and `0xFF`.
    pub(crate) start: Vec<u8>,
    /// Every record of the run sorts before it, and every record of a document after the
    /// run at or after it: the last document's DocKey and `0xFF`, or the DocKey of the
    /// document a write split the span at.
    pub(crate) end: Vec<u8>,
    /// Reads at or after this time may skip the span.
    pub(crate) since: HybridTime,
}

impl Span {
    /// The span of the one document at `doc_key` (an encoded DocKey), invisible at `read_ht`.
    pub(crate) fn of_document(doc_key: &[u8], read_ht: HybridTime) -> Self {
        Span {
            start: doc_key.to_vec(),
            end: document_end(doc_key),
            since: read_ht,
        }
    }
}

impl Span {
    /// The parts of the span outside the documents from `first` to `last` (encoded DocKeys,
    /// both included), those that hold documents.
    fn cut(self, first: &[u8], last: &[u8]) -> impl Iterator<Item = Span> {
        // DocKeys are prefix-free: every record of a document below `first` sorts below it,
        // and every record of one above `last` sorts above `last` and 0xFF.
        let below = Span {
            start: self.start,
            end: first.to_vec(),
            since: self.since,
        };
        let above = Span {
            start: document_end(last),
            end: self.end,
            since: self.since,
        };
        [below, above]
            .into_iter()
            .filter(|part| part.start < part.end)
    }
}

/// The key after every record of the document at `doc_key` and before every later one.
fn document_end(doc_key: &[u8]) -> Vec<u8> {
    let mut end = Vec::with_capacity(doc_key.len() + 1);
    end.extend_from_slice(doc_key);
    // Every record of a document is its DocKey and a byte below 0xFF.
    end.push(0xFF);
    end
}

/// The run of invisible documents a scan is in, if any: the documents and spans it read or
/// skipped one after another since the last visible document.
#[derive(Debug, Default)]
pub(crate) struct Run {
    span: Option<Span>,
    /// The run is one span kept already, which a scan skipping it need not keep again.
    known: bool,
}

impl Run {
    /// Adds a skipped span (in either direction).
    pub(crate) fn extend(&mut self, next: &Span) {
        self.known = self.span.is_none();
        let Some(run) = &mut self.span else {
            self.span = Some(next.clone());
            return;
        };
        if next.start < run.start {
            run.start.clone_from(&next.start);
        }
        if next.end > run.end {
            run.end.clone_from(&next.end);
        }
        run.since = run.since.max(next.since);
    }

    /// Adds the invisible document at `doc_key`, read at `read_ht` (in either direction),
    /// reusing the run's buffers.
    pub(crate) fn extend_document(&mut self, doc_key: &[u8], read_ht: HybridTime) {
        self.known = false;
        let Some(run) = &mut self.span else {
            self.span = Some(Span::of_document(doc_key, read_ht));
            return;
        };
        if doc_key < run.start.as_slice() {
            run.start.clear();
            run.start.extend_from_slice(doc_key);
        }
        // Documents past the run's last one sort at or after its end.
        if doc_key >= run.end.as_slice() {
            run.end.clear();
            run.end.extend_from_slice(doc_key);
            run.end.push(0xFF);
        }
        run.since = run.since.max(read_ht);
    }

    /// Ends the run, handing over its span unless it is one kept already.
    pub(crate) fn take(&mut self) -> Option<Span> {
        let span = self.span.take();
        if std::mem::take(&mut self.known) {
            return None;
        }
        span
    }
}

/// A scan's view of the spans ahead of it: it looks one up when it passes the last, rather
/// than at every document. A span seen once stays right for the scan: a batch writing into
/// it splits it before landing, so while it is there the scan's iterator has no such batch.
#[derive(Debug)]
pub(crate) struct SpanCursor {
    read_ht: HybridTime,
    reverse: bool,
    /// `None` until the first lookup; then the next usable span, if there was one.
    ahead: Option<Option<Span>>,
}

impl SpanCursor {
    /// A cursor for a scan reading at `read_ht`, backwards if `reverse`.
    pub(crate) fn new(read_ht: HybridTime, reverse: bool) -> Self {
        SpanCursor {
            read_ht,
            reverse,
            ahead: None,
        }
    }

    /// The span holding the document at `doc_key` that the scan may skip, if any.
    pub(crate) fn covering(&mut self, spans: &DeadSpans, doc_key: &[u8]) -> Option<&Span> {
        let passed = match &self.ahead {
            None => true,
            Some(None) => false,
            Some(Some(span)) if self.reverse => doc_key < span.start.as_slice(),
            Some(Some(span)) => doc_key >= span.end.as_slice(),
        };
        if passed {
            self.ahead = Some(spans.next_span(doc_key, self.read_ht, self.reverse));
        }
        let span = self.ahead.as_ref()?.as_ref()?;
        let inside = span.start.as_slice() <= doc_key && doc_key < span.end.as_slice();
        inside.then_some(span)
    }
}

/// Whose runs a set of spans holds: each kind of read decides for itself which documents
/// are invisible, so each keeps its own runs (a document with a deleted root may still
/// have live columns, and a table row with only static columns is no row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanSet {
    /// [`crate::DocDb::scan`]: documents with nothing visible.
    Documents,
    /// [`crate::DocDb::scan_roots`]: documents whose root record is not live.
    Roots,
    /// Scans of one table's rows (the table's id): rows that do not exist.
    Rows(u32),
}

/// Every set of spans, made on first use.
#[derive(Debug, Default)]
pub(crate) struct SpanSets(RwLock<HashMap<SpanSet, Arc<DeadSpans>>>);

impl SpanSets {
    /// The spans of `set`.
    pub(crate) fn get(&self, set: SpanSet) -> Arc<DeadSpans> {
        if let Some(spans) = self.0.read().unwrap_or_else(|e| e.into_inner()).get(&set) {
            return spans.clone();
        }
        let mut sets = self.0.write().unwrap_or_else(|e| e.into_inner());
        sets.entry(set).or_default().clone()
    }

    /// Every set some scan has used.
    pub(crate) fn existing_sets(&self) -> Vec<(SpanSet, Arc<DeadSpans>)> {
        let sets = self.0.read().unwrap_or_else(|e| e.into_inner());
        sets.iter()
            .map(|(set, spans)| (*set, spans.clone()))
            .collect()
    }

    /// Counters of the spans of `set`.
    pub(crate) fn stats(&self, set: SpanSet) -> DeadSpanStats {
        let sets = self.0.read().unwrap_or_else(|e| e.into_inner());
        sets.get(&set)
            .map(|spans| spans.stats())
            .unwrap_or_default()
    }

    /// Counters summed over every set.
    pub(crate) fn totals(&self) -> DeadSpanStats {
        let sets = self.0.read().unwrap_or_else(|e| e.into_inner());
        let mut totals = DeadSpanStats::default();
        for spans in sets.values() {
            totals += spans.stats();
        }
        totals
    }

    /// Every set that holds spans, with its spans in key order.
    pub(crate) fn snapshot(&self) -> Vec<(SpanSet, Vec<Span>)> {
        let sets = self.0.read().unwrap_or_else(|e| e.into_inner());
        sets.iter()
            .map(|(set, spans)| (*set, spans.read().values().cloned().collect::<Vec<_>>()))
            .filter(|(_, spans)| !spans.is_empty())
            .collect()
    }

    /// Takes back spans a [`Self::snapshot`] saved, which still hold.
    pub(crate) fn restore(&self, sets: Vec<(SpanSet, Vec<Span>)>) {
        for (set, spans) in sets {
            self.get(set).restore(spans);
        }
    }

    /// Splits every span of every set that holds a key of `batch` (see
    /// [`DeadSpans::written`]).
    pub(crate) fn written(&self, batch: &BatchDocs<'_>) {
        for spans in self.0.read().unwrap_or_else(|e| e.into_inner()).values() {
            spans.written(batch);
        }
    }
}

/// Counters of the spans, for tests and statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeadSpanStats {
    /// Spans kept now.
    pub spans: u64,
    /// Spans kept by scans so far (merged ones included).
    pub learned: u64,
    /// Spans split (or dropped) because a batch wrote into them, and runs cut by the
    /// documents written while their scan ran.
    pub invalidated: u64,
    /// Spans taken back at open from what the last clean close saved.
    pub restored: u64,
    /// Runs scans skipped with a seek instead of reading them.
    pub skipped: u64,
}

impl std::ops::AddAssign for DeadSpanStats {
    fn add_assign(&mut self, other: DeadSpanStats) {
        self.spans += other.spans;
        self.learned += other.learned;
        self.invalidated += other.invalidated;
        self.restored += other.restored;
        self.skipped += other.skipped;
    }
}

/// The spans, by start key.
#[derive(Debug, Default)]
pub(crate) struct DeadSpans {
    spans: RwLock<BTreeMap<Vec<u8>, Span>>,
    learned: AtomicU64,
    invalidated: AtomicU64,
    restored: AtomicU64,
    skipped: AtomicU64,
}

impl DeadSpans {
    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<Vec<u8>, Span>> {
        self.spans.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<Vec<u8>, Span>> {
        self.spans.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The first span a scan from `doc_key` (an encoded DocKey) reading at `read_ht` reaches
    /// and may skip: the one holding the document, else the next one in the scan's direction.
    pub(crate) fn next_span(
        &self,
        doc_key: &[u8],
        read_ht: HybridTime,
        reverse: bool,
    ) -> Option<Span> {
        let spans = self.read();
        let mut at_or_below = spans.range::<[u8], _>((Bound::Unbounded, Bound::Included(doc_key)));
        let usable = |span: &&Span| span.since <= read_ht;
        if reverse {
            return at_or_below.rev().map(|(_, s)| s).find(usable).cloned();
        }
        let holding = at_or_below
            .next_back()
            .map(|(_, s)| s)
            .filter(|s| doc_key < s.end.as_slice());
        let above = spans.range::<[u8], _>((Bound::Excluded(doc_key), Bound::Unbounded));
        holding
            .into_iter()
            .chain(above.map(|(_, s)| s))
            .find(usable)
            .cloned()
    }

    /// Whether a read at `read_ht` may skip the document at `doc_key` (an encoded DocKey).
    pub(crate) fn covers(&self, doc_key: &[u8], read_ht: HybridTime) -> bool {
        holding(&self.read(), doc_key).is_some_and(|span| span.since <= read_ht)
    }

    /// The span holding the document at `doc_key` that a read at `read_ht` may skip.
    #[cfg(test)]
    fn covering(&self, doc_key: &[u8], read_ht: HybridTime) -> Option<Span> {
        SpanCursor::new(read_ht, false)
            .covering(self, doc_key)
            .cloned()
    }

    /// Keeps `runs`, read by a scan that began at `place` in `log`, less every document
    /// written since (see [`crate::recent_writes`]); nothing if the log lost some of those.
    /// Spans a run overlaps are merged into it.
    pub(crate) fn learn(&self, runs: Vec<Span>, log: &RecentWrites, place: LogPlace) {
        if runs.is_empty() {
            log.abandon(place);
            return;
        }
        // Under the spans' lock: a batch the log has not numbered yet splits the kept runs
        // once it has (see `DocDb::before_write`).
        let mut spans = self.write();
        let mut written = Vec::new();
        if !log.end(place, |first, last| {
            written.push((first.to_vec(), last.to_vec()));
        }) {
            return;
        }
        let learned = if written.is_empty() {
            runs
        } else {
            let mut fresh = BTreeMap::new();
            for run in runs {
                insert_merged(&mut fresh, run);
            }
            let cut_out: u64 = written
                .iter()
                .map(|(first, last)| cut(&mut fresh, first, last))
                .sum();
            self.invalidated.fetch_add(cut_out, Ordering::Relaxed);
            fresh.into_values().collect()
        };
        for run in learned {
            insert_merged(&mut spans, run);
            self.learned.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Splits every span holding a key of `batch` around the key's document (called before
    /// the batch reaches the engine): the run's other documents stay as they were.
    pub(crate) fn written(&self, batch: &BatchDocs<'_>) {
        let hit: Vec<&[u8]> = {
            let spans = self.read();
            if spans.is_empty() {
                return;
            }
            batch
                .records()
                .filter(|(op, _)| holding(&spans, op.key()).is_some())
                .map(|(_, doc_key)| doc_key)
                .collect()
        };
        if hit.is_empty() {
            return;
        }
        let mut spans = self.write();
        let mut cut_out = 0;
        for doc_key in hit {
            cut_out += cut(&mut spans, doc_key, doc_key);
        }
        self.invalidated.fetch_add(cut_out, Ordering::Relaxed);
    }

    /// Keeps `spans` as they were saved (see [`crate::saved_spans`]).
    fn restore(&self, spans: Vec<Span>) {
        let mut kept = self.write();
        for span in spans {
            insert_merged(&mut kept, span);
            self.restored.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn stats(&self) -> DeadSpanStats {
        DeadSpanStats {
            spans: self.read().len() as u64,
            learned: self.learned.load(Ordering::Relaxed),
            invalidated: self.invalidated.load(Ordering::Relaxed),
            restored: self.restored.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
        }
    }

    /// Counts `runs` a scan skipped.
    pub(crate) fn note_skipped(&self, runs: u64) {
        if runs > 0 {
            self.skipped.fetch_add(runs, Ordering::Relaxed);
        }
    }
}

/// Inserts `span`, merged with the spans it overlaps: the run read across them, so the
/// documents of all are one run of the same iterator. `since` is the latest of them.
fn insert_merged(spans: &mut BTreeMap<Vec<u8>, Span>, mut span: Span) {
    let overlapping: Vec<Vec<u8>> = spans
        .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(span.end.as_slice())))
        .rev()
        .take_while(|(_, s)| s.end.as_slice() > span.start.as_slice())
        .map(|(start, _)| start.clone())
        .collect();
    for start in overlapping {
        if let Some(old) = spans.remove(&start) {
            span.start = span.start.min(old.start);
            span.end = span.end.max(old.end);
            span.since = span.since.max(old.since);
        }
    }
    if spans.len() >= MAX_DEAD_SPANS {
        thin_out(spans);
    }
    spans.insert(span.start.clone(), span);
}

/// Drops every other span, in key order. Scans over more runs than fit then still skip
/// half of those kept: starting over instead, a scan repeated over them would drop the
/// runs ahead of it to keep the runs it reads, and skip none. Spans no scan reaches any
/// more (their documents compacted away) halve at each thinning, so they do not hold
/// the room for ever.
fn thin_out(spans: &mut BTreeMap<Vec<u8>, Span>) {
    let mut keep = false;
    spans.retain(|_, _| {
        keep = !keep;
        keep
    });
}

/// The span in `spans` that holds `key`, if any (spans do not overlap: only the last one
/// starting at or before the key can).
fn holding<'s>(spans: &'s BTreeMap<Vec<u8>, Span>, key: &[u8]) -> Option<&'s Span> {
    spans
        .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
        .next_back()
        .map(|(_, span)| span)
        .filter(|span| key < span.end.as_slice())
}

/// The documents of a batch's records, found once for everything told of the batch (the
/// root cache, the log of recent writes, the dead spans, the deleted-document queue)
/// instead of by each.
pub(crate) struct BatchDocs<'b> {
    batch: &'b WriteBatch,
    /// The encoded DocKey of every record, when they share one (most batches: a row, a
    /// Redis key); then no record's key is parsed again.
    only: Option<&'b [u8]>,
    /// Whether a record may be at a document's root or its counter (what the root cache
    /// keeps): false when none is, as when a row's columns are written.
    at_roots: bool,
}

impl<'b> BatchDocs<'b> {
    /// Looks at `batch` once: parses the first record's DocKey and compares the others'
    /// keys with it, stopping at the first other document.
    pub(crate) fn of(batch: &'b WriteBatch) -> Self {
        let mut only: Option<&[u8]> = None;
        let mut at_roots = false;
        for key in batch.iter().map(|op| op.key()).filter(|k| is_record(k)) {
            let doc = match only {
                None => document_of(key),
                // DocKeys are prefix-free: a key starting with a DocKey has that DocKey.
                Some(doc) if key.starts_with(doc) => doc,
                Some(_) => return BatchDocs::several(batch),
            };
            only = Some(doc);
            let below = key.get(doc.len()).copied();
            at_roots |= below == Some(KeyEntryType::HybridTime.as_u8())
                || below == Some(KeyEntryType::Counter.as_u8());
        }
        BatchDocs {
            batch,
            only,
            at_roots,
        }
    }

    /// A batch whose records are in several documents.
    fn several(batch: &'b WriteBatch) -> Self {
        BatchDocs {
            batch,
            only: None,
            at_roots: true,
        }
    }

    /// Whether a record may be at a document's root or its counter.
    pub(crate) fn at_roots(&self) -> bool {
        self.at_roots
    }

    /// The one document every record is in, if they share one.
    pub(crate) fn only(&self) -> Option<&'b [u8]> {
        self.only
    }

    /// The records (not the engine's metadata), each with its encoded DocKey, parsing each
    /// DocKey once however many records of it follow one another (none if all share one).
    pub(crate) fn records(&self) -> impl Iterator<Item = (WriteOp<'b>, &'b [u8])> + use<'b> {
        let only = self.only;
        let mut previous: &[u8] = only.unwrap_or_default();
        self.batch.iter().filter_map(move |op| {
            let key = op.key();
            if !is_record(key) {
                return None;
            }
            if only.is_none() && (previous.is_empty() || !key.starts_with(previous)) {
                previous = document_of(key);
            }
            Some((op, &key[..previous.len()]))
        })
    }
}

/// Whether `key` is a document record's, not the engine's metadata.
fn is_record(key: &[u8]) -> bool {
    key.first().is_some_and(|&b| b >= FIRST_RECORD_BYTE)
}

/// The encoded DocKey of the record at `key` (the whole key if it is none).
pub(crate) fn document_of(key: &[u8]) -> &[u8] {
    DocKey::encoded_len(key).map_or(key, |len| &key[..len])
}

/// Cuts the documents from `first` to `last` (encoded DocKeys, both included) out of
/// `spans`; returns how many spans it split or dropped.
fn cut(spans: &mut BTreeMap<Vec<u8>, Span>, first: &[u8], last: &[u8]) -> u64 {
    let end = document_end(last);
    let hit: Vec<Vec<u8>> = spans
        .range::<[u8], _>((Bound::Unbounded, Bound::Excluded(end.as_slice())))
        .rev()
        .take_while(|(_, span)| span.end.as_slice() > first)
        .map(|(start, _)| start.clone())
        .collect();
    for start in &hit {
        let Some(span) = spans.remove(start) else {
            continue;
        };
        for part in span.cut(first, last) {
            if spans.len() < MAX_DEAD_SPANS {
                spans.insert(part.start.clone(), part);
            }
        }
    }
    hit.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: &[u8], last: &[u8], since: u64) -> Span {
        let mut end = last.to_vec();
        end.push(0xFF);
        Span {
            start: start.to_vec(),
            end,
            since: HybridTime(since),
        }
    }

    /// Keeps `runs` as a scan that began with nothing written since would.
    fn keep(spans: &DeadSpans, runs: Vec<Span>) {
        let log = RecentWrites::new(HybridTime::MIN);
        let place = log.begin(HybridTime::MIN).expect("begins");
        spans.learn(runs, &log, place);
    }

    fn batch(keys: &[&[u8]]) -> WriteBatch {
        let mut batch = WriteBatch::default();
        for key in keys {
            batch.put(key, b"v");
        }
        batch
    }

    #[test]
    fn covers_its_documents_for_reads_at_or_after_since() {
        let spans = DeadSpans::default();
        keep(&spans, vec![span(b"Sb!", b"Sd!", 10)]);
        for inside in [&b"Sb!"[..], b"Sc!", b"Sd!"] {
            assert_eq!(
                spans.covering(inside, HybridTime(10)).map(|s| s.start),
                Some(b"Sb!".to_vec())
            );
            assert!(spans.covering(inside, HybridTime(9)).is_none());
        }
        for outside in [&b"Sa!"[..], b"Se!"] {
            assert!(spans.covering(outside, HybridTime(10)).is_none());
        }
    }

    #[test]
    fn a_write_outside_a_run_keeps_it_and_one_between_its_documents_splits_it() {
        let spans = DeadSpans::default();
        keep(&spans, vec![span(&doc(10), &doc(20), 10)]);
        keep(&spans, vec![span(&doc(40), &doc(50), 10)]);
        spans.written(&BatchDocs::of(&batch(&[
            &record(5),
            &record(25),
            &record(60),
        ])));
        assert_eq!(spans.stats().spans, 2);
        assert_eq!(spans.stats().invalidated, 0);
        // A record of a new document between two of the run's (12 < (12, 1) < 13).
        let between = DocKey::from_range(vec![
            dockv::KeyEntryValue::int64(12),
            dockv::KeyEntryValue::int64(1),
        ])
        .encode();
        let mut key = between.clone();
        key.extend_from_slice(b"K\x01#t");
        spans.written(&BatchDocs::of(&batch(&[&key])));
        assert!(spans.covering(&between, HybridTime(10)).is_none());
        for i in [10, 12, 13, 20] {
            assert!(spans.covering(&doc(i), HybridTime(10)).is_some(), "{i}");
        }
        assert_eq!(spans.stats().spans, 3);
        assert_eq!(spans.stats().invalidated, 1);
    }

    /// The encoded DocKey of document `i`.
    fn doc(i: i64) -> Vec<u8> {
        DocKey::from_range(vec![dockv::KeyEntryValue::int64(i)]).encode()
    }

    /// A record of document `i`: a column and a hybrid time.
    fn record(i: i64) -> Vec<u8> {
        let mut key = doc(i);
        key.extend_from_slice(b"K\x01#t");
        key
    }

    #[test]
    fn a_batch_of_one_document_is_parsed_once_and_others_record_by_record() {
        let meta = b"\x01meta".to_vec();
        let mut root = doc(2);
        root.extend_from_slice(b"#t");
        // The keys, the one document, whether a record may be at a root.
        type Case = (Vec<Vec<u8>>, Option<Vec<u8>>, bool);
        let cases: [Case; 5] = [
            (
                vec![record(2), root.clone(), meta.clone()],
                Some(doc(2)),
                true,
            ),
            (
                vec![record(2), record(2), meta.clone()],
                Some(doc(2)),
                false,
            ),
            (vec![meta.clone(), record(2), record(3), root], None, true),
            (vec![record(3), record(2), record(3)], None, true),
            (vec![meta], None, false),
        ];
        for (keys, only, at_roots) in cases {
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let written = batch(&refs);
            let docs = BatchDocs::of(&written);
            assert_eq!(docs.only(), only.as_deref(), "{keys:?}");
            assert_eq!(docs.at_roots(), at_roots, "{keys:?}");
            // Every record with its own DocKey, as parsing each key finds it; no metadata.
            let found: Vec<(&[u8], &[u8])> = docs.records().map(|(op, d)| (op.key(), d)).collect();
            let expected: Vec<(&[u8], &[u8])> = refs
                .iter()
                .filter(|k| k[0] >= FIRST_RECORD_BYTE)
                .map(|k| (*k, document_of(k)))
                .collect();
            assert_eq!(found, expected, "{keys:?}");
        }
    }

    #[test]
    fn a_write_into_a_run_splits_it_around_the_written_document() {
        let spans = DeadSpans::default();
        keep(&spans, vec![span(&doc(10), &doc(20), 5)]);
        // A record of the run's document 15, and of a new document 25 past the run.
        spans.written(&BatchDocs::of(&batch(&[&record(15), &record(25)])));
        let at = HybridTime(5);
        let covered = [(9, false), (10, true), (14, true), (15, false), (16, true)];
        for (i, covered) in covered.into_iter().chain([(20, true), (21, false)]) {
            assert_eq!(
                spans.covering(&doc(i), at).is_some(),
                covered,
                "document {i}"
            );
        }
        // The parts keep the run's time, and a write at either edge shrinks them.
        assert!(spans.covering(&doc(14), HybridTime(4)).is_none());
        spans.written(&BatchDocs::of(&batch(&[&record(10), &record(20)])));
        let left: Vec<i64> = (9..22)
            .filter(|&i| spans.covering(&doc(i), at).is_some())
            .collect();
        assert_eq!(left, vec![11, 12, 13, 14, 16, 17, 18, 19]);
        assert_eq!(spans.stats().invalidated, 3);
    }

    #[test]
    fn a_run_loses_the_documents_written_since_its_scan_began() {
        let spans = DeadSpans::default();
        let log = RecentWrites::new(HybridTime::MIN);
        // Told of before the scan began, landing after its iterator was made.
        let unlanded = log.applied(&BatchDocs::of(&batch(&[&record(12)])), HybridTime(1), false);
        let place = log.begin(HybridTime(5)).expect("begins");
        log.applied(
            &BatchDocs::of(&batch(&[&record(15), &record(30)])),
            HybridTime(6),
            false,
        );
        log.landed(unlanded);
        spans.learn(vec![span(&doc(10), &doc(20), 5)], &log, place);
        let covered: Vec<i64> = (9..22)
            .filter(|&i| spans.covering(&doc(i), HybridTime(5)).is_some())
            .collect();
        assert_eq!(covered, vec![10, 11, 13, 14, 16, 17, 18, 19, 20]);
        assert_eq!(spans.stats().invalidated, 2);
    }

    #[test]
    fn a_scan_that_lost_writes_to_the_log_keeps_nothing() {
        let spans = DeadSpans::default();
        let log = RecentWrites::new(HybridTime::MIN);
        let place = log.begin(HybridTime(5)).expect("begins");
        let keys: Vec<Vec<u8>> = (0..16).map(record).collect();
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let big = batch(&keys);
        for _ in 0..crate::recent_writes::MAX_LOG_BYTES / (16 * 24) + 1 {
            let number = log.applied(&BatchDocs::of(&big), HybridTime(1), false);
            log.landed(number);
        }
        spans.learn(vec![span(&doc(100), &doc(200), 5)], &log, place);
        assert_eq!(spans.stats().spans, 0);
    }

    #[test]
    fn runs_read_across_spans_merge_with_them() {
        let spans = DeadSpans::default();
        keep(&spans, vec![span(b"Sc!", b"Sd!", 10)]);
        keep(&spans, vec![span(b"Sf!", b"Sg!", 30)]);
        // A later scan skipped both and found dead documents around them.
        keep(&spans, vec![span(b"Sb!", b"Sh!", 20)]);
        let stats = spans.stats();
        assert_eq!(stats.spans, 1);
        let merged = spans.covering(b"Se!", HybridTime(30)).expect("merged span");
        assert_eq!(merged, span(b"Sb!", b"Sh!", 30));
        assert!(spans.covering(b"Se!", HybridTime(29)).is_none());
    }

    #[test]
    fn a_full_set_drops_every_other_span() {
        let spans = DeadSpans::default();
        let key = |i: u32| [b"S".as_slice(), &i.to_be_bytes(), b"!"].concat();
        let full = MAX_DEAD_SPANS as u32;
        for i in 0..full {
            keep(&spans, vec![span(&key(i), &key(i), 1)]);
        }
        assert_eq!(spans.stats().spans, MAX_DEAD_SPANS as u64);
        keep(&spans, vec![span(&key(full), &key(full), 1)]);
        assert_eq!(spans.stats().spans, MAX_DEAD_SPANS as u64 / 2 + 1);
        let read = HybridTime(1);
        for i in [0, 2, full - 2, full] {
            assert!(spans.covers(&key(i), read), "span {i} kept");
        }
        for i in [1, 3, full - 1] {
            assert!(!spans.covers(&key(i), read), "span {i} dropped");
        }
    }
}
