//! `docdb serve`: the Redis-protocol server on an embedded RocksDB data directory.
//!
//! Settings come from flags, then `DOCDB_*` environment variables, then a TOML file
//! (`--config`), then defaults; every flag's help says what it does.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy};
use docdb_redis::{Core, Fsync, Limits, RuntimeConfig, Store};
use engine::CompactionFilterFactory;
use engine_rocks::{CompactionStyle, PrefixExtractor, RocksConfig, RocksEngine};
use serde::Deserialize;
use tokio::net::TcpListener;

/// Settings of `docdb serve` (each also `DOCDB_<NAME>` in the environment, or `name` in the
/// TOML file given with `--config`).
#[derive(clap::Args, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServeArgs {
    /// A TOML file of settings, keys named as these flags (`listen = "127.0.0.1:6379"`).
    /// Flags and environment variables override it.
    #[arg(long, env = "DOCDB_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// The RocksDB data directory, created if missing [default: ./docdb-data].
    #[arg(long, env = "DOCDB_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where to accept RESP clients [default: 127.0.0.1:6379]. Keep it on loopback unless
    /// a password is set.
    #[arg(long, env = "DOCDB_LISTEN")]
    pub listen: Option<String>,
    /// Where to serve Prometheus metrics (`GET /metrics`), or `off` [default:
    /// 127.0.0.1:9379].
    #[arg(long, env = "DOCDB_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
    /// Password clients must give with AUTH before any other command [default: none].
    #[arg(long, env = "DOCDB_REQUIREPASS", hide_env_values = true)]
    pub requirepass: Option<String>,
    /// An ACL file holding every user, one `user <name> <rules>` line each as ACL LIST
    /// prints them: loaded at start (which fails if the file is missing or has an error)
    /// and by ACL LOAD, written by ACL SAVE [default: none; users live in memory only].
    #[arg(long, env = "DOCDB_ACLFILE")]
    pub aclfile: Option<PathBuf>,
    /// Most simultaneous clients; more are refused with an error [default: 10000].
    #[arg(long, env = "DOCDB_MAXCLIENTS")]
    pub maxclients: Option<usize>,
    /// Largest bulk string in a request, in bytes; a larger one closes the connection
    /// [default: 536870912].
    #[arg(long, env = "DOCDB_PROTO_MAX_BULK_LEN")]
    pub proto_max_bulk_len: Option<usize>,
    /// Most arguments in one request; more closes the connection [default: 1048576].
    #[arg(long, env = "DOCDB_MAX_MULTIBULK_LEN")]
    pub max_multibulk_len: Option<usize>,
    /// When the write-ahead log is synced: `always` (before each reply), `everysec`, or `no`
    /// (left to the OS). Every write goes to the WAL in all modes [default: everysec].
    #[arg(long, env = "DOCDB_FSYNC")]
    pub fsync: Option<String>,
    /// Seconds of history kept for point-in-time reads (DOCDB.ASOF) before compaction may
    /// drop old versions [default: 900].
    #[arg(long, env = "DOCDB_HISTORY_RETENTION")]
    pub history_retention: Option<u64>,
    /// RocksDB block cache size in MiB [default: 256].
    #[arg(long, env = "DOCDB_BLOCK_CACHE_MB")]
    pub block_cache_mb: Option<usize>,
    /// Memory in MiB for the newest values of keys read more than once (strings, and
    /// collections' roots and lengths), and with `--cache-written on` of keys just written
    /// (half for each), served from memory until a write replaces them; 0 turns it off
    /// [default: 128].
    #[arg(long, env = "DOCDB_ROOT_CACHE_MB")]
    pub root_cache_mb: Option<usize>,
    /// Whether that memory keeps the values of keys just written: `on` (half of it: a GET
    /// after a SET skips RocksDB, and each write also stores its value in memory, which
    /// cost SET about 5% without pipelining and 17% at `-P 16` in BENCHMARKS.md) or `off`
    /// (all of it for keys read more than once) [default: off].
    #[arg(long, env = "DOCDB_CACHE_WRITTEN")]
    pub cache_written: Option<String>,
    /// RocksDB memtable size in MiB [default: 64].
    #[arg(long, env = "DOCDB_WRITE_BUFFER_MB")]
    pub write_buffer_mb: Option<usize>,
    /// Memtables in the OS's reserved huge pages: `try` (when Linux has some reserved with
    /// `sysctl vm.nr_hugepages=N`, 2 MiB each, ordinary memory otherwise or for memtables
    /// under 16 MiB) or `off`. Reserve about three memtables' worth (`--write-buffer-mb` × 3
    /// / 2 pages) [default: try].
    #[arg(long, env = "DOCDB_HUGE_PAGES")]
    pub huge_pages: Option<String>,
    /// RocksDB compaction style: `universal` or `level` [default: universal].
    #[arg(long, env = "DOCDB_COMPACTION")]
    pub compaction: Option<String>,
    /// Threads executing commands [default: half the CPUs, at least 1: the rest are left to
    /// RocksDB's flushes and compactions, and to clients on the same machine].
    #[arg(long, env = "DOCDB_THREADS")]
    pub threads: Option<usize>,
    /// Threads of a second runtime for connections that pipeline (adaptive threading: a
    /// connection averaging 4 or more requests per read gets the writer thread, and every
    /// other such connection moves to these threads); 0 turns it off [default: the CPUs
    /// `--threads` leaves].
    #[arg(long, env = "DOCDB_PIPELINED_THREADS")]
    pub pipelined_threads: Option<usize>,
    /// Run the writes of every connection on one writer thread, landing the runs waiting
    /// together: `on` or `off` [default: off].
    #[arg(long, env = "DOCDB_WRITER_THREAD")]
    pub writer_thread: Option<String>,
    /// Land the writes of the connections sending one request at a time together, one
    /// engine write for those of one turn of the event loop (it spares each write the
    /// engine's fixed cost), when one thread executes commands (`--threads 1`): `on` or
    /// `off` [default: on].
    #[arg(long, env = "DOCDB_GROUP_WRITES")]
    pub group_writes: Option<String>,
    /// Log filter, e.g. `info` or `docdb_redis=debug` [default: info].
    #[arg(long, env = "DOCDB_LOG")]
    pub log: Option<String>,
}

impl ServeArgs {
    /// Fills what flags and the environment left unset from the TOML file.
    fn merged(self) -> anyhow::Result<ServeArgs> {
        let Some(path) = &self.config else {
            return Ok(self);
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        let file: ServeArgs = toml::from_str(&text)
            .with_context(|| format!("parsing config file {}", path.display()))?;
        Ok(ServeArgs {
            config: self.config,
            data_dir: self.data_dir.or(file.data_dir),
            listen: self.listen.or(file.listen),
            metrics_listen: self.metrics_listen.or(file.metrics_listen),
            requirepass: self.requirepass.or(file.requirepass),
            aclfile: self.aclfile.or(file.aclfile),
            maxclients: self.maxclients.or(file.maxclients),
            proto_max_bulk_len: self.proto_max_bulk_len.or(file.proto_max_bulk_len),
            max_multibulk_len: self.max_multibulk_len.or(file.max_multibulk_len),
            fsync: self.fsync.or(file.fsync),
            history_retention: self.history_retention.or(file.history_retention),
            block_cache_mb: self.block_cache_mb.or(file.block_cache_mb),
            root_cache_mb: self.root_cache_mb.or(file.root_cache_mb),
            cache_written: self.cache_written.or(file.cache_written),
            write_buffer_mb: self.write_buffer_mb.or(file.write_buffer_mb),
            huge_pages: self.huge_pages.or(file.huge_pages),
            compaction: self.compaction.or(file.compaction),
            threads: self.threads.or(file.threads),
            pipelined_threads: self.pipelined_threads.or(file.pipelined_threads),
            writer_thread: self.writer_thread.or(file.writer_thread),
            group_writes: self.group_writes.or(file.group_writes),
            log: self.log.or(file.log),
        })
    }
}

/// Everything `serve` needs, checked.
struct Settings {
    data_dir: PathBuf,
    listen: String,
    metrics_listen: Option<String>,
    runtime: RuntimeConfig,
    history_retention: Duration,
    root_cache_bytes: usize,
    cache_written_roots: bool,
    rocks: RocksConfig,
}

fn settings(args: ServeArgs) -> anyhow::Result<Settings> {
    let defaults = Limits::default();
    let data_dir = args
        .data_dir
        .unwrap_or_else(|| PathBuf::from("./docdb-data"));
    let listen = args.listen.unwrap_or_else(|| "127.0.0.1:6379".into());
    let metrics_listen = match args.metrics_listen.as_deref() {
        Some("off") => None,
        Some(addr) => Some(addr.to_string()),
        None => Some("127.0.0.1:9379".into()),
    };
    let fsync = match args.fsync.as_deref() {
        None => Fsync::default(),
        Some(text) => Fsync::parse(text)
            .with_context(|| format!("--fsync must be always, everysec or no, not {text:?}"))?,
    };
    let compaction = match args.compaction.as_deref() {
        None | Some("universal") => CompactionStyle::Universal,
        Some("level") => CompactionStyle::Level,
        Some(other) => bail!("--compaction must be universal or level, not {other:?}"),
    };
    let mut rocks = RocksConfig::new(&data_dir);
    rocks.compaction_style = compaction;
    if let Some(mb) = args.block_cache_mb {
        rocks.block_cache_bytes = mb << 20;
    }
    if let Some(mb) = args.write_buffer_mb {
        rocks.write_buffer_size = mb.max(1) << 20;
    }
    match args.huge_pages.as_deref() {
        None | Some("try") => {}
        Some("off") => rocks.memtable_huge_page_size = 0,
        Some(other) => bail!("--huge-pages must be try or off, not {other:?}"),
    }
    let runtime = RuntimeConfig {
        requirepass: args.requirepass.filter(|p| !p.is_empty()),
        maxclients: args.maxclients.unwrap_or(10_000).max(1),
        limits: Limits {
            max_bulk_len: args.proto_max_bulk_len.unwrap_or(defaults.max_bulk_len),
            max_multibulk_len: args.max_multibulk_len.unwrap_or(defaults.max_multibulk_len),
            ..defaults
        },
        fsync,
        listen: listen.clone(),
        data_dir: data_dir.display().to_string(),
        writer_thread: on_off("--writer-thread", args.writer_thread.as_deref(), false)?,
        group_writes: on_off("--group-writes", args.group_writes.as_deref(), true)?,
        pipelined_threads: args
            .pipelined_threads
            .unwrap_or_else(|| cpus().saturating_sub(main_threads(args.threads))),
        aclfile: args.aclfile.map(|path| path.display().to_string()),
        config_file: args.config.map(|path| path.display().to_string()),
    };
    Ok(Settings {
        data_dir,
        listen,
        metrics_listen,
        runtime,
        history_retention: Duration::from_secs(args.history_retention.unwrap_or(900)),
        root_cache_bytes: args
            .root_cache_mb
            .map_or(docdb::DEFAULT_ROOT_CACHE_BYTES, |mb| mb << 20),
        cache_written_roots: on_off("--cache-written", args.cache_written.as_deref(), false)?,
        rocks,
    })
}

/// The value of the on/off setting `flag`: `default` when it is not given.
fn on_off(flag: &str, value: Option<&str>, default: bool) -> anyhow::Result<bool> {
    match value {
        None => Ok(default),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => bail!("{flag} must be on or off, not {other:?}"),
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<bool> {
    let args = args.merged()?;
    init_logging(args.log.as_deref().unwrap_or("info"));
    let threads = main_threads(args.threads);
    let settings = settings(args)?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(threads);
    let runtime = builder
        .enable_all()
        .thread_name("docdb-worker")
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(settings))?;
    Ok(true)
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The main runtime's workers: `--threads`, or half the CPUs; at least 1.
fn main_threads(threads: Option<usize>) -> usize {
    threads.unwrap_or(cpus() / 2).max(1)
}

fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn open_store(settings: &Settings) -> anyhow::Result<Store<RocksEngine>> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let factory: Arc<dyn CompactionFilterFactory> = policy.clone();
    let mut rocks = settings.rocks.clone();
    rocks.compaction_filter_factory = Some(factory);
    rocks.create_if_missing = true;
    // The server flushes the WAL once per batch of requests, before replying.
    rocks.manual_wal_flush = true;
    // Bloom filters on paths: a lookup of one field, member or element skips the files
    // without it, however large its collection.
    rocks.prefix_extractor = Some(PrefixExtractor::Custom(docdb::PATH_PREFIX));
    let engine = RocksEngine::open(rocks)
        .with_context(|| format!("opening data directory {}", settings.data_dir.display()))?;
    let options = DocDbOptions {
        history_retention: settings.history_retention,
        root_cache_bytes: settings.root_cache_bytes,
        cache_written_roots: settings.cache_written_roots,
        // Durability is the server's group commit (`Core::commit_wal`), not per write.
        sync_writes: false,
        ..DocDbOptions::default()
    };
    let db = DocDb::open(engine, policy, options)?;
    Store::open(db).map_err(|e| anyhow::anyhow!("{e}"))
}

async fn bind(addr: &str, what: &str) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen for {what} on {addr}"))?;
    let local: SocketAddr = listener.local_addr()?;
    if !local.ip().is_loopback() {
        tracing::warn!(%local, "{what} listening beyond loopback");
    }
    Ok(listener)
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let listener = bind(&settings.listen, "clients").await?;
    if settings.runtime.requirepass.is_none() && !listener.local_addr()?.ip().is_loopback() {
        tracing::warn!("no requirepass set while listening beyond loopback: anyone can connect");
    }
    let metrics = match &settings.metrics_listen {
        Some(addr) => Some(bind(addr, "metrics").await?),
        None => None,
    };
    let store = open_store(&settings)?;
    let core = Arc::new(Core::new(store, settings.runtime.clone()));
    if let Some(Err(errors)) = core.load_acl_file() {
        bail!("aborting startup because of ACL errors: {errors}");
    }
    let stopped = core.stop_signal();
    if let Some(metrics) = metrics {
        tracing::info!(addr = %metrics.local_addr()?, "metrics at /metrics");
        tokio::spawn(docdb_redis::server::serve_metrics(
            core.clone(),
            metrics,
            stopped.clone(),
        ));
    }
    tokio::spawn(docdb_redis::server::every_second(
        core.clone(),
        stopped.clone(),
    ));
    tokio::spawn(wait_for_signal(core.clone()));
    tracing::info!(
        addr = %listener.local_addr()?,
        data_dir = %settings.data_dir.display(),
        fsync = settings.runtime.fsync.name(),
        "docdb ready to accept connections"
    );
    docdb_redis::server::serve(core.clone(), listener).await?;
    finish(&core.store, &settings.data_dir)
}

/// Saves the runs of deleted documents scans found, flushes memtables and syncs the WAL, so
/// a restart replays nothing and its first scans skip those runs too.
fn finish(store: &Store<RocksEngine>, dir: &Path) -> anyhow::Result<()> {
    let docdb = store.docdb();
    docdb.flush_wal(true)?;
    let spans = docdb.save_spans()?;
    docdb.flush()?;
    tracing::info!(data_dir = %dir.display(), spans, "stopped; data flushed");
    Ok(())
}

async fn wait_for_signal(core: Arc<Core<RocksEngine>>) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            tracing::error!(error = %e, "cannot watch SIGTERM");
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received"),
        _ = term.recv() => tracing::info!("SIGTERM received"),
    }
    core.request_stop();
}
