//! Lists: a `)` root, elements keyed by array indexes from DocDB's monotonic counter
//! (prepends negative, appends positive), and the length in a `%` counter subkey.
//!
//! Pops leave tombstones at the list's ends. So that the next pop does not walk over them,
//! the store remembers, per list, index bounds no live element lies outside of.

use docdb::reader::ChildRange;
use docdb::{DocWriteBatch, SubDocument};
use dockv::value::{PrimitiveValue, Value};
use dockv::{HybridTime, KeyEntryType, KeyEntryValue};
use engine::Engine;

use super::hashes::{ensure_root, leaf_bytes, replace_root};
use super::strings::normalize_range;
use super::zsets::write_count;
use super::{Ctx, MultiPop, READONLY, Spec, WRITE, bulk_array, is, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::list_ends::End;
use crate::number::int_arg;
use crate::store::{self, Reads, RedisType, Store, primitive_bytes};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("lpush", -3, WRITE, 1, lpush),
        spec("rpush", -3, WRITE, 1, rpush),
        spec("lpushx", -3, WRITE, 1, |c| {
            push(c, Push::Front, Target::Existing)
        }),
        spec("rpushx", -3, WRITE, 1, |c| {
            push(c, Push::Back, Target::Existing)
        }),
        spec("lpop", -2, WRITE, 1, lpop),
        spec("rpop", -2, WRITE, 1, rpop),
        spec("llen", 2, READONLY, 1, llen),
        spec("lrange", 4, READONLY, 1, lrange),
        spec("lindex", 3, READONLY, 1, lindex),
        spec("lpos", -3, READONLY, 1, lpos),
        spec("lset", 4, WRITE, 1, lset),
        spec("lrem", 4, WRITE, 1, lrem),
        spec("ltrim", 4, WRITE, 1, ltrim),
        spec("lmove", 5, WRITE, 1, lmove),
        spec("rpoplpush", 3, WRITE, 1, |c| move_element(c, true, true)),
        spec("lmpop", -4, WRITE, 2, lmpop),
        spec("linsert", 5, WRITE, 1, linsert),
    ]
}

fn length<E: Engine>(r: &mut Reads<'_, '_, E>, dk: &[u8]) -> CmdResult<i64> {
    let path = store::path(dk, &[KeyEntryValue::Counter]);
    Ok(match r.child_record(&path)? {
        Some(record) => match record.payload {
            PrimitiveValue::Int64(n) => n,
            _ => return Err(CmdError::err("corrupt list length")),
        },
        None => 0,
    })
}

/// Which end of a list a push adds to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Push {
    Front,
    Back,
}

/// Which lists a push adds to: any (making a missing one), or only one that exists (the
/// `X` variants, which answer 0 for a missing key and write nothing).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Any,
    Existing,
}

fn push<E: Engine>(ctx: &mut Ctx<'_, '_, E>, end: Push, target: Target) -> CmdResult<Frame> {
    let front = end == Push::Front;
    let dk = ctx.key(1);
    let store = ctx.store();
    let mut values: Vec<PrimitiveValue> = ctx.args[2..]
        .iter()
        .map(|v| PrimitiveValue::String(v.clone()))
        .collect();
    if front {
        // LPUSH a b c makes c b a: a block prepend keeps the order it is given.
        values.reverse();
    }
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let info = r.typed(&dk, RedisType::List)?;
        let len = match &info {
            Some(_) => length(&mut r, &dk)?,
            None if target == Target::Existing => return Ok(Frame::Integer(0)),
            None => 0,
        };
        ensure_root(batch, &dk, &info, RedisType::List)?;
        let (low, high) = batch.push_list(&dk, &values, None, front)?;
        let new_len = len + values.len() as i64;
        write_count(batch, &dk, new_len)?;
        if info.is_none() {
            store.set_list_bounds(&dk, low, high);
        } else {
            store.widen_list_bounds(&dk, low, high);
            if let Some(mut ends) = store.take_list_ends(&dk) {
                ends.pushed(!front, pushed_items(&values, low, high, front));
                store.claim_list_ends(&dk, ends);
            }
        }
        Ok(Frame::Integer(new_len))
    })
}

/// The elements a push of `values` wrote at indexes `low..=high`, from the end pushed onto
/// inward: a prepend wrote `values` front to back from `low`, an append from `low` too, so
/// from the back inward they are reversed.
fn pushed_items(
    values: &[PrimitiveValue],
    low: i64,
    high: i64,
    front: bool,
) -> Vec<(i64, Vec<u8>)> {
    let mut items: Vec<(i64, Vec<u8>)> = (low..=high)
        .zip(values.iter().map(primitive_bytes))
        .collect();
    if !front {
        items.reverse();
    }
    items
}

fn lpush<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    push(ctx, Push::Front, Target::Any)
}

fn rpush<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    push(ctx, Push::Back, Target::Any)
}

/// The element range between index bounds (inclusive), as child subkey bounds.
fn element_range(low: i64, high: i64, reverse: bool, limit: Option<usize>) -> ChildRange {
    let lower = if low == i64::MIN {
        vec![KeyEntryType::ArrayIndex.as_u8()]
    } else {
        KeyEntryValue::ArrayIndex(low).encoded()
    };
    let upper = if high == i64::MAX {
        vec![KeyEntryType::ArrayIndex.as_u8() + 1]
    } else {
        let mut upper = KeyEntryValue::ArrayIndex(high).encoded();
        upper.push(0xFF);
        upper
    };
    ChildRange {
        lower: Some(lower),
        upper: Some(upper),
        reverse,
        limit,
    }
}

/// Up to `limit` elements from the front (or back), with their indexes. Uses the store's
/// bounds unless reading the past (DOCDB.ASOF).
fn elements<E: Engine>(
    store: &Store<E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    from_back: bool,
    limit: Option<usize>,
    use_bounds: bool,
) -> CmdResult<Vec<(i64, SubDocument)>> {
    let (low, high) = if use_bounds {
        store.list_bounds(dk)
    } else {
        (i64::MIN, i64::MAX)
    };
    let end = if from_back { high } else { low };
    if limit == Some(1) && end != i64::MIN && end != i64::MAX {
        // Usually the end element sits right at the bound: one lookup of its path, which
        // path bloom filters answer, instead of a seek through every file for the first
        // child.
        let path = store::path(dk, &[KeyEntryValue::ArrayIndex(end)]);
        if let Some(record) = r.child_record(&path)? {
            return Ok(vec![(end, SubDocument::Primitive(record.payload))]);
        }
    }
    let range = element_range(low, high, from_back, limit);
    Ok(r.children(dk, &range)?
        .into_iter()
        .filter_map(|(key, doc)| match key {
            KeyEntryValue::ArrayIndex(i) => Some((i, doc)),
            _ => None,
        })
        .collect())
}

fn pop<E: Engine>(ctx: &mut Ctx<'_, '_, E>, from_back: bool) -> CmdResult<Frame> {
    if ctx.args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = super::pop_count(ctx, true)?;
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if count == Some(0) {
            return Ok(match r.typed(&dk, RedisType::List)? {
                Some(_) => Frame::Array(Vec::new()),
                None => Frame::NullArray,
            });
        }
        let popped = pop_in(store, &mut r, batch, &dk, from_back, count.unwrap_or(1))?;
        Ok(match (popped, count) {
            (None, Some(_)) => Frame::NullArray,
            (None, None) => Frame::Null,
            (Some(values), Some(_)) => bulk_array(values),
            (Some(values), None) => values.into_iter().next().map_or(Frame::Null, Frame::Bulk),
        })
    })
}

/// Pops up to `count` (at least 1) elements from one end of the list at `dk`: `None` when
/// there is no list there.
fn pop_in<E: Engine>(
    store: &Store<E>,
    r: &mut Reads<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    from_back: bool,
    count: usize,
) -> CmdResult<Option<Vec<Vec<u8>>>> {
    if r.typed(dk, RedisType::List)?.is_none() {
        return Ok(None);
    }
    let mut ends = store.take_list_ends(dk).unwrap_or_default();
    let popped = take_from_end(store, r, dk, from_back, ends.end_mut(from_back), count)?;
    let left = length(r, dk)? - popped.len() as i64;
    let indexes: Vec<i64> = popped.iter().map(|(i, _)| *i).collect();
    remove_elements(batch, dk, indexes.iter().copied())?;
    write_count(batch, dk, left)?;
    if let Some(&last) = indexes.last() {
        let (low, high) = store.list_bounds(dk);
        if from_back {
            store.set_list_bounds(dk, low, last.saturating_sub(1));
        } else {
            store.set_list_bounds(dk, last.saturating_add(1), high);
        }
    }
    if left > 0 {
        ends.popped(from_back, &indexes);
        store.claim_list_ends(dk, ends);
    }
    Ok(Some(popped.into_iter().map(|(_, value)| value).collect()))
}

/// Up to `count` elements from one end of the list at `dk`, with their indexes: the ones
/// kept at that end if it holds enough, else read, reading ahead at an end pops took from
/// before and keeping what they do not take (see [`crate::list_ends`]).
fn take_from_end<E: Engine>(
    store: &Store<E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    from_back: bool,
    end: &mut End,
    count: usize,
) -> CmdResult<Vec<(i64, Vec<u8>)>> {
    if let Some(taken) = end.take(count) {
        return Ok(taken);
    }
    let want = end.to_read(count);
    let mut read: Vec<(i64, Vec<u8>)> = elements(store, r, dk, from_back, Some(want), true)?
        .into_iter()
        .map(|(i, doc)| (i, leaf_bytes(&doc)))
        .collect();
    end.learn(&read);
    let rest = read.split_off(read.len().min(count));
    end.fill(rest);
    Ok(read)
}

/// LMPOP: `numkeys key... LEFT|RIGHT [COUNT n]` pops from the first key holding a list;
/// replies with that key and the elements, or a null array.
fn lmpop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = MultiPop::parse(ctx.args, 1, ["left", "right"])?;
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        for i in args.keys.clone() {
            let dk = ctx.key(i);
            if let Some(values) = pop_in(store, &mut r, batch, &dk, args.second, args.count)? {
                return Ok(Frame::Array(vec![
                    Frame::Bulk(ctx.arg(i).to_vec()),
                    bulk_array(values),
                ]));
            }
        }
        Ok(Frame::NullArray)
    })
}

fn remove_elements<E: Engine>(
    batch: &mut DocWriteBatch<'_, E>,
    dk: &[u8],
    indexes: impl Iterator<Item = i64>,
) -> CmdResult<()> {
    for index in indexes {
        let path = store::path(dk, &[KeyEntryValue::ArrayIndex(index)]);
        batch.set_encoded_path(path, Value::tombstone())?;
    }
    Ok(())
}

fn lpop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    pop(ctx, false)
}

fn rpop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    pop(ctx, true)
}

fn llen<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::List)?.is_none() {
        return Ok(Frame::Integer(0));
    }
    Ok(Frame::Integer(length(&mut r, &dk)?))
}

/// Elements at positions `from..=to` (0-based, within the length `len`), read from the
/// nearer end.
fn slice<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    from: usize,
    to: usize,
    len: usize,
) -> CmdResult<Vec<(i64, SubDocument)>> {
    let use_bounds = ctx.as_of.is_none();
    if to < len - from {
        let all = elements(ctx.store(), r, dk, false, Some(to + 1), use_bounds)?;
        Ok(all.into_iter().skip(from).collect())
    } else {
        let mut all = elements(ctx.store(), r, dk, true, Some(len - from), use_bounds)?;
        all.reverse();
        Ok(all.into_iter().take(to + 1 - from).collect())
    }
}

/// Every element of the list at `dk` (which must be one), front to back.
pub(super) fn all_elements<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
) -> CmdResult<Vec<Vec<u8>>> {
    let len = length(r, dk)?;
    if len <= 0 {
        return Ok(Vec::new());
    }
    let items = slice(ctx, r, dk, 0, len as usize - 1, len as usize)?;
    Ok(items.iter().map(|(_, doc)| leaf_bytes(doc)).collect())
}

/// Replaces whatever is at `dst` with a list of `items` (none deletes it).
pub(super) fn store_list<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    batch: &mut DocWriteBatch<'_, E>,
    dst: &[u8],
    ht: HybridTime,
    items: &[Vec<u8>],
) -> CmdResult<()> {
    let store = ctx.store();
    replace_root(ctx, batch, dst, ht, RedisType::List, items.is_empty())?;
    if items.is_empty() {
        store.forget_list_bounds(dst);
        return Ok(());
    }
    let values: Vec<PrimitiveValue> = items
        .iter()
        .map(|item| PrimitiveValue::String(item.clone()))
        .collect();
    let (low, high) = batch.push_list(dst, &values, None, false)?;
    write_count(batch, dst, items.len() as i64)?;
    store.set_list_bounds(dst, low, high);
    Ok(())
}

fn lrange<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (start, stop) = (int_arg(ctx.arg(2))?, int_arg(ctx.arg(3))?);
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::List)?.is_none() {
        return Ok(Frame::Array(Vec::new()));
    }
    let len = length(&mut r, &dk)?;
    let Some((from, to)) = normalize_range(start, stop, len) else {
        return Ok(Frame::Array(Vec::new()));
    };
    let items = slice(ctx, &mut r, &dk, from, to, len as usize)?;
    Ok(bulk_array(items.iter().map(|(_, doc)| leaf_bytes(doc))))
}

/// The 0-based position of Redis index `index` (negative from the end) in a list of `len`.
fn position(index: i64, len: i64) -> Option<usize> {
    let pos = if index < 0 { len + index } else { index };
    (0..len).contains(&pos).then_some(pos as usize)
}

fn lindex<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    // Redis looks at the key before the index.
    if r.typed(&dk, RedisType::List)?.is_none() {
        return Ok(Frame::Null);
    }
    let index = int_arg(ctx.arg(2))?;
    let len = length(&mut r, &dk)?;
    let Some(pos) = position(index, len) else {
        return Ok(Frame::Null);
    };
    let items = slice(ctx, &mut r, &dk, pos, pos, len as usize)?;
    Ok(items
        .first()
        .map_or(Frame::Null, |(_, doc)| Frame::Bulk(leaf_bytes(doc))))
}

/// LPOS's options.
struct PosOptions {
    /// Which match to start from: 1 the first, -1 the first from the tail.
    rank: i64,
    /// `None`: reply with one position; `Some(0)`: all matches.
    count: Option<u64>,
    /// Elements compared at most (0: no limit).
    max_len: u64,
}

impl PosOptions {
    fn parse(args: &[Vec<u8>]) -> CmdResult<Self> {
        let mut opts = PosOptions {
            rank: 1,
            count: None,
            max_len: 0,
        };
        let mut i = 0;
        while i < args.len() {
            let Some(value) = args.get(i + 1) else {
                return Err(CmdError::Syntax);
            };
            let name = &args[i];
            if is(name, "rank") {
                opts.rank = match int_arg(value)? {
                    0 => {
                        return Err(CmdError::err(
                            "RANK can't be zero: use 1 to start from the first match, 2 from \
                             the second ... or use negative to start from the end of the list",
                        ));
                    }
                    // Redis negates it, which leaves i64::MIN negative and "any match".
                    i64::MIN => -1,
                    rank => rank,
                };
            } else if is(name, "count") {
                let count = int_arg(value)?;
                opts.count = Some(
                    u64::try_from(count).map_err(|_| CmdError::err("COUNT can't be negative"))?,
                );
            } else if is(name, "maxlen") {
                let max_len = int_arg(value)?;
                opts.max_len = u64::try_from(max_len)
                    .map_err(|_| CmdError::err("MAXLEN can't be negative"))?;
            } else {
                return Err(CmdError::Syntax);
            }
            i += 2;
        }
        Ok(opts)
    }
}

/// LPOS: positions (from the head) of elements equal to the argument.
fn lpos<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let opts = PosOptions::parse(&ctx.args[3..])?;
    let wanted = ctx.arg(2);
    let dk = ctx.key(1);
    let mut r = ctx.reads(ctx.read_time());
    let no_match = || match opts.count {
        Some(_) => Frame::Array(Vec::new()),
        None => Frame::Null,
    };
    if r.typed(&dk, RedisType::List)?.is_none() {
        return Ok(no_match());
    }
    let from_back = opts.rank < 0;
    let all = elements(
        ctx.store(),
        &mut r,
        &dk,
        from_back,
        None,
        ctx.as_of.is_none(),
    )?;
    let len = all.len();
    let compared = match opts.max_len {
        0 => len,
        n => len.min(usize::try_from(n).unwrap_or(usize::MAX)),
    };
    let skip = usize::try_from(opts.rank.unsigned_abs() - 1).unwrap_or(usize::MAX);
    let limit = match opts.count {
        None => 1,
        Some(0) => usize::MAX,
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let found: Vec<Frame> = all[..compared]
        .iter()
        .enumerate()
        .filter(|(_, (_, doc))| leaf_bytes(doc) == wanted)
        .skip(skip)
        .take(limit)
        .map(|(k, _)| Frame::Integer((if from_back { len - 1 - k } else { k }) as i64))
        .collect();
    Ok(match opts.count {
        Some(_) => Frame::Array(found),
        None => found.into_iter().next().unwrap_or_else(no_match),
    })
}

fn lset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let value = ctx.arg(3).to_vec();
    let index_arg = ctx.arg(2);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::List)?.is_none() {
            return Err(CmdError::err("no such key"));
        }
        let index = int_arg(index_arg)?;
        let len = length(&mut r, &dk)?;
        let pos = position(index, len).ok_or_else(|| CmdError::err("index out of range"))?;
        let all = elements(store, &mut r, &dk, false, Some(pos + 1), true)?;
        let (target, _) = all
            .get(pos)
            .ok_or_else(|| CmdError::err("index out of range"))?;
        let path = store::path(&dk, &[KeyEntryValue::ArrayIndex(*target)]);
        batch.set_encoded_path(path, Value::new(PrimitiveValue::String(value)))?;
        Ok(ok())
    })
}

fn lrem<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let count = int_arg(ctx.arg(2))?;
    let dk = ctx.key(1);
    let needle = ctx.arg(3).to_vec();
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::List)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let mut all = elements(store, &mut r, &dk, false, None, true)?;
        if count < 0 {
            all.reverse();
        }
        let limit = if count == 0 {
            usize::MAX
        } else {
            count.unsigned_abs() as usize
        };
        let doomed: Vec<i64> = all
            .iter()
            .filter(|(_, doc)| leaf_bytes(doc) == needle)
            .take(limit)
            .map(|(i, _)| *i)
            .collect();
        if doomed.is_empty() {
            return Ok(Frame::Integer(0));
        }
        let left = length(&mut r, &dk)? - doomed.len() as i64;
        remove_elements(batch, &dk, doomed.iter().copied())?;
        write_count(batch, &dk, left)?;
        Ok(Frame::Integer(doomed.len() as i64))
    })
}

/// LINSERT: `key BEFORE|AFTER pivot element` puts `element` next to the first `pivot` from
/// the head; replies with the new length, -1 without the pivot, 0 without the list.
///
/// Array indexes leave no room between two elements, so the shorter side of the insertion
/// point moves: its elements are deleted and written again, with the new element, as a
/// block of fresh indexes appended (or prepended) past every other. That is O(min(before,
/// after)) writes, on top of the O(n) read that finds the pivot, as Redis's LINSERT is O(n).
fn linsert<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let after = match ctx.arg(2) {
        w if is(w, "after") => true,
        w if is(w, "before") => false,
        _ => return Err(CmdError::Syntax),
    };
    let (pivot, element) = (ctx.arg(3).to_vec(), ctx.arg(4).to_vec());
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::List)?.is_none() {
            return Ok(Frame::Integer(0));
        }
        let all = elements(store, &mut r, &dk, false, None, true)?;
        let Some(at) = all.iter().position(|(_, doc)| leaf_bytes(doc) == pivot) else {
            return Ok(Frame::Integer(-1));
        };
        let split = at + usize::from(after);
        let (head, tail) = all.split_at(split);
        let element = PrimitiveValue::String(element);
        let value = |(_, doc): &(i64, SubDocument)| PrimitiveValue::String(leaf_bytes(doc));
        let (moved, block, prepend) = if tail.len() <= head.len() {
            let block = std::iter::once(element).chain(tail.iter().map(value));
            (tail, block.collect::<Vec<_>>(), false)
        } else {
            let block = head.iter().map(value).chain(std::iter::once(element));
            (head, block.collect::<Vec<_>>(), true)
        };
        remove_elements(batch, &dk, moved.iter().map(|(i, _)| *i))?;
        let (low, high) = batch.push_list(&dk, &block, None, prepend)?;
        store.widen_list_bounds(&dk, low, high);
        let len = length(&mut r, &dk)? + 1;
        write_count(batch, &dk, len)?;
        Ok(Frame::Integer(len))
    })
}

/// LTRIM: removes the elements outside `start..=stop` (Redis indexes); nothing left deletes
/// the key.
fn ltrim<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (start, stop) = (int_arg(ctx.arg(2))?, int_arg(ctx.arg(3))?);
    let dk = ctx.key(1);
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&dk, RedisType::List)?.is_none() {
            return Ok(ok());
        }
        let all = elements(store, &mut r, &dk, false, None, true)?;
        let keep = normalize_range(start, stop, all.len() as i64);
        let kept = |pos: usize| keep.is_some_and(|(from, to)| (from..=to).contains(&pos));
        let doomed: Vec<i64> = (0..all.len())
            .filter(|&pos| !kept(pos))
            .map(|pos| all[pos].0)
            .collect();
        // Even when nothing goes, the count is written again: Redis counts any LTRIM of a
        // list as a change, and a WATCH of it then fails the EXEC.
        let left = length(&mut r, &dk)? - doomed.len() as i64;
        remove_elements(batch, &dk, doomed.into_iter())?;
        write_count(batch, &dk, left)?;
        match keep {
            Some((from, to)) if left > 0 => store.set_list_bounds(&dk, all[from].0, all[to].0),
            _ => store.forget_list_bounds(&dk),
        }
        Ok(ok())
    })
}

fn lmove<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let side = |arg: &[u8]| match () {
        _ if is(arg, "left") => Ok(true),
        _ if is(arg, "right") => Ok(false),
        _ => Err(CmdError::Syntax),
    };
    let (from_left, to_left) = (side(ctx.arg(3))?, side(ctx.arg(4))?);
    move_element(ctx, !from_left, to_left)
}

/// LMOVE: pops an element from one end of the list at argument 1 and pushes it onto an end
/// of the list at argument 2 (the same list rotates), in one batch. Null when the source is
/// empty.
fn move_element<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    from_back: bool,
    to_front: bool,
) -> CmdResult<Frame> {
    let (src, dst) = (ctx.key(1), ctx.key(2));
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        if r.typed(&src, RedisType::List)?.is_none() {
            return Ok(Frame::Null);
        }
        let dst_info = r.typed(&dst, RedisType::List)?;
        let mut src_ends = store.take_list_ends(&src).unwrap_or_default();
        let end = src_ends.end_mut(from_back);
        let popped = take_from_end(store, &mut r, &src, from_back, end, 1)?;
        let Some((index, value)) = popped.into_iter().next() else {
            return Ok(Frame::Null);
        };
        src_ends.popped(from_back, &[index]);
        let src_len = length(&mut r, &src)?;
        remove_elements(batch, &src, std::iter::once(index))?;
        let (low, high) = store.list_bounds(&src);
        if from_back {
            store.set_list_bounds(&src, low, index.saturating_sub(1));
        } else {
            store.set_list_bounds(&src, index.saturating_add(1), high);
        }
        let dst_len = if src == dst {
            src_len - 1
        } else {
            write_count(batch, &src, src_len - 1)?;
            match dst_info {
                Some(_) => length(&mut r, &dst)?,
                None => 0,
            }
        };
        ensure_root(batch, &dst, &dst_info, RedisType::List)?;
        let pushed = [PrimitiveValue::String(value.clone())];
        let (low, high) = batch.push_list(&dst, &pushed, None, to_front)?;
        write_count(batch, &dst, dst_len + 1)?;
        if dst_info.is_none() {
            store.set_list_bounds(&dst, low, high);
        } else {
            store.widen_list_bounds(&dst, low, high);
        }
        let moved = vec![(low, value.clone())];
        if src == dst {
            src_ends.pushed(!to_front, moved);
            store.claim_list_ends(&src, src_ends);
        } else {
            if src_len > 1 {
                store.claim_list_ends(&src, src_ends);
            }
            if let Some(mut dst_ends) = dst_info.and_then(|_| store.take_list_ends(&dst)) {
                dst_ends.pushed(!to_front, moved);
                store.claim_list_ends(&dst, dst_ends);
            }
        }
        Ok(Frame::Bulk(value))
    })
}
