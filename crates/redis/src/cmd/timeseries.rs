//! YEDIS time series: a `+` root with int64 timestamps as descending subkeys (newest
//! first) holding string values, each with an optional TTL.

use docdb::reader::ChildRange;
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{KeyEntryValue, SortOrder};
use engine::Engine;

use super::hashes::{ensure_root, leaf_bytes};
use super::strings::ms_until;
use super::{Ctx, READONLY, Spec, WRITE, bulk_array, bulk_or_null, is, ok, spec, wrong_arity};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;
use crate::store::{self, RedisType};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("tsadd", -4, WRITE, 1, tsadd),
        spec("tsget", 3, READONLY, 1, tsget),
        spec("tsrem", -3, WRITE, 1, tsrem),
        spec("tscard", 2, READONLY, 1, tscard),
        spec("tsrangebytime", 4, READONLY, 1, tsrangebytime),
        spec("tsrevrangebytime", -4, READONLY, 1, tsrevrangebytime),
        spec("tslastn", 3, READONLY, 1, tslastn),
    ]
}

fn stamp(ts: i64) -> KeyEntryValue {
    KeyEntryValue::Int64(ts, SortOrder::Descending)
}

fn entry_path(dk: &[u8], ts: i64) -> Vec<u8> {
    store::path(dk, &[stamp(ts)])
}

/// TSADD key ts value [ts value ...] [EXPIRE_IN secs | EXPIRE_AT unix-secs].
fn tsadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut args = &ctx.args[2..];
    let mut expiry: Option<(bool, i64)> = None;
    if args.len() >= 2 {
        let option = &args[args.len() - 2];
        if is(option, "expire_in") || is(option, "expire_at") {
            let secs = int_arg(&args[args.len() - 1])?;
            expiry = Some((is(option, "expire_at"), secs));
            args = &args[..args.len() - 2];
        }
    }
    if args.is_empty() || !args.len().is_multiple_of(2) {
        return Err(wrong_arity("tsadd"));
    }
    let mut entries = Vec::with_capacity(args.len() / 2);
    for pair in args.chunks(2) {
        entries.push((int_arg(&pair[0])?, pair[1].clone()));
    }
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let ttl = match expiry {
            None => None,
            Some((false, secs)) if secs > 0 => Some(Ttl::from_secs(secs)),
            Some((true, at)) if ms_until(ht, at.saturating_mul(1000)) > 0 => {
                Some(Ttl(ms_until(ht, at.saturating_mul(1000))))
            }
            Some(_) => return Err(CmdError::err("invalid expire time in 'tsadd' command")),
        };
        let info = r.typed(&dk, RedisType::TimeSeries)?;
        ensure_root(batch, &dk, &info, RedisType::TimeSeries)?;
        for (ts, value) in &entries {
            batch.set_encoded_path(
                entry_path(&dk, *ts),
                Value::with_ttl(PrimitiveValue::String(value.clone()), ttl),
            )?;
        }
        Ok(ok())
    })
}

fn tsget<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ts = int_arg(ctx.arg(2))?;
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::TimeSeries)?.is_none() {
        return Ok(Frame::Null);
    }
    let record = r.child_record(&entry_path(&dk, ts))?;
    Ok(bulk_or_null(
        record.map(|r| store::primitive_bytes(&r.payload)),
    ))
}

fn tsrem<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut stamps = Vec::new();
    for arg in &ctx.args[2..] {
        stamps.push(int_arg(arg)?);
    }
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::TimeSeries)?.is_none() {
            return Ok(ok());
        }
        for ts in &stamps {
            batch.set_encoded_path(entry_path(&dk, *ts), Value::tombstone())?;
        }
        Ok(ok())
    })
}

/// Entries between `low` and `high` timestamps (inclusive), newest first unless `oldest_first`.
fn range<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    low: i64,
    high: i64,
    oldest_first: bool,
    limit: Option<usize>,
) -> CmdResult<Vec<(i64, Vec<u8>)>> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if low > high || r.typed(&dk, RedisType::TimeSeries)?.is_none() {
        return Ok(Vec::new());
    }
    // Descending keys: the newest (high) timestamp has the smallest encoding.
    let mut upper = stamp(low).encoded();
    upper.push(0xFF);
    let range = ChildRange {
        lower: Some(stamp(high).encoded()),
        upper: Some(upper),
        reverse: oldest_first,
        limit,
    };
    Ok(r.children(&dk, &range)?
        .into_iter()
        .filter_map(|(key, doc)| match key {
            KeyEntryValue::Int64(ts, _) => Some((ts, leaf_bytes(&doc))),
            _ => None,
        })
        .collect())
}

/// A time bound: an integer, `-inf`/`+inf`, or `(n` for exclusive.
fn time_bound(arg: &[u8], is_low: bool) -> CmdResult<i64> {
    if is(arg, "-inf") {
        return Ok(i64::MIN);
    }
    if is(arg, "+inf") || is(arg, "inf") {
        return Ok(i64::MAX);
    }
    match arg.split_first() {
        Some((b'(', rest)) => {
            let n = int_arg(rest)?;
            let adjusted = if is_low {
                n.checked_add(1)
            } else {
                n.checked_sub(1)
            };
            adjusted.ok_or(CmdError::NotInteger)
        }
        _ => int_arg(arg),
    }
}

fn reply(entries: Vec<(i64, Vec<u8>)>) -> Frame {
    bulk_array(
        entries
            .into_iter()
            .flat_map(|(ts, v)| [ts.to_string().into_bytes(), v]),
    )
}

fn tsrangebytime<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let low = time_bound(ctx.arg(2), true)?;
    let high = time_bound(ctx.arg(3), false)?;
    Ok(reply(range(ctx, low, high, true, None)?))
}

fn tsrevrangebytime<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let low = time_bound(ctx.arg(2), true)?;
    let high = time_bound(ctx.arg(3), false)?;
    let limit = match &ctx.args[4..] {
        [] => None,
        [word, n] if is(word, "limit") => {
            let n = int_arg(n)?;
            if n < 0 {
                return Err(CmdError::Syntax);
            }
            Some(n as usize)
        }
        _ => return Err(CmdError::Syntax),
    };
    Ok(reply(range(ctx, low, high, false, limit)?))
}

fn tscard<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(
        range(ctx, i64::MIN, i64::MAX, false, None)?.len() as i64,
    ))
}

/// The newest `n` entries, oldest first (YEDIS's TSLASTN).
fn tslastn<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let n = int_arg(ctx.arg(2))?;
    if n < 0 {
        return Err(CmdError::Syntax);
    }
    let mut entries = range(ctx, i64::MIN, i64::MAX, false, Some(n as usize))?;
    entries.reverse();
    Ok(reply(entries))
}
