//! The `docdb` command.

mod decode;
mod serve;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc rather than glibc malloc: reads allocate many short-lived values, and glibc's
/// free-list consolidation before every kilobyte-sized request was a quarter of a table
/// scan (BENCHMARKS.md, "Tables").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// DocDB: YugabyteDB's document storage engine, in Rust.
#[derive(Parser)]
#[command(name = "docdb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serves the Redis protocol (YEDIS commands and more) on an embedded RocksDB data
    /// directory, until SIGINT or SIGTERM.
    Serve(Box<serve::ServeArgs>),
    /// The DocDB shell: write batches at hybrid times, point-in-time reads, compactions, dumps
    /// (the language of shared/spec/shell.md).
    ///
    /// Reads commands from FILE, or from standard input (with a prompt on a terminal). Without
    /// --data-dir it works on a fresh temporary database removed on exit. Exits 1 if any
    /// command failed when reading a file or a pipe.
    Shell {
        /// The RocksDB data directory (created if missing).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// A file of shell commands.
        file: Option<PathBuf>,
    },
    /// Prints every key/value pair of an existing database in YugabyteDB's debug form
    /// (`<SubDocKey> -> <value>`, key order). Read-only: it changes nothing and may run
    /// while a server uses the directory.
    Dump {
        /// The RocksDB data directory.
        #[arg(long)]
        data_dir: PathBuf,
    },
    /// Print the YugabyteDB debug form of encoded keys or values.
    ///
    /// With no HEX argument, reads one input per line from standard input. Without KIND, each
    /// line is `KEY [VALUE]` and prints as a dump line `<key> -> <value>`. Inputs are hex
    /// (spaces and a 0x prefix allowed) or a double-quoted YugabyteDB debug string.
    Decode {
        /// `key` or `value`; omit to read `KEY [VALUE]` lines.
        kind: Option<decode::Kind>,
        /// The encoded bytes.
        input: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ok = match cli.command {
        Command::Serve(args) => report(serve::run(*args)),
        Command::Decode { kind, input } => decode::run(kind, input.as_deref()),
        Command::Shell { data_dir, file } => report(
            docdb_shell::shell_command(data_dir.as_deref(), file.as_deref()).map(|failed| !failed),
        ),
        Command::Dump { data_dir } => report(dump(&data_dir)),
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints `error: ...` for a failure; returns whether the command succeeded.
fn report<E: std::fmt::Display>(result: Result<bool, E>) -> bool {
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        false
    })
}

/// Streams the dump of the database in `dir` to stdout. The database is opened read-only:
/// the dump writes nothing (a clean close's saved runs stay for the next server) and works
/// next to a server running on the same directory, showing it as it was at the dump's start.
fn dump(dir: &std::path::Path) -> anyhow::Result<bool> {
    if !dir.is_dir() {
        anyhow::bail!("no database at {}", dir.display());
    }
    let engine = engine_rocks::RocksEngine::open(engine_rocks::RocksConfig {
        read_only: true,
        ..engine_rocks::RocksConfig::new(dir)
    })?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut result = Ok(());
    docdb::for_each_record(&engine, |line| {
        if result.is_ok() {
            result = writeln!(out, "{line}");
        }
    })?;
    result?;
    out.flush()?;
    Ok(true)
}
