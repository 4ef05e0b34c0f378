//! `docdb decode`: bytes in, YugabyteDB debug strings out.

use std::io::{self, BufRead, Write};

use anyhow::{Context, Result, bail};
use dockv::doc_key::format_key;
use dockv::escape::parse_quoted;
use dockv::value::Value;

/// What an input encodes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Kind {
    /// A RocksDB key: DocKey, optional subkeys, optional hybrid time.
    Key,
    /// A RocksDB value: control fields and payload.
    Value,
}

/// Decodes one argument, or every line of stdin. Prints `error: ...` for each bad input and
/// returns false if any failed.
pub fn run(kind: Option<Kind>, input: Option<&str>) -> bool {
    if let Some(text) = input {
        return report(decode_one(kind.unwrap_or(Kind::Key), text));
    }
    let stdin = io::stdin();
    let mut all_ok = true;
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(e) => return report(Err(e.into())),
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let result = match kind {
            Some(kind) => decode_one(kind, line),
            None => decode_pair(line),
        };
        all_ok &= report(result);
    }
    all_ok
}

fn report(result: Result<String>) -> bool {
    match result {
        Ok(text) => {
            let _ = writeln!(io::stdout(), "{text}");
            true
        }
        Err(e) => {
            let _ = writeln!(io::stdout(), "error: {e:#}");
            false
        }
    }
}

fn decode_one(kind: Kind, text: &str) -> Result<String> {
    let bytes = parse_bytes(text)?;
    match kind {
        Kind::Key => Ok(format_key(&bytes)?),
        Kind::Value => Ok(Value::decode(&bytes)?.to_string()),
    }
}

/// `KEY [VALUE]` → `<key>` or `<key> -> <value>`.
fn decode_pair(line: &str) -> Result<String> {
    let (key, value) = split_pair(line)?;
    let key = decode_one(Kind::Key, key).context("key")?;
    match value {
        Some(value) => Ok(format!(
            "{key} -> {}",
            decode_one(Kind::Value, value).context("value")?
        )),
        None => Ok(key),
    }
}

/// Splits a line into its key and optional value: quoted strings or whitespace-free hex.
fn split_pair(line: &str) -> Result<(&str, Option<&str>)> {
    let end = if line.starts_with('"') {
        quoted_end(line)?
    } else {
        line.find(' ').unwrap_or(line.len())
    };
    let (key, rest) = line.split_at(end);
    let rest = rest.trim();
    Ok((key, (!rest.is_empty()).then_some(rest)))
}

/// Index just past the closing quote of a leading quoted string.
fn quoted_end(text: &str) -> Result<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Ok(i + 1),
            _ => {}
        }
    }
    bail!("unterminated quoted string")
}

/// Hex (optionally `0x`-prefixed, spaces allowed) or a quoted YugabyteDB debug string.
fn parse_bytes(text: &str) -> Result<Vec<u8>> {
    let text = text.trim();
    if text.starts_with('"') {
        return parse_quoted(text, '"').context("malformed quoted string");
    }
    let hex: String = text
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if !hex.len().is_multiple_of(2) {
        bail!("odd number of hex digits in {text:?}");
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&hex[i..i + 2], 16)
                .with_context(|| format!("invalid hex in {text:?}"))
        })
        .collect()
}
