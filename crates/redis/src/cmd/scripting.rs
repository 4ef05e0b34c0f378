//! EVAL, EVALSHA, their `_RO` forms and SCRIPT: a Lua script runs inside one
//! `DocDb::write_now`, as EXEC's commands do, so no other client's write runs in between and
//! its writes land together; the commands it calls run through [`script_call`].

use dockv::HybridTime;
use engine::Engine;

use super::{Ctx, READONLY, Spec, WRITE, is, ok, spec};
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Protocol};
use crate::number::int_arg;
use crate::script;
use crate::session::Session;
use crate::store::IterSlot;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("eval", -3, WRITE, 0, eval),
        spec("evalsha", -3, WRITE, 0, evalsha),
        spec("eval_ro", -3, READONLY, 0, eval_ro),
        spec("evalsha_ro", -3, READONLY, 0, evalsha_ro),
        spec("script", -2, 0, 0, script_command),
    ]
}

/// Commands a script may not call (Redis 7.0's `noscript` flag).
const NOT_IN_SCRIPTS: &[&str] = &[
    "auth",
    "bgrewriteaof",
    "bgsave",
    "blmove",
    "blpop",
    "brpop",
    "brpoplpush",
    "bzpopmax",
    "bzpopmin",
    "debug",
    "discard",
    "eval",
    "eval_ro",
    "evalsha",
    "evalsha_ro",
    "exec",
    "failover",
    "fcall",
    "fcall_ro",
    "hello",
    "monitor",
    "multi",
    "psubscribe",
    "psync",
    "punsubscribe",
    "quit",
    "replconf",
    "replicaof",
    "reset",
    "role",
    "save",
    "shutdown",
    "slaveof",
    "ssubscribe",
    "subscribe",
    "sunsubscribe",
    "sync",
    "unsubscribe",
    "unwatch",
    "wait",
    "watch",
    "script",
];

/// Whether `name` runs other commands, whose written keys it collects in
/// `Session::exec_written` (for the clients blocked on them).
pub fn runs_commands(name: &str) -> bool {
    matches!(name, "exec" | "eval" | "evalsha")
}

/// Whether `name` (a command, then its first argument) may run while a script is busy, as
/// Redis's `allow-busy` commands may.
pub fn allowed_while_busy(name: &str, first: Option<&[u8]>) -> bool {
    match name {
        "auth" | "hello" | "shutdown" | "quit" => true,
        "script" => first.is_some_and(|sub| is(sub, "kill")),
        _ => false,
    }
}

fn eval<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_script(ctx, false, false)
}

fn evalsha<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_script(ctx, true, false)
}

fn eval_ro<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_script(ctx, false, true)
}

fn evalsha_ro<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_script(ctx, true, true)
}

/// `EVAL script numkeys key... arg...` (or the script's SHA-1 for EVALSHA).
fn run_script<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    by_sha: bool,
    read_only: bool,
) -> CmdResult<Frame> {
    let numkeys = int_arg(ctx.arg(2))?;
    let given = ctx.args.len() as i64 - 3;
    if numkeys > given {
        return Err(CmdError::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    if numkeys < 0 {
        return Err(CmdError::err("Number of keys can't be negative"));
    }
    let core = ctx.core;
    let script = if by_sha {
        core.scripts
            .get(ctx.arg(1))
            .ok_or_else(|| CmdError::Err("NOSCRIPT No matching script. Please use EVAL.".into()))?
    } else {
        match script::load(&core.scripts, ctx.arg(1).to_vec()) {
            Ok(script) => script,
            Err(reply) => return Ok(reply),
        }
    };
    let split = 3 + numkeys as usize;
    let (keys, argv) = ctx.args[3..].split_at(split - 3);
    // Under DOCDB.ASOF (EVAL_RO only), the script's reads are as of that time too.
    let as_of = ctx.as_of;
    let read_only = read_only || script.flags.no_writes || as_of.is_some();
    let iters = ctx.iters;
    let session = &mut *ctx.session;
    let (db, db_name, protocol) = (session.db, session.db_name.clone(), session.protocol);
    let mut wrote = false;
    let reply = core.store.write_together(|_| {
        session.in_exec = true;
        let mut call = |args: &[Vec<u8>], protocol: Protocol| {
            let called = Called {
                protocol,
                read_only,
                as_of,
            };
            script_call(core, &mut *session, iters, args, called, &mut wrote)
        };
        let reply = script::run(&core.scripts, &script, keys, argv, &mut call);
        session.in_exec = false;
        reply
    });
    // SELECT inside a script changes the database for the script only.
    (session.db, session.db_name, session.protocol) = (db, db_name, protocol);
    if wrote {
        // Counted once landed (the commands inside were not: see `dispatch`).
        session.last_write = core.count_write();
    }
    reply
}

/// How a script's commands run.
#[derive(Clone, Copy)]
struct Called {
    /// The protocol the script chose (`redis.setresp`).
    protocol: Protocol,
    /// Write commands are refused (EVAL_RO, `#!lua flags=no-writes`, DOCDB.ASOF).
    read_only: bool,
    /// DOCDB.ASOF's read time.
    as_of: Option<HybridTime>,
}

/// One command a script calls (`scriptCall`): checked as Redis checks it, then run.
fn script_call<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    iters: &IterSlot<'c, E>,
    args: &[Vec<u8>],
    called: Called,
    wrote: &mut bool,
) -> Frame {
    let refused = |text: &str| Frame::Error(format!("ERR {text}"));
    let Some(spec) = core.table.get(&args[0]) else {
        return refused("Unknown Redis command called from script");
    };
    if !spec.arity_ok(args.len()) {
        return refused("Wrong number of args calling Redis command from script");
    }
    if NOT_IN_SCRIPTS.contains(&spec.name) {
        return refused("This Redis command is not allowed from script");
    }
    if spec.flags & WRITE != 0 {
        if called.read_only {
            return refused("Write commands are not allowed from read-only scripts.");
        }
        *wrote = true;
        core.scripts.note_write();
        session.exec_written.extend_from_slice(&args[1..]);
    }
    let outer = std::mem::replace(&mut session.protocol, called.protocol);
    let mut ctx = Ctx::new(core, iters, session, args);
    ctx.as_of = called.as_of;
    let started = std::time::Instant::now();
    let result = (spec.run)(&mut ctx);
    core.metrics
        .record(spec.id, started.elapsed(), result.is_err());
    session.protocol = outer;
    result.unwrap_or_else(|e| e.to_frame())
}

/// `SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP`.
fn script_command<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = ctx.arg(1);
    let argc = ctx.args.len();
    let scripts = &ctx.core.scripts;
    let arity = |name: &str| {
        CmdError::err(format!(
            "wrong number of arguments for 'script|{name}' command"
        ))
    };
    if is(sub, "load") {
        if argc != 3 {
            return Err(arity("load"));
        }
        return Ok(match script::load(scripts, ctx.arg(2).to_vec()) {
            Ok(script) => Frame::Bulk(script.sha.clone().into_bytes()),
            Err(reply) => reply,
        });
    }
    if is(sub, "exists") {
        if argc < 3 {
            return Err(arity("exists"));
        }
        let found = ctx.args[2..]
            .iter()
            .map(|sha| Frame::Integer(i64::from(scripts.get(sha).is_some())))
            .collect();
        return Ok(Frame::Array(found));
    }
    if is(sub, "flush") {
        if argc > 3 || (argc == 3 && !is(ctx.arg(2), "sync") && !is(ctx.arg(2), "async")) {
            return Err(CmdError::err("SCRIPT FLUSH only support SYNC|ASYNC option"));
        }
        scripts.flush();
        return Ok(ok());
    }
    if is(sub, "kill") {
        if argc != 2 {
            return Err(arity("kill"));
        }
        return scripts.kill().map(|()| ok()).map_err(CmdError::Err);
    }
    if is(sub, "help") && argc == 2 {
        return Ok(Frame::Array(
            HELP.iter()
                .map(|line| Frame::Simple(line.to_string()))
                .collect(),
        ));
    }
    if is(sub, "debug") {
        return Err(CmdError::err(
            "SCRIPT DEBUG is not supported: docdb has no Lua debugger",
        ));
    }
    Err(CmdError::err(format!(
        "unknown subcommand '{}'. Try SCRIPT HELP.",
        String::from_utf8_lossy(sub)
    )))
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];
