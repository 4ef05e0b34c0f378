//! SLOWLOG GET|LEN|RESET|HELP over [`crate::slowlog::SlowLog`].

use engine::Engine;

use super::{
    ADMIN, Ctx, Spec, bulk_array, help_reply, is, ok, spec, subcommand_syntax, wrong_arity,
};
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

fn slowlog<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = ctx.arg(1);
    let argc = ctx.args.len();
    let log = &ctx.core.slowlog;
    // Redis's table gives LEN, RESET and HELP exactly two arguments and GET at least two;
    // GET's own check then refuses more than three.
    let fixed = |name: &str| {
        if argc == 2 {
            Ok(())
        } else {
            Err(wrong_arity(&format!("slowlog|{name}")))
        }
    };
    if is(sub, "get") {
        if argc > 3 {
            return Err(subcommand_syntax("SLOWLOG", sub));
        }
        let count = match ctx.args.get(2) {
            None => Some(DEFAULT_COUNT),
            Some(arg) => count_arg(arg)?,
        };
        Ok(Frame::Array(
            log.latest(count).into_iter().map(entry_frame).collect(),
        ))
    } else if is(sub, "len") {
        fixed("len")?;
        Ok(Frame::Integer(log.len() as i64))
    } else if is(sub, "reset") {
        fixed("reset")?;
        log.reset();
        Ok(ok())
    } else if is(sub, "help") {
        fixed("help")?;
        Ok(help_reply(HELP))
    } else {
        Err(CmdError::err(format!(
            "unknown subcommand '{}'. Try SLOWLOG HELP.",
            String::from_utf8_lossy(sub)
        )))
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
