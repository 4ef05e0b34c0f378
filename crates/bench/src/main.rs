//! `docdb-bench`: DocDB against raw RocksDB on the same machine, in the same run, with the same
//! RocksDB options, reported as ratios (BENCHMARKS.md records the figures).
//!
//! The raw side writes and reads the *identical* key/value bytes DocDB stores, precomputed, so
//! it is the physical limit; DocDB pays for encoding, MVCC visibility and building documents.

/// The allocator `docdb` ships with, so the figures are the server's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod redis_floor;
mod storage;
mod table;

use clap::{Parser, Subcommand};

/// DocDB benchmarks.
#[derive(Parser)]
#[command(name = "docdb-bench", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Insert, point read, GC after overwrites, and scans over deleted documents.
    Storage(storage::Args),
    /// Packed vs unpacked table rows: inserts, full scans, point reads; a packed point read
    /// against a raw RocksDB get.
    Table(table::Args),
    /// What RocksDB alone does of redis-benchmark's commands (the server's bound).
    RedisFloor(redis_floor::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Storage(args) => storage::run(&args),
        Command::Table(args) => table::run(&args),
        Command::RedisFloor(args) => redis_floor::run(&args),
    }
}

/// Bloom filters on whole DocKeys, as tables use them.
fn doc_key_extractor() -> engine_rocks::PrefixExtractor {
    engine_rocks::PrefixExtractor::Custom(docdb::DOC_KEY_PREFIX)
}
