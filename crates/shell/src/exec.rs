//! Executing commands: a [`Shell`] owns a [`DocDb`] and turns each [`Command`] into an
//! [`Output`] value. Nothing here prints; rendering an output is its `Display`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use docdb::clock::HybridClock;
use docdb::write_batch::DocWriteBatch;
use docdb::{DocDb, DocDbOptions, GcPolicy, ScanOptions, SubDocument};
use dockv::doc_key::DocKey;
use dockv::value::{Value, ValueControlFields};
use engine::{CompactionFilterFactory, Engine, MemEngine};

use crate::command::{Command, ScanCommand, ShellOption, WriteCommand, WriteOp};
use crate::error::Result;
use crate::parser::parse_command;

/// What a command produced, before it is rendered.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Nothing to print (`write`, `compact`, `flush`, `set option`, comments).
    Nothing,
    /// Ready-made lines (`dump`, `explain write`); may be empty.
    Text(String),
    /// The result of a `get`.
    Document(SubDocument),
    /// A `get` that found nothing visible.
    NotFound,
    /// The result of a `scan`, in output order.
    Documents(Vec<(DocKey, SubDocument)>),
}

/// Renders the output exactly as the shell prints it: every line ends with `\n`, and an
/// output with nothing to show renders as the empty string.
impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Output::Nothing => Ok(()),
            Output::Text(text) => {
                f.write_str(text)?;
                if !text.is_empty() && !text.ends_with('\n') {
                    f.write_str("\n")?;
                }
                Ok(())
            }
            Output::Document(doc) => writeln!(f, "{doc}"),
            Output::NotFound => f.write_str("not found\n"),
            Output::Documents(docs) => {
                for (key, doc) in docs {
                    writeln!(f, "{key} -> {}", doc.to_one_line())?;
                }
                Ok(())
            }
        }
    }
}

/// The options a shell opens its database with: DocDB's defaults, except that background
/// compactions keep all history. Only an explicit `compact @CUTOFF` collects garbage, so a
/// scenario written at small hybrid times (`@1000`) is not collected behind the user's back
/// by a compaction whose cutoff comes from the wall clock.
pub fn shell_db_options() -> DocDbOptions {
    DocDbOptions {
        // `GcPolicy` computes `now - retention` in µs, saturating at zero: no history is
        // ever below that cutoff.
        history_retention: Duration::from_micros(u64::MAX),
        ..DocDbOptions::default()
    }
}

/// A shell session: one database and the commands run against it.
pub struct Shell<E: Engine> {
    db: DocDb<E>,
    /// Read counters of the last `scan`, for `stats`.
    last_scan: std::sync::Mutex<docdb::ReadStats>,
    /// A temporary database directory, removed when the shell is dropped. Declared after
    /// `db` so that the engine is closed first.
    _temp_dir: Option<tempfile::TempDir>,
}

impl<E: Engine> fmt::Debug for Shell<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shell")
            .field("temp_dir", &self._temp_dir)
            .finish_non_exhaustive()
    }
}

impl Shell<MemEngine> {
    /// A shell over a fresh in-memory database whose compactions run DocDB's GC.
    pub fn in_memory() -> Result<Self> {
        let policy = GcPolicy::new(Arc::new(HybridClock::default()));
        let factory: Arc<dyn CompactionFilterFactory> = policy.clone();
        let engine = MemEngine::with_compaction_filter(Some(factory));
        let options = DocDbOptions {
            sync_writes: false,
            ..shell_db_options()
        };
        Ok(Shell::new(DocDb::open(engine, policy, options)?))
    }
}

impl<E: Engine> Shell<E> {
    /// A shell over `db`. The engine under `db` should have `db`'s GC policy as its
    /// compaction filter factory, or `compact` collects nothing.
    pub fn new(db: DocDb<E>) -> Self {
        Shell {
            db,
            last_scan: Default::default(),
            _temp_dir: None,
        }
    }

    /// A shell over `db`, which lives in `temp_dir`; the directory is removed when the shell
    /// is dropped.
    pub fn with_temp_dir(db: DocDb<E>, temp_dir: tempfile::TempDir) -> Self {
        Shell {
            db,
            last_scan: Default::default(),
            _temp_dir: Some(temp_dir),
        }
    }

    /// The `stats` text: GC counters of every compaction so far, the last scan's counters.
    fn stats(&self) -> String {
        let gc = self.db.gc_policy().stats();
        let scan = *self.last_scan.lock().unwrap_or_else(|e| e.into_inner());
        format!(
            "gc: keys_seen={} overwritten_dropped={} tombstones_dropped={} expired_dropped={} \
             expired_to_tombstone={} merges_dropped={} deleted_column_dropped={} undecodable_kept={}\n\
             last scan: entries_seen={} invisible_stepped={} seeks={} spans_skipped={}\n",
            gc.keys_seen,
            gc.overwritten_dropped,
            gc.tombstones_dropped,
            gc.expired_dropped,
            gc.expired_to_tombstone,
            gc.merges_dropped,
            gc.deleted_column_dropped,
            gc.undecodable_kept,
            scan.entries_seen,
            scan.invisible_stepped,
            scan.seeks,
            scan.spans_skipped,
        )
    }

    /// Ends the session: a database in a directory of the user's keeps the runs of deleted
    /// documents its scans found (and those it took back when it opened) for the next
    /// program to open it, as `docdb serve` does at its stop. Returns how many it saved.
    pub fn close(self) -> Result<usize> {
        if self._temp_dir.is_some() {
            return Ok(0);
        }
        Ok(self.db.save_spans()?)
    }

    /// The database.
    pub fn db(&self) -> &DocDb<E> {
        &self.db
    }

    /// Parses and executes one line.
    pub fn run_line(&self, line: &str) -> Result<Output> {
        self.execute(&parse_command(line)?)
    }

    /// Executes one command.
    pub fn execute(&self, command: &Command) -> Result<Output> {
        match command {
            Command::Empty => Ok(Output::Nothing),
            Command::Write(write) => self.write(write),
            Command::Get {
                path,
                read_ht,
                projection,
            } => {
                let mut opts = self.db.read_options(*read_ht);
                opts.projection = projection.clone();
                Ok(match self.db.get(path, &opts)? {
                    Some(doc) => Output::Document(doc),
                    None => Output::NotFound,
                })
            }
            Command::Scan(scan) => self.scan(scan),
            Command::Compact { cutoff } => {
                self.db.compact(*cutoff)?;
                Ok(Output::Nothing)
            }
            Command::Flush => {
                self.db.flush()?;
                Ok(Output::Nothing)
            }
            Command::Dump => Ok(Output::Text(self.db.dump()?)),
            Command::Stats => Ok(Output::Text(self.stats())),
            Command::SetOption(option) => {
                let mut options = self.db.options();
                match *option {
                    ShellOption::InitMarkers(behavior) => options.init_markers = behavior,
                    ShellOption::TableTtl(ttl) => options.table_ttl = ttl,
                }
                self.db.set_options(options);
                Ok(Output::Nothing)
            }
        }
    }

    /// Builds the batch; commits it, or for `explain` prints and abandons it. A failing
    /// operation abandons the whole batch: nothing is written.
    fn write(&self, write: &WriteCommand) -> Result<Output> {
        let mut batch = self.db.batch(write.ht);
        for op in &write.ops {
            if let Err(e) = apply_op(&mut batch, op) {
                batch.abandon();
                return Err(e.into());
            }
        }
        if write.explain {
            let text = batch.explain();
            batch.abandon();
            Ok(Output::Text(text))
        } else {
            batch.commit()?;
            Ok(Output::Nothing)
        }
    }

    fn scan(&self, scan: &ScanCommand) -> Result<Output> {
        let opts = ScanOptions {
            lower: scan.from.as_ref().map(DocKey::encode),
            upper: scan.to.as_ref().map(DocKey::encode),
            read: self.db.read_options(scan.read_ht),
            limit: scan.limit,
            reverse: scan.reverse,
        };
        let (docs, stats) = self.db.scan(&opts)?;
        *self.last_scan.lock().unwrap_or_else(|e| e.into_inner()) = stats;
        Ok(Output::Documents(docs))
    }
}

/// Adds one operation to the batch.
fn apply_op<E: Engine>(batch: &mut DocWriteBatch<'_, E>, op: &WriteOp) -> docdb::Result<()> {
    match op {
        WriteOp::Set {
            path,
            value,
            ttl,
            user_timestamp,
        } => {
            let control = ValueControlFields {
                ttl: *ttl,
                user_timestamp: *user_timestamp,
                ..ValueControlFields::default()
            };
            batch.set(
                path,
                Value {
                    control,
                    payload: value.clone(),
                },
            )
        }
        WriteOp::Insert { path, doc, ttl } => batch.insert(path, doc, *ttl),
        WriteOp::Extend { path, doc, ttl } => batch.extend(path, doc, *ttl),
        WriteOp::Delete { path } => batch.delete(path),
        WriteOp::Append { path, values, ttl } => batch.append(path, values, *ttl),
        WriteOp::Prepend { path, values, ttl } => batch.prepend(path, values, *ttl),
        WriteOp::ListSet {
            path,
            pos,
            value,
            read_ht,
        } => batch.list_set(path, *pos, value.clone(), *read_ht),
        WriteOp::Expire { path, ttl } => batch.expire(path, *ttl),
    }
}
