//! ACL files, as Redis 7.0's `aclfile`: every user on a line of its own, `user <name>
//! <rule> ...`, the form `ACL LIST` prints. The server loads the file at start (refusing to
//! start if it has errors) and on `ACL LOAD`, and `ACL SAVE` writes it.
//!
//! Loading is all or nothing, and its errors are Redis's, word for word and in its order, so
//! tools that parse them (or people who know them) read docdb's the same way. One deliberate
//! difference: a file without a `default` user gets the default user of the server's
//! settings (`requirepass` as its password, if set), where Redis falls back to `nopass`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::acl::{UNKNOWN, User, merge_selectors};

/// The end of every failed load's error text.
pub const LOAD_FAILED: &str =
    "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";

/// The users of ACL file text `text`, or all of its errors (`label` names the file in them).
/// A file without a `default` user gets `User::default_user(requirepass)`.
pub fn parse(
    label: &str,
    text: &str,
    requirepass: Option<&str>,
) -> Result<BTreeMap<String, User>, String> {
    let mut users = BTreeMap::new();
    let mut errors = String::new();
    for (index, line) in text.split('\n').enumerate() {
        let at = format!("{label}:{}", index + 1);
        let line = line.trim_matches([' ', '\t', '\r', '\n']);
        if line.is_empty() {
            continue;
        }
        // Split on single spaces, as Redis does: two spaces make an empty rule, a no-op.
        let words: Vec<&str> = line.split(' ').collect();
        if words[0] != "user" || words.len() < 2 {
            let _ = write!(
                errors,
                "{at} should start with user keyword followed by the username. "
            );
            continue;
        }
        let name = words[1];
        if name
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b == 0x0B || b == 0)
        {
            // The stray opening quote is Redis's.
            let _ = write!(
                errors,
                "'{at}: username '{name}' contains invalid characters. "
            );
            continue;
        }
        if users.contains_key(name) {
            let _ = write!(
                errors,
                "WARNING: Duplicate user '{name}' found on line {}. ",
                index + 1
            );
            continue;
        }
        let mut user = User::new(name);
        match merge_selectors(words[2..].iter().map(|w| w.as_bytes())) {
            Ok(rules) => apply_rules(&mut user, &rules, &at, &mut errors),
            Err(_) => {
                let _ = write!(
                    errors,
                    "{at}: Unmatched parenthesis in selector definition."
                );
            }
        }
        users.insert(name.to_string(), user);
    }
    if !errors.is_empty() {
        errors.push_str(LOAD_FAILED);
        return Err(errors);
    }
    users
        .entry("default".to_string())
        .or_insert_with(|| User::default_user(requirepass));
    Ok(users)
}

/// Applies one line's rules to `user`, adding each failure to `errors` as Redis reports it:
/// every unknown command or category with its rule, and only the first other error.
fn apply_rules(user: &mut User, rules: &[Vec<u8>], at: &str, errors: &mut String) {
    let mut reported = false;
    for rule in rules {
        let rule = String::from_utf8_lossy(rule);
        let rule = rule.trim_matches(['\t', '\r', '\n']);
        if rule.is_empty() {
            continue;
        }
        match user.apply(rule.as_bytes()) {
            Ok(()) => {}
            Err(UNKNOWN) => {
                let _ = write!(
                    errors,
                    "{at}: Error in applying operation '{rule}': {UNKNOWN}. "
                );
            }
            Err(error) if !reported => {
                reported = true;
                let _ = write!(errors, "{at}: {error}. ");
            }
            Err(_) => {}
        }
    }
}

/// The ACL file text of `users`: one `ACL LIST` line each, in name order.
pub fn format(users: &BTreeMap<String, User>) -> String {
    users.values().map(|user| user.acl_line() + "\n").collect()
}

/// Reads and parses the ACL file at `path` (see [`parse`]).
pub fn load(path: &Path, requirepass: Option<&str>) -> Result<BTreeMap<String, User>, String> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{label}': {}",
            os_text(&e)
        )
    })?;
    parse(&label, &String::from_utf8_lossy(&bytes), requirepass)
}

/// Writes `users` to the ACL file at `path`, replacing it whole ([`crate::files`]).
pub fn save(path: &Path, users: &BTreeMap<String, User>) -> std::io::Result<()> {
    crate::files::replace_file(path, format(users).as_bytes())
}

/// An I/O error as C's `strerror` words it ("No such file or directory"), without Rust's
/// " (os error 2)".
fn os_text(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The expected errors are what redis-server 7.0.15 logged, starting with each file as
    // its aclfile ("Aborting Redis startup because of ACL errors: ...").

    #[test]
    fn lines_and_rules_split_as_in_redis() {
        let users = parse(
            "f",
            "user carol on  +@all\r\n\r\n  user eve on nopass +@all  \nuser dave\r\n",
            None,
        )
        .expect("parse");
        let lines: Vec<String> = users.values().map(User::acl_line).collect();
        assert_eq!(
            lines,
            [
                "user carol on resetchannels +@all",
                "user dave off resetchannels -@all",
                "user default on nopass ~* &* +@all",
                "user eve on nopass resetchannels +@all",
            ]
        );
    }

    #[test]
    fn errors_are_redis_ones_in_its_order() {
        let text =
            "user a bogus1 bogus2 +nosuch1 +nosuch2 >\nuser b on\n# a comment\nuser a on\nuser\n";
        let error = parse("/x/users.acl", text, None).expect_err("errors");
        assert_eq!(
            error,
            "/x/users.acl:1: Syntax error. \
             /x/users.acl:1: Error in applying operation '+nosuch1': Unknown command or category name in ACL. \
             /x/users.acl:1: Error in applying operation '+nosuch2': Unknown command or category name in ACL. \
             /x/users.acl:3 should start with user keyword followed by the username. \
             WARNING: Duplicate user 'a' found on line 4. \
             /x/users.acl:5 should start with user keyword followed by the username. \
             WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        );
        let error = parse("f", "user a\tb on\n", None).expect_err("errors");
        assert_eq!(
            error,
            "'f:1: username 'a\tb' contains invalid characters. WARNING: ACL errors detected, \
             no change to the previously active ACL rules was performed"
        );
    }

    #[test]
    fn selectors_span_words_and_an_unclosed_one_is_an_error() {
        let users = parse(
            "f",
            "user s on nopass ~a* +get (~b* +set) (&ch* +publish)",
            None,
        )
        .expect("parse");
        assert_eq!(
            users["s"].acl_line(),
            // As redis-server 7.0.15's ACL SAVE writes it (`redis_acl.rs` compares the files).
            "user s on nopass ~a* resetchannels -@all +get (~b* resetchannels -@all +set) \
             (resetchannels &ch* -@all +publish)"
        );
        let error = parse("f", "user s on (~b* +set\nuser t on\n", None).expect_err("errors");
        assert_eq!(
            error,
            "f:1: Unmatched parenthesis in selector definition.WARNING: ACL errors detected, no \
             change to the previously active ACL rules was performed"
        );
    }

    #[test]
    fn an_empty_file_has_the_default_user_of_the_settings() {
        let open = parse("f", "", None).expect("parse");
        assert_eq!(format(&open), "user default on nopass ~* &* +@all\n");
        let guarded = parse("f", "\n", Some("pw")).expect("parse");
        assert!(guarded["default"].accepts(b"pw"));
        assert!(!guarded["default"].accepts(b"other"));
        // A default user in the file is the file's.
        let listed = parse("f", "user default on >secret +@all ~*", Some("pw")).expect("parse");
        assert!(listed["default"].accepts(b"secret"));
        assert!(!listed["default"].accepts(b"pw"));
    }

    #[test]
    fn save_then_load_gives_the_same_users() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("users.acl");
        let users =
            parse("f", "user a on >pw ~k* &c +get +@hash\nuser b off", None).expect("parse");
        save(&path, &users).expect("save");
        let loaded = load(&path, None).expect("load");
        assert_eq!(format(&loaded), format(&users));
        // Only the file itself is left.
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_missing_file_is_named_in_the_error() {
        let error = load(Path::new("/nonexistent/users.acl"), None).expect_err("missing");
        assert_eq!(
            error,
            "Error loading ACLs, opening file '/nonexistent/users.acl': No such file or directory"
        );
    }
}
