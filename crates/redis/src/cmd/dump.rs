//! DUMP and RESTORE: a key's value as Redis's serialized payload (see `crate::rdb`).

use std::collections::HashSet;

use docdb::DocWriteBatch;
use docdb::reader::ChildRange;
use dockv::HybridTime;
use dockv::value::{PrimitiveValue, Ttl, Value};
use engine::Engine;

use super::hashes::{leaf_bytes, member_path, members_of, replace_root};
use super::lists::{all_elements, store_list};
use super::strings::{ms_until, string_value};
use super::zsets::{entries, store_scored};
use super::{Ctx, READONLY, Spec, WRITE, is, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;
use crate::rdb::{self, RdbConsumer, RdbGroup, RdbPending, RdbStream, RdbValue};
use crate::store::{KeyInfo, Reads, RedisType};
use crate::stream::{Consumer, Group, Meta, Pending, StreamId, StreamReads, StreamWrites};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("dump", 2, READONLY, 1, dump),
        spec("restore", -4, WRITE, 1, restore),
    ]
}

/// DUMP key: the payload Redis 7.0 would give for the value, or nil without the key.
fn dump<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let mut r = ctx.reads(ctx.read_time());
    let Some(info) = r.key_info(&dk)? else {
        return Ok(Frame::Null);
    };
    let value = read_value(ctx, &mut r, &dk, &info)?;
    Ok(Frame::Bulk(rdb::encode_payload(&value)))
}

/// The value of the live key `info` at `dk`.
pub(super) fn read_value<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    info: &KeyInfo,
) -> CmdResult<RdbValue> {
    let members = |r: &mut Reads<'_, '_, E>, kind| -> CmdResult<_> {
        Ok(members_of(r, dk, kind)?.unwrap_or_default())
    };
    Ok(match info.kind {
        RedisType::String => RdbValue::String(info.string_value()),
        RedisType::List => RdbValue::List(all_elements(ctx, r, dk)?),
        RedisType::Set => RdbValue::Set(
            members(r, RedisType::Set)?
                .into_iter()
                .map(|(n, _)| n)
                .collect(),
        ),
        RedisType::Hash => RdbValue::Hash(
            members(r, RedisType::Hash)?
                .into_iter()
                .map(|(field, value)| (field, leaf_bytes(&value)))
                .collect(),
        ),
        RedisType::SortedSet => RdbValue::SortedSet(
            entries(r, dk, &ChildRange::default())?
                .into_iter()
                .map(|(score, member)| (member, score))
                .collect(),
        ),
        RedisType::TimeSeries => {
            return Err(CmdError::err(
                "DUMP does not support time series (tskey) values",
            ));
        }
        RedisType::Stream => RdbValue::Stream(read_stream(r, dk)?),
    })
}

/// The stream at `dk`: its entries, state and groups.
fn read_stream<E: Engine>(r: &mut Reads<'_, '_, E>, dk: &[u8]) -> CmdResult<RdbStream> {
    let mut s = StreamReads::new(r, dk);
    let meta = s.meta()?;
    let entries: Vec<_> = s
        .entries(StreamId::MIN, StreamId::MAX, false, None)?
        .into_iter()
        .map(|(id, flat)| (id, pairs_of(flat)))
        .collect();
    let mut groups = Vec::new();
    for (name, group) in s.groups()? {
        let pending = s.pending(&name, StreamId::MIN, StreamId::MAX, false, None)?;
        let consumers = s.consumers(&name)?;
        groups.push(rdb_group(name, group, pending, consumers));
    }
    Ok(RdbStream {
        length: entries.len() as u64,
        last_id: meta.last_id,
        // What Redis keeps: the first entry's id, 0-0 once there is none.
        first_id: entries.first().map_or(StreamId::MIN, |(id, _)| *id),
        max_deleted_id: meta.max_deleted_id,
        entries_added: meta.entries_added,
        entries,
        groups,
    })
}

/// A flat `field value ...` list as pairs.
fn pairs_of(flat: Vec<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut items = flat.into_iter();
    let mut pairs = Vec::new();
    while let (Some(field), Some(value)) = (items.next(), items.next()) {
        pairs.push((field, value));
    }
    pairs
}

/// A group as a payload carries it. A consumer that holds a pending entry is always
/// among the group's consumers, even if its own record is missing.
fn rdb_group(
    name: Vec<u8>,
    group: Group,
    pending: Vec<(StreamId, Pending)>,
    consumers: Vec<(Vec<u8>, Consumer)>,
) -> RdbGroup {
    let mut consumers: Vec<RdbConsumer> = consumers
        .into_iter()
        .map(|(name, c)| RdbConsumer {
            name,
            seen_time: c.seen_time,
        })
        .collect();
    let mut known: HashSet<Vec<u8>> = consumers.iter().map(|c| c.name.clone()).collect();
    let pending: Vec<RdbPending> = pending
        .into_iter()
        .map(|(id, p)| RdbPending {
            id,
            delivery_time: p.delivery_time,
            delivery_count: p.delivery_count,
            consumer: p.consumer,
        })
        .collect();
    for p in &pending {
        if known.insert(p.consumer.clone()) {
            consumers.push(RdbConsumer {
                name: p.consumer.clone(),
                seen_time: p.delivery_time,
            });
        }
    }
    RdbGroup {
        name,
        last_id: group.last_delivered,
        entries_read: group.entries_read,
        pending,
        consumers,
    }
}

/// RESTORE's options after the payload.
#[derive(Default)]
struct Options {
    replace: bool,
    absolute_ttl: bool,
}

/// `REPLACE`, `ABSTTL`, and `IDLETIME seconds` or `FREQ frequency` (one of the two, checked
/// and ignored: docdb keeps no access times or counts), as Redis 7.0 parses them.
fn parse_options(args: &[Vec<u8>]) -> CmdResult<Options> {
    let mut opts = Options::default();
    let (mut idle, mut freq) = (false, false);
    let mut i = 0;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        if is(&args[i], "replace") {
            opts.replace = true;
        } else if is(&args[i], "absttl") {
            opts.absolute_ttl = true;
        } else if is(&args[i], "idletime") && has_value && !freq {
            if int_arg(&args[i + 1])? < 0 {
                return Err(CmdError::err("Invalid IDLETIME value, must be >= 0"));
            }
            idle = true;
            i += 1;
        } else if is(&args[i], "freq") && has_value && !idle {
            if !(0..=255).contains(&int_arg(&args[i + 1])?) {
                return Err(CmdError::err("Invalid FREQ value, must be >= 0 and <= 255"));
            }
            freq = true;
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    Ok(opts)
}

/// The TTL argument (0: none) and the decoded payload, or the first error among them.
fn parse_value<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<(i64, RdbValue)> {
    let ttl = int_arg(ctx.arg(2))?;
    if ttl < 0 {
        return Err(CmdError::err("Invalid TTL value, must be >= 0"));
    }
    let value = rdb::decode_payload(ctx.arg(3)).map_err(CmdError::err)?;
    Ok((ttl, value))
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]: writes the value in
/// one batch, with its TTL. A key that exists is refused (BUSYKEY) unless REPLACE, before
/// the TTL and the payload are looked at; an expiry already past writes nothing, and with
/// REPLACE deletes the key, as Redis does.
pub(super) fn restore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let opts = parse_options(&ctx.args[4..])?;
    // Decoded before taking the writer lock; its errors wait for the BUSYKEY check.
    let parsed = parse_value(ctx);
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let exists = ctx.key_info(&dk, ht)?.is_some();
        if exists && !opts.replace {
            return Err(CmdError::Err(
                "BUSYKEY Target key name already exists.".into(),
            ));
        }
        let (ttl, value) = parsed?;
        match expiry(ttl, opts.absolute_ttl, ht) {
            Some(ttl) => write_value(ctx, batch, &dk, ht, value, ttl)?,
            None if exists => {
                batch.set_encoded_path(dk.clone(), Value::tombstone())?;
                ctx.store().forget_list_bounds(&dk);
            }
            None => {}
        }
        Ok(ok())
    })
}

/// The TTL to write (`Some(None)`: none), or `None` when the expiry has already passed.
/// A relative TTL is added to the time as Redis adds it, wrapping: past `i64::MAX` it
/// lands in the past.
fn expiry(ttl: i64, absolute: bool, ht: HybridTime) -> Option<Option<Ttl>> {
    if ttl == 0 {
        return Some(None);
    }
    let now_ms = i64::try_from(ht.physical_micros() / 1000).unwrap_or(i64::MAX);
    let at_ms = if absolute {
        ttl
    } else {
        ttl.wrapping_add(now_ms)
    };
    let left = ms_until(ht, at_ms);
    (left > 0).then_some(Some(Ttl(left)))
}

/// Writes `value` at `dk` over whatever is there, with `ttl`.
fn write_value<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    ht: HybridTime,
    value: RdbValue,
    ttl: Option<Ttl>,
) -> CmdResult<()> {
    let store = ctx.store();
    if !matches!(value, RdbValue::List(_)) {
        store.forget_list_bounds(dk);
    }
    match value {
        RdbValue::String(bytes) => {
            // A root value replaces any collection there, and carries the TTL itself.
            batch.set_encoded_path(dk, string_value(bytes, ttl))?;
            return Ok(());
        }
        RdbValue::List(items) => store_list(ctx, batch, dk, ht, &items)?,
        RdbValue::SortedSet(entries) => {
            let scored: Vec<(f64, Vec<u8>)> = entries.into_iter().map(|(m, s)| (s, m)).collect();
            store_scored(ctx, batch, dk, ht, &scored)?;
        }
        RdbValue::Set(members) => {
            let pairs = members.into_iter().map(|m| (m, PrimitiveValue::Null));
            write_members(ctx, batch, dk, ht, RedisType::Set, pairs)?;
        }
        RdbValue::Hash(pairs) => {
            let pairs = pairs
                .into_iter()
                .map(|(f, v)| (f, PrimitiveValue::String(v)));
            write_members(ctx, batch, dk, ht, RedisType::Hash, pairs)?;
        }
        RdbValue::Stream(stream) => write_stream(ctx, batch, dk, ht, stream)?,
    }
    if ttl.is_some() {
        batch.expire_encoded(dk.to_vec(), ttl)?;
    }
    Ok(())
}

/// A new set or hash at `dk`: its root, then each member with its value.
fn write_members<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    ht: HybridTime,
    kind: RedisType,
    members: impl Iterator<Item = (Vec<u8>, PrimitiveValue)>,
) -> CmdResult<()> {
    replace_root(ctx, batch, dk, ht, kind, false)?;
    for (name, value) in members {
        batch.set_encoded_path(member_path(dk, &name), Value::new(value))?;
    }
    Ok(())
}

/// A new stream at `dk`: its root, state, entries, then each group with its pending entries
/// and consumers. The first id is not kept: docdb finds the first entry.
fn write_stream<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    ht: HybridTime,
    stream: RdbStream,
) -> CmdResult<()> {
    replace_root(ctx, batch, dk, ht, RedisType::Stream, false)?;
    let mut w = StreamWrites::new(batch, dk);
    w.set_meta(&Meta {
        length: stream.length,
        last_id: stream.last_id,
        max_deleted_id: stream.max_deleted_id,
        entries_added: stream.entries_added,
    })?;
    for (id, pairs) in stream.entries {
        let flat: Vec<Vec<u8>> = pairs.into_iter().flat_map(|(f, v)| [f, v]).collect();
        w.put_entry(id, &flat)?;
    }
    for group in stream.groups {
        let state = Group {
            last_delivered: group.last_id,
            entries_read: group.entries_read,
        };
        w.set_group(&group.name, &state)?;
        for p in group.pending {
            let pending = Pending {
                consumer: p.consumer,
                delivery_time: p.delivery_time,
                delivery_count: p.delivery_count,
            };
            w.set_pending(&group.name, p.id, &pending)?;
        }
        for c in group.consumers {
            let consumer = Consumer {
                seen_time: c.seen_time,
            };
            w.set_consumer(&group.name, &c.name, &consumer)?;
        }
    }
    Ok(())
}
