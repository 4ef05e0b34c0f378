//! Server-wide state shared by every connection.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use engine::Engine;
use tokio::sync::watch;

use crate::blocking::Blocking;
use crate::clients::ClientRegistry;
use crate::cmd::Table;
use crate::frame::Limits;
use crate::metrics::{Metrics, metric};
use crate::pubsub::Broker;
use crate::session::Session;
use crate::store::Store;

/// When the write-ahead log is synced (Redis's `appendfsync`). The WAL is always written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fsync {
    /// Every write is synced before it is acknowledged.
    Always,
    /// The log is synced once a second: a crash of the machine loses at most a second.
    #[default]
    EverySec,
    /// The operating system decides.
    No,
}

impl Fsync {
    /// Parses `always`, `everysec` or `no`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::EverySec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }

    /// The name CONFIG GET prints.
    pub fn name(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// Settings that CONFIG GET/SET read and change at run time.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// AUTH password; `None` lets every client in.
    pub requirepass: Option<String>,
    /// Most simultaneous clients.
    pub maxclients: usize,
    /// Request size limits.
    pub limits: Limits,
    /// When the WAL is synced.
    pub fsync: Fsync,
    /// The listen address, for INFO and CONFIG GET.
    pub listen: String,
    /// The data directory, for INFO and CONFIG GET.
    pub data_dir: String,
    /// Run every connection's writes on one writer thread (read at start).
    pub writer_thread: bool,
    /// Land the writes of connections served one request at a time together, a turn of the
    /// main runtime's worth per engine write (read at start).
    pub group_writes: bool,
    /// Worker threads of the runtime that connections judged pipelining share with the
    /// main one (see [`crate::lanes`]); 0 turns adaptive threading off (read at start).
    pub pipelined_threads: usize,
    /// The ACL file users are loaded from and saved to, if any (set at start only).
    pub aclfile: Option<String>,
    /// The TOML config file the server started with, which CONFIG REWRITE updates.
    pub config_file: Option<String>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            requirepass: None,
            maxclients: 10_000,
            limits: Limits::default(),
            fsync: Fsync::default(),
            listen: "127.0.0.1:6379".into(),
            data_dir: "./docdb-data".into(),
            writer_thread: false,
            group_writes: true,
            pipelined_threads: 0,
            aclfile: None,
            config_file: None,
        }
    }
}

/// The settings read by every request, as atomics that [`Core::update_config`] keeps equal
/// to the locked ones: a load leaves its cache line shared by every core, where taking the
/// settings' read lock writes to it (at `-P 16` that line bounced between the connection
/// threads and the writer: 15% of a connection thread's own time). Aligned to lines of its
/// own, so no counter written per request shares them.
#[repr(align(128))]
struct HotConfig {
    requirepass: AtomicBool,
    fsync_always: AtomicBool,
    max_bulk_len: AtomicUsize,
    max_multibulk_len: AtomicUsize,
    max_inline_len: AtomicUsize,
}

impl HotConfig {
    fn new(config: &RuntimeConfig) -> Self {
        let hot = HotConfig {
            requirepass: AtomicBool::new(false),
            fsync_always: AtomicBool::new(false),
            max_bulk_len: AtomicUsize::new(0),
            max_multibulk_len: AtomicUsize::new(0),
            max_inline_len: AtomicUsize::new(0),
        };
        hot.mirror(config);
        hot
    }

    fn mirror(&self, config: &RuntimeConfig) {
        let stores = [
            (&self.max_bulk_len, config.limits.max_bulk_len),
            (&self.max_multibulk_len, config.limits.max_multibulk_len),
            (&self.max_inline_len, config.limits.max_inline_len),
        ];
        for (hot, value) in stores {
            hot.store(value, Ordering::SeqCst);
        }
        self.requirepass
            .store(config.requirepass.is_some(), Ordering::SeqCst);
        self.fsync_always
            .store(config.fsync == Fsync::Always, Ordering::SeqCst);
    }

    fn limits(&self) -> Limits {
        Limits {
            max_bulk_len: self.max_bulk_len.load(Ordering::SeqCst),
            max_multibulk_len: self.max_multibulk_len.load(Ordering::SeqCst),
            max_inline_len: self.max_inline_len.load(Ordering::SeqCst),
            unauthenticated: false,
        }
    }
}

/// Everything connections share: the store, commands, subscriptions, settings, counters.
pub struct Core<E: Engine> {
    /// The Redis data.
    pub store: Store<E>,
    /// The command table.
    pub table: Table<E>,
    /// Pub/sub and MONITOR.
    pub broker: Broker,
    /// Clients blocked in blocking pops.
    pub blocking: Blocking,
    /// Lua scripts (EVAL, SCRIPT LOAD) and the one running now.
    pub scripts: crate::script::Scripts,
    /// Counters.
    pub metrics: Metrics,
    /// Commands slower than `slowlog-log-slower-than` (SLOWLOG).
    pub slowlog: crate::slowlog::SlowLog,
    /// Events slower than `latency-monitor-threshold` (LATENCY).
    pub latency: crate::latency::LatencyMonitor,
    /// CLIENT PAUSE.
    pub pause: crate::pause::Pause,
    /// CLIENT TRACKING: what tracking clients may cache.
    pub tracking: crate::tracking::Tracking,
    /// ACL users (also in the ACL file, if the server has one) and the ACL LOG.
    pub acl: crate::acl::Acl,
    config: RwLock<RuntimeConfig>,
    /// The settings every request reads, mirrored from `config`.
    hot: HotConfig,
    next_client_id: AtomicU64,
    /// Write commands run so far (the WAL group commit's sequence).
    writes_run: AtomicU64,
    /// Every write counted in `writes_run` up to this one is in the log file.
    writes_flushed: AtomicU64,
    /// ... and up to this one on the disk (`fsync always`).
    writes_synced: AtomicU64,
    /// Connected clients now.
    pub clients: AtomicUsize,
    /// Each connected client, for CLIENT LIST and CLIENT KILL.
    pub registry: ClientRegistry,
    /// When the server started.
    pub started: Instant,
    /// Turns true when the server is to stop (a signal or SHUTDOWN).
    stop: watch::Sender<bool>,
    /// Unix seconds of the last SAVE or BGSAVE that finished (LASTSAVE), or of the start.
    last_save: AtomicI64,
    /// A BGSAVE is asked for or running.
    background_save: AtomicBool,
}

impl<E: Engine> Core<E> {
    /// Server state over `store`.
    pub fn new(store: Store<E>, config: RuntimeConfig) -> Self {
        let table = Table::new();
        let metrics = Metrics::new(table.names());
        let core = Core {
            store,
            table,
            broker: Broker::default(),
            blocking: Blocking::default(),
            scripts: crate::script::Scripts::default(),
            metrics,
            slowlog: crate::slowlog::SlowLog::default(),
            latency: crate::latency::LatencyMonitor::default(),
            pause: crate::pause::Pause::default(),
            tracking: crate::tracking::Tracking::default(),
            acl: crate::acl::Acl::new(config.requirepass.as_deref()),
            hot: HotConfig::new(&config),
            config: RwLock::new(config),
            next_client_id: AtomicU64::new(1),
            writes_run: AtomicU64::new(0),
            writes_flushed: AtomicU64::new(0),
            writes_synced: AtomicU64::new(0),
            clients: AtomicUsize::new(0),
            registry: ClientRegistry::default(),
            started: Instant::now(),
            stop: watch::channel(false).0,
            last_save: AtomicI64::new(unix_seconds()),
            background_save: AtomicBool::new(false),
        };
        crate::cmd::restore_libraries(&core);
        core
    }

    /// Asks the server to stop as SIGTERM does: stop accepting, finish what connections
    /// have read, flush.
    pub fn request_stop(&self) {
        self.scripts.stop();
        // Held connections must run what they read before the server stops.
        self.pause.unpause();
        self.stop.send_replace(true);
    }

    /// Turns true once [`Core::request_stop`] is called.
    pub fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// SAVE: every write so far into the data files (RocksDB flushes its memtables) and the
    /// WAL synced. Nothing needs it to be durable: the WAL already holds every write; it
    /// makes the next start replay nothing.
    pub fn save(&self) -> docdb::Result<()> {
        let docdb = self.store.docdb();
        docdb.flush_wal(true)?;
        docdb.flush()?;
        self.last_save.store(unix_seconds(), Ordering::SeqCst);
        Ok(())
    }

    /// Asks for a background save; false if one is already asked for or running.
    pub fn request_background_save(&self) -> bool {
        !self.background_save.swap(true, Ordering::SeqCst)
    }

    /// Whether a background save is asked for or running.
    pub fn background_save_pending(&self) -> bool {
        self.background_save.load(Ordering::SeqCst)
    }

    /// Runs the background save asked for, if any (the upkeep task calls it).
    pub fn run_background_save(&self) -> docdb::Result<()> {
        if !self.background_save_pending() {
            return Ok(());
        }
        let saved = self.save();
        self.background_save.store(false, Ordering::SeqCst);
        saved
    }

    /// LASTSAVE: unix seconds of the last finished save, or of the server's start.
    pub fn last_save(&self) -> i64 {
        self.last_save.load(Ordering::SeqCst)
    }

    /// Notes a command that ran for `elapsed`: the latency monitor's `command` event and,
    /// unless `args` is empty, the slow log.
    pub fn observe_command<'a>(
        &self,
        args: &[Vec<u8>],
        elapsed: std::time::Duration,
        caller: impl FnOnce() -> crate::slowlog::Caller<'a>,
    ) {
        self.latency.observe("command", elapsed);
        if !args.is_empty() {
            self.slowlog.observe(args, elapsed, caller);
        }
    }

    /// Where client-side caching messages go.
    pub fn outlets(&self) -> crate::tracking::Outlets<'_> {
        crate::tracking::Outlets {
            registry: &self.registry,
            broker: &self.broker,
        }
    }

    /// The current settings.
    pub fn config(&self) -> RwLockReadGuard<'_, RuntimeConfig> {
        self.config.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the settings.
    pub fn update_config(&self, change: impl FnOnce(&mut RuntimeConfig)) {
        let mut config = self.config.write().unwrap_or_else(|e| e.into_inner());
        change(&mut config);
        // Under the lock, so concurrent changes mirror in the order they were made.
        self.hot.mirror(&config);
    }

    /// The request size limits (`proto-max-bulk-len` and the others), for an authenticated
    /// client.
    pub fn limits(&self) -> Limits {
        self.hot.limits()
    }

    /// Whether `session` may run only AUTH, HELLO and QUIT for now.
    pub fn needs_auth(&self, session: &Session) -> bool {
        session.needs_auth(self.hot.requirepass.load(Ordering::SeqCst))
    }

    /// Loads the ACL file (at start, and for ACL LOAD): replaces every user if the whole
    /// file is valid, else changes nothing; returns the replaced users' names (their
    /// connections are to close), or the file's errors as Redis words them. `None` when the
    /// server has no ACL file.
    pub fn load_acl_file(&self) -> Option<Result<Vec<String>, String>> {
        let (path, requirepass) = {
            let config = self.config();
            (config.aclfile.clone()?, config.requirepass.clone())
        };
        let users = crate::aclfile::load(std::path::Path::new(&path), requirepass.as_deref());
        Some(users.map(|users| self.acl.replace_users(users)))
    }

    /// Counts a write command that has run, returning its place in the group commit's
    /// sequence (for [`Session::last_write`]).
    pub fn count_write(&self) -> u64 {
        // After the write reached RocksDB's log buffer: a flush that reads this count
        // afterwards writes it out.
        self.writes_run.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Group commit: before a connection's replies go out, the WAL records of the writes it
    /// ran reach the log file (and the disk, with `fsync always`). One flush covers the
    /// writes of every connection run before it, so connections whose writes another one
    /// already flushed skip theirs.
    pub fn commit_wal(&self, session: &mut Session) -> docdb::Result<()> {
        let mine = std::mem::take(&mut session.last_write);
        let sync = self.hot.fsync_always.load(Ordering::SeqCst);
        // A flush without sync does not do for `fsync always` (CONFIG SET may switch).
        let done = if sync {
            &self.writes_synced
        } else {
            &self.writes_flushed
        };
        if mine == 0 || done.load(Ordering::SeqCst) >= mine {
            return Ok(());
        }
        let covered = self.writes_run.load(Ordering::SeqCst);
        self.store.docdb().flush_wal(sync)?;
        self.writes_flushed.fetch_max(covered, Ordering::SeqCst);
        if sync {
            self.writes_synced.fetch_max(covered, Ordering::SeqCst);
        }
        Ok(())
    }

    /// A new client id.
    pub fn next_client_id(&self) -> u64 {
        self.next_client_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Feeds MONITOR clients the command about to run (AUTH's arguments hidden).
    pub fn monitor(&self, session: &Session, args: &[Vec<u8>]) {
        if !self.broker.has_monitors() {
            return;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut line = format!(
            "{}.{:06} [{} {}]",
            now.as_secs(),
            now.subsec_micros(),
            session.db_name,
            session.addr
        );
        for (i, arg) in args.iter().enumerate() {
            if crate::slowlog::is_redacted(args, i) {
                line.push_str(" \"(redacted)\"");
                continue;
            }
            line.push_str(" \"");
            for &b in arg {
                match b {
                    b'"' => line.push_str("\\\""),
                    b'\\' => line.push_str("\\\\"),
                    b'\n' => line.push_str("\\n"),
                    b'\r' => line.push_str("\\r"),
                    b'\t' => line.push_str("\\t"),
                    0x20..=0x7e => line.push(b as char),
                    _ => {
                        let _ = write!(line, "\\x{b:02x}");
                    }
                }
            }
            line.push('"');
        }
        self.broker.feed_monitors(&line);
    }

    /// Every metric in Prometheus text format.
    pub fn render_metrics(&self) -> String {
        let mut out = String::new();
        self.metrics.render_commands(&mut out);
        metric(
            &mut out,
            "docdb_connected_clients",
            "gauge",
            "Clients connected now.",
            self.clients.load(Ordering::Relaxed),
        );
        let m = &self.metrics;
        for (name, help, value) in [
            (
                "docdb_connections_total",
                "Connections accepted.",
                &m.connections_total,
            ),
            (
                "docdb_connections_rejected_total",
                "Connections refused at the client limit.",
                &m.connections_rejected,
            ),
            (
                "docdb_protocol_errors_total",
                "Connections closed for malformed or oversized requests.",
                &m.protocol_errors,
            ),
            (
                "docdb_pipelining_connections_total",
                "Times a connection was judged pipelining (its writes then go to the writer thread).",
                &m.pipelining_connections,
            ),
            (
                "docdb_moved_connections_total",
                "Pipelining connections moved to the pipelined runtime's threads.",
                &m.moved_connections,
            ),
            (
                "docdb_pipelining_stopped_total",
                "Times a pipelining connection went back to one request per read, its writes in place again.",
                &m.pipelining_stopped,
            ),
            (
                "docdb_write_groups_total",
                "Engine writes that landed the write runs of one turn of the main runtime together.",
                &m.write_groups,
            ),
            (
                "docdb_write_group_runs_total",
                "Write runs (one connection's requests) landed in those groups.",
                &m.write_group_runs,
            ),
        ] {
            metric(
                &mut out,
                name,
                "counter",
                help,
                value.load(Ordering::Relaxed),
            );
        }
        let gc = self.store.docdb().gc_policy().stats();
        for (name, value) in [
            ("keys_seen", gc.keys_seen),
            ("overwritten_dropped", gc.overwritten_dropped),
            ("tombstones_dropped", gc.tombstones_dropped),
            ("expired_dropped", gc.expired_dropped),
            ("expired_to_tombstone", gc.expired_to_tombstone),
            ("merges_dropped", gc.merges_dropped),
        ] {
            metric(
                &mut out,
                &format!("docdb_gc_{name}_total"),
                "counter",
                "Compaction GC counter (DocDB records).",
                value,
            );
        }
        let spans = self.store.docdb().span_totals();
        metric(
            &mut out,
            "docdb_dead_spans",
            "gauge",
            "Runs of deleted documents that scans skip with one seek each.",
            spans.spans,
        );
        for (name, help, value) in [
            ("learned", "Runs kept by scans.", spans.learned),
            (
                "invalidated",
                "Runs split or cut by writes.",
                spans.invalidated,
            ),
            (
                "restored",
                "Runs taken back at start from the last clean shutdown.",
                spans.restored,
            ),
            ("skipped", "Runs scans skipped with a seek.", spans.skipped),
        ] {
            metric(
                &mut out,
                &format!("docdb_dead_spans_{name}_total"),
                "counter",
                help,
                value,
            );
        }
        let (unswept, overflowed) = self.store.docdb().sweep_queue();
        metric(
            &mut out,
            "docdb_deleted_unswept",
            "gauge",
            "Deleted documents queued for the background sweep that finds their runs.",
            unswept as u64,
        );
        metric(
            &mut out,
            "docdb_deleted_unqueued_total",
            "counter",
            "Deleted documents left to scans because the sweep's queue was full.",
            overflowed,
        );
        if let Ok(stats) = self.store.docdb().engine().statistics() {
            out.push_str(
                "# HELP docdb_engine Storage engine counters (RocksDB tickers and properties).\n",
            );
            out.push_str("# TYPE docdb_engine untyped\n");
            for (name, value) in &stats.counters {
                let _ = writeln!(out, "docdb_engine{{name=\"{name}\"}} {value}");
            }
        }
        out
    }
}

/// Seconds since the Unix epoch now.
fn unix_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
