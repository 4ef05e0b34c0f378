//! The `docdb shell` language (shared/spec/shell.md): write batches at explicit hybrid times,
//! point-in-time reads, scans, compactions at a history cutoff and raw dumps, typed one line
//! at a time.
//!
//! The layers, in the order a line goes through them:
//!
//! 1. [`parser`] turns the text into a typed [`Command`] (or a [`ParseError`] naming the
//!    column and what was expected there);
//! 2. [`Shell::execute`] runs the command on its [`docdb::DocDb`] and returns an [`Output`]
//!    value; it never prints;
//! 3. the output's `Display` is the exact text the shell prints.
//!
//! [`run_script`] and [`run_lines`] drive whole inputs (a failing command prints one line
//! `error: <reason>` and the rest still runs); [`run_interactive`] reads standard input with a
//! prompt when it is a terminal; [`open_shell`] opens RocksDB in a directory or in a
//! temporary one with DocDB's GC as the compaction filter; [`shell_command`] is the whole
//! `docdb shell` command for the CLI.
//!
//! This crate is a front end: it uses `docdb` and `dockv`, and touches the engines only to open
//! them.

pub mod command;
pub mod error;
pub mod exec;
mod lexer;
pub mod parser;

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, GcPolicy};
use engine::{CompactionFilterFactory, Engine};
use engine_rocks::{RocksConfig, RocksEngine};

pub use command::{Command, ScanCommand, ShellOption, WriteCommand, WriteOp};
pub use error::{Error, Result};
pub use exec::{Output, Shell, shell_db_options};
pub use parser::{ParseError, ParseErrorKind, parse_command};

/// The prompt shown when standard input is a terminal.
pub const PROMPT: &str = "docdb> ";

/// Runs every line of `input`; returns what the shell prints and whether any command failed.
/// A failing command contributes one line `error: <reason>`.
pub fn run_script<E: Engine>(shell: &Shell<E>, input: &str) -> (String, bool) {
    let mut out = String::new();
    let mut failed = false;
    for line in input.lines() {
        match shell.run_line(line) {
            Ok(output) => out.push_str(&output.to_string()),
            Err(e) => {
                failed = true;
                out.push_str(&error_line(&e));
            }
        }
    }
    (out, failed)
}

/// The line printed for a failed command.
pub fn error_line(e: &Error) -> String {
    format!("error: {e}\n")
}

/// Runs the lines of `input` one at a time, writing each command's output to `output` as soon
/// as it has run; with `prompt`, writes it before reading each line (and a newline at the end
/// of the input). Returns whether any command failed.
pub fn run_lines<E: Engine>(
    shell: &Shell<E>,
    mut input: impl BufRead,
    mut output: impl Write,
    prompt: Option<&str>,
) -> io::Result<bool> {
    let mut failed = false;
    let mut line = String::new();
    loop {
        if let Some(prompt) = prompt {
            output.write_all(prompt.as_bytes())?;
            output.flush()?;
        }
        line.clear();
        if input.read_line(&mut line)? == 0 {
            if prompt.is_some() {
                output.write_all(b"\n")?;
            }
            break;
        }
        let text = line.trim_end_matches(['\n', '\r']);
        match shell.run_line(text) {
            Ok(result) => output.write_all(result.to_string().as_bytes())?,
            Err(e) => {
                failed = true;
                output.write_all(error_line(&e).as_bytes())?;
            }
        }
        output.flush()?;
    }
    Ok(failed)
}

/// Reads commands from standard input until its end, printing to standard output, with the
/// [`PROMPT`] when standard input is a terminal. Returns whether any command failed (the
/// `docdb shell` exit status is 1 then, when the input is a file or a pipe).
pub fn run_interactive<E: Engine>(shell: &Shell<E>) -> io::Result<bool> {
    let stdin = io::stdin();
    let prompt = stdin.is_terminal().then_some(PROMPT);
    run_lines(shell, stdin.lock(), io::stdout().lock(), prompt)
}

/// The whole `docdb shell [--data-dir DIR] [FILE]` command: opens the database
/// ([`open_shell`]), runs FILE, or standard input ([`run_interactive`]), then closes it
/// ([`Shell::close`]). Returns whether the exit status must be 1: a command failed while
/// reading a file or a pipe.
pub fn shell_command(data_dir: Option<&Path>, file: Option<&Path>) -> Result<bool> {
    let shell = open_shell(data_dir)?;
    let failed = match file {
        Some(path) => {
            let input = io::BufReader::new(std::fs::File::open(path)?);
            run_lines(&shell, input, io::stdout().lock(), None)?
        }
        None => {
            let interactive = io::stdin().is_terminal();
            run_interactive(&shell)? && !interactive
        }
    };
    shell.close()?;
    Ok(failed)
}

/// Opens documents on a RocksDB data directory, with DocDB's GC as its compaction filter.
/// With `create_if_missing` false, a missing directory is an error.
pub fn open_rocks_docdb(
    path: &Path,
    options: DocDbOptions,
    create_if_missing: bool,
) -> Result<DocDb<RocksEngine>> {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let factory: Arc<dyn CompactionFilterFactory> = policy.clone();
    let config = RocksConfig {
        compaction_filter_factory: Some(factory),
        create_if_missing,
        ..RocksConfig::new(path)
    };
    let engine = RocksEngine::open(config)?;
    Ok(DocDb::open(engine, policy, options)?)
}

/// Opens a shell over RocksDB in `data_dir`, or, with `None`, in a fresh temporary directory
/// that is removed when the shell is dropped. DocDB's GC policy is the engine's compaction
/// filter factory; background compactions keep all history ([`shell_db_options`]).
pub fn open_shell(data_dir: Option<&Path>) -> Result<Shell<RocksEngine>> {
    let (path, temp_dir) = match data_dir {
        Some(dir) => (dir.to_path_buf(), None),
        None => {
            let temp = tempfile::Builder::new().prefix("docdb-shell-").tempdir()?;
            (temp.path().to_path_buf(), Some(temp))
        }
    };
    let options = DocDbOptions {
        // A throw-away database need not wait for the disk.
        sync_writes: temp_dir.is_none(),
        ..shell_db_options()
    };
    let db = open_rocks_docdb(&path, options, true)?;
    Ok(match temp_dir {
        Some(temp) => Shell::with_temp_dir(db, temp),
        None => Shell::new(db),
    })
}
