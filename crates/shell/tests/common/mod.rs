//! Helpers shared by the shell's integration tests.

use docdb_shell::{Shell, open_shell, run_script};

/// Runs `script` on a fresh in-memory shell and a fresh RocksDB shell; asserts that both print
/// `expected` and that no command failed.
pub fn check(script: &str, expected: &str) {
    let (out, failed) = run_script(&Shell::in_memory().expect("in-memory shell"), script);
    assert_eq!(out, expected, "in-memory engine, script:\n{script}");
    assert!(!failed, "in-memory engine: a command failed:\n{out}");
    let (out, failed) = run_script(&open_shell(None).expect("rocksdb shell"), script);
    assert_eq!(out, expected, "RocksDB engine, script:\n{script}");
    assert!(!failed, "RocksDB engine: a command failed:\n{out}");
}

/// Joins lines, each terminated by a newline (expected outputs and scripts alike).
pub fn lines<S: AsRef<str>>(lines: &[S]) -> String {
    lines.iter().map(|l| format!("{}\n", l.as_ref())).collect()
}
