//! Where a command's keys sit among its arguments, as Redis 7.0's key specs place them:
//! COMMAND INFO and GETKEYS report them, and client-side caching tracks and invalidates
//! them.

use engine::Engine;

use super::{Spec, is};
use crate::error::{CmdError, CmdResult};

/// Commands whose keys depend on their arguments (Redis's `movablekeys`).
const MOVABLE: &[&str] = &[
    "blmpop",
    "bzmpop",
    "eval",
    "eval_ro",
    "evalsha",
    "evalsha_ro",
    "fcall",
    "fcall_ro",
    "georadius",
    "georadiusbymember",
    "lmpop",
    "memory",
    "object",
    "sintercard",
    "sort",
    "sort_ro",
    "xgroup",
    "xinfo",
    "xread",
    "xreadgroup",
    "zdiff",
    "zdiffstore",
    "zinter",
    "zintercard",
    "zinterstore",
    "zmpop",
    "zunion",
    "zunionstore",
];

/// Scripts may be called with no keys at all (Redis's `no-mandatory-keys`).
const NO_MANDATORY_KEYS: &[&str] = &[
    "eval",
    "eval_ro",
    "evalsha",
    "evalsha_ro",
    "fcall",
    "fcall_ro",
];

/// Whether `spec` may have keys at all: COMMAND GETKEYS says it has none before it looks
/// at the request's arity, as Redis does.
pub fn has_keys<E: Engine>(spec: &Spec<E>) -> bool {
    spec.first_key != 0 || MOVABLE.contains(&spec.name)
}

/// COMMAND GETKEYS: the positions of the keys of `args`, a request to `spec` whose arity is
/// already checked, with Redis's errors for a command without keys or invalid key counts.
pub fn getkeys<E: Engine>(spec: &Spec<E>, args: &[Vec<u8>]) -> CmdResult<Vec<usize>> {
    let no_keys = || CmdError::err("The command has no key arguments");
    if !has_keys(spec) {
        return Err(no_keys());
    }
    if let Some(&(_, subcommands)) = STREAM_SUBCOMMANDS.iter().find(|c| c.0 == spec.name) {
        // Redis looks the subcommand up as a command of its own.
        let sub = &args[1];
        let Some(&(name, arity)) = subcommands.iter().find(|(name, _)| is(sub, name)) else {
            return Err(CmdError::err("Invalid command specified"));
        };
        if name == "help" {
            return Err(no_keys());
        }
        let argc = args.len() as i32;
        if (arity >= 0 && argc != arity) || argc < arity.abs() {
            return Err(CmdError::err(
                "Invalid number of arguments specified for command",
            ));
        }
    }
    match key_positions(spec, args) {
        Some(keys) if !keys.is_empty() || NO_MANDATORY_KEYS.contains(&spec.name) => Ok(keys),
        _ => Err(CmdError::err("Invalid arguments specified for command")),
    }
}

/// The subcommands of XGROUP and XINFO with Redis 7.0's arities (the tables their handlers
/// check): each names its key after the subcommand, HELP aside.
const STREAM_SUBCOMMANDS: &[(&str, &[(&str, i32)])] = &[
    ("xgroup", super::stream_groups::XGROUP_SUBS),
    ("xinfo", super::stream_groups::XINFO_SUBS),
];

/// Commands whose keys are a range of arguments rather than the one at `first_key`:
/// Redis's (first, last, step), a negative last counting from the end.
const RANGES: &[(&str, i32, i32, i32)] = &[
    ("bitop", 2, -1, 1),
    ("blmove", 1, 2, 1),
    ("blpop", 1, -2, 1),
    ("brpop", 1, -2, 1),
    ("brpoplpush", 1, 2, 1),
    ("bzpopmax", 1, -2, 1),
    ("bzpopmin", 1, -2, 1),
    ("copy", 1, 2, 1),
    ("del", 1, -1, 1),
    ("exists", 1, -1, 1),
    ("geosearchstore", 1, 2, 1),
    ("lcs", 1, 2, 1),
    ("lmove", 1, 2, 1),
    ("mget", 1, -1, 1),
    ("mset", 1, -1, 2),
    ("msetnx", 1, -1, 2),
    ("pfcount", 1, -1, 1),
    ("pfmerge", 1, -1, 1),
    ("rename", 1, 2, 1),
    ("renamenx", 1, 2, 1),
    ("rpoplpush", 1, 2, 1),
    ("sdiff", 1, -1, 1),
    ("sdiffstore", 1, -1, 1),
    ("sinter", 1, -1, 1),
    ("sinterstore", 1, -1, 1),
    ("smove", 1, 2, 1),
    ("sunion", 1, -1, 1),
    ("sunionstore", 1, -1, 1),
    ("touch", 1, -1, 1),
    ("unlink", 1, -1, 1),
    ("watch", 1, -1, 1),
    ("zrangestore", 1, 2, 1),
];

/// The (first, last, step) COMMAND INFO reports for `spec`: (0, 0, 0) for commands whose
/// keys depend on their arguments (a key count, STORE options) or that have none.
pub fn key_range<E: Engine>(spec: &Spec<E>) -> (i32, i32, i32) {
    if MOVABLE.contains(&spec.name) && !matches!(spec.name, "sort" | "sort_ro") {
        // Redis reports the fixed part only: SORT's key, or nothing.
        return match spec.name {
            "georadius" | "georadiusbymember" | "zdiffstore" | "zinterstore" | "zunionstore" => {
                (1, 1, 1)
            }
            _ => (0, 0, 0),
        };
    }
    // Shard channels: Redis 7.0 lists them as keys (`not_key`), yet GETKEYS has none.
    match spec.name {
        "spublish" => return (1, 1, 1),
        "ssubscribe" | "sunsubscribe" => return (1, -1, 1),
        _ => {}
    }
    if let Some(&(_, first, last, step)) = RANGES.iter().find(|r| r.0 == spec.name) {
        return (first, last, step);
    }
    match spec.first_key {
        0 => (0, 0, 0),
        first => (first, first, 1),
    }
}

/// The positions of the keys in `args` (a request to `spec`, its arity already checked),
/// or `None` when a key count among them is not valid.
pub fn key_positions<E: Engine>(spec: &Spec<E>, args: &[Vec<u8>]) -> Option<Vec<usize>> {
    let argc = args.len();
    Some(match spec.name {
        // Scripts take what their count says; a bad count gives no keys.
        "eval" | "eval_ro" | "evalsha" | "evalsha_ro" | "fcall" | "fcall_ro" => {
            counted(args, 2).unwrap_or_default()
        }
        "blmpop" | "bzmpop" => counted(args, 2)?,
        "lmpop" | "zmpop" | "sintercard" | "zintercard" | "zdiff" | "zinter" | "zunion" => {
            counted(args, 1)?
        }
        "zdiffstore" | "zinterstore" | "zunionstore" => {
            let mut keys = vec![1];
            keys.extend(counted(args, 2)?);
            keys
        }
        "sort" | "sort_ro" => sort_keys(args),
        "georadius" | "georadiusbymember" => {
            let stored = (5..argc.saturating_sub(1))
                .filter(|&i| is(&args[i], "store") || is(&args[i], "storedist"))
                .map(|i| i + 1);
            std::iter::once(1).chain(stored).collect()
        }
        // OBJECT, MEMORY USAGE, XGROUP and XINFO name their key after the subcommand.
        "object" | "memory" | "xgroup" | "xinfo" if argc > 2 && !is(&args[1], "help") => {
            vec![2]
        }
        "spublish" | "ssubscribe" | "sunsubscribe" => Vec::new(),
        "xread" => streams_keys(args, 1)?,
        "xreadgroup" => streams_keys(args, 4)?,
        "migrate" => super::migrate::key_positions(args)?,
        _ => {
            let (first, last, step) = key_range(spec);
            if first == 0 {
                return Some(Vec::new());
            }
            let last = if last < 0 { argc as i32 + last } else { last };
            (first..=last)
                .step_by(step as usize)
                .map(|i| i as usize)
                .filter(|&i| i < argc)
                .collect()
        }
    })
}

/// XREAD's and XREADGROUP's keys, as Redis 7.0's key spec finds them: the first STREAMS
/// from argument `from` on (the last argument is not looked at), then the first half of
/// what follows it; `None` when there is no such STREAMS or nothing follows it but one
/// argument.
fn streams_keys(args: &[Vec<u8>], from: usize) -> Option<Vec<usize>> {
    let at = (from..args.len().saturating_sub(1)).find(|&i| is(&args[i], "streams"))?;
    let first = at + 1;
    let count = (args.len() - first) / 2;
    (count > 0).then(|| (first..first + count).collect())
}

/// The keys after a key count at `at`: `None` unless it is a positive integer within what
/// follows it.
fn counted(args: &[Vec<u8>], at: usize) -> Option<Vec<usize>> {
    let count: usize = std::str::from_utf8(args.get(at)?).ok()?.parse().ok()?;
    (count > 0 && at + count < args.len()).then(|| (at + 1..=at + count).collect())
}

/// SORT's key and the key of its last `STORE`, stepping over the options' operands.
fn sort_keys(args: &[Vec<u8>]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        let arg = &args[i];
        if is(arg, "limit") {
            i += 2;
        } else if is(arg, "get") || is(arg, "by") {
            i += 1;
        } else if is(arg, "store") && i + 1 < args.len() {
            store = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    keys.extend(store);
    keys
}
