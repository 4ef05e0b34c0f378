//! Model-based randomized test: random writes of every kind (set, delete, insert, extend,
//! append, prepend, list_set/list_delete, expire/persist; with TTLs),
//! reads of random paths at random times, full compactions at random cutoffs, and (on
//! RocksDB) close and reopen. Every read at or after the latest cutoff must match an
//! independent reference model.
//!
//! The model keeps every written record and answers reads per path: a path is visible iff its
//! newest version (merge records aside) is newer than the newest version of each ancestor;
//! expirations pass down the path unless a record has a newer TTL of its own.
//!
//! `DOCDB_MODEL_OPS` sets the number of operations, `DOCDB_MODEL_SEED` replays a seed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use docdb::clock::HybridClock;
use docdb::expiration::{Expiration, is_expired_at};
use docdb::reader::VisibleRecord;
use docdb::{
    ChildRange, DocDb, DocDbOptions, DocLiteral, GcPolicy, ObjectKind, ReadOptions, SubDocument,
};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl};
use dockv::{DocHybridTime, HybridTime, KeyEntryValue};
use engine::Rng;
use engine::{Engine, EngineIterator, KvRead, MemEngine};

/// A path: document index and subkeys.
type Path = (usize, Vec<KeyEntryValue>);

#[derive(Debug, Clone)]
enum Kind {
    Value(PrimitiveValue),
    Merge(Option<Ttl>),
}

#[derive(Debug, Clone)]
struct Record {
    time: DocHybridTime,
    kind: Kind,
    ttl: Option<Ttl>,
}

/// Every record ever written, by path.
#[derive(Default)]
struct Model {
    records: BTreeMap<Vec<u8>, (Path, Vec<Record>)>,
    list_counter: i64,
    table_ttl: Option<Ttl>,
    /// Number of documents paths are drawn from.
    docs: u64,
}

fn doc_key(doc: usize) -> DocKey {
    DocKey::from_range(vec![KeyEntryValue::string(format!("d{doc}"))])
}

fn sub_doc_key(path: &Path) -> SubDocKey {
    SubDocKey::new(doc_key(path.0), path.1.clone())
}

fn encoded(path: &Path) -> Vec<u8> {
    sub_doc_key(path).encode()
}

impl Model {
    fn add(&mut self, path: &Path, record: Record) {
        self.records
            .entry(encoded(path))
            .or_insert_with(|| (path.clone(), Vec::new()))
            .1
            .push(record);
    }

    /// Newest non-merge version at or before `t`, and the newest merge record above it.
    fn newest(&self, key: &[u8], t: HybridTime) -> Option<(Record, Option<Expiration>)> {
        let (_, records) = self.records.get(key)?;
        let mut visible: Vec<&Record> = records.iter().filter(|r| r.time.ht <= t).collect();
        visible.sort_by_key(|r| std::cmp::Reverse(r.time));
        let mut merged = None;
        for r in visible {
            match &r.kind {
                Kind::Merge(ttl) => {
                    merged.get_or_insert(Expiration::new(r.time.ht, *ttl));
                }
                Kind::Value(_) => return Some((r.clone(), merged)),
            }
        }
        None
    }

    /// The document at `path` as of `t`.
    fn read(&self, path: &Path, t: HybridTime) -> Option<SubDocument> {
        let prefix = encoded(path);
        let depth = path.1.len();
        // Walk ancestors of `path` to find the overwrite time and expiration passed down.
        let mut overwrite = DocHybridTime::MIN;
        let mut chain: Vec<Expiration> = Vec::new();
        for level in 0..depth {
            let ancestor = (path.0, path.1[..level].to_vec());
            let (_, (ow, exp)) = self.level(&encoded(&ancestor), t, overwrite, &chain);
            overwrite = ow;
            chain.push(exp);
        }
        let mut root = Node::default();
        let mut any = false;
        for (key, (p, _)) in self.records.range(prefix.clone()..) {
            if !key.starts_with(&prefix) {
                break;
            }
            any = true;
            // Recompute the chain from the read root down to this path.
            let mut ow = overwrite;
            let mut chain = chain.clone();
            let mut live = None;
            for level in depth..=p.1.len() {
                let sub = (p.0, p.1[..level].to_vec());
                let (state, (next_ow, exp)) = self.level(&encoded(&sub), t, ow, &chain);
                ow = next_ow;
                chain.push(exp);
                if level == p.1.len() {
                    live = state;
                }
            }
            if let Some(value) = live {
                root.set(&p.1[depth..], value);
            }
        }
        if !any {
            return None;
        }
        root.into_doc()
    }

    /// One level: returns (this path's live payload if any, (overwrite, expiration) passed down).
    #[allow(clippy::type_complexity)]
    fn level(
        &self,
        key: &[u8],
        t: HybridTime,
        parent_ow: DocHybridTime,
        chain: &[Expiration],
    ) -> (Option<PrimitiveValue>, (DocHybridTime, Expiration)) {
        let parent_exp = chain.last().copied().unwrap_or_default();
        let Some((record, merged)) = self.newest(key, t) else {
            return (None, (parent_ow, parent_exp));
        };
        if record.time <= parent_ow {
            return (None, (parent_ow, parent_exp));
        }
        // The newest merge record restates the expiration; else the record's own TTL.
        let own = merged.or_else(|| {
            record
                .ttl
                .map(|ttl| Expiration::new(record.time.ht, Some(ttl)))
        });
        let exp = docdb::expiration::effective_expiration(
            own,
            chain.iter().rev().copied(),
            record.time.ht,
        );
        let Kind::Value(payload) = record.kind else {
            unreachable!()
        };
        let live =
            !payload.is_tombstone() && !is_expired_at(exp, record.time.ht, self.table_ttl, t);
        (live.then_some(payload), (record.time, exp))
    }
}

#[derive(Default)]
struct Node {
    value: Option<PrimitiveValue>,
    children: BTreeMap<Vec<u8>, (KeyEntryValue, Node)>,
}

impl Node {
    fn set(&mut self, rel: &[KeyEntryValue], value: PrimitiveValue) {
        let mut node = self;
        for key in rel {
            node = &mut node
                .children
                .entry(key.encoded())
                .or_insert_with(|| (key.clone(), Node::default()))
                .1;
        }
        node.value = Some(value);
    }

    fn into_doc(self) -> Option<SubDocument> {
        let mut children = BTreeMap::new();
        for (k, (key, child)) in self.children {
            if let Some(doc) = child.into_doc() {
                children.insert(k, (key, doc));
            }
        }
        match self.value {
            Some(v) => match ObjectKind::from_marker(&v) {
                Some(kind) => Some(SubDocument::Object { kind, children }),
                None if children.is_empty() => Some(SubDocument::Primitive(v)),
                None => Some(SubDocument::Object {
                    kind: ObjectKind::Object,
                    children,
                }),
            },
            None if children.is_empty() => None,
            None => Some(SubDocument::Object {
                kind: ObjectKind::Object,
                children,
            }),
        }
    }
}

/// Documents in a run: few, so that histories get deep, but growing with the run length so
/// that the model's per-document work stays bounded on long runs.
fn docs_for(ops: usize) -> u64 {
    (ops as u64 / 2_500).max(4)
}

const SUBKEYS: [&str; 3] = ["a", "b", "c"];

fn random_path(rng: &mut Rng, docs: u64) -> Path {
    let depth = rng.below(3) as usize;
    (
        rng.below(docs) as usize,
        (0..depth)
            .map(|_| KeyEntryValue::string(SUBKEYS[rng.below(3) as usize]))
            .collect(),
    )
}

fn random_value(rng: &mut Rng) -> PrimitiveValue {
    match rng.below(4) {
        0 => PrimitiveValue::Int64(rng.below(100) as i64),
        1 => PrimitiveValue::string(format!("v{}", rng.below(50))),
        2 => PrimitiveValue::Object,
        _ => PrimitiveValue::Bool(rng.chance(50)),
    }
}

fn random_ttl(rng: &mut Rng) -> Option<Ttl> {
    match rng.below(10) {
        0 => Some(Ttl::RESET),
        1..=3 => Some(Ttl(1 + rng.below(6) as i64)),
        _ => None,
    }
}

/// Applies one random op both to the batch and the model; write ids follow batch order.
fn random_op<E: Engine>(
    rng: &mut Rng,
    batch: &mut docdb::DocWriteBatch<'_, E>,
    model: &mut Model,
    ht: HybridTime,
) {
    let start = batch.len();
    let path = random_path(rng, model.docs);
    let ttl = random_ttl(rng);
    let mut recs: Vec<(Path, PrimitiveValue, Option<Ttl>)> = Vec::new();
    match rng.below(7) {
        0 | 1 => {
            let v = random_value(rng);
            batch
                .set(
                    &sub_doc_key(&path),
                    dockv::value::Value::with_ttl(v.clone(), ttl),
                )
                .expect("set");
            recs.push((path, v, ttl));
        }
        2 => {
            batch.delete(&sub_doc_key(&path)).expect("delete");
            recs.push((path, PrimitiveValue::Tombstone, None));
        }
        3 | 4 => {
            let children: Vec<(KeyEntryValue, DocLiteral)> = (0..1 + rng.below(3))
                .map(|_| {
                    (
                        KeyEntryValue::string(SUBKEYS[rng.below(3) as usize]),
                        DocLiteral::Value(PrimitiveValue::Int64(rng.below(9) as i64)),
                    )
                })
                .collect();
            let doc = DocLiteral::Object(children.clone());
            if rng.chance(50) {
                batch
                    .insert(&sub_doc_key(&path), &doc, ttl)
                    .expect("insert");
                recs.push((path.clone(), PrimitiveValue::Object, ttl));
            } else {
                batch
                    .extend(&sub_doc_key(&path), &doc, ttl)
                    .expect("extend");
            }
            for (k, v) in children {
                let DocLiteral::Value(v) = v else {
                    unreachable!()
                };
                let mut child = path.clone();
                child.1.push(k);
                recs.push((child, v, ttl));
            }
        }
        6 => {
            // list_set / list_delete of the n-th element visible just before this batch (so
            // neither side sees this batch's own earlier ops).
            let mut list = path.clone();
            list.1.push(KeyEntryValue::string("l"));
            let read_ht = HybridTime(ht.0 - 1);
            let pos = rng.below(4) as usize;
            let value = if rng.chance(30) {
                None
            } else {
                Some(PrimitiveValue::Int64(100 + rng.below(9) as i64))
            };
            let index = match model.read(&list, read_ht) {
                Some(SubDocument::Object { children, .. }) => children
                    .values()
                    .filter_map(|(k, _)| match k {
                        KeyEntryValue::ArrayIndex(i) => Some(*i),
                        _ => None,
                    })
                    .nth(pos),
                _ => None,
            };
            let result = batch.list_set(&sub_doc_key(&list), pos, value.clone(), read_ht);
            assert_eq!(
                result.is_ok(),
                index.is_some(),
                "list_set {pos} of {} ({result:?})",
                sub_doc_key(&list)
            );
            if let Some(index) = index {
                let mut child = list.clone();
                child.1.push(KeyEntryValue::ArrayIndex(index));
                recs.push((child, value.unwrap_or(PrimitiveValue::Tombstone), None));
            }
        }
        _ => {
            let mut list = path.clone();
            list.1.push(KeyEntryValue::string("l"));
            let values: Vec<PrimitiveValue> = (0..1 + rng.below(3))
                .map(|i| PrimitiveValue::Int64(i as i64))
                .collect();
            let first = model.list_counter + 1;
            model.list_counter += values.len() as i64;
            if rng.chance(50) {
                batch
                    .append(&sub_doc_key(&list), &values, ttl)
                    .expect("append");
                for (i, v) in values.iter().enumerate() {
                    let mut child = list.clone();
                    child.1.push(KeyEntryValue::ArrayIndex(first + i as i64));
                    recs.push((child, v.clone(), ttl));
                }
            } else {
                batch
                    .prepend(&sub_doc_key(&list), &values, ttl)
                    .expect("prepend");
                for (i, v) in values.iter().rev().enumerate() {
                    let mut child = list.clone();
                    child.1.push(KeyEntryValue::ArrayIndex(-(first + i as i64)));
                    recs.push((child, v.clone(), ttl));
                }
            }
        }
    }
    assert_eq!(batch.len() - start, recs.len(), "records written by one op");
    for (i, (path, value, ttl)) in recs.into_iter().enumerate() {
        let time = DocHybridTime::new(ht, (start + i) as u32);
        model.add(
            &path,
            Record {
                time,
                kind: Kind::Value(value),
                ttl,
            },
        );
    }
}

/// Physical time under the test's control.
struct TestClock(Arc<std::sync::atomic::AtomicU64>);

impl docdb::clock::PhysicalClock for TestClock {
    fn now_micros(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Opens (or reopens) a DocDb over an engine made by `open`.
struct Harness<E: Engine> {
    db: DocDb<E>,
}

fn options(table_ttl: Option<Ttl>, retention: Option<Duration>) -> DocDbOptions {
    DocDbOptions {
        table_ttl,
        sync_writes: false,
        history_retention: retention.unwrap_or(docdb::db::DEFAULT_HISTORY_RETENTION),
        ..DocDbOptions::default()
    }
}

/// Runs the model with 900 s of history retention: on the test's timeline (a few µs a
/// step) background compactions collect nothing, and only explicit compactions do.
fn run<E: Engine>(seed: u64, ops: usize, open: impl FnMut(Arc<GcPolicy>, Option<E>) -> E) {
    run_with_retention(seed, ops, None, |_, _| {}, open)
}

/// Runs the model; with `retention`, background compactions collect what is older than
/// "now" minus it, and reads stay at or after that. Background compactions are then paused
/// and resumed at random (`pause(engine, paused)`), as a busy machine delays them: they
/// catch up later, at a later cutoff, over files flushed long before.
fn run_with_retention<E: Engine>(
    seed: u64,
    ops: usize,
    retention: Option<Duration>,
    pause: impl Fn(&E, bool),
    mut open: impl FnMut(Arc<GcPolicy>, Option<E>) -> E,
) {
    eprintln!("model test seed {seed} ops {ops} (replay with DOCDB_MODEL_SEED={seed})");
    let mut rng = Rng::new(seed);
    let table_ttl = if rng.chance(30) {
        Some(Ttl(5 + rng.below(10) as i64))
    } else {
        None
    };
    let mut model = Model {
        table_ttl,
        docs: docs_for(ops),
        ..Model::default()
    };
    // The test's own timeline drives the clock, so background compactions (cutoff = now −
    // retention) never collect history the test still reads.
    let physical = Arc::new(std::sync::atomic::AtomicU64::new(1_000_000));
    let clock = Arc::new(HybridClock::new(Box::new(TestClock(physical.clone()))));
    let new_policy = || {
        let policy = GcPolicy::new(clock.clone());
        if retention.is_some() {
            // 20 ms of the timeline is dozens of steps, far longer than a compaction's setup.
            policy.set_flush_grace(Duration::from_millis(20));
        }
        policy
    };
    let policy = new_policy();
    let mut h = Harness {
        db: DocDb::open(
            open(policy.clone(), None),
            policy,
            options(table_ttl, retention),
        )
        .expect("open"),
    };
    let mut now = 1_000_000u64; // µs
    let mut cutoff = HybridTime::MIN;
    let mut paused = false;
    for step in 0..ops {
        now += 1 + rng.below(700);
        physical.store(now, std::sync::atomic::Ordering::SeqCst);
        let ht = HybridTime::from_micros(now);
        if let Some(retention) = retention {
            // Background compactions may have collected up to here.
            let collected = now.saturating_sub(retention.as_micros() as u64);
            cutoff = cutoff.max(HybridTime::from_micros(collected));
            h.db.maintain().expect("maintain");
            if rng.chance(1) {
                paused = !paused;
                pause(h.db.engine(), paused);
            }
        }
        match rng.below(100) {
            0..=59 => {
                let mut batch = h.db.batch(ht);
                for _ in 0..1 + rng.below(3) {
                    random_op(&mut rng, &mut batch, &mut model, ht);
                }
                batch.commit().expect("commit");
            }
            60..=63 => {
                // EXPIRE / PERSIST on a document root, only where something is live.
                let path = (rng.below(model.docs) as usize, Vec::new());
                let ttl = if rng.chance(70) {
                    Some(Ttl(1 + rng.below(8) as i64))
                } else {
                    None
                };
                let mut batch = h.db.batch(ht);
                // Only a live value at the path itself can take a merge record.
                let live = model
                    .level(&encoded(&path), ht, DocHybridTime::MIN, &[])
                    .0
                    .is_some();
                let result = batch.expire(&sub_doc_key(&path), ttl);
                assert_eq!(
                    result.is_ok(),
                    live,
                    "seed {seed} step {step}: expire of {} ({result:?})",
                    sub_doc_key(&path)
                );
                if result.is_ok() {
                    batch.commit().expect("commit");
                    model.add(
                        &path,
                        Record {
                            time: DocHybridTime::new(ht, 0),
                            kind: Kind::Merge(ttl),
                            ttl,
                        },
                    );
                }
            }
            // With background collection, explicit compactions (which flush first) are rarer,
            // so the memtable holds old writes when the background ones run.
            64..=66
                if std::env::var_os("DOCDB_MODEL_NO_COMPACT").is_none()
                    && (retention.is_none() || rng.chance(10)) =>
            {
                let back = rng.below(now - cutoff.physical_micros().min(now) + 1);
                let new_cutoff = HybridTime::from_micros(now - back).max(cutoff);
                let watch = |db: &DocDb<E>, when: &str| {
                    // DOCDB_MODEL_WATCH=d7 prints that document's records around compactions.
                    if let Ok(doc) = std::env::var("DOCDB_MODEL_WATCH") {
                        let needle = format!("\"{doc}\"");
                        let lines: Vec<String> = db
                            .dump()
                            .expect("dump")
                            .lines()
                            .filter(|l| l.contains(&needle))
                            .map(String::from)
                            .collect();
                        eprintln!(
                            "step {step} {when} compact @{new_cutoff}:\n  {}",
                            lines.join("\n  ")
                        );
                    }
                };
                watch(&h.db, "before");
                h.db.compact(new_cutoff).expect("compact");
                watch(&h.db, "after");
                cutoff = new_cutoff;
            }
            67 => {
                let old = h.db.into_engine();
                let policy = new_policy();
                let engine = open(policy.clone(), Some(old));
                h = Harness {
                    db: DocDb::open(engine, policy, options(table_ttl, retention)).expect("reopen"),
                };
                // A reopened engine compacts in the background again.
                paused = false;
            }
            _ => {
                let path = random_path(&mut rng, model.docs);
                let lo = cutoff.physical_micros();
                let t = HybridTime::from_micros(lo + rng.below(now + 2000 - lo));
                let got =
                    h.db.get(
                        &sub_doc_key(&path),
                        &ReadOptions {
                            read_ht: t,
                            table_ttl,
                            projection: None,
                        },
                    )
                    .expect("get");
                let want = model.read(&path, t);
                let context = || {
                    let doc = format!("{}", doc_key(path.0));
                    let inner = &doc["DocKey([], [".len()..doc.len() - 2];
                    let dump: String =
                        h.db.dump()
                            .expect("dump")
                            .lines()
                            .filter(|l| l.contains(inner))
                            .map(|l| format!("{l}\n"))
                            .collect();
                    let prefix = doc_key(path.0).encode();
                    let records: String = model
                        .records
                        .iter()
                        .filter(|(k, _)| k.starts_with(&prefix))
                        .flat_map(|(_, (p, rs))| {
                            rs.iter().map(move |r| {
                                format!(
                                    "  {} {} {:?} ttl {:?}\n",
                                    sub_doc_key(p),
                                    r.time,
                                    r.kind,
                                    r.ttl
                                )
                            })
                        })
                        .collect();
                    format!("table ttl {table_ttl:?}\nstored:\n{dump}model:\n{records}")
                };
                assert_eq!(
                    got.as_ref().map(|d| d.to_one_line()),
                    want.as_ref().map(|d| d.to_one_line()),
                    "seed {seed} step {step}: read of {} at {t} (cutoff {cutoff})\n{}",
                    sub_doc_key(&path),
                    context()
                );
                if rng.chance(30) {
                    // One view serving several lookups must answer as fresh lookups do.
                    let opts = ReadOptions {
                        read_ht: t,
                        table_ttl,
                        projection: None,
                    };
                    let root = doc_key(path.0).encode();
                    let other = encoded(&random_path(&mut rng, model.docs));
                    let mut view = h.db.view(&root, opts.clone()).expect("view");
                    // A background compaction between the view and a fresh lookup may drop a
                    // record that reads as nothing (a tombstone, an expired value).
                    let same = |record: Option<VisibleRecord>| match retention {
                        Some(_) => reads_as_something(record),
                        None => record,
                    };
                    for lookup in [&root, &encoded(&path), &encoded(&path), &root] {
                        let fresh = h.db.visible_record(lookup, opts.clone()).expect("fresh");
                        let viewed = view.record(lookup).expect("viewed");
                        assert_eq!(
                            same(viewed),
                            same(fresh),
                            "seed {seed} step {step}: view lookup"
                        );
                    }
                    if other.starts_with(&root) {
                        let fresh = h.db.visible_record(&other, opts.clone()).expect("fresh");
                        let viewed = view.record(&other).expect("viewed");
                        assert_eq!(same(viewed), same(fresh));
                    }
                    let viewed_doc = view.subdocument(&encoded(&path)).expect("viewed doc");
                    assert_eq!(
                        viewed_doc.map(|d| d.to_one_line()),
                        want.as_ref().map(|d| d.to_one_line()),
                        "seed {seed} step {step}: view subdocument"
                    );
                }
                if rng.chance(40) {
                    let range = random_child_range(&mut rng, want.as_ref());
                    let opts = ReadOptions {
                        read_ht: t,
                        table_ttl,
                        projection: None,
                    };
                    let children = if rng.chance(50) {
                        h.db.read_children(&encoded(&path), &range, &opts)
                    } else {
                        // Through a view that read the root first, as Redis's LPOP does.
                        let root = doc_key(path.0).encode();
                        let mut view = h.db.view(&root, opts.clone()).expect("view");
                        view.record(&root).expect("root");
                        view.children(&encoded(&path), &range)
                    };
                    let got: Vec<(Vec<u8>, String)> = children
                        .expect("read_children")
                        .into_iter()
                        .map(|(k, d)| (k.encoded(), d.to_one_line()))
                        .collect();
                    assert_eq!(
                        got,
                        expected_children(want.as_ref(), &range),
                        "seed {seed} step {step}: children of {} in {range:?} at {t}\n{}",
                        sub_doc_key(&path),
                        context()
                    );
                }
            }
        }
    }
}

/// `record` unless it reads as nothing: a tombstone or an expired value.
fn reads_as_something(record: Option<VisibleRecord>) -> Option<VisibleRecord> {
    record.filter(|r| !r.expired && r.payload != PrimitiveValue::Tombstone)
}

/// A child range with bounds taken from (or next to) the document's own child keys.
fn random_child_range(rng: &mut Rng, doc: Option<&SubDocument>) -> ChildRange {
    let keys: Vec<Vec<u8>> = match doc {
        Some(SubDocument::Object { children, .. }) => children.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let bound = |rng: &mut Rng| -> Option<Vec<u8>> {
        if keys.is_empty() || rng.chance(40) {
            return None;
        }
        let mut key = keys[rng.below(keys.len() as u64) as usize].clone();
        if rng.chance(30) {
            key.push(0);
        }
        Some(key)
    };
    ChildRange {
        lower: bound(rng),
        upper: bound(rng),
        reverse: rng.chance(50),
        limit: rng.chance(50).then(|| rng.below(4) as usize),
    }
}

/// The children of `doc` that `range` selects, as `(encoded key, one-line document)`.
fn expected_children(doc: Option<&SubDocument>, range: &ChildRange) -> Vec<(Vec<u8>, String)> {
    let Some(SubDocument::Object { children, .. }) = doc else {
        return Vec::new();
    };
    let mut selected: Vec<(Vec<u8>, String)> = children
        .iter()
        .filter(|(k, _)| range.lower.as_ref().is_none_or(|l| *k >= l))
        .filter(|(k, _)| range.upper.as_ref().is_none_or(|u| *k < u))
        .map(|(k, (_, d))| (k.clone(), d.to_one_line()))
        .collect();
    if range.reverse {
        selected.reverse();
    }
    selected.truncate(range.limit.unwrap_or(usize::MAX));
    selected
}

fn seed_and_ops(default_ops: usize) -> (u64, usize) {
    let seed = Rng::seed_from_env("DOCDB_MODEL_SEED");
    let ops = std::env::var("DOCDB_MODEL_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_ops);
    (seed, ops)
}

#[test]
fn model_on_memory_engine() {
    let (seed, ops) = seed_and_ops(10_000);
    // "Reopening" the in-memory engine copies its data into a fresh one.
    run(seed, ops, |policy, old: Option<MemEngine>| {
        let fresh = MemEngine::with_compaction_filter(Some(policy));
        if let Some(old) = old {
            let mut iter = old.iterator(engine::IterOptions::new()).expect("iter");
            let mut batch = engine::WriteBatch::new();
            iter.seek_to_first();
            while iter.valid().expect("valid") {
                batch.put(iter.key(), iter.value());
                iter.next();
            }
            fresh
                .write(&batch, engine::WriteOptions::default())
                .expect("copy");
        }
        fresh
    });
}

#[test]
fn model_on_rocksdb() {
    // DocKey bloom filters, as tables run: reads of a document become prefix seeks.
    model_on_rocksdb_with(|_| docdb::DOC_KEY_PREFIX);
}

#[test]
fn model_on_rocksdb_with_path_filters() {
    // Path bloom filters, as the Redis server runs: lookups of one path skip files.
    model_on_rocksdb_with(|_| docdb::PATH_PREFIX);
}

#[test]
fn model_on_rocksdb_switching_filters() {
    // Each reopen changes the extractor, as upgrading a data directory does: files written
    // under the other one must not answer for this one.
    model_on_rocksdb_with(|opens| {
        if opens % 2 == 0 {
            docdb::DOC_KEY_PREFIX
        } else {
            docdb::PATH_PREFIX
        }
    });
}

#[test]
fn model_on_rocksdb_collecting_in_the_background() {
    // A 5 ms history retention on the test's timeline: background compactions (often of
    // every file, so full) collect while writes, EXPIREs and PERSISTs older than their
    // cutoff sit in the memtable.
    model_on_rocksdb_retaining(|_| docdb::PATH_PREFIX, Some(Duration::from_millis(5)));
}

/// Runs the model on RocksDB, opened for the `n`th time with the extractor `prefix(n)`.
fn model_on_rocksdb_with(prefix: impl Fn(usize) -> engine::KeyPrefix) {
    model_on_rocksdb_retaining(prefix, None);
}

/// [`model_on_rocksdb_with`], with `retention` as in [`run_with_retention`].
fn model_on_rocksdb_retaining(
    prefix: impl Fn(usize) -> engine::KeyPrefix,
    retention: Option<Duration>,
) {
    let (seed, ops) = seed_and_ops(10_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_path_buf();
    let mut opens = 0;
    let pause = |engine: &engine_rocks::RocksEngine, paused: bool| {
        engine.set_auto_compactions(!paused).expect("pause");
    };
    run_with_retention(seed, ops, retention, pause, |policy, old| {
        drop(old);
        let config = engine_rocks::RocksConfig {
            compaction_filter_factory: Some(policy),
            prefix_extractor: Some(engine_rocks::PrefixExtractor::Custom(prefix(opens))),
            // Small memtables, flushed often: many files, many background compactions.
            write_buffer_size: if retention.is_some() {
                64 << 10
            } else {
                256 << 10
            },
            ..engine_rocks::RocksConfig::new(&path)
        };
        opens += 1;
        engine_rocks::RocksEngine::open(config).expect("open rocksdb")
    });
}
