//! The engine conformance suite (the same one `MemEngine` passes) against RocksDB, in
//! three configurations: defaults (universal compaction), level compaction, and with a
//! prefix extractor.

use std::ops::Deref;

use engine::testing::FilterArg;
use engine_rocks::{CompactionStyle, PrefixExtractor, RocksConfig, RocksEngine};
use tempfile::TempDir;

/// An engine in a temporary directory that is removed after the engine is closed.
pub struct TestDb {
    engine: RocksEngine,
    _dir: TempDir,
}

impl Deref for TestDb {
    type Target = RocksEngine;

    fn deref(&self) -> &RocksEngine {
        &self.engine
    }
}

fn open(filter: FilterArg, tweak: impl FnOnce(&mut RocksConfig)) -> TestDb {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RocksConfig {
        block_cache_bytes: 8 << 20,
        compaction_filter_factory: filter,
        ..RocksConfig::new(dir.path())
    };
    tweak(&mut config);
    TestDb {
        engine: RocksEngine::open(config).expect("open"),
        _dir: dir,
    }
}

mod universal {
    use super::*;

    fn make(filter: FilterArg) -> TestDb {
        open(filter, |_| {})
    }

    engine::conformance_tests!(make);
}

mod level {
    use super::*;

    fn make(filter: FilterArg) -> TestDb {
        open(filter, |c| c.compaction_style = CompactionStyle::Level)
    }

    engine::conformance_tests!(make);
}

mod prefix_extractor {
    use super::*;

    fn make(filter: FilterArg) -> TestDb {
        open(filter, |c| {
            c.prefix_extractor = Some(PrefixExtractor::Fixed(2));
            c.write_buffer_size = 1 << 20;
        })
    }

    engine::conformance_tests!(make);
}
