//! Sets: a `(` root with members as string subkeys holding null.

use std::collections::HashSet;

use docdb::reader::ChildRange;
use dockv::KeyEntryValue;
use dockv::value::{PrimitiveValue, Value};
use engine::{Engine, Rng};

use super::hashes::{
    ensure_root, has_member, member_path, members, remove_members, replace_root, scan_members,
};
use super::sample::{Count, parse_count, request_rng, sample, sample_one};
use super::{Ctx, READONLY, Spec, WRITE, bulk_array, bulk_or_null, bulk_set, is, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;
use crate::store::{Reads, RedisType};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("sadd", -3, WRITE, 1, sadd),
        spec("srem", -3, WRITE, 1, srem),
        spec("smembers", 2, READONLY, 1, smembers),
        spec("sismember", 3, READONLY, 1, sismember),
        spec("smismember", -3, READONLY, 1, smismember),
        spec("sinter", -2, READONLY, 1, |c| {
            set_algebra(c, Algebra::Inter)
        }),
        spec("sunion", -2, READONLY, 1, |c| {
            set_algebra(c, Algebra::Union)
        }),
        spec("sdiff", -2, READONLY, 1, |c| set_algebra(c, Algebra::Diff)),
        spec("sinterstore", -3, WRITE, 1, |c| {
            set_algebra_store(c, Algebra::Inter)
        }),
        spec("sunionstore", -3, WRITE, 1, |c| {
            set_algebra_store(c, Algebra::Union)
        }),
        spec("sdiffstore", -3, WRITE, 1, |c| {
            set_algebra_store(c, Algebra::Diff)
        }),
        spec("scard", 2, READONLY, 1, scard),
        spec("spop", -2, WRITE, 1, spop),
        spec("smove", 4, WRITE, 1, smove),
        spec("srandmember", -2, READONLY, 1, srandmember),
        spec("sscan", -3, READONLY, 1, sscan),
        spec("sintercard", -3, READONLY, 0, sintercard),
    ]
}

fn sadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let store = ctx.store();
    let names = &ctx.args[2..];
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::Set)?;
        ensure_root(batch, &dk, &info, RedisType::Set)?;
        let mut added = HashSet::new();
        for name in names {
            if added.contains(name) {
                continue;
            }
            if info.is_none() || !has_member(&mut r, &dk, name)? {
                batch.set_encoded_path(member_path(&dk, name), Value::new(PrimitiveValue::Null))?;
                added.insert(name.clone());
            }
        }
        Ok(Frame::Integer(added.len() as i64))
    })
}

fn srem<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let store = ctx.store();
    let names = &ctx.args[2..];
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Set)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        remove_members(&mut r, batch, &dk, names).map(Frame::Integer)
    })
}

fn smembers<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(bulk_set(
        members(ctx, RedisType::Set)?.into_iter().map(|(n, _)| n),
    ))
}

fn sismember<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    let found = r.typed(&dk, RedisType::Set)?.is_some() && has_member(&mut r, &dk, ctx.arg(2))?;
    Ok(Frame::Integer(i64::from(found)))
}

fn smismember<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    let exists = r.typed(&dk, RedisType::Set)?.is_some();
    let mut found = Vec::with_capacity(ctx.args.len() - 2);
    for member in &ctx.args[2..] {
        let here = exists && has_member(&mut r, &dk, member)?;
        found.push(Frame::Integer(i64::from(here)));
    }
    Ok(Frame::Array(found))
}

fn scard<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(members(ctx, RedisType::Set)?.len() as i64))
}

/// SPOP: members taken from a random point of the member order (wrapping around), so that
/// repeated pops spread over the set instead of walking past earlier pops' tombstones.
fn spop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = super::pop_count(ctx, false)?;
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Set)?.is_none() {
            return Ok(match count {
                Some(_) => Frame::Set(Vec::new()),
                None => Frame::Null,
            });
        }
        let wanted = count.unwrap_or(1);
        let mut start = vec![dockv::KeyEntryType::String.as_u8()];
        // Pops of one pipeline share a hybrid time: the call count tells them apart.
        let call = SPOP_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        start.extend_from_slice(&random_u16(ht.0 ^ call.rotate_left(40)).to_be_bytes());
        let mut picked = pick(&mut r, &dk, Some(start.clone()), None, wanted)?;
        if picked.len() < wanted {
            let more = pick(&mut r, &dk, None, Some(start), wanted - picked.len())?;
            picked.extend(more);
        }
        remove_members(&mut r, batch, &dk, &picked)?;
        Ok(match count {
            Some(_) => bulk_set(picked),
            None => picked.pop().map_or(Frame::Null, Frame::Bulk),
        })
    })
}

/// SMOVE: a missing source moves nothing (whatever the destination holds); otherwise both
/// keys must be sets.
fn smove<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (src, dst) = (ctx.key(1), ctx.key(2));
    let member = ctx.arg(3).to_vec();
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&src, RedisType::Set)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let dst_info = r.typed(&dst, RedisType::Set)?;
        if !has_member(&mut r, &src, &member)? {
            return Ok(Frame::Integer(0));
        }
        if src != dst {
            remove_members(&mut r, batch, &src, std::slice::from_ref(&member))?;
            // As in Redis, a member dst already has leaves dst untouched (a WATCH holds).
            if dst_info.is_none() || !has_member(&mut r, &dst, &member)? {
                ensure_root(batch, &dst, &dst_info, RedisType::Set)?;
                let null = Value::new(PrimitiveValue::Null);
                batch.set_encoded_path(member_path(&dst, &member), null)?;
            }
        }
        Ok(Frame::Integer(1))
    })
}

/// SRANDMEMBER: one random member; with a count, that many distinct members (all when the
/// set is smaller), or with a negative count that many picks that may repeat.
fn srandmember<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (count, _) = parse_count(ctx.args, None)?;
    let all: Vec<Vec<u8>> = members(ctx, RedisType::Set)?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let mut rng = request_rng(ctx);
    Ok(match count {
        Count::One => bulk_or_null(sample_one(all, &mut rng)),
        Count::Many(n) => bulk_array(sample(all, n, &mut rng)),
    })
}

fn pick<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    limit: usize,
) -> CmdResult<Vec<Vec<u8>>> {
    let range = ChildRange {
        lower,
        upper,
        reverse: false,
        limit: Some(limit),
    };
    Ok(r.children(dk, &range)?
        .into_iter()
        .filter_map(|(key, _)| match key {
            KeyEntryValue::String(name, _) => Some(name),
            _ => None,
        })
        .collect())
}

/// SPOP calls so far, mixed into each one's random start.
static SPOP_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A cheap pseudo-random 16-bit value from a hybrid time.
fn random_u16(seed: u64) -> u16 {
    Rng::new(seed).next_u64() as u16
}

fn sscan<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    scan_members(ctx, RedisType::Set, false)
}

/// How SINTER, SUNION and SDIFF combine their sets.
#[derive(Clone, Copy)]
enum Algebra {
    Inter,
    Union,
    Diff,
}

/// The combination of the sets at `keys`, read at `ht`: every key's type is checked (as
/// Redis does), and an absent key counts as an empty set.
fn combine<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    keys: &[Vec<u8>],
    op: Algebra,
    ht: dockv::HybridTime,
) -> CmdResult<Vec<Vec<u8>>> {
    let mut r = ctx.reads(ht);
    let mut sets = Vec::with_capacity(keys.len());
    for dk in keys {
        let members = super::hashes::members_of(&mut r, dk, RedisType::Set)?;
        sets.push(members.into_iter().flatten().map(|(n, _)| n).collect());
    }
    let mut sets = sets.into_iter();
    let first: HashSet<Vec<u8>> = sets.next().unwrap_or_default();
    let result = sets.fold(first, |acc, set| match op {
        Algebra::Inter => acc.intersection(&set).cloned().collect(),
        Algebra::Union => acc.union(&set).cloned().collect(),
        Algebra::Diff => acc.difference(&set).cloned().collect(),
    });
    let mut result: Vec<Vec<u8>> = result.into_iter().collect();
    result.sort();
    Ok(result)
}

fn set_algebra<E: Engine>(ctx: &mut Ctx<'_, '_, E>, op: Algebra) -> CmdResult<Frame> {
    let keys: Vec<Vec<u8>> = (1..ctx.args.len()).map(|i| ctx.key(i)).collect();
    Ok(bulk_set(combine(ctx, &keys, op, ctx.read_time())?))
}

/// SINTERSTORE and friends: the result replaces the set at argument 1 (an empty result
/// deletes it); replies with its size.
fn set_algebra_store<E: Engine>(ctx: &mut Ctx<'_, '_, E>, op: Algebra) -> CmdResult<Frame> {
    let dst = ctx.key(1);
    let keys: Vec<Vec<u8>> = (2..ctx.args.len()).map(|i| ctx.key(i)).collect();
    ctx.store().write(|batch, ht| {
        let result = combine(ctx, &keys, op, ht)?;
        replace_root(ctx, batch, &dst, ht, RedisType::Set, result.is_empty())?;
        for name in &result {
            batch.set_encoded_path(member_path(&dst, name), Value::new(PrimitiveValue::Null))?;
        }
        ctx.store().forget_list_bounds(&dst);
        Ok(Frame::Integer(result.len() as i64))
    })
}

/// SINTERCARD numkeys key... [LIMIT limit]: the size of SINTER's result, counted up to
/// `limit` (0: no limit). The arguments are checked before any key, as Redis does.
fn sintercard<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let numkeys = int_arg(ctx.arg(1))
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| CmdError::err("numkeys should be greater than 0"))?;
    if numkeys > ctx.args.len() - 2 {
        return Err(CmdError::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    let mut limit = 0;
    let options = &ctx.args[2 + numkeys..];
    let mut i = 0;
    while i < options.len() {
        if !is(&options[i], "limit") || i + 1 == options.len() {
            return Err(CmdError::Syntax);
        }
        limit = card_limit(&options[i + 1])?;
        i += 2;
    }
    let keys: Vec<Vec<u8>> = (2..2 + numkeys).map(|i| ctx.key(i)).collect();
    let result = combine(ctx, &keys, Algebra::Inter, ctx.read_time())?;
    Ok(Frame::Integer(capped(result.len(), limit)))
}

/// SINTERCARD's and ZINTERCARD's LIMIT argument.
pub(super) fn card_limit(arg: &[u8]) -> CmdResult<usize> {
    int_arg(arg)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CmdError::err("LIMIT can't be negative"))
}

/// A result's size as the `*CARD` commands report it: at most `limit` (0: no limit).
pub(super) fn capped(len: usize, limit: usize) -> i64 {
    let len = if limit == 0 { len } else { len.min(limit) };
    len as i64
}
