//! CONFIG REWRITE: the settings CONFIG SET changes, written back into the server's TOML
//! config file (`docdb serve --config`), as Redis rewrites its `redis.conf`.
//!
//! The file is flat `key = value` lines. Each setting's line is replaced in place, keeping
//! every comment and every other line; a setting the file lacks is appended if its value is
//! not the default. The new text is parsed back and checked before it replaces the file
//! (through a synced temporary file and a rename), so a rewrite never leaves a file the next
//! start cannot read.

use std::path::Path;

/// One setting to write: its key in the file, its value as TOML, and whether that value is
/// the default (then it is written only over a line the file has).
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The key, as `docdb serve --config` names it.
    pub key: &'static str,
    /// The value.
    pub value: toml::Value,
    /// Whether the value is the default.
    pub default: bool,
}

/// `text` with each of `settings` written in (see the module docs), or why it cannot be.
pub fn rewritten(text: &str, settings: &[Setting]) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for setting in settings {
        let line = format!("{} = {}", setting.key, setting.value);
        match lines.iter().position(|l| key_of(l) == Some(setting.key)) {
            Some(at) => lines[at] = line,
            None if !setting.default => lines.push(line),
            None => {}
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    let table: toml::Table = out
        .parse()
        .map_err(|e| format!("the rewritten file would not parse: {e}"))?;
    for setting in settings {
        match table.get(setting.key) {
            Some(value) if *value == setting.value => {}
            None if setting.default => {}
            _ => return Err(format!("{} could not be written in place", setting.key)),
        }
    }
    Ok(out)
}

/// The key a `key = value` line sets (bare or quoted), if it is one.
fn key_of(line: &str) -> Option<&str> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let unquoted = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    (!unquoted.is_empty() && !unquoted.starts_with('#')).then_some(unquoted)
}

/// Rewrites the config file at `path` with `settings`, replacing it whole
/// ([`crate::files`]).
pub fn rewrite_file(path: &Path, settings: &[Setting]) -> Result<(), String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let out = rewritten(&text, settings)?;
    crate::files::replace_file(path, out.as_bytes())
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(key: &'static str, value: impl Into<toml::Value>, default: bool) -> Setting {
        Setting {
            key,
            value: value.into(),
            default,
        }
    }

    #[test]
    fn lines_are_replaced_in_place_and_new_ones_appended() {
        let text = "# the server\nlisten = \"127.0.0.1:7000\"\n\"maxclients\" = 100 # old\nfsync = \"always\"\n";
        let out = rewritten(
            text,
            &[
                setting("maxclients", 7, false),
                setting("fsync", "everysec", true),
                setting("requirepass", "p\"w", false),
                setting("history-retention", 900, true),
            ],
        )
        .expect("rewrite");
        assert_eq!(
            out,
            // A quote inside makes it a TOML literal string.
            "# the server\nlisten = \"127.0.0.1:7000\"\nmaxclients = 7\nfsync = \"everysec\"\n\
             requirepass = 'p\"w'\n"
        );
    }

    #[test]
    fn a_value_that_cannot_be_written_in_place_is_an_error() {
        // A multi-line string: replacing its first line would leave the rest dangling.
        let text = "requirepass = \"\"\"\nold\n\"\"\"\n";
        let error = rewritten(text, &[setting("requirepass", "new", false)]).expect_err("refused");
        assert!(error.contains("would not parse"), "{error}");
    }

    #[test]
    fn the_file_is_replaced_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("docdb.toml");
        std::fs::write(&path, "maxclients = 1\n").expect("write");
        rewrite_file(&path, &[setting("maxclients", 2, false)]).expect("rewrite");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "maxclients = 2\n"
        );
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }
}
