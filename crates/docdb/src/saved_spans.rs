//! The runs of invisible documents ([`crate::dead_spans`]) as a clean close saves them, so
//! that the first scans after a restart skip them as the scans before it did.
//!
//! **When they still hold.** A run holds until something is written into it. Closing and
//! opening write nothing, so the runs kept at a close hold at the next open if no write
//! reached the engine in between: not this program's writes after a crash (a close that
//! saves nothing leaves nothing), nor another program's. The record carries the engine's
//! [`Engine::last_sequence`](engine::Engine::last_sequence) as it is once the record itself
//! is written; an open uses the runs only if the engine is still there, and deletes the
//! record in any case.
//!
//! **Format** (version 1; integers big-endian):
//!
//! ```text
//! record := 0x01 sequence:u64 set_count:u32 set*
//! set    := kind:u8 [table_id:u32 if kind = 2] span_count:u32 span*
//! kind   := 0 (SpanSet::Documents) | 1 (SpanSet::Roots) | 2 (SpanSet::Rows)
//! span   := since:u64 start_len:u32 start end_len:u32 end
//! ```
//!
//! Each bound is a whole encoded DocKey, or one followed by `0xFF` (past that document's
//! records, where a write split a span), `start` below `end`, and a set's spans are in key
//! order without overlaps. A record that breaks any of this, or has
//! bytes left over, is corrupt: the runs are a cache, so an open drops them and goes on.

use dockv::HybridTime;
use dockv::doc_key::DocKey;

use crate::db::FIRST_RECORD_BYTE;
use crate::dead_spans::{MAX_DEAD_SPANS, Span, SpanSet};
use crate::error::{Error, Result};

const VERSION: u8 = 1;
const DOCUMENTS: u8 = 0;
const ROOTS: u8 = 1;
const ROWS: u8 = 2;

/// The smallest encoded span: a time, two lengths and two one-byte keys.
const MIN_SPAN_BYTES: usize = 8 + 4 + 1 + 4 + 1;

/// Every set's runs, and the engine sequence at which they hold (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedSpans {
    /// [`Engine::last_sequence`](engine::Engine::last_sequence) once this record is written.
    pub sequence: u64,
    pub(crate) sets: Vec<(SpanSet, Vec<Span>)>,
}

impl SavedSpans {
    /// How many spans the sets hold together.
    pub fn span_count(&self) -> usize {
        self.sets.iter().map(|(_, spans)| spans.len()).sum()
    }

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        out.extend_from_slice(&self.sequence.to_be_bytes());
        put_len(&mut out, self.sets.len());
        for (set, spans) in &self.sets {
            match set {
                SpanSet::Documents => out.push(DOCUMENTS),
                SpanSet::Roots => out.push(ROOTS),
                SpanSet::Rows(table) => {
                    out.push(ROWS);
                    out.extend_from_slice(&table.to_be_bytes());
                }
            }
            put_len(&mut out, spans.len());
            for span in spans {
                out.extend_from_slice(&span.since.0.to_be_bytes());
                put_len(&mut out, span.start.len());
                out.extend_from_slice(&span.start);
                put_len(&mut out, span.end.len());
                out.extend_from_slice(&span.end);
            }
        }
        out
    }

    /// Decodes a record, checking everything the module docs promise.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut input = Input(bytes);
        let version = input.u8()?;
        if version != VERSION {
            return Err(corrupt(format!("unknown version {version}")));
        }
        let sequence = input.u64()?;
        let set_count = input.u32()?;
        let mut sets: Vec<(SpanSet, Vec<Span>)> = Vec::new();
        for _ in 0..set_count {
            let set = match input.u8()? {
                DOCUMENTS => SpanSet::Documents,
                ROOTS => SpanSet::Roots,
                ROWS => SpanSet::Rows(input.u32()?),
                kind => return Err(corrupt(format!("unknown set kind {kind}"))),
            };
            if sets.iter().any(|(seen, _)| *seen == set) {
                return Err(corrupt(format!("{set:?} twice")));
            }
            let spans = decode_spans(&mut input)?;
            sets.push((set, spans));
        }
        if !input.0.is_empty() {
            return Err(corrupt(format!(
                "{} bytes after the last set",
                input.0.len()
            )));
        }
        Ok(SavedSpans { sequence, sets })
    }
}

fn decode_spans(input: &mut Input<'_>) -> Result<Vec<Span>> {
    let count = input.u32()? as usize;
    if count > MAX_DEAD_SPANS {
        return Err(corrupt(format!("{count} spans in one set")));
    }
    // A count the bytes cannot hold fails below; do not reserve for it.
    let mut spans: Vec<Span> = Vec::with_capacity(count.min(input.0.len() / MIN_SPAN_BYTES));
    for _ in 0..count {
        let since = HybridTime(input.u64()?);
        let start = input.bytes()?.to_vec();
        let end = input.bytes()?.to_vec();
        if !is_bound(&start) || !is_bound(&end) || start >= end {
            return Err(corrupt("a span's bounds are not DocKeys in order".into()));
        }
        if spans.last().is_some_and(|last| last.end > start) {
            return Err(corrupt("spans out of order or overlapping".into()));
        }
        spans.push(Span { start, end, since });
    }
    Ok(spans)
}

/// A whole encoded DocKey of a document record.
fn is_doc_key(key: &[u8]) -> bool {
    key.first().is_some_and(|&b| b >= FIRST_RECORD_BYTE)
        && DocKey::encoded_len(key).is_ok_and(|len| len == key.len())
}

/// A whole DocKey, or one followed by `0xFF` (past that document's records).
fn is_bound(bound: &[u8]) -> bool {
    match bound.split_last() {
        Some((0xFF, doc_key)) => is_doc_key(doc_key),
        _ => is_doc_key(bound),
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // Spans and keys are far below 4 GiB; a longer one would be a bug upstream.
    let len = u32::try_from(len).expect("saved span length fits in u32");
    out.extend_from_slice(&len.to_be_bytes());
}

fn corrupt(what: String) -> Error {
    Error::Corruption(format!("saved runs of invisible documents: {what}"))
}

/// The bytes not decoded yet.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(corrupt("truncated".into()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        let mut be = [0; 4];
        be.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(be))
    }

    fn u64(&mut self) -> Result<u64> {
        let mut be = [0; 8];
        be.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(be))
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::KeyEntryValue;
    use proptest::prelude::*;

    fn doc_key(i: i64) -> Vec<u8> {
        DocKey::from_range(vec![KeyEntryValue::int64(i)]).encode()
    }

    /// The span of documents `first..=last`, or up to document `last` itself with `!after`.
    fn span(first: i64, last: i64, after: bool, since: u64) -> Span {
        let mut end = doc_key(last);
        if after {
            end.push(0xFF);
        }
        Span {
            start: doc_key(first),
            end,
            since: HybridTime(since),
        }
    }

    fn sample() -> SavedSpans {
        SavedSpans {
            sequence: 42,
            sets: vec![
                (SpanSet::Roots, vec![span(1, 1, true, 7)]),
                (SpanSet::Rows(5), vec![]),
            ],
        }
    }

    #[test]
    fn a_span_split_by_a_write_starts_past_a_document() {
        // What a write of document 3 leaves of the run 1..=5: 1..3, and past 3 to past 5.
        let mut past_3 = doc_key(3);
        past_3.push(0xFF);
        let saved = SavedSpans {
            sequence: 9,
            sets: vec![(
                SpanSet::Documents,
                vec![
                    span(1, 3, false, 7),
                    Span {
                        start: past_3,
                        ..span(4, 5, true, 7)
                    },
                ],
            )],
        };
        let decoded = SavedSpans::decode(&saved.encode()).expect("decodes");
        assert_eq!(decoded, saved);
    }

    #[test]
    fn golden_record() {
        // format.md §2, §3: a range DocKey of int64 1 is `I` (kInt64), the value with its
        // sign bit flipped, big-endian, then the group end `!`.
        let key: &[u8] = b"I\x80\x00\x00\x00\x00\x00\x00\x01!";
        assert_eq!(doc_key(1), key);
        let mut expected = vec![0x01];
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 42]); // sequence
        expected.extend_from_slice(&[0, 0, 0, 2]); // two sets
        expected.extend_from_slice(&[1, 0, 0, 0, 1]); // Roots, one span
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 7]); // since
        expected.extend_from_slice(&[0, 0, 0, 10]);
        expected.extend_from_slice(key);
        expected.extend_from_slice(&[0, 0, 0, 11]);
        expected.extend_from_slice(key);
        expected.push(0xFF);
        expected.extend_from_slice(&[2, 0, 0, 0, 5, 0, 0, 0, 0]); // Rows(5), no spans
        assert_eq!(sample().encode(), expected);
        assert_eq!(SavedSpans::decode(&expected).expect("decodes"), sample());
    }

    #[test]
    fn every_truncation_and_trailing_byte_is_an_error() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(
                SavedSpans::decode(&bytes[..len]).is_err(),
                "prefix of {len}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(SavedSpans::decode(&longer).is_err());
    }

    #[test]
    fn broken_rules_are_errors() {
        let cases = [
            (
                "not a DocKey",
                vec![Span {
                    start: b"\x01meta".to_vec(),
                    end: doc_key(2),
                    since: HybridTime(1),
                }],
            ),
            ("empty", vec![span(3, 3, false, 1)]),
            ("reversed", vec![span(4, 2, true, 1)]),
            (
                "overlapping",
                vec![span(1, 5, true, 1), span(3, 6, true, 1)],
            ),
            (
                "out of order",
                vec![span(7, 8, true, 1), span(1, 2, true, 1)],
            ),
        ];
        for (what, spans) in cases {
            let saved = SavedSpans {
                sequence: 1,
                sets: vec![(SpanSet::Documents, spans)],
            };
            assert!(SavedSpans::decode(&saved.encode()).is_err(), "{what}");
        }
        let twice = SavedSpans {
            sequence: 1,
            sets: vec![(SpanSet::Roots, vec![]), (SpanSet::Roots, vec![])],
        };
        assert!(SavedSpans::decode(&twice.encode()).is_err(), "a set twice");
        let mut unknown = sample().encode();
        unknown[0] = 2;
        assert!(SavedSpans::decode(&unknown).is_err(), "version 2");
    }

    #[test]
    fn counts_past_the_limit_or_the_bytes_are_errors() {
        let header = |count: usize| {
            let mut bytes = vec![VERSION];
            bytes.extend_from_slice(&7u64.to_be_bytes());
            bytes.extend_from_slice(&1u32.to_be_bytes());
            bytes.push(DOCUMENTS);
            bytes.extend_from_slice(&(count as u32).to_be_bytes());
            bytes
        };
        let error = |bytes: Vec<u8>| match SavedSpans::decode(&bytes) {
            Err(Error::Corruption(what)) => what,
            other => panic!("expected corruption, got {other:?}"),
        };
        assert!(error(header(MAX_DEAD_SPANS + 1)).contains("spans in one set"));
        assert!(error(header(MAX_DEAD_SPANS)).contains("truncated"));
    }

    fn set_strategy() -> impl Strategy<Value = SpanSet> {
        prop_oneof![
            Just(SpanSet::Documents),
            Just(SpanSet::Roots),
            any::<u32>().prop_map(SpanSet::Rows),
        ]
    }

    /// Ordered, disjoint spans over documents 0..1000, each bound a DocKey or past one.
    fn spans_strategy() -> impl Strategy<Value = Vec<Span>> {
        proptest::collection::btree_set(0i64..1000, 0..20).prop_flat_map(|bounds| {
            let bounds: Vec<i64> = bounds.into_iter().collect();
            let pairs: Vec<(i64, i64)> = bounds.chunks_exact(2).map(|c| (c[0], c[1])).collect();
            let n = pairs.len();
            (
                Just(pairs),
                proptest::collection::vec((any::<bool>(), any::<bool>()), n),
                proptest::collection::vec(any::<u64>(), n),
            )
                .prop_map(|(pairs, past, since)| {
                    pairs
                        .iter()
                        .zip(past)
                        .zip(since)
                        .map(|((&(first, last), (past_first, past_last)), since)| {
                            let mut span = span(first, last, past_last, since);
                            if past_first {
                                span.start.push(0xFF);
                            }
                            span
                        })
                        .collect()
                })
        })
    }

    proptest! {
        #[test]
        fn round_trips(
            sequence in any::<u64>(),
            sets in proptest::collection::hash_map(set_strategy(), spans_strategy(), 0..4),
        ) {
            let saved = SavedSpans { sequence, sets: sets.into_iter().collect() };
            let decoded = SavedSpans::decode(&saved.encode());
            prop_assert_eq!(decoded.ok(), Some(saved));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(saved) = SavedSpans::decode(&bytes) {
                prop_assert_eq!(saved.encode(), bytes);
            }
        }
    }
}
