//! Replication and cluster commands, answered as a standalone Redis 7.0 primary without
//! replicas answers them: docdb serves one node with its own durable store, so CLUSTER and
//! its connection modes are disabled, REPLICAOF accepts only `NO ONE`, and FAILOVER has
//! nobody to hand over to.

use engine::Engine;

use super::{ADMIN, Ctx, Spec, is, spec, subcommand};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("cluster", -2, 0, 0, cluster),
        spec("readonly", 1, 0, 0, cluster_mode),
        spec("readwrite", 1, 0, 0, cluster_mode),
        spec("asking", 1, 0, 0, cluster_mode),
        spec("replicaof", 3, ADMIN, 0, replicaof),
        spec("slaveof", 3, ADMIN, 0, replicaof),
        spec("failover", -1, ADMIN, 0, failover),
    ]
}

fn disabled() -> CmdError {
    CmdError::err("This instance has cluster support disabled")
}

/// CLUSTER's subcommands with their Redis 7.0 arities: each is refused as Redis refuses it
/// without cluster support, after the same arity check.
const CLUSTER_SUBCOMMANDS: &[(&str, i32)] = &[
    ("addslots", -3),
    ("addslotsrange", -4),
    ("bumpepoch", 2),
    ("count-failure-reports", 3),
    ("countkeysinslot", 3),
    ("delslots", -3),
    ("delslotsrange", -4),
    ("failover", -2),
    ("flushslots", 2),
    ("forget", 3),
    ("getkeysinslot", 4),
    ("help", 2),
    ("info", 2),
    ("keyslot", 3),
    ("links", 2),
    ("meet", -4),
    ("myid", 2),
    ("nodes", 2),
    ("replicas", 3),
    ("replicate", 3),
    ("reset", -2),
    ("saveconfig", 2),
    ("set-config-epoch", 3),
    ("setslot", -4),
    ("shards", 2),
    ("slaves", 3),
    ("slots", 2),
];

fn cluster<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    subcommand("cluster", CLUSTER_SUBCOMMANDS, ctx.arg(1), ctx.args.len())?;
    Err(disabled())
}

/// READONLY, READWRITE and ASKING: connection modes of cluster replicas.
fn cluster_mode<E: Engine>(_ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Err(disabled())
}

/// REPLICAOF NO ONE succeeds (docdb is a primary already); following a primary is refused
/// once the port parses, as Redis would have checked it.
fn replicaof<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if is(ctx.arg(1), "no") && is(ctx.arg(2), "one") {
        return Ok(Frame::Simple("OK".into()));
    }
    if int_arg(ctx.arg(2)).is_err() {
        return Err(CmdError::err("Invalid master port"));
    }
    Err(CmdError::err(
        "docdb does not replicate from a Redis primary: only REPLICAOF NO ONE is accepted",
    ))
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], parsed as Redis parses it; with no
/// replica, nothing can fail over and no failover is ever in progress.
fn failover<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = &ctx.args[1..];
    let (mut to, mut abort, mut timeout) = (false, false, false);
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if is(arg, "to") && !to && i + 2 < args.len() {
            int_arg(&args[i + 2])?;
            to = true;
            i += 3;
        } else if is(arg, "timeout") && !timeout && i + 1 < args.len() {
            if int_arg(&args[i + 1])? <= 0 {
                return Err(CmdError::err("FAILOVER timeout must be greater than 0"));
            }
            timeout = true;
            i += 2;
        } else if is(arg, "force") {
            i += 1;
        } else if is(arg, "abort") && !abort {
            abort = true;
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    if abort && (to || timeout) {
        return Err(CmdError::Syntax);
    }
    Err(CmdError::err(if abort {
        "No failover in progress."
    } else {
        "FAILOVER requires connected replicas."
    }))
}
