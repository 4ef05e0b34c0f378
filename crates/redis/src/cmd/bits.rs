//! Bitmaps over string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
//! BITFIELD_RO, checking their arguments in Redis 7.0's order and with its error texts. The
//! bit logic itself is [`crate::bits`].

use dockv::value::Value;
use engine::Engine;

use super::strings::string_value;
use super::{Ctx, READONLY, Spec, WRITE, is, spec};
use crate::bits::{self, BitOp, FieldType, FieldWrite, Overflow, Range, Unit};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;
use crate::store::RedisType;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("setbit", 4, WRITE, 1, setbit),
        spec("getbit", 3, READONLY, 1, getbit),
        spec("bitcount", -2, READONLY, 1, bitcount),
        spec("bitpos", -3, READONLY, 1, bitpos),
        spec("bitop", -4, WRITE, 2, bitop),
        spec("bitfield", -2, WRITE, 1, bitfield),
        spec("bitfield_ro", -2, READONLY, 1, bitfield_ro),
    ]
}

/// The string at argument 1 as of the read time, `None` if missing, WRONGTYPE if another type.
fn read_string<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<Option<Vec<u8>>> {
    let info = ctx.typed(&ctx.key(1), RedisType::String, ctx.read_time())?;
    Ok(info.map(|i| i.string_value()))
}

/// Read-modify-write of the string at argument 1 (empty if missing): `change` edits its
/// bytes and returns the reply and whether Redis would count the key as modified. The
/// string is written, keeping its TTL, when so, or when it was created or grown (Redis's
/// `dirty`); otherwise it is left as it was, so that a WATCH on it holds, as in Redis.
fn update<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    change: impl FnOnce(&mut Vec<u8>) -> (Frame, bool),
) -> CmdResult<Frame> {
    let dk = ctx.key(1);
    ctx.store().write(|batch, ht| {
        let info = ctx.typed(&dk, RedisType::String, ht)?;
        let ttl = info.as_ref().and_then(|i| i.remaining_ttl(ht));
        let old = info.map(|i| i.string_value());
        let old_len = old.as_ref().map(Vec::len);
        let mut value = old.unwrap_or_default();
        let (reply, changed) = change(&mut value);
        if changed || old_len != Some(value.len()) {
            batch.set_encoded_path(dk, string_value(value, ttl))?;
        }
        Ok(reply)
    })
}

/// Argument `i` as a bit offset (`width`: BITFIELD's, where `#n` counts fields), within
/// Redis's `proto-max-bulk-len`.
fn offset_arg<E: Engine>(ctx: &Ctx<'_, '_, E>, i: usize, width: Option<u32>) -> CmdResult<u64> {
    let max_bytes = ctx.core.limits().max_bulk_len as u64;
    bits::parse_offset(ctx.arg(i), width, max_bytes)
        .ok_or_else(|| CmdError::err("bit offset is not an integer or out of range"))
}

fn setbit<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let offset = offset_arg(ctx, 2, None)?;
    let on = match int_arg(ctx.arg(3)) {
        Ok(0) => false,
        Ok(1) => true,
        _ => return Err(CmdError::err("bit is not an integer or out of range")),
    };
    update(ctx, |value| {
        let old = bits::set_bit(value, offset, on);
        (Frame::Integer(i64::from(old)), old != on)
    })
}

fn getbit<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let offset = offset_arg(ctx, 2, None)?;
    let value = read_string(ctx)?.unwrap_or_default();
    Ok(Frame::Integer(i64::from(bits::get_bit(&value, offset))))
}

/// The optional `BYTE|BIT` argument.
fn unit_arg(arg: Option<&Vec<u8>>) -> CmdResult<Unit> {
    match arg {
        None => Ok(Unit::Byte),
        Some(a) if is(a, "byte") => Ok(Unit::Byte),
        Some(a) if is(a, "bit") => Ok(Unit::Bit),
        Some(_) => Err(CmdError::Syntax),
    }
}

/// BITCOUNT: Redis looks the key up before it reads the range, so a missing key counts 0
/// whatever follows it.
fn bitcount<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let Some(value) = read_string(ctx)? else {
        return Ok(Frame::Integer(0));
    };
    let range = match ctx.args.len() {
        2 => None,
        4 | 5 => {
            let (start, end) = (int_arg(ctx.arg(2))?, int_arg(ctx.arg(3))?);
            if bits::reversed_negative(start, end) {
                return Ok(Frame::Integer(0));
            }
            let unit = unit_arg(ctx.args.get(4))?;
            Some(Range { start, end, unit })
        }
        _ => return Err(CmdError::Syntax),
    };
    Ok(Frame::Integer(bits::count(&value, range) as i64))
}

/// BITPOS: the bit argument first, then the key (missing: -1 looking for a 1, 0 for a 0),
/// then start, the unit, and end, in that order.
fn bitpos<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let bit = match int_arg(ctx.arg(2))? {
        0 => false,
        1 => true,
        _ => return Err(CmdError::err("The bit argument must be 1 or 0.")),
    };
    let Some(value) = read_string(ctx)? else {
        return Ok(Frame::Integer(if bit { -1 } else { 0 }));
    };
    if ctx.args.len() > 6 {
        return Err(CmdError::Syntax);
    }
    let start = ctx.args.get(3).map(|a| int_arg(a)).transpose()?;
    let unit = unit_arg(ctx.args.get(5))?;
    let end = ctx.args.get(4).map(|a| int_arg(a)).transpose()?;
    let end = end.map(|end| (end, unit));
    Ok(Frame::Integer(bits::position(&value, bit, start, end)))
}

/// BITOP: the result replaces the destination (of any type) without a TTL; an empty result
/// deletes it. Replies with the result's length.
fn bitop<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let op = BitOp::parse(ctx.arg(1)).ok_or(CmdError::Syntax)?;
    if op == BitOp::Not && ctx.args.len() != 4 {
        return Err(CmdError::err(
            "BITOP NOT must be called with a single source key.",
        ));
    }
    let dest = ctx.key(2);
    let sources: Vec<Vec<u8>> = (3..ctx.args.len()).map(|i| ctx.key(i)).collect();
    ctx.store().write(|batch, ht| {
        let mut values = Vec::with_capacity(sources.len());
        for dk in &sources {
            let info = ctx.typed(dk, RedisType::String, ht)?;
            values.push(info.map(|i| i.string_value()).unwrap_or_default());
        }
        let result = bits::combine(op, &values);
        let len = result.len() as i64;
        if len > 0 {
            batch.set_encoded_path(dest.clone(), string_value(result, None))?;
        } else if ctx.key_info(&dest, ht)?.is_some() {
            batch.set_encoded_path(dest.clone(), Value::tombstone())?;
        }
        ctx.store().forget_list_bounds(&dest);
        Ok(Frame::Integer(len))
    })
}

/// One BITFIELD subcommand (OVERFLOW sets `overflow` for those after it).
struct FieldOp {
    ty: FieldType,
    offset: u64,
    /// `None`: GET.
    write: Option<FieldWrite>,
    overflow: Overflow,
}

impl FieldOp {
    /// The last bit a write reaches.
    fn last_written_bit(&self) -> Option<u64> {
        self.write
            .map(|_| self.offset + u64::from(self.ty.bits) - 1)
    }

    /// Runs the subcommand on `value`: its reply (nil for a write refused by OVERFLOW
    /// FAIL), and whether it changed the value.
    fn run(&self, value: &mut Vec<u8>) -> (Frame, bool) {
        let Some(write) = self.write else {
            let field = bits::get_field(value, self.offset, self.ty);
            return (Frame::Integer(field), false);
        };
        match bits::write_field(value, self.offset, self.ty, write, self.overflow) {
            Some(done) => (Frame::Integer(done.reply), done.changed),
            None => (Frame::Null, false),
        }
    }
}

/// BITFIELD's subcommands, checked in order as Redis checks them (the first bad one fails
/// the command before anything runs).
fn parse_bitfield<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<Vec<FieldOp>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut i = 2;
    while i < ctx.args.len() {
        let left = ctx.args.len() - i - 1;
        if is(ctx.arg(i), "overflow") && left >= 1 {
            overflow = Overflow::parse(ctx.arg(i + 1))
                .ok_or_else(|| CmdError::err("Invalid OVERFLOW type specified"))?;
            i += 2;
        } else {
            let op = parse_field_op(ctx, i, left, overflow)?;
            i += if op.write.is_some() { 4 } else { 3 };
            ops.push(op);
        }
    }
    Ok(ops)
}

/// The GET, SET or INCRBY at argument `i`, with `left` arguments after it: the type, then
/// the offset, then (SET, INCRBY) the value, each checked in turn.
fn parse_field_op<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    i: usize,
    left: usize,
    overflow: Overflow,
) -> CmdResult<FieldOp> {
    let name = ctx.arg(i);
    let writes = if is(name, "get") && left >= 2 {
        false
    } else if (is(name, "set") || is(name, "incrby")) && left >= 3 {
        true
    } else {
        return Err(CmdError::Syntax);
    };
    let ty = FieldType::parse(ctx.arg(i + 1)).ok_or_else(|| {
        CmdError::err(
            "Invalid bitfield type. Use something like i16 u8. Note that u64 is not \
             supported but i64 is.",
        )
    })?;
    let offset = offset_arg(ctx, i + 2, Some(ty.bits))?;
    let write = if writes {
        let n = int_arg(ctx.arg(i + 3))?;
        Some(if is(name, "set") {
            FieldWrite::Set(n)
        } else {
            FieldWrite::IncrBy(n)
        })
    } else {
        None
    };
    Ok(FieldOp {
        ty,
        offset,
        write,
        overflow,
    })
}

fn bitfield<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_bitfield(ctx, false)
}

fn bitfield_ro<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_bitfield(ctx, true)
}

/// BITFIELD with only GETs reads (a missing key reads as empty); with a write, the string
/// first grows to the furthest bit written (created if missing, even if OVERFLOW FAIL then
/// refuses every write, as in Redis), and is stored if that or a field changed it.
fn run_bitfield<E: Engine>(ctx: &mut Ctx<'_, '_, E>, readonly: bool) -> CmdResult<Frame> {
    let ops = parse_bitfield(ctx)?;
    let run_all = |value: &mut Vec<u8>| {
        let mut changed = false;
        let replies = ops.iter().map(|op| {
            let (reply, changed_here) = op.run(value);
            changed |= changed_here;
            reply
        });
        (Frame::Array(replies.collect()), changed)
    };
    let Some(furthest) = ops.iter().filter_map(FieldOp::last_written_bit).max() else {
        let mut value = read_string(ctx)?.unwrap_or_default();
        return Ok(run_all(&mut value).0);
    };
    if readonly {
        return Err(CmdError::err(
            "BITFIELD_RO only supports the GET subcommand",
        ));
    }
    update(ctx, |value| {
        bits::grow_to_bit(value, furthest);
        run_all(value)
    })
}
