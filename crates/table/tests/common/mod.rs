//! Shared helpers: a table database on the in-memory engine, reopening it, raw values,
//! single-statement writes, and RocksDB opened as the server opens it.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy};
use docdb_table::{Datum, ResultPage, Select, Table, TableDb, WriteOptions};
use dockv::HybridTime;
use engine::{Engine, EngineIterator, IterOptions, KvRead, MemEngine};
use engine_rocks::{PrefixExtractor, RocksConfig, RocksEngine};

/// A statement without TTL or timestamp.
pub const NONE: WriteOptions = WriteOptions {
    ttl: None,
    timestamp: None,
};

/// One INSERT, committed at `micros`.
pub fn insert(
    h: &Harness,
    table: &Table,
    micros: u64,
    values: &[(&str, Datum)],
    opts: WriteOptions,
) {
    let mut b = h.db.batch(at(micros));
    b.insert(table, values, &opts).expect("insert");
    b.commit().expect("commit");
}

/// The table layer over `engine` with GC policy `policy`, writes not synced (tests).
pub fn open_tables<E: Engine>(engine: E, policy: &Arc<GcPolicy>) -> TableDb<E> {
    let options = DocDbOptions {
        sync_writes: false,
        ..DocDbOptions::default()
    };
    let docdb = DocDb::open(engine, policy.clone(), options).expect("open docdb");
    TableDb::open(docdb).expect("open tables")
}

/// RocksDB as the server opens it (the GC as compaction filter, DocKey prefix bloom
/// filters), with tiny memtables so rows span several files and background compactions run.
pub fn open_rocks(path: &Path, policy: Arc<GcPolicy>) -> RocksEngine {
    let config = RocksConfig {
        compaction_filter_factory: Some(policy),
        prefix_extractor: Some(PrefixExtractor::Custom(docdb::DOC_KEY_PREFIX)),
        write_buffer_size: 32 << 10,
        block_cache_bytes: 8 << 20,
        ..RocksConfig::new(path)
    };
    RocksEngine::open(config).expect("open rocksdb")
}

/// A table database plus the GC policy its engine was opened with (needed to reopen).
pub struct Harness {
    /// Shared, as a background upkeep thread needs it.
    pub db: Arc<TableDb<MemEngine>>,
    pub policy: Arc<GcPolicy>,
}

impl Harness {
    /// An empty database with namespace `ks`.
    pub fn new() -> Self {
        let policy = GcPolicy::new(Arc::new(HybridClock::default()));
        let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
        let docdb = DocDb::open(engine, policy.clone(), DocDbOptions::default()).expect("open");
        let db = TableDb::open(docdb).expect("tables");
        db.create_namespace("ks").expect("namespace");
        Harness {
            db: Arc::new(db),
            policy,
        }
    }

    /// Closes and reopens the database on the same engine.
    pub fn reopen(self) -> Self {
        let db = Arc::try_unwrap(self.db).unwrap_or_else(|_| panic!("the database is shared"));
        let engine = db.into_docdb().into_engine();
        let docdb =
            DocDb::open(engine, self.policy.clone(), DocDbOptions::default()).expect("reopen");
        Harness {
            db: Arc::new(TableDb::open(docdb).expect("tables")),
            policy: self.policy,
        }
    }

    /// The DocDb dump.
    pub fn dump(&self) -> String {
        self.db.docdb().dump().expect("dump")
    }

    /// Full compaction with history cutoff `micros`.
    pub fn compact(&self, micros: u64) {
        self.db.docdb().compact(at(micros)).expect("compact");
    }

    /// Rows of a SELECT.
    pub fn rows(&self, table: &Table, select: &Select) -> Vec<Vec<Datum>> {
        self.page(table, select).rows
    }

    /// A page of a SELECT.
    pub fn page(&self, table: &Table, select: &Select) -> ResultPage {
        self.db.select(table, select).expect("select")
    }

    /// The newest stored value bytes of the exact key path `path` (no hybrid time).
    pub fn raw_value(&self, path: &[u8]) -> Vec<u8> {
        let engine = self.db.docdb().engine();
        let mut iter = engine.iterator(IterOptions::new()).expect("iter");
        let mut target = path.to_vec();
        target.push(b'#');
        iter.seek(&target);
        assert!(iter.valid().expect("valid") && iter.key().starts_with(&target));
        iter.value().to_vec()
    }
}

/// Hybrid time of `micros` physical µs.
pub fn at(micros: u64) -> HybridTime {
    HybridTime::from_micros(micros)
}

/// Uppercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Hex with optional spaces to bytes.
pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Dump text from expected lines.
pub fn lines(items: &[String]) -> String {
    items.iter().map(|l| format!("{l}\n")).collect()
}

/// Text datum.
pub fn t(s: &str) -> Datum {
    Datum::text(s)
}

/// The 16-bit hash of one text hash column.
pub fn hash_of(text: &str) -> u16 {
    dockv::hash::hash_columns(&[text.as_bytes()])
}
