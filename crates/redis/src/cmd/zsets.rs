//! Sorted sets (format.md §10): a `,` root; `%` → cardinality; `&` score member → null (the
//! score order); `'` member → score (the member index).

use std::collections::HashMap;

use docdb::reader::ChildRange;
use docdb::{DocWriteBatch, SubDocument};
use dockv::KeyEntryValue;
use dockv::value::{PrimitiveValue, Value};
use engine::Engine;

use super::hashes::{ensure_root, replace_root, scan_collection};
use super::sample::{Count, parse_count, request_rng, sample, sample_one};
use super::strings::normalize_range;
use super::{Ctx, MultiPop, READONLY, Spec, WRITE, bulk_or_null, is, spec, wrong_arity};
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Protocol};
use crate::number::{float_arg, format_double, int_arg, parse_f64};
use crate::store::{self, Reads, RedisType};

/// (score, member) pairs.
pub(super) type Scored = Vec<(f64, Vec<u8>)>;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("zadd", -4, WRITE, 1, zadd),
        spec("zrem", -3, WRITE, 1, zrem),
        spec("zcard", 2, READONLY, 1, zcard),
        spec("zscore", 3, READONLY, 1, zscore),
        spec("zrange", -4, READONLY, 1, |c| range_generic(c, None, None)),
        spec("zrevrange", -4, READONLY, 1, |c| {
            range_generic(c, Some(RangeBy::Rank), Some(true))
        }),
        spec("zrangebyscore", -4, READONLY, 1, |c| {
            range_generic(c, Some(RangeBy::Score), Some(false))
        }),
        spec("zrangebylex", -4, READONLY, 1, |c| {
            range_generic(c, Some(RangeBy::Lex), Some(false))
        }),
        spec("zrevrangebylex", -4, READONLY, 1, |c| {
            range_generic(c, Some(RangeBy::Lex), Some(true))
        }),
        spec("zlexcount", 4, READONLY, 1, zlexcount),
        spec("zremrangebylex", 4, WRITE, 1, zremrangebylex),
        spec("zmscore", -3, READONLY, 1, zmscore),
        spec("zunion", -3, READONLY, 0, |c| {
            combine_read(c, Combine::Union, Form::Read)
        }),
        spec("zinter", -3, READONLY, 0, |c| {
            combine_read(c, Combine::Inter, Form::Read)
        }),
        spec("zdiff", -3, READONLY, 0, |c| {
            combine_read(c, Combine::Diff, Form::Read)
        }),
        spec("zunionstore", -4, WRITE, 1, |c| {
            combine_store(c, Combine::Union)
        }),
        spec("zinterstore", -4, WRITE, 1, |c| {
            combine_store(c, Combine::Inter)
        }),
        spec("zdiffstore", -4, WRITE, 1, |c| {
            combine_store(c, Combine::Diff)
        }),
        spec("zscan", -3, READONLY, 1, zscan),
        spec("zpopmin", -2, WRITE, 1, |c| pop(c, "zpopmin", false)),
        spec("zpopmax", -2, WRITE, 1, |c| pop(c, "zpopmax", true)),
        spec("zmpop", -4, WRITE, 2, zmpop),
        spec("zrevrangebyscore", -4, READONLY, 1, |c| {
            range_generic(c, Some(RangeBy::Score), Some(true))
        }),
        spec("zremrangebyscore", 4, WRITE, 1, zremrangebyscore),
        spec("zremrangebyrank", 4, WRITE, 1, zremrangebyrank),
        spec("zincrby", 4, WRITE, 1, zincrby),
        spec("zcount", 4, READONLY, 1, zcount),
        spec("zrank", 3, READONLY, 1, |c| rank(c, false)),
        spec("zrevrank", 3, READONLY, 1, |c| rank(c, true)),
        spec("zrangestore", -5, WRITE, 1, zrangestore),
        spec("zintercard", -3, READONLY, 0, |c| {
            combine_read(c, Combine::Inter, Form::Card)
        }),
        spec("zrandmember", -2, READONLY, 1, zrandmember),
    ]
}

fn counter_path(dk: &[u8]) -> Vec<u8> {
    store::path(dk, &[KeyEntryValue::Counter])
}

/// A score as a sorted set keeps it: -0 becomes 0, as Redis's compact (listpack) sorted sets
/// store it, so ZSCORE after `ZADD z -0 m` or `ZUNIONSTORE d 1 z WEIGHTS 0` says `0`.
fn as_stored(score: f64) -> f64 {
    if score == 0.0 { 0.0 } else { score }
}

/// Scores are stored as keys; -0 and 0 are one score.
pub(super) fn score_key(score: f64) -> KeyEntryValue {
    KeyEntryValue::double(as_stored(score))
}

/// Writes `member` at `score`: its forward record (ordered by score) and its reverse one
/// (holding the score).
fn put_member<E: Engine>(
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    score: f64,
    member: &[u8],
) -> CmdResult<()> {
    let score = as_stored(score);
    batch.set_encoded_path(
        forward_path(dk, score, member),
        Value::new(PrimitiveValue::Null),
    )?;
    batch.set_encoded_path(
        reverse_path(dk, member),
        Value::new(PrimitiveValue::Double(score)),
    )?;
    Ok(())
}

fn forward_path(dk: &[u8], score: f64, member: &[u8]) -> Vec<u8> {
    store::path(
        dk,
        &[
            KeyEntryValue::SsForward,
            score_key(score),
            KeyEntryValue::string(member),
        ],
    )
}

fn reverse_path(dk: &[u8], member: &[u8]) -> Vec<u8> {
    store::path(
        dk,
        &[KeyEntryValue::SsReverse, KeyEntryValue::string(member)],
    )
}

/// The score of `member`, if it is in the (existing) sorted set.
pub(super) fn score_of<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    member: &[u8],
) -> CmdResult<Option<f64>> {
    Ok(match r.child_record(&reverse_path(dk, member))? {
        Some(record) => match record.payload {
            PrimitiveValue::Double(score) => Some(score),
            _ => return Err(CmdError::err("corrupt sorted set member index")),
        },
        None => None,
    })
}

/// The stored cardinality.
fn cardinality<E: Engine>(r: &mut Reads<'_, '_, E>, dk: &[u8]) -> CmdResult<i64> {
    Ok(match r.child_record(&counter_path(dk))? {
        Some(record) => match record.payload {
            PrimitiveValue::Int64(n) => n,
            _ => return Err(CmdError::err("corrupt sorted set counter")),
        },
        None => 0,
    })
}

/// Writes the new cardinality, or deletes the key when it reaches 0.
pub(super) fn write_count<E: Engine>(
    batch: &mut docdb::DocWriteBatch<'_, E>,
    dk: &[u8],
    count: i64,
) -> CmdResult<()> {
    if count <= 0 {
        batch.set_encoded_path(dk, Value::tombstone())?;
    } else {
        batch.set_encoded_path(counter_path(dk), Value::new(PrimitiveValue::Int64(count)))?;
    }
    Ok(())
}

/// ZADD's options (GEOADD passes on NX, XX and CH).
#[derive(Default)]
pub(super) struct ZaddFlags {
    pub(super) nx: bool,
    pub(super) xx: bool,
    gt: bool,
    lt: bool,
    pub(super) ch: bool,
    incr: bool,
}

fn parse_zadd(args: &[Vec<u8>]) -> CmdResult<(ZaddFlags, Scored)> {
    let mut flags = ZaddFlags::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match () {
            _ if is(a, "nx") => flags.nx = true,
            _ if is(a, "xx") => flags.xx = true,
            _ if is(a, "gt") => flags.gt = true,
            _ if is(a, "lt") => flags.lt = true,
            _ if is(a, "ch") => flags.ch = true,
            _ if is(a, "incr") => flags.incr = true,
            _ => break,
        }
        i += 1;
    }
    let rest = &args[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    if flags.nx && flags.xx {
        return Err(CmdError::err(
            "XX and NX options at the same time are not compatible",
        ));
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Err(CmdError::err(
            "GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && rest.len() > 2 {
        return Err(CmdError::err(
            "INCR option supports a single increment-element pair",
        ));
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for pair in rest.chunks(2) {
        pairs.push((float_arg(&pair[0])?, pair[1].clone()));
    }
    Ok((flags, pairs))
}

fn zadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (flags, pairs) = parse_zadd(&ctx.args[2..])?;
    zadd_pairs(ctx, &flags, pairs)
}

/// ZINCRBY: ZADD with INCR.
fn zincrby<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let flags = ZaddFlags {
        incr: true,
        ..ZaddFlags::default()
    };
    let pairs = vec![(float_arg(ctx.arg(2))?, ctx.arg(3).to_vec())];
    zadd_pairs(ctx, &flags, pairs)
}

/// ZADD of `pairs` to the key at argument 1 with `flags` (GEOADD's too).
pub(super) fn zadd_pairs<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    flags: &ZaddFlags,
    pairs: Scored,
) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::SortedSet)?;
        if info.is_none() && flags.xx {
            return Ok(if flags.incr {
                Frame::Null
            } else {
                Frame::Integer(0)
            });
        }
        // The marker first: later pairs of a batch are newer, and a newer marker hides.
        ensure_root(batch, &dk, &info, RedisType::SortedSet)?;
        // Members already written by this command (ZADD z 1 a 2 a).
        let mut pending: std::collections::HashMap<Vec<u8>, f64> = Default::default();
        let (mut added, mut changed) = (0, 0);
        let mut incr_result = None;
        for (score, member) in pairs {
            let old = match pending.get(&member) {
                Some(s) => Some(*s),
                None if info.is_some() => score_of(&mut r, &dk, &member)?,
                None => None,
            };
            if (flags.nx && old.is_some()) || (flags.xx && old.is_none()) {
                continue;
            }
            let new = match old {
                Some(old) if flags.incr => old + score,
                _ => score,
            };
            if new.is_nan() {
                return Err(CmdError::err("resulting score is not a number (NaN)"));
            }
            if let Some(old) = old
                && ((flags.gt && new <= old) || (flags.lt && new >= old))
            {
                continue;
            }
            // The reply is the sum as computed; the stored score may differ (-0).
            incr_result = Some(new);
            let new = as_stored(new);
            match old {
                Some(old) if old == new => {}
                Some(old) => {
                    batch.set_encoded_path(forward_path(&dk, old, &member), Value::tombstone())?;
                    changed += 1;
                }
                None => added += 1,
            }
            if old != Some(new) {
                put_member(batch, &dk, new, &member)?;
            }
            pending.insert(member, new);
        }
        if added > 0 {
            // Read only now: a ZADD that adds nothing leaves the count alone.
            let before = if info.is_some() {
                cardinality(&mut r, &dk)?
            } else {
                0
            };
            write_count(batch, &dk, before + added)?;
        }
        Ok(if flags.incr {
            incr_result.map_or(Frame::Null, Frame::Double)
        } else {
            Frame::Integer(if flags.ch { added + changed } else { added })
        })
    })
}

fn zrem<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let store = ctx.store();
    let members = &ctx.args[2..];
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::SortedSet)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let mut removed = std::collections::HashSet::new();
        for member in members {
            if removed.contains(member) {
                continue;
            }
            if let Some(score) = score_of(&mut r, &dk, member)? {
                remove_member(batch, &dk, score, member)?;
                removed.insert(member.clone());
            }
        }
        if !removed.is_empty() {
            let count = cardinality(&mut r, &dk)? - removed.len() as i64;
            write_count(batch, &dk, count)?;
        }
        Ok(Frame::Integer(removed.len() as i64))
    })
}

fn remove_member<E: Engine>(
    batch: &mut docdb::DocWriteBatch<'_, E>,
    dk: &[u8],
    score: f64,
    member: &[u8],
) -> CmdResult<()> {
    batch.set_encoded_path(forward_path(dk, score, member), Value::tombstone())?;
    batch.set_encoded_path(reverse_path(dk, member), Value::tombstone())?;
    Ok(())
}

fn zcard<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::SortedSet)?.is_none() {
        return Ok(Frame::Integer(0));
    }
    Ok(Frame::Integer(cardinality(&mut r, &dk)?))
}

fn zscore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::SortedSet)?.is_none() {
        return Ok(Frame::Null);
    }
    let score = score_of(&mut r, &dk, ctx.arg(2))?;
    Ok(score.map_or(Frame::Null, Frame::Double))
}

/// `(score, member)` entries of the score index within `range` (score children), flattened.
pub(super) fn entries<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    range: &ChildRange,
) -> CmdResult<Scored> {
    let index = store::path(dk, &[KeyEntryValue::SsForward]);
    let mut out = Vec::new();
    for (score, members) in r.children(&index, range)? {
        let KeyEntryValue::Double(score, _) = score else {
            continue;
        };
        let SubDocument::Object { children, .. } = members else {
            continue;
        };
        let names = children.into_values().filter_map(|(key, _)| match key {
            KeyEntryValue::String(name, _) => Some(name),
            _ => None,
        });
        if range.reverse {
            let mut names: Vec<_> = names.collect();
            names.reverse();
            out.extend(names.into_iter().map(|n| (score, n)));
        } else {
            out.extend(names.map(|n| (score, n)));
        }
    }
    Ok(out)
}

/// How a reply lists members' scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scores {
    /// Members only.
    Omitted,
    /// Each member followed by its score.
    Flat,
    /// Each member and its score in a two-element array.
    Paired,
}

impl Scores {
    /// WITHSCORES: flat in RESP2, paired in RESP3 (as Redis 7 replies).
    fn with_scores(wanted: bool, protocol: Protocol) -> Scores {
        match (wanted, protocol) {
            (false, _) => Scores::Omitted,
            (true, Protocol::Resp2) => Scores::Flat,
            (true, Protocol::Resp3) => Scores::Paired,
        }
    }
}

fn reply_entries(entries: Scored, scores: Scores) -> Frame {
    let mut out = Vec::with_capacity(entries.len() * if scores == Scores::Flat { 2 } else { 1 });
    for (score, member) in entries {
        let member = Frame::Bulk(member);
        match scores {
            Scores::Omitted => out.push(member),
            Scores::Flat => out.extend([member, Frame::Double(score)]),
            Scores::Paired => out.push(Frame::Array(vec![member, Frame::Double(score)])),
        }
    }
    Frame::Array(out)
}

/// Members of the sorted set at `dk` ranked `start..=stop` (Redis indexes, negative from
/// the end), in score order or reversed.
fn ranked<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    start: i64,
    stop: i64,
    reverse: bool,
) -> CmdResult<Scored> {
    if r.typed(dk, RedisType::SortedSet)?.is_none() {
        return Ok(Vec::new());
    }
    let len = cardinality(r, dk)?;
    let Some((from, to)) = normalize_range(start, stop, len) else {
        return Ok(Vec::new());
    };
    // Each score child holds at least one member, so to+1 score children are enough.
    let range = ChildRange {
        reverse,
        limit: Some(to + 1),
        ..ChildRange::default()
    };
    let all = entries(r, dk, &range)?;
    Ok(all.into_iter().skip(from).take(to + 1 - from).collect())
}

/// A score bound: value and whether it is exclusive (`(1.5`).
fn score_bound(arg: &[u8]) -> CmdResult<(f64, bool)> {
    let (exclusive, text) = match arg.split_first() {
        Some((b'(', rest)) => (true, rest),
        _ => (false, arg),
    };
    let value = parse_f64(text).ok_or_else(|| CmdError::err("min or max is not a float"))?;
    Ok((value, exclusive))
}

/// A ZRANGEBYSCORE-style score range: bounds as [`score_bound`] reads them.
struct ScoreRange {
    min: (f64, bool),
    max: (f64, bool),
}

impl ScoreRange {
    fn parse(min: &[u8], max: &[u8]) -> CmdResult<Self> {
        Ok(ScoreRange {
            min: score_bound(min)?,
            max: score_bound(max)?,
        })
    }

    fn contains(&self, score: f64) -> bool {
        let ((min, min_ex), (max, max_ex)) = (self.min, self.max);
        score >= min && score <= max && !((min_ex && score == min) || (max_ex && score == max))
    }
}

/// The members of the sorted set at `dk` whose score is in `range`, in score order (or
/// reversed), skipping `offset` and keeping up to `count`.
fn by_score<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    range: &ScoreRange,
    reverse: bool,
    (offset, count): (usize, Option<usize>),
) -> CmdResult<Scored> {
    let (min, max) = (range.min.0, range.max.0);
    if r.typed(dk, RedisType::SortedSet)?.is_none() || min > max {
        return Ok(Vec::new());
    }
    let mut upper = score_key(max).encoded();
    upper.push(0xFF);
    let children = ChildRange {
        lower: Some(score_key(min).encoded()),
        upper: Some(upper),
        reverse,
        limit: count.map(|c| offset + c + 2),
    };
    Ok(entries(r, dk, &children)?
        .into_iter()
        .filter(|(s, _)| range.contains(*s))
        .skip(offset)
        .take(count.unwrap_or(usize::MAX))
        .collect())
}

/// What a range command selects by: ranks, scores or members (lexicographically).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RangeBy {
    Rank,
    Score,
    Lex,
}

/// ZRANGE's options, or those its older forms allow (their kind and direction fixed), or
/// ZRANGESTORE's (no WITHSCORES).
struct RangeOptions {
    by: RangeBy,
    reverse: bool,
    with_scores: bool,
    /// LIMIT offset count.
    limit: Option<(i64, i64)>,
}

impl RangeOptions {
    /// Parses the options after `key start stop`, as Redis 7.0's `zrangeGenericCommand`
    /// does: BYSCORE, BYLEX and REV only where the command leaves them open (`by`, `reverse`
    /// `None`), then the conflicts.
    fn parse(
        args: &[Vec<u8>],
        mut by: Option<RangeBy>,
        mut reverse: Option<bool>,
        store: bool,
    ) -> CmdResult<Self> {
        let mut with_scores = false;
        let mut limit = None;
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            if !store && is(arg, "withscores") {
                with_scores = true;
            } else if is(arg, "limit") && i + 2 < args.len() {
                limit = Some((int_arg(&args[i + 1])?, int_arg(&args[i + 2])?));
                i += 2;
            } else if reverse.is_none() && is(arg, "rev") {
                reverse = Some(true);
            } else if by.is_none() && is(arg, "byscore") {
                by = Some(RangeBy::Score);
            } else if by.is_none() && is(arg, "bylex") {
                by = Some(RangeBy::Lex);
            } else {
                return Err(CmdError::Syntax);
            }
            i += 1;
        }
        let by = by.unwrap_or(RangeBy::Rank);
        if by == RangeBy::Rank && limit.is_some_and(|(_, count)| count != -1) {
            return Err(CmdError::err(
                "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        if by == RangeBy::Lex && with_scores {
            return Err(CmdError::err(
                "syntax error, WITHSCORES not supported in combination with BYLEX",
            ));
        }
        Ok(RangeOptions {
            by,
            reverse: reverse.unwrap_or(false),
            with_scores,
            limit,
        })
    }

    /// LIMIT as (offset, count); a negative offset selects nothing (after the key's type
    /// is checked), a negative count everything after the offset.
    fn window(&self) -> (usize, Option<usize>) {
        match self.limit {
            Some((offset, _)) if offset < 0 => (0, Some(0)),
            Some((offset, count)) => (offset as usize, usize::try_from(count).ok()),
            None => (0, None),
        }
    }
}

/// ZRANGE and its older forms (ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
/// ZREVRANGEBYLEX): `key start stop [options]`; reversed score and lex ranges are given
/// max first.
fn range_generic<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    by: Option<RangeBy>,
    reverse: Option<bool>,
) -> CmdResult<Frame> {
    let opts = RangeOptions::parse(&ctx.args[4..], by, reverse, false)?;
    let mut r = ctx.reads(ctx.read_time());
    let selected = select_range(&mut r, &ctx.key(1), ctx.arg(2), ctx.arg(3), &opts)?;
    let scores = Scores::with_scores(opts.with_scores, ctx.session.protocol);
    Ok(reply_entries(selected, scores))
}

/// The members of the sorted set at `dk` that a range command's `low` and `high` (as
/// given: max first for reversed score and lex ranges) and options select.
fn select_range<'a, E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    mut low: &'a [u8],
    mut high: &'a [u8],
    opts: &RangeOptions,
) -> CmdResult<Scored> {
    if opts.reverse && opts.by != RangeBy::Rank {
        std::mem::swap(&mut low, &mut high);
    }
    match opts.by {
        RangeBy::Rank => ranked(r, dk, int_arg(low)?, int_arg(high)?, opts.reverse),
        RangeBy::Score => {
            let range = ScoreRange::parse(low, high)?;
            by_score(r, dk, &range, opts.reverse, opts.window())
        }
        RangeBy::Lex => {
            let range = LexRange::parse(low, high)?;
            by_lex(r, dk, &range, opts.reverse, opts.window())
        }
    }
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]: what ZRANGE
/// would list replaces whatever is at `dst` (nothing deletes it); replies with its size.
fn zrangestore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let opts = RangeOptions::parse(&ctx.args[5..], None, None, true)?;
    let (dst, src) = (ctx.key(1), ctx.key(2));
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let selected = select_range(&mut r, &src, ctx.arg(3), ctx.arg(4), &opts)?;
        store_scored(ctx, batch, &dst, ht, &selected)
    })
}

/// Every (score, member) of the sorted set at `dk` in order; none when it is absent.
fn entries_of<E: Engine>(r: &mut Reads<'_, '_, E>, dk: &[u8]) -> CmdResult<Scored> {
    if r.typed(dk, RedisType::SortedSet)?.is_none() {
        return Ok(Vec::new());
    }
    entries(r, dk, &ChildRange::default())
}

/// ZRANDMEMBER key [count [WITHSCORES]] (see [`sample`]).
fn zrandmember<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (count, with_scores) = parse_count(ctx.args, Some("withscores"))?;
    let mut r = ctx.reads(ctx.read_time());
    let all = entries_of(&mut r, &ctx.key(1))?;
    let mut rng = request_rng(ctx);
    Ok(match count {
        Count::One => bulk_or_null(sample_one(all, &mut rng).map(|(_, member)| member)),
        Count::Many(n) => {
            let scores = Scores::with_scores(with_scores, ctx.session.protocol);
            reply_entries(sample(all, n, &mut rng), scores)
        }
    })
}

/// One end of a lex range: `-`, `+`, `[member` (inclusive) or `(member` (exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
enum LexBound {
    Min,
    Max,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

/// A ZRANGEBYLEX-style member range.
struct LexRange {
    min: LexBound,
    max: LexBound,
}

impl LexRange {
    fn parse(min: &[u8], max: &[u8]) -> CmdResult<Self> {
        let bound = |arg: &[u8]| match arg.split_first() {
            Some((b'-', [])) => Ok(LexBound::Min),
            Some((b'+', [])) => Ok(LexBound::Max),
            Some((b'[', rest)) => Ok(LexBound::Inclusive(rest.to_vec())),
            Some((b'(', rest)) => Ok(LexBound::Exclusive(rest.to_vec())),
            _ => Err(CmdError::err("min or max not valid string range item")),
        };
        Ok(LexRange {
            min: bound(min)?,
            max: bound(max)?,
        })
    }

    fn contains(&self, member: &[u8]) -> bool {
        let above_min = match &self.min {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(m) => member >= m.as_slice(),
            LexBound::Exclusive(m) => member > m.as_slice(),
        };
        let below_max = match &self.max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(m) => member <= m.as_slice(),
            LexBound::Exclusive(m) => member < m.as_slice(),
        };
        above_min && below_max
    }
}

/// The members of the sorted set at `dk` in `range`, in score order (or reversed), skipping
/// `offset` and keeping up to `count`. Like Redis, this assumes every member has the same
/// score (the lex commands' contract), where score order is member order; it reads the
/// whole set.
fn by_lex<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    range: &LexRange,
    reverse: bool,
    (offset, count): (usize, Option<usize>),
) -> CmdResult<Scored> {
    if r.typed(dk, RedisType::SortedSet)?.is_none() {
        return Ok(Vec::new());
    }
    let order = ChildRange {
        reverse,
        ..ChildRange::default()
    };
    Ok(entries(r, dk, &order)?
        .into_iter()
        .filter(|(_, member)| range.contains(member))
        .skip(offset)
        .take(count.unwrap_or(usize::MAX))
        .collect())
}

fn zlexcount<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let range = LexRange::parse(ctx.arg(2), ctx.arg(3))?;
    let mut r = ctx.reads(ctx.read_time());
    let found = by_lex(&mut r, &ctx.key(1), &range, false, (0, None))?;
    Ok(Frame::Integer(found.len() as i64))
}

fn zremrangebylex<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let range = LexRange::parse(ctx.arg(2), ctx.arg(3))?;
    remove_selected(ctx, |r, dk| by_lex(r, dk, &range, false, (0, None)))
}

/// ZMSCORE: each member's score, null where absent.
fn zmscore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    let exists = r.typed(&dk, RedisType::SortedSet)?.is_some();
    let mut scores = Vec::with_capacity(ctx.args.len() - 2);
    for member in &ctx.args[2..] {
        let score = if exists {
            score_of(&mut r, &dk, member)?
        } else {
            None
        };
        scores.push(score.map_or(Frame::Null, Frame::Double));
    }
    Ok(Frame::Array(scores))
}

/// ZSCAN: [`scan_collection`] over the members and their scores.
fn zscan<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    scan_collection(ctx, |ctx| {
        let mut r = ctx.reads(ctx.read_time());
        let dk = ctx.key(1);
        if r.typed(&dk, RedisType::SortedSet)?.is_none() {
            return Ok(Vec::new());
        }
        Ok(entries(&mut r, &dk, &ChildRange::default())?
            .into_iter()
            .map(|(score, member)| (member, Some(format_double(score).into_bytes())))
            .collect())
    })
}

fn zcount<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let range = ScoreRange::parse(ctx.arg(2), ctx.arg(3))?;
    let mut r = ctx.reads(ctx.read_time());
    let found = by_score(&mut r, &ctx.key(1), &range, false, (0, None))?;
    Ok(Frame::Integer(found.len() as i64))
}

fn zremrangebyscore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let range = ScoreRange::parse(ctx.arg(2), ctx.arg(3))?;
    remove_selected(ctx, |r, dk| by_score(r, dk, &range, false, (0, None)))
}

fn zremrangebyrank<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (start, stop) = (int_arg(ctx.arg(2))?, int_arg(ctx.arg(3))?);
    remove_selected(ctx, |r, dk| ranked(r, dk, start, stop, false))
}

/// Removes the members `select` picks from the sorted set at argument 1; replies with how
/// many (the key goes when none is left).
fn remove_selected<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    select: impl FnOnce(&mut Reads<'_, '_, E>, &[u8]) -> CmdResult<Scored>,
) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let doomed = select(&mut r, &dk)?;
        if doomed.is_empty() {
            return Ok(Frame::Integer(0));
        }
        for (score, member) in &doomed {
            remove_member(batch, &dk, *score, member)?;
        }
        let left = cardinality(&mut r, &dk)? - doomed.len() as i64;
        write_count(batch, &dk, left)?;
        Ok(Frame::Integer(doomed.len() as i64))
    })
}

/// ZRANK/ZREVRANK: the member's position in score order (or reversed), null if absent.
fn rank<E: Engine>(ctx: &Ctx<'_, '_, E>, reverse: bool) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    let member = ctx.arg(2);
    if r.typed(&dk, RedisType::SortedSet)?.is_none() || score_of(&mut r, &dk, member)?.is_none() {
        return Ok(Frame::Null);
    }
    let order = ChildRange {
        reverse,
        ..ChildRange::default()
    };
    let position = entries(&mut r, &dk, &order)?
        .iter()
        .position(|(_, m)| m.as_slice() == member);
    Ok(position.map_or(Frame::Null, |p| Frame::Integer(p as i64)))
}

/// ZPOPMIN/ZPOPMAX: removes and returns the lowest (highest) scored members with scores.
fn pop<E: Engine>(ctx: &mut Ctx<'_, '_, E>, name: &str, highest: bool) -> CmdResult<Frame> {
    if ctx.args.len() > 3 {
        return Err(wrong_arity(name));
    }
    let given = super::pop_count(ctx, false)?;
    // Without a count the member and score come flat in RESP3 too.
    let scores = match given {
        Some(_) => Scores::with_scores(true, ctx.session.protocol),
        None => Scores::Flat,
    };
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if given == Some(0) {
            r.typed(&dk, RedisType::SortedSet)?;
            return Ok(Frame::Array(Vec::new()));
        }
        let popped = pop_in(&mut r, batch, &dk, highest, given.unwrap_or(1))?;
        Ok(reply_entries(popped.unwrap_or_default(), scores))
    })
}

/// Removes up to `count` (at least 1) of the lowest (highest) scored members of the sorted
/// set at `dk`: `None` when there is no sorted set there.
fn pop_in<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    highest: bool,
    count: usize,
) -> CmdResult<Option<Scored>> {
    if r.typed(dk, RedisType::SortedSet)?.is_none() {
        return Ok(None);
    }
    let range = ChildRange {
        reverse: highest,
        limit: Some(count),
        ..ChildRange::default()
    };
    let popped: Vec<_> = entries(r, dk, &range)?.into_iter().take(count).collect();
    for (score, member) in &popped {
        remove_member(batch, dk, *score, member)?;
    }
    let left = cardinality(r, dk)? - popped.len() as i64;
    write_count(batch, dk, left)?;
    Ok(Some(popped))
}

/// ZMPOP: `numkeys key... MIN|MAX [COUNT n]` pops from the first key holding a sorted set;
/// replies with that key and member-score pairs (pairs in RESP2 too), or a null array.
fn zmpop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = MultiPop::parse(ctx.args, 1, ["min", "max"])?;
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        for i in args.keys.clone() {
            let dk = ctx.key(i);
            if let Some(popped) = pop_in(&mut r, batch, &dk, args.second, args.count)? {
                return Ok(Frame::Array(vec![
                    Frame::Bulk(ctx.arg(i).to_vec()),
                    reply_entries(popped, Scores::Paired),
                ]));
            }
        }
        Ok(Frame::NullArray)
    })
}

/// How ZUNION, ZINTER and ZDIFF (and their STORE forms) combine their sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combine {
    Union,
    Inter,
    Diff,
}

/// AGGREGATE: how the weighted scores of a member found in several sources combine.
#[derive(Debug, Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Folds `value` into `total` as Redis does: a NaN sum becomes 0, and a NaN value never
    /// wins a comparison.
    fn fold(self, total: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *total += value;
                if total.is_nan() {
                    *total = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *total {
                    *total = value;
                }
            }
            Aggregate::Max => {
                if value > *total {
                    *total = value;
                }
            }
        }
    }
}

/// Which command of a combining kind runs: it decides where `numkeys` is and which options
/// are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// ZUNION, ZINTER, ZDIFF: `numkeys key... [WEIGHTS] [AGGREGATE] [WITHSCORES]`.
    Read,
    /// ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: `dst numkeys key... [WEIGHTS] [AGGREGATE]`.
    Store,
    /// ZINTERCARD: `numkeys key... [LIMIT limit]`.
    Card,
}

impl Form {
    fn numkeys_at(self) -> usize {
        if self == Form::Store { 2 } else { 1 }
    }
}

/// A combining command's options.
struct CombineOptions {
    weights: Vec<f64>,
    aggregate: Aggregate,
    with_scores: bool,
    /// ZINTERCARD's LIMIT (0: none).
    limit: usize,
}

/// A source's members and scores (a plain set's members score 1), and the same as a map.
struct Source {
    entries: Vec<(Vec<u8>, f64)>,
    scores: HashMap<Vec<u8>, f64>,
}

/// The members of the sorted set or set at `dk` (none when absent); anything else is
/// WRONGTYPE.
fn source<E: Engine>(r: &mut Reads<'_, '_, E>, dk: &[u8]) -> CmdResult<Source> {
    let entries: Vec<(Vec<u8>, f64)> = match r.key_info(dk)?.map(|info| info.kind) {
        None => Vec::new(),
        Some(RedisType::SortedSet) => entries(r, dk, &ChildRange::default())?
            .into_iter()
            .map(|(score, member)| (member, score))
            .collect(),
        Some(RedisType::Set) => super::hashes::members_of(r, dk, RedisType::Set)?
            .unwrap_or_default()
            .into_iter()
            .map(|(name, _)| (name, 1.0))
            .collect(),
        Some(_) => return Err(CmdError::WrongType),
    };
    let scores = entries.iter().cloned().collect();
    Ok(Source { entries, scores })
}

/// Reads the sources and options of a combining command, checking them in Redis 7.0's
/// order (the count, then each source's type, then the options), and combines them.
/// Returns the result in score order and the options.
fn combine<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    op: Combine,
    form: Form,
) -> CmdResult<(Scored, CombineOptions)> {
    let numkeys_at = form.numkeys_at();
    let count = int_arg(ctx.arg(numkeys_at))?;
    if count < 1 {
        return Err(CmdError::err(format!(
            "at least 1 input key is needed for '{}' command",
            ctx.name()
        )));
    }
    let first = numkeys_at + 1;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count > ctx.args.len() - first {
        return Err(CmdError::Syntax);
    }
    let mut sources = Vec::with_capacity(count);
    for i in first..first + count {
        sources.push(source(r, &ctx.key(i))?);
    }
    let opts = combine_options(&ctx.args[first + count..], op, count, form)?;
    let mut result = combined(&sources, &opts.weights, opts.aggregate, op);
    // As a sorted set orders them: -0 and 0 are the same score, so the member decides.
    // (No score here is NaN: the weighting and the sum turn NaN into 0.)
    result.sort_by(|a, b| {
        a.0.partial_cmp(&b.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.1.cmp(&b.1))
    });
    Ok((result, opts))
}

/// WEIGHTS (one per source) and AGGREGATE (neither for ZDIFF or ZINTERCARD), WITHSCORES
/// (only for the read forms) and LIMIT (only for ZINTERCARD).
fn combine_options(
    args: &[Vec<u8>],
    op: Combine,
    count: usize,
    form: Form,
) -> CmdResult<CombineOptions> {
    let mut weights = vec![1.0; count];
    let mut aggregate = Aggregate::Sum;
    let mut with_scores = false;
    let mut limit = 0;
    let weighs = op != Combine::Diff && form != Form::Card;
    let mut i = 0;
    while i < args.len() {
        let left = args.len() - i;
        if weighs && left > count && is(&args[i], "weights") {
            for (w, arg) in weights.iter_mut().zip(&args[i + 1..=i + count]) {
                *w = parse_f64(arg).ok_or_else(|| CmdError::err("weight value is not a float"))?;
            }
            i += count + 1;
        } else if weighs && left >= 2 && is(&args[i], "aggregate") {
            let how = &args[i + 1];
            aggregate = match () {
                _ if is(how, "sum") => Aggregate::Sum,
                _ if is(how, "min") => Aggregate::Min,
                _ if is(how, "max") => Aggregate::Max,
                _ => return Err(CmdError::Syntax),
            };
            i += 2;
        } else if form == Form::Read && is(&args[i], "withscores") {
            with_scores = true;
            i += 1;
        } else if form == Form::Card && left >= 2 && is(&args[i], "limit") {
            limit = super::sets::card_limit(&args[i + 1])?;
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(CombineOptions {
        weights,
        aggregate,
        with_scores,
        limit,
    })
}

/// The combination itself, in Redis's order of work: sources from the smallest (stable,
/// so equal sizes keep their argument order; it decides how float sums round), a member's
/// weighted score folded source by source.
fn combined(sources: &[Source], weights: &[f64], aggregate: Aggregate, op: Combine) -> Scored {
    let weighted = |i: usize, score: f64| {
        let value = weights[i] * score;
        if value.is_nan() { 0.0 } else { value }
    };
    let mut order: Vec<usize> = (0..sources.len()).collect();
    match op {
        Combine::Diff => {
            let first = &sources[0];
            first
                .entries
                .iter()
                .filter(|(member, _)| !sources[1..].iter().any(|s| s.scores.contains_key(member)))
                .map(|(member, score)| (*score, member.clone()))
                .collect()
        }
        Combine::Inter => {
            order.sort_by_key(|&i| sources[i].entries.len());
            let (smallest, rest) = order.split_first().expect("at least one source");
            let mut out = Vec::new();
            'members: for (member, score) in &sources[*smallest].entries {
                let mut total = weighted(*smallest, *score);
                for &j in rest {
                    let Some(value) = sources[j].scores.get(member) else {
                        continue 'members;
                    };
                    aggregate.fold(&mut total, value * weights[j]);
                }
                out.push((total, member.clone()));
            }
            out
        }
        Combine::Union => {
            order.sort_by_key(|&i| sources[i].entries.len());
            let mut totals: HashMap<&[u8], f64> = HashMap::new();
            for &i in &order {
                for (member, score) in &sources[i].entries {
                    let value = weighted(i, *score);
                    totals
                        .entry(member)
                        .and_modify(|total| aggregate.fold(total, value))
                        .or_insert(value);
                }
            }
            totals.into_iter().map(|(m, s)| (s, m.to_vec())).collect()
        }
    }
}

/// ZUNION, ZINTER, ZDIFF: `numkeys key... [options]`; ZINTERCARD: the size of ZINTER's
/// result, counted up to its LIMIT.
fn combine_read<E: Engine>(ctx: &mut Ctx<'_, '_, E>, op: Combine, form: Form) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let (result, opts) = combine(ctx, &mut r, op, form)?;
    if form == Form::Card {
        return Ok(Frame::Integer(super::sets::capped(
            result.len(),
            opts.limit,
        )));
    }
    let scores = Scores::with_scores(opts.with_scores, ctx.session.protocol);
    Ok(reply_entries(result, scores))
}

/// ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: the result replaces whatever is at argument 1 (an
/// empty result deletes it); replies with its size.
fn combine_store<E: Engine>(ctx: &mut Ctx<'_, '_, E>, op: Combine) -> CmdResult<Frame> {
    let dst = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let (result, _) = combine(ctx, &mut r, op, Form::Store)?;
        store_scored(ctx, batch, &dst, ht, &result)
    })
}

/// Replaces whatever is at `dst` with a sorted set of `members` (none deletes it); replies
/// with their number.
pub(super) fn store_scored<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dst: &[u8],
    ht: dockv::HybridTime,
    members: &[(f64, Vec<u8>)],
) -> CmdResult<Frame> {
    replace_root(
        ctx,
        batch,
        dst,
        ht,
        RedisType::SortedSet,
        members.is_empty(),
    )?;
    if !members.is_empty() {
        for (score, member) in members {
            put_member(batch, dst, *score, member)?;
        }
        write_count(batch, dst, members.len() as i64)?;
    }
    ctx.store().forget_list_bounds(dst);
    Ok(Frame::Integer(members.len() as i64))
}

/// The members of the sorted set at `dk` (which must be one) in score order.
pub(super) fn members_in_order<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
) -> CmdResult<Vec<Vec<u8>>> {
    let all = entries(r, dk, &ChildRange::default())?;
    Ok(all.into_iter().map(|(_, member)| member).collect())
}
