//! EVAL, EVALSHA, their `_RO` forms and SCRIPT: a Lua script runs inside one
//! `DocDb::write_now`, as EXEC's commands do, so no other client's write runs in between and
//! its writes land together; the commands it calls run through [`script_call`].

use dockv::HybridTime;
use engine::Engine;

use super::{Ctx, READONLY, Spec, WRITE, is, ok, spec};
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Protocol};
use crate::glob;
use crate::number::int_arg;
use crate::rdb;
use crate::script::functions::{Libraries, RestorePolicy};
use crate::script::{self, functions};
use crate::session::Session;
use crate::store::IterSlot;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("eval", -3, WRITE, 0, eval),
        spec("evalsha", -3, WRITE, 0, evalsha),
        spec("eval_ro", -3, READONLY, 0, eval_ro),
        spec("evalsha_ro", -3, READONLY, 0, evalsha_ro),
        spec("script", -2, 0, 0, script_command),
        spec("fcall", -3, WRITE, 0, fcall),
        spec("fcall_ro", -3, READONLY, 0, fcall_ro),
        spec("function", -2, 0, 0, function_command),
    ]
}

/// Where each function library's code is kept (a DocDB metadata record per library), so
/// that libraries outlive a restart as Redis's do in its RDB and AOF files.
const LIBRARY_PREFIX: &[u8] = b"redis.function.";

/// Commands a script may not call (Redis 7.0's `noscript` flag).
/// Commands whose subcommands, HELP aside, scripts may not call (Redis 7.0 flags each
/// of them `noscript`).
const SUBCOMMANDS_NOT_IN_SCRIPTS: &[&str] = &["client", "config", "function", "latency", "module"];

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
    matches!(name, "exec" | "eval" | "evalsha" | "fcall")
}

/// Whether `name` (a command, then its first argument) may run while a script is busy, as
/// Redis's `allow-busy` commands may.
pub fn allowed_while_busy(name: &str, first: Option<&[u8]>) -> bool {
    match name {
        "auth" | "hello" | "shutdown" | "quit" | "reset" => true,
        "script" | "function" => first.is_some_and(|sub| is(sub, "kill")),
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
    let numkeys = key_count(ctx)?;
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
    let read_only = read_only || script.flags.no_writes;
    in_script(ctx, numkeys, read_only, |keys, argv, call| {
        script::run(&core.scripts, &script, keys, argv, call)
    })
}

/// `FCALL function numkeys key... arg...`.
fn run_function<E: Engine>(ctx: &mut Ctx<'_, '_, E>, read_only: bool) -> CmdResult<Frame> {
    let numkeys = key_count(ctx)?;
    let core = ctx.core;
    let name = String::from_utf8_lossy(ctx.arg(1)).into_owned();
    let Some((_, function)) = core.scripts.libraries.function(&name) else {
        return Err(CmdError::err("Function not found"));
    };
    if read_only && !function.no_writes() {
        return Err(CmdError::err(
            "Can not execute a script with write flag using *_ro command.",
        ));
    }
    let read_only = read_only || function.no_writes();
    in_script(ctx, numkeys, read_only, |keys, argv, call| {
        script::call_function(&core.scripts, &name, keys, argv, call)
    })
}

fn fcall<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_function(ctx, false)
}

fn fcall_ro<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    run_function(ctx, true)
}

/// The `numkeys` argument of EVAL and FCALL, checked as Redis checks it.
fn key_count<E: Engine>(ctx: &Ctx<'_, '_, E>) -> CmdResult<usize> {
    let numkeys = int_arg(ctx.arg(2))?;
    if numkeys > ctx.args.len() as i64 - 3 {
        return Err(CmdError::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    if numkeys < 0 {
        return Err(CmdError::err("Number of keys can't be negative"));
    }
    Ok(numkeys as usize)
}

/// Runs a script (`run`, given its keys, its arguments and how it calls commands) as EXEC
/// runs its commands: inside one `write_now`, its commands checked by [`script_call`].
fn in_script<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    numkeys: usize,
    read_only: bool,
    run: impl FnOnce(&[Vec<u8>], &[Vec<u8>], &mut script::CallFn<'_>) -> Frame,
) -> CmdResult<Frame> {
    let core = ctx.core;
    let (keys, argv) = ctx.args[3..].split_at(numkeys);
    // Under DOCDB.ASOF (EVAL_RO only), the script's reads are as of that time too.
    let as_of = ctx.as_of;
    let read_only = read_only || as_of.is_some();
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
        let reply = run(keys, argv, &mut call);
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
    if NOT_IN_SCRIPTS.contains(&spec.name)
        || (SUBCOMMANDS_NOT_IN_SCRIPTS.contains(&spec.name)
            && !args.get(1).is_some_and(|sub| super::is(sub, "help")))
    {
        return refused("This Redis command is not allowed from script");
    }
    if let Some(text) = super::acl::check_script(core, session, spec, args) {
        return refused(text);
    }
    if spec.flags & WRITE != 0 {
        if called.read_only {
            return refused("Write commands are not allowed from read-only scripts.");
        }
        *wrote = true;
        core.scripts.note_write();
        session
            .exec_written
            .extend(super::keys::may_ready(core, args));
    }
    let outer = std::mem::replace(&mut session.protocol, called.protocol);
    let mut ctx = Ctx::new(core, iters, session, args);
    ctx.as_of = called.as_of;
    let started = std::time::Instant::now();
    let result = (spec.run)(&mut ctx);
    let elapsed = started.elapsed();
    core.metrics.record(spec.id, elapsed, result.is_err());
    super::track(
        core,
        session,
        spec,
        args,
        result.is_ok(),
        called.as_of.is_some(),
    );
    // Redis logs a script's commands as run by its Lua client, which has no address.
    core.observe_command(args, elapsed, || crate::slowlog::Caller {
        client: "?:0".into(),
        name: None,
    });
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
        return Ok(super::help_reply(HELP));
    }
    if is(sub, "debug") {
        return Err(CmdError::err(
            "SCRIPT DEBUG is not supported: docdb has no Lua debugger",
        ));
    }
    Err(super::unknown_subcommand(sub, "script"))
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

/// `FUNCTION LOAD|DELETE|FLUSH|LIST|STATS|KILL|DUMP|RESTORE|HELP`.
fn function_command<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = ctx.arg(1);
    let core = ctx.core;
    let libraries = &core.scripts.libraries;
    let arity = |name: &str| {
        CmdError::err(format!(
            "wrong number of arguments for 'function|{name}' command"
        ))
    };
    if is(sub, "load") {
        let (replace, code) = match ctx.args.get(2..) {
            Some([code]) => (false, code),
            Some([flag, code]) if is(flag, "replace") => (true, code),
            Some([_, _]) => {
                return Err(CmdError::err(format!(
                    "Unknown option given: {}",
                    String::from_utf8_lossy(ctx.arg(2))
                )));
            }
            _ => return Err(arity("load")),
        };
        let name =
            script::load_library(&core.scripts, code.clone(), replace).map_err(CmdError::Err)?;
        let meta = [LIBRARY_PREFIX, name.as_bytes()].concat();
        core.store.docdb().put_meta(&meta, Some(code))?;
        return Ok(Frame::Bulk(name.into_bytes()));
    }
    if is(sub, "delete") {
        let [_, _, name] = ctx.args else {
            return Err(arity("delete"));
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if !libraries.delete(&name) {
            return Err(CmdError::err("Library not found"));
        }
        let meta = [LIBRARY_PREFIX, name.as_bytes()].concat();
        core.store.docdb().put_meta(&meta, None)?;
        return Ok(ok());
    }
    if is(sub, "flush") {
        if ctx.args.len() > 3
            || (ctx.args.len() == 3 && !is(ctx.arg(2), "sync") && !is(ctx.arg(2), "async"))
        {
            return Err(CmdError::err(
                "FUNCTION FLUSH only supports SYNC|ASYNC option",
            ));
        }
        for library in libraries.all() {
            let meta = [LIBRARY_PREFIX, library.name.as_bytes()].concat();
            core.store.docdb().put_meta(&meta, None)?;
        }
        libraries.flush();
        return Ok(ok());
    }
    if is(sub, "list") {
        return function_list(ctx);
    }
    if is(sub, "stats") {
        let bulk = |s: &str| Frame::Bulk(s.as_bytes().to_vec());
        let all = libraries.all();
        let functions: usize = all.iter().map(|l| l.functions.len()).sum();
        let lua = Frame::Map(vec![
            (bulk("libraries_count"), Frame::Integer(all.len() as i64)),
            (bulk("functions_count"), Frame::Integer(functions as i64)),
        ]);
        return Ok(Frame::Map(vec![
            (bulk("running_script"), Frame::Null),
            (bulk("engines"), Frame::Map(vec![(bulk("LUA"), lua)])),
        ]));
    }
    if is(sub, "kill") {
        return core.scripts.kill().map(|()| ok()).map_err(CmdError::Err);
    }
    if is(sub, "dump") {
        if ctx.args.len() != 2 {
            return Err(arity("dump"));
        }
        let all = libraries.all();
        let payload = rdb::encode_functions(all.iter().map(|l| l.code.as_slice()));
        return Ok(Frame::Bulk(payload));
    }
    if is(sub, "restore") {
        return function_restore(ctx);
    }
    if is(sub, "help") && ctx.args.len() == 2 {
        return Ok(super::help_reply(FUNCTION_HELP));
    }
    Err(super::unknown_subcommand(sub, "function"))
}

/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]`: the libraries of a FUNCTION DUMP
/// payload, all or none, kept as FUNCTION LOAD keeps them.
fn function_restore<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let core = ctx.core;
    let policy = match ctx.args.get(3..) {
        _ if ctx.args.len() < 3 => {
            return Err(super::wrong_arity("function|restore"));
        }
        Some([]) | None => RestorePolicy::Append,
        Some([word]) => RestorePolicy::parse(word).ok_or_else(|| {
            CmdError::err(
                "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            )
        })?,
        Some(_) => return Err(super::subcommand_syntax("FUNCTION", ctx.arg(1))),
    };
    let codes = rdb::decode_functions(ctx.arg(2)).map_err(CmdError::err)?;
    // Checked against each other first, as Redis loads them into a set of their own.
    let restored = Libraries::default();
    for code in codes {
        let library = script::compile_library(&core.scripts, code).map_err(CmdError::Err)?;
        restored.add(library, false).map_err(CmdError::Err)?;
    }
    let restored = restored.all();
    let docdb = core.store.docdb();
    let gone = core
        .scripts
        .libraries
        .restore(restored.clone(), policy)
        .map_err(CmdError::Err)?;
    for name in gone {
        docdb.put_meta(&[LIBRARY_PREFIX, name.as_bytes()].concat(), None)?;
    }
    for library in &restored {
        let meta = [LIBRARY_PREFIX, library.name.as_bytes()].concat();
        docdb.put_meta(&meta, Some(&library.code))?;
    }
    Ok(ok())
}

/// FUNCTION HELP, as Redis 7.0 gives it.
const FUNCTION_HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]`.
fn function_list<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (mut pattern, mut with_code) = (None, false);
    let mut i = 2;
    while i < ctx.args.len() {
        let arg = ctx.arg(i);
        if is(arg, "withcode") {
            with_code = true;
        } else if is(arg, "libraryname") {
            i += 1;
            let Some(p) = ctx.args.get(i) else {
                return Err(CmdError::err("library name argument was not given"));
            };
            pattern = Some(p.clone());
        } else {
            return Err(CmdError::err(format!(
                "Unknown argument {}",
                String::from_utf8_lossy(arg)
            )));
        }
        i += 1;
    }
    let entries = ctx
        .core
        .scripts
        .libraries
        .all()
        .iter()
        .filter(|l| {
            pattern
                .as_ref()
                .is_none_or(|p| glob::matches(p, l.name.as_bytes()))
        })
        .map(|l| functions::list_entry(l, with_code))
        .collect();
    Ok(Frame::Array(entries))
}

/// Loads the function libraries kept in `core`'s database (at startup).
pub fn restore_libraries<E: Engine>(core: &Core<E>) {
    let kept = match core.store.docdb().scan_meta(LIBRARY_PREFIX) {
        Ok(kept) => kept,
        Err(e) => {
            tracing::error!(error = %e, "reading the function libraries failed");
            return;
        }
    };
    for (name, code) in kept {
        if let Err(e) = script::load_library(&core.scripts, code, true) {
            let name = String::from_utf8_lossy(&name).into_owned();
            tracing::error!(library = %name, error = %e, "a kept function library failed to load");
        }
    }
}
