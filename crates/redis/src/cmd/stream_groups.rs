//! Stream consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO
//! ([`crate::stream`]), as Redis 7.0 runs them: the same checks in the same order, the same
//! error texts, the same replies (RESP3 maps where Redis sends them).
//!
//! A group's pending entries are kept once, by id, each naming its consumer
//! ([`crate::stream::Pending`]); a consumer's own pending list (a second radix tree per
//! consumer in Redis) is that list filtered by name. Delivery, claim and "seen" times are
//! Unix milliseconds of the write's hybrid time; XPENDING and XINFO measure idle times
//! against their read time.
//!
//! `XREADGROUP ... BLOCK` with only `>` ids blocks ([`super::blocking`]) when a first attempt
//! found nothing new. The request it leaves with the blocking registry is its non-blocking
//! form marked as a blocked one ([`blocked_marker`]), with each stream's entries-added
//! counter when it blocked. A write to one of its streams then serves it as Redis serves a
//! blocked client rather than as a fresh XREADGROUP: a stream gone (deleted, or now of
//! another type) ends the wait with `UNBLOCKED`, a group gone with `NOGROUP`, and an XADD
//! serves it even when trimming or an XDEL in the same transaction left no entry to deliver
//! (an empty reply, as Redis gives), while other writes (XGROUP SETID moving the group back)
//! do not; one stream is served, the first with something.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::time::Duration;

use dockv::HybridTime;
use engine::Engine;

use super::blocking::block_unless_ready;
use super::streams::{block_timeout, entry_frame, streams_reply};
use super::{
    BLOCKS, Ctx, READONLY, Spec, WRITE, bulk_array, error_text, help_reply, is, ok, spec,
    subcommand, subcommand_syntax,
};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::{int_arg, parse_i64};
use crate::store::{Reads, RedisType};
use crate::stream::{
    Consumer, Group, IdSyntax, Meta, Pending, STRICT, StreamId, StreamReads, StreamWrites,
    exact_id, range_bound,
};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        // Containers of subcommands in Redis (their keys are argument 2); XGROUP writes, so
        // that DESTROY serves the XREADGROUPs blocked on its stream.
        spec("xgroup", -2, WRITE, 0, xgroup),
        spec("xinfo", -2, READONLY, 0, xinfo),
        // BLOCKS: it may block, so it never joins a pipeline's run of writes.
        spec("xreadgroup", -7, WRITE | BLOCKS, 0, xreadgroup),
        spec("xack", -4, WRITE, 1, xack),
        spec("xpending", -3, READONLY, 1, xpending),
        spec("xclaim", -6, WRITE, 1, xclaim),
        spec("xautoclaim", -6, WRITE, 1, xautoclaim),
    ]
}

// ---------------------------------------------------------------------------------------
// Ids, times and replies.

/// Group `group` of the stream at `dk`: `None` when there is no stream there or no such
/// group (WRONGTYPE for a key of another type).
fn find_group<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    group: &[u8],
) -> CmdResult<Option<Group>> {
    if r.typed(dk, RedisType::Stream)?.is_none() {
        return Ok(None);
    }
    StreamReads::new(r, dk).group(group)
}

/// Unix milliseconds of a hybrid time (Redis's `mstime()` for the command).
fn unix_ms(ht: HybridTime) -> u64 {
    ht.physical_micros() / 1000
}

/// Milliseconds from `then` to `now`, as Redis's signed `mstime_t` arithmetic gives them.
fn elapsed(now: u64, then: u64) -> i64 {
    (now as i64).wrapping_sub(then as i64)
}

fn id_frame(id: StreamId) -> Frame {
    Frame::Bulk(id.to_bytes())
}

/// An argument quoted in an error as Redis's `%s` quotes it: up to its first NUL byte, on
/// one line.
fn shown(arg: &[u8]) -> String {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    error_text(arg, end)
}

/// The `NOGROUP` of XREADGROUP, XPENDING, XCLAIM and XAUTOCLAIM (`suffix` is XREADGROUP's).
fn no_key_or_group(key: &[u8], group: &[u8], suffix: &str) -> CmdError {
    CmdError::Err(format!(
        "NOGROUP No such key '{}' or consumer group '{}'{suffix}",
        shown(key),
        shown(group)
    ))
}

/// The `NOGROUP` of XGROUP and XINFO CONSUMERS.
fn no_group_for_key(group: &[u8], key: &[u8]) -> CmdError {
    CmdError::Err(format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        shown(group),
        shown(key)
    ))
}

/// A field name of an XINFO map.
fn name(text: &str) -> Frame {
    Frame::Bulk(text.as_bytes().to_vec())
}

/// How many pending entries [`scan_pending`] reads at a time.
const PENDING_PAGE: usize = 256;

/// Calls `visit` with group `group_name`'s pending entries from `from` to `to`, in id
/// order, a page at a time, until it returns false: a reply of a few of one consumer's
/// entries reads about as many of the group's, not all of them.
fn scan_pending<'r, 's, 'c, E: Engine>(
    sr: &mut StreamReads<'r, 's, 'c, E>,
    group_name: &[u8],
    from: StreamId,
    to: StreamId,
    mut visit: impl FnMut(&mut StreamReads<'r, 's, 'c, E>, StreamId, Pending) -> CmdResult<bool>,
) -> CmdResult<()> {
    let mut next = Some(from);
    while let Some(start) = next {
        let page = sr.pending(group_name, start, to, false, Some(PENDING_PAGE))?;
        next = match page.last() {
            Some((last, _)) if page.len() == PENDING_PAGE => last.next(),
            _ => None,
        };
        for (id, pending) in page {
            if !visit(sr, id, pending)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Lag arithmetic: Redis 7.0's logical read counters (t_stream.c).

/// `entries_read` when the group's read counter is not known (Redis's
/// `SCG_INVALID_ENTRIES_READ`).
const INVALID_ENTRIES_READ: i64 = -1;

/// A stream's state with its first entry's id (Redis's `first_id`: 0-0 when empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StreamState {
    meta: Meta,
    first: StreamId,
}

fn stream_state<E: Engine>(r: &mut StreamReads<'_, '_, '_, E>) -> CmdResult<StreamState> {
    let meta = r.meta()?;
    let first = match meta.length {
        0 => StreamId::MIN,
        _ => r.edge_id(false)?.unwrap_or(StreamId::MIN),
    };
    Ok(StreamState { meta, first })
}

/// Redis 7.0's `streamRangeHasTombstones(s, start, NULL)`: whether an entry at or after
/// `start` was deleted, as far as the largest deleted id tells. Deletions all before the
/// first entry (or in a stream now empty) do not count.
fn has_tombstones_from(state: &StreamState, start: StreamId) -> bool {
    let meta = &state.meta;
    meta.length != 0
        && meta.max_deleted_id != StreamId::MIN
        && state.first <= meta.max_deleted_id
        && start <= meta.max_deleted_id
}

/// Redis's `streamEstimateDistanceFromFirstEverEntry`: how many entries were added up to
/// and including `id`, or [`INVALID_ENTRIES_READ`] when deletions (or an id between the
/// first and last entries, or past the last) make that unknowable.
fn estimate_entries_read(state: &StreamState, id: StreamId) -> i64 {
    let meta = &state.meta;
    let added = meta.entries_added as i64;
    if meta.entries_added == 0 {
        return 0;
    }
    if meta.length == 0 && id <= meta.last_id {
        return added;
    }
    match id.cmp(&meta.last_id) {
        std::cmp::Ordering::Equal => return added,
        std::cmp::Ordering::Greater => return INVALID_ENTRIES_READ,
        std::cmp::Ordering::Less => {}
    }
    if meta.max_deleted_id == StreamId::MIN || meta.max_deleted_id < state.first {
        let before_first = added.wrapping_sub(meta.length as i64);
        match id.cmp(&state.first) {
            std::cmp::Ordering::Less => return before_first,
            std::cmp::Ordering::Equal => return before_first.wrapping_add(1),
            std::cmp::Ordering::Greater => {}
        }
    }
    INVALID_ENTRIES_READ
}

/// Redis 7.0's `streamReplyWithCGLag`: how many entries the group has yet to read, `None`
/// when that cannot be known. Its counter is trusted while no deleted entry lies at or
/// after its last delivered id (so a counter set by ENTRIESREAD above what was ever added
/// gives a negative lag, as in Redis); otherwise the counter of that id is estimated.
fn group_lag(state: &StreamState, group: &Group) -> Option<i64> {
    let meta = &state.meta;
    let added = meta.entries_added as i64;
    if meta.entries_added == 0 {
        return Some(0);
    }
    if group.entries_read != INVALID_ENTRIES_READ
        && !has_tombstones_from(state, group.last_delivered)
    {
        return Some(added.wrapping_sub(group.entries_read));
    }
    match estimate_entries_read(state, group.last_delivered) {
        INVALID_ENTRIES_READ => None,
        read => Some(added.wrapping_sub(read)),
    }
}

/// The group's read counter once entry `id` (past its last delivered id) is delivered, as
/// Redis 7.0's `streamReplyWithRange` counts: one more while no deleted entry lies at or
/// after `id`, otherwise estimated afresh.
fn entries_read_after(state: &StreamState, group: &Group, id: StreamId) -> i64 {
    if group.entries_read != INVALID_ENTRIES_READ && !has_tombstones_from(state, id) {
        group.entries_read.wrapping_add(1)
    } else if state.meta.entries_added != 0 {
        estimate_entries_read(state, id)
    } else {
        group.entries_read
    }
}

// ---------------------------------------------------------------------------------------
// XGROUP

pub(super) const XGROUP_SUBS: &[(&str, i32)] = &[
    ("create", -5),
    ("setid", -5),
    ("destroy", 4),
    ("createconsumer", 5),
    ("delconsumer", 5),
    ("help", 2),
];

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

const KEY_REQUIRED: &str = "The XGROUP subcommand requires the key to exist. Note that for \
                            CREATE you may want to use the MKSTREAM option to create an empty \
                            stream automatically.";

/// The options after `XGROUP CREATE|SETID key group id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct XGroupOptions {
    mkstream: bool,
    entries_read: i64,
}

/// Reads XGROUP's options (from argument 5) as Redis does, before it looks at the key.
fn xgroup_options(sub: &str, args: &[Vec<u8>]) -> CmdResult<XGroupOptions> {
    let mut opts = XGroupOptions {
        mkstream: false,
        entries_read: INVALID_ENTRIES_READ,
    };
    let mut i = 5;
    while i < args.len() {
        if sub == "create" && is(&args[i], "mkstream") {
            opts.mkstream = true;
            i += 1;
        } else if matches!(sub, "create" | "setid")
            && is(&args[i], "entriesread")
            && i + 1 < args.len()
        {
            let n = int_arg(&args[i + 1])?;
            if n < 0 && n != INVALID_ENTRIES_READ {
                return Err(CmdError::err(
                    "value for ENTRIESREAD must be positive or -1",
                ));
            }
            opts.entries_read = n;
            i += 2;
        } else {
            return Err(subcommand_syntax("XGROUP", &args[1]));
        }
    }
    Ok(opts)
}

fn xgroup<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let argc = ctx.args.len();
    let sub = subcommand("xgroup", XGROUP_SUBS, ctx.arg(1), argc)?;
    if sub == "help" {
        return Ok(help_reply(XGROUP_HELP));
    }
    let opts = xgroup_options(sub, ctx.args)?;
    let dk = ctx.key(2);
    let (key, group_name) = (ctx.arg(2), ctx.arg(3));
    let ctx = &*ctx;
    ctx.store().write(|batch, ht| {
        let now = unix_ms(ht);
        let mut r = ctx.reads(ht);
        let exists = r.typed(&dk, RedisType::Stream)?.is_some();
        let mut sr = StreamReads::new(&mut r, &dk);
        let group = match exists {
            true => sr.group(group_name)?,
            false => None,
        };
        if !opts.mkstream {
            if !exists {
                return Err(CmdError::err(KEY_REQUIRED));
            }
            if group.is_none() && matches!(sub, "setid" | "createconsumer" | "delconsumer") {
                return Err(no_group_for_key(group_name, key));
            }
        }
        let mut w = StreamWrites::new(batch, &dk);
        match (sub, group) {
            ("create", group) if argc <= 8 => {
                let id = match ctx.arg(4) {
                    b"$" if exists => sr.meta()?.last_id,
                    b"$" => StreamId::MIN,
                    arg => exact_id(arg, STRICT)?,
                };
                if group.is_some() {
                    return Err(CmdError::Err(
                        "BUSYGROUP Consumer Group name already exists".into(),
                    ));
                }
                if !exists {
                    w.create_root(false)?;
                    w.set_meta(&Meta::default())?;
                }
                let state = Group {
                    last_delivered: id,
                    entries_read: opts.entries_read,
                };
                w.set_group(group_name, &state)?;
                Ok(ok())
            }
            ("setid", Some(_)) if argc == 5 || argc == 7 => {
                let id = match ctx.arg(4) {
                    b"$" => sr.meta()?.last_id,
                    arg => exact_id(
                        arg,
                        IdSyntax {
                            special: true,
                            ..STRICT
                        },
                    )?,
                };
                let state = Group {
                    last_delivered: id,
                    entries_read: opts.entries_read,
                };
                w.set_group(group_name, &state)?;
                Ok(ok())
            }
            ("destroy", group) => {
                if group.is_none() {
                    return Ok(Frame::Integer(0));
                }
                w.delete_group(group_name)?;
                Ok(Frame::Integer(1))
            }
            ("createconsumer", Some(_)) => {
                let consumer = ctx.arg(4);
                if sr.consumer(group_name, consumer)?.is_some() {
                    return Ok(Frame::Integer(0));
                }
                w.set_consumer(group_name, consumer, &Consumer { seen_time: now })?;
                Ok(Frame::Integer(1))
            }
            ("delconsumer", Some(_)) => {
                let consumer = ctx.arg(4);
                if sr.consumer(group_name, consumer)?.is_none() {
                    return Ok(Frame::Integer(0));
                }
                let mut pending = 0;
                for (id, entry) in
                    sr.pending(group_name, StreamId::MIN, StreamId::MAX, false, None)?
                {
                    if entry.consumer == consumer {
                        w.delete_pending(group_name, id)?;
                        pending += 1;
                    }
                }
                w.delete_consumer(group_name, consumer)?;
                Ok(Frame::Integer(pending))
            }
            _ => Err(subcommand_syntax("XGROUP", ctx.arg(1))),
        }
    })
}

// ---------------------------------------------------------------------------------------
// XREADGROUP

/// XREADGROUP's arguments, checked as Redis's `xreadCommand` checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReadGroupArgs {
    group: Vec<u8>,
    consumer: Vec<u8>,
    /// At most this many entries per stream (0: no limit).
    count: usize,
    /// BLOCK's timeout (`Some(None)`: for ever).
    block: Option<Option<Duration>>,
    noack: bool,
    /// The position of the first stream key; the ids follow the keys.
    keys_at: usize,
    /// How many streams.
    streams: usize,
    /// The positions of the BLOCK keywords (each followed by its timeout).
    block_at: Vec<usize>,
}

const UNBALANCED: &str =
    "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";

/// Reads XREADGROUP's options from argument `from` up to STREAMS. A script may not use
/// BLOCK (`in_script`), as in Redis.
fn parse_readgroup(args: &[Vec<u8>], from: usize, in_script: bool) -> CmdResult<ReadGroupArgs> {
    let argc = args.len();
    let mut parsed = ReadGroupArgs {
        group: Vec::new(),
        consumer: Vec::new(),
        count: 0,
        block: None,
        noack: false,
        keys_at: 0,
        streams: 0,
        block_at: Vec::new(),
    };
    let mut group = false;
    let mut i = from;
    while i < argc {
        let more = argc - i - 1;
        let arg = &args[i];
        if is(arg, "block") && more > 0 {
            if in_script {
                return Err(CmdError::err(format!(
                    "{} command is not allowed with BLOCK option from scripts",
                    shown(&args[0])
                )));
            }
            parsed.block_at.push(i);
            i += 1;
            parsed.block = Some(block_timeout(&args[i])?);
        } else if is(arg, "count") && more > 0 {
            i += 1;
            parsed.count = usize::try_from(int_arg(&args[i])?).unwrap_or(0);
        } else if is(arg, "streams") && more > 0 {
            parsed.keys_at = i + 1;
            let listed = argc - parsed.keys_at;
            if !listed.is_multiple_of(2) {
                return Err(CmdError::err(UNBALANCED));
            }
            parsed.streams = listed / 2;
            break;
        } else if is(arg, "group") && more >= 2 {
            parsed.group = args[i + 1].clone();
            parsed.consumer = args[i + 2].clone();
            group = true;
            i += 2;
        } else if is(arg, "noack") {
            parsed.noack = true;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if parsed.keys_at == 0 {
        return Err(CmdError::Syntax);
    }
    if !group {
        return Err(CmdError::err("Missing GROUP option for XREADGROUP"));
    }
    Ok(parsed)
}

/// Where XREADGROUP reads a stream from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadFrom {
    /// `>`: entries never delivered to the group.
    New,
    /// An id: the consumer's own pending entries after it.
    After(StreamId),
}

/// An XREADGROUP id argument. An id equal to the largest one reads as `>`, as in Redis
/// (which uses it to mean `>`).
fn read_from(arg: &[u8]) -> CmdResult<ReadFrom> {
    match arg {
        b">" => Ok(ReadFrom::New),
        b"$" => Err(CmdError::err(
            "The $ ID is meaningless in the context of XREADGROUP: you want to read the \
             history of this consumer by specifying a proper ID, or use the > ID to get new \
             messages. The $ ID would just return an empty result set.",
        )),
        _ => match exact_id(arg, STRICT)? {
            StreamId::MAX => Ok(ReadFrom::New),
            id => Ok(ReadFrom::After(id)),
        },
    }
}

/// One stream of an XREADGROUP, checked.
struct ReadTarget {
    key: Vec<u8>,
    dk: Vec<u8>,
    from: ReadFrom,
    /// The stream's entries-added counter when checked (for a blocked client, when it
    /// blocked).
    added: u64,
}

/// How XREADGROUP answers: as a request now, or as a blocked client being served, with each
/// stream's entries-added counter when it blocked.
#[derive(Debug, Clone, Copy)]
enum Mode<'a> {
    Now,
    Blocked(&'a [u64]),
}

/// The argument that marks a blocked XREADGROUP's request (after the command name, followed
/// by the streams' entries-added counters): random for each server process, so no client
/// can send it.
fn blocked_marker() -> &'static [u8] {
    static MARKER: OnceLock<Vec<u8>> = OnceLock::new();
    MARKER.get_or_init(|| {
        let (a, b) = (
            std::collections::hash_map::RandomState::new().hash_one(0u64),
            std::collections::hash_map::RandomState::new().hash_one(1u64),
        );
        format!("\0docdb-blocked-xreadgroup-{a:016x}{b:016x}").into_bytes()
    })
}

/// The request a blocked XREADGROUP leaves with the registry: its own without BLOCK, marked
/// with [`blocked_marker`] and the counters `added`.
fn blocked_request(args: &[Vec<u8>], parsed: &ReadGroupArgs, added: &[u64]) -> Vec<Vec<u8>> {
    let counters: Vec<String> = added.iter().map(u64::to_string).collect();
    let mut request = vec![
        args[0].clone(),
        blocked_marker().to_vec(),
        counters.join(",").into_bytes(),
    ];
    let mut i = 1;
    while i < args.len() {
        if parsed.block_at.contains(&i) {
            i += 2;
            continue;
        }
        request.push(args[i].clone());
        i += 1;
    }
    request
}

/// The counters of a blocked request, if `args` is one.
fn blocked_counters(args: &[Vec<u8>]) -> Option<Vec<u64>> {
    if args.get(1).map(Vec::as_slice) != Some(blocked_marker()) {
        return None;
    }
    let text = String::from_utf8_lossy(args.get(2)?).into_owned();
    Some(
        text.split(',')
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap_or(0))
            .collect(),
    )
}

fn xreadgroup<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if let Some(counters) = blocked_counters(ctx.args) {
        let parsed = parse_readgroup(ctx.args, 3, false)?;
        return read_groups(ctx, &parsed, Mode::Blocked(&counters)).map(|(reply, _)| reply);
    }
    // Scripts run their commands as EXEC does, while the script runner is busy.
    let in_script = ctx.session.in_exec && ctx.core.scripts.running();
    let parsed = parse_readgroup(ctx.args, 1, in_script)?;
    let (reply, added) = read_groups(ctx, &parsed, Mode::Now)?;
    let Some(timeout) = parsed.block else {
        return Ok(reply);
    };
    if reply != Frame::NullArray {
        return Ok(reply);
    }
    // Nothing new on any stream (an id other than `>` always answers at once).
    let keys = ctx.args[parsed.keys_at..parsed.keys_at + parsed.streams].to_vec();
    let request = blocked_request(ctx.args, &parsed, &added);
    block_unless_ready(ctx, request, keys, timeout)
}

/// Reads every stream of an XREADGROUP in one write: checks them all first (type, group,
/// id) as Redis does, then serves each in order. Returns the reply and the streams'
/// entries-added counters.
fn read_groups<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    parsed: &ReadGroupArgs,
    mode: Mode<'_>,
) -> CmdResult<(Frame, Vec<u64>)> {
    ctx.store().write_together(|ht| {
        let targets = check_streams(ctx, parsed, ht, mode)?;
        let mut served = Vec::new();
        for target in &targets {
            if let Some(entries) = read_stream(ctx, parsed, target, mode)? {
                served.push((target.key.clone(), entries));
                if matches!(mode, Mode::Blocked(_)) {
                    // A blocked client is served from one stream.
                    break;
                }
            }
        }
        let added = targets.iter().map(|t| t.added).collect();
        Ok((streams_reply(served, ctx.session.protocol), added))
    })?
}

/// Checks each stream in order (key, type, group, then its id) as Redis does.
fn check_streams<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    parsed: &ReadGroupArgs,
    ht: HybridTime,
    mode: Mode<'_>,
) -> CmdResult<Vec<ReadTarget>> {
    let blocked = matches!(mode, Mode::Blocked(_));
    let unblocked = || CmdError::Err("UNBLOCKED the stream key no longer exists".into());
    let mut targets = Vec::with_capacity(parsed.streams);
    for j in 0..parsed.streams {
        let key = &ctx.args[parsed.keys_at + j];
        let dk = ctx.store().doc_key(ctx.db(), key);
        let mut r = ctx.reads(ht);
        let exists = match r.typed(&dk, RedisType::Stream) {
            Ok(info) => info.is_some(),
            Err(CmdError::WrongType) if blocked => return Err(unblocked()),
            Err(e) => return Err(e),
        };
        let mut sr = StreamReads::new(&mut r, &dk);
        if !exists || sr.group(&parsed.group)?.is_none() {
            return Err(match (blocked, exists) {
                (true, false) => unblocked(),
                (true, true) => CmdError::Err(
                    "NOGROUP the consumer group this client was blocked on no longer exists".into(),
                ),
                (false, _) => {
                    no_key_or_group(key, &parsed.group, " in XREADGROUP with GROUP option")
                }
            });
        }
        let from = read_from(&ctx.args[parsed.keys_at + parsed.streams + j])?;
        let added = match mode {
            Mode::Now => sr.meta()?.entries_added,
            Mode::Blocked(when_blocked) => when_blocked.get(j).copied().unwrap_or(0),
        };
        targets.push(ReadTarget {
            key: key.clone(),
            dk,
            from,
            added,
        });
    }
    Ok(targets)
}

/// Serves one stream of an XREADGROUP in a write of its own (a later stream, even the same
/// one again, sees what it wrote): its entries, or `None` when it has nothing for the
/// consumer (`>` with nothing new).
fn read_stream<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    parsed: &ReadGroupArgs,
    target: &ReadTarget,
    mode: Mode<'_>,
) -> CmdResult<Option<Vec<Frame>>> {
    let group_name = parsed.group.as_slice();
    let consumer_name = parsed.consumer.as_slice();
    ctx.store().write(|batch, ht| {
        let now = unix_ms(ht);
        let mut r = ctx.reads(ht);
        let mut sr = StreamReads::new(&mut r, &target.dk);
        let Some(mut group) = sr.group(group_name)? else {
            return Ok(None);
        };
        let mut w = StreamWrites::new(batch, &target.dk);
        let seen = Consumer { seen_time: now };
        match target.from {
            ReadFrom::New => {
                let state = stream_state(&mut sr)?;
                let limit = (parsed.count > 0).then_some(parsed.count);
                let entries = match group.last_delivered.next() {
                    Some(start) => sr.entries(start, StreamId::MAX, false, limit)?,
                    None => Vec::new(),
                };
                let serve = match mode {
                    Mode::Now => !entries.is_empty(),
                    // Redis serves a blocked client when an XADD to the stream leaves its
                    // last id past the group's, even when nothing is left to deliver
                    // (trimmed, or deleted in the same transaction), and only then: other
                    // writes (XGROUP SETID moving the group back) do not serve it.
                    Mode::Blocked(_) => {
                        state.meta.entries_added > target.added
                            && state.meta.last_id > group.last_delivered
                    }
                };
                if !serve {
                    return Ok(None);
                }
                w.set_consumer(group_name, consumer_name, &seen)?;
                let before = group;
                let mut out = Vec::with_capacity(entries.len());
                for (id, fields) in entries {
                    group.entries_read = entries_read_after(&state, &group, id);
                    group.last_delivered = id;
                    if !parsed.noack {
                        let pending = Pending {
                            consumer: consumer_name.to_vec(),
                            delivery_time: now,
                            delivery_count: 1,
                        };
                        w.set_pending(group_name, id, &pending)?;
                    }
                    out.push(entry_frame(id, fields));
                }
                if group != before {
                    w.set_group(group_name, &group)?;
                }
                Ok(Some(out))
            }
            ReadFrom::After(after) => {
                w.set_consumer(group_name, consumer_name, &seen)?;
                let mut out = Vec::new();
                let Some(start) = after.next() else {
                    return Ok(Some(out));
                };
                scan_pending(
                    &mut sr,
                    group_name,
                    start,
                    StreamId::MAX,
                    |sr, id, mut pending| {
                        if parsed.count != 0 && out.len() >= parsed.count {
                            return Ok(false);
                        }
                        if pending.consumer != consumer_name {
                            return Ok(true);
                        }
                        match sr.entry(id)? {
                            Some(fields) => {
                                pending.delivery_time = now;
                                pending.delivery_count = pending.delivery_count.wrapping_add(1);
                                w.set_pending(group_name, id, &pending)?;
                                out.push(entry_frame(id, fields));
                            }
                            // Deleted from the stream but still pending: its id and a null.
                            None => out.push(Frame::Array(vec![id_frame(id), Frame::NullArray])),
                        }
                        Ok(true)
                    },
                )?;
                Ok(Some(out))
            }
        }
    })
}

// ---------------------------------------------------------------------------------------
// XACK

fn xack<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let group_name = ctx.arg(2);
    let ids = &ctx.args[3..];
    let ctx = &*ctx;
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Stream)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let mut sr = StreamReads::new(&mut r, &dk);
        if sr.group(group_name)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        // All or nothing: every id is checked before any is acknowledged.
        let ids = ids
            .iter()
            .map(|arg| exact_id(arg, STRICT))
            .collect::<CmdResult<Vec<_>>>()?;
        let mut w = StreamWrites::new(batch, &dk);
        let mut acked = HashSet::new();
        for id in ids {
            if !acked.contains(&id) && sr.pending_entry(group_name, id)?.is_some() {
                w.delete_pending(group_name, id)?;
                acked.insert(id);
            }
        }
        Ok(Frame::Integer(acked.len() as i64))
    })
}

// ---------------------------------------------------------------------------------------
// XPENDING

/// XPENDING's extended form: `[IDLE min-idle] start end count [consumer]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingRange {
    min_idle: i64,
    start: StreamId,
    end: StreamId,
    count: usize,
    /// The position of the consumer argument.
    consumer_at: Option<usize>,
}

/// Reads XPENDING's arguments in Redis's order (`None`: the summary form).
fn parse_xpending(args: &[Vec<u8>]) -> CmdResult<Option<PendingRange>> {
    let argc = args.len();
    if argc == 3 {
        return Ok(None);
    }
    if !(6..=9).contains(&argc) {
        return Err(CmdError::Syntax);
    }
    let mut at = 3;
    let mut min_idle = 0;
    if is(&args[3], "idle") {
        min_idle = int_arg(&args[4])?;
        if argc < 8 {
            return Err(CmdError::Syntax);
        }
        at += 2;
    }
    let count = usize::try_from(int_arg(&args[at + 2])?).unwrap_or(0);
    let start = range_bound(&args[at], false)?;
    let end = range_bound(&args[at + 1], true)?;
    Ok(Some(PendingRange {
        min_idle,
        start,
        end,
        count,
        consumer_at: (at + 3 < argc).then_some(at + 3),
    }))
}

fn xpending<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let range = parse_xpending(ctx.args)?;
    let (key, group_name) = (ctx.arg(1), ctx.arg(2));
    let dk = ctx.key(1);
    let ht = ctx.read_time();
    let now = unix_ms(ht);
    let mut r = ctx.reads(ht);
    if find_group(&mut r, &dk, group_name)?.is_none() {
        return Err(no_key_or_group(key, group_name, ""));
    }
    let mut sr = StreamReads::new(&mut r, &dk);
    let Some(range) = range else {
        let pending = sr.pending(group_name, StreamId::MIN, StreamId::MAX, false, None)?;
        let (Some((first, _)), Some((last, _))) = (pending.first(), pending.last()) else {
            return Ok(Frame::Array(vec![
                Frame::Integer(0),
                Frame::Null,
                Frame::Null,
                Frame::NullArray,
            ]));
        };
        let (first, last) = (*first, *last);
        let mut per_consumer: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (_, entry) in &pending {
            *per_consumer.entry(entry.consumer.clone()).or_default() += 1;
        }
        return Ok(Frame::Array(vec![
            Frame::Integer(pending.len() as i64),
            id_frame(first),
            id_frame(last),
            Frame::Array(
                per_consumer
                    .into_iter()
                    .map(|(name, n)| bulk_array([name, n.to_string().into_bytes()]))
                    .collect(),
            ),
        ]));
    };
    let consumer = range.consumer_at.map(|i| ctx.arg(i));
    if let Some(consumer) = consumer
        && sr.consumer(group_name, consumer)?.is_none()
    {
        return Ok(Frame::Array(Vec::new()));
    }
    let mut out = Vec::new();
    if range.count == 0 {
        return Ok(Frame::Array(out));
    }
    scan_pending(
        &mut sr,
        group_name,
        range.start,
        range.end,
        |_, id, entry| {
            if consumer.is_some_and(|c| c != entry.consumer.as_slice()) {
                return Ok(true);
            }
            let idle = elapsed(now, entry.delivery_time);
            if range.min_idle != 0 && idle < range.min_idle {
                return Ok(true);
            }
            out.push(Frame::Array(vec![
                id_frame(id),
                Frame::Bulk(entry.consumer),
                Frame::Integer(idle.max(0)),
                Frame::Integer(entry.delivery_count as i64),
            ]));
            Ok(out.len() < range.count)
        },
    )?;
    Ok(Frame::Array(out))
}

// ---------------------------------------------------------------------------------------
// XCLAIM

/// XCLAIM's ids and options.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ClaimArgs {
    ids: Vec<StreamId>,
    force: bool,
    justid: bool,
    /// The delivery time to set (IDLE or TIME, already checked against `now`).
    delivery_time: u64,
    /// RETRYCOUNT (negative: not given).
    retry_count: i64,
    /// LASTID (0-0: not given).
    last_id: StreamId,
}

/// Reads XCLAIM's ids (from argument 5, up to the first that is not one) and options, as
/// Redis does once the key and group are known.
fn parse_xclaim(args: &[Vec<u8>], now: i64) -> CmdResult<ClaimArgs> {
    let mut j = 5;
    let mut ids = Vec::new();
    while let Some(id) = args.get(j).and_then(|arg| exact_id(arg, STRICT).ok()) {
        ids.push(id);
        j += 1;
    }
    let mut claim = ClaimArgs {
        ids,
        force: false,
        justid: false,
        delivery_time: 0,
        retry_count: -1,
        last_id: StreamId::MIN,
    };
    let mut delivery = None;
    let number = |arg: &[u8], what: &str| {
        parse_i64(arg)
            .ok_or_else(|| CmdError::err(format!("Invalid {what} option argument for XCLAIM")))
    };
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = &args[j];
        if is(opt, "force") {
            claim.force = true;
        } else if is(opt, "justid") {
            claim.justid = true;
        } else if is(opt, "idle") && more > 0 {
            j += 1;
            delivery = Some(now.wrapping_sub(number(&args[j], "IDLE")?));
        } else if is(opt, "time") && more > 0 {
            j += 1;
            delivery = Some(number(&args[j], "TIME")?);
        } else if is(opt, "retrycount") && more > 0 {
            j += 1;
            claim.retry_count = number(&args[j], "RETRYCOUNT")?;
        } else if is(opt, "lastid") && more > 0 {
            j += 1;
            claim.last_id = exact_id(&args[j], STRICT)?;
        } else {
            return Err(CmdError::err(format!(
                "Unrecognized XCLAIM option '{}'",
                shown(opt)
            )));
        }
        j += 1;
    }
    // A time in the future or before 1970 is taken as now, as Redis takes it.
    claim.delivery_time = match delivery {
        Some(t) if (0..=now).contains(&t) => t as u64,
        _ => now.max(0) as u64,
    };
    Ok(claim)
}

/// A pending entry while XCLAIM works on it: FORCE makes one with no consumer yet.
struct Claimed {
    consumer: Option<Vec<u8>>,
    delivery_time: u64,
    delivery_count: u64,
}

fn xclaim<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let (key, group_name, consumer) = (ctx.arg(1), ctx.arg(2), ctx.arg(3));
    let ctx = &*ctx;
    ctx.store().write(|batch, ht| {
        let now = unix_ms(ht);
        let mut r = ctx.reads(ht);
        let Some(mut group) = find_group(&mut r, &dk, group_name)? else {
            return Err(no_key_or_group(key, group_name, ""));
        };
        let mut sr = StreamReads::new(&mut r, &dk);
        let min_idle = parse_i64(ctx.arg(4))
            .ok_or_else(|| CmdError::err("Invalid min-idle-time argument for XCLAIM"))?
            .max(0);
        let claim = parse_xclaim(ctx.args, now as i64)?;
        let mut w = StreamWrites::new(batch, &dk);
        if claim.last_id > group.last_delivered {
            group.last_delivered = claim.last_id;
            w.set_group(group_name, &group)?;
        }
        // What this command did to the pending entries so far (an id may come twice).
        let mut changed: HashMap<StreamId, Option<Claimed>> = HashMap::new();
        let mut consumer_seen = false;
        let mut out = Vec::new();
        for &id in &claim.ids {
            let nack = match changed.remove(&id) {
                Some(nack) => nack,
                None => sr.pending_entry(group_name, id)?.map(|p| Claimed {
                    consumer: Some(p.consumer),
                    delivery_time: p.delivery_time,
                    delivery_count: p.delivery_count,
                }),
            };
            // Only an entry still in the stream can be claimed; a deleted one leaves the
            // pending list.
            let Some(fields) = sr.entry(id)? else {
                if nack.is_some() {
                    w.delete_pending(group_name, id)?;
                }
                changed.insert(id, None);
                continue;
            };
            let nack = match nack {
                None if claim.force => Some(Claimed {
                    consumer: None,
                    delivery_time: now,
                    delivery_count: 1,
                }),
                nack => nack,
            };
            let Some(mut nack) = nack else {
                changed.insert(id, None);
                continue;
            };
            if nack.consumer.is_some()
                && min_idle != 0
                && elapsed(now, nack.delivery_time) < min_idle
            {
                changed.insert(id, Some(nack));
                continue;
            }
            if !consumer_seen {
                w.set_consumer(group_name, consumer, &Consumer { seen_time: now })?;
                consumer_seen = true;
            }
            nack.delivery_time = claim.delivery_time;
            if claim.retry_count >= 0 {
                nack.delivery_count = claim.retry_count as u64;
            } else if !claim.justid {
                nack.delivery_count = nack.delivery_count.wrapping_add(1);
            }
            nack.consumer = Some(consumer.to_vec());
            let pending = Pending {
                consumer: consumer.to_vec(),
                delivery_time: nack.delivery_time,
                delivery_count: nack.delivery_count,
            };
            w.set_pending(group_name, id, &pending)?;
            out.push(match claim.justid {
                true => id_frame(id),
                false => entry_frame(id, fields),
            });
            changed.insert(id, Some(nack));
        }
        Ok(Frame::Array(out))
    })
}

// ---------------------------------------------------------------------------------------
// XAUTOCLAIM

/// How many pending entries XAUTOCLAIM may look at per entry it may claim.
const ATTEMPTS_PER_COUNT: u64 = 10;

/// The largest COUNT Redis 7.0 takes: `LONG_MAX / max(sizeof(streamID), 10)`.
const MAX_AUTOCLAIM_COUNT: i64 = i64::MAX / 16;

/// Redis allocates 16 bytes per COUNT up front (for the ids of deleted entries) and fails
/// when it cannot; docdb allocates nothing, but refuses the COUNTs no machine with less than
/// 16 TiB of memory could serve (2^40 and more), with Redis's error. Below that Redis's
/// answer depends on its machine's memory, docdb's does not.
const MAX_ALLOCATABLE_COUNT: u64 = 1 << 40;

/// XAUTOCLAIM's arguments after the key, group and consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AutoClaimArgs {
    min_idle: i64,
    start: StreamId,
    count: u64,
    justid: bool,
}

/// Reads XAUTOCLAIM's arguments in Redis's order, before it looks at the key.
fn parse_xautoclaim(args: &[Vec<u8>]) -> CmdResult<AutoClaimArgs> {
    let min_idle = parse_i64(&args[4])
        .ok_or_else(|| CmdError::err("Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let start = range_bound(&args[5], false)?;
    let mut parsed = AutoClaimArgs {
        min_idle,
        start,
        count: 100,
        justid: false,
    };
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "count") && more > 0 {
            parsed.count = parse_i64(&args[j + 1])
                .filter(|n| (1..=MAX_AUTOCLAIM_COUNT).contains(n))
                .ok_or_else(|| CmdError::err("COUNT must be > 0"))?
                as u64;
            j += 1;
        } else if is(&args[j], "justid") {
            parsed.justid = true;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(parsed)
}

fn xautoclaim<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let parsed = parse_xautoclaim(ctx.args)?;
    let dk = ctx.key(1);
    let (key, group_name, consumer) = (ctx.arg(1), ctx.arg(2), ctx.arg(3));
    let ctx = &*ctx;
    ctx.store().write(|batch, ht| {
        let now = unix_ms(ht);
        let mut r = ctx.reads(ht);
        if find_group(&mut r, &dk, group_name)?.is_none() {
            return Err(no_key_or_group(key, group_name, ""));
        }
        let mut sr = StreamReads::new(&mut r, &dk);
        if parsed.count >= MAX_ALLOCATABLE_COUNT {
            return Err(CmdError::err(
                "Insufficient memory, failed allocating transient memory, COUNT too high.",
            ));
        }
        let mut count = parsed.count;
        let mut attempts = count.saturating_mul(ATTEMPTS_PER_COUNT);
        // One more than it may look at: the next one is the cursor to continue from.
        let limit = usize::try_from(attempts.saturating_add(1)).ok();
        let candidates = sr.pending(group_name, parsed.start, StreamId::MAX, false, limit)?;
        let mut w = StreamWrites::new(batch, &dk);
        let mut consumer_seen = false;
        let (mut claimed, mut deleted) = (Vec::new(), Vec::new());
        let mut looked = 0;
        for (id, mut pending) in candidates.iter().cloned() {
            if attempts == 0 || count == 0 {
                break;
            }
            attempts -= 1;
            looked += 1;
            let Some(fields) = sr.entry(id)? else {
                w.delete_pending(group_name, id)?;
                deleted.push(id_frame(id));
                count -= 1;
                continue;
            };
            if parsed.min_idle != 0 && elapsed(now, pending.delivery_time) < parsed.min_idle {
                continue;
            }
            if !consumer_seen {
                w.set_consumer(group_name, consumer, &Consumer { seen_time: now })?;
                consumer_seen = true;
            }
            pending.delivery_time = now;
            if !parsed.justid {
                pending.delivery_count = pending.delivery_count.wrapping_add(1);
            }
            pending.consumer = consumer.to_vec();
            w.set_pending(group_name, id, &pending)?;
            claimed.push(match parsed.justid {
                true => id_frame(id),
                false => entry_frame(id, fields),
            });
            count -= 1;
        }
        let next = candidates.get(looked).map_or(StreamId::MIN, |(id, _)| *id);
        Ok(Frame::Array(vec![
            id_frame(next),
            Frame::Array(claimed),
            Frame::Array(deleted),
        ]))
    })
}

// ---------------------------------------------------------------------------------------
// XINFO

pub(super) const XINFO_SUBS: &[(&str, i32)] =
    &[("consumers", 4), ("groups", 3), ("stream", -3), ("help", 2)];

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

/// Entries per radix tree node in Redis (`stream-node-max-entries`).
const ENTRIES_PER_NODE: u64 = 100;

/// XINFO STREAM's `radix-tree-keys` and `radix-tree-nodes`. They describe Redis's memory
/// layout, which docdb does not have: these are the figures of a stream whose entries were
/// added in order and packed 100 to a node (exact for an empty stream and for one of up to
/// 100 entries, only an estimate beyond; deletions and large entries change Redis's).
fn radix_tree_figures(length: u64) -> (i64, i64) {
    let keys = length.div_ceil(ENTRIES_PER_NODE) as i64;
    (keys, keys + 1)
}

/// XINFO STREAM's options: `None` for the short form, or FULL's COUNT (0: no limit).
fn parse_xinfo_stream(args: &[Vec<u8>]) -> CmdResult<Option<usize>> {
    let syntax = || subcommand_syntax("XINFO", &args[1]);
    let opts = &args[3..];
    match opts.len() {
        0 => return Ok(None),
        1 | 3 => {}
        _ => return Err(syntax()),
    }
    if !is(&opts[0], "full") {
        return Err(syntax());
    }
    if opts.len() == 1 {
        return Ok(Some(10));
    }
    if !is(&opts[1], "count") {
        return Err(syntax());
    }
    let count = int_arg(&opts[2])?;
    Ok(Some(usize::try_from(count).unwrap_or(10)))
}

fn xinfo<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = subcommand("xinfo", XINFO_SUBS, ctx.arg(1), ctx.args.len())?;
    if sub == "help" {
        return Ok(help_reply(XINFO_HELP));
    }
    let dk = ctx.key(2);
    let ht = ctx.read_time();
    let now = unix_ms(ht);
    let mut r = ctx.reads(ht);
    if r.typed(&dk, RedisType::Stream)?.is_none() {
        return Err(CmdError::err("no such key"));
    }
    let mut sr = StreamReads::new(&mut r, &dk);
    match sub {
        "consumers" => {
            let group_name = ctx.arg(3);
            if sr.group(group_name)?.is_none() {
                return Err(no_group_for_key(group_name, ctx.arg(2)));
            }
            let per_consumer = pending_per_consumer(&mut sr, group_name)?;
            let consumers = sr.consumers(group_name)?;
            Ok(Frame::Array(
                consumers
                    .into_iter()
                    .map(|(consumer, state)| {
                        let pending = per_consumer.get(&consumer).copied().unwrap_or(0);
                        Frame::Map(vec![
                            (name("name"), Frame::Bulk(consumer)),
                            (name("pending"), Frame::Integer(pending as i64)),
                            (
                                name("idle"),
                                Frame::Integer(elapsed(now, state.seen_time).max(0)),
                            ),
                        ])
                    })
                    .collect(),
            ))
        }
        "groups" => {
            let state = stream_state(&mut sr)?;
            let mut out = Vec::new();
            for (group_name, group) in sr.groups()? {
                let consumers = sr.consumers(&group_name)?.len();
                let pending = sr
                    .pending(&group_name, StreamId::MIN, StreamId::MAX, false, None)?
                    .len();
                out.push(Frame::Map(vec![
                    (name("name"), Frame::Bulk(group_name)),
                    (name("consumers"), Frame::Integer(consumers as i64)),
                    (name("pending"), Frame::Integer(pending as i64)),
                    (name("last-delivered-id"), id_frame(group.last_delivered)),
                    (name("entries-read"), entries_read_frame(&group)),
                    (name("lag"), lag_frame(&state, &group)),
                ]));
            }
            Ok(Frame::Array(out))
        }
        _ => {
            let full = parse_xinfo_stream(ctx.args)?;
            stream_info(&mut sr, full)
        }
    }
}

fn entries_read_frame(group: &Group) -> Frame {
    match group.entries_read {
        INVALID_ENTRIES_READ => Frame::Null,
        n => Frame::Integer(n),
    }
}

fn lag_frame(state: &StreamState, group: &Group) -> Frame {
    group_lag(state, group).map_or(Frame::Null, Frame::Integer)
}

/// How many entries each consumer of the group has pending.
fn pending_per_consumer<E: Engine>(
    sr: &mut StreamReads<'_, '_, '_, E>,
    group_name: &[u8],
) -> CmdResult<HashMap<Vec<u8>, u64>> {
    let mut counts = HashMap::new();
    for (_, entry) in sr.pending(group_name, StreamId::MIN, StreamId::MAX, false, None)? {
        *counts.entry(entry.consumer).or_default() += 1;
    }
    Ok(counts)
}

/// XINFO STREAM, short (`full` `None`) or FULL with its COUNT (0: no limit).
fn stream_info<E: Engine>(
    sr: &mut StreamReads<'_, '_, '_, E>,
    full: Option<usize>,
) -> CmdResult<Frame> {
    let state = stream_state(sr)?;
    let meta = state.meta;
    let (keys, nodes) = radix_tree_figures(meta.length);
    let mut fields = vec![
        (name("length"), Frame::Integer(meta.length as i64)),
        (name("radix-tree-keys"), Frame::Integer(keys)),
        (name("radix-tree-nodes"), Frame::Integer(nodes)),
        (name("last-generated-id"), id_frame(meta.last_id)),
        (name("max-deleted-entry-id"), id_frame(meta.max_deleted_id)),
        (
            name("entries-added"),
            Frame::Integer(meta.entries_added as i64),
        ),
        (name("recorded-first-entry-id"), id_frame(state.first)),
    ];
    let groups = sr.groups()?;
    let Some(count) = full else {
        let edge = |sr: &mut StreamReads<'_, '_, '_, E>, last: bool| -> CmdResult<Frame> {
            Ok(sr
                .entries(StreamId::MIN, StreamId::MAX, last, Some(1))?
                .into_iter()
                .next()
                .map_or(Frame::Null, |(id, f)| entry_frame(id, f)))
        };
        fields.push((name("groups"), Frame::Integer(groups.len() as i64)));
        fields.push((name("first-entry"), edge(sr, false)?));
        fields.push((name("last-entry"), edge(sr, true)?));
        return Ok(Frame::Map(fields));
    };
    let limit = (count > 0).then_some(count);
    let entries = sr.entries(StreamId::MIN, StreamId::MAX, false, limit)?;
    fields.push((
        name("entries"),
        Frame::Array(
            entries
                .into_iter()
                .map(|(id, f)| entry_frame(id, f))
                .collect(),
        ),
    ));
    let mut group_frames = Vec::with_capacity(groups.len());
    for (group_name, group) in groups {
        let pending = sr.pending(&group_name, StreamId::MIN, StreamId::MAX, false, None)?;
        let listed = |entries: &mut dyn Iterator<Item = Frame>| -> Frame {
            Frame::Array(match limit {
                Some(n) => entries.take(n).collect(),
                None => entries.collect(),
            })
        };
        let group_pending = listed(&mut pending.iter().map(|(id, p)| {
            Frame::Array(vec![
                id_frame(*id),
                Frame::Bulk(p.consumer.clone()),
                Frame::Integer(p.delivery_time as i64),
                Frame::Integer(p.delivery_count as i64),
            ])
        }));
        let mut consumer_frames = Vec::new();
        for (consumer, consumer_state) in sr.consumers(&group_name)? {
            let own: Vec<&(StreamId, Pending)> = pending
                .iter()
                .filter(|(_, p)| p.consumer == consumer)
                .collect();
            let own_pending = listed(&mut own.iter().map(|(id, p)| {
                Frame::Array(vec![
                    id_frame(*id),
                    Frame::Integer(p.delivery_time as i64),
                    Frame::Integer(p.delivery_count as i64),
                ])
            }));
            consumer_frames.push(Frame::Map(vec![
                (name("name"), Frame::Bulk(consumer)),
                (
                    name("seen-time"),
                    Frame::Integer(consumer_state.seen_time as i64),
                ),
                (name("pel-count"), Frame::Integer(own.len() as i64)),
                (name("pending"), own_pending),
            ]));
        }
        group_frames.push(Frame::Map(vec![
            (name("name"), Frame::Bulk(group_name)),
            (name("last-delivered-id"), id_frame(group.last_delivered)),
            (name("entries-read"), entries_read_frame(&group)),
            (name("lag"), lag_frame(&state, &group)),
            (name("pel-count"), Frame::Integer(pending.len() as i64)),
            (name("pending"), group_pending),
            (name("consumers"), Frame::Array(consumer_frames)),
        ]));
    }
    fields.push((name("groups"), Frame::Array(group_frames)));
    Ok(Frame::Map(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn error<T: std::fmt::Debug>(result: CmdResult<T>) -> String {
        result.expect_err("an error").to_string()
    }

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    /// A stream of `length` entries, the first `first`, with these counters.
    fn state(
        length: u64,
        first: StreamId,
        last: StreamId,
        deleted: StreamId,
        added: u64,
    ) -> StreamState {
        StreamState {
            meta: Meta {
                length,
                last_id: last,
                max_deleted_id: deleted,
                entries_added: added,
            },
            first,
        }
    }

    fn group(last: StreamId, entries_read: i64) -> Group {
        Group {
            last_delivered: last,
            entries_read,
        }
    }

    #[test]
    fn readgroup_options_are_checked_in_redis_order() {
        let parsed = parse_readgroup(
            &args(&[
                "xreadgroup",
                "GROUP",
                "g",
                "c",
                "COUNT",
                "-5",
                "BLOCK",
                "0",
                "NOACK",
                "STREAMS",
                "a",
                "b",
                ">",
                "0",
            ]),
            1,
            false,
        )
        .expect("parses");
        assert_eq!(parsed.group, b"g");
        assert_eq!(parsed.consumer, b"c");
        assert_eq!(parsed.count, 0);
        assert_eq!(parsed.block, Some(None));
        assert!(parsed.noack);
        assert_eq!((parsed.keys_at, parsed.streams), (10, 2));
        assert_eq!(parsed.block_at, vec![6]);
        let timed = parse_readgroup(
            &args(&[
                "xreadgroup",
                "block",
                "250",
                "group",
                "g",
                "c",
                "streams",
                "s",
                ">",
            ]),
            1,
            false,
        )
        .expect("parses");
        assert_eq!(timed.block, Some(Some(Duration::from_millis(250))));
        // The last GROUP and COUNT win.
        let twice = parse_readgroup(
            &args(&[
                "xreadgroup",
                "group",
                "g",
                "c",
                "group",
                "h",
                "d",
                "count",
                "1",
                "count",
                "2",
                "streams",
                "s",
                ">",
            ]),
            1,
            false,
        )
        .expect("parses");
        assert_eq!((twice.group.as_slice(), twice.count), (&b"h"[..], 2));
        assert_eq!(
            error(parse_readgroup(
                &args(&[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    "c",
                    "BLOCK",
                    "0",
                    "STREAMS",
                    "s",
                    ">"
                ]),
                1,
                true
            )),
            "ERR XREADGROUP command is not allowed with BLOCK option from scripts"
        );
        let cases: &[(&[&str], &str)] = &[
            (
                &["xreadgroup", "group", "g", "c", "streams", "s", ">", "x"],
                UNBALANCED,
            ),
            (
                &["xreadgroup", "group", "g", "streams", "s", ">", "x"],
                "ERR syntax error",
            ),
            (
                &["xreadgroup", "count", "1", "streams", "s", ">", "x", "y"],
                "ERR Missing GROUP option for XREADGROUP",
            ),
            (
                &[
                    "xreadgroup",
                    "group",
                    "g",
                    "c",
                    "count",
                    "x",
                    "streams",
                    "s",
                    ">",
                ],
                "ERR value is not an integer or out of range",
            ),
            (
                &[
                    "xreadgroup",
                    "group",
                    "g",
                    "c",
                    "block",
                    "1.5",
                    "streams",
                    "s",
                    ">",
                ],
                "ERR timeout is not an integer or out of range",
            ),
            (
                &[
                    "xreadgroup",
                    "group",
                    "g",
                    "c",
                    "block",
                    "-1",
                    "streams",
                    "s",
                    ">",
                ],
                "ERR timeout is negative",
            ),
            (
                &["xreadgroup", "group", "g", "c", "foo", "streams", "s", ">"],
                "ERR syntax error",
            ),
            (
                &["xreadgroup", "group", "g", "c", "noack", "x", "y"],
                "ERR syntax error",
            ),
        ];
        for (words, want) in cases {
            let got = error(parse_readgroup(&args(words), 1, false));
            let want = if want.starts_with("ERR") {
                want.to_string()
            } else {
                format!("ERR {want}")
            };
            assert_eq!(got, want, "{words:?}");
        }
    }

    #[test]
    fn readgroup_ids() {
        assert_eq!(read_from(b">").ok(), Some(ReadFrom::New));
        assert_eq!(read_from(b"5").ok(), Some(ReadFrom::After(id(5, 0))));
        assert_eq!(read_from(b"5-1").ok(), Some(ReadFrom::After(id(5, 1))));
        // Redis's own marker for `>`.
        let max = "18446744073709551615-18446744073709551615";
        assert_eq!(read_from(max.as_bytes()).ok(), Some(ReadFrom::New));
        for bad in ["+", "-", "(1", "abc", ""] {
            assert_eq!(
                error(read_from(bad.as_bytes())),
                "ERR Invalid stream ID specified as stream command argument"
            );
        }
        assert!(error(read_from(b"$")).starts_with("ERR The $ ID is meaningless"));
    }

    #[test]
    fn a_blocked_request_drops_block_and_carries_its_counters() {
        let request = args(&[
            "XREADGROUP",
            "BLOCK",
            "0",
            "GROUP",
            "g",
            "c",
            "block",
            "5",
            "STREAMS",
            "s",
            "t",
            ">",
            ">",
        ]);
        let parsed = parse_readgroup(&request, 1, false).expect("parses");
        let blocked = blocked_request(&request, &parsed, &[3, 0]);
        assert_eq!(blocked[0], b"XREADGROUP");
        assert_eq!(blocked_counters(&blocked), Some(vec![3, 0]));
        assert_eq!(
            &blocked[3..],
            &args(&["GROUP", "g", "c", "STREAMS", "s", "t", ">", ">"])[..]
        );
        let again = parse_readgroup(&blocked, 3, false).expect("parses");
        assert_eq!(again.block, None);
        assert_eq!(blocked_counters(&request), None);
        // The marker is not a word a client could guess.
        assert!(blocked_marker().len() > 40 && blocked_marker()[0] == 0);
    }

    #[test]
    fn xgroup_options_are_checked_before_the_key() {
        let create = |words: &[&str]| xgroup_options("create", &args(words));
        assert_eq!(
            create(&[
                "xgroup",
                "create",
                "s",
                "g",
                "$",
                "MKSTREAM",
                "entriesread",
                "3"
            ])
            .ok(),
            Some(XGroupOptions {
                mkstream: true,
                entries_read: 3
            })
        );
        assert_eq!(
            error(create(&[
                "xgroup",
                "create",
                "s",
                "g",
                "$",
                "entriesread",
                "-2"
            ])),
            "ERR value for ENTRIESREAD must be positive or -1"
        );
        assert_eq!(
            error(create(&["xgroup", "Create", "s", "g", "$", "entriesread"])),
            "ERR unknown subcommand or wrong number of arguments for 'Create'. Try XGROUP HELP."
        );
        assert_eq!(
            error(xgroup_options(
                "setid",
                &args(&["xgroup", "setid", "s", "g", "0", "mkstream"])
            )),
            "ERR unknown subcommand or wrong number of arguments for 'setid'. Try XGROUP HELP."
        );
        assert_eq!(
            error(create(&[
                "xgroup",
                "create",
                "s",
                "g",
                "$",
                "entriesread",
                "x"
            ])),
            "ERR value is not an integer or out of range"
        );
    }

    #[test]
    fn xpending_forms() {
        assert_eq!(
            parse_xpending(&args(&["xpending", "s", "g"])).ok(),
            Some(None)
        );
        let range = parse_xpending(&args(&[
            "xpending", "s", "g", "IDLE", "5", "(1", "+", "-3", "bob",
        ]))
        .expect("parses")
        .expect("a range");
        assert_eq!(
            range,
            PendingRange {
                min_idle: 5,
                start: id(1, 1),
                end: StreamId::MAX,
                count: 0,
                consumer_at: Some(8)
            }
        );
        // Without IDLE, arguments past the consumer are ignored, as in Redis.
        let extra = parse_xpending(&args(&[
            "xpending", "s", "g", "-", "+", "10", "c", "x", "y",
        ]))
        .expect("parses")
        .expect("a range");
        assert_eq!(extra.consumer_at, Some(6));
        for (words, want) in [
            (&["xpending", "s", "g", "-"][..], "ERR syntax error"),
            (
                &["xpending", "s", "g", "IDLE", "10", "-", "+"],
                "ERR syntax error",
            ),
            (
                &["xpending", "s", "g", "IDLE", "x", "-", "+"],
                "ERR value is not an integer or out of range",
            ),
            (
                &["xpending", "s", "g", "x", "+", "x"],
                "ERR value is not an integer or out of range",
            ),
            (
                &["xpending", "s", "g", "x", "+", "10"],
                "ERR Invalid stream ID specified as stream command argument",
            ),
        ] {
            assert_eq!(error(parse_xpending(&args(words))), want, "{words:?}");
        }
    }

    #[test]
    fn xclaim_options() {
        let now = 1_000_000;
        let parse = |words: &[&str]| parse_xclaim(&args(words), now);
        let claim = parse(&[
            "xclaim",
            "s",
            "g",
            "c",
            "0",
            "1-1",
            "2",
            "IDLE",
            "100",
            "TIME",
            "5",
            "RETRYCOUNT",
            "2",
            "FORCE",
            "JUSTID",
            "LASTID",
            "3-3",
            "RETRYCOUNT",
            "4",
        ])
        .expect("parses");
        assert_eq!(claim.ids, vec![id(1, 1), id(2, 0)]);
        assert_eq!(
            (claim.delivery_time, claim.retry_count, claim.last_id),
            (5, 4, id(3, 3))
        );
        assert!(claim.force && claim.justid);
        assert_eq!(
            parse(&["xclaim", "s", "g", "c", "0", "1", "IDLE", "100"])
                .expect("parses")
                .delivery_time,
            now as u64 - 100
        );
        // Bogus times are now.
        for bad in [
            &["IDLE", "-5"][..],
            &["TIME", "99999999999999"],
            &["TIME", "-1"],
        ] {
            let mut words = vec!["xclaim", "s", "g", "c", "0", "1"];
            words.extend_from_slice(bad);
            assert_eq!(
                parse(&words).expect("parses").delivery_time,
                now as u64,
                "{bad:?}"
            );
        }
        for (words, want) in [
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "FOO"][..],
                "ERR Unrecognized XCLAIM option 'FOO'",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "IDLE"],
                "ERR Unrecognized XCLAIM option 'IDLE'",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "+"],
                "ERR Unrecognized XCLAIM option '+'",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "JUSTID", "2-1"],
                "ERR Unrecognized XCLAIM option '2-1'",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "IDLE", "x"],
                "ERR Invalid IDLE option argument for XCLAIM",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "TIME", "x"],
                "ERR Invalid TIME option argument for XCLAIM",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "x"],
                "ERR Invalid RETRYCOUNT option argument for XCLAIM",
            ),
            (
                &["xclaim", "s", "g", "c", "0", "1-1", "LASTID", "x"],
                "ERR Invalid stream ID specified as stream command argument",
            ),
        ] {
            assert_eq!(error(parse(words)), want, "{words:?}");
        }
    }

    #[test]
    fn xautoclaim_count_limits() {
        let parse = |words: &[&str]| parse_xautoclaim(&args(words));
        let base = ["xautoclaim", "s", "g", "c", "0", "(1-1"];
        let parsed = parse(&base).expect("parses");
        assert_eq!(
            (parsed.start, parsed.count, parsed.justid),
            (id(1, 2), 100, false)
        );
        let most = MAX_AUTOCLAIM_COUNT.to_string();
        let mut words = base.to_vec();
        words.extend(["COUNT", "1", "COUNT", most.as_str(), "JUSTID"]);
        assert_eq!(
            parse(&words).expect("parses").count,
            576_460_752_303_423_487
        );
        for count in ["0", "-1", "x", "576460752303423488", "9223372036854775807"] {
            let mut words = base.to_vec();
            words.extend(["COUNT", count]);
            assert_eq!(error(parse(&words)), "ERR COUNT must be > 0", "{count}");
        }
        for tail in [&["COUNT"][..], &["JUSTID", "FOO"]] {
            let mut words = base.to_vec();
            words.extend_from_slice(tail);
            assert_eq!(error(parse(&words)), "ERR syntax error");
        }
        assert_eq!(
            error(parse(&["xautoclaim", "s", "g", "c", "x", "0"])),
            "ERR Invalid min-idle-time argument for XAUTOCLAIM"
        );
        assert_eq!(
            parse(&["xautoclaim", "s", "g", "c", "-5", "0"])
                .expect("parses")
                .min_idle,
            0
        );
    }

    #[test]
    fn xinfo_stream_options() {
        let parse = |words: &[&str]| parse_xinfo_stream(&args(words));
        assert_eq!(parse(&["xinfo", "stream", "s"]).ok(), Some(None));
        assert_eq!(
            parse(&["xinfo", "stream", "s", "FULL"]).ok(),
            Some(Some(10))
        );
        assert_eq!(
            parse(&["xinfo", "stream", "s", "full", "count", "0"]).ok(),
            Some(Some(0))
        );
        assert_eq!(
            parse(&["xinfo", "stream", "s", "full", "count", "-1"]).ok(),
            Some(Some(10))
        );
        assert_eq!(
            error(parse(&["xinfo", "stream", "s", "full", "count", "x"])),
            "ERR value is not an integer or out of range"
        );
        for words in [
            &["xinfo", "Stream", "s", "foo"][..],
            &["xinfo", "Stream", "s", "full", "count"],
            &["xinfo", "Stream", "s", "full", "foo", "1"],
            &["xinfo", "Stream", "s", "full", "count", "1", "x"],
        ] {
            assert_eq!(
                error(parse(words)),
                "ERR unknown subcommand or wrong number of arguments for 'Stream'. Try XINFO HELP."
            );
        }
    }

    /// The lag and read counters of a scenario run against Redis 7.0.15: entries 1-1..4-1,
    /// then deletions and reads, each step's XINFO GROUPS figures as Redis gave them.
    #[test]
    fn lag_follows_redis() {
        let full = state(4, id(1, 1), id(4, 1), StreamId::MIN, 4);
        // Created at 0, at $, at 2-1 (between entries), and at 0 with ENTRIESREAD 0.
        assert_eq!(group_lag(&full, &group(StreamId::MIN, -1)), Some(4));
        assert_eq!(group_lag(&full, &group(id(4, 1), -1)), Some(0));
        assert_eq!(group_lag(&full, &group(id(2, 1), -1)), None);
        assert_eq!(group_lag(&full, &group(StreamId::MIN, 0)), Some(4));
        // Reading 1-1 from an unknown counter estimates it exactly: the first entry.
        let g0 = group(StreamId::MIN, -1);
        assert_eq!(entries_read_after(&full, &g0, id(1, 1)), 1);
        assert_eq!(group_lag(&full, &group(id(1, 1), 1)), Some(3));
        // Reading 3-1 from 2-1: unknowable.
        assert_eq!(
            entries_read_after(&full, &group(id(2, 1), -1), id(3, 1)),
            -1
        );
        // XDEL 3-1: every group behind the tombstone loses its lag.
        let holed = state(3, id(1, 1), id(4, 1), id(3, 1), 4);
        assert_eq!(group_lag(&holed, &group(id(1, 1), 1)), None);
        assert_eq!(group_lag(&holed, &group(StreamId::MIN, 0)), None);
        assert_eq!(group_lag(&holed, &group(id(4, 1), -1)), Some(0));
        // Reading on: 2-1 (before the tombstone) cannot be counted, 4-1 (the last) can.
        assert_eq!(
            entries_read_after(&holed, &group(id(1, 1), 1), id(2, 1)),
            -1
        );
        assert_eq!(
            entries_read_after(&holed, &group(id(2, 1), -1), id(4, 1)),
            4
        );
        // XDEL 1-1 (below the largest deleted id), then XADD 5-1.
        let later = state(3, id(2, 1), id(5, 1), id(3, 1), 5);
        assert_eq!(group_lag(&later, &group(id(4, 1), 4)), Some(1));
        assert_eq!(group_lag(&later, &group(id(4, 1), -1)), None);
        assert_eq!(group_lag(&later, &group(id(5, 1), -1)), Some(0));
        assert_eq!(group_lag(&later, &group(id(9, 9), -1)), None);
        assert_eq!(group_lag(&later, &group(StreamId::MIN, 3)), None);
    }

    /// Redis 7.0 counts a delivery past a tombstone as one more read when no deleted entry
    /// lies at or after the delivered one: after XDEL 2-1, reading 3-1 gives 2 (lag 2), and
    /// then 4-1 gives 3 (lag 1, although everything was read).
    #[test]
    fn entries_read_counts_on_past_tombstones_as_redis_7_0_does() {
        let s = state(3, id(1, 1), id(4, 1), id(2, 1), 4);
        let g = group(id(1, 1), 1);
        assert_eq!(entries_read_after(&s, &g, id(3, 1)), 2);
        assert_eq!(group_lag(&s, &group(id(3, 1), 2)), Some(2));
        assert_eq!(entries_read_after(&s, &group(id(3, 1), 2), id(4, 1)), 3);
        assert_eq!(group_lag(&s, &group(id(4, 1), 3)), Some(1));
    }

    #[test]
    /// Figures Redis 7.0.15 gave: emptied streams, counters set by ENTRIESREAD, groups
    /// behind the first entry.
    fn lag_edges() {
        // Never written to: nothing to read.
        let empty = state(0, StreamId::MIN, StreamId::MIN, StreamId::MIN, 0);
        assert_eq!(group_lag(&empty, &group(StreamId::MIN, -1)), Some(0));
        // 1-1..3-1 all deleted: an empty stream has no tombstones to Redis, so a group
        // that read one entry still lags by two, and one set to 7 by -4; a group with no
        // counter is estimated at the end.
        let emptied = state(0, StreamId::MIN, id(3, 1), id(3, 1), 3);
        assert_eq!(group_lag(&emptied, &group(id(1, 1), 1)), Some(2));
        assert_eq!(group_lag(&emptied, &group(StreamId::MIN, 7)), Some(-4));
        assert_eq!(group_lag(&emptied, &group(StreamId::MIN, -1)), Some(0));
        assert_eq!(estimate_entries_read(&emptied, id(2, 0)), 3);
        // One entry 5-1, groups at 0 with ENTRIESREAD 3 and with no counter.
        let one = state(1, id(5, 1), id(5, 1), StreamId::MIN, 1);
        assert_eq!(group_lag(&one, &group(StreamId::MIN, 3)), Some(-2));
        assert_eq!(group_lag(&one, &group(StreamId::MIN, -1)), Some(1));
        // 1-1..3-1 with 1-1 deleted: groups at 0 (counter 1, or none) are estimated from
        // the entries before the first.
        let cut = state(2, id(2, 1), id(3, 1), id(1, 1), 3);
        assert_eq!(group_lag(&cut, &group(StreamId::MIN, 1)), Some(2));
        assert_eq!(group_lag(&cut, &group(StreamId::MIN, -1)), Some(2));
        // Deletions all before the first entry do not make a counter unknowable: after
        // XTRIM to nothing and an XADD of 4-1, a group with counter 1 lags by 3.
        let refilled = state(1, id(4, 1), id(4, 1), id(1, 1), 4);
        assert_eq!(group_lag(&refilled, &group(StreamId::MIN, 1)), Some(3));
        assert_eq!(group_lag(&refilled, &group(id(4, 1), 4)), Some(0));
        let trimmed = state(2, id(5, 1), id(6, 1), id(4, 1), 6);
        assert_eq!(group_lag(&trimmed, &group(id(1, 1), 1)), Some(5));
        // A group at a deleted id before the first entry: the entries before the first.
        assert_eq!(group_lag(&trimmed, &group(id(1, 1), -1)), Some(2));
        assert_eq!(estimate_entries_read(&trimmed, id(5, 1)), 5);
        assert_eq!(estimate_entries_read(&trimmed, id(4, 9)), 4);
    }

    #[test]
    fn radix_figures_are_exact_for_small_streams() {
        assert_eq!(radix_tree_figures(0), (0, 1));
        assert_eq!(radix_tree_figures(1), (1, 2));
        assert_eq!(radix_tree_figures(100), (1, 2));
        assert_eq!(radix_tree_figures(101), (2, 3));
    }
}
