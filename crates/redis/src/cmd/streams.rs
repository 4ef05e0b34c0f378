//! Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD ([`crate::stream`]),
//! with Redis 7.0's arguments, checks (in its order) and error texts (`t_stream.c`).
//!
//! Redis keeps a stream's entries in radix-tree nodes of at most `stream-node-max-entries`
//! (100) entries, and approximate trimming (`~`) removes whole nodes only. docdb keeps no
//! nodes: it takes a stream's entries as cut into nodes of 100 by the order they were added
//! ([`approx_trim_count`]), which is what Redis does for a stream written by XADD and
//! trimmed; see that function for where the two can differ.

use std::time::Duration;

use engine::Engine;

use super::blocking::block_unless_ready;
use super::{BLOCKS, Ctx, READONLY, Spec, WRITE, bulk_array, is, ok, spec, wrong_arity};
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Protocol};
use crate::number::int_arg;
use crate::store::{Reads, RedisType};
use crate::stream::{
    IdSyntax, Meta, ParsedId, STRICT, StreamId, StreamReads, StreamWrites, c_string, exact_id,
    invalid_id, parse_id, range_bound,
};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("xadd", -5, WRITE, 1, xadd),
        spec("xtrim", -4, WRITE, 1, xtrim),
        spec("xdel", -3, WRITE, 1, xdel),
        spec("xsetid", -3, WRITE, 1, xsetid),
        spec("xlen", 2, READONLY, 1, xlen),
        spec("xrange", -4, READONLY, 1, |c| range(c, false)),
        spec("xrevrange", -4, READONLY, 1, |c| range(c, true)),
        // Its keys follow STREAMS (cmd/keyspec.rs). BLOCKS keeps it out of runs of writes
        // only; inside MULTI it answers at once, as in Redis.
        spec("xread", -4, READONLY | BLOCKS, 0, xread),
    ]
}

/// Redis's `stream-node-max-entries`: the entries of one radix-tree node.
pub const NODE_ENTRIES: u64 = 100;

/// The LIMIT an approximate trim gets when none is given (`100 * stream-node-max-entries`).
const DEFAULT_APPROX_LIMIT: u64 = 100 * NODE_ENTRIES;

/// XADD's id: strict, but `ms-*` picks the sequence.
const XADD_ID: IdSyntax = IdSyntax {
    auto_seq: true,
    ..STRICT
};

/// Whether option word `arg` is `word`, comparing as Redis's `strcasecmp` on a C string.
fn word(arg: &[u8], word: &str) -> bool {
    is(c_string(arg), word)
}

// ---------------------------------------------------------------------------------------
// Range bounds.

/// XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n].
fn range<E: Engine>(ctx: &mut Ctx<'_, '_, E>, reverse: bool) -> CmdResult<Frame> {
    // The lower bound is read first, as Redis reads it, whichever argument it is.
    let (low_at, high_at) = if reverse { (3, 2) } else { (2, 3) };
    let low = range_bound(ctx.arg(low_at), false)?;
    let high = range_bound(ctx.arg(high_at), true)?;
    // COUNT: the last one counts; a negative count is 0, which answers a null array.
    let mut count: Option<u64> = None;
    let mut i = 4;
    while i < ctx.args.len() {
        if !is(ctx.arg(i), "count") || i + 1 >= ctx.args.len() {
            return Err(CmdError::Syntax);
        }
        count = Some(u64::try_from(int_arg(ctx.arg(i + 1))?).unwrap_or(0));
        i += 2;
    }
    let dk = ctx.key(1);
    let mut r = ctx.reads(ctx.read_time());
    if r.typed(&dk, RedisType::Stream)?.is_none() {
        return Ok(Frame::Array(Vec::new()));
    }
    if count == Some(0) {
        return Ok(Frame::NullArray);
    }
    let limit = count.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let entries = StreamReads::new(&mut r, &dk).entries(low, high, reverse, limit)?;
    Ok(entries_reply(entries))
}

/// Entries as Redis replies with them: `[id, [field, value, ...]]` each.
pub(super) fn entries_reply(entries: Vec<(StreamId, Vec<Vec<u8>>)>) -> Frame {
    Frame::Array(
        entries
            .into_iter()
            .map(|(id, fields)| entry_frame(id, fields))
            .collect(),
    )
}

/// An entry as XRANGE replies with it: its id, then its fields and values.
pub(super) fn entry_frame(id: StreamId, fields: Vec<Vec<u8>>) -> Frame {
    Frame::Array(vec![Frame::Bulk(id.to_bytes()), bulk_array(fields)])
}

/// XREAD's and XREADGROUP's reply: per stream served, its name and entries (a map in
/// RESP3); a null array when none was.
pub(super) fn streams_reply(served: Vec<(Vec<u8>, Vec<Frame>)>, protocol: Protocol) -> Frame {
    if served.is_empty() {
        return Frame::NullArray;
    }
    let pairs = served
        .into_iter()
        .map(|(key, entries)| (Frame::Bulk(key), Frame::Array(entries)));
    match protocol {
        Protocol::Resp3 => Frame::Map(pairs.collect()),
        Protocol::Resp2 => Frame::Array(
            pairs
                .map(|(key, entries)| Frame::Array(vec![key, entries]))
                .collect(),
        ),
    }
}

/// BLOCK's milliseconds (`None`: for ever, 0), as Redis's `getTimeoutFromObjectOrReply`
/// reads them.
pub(super) fn block_timeout(arg: &[u8]) -> CmdResult<Option<Duration>> {
    let ms =
        int_arg(arg).map_err(|_| CmdError::err("timeout is not an integer or out of range"))?;
    let ms = u64::try_from(ms).map_err(|_| CmdError::err("timeout is negative"))?;
    Ok((ms > 0).then(|| Duration::from_millis(ms)))
}

/// XLEN key.
fn xlen<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let mut r = ctx.reads(ctx.read_time());
    if r.typed(&dk, RedisType::Stream)?.is_none() {
        return Ok(Frame::Integer(0));
    }
    let meta = StreamReads::new(&mut r, &dk).meta()?;
    Ok(Frame::Integer(meta.length as i64))
}

// ---------------------------------------------------------------------------------------
// XADD and XTRIM arguments, and trimming.

/// What a trim keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// MAXLEN: at most this many entries.
    MaxLen(u64),
    /// MINID: no entry below this id.
    MinId(StreamId),
}

/// A trim: MAXLEN|MINID [=|~] threshold [LIMIT count].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
    /// What to keep.
    pub strategy: Strategy,
    /// `~`: whole nodes only.
    pub approx: bool,
    /// At most this many entries go (0: no limit); only with `~`.
    pub limit: u64,
}

/// XADD's id argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewId {
    /// `*`: from the clock.
    Auto,
    /// `ms-*`.
    AutoSeq(u64),
    /// `ms-seq` (or `ms`).
    Exact(StreamId),
}

/// The options of XADD or XTRIM, as `streamParseAddOrTrimArgsOrReply` reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AddTrimArgs {
    trim: Option<Trim>,
    nomkstream: bool,
    /// XADD's id (`None` for XTRIM, or an XADD whose options ran to the end).
    id: Option<NewId>,
    /// Where XADD's id is (the argument count when the options ran to the end).
    id_at: usize,
}

fn parse_add_trim(args: &[Vec<u8>], xadd: bool) -> CmdResult<AddTrimArgs> {
    let mut strategy: Option<Strategy> = None;
    let mut approx = false;
    let mut limit: i64 = 0;
    let mut limit_given = false;
    let mut nomkstream = false;
    let mut id = None;
    let incompatible = || {
        CmdError::err("syntax error, MAXLEN and MINID options at the same time are not compatible")
    };
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i];
        if xadd && c_string(opt) == b"*" {
            id = Some(NewId::Auto);
            break;
        } else if (word(opt, "maxlen") || word(opt, "minid")) && more > 0 {
            if strategy.is_some() {
                return Err(incompatible());
            }
            approx = false;
            let next = c_string(&args[i + 1]);
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                i += 1;
            }
            strategy = Some(if word(opt, "maxlen") {
                let n = int_arg(&args[i + 1])?;
                Strategy::MaxLen(
                    u64::try_from(n)
                        .map_err(|_| CmdError::err("The MAXLEN argument must be >= 0."))?,
                )
            } else {
                Strategy::MinId(exact_id(&args[i + 1], STRICT)?)
            });
            i += 1;
        } else if word(opt, "limit") && more > 0 {
            limit = int_arg(&args[i + 1])?;
            if limit < 0 {
                return Err(CmdError::err("The LIMIT argument must be >= 0."));
            }
            limit_given = true;
            i += 1;
        } else if xadd && word(opt, "nomkstream") {
            nomkstream = true;
        } else if xadd {
            id = Some(match parse_id(opt, XADD_ID)? {
                ParsedId::Exact(id) => NewId::Exact(id),
                ParsedId::AutoSeq(ms) => NewId::AutoSeq(ms),
            });
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if limit != 0 && strategy.is_none() {
        return Err(CmdError::err(
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && strategy.is_none() {
        return Err(CmdError::err(
            "syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if limit_given {
        if !approx {
            return Err(CmdError::err(
                "syntax error, LIMIT cannot be used without the special ~ option",
            ));
        }
    } else if approx {
        limit = DEFAULT_APPROX_LIMIT as i64;
    }
    Ok(AddTrimArgs {
        trim: strategy.map(|strategy| Trim {
            strategy,
            approx,
            limit: limit as u64,
        }),
        nomkstream,
        id,
        id_at: i,
    })
}

/// How many of a stream's oldest entries an approximate trim removes, as Redis's
/// `streamTrim` does with `~`: whole nodes from the oldest, while the next node fits within
/// `reach` (the entries an exact trim would remove) and, unless `limit` is 0, within `limit`.
///
/// The nodes are emulated: the stream's `length` live entries are taken to be the last of
/// the `entries_added` ever added, cut into nodes of [`NODE_ENTRIES`] by the order they were
/// added (the first node partly trimmed already). That is how Redis cuts a stream written by
/// XADD and trimmed by XADD/XTRIM, as long as its entries stay small. Redis's nodes differ
/// after XDEL (it leaves holes; a node it empties is dropped, and the next XADD starts a
/// node there), after the stream was emptied and written again (its nodes then start where
/// it was emptied), after XSETID ENTRIESADDED, and when entries are large (a node is also
/// closed at `stream-node-max-bytes`, 4096 bytes).
pub fn approx_trim_count(reach: u64, length: u64, entries_added: u64, limit: u64) -> u64 {
    let first_index = entries_added.saturating_sub(length);
    let mut end = (NODE_ENTRIES - first_index % NODE_ENTRIES).min(length);
    let mut removed = 0;
    while end <= reach && (limit == 0 || end <= limit) {
        removed = end;
        if end >= length {
            break;
        }
        end = end.saturating_add(NODE_ENTRIES).min(length);
    }
    removed
}

/// Trims the stream at `dk` (whose state is `meta`, updated here) as `trim` says; `added`
/// is the entry this command just added (XADD), which reads do not see yet. Returns how
/// many entries went. Trimming leaves the largest deleted id as it is, as in Redis 7.0.
fn trim_stream<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    w: &mut StreamWrites<'_, '_, E>,
    dk: &[u8],
    meta: &mut Meta,
    trim: &Trim,
    added: Option<StreamId>,
) -> CmdResult<u64> {
    let visible = meta.length - u64::from(added.is_some());
    // How many an exact trim removes (for `~`, no more than the limit matters).
    let cap = (trim.approx && trim.limit > 0).then_some(trim.limit);
    let reach = match trim.strategy {
        Strategy::MaxLen(keep) => meta.length.saturating_sub(keep),
        Strategy::MinId(min) if added.is_some_and(|id| id < min) => meta.length,
        Strategy::MinId(min) => match min.prev() {
            None => 0,
            Some(below) => {
                let limit = cap.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                let mut reads = StreamReads::new(r, dk);
                reads.entries(StreamId::MIN, below, false, limit)?.len() as u64
            }
        },
    };
    let count = if trim.approx {
        approx_trim_count(reach, meta.length, meta.entries_added, trim.limit)
    } else {
        reach
    };
    if count == 0 {
        return Ok(0);
    }
    let old = count.min(visible);
    let limit = usize::try_from(old).unwrap_or(usize::MAX);
    let gone = StreamReads::new(r, dk).entries(StreamId::MIN, StreamId::MAX, false, Some(limit))?;
    for (id, _) in &gone {
        w.delete_entry(*id)?;
    }
    let mut removed = gone.len() as u64;
    let mut last_gone = gone.last().map(|(id, _)| *id);
    if count > visible
        && let Some(id) = added
    {
        w.delete_entry(id)?;
        removed += 1;
        last_gone = Some(id);
    }
    if let Some(id) = last_gone {
        // The oldest entries went: later reads start after them.
        w.set_front(id.next().unwrap_or(StreamId::MAX))?;
    }
    meta.length -= removed;
    Ok(removed)
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
fn xadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = parse_add_trim(ctx.args, true)?;
    let fields_at = args.id_at + 1;
    let pairs = ctx.args.len().saturating_sub(fields_at);
    if ctx.args.len() < fields_at + 2 || !pairs.is_multiple_of(2) {
        return Err(wrong_arity("xadd"));
    }
    if args.id == Some(NewId::Exact(StreamId::MIN)) {
        return Err(CmdError::err(
            "The ID specified in XADD must be greater than 0-0",
        ));
    }
    let fields = &ctx.args[fields_at..];
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let exists = r.typed(&dk, RedisType::Stream)?.is_some();
        if !exists && args.nomkstream {
            return Ok(Frame::Null);
        }
        let mut meta = if exists {
            StreamReads::new(&mut r, &dk).meta()?
        } else {
            Meta::default()
        };
        let last = meta.last_id;
        if last == StreamId::MAX {
            return Err(CmdError::err(
                "The stream has exhausted the last possible ID, unable to add more items",
            ));
        }
        let id = match args.id.unwrap_or(NewId::Auto) {
            NewId::Auto => {
                let now = ht.physical_micros() / 1000;
                if now > last.ms {
                    StreamId::new(now, 0)
                } else {
                    last.next().ok_or_else(invalid_id)?
                }
            }
            NewId::AutoSeq(ms) if ms == last.ms => match last.seq.checked_add(1) {
                Some(seq) => StreamId::new(ms, seq),
                // Redis 7.0 gives this reply here.
                None => return Err(CmdError::err("Elements are too large to be stored")),
            },
            NewId::AutoSeq(ms) => StreamId::new(ms, 0),
            NewId::Exact(id) => id,
        };
        if id <= last {
            return Err(CmdError::err(
                "The ID specified in XADD is equal or smaller than the target stream top item",
            ));
        }
        let mut w = StreamWrites::new(batch, &dk);
        w.create_root(exists)?;
        w.put_entry(id, fields)?;
        meta.length += 1;
        meta.last_id = id;
        meta.entries_added += 1;
        if let Some(trim) = &args.trim {
            trim_stream(&mut r, &mut w, &dk, &mut meta, trim, Some(id))?;
        }
        w.set_meta(&meta)?;
        Ok(Frame::Bulk(id.to_bytes()))
    })
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]: how many entries went.
fn xtrim<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = parse_add_trim(ctx.args, false)?;
    let Some(trim) = args.trim else {
        return Err(CmdError::Syntax);
    };
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Stream)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let mut meta = StreamReads::new(&mut r, &dk).meta()?;
        let mut w = StreamWrites::new(batch, &dk);
        let removed = trim_stream(&mut r, &mut w, &dk, &mut meta, &trim, None)?;
        if removed > 0 {
            w.set_meta(&meta)?;
        }
        Ok(Frame::Integer(removed as i64))
    })
}

/// XDEL key id [id ...]: how many of the entries were there. The largest deleted id is
/// kept (XINFO STREAM's max-deleted-entry-id).
fn xdel<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        // As in Redis, the key is looked up before the ids are read.
        if r.typed(&dk, RedisType::Stream)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let ids = ctx.args[2..]
            .iter()
            .map(|arg| exact_id(arg, STRICT))
            .collect::<CmdResult<Vec<_>>>()?;
        let mut reads = StreamReads::new(&mut r, &dk);
        let mut meta = reads.meta()?;
        let mut deleted = std::collections::HashSet::new();
        for id in ids {
            if !deleted.contains(&id) && reads.entry(id)?.is_some() {
                deleted.insert(id);
                meta.max_deleted_id = meta.max_deleted_id.max(id);
            }
        }
        if deleted.is_empty() {
            return Ok(Frame::Integer(0));
        }
        // The first entry that stays becomes the front (reads do not see this command's
        // deletions yet, so one more entry than it deletes is enough to find it).
        let first = reads.entries(StreamId::MIN, StreamId::MAX, false, Some(deleted.len() + 1))?;
        let front = match first.iter().find(|(id, _)| !deleted.contains(id)) {
            Some((id, _)) => Some(*id),
            None => first
                .last()
                .map(|(id, _)| id.next().unwrap_or(StreamId::MAX)),
        };
        let moved = match front {
            Some(front) if front > reads.front()? => Some(front),
            _ => None,
        };
        let mut w = StreamWrites::new(batch, &dk);
        if let Some(front) = moved {
            w.set_front(front)?;
        }
        for id in &deleted {
            w.delete_entry(*id)?;
        }
        meta.length -= deleted.len() as u64;
        w.set_meta(&meta)?;
        Ok(Frame::Integer(deleted.len() as i64))
    })
}

/// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id], as Redis 7.0 checks it (7.0
/// lets the last id go down on an empty stream, below its largest deleted id too).
fn xsetid<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let id = exact_id(ctx.arg(2), STRICT)?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < ctx.args.len() {
        let more = ctx.args.len() - 1 - i;
        if word(ctx.arg(i), "entriesadded") && more > 0 {
            let n = int_arg(ctx.arg(i + 1))?;
            let n =
                u64::try_from(n).map_err(|_| CmdError::err("entries_added must be positive"))?;
            entries_added = Some(n);
        } else if word(ctx.arg(i), "maxdeletedid") && more > 0 {
            max_deleted = exact_id(ctx.arg(i + 1), STRICT)?;
            if id < max_deleted {
                return Err(CmdError::err(
                    "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Stream)?.is_none() {
            return Err(CmdError::err("no such key"));
        }
        let mut reads = StreamReads::new(&mut r, &dk);
        let mut meta = reads.meta()?;
        if meta.length > 0 {
            let top = reads.edge_id(true)?.unwrap_or(StreamId::MIN);
            if id < top {
                return Err(CmdError::err(
                    "The ID specified in XSETID is smaller than the target stream top item",
                ));
            }
            if entries_added.is_some_and(|n| n < meta.length) {
                return Err(CmdError::err(
                    "The entries_added specified in XSETID is smaller than the target stream \
                     length",
                ));
            }
        }
        let lowered = id < reads.front()?;
        meta.last_id = id;
        if let Some(n) = entries_added {
            meta.entries_added = n;
        }
        if max_deleted != StreamId::MIN {
            meta.max_deleted_id = max_deleted;
        }
        let mut w = StreamWrites::new(batch, &dk);
        if lowered {
            // Ids below the front may be added again.
            w.set_front(StreamId::MIN)?;
        }
        w.set_meta(&meta)?;
        Ok(ok())
    })
}

// ---------------------------------------------------------------------------------------
// XREAD.

/// XREAD's options: [COUNT n] [BLOCK ms] STREAMS key ... id ...
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReadArgs {
    /// At most this many entries per stream (0: all).
    count: u64,
    /// BLOCK's timeout: `None` without BLOCK, `Some(None)` for ever (0).
    block: Option<Option<Duration>>,
    /// Where the keys start.
    keys_at: usize,
    /// How many streams.
    streams: usize,
}

fn parse_read(args: &[Vec<u8>], in_script: bool) -> CmdResult<ReadArgs> {
    let mut count = 0;
    let mut block = None;
    let mut keys_at = 0;
    let mut streams = 0;
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i];
        if word(opt, "block") && more > 0 {
            if in_script {
                return Err(CmdError::err(format!(
                    "{} command is not allowed with BLOCK option from scripts",
                    String::from_utf8_lossy(c_string(&args[0]))
                )));
            }
            i += 1;
            block = Some(block_timeout(&args[i])?);
        } else if word(opt, "count") && more > 0 {
            i += 1;
            count = u64::try_from(int_arg(&args[i])?).unwrap_or(0);
        } else if word(opt, "streams") && more > 0 {
            keys_at = i + 1;
            let listed = args.len() - keys_at;
            if !listed.is_multiple_of(2) {
                return Err(CmdError::err(
                    "Unbalanced XREAD list of streams: for each stream key an ID or '$' must \
                     be specified.",
                ));
            }
            streams = listed / 2;
            break;
        } else if word(opt, "group") && more >= 2 {
            return Err(CmdError::err(
                "The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
            ));
        } else if word(opt, "noack") {
            return Err(CmdError::err(
                "The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
            ));
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if keys_at == 0 {
        return Err(CmdError::Syntax);
    }
    Ok(ReadArgs {
        count,
        block,
        keys_at,
        streams,
    })
}

/// XREAD [COUNT n] [BLOCK ms] STREAMS key [key ...] id [id ...]: each stream's entries after
/// its id (`$`: its last id now), for the streams that have any; a null array when none has,
/// or, with BLOCK, when none has before the timeout. RESP3 replies with a map.
fn xread<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let in_script = ctx.session.in_exec && ctx.core.scripts.running();
    let request = ctx.args;
    let args = parse_read(request, in_script)?;
    let keys = &request[args.keys_at..args.keys_at + args.streams];
    let id_args = &request[args.keys_at + args.streams..];
    let mut r = ctx.reads(ctx.read_time());
    // Each key's type, then its id, in order, as Redis checks them.
    let mut after = Vec::with_capacity(args.streams);
    for (key, id) in keys.iter().zip(id_args) {
        let dk = ctx.store().doc_key(ctx.db(), key);
        let exists = r.typed(&dk, RedisType::Stream)?.is_some();
        after.push(match c_string(id) {
            b"$" if exists => StreamReads::new(&mut r, &dk).meta()?.last_id,
            b"$" => StreamId::MIN,
            b">" => {
                return Err(CmdError::err(
                    "The > ID can be specified only when calling XREADGROUP using the GROUP \
                     <group> <consumer> option.",
                ));
            }
            _ => exact_id(id, STRICT)?,
        });
    }
    let limit = (args.count > 0).then(|| usize::try_from(args.count).unwrap_or(usize::MAX));
    let mut served = Vec::new();
    for (key, &gt) in keys.iter().zip(&after) {
        let Some(from) = gt.next() else {
            continue;
        };
        let dk = ctx.store().doc_key(ctx.db(), key);
        if r.key_info(&dk)?.is_none() {
            continue;
        }
        let entries = StreamReads::new(&mut r, &dk).entries(from, StreamId::MAX, false, limit)?;
        if !entries.is_empty() {
            let entries = entries.into_iter().map(|(id, f)| entry_frame(id, f));
            served.push((key.clone(), entries.collect()));
        }
    }
    drop(r);
    if !served.is_empty() {
        return Ok(streams_reply(served, ctx.session.protocol));
    }
    let Some(timeout) = args.block else {
        return Ok(Frame::NullArray);
    };
    if ctx.as_of.is_some() || ctx.session.in_exec {
        // Nothing will arrive in the past; inside MULTI Redis answers as if timed out.
        return Ok(Frame::NullArray);
    }
    // The non-blocking form, `$` resolved: blocking.rs retries it after each write to a key.
    let mut request = vec![b"xread".to_vec()];
    if args.count > 0 {
        request.extend([b"COUNT".to_vec(), args.count.to_string().into_bytes()]);
    }
    request.push(b"STREAMS".to_vec());
    request.extend(keys.iter().cloned());
    request.extend(after.iter().map(|id| id.to_bytes()));
    let mut waited: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
    for key in keys {
        if !waited.contains(key) {
            waited.push(key.clone());
        }
    }
    block_unless_ready(ctx, request, waited, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<u8>> {
        line.split_whitespace()
            .map(|w| w.as_bytes().to_vec())
            .collect()
    }

    #[test]
    fn approximate_trims_remove_whole_nodes() {
        // 250 entries added: nodes of 100, 100 and 50.
        let maxlen =
            |keep: u64, limit: u64| approx_trim_count(250u64.saturating_sub(keep), 250, 250, limit);
        for (keep, want) in [
            (0, 250),
            (1, 200),
            (50, 200),
            (51, 100),
            (150, 100),
            (151, 0),
            (250, 0),
            (300, 0),
        ] {
            assert_eq!(maxlen(keep, DEFAULT_APPROX_LIMIT), want, "MAXLEN ~ {keep}");
        }
        for (limit, want) in [
            (0, 250),
            (1, 0),
            (99, 0),
            (100, 100),
            (199, 100),
            (250, 250),
        ] {
            assert_eq!(maxlen(0, limit), want, "LIMIT {limit}");
        }
        // MINID: `reach` counts the entries below the id.
        assert_eq!(approx_trim_count(100, 250, 250, 10_000), 100);
        assert_eq!(approx_trim_count(99, 250, 250, 10_000), 0);
        // 10 of the first node trimmed exactly already: it has 90 left.
        assert_eq!(approx_trim_count(140, 240, 250, 10_000), 90);
        assert_eq!(approx_trim_count(89, 240, 250, 10_000), 0);
        assert_eq!(approx_trim_count(190, 240, 250, 10_000), 190);
        // An empty stream has nothing to remove.
        assert_eq!(approx_trim_count(0, 0, 7, 10_000), 0);
        // A stream shorter than one node goes whole, or not at all.
        assert_eq!(approx_trim_count(30, 30, 30, 10_000), 30);
        assert_eq!(approx_trim_count(29, 30, 30, 10_000), 0);
    }

    fn add_trim(line: &str, xadd: bool) -> Result<AddTrimArgs, String> {
        parse_add_trim(&words(line), xadd).map_err(|e| e.to_string())
    }

    #[test]
    fn trim_options_parse_as_redis_parses_them() {
        let parsed =
            add_trim("xadd s MAXLEN ~ 5 LIMIT 7 NOMKSTREAM 1-* f v", true).expect("parsed");
        assert_eq!(
            parsed.trim,
            Some(Trim {
                strategy: Strategy::MaxLen(5),
                approx: true,
                limit: 7
            })
        );
        assert!(parsed.nomkstream);
        assert_eq!(parsed.id, Some(NewId::AutoSeq(1)));
        assert_eq!(parsed.id_at, 8);
        let parsed = add_trim("xtrim s minid = 3", false).expect("parsed");
        assert_eq!(
            parsed.trim,
            Some(Trim {
                strategy: Strategy::MinId(StreamId::new(3, 0)),
                approx: false,
                limit: 0
            })
        );
        assert_eq!(
            add_trim("xtrim s maxlen ~ 3", false)
                .expect("parsed")
                .trim
                .expect("parsed")
                .limit,
            DEFAULT_APPROX_LIMIT
        );
        for (line, xadd, error) in [
            (
                "xadd s maxlen 5 limit 10 * f v",
                true,
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ),
            (
                "xadd s limit 10 * f v",
                true,
                "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
            ),
            (
                "xtrim s limit 0",
                false,
                "ERR syntax error, XTRIM must be called with a trimming strategy",
            ),
            (
                "xtrim s maxlen 1 minid 2",
                false,
                "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
            ),
            (
                "xtrim s maxlen -1",
                false,
                "ERR The MAXLEN argument must be >= 0.",
            ),
            (
                "xtrim s maxlen ~ 1 limit -1",
                false,
                "ERR The LIMIT argument must be >= 0.",
            ),
            (
                "xtrim s maxlen ~",
                false,
                "ERR value is not an integer or out of range",
            ),
            ("xtrim s nomkstream maxlen 1", false, "ERR syntax error"),
            (
                "xadd s minid - * f v",
                true,
                "ERR Invalid stream ID specified as stream command argument",
            ),
        ] {
            assert_eq!(add_trim(line, xadd), Err(error.into()), "{line}");
        }
    }

    #[test]
    fn xread_options_parse_as_redis_parses_them() {
        let parsed =
            parse_read(&words("xread count 2 block 0 streams a b 0 $"), false).expect("parsed");
        assert_eq!(
            parsed,
            ReadArgs {
                count: 2,
                block: Some(None),
                keys_at: 6,
                streams: 2
            }
        );
        let parsed =
            parse_read(&words("xread count -3 block 15 streams a 0"), false).expect("parsed");
        assert_eq!(parsed.count, 0);
        assert_eq!(parsed.block, Some(Some(Duration::from_millis(15))));
        let error = |line: &str| {
            parse_read(&words(line), false)
                .expect_err("an error")
                .to_string()
        };
        assert!(error("xread streams a b c").starts_with("ERR Unbalanced XREAD list"));
        assert_eq!(error("xread count 1 streams"), "ERR syntax error");
        assert_eq!(
            error("xread block -1 streams a 0"),
            "ERR timeout is negative"
        );
        assert_eq!(
            error("xread block 1.5 streams a 0"),
            "ERR timeout is not an integer or out of range"
        );
        assert!(error("xread group g c streams a 0").contains("only supported by XREADGROUP"));
        assert_eq!(
            parse_read(&words("xread block 0 streams a 0"), true)
                .expect_err("an error")
                .to_string(),
            "ERR xread command is not allowed with BLOCK option from scripts"
        );
    }
}
