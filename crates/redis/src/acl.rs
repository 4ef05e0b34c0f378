//! Redis ACL users as Redis 7.0 keeps them: in memory, and in an ACL file if the server has
//! one ([`crate::aclfile`]).
//!
//! Each user has flags (on/off, nopass), SHA-256 password hashes, a command bitmap over
//! Redis 7.0's command table (subcommands included, plus a bit for "future" commands that
//! only `+@all` sets, as Redis's reserved bit), key patterns with read/write permissions
//! and channel patterns. `ACL LIST` and `ACL GETUSER` describe the bitmap the way Redis's
//! `ACLDescribeSelectorCommandRules` does: `+@all`/`-@all`, then the best-fitting
//! categories, then single commands.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};
use std::time::Instant;

use crate::glob;
use crate::session::Session;

/// ACL categories, as Redis's `ACL_CATEGORY_*` bits.
pub const C_KEYSPACE: u32 = 1;
/// `@read`.
pub const C_READ: u32 = 1 << 1;
/// `@write`.
pub const C_WRITE: u32 = 1 << 2;
/// `@set`.
pub const C_SET: u32 = 1 << 3;
/// `@sortedset`.
pub const C_SORTEDSET: u32 = 1 << 4;
/// `@list`.
pub const C_LIST: u32 = 1 << 5;
/// `@hash`.
pub const C_HASH: u32 = 1 << 6;
/// `@string`.
pub const C_STRING: u32 = 1 << 7;
/// `@bitmap`.
pub const C_BITMAP: u32 = 1 << 8;
/// `@hyperloglog`.
pub const C_HYPERLOGLOG: u32 = 1 << 9;
/// `@geo`.
pub const C_GEO: u32 = 1 << 10;
/// `@stream`.
pub const C_STREAM: u32 = 1 << 11;
/// `@pubsub`.
pub const C_PUBSUB: u32 = 1 << 12;
/// `@admin`.
pub const C_ADMIN: u32 = 1 << 13;
/// `@fast`.
pub const C_FAST: u32 = 1 << 14;
/// `@slow`.
pub const C_SLOW: u32 = 1 << 15;
/// `@blocking`.
pub const C_BLOCKING: u32 = 1 << 16;
/// `@dangerous`.
pub const C_DANGEROUS: u32 = 1 << 17;
/// `@connection`.
pub const C_CONNECTION: u32 = 1 << 18;
/// `@transaction`.
pub const C_TRANSACTION: u32 = 1 << 19;
/// `@scripting`.
pub const C_SCRIPTING: u32 = 1 << 20;

/// The categories in Redis's order (`ACL CAT`, and the order rules are described in).
pub const CATEGORIES: [(&str, u32); 21] = [
    ("keyspace", C_KEYSPACE),
    ("read", C_READ),
    ("write", C_WRITE),
    ("set", C_SET),
    ("sortedset", C_SORTEDSET),
    ("list", C_LIST),
    ("hash", C_HASH),
    ("string", C_STRING),
    ("bitmap", C_BITMAP),
    ("hyperloglog", C_HYPERLOGLOG),
    ("geo", C_GEO),
    ("stream", C_STREAM),
    ("pubsub", C_PUBSUB),
    ("admin", C_ADMIN),
    ("fast", C_FAST),
    ("slow", C_SLOW),
    ("blocking", C_BLOCKING),
    ("dangerous", C_DANGEROUS),
    ("connection", C_CONNECTION),
    ("transaction", C_TRANSACTION),
    ("scripting", C_SCRIPTING),
];

/// The category called `name` (any case).
pub fn category(name: &[u8]) -> Option<u32> {
    CATEGORIES
        .iter()
        .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|(_, flag)| *flag)
}

/// The bit that only `+@all` sets: commands Redis's table lacks (docdb's own) run only for
/// users that have it.
const FUTURE: usize = COMMANDS.len();
const WORDS: usize = (COMMANDS.len() + 1).div_ceil(64);

/// A command bitmap over [`COMMANDS`] plus [`FUTURE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bits([u64; WORDS]);

impl Bits {
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, i: usize, on: bool) {
        if on {
            self.0[i / 64] |= 1 << (i % 64);
        } else {
            self.0[i / 64] &= !(1 << (i % 64));
        }
    }
}

/// The index in [`COMMANDS`] of `name` (`cmd` or `cmd|sub`, lower case).
pub fn command_index(name: &str) -> Option<usize> {
    COMMANDS.binary_search_by(|(n, _)| n.cmp(&name)).ok()
}

/// The indexes of command `i`'s subcommands (empty unless it is a container).
fn subcommands(i: usize) -> std::ops::Range<usize> {
    let name = COMMANDS[i].0;
    let mut end = i + 1;
    while end < COMMANDS.len()
        && COMMANDS[end].0.len() > name.len()
        && COMMANDS[end].0.starts_with(name)
        && COMMANDS[end].0.as_bytes()[name.len()] == b'|'
    {
        end += 1;
    }
    i + 1..end
}

/// Rules as given (ACL SETUSER's arguments, or the words of an ACL file line) with each
/// selector's words joined back into one `(...)` rule, as Redis's
/// `ACLMergeSelectorArguments` does; or the index of the rule opening a selector that never
/// closes.
pub fn merge_selectors<'a>(
    rules: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<Vec<u8>>, usize> {
    let mut merged = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, rule) in rules.into_iter().enumerate() {
        let closes = rule.last() == Some(&b')');
        if let Some((_, selector)) = &mut open {
            selector.push(b' ');
            selector.extend_from_slice(rule);
            if closes {
                merged.extend(open.take().map(|(_, s)| s));
            }
        } else if rule.first() == Some(&b'(') && !closes {
            open = Some((i, rule.to_vec()));
        } else {
            merged.push(rule.to_vec());
        }
    }
    match open {
        Some((start, _)) => Err(start),
        None => Ok(merged),
    }
}

/// Whether command `name` (top level) has subcommands in Redis's table.
pub fn is_container(name: &str) -> bool {
    command_index(name).is_some_and(|i| !subcommands(i).is_empty())
}

/// The ACL name of a request: `cmd|sub` for a container's known subcommand, else `cmd`.
pub fn full_name(name: &str, args: &[Vec<u8>]) -> String {
    if let Some(sub) = args.get(1)
        && is_container(name)
    {
        let full = format!("{name}|{}", String::from_utf8_lossy(sub).to_lowercase());
        if command_index(&full).is_some() {
            return full;
        }
    }
    name.to_string()
}

/// A key pattern with the access it grants.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeyPattern {
    pattern: Vec<u8>,
    read: bool,
    write: bool,
}

/// One ACL user.
#[derive(Debug, Clone)]
pub struct User {
    /// The user name.
    pub name: String,
    enabled: bool,
    nopass: bool,
    /// `Some(true)`: skip-sanitize-payload; `Some(false)`: sanitize-payload.
    skip_sanitize: Option<bool>,
    /// Lower-case hex SHA-256 of each password, in the order added.
    passwords: Vec<String>,
    commands: Bits,
    allcommands: bool,
    /// First arguments allowed for a command whose bit is off (`+select|0`).
    firstargs: BTreeMap<usize, Vec<String>>,
    allkeys: bool,
    keys: Vec<KeyPattern>,
    allchannels: bool,
    channels: Vec<Vec<u8>>,
    /// Selectors (`(...)` rules): further sets of command, key and channel permissions,
    /// each kept as a user whose flags and passwords go unused. A request runs if the
    /// user's own permissions or any selector's allow all of it.
    pub selectors: Vec<User>,
}

/// `ERR Error in ACL SETUSER modifier '...': <this>`.
pub type RuleError = &'static str;

const SYNTAX: RuleError = "Syntax error";
/// An unknown command or category: ACL files report these with the rule that named one.
pub(crate) const UNKNOWN: RuleError = "Unknown command or category name in ACL";
const BAD_HASH: RuleError = "The password hash must be exactly 64 characters and contain only \
                             lowercase hexadecimal characters";
const NO_SUCH_PASS: RuleError =
    "The password you are trying to remove from the user does not exist";

impl User {
    /// A new user as ACL SETUSER creates it: `off resetchannels -@all`.
    pub fn new(name: &str) -> Self {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            skip_sanitize: None,
            passwords: Vec::new(),
            commands: Bits([0; WORDS]),
            allcommands: false,
            firstargs: BTreeMap::new(),
            allkeys: false,
            keys: Vec::new(),
            allchannels: false,
            channels: Vec::new(),
            selectors: Vec::new(),
        }
    }

    /// The user as `ACL LIST` and ACL files give it: `user <name> <rules>`.
    pub fn acl_line(&self) -> String {
        format!("user {} {}", self.name, self.describe())
    }

    /// The `default` user: `on nopass ~* &* +@all`, or with `password` instead of nopass.
    pub fn default_user(password: Option<&str>) -> Self {
        let mut user = User::new("default");
        for rule in ["on", "~*", "&*", "+@all"] {
            let _ = user.apply(rule.as_bytes());
        }
        user.set_password(password);
        user
    }

    /// Redis's `ACLUpdateDefaultUserPassword`: `resetpass`, then `>password` or `nopass`.
    pub fn set_password(&mut self, password: Option<&str>) {
        self.nopass = password.is_none();
        self.passwords.clear();
        if let Some(p) = password {
            self.passwords.push(sha256_hex(p.as_bytes()));
        }
    }

    /// Whether every command, key and channel is allowed (the dispatch fast path).
    pub fn unrestricted(&self) -> bool {
        self.allcommands && self.allkeys && self.allchannels
    }

    /// Whether the user is `on` and takes `password`.
    pub fn accepts(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hash = sha256_hex(password);
        self.passwords.iter().fold(false, |found, p| {
            found | constant_time_eq(p.as_bytes(), hash.as_bytes())
        })
    }

    /// Whether the user is `on` and `nopass` (a new connection starts authenticated).
    pub fn open(&self) -> bool {
        self.enabled && self.nopass
    }

    /// Applies one ACL SETUSER rule.
    pub fn apply(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        let word = |w: &str| rule.eq_ignore_ascii_case(w.as_bytes());
        if let Some(body) = rule.strip_prefix(b"(").and_then(|r| r.strip_suffix(b")")) {
            self.selectors.push(Self::selector(body)?);
        } else if word("clearselectors") {
            self.selectors.clear();
        } else if word("on") {
            self.enabled = true;
        } else if word("off") {
            self.enabled = false;
        } else if word("skip-sanitize-payload") {
            self.skip_sanitize = Some(true);
        } else if word("sanitize-payload") {
            self.skip_sanitize = Some(false);
        } else if word("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if word("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if word("allkeys") || rule == b"~*" {
            // Unlike `%RW~*`, these two are no error after allkeys.
            self.allkeys = true;
            self.keys.clear();
        } else if word("resetkeys") {
            self.allkeys = false;
            self.keys.clear();
        } else if word("allchannels") || rule == b"&*" {
            self.allchannels = true;
            self.channels.clear();
        } else if word("resetchannels") {
            self.allchannels = false;
            self.channels.clear();
        } else if word("allcommands") {
            self.set_all(true);
        } else if word("nocommands") {
            self.set_all(false);
        } else if word("reset") {
            for r in [
                "resetpass",
                "resetkeys",
                "resetchannels",
                "off",
                "clearselectors",
                "-@all",
                "sanitize-payload",
            ] {
                self.apply(r.as_bytes())?;
            }
        } else {
            return self.apply_symbol_rule(rule);
        }
        Ok(())
    }

    /// A selector from the rules inside `(...)`, separated by spaces: only command, key
    /// and channel rules, as Redis's `ACLSetSelector` takes.
    fn selector(body: &[u8]) -> Result<User, RuleError> {
        let mut selector = User::new("");
        for rule in body.split(|&b| b == b' ').filter(|r| !r.is_empty()) {
            let word = |w: &str| rule.eq_ignore_ascii_case(w.as_bytes());
            const SELECTOR_WORDS: [&str; 6] = [
                "allkeys",
                "resetkeys",
                "allchannels",
                "resetchannels",
                "allcommands",
                "nocommands",
            ];
            let allowed = SELECTOR_WORDS.into_iter().any(word)
                || matches!(rule[0], b'~' | b'%' | b'&' | b'+' | b'-');
            if !allowed {
                return Err(SYNTAX);
            }
            selector.apply(rule)?;
        }
        Ok(selector)
    }

    /// The rules that start with a symbol: passwords, patterns, commands.
    fn apply_symbol_rule(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        let rest = rule.get(1..).unwrap_or_default();
        match rule.first() {
            Some(b'>') => {
                let hash = sha256_hex(rest);
                self.add_password(hash);
            }
            Some(b'#') => self.add_password(valid_hash(rest)?),
            Some(b'<') => self.remove_password(&sha256_hex(rest))?,
            Some(b'!') => self.remove_password(&valid_hash(rest)?)?,
            Some(b'~' | b'%') => self.apply_key_rule(rule)?,
            Some(b'&') => self.apply_channel_rule(rule)?,
            Some(b'+') if rest.first() == Some(&b'@') => self.apply_category(&rest[1..], true)?,
            Some(b'-') if rest.first() == Some(&b'@') => self.apply_category(&rest[1..], false)?,
            Some(b'+') => self.allow_command(rest)?,
            Some(b'-') => {
                let i = lookup(rest).ok_or(UNKNOWN)?;
                self.change_perm(i, false);
            }
            _ => return Err(SYNTAX),
        }
        Ok(())
    }

    fn add_password(&mut self, hash: String) {
        self.nopass = false;
        if !self.passwords.contains(&hash) {
            self.passwords.push(hash);
        }
    }

    fn remove_password(&mut self, hash: &str) -> Result<(), RuleError> {
        let before = self.passwords.len();
        self.passwords.retain(|p| p != hash);
        if self.passwords.len() == before {
            return Err(NO_SUCH_PASS);
        }
        Ok(())
    }

    /// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
    fn apply_key_rule(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        if self.allkeys {
            return Err(
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and \
                 does not have any effect. Try 'resetkeys' to start with an empty list of \
                 patterns",
            );
        }
        let (mut read, mut write, mut offset) = (true, true, 1);
        if rule[0] == b'%' {
            (read, write) = (false, false);
            while offset < rule.len() {
                let c = rule[offset].to_ascii_uppercase();
                offset += 1;
                match c {
                    b'R' if !read => read = true,
                    b'W' if !write => write = true,
                    b'~' => break,
                    _ => return Err(SYNTAX),
                }
            }
            if !read && !write {
                return Err(SYNTAX);
            }
        }
        let pattern = rule[offset.min(rule.len())..].to_vec();
        // `%RW~*` is a pattern like any other (it shows as `~*`), not allkeys.
        if let Some(old) = self.keys.iter_mut().find(|k| k.pattern == pattern) {
            old.read |= read;
            old.write |= write;
        } else {
            self.keys.push(KeyPattern {
                pattern,
                read,
                write,
            });
        }
        Ok(())
    }

    /// `&pattern`.
    fn apply_channel_rule(&mut self, rule: &[u8]) -> Result<(), RuleError> {
        if self.allchannels {
            return Err(
                "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid \
                 and does not have any effect. Try 'resetchannels' to start with an empty list \
                 of channels",
            );
        }
        let pattern = rule[1..].to_vec();
        if !self.channels.contains(&pattern) {
            self.channels.push(pattern);
        }
        Ok(())
    }

    /// `+@all` / `-@all`: every bit, the future one included.
    fn set_all(&mut self, on: bool) {
        self.commands = Bits([if on { u64::MAX } else { 0 }; WORDS]);
        self.allcommands = on;
        self.firstargs.clear();
    }

    fn apply_category(&mut self, name: &[u8], on: bool) -> Result<(), RuleError> {
        if name.eq_ignore_ascii_case(b"all") {
            self.set_all(on);
            return Ok(());
        }
        let flag = category(name).ok_or(UNKNOWN)?;
        for (i, (_, flags)) in COMMANDS.iter().enumerate() {
            if flags & flag != 0 {
                self.change_perm(i, on);
            }
        }
        Ok(())
    }

    /// `+cmd`, `+cmd|sub`, or `+cmd|firstarg` for a command without subcommands.
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
            let i = lookup(name).ok_or(UNKNOWN)?;
            self.change_perm(i, true);
            return Ok(());
        };
        let (head, sub) = (&name[..bar], &name[bar + 1..]);
        let i = lookup(head).ok_or(UNKNOWN)?;
        if COMMANDS[i].0.contains('|') {
            return Err("Allowing first-arg of a subcommand is not supported");
        }
        if sub.is_empty() {
            return Err(SYNTAX);
        }
        if subcommands(i).is_empty() {
            let arg = String::from_utf8_lossy(sub).to_lowercase();
            let args = self.firstargs.entry(i).or_default();
            if !args.contains(&arg) {
                args.push(arg);
            }
        } else {
            let j = lookup(name).ok_or(UNKNOWN)?;
            self.change_perm(j, true);
        }
        Ok(())
    }

    /// Redis's `ACLChangeSelectorPerm`: command `i` and its subcommands.
    fn change_perm(&mut self, i: usize, on: bool) {
        set_bit(&mut self.commands, i, on);
        if !on {
            self.allcommands = false;
        }
        self.firstargs.remove(&i);
        for j in subcommands(i) {
            set_bit(&mut self.commands, j, on);
        }
    }

    /// Whether the user may run `name` (`cmd` or `cmd|sub`) with `args`; commands Redis's
    /// table lacks need `+@all`.
    pub fn can_run(&self, name: &str, args: &[Vec<u8>]) -> bool {
        if self.allcommands {
            return true;
        }
        let Some(i) = command_index(name) else {
            return self.commands.get(FUTURE);
        };
        if self.commands.get(i) {
            return true;
        }
        match (self.firstargs.get(&i), args.get(1)) {
            (Some(allowed), Some(arg)) if !name.contains('|') => allowed
                .iter()
                .any(|a| a.as_bytes().eq_ignore_ascii_case(arg)),
            _ => false,
        }
    }

    /// Whether the user may access `key` for reading and/or writing.
    pub fn can_key(&self, key: &[u8], read: bool, write: bool) -> bool {
        self.allkeys
            || self
                .keys
                .iter()
                .any(|k| (k.read || !read) && (k.write || !write) && glob::matches(&k.pattern, key))
    }

    /// Whether the user may use `channel`; a pattern subscription must name one of the
    /// user's patterns exactly, as in Redis.
    pub fn can_channel(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.allchannels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p == channel
                } else {
                    glob::matches(p, channel)
                }
            })
    }

    /// The flags as ACL GETUSER lists them.
    pub fn flag_names(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.skip_sanitize {
            Some(true) => flags.push("skip-sanitize-payload"),
            Some(false) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    /// The password hashes.
    pub fn password_hashes(&self) -> &[String] {
        &self.passwords
    }

    /// The key patterns as ACL GETUSER shows them (`~*`, `~a %R~b`, or empty).
    pub fn keys_text(&self) -> String {
        if self.allkeys {
            return "~*".into();
        }
        let parts: Vec<String> = self
            .keys
            .iter()
            .map(|k| {
                let prefix = match (k.read, k.write) {
                    (true, false) => "%R~",
                    (false, true) => "%W~",
                    _ => "~",
                };
                format!("{prefix}{}", String::from_utf8_lossy(&k.pattern))
            })
            .collect();
        parts.join(" ")
    }

    /// The channel patterns as ACL GETUSER shows them (`&*`, `&a &b`, or empty).
    pub fn channels_text(&self) -> String {
        if self.allchannels {
            return "&*".into();
        }
        let parts: Vec<String> = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        parts.join(" ")
    }

    /// The command rules, as Redis's `ACLDescribeSelectorCommandRules` derives them from
    /// the bitmap: `+@all` or `-@all`, the categories that fit best one by one, then the
    /// single commands that still differ (in table order; Redis's follows its hash table).
    pub fn commands_text(&self) -> String {
        let additive = !self.commands.get(FUTURE);
        let mut rules = vec![if additive { "-@all" } else { "+@all" }.to_string()];
        let mut fake = User::new("");
        fake.set_all(!additive);
        let mut temp = self.commands;
        let mut applied = [false; CATEGORIES.len()];
        loop {
            let mut best = None;
            let (mut min_diff, mut max_same) = (usize::MAX, 0);
            for (j, (_, flag)) in CATEGORIES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = count_bits(&temp, *flag);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                    best = Some(j);
                    (min_diff, max_same) = (diff, same);
                }
            }
            let Some(j) = best else { break };
            let name = CATEGORIES[j].0;
            let _ = fake.apply_category(name.as_bytes(), additive);
            let mut inverse = User::new("");
            inverse.commands = temp;
            let _ = inverse.apply_category(name.as_bytes(), !additive);
            temp = inverse.commands;
            rules.push(format!("{}@{name}", if additive { '+' } else { '-' }));
            applied[j] = true;
        }
        for (i, (name, _)) in COMMANDS.iter().enumerate() {
            let bit = self.commands.get(i);
            if bit != fake.commands.get(i) {
                rules.push(format!("{}{name}", if bit { '+' } else { '-' }));
                fake.change_perm(i, bit);
            }
            if !bit && let Some(args) = self.firstargs.get(&i) {
                for arg in args {
                    rules.push(format!("+{name}|{arg}"));
                }
            }
        }
        rules.join(" ")
    }

    /// Keys, channels and commands as Redis's `ACLDescribeSelector` gives them.
    fn describe_permissions(&self) -> String {
        let mut out = String::new();
        if self.allkeys || !self.keys.is_empty() {
            out.push_str(&self.keys_text());
            out.push(' ');
        }
        if self.allchannels {
            out.push_str("&* ");
        } else {
            out.push_str("resetchannels ");
            for c in &self.channels {
                out.push('&');
                out.push_str(&String::from_utf8_lossy(c));
                out.push(' ');
            }
        }
        out.push_str(&self.commands_text());
        out
    }

    /// The user as ACL LIST shows it (without the leading `user <name> `).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for flag in self.flag_names() {
            out.push_str(flag);
            out.push(' ');
        }
        for p in &self.passwords {
            out.push('#');
            out.push_str(p);
            out.push(' ');
        }
        out.push_str(&self.describe_permissions());
        for selector in &self.selectors {
            out.push_str(" (");
            out.push_str(&selector.describe_permissions());
            out.push(')');
        }
        out
    }
}

/// Compares without an early exit, so timing does not reveal the matching prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Sets bit `i`, as Redis's `ACLSetSelectorCommandBit`.
fn set_bit(bits: &mut Bits, i: usize, on: bool) {
    bits.set(i, on);
}

/// How many commands of category `flag` are on and off in `bits`.
fn count_bits(bits: &Bits, flag: u32) -> (usize, usize) {
    let (mut on, mut off) = (0, 0);
    for (i, (_, flags)) in COMMANDS.iter().enumerate() {
        if flags & flag != 0 {
            if bits.get(i) {
                on += 1;
            } else {
                off += 1;
            }
        }
    }
    (on, off)
}

/// A command name of a rule (any case), as its [`COMMANDS`] index.
fn lookup(name: &[u8]) -> Option<usize> {
    let name = std::str::from_utf8(name).ok()?.to_lowercase();
    if name.matches('|').count() > 1 {
        return None;
    }
    command_index(&name)
}

/// A `#`/`!` rule's hash: 64 lower-case hex digits.
fn valid_hash(hex: &[u8]) -> Result<String, RuleError> {
    if hex.len() != 64 || !hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(BAD_HASH);
    }
    Ok(String::from_utf8_lossy(hex).into_owned())
}

/// One ACL LOG entry.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// How many times it happened (grouped within a minute).
    pub count: u64,
    /// `command`, `key`, `channel` or `auth`.
    pub reason: &'static str,
    /// `toplevel`, `multi` or `lua`.
    pub context: &'static str,
    /// The command, key or channel; `AUTH` for a failed authentication.
    pub object: String,
    /// The user.
    pub username: String,
    /// When it last happened.
    pub at: Instant,
    /// The client's CLIENT LIST line.
    pub client_info: String,
}

/// ACL LOG keeps this many entries (Redis's `acllog-max-len` default).
const LOG_MAX: usize = 128;
/// Entries alike within this long are one entry with a count.
const LOG_GROUPING_MS: u128 = 60_000;

/// Every user, and the ACL LOG.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<String, User>>,
    /// Bumped by every change to a user: a session whose user was found unrestricted at
    /// this number skips the permission checks.
    epoch: AtomicU64,
    log: Mutex<Vec<LogEntry>>,
}

impl Acl {
    /// Only the `default` user, with `requirepass` as its password if set.
    pub fn new(requirepass: Option<&str>) -> Self {
        let mut users = BTreeMap::new();
        users.insert("default".to_string(), User::default_user(requirepass));
        Acl {
            users: RwLock::new(users),
            epoch: AtomicU64::new(1),
            log: Mutex::new(Vec::new()),
        }
    }

    /// The change counter (see [`Acl::epoch`]'s field).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The users, for reading.
    pub fn users(&self) -> RwLockReadGuard<'_, BTreeMap<String, User>> {
        self.users.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the users; bumps the epoch so sessions check again.
    pub fn update<T>(&self, change: impl FnOnce(&mut BTreeMap<String, User>) -> T) -> T {
        let mut users = self.users.write().unwrap_or_else(|e| e.into_inner());
        let out = change(&mut users);
        self.epoch.fetch_add(1, Ordering::AcqRel);
        out
    }

    /// Replaces every user (ACL LOAD); returns the names of the users replaced, but
    /// `default`: as in Redis 7.0, their connections close.
    pub fn replace_users(&self, users: BTreeMap<String, User>) -> Vec<String> {
        self.update(|current| {
            let old = std::mem::replace(current, users);
            old.into_keys().filter(|name| name != "default").collect()
        })
    }

    /// CONFIG SET requirepass: the default user's password follows it.
    pub fn set_default_password(&self, password: Option<&str>) {
        self.update(|users| {
            if let Some(user) = users.get_mut("default") {
                user.set_password(password);
            }
        });
    }

    /// Whether user `name` exists and may run anything (the requests of a restricted
    /// user run one by one through dispatch, which checks them).
    pub fn unrestricted(&self, name: &str) -> bool {
        self.users().get(name).is_some_and(User::unrestricted)
    }

    /// A connection starting (or RESET): as the default user, authenticated if that is on
    /// and nopass, as Redis's `createClient`.
    pub fn start_session(&self, session: &mut Session, requirepass: bool) {
        let users = self.users();
        // Read under the lock, which `update` holds while it bumps the epoch.
        let epoch = self.epoch();
        let default = users.get("default");
        let open = default.is_some_and(User::open);
        session.user = "default".into();
        session.authenticated = open;
        session.acl_locked = !open && !requirepass;
        // Known unrestricted from the start, so that its requests (pipelined writes
        // included, which do not pass `dispatch`) skip the check.
        session.acl_ok = match default {
            Some(user) if user.unrestricted() => epoch,
            _ => 0,
        };
    }

    /// Whether `name` exists, is on and takes `password`.
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        self.users()
            .get(name.as_ref())
            .is_some_and(|u| u.accepts(password))
    }

    /// Records a denial or a failed AUTH.
    pub fn log(&self, mut entry: LogEntry) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = log.iter_mut().find(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.at.duration_since(e.at).as_millis() < LOG_GROUPING_MS
        }) {
            old.count += 1;
            old.at = entry.at;
            old.client_info = std::mem::take(&mut entry.client_info);
            return;
        }
        log.insert(0, entry);
        log.truncate(LOG_MAX);
    }

    /// The newest `count` entries.
    pub fn log_entries(&self, count: usize) -> Vec<LogEntry> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().take(count).cloned().collect()
    }

    /// ACL LOG RESET.
    pub fn reset_log(&self) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Lower-case hex SHA-256 of `data`, as Redis stores passwords.
pub fn sha256_hex(data: &[u8]) -> String {
    sha256(data).iter().map(|b| format!("{b:02x}")).collect()
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256 (FIPS 180-4).
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Redis 7.0.15's commands and subcommands (as `COMMAND` lists them), sorted by name, with
/// their ACL categories: taken from redis-server's COMMAND reply.
pub const COMMANDS: &[(&str, u32)] = &[
    ("acl", C_SLOW),
    ("acl|cat", C_SLOW),
    ("acl|deluser", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|dryrun", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|genpass", C_SLOW),
    ("acl|getuser", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|help", C_SLOW),
    ("acl|list", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|load", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|log", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|save", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|setuser", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|users", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("acl|whoami", C_SLOW),
    ("append", C_WRITE | C_STRING | C_FAST),
    ("asking", C_FAST | C_CONNECTION),
    ("auth", C_FAST | C_CONNECTION),
    ("bgrewriteaof", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("bgsave", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("bitcount", C_READ | C_BITMAP | C_SLOW),
    ("bitfield", C_WRITE | C_BITMAP | C_SLOW),
    ("bitfield_ro", C_READ | C_BITMAP | C_FAST),
    ("bitop", C_WRITE | C_BITMAP | C_SLOW),
    ("bitpos", C_READ | C_BITMAP | C_SLOW),
    ("blmove", C_WRITE | C_LIST | C_SLOW | C_BLOCKING),
    ("blmpop", C_WRITE | C_LIST | C_SLOW | C_BLOCKING),
    ("blpop", C_WRITE | C_LIST | C_SLOW | C_BLOCKING),
    ("brpop", C_WRITE | C_LIST | C_SLOW | C_BLOCKING),
    ("brpoplpush", C_WRITE | C_LIST | C_SLOW | C_BLOCKING),
    ("bzmpop", C_WRITE | C_SORTEDSET | C_SLOW | C_BLOCKING),
    ("bzpopmax", C_WRITE | C_SORTEDSET | C_FAST | C_BLOCKING),
    ("bzpopmin", C_WRITE | C_SORTEDSET | C_FAST | C_BLOCKING),
    ("client", C_SLOW),
    ("client|caching", C_SLOW | C_CONNECTION),
    ("client|getname", C_SLOW | C_CONNECTION),
    ("client|getredir", C_SLOW | C_CONNECTION),
    ("client|help", C_SLOW | C_CONNECTION),
    ("client|id", C_SLOW | C_CONNECTION),
    ("client|info", C_SLOW | C_CONNECTION),
    ("client|kill", C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION),
    ("client|list", C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION),
    (
        "client|no-evict",
        C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION,
    ),
    (
        "client|pause",
        C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION,
    ),
    ("client|reply", C_SLOW | C_CONNECTION),
    ("client|setname", C_SLOW | C_CONNECTION),
    ("client|tracking", C_SLOW | C_CONNECTION),
    ("client|trackinginfo", C_SLOW | C_CONNECTION),
    (
        "client|unblock",
        C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION,
    ),
    (
        "client|unpause",
        C_ADMIN | C_SLOW | C_DANGEROUS | C_CONNECTION,
    ),
    ("cluster", C_SLOW),
    ("cluster|addslots", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|addslotsrange", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|bumpepoch", C_ADMIN | C_SLOW | C_DANGEROUS),
    (
        "cluster|count-failure-reports",
        C_ADMIN | C_SLOW | C_DANGEROUS,
    ),
    ("cluster|countkeysinslot", C_SLOW),
    ("cluster|delslots", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|delslotsrange", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|failover", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|flushslots", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|forget", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|getkeysinslot", C_SLOW),
    ("cluster|help", C_SLOW),
    ("cluster|info", C_SLOW),
    ("cluster|keyslot", C_SLOW),
    ("cluster|links", C_SLOW),
    ("cluster|meet", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|myid", C_SLOW),
    ("cluster|nodes", C_SLOW),
    ("cluster|replicas", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|replicate", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|reset", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|saveconfig", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|set-config-epoch", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|setslot", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|shards", C_SLOW),
    ("cluster|slaves", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("cluster|slots", C_SLOW),
    ("command", C_SLOW | C_CONNECTION),
    ("command|count", C_SLOW | C_CONNECTION),
    ("command|docs", C_SLOW | C_CONNECTION),
    ("command|getkeys", C_SLOW | C_CONNECTION),
    ("command|getkeysandflags", C_SLOW | C_CONNECTION),
    ("command|help", C_SLOW | C_CONNECTION),
    ("command|info", C_SLOW | C_CONNECTION),
    ("command|list", C_SLOW | C_CONNECTION),
    ("config", C_SLOW),
    ("config|get", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("config|help", C_SLOW),
    ("config|resetstat", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("config|rewrite", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("config|set", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("copy", C_KEYSPACE | C_WRITE | C_SLOW),
    ("dbsize", C_KEYSPACE | C_READ | C_FAST),
    ("debug", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("decr", C_WRITE | C_STRING | C_FAST),
    ("decrby", C_WRITE | C_STRING | C_FAST),
    ("del", C_KEYSPACE | C_WRITE | C_SLOW),
    ("discard", C_FAST | C_TRANSACTION),
    ("dump", C_KEYSPACE | C_READ | C_SLOW),
    ("echo", C_FAST | C_CONNECTION),
    ("eval", C_SLOW | C_SCRIPTING),
    ("eval_ro", C_SLOW | C_SCRIPTING),
    ("evalsha", C_SLOW | C_SCRIPTING),
    ("evalsha_ro", C_SLOW | C_SCRIPTING),
    ("exec", C_SLOW | C_TRANSACTION),
    ("exists", C_KEYSPACE | C_READ | C_FAST),
    ("expire", C_KEYSPACE | C_WRITE | C_FAST),
    ("expireat", C_KEYSPACE | C_WRITE | C_FAST),
    ("expiretime", C_KEYSPACE | C_READ | C_FAST),
    ("failover", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("fcall", C_SLOW | C_SCRIPTING),
    ("fcall_ro", C_SLOW | C_SCRIPTING),
    ("flushall", C_KEYSPACE | C_WRITE | C_SLOW | C_DANGEROUS),
    ("flushdb", C_KEYSPACE | C_WRITE | C_SLOW | C_DANGEROUS),
    ("function", C_SLOW),
    ("function|delete", C_WRITE | C_SLOW | C_SCRIPTING),
    ("function|dump", C_SLOW | C_SCRIPTING),
    ("function|flush", C_WRITE | C_SLOW | C_SCRIPTING),
    ("function|help", C_SLOW | C_SCRIPTING),
    ("function|kill", C_SLOW | C_SCRIPTING),
    ("function|list", C_SLOW | C_SCRIPTING),
    ("function|load", C_WRITE | C_SLOW | C_SCRIPTING),
    ("function|restore", C_WRITE | C_SLOW | C_SCRIPTING),
    ("function|stats", C_SLOW | C_SCRIPTING),
    ("geoadd", C_WRITE | C_GEO | C_SLOW),
    ("geodist", C_READ | C_GEO | C_SLOW),
    ("geohash", C_READ | C_GEO | C_SLOW),
    ("geopos", C_READ | C_GEO | C_SLOW),
    ("georadius", C_WRITE | C_GEO | C_SLOW),
    ("georadius_ro", C_READ | C_GEO | C_SLOW),
    ("georadiusbymember", C_WRITE | C_GEO | C_SLOW),
    ("georadiusbymember_ro", C_READ | C_GEO | C_SLOW),
    ("geosearch", C_READ | C_GEO | C_SLOW),
    ("geosearchstore", C_WRITE | C_GEO | C_SLOW),
    ("get", C_READ | C_STRING | C_FAST),
    ("getbit", C_READ | C_BITMAP | C_FAST),
    ("getdel", C_WRITE | C_STRING | C_FAST),
    ("getex", C_WRITE | C_STRING | C_FAST),
    ("getrange", C_READ | C_STRING | C_SLOW),
    ("getset", C_WRITE | C_STRING | C_FAST),
    ("hdel", C_WRITE | C_HASH | C_FAST),
    ("hello", C_FAST | C_CONNECTION),
    ("hexists", C_READ | C_HASH | C_FAST),
    ("hget", C_READ | C_HASH | C_FAST),
    ("hgetall", C_READ | C_HASH | C_SLOW),
    ("hincrby", C_WRITE | C_HASH | C_FAST),
    ("hincrbyfloat", C_WRITE | C_HASH | C_FAST),
    ("hkeys", C_READ | C_HASH | C_SLOW),
    ("hlen", C_READ | C_HASH | C_FAST),
    ("hmget", C_READ | C_HASH | C_FAST),
    ("hmset", C_WRITE | C_HASH | C_FAST),
    ("hrandfield", C_READ | C_HASH | C_SLOW),
    ("hscan", C_READ | C_HASH | C_SLOW),
    ("hset", C_WRITE | C_HASH | C_FAST),
    ("hsetnx", C_WRITE | C_HASH | C_FAST),
    ("hstrlen", C_READ | C_HASH | C_FAST),
    ("hvals", C_READ | C_HASH | C_SLOW),
    ("incr", C_WRITE | C_STRING | C_FAST),
    ("incrby", C_WRITE | C_STRING | C_FAST),
    ("incrbyfloat", C_WRITE | C_STRING | C_FAST),
    ("info", C_SLOW | C_DANGEROUS),
    ("keys", C_KEYSPACE | C_READ | C_SLOW | C_DANGEROUS),
    ("lastsave", C_ADMIN | C_FAST | C_DANGEROUS),
    ("latency", C_SLOW),
    ("latency|doctor", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("latency|graph", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("latency|help", C_SLOW),
    ("latency|histogram", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("latency|history", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("latency|latest", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("latency|reset", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("lcs", C_READ | C_STRING | C_SLOW),
    ("lindex", C_READ | C_LIST | C_SLOW),
    ("linsert", C_WRITE | C_LIST | C_SLOW),
    ("llen", C_READ | C_LIST | C_FAST),
    ("lmove", C_WRITE | C_LIST | C_SLOW),
    ("lmpop", C_WRITE | C_LIST | C_SLOW),
    ("lolwut", C_READ | C_FAST),
    ("lpop", C_WRITE | C_LIST | C_FAST),
    ("lpos", C_READ | C_LIST | C_SLOW),
    ("lpush", C_WRITE | C_LIST | C_FAST),
    ("lpushx", C_WRITE | C_LIST | C_FAST),
    ("lrange", C_READ | C_LIST | C_SLOW),
    ("lrem", C_WRITE | C_LIST | C_SLOW),
    ("lset", C_WRITE | C_LIST | C_SLOW),
    ("ltrim", C_WRITE | C_LIST | C_SLOW),
    ("memory", C_SLOW),
    ("memory|doctor", C_SLOW),
    ("memory|help", C_SLOW),
    ("memory|malloc-stats", C_SLOW),
    ("memory|purge", C_SLOW),
    ("memory|stats", C_SLOW),
    ("memory|usage", C_READ | C_SLOW),
    ("mget", C_READ | C_STRING | C_FAST),
    ("migrate", C_KEYSPACE | C_WRITE | C_SLOW | C_DANGEROUS),
    ("module", C_SLOW),
    ("module|help", C_SLOW),
    ("module|list", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("module|load", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("module|loadex", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("module|unload", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("monitor", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("move", C_KEYSPACE | C_WRITE | C_FAST),
    ("mset", C_WRITE | C_STRING | C_SLOW),
    ("msetnx", C_WRITE | C_STRING | C_SLOW),
    ("multi", C_FAST | C_TRANSACTION),
    ("object", C_SLOW),
    ("object|encoding", C_KEYSPACE | C_READ | C_SLOW),
    ("object|freq", C_KEYSPACE | C_READ | C_SLOW),
    ("object|help", C_KEYSPACE | C_SLOW),
    ("object|idletime", C_KEYSPACE | C_READ | C_SLOW),
    ("object|refcount", C_KEYSPACE | C_READ | C_SLOW),
    ("persist", C_KEYSPACE | C_WRITE | C_FAST),
    ("pexpire", C_KEYSPACE | C_WRITE | C_FAST),
    ("pexpireat", C_KEYSPACE | C_WRITE | C_FAST),
    ("pexpiretime", C_KEYSPACE | C_READ | C_FAST),
    ("pfadd", C_WRITE | C_HYPERLOGLOG | C_FAST),
    ("pfcount", C_READ | C_HYPERLOGLOG | C_SLOW),
    (
        "pfdebug",
        C_WRITE | C_HYPERLOGLOG | C_ADMIN | C_SLOW | C_DANGEROUS,
    ),
    ("pfmerge", C_WRITE | C_HYPERLOGLOG | C_SLOW),
    ("pfselftest", C_HYPERLOGLOG | C_ADMIN | C_SLOW | C_DANGEROUS),
    ("ping", C_FAST | C_CONNECTION),
    ("psetex", C_WRITE | C_STRING | C_SLOW),
    ("psubscribe", C_PUBSUB | C_SLOW),
    ("psync", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("pttl", C_KEYSPACE | C_READ | C_FAST),
    ("publish", C_PUBSUB | C_FAST),
    ("pubsub", C_SLOW),
    ("pubsub|channels", C_PUBSUB | C_SLOW),
    ("pubsub|help", C_SLOW),
    ("pubsub|numpat", C_PUBSUB | C_SLOW),
    ("pubsub|numsub", C_PUBSUB | C_SLOW),
    ("pubsub|shardchannels", C_PUBSUB | C_SLOW),
    ("pubsub|shardnumsub", C_PUBSUB | C_SLOW),
    ("punsubscribe", C_PUBSUB | C_SLOW),
    ("quit", C_FAST | C_CONNECTION),
    ("randomkey", C_KEYSPACE | C_READ | C_SLOW),
    ("readonly", C_FAST | C_CONNECTION),
    ("readwrite", C_FAST | C_CONNECTION),
    ("rename", C_KEYSPACE | C_WRITE | C_SLOW),
    ("renamenx", C_KEYSPACE | C_WRITE | C_FAST),
    ("replconf", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("replicaof", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("reset", C_FAST | C_CONNECTION),
    ("restore", C_KEYSPACE | C_WRITE | C_SLOW | C_DANGEROUS),
    (
        "restore-asking",
        C_KEYSPACE | C_WRITE | C_SLOW | C_DANGEROUS,
    ),
    ("role", C_ADMIN | C_FAST | C_DANGEROUS),
    ("rpop", C_WRITE | C_LIST | C_FAST),
    ("rpoplpush", C_WRITE | C_LIST | C_SLOW),
    ("rpush", C_WRITE | C_LIST | C_FAST),
    ("rpushx", C_WRITE | C_LIST | C_FAST),
    ("sadd", C_WRITE | C_SET | C_FAST),
    ("save", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("scan", C_KEYSPACE | C_READ | C_SLOW),
    ("scard", C_READ | C_SET | C_FAST),
    ("script", C_SLOW),
    ("script|debug", C_SLOW | C_SCRIPTING),
    ("script|exists", C_SLOW | C_SCRIPTING),
    ("script|flush", C_SLOW | C_SCRIPTING),
    ("script|help", C_SLOW | C_SCRIPTING),
    ("script|kill", C_SLOW | C_SCRIPTING),
    ("script|load", C_SLOW | C_SCRIPTING),
    ("sdiff", C_READ | C_SET | C_SLOW),
    ("sdiffstore", C_WRITE | C_SET | C_SLOW),
    ("select", C_FAST | C_CONNECTION),
    ("set", C_WRITE | C_STRING | C_SLOW),
    ("setbit", C_WRITE | C_BITMAP | C_SLOW),
    ("setex", C_WRITE | C_STRING | C_SLOW),
    ("setnx", C_WRITE | C_STRING | C_FAST),
    ("setrange", C_WRITE | C_STRING | C_SLOW),
    ("shutdown", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("sinter", C_READ | C_SET | C_SLOW),
    ("sintercard", C_READ | C_SET | C_SLOW),
    ("sinterstore", C_WRITE | C_SET | C_SLOW),
    ("sismember", C_READ | C_SET | C_FAST),
    ("slaveof", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("slowlog", C_SLOW),
    ("slowlog|get", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("slowlog|help", C_SLOW),
    ("slowlog|len", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("slowlog|reset", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("smembers", C_READ | C_SET | C_SLOW),
    ("smismember", C_READ | C_SET | C_FAST),
    ("smove", C_WRITE | C_SET | C_FAST),
    (
        "sort",
        C_WRITE | C_SET | C_SORTEDSET | C_LIST | C_SLOW | C_DANGEROUS,
    ),
    (
        "sort_ro",
        C_READ | C_SET | C_SORTEDSET | C_LIST | C_SLOW | C_DANGEROUS,
    ),
    ("spop", C_WRITE | C_SET | C_FAST),
    ("spublish", C_PUBSUB | C_FAST),
    ("srandmember", C_READ | C_SET | C_SLOW),
    ("srem", C_WRITE | C_SET | C_FAST),
    ("sscan", C_READ | C_SET | C_SLOW),
    ("ssubscribe", C_PUBSUB | C_SLOW),
    ("strlen", C_READ | C_STRING | C_FAST),
    ("subscribe", C_PUBSUB | C_SLOW),
    ("substr", C_READ | C_STRING | C_SLOW),
    ("sunion", C_READ | C_SET | C_SLOW),
    ("sunionstore", C_WRITE | C_SET | C_SLOW),
    ("sunsubscribe", C_PUBSUB | C_SLOW),
    ("swapdb", C_KEYSPACE | C_WRITE | C_FAST | C_DANGEROUS),
    ("sync", C_ADMIN | C_SLOW | C_DANGEROUS),
    ("time", C_FAST),
    ("touch", C_KEYSPACE | C_READ | C_FAST),
    ("ttl", C_KEYSPACE | C_READ | C_FAST),
    ("type", C_KEYSPACE | C_READ | C_FAST),
    ("unlink", C_KEYSPACE | C_WRITE | C_FAST),
    ("unsubscribe", C_PUBSUB | C_SLOW),
    ("unwatch", C_FAST | C_TRANSACTION),
    ("wait", C_SLOW | C_CONNECTION),
    ("watch", C_FAST | C_TRANSACTION),
    ("xack", C_WRITE | C_STREAM | C_FAST),
    ("xadd", C_WRITE | C_STREAM | C_FAST),
    ("xautoclaim", C_WRITE | C_STREAM | C_FAST),
    ("xclaim", C_WRITE | C_STREAM | C_FAST),
    ("xdel", C_WRITE | C_STREAM | C_FAST),
    ("xgroup", C_SLOW),
    ("xgroup|create", C_WRITE | C_STREAM | C_SLOW),
    ("xgroup|createconsumer", C_WRITE | C_STREAM | C_SLOW),
    ("xgroup|delconsumer", C_WRITE | C_STREAM | C_SLOW),
    ("xgroup|destroy", C_WRITE | C_STREAM | C_SLOW),
    ("xgroup|help", C_STREAM | C_SLOW),
    ("xgroup|setid", C_WRITE | C_STREAM | C_SLOW),
    ("xinfo", C_SLOW),
    ("xinfo|consumers", C_READ | C_STREAM | C_SLOW),
    ("xinfo|groups", C_READ | C_STREAM | C_SLOW),
    ("xinfo|help", C_STREAM | C_SLOW),
    ("xinfo|stream", C_READ | C_STREAM | C_SLOW),
    ("xlen", C_READ | C_STREAM | C_FAST),
    ("xpending", C_READ | C_STREAM | C_SLOW),
    ("xrange", C_READ | C_STREAM | C_SLOW),
    ("xread", C_READ | C_STREAM | C_SLOW | C_BLOCKING),
    ("xreadgroup", C_WRITE | C_STREAM | C_SLOW | C_BLOCKING),
    ("xrevrange", C_READ | C_STREAM | C_SLOW),
    ("xsetid", C_WRITE | C_STREAM | C_FAST),
    ("xtrim", C_WRITE | C_STREAM | C_SLOW),
    ("zadd", C_WRITE | C_SORTEDSET | C_FAST),
    ("zcard", C_READ | C_SORTEDSET | C_FAST),
    ("zcount", C_READ | C_SORTEDSET | C_FAST),
    ("zdiff", C_READ | C_SORTEDSET | C_SLOW),
    ("zdiffstore", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zincrby", C_WRITE | C_SORTEDSET | C_FAST),
    ("zinter", C_READ | C_SORTEDSET | C_SLOW),
    ("zintercard", C_READ | C_SORTEDSET | C_SLOW),
    ("zinterstore", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zlexcount", C_READ | C_SORTEDSET | C_FAST),
    ("zmpop", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zmscore", C_READ | C_SORTEDSET | C_FAST),
    ("zpopmax", C_WRITE | C_SORTEDSET | C_FAST),
    ("zpopmin", C_WRITE | C_SORTEDSET | C_FAST),
    ("zrandmember", C_READ | C_SORTEDSET | C_SLOW),
    ("zrange", C_READ | C_SORTEDSET | C_SLOW),
    ("zrangebylex", C_READ | C_SORTEDSET | C_SLOW),
    ("zrangebyscore", C_READ | C_SORTEDSET | C_SLOW),
    ("zrangestore", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zrank", C_READ | C_SORTEDSET | C_FAST),
    ("zrem", C_WRITE | C_SORTEDSET | C_FAST),
    ("zremrangebylex", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zremrangebyrank", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zremrangebyscore", C_WRITE | C_SORTEDSET | C_SLOW),
    ("zrevrange", C_READ | C_SORTEDSET | C_SLOW),
    ("zrevrangebylex", C_READ | C_SORTEDSET | C_SLOW),
    ("zrevrangebyscore", C_READ | C_SORTEDSET | C_SLOW),
    ("zrevrank", C_READ | C_SORTEDSET | C_FAST),
    ("zscan", C_READ | C_SORTEDSET | C_SLOW),
    ("zscore", C_READ | C_SORTEDSET | C_FAST),
    ("zunion", C_READ | C_SORTEDSET | C_SLOW),
    ("zunionstore", C_WRITE | C_SORTEDSET | C_SLOW),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &[&str]) -> User {
        let mut u = User::new("u");
        for r in rules {
            u.apply(r.as_bytes()).expect("rule applies");
        }
        u
    }

    #[test]
    fn sha256_fips_vectors() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            sha256_hex(&million),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn table_is_sorted_and_categories_known() {
        assert!(COMMANDS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(command_index("get").map(|i| COMMANDS[i].0), Some("get"));
        assert!(is_container("config"));
        assert!(!is_container("get"));
        assert_eq!(category(b"HASH"), Some(C_HASH));
        assert_eq!(category(b"nope"), None);
    }

    #[test]
    fn default_user_describes_as_redis() {
        assert_eq!(User::default_user(None).describe(), "on nopass ~* &* +@all");
        assert_eq!(
            User::default_user(Some("x")).describe(),
            "on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~* &* +@all"
        );
        assert_eq!(User::new("n").describe(), "off resetchannels -@all");
    }

    #[test]
    fn rules_describe_as_redis() {
        // Both checked against redis-server 7.0.15's ACL LIST.
        let u = user(&["+set", "+get", "+del", "+@string", "-incr"]);
        assert_eq!(u.commands_text(), "-@all +@string +del -incr");
        let u = user(&["~k*", "%R~r*", "resetchannels", "&x"]);
        assert_eq!(u.keys_text(), "~k* %R~r*");
        assert_eq!(u.channels_text(), "&x");
        let u = user(&["+select|0", "+get|x"]);
        assert_eq!(u.commands_text(), "-@all +get|x +select|0");
    }

    #[test]
    fn rule_errors() {
        let mut u = User::new("u");
        assert_eq!(u.apply(b"foo"), Err(SYNTAX));
        assert_eq!(u.apply(b"+nocmd"), Err(UNKNOWN));
        assert_eq!(u.apply(b"+@nocat"), Err(UNKNOWN));
        assert_eq!(u.apply(b"%X~a"), Err(SYNTAX));
        assert_eq!(u.apply(b"%~a"), Err(SYNTAX));
        assert_eq!(u.apply(b"#abc"), Err(BAD_HASH));
        assert_eq!(u.apply(b"<nopass"), Err(NO_SUCH_PASS));
        assert_eq!(
            u.apply(b"+config|get|x"),
            Err("Allowing first-arg of a subcommand is not supported")
        );
        assert!(u.apply(b"allkeys").is_ok());
        assert!(u.apply(b"~a").is_err());
    }

    /// Commands of docdb's own (or not in Redis 7.0.15): they have no ACL categories and
    /// run only for users with `+@all`.
    const DOCDB_ONLY: &[&str] = &[
        "docdb.asof",
        "createdb",
        "deletedb",
        "listdb",
        "tsadd",
        "tscard",
        "tsget",
        "tslastn",
        "tsrangebytime",
        "tsrem",
        "tsrevrangebytime",
    ];

    #[test]
    fn every_command_has_categories() {
        let table = crate::cmd::Table::<engine::MemEngine>::new();
        let mut missing: Vec<&str> = table
            .all()
            .map(|spec| spec.name)
            .filter(|name| command_index(name).is_none() && !DOCDB_ONLY.contains(name))
            .collect();
        missing.sort_unstable();
        assert!(missing.is_empty(), "no ACL categories for {missing:?}");
        for (name, flags) in COMMANDS {
            assert!(*flags != 0 || name.contains('|'), "{name} has no category");
        }
    }

    #[test]
    fn matcher() {
        let u = user(&[
            "on",
            ">pw",
            "~k*",
            "%R~r*",
            "&c*",
            "+get",
            "+set",
            "+config|get",
        ]);
        assert!(u.accepts(b"pw"));
        assert!(!u.accepts(b"px"));
        assert!(u.can_run("get", &[]));
        assert!(!u.can_run("del", &[]));
        assert!(u.can_run("config|get", &[]));
        assert!(!u.can_run("config|set", &[]));
        assert!(!u.can_run("docdb.asof", &[]));
        assert!(u.can_key(b"k1", true, true));
        assert!(u.can_key(b"r1", true, false));
        assert!(!u.can_key(b"r1", false, true));
        assert!(!u.can_key(b"x", true, false));
        assert!(u.can_channel(b"c1", false));
        assert!(!u.can_channel(b"c*x", true));
        assert!(u.can_channel(b"c*", true));
        let all = user(&["+@all", "-get"]);
        assert!(all.can_run("docdb.asof", &[]));
        assert!(!all.can_run("get", &[]));
        let sel = user(&["+select|0"]);
        assert!(sel.can_run("select", &[b"select".to_vec(), b"0".to_vec()]));
        assert!(!sel.can_run("select", &[b"select".to_vec(), b"1".to_vec()]));
    }
}
