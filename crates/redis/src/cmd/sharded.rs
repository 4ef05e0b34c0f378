//! Sharded pub/sub (Redis 7.0): SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE, and the PUBSUB
//! command, whose SHARDCHANNELS and SHARDNUMSUB report on them.
//!
//! Shard channels are a namespace of their own: a SUBSCRIBE to `a` does not hear an
//! SPUBLISH to `a`, patterns never match them, and the counts in SSUBSCRIBE's and
//! SUNSUBSCRIBE's confirmations are of shard channels alone, as a standalone Redis 7.0
//! counts them.

use engine::Engine;

use super::server::{confirm, finish_replies};
use super::{Ctx, PUBSUB, Spec, bulk_array, help_reply, spec, subcommand, subcommand_syntax};
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::session::Session;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        // Not PUBSUB-flagged: a subscribed RESP2 connection may not publish.
        spec("spublish", 3, 0, 0, spublish),
        spec("ssubscribe", -2, PUBSUB, 0, ssubscribe),
        spec("sunsubscribe", -1, PUBSUB, 0, sunsubscribe),
        spec("pubsub", -2, 0, 0, pubsub),
    ]
}

const PUBSUB_HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
];

/// PUBSUB's subcommands with Redis 7.0's arities (the command's name counted).
const PUBSUB_SUBCOMMANDS: &[(&str, i32)] = &[
    ("channels", -2),
    ("numpat", 2),
    ("numsub", -2),
    ("shardchannels", -2),
    ("shardnumsub", -2),
    ("help", 2),
];

/// SPUBLISH shardchannel message: the number of clients that received it.
fn spublish<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(
        ctx.core.broker.publish_shard(ctx.arg(1), ctx.arg(2)),
    ))
}

/// The number of shard channels `session` is in: what its confirmations count.
fn shard_count(session: &Session) -> i64 {
    session.shard_channels.len() as i64
}

/// SSUBSCRIBE shardchannel [shardchannel ...]: one confirmation per channel. Redis refuses
/// it inside EXEC (a "deny blocking" client), unlike SUBSCRIBE.
fn ssubscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.session.in_exec {
        return Err(CmdError::err(
            "SSUBSCRIBE isn't allowed for a DENY BLOCKING client",
        ));
    }
    let mut replies = Vec::with_capacity(ctx.args.len() - 1);
    for name in &ctx.args[1..] {
        if ctx.session.shard_channels.insert(name.clone()) {
            ctx.core
                .broker
                .subscribe_shard(ctx.session.id, name, &ctx.session.push);
        }
        replies.push(confirm(
            "ssubscribe",
            Some(name.clone()),
            shard_count(ctx.session),
        ));
    }
    finish_replies(ctx, replies)
}

/// SUNSUBSCRIBE [shardchannel ...]: the named channels, or all of them; with none to
/// leave, a single confirmation with a null channel.
fn sunsubscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let names: Vec<Vec<u8>> = if ctx.args.len() > 1 {
        ctx.args[1..].to_vec()
    } else {
        ctx.session.shard_channels.iter().cloned().collect()
    };
    if names.is_empty() {
        return Ok(confirm("sunsubscribe", None, shard_count(ctx.session)));
    }
    let mut replies = Vec::with_capacity(names.len());
    for name in names {
        if ctx.session.shard_channels.remove(&name) {
            ctx.core.broker.unsubscribe_shard(ctx.session.id, &name);
        }
        replies.push(confirm(
            "sunsubscribe",
            Some(name),
            shard_count(ctx.session),
        ));
    }
    finish_replies(ctx, replies)
}

/// Leaves every shard channel without confirmations (RESET).
pub(super) fn leave_all<E: Engine>(core: &Core<E>, session: &mut Session) {
    for name in std::mem::take(&mut session.shard_channels) {
        core.broker.unsubscribe_shard(session.id, &name);
    }
}

/// PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP.
fn pubsub<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let broker = &ctx.core.broker;
    let name = subcommand("pubsub", PUBSUB_SUBCOMMANDS, ctx.arg(1), ctx.args.len())?;
    let pattern = ctx.args.get(2).map(Vec::as_slice);
    match name {
        "channels" | "shardchannels" if ctx.args.len() > 3 => {
            Err(subcommand_syntax("PUBSUB", ctx.arg(1)))
        }
        "channels" => Ok(bulk_array(broker.channels(pattern))),
        "shardchannels" => Ok(bulk_array(broker.shard_channels(pattern))),
        "numsub" | "shardnumsub" => {
            let mut out = Vec::with_capacity(2 * (ctx.args.len() - 2));
            for channel in &ctx.args[2..] {
                let count = if name == "numsub" {
                    broker.num_subscribers(channel)
                } else {
                    broker.num_shard_subscribers(channel)
                };
                out.push(Frame::Bulk(channel.clone()));
                out.push(Frame::Integer(count));
            }
            Ok(Frame::Array(out))
        }
        "numpat" => Ok(Frame::Integer(broker.num_patterns())),
        _ => Ok(help_reply(PUBSUB_HELP)),
    }
}
