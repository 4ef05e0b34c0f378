//! Strings: a primitive root value with an optional TTL.

use dockv::HybridTime;
use dockv::value::{PrimitiveValue, Ttl, Value};
use engine::Engine;

use super::{Ctx, READONLY, Spec, WRITE, bulk_or_null, is, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::{incr_by_float, int_arg, parse_i64};
use crate::store::{KeyInfo, RedisType};

/// Redis's largest string (`proto-max-bulk-len` default).
const MAX_STRING: usize = 512 << 20;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("get", 2, READONLY, 1, get),
        spec("set", -3, WRITE, 1, set),
        spec("setex", 4, WRITE, 1, setex),
        spec("psetex", 4, WRITE, 1, psetex),
        spec("setnx", 3, WRITE, 1, setnx),
        spec("getset", 3, WRITE, 1, getset),
        spec("getdel", 2, WRITE, 1, getdel),
        spec("getex", -2, WRITE, 1, getex),
        spec("mget", -2, READONLY, 1, mget),
        spec("mset", -3, WRITE, 1, mset),
        spec("msetnx", -3, WRITE, 1, msetnx),
        spec("append", 3, WRITE, 1, append),
        spec("strlen", 2, READONLY, 1, strlen),
        spec("getrange", 4, READONLY, 1, getrange),
        // Redis keeps SUBSTR as GETRANGE's old name.
        spec("substr", 4, READONLY, 1, getrange),
        spec("setrange", 4, WRITE, 1, setrange),
        spec("incr", 2, WRITE, 1, incr),
        spec("decr", 2, WRITE, 1, decr),
        spec("incrby", 3, WRITE, 1, incrby),
        spec("decrby", 3, WRITE, 1, decrby),
        spec("incrbyfloat", 3, WRITE, 1, incrbyfloat),
        spec("lcs", -3, READONLY, 1, lcs),
    ]
}

/// A string value with a TTL.
pub(super) fn string_value(bytes: Vec<u8>, ttl: Option<Ttl>) -> Value {
    Value::with_ttl(PrimitiveValue::String(bytes), ttl)
}

fn string_at<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    i: usize,
    ht: HybridTime,
) -> CmdResult<Option<KeyInfo>> {
    ctx.typed(&ctx.key(i), RedisType::String, ht)
}

fn get<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let info = string_at(ctx, 1, ctx.read_time())?;
    Ok(bulk_or_null(info.map(|i| i.string_value())))
}

/// When a SET's value expires.
enum Expiry {
    /// No TTL (SET clears any).
    None,
    /// Relative, in milliseconds.
    In(i64),
    /// At a unix time in milliseconds.
    At(i64),
    /// Keep the key's TTL.
    Keep,
}

struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    expiry: Expiry,
}

impl SetOptions {
    /// Whether SET must read the key first: for NX, XX, GET or KEEPTTL.
    fn reads_state(&self) -> bool {
        self.nx || self.xx || self.get || matches!(self.expiry, Expiry::Keep)
    }
}

fn parse_set_options(args: &[Vec<u8>]) -> CmdResult<SetOptions> {
    let mut opts = SetOptions {
        nx: false,
        xx: false,
        get: false,
        expiry: Expiry::None,
    };
    // Redis checks the options' syntax first and the expire time's value after.
    let mut expire: Option<(&[u8], &[u8])> = None;
    let mut keep_ttl = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let has_expiry = expire.is_some() || keep_ttl;
        if is(arg, "nx") && !opts.xx {
            opts.nx = true;
        } else if is(arg, "xx") && !opts.nx {
            opts.xx = true;
        } else if is(arg, "get") {
            opts.get = true;
        } else if is(arg, "keepttl") && !has_expiry {
            keep_ttl = true;
        } else if ["ex", "px", "exat", "pxat"].iter().any(|w| is(arg, w))
            && !has_expiry
            && i + 1 < args.len()
        {
            expire = Some((arg, &args[i + 1]));
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if keep_ttl {
        opts.expiry = Expiry::Keep;
    }
    if let Some((unit, value)) = expire {
        let (ms, absolute) = expire_arg(unit, value, "set")?;
        opts.expiry = if absolute {
            Expiry::At(ms)
        } else {
            Expiry::In(ms)
        };
    }
    Ok(opts)
}

/// Milliseconds from `ht` to the unix time `at_ms` (may be ≤ 0: already past).
pub(super) fn ms_until(ht: HybridTime, at_ms: i64) -> i64 {
    let now_ms = i64::try_from(ht.physical_micros() / 1000).unwrap_or(i64::MAX);
    at_ms.saturating_sub(now_ms)
}

fn set<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let opts = parse_set_options(&ctx.args[3..])?;
    let dk = ctx.key(1);
    let value = ctx.arg(2).to_vec();
    if !opts.reads_state() {
        return ctx.write_blind(|ht, pairs| {
            let ttl = match opts.expiry {
                Expiry::In(ms) => Some(Ttl(ms)),
                Expiry::At(at) => Some(Ttl(ms_until(ht, at))),
                Expiry::None | Expiry::Keep => None,
            };
            pairs.push((dk, set_value(value, ttl)));
            Ok(ok())
        });
    }
    ctx.store().write(|batch, ht| {
        let info = ctx.key_info(&dk, ht)?;
        let old = match (&info, opts.get) {
            (Some(info), true) => {
                info.expect(RedisType::String)?;
                Some(info.string_value())
            }
            _ => None,
        };
        let refused = (opts.nx && info.is_some()) || (opts.xx && info.is_none());
        if !refused {
            let ttl = match opts.expiry {
                Expiry::None => None,
                Expiry::In(ms) => Some(Ttl(ms)),
                Expiry::At(at) => Some(Ttl(ms_until(ht, at))),
                Expiry::Keep => info.as_ref().and_then(|i| i.remaining_ttl(ht)),
            };
            batch.set_encoded_path(dk.clone(), set_value(value, ttl))?;
        }
        Ok(if opts.get {
            bulk_or_null(old)
        } else if refused {
            Frame::Null
        } else {
            ok()
        })
    })
}

/// What SET writes: the string, or a tombstone when its expiry time has already passed.
fn set_value(value: Vec<u8>, ttl: Option<Ttl>) -> Value {
    if ttl.is_some_and(|t| t.0 <= 0) {
        Value::tombstone()
    } else {
        string_value(value, ttl)
    }
}

fn set_with_ttl<E: Engine>(ctx: &mut Ctx<'_, '_, E>, unit_ms: i64) -> CmdResult<Frame> {
    let n = int_arg(ctx.arg(2))?;
    let name = ctx.name();
    let ms = n
        .checked_mul(unit_ms)
        .filter(|&ms| n > 0 && ms > 0)
        .ok_or_else(|| CmdError::err(format!("invalid expire time in '{name}' command")))?;
    let dk = ctx.key(1);
    let value = ctx.arg(3).to_vec();
    ctx.write_blind(|_, pairs| {
        pairs.push((dk, string_value(value, Some(Ttl(ms)))));
        Ok(ok())
    })
}

fn setex<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    set_with_ttl(ctx, 1000)
}

fn psetex<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    set_with_ttl(ctx, 1)
}

fn setnx<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let value = ctx.arg(2).to_vec();
    ctx.store().write(|batch, ht| {
        if ctx.key_info(&dk, ht)?.is_some() {
            return Ok(Frame::Integer(0));
        }
        batch.set_encoded_path(dk, string_value(value, None))?;
        Ok(Frame::Integer(1))
    })
}

fn getset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let value = ctx.arg(2).to_vec();
    ctx.store().write(|batch, ht| {
        let old = ctx.typed(&dk, RedisType::String, ht)?;
        batch.set_encoded_path(dk, string_value(value, None))?;
        Ok(bulk_or_null(old.map(|i| i.string_value())))
    })
}

fn getdel<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let old = ctx.typed(&dk, RedisType::String, ht)?;
        if old.is_some() {
            batch.set_encoded_path(dk, Value::tombstone())?;
        }
        Ok(bulk_or_null(old.map(|i| i.string_value())))
    })
}

/// GETEX's change to the key's expiry.
enum ExpiryChange<'a> {
    Keep,
    Persist,
    /// `EX`, `PX`, `EXAT` or `PXAT`, and its argument (checked once the key is found).
    Set(&'a [u8], &'a [u8]),
}

/// GETEX's options as Redis 7.0 reads them: an option may repeat, but not mix with another.
fn parse_getex(args: &[Vec<u8>]) -> CmdResult<ExpiryChange<'_>> {
    let mut change = ExpiryChange::Keep;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        let unit = ["ex", "px", "exat", "pxat"]
            .into_iter()
            .find(|w| is(arg, w));
        change = match (unit, &change) {
            (Some(_), ExpiryChange::Keep) if i + 1 < args.len() => {
                i += 1;
                ExpiryChange::Set(arg, &args[i])
            }
            (Some(unit), ExpiryChange::Set(previous, _))
                if is(previous, unit) && i + 1 < args.len() =>
            {
                i += 1;
                ExpiryChange::Set(arg, &args[i])
            }
            (None, ExpiryChange::Keep | ExpiryChange::Persist) if is(arg, "persist") => {
                ExpiryChange::Persist
            }
            _ => return Err(CmdError::Syntax),
        };
        i += 1;
    }
    Ok(change)
}

fn invalid_expire(name: &str) -> CmdError {
    CmdError::err(format!("invalid expire time in '{name}' command"))
}

/// An `EX`/`PX`/`EXAT`/`PXAT` argument of SET or GETEX in milliseconds, and whether it is a
/// unix time (`EXAT`, `PXAT`) rather than from now: positive, and within range once in
/// milliseconds, as Redis 7.0 checks it.
fn expire_arg(unit: &[u8], amount: &[u8], name: &str) -> CmdResult<(i64, bool)> {
    let n = int_arg(amount)?;
    let seconds = is(unit, "ex") || is(unit, "exat");
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(invalid_expire(name));
    }
    let ms = if seconds { n * 1000 } else { n };
    Ok((ms, is(unit, "exat") || is(unit, "pxat")))
}

/// The unix time in milliseconds a GETEX expiry argument sets (a relative one must not
/// overflow once added to now, as Redis checks).
fn expiry_deadline(unit: &[u8], amount: &[u8], ht: HybridTime) -> CmdResult<i64> {
    let (ms, absolute) = expire_arg(unit, amount, "getex")?;
    if absolute {
        return Ok(ms);
    }
    let now_ms = i64::try_from(ht.physical_micros() / 1000).unwrap_or(i64::MAX);
    ms.checked_add(now_ms)
        .ok_or_else(|| invalid_expire("getex"))
}

fn getex<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let change = parse_getex(&ctx.args[2..])?;
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let Some(info) = ctx.typed(&dk, RedisType::String, ht)? else {
            return Ok(Frame::Null);
        };
        match change {
            ExpiryChange::Keep => {}
            ExpiryChange::Persist if info.expires_at.is_some() => {
                batch.expire_encoded(dk, None)?;
            }
            ExpiryChange::Persist => {}
            ExpiryChange::Set(unit, amount) => {
                let left = ms_until(ht, expiry_deadline(unit, amount, ht)?);
                if left <= 0 {
                    batch.set_encoded_path(dk, Value::tombstone())?;
                } else {
                    batch.expire_encoded(dk, Some(Ttl(left)))?;
                }
            }
        }
        Ok(Frame::Bulk(info.string_value()))
    })
}

fn mget<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ht = ctx.read_time();
    let mut values = Vec::with_capacity(ctx.args.len() - 1);
    for i in 1..ctx.args.len() {
        let info = ctx.key_info(&ctx.key(i), ht)?;
        values.push(match info {
            Some(info) if info.kind == RedisType::String => Frame::Bulk(info.string_value()),
            _ => Frame::Null,
        });
    }
    Ok(Frame::Array(values))
}

/// The `key value ...` arguments of MSET and MSETNX, keys as document keys.
fn key_value_args<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    command: &str,
) -> CmdResult<Vec<(Vec<u8>, Vec<u8>)>> {
    if ctx.args.len().is_multiple_of(2) {
        return Err(super::wrong_arity(command));
    }
    Ok((1..ctx.args.len())
        .step_by(2)
        .map(|i| (ctx.key(i), ctx.arg(i + 1).to_vec()))
        .collect())
}

fn mset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let keys = key_value_args(ctx, "mset")?;
    ctx.write_blind(|_, pairs| {
        pairs.extend(
            keys.into_iter()
                .map(|(dk, value)| (dk, string_value(value, None))),
        );
        Ok(ok())
    })
}

/// MSETNX: sets every key, or none if any of them exists (of any type); 1 or 0.
fn msetnx<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let keys = key_value_args(ctx, "msetnx")?;
    ctx.store().write(|batch, ht| {
        for (dk, _) in &keys {
            if ctx.key_info(dk, ht)?.is_some() {
                return Ok(Frame::Integer(0));
            }
        }
        for (dk, value) in keys {
            batch.set_encoded_path(dk, string_value(value, None))?;
        }
        Ok(Frame::Integer(1))
    })
}

/// Read-modify-write of a string: `change` gets the current value (if any) and returns the
/// new value and the reply. The key's TTL is kept.
fn modify<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    change: impl FnOnce(Option<Vec<u8>>) -> CmdResult<(Option<Vec<u8>>, Frame)>,
) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let info = ctx.typed(&dk, RedisType::String, ht)?;
        let ttl = info.as_ref().and_then(|i| i.remaining_ttl(ht));
        let (new, reply) = change(info.map(|i| i.string_value()))?;
        if let Some(new) = new {
            batch.set_encoded_path(dk, string_value(new, ttl))?;
        }
        Ok(reply)
    })
}

fn append<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let suffix = ctx.arg(2).to_vec();
    modify(ctx, |old| {
        let mut value = old.unwrap_or_default();
        if value.len() + suffix.len() > MAX_STRING {
            return Err(CmdError::err(
                "string exceeds maximum allowed size (proto-max-bulk-len)",
            ));
        }
        value.extend_from_slice(&suffix);
        let len = value.len() as i64;
        Ok((Some(value), Frame::Integer(len)))
    })
}

fn strlen<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let info = string_at(ctx, 1, ctx.read_time())?;
    Ok(Frame::Integer(
        info.map_or(0, |i| i.string_value().len() as i64),
    ))
}

/// Redis's list and sorted-set range (`start`/`end` may count from the end): the inclusive
/// positions within `len`, or `None` when empty. An end still negative after adding `len`
/// makes the range empty.
pub(super) fn normalize_range(start: i64, end: i64, len: i64) -> Option<(usize, usize)> {
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end }.min(len - 1);
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end as usize))
}

fn getrange<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let start = int_arg(ctx.arg(2))?;
    let end = int_arg(ctx.arg(3))?;
    let value = string_at(ctx, 1, ctx.read_time())?
        .map(|i| i.string_value())
        .unwrap_or_default();
    Ok(Frame::Bulk(string_range(&value, start, end).to_vec()))
}

/// GETRANGE's rules, which differ from lists': a negative end is clamped to 0.
fn string_range(value: &[u8], start: i64, end: i64) -> &[u8] {
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        return &[];
    }
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { (len + end).max(0) } else { end }.min(len - 1);
    if len == 0 || start > end {
        return &[];
    }
    &value[start as usize..=end as usize]
}

fn setrange<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let offset = int_arg(ctx.arg(2))?;
    if offset < 0 {
        return Err(CmdError::err("offset is out of range"));
    }
    let patch = ctx.arg(3).to_vec();
    let offset = offset as usize;
    modify(ctx, |old| {
        let mut value = old.unwrap_or_default();
        if patch.is_empty() {
            return Ok((None, Frame::Integer(value.len() as i64)));
        }
        if offset + patch.len() > MAX_STRING {
            return Err(CmdError::err(
                "string exceeds maximum allowed size (proto-max-bulk-len)",
            ));
        }
        if value.len() < offset + patch.len() {
            value.resize(offset + patch.len(), 0);
        }
        value[offset..offset + patch.len()].copy_from_slice(&patch);
        let len = value.len() as i64;
        Ok((Some(value), Frame::Integer(len)))
    })
}

fn incr_by<E: Engine>(ctx: &mut Ctx<'_, '_, E>, delta: i64) -> CmdResult<Frame> {
    modify(ctx, |old| {
        let current = match old {
            Some(bytes) => parse_i64(&bytes).ok_or(CmdError::NotInteger)?,
            None => 0,
        };
        let next = current.checked_add(delta).ok_or(CmdError::Overflow)?;
        Ok((Some(next.to_string().into_bytes()), Frame::Integer(next)))
    })
}

fn incr<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    incr_by(ctx, 1)
}

fn decr<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    incr_by(ctx, -1)
}

fn incrby<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let delta = int_arg(ctx.arg(2))?;
    incr_by(ctx, delta)
}

fn decrby<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let delta = int_arg(ctx.arg(2))?;
    let negated = delta
        .checked_neg()
        .ok_or_else(|| CmdError::err("decrement would overflow"))?;
    incr_by(ctx, negated)
}

fn incrbyfloat<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let increment = ctx.arg(2).to_vec();
    modify(ctx, |old| {
        let current = old.unwrap_or_else(|| b"0".to_vec());
        let next = incr_by_float(&current, &increment)?;
        Ok((
            Some(next.clone().into_bytes()),
            Frame::Bulk(next.into_bytes()),
        ))
    })
}

/// A run of LCS matches: positions in the first string, in the second, and its length.
#[derive(Debug, PartialEq, Eq)]
struct MatchRange {
    a: (usize, usize),
    b: (usize, usize),
    len: usize,
}

/// The longest common subsequence of `a` and `b` and its runs of contiguous matches from
/// the end back (those of at least `min_len` bytes), walked as Redis 7.0's `lcsCommand`
/// walks its table, so that ties and runs come out as Redis's do. `table` is the
/// `(a.len() + 1) * (b.len() + 1)` DP table, computed here.
fn lcs_walk(a: &[u8], b: &[u8], min_len: usize) -> (Vec<u8>, Vec<MatchRange>) {
    let width = b.len() + 1;
    let mut table = vec![0u32; (a.len() + 1) * width];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            table[i * width + j] = if a[i - 1] == b[j - 1] {
                table[(i - 1) * width + j - 1] + 1
            } else {
                table[(i - 1) * width + j].max(table[i * width + j - 1])
            };
        }
    }
    let mut common = Vec::with_capacity(table[a.len() * width + b.len()] as usize);
    let mut ranges = Vec::new();
    // The run being tracked: its first positions in `a` and `b`, and its last in `a`.
    let mut run: Option<(usize, usize, usize, usize)> = None;
    let (mut i, mut j) = (a.len(), b.len());
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            common.push(a[i - 1]);
            match &mut run {
                None => run = Some((i - 1, i - 1, j - 1, j - 1)),
                // Contiguous: the run grows backward.
                Some((a_start, _, b_start, _)) if *a_start == i && *b_start == j => {
                    *a_start -= 1;
                    *b_start -= 1;
                }
                // Redis ends the run here without starting one at this match.
                Some(_) => emit = true,
            }
            if run.is_some_and(|(a_start, _, b_start, _)| a_start == 0 || b_start == 0) {
                emit = true;
            }
            i -= 1;
            j -= 1;
        } else {
            if table[(i - 1) * width + j] > table[i * width + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = run.is_some();
        }
        if emit && let Some((a_start, a_end, b_start, b_end)) = run.take() {
            let len = a_end - a_start + 1;
            if len >= min_len {
                ranges.push(MatchRange {
                    a: (a_start, a_end),
                    b: (b_start, b_end),
                    len,
                });
            }
        }
    }
    common.reverse();
    (common, ranges)
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common
/// subsequence of two strings (a missing key is empty), its length, or its runs of matches.
fn lcs<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ht = ctx.read_time();
    let mut strings = Vec::with_capacity(2);
    for i in [1, 2] {
        match ctx.key_info(&ctx.key(i), ht)? {
            None => strings.push(Vec::new()),
            Some(info) if info.kind == RedisType::String => strings.push(info.string_value()),
            Some(_) => {
                return Err(CmdError::err(
                    "The specified keys must contain string values",
                ));
            }
        }
    }
    let (mut idx, mut len, mut with_len, mut min_len) = (false, false, false, 0);
    let mut i = 3;
    while i < ctx.args.len() {
        let arg = ctx.arg(i);
        match () {
            _ if is(arg, "idx") => idx = true,
            _ if is(arg, "len") => len = true,
            _ if is(arg, "withmatchlen") => with_len = true,
            _ if is(arg, "minmatchlen") && i + 1 < ctx.args.len() => {
                min_len = usize::try_from(int_arg(ctx.arg(i + 1))?).unwrap_or(0);
                i += 1;
            }
            _ => return Err(CmdError::Syntax),
        }
        i += 1;
    }
    if idx && len {
        return Err(CmdError::err(
            "If you want both the length and indexes, please just use IDX.",
        ));
    }
    let (a, b) = (&strings[0], &strings[1]);
    let cells = (a.len() as u64 + 1).saturating_mul(b.len() as u64 + 1);
    if cells.saturating_mul(4) > ctx.core.limits().max_bulk_len as u64 {
        return Err(CmdError::err(
            "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let (common, ranges) = lcs_walk(a, b, min_len);
    if len {
        return Ok(Frame::Integer(common.len() as i64));
    }
    if !idx {
        return Ok(Frame::Bulk(common));
    }
    let pair = |(start, end): (usize, usize)| {
        Frame::Array(vec![
            Frame::Integer(start as i64),
            Frame::Integer(end as i64),
        ])
    };
    let matches = ranges
        .into_iter()
        .map(|range| {
            let mut item = vec![pair(range.a), pair(range.b)];
            if with_len {
                item.push(Frame::Integer(range.len as i64));
            }
            Frame::Array(item)
        })
        .collect();
    Ok(Frame::Map(vec![
        (Frame::Bulk(b"matches".to_vec()), Frame::Array(matches)),
        (
            Frame::Bulk(b"len".to_vec()),
            Frame::Integer(common.len() as i64),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// redis.io's LCS example: ohmytext and mynewtext.
    #[test]
    fn lcs_matches_the_documented_example() {
        let (common, ranges) = lcs_walk(b"ohmytext", b"mynewtext", 0);
        assert_eq!(common, b"mytext");
        assert_eq!(
            ranges,
            vec![
                MatchRange {
                    a: (4, 7),
                    b: (5, 8),
                    len: 4
                },
                MatchRange {
                    a: (2, 3),
                    b: (0, 1),
                    len: 2
                },
            ]
        );
        let (_, long_only) = lcs_walk(b"ohmytext", b"mynewtext", 4);
        assert_eq!(long_only.len(), 1);
        assert_eq!(lcs_walk(b"", b"abc", 0), (Vec::new(), Vec::new()));
    }
}
