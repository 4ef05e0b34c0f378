//! Key commands: existence, type, TTL, rename, key listing and databases.

use docdb::SubDocument;
use dockv::value::{Ttl, Value};
use dockv::{HybridTime, KeyEntryType};
use engine::Engine;

use super::strings::{ms_until, string_value};
use super::{ADMIN, Ctx, READONLY, Spec, WRITE, bulk_array, is, ok, spec};
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::glob;
use crate::number::int_arg;
use crate::store::{self, DbId, KeyInfo};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("del", -2, WRITE, 1, del),
        // Redis frees UNLINK's values in the background; here DEL writes only tombstones.
        spec("unlink", -2, WRITE, 1, del),
        spec("exists", -2, READONLY, 1, exists),
        // TOUCH only updates access times, which docdb does not keep: it counts as EXISTS.
        spec("touch", -2, READONLY, 1, exists),
        spec("type", 2, READONLY, 1, key_type),
        spec("expire", -3, WRITE, 1, expire),
        spec("pexpire", -3, WRITE, 1, pexpire),
        spec("expireat", -3, WRITE, 1, expireat),
        spec("pexpireat", -3, WRITE, 1, pexpireat),
        spec("ttl", 2, READONLY, 1, ttl),
        spec("pttl", 2, READONLY, 1, pttl),
        spec("expiretime", 2, READONLY, 1, |c| expire_time(c, 1000)),
        spec("pexpiretime", 2, READONLY, 1, |c| expire_time(c, 1)),
        spec("persist", 2, WRITE, 1, persist),
        spec("rename", 3, WRITE, 1, rename),
        spec("renamenx", 3, WRITE, 1, renamenx),
        spec("copy", -3, WRITE, 1, copy),
        spec("move", 3, WRITE, 1, move_key),
        spec("randomkey", 1, READONLY, 0, randomkey),
        spec("keys", 2, READONLY, 0, keys),
        spec("scan", -2, READONLY, 0, scan),
        spec("dbsize", 1, READONLY, 0, dbsize),
        spec("flushdb", -1, WRITE | ADMIN, 0, flushdb),
        spec("flushall", -1, WRITE | ADMIN, 0, flushall),
        spec("select", 2, ADMIN, 0, select),
        // Redis 7.0 flags SWAPDB `write fast`: MULTI queues it, scripts may call it.
        spec("swapdb", 3, WRITE, 0, swapdb),
        spec("createdb", 2, WRITE | ADMIN, 0, createdb),
        spec("deletedb", 2, WRITE | ADMIN, 0, deletedb),
        spec("listdb", 1, ADMIN, 0, listdb),
    ]
}

fn del<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let keys: Vec<Vec<u8>> = (1..ctx.args.len()).map(|i| ctx.key(i)).collect();
    ctx.store().write(|batch, ht| {
        let mut removed = 0;
        for dk in dedup(keys) {
            if ctx.key_info(&dk, ht)?.is_some() {
                batch.set_encoded_path(dk, Value::tombstone())?;
                removed += 1;
            }
        }
        Ok(Frame::Integer(removed))
    })
}

/// The keys once each, in first-seen order.
fn dedup(keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    keys.into_iter()
        .filter(|k| seen.insert(k.clone()))
        .collect()
}

fn exists<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ht = ctx.read_time();
    let mut count = 0;
    for i in 1..ctx.args.len() {
        count += i64::from(ctx.key_info(&ctx.key(i), ht)?.is_some());
    }
    Ok(Frame::Integer(count))
}

fn key_type<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let info = ctx.key_info(&ctx.key(1), ctx.read_time())?;
    Ok(Frame::Simple(
        info.map_or("none", |i| i.kind.name()).to_string(),
    ))
}

/// EXPIRE's NX/XX/GT/LT condition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Condition {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

fn parse_condition(args: &[Vec<u8>]) -> CmdResult<Condition> {
    let mut condition = Condition::Always;
    for arg in args {
        let next = if is(arg, "nx") {
            Condition::Nx
        } else if is(arg, "xx") {
            Condition::Xx
        } else if is(arg, "gt") {
            Condition::Gt
        } else if is(arg, "lt") {
            Condition::Lt
        } else {
            return Err(CmdError::err(format!(
                "Unsupported option {}",
                String::from_utf8_lossy(arg)
            )));
        };
        condition = match (condition, next) {
            (Condition::Always, n) => n,
            (a, b) if a == b => a,
            (Condition::Nx, _) | (_, Condition::Nx) => {
                return Err(CmdError::err(
                    "NX and XX, GT or LT options at the same time are not compatible",
                ));
            }
            (Condition::Gt, Condition::Lt) | (Condition::Lt, Condition::Gt) => {
                return Err(CmdError::err(
                    "GT and LT options at the same time are not compatible",
                ));
            }
            (Condition::Xx, n) | (n, Condition::Xx) => n,
            (a, _) => a,
        };
    }
    Ok(condition)
}

/// EXPIRE and friends: `unit_ms` is 1000 for seconds; `absolute` for the AT forms.
fn expire_generic<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    unit_ms: i64,
    absolute: bool,
) -> CmdResult<Frame> {
    let name = ctx.name();
    let amount = int_arg(ctx.arg(2))?;
    let condition = parse_condition(&ctx.args[3..])?;
    let invalid = || CmdError::err(format!("invalid expire time in '{name}' command"));
    let ms = amount.checked_mul(unit_ms).ok_or_else(invalid)?;
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let Some(info) = ctx.key_info(&dk, ht)? else {
            return Ok(Frame::Integer(0));
        };
        let now_ms = i64::try_from(ht.physical_micros() / 1000).unwrap_or(i64::MAX);
        let deadline = if absolute {
            ms
        } else {
            ms.checked_add(now_ms).ok_or_else(invalid)?
        };
        let current = info.expires_at.map(|us| (us / 1000) as i64);
        let allowed = match condition {
            Condition::Always => true,
            Condition::Nx => current.is_none(),
            Condition::Xx => current.is_some(),
            Condition::Gt => current.is_some_and(|c| deadline > c),
            Condition::Lt => current.is_none_or(|c| deadline < c),
        };
        if !allowed {
            return Ok(Frame::Integer(0));
        }
        let left = ms_until(ht, deadline);
        if left <= 0 {
            batch.set_encoded_path(dk, Value::tombstone())?;
        } else {
            batch.expire_encoded(dk, Some(Ttl(left)))?;
        }
        Ok(Frame::Integer(1))
    })
}

fn expire<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    expire_generic(ctx, 1000, false)
}

fn pexpire<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    expire_generic(ctx, 1, false)
}

fn expireat<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    expire_generic(ctx, 1000, true)
}

fn pexpireat<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    expire_generic(ctx, 1, true)
}

/// Milliseconds left, -1 without TTL, -2 without key.
fn ttl_ms<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<i64> {
    let ht = ctx.read_time();
    let Some(info) = ctx.key_info(&ctx.key(1), ht)? else {
        return Ok(-2);
    };
    Ok(match info.expires_at {
        None => -1,
        Some(at) => (at.saturating_sub(ht.physical_micros()) / 1000) as i64,
    })
}

fn ttl<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ms = ttl_ms(ctx)?;
    Ok(Frame::Integer(if ms < 0 { ms } else { (ms + 500) / 1000 }))
}

fn pttl<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(ttl_ms(ctx)?))
}

/// EXPIRETIME/PEXPIRETIME: the key's expiry as a unix time in `unit_ms` units (rounded
/// down), -1 without one, -2 when the key does not exist.
fn expire_time<E: Engine>(ctx: &Ctx<'_, '_, E>, unit_ms: u64) -> CmdResult<Frame> {
    let Some(info) = ctx.key_info(&ctx.key(1), ctx.read_time())? else {
        return Ok(Frame::Integer(-2));
    };
    Ok(Frame::Integer(match info.expires_at {
        None => -1,
        Some(at_micros) => (at_micros / 1000 / unit_ms) as i64,
    }))
}

fn persist<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| match ctx.key_info(&dk, ht)? {
        Some(info) if info.expires_at.is_some() => {
            batch.expire_encoded(dk, None)?;
            Ok(Frame::Integer(1))
        }
        _ => Ok(Frame::Integer(0)),
    })
}

fn rename<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (src, dst) = (ctx.key(1), ctx.key(2));
    match transfer(ctx, &src, &dst, Transfer::RENAME)? {
        Some(_) => Ok(ok()),
        None => Err(CmdError::err("no such key")),
    }
}

/// RENAMENX: 1 if renamed, 0 if the destination exists (or is the source).
fn renamenx<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (src, dst) = (ctx.key(1), ctx.key(2));
    let mode = Transfer {
        replace: false,
        ..Transfer::RENAME
    };
    match transfer(ctx, &src, &dst, mode)? {
        Some(renamed) => Ok(Frame::Integer(i64::from(renamed))),
        None => Err(CmdError::err("no such key")),
    }
}

/// COPY src dst [DB db] [REPLACE]: 1 if copied, 0 if the source is missing or the
/// destination exists without REPLACE.
fn copy<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut db = None;
    let mut replace = false;
    let mut i = 3;
    while i < ctx.args.len() {
        if is(ctx.arg(i), "replace") {
            replace = true;
            i += 1;
        } else if is(ctx.arg(i), "db") && i + 1 < ctx.args.len() {
            db = Some(db_arg(ctx, ctx.arg(i + 1))?);
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let dst_db = db.map_or_else(|| ctx.db(), |db| ctx.store().physical_db(db));
    let (src, dst) = (ctx.key(1), ctx.store().doc_key(dst_db, ctx.arg(2)));
    if src == dst {
        return Err(CmdError::err("source and destination objects are the same"));
    }
    let mode = Transfer {
        replace,
        remove_source: false,
    };
    let copied = transfer(ctx, &src, &dst, mode)?;
    Ok(Frame::Integer(i64::from(copied == Some(true))))
}

/// MOVE key db: 1 if moved, 0 if the key is missing or already exists in `db`.
fn move_key<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let db = ctx.store().physical_db(db_arg(ctx, ctx.arg(2))?);
    if db == ctx.db() {
        return Err(CmdError::err("source and destination objects are the same"));
    }
    let (src, dst) = (ctx.key(1), ctx.store().doc_key(db, ctx.arg(1)));
    let mode = Transfer {
        replace: false,
        ..Transfer::RENAME
    };
    let moved = transfer(ctx, &src, &dst, mode)?;
    Ok(Frame::Integer(i64::from(moved == Some(true))))
}

/// What [`transfer`] does about a live destination and the source.
#[derive(Clone, Copy)]
struct Transfer {
    /// Overwrite a live destination (otherwise leave it, and the source, as they are).
    replace: bool,
    /// Delete the source once copied (RENAME, MOVE).
    remove_source: bool,
}

impl Transfer {
    const RENAME: Transfer = Transfer {
        replace: true,
        remove_source: true,
    };
}

/// Copies the live key at `src` to the document key `dst` (in any database) with the TTL it
/// has left: `None` if `src` is missing, `Some(false)` if `dst` is live and not replaced,
/// `Some(true)` once copied. A key moved onto itself stays as it is.
fn transfer<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    src: &[u8],
    dst: &[u8],
    mode: Transfer,
) -> CmdResult<Option<bool>> {
    ctx.store().write(|batch, ht| {
        let Some(info) = ctx.key_info(src, ht)? else {
            return Ok(None);
        };
        if src == dst {
            return Ok(Some(mode.replace));
        }
        if !mode.replace && ctx.key_info(dst, ht)?.is_some() {
            return Ok(Some(false));
        }
        let doc = ctx
            .reads(ht)
            .document(src)?
            .ok_or_else(|| CmdError::err("no such key"))?;
        copy_document(batch, dst, &doc, &info, ht)?;
        if mode.remove_source {
            batch.set_encoded_path(src, Value::tombstone())?;
            ctx.store().forget_list_bounds(src);
        }
        ctx.store().forget_list_bounds(dst);
        Ok(Some(true))
    })
}

/// RANDOMKEY: the first live key from a random hash slot on (wrapping around), or nil.
fn randomkey<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut rng = engine::Rng::new(ctx.read_time().0 ^ ctx.session.id.rotate_left(32));
    let slot = rng.below(u64::from(dockv::hash::REDIS_CLUSTER_SLOTS)) as u16;
    let starts = [Some(slot_start::<E>(ctx.db(), slot)), None];
    for start in starts {
        let mut found = None;
        ctx.store()
            .scan_keys(ctx.db(), start.as_deref(), ctx.read_time(), |_, name, _| {
                found = Some(name);
                false
            })?;
        if let Some(name) = found {
            return Ok(Frame::Bulk(name));
        }
    }
    Ok(Frame::Null)
}

/// Writes `doc` (the live document of `info`) at `dst`, replacing what is there, with the
/// TTL it has left.
fn copy_document<E: Engine>(
    batch: &mut docdb::DocWriteBatch<'_, E>,
    dst: &[u8],
    doc: &SubDocument,
    info: &KeyInfo,
    ht: HybridTime,
) -> CmdResult<()> {
    let ttl = info.remaining_ttl(ht);
    match doc {
        SubDocument::Primitive(_) => {
            batch.set_encoded_path(dst, string_value(info.string_value(), ttl))?;
        }
        SubDocument::Object { .. } => {
            write_tree(batch, dst, doc)?;
            if ttl.is_some() {
                batch.expire_encoded(dst.to_vec(), ttl)?;
            }
        }
    }
    Ok(())
}

/// Writes a collection: its root marker, then its leaves. Inner levels (a sorted set's
/// score index) have no records of their own, and must not get markers: a marker left
/// behind by a removed member would still count as a child.
fn write_tree<E: Engine>(
    batch: &mut docdb::DocWriteBatch<'_, E>,
    path: &[u8],
    doc: &SubDocument,
) -> CmdResult<()> {
    if let SubDocument::Object { kind, .. } = doc {
        batch.set_encoded_path(path, Value::new(kind.marker()))?;
    }
    write_leaves(batch, path, doc)
}

fn write_leaves<E: Engine>(
    batch: &mut docdb::DocWriteBatch<'_, E>,
    path: &[u8],
    doc: &SubDocument,
) -> CmdResult<()> {
    match doc {
        SubDocument::Primitive(value) => {
            batch.set_encoded_path(path, Value::new(value.clone()))?;
        }
        SubDocument::Object { children, .. } => {
            for (encoded, (_, child)) in children {
                write_leaves(batch, &[path, encoded.as_slice()].concat(), child)?;
            }
        }
    }
    Ok(())
}

fn keys<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let pattern = ctx.arg(1).to_vec();
    let mut names = Vec::new();
    ctx.store()
        .scan_keys(ctx.db(), None, ctx.read_time(), |_, name, _| {
            if glob::matches(&pattern, &name) {
                names.push(name);
            }
            true
        })?;
    Ok(bulk_array(names))
}

/// SCAN cursors are hash slots: a call returns whole slots until COUNT keys are found, and
/// the cursor is the next slot to visit (0 when done). Stateless, so it survives restarts,
/// and every key present throughout is returned.
fn scan<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let cursor = std::str::from_utf8(ctx.arg(1))
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| CmdError::err("invalid cursor"))?;
    let opts = ScanArgs::parse(&ctx.args[2..])?;
    if cursor >= u64::from(dockv::hash::REDIS_CLUSTER_SLOTS) {
        return Ok(scan_reply(0, Vec::new()));
    }
    let slot = cursor as u16;
    let start = slot_start::<E>(ctx.db(), slot);
    let mut names = Vec::new();
    let mut found = 0;
    let mut next = 0u64;
    ctx.store().scan_keys(
        ctx.db(),
        Some(&start),
        ctx.read_time(),
        |doc_key, name, info| {
            let key_slot = slot_of(doc_key, ctx.db());
            if found >= opts.count && u64::from(key_slot) != next.saturating_sub(1) {
                next = u64::from(key_slot);
                return false;
            }
            next = u64::from(key_slot) + 1;
            found += 1;
            if opts.accepts(&name, info) {
                names.push(name);
            }
            true
        },
    )?;
    // Ran off the end: done. Otherwise `next` is the first slot not visited.
    let finished = found < opts.count || next >= u64::from(dockv::hash::REDIS_CLUSTER_SLOTS);
    Ok(scan_reply(if finished { 0 } else { next }, names))
}

fn slot_of(doc_key: &[u8], db: DbId) -> u16 {
    let at = if db == 0 { 1 } else { 6 };
    doc_key
        .get(at..at + 2)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
}

/// `[cursor, [items...]]`.
pub(super) fn scan_reply(cursor: u64, items: Vec<Vec<u8>>) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(cursor.to_string().into_bytes()),
        bulk_array(items),
    ])
}

/// SCAN's MATCH, COUNT and TYPE.
pub(super) struct ScanArgs {
    pattern: Option<Vec<u8>>,
    /// How many keys to look at before stopping.
    pub count: usize,
    kind: Option<Vec<u8>>,
}

impl ScanArgs {
    /// Parses the options after the cursor.
    pub fn parse(args: &[Vec<u8>]) -> CmdResult<Self> {
        let mut out = ScanArgs {
            pattern: None,
            count: 10,
            kind: None,
        };
        let mut i = 0;
        while i < args.len() {
            let value = args.get(i + 1).ok_or(CmdError::Syntax)?;
            if is(&args[i], "match") {
                out.pattern = Some(value.clone());
            } else if is(&args[i], "count") {
                let n = int_arg(value)?;
                if n < 1 {
                    return Err(CmdError::Syntax);
                }
                out.count = n as usize;
            } else if is(&args[i], "type") {
                out.kind = Some(value.to_ascii_lowercase());
            } else {
                return Err(CmdError::Syntax);
            }
            i += 2;
        }
        Ok(out)
    }

    /// Whether an element name passes MATCH.
    pub fn matches(&self, name: &[u8]) -> bool {
        self.pattern.as_ref().is_none_or(|p| glob::matches(p, name))
    }

    fn accepts(&self, name: &[u8], info: &KeyInfo) -> bool {
        self.matches(name)
            && self
                .kind
                .as_ref()
                .is_none_or(|k| k.as_slice() == info.kind.name().as_bytes())
    }
}

fn dbsize<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut count = 0;
    ctx.store()
        .scan_keys(ctx.db(), None, ctx.read_time(), |_, _, _| {
            count += 1;
            true
        })?;
    Ok(Frame::Integer(count))
}

fn check_flush_args<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<()> {
    match ctx.args.len() {
        1 => Ok(()),
        2 if is(ctx.arg(1), "sync") || is(ctx.arg(1), "async") => Ok(()),
        _ => Err(CmdError::Syntax),
    }
}

fn flushdb<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    check_flush_args(ctx)?;
    ctx.store().flush_db(ctx.db())?;
    Ok(ok())
}

fn flushall<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    check_flush_args(ctx)?;
    for db in ctx.store().db_ids() {
        ctx.store().flush_db(db)?;
    }
    Ok(ok())
}

/// The first engine key of hash slot `slot` in database `db`.
fn slot_start<E: Engine>(db: DbId, slot: u16) -> Vec<u8> {
    let mut start = match db {
        0 => Vec::new(),
        _ => store::Store::<E>::db_bounds(db).0,
    };
    start.push(KeyEntryType::UInt16Hash.as_u8());
    start.extend_from_slice(&slot.to_be_bytes());
    start
}

/// The database a SELECT, MOVE or COPY argument names: a number or a CREATEDB name.
fn db_arg<E: Engine>(ctx: &Ctx<'_, '_, E>, arg: &[u8]) -> CmdResult<DbId> {
    let name = String::from_utf8_lossy(arg);
    ctx.store().db_id(&name).ok_or_else(|| {
        if name.parse::<i64>().is_ok() {
            CmdError::err("DB index is out of range")
        } else {
            CmdError::err(format!("no database named '{name}' (CREATEDB makes one)"))
        }
    })
}

fn select<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let id = db_arg(ctx, ctx.arg(1))?;
    let name = String::from_utf8_lossy(ctx.arg(1)).into_owned();
    ctx.session.db = id;
    ctx.session.db_name = name;
    ctx.core.registry.update(ctx.session);
    Ok(ok())
}

/// SWAPDB index1 index2: every client of either database sees the other's keys from now
/// on. No key moves: the two exchange their key spaces ([`store::Store::swap_dbs`]).
/// Only numbered databases, as in Redis: a CREATEDB name is not an index.
fn swapdb<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let first = swap_index(ctx.arg(1), "invalid first DB index")?;
    let second = swap_index(ctx.arg(2), "invalid second DB index")?;
    let (Ok(first), Ok(second)) = (DbId::try_from(first), DbId::try_from(second)) else {
        return Err(CmdError::err("DB index is out of range"));
    };
    ctx.store().swap_dbs(first, second)?;
    Ok(ok())
}

/// The keys write `args` may have made ready for blocked clients, for those served after
/// an EXEC or a script that ran it: its arguments, or after a SWAPDB every key waited on.
pub(super) fn may_ready<E: Engine>(core: &Core<E>, args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    if is(&args[0], "swapdb") {
        return core.blocking.lock().keys();
    }
    args[1..].to_vec()
}

/// A SWAPDB index as Redis's `getIntFromObjectOrReply` takes it: an integer that fits a C
/// `int`, else `ERR <invalid>`.
fn swap_index(arg: &[u8], invalid: &str) -> CmdResult<i32> {
    crate::number::parse_i64(arg)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| CmdError::err(invalid))
}

fn createdb<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let name = db_name_arg(ctx.arg(1))?;
    if !ctx.store().create_db(&name)? {
        return Err(CmdError::err(format!("database '{name}' already exists")));
    }
    Ok(ok())
}

fn deletedb<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let name = db_name_arg(ctx.arg(1))?;
    if ctx
        .store()
        .db_id(&name)
        .is_some_and(|id| id < store::NUMBERED_DBS)
    {
        return Err(CmdError::err(format!(
            "database '{name}' is built in; FLUSHDB empties it"
        )));
    }
    if !ctx.store().delete_db(&name)? {
        return Err(CmdError::err(format!("no database named '{name}'")));
    }
    Ok(ok())
}

fn db_name_arg(arg: &[u8]) -> CmdResult<String> {
    let name = std::str::from_utf8(arg).map_err(|_| CmdError::err("invalid database name"))?;
    let valid = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid {
        return Err(CmdError::err(
            "invalid database name (letters, digits, '_' and '-', at most 128)",
        ));
    }
    Ok(name.to_string())
}

fn listdb<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(bulk_array(
        ctx.store().db_names().into_iter().map(String::into_bytes),
    ))
}
