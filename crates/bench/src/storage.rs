//! The document store against raw RocksDB (issue: "The document store on RocksDB").

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy, ReadOptions, ScanOptions};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Value};
use dockv::{DocHybridTime, HybridTime, KeyEntryType, KeyEntryValue, SortOrder};
use engine::{Engine, EngineIterator, IterOptions, KvRead, WriteBatch, WriteOptions};
use engine_rocks::{RocksConfig, RocksEngine};

/// Options of `docdb-bench storage`.
#[derive(clap::Args)]
pub struct Args {
    /// Documents to insert (4 subkeys each).
    #[arg(long, default_value_t = 1_000_000)]
    docs: u64,
    /// Random point reads.
    #[arg(long, default_value_t = 200_000)]
    reads: u64,
    /// Overwrite rounds before the GC measurement.
    #[arg(long, default_value_t = 10)]
    overwrites: u64,
    /// Documents in the deleted-scan measurement.
    #[arg(long, default_value_t = 200_000)]
    scan_docs: u64,
    /// Open DocDB without its GC compaction filter (diagnosis: what the filter costs).
    #[arg(long)]
    no_gc_filter: bool,
    /// Stop after the point reads (for profiling the read path).
    #[arg(long)]
    reads_only: bool,
    /// Run only the deleted-scan measurement (for profiling scans).
    #[arg(long)]
    scan_only: bool,
    /// Where the databases go (a temporary directory by default).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

const SUBKEYS: i32 = 4;
const CHUNK: u64 = 50_000;

fn doc_key(i: u64) -> DocKey {
    let name = format!("user{i:010}");
    let hash = dockv::hash::hash_columns(&[name.as_bytes()]);
    DocKey::with_hash(hash, vec![KeyEntryValue::string(name)], vec![])
}

fn column_value(i: u64, column: i32, round: u64) -> PrimitiveValue {
    PrimitiveValue::string(format!("value-{i:010}-{column}-{round}"))
}

fn open_docdb(dir: &Path, clock: Arc<HybridClock>, gc_filter: bool) -> Result<DocDb<RocksEngine>> {
    let policy = GcPolicy::new(clock);
    let factory: Option<Arc<dyn engine::CompactionFilterFactory>> = if gc_filter {
        Some(policy.clone())
    } else {
        None
    };
    let config = RocksConfig {
        compaction_filter_factory: factory,
        ..RocksConfig::new(dir)
    };
    let engine = RocksEngine::open(config)?;
    Ok(DocDb::open(
        engine,
        policy,
        DocDbOptions {
            sync_writes: false,
            ..DocDbOptions::default()
        },
    )?)
}

fn open_raw(dir: &Path) -> Result<RocksEngine> {
    Ok(RocksEngine::open(RocksConfig::new(dir))?)
}

/// A document's input: its key and column values, prepared outside the timed part and freed
/// after it, as the raw side's prebuilt batches are; only DocDB's own work is measured.
struct DocInput {
    key: DocKey,
    values: Vec<Value>,
}

fn doc_input(i: u64, round: u64) -> DocInput {
    DocInput {
        key: doc_key(i),
        values: (0..SUBKEYS)
            .map(|c| Value::new(column_value(i, c, round)))
            .collect(),
    }
}

/// Writes one document through DocDB: one batch of 4 subkeys at `ht`, the DocKey encoded once.
fn docdb_insert(db: &DocDb<RocksEngine>, input: &DocInput, ht: HybridTime) -> docdb::Result<()> {
    let mut path = input.key.encode();
    let doc_len = path.len();
    let mut batch = db.batch(ht);
    for (column, value) in (10..).zip(&input.values) {
        path.truncate(doc_len);
        KeyEntryValue::ColumnId(column).encode_to(&mut path);
        batch.set_encoded_path(&path, value)?;
    }
    batch.commit()?;
    Ok(())
}

/// The exact bytes DocDB writes for document `i` at `ht`, as one raw write batch.
fn raw_batch(i: u64, ht: HybridTime) -> WriteBatch {
    let doc = doc_key(i);
    let mut batch = WriteBatch::with_capacity(SUBKEYS as usize);
    for column in 0..SUBKEYS {
        let mut key =
            SubDocKey::new(doc.clone(), vec![KeyEntryValue::ColumnId(10 + column)]).encode();
        key.push(KeyEntryType::HybridTime.as_u8());
        DocHybridTime::new(ht, column as u32).encode_to(&mut key);
        batch.put(key, Value::new(column_value(i, column, 0)).encode());
    }
    batch
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Prints the table row of `count` operations timed on DocDB and on raw RocksDB (`times`):
/// both rates and their ratio, in bold with its `target` when it has one.
fn rate_row(label: &str, count: u64, times: (Duration, Duration), target: Option<&str>) {
    let (r_doc, r_raw) = (count as f64 / secs(times.0), count as f64 / secs(times.1));
    let ratio = r_doc / r_raw;
    let ratio = match target {
        Some(target) => format!("**{ratio:.2}×** (target {target})"),
        None => format!("{ratio:.2}×"),
    };
    println!("| {label} | {r_doc:.0} | {r_raw:.0} | {ratio} |");
}

/// Runs every storage measurement and prints a Markdown report.
pub fn run(args: &Args) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let root = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&root)?;
    let clock = Arc::new(HybridClock::default());
    if args.scan_only {
        return deleted_scan(args, &root, clock);
    }
    let docdb = open_docdb(&root.join("docdb"), clock.clone(), !args.no_gc_filter)?;
    let raw = open_raw(&root.join("raw"))?;
    println!(
        "## Storage: DocDB vs raw RocksDB ({} docs × {SUBKEYS} subkeys)\n",
        args.docs
    );
    println!("| measurement | DocDB | raw RocksDB | ratio (DocDB/raw, higher is better) |");
    println!("|---|---|---|---|");

    // 1. Inserts, interleaved in chunks so both see the same machine conditions; the side
    // that goes first alternates, so neither always writes while the other's flush runs.
    let (mut t_doc, mut t_raw) = (Duration::ZERO, Duration::ZERO);
    for (round, start) in (0..args.docs).step_by(CHUNK as usize).enumerate() {
        let end = (start + CHUNK).min(args.docs);
        let hts: Vec<HybridTime> = (start..end).map(|_| clock.now()).collect();
        let raw_side = |t_raw: &mut Duration| -> Result<()> {
            let batches: Vec<WriteBatch> = (start..end)
                .zip(&hts)
                .map(|(i, &ht)| raw_batch(i, ht))
                .collect();
            let t = Instant::now();
            for batch in &batches {
                raw.write(batch, WriteOptions::default())?;
            }
            *t_raw += t.elapsed();
            Ok(())
        };
        let doc_side = |t_doc: &mut Duration| -> Result<()> {
            let inputs: Vec<DocInput> = (start..end).map(|i| doc_input(i, 0)).collect();
            let t = Instant::now();
            for (input, &ht) in inputs.iter().zip(&hts) {
                docdb_insert(&docdb, input, ht)?;
            }
            *t_doc += t.elapsed();
            Ok(())
        };
        if round % 2 == 0 {
            raw_side(&mut t_raw)?;
            doc_side(&mut t_doc)?;
        } else {
            doc_side(&mut t_doc)?;
            raw_side(&mut t_raw)?;
        }
    }
    rate_row(
        &format!("insert, docs/s (one batch of {SUBKEYS} per doc, WAL on, no fsync)"),
        args.docs,
        (t_doc, t_raw),
        Some("≥ 0.9"),
    );

    // Both stores hold the same bytes; put them in the same shape.
    for engine in [docdb.engine(), &raw] {
        engine.flush()?;
        engine.wait_for_background_work()?;
    }

    // 2. Point reads of whole documents at the latest time.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let ids: Vec<u64> = (0..args.reads)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % args.docs
        })
        .collect();
    let (mut t_doc, mut t_raw, mut t_same) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut t_doc_reuse, mut t_raw_reuse) = (Duration::ZERO, Duration::ZERO);
    let read = ReadOptions::at(HybridTime::MAX);
    let mut checksum = 0usize;
    for chunk in ids.chunks(CHUNK as usize) {
        let keys: Vec<(Vec<u8>, SubDocKey)> = chunk
            .iter()
            .map(|&i| (doc_key(i).encode(), SubDocKey::new(doc_key(i), vec![])))
            .collect();
        let t = Instant::now();
        for (prefix, _) in &keys {
            checksum += raw_read(&raw, prefix)?;
        }
        t_raw += t.elapsed();
        let t = Instant::now();
        for (prefix, _) in &keys {
            checksum += raw_read(docdb.engine(), prefix)?;
        }
        t_same += t.elapsed();
        let t = Instant::now();
        for (_, path) in &keys {
            let doc = docdb.get(path, &read)?.context("document missing")?;
            checksum += matches!(doc, docdb::SubDocument::Object { ref children, .. } if children.len() == SUBKEYS as usize)
                as usize;
        }
        t_doc += t.elapsed();
        // Diagnosis: both sides keeping one iterator for the chunk, re-aimed per document.
        let t = Instant::now();
        let mut recycled = None;
        for (prefix, path) in &keys {
            let mut view = docdb.view_reusing(recycled.take(), prefix, read.clone())?;
            let doc = view
                .subdocument(&path.encode())?
                .context("document missing")?;
            checksum += matches!(doc, docdb::SubDocument::Object { ref children, .. } if children.len() == SUBKEYS as usize)
                as usize;
            recycled = Some(view.into_iterator());
        }
        t_doc_reuse += t.elapsed();
        let t = Instant::now();
        let mut iter = raw.iterator(IterOptions::new())?;
        for (prefix, _) in &keys {
            checksum += raw_read_on(&mut iter, prefix)?;
        }
        t_raw_reuse += t.elapsed();
    }
    rate_row(
        "point read of a whole document, reads/s (block cache warm)",
        args.reads,
        (t_doc, t_raw),
        Some("≥ 0.8"),
    );
    rate_row(
        "point read, the same raw iteration on DocDB's own RocksDB instance, reads/s",
        args.reads,
        (t_doc, t_same),
        None,
    );
    rate_row(
        "diagnosis: both sides on one iterator per chunk of reads, re-aimed per document \
         (`DocDb::view_reusing`, `EngineIterator::reset`), reads/s",
        args.reads,
        (t_doc_reuse, t_raw_reuse),
        None,
    );
    anyhow::ensure!(checksum > 0, "reads returned nothing");
    if args.reads_only {
        let (_, stats) = docdb.get_with_stats(&SubDocKey::new(doc_key(1), vec![]), &read)?;
        println!("\none read: {stats:?}");
        return Ok(());
    }

    // 3. On-disk size after overwrites and a GC compaction at "now".
    docdb.compact(clock.now())?;
    let single = sst_size(docdb.engine())?;
    for round in 1..=args.overwrites {
        for i in 0..args.docs {
            docdb_insert(&docdb, &doc_input(i, round), clock.now())?;
        }
    }
    docdb.flush()?;
    let before_gc = sst_size(docdb.engine())?;
    let t = Instant::now();
    let stats = docdb.compact(clock.now())?;
    let gc_time = t.elapsed();
    let after = sst_size(docdb.engine())?;
    println!(
        "| on-disk size after {} overwrites + GC at now (single version {:.1} MiB, {:.1} MiB before GC; GC took {:.1} s, dropped {} of {} versions) | {:.1} MiB | — | **{:.3}×** single version (target ≤ 1.1) |",
        args.overwrites,
        mib(single),
        mib(before_gc),
        secs(gc_time),
        stats.overwritten_dropped,
        stats.keys_seen,
        mib(after),
        after as f64 / single as f64
    );

    deleted_scan(args, &root, clock)
}

/// A database of `args.scan_docs` documents, flushed, with 90% of them deleted and flushed
/// again (not compacted), and what was timed on it before the deletes.
struct NinetyDeleted {
    db: DocDb<RocksEngine>,
    /// The full scan (the faster of two, so that the later scans' warmer caches favour
    /// neither side).
    full: TimedScan,
    /// RocksDB alone reading every pair in order (the faster of two).
    raw_full: Duration,
    deleted: u64,
}

/// Builds a [`NinetyDeleted`] database in `dir`.
fn ninety_deleted(args: &Args, dir: &Path, clock: &Arc<HybridClock>) -> Result<NinetyDeleted> {
    let db = open_docdb(dir, clock.clone(), true)?;
    for i in 0..args.scan_docs {
        docdb_insert(&db, &doc_input(i, 0), clock.now())?;
    }
    db.flush()?;
    db.engine().wait_for_background_work()?;
    let (first, second) = (timed_scan(&db)?, timed_scan(&db)?);
    let full = if first.1 <= second.1 { first } else { second };
    let raw_full = raw_read_all(db.engine())?.min(raw_read_all(db.engine())?);
    let mut deleted = 0;
    for i in (0..args.scan_docs).filter(|&i| deleted_in_scan(i)) {
        let mut batch = db.batch(clock.now());
        batch.delete(&SubDocKey::new(doc_key(i), vec![]))?;
        batch.commit()?;
        deleted += 1;
    }
    db.flush()?;
    db.engine().wait_for_background_work()?;
    Ok(NinetyDeleted {
        db,
        full,
        raw_full,
        deleted,
    })
}

/// Scans over a range where 90% of the documents are deleted (before compaction).
fn deleted_scan(args: &Args, root: &Path, clock: Arc<HybridClock>) -> Result<()> {
    let NinetyDeleted {
        db: scan_db,
        full,
        deleted,
        ..
    } = ninety_deleted(args, &root.join("scan"), &clock)?;
    eprintln!("deleted {deleted} documents; scanning");
    let sparse = timed_scan(&scan_db)?;
    anyhow::ensure!(
        sparse.0 as u64 == args.scan_docs - deleted,
        "scan returned {} documents",
        sparse.0
    );
    let per_full = secs(full.1) / full.0 as f64 * 1e6;
    let per_sparse = secs(sparse.1) / sparse.0 as f64 * 1e6;
    println!(
        "| full scan in pages of {SCAN_PAGE}, µs per returned document: {} docs, then with 90% deleted ({} returned; {} invisible entries stepped over, {} seeks) | {per_full:.2} → {per_sparse:.2} | — | **{:.2}×** slower per returned doc (target ≤ 2) |",
        args.scan_docs,
        sparse.0,
        sparse.2.invisible_stepped,
        sparse.2.seeks,
        per_sparse / per_full
    );
    // Again: the runs of deleted documents the first scan found are skipped with a seek each.
    let again = timed_scan(&scan_db)?;
    anyhow::ensure!(again.0 == sparse.0, "the second scan returned {}", again.0);
    let per_again = secs(again.1) / again.0 as f64 * 1e6;
    println!(
        "| the same 90%-deleted scan again, µs per returned document ({} runs of deleted documents skipped with one seek each, as the first scan found them; {} entries seen) | {per_again:.2} | — | **{:.2}×** the full scan's time per document |",
        again.2.spans_skipped,
        again.2.entries_seen,
        per_again / per_full
    );
    // The physical floor: RocksDB stepping over every key of the same data (no decoding).
    let t = Instant::now();
    let keys = raw_step_all(scan_db.engine())?;
    let per_raw = secs(t.elapsed()) / sparse.0 as f64 * 1e6;
    println!(
        "| raw RocksDB `next` over all {keys} keys of the 90%-deleted data (no decoding), µs per returned document | — | {per_raw:.2} | {:.2}× the full scan's time per document |",
        per_raw / per_full
    );
    drop(scan_db);
    swept_scan(args, root, &clock)?;
    front_deleted_limit_one(args, root, clock)
}

/// The same 90%-deleted scan on a second database, after the background sweep of its
/// deleted documents ran (`DocDb::sweep_deleted`, which `docdb serve` runs every second),
/// and the bound RocksDB itself puts on that scan ([`seek_floor`]).
fn swept_scan(args: &Args, root: &Path, clock: &Arc<HybridClock>) -> Result<()> {
    let NinetyDeleted {
        db, full, raw_full, ..
    } = ninety_deleted(args, &root.join("swept"), clock)?;
    let t = Instant::now();
    let swept = db.sweep_deleted(None)?;
    let sweep_ms = secs(t.elapsed()) * 1e3;
    let scan = timed_scan(&db)?;
    let per_full = secs(full.1) / full.0 as f64 * 1e6;
    let per_scan = secs(scan.1) / scan.0 as f64 * 1e6;
    println!(
        "| the 90%-deleted scan on a second database, the first after its deleted documents were swept (sweep: {sweep_ms:.0} ms, {} reads for {} deleted documents, {} runs kept), µs per returned document: no deletes, then swept | {per_full:.2} → {per_scan:.2} | — | **{:.2}×** (target ≤ 2) |",
        swept.probes,
        swept.taken,
        swept.learned,
        per_scan / per_full
    );
    seek_floor(args, &db, raw_full, per_full)
}

/// YugabyteDB issue #15098's case: the first 90% of the documents deleted in one run (a
/// queue consumed from the front), then `LIMIT 1` scans, each from the start: on a quiet
/// database, then while a producer and a consumer keep working the queue.
fn front_deleted_limit_one(args: &Args, root: &Path, clock: Arc<HybridClock>) -> Result<()> {
    let quiet = limit_one_scans(args, &root.join("front"), clock.clone(), false)?;
    println!(
        "| `LIMIT 1` scan after the first {} of {} documents were deleted (YugabyteDB #15098), ms: first, second, third | {:.3}, {:.3}, {:.3} | — | the first scan keeps the run it stepped over |",
        quiet.deleted, args.scan_docs, quiet.times[0], quiet.times[1], quiet.times[2]
    );
    let (restored, cold) = restart_limit_one(&root.join("front"), clock.clone())?;
    println!(
        "| the same queue's first `LIMIT 1` after a restart, ms: with the runs saved at a clean close, and without | {restored:.3}, {cold:.3} | — | a clean close saves the runs |"
    );
    let busy = limit_one_scans(args, &root.join("front-busy"), clock, true)?;
    println!(
        "| the same while the queue is worked (a document written at its tail and one deleted at its head every 200 µs; {} written during the scans), ms: first, second, third | {:.3}, {:.3}, {:.3} | — | runs are kept with writes under way |",
        busy.writes, busy.times[0], busy.times[1], busy.times[2]
    );
    Ok(())
}

/// Reopens the queue [`limit_one_scans`] left in `dir`, scans it once and closes it saving
/// its runs; then times the first `LIMIT 1` after reopening (the runs restored), and again
/// after a close that saved nothing (ms, in that order).
fn restart_limit_one(dir: &Path, clock: Arc<HybridClock>) -> Result<(f64, f64)> {
    let db = open_docdb(dir, clock.clone(), true)?;
    timed_limit_one(&db)?;
    anyhow::ensure!(db.save_spans()? > 0, "the scan kept no run to save");
    drop(db);
    let db = open_docdb(dir, clock.clone(), true)?;
    let restored = timed_limit_one(&db)?;
    drop(db);
    let db = open_docdb(dir, clock, true)?;
    let cold = timed_limit_one(&db)?;
    Ok((restored, cold))
}

/// A `LIMIT 1` scan from the start at [`DocDb::safe_time`], ms.
fn timed_limit_one(db: &DocDb<RocksEngine>) -> Result<f64> {
    let opts = ScanOptions {
        read: ReadOptions::at(db.safe_time()),
        limit: Some(1),
        ..ScanOptions::default()
    };
    let t = Instant::now();
    let (docs, _) = db.scan(&opts)?;
    let ms = secs(t.elapsed()) * 1e3;
    anyhow::ensure!(docs.len() == 1, "LIMIT 1 returned {} documents", docs.len());
    Ok(ms)
}

/// What [`limit_one_scans`] measured.
struct LimitOne {
    deleted: u64,
    /// Of the first three scans, ms.
    times: Vec<f64>,
    /// Writes that landed while the scans ran.
    writes: u64,
}

/// Fills a queue of `args.scan_docs` documents in `dir`, deletes its first 90% and times
/// three `LIMIT 1` scans, with a producer and a consumer at work if `busy`.
fn limit_one_scans(
    args: &Args,
    dir: &Path,
    clock: Arc<HybridClock>,
    busy: bool,
) -> Result<LimitOne> {
    let db = open_docdb(dir, clock.clone(), true)?;
    // Range keys, so that key order is insertion order (a queue's).
    let queued = |i: u64| DocKey::from_range(vec![KeyEntryValue::UInt64(i, SortOrder::Ascending)]);
    for i in 0..args.scan_docs {
        let input = DocInput {
            key: queued(i),
            ..doc_input(i, 0)
        };
        docdb_insert(&db, &input, clock.now())?;
    }
    let deleted = args.scan_docs / 10 * 9;
    for i in 0..deleted {
        let mut batch = db.batch(clock.now());
        batch.delete(&SubDocKey::new(queued(i), vec![]))?;
        batch.commit()?;
    }
    db.flush()?;
    db.engine().wait_for_background_work()?;
    let stop = AtomicBool::new(false);
    let (times, writes) = std::thread::scope(|s| -> Result<(Vec<f64>, u64)> {
        let worker = busy.then(|| {
            s.spawn(|| -> Result<u64> {
                let (mut head, mut tail, mut writes) = (deleted, args.scan_docs, 0);
                while !stop.load(Ordering::SeqCst) {
                    db.write_now(|ht| {
                        let input = DocInput {
                            key: queued(tail),
                            ..doc_input(tail, 0)
                        };
                        docdb_insert(&db, &input, ht)
                    })?;
                    db.write_now(|ht| {
                        let mut batch = db.batch(ht);
                        batch.delete(&SubDocKey::new(queued(head), vec![]))?;
                        batch.commit()
                    })?;
                    (head, tail, writes) = (head + 1, tail + 1, writes + 2);
                    std::thread::sleep(Duration::from_micros(200));
                }
                Ok(writes)
            })
        });
        let times = (0..3)
            .map(|_| timed_limit_one(&db))
            .collect::<Result<Vec<f64>>>();
        // Stopped before a failed scan returns, or the scope would wait on the worker forever.
        stop.store(true, Ordering::SeqCst);
        let times = times?;
        let writes = match worker {
            Some(worker) => worker
                .join()
                .map_err(|_| anyhow::anyhow!("the queue's worker panicked"))??,
            None => 0,
        };
        Ok((times, writes))
    })?;
    Ok(LimitOne {
        deleted,
        times,
        writes,
    })
}

/// Whether the deleted-scan measurement deletes document `i`: nine in ten, spread over the
/// key order by the DocKey's hash.
fn deleted_in_scan(i: u64) -> bool {
    !i.is_multiple_of(10)
}

/// The bound, from RocksDB alone, on a scan that seeks once per returned document (one
/// per run of deleted documents, each live one being followed by such a run): RocksDB
/// seeking to each live document and reading its pairs, against reading every document in
/// order (`raw_full`). What the seek adds to a document, over `per_full` (DocDB's full scan
/// per document), is the least such a scan's ratio exceeds 1 by.
fn seek_floor(
    args: &Args,
    db: &DocDb<RocksEngine>,
    raw_full: Duration,
    per_full: f64,
) -> Result<()> {
    let mut live: Vec<Vec<u8>> = (0..args.scan_docs)
        .filter(|&i| !deleted_in_scan(i))
        .map(|i| doc_key(i).encode())
        .collect();
    live.sort_unstable();
    let mut iter = db.engine().iterator(IterOptions::new())?;
    let mut best = Duration::MAX;
    for _ in 0..2 {
        let mut pairs = 0;
        let t = Instant::now();
        for doc in &live {
            iter.seek(doc);
            // DocKeys are prefix-free: the pairs starting with one are its document's.
            while iter.valid()? && iter.key().starts_with(doc) {
                std::hint::black_box(iter.value().to_vec());
                pairs += 1;
                iter.next();
            }
        }
        best = best.min(t.elapsed());
        anyhow::ensure!(
            pairs == live.len() * SUBKEYS as usize,
            "the seeks found {pairs} pairs"
        );
    }
    let per_in_order = secs(raw_full) / args.scan_docs as f64 * 1e6;
    let per_sought = secs(best) / live.len() as f64 * 1e6;
    let floor = 1.0 + (per_sought - per_in_order) / per_full;
    println!(
        "| raw RocksDB alone on the same database (no DocDB work), µs per document: reading every document in order before the deletes, then seeking to each of the {} left and reading it | {per_in_order:.2} → {per_sought:.2} | — | the seek adds {:.2} µs a document: a scan seeking once per returned document is at least **{floor:.2}×** the full scan (target ≤ 2) |",
        live.len(),
        per_sought - per_in_order,
    );
    Ok(())
}

/// Reads every pair of `engine` in order, copying each value, as a scan reads documents.
fn raw_read_all(engine: &RocksEngine) -> Result<Duration> {
    let mut iter = engine.iterator(IterOptions::new())?;
    let t = Instant::now();
    iter.seek_to_first();
    while iter.valid()? {
        std::hint::black_box(iter.value().to_vec());
        iter.next();
    }
    Ok(t.elapsed())
}

/// Steps an iterator over every key of `engine`; returns the number of keys.
fn raw_step_all(engine: &RocksEngine) -> Result<u64> {
    let mut iter = engine.iterator(IterOptions::new())?;
    iter.seek_to_first();
    let mut keys = 0;
    while iter.valid()? {
        keys += 1;
        iter.next();
    }
    Ok(keys)
}

/// Reads one document's pairs through a bounded iterator; returns how many it saw.
fn raw_read(raw: &RocksEngine, prefix: &[u8]) -> Result<usize> {
    let mut upper = prefix.to_vec();
    upper.push(0xFF);
    let mut iter = raw.iterator(IterOptions::new().lower(prefix.to_vec()).upper(upper))?;
    read_values(&mut iter, prefix)
}

/// [`raw_read`] on an iterator kept across reads, reset to the document's bounds.
fn raw_read_on<I: EngineIterator>(iter: &mut I, prefix: &[u8]) -> Result<usize> {
    let mut upper = prefix.to_vec();
    upper.push(0xFF);
    iter.reset(Some(prefix), Some(&upper))?;
    read_values(iter, prefix)
}

/// Copies the values of the document at `prefix` (the iterator bounded to it).
fn read_values<I: EngineIterator>(iter: &mut I, prefix: &[u8]) -> Result<usize> {
    iter.seek(prefix);
    let mut values = Vec::with_capacity(SUBKEYS as usize);
    while iter.valid()? {
        values.push(iter.value().to_vec());
        iter.next();
    }
    Ok(values.len())
}

/// Documents per scan call: a client pages through a large range rather than holding it all.
const SCAN_PAGE: usize = 10_000;

/// Documents returned, the time taken and the scan's counters.
type TimedScan = (usize, Duration, docdb::ReadStats);

/// A full scan at the latest time in pages of [`SCAN_PAGE`] documents, each resuming after
/// the last one: (documents returned, time, counters summed over the pages).
fn timed_scan(db: &DocDb<RocksEngine>) -> Result<TimedScan> {
    let mut returned = 0;
    let mut stats = docdb::ReadStats::default();
    let mut resume = None;
    let t = Instant::now();
    loop {
        let opts = ScanOptions {
            lower: resume.take(),
            read: ReadOptions::at(HybridTime::MAX),
            limit: Some(SCAN_PAGE),
            ..ScanOptions::default()
        };
        let (docs, page) = db.scan(&opts)?;
        returned += docs.len();
        stats.entries_seen += page.entries_seen;
        stats.invisible_stepped += page.invisible_stepped;
        stats.seeks += page.seeks;
        stats.spans_skipped += page.spans_skipped;
        match docs.last() {
            Some((key, _)) if docs.len() == SCAN_PAGE => {
                // Every key of a document starts with its DocKey and a byte below 0xFF.
                let mut next = key.encode();
                next.push(0xFF);
                resume = Some(next);
            }
            _ => break,
        }
    }
    Ok((returned, t.elapsed(), stats))
}

fn sst_size(engine: &RocksEngine) -> Result<u64> {
    engine.wait_for_background_work()?;
    Ok(engine
        .property_int("rocksdb.live-sst-files-size")?
        .unwrap_or(0))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}
