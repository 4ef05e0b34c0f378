//! Transactions: MULTI queues requests, EXEC runs them as one `DocDb::write_now` (one hybrid
//! time: no other client's command runs in between, readers see all of it or none, and its
//! writes reach the engine and its log as one write), DISCARD drops them, and WATCH makes
//! EXEC fail when a watched key changed or expired.

use dockv::HybridTime;
use engine::Engine;

use super::{Ctx, Spec, TXN, WRITE, execute, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::session::{Multi, Watched};
use crate::store::Store;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("multi", 1, TXN, 0, multi),
        spec("exec", 1, TXN, 0, exec),
        spec("discard", 1, TXN, 0, discard),
        spec("watch", -2, TXN, 1, watch),
        spec("unwatch", 1, 0, 0, unwatch),
    ]
}

fn multi<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.session.multi.is_some() {
        return Err(CmdError::err("MULTI calls can not be nested"));
    }
    ctx.session.multi = Some(Multi::default());
    Ok(ok())
}

fn discard<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.session.multi.take().is_none() {
        return Err(CmdError::err("DISCARD without MULTI"));
    }
    ctx.session.watched.clear();
    Ok(ok())
}

fn watch<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.session.multi.is_some() {
        return Err(CmdError::err("WATCH inside MULTI is not allowed"));
    }
    let since = ctx.read_time();
    let mut reads = ctx.reads(since);
    for i in 1..ctx.args.len() {
        let doc_key = ctx.key(i);
        let existed = reads.key_info(&doc_key)?.is_some();
        ctx.session.watched.push(Watched {
            doc_key,
            since,
            existed,
        });
    }
    Ok(ok())
}

fn unwatch<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    ctx.session.watched.clear();
    Ok(ok())
}

/// Runs the queued requests at one hybrid time and replies with their replies (errors
/// included: one failing request does not stop the others), or with a null array when a
/// watched key changed.
fn exec<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let Some(multi) = ctx.session.multi.take() else {
        return Err(CmdError::err("EXEC without MULTI"));
    };
    let watched = std::mem::take(&mut ctx.session.watched);
    if multi.failed {
        return Err(CmdError::Err(
            "EXECABORT Transaction discarded because of previous errors.".into(),
        ));
    }
    let (core, iters) = (ctx.core, ctx.iters);
    let store = ctx.store();
    let session = &mut *ctx.session;
    // Inside, every request's writes and reads run at this time (`write_now` and
    // `safe_time` called again on this thread stay in it), and the writes land together.
    let mut wrote = false;
    let reply = store.write_together(|ht| {
        if any_changed(store, &watched, ht)? {
            return Ok(Frame::NullArray);
        }
        let mut replies = Vec::with_capacity(multi.queued.len());
        session.in_exec = true;
        for args in &multi.queued {
            replies.extend(execute(core, session, args, iters));
            if core
                .table
                .get(&args[0])
                .is_some_and(|s| s.flags & WRITE != 0)
            {
                // For the blocked clients served after EXEC, in this order.
                session
                    .exec_written
                    .extend(super::keys::may_ready(core, args));
                wrote = true;
            }
        }
        session.in_exec = false;
        Ok(Frame::Array(replies))
    });
    if wrote {
        // Counted once landed (the commands inside were not: see `dispatch`).
        session.last_write = core.count_write();
    }
    reply?
}

/// Whether a watched key was written after its WATCH, or was live then and is not at `ht`
/// (it expired): Redis then fails the EXEC.
fn any_changed<E: Engine>(
    store: &Store<E>,
    watched: &[Watched],
    ht: HybridTime,
) -> CmdResult<bool> {
    let mut reads = store.reads(ht);
    for w in watched {
        if store.docdb().written_since(&w.doc_key, w.since)?
            || (w.existed && reads.key_info(&w.doc_key)?.is_none())
            || store.swapped_since(&w.doc_key, w.since)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}
