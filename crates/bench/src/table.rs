//! Tables: packed against unpacked rows, and a packed point read against a raw RocksDB `get`
//! (issue: "Tables on DocDB").
//!
//! Two tables with the same schema (one hash key, 10 regular columns) live in two RocksDB
//! instances opened like `docdb-bench storage` opens DocDB; one writes packed rows, the other
//! one cell per column plus the liveness column. Every phase runs both in interleaved chunks.
//! The raw side `get`s the exact key/value pairs the packed table stored (read back with an
//! engine iterator after the load), on the packed table's own RocksDB instance: the same
//! bytes, the same files, the same block cache.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy};
use docdb_table::read::{ReadContext, read_row};
use docdb_table::row::assemble;
use docdb_table::{DataType, Datum, Select, Table, TableDb, TableSpec, WriteOptions};
use dockv::{DocHybridTime, HybridTime};
use engine::{Engine, EngineIterator, IterOptions, KvRead};
use engine_rocks::{RocksConfig, RocksEngine};

/// Options of `docdb-bench table`.
#[derive(clap::Args)]
pub struct Args {
    /// Rows to insert into each table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Random point reads on each side.
    #[arg(long, default_value_t = 200_000)]
    reads: u64,
    /// Query layer semantics: `ysql` (packed rows V2, YugabyteDB's default packing) or
    /// `ycql` (packed rows V1).
    #[arg(long, value_enum, default_value_t = Flavour::Ysql)]
    flavour: Flavour,
    /// Rows per page of the full scans.
    #[arg(long, default_value_t = 10_000)]
    page: usize,
    /// Load, then run only this phase (for profiling): `scan`, or `reads` (the packed
    /// table's point reads and the raw gets only).
    #[arg(long, value_enum)]
    only: Option<Phase>,
    /// Open the databases with a DocKey prefix extractor (as `docdb serve` does) and add
    /// diagnosis rows: point reads through `prefix_same_as_start` iterators.
    #[arg(long)]
    prefix_bloom: bool,
    /// Where the databases go (a temporary directory by default).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// Time insert chunks without waiting for their flushes and compactions, which then
    /// run during the other table's next chunk (the method of the first measurements).
    #[arg(long)]
    overlap_background: bool,
}

/// A phase after the load.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Phase {
    Scan,
    Reads,
}

/// Which query layer's tables.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Flavour {
    Ysql,
    Ycql,
}

/// Regular columns: even ones bigint, odd ones text of 20 bytes.
const COLUMNS: usize = 10;
const CHUNK: u64 = 50_000;
/// Keys per round of the point-read measurements.
const READ_CHUNK: usize = 5_000;

fn column_names() -> Vec<String> {
    (0..COLUMNS).map(|c| format!("c{c}")).collect()
}

fn spec(name: &str, flavour: Flavour, packed: bool) -> TableSpec {
    let mut spec = TableSpec::new(name);
    if flavour == Flavour::Ysql {
        spec = spec.ysql();
    }
    spec = spec.hash_key("k", DataType::BigInt);
    for (c, name) in column_names().into_iter().enumerate() {
        let ty = if c % 2 == 0 {
            DataType::BigInt
        } else {
            DataType::Text
        };
        spec = spec.column(name, ty);
    }
    spec.with_options(|o| o.packed = packed)
}

/// The values of row `i`: its key, then 5 bigints and 5 texts of 20 bytes.
fn row_values(i: u64) -> Vec<Datum> {
    let mut values = Vec::with_capacity(COLUMNS + 1);
    values.push(Datum::BigInt(i as i64));
    for c in 0..COLUMNS {
        values.push(if c % 2 == 0 {
            Datum::BigInt((i as i64) * 1_000 + c as i64)
        } else {
            Datum::Text(format!("text-{i:010}-{c:04}"))
        });
    }
    values
}

fn open(dir: &Path, clock: Arc<HybridClock>, prefix_bloom: bool) -> Result<TableDb<RocksEngine>> {
    let policy = GcPolicy::new(clock);
    let factory: Arc<dyn engine::CompactionFilterFactory> = policy.clone();
    let config = RocksConfig {
        compaction_filter_factory: Some(factory),
        prefix_extractor: prefix_bloom.then(crate::doc_key_extractor),
        ..RocksConfig::new(dir)
    };
    let engine = RocksEngine::open(config)?;
    let docdb = DocDb::open(
        engine,
        policy,
        DocDbOptions {
            sync_writes: false,
            ..DocDbOptions::default()
        },
    )?;
    let db = TableDb::open(docdb)?;
    db.create_namespace("bench")?;
    Ok(db)
}

/// One side of the comparison: a table in its own database.
struct Side {
    db: TableDb<RocksEngine>,
    table: Arc<Table>,
}

impl Side {
    fn new(
        root: &Path,
        name: &str,
        packed: bool,
        args: &Args,
        clock: &Arc<HybridClock>,
    ) -> Result<Self> {
        let db = open(&root.join(name), clock.clone(), args.prefix_bloom)?;
        let table = db.create_table("bench", &spec(name, args.flavour, packed))?;
        Ok(Side { db, table })
    }

    fn engine(&self) -> &RocksEngine {
        self.db.docdb().engine()
    }

    /// Inserts the rows, one batch per row, then (with `settle`) waits for the flushes and
    /// compactions they started, inside the timing: each side then pays for its own
    /// background work and never runs during the other side's chunk.
    fn insert(
        &self,
        rows: &[Vec<(&str, Datum)>],
        clock: &HybridClock,
        settle: bool,
    ) -> Result<Duration> {
        let opts = WriteOptions::default();
        let t = Instant::now();
        // One batch object for the chunk, as a session keeps one: each row is still its own
        // statement, committed alone at its own hybrid time.
        let mut batch = self.db.batch(clock.now());
        for row in rows {
            batch.insert(&self.table, row, &opts)?;
            batch.commit_and_continue(clock.now())?;
        }
        if settle {
            self.engine().wait_for_background_work()?;
        }
        Ok(t.elapsed())
    }

    /// A full scan in pages; returns the rows seen and the time.
    fn scan(&self, read_ht: HybridTime, page: usize) -> Result<(u64, Duration)> {
        let t = Instant::now();
        let mut select = Select::all(read_ht).page_size(page);
        let mut rows = 0u64;
        loop {
            let result = self.db.select(&self.table, &select)?;
            rows += result.rows.len() as u64;
            match result.paging_state {
                Some(state) => select = select.after(state),
                None => break,
            }
        }
        Ok((rows, t.elapsed()))
    }

    /// Point reads through `TableDb::row_values`, each checked for all its columns.
    fn point_reads(&self, keys: &[Vec<Datum>], read_ht: HybridTime) -> Result<Duration> {
        let mut seen = 0;
        let t = Instant::now();
        // One reader per chunk of keys, as a query or a connection would keep one.
        let mut reader = self.db.reader();
        for key in keys {
            let row = reader
                .row(&self.table, key, read_ht)?
                .context("row missing")?;
            seen += row.columns.len();
        }
        let elapsed = t.elapsed();
        anyhow::ensure!(
            seen == keys.len() * COLUMNS,
            "point reads saw {seen} columns"
        );
        Ok(elapsed)
    }

    /// Point reads through a SELECT of the full key (the query path).
    fn select_reads(&self, keys: &[Vec<Datum>], read_ht: HybridTime) -> Result<Duration> {
        let mut seen = 0;
        let t = Instant::now();
        // One reader per chunk, as a connection would keep one for its queries.
        let mut reader = self.db.reader();
        for key in keys {
            let select = Select::row(&self.table, key.clone(), read_ht);
            let page = reader.select(&self.table, &select)?;
            seen += page.rows.first().context("row missing")?.len();
        }
        let elapsed = t.elapsed();
        anyhow::ensure!(
            seen == keys.len() * (COLUMNS + 1),
            "selects saw {seen} values"
        );
        Ok(elapsed)
    }

    /// What `row_values` does (DocKey, `read_row`, `assemble`), but on an iterator with
    /// `prefix_same_as_start`, so RocksDB may skip files by the DocKey prefix bloom filter.
    /// The table is not colocated, so it has no table tombstone to look up.
    fn prefix_reads(&self, keys: &[Vec<Datum>], read_ht: HybridTime) -> Result<Duration> {
        let ctx = ReadContext {
            read_ht,
            table_ttl: self.table.options().default_ttl,
            check_ttl: self.table.flavour() == docdb_table::Flavour::Ycql,
            table_tombstone: DocHybridTime::MIN,
        };
        let mut seen = 0;
        let t = Instant::now();
        for key in keys {
            let doc_key = self.table.doc_key(key)?.encode();
            let mut iter = self.engine().iterator(doc_iter_options(&doc_key, true))?;
            let cells = read_row(&mut iter, &doc_key, &ctx)?;
            seen += assemble(&self.table, &cells, &ctx)?.columns.len();
        }
        let elapsed = t.elapsed();
        anyhow::ensure!(
            seen == keys.len() * COLUMNS,
            "prefix reads saw {seen} columns"
        );
        Ok(elapsed)
    }

    /// Flushes the memtable and waits for compactions.
    fn settle(&self) -> Result<()> {
        self.engine().flush()?;
        self.engine().wait_for_background_work()?;
        Ok(())
    }

    /// SST files per non-empty level, e.g. `L0 2, L6 1`.
    fn lsm_shape(&self) -> Result<String> {
        let mut levels = Vec::new();
        for level in 0..7 {
            let property = format!("rocksdb.num-files-at-level{level}");
            match self.engine().property_int(&property)? {
                Some(files) if files > 0 => levels.push(format!("L{level} {files}")),
                _ => {}
            }
        }
        Ok(levels.join(", "))
    }

    fn sst_size(&self) -> Result<u64> {
        Ok(self
            .engine()
            .property_int("rocksdb.live-sst-files-size")?
            .unwrap_or(0))
    }
}

/// The stored key of the row document `doc_key` (its only record: a packed row).
fn stored_key(engine: &RocksEngine, doc_key: &[u8]) -> Result<Vec<u8>> {
    let mut iter = engine.iterator(IterOptions::new().lower(doc_key.to_vec()))?;
    iter.seek(doc_key);
    anyhow::ensure!(
        iter.valid()? && iter.key().starts_with(doc_key),
        "row document missing"
    );
    Ok(iter.key().to_vec())
}

/// Bounds confining an iterator to the document `doc_key`.
fn doc_iter_options(doc_key: &[u8], prefix_same_as_start: bool) -> IterOptions {
    let mut upper = doc_key.to_vec();
    upper.push(0xFF);
    IterOptions::new()
        .lower(doc_key.to_vec())
        .upper(upper)
        .prefix_same_as_start(prefix_same_as_start)
}

/// Raw `get`s of exact stored keys.
fn raw_gets(engine: &RocksEngine, keys: &[Vec<u8>]) -> Result<Duration> {
    let mut bytes = 0;
    let t = Instant::now();
    for key in keys {
        bytes += engine.get(key)?.context("raw key missing")?.len();
    }
    let elapsed = t.elapsed();
    anyhow::ensure!(bytes > 0, "raw gets returned nothing");
    Ok(elapsed)
}

/// Raw reads of each document's values through a bounded iterator, as `row_values` reads a
/// packed row (create, seek, copy the value, step past the document).
fn raw_seeks(engine: &RocksEngine, doc_keys: &[Vec<u8>], prefix: bool) -> Result<Duration> {
    let mut bytes = 0;
    let t = Instant::now();
    for doc_key in doc_keys {
        let mut iter = engine.iterator(doc_iter_options(doc_key, prefix))?;
        bytes += copy_document(&mut iter, doc_key)?;
    }
    let elapsed = t.elapsed();
    anyhow::ensure!(bytes > 0, "raw seeks returned nothing");
    Ok(elapsed)
}

/// Seeks `iter` (bounded to one document) to `doc_key` and copies every value up to the
/// bound; returns the bytes copied.
fn copy_document<I: EngineIterator>(iter: &mut I, doc_key: &[u8]) -> Result<usize> {
    let mut bytes = 0;
    iter.seek(doc_key);
    while iter.valid()? {
        bytes += iter.value().to_vec().len();
        iter.next();
    }
    Ok(bytes)
}

/// Raw reads of each document's values through one iterator reset to the document's
/// bounds per read ([`EngineIterator::reset`]), as [`RowReader`](docdb_table::RowReader)
/// reads.
fn raw_resets(engine: &RocksEngine, doc_keys: &[Vec<u8>]) -> Result<Duration> {
    let mut bytes = 0;
    let mut upper = Vec::new();
    let t = Instant::now();
    let mut iter = engine.iterator(IterOptions::new())?;
    for doc_key in doc_keys {
        upper.clear();
        upper.extend_from_slice(doc_key);
        upper.push(0xFF);
        iter.reset(Some(doc_key), Some(&upper))?;
        bytes += copy_document(&mut iter, doc_key)?;
    }
    let elapsed = t.elapsed();
    anyhow::ensure!(bytes > 0, "raw resets returned nothing");
    Ok(elapsed)
}

/// One point-read measurement.
#[derive(Clone, Copy)]
enum ReadKind {
    RawGet,
    RawSeek,
    RawReset,
    RawPrefixSeek,
    Packed,
    Unpacked,
    Select,
    Prefix,
}

/// Accumulated times of the point-read phase.
#[derive(Default)]
struct ReadTimes {
    raw_get: Duration,
    raw_seek: Duration,
    raw_reset: Duration,
    raw_prefix_seek: Duration,
    packed: Duration,
    unpacked: Duration,
    select: Duration,
    prefix: Duration,
}

fn random_ids(count: u64, rows: u64) -> Vec<u64> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % rows
        })
        .collect()
}

fn per_sec(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn micros_per(d: Duration, n: u64) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// Runs every table measurement and prints a Markdown report.
pub fn run(args: &Args) -> Result<()> {
    anyhow::ensure!(
        args.rows > 0 && args.reads > 0,
        "--rows and --reads must be positive"
    );
    let temp = tempfile::tempdir()?;
    let root = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&root)?;
    let clock = Arc::new(HybridClock::default());
    let packed = Side::new(&root, "packed", true, args, &clock)?;
    let unpacked = Side::new(&root, "unpacked", false, args, &clock)?;
    let names = column_names();
    let names: Vec<&str> = std::iter::once("k")
        .chain(names.iter().map(String::as_str))
        .collect();
    let flavour = match args.flavour {
        Flavour::Ysql => "YSQL, packed rows V2",
        Flavour::Ycql => "YCQL, packed rows V1",
    };
    println!(
        "## Tables: packed vs unpacked rows ({flavour}; {} rows × {COLUMNS} regular columns)\n",
        args.rows
    );
    println!("| measurement | packed | unpacked / raw | ratio (higher is better) |");
    println!("|---|---|---|---|");

    // 1. Inserts, interleaved in chunks (the first side alternates per chunk).
    let (mut t_packed, mut t_unpacked) = (Duration::ZERO, Duration::ZERO);
    let mut start = 0;
    let load = Instant::now();
    while start < args.rows {
        let end = (start + CHUNK).min(args.rows);
        let rows: Vec<Vec<(&str, Datum)>> = (start..end)
            .map(|i| names.iter().copied().zip(row_values(i)).collect())
            .collect();
        let settle = !args.overlap_background;
        if (start / CHUNK).is_multiple_of(2) {
            t_packed += packed.insert(&rows, &clock, settle)?;
            t_unpacked += unpacked.insert(&rows, &clock, settle)?;
        } else {
            t_unpacked += unpacked.insert(&rows, &clock, settle)?;
            t_packed += packed.insert(&rows, &clock, settle)?;
        }
        start = end;
        eprint!(
            "\rinserted {end}/{} rows in each table ({:.0} s)",
            args.rows,
            load.elapsed().as_secs_f64()
        );
    }
    eprintln!();
    let (r_packed, r_unpacked) = (per_sec(args.rows, t_packed), per_sec(args.rows, t_unpacked));
    println!(
        "| insert, rows/s (one batch per row, WAL on, no fsync; {}) | {r_packed:.0} | {r_unpacked:.0} | **{:.2}×** packed/unpacked (target ≥ 2) |",
        if args.overlap_background {
            "background work overlapping the other table's chunks"
        } else {
            "each chunk timed until its own flushes and compactions finish"
        },
        r_packed / r_unpacked
    );
    for side in [&packed, &unpacked] {
        side.settle()?;
    }
    let read_ht = clock.now();
    let (s_packed, s_unpacked) = (packed.sst_size()?, unpacked.sst_size()?);
    println!(
        "| on-disk size after flush, MiB (SST files per level: packed {}; unpacked {}) | {:.1} | {:.1} | {:.2}× smaller |",
        packed.lsm_shape()?,
        unpacked.lsm_shape()?,
        mib(s_packed),
        mib(s_unpacked),
        s_unpacked as f64 / s_packed as f64
    );

    if args.only != Some(Phase::Reads) {
        // 2. Full scans: two rounds, alternating which side goes first.
        let (mut t_packed, mut t_unpacked) = (Duration::ZERO, Duration::ZERO);
        for round in 0..2 {
            let order = if round == 0 {
                [&packed, &unpacked]
            } else {
                [&unpacked, &packed]
            };
            for side in order {
                let (rows, t) = side.scan(read_ht, args.page)?;
                anyhow::ensure!(rows == args.rows, "scan returned {rows} rows");
                if std::ptr::eq(side, &packed) {
                    t_packed += t;
                } else {
                    t_unpacked += t;
                }
            }
            eprintln!("scan round {} done", round + 1);
        }
        let (p, u) = (
            micros_per(t_packed, 2 * args.rows),
            micros_per(t_unpacked, 2 * args.rows),
        );
        println!(
            "| full scan (SELECT *, pages of {}), µs per row | {p:.2} | {u:.2} | **{:.2}×** packed/unpacked (target ≥ 3) |",
            args.page,
            u / p
        );
    }

    if args.only != Some(Phase::Reads) {
        front_deleted_limit_one(&packed, args, &clock, true)?;
        front_deleted_limit_one(&packed, args, &clock, false)?;
    }
    if args.only == Some(Phase::Scan) {
        return Ok(());
    }

    // 3. Point reads by full primary key, and raw reads of the packed rows' stored bytes.
    let reads_only = args.only == Some(Phase::Reads);
    let ids = random_ids(args.reads, args.rows);
    let mut t = ReadTimes::default();
    // Each chunk runs every measurement on the same keys, starting with a different one per
    // chunk, so none is always first (cold CPU caches) or always after another.
    let mut kinds = vec![ReadKind::RawGet, ReadKind::Packed];
    if !reads_only {
        kinds.extend([
            ReadKind::RawSeek,
            ReadKind::RawReset,
            ReadKind::Unpacked,
            ReadKind::Select,
        ]);
        if args.prefix_bloom {
            kinds.extend([ReadKind::RawPrefixSeek, ReadKind::Prefix]);
        }
    }
    let mut done = 0;
    for (n, chunk) in ids.chunks(READ_CHUNK).enumerate() {
        let keys: Vec<Vec<Datum>> = chunk
            .iter()
            .map(|&i| vec![Datum::BigInt(i as i64)])
            .collect();
        let doc_keys: Vec<Vec<u8>> = keys
            .iter()
            .map(|key| Ok(packed.table.doc_key(key)?.encode()))
            .collect::<Result<_>>()?;
        let raw_keys: Vec<Vec<u8>> = doc_keys
            .iter()
            .map(|doc_key| stored_key(packed.engine(), doc_key))
            .collect::<Result<_>>()?;
        for k in 0..kinds.len() {
            match kinds[(n + k) % kinds.len()] {
                ReadKind::RawGet => t.raw_get += raw_gets(packed.engine(), &raw_keys)?,
                ReadKind::Packed => t.packed += packed.point_reads(&keys, read_ht)?,
                ReadKind::RawSeek => t.raw_seek += raw_seeks(packed.engine(), &doc_keys, false)?,
                ReadKind::RawReset => t.raw_reset += raw_resets(packed.engine(), &doc_keys)?,
                ReadKind::Unpacked => t.unpacked += unpacked.point_reads(&keys, read_ht)?,
                ReadKind::Select => t.select += packed.select_reads(&keys, read_ht)?,
                ReadKind::RawPrefixSeek => {
                    t.raw_prefix_seek += raw_seeks(packed.engine(), &doc_keys, true)?
                }
                ReadKind::Prefix => t.prefix += packed.prefix_reads(&keys, read_ht)?,
            }
        }
        done += chunk.len();
        if done % 50_000 < READ_CHUNK || done == ids.len() {
            eprint!("\rpoint reads {done}/{}", args.reads);
        }
    }
    eprintln!();
    let rate = |d: Duration| per_sec(args.reads, d);
    let (r_packed, r_raw) = (rate(t.packed), rate(t.raw_get));
    if !reads_only {
        let r_unpacked = rate(t.unpacked);
        println!(
            "| point read by primary key (`RowReader::row`), reads/s (block cache warm) | {r_packed:.0} | {r_unpacked:.0} | **{:.2}×** packed/unpacked (target ≥ 1.5) |",
            r_packed / r_unpacked
        );
    }
    println!(
        "| point read of a packed row (`RowReader::row`) vs raw RocksDB `get` of its stored key/value, same instance, reads/s | {r_packed:.0} | {r_raw:.0} | **{:.2}×** table/raw (target ≥ 0.8) |",
        r_packed / r_raw
    );
    if !reads_only {
        let r_select = rate(t.select);
        println!(
            "| point read of a packed row as `SELECT * WHERE k = ?` (`RowReader::select`) vs raw `get`, reads/s | {r_select:.0} | {r_raw:.0} | {:.2}× table/raw |",
            r_select / r_raw
        );
        let r_seek = rate(t.raw_seek);
        println!(
            "| diagnosis: raw bounded iterator (create, seek to the DocKey, read the value) vs raw `get`, reads/s | {r_seek:.0} | {r_raw:.0} | {:.2}× seek/get |",
            r_seek / r_raw
        );
        let r_reset = rate(t.raw_reset);
        println!(
            "| diagnosis: one raw iterator reset to each DocKey's bounds (as `RowReader`), seek, read the value, vs raw `get`, reads/s | {r_reset:.0} | {r_raw:.0} | {:.2}× reset/get |",
            r_reset / r_raw
        );
        if args.prefix_bloom {
            let (r_prefix, r_pseek) = (rate(t.prefix), rate(t.raw_prefix_seek));
            println!(
                "| diagnosis: the raw iterator with `prefix_same_as_start` (DocKey prefix bloom) vs raw `get`, reads/s | {r_pseek:.0} | {r_raw:.0} | {:.2}× seek/get |",
                r_pseek / r_raw
            );
            println!(
                "| diagnosis: `row_values`' own steps (`read_row` + `assemble`) on a `prefix_same_as_start` iterator vs raw `get`, reads/s | {r_prefix:.0} | {r_raw:.0} | {:.2}× table/raw |",
                r_prefix / r_raw
            );
        }
    }
    Ok(())
}

/// YugabyteDB issue #15098's case in a table: `queue (k bigint, v bigint, PRIMARY KEY (k
/// ASC))`, colocated in `side`'s database, its first 90% of rows deleted (a queue consumed from the
/// front), flushed, then `SELECT * LIMIT 1` three times. With `sweep`, the table is read once
/// before the deletes (as a server's SELECTs would) and the deleted rows are swept
/// ([`TableDb::sweep_deleted`]) before the three SELECTs.
fn front_deleted_limit_one(
    side: &Side,
    args: &Args,
    clock: &HybridClock,
    sweep: bool,
) -> Result<()> {
    let rows = args.rows.min(200_000);
    let mut spec = TableSpec::new(if sweep { "swept_queue" } else { "queue" });
    if args.flavour == Flavour::Ysql {
        spec = spec.ysql();
    }
    let spec = spec
        .range_key("k", DataType::BigInt)
        .column("v", DataType::BigInt)
        .with_options(|o| {
            o.packed = true;
            // The side's own table owns the database's un-prefixed key space.
            o.colocated = true;
        });
    let table = side.db.create_table("bench", &spec)?;
    let key = |i: u64| ("k", Datum::BigInt(i as i64));
    let mut batch = side.db.batch(clock.now());
    for i in 0..rows {
        batch.insert(
            &table,
            &[key(i), ("v", Datum::BigInt(i as i64))],
            &WriteOptions::default(),
        )?;
        batch.commit_and_continue(clock.now())?;
    }
    if sweep {
        side.db.select(&table, &Select::all(clock.now()).limit(1))?;
    }
    let deleted = rows / 10 * 9;
    for i in 0..deleted {
        batch.delete_row(&table, &[key(i)], &WriteOptions::default())?;
        batch.commit_and_continue(clock.now())?;
    }
    batch.commit()?;
    side.db.docdb().flush()?;
    side.engine().wait_for_background_work()?;
    let mut label = String::new();
    if sweep {
        let t = Instant::now();
        let swept = side.db.sweep_deleted(None)?;
        label = format!(
            ", after a sweep of {:.0} ms ({} probes)",
            t.elapsed().as_secs_f64() * 1e3,
            swept.probes
        );
    }
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let found = side.db.select(&table, &Select::all(clock.now()).limit(1))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(
            found.rows.first().and_then(|row| row.first()) == Some(&Datum::BigInt(deleted as i64)),
            "LIMIT 1 returned {:?}",
            found.rows
        );
    }
    let note = if sweep {
        "the sweep kept the run before the first scan"
    } else {
        "the first scan keeps the run it stepped over"
    };
    println!(
        "| `SELECT * LIMIT 1` after the first {deleted} of {rows} rows were deleted (YugabyteDB #15098){label}, ms: first, second, third | {:.3}, {:.3}, {:.3} | — | {note} |",
        times[0], times[1], times[2]
    );
    Ok(())
}
