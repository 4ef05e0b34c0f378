//! Blocking pops: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN, BZPOPMAX, BLMPOP, BZMPOP.
//!
//! Each first tries its non-blocking form (LPOP, RPOP, RPOPLPUSH, LMOVE, ZPOPMIN, ZPOPMAX,
//! LMPOP, ZMPOP) on its keys in order. When all are empty the client blocks (see
//! [`crate::blocking`]), unless it runs inside EXEC, where Redis answers at once as if the
//! timeout had passed.
//! After every write command the connection that ran it serves the clients blocked on the
//! keys it names ([`serve_after`]).

use std::time::{Duration, Instant};

use engine::Engine;

use super::{BLOCKS, Ctx, MultiPop, Spec, WRITE, is, spec};
use crate::blocking::Served;
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::{int_arg, parse_f64};
use crate::pubsub::Subscriber;
use crate::session::Session;
use crate::store::IterSlot;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("blpop", -3, WRITE | BLOCKS, 1, blocking),
        spec("brpop", -3, WRITE | BLOCKS, 1, blocking),
        spec("brpoplpush", 4, WRITE | BLOCKS, 1, blocking),
        spec("blmove", 6, WRITE | BLOCKS, 1, blocking),
        spec("bzpopmin", -3, WRITE | BLOCKS, 1, blocking),
        spec("bzpopmax", -3, WRITE | BLOCKS, 1, blocking),
        spec("blmpop", -5, WRITE | BLOCKS, 3, blocking),
        spec("bzmpop", -5, WRITE | BLOCKS, 3, blocking),
        spec("wait", 3, BLOCKS, 0, wait),
    ]
}

/// `WAIT numreplicas timeout`: docdb has no replicas, so, as a Redis without any, it
/// answers 0 at once when asked for none (or inside a transaction), and otherwise blocks
/// until the timeout (0: forever) and then answers 0.
fn wait<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    // As in Redis, the timeout is read first.
    let timeout = int_arg(ctx.arg(2))
        .map_err(|_| CmdError::err("timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::err("timeout is negative"));
    }
    let replicas = int_arg(ctx.arg(1))?;
    if replicas <= 0 || ctx.session.in_exec {
        return Ok(Frame::Integer(0));
    }
    let deadline = match timeout {
        0 => None,
        ms => Instant::now().checked_add(Duration::from_millis(ms as u64)),
    };
    let wait = ctx.core.blocking.lock().block(
        ctx.session,
        ctx.args.to_vec(),
        Vec::new(),
        deadline,
        Frame::Integer(0),
    );
    ctx.session.blocked = Some(wait);
    // Not sent: the connection's reply is the wait's, at its deadline.
    Ok(Frame::Integer(0))
}

/// BLMPOP and BZMPOP: `timeout numkeys key... END [COUNT n]`.
fn multi_pop(request: &[Vec<u8>]) -> Option<CmdResult<MultiPop>> {
    let ends = match &request[0] {
        name if is(name, "blmpop") => ["left", "right"],
        name if is(name, "bzmpop") => ["min", "max"],
        _ => return None,
    };
    Some(MultiPop::parse(request, 2, ends))
}

/// The timeout argument (seconds, fractions allowed) as Redis 7.0 reads it: `None` waits
/// for ever (0). Redis rounds up to milliseconds and casts to a 64-bit integer, so values
/// beyond that range (infinity too) come out negative.
fn timeout_arg(arg: &[u8]) -> CmdResult<Option<Duration>> {
    let secs =
        parse_f64(arg).ok_or_else(|| CmdError::err("timeout is not a float or out of range"))?;
    let ms = (secs * 1000.0).ceil();
    if !(0.0..(i64::MAX as f64)).contains(&ms) {
        return Err(CmdError::err("timeout is negative"));
    }
    Ok((ms > 0.0).then(|| Duration::from_millis(ms as u64)))
}

/// The keys a blocking request waits on: a move's source, every key of a pop, or the keys
/// of a BLMPOP/BZMPOP (`multi`, its parsed arguments).
fn waited_keys(request: &[Vec<u8>], multi: Option<&MultiPop>) -> Vec<Vec<u8>> {
    if let Some(multi) = multi {
        request[multi.keys.clone()].to_vec()
    } else if is(&request[0], "brpoplpush") || is(&request[0], "blmove") {
        vec![request[1].clone()]
    } else {
        request[1..request.len() - 1].to_vec()
    }
}

fn blocking<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let multi = multi_pop(ctx.args);
    let timeout_at = match multi {
        Some(_) => 1,
        None => ctx.args.len() - 1,
    };
    // The timeout is checked first, as in Redis, then the other arguments.
    let timeout = timeout_arg(&ctx.args[timeout_at])?;
    let multi = multi.transpose()?;
    if is(ctx.arg(0), "blmove") {
        for side in &ctx.args[3..5] {
            if !is(side, "left") && !is(side, "right") {
                return Err(CmdError::Syntax);
            }
        }
    }
    let keys = waited_keys(ctx.args, multi.as_ref());
    let request = ctx.args.to_vec();
    block_unless_ready(ctx, request, keys, timeout)
}

/// Answers `request` now if its non-blocking form has something ([`attempt`]); otherwise
/// blocks the client on `keys` until a write to one of them lets the form answer, or until
/// `timeout` (`None`: for ever) passes, when it gets a null array. Inside EXEC it answers the
/// null array at once, as Redis does. XREAD and XREADGROUP pass their non-blocking form
/// (BLOCK left out, `$` resolved to the stream's last id) as `request`.
pub(super) fn block_unless_ready<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    request: Vec<Vec<u8>>,
    keys: Vec<Vec<u8>>,
    timeout: Option<Duration>,
) -> CmdResult<Frame> {
    let (core, iters) = (ctx.core, ctx.iters);
    let session = &mut *ctx.session;
    // Under the writer lock: a push either lands before this attempt or serves the block.
    core.store
        .docdb()
        .write_now(|_| {
            Ok(match attempt(core, session, iters, &request, &keys) {
                Ok(None) if !session.in_exec => {
                    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
                    let wait = core.blocking.lock().block(
                        session,
                        request,
                        keys,
                        deadline,
                        Frame::NullArray,
                    );
                    session.blocked = Some(wait);
                    // Not sent: the connection waits for the reply a push brings.
                    Ok(Frame::NullArray)
                }
                Ok(None) => Ok(Frame::NullArray),
                Ok(Some(reply)) => Ok(reply),
                Err(e) => Err(e),
            })
        })
        .map_err(CmdError::from)?
}

/// Runs the non-blocking form of `request` on `keys` (in that order) until one gives
/// something: its reply then, `None` when all are empty. A key of the wrong type is an error,
/// as in Redis.
fn attempt<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    iters: &IterSlot<'c, E>,
    request: &[Vec<u8>],
    keys: &[Vec<u8>],
) -> CmdResult<Option<Frame>> {
    let name = &request[0];
    if is(name, "xread") || is(name, "xreadgroup") {
        // Kept in its non-blocking form: its handler's null reply means nothing new yet.
        return Ok(match call(core, session, iters, request) {
            Ok(Frame::NullArray | Frame::Null) => None,
            // A key that is no longer a stream leaves XREAD blocked, as in Redis 7.0.
            Err(CmdError::WrongType) if is(name, "xread") => None,
            Ok(reply) => Some(reply),
            Err(e) => return Err(e),
        });
    }
    if let Some(args) = multi_pop(request) {
        // LMPOP or ZMPOP on the keys given, with the request's end and count.
        let args = args?;
        let mut inner = vec![name[1..].to_vec(), keys.len().to_string().into_bytes()];
        inner.extend(keys.iter().cloned());
        inner.push(request[args.keys.end].clone());
        inner.extend([b"count".to_vec(), args.count.to_string().into_bytes()]);
        return Ok(match call(core, session, iters, &inner)? {
            Frame::NullArray => None,
            reply => Some(reply),
        });
    }
    if is(name, "brpoplpush") || is(name, "blmove") {
        let inner: Vec<Vec<u8>> = if is(name, "blmove") {
            [
                b"lmove".as_slice(),
                &request[1],
                &request[2],
                &request[3],
                &request[4],
            ]
            .map(<[u8]>::to_vec)
            .to_vec()
        } else {
            [b"rpoplpush".as_slice(), &request[1], &request[2]]
                .map(<[u8]>::to_vec)
                .to_vec()
        };
        return Ok(match call(core, session, iters, &inner)? {
            Frame::Bulk(value) => Some(Frame::Bulk(value)),
            _ => None,
        });
    }
    let pop: &[u8] = match () {
        _ if is(name, "blpop") => b"lpop",
        _ if is(name, "brpop") => b"rpop",
        _ if is(name, "bzpopmin") => b"zpopmin",
        _ => b"zpopmax",
    };
    for key in keys {
        let popped = call(core, session, iters, &[pop.to_vec(), key.clone()])?;
        let mut reply = vec![Frame::Bulk(key.clone())];
        match popped {
            Frame::Bulk(value) => reply.push(Frame::Bulk(value)),
            Frame::Array(entry) if !entry.is_empty() => reply.extend(entry),
            _ => continue,
        }
        return Ok(Some(Frame::Array(reply)));
    }
    Ok(None)
}

/// Runs the handler of the command in `args` directly (no queueing, counting or MONITOR:
/// it is part of the blocking command that called it).
fn call<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    iters: &IterSlot<'c, E>,
    args: &[Vec<u8>],
) -> CmdResult<Frame> {
    let spec = core
        .table
        .get(&args[0])
        .ok_or_else(|| CmdError::err("blocking command without its non-blocking form"))?;
    (spec.run)(&mut Ctx::new(core, iters, session, args))
}

/// After `session` ran the command in `args`: serves the clients blocked on keys it names
/// (for EXEC, the keys its write commands name), in the order they blocked, and then those
/// blocked on the lists their moves pushed to.
pub fn serve_after<'c, E: Engine>(
    core: &'c Core<E>,
    iters: &IterSlot<'c, E>,
    session: &mut Session,
    args: &[Vec<u8>],
) {
    let exec_written = std::mem::take(&mut session.exec_written);
    if core.blocking.count() == 0 {
        return;
    }
    let every_waited;
    let written = match core.table.get(&args[0]) {
        Some(spec) if super::scripting::runs_commands(spec.name) => exec_written.as_slice(),
        // A flush names no key but empties them all: every blocked client looks again (an
        // XREADGROUP whose stream is gone then ends, as in Redis; a pop stays blocked).
        // SWAPDB too: a database may now hold what its waiters wait for.
        Some(spec) if matches!(spec.name, "flushdb" | "flushall" | "swapdb") => {
            every_waited = core.blocking.lock().keys();
            every_waited.as_slice()
        }
        Some(spec) if spec.flags & WRITE != 0 => &args[1..],
        _ => return,
    };
    // Most writes name no key anyone waits on: then not even the writer lock is taken.
    if core.blocking.lock().waiting_on(written).is_empty() {
        return;
    }
    let served = core.store.docdb().write_now(|_| {
        serve_ready(core, iters, written);
        Ok(())
    });
    if let Err(e) = served {
        tracing::error!(error = %e, "serving blocked clients failed");
    }
}

/// Ends the waits of `XREADGROUP` clients whose stream has lapsed: Redis's active expiry
/// deletes such a key within about 100 ms, and the deletion ends their wait with
/// `UNBLOCKED`. docdb expires keys on read, so the server calls this every 100 ms, and it
/// serves the clients as a deletion would. Other blocked commands stay blocked on a lapsed
/// key, as in Redis.
pub fn serve_lapsed<E: Engine>(core: &Core<E>) {
    if core.blocking.count() == 0 {
        return;
    }
    let waited = core.blocking.lock().group_reads();
    if waited.is_empty() {
        return;
    }
    let mut reads = core.store.reads(core.store.read_time());
    let mut gone: Vec<Vec<u8>> = Vec::new();
    for (db, key) in waited {
        match reads.key_info(&core.store.doc_key(core.store.physical_db(db), &key)) {
            Ok(None) => add_ready(&mut gone, key),
            Ok(Some(_)) => {}
            Err(e) => tracing::error!(error = %e, "reading a blocked client's stream failed"),
        }
    }
    if gone.is_empty() {
        return;
    }
    let iters = IterSlot::new();
    let served = core.store.docdb().write_now(|_| {
        serve_ready(core, &iters, &gone);
        Ok(())
    });
    if let Err(e) = served {
        tracing::error!(error = %e, "serving blocked clients failed");
    }
}

/// Serves blocked clients, round after round in blocking order, until a round serves no one.
fn serve_ready<'c, E: Engine>(core: &'c Core<E>, iters: &IterSlot<'c, E>, written: &[Vec<u8>]) {
    let mut blocked = core.blocking.lock();
    let mut ready: Vec<Vec<u8>> = Vec::new();
    for key in written {
        add_ready(&mut ready, key.clone());
    }
    loop {
        let mut progress = false;
        for waiter in blocked.waiting_on(&ready) {
            // The keys in the order they were written, as Redis serves them.
            let keys: Vec<Vec<u8>> = ready
                .iter()
                .filter(|k| waiter.keys.contains(k))
                .cloned()
                .collect();
            let mut session = waiter_session(&waiter);
            let reply = match attempt(core, &mut session, iters, &waiter.request, &keys) {
                Ok(None) => continue,
                Ok(Some(reply)) => reply,
                Err(e) => e.to_frame(),
            };
            if is(&waiter.request[0], "brpoplpush") || is(&waiter.request[0], "blmove") {
                add_ready(&mut ready, waiter.request[2].clone());
            }
            // The pop lands before the waiter can send its reply.
            let reply = match core.store.docdb().land_pending() {
                Ok(()) => reply,
                Err(e) => CmdError::from(e).to_frame(),
            };
            let write_seq = core.count_write();
            blocked.serve(&waiter, Served { reply, write_seq });
            progress = true;
        }
        if !progress {
            return;
        }
    }
}

fn add_ready(ready: &mut Vec<Vec<u8>>, key: Vec<u8>) {
    if !ready.contains(&key) {
        ready.push(key);
    }
}

/// A session standing in for a blocked client while another connection serves it.
fn waiter_session(waiter: &crate::blocking::Waiter) -> Session {
    let (push, _, _) = Subscriber::channel();
    let mut session = Session::new(waiter.client, waiter.addr, push);
    session.db = waiter.db;
    session.db_name = waiter.db_name.clone();
    session.protocol = waiter.protocol;
    session.authenticated = true;
    session
}
