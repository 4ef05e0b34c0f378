//! HyperLogLogs: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST over string values in Redis
//! 7.0's HLL format, with its error texts and its rules for when the key is written (which
//! decides whether a WATCH on it holds). The HLL logic itself is [`crate::hll`].

use dockv::HybridTime;
use dockv::value::Ttl;
use engine::Engine;

use super::strings::string_value;
use super::{ADMIN, Ctx, READONLY, Spec, WRITE, is, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::hll::{self, Hll, HllError, Registers};
use crate::store::RedisType;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("pfadd", -2, WRITE, 1, pfadd),
        spec("pfcount", -2, READONLY, 1, pfcount),
        spec("pfmerge", -2, WRITE, 1, pfmerge),
        spec("pfdebug", 3, WRITE | ADMIN, 2, pfdebug),
        spec("pfselftest", 1, ADMIN, 0, pfselftest),
    ]
}

/// How long a sparse HLL may grow (Redis's `hll-sparse-max-bytes`, at its default).
const SPARSE_MAX_BYTES: usize = hll::SPARSE_MAX_BYTES;

/// Redis's reply for a value that is not a usable HLL.
fn hll_error(e: HllError) -> CmdError {
    CmdError::Err(
        match e {
            HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
            HllError::Corrupt => "INVALIDOBJ Corrupted HLL object detected",
        }
        .into(),
    )
}

/// The HLL at `doc_key` as of `ht` and its TTL; `None` if missing, WRONGTYPE if another
/// type or a string that is not an HLL.
fn read_hll<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    doc_key: &[u8],
    ht: HybridTime,
) -> CmdResult<Option<(Hll, Option<Ttl>)>> {
    let Some(info) = ctx.typed(doc_key, RedisType::String, ht)? else {
        return Ok(None);
    };
    let hll = Hll::parse(info.string_value()).map_err(hll_error)?;
    Ok(Some((hll, info.remaining_ttl(ht))))
}

/// PFADD: creates the key (replying 1, even without elements) or adds to it, keeping its
/// TTL; written only when a register changed, so that a PFADD that changes nothing leaves a
/// WATCH standing, as in Redis. A corrupt sparse HLL fails at the first element it cannot
/// place, keeping what the elements before it changed (Redis changed the string in place).
fn pfadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    let elements = &ctx.args[2..];
    let written = ctx.store().write(|batch, ht| {
        let (mut hll, ttl, mut changed) = match read_hll(ctx, &dk, ht)? {
            Some((hll, ttl)) => (hll, ttl, false),
            None => (Hll::new(), None, true),
        };
        let mut failed = None;
        for element in elements {
            match hll.add(element, SPARSE_MAX_BYTES) {
                Ok(raised) => changed |= raised,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if changed && failed.is_none() {
            hll.invalidate_cache();
        }
        if changed {
            batch.set_encoded_path(dk.clone(), string_value(hll.into_bytes(), ttl))?;
        }
        Ok(match failed {
            Some(e) => Err(hll_error(e)),
            None => Ok(Frame::Integer(i64::from(changed))),
        })
    });
    written?
}

/// PFCOUNT of one key replies with the cached cardinality, or computes it and caches it:
/// a write, as in Redis (where it signals the key as modified, failing a WATCH on it);
/// never under DOCDB.ASOF. Of several keys, the cardinality of their union, caching nothing.
fn pfcount<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.args.len() > 2 {
        return count_union(ctx);
    }
    let dk = ctx.key(1);
    let Some((hll, _)) = read_hll(ctx, &dk, ctx.read_time())? else {
        return Ok(Frame::Integer(0));
    };
    if let Some(card) = hll.cached() {
        return Ok(Frame::Integer(card as i64));
    }
    if ctx.as_of.is_some() {
        return Ok(Frame::Integer(hll.count().map_err(hll_error)? as i64));
    }
    let reply = ctx.store().write(|batch, ht| {
        let Some((mut hll, ttl)) = read_hll(ctx, &dk, ht)? else {
            return Ok(Frame::Integer(0));
        };
        if let Some(card) = hll.cached() {
            return Ok(Frame::Integer(card as i64));
        }
        let card = hll.count().map_err(hll_error)?;
        hll.set_cached(card);
        batch.set_encoded_path(dk.clone(), string_value(hll.into_bytes(), ttl))?;
        // Redis replies with the 64-bit value as a signed integer.
        Ok(Frame::Integer(card as i64))
    })?;
    if !ctx.store().docdb().is_writing() {
        // A read-only command that wrote: counted for the group commit as `dispatch`
        // counts writes.
        ctx.session.last_write = ctx.core.count_write();
    }
    Ok(reply)
}

/// PFCOUNT of several keys: missing keys count as empty HLLs; the first key that is not an
/// HLL, or a corrupt one, fails the command.
fn count_union<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ht = ctx.read_time();
    let mut max = Registers::new();
    for i in 1..ctx.args.len() {
        if let Some((hll, _)) = read_hll(ctx, &ctx.key(i), ht)? {
            hll.merge_into(&mut max).map_err(hll_error)?;
        }
    }
    Ok(Frame::Integer(max.count() as i64))
}

/// PFMERGE: the union of the destination (which must be an HLL or missing) and the sources
/// is written to the destination in its own encoding (dense if any input was), created
/// sparse without a TTL if missing, else keeping its TTL. Always a write, as in Redis.
fn pfmerge<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let keys: Vec<Vec<u8>> = (1..ctx.args.len()).map(|i| ctx.key(i)).collect();
    ctx.store().write(|batch, ht| {
        let mut max = Registers::new();
        let mut dense = false;
        let mut dest = None;
        for (i, dk) in keys.iter().enumerate() {
            let Some((hll, ttl)) = read_hll(ctx, dk, ht)? else {
                continue;
            };
            dense |= hll.is_dense();
            hll.merge_into(&mut max).map_err(hll_error)?;
            if i == 0 {
                dest = Some((hll, ttl));
            }
        }
        let (mut hll, ttl) = dest.unwrap_or_else(|| (Hll::new(), None));
        if dense {
            hll.to_dense().map_err(hll_error)?;
        }
        hll.raise_to(&max, SPARSE_MAX_BYTES);
        let dest_key = ctx.key(1);
        batch.set_encoded_path(dest_key, string_value(hll.into_bytes(), ttl))?;
        Ok(ok())
    })
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key: the key is looked up (and must be an HLL)
/// before the subcommand is; GETREG and TODENSE turn a sparse HLL dense and store it.
fn pfdebug<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = ctx.arg(1);
    let dk = ctx.key(2);
    ctx.store().write(|batch, ht| {
        let Some((mut hll, ttl)) = read_hll(ctx, &dk, ht)? else {
            return Err(CmdError::err("The specified key does not exist"));
        };
        if is(sub, "getreg") || is(sub, "todense") {
            let converted = hll.to_dense().map_err(hll_error)?;
            let registers = hll.dense_registers().unwrap_or_default();
            if converted {
                batch.set_encoded_path(dk.clone(), string_value(hll.into_bytes(), ttl))?;
            }
            return Ok(if is(sub, "todense") {
                Frame::Integer(i64::from(converted))
            } else {
                let values = registers.into_iter().map(|v| Frame::Integer(i64::from(v)));
                Frame::Array(values.collect())
            });
        }
        if is(sub, "decode") {
            let decoded = hll
                .decode()
                .ok_or_else(|| CmdError::err("HLL encoding is not sparse"))?;
            Ok(Frame::Bulk(decoded.into_bytes()))
        } else if is(sub, "encoding") {
            let name = if hll.is_dense() { "dense" } else { "sparse" };
            Ok(Frame::Simple(name.into()))
        } else {
            Err(CmdError::err(format!(
                "Unknown PFDEBUG subcommand '{}'",
                String::from_utf8_lossy(sub)
            )))
        }
    })
}

/// PFSELFTEST: Redis's self-test of the HLL code (this implementation's, here).
fn pfselftest<E: Engine>(_ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    hll::self_test(seed, SPARSE_MAX_BYTES).map_err(CmdError::err)?;
    Ok(ok())
}
