//! Memtables in reserved huge pages (`RocksConfig::memtable_huge_page_size`). Its own test
//! binary, so no other engine in the process takes or returns huge pages while it counts
//! them.

use engine::{Engine, EngineIterator, IterOptions, KvRead, WriteBatch, WriteOptions};
use engine_rocks::{MIN_HUGE_PAGES_PER_MEMTABLE, RocksConfig, RocksEngine};

/// `HugePages_Free` of /proc/meminfo: huge pages reserved and not in use (`None` off Linux).
fn free_huge_pages() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("HugePages_Free:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Writes 30 000 keys (about 4 MiB), then reads every one back.
fn write_and_read_back(engine: &RocksEngine, keys: u32) {
    let value = [7u8; 100];
    for start in (0..keys).step_by(500) {
        let mut batch = WriteBatch::new();
        for i in start..keys.min(start + 500) {
            batch.put(key(i), value);
        }
        engine
            .write(&batch, WriteOptions::default())
            .expect("write");
    }
    for i in (0..keys).step_by(97) {
        assert_eq!(
            engine.get(&key(i)).expect("get").as_deref(),
            Some(&value[..])
        );
    }
    let mut iter = engine.iterator(IterOptions::new()).expect("iterator");
    iter.seek_to_first();
    let mut seen = 0;
    while iter.valid().expect("iterator status") {
        assert_eq!(iter.key(), key(seen));
        seen += 1;
        iter.next();
    }
    assert_eq!(seen, keys);
}

#[test]
fn memtables_use_reserved_huge_pages_when_there_are_any_and_work_either_way() {
    const PAGE: usize = 2 << 20;
    // (huge page size, memtable size, whether huge pages may be taken): on; off; and on
    // with a memtable too small for it, which must be left in ordinary memory (RocksDB's
    // rounding to whole pages would otherwise flush it after every write).
    for (huge_page_size, write_buffer_size, takes) in [
        (PAGE, PAGE * MIN_HUGE_PAGES_PER_MEMTABLE, true),
        (0, PAGE * MIN_HUGE_PAGES_PER_MEMTABLE, false),
        (PAGE, 1 << 20, false),
    ] {
        let before = free_huge_pages();
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = RocksEngine::open(RocksConfig {
            block_cache_bytes: 8 << 20,
            write_buffer_size,
            memtable_huge_page_size: huge_page_size,
            ..RocksConfig::new(dir.path())
        })
        .expect("open");
        write_and_read_back(&engine, 30_000);
        let during = free_huge_pages();
        match (before, during) {
            // Enough reserved for a memtable: the option must have taken some.
            (Some(free), Some(now)) if free >= 16 && takes => assert!(
                now < free,
                "{free} huge pages were free and the memtable took none ({now} free)"
            ),
            (Some(free), Some(now)) if !takes => assert_eq!(
                now, free,
                "huge pages taken (page {huge_page_size}, memtable {write_buffer_size})"
            ),
            // None reserved (the usual case): RocksDB falls back to ordinary memory, and
            // the writes and reads above show that it does.
            _ => {}
        }
    }
}
