//! The `docdb` command.

mod decode;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// DocDB: YugabyteDB's document storage engine, in Rust.
#[derive(Parser)]
#[command(name = "docdb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
        Command::Decode { kind, input } => decode::run(kind, input.as_deref()),
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
