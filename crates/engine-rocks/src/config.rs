//! Configuration of a RocksDB engine: one struct with safe defaults.

use std::path::PathBuf;
use std::sync::Arc;

use engine::CompactionFilterFactory;

/// A block cache that several engines (tablets) may share.
#[derive(Clone)]
pub struct BlockCache(pub(crate) rocksdb::Cache);

impl BlockCache {
    /// An LRU cache holding up to `capacity_bytes` of uncompressed blocks.
    pub fn lru(capacity_bytes: usize) -> Self {
        Self(rocksdb::Cache::new_lru_cache(capacity_bytes))
    }

    /// Bytes currently held.
    pub fn usage(&self) -> usize {
        self.0.get_usage()
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("usage", &self.usage())
            .finish()
    }
}

/// RocksDB's compaction style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStyle {
    /// Leveled compaction: lower write amplification per byte read, but a key may move
    /// through several levels, and background compactions are practically never "full".
    Level,
    /// Universal (tiered) compaction, as YugabyteDB uses: files are merged in sorted runs,
    /// and a compaction that includes every file is "full" (so DocDB's GC may drop
    /// tombstones in it). The default.
    #[default]
    Universal,
}

/// Block compression for SST files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression.
    None,
    /// Snappy.
    Snappy,
    /// LZ4: fast to decompress, reasonable ratio. The default.
    #[default]
    Lz4,
}

impl Compression {
    pub(crate) fn to_rocks(self) -> rocksdb::DBCompressionType {
        match self {
            Compression::None => rocksdb::DBCompressionType::None,
            Compression::Snappy => rocksdb::DBCompressionType::Snappy,
            Compression::Lz4 => rocksdb::DBCompressionType::Lz4,
        }
    }
}

/// How RocksDB derives a key's prefix, for prefix bloom filters and
/// [`PrefixMode`](engine::PrefixMode).
///
/// The name is stored in every SST file; changing the extractor of an existing database is
/// safe but disables prefix filtering for files written with the old one.
#[derive(Debug, Clone, Copy)]
pub enum PrefixExtractor {
    /// The first `n` bytes; shorter keys are outside the domain.
    Fixed(usize),
    /// A caller-defined prefix (for DocDB: the encoded DocKey, or a record's whole path).
    Custom(engine::KeyPrefix),
}

impl PrefixExtractor {
    pub(crate) fn to_rocks(self) -> rocksdb::SliceTransform {
        match self {
            PrefixExtractor::Fixed(len) => rocksdb::SliceTransform::create_fixed_prefix(len),
            PrefixExtractor::Custom(prefix) => rocksdb::SliceTransform::create(
                prefix.name,
                prefix.transform,
                Some(prefix.in_domain),
            ),
        }
    }
}

/// Everything needed to open a [`RocksEngine`](crate::RocksEngine).
///
/// Build with [`RocksConfig::new`] and override fields as needed:
///
/// ```
/// # fn main() {
/// let config = engine_rocks::RocksConfig {
///     block_cache_bytes: 64 << 20,
///     ..engine_rocks::RocksConfig::new("/tmp/docdb-example")
/// };
/// # let _ = config;
/// # }
/// ```
///
/// Fixed choices (not configurable): the write-ahead log is always on (each write decides
/// whether to fsync it with [`engine::WriteOptions::sync`]); `max_subcompactions` is 1 so a
/// compaction filter sees one compaction's keys as a single ordered stream.
#[derive(Clone)]
pub struct RocksConfig {
    /// Directory of the database.
    pub path: PathBuf,
    /// Create the database if it does not exist. Default `true`.
    pub create_if_missing: bool,
    /// Capacity of the block cache this engine creates for itself when `shared_block_cache`
    /// is `None`. Default 256 MiB.
    pub block_cache_bytes: usize,
    /// A cache shared with other engines; overrides `block_cache_bytes`. Default `None`.
    pub shared_block_cache: Option<BlockCache>,
    /// Bloom filter bits per key in SST files (prefix filters when a `prefix_extractor` is
    /// set, whole-key filters otherwise); `0.0` disables them. Default 10 (about 1% false
    /// positives).
    pub bloom_bits_per_key: f64,
    /// Optional prefix extractor, enabling prefix bloom filters for prefix-bounded
    /// iteration. Default `None` (whole-key filters only).
    pub prefix_extractor: Option<PrefixExtractor>,
    /// Size of the memtable bloom filter as a fraction of `write_buffer_size` (prefixes when
    /// an extractor is set, whole keys otherwise); `0.0` disables it. Default 0.02.
    pub memtable_bloom_ratio: f64,
    /// Memtable size before it is flushed to an SST file. Default 64 MiB (RocksDB's).
    pub write_buffer_size: usize,
    /// Page size for the memtables' memory taken from the operating system's reserved huge
    /// pages (Linux: `vm.nr_hugepages`); `0` turns this off. When none are reserved or they
    /// run out, RocksDB uses ordinary memory instead, so this only tries, as PostgreSQL's
    /// `huge_pages = try`. A memtable is a skiplist walked at random: with 4 KiB pages most
    /// steps miss the TLB, which costs most in a virtual machine. Ignored for memtables
    /// smaller than [`MIN_HUGE_PAGES_PER_MEMTABLE`] pages: RocksDB rounds a memtable's arena
    /// blocks up to whole huge pages, and a small memtable would then look full at its first
    /// write and be flushed after every write. Default 2 MiB (x86-64's huge page size; it
    /// must be the system's).
    pub memtable_huge_page_size: usize,
    /// Threads for flushes and compactions together. Default 2: enough for one flush and
    /// one compaction at a time, modest on a machine hosting many engines.
    pub max_background_jobs: i32,
    /// Compaction style. Default [`CompactionStyle::Universal`], as YugabyteDB.
    pub compaction_style: CompactionStyle,
    /// SST block compression. Default [`Compression::Lz4`].
    pub compression: Compression,
    /// Collect RocksDB statistics (tickers: counts of keys, bytes, seeks, cache hits...),
    /// read through [`engine::Engine::statistics`]. Timers and histograms stay off: they read
    /// the clock around every seek and write (2% of a server's CPU). Default `true`.
    pub statistics: bool,
    /// The compaction-filter factory (DocDB's GC), if any. Default `None`.
    pub compaction_filter_factory: Option<Arc<dyn CompactionFilterFactory>>,
    /// Buffer write-ahead-log records in memory until [`engine::Engine::flush_wal`], so
    /// that a server writes the log once per group of writes. The caller must flush before
    /// acknowledging; a crash loses what was not flushed. Default `false`.
    pub manual_wal_flush: bool,
    /// Open the database read-only: no lock is taken, so another process may hold it open
    /// for writing; nothing is written (records still only in the write-ahead log are read
    /// from it into memory), and every write, flush or compaction fails. Reads see the
    /// database as it was at open. Default `false`.
    pub read_only: bool,
}

/// The smallest memtable, in huge pages, that takes its memory from huge pages.
pub const MIN_HUGE_PAGES_PER_MEMTABLE: usize = 8;

impl RocksConfig {
    /// The huge page size RocksDB gets for memtables: `memtable_huge_page_size`, or 0 when
    /// memtables are too small for it.
    pub(crate) fn huge_pages_for_memtables(&self) -> usize {
        let page = self.memtable_huge_page_size;
        if page > 0 && self.write_buffer_size >= page.saturating_mul(MIN_HUGE_PAGES_PER_MEMTABLE) {
            page
        } else {
            0
        }
    }

    /// The defaults, for a database in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            create_if_missing: true,
            block_cache_bytes: 256 << 20,
            shared_block_cache: None,
            bloom_bits_per_key: 10.0,
            prefix_extractor: None,
            memtable_bloom_ratio: 0.02,
            write_buffer_size: 64 << 20,
            memtable_huge_page_size: 2 << 20,
            max_background_jobs: 2,
            compaction_style: CompactionStyle::default(),
            compression: Compression::default(),
            statistics: true,
            compaction_filter_factory: None,
            manual_wal_flush: false,
            read_only: false,
        }
    }
}

impl std::fmt::Debug for RocksConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksConfig")
            .field("path", &self.path)
            .field("create_if_missing", &self.create_if_missing)
            .field("block_cache_bytes", &self.block_cache_bytes)
            .field("shared_block_cache", &self.shared_block_cache)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("prefix_extractor", &self.prefix_extractor)
            .field("memtable_bloom_ratio", &self.memtable_bloom_ratio)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("memtable_huge_page_size", &self.memtable_huge_page_size)
            .field("max_background_jobs", &self.max_background_jobs)
            .field("compaction_style", &self.compaction_style)
            .field("compression", &self.compression)
            .field("statistics", &self.statistics)
            .field(
                "compaction_filter_factory",
                &self.compaction_filter_factory.as_ref().map(|_| "..."),
            )
            .field("manual_wal_flush", &self.manual_wal_flush)
            .field("read_only", &self.read_only)
            .finish()
    }
}
