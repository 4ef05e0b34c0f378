//! Commands: the table of every command (name, arity, flags, handler), and dispatch of one
//! request's arguments to its handler (STYLE.md's frame → command → execute → reply).

mod acl;
mod bits;
mod blocking;
mod dump;
mod geo;
mod hashes;
mod hyperloglog;
mod introspect;
mod keys;
mod keyspec;
mod lists;
mod lolwut;
mod migrate;
mod protected;
mod sample;
mod scripting;
mod server;
mod sets;
mod sharded;
mod slowlog;
mod sort;
mod stream_groups;
mod streams;
mod strings;
mod timeseries;
mod topology;
mod txn;
mod zsets;

pub use blocking::{serve_after, serve_lapsed};
pub use scripting::restore_libraries;
pub use server::REDIS_VERSION;

use dockv::HybridTime;
use dockv::value::Value;
use engine::Engine;

use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::session::Session;
use crate::slowlog::Caller;
use crate::store::{DbId, IterSlot, KeyInfo, Reads, RedisType, Store};

/// A command writes.
pub const WRITE: u8 = 1;
/// A command only reads keys (DOCDB.ASOF may run it).
pub const READONLY: u8 = 2;
/// A command runs before AUTH.
pub const NO_AUTH: u8 = 4;
/// A command runs in subscribed mode.
pub const PUBSUB: u8 = 8;
/// A command is administrative or connection-level (not a key command).
pub const ADMIN: u8 = 16;
/// A command runs at once inside MULTI instead of being queued (EXEC, DISCARD, ...).
pub const TXN: u8 = 32;
/// A command may block the connection until another one writes (BLPOP, ...).
pub const BLOCKS: u8 = 64;
/// A command is refused inside MULTI (SHUTDOWN, SAVE), failing the transaction.
pub const NO_MULTI: u8 = 128;

/// A command handler.
pub type Handler<E> = fn(&mut Ctx<'_, '_, E>) -> CmdResult<Frame>;

/// One command of the table.
pub struct Spec<E: Engine> {
    /// Lower-case name.
    pub name: &'static str,
    /// Redis arity: `n` exactly n arguments (name included), `-n` at least n.
    pub arity: i32,
    /// [`WRITE`], [`READONLY`], ...
    pub flags: u8,
    /// Index of the first key argument (0: none), for COMMAND's reply.
    pub first_key: i32,
    /// Position in the table (for per-command counters).
    pub id: usize,
    /// The handler.
    pub run: Handler<E>,
}

impl<E: Engine> Spec<E> {
    pub(crate) fn arity_ok(&self, argc: usize) -> bool {
        arity_fits(self.arity, argc)
    }

    /// The flags as COMMAND lists them.
    pub fn flag_names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.flags & WRITE != 0 {
            names.push("write");
        }
        if self.flags & READONLY != 0 {
            names.push("readonly");
        }
        if self.flags & ADMIN != 0 {
            names.push("admin");
        }
        if self.flags & PUBSUB != 0 {
            names.push("pubsub");
        }
        if self.flags & NO_AUTH != 0 {
            names.push("no_auth");
        }
        if self.flags & NO_MULTI != 0 {
            names.push("no_multi");
        }
        names
    }
}

/// The command table, by lower-case name. Looked up for every request (twice for a write
/// in a pipeline), so it hashes with Fx rather than SipHash: the table is fixed, and lookups
/// alone cannot be steered into collisions that matter.
pub struct Table<E: Engine> {
    by_name: rustc_hash::FxHashMap<&'static str, Spec<E>>,
}

impl<E: Engine> Table<E> {
    /// Every command.
    pub fn new() -> Self {
        let mut by_name = rustc_hash::FxHashMap::default();
        for (id, mut spec) in strings::specs()
            .into_iter()
            .chain(keys::specs())
            .chain(hashes::specs())
            .chain(sets::specs())
            .chain(zsets::specs())
            .chain(lists::specs())
            .chain(sort::specs())
            .chain(timeseries::specs())
            .chain(server::specs())
            .chain(txn::specs())
            .chain(blocking::specs())
            .chain(acl::specs())
            .chain(bits::specs())
            .chain(geo::specs())
            .chain(hyperloglog::specs())
            .chain(scripting::specs())
            .chain(dump::specs())
            .chain(migrate::specs())
            .chain(slowlog::specs())
            .chain(topology::specs())
            .chain(introspect::specs())
            .chain(streams::specs())
            .chain(stream_groups::specs())
            .chain(sharded::specs())
            .chain(lolwut::specs())
            .chain(protected::specs())
            .enumerate()
        {
            spec.id = id;
            by_name.insert(spec.name, spec);
        }
        Table { by_name }
    }

    /// The command called `name` (any case).
    pub fn get(&self, name: &[u8]) -> Option<&Spec<E>> {
        let mut lower = [0u8; 32];
        if name.len() > lower.len() {
            return None;
        }
        let lower = &mut lower[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        self.by_name.get(std::str::from_utf8(lower).ok()?)
    }

    /// Every command, in no particular order.
    pub fn all(&self) -> impl Iterator<Item = &Spec<E>> {
        self.by_name.values()
    }

    /// Command names by [`Spec::id`].
    pub fn names(&self) -> Vec<&'static str> {
        let mut specs: Vec<&Spec<E>> = self.by_name.values().collect();
        specs.sort_by_key(|s| s.id);
        specs.into_iter().map(|s| s.name).collect()
    }

    /// How many commands there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Never: the table always has commands.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

impl<E: Engine> Default for Table<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// What a handler works with: the server, the connection, and the request.
pub struct Ctx<'a, 'c, E: Engine> {
    /// Server-wide state.
    pub core: &'c Core<E>,
    /// The engine iterator the requests of this batch share.
    pub iters: &'a IterSlot<'c, E>,
    /// The connection.
    pub session: &'a mut Session,
    /// The request: command name, then arguments.
    pub args: &'a [Vec<u8>],
    /// Replies to send before the handler's own (SUBSCRIBE's per-channel replies).
    pub early: Vec<Frame>,
    /// DOCDB.ASOF's read time.
    pub as_of: Option<HybridTime>,
    /// The selected database and its key space, resolved once per request (see [`Self::db`]).
    resolved_db: std::cell::Cell<Option<(DbId, DbId)>>,
}

impl<'a, 'c, E: Engine> Ctx<'a, 'c, E> {
    /// The context of one request, reading at the present.
    pub fn new(
        core: &'c Core<E>,
        iters: &'a IterSlot<'c, E>,
        session: &'a mut Session,
        args: &'a [Vec<u8>],
    ) -> Self {
        Ctx {
            core,
            iters,
            session,
            args,
            early: Vec::new(),
            as_of: None,
            resolved_db: std::cell::Cell::new(None),
        }
    }

    /// The store.
    pub fn store(&self) -> &'c Store<E> {
        &self.core.store
    }

    /// Reads as of `ht`, on the batch's shared iterator.
    pub fn reads(&self, ht: HybridTime) -> Reads<'a, 'c, E> {
        self.core.store.reads_with(ht, self.iters)
    }

    /// The live key at `doc_key` as of `ht`, or `None`.
    pub fn key_info(&self, doc_key: &[u8], ht: HybridTime) -> CmdResult<Option<KeyInfo>> {
        self.reads(ht).key_info(doc_key)
    }

    /// The live key of type `kind` at `doc_key`, `None` if absent, WRONGTYPE if another type.
    pub fn typed(
        &self,
        doc_key: &[u8],
        kind: RedisType,
        ht: HybridTime,
    ) -> CmdResult<Option<KeyInfo>> {
        self.reads(ht).typed(doc_key, kind)
    }

    /// Argument `i` (0 is the command name).
    pub fn arg(&self, i: usize) -> &'a [u8] {
        &self.args[i]
    }

    /// The encoded DocKey of argument `i` in the selected database.
    pub fn key(&self, i: usize) -> Vec<u8> {
        self.core.store.doc_key(self.db(), &self.args[i])
    }

    /// The key space of the selected database: resolved through SWAPDB's mapping (of
    /// DOCDB.ASOF's time, if given) on first use and kept for the rest of the request, so
    /// that a swap meanwhile cannot show it half the keys of each database.
    pub fn db(&self) -> DbId {
        let logical = self.session.db;
        match self.resolved_db.get() {
            Some((db, space)) if db == logical => space,
            _ => {
                let space = match self.as_of {
                    Some(ht) => self.core.store.physical_db_at(logical, ht),
                    None => self.core.store.physical_db(logical),
                };
                self.resolved_db.set(Some((logical, space)));
                space
            }
        }
    }

    /// The time reads see: DOCDB.ASOF's, or now.
    pub fn read_time(&self) -> HybridTime {
        self.as_of.unwrap_or_else(|| self.core.store.read_time())
    }

    /// The command's lower-case name.
    pub fn name(&self) -> String {
        String::from_utf8_lossy(&self.args[0]).to_lowercase()
    }

    /// Runs a write that reads nothing: `write` gets the write's hybrid time and pushes the
    /// encoded paths and values to write.
    pub fn write_blind(
        &mut self,
        write: impl FnOnce(HybridTime, &mut Vec<(Vec<u8>, Value)>) -> CmdResult<Frame>,
    ) -> CmdResult<Frame> {
        let mut pairs = Vec::new();
        self.store().write(|batch, ht| {
            let reply = write(ht, &mut pairs)?;
            for (path, value) in pairs.drain(..) {
                batch.set_encoded_path(path, value)?;
            }
            Ok(reply)
        })
    }
}

/// Commands that CLIENT PAUSE WRITE holds besides writes, as Redis 7.0 does: scripts may
/// write, and PUBLISH, PFCOUNT and WAIT may replicate.
const HELD_BY_WRITE_PAUSE: &[&str] = &["eval", "evalsha", "fcall", "publish", "pfcount", "wait"];

/// Whether CLIENT PAUSE holds `args` now. An unknown command is not held: it fails at once.
pub fn paused<E: Engine>(core: &Core<E>, args: &[Vec<u8>]) -> bool {
    if !core.pause.is_active() {
        return false;
    }
    let Some(spec) = args.first().and_then(|name| core.table.get(name)) else {
        return false;
    };
    core.pause
        .holds(|| spec.flags & WRITE != 0 || HELD_BY_WRITE_PAUSE.contains(&spec.name))
}

/// Whether `args` may join a run of writes: a key-writing command that cannot block, on a
/// connection in its normal state (authenticated as an unrestricted ACL user, not
/// subscribed, not queueing a transaction), where [`dispatch`] would run it at once, while
/// no client is blocked (a write that serves one must be followed by that at once, as in
/// Redis, not by the rest of the run).
pub fn joins_write_run<E: Engine>(core: &Core<E>, session: &Session, args: &[Vec<u8>]) -> bool {
    let Some(spec) = args.first().and_then(|name| core.table.get(name)) else {
        return false;
    };
    core.blocking.count() == 0
        && spec.flags & WRITE != 0
        && spec.flags & (ADMIN | TXN | BLOCKS) == 0
        && session.multi.is_none()
        && !session.in_subscribed_mode()
        && !core.needs_auth(session)
        && (session.acl_ok == core.acl.epoch() || core.acl.unrestricted(&session.user))
}

/// Runs consecutive writes of one pipeline (each passing [`joins_write_run`]) as one
/// `DocDb::write_now`, and returns their replies in order: one hybrid time, one clock reading
/// and one RocksDB write serve them all, and each reads what the earlier ones wrote, so the
/// result is what running them one by one would leave. If that write fails, every request
/// of the run fails with its error and nothing of the run is stored.
pub fn execute_write_run<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    requests: &[Vec<Vec<u8>>],
    iters: &IterSlot<'c, E>,
) -> Vec<Frame> {
    if let [one] = requests {
        return execute(core, session, one, iters);
    }
    let mut replies = Vec::with_capacity(requests.len());
    let written = core.store.write_together(|_| {
        for args in requests {
            replies.extend(execute(core, session, args, iters));
        }
    });
    // Counted once the batch is in the log buffer, so that a WAL flush counted past this
    // number covers it (see `Core::commit_wal`).
    session.last_write = core.count_write();
    match written {
        Ok(()) => replies,
        Err(e) => vec![e.to_frame(); requests.len()],
    }
}

/// Runs one request and returns its reply (errors included). `out` receives replies sent
/// before it (SUBSCRIBE's).
pub fn execute<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    args: &[Vec<u8>],
    iters: &IterSlot<'c, E>,
) -> Vec<Frame> {
    let mut ctx = Ctx::new(core, iters, session, args);
    let reply = dispatch(&mut ctx).unwrap_or_else(|e| e.to_frame());
    let mut replies = std::mem::take(&mut ctx.early);
    let session = &mut *ctx.session;
    if !std::mem::take(&mut session.unanswered) && !session.replies_off && !session.skipping {
        replies.push(reply);
    }
    // CLIENT REPLY SKIP silences the request after it.
    session.skipping = std::mem::take(&mut session.skip_next);
    replies
}

fn dispatch<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let Some(spec) = ctx.core.table.get(&ctx.args[0]) else {
        return Err(refuse(ctx, unknown_command(ctx.args)));
    };
    if ctx.core.needs_auth(ctx.session) && spec.flags & NO_AUTH == 0 {
        let e = CmdError::Err("NOAUTH Authentication required.".into());
        return Err(refuse(ctx, e));
    }
    if !spec.arity_ok(ctx.args.len()) {
        return Err(refuse(ctx, wrong_arity(spec.name)));
    }
    // One comparison for a user known to be unrestricted (see `Session::acl_ok`).
    if ctx.session.acl_ok != ctx.core.acl.epoch()
        && let Err(e) = acl::check(ctx, spec)
    {
        return Err(refuse(ctx, e));
    }
    if let Some(e) = protected::refusal(spec.name, ctx.args) {
        return Err(refuse(ctx, e));
    }
    if ctx.core.scripts.busy()
        && !scripting::allowed_while_busy(spec.name, ctx.args.get(1).map(Vec::as_slice))
    {
        let e = CmdError::Err(
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN \
             NOSAVE."
                .into(),
        );
        return Err(refuse(ctx, e));
    }
    if ctx.session.in_subscribed_mode() && spec.flags & PUBSUB == 0 {
        return Err(CmdError::err(format!(
            "Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET \
             are allowed in this context",
            spec.name
        )));
    }
    if ctx.session.multi.is_some() && spec.flags & NO_MULTI != 0 {
        let e = CmdError::err("Command not allowed inside a transaction");
        return Err(refuse(ctx, e));
    }
    if let Some(multi) = ctx.session.multi.as_mut()
        && spec.flags & TXN == 0
    {
        multi.queued.push(ctx.args.to_vec());
        return Ok(Frame::Simple("QUEUED".into()));
    }
    if spec.flags & ADMIN == 0 {
        // Redis keeps administrative commands (CONFIG, ...) out of MONITOR.
        ctx.core.monitor(ctx.session, ctx.args);
    }
    let started = std::time::Instant::now();
    let result = (spec.run)(ctx);
    if spec.flags & WRITE != 0 && !ctx.core.store.docdb().is_writing() {
        // Counted even when it failed: part of it may be in the log buffer. Inside a
        // `write_now` (a run of writes, EXEC) nothing is in it yet: whoever opened that
        // counts once it has landed.
        ctx.session.last_write = ctx.core.count_write();
    }
    let elapsed = started.elapsed();
    ctx.core.metrics.record(spec.id, elapsed, result.is_err());
    track(
        ctx.core,
        ctx.session,
        spec,
        ctx.args,
        result.is_ok(),
        ctx.as_of.is_some(),
    );
    if !ctx.session.in_exec && spec.name != "client" {
        // CLIENT CACHING covers the one command after it (or the transaction).
        ctx.session.caching = false;
    }
    // EXEC's own time is its commands', which are logged one by one, as in Redis.
    let logged: &[Vec<u8>] = if spec.name == "exec" { &[] } else { ctx.args };
    let session = &*ctx.session;
    ctx.core.observe_command(logged, elapsed, || Caller {
        client: session.addr.to_string(),
        name: session.name.as_deref(),
    });
    result
}

/// Client-side caching: a write (that did not fail) invalidates its keys for every
/// tracking client; a present-time read by a tracking client remembers its keys for it,
/// unless OPTIN/OPTOUT and CLIENT CACHING say otherwise.
pub(crate) fn track<E: Engine>(
    core: &Core<E>,
    session: &Session,
    spec: &Spec<E>,
    args: &[Vec<u8>],
    ok: bool,
    as_of: bool,
) {
    if !core.tracking.is_active() {
        return;
    }
    if spec.flags & WRITE != 0 {
        if !ok {
            return;
        }
        if matches!(spec.name, "flushdb" | "flushall") {
            core.tracking.invalidate_all(&core.outlets());
        } else if let Some(keys) = keyspec::key_positions(spec, args) {
            let names = keys.into_iter().map(|i| args[i].as_slice());
            core.tracking.invalidate(session.id, names, &core.outlets());
        }
        return;
    }
    let Some(mode) = &session.tracking else {
        return;
    };
    let cached = if mode.optin {
        session.caching
    } else {
        !(mode.optout && session.caching)
    };
    if spec.flags & READONLY == 0 || mode.bcast || as_of || !cached {
        return;
    }
    let ht = core.store.read_time();
    for i in keyspec::key_positions(spec, args).unwrap_or_default() {
        let doc_key = core
            .store
            .doc_key(core.store.physical_db(session.db), &args[i]);
        let expires_at = core
            .store
            .reads(ht)
            .key_info(&doc_key)
            .ok()
            .flatten()
            .and_then(|info| info.expires_at);
        core.tracking.remember(session.id, &args[i], expires_at);
    }
}

/// `error`, after marking an open transaction as failed (as Redis does for a request it
/// refuses to queue: EXEC will then refuse to run).
fn refuse<E: Engine>(ctx: &mut Ctx<'_, '_, E>, error: CmdError) -> CmdError {
    if let Some(multi) = ctx.session.multi.as_mut() {
        multi.failed = true;
    }
    error
}

/// `ERR unknown command 'x', with args beginning with: 'a' 'b' `, as Redis 7.0 words it:
/// the name up to 128 bytes, then arguments until 128 bytes of them are written, the last
/// one cut to fit.
pub fn unknown_command(args: &[Vec<u8>]) -> CmdError {
    const MAX: usize = 128;
    let name = &args[0][..args[0].len().min(MAX)];
    let mut listed: Vec<u8> = Vec::new();
    for arg in &args[1..] {
        if listed.len() >= MAX {
            break;
        }
        let room = MAX - listed.len();
        listed.push(b'\'');
        listed.extend_from_slice(&arg[..arg.len().min(room)]);
        listed.extend_from_slice(b"' ");
    }
    CmdError::Err(format!(
        "ERR unknown command '{}', with args beginning with: {}",
        String::from_utf8_lossy(name),
        String::from_utf8_lossy(&listed),
    ))
}

/// `ERR wrong number of arguments for 'x' command`.
pub fn wrong_arity(name: &str) -> CmdError {
    CmdError::err(format!("wrong number of arguments for '{name}' command"))
}

/// Runs the read-only command in `args` as of `ht` (DOCDB.ASOF).
pub fn execute_as_of<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    ht: HybridTime,
    args: &[Vec<u8>],
) -> CmdResult<Frame> {
    let Some(spec) = ctx.core.table.get(&args[0]) else {
        return Err(unknown_command(args));
    };
    if spec.flags & READONLY == 0 {
        return Err(CmdError::err(format!(
            "DOCDB.ASOF runs read-only commands only, not '{}'",
            spec.name
        )));
    }
    if !spec.arity_ok(args.len()) {
        return Err(wrong_arity(spec.name));
    }
    let mut inner = Ctx::new(ctx.core, ctx.iters, &mut *ctx.session, args);
    inner.as_of = Some(ht);
    (spec.run)(&mut inner)
}

/// Builds a [`Spec`].
pub fn spec<E: Engine>(
    name: &'static str,
    arity: i32,
    flags: u8,
    first_key: i32,
    run: Handler<E>,
) -> Spec<E> {
    Spec {
        name,
        arity,
        flags,
        first_key,
        id: 0,
        run,
    }
}

/// The optional count of SPOP, LPOP, RPOP and ZPOPMIN (argument 2). Negative counts are
/// Redis's "must be positive" error; so is a count that is not an integer, for the list pops
/// (`range_error_if_not_integer`), where Redis words it that way too.
pub fn pop_count<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    range_error_if_not_integer: bool,
) -> CmdResult<Option<usize>> {
    let out_of_range = || CmdError::err("value is out of range, must be positive");
    let Some(arg) = ctx.args.get(2) else {
        return Ok(None);
    };
    let n = match crate::number::int_arg(arg) {
        Ok(n) => n,
        Err(_) if range_error_if_not_integer => return Err(out_of_range()),
        Err(e) => return Err(e),
    };
    usize::try_from(n).map(Some).map_err(|_| out_of_range())
}

/// The arguments of LMPOP and ZMPOP (and their blocking forms after the timeout):
/// `numkeys key... END [COUNT count]`, checked as Redis 7.0 checks them.
pub struct MultiPop {
    /// The positions of the keys in the request.
    pub keys: std::ops::Range<usize>,
    /// The second of the two ends was named (RIGHT, MAX).
    pub second: bool,
    /// How many to pop (1 without COUNT).
    pub count: usize,
}

impl MultiPop {
    /// Parses `args` whose numkeys is at `numkeys_at`; `ends` are the two end words.
    pub fn parse(args: &[Vec<u8>], numkeys_at: usize, ends: [&str; 2]) -> CmdResult<Self> {
        let positive = |arg: &[u8], what: &str| {
            crate::number::int_arg(arg)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| CmdError::err(format!("{what} should be greater than 0")))
        };
        let numkeys = positive(&args[numkeys_at], "numkeys")?;
        let first_key = numkeys_at + 1;
        let end_at = usize::try_from(numkeys)
            .ok()
            .and_then(|n| first_key.checked_add(n))
            .filter(|&at| at < args.len())
            .ok_or(CmdError::Syntax)?;
        let second = match &args[end_at] {
            end if is(end, ends[0]) => false,
            end if is(end, ends[1]) => true,
            _ => return Err(CmdError::Syntax),
        };
        let mut count = None;
        let mut i = end_at + 1;
        while i < args.len() {
            if count.is_some() || !is(&args[i], "count") || i + 1 == args.len() {
                return Err(CmdError::Syntax);
            }
            count = Some(positive(&args[i + 1], "count")?);
            i += 2;
        }
        Ok(MultiPop {
            keys: first_key..end_at,
            second,
            count: count.map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        })
    }
}

/// Bulk replies for optional values.
pub fn bulk_or_null(value: Option<Vec<u8>>) -> Frame {
    value.map_or(Frame::Null, Frame::Bulk)
}

/// `+OK`.
pub fn ok() -> Frame {
    Frame::Simple("OK".into())
}

/// An array of bulk strings.
pub fn bulk_array(items: impl IntoIterator<Item = Vec<u8>>) -> Frame {
    Frame::Array(items.into_iter().map(Frame::Bulk).collect())
}

/// Finds subcommand `sub` of `command` in `table` (names with Redis's arities, counting the
/// command's own name) and checks `argc` against it, with Redis's errors for an unknown
/// subcommand or a wrong count. Returns the subcommand's name as the table has it.
pub fn subcommand(
    command: &str,
    table: &[(&'static str, i32)],
    sub: &[u8],
    argc: usize,
) -> CmdResult<&'static str> {
    let Some(&(name, arity)) = table.iter().find(|(name, _)| is(sub, name)) else {
        return Err(unknown_subcommand(sub, command));
    };
    if !arity_fits(arity, argc) {
        return Err(wrong_arity(&format!("{command}|{name}")));
    }
    Ok(name)
}

/// Whether `argc` arguments (the name included) fit Redis arity `arity`: exactly `n`, or
/// at least `n` for `-n`.
fn arity_fits(arity: i32, argc: usize) -> bool {
    let argc = argc as i32;
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

/// `ERR unknown subcommand 'x'. Try COMMAND HELP.`, the name cut to 128 bytes as Redis
/// cuts it.
pub fn unknown_subcommand(sub: &[u8], command: &str) -> CmdError {
    CmdError::err(format!(
        "unknown subcommand '{}'. Try {} HELP.",
        error_text(sub, 128),
        command.to_ascii_uppercase()
    ))
}

/// An argument quoted in an error: cut to `max` bytes, line breaks as spaces (as Redis's
/// `addReplyErrorFormat` keeps the reply one line).
pub fn error_text(arg: &[u8], max: usize) -> String {
    String::from_utf8_lossy(&arg[..arg.len().min(max)]).replace(['\r', '\n'], " ")
}

/// Redis's error for a subcommand given more arguments than its own parser takes.
pub fn subcommand_syntax(command: &str, sub: &[u8]) -> CmdError {
    CmdError::err(format!(
        "unknown subcommand or wrong number of arguments for '{}'. Try {command} HELP.",
        String::from_utf8_lossy(sub)
    ))
}

/// A HELP subcommand's reply: one simple string per line.
pub fn help_reply(lines: &[&str]) -> Frame {
    Frame::Array(lines.iter().map(|l| Frame::Simple(l.to_string())).collect())
}

/// A set of bulk strings (RESP2: an array).
pub fn bulk_set(items: impl IntoIterator<Item = Vec<u8>>) -> Frame {
    Frame::Set(items.into_iter().map(Frame::Bulk).collect())
}

/// Whether `arg` equals `word` ignoring ASCII case.
pub fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}
