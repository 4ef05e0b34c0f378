//! SLOWLOG GET|LEN|RESET|HELP over [`crate::slowlog::SlowLog`].

use engine::Engine;

use super::{ADMIN, Ctx, Spec, bulk_array, help_reply, ok, spec, subcommand, subcommand_syntax};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::slowlog::Entry;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![spec("slowlog", -2, ADMIN, 0, slowlog)]
}

const HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

/// SLOWLOG GET's count when none is given.
const DEFAULT_COUNT: usize = 10;

/// SLOWLOG's subcommands with Redis 7.0's arities (GET's own check then refuses more than
/// three arguments).
const SUBCOMMANDS: &[(&str, i32)] = &[("get", -2), ("len", 2), ("reset", 2), ("help", 2)];

fn slowlog<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let log = &ctx.core.slowlog;
    match subcommand("slowlog", SUBCOMMANDS, ctx.arg(1), ctx.args.len())? {
        "get" => {
            if ctx.args.len() > 3 {
                return Err(subcommand_syntax("SLOWLOG", ctx.arg(1)));
            }
            let count = match ctx.args.get(2) {
                None => Some(DEFAULT_COUNT),
                Some(arg) => count_arg(arg)?,
            };
            Ok(Frame::Array(
                log.latest(count).into_iter().map(entry_frame).collect(),
            ))
        }
        "len" => Ok(Frame::Integer(log.len() as i64)),
        "reset" => {
            log.reset();
            Ok(ok())
        }
        _ => Ok(help_reply(HELP)),
    }
}

/// GET's count: -1 for every entry, else at least 0.
fn count_arg(arg: &[u8]) -> CmdResult<Option<usize>> {
    let count = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|&n| n >= -1)
        .ok_or_else(|| CmdError::err("count should be greater than or equal to -1"))?;
    Ok(usize::try_from(count).ok())
}

fn entry_frame(entry: Entry) -> Frame {
    Frame::Array(vec![
        Frame::Integer(entry.id as i64),
        Frame::Integer(entry.unix_secs as i64),
        Frame::Integer(entry.micros as i64),
        bulk_array(entry.args),
        Frame::Bulk(entry.client.into_bytes()),
        Frame::Bulk(entry.name),
    ])
}
