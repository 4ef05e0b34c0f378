//! Hashes: a `{` root with fields as string subkeys. Also the helpers sets share: both are
//! collections of string-keyed members.

use std::collections::HashSet;

use docdb::reader::ChildRange;
use docdb::{DocWriteBatch, SubDocument};
use dockv::value::{PrimitiveValue, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::Engine;

use super::keys::{ScanArgs, scan_reply};
use super::sample::{Count, parse_count, request_rng, sample, sample_one};
use super::{Ctx, READONLY, Spec, WRITE, bulk_array, bulk_or_null, ok, spec, wrong_arity};
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Protocol};
use crate::long_double::{Invalid, LongDouble};
use crate::number::{incr_by_float, int_arg, parse_i64};
use crate::store::{self, KeyInfo, Reads, RedisType, primitive_bytes};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("hset", -4, WRITE, 1, hset),
        spec("hmset", -4, WRITE, 1, hmset),
        spec("hsetnx", 4, WRITE, 1, hsetnx),
        spec("hget", 3, READONLY, 1, hget),
        spec("hmget", -3, READONLY, 1, hmget),
        spec("hgetall", 2, READONLY, 1, hgetall),
        spec("hdel", -3, WRITE, 1, hdel),
        spec("hexists", 3, READONLY, 1, hexists),
        spec("hlen", 2, READONLY, 1, hlen),
        spec("hkeys", 2, READONLY, 1, hkeys),
        spec("hvals", 2, READONLY, 1, hvals),
        spec("hstrlen", 3, READONLY, 1, hstrlen),
        spec("hincrby", 4, WRITE, 1, hincrby),
        spec("hincrbyfloat", 4, WRITE, 1, hincrbyfloat),
        spec("hscan", -3, READONLY, 1, hscan),
        spec("hrandfield", -2, READONLY, 1, hrandfield),
    ]
}

/// The path of member `name` of the collection at `dk`.
pub(super) fn member_path(dk: &[u8], name: &[u8]) -> Vec<u8> {
    store::path(dk, &[KeyEntryValue::string(name)])
}

/// Writes the root marker of a new collection (`info` is what the key holds now).
pub(super) fn ensure_root<E: Engine>(
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    info: &Option<KeyInfo>,
    kind: RedisType,
) -> CmdResult<()> {
    if info.is_none()
        && let Some(marker) = kind.marker()
    {
        batch.set_encoded_path(dk, Value::new(marker))?;
    }
    Ok(())
}

/// Makes `dk` ready for a STORE command's result of `kind`, which replaces whatever is
/// there: a tombstone, then the new root when the result has members. An empty result over
/// a missing key writes nothing, so a WATCH on that key holds, as in Redis.
pub(super) fn replace_root<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    ht: HybridTime,
    kind: RedisType,
    empty: bool,
) -> CmdResult<()> {
    if !empty || ctx.key_info(dk, ht)?.is_some() {
        batch.set_encoded_path(dk, Value::tombstone())?;
    }
    if !empty {
        ensure_root(batch, dk, &None, kind)?;
    }
    Ok(())
}

/// Whether member `name` is live in the existing collection at `dk`.
pub(super) fn has_member<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    name: &[u8],
) -> CmdResult<bool> {
    Ok(r.child_record(&member_path(dk, name))?.is_some())
}

/// Tombstones the live `names` of the collection at `dk`, and the root too when nothing
/// else is left (Redis has no empty collections). Returns how many were removed.
pub(super) fn remove_members<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    names: &[Vec<u8>],
) -> CmdResult<i64> {
    let mut removed = HashSet::new();
    for name in names {
        if !removed.contains(name) && has_member(r, dk, name)? {
            batch.set_encoded_path(member_path(dk, name), Value::tombstone())?;
            removed.insert(name.clone());
        }
    }
    if !removed.is_empty() {
        let range = ChildRange {
            limit: Some(removed.len() + 1),
            ..ChildRange::default()
        };
        let left = r.children(dk, &range)?;
        let emptied = left.iter().all(|(key, _)| match key {
            KeyEntryValue::String(name, _) => removed.contains(name),
            _ => false,
        });
        if emptied {
            batch.set_encoded_path(dk, Value::tombstone())?;
        }
    }
    Ok(removed.len() as i64)
}

/// A collection's members: names and values, in key order.
pub(super) type Members = Vec<(Vec<u8>, SubDocument)>;

/// The live members of a collection of `kind` at argument 1: `(name, value)` in key order.
pub(super) fn members<E: Engine>(ctx: &Ctx<'_, '_, E>, kind: RedisType) -> CmdResult<Members> {
    let mut r = ctx.reads(ctx.read_time());
    Ok(members_of(&mut r, &ctx.key(1), kind)?.unwrap_or_default())
}

/// The members (names and values) of the collection of `kind` at `dk`, `None` when the key
/// is absent, WRONGTYPE when it holds another type.
pub(super) fn members_of<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    kind: RedisType,
) -> CmdResult<Option<Members>> {
    if r.typed(dk, kind)?.is_none() {
        return Ok(None);
    }
    let Some(SubDocument::Object { children, .. }) = r.document(dk)? else {
        return Ok(Some(Vec::new()));
    };
    Ok(Some(
        children
            .into_values()
            .filter_map(|(key, child)| match key {
                KeyEntryValue::String(name, _) => Some((name, child)),
                _ => None,
            })
            .collect(),
    ))
}

/// The bytes of a leaf value.
pub(super) fn leaf_bytes(doc: &SubDocument) -> Vec<u8> {
    match doc {
        SubDocument::Primitive(value) => primitive_bytes(value),
        SubDocument::Object { .. } => Vec::new(),
    }
}

/// HSCAN/SSCAN: [`scan_collection`] over the hash's fields and values, or the set's
/// members.
pub(super) fn scan_members<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    kind: RedisType,
    with_values: bool,
) -> CmdResult<Frame> {
    scan_collection(ctx, |ctx| {
        Ok(members(ctx, kind)?
            .into_iter()
            .map(|(name, value)| (name, with_values.then(|| leaf_bytes(&value))))
            .collect())
    })
}

/// HSCAN, SSCAN, ZSCAN: the whole collection in one reply (cursor 0), as Redis does for
/// small collections; MATCH filters names, COUNT is a hint. `read` gives the elements:
/// names, each with its value when the reply pairs them.
pub(super) fn scan_collection<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    read: impl FnOnce(&Ctx<'_, '_, E>) -> CmdResult<Vec<(Vec<u8>, Option<Vec<u8>>)>>,
) -> CmdResult<Frame> {
    int_arg(ctx.arg(2)).map_err(|_| CmdError::err("invalid cursor"))?;
    let opts = ScanArgs::parse(&ctx.args[3..])?;
    let mut items = Vec::new();
    for (name, value) in read(ctx)? {
        if opts.matches(&name) {
            items.push(name);
            items.extend(value);
        }
    }
    Ok(scan_reply(0, items))
}

fn hset_generic<E: Engine>(ctx: &mut Ctx<'_, '_, E>, name: &str) -> CmdResult<i64> {
    if !ctx.args.len().is_multiple_of(2) {
        return Err(wrong_arity(name));
    }
    let dk = ctx.key(1);
    let store = ctx.store();
    let pairs = &ctx.args[2..];
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::Hash)?;
        ensure_root(batch, &dk, &info, RedisType::Hash)?;
        let mut added = HashSet::new();
        for pair in pairs.chunks(2) {
            let (field, value) = (&pair[0], &pair[1]);
            let new = info.is_none() || !has_member(&mut r, &dk, field)?;
            if new {
                added.insert(field.clone());
            }
            batch.set_encoded_path(
                member_path(&dk, field),
                Value::new(PrimitiveValue::String(value.clone())),
            )?;
        }
        Ok(added.len() as i64)
    })
}

fn hset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    hset_generic(ctx, "hset").map(Frame::Integer)
}

fn hmset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    hset_generic(ctx, "hmset").map(|_| ok())
}

fn hsetnx<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let (field, value) = (ctx.arg(2), ctx.arg(3));
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::Hash)?;
        if info.is_some() && has_member(&mut r, &dk, field)? {
            return Ok(Frame::Integer(0));
        }
        ensure_root(batch, &dk, &info, RedisType::Hash)?;
        let value = Value::new(PrimitiveValue::String(value.to_vec()));
        batch.set_encoded_path(member_path(&dk, field), value)?;
        Ok(Frame::Integer(1))
    })
}

/// The value of field `field` of the hash at argument 1, as of the read time.
fn field<E: Engine>(ctx: &Ctx<'_, '_, E>, field: &[u8]) -> CmdResult<Option<Vec<u8>>> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::Hash)?.is_none() {
        return Ok(None);
    }
    Ok(r.child_record(&member_path(&dk, field))?
        .map(|rec| primitive_bytes(&rec.payload)))
}

fn hget<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(bulk_or_null(field(ctx, ctx.arg(2))?))
}

fn hmget<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    let exists = r.typed(&dk, RedisType::Hash)?.is_some();
    let mut out = Vec::new();
    for name in &ctx.args[2..] {
        let value = if exists {
            r.child_record(&member_path(&dk, name))?
                .map(|rec| primitive_bytes(&rec.payload))
        } else {
            None
        };
        out.push(bulk_or_null(value));
    }
    Ok(Frame::Array(out))
}

fn hgetall<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let fields = members(ctx, RedisType::Hash)?;
    Ok(Frame::Map(
        fields
            .into_iter()
            .map(|(name, value)| (Frame::Bulk(name), Frame::Bulk(leaf_bytes(&value))))
            .collect(),
    ))
}

fn hdel<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let store = ctx.store();
    let names = &ctx.args[2..];
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::Hash)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        remove_members(&mut r, batch, &dk, names).map(Frame::Integer)
    })
}

fn hexists<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(i64::from(field(ctx, ctx.arg(2))?.is_some())))
}

fn hlen<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(members(ctx, RedisType::Hash)?.len() as i64))
}

fn hkeys<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(bulk_array(
        members(ctx, RedisType::Hash)?.into_iter().map(|(n, _)| n),
    ))
}

fn hvals<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(bulk_array(
        members(ctx, RedisType::Hash)?
            .into_iter()
            .map(|(_, v)| leaf_bytes(&v)),
    ))
}

fn hstrlen<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(
        field(ctx, ctx.arg(2))?.map_or(0, |v| v.len() as i64),
    ))
}

fn hincrby<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let delta = int_arg(ctx.arg(3))?;
    let dk = ctx.key(1);
    let name = ctx.arg(2).to_vec();
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::Hash)?;
        let path = member_path(&dk, &name);
        let current = match field_at(&mut r, &info, &path)? {
            Some(bytes) => {
                parse_i64(&bytes).ok_or_else(|| CmdError::err("hash value is not an integer"))?
            }
            None => 0,
        };
        let next = current.checked_add(delta).ok_or(CmdError::Overflow)?;
        ensure_root(batch, &dk, &info, RedisType::Hash)?;
        batch.set_encoded_path(
            path,
            Value::new(PrimitiveValue::String(next.to_string().into_bytes())),
        )?;
        Ok(Frame::Integer(next))
    })
}

/// The value of the hash field at `path`, if the hash (`info`) and the field exist.
fn field_at<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    info: &Option<KeyInfo>,
    path: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    if info.is_none() {
        return Ok(None);
    }
    Ok(r.child_record(path)?
        .map(|rec| primitive_bytes(&rec.payload)))
}

/// HINCRBYFLOAT: the increment is checked first, then the field (extended precision sums,
/// printed as INCRBYFLOAT prints them).
fn hincrbyfloat<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let increment = ctx.arg(3).to_vec();
    match LongDouble::parse(&increment) {
        Err(Invalid::NotANumber) => return Err(CmdError::NotFloat),
        Err(Invalid::Infinite) => return Err(CmdError::err("value is NaN or Infinity")),
        Ok(_) => {}
    }
    let dk = ctx.key(1);
    let name = ctx.arg(2).to_vec();
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::Hash)?;
        let path = member_path(&dk, &name);
        let current = field_at(&mut r, &info, &path)?.unwrap_or_else(|| b"0".to_vec());
        if LongDouble::parse(&current) == Err(Invalid::NotANumber) {
            return Err(CmdError::err("hash value is not a float"));
        }
        let next = incr_by_float(&current, &increment)?.into_bytes();
        ensure_root(batch, &dk, &info, RedisType::Hash)?;
        batch.set_encoded_path(path, Value::new(PrimitiveValue::String(next.clone())))?;
        Ok(Frame::Bulk(next))
    })
}

fn hscan<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    scan_members(ctx, RedisType::Hash, true)
}

/// HRANDFIELD key [count [WITHVALUES]] (see [`sample`]): WITHVALUES pairs each field with
/// its value, flat in RESP2 and as two-element arrays in RESP3, as Redis 7 replies.
fn hrandfield<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (count, with_values) = parse_count(ctx.args, Some("withvalues"))?;
    let fields = members(ctx, RedisType::Hash)?;
    let mut rng = request_rng(ctx);
    let Count::Many(n) = count else {
        return Ok(bulk_or_null(
            sample_one(fields, &mut rng).map(|(name, _)| name),
        ));
    };
    if !with_values {
        let names = fields.into_iter().map(|(name, _)| name).collect();
        return Ok(bulk_array(sample(names, n, &mut rng)));
    }
    let pairs = fields
        .into_iter()
        .map(|(name, value)| (name, leaf_bytes(&value)))
        .collect();
    let picked = sample(pairs, n, &mut rng).into_iter();
    Ok(Frame::Array(match ctx.session.protocol {
        Protocol::Resp2 => picked
            .flat_map(|(name, value)| [Frame::Bulk(name), Frame::Bulk(value)])
            .collect(),
        Protocol::Resp3 => picked
            .map(|(name, value)| bulk_array([name, value]))
            .collect(),
    }))
}
