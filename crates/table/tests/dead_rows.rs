//! SELECT scans skip runs of rows that do not exist, as earlier scans found them
//! (`docdb::dead_spans`, the set `SpanSet::Rows(table id)`): YugabyteDB's issue #15098, a
//! `LIMIT 1` over a table whose first rows were deleted. Whatever is written into a run
//! afterwards shows up in the next scan. A randomized test checks every scan against
//! row-by-row point reads, which never use the runs.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Harness, NONE};
use docdb::{SpanSet, UpkeepOptions};
use docdb_table::{DataType, Datum, Select, Selector, Table, TableSpec, WriteOptions};
use dockv::HybridTime;
use dockv::value::Ttl;
use engine::Rng;

/// Test times start after the clock's "now" (2041): a scan keeps the runs it reads only
/// when its read time is at or after every time written, so tests choose when that holds.
const BASE_MICROS: u64 = 1 << 51;

/// Time `ms` milliseconds after [`BASE_MICROS`].
fn ms(ms: u64) -> HybridTime {
    HybridTime::from_micros(BASE_MICROS + ms * 1000)
}

const PARTITIONS: i32 = 4;
const ROWS: i32 = 15;

/// `q (h int, r int, st text STATIC, v int, PRIMARY KEY ((h), r))`.
fn table(h: &Harness, packed: bool, colocated: bool, default_ttl: bool) -> Arc<Table> {
    let spec = TableSpec::new("q")
        .hash_key("h", DataType::Int)
        .range_key("r", DataType::Int)
        .static_column("st", DataType::Text)
        .column("v", DataType::Int)
        .with_options(|o| {
            o.packed = packed;
            o.colocated = colocated;
            o.default_ttl = default_ttl.then_some(Ttl::from_secs(3600));
        });
    h.db.create_table("ks", &spec).expect("create")
}

fn key(p: i32, r: i32) -> [(&'static str, Datum); 2] {
    [("h", Datum::Int(p)), ("r", Datum::Int(r))]
}

fn insert(h: &Harness, tb: &Table, at: HybridTime, p: i32, r: i32, opts: &WriteOptions) {
    let mut b = h.db.batch(at);
    let [hk, rk] = key(p, r);
    b.insert(tb, &[hk, rk, ("v", Datum::Int(p * 100 + r))], opts)
        .expect("insert");
    b.commit().expect("commit");
}

fn delete_rows(h: &Harness, tb: &Table, at: HybridTime, p: i32, rows: std::ops::Range<i32>) {
    let mut b = h.db.batch(at);
    for r in rows {
        b.delete_row(tb, &key(p, r), &NONE).expect("delete");
    }
    b.commit().expect("commit");
}

fn put_static(h: &Harness, tb: &Table, at: HybridTime, p: i32) {
    let mut b = h.db.batch(at);
    b.insert(
        tb,
        &[("h", Datum::Int(p)), ("st", Datum::Text("s".into()))],
        &NONE,
    )
    .expect("static insert");
    b.commit().expect("commit");
}

/// The (h, r) of the rows a scan returns, with no static column selected.
fn scan(h: &Harness, tb: &Table, select: Select) -> Vec<(i32, i32)> {
    let select = select.columns(vec![
        Selector::Column("h".into()),
        Selector::Column("r".into()),
    ]);
    h.rows(tb, &select).into_iter().map(pair).collect()
}

fn pair(row: Vec<Datum>) -> (i32, i32) {
    match row.as_slice() {
        [Datum::Int(p), Datum::Int(r)] => (*p, *r),
        other => panic!("unexpected row {other:?}"),
    }
}

/// The rows that exist at `at`, read one by one, in the table's key order.
fn rows_each(h: &Harness, tb: &Table, at: HybridTime) -> Vec<(i32, i32)> {
    let mut found: Vec<(Vec<u8>, (i32, i32))> = Vec::new();
    for p in 0..PARTITIONS {
        for r in 0..ROWS {
            let k = [Datum::Int(p), Datum::Int(r)];
            if h.db.row_values(tb, &k, at).expect("row").is_some() {
                found.push((tb.doc_key(&k).expect("key").encode(), (p, r)));
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

fn rows_stats(h: &Harness, tb: &Table) -> docdb::DeadSpanStats {
    h.db.docdb().span_stats(SpanSet::Rows(tb.id()))
}

#[test]
fn a_limit_1_over_deleted_rows_skips_them_the_second_time() {
    let h = Harness::new();
    let tb = table(&h, false, false, false);
    for p in 0..PARTITIONS {
        for r in 0..ROWS {
            insert(&h, &tb, ms(1), p, r, &NONE);
        }
    }
    // Every row deleted but the last of each partition.
    for p in 0..PARTITIONS {
        delete_rows(&h, &tb, ms(2), p, 0..ROWS - 1);
    }
    let expected = rows_each(&h, &tb, ms(3));
    assert_eq!(expected.len(), PARTITIONS as usize);
    let first = scan(&h, &tb, Select::all(ms(3)).limit(1));
    assert_eq!(first, expected[..1]);
    // The runs before the first live row and before the second, which LIMIT 1 reads to
    // know whether more rows follow.
    assert_eq!(rows_stats(&h, &tb).spans, 2);
    assert_eq!(scan(&h, &tb, Select::all(ms(3))), expected);
    assert_eq!(rows_stats(&h, &tb).spans, PARTITIONS as u64);
    // Reverse, and again: the same rows.
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(scan(&h, &tb, Select::all(ms(4)).reversed()), reversed);
    assert_eq!(scan(&h, &tb, Select::all(ms(4))), expected);

    // A row inserted into a run splits it, and shows up.
    let (p, _) = expected[1];
    insert(&h, &tb, ms(5), p, 3, &NONE);
    assert_eq!(rows_stats(&h, &tb).invalidated, 1);
    let now = rows_each(&h, &tb, ms(6));
    assert_eq!(now.len(), PARTITIONS as usize + 1);
    assert_eq!(scan(&h, &tb, Select::all(ms(6))), now);
}

#[test]
fn a_static_row_ends_a_run_and_stands_alone_when_selected() {
    let h = Harness::new();
    let tb = table(&h, true, true, false);
    // Partitions in key order; the second gets a static row, so a run of deleted rows (the
    // first partition's) comes right before it.
    let mut partitions: Vec<i32> = (0..PARTITIONS).collect();
    partitions.sort_by_key(|&p| {
        tb.doc_key(&[Datum::Int(p), Datum::Int(0)])
            .expect("key")
            .encode()
    });
    let with_static = partitions[1];
    for p in 0..PARTITIONS {
        for r in 0..ROWS {
            insert(&h, &tb, ms(1), p, r, &NONE);
        }
        delete_rows(&h, &tb, ms(2), p, 0..ROWS);
    }
    put_static(&h, &tb, ms(2), with_static);
    let static_only = vec![
        Datum::Int(with_static),
        Datum::Null,
        Datum::Text("s".into()),
        Datum::Null,
    ];
    for _ in 0..2 {
        // No clustering row exists; with statics selected, the static row stands alone.
        assert!(scan(&h, &tb, Select::all(ms(3))).is_empty());
        let rows = h.rows(&tb, &Select::all(ms(3)));
        assert_eq!(rows, vec![static_only.clone()]);
        let rows = h.rows(&tb, &Select::all(ms(3)).reversed());
        assert_eq!(rows, vec![static_only.clone()]);
    }
    assert!(rows_stats(&h, &tb).spans >= 2);
}

#[test]
fn a_table_with_a_default_ttl_keeps_no_runs() {
    let h = Harness::new();
    let tb = table(&h, false, false, true);
    for r in 0..ROWS {
        insert(&h, &tb, ms(1), 0, r, &NONE);
    }
    delete_rows(&h, &tb, ms(2), 0, 0..ROWS);
    assert!(scan(&h, &tb, Select::all(ms(3))).is_empty());
    assert_eq!(rows_stats(&h, &tb).learned, 0);
    // Nor does a sweep read its rows.
    let swept = h.db.sweep_deleted(None).expect("sweep");
    assert_eq!((swept.probes, swept.unread), (0, ROWS as u64), "{swept:?}");
    assert_eq!(rows_stats(&h, &tb).learned, 0);
}

#[test]
fn random_writes_and_scans_agree_with_point_reads() {
    let seed = Rng::seed_from_env("DOCDB_DEAD_ROWS_SEED");
    let mut rng = Rng::new(seed);
    let (mut learned, mut invalidated, mut probes) = (0, 0, 0);
    for round in 0..16 {
        let h = Harness::new();
        let tb = table(&h, round % 2 == 0, round % 4 < 2, false);
        let mut now = 10;
        for step in 0..300 {
            now += 1 + rng.below(3);
            let at = ms(now);
            let p = rng.below(PARTITIONS as u64) as i32;
            let r = rng.below(ROWS as u64) as i32;
            match rng.below(13) {
                0..=3 => {
                    // Sometimes expiring within a few steps (TTLs of 1-8 ms).
                    let ttl = rng.below(3) == 0;
                    let opts = WriteOptions {
                        ttl: ttl.then(|| Ttl(1 + rng.below(8) as i64)),
                        timestamp: None,
                    };
                    insert(&h, &tb, at, p, r, &opts);
                }
                4..=6 => {
                    let end = (r + 1 + rng.below(8) as i32).min(ROWS);
                    delete_rows(&h, &tb, at, p, r..end);
                }
                7 => insert(&h, &tb, ms(now - rng.below(20).min(now - 1)), p, r, &NONE),
                8 => put_static(&h, &tb, at, p),
                9 => probes += h.db.sweep_deleted(None).expect("sweep").probes,
                _ => {
                    let read = match rng.below(4) {
                        0 => ms(now.saturating_sub(rng.below(30))),
                        1 => ms(now + rng.below(30)),
                        _ => at,
                    };
                    let reverse = rng.below(3) == 0;
                    let mut expected = rows_each(&h, &tb, read);
                    let mut select = Select::all(read);
                    if reverse {
                        expected.reverse();
                        select = select.reversed();
                    }
                    if rng.below(3) == 0 {
                        expected.truncate(1);
                        select = select.limit(1);
                    }
                    assert_eq!(
                        scan(&h, &tb, select),
                        expected,
                        "seed {seed} (DOCDB_DEAD_ROWS_SEED), round {round}, step {step}, \
                         read at {read:?}, reverse {reverse}"
                    );
                }
            }
        }
        let stats = rows_stats(&h, &tb);
        learned += stats.learned;
        invalidated += stats.invalidated;
    }
    // The runs must have been kept, and written into, for the test to mean anything.
    assert!(learned > 100, "seed {seed}: {learned} runs kept");
    assert!(invalidated > 100, "seed {seed}: {invalidated} runs split");
    assert!(probes > 50, "seed {seed}: {probes} sweep probes");
}

/// Inserts rows `0..rows` into partitions `0..partitions` at 1 and runs a SELECT (a sweep
/// serves only the kinds of scan that have run).
fn filled(h: &Harness, tb: &Table, partitions: i32, rows: i32) {
    for p in 0..partitions {
        for r in 0..rows {
            insert(h, tb, ms(1), p, r, &NONE);
        }
    }
    let all = scan(h, tb, Select::all(ms(1)));
    assert_eq!(all.len(), (partitions * rows) as usize);
}

#[test]
fn after_a_sweep_the_first_select_skips_each_run_of_deleted_rows() {
    for (packed, colocated) in [(false, false), (true, true), (false, true)] {
        let h = Harness::new();
        let tb = table(&h, packed, colocated, false);
        filled(&h, &tb, PARTITIONS, ROWS);
        // Every row but the last of each partition: one run per partition.
        for p in 0..PARTITIONS {
            delete_rows(&h, &tb, ms(2), p, 0..ROWS - 1);
        }
        let deleted = (PARTITIONS * (ROWS - 1)) as u64;
        assert_eq!(h.db.docdb().sweep_queue(), (deleted as usize, 0));
        let before = rows_stats(&h, &tb);
        let swept = h.db.sweep_deleted(None).expect("sweep");
        let case = format!("packed {packed}, colocated {colocated}: {swept:?}");
        assert_eq!(swept.taken, deleted, "{case}");
        // One read per run, from its first row; the rest of the run is held by it.
        assert_eq!(swept.probes, PARTITIONS as u64, "{case}");
        assert_eq!(swept.covered, deleted - PARTITIONS as u64, "{case}");
        assert_eq!(swept.learned, PARTITIONS as u64, "{case}");
        assert_eq!(h.db.docdb().sweep_queue(), (0, 0));
        assert_eq!(rows_stats(&h, &tb).spans, PARTITIONS as u64);

        let learned = rows_stats(&h, &tb).learned;
        let expected = rows_each(&h, &tb, ms(3));
        assert_eq!(expected.len(), PARTITIONS as usize);
        assert_eq!(scan(&h, &tb, Select::all(ms(3))), expected, "{case}");
        let after = rows_stats(&h, &tb);
        assert_eq!(after.skipped - before.skipped, PARTITIONS as u64, "{case}");
        // It read no run itself: a run read would have been kept.
        assert_eq!(after.learned, learned, "{case}");
        // Reads before the deletes do not use the runs.
        assert_eq!(
            scan(&h, &tb, Select::all(ms(1))).len(),
            (PARTITIONS * ROWS) as usize
        );
    }
}

#[test]
fn the_upkeep_thread_sweeps_deleted_rows_for_the_next_select() {
    let h = Harness::new();
    let tb = table(&h, false, true, false);
    filled(&h, &tb, PARTITIONS, ROWS);
    for p in 0..PARTITIONS {
        delete_rows(&h, &tb, ms(2), p, 0..ROWS - 1);
    }
    let options = UpkeepOptions {
        every: Duration::from_secs(3600),
        ..UpkeepOptions::default()
    };
    let upkeep = h.db.start_upkeep(options).expect("start");
    upkeep.wake();
    let deadline = Instant::now() + Duration::from_secs(60);
    while upkeep.stats().rounds == 0 {
        assert!(Instant::now() < deadline, "no upkeep round ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = upkeep.stats();
    let deleted = (PARTITIONS * (ROWS - 1)) as u64;
    assert_eq!(
        (stats.swept, stats.left, stats.failures),
        (deleted, 0, 0),
        "{stats:?}"
    );
    // The rows' runs were kept, as a sweep by the caller keeps them.
    assert_eq!(rows_stats(&h, &tb).spans, PARTITIONS as u64);
    let before = rows_stats(&h, &tb);
    assert_eq!(scan(&h, &tb, Select::all(ms(3))).len(), PARTITIONS as usize);
    assert_eq!(
        rows_stats(&h, &tb).skipped - before.skipped,
        PARTITIONS as u64
    );
}

#[test]
fn a_sweep_reads_only_the_rows_of_tables_that_were_scanned() {
    let h = Harness::new();
    let scanned = table(&h, false, true, false);
    let spec = TableSpec::new("other")
        .hash_key("h", DataType::Int)
        .range_key("r", DataType::Int)
        .column("v", DataType::Int)
        .with_options(|o| o.colocated = true);
    let other = h.db.create_table("ks", &spec).expect("create");
    filled(&h, &scanned, 1, ROWS);
    for tb in [&scanned, &other] {
        for r in 0..ROWS {
            insert(&h, tb, ms(1), 0, r, &NONE);
        }
        delete_rows(&h, tb, ms(2), 0, 0..ROWS - 1);
    }
    let swept = h.db.sweep_deleted(None).expect("sweep");
    let deleted = (ROWS - 1) as u64;
    assert_eq!(swept.taken, 2 * deleted, "{swept:?}");
    assert_eq!((swept.probes, swept.unread), (1, deleted), "{swept:?}");
    assert_eq!(rows_stats(&h, &scanned).spans, 1);
    assert_eq!(rows_stats(&h, &other).spans, 0);
    // A dropped table's rows are not read either (the drop may queue its rows too).
    h.db.drop_table("ks", "q", ms(3)).expect("drop");
    delete_rows(&h, &other, ms(4), 0, ROWS - 1..ROWS);
    let swept = h.db.sweep_deleted(None).expect("sweep");
    assert!(swept.taken >= 1, "{swept:?}");
    assert_eq!((swept.probes, swept.unread), (0, swept.taken), "{swept:?}");
}

#[test]
fn a_long_run_of_deleted_rows_is_swept_over_several_sweeps() {
    let h = Harness::new();
    let tb = table(&h, true, false, false);
    filled(&h, &tb, 1, 400);
    delete_rows(&h, &tb, ms(2), 0, 0..390);
    // With no time, each probe stops within 64 rows; the next sweep goes on from there.
    let mut sweeps = 0;
    while h.db.docdb().sweep_queue().0 > 0 {
        sweeps += 1;
        assert!(sweeps < 100, "the sweeps make no progress");
        h.db.sweep_deleted(Some(std::time::Duration::ZERO))
            .expect("sweep");
    }
    assert!(
        sweeps >= 6,
        "390 rows in steps of at most 64: {sweeps} sweeps"
    );
    let before = rows_stats(&h, &tb);
    let found = scan(&h, &tb, Select::all(ms(3)));
    assert_eq!(found, (390..400).map(|r| (0, r)).collect::<Vec<_>>());
    let skipped = rows_stats(&h, &tb).skipped - before.skipped;
    assert!(skipped >= 6, "{skipped} runs skipped");
}
