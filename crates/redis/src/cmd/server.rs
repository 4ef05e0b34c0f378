//! Connection and server commands: PING, AUTH, HELLO, COMMAND, INFO, CLIENT, CONFIG, pub/sub,
//! MONITOR, and DOCDB.ASOF.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use dockv::HybridTime;
use dockv::hybrid_time::LOGICAL_BITS;
use engine::Engine;

use super::{
    ADMIN, Ctx, NO_AUTH, NO_MULTI, PUBSUB, READONLY, Spec, TXN, bulk_array, bulk_or_null, bulk_set,
    execute_as_of, help_reply, is, keyspec, ok, spec, subcommand, subcommand_syntax,
    unknown_subcommand,
};
use crate::clients::ClientFilter;
use crate::core::{Core, Fsync};
use crate::error::{CmdError, CmdResult};
use crate::frame::{Frame, Limits, Protocol};
use crate::glob;
use crate::number::int_arg;
use crate::rewrite::Setting;
use crate::session::Session;
use crate::tracking::TrackingMode;

/// The Redis version reported to clients: the release whose commands and replies docdb's
/// tests check against.
pub const REDIS_VERSION: &str = "7.0.15";

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("ping", -1, PUBSUB, 0, ping),
        spec("echo", 2, 0, 0, echo),
        spec("time", 1, 0, 0, time),
        spec("quit", -1, NO_AUTH | PUBSUB | TXN, 0, quit),
        spec("reset", 1, NO_AUTH | PUBSUB | TXN, 0, reset),
        spec("auth", -2, NO_AUTH, 0, auth),
        spec("hello", -1, NO_AUTH, 0, hello),
        spec("command", -1, 0, 0, command),
        spec("info", -1, 0, 0, info),
        spec("client", -2, 0, 0, client),
        spec("config", -2, ADMIN, 0, config),
        spec("role", 1, 0, 0, role),
        spec("monitor", 1, ADMIN, 0, monitor),
        spec("publish", 3, 0, 0, publish),
        spec("subscribe", -2, PUBSUB, 0, subscribe),
        spec("unsubscribe", -1, PUBSUB, 0, unsubscribe),
        spec("psubscribe", -2, PUBSUB, 0, psubscribe),
        spec("punsubscribe", -1, PUBSUB, 0, punsubscribe),
        spec("docdb.asof", -3, READONLY, 2, asof),
        spec("shutdown", -1, ADMIN | NO_MULTI, 0, shutdown),
        spec("save", 1, ADMIN | NO_MULTI, 0, save),
        spec("bgsave", -1, ADMIN, 0, bgsave),
        spec("bgrewriteaof", 1, ADMIN, 0, bgrewriteaof),
        spec("lastsave", 1, 0, 0, lastsave),
    ]
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: stops the server as SIGTERM does (every
/// connection finishes what it has read, memtables are flushed); the connection closes
/// unanswered, as Redis's does. The options are accepted for Redis's syntax: the WAL
/// already holds every write, so NOSAVE loses nothing, and no shutdown is ever left in
/// progress for ABORT.
fn shutdown<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (mut nosave, mut save, mut abort, mut other) = (false, false, false, false);
    for arg in &ctx.args[1..] {
        match () {
            _ if is(arg, "nosave") => nosave = true,
            _ if is(arg, "save") => save = true,
            _ if is(arg, "abort") => abort = true,
            _ if is(arg, "now") || is(arg, "force") => other = true,
            _ => return Err(CmdError::Syntax),
        }
    }
    if (nosave && save) || (abort && (nosave || save || other)) {
        return Err(CmdError::Syntax);
    }
    if abort {
        return Err(CmdError::err("No shutdown in progress."));
    }
    tracing::info!(client = %ctx.session.addr, "SHUTDOWN received");
    ctx.core.request_stop();
    ctx.session.quit = true;
    ctx.session.unanswered = true;
    Ok(ok())
}

/// SAVE: memtables into data files and the WAL synced, before the reply.
fn save<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.core.background_save_pending() {
        return Err(CmdError::err("Background save already in progress"));
    }
    ctx.core.save()?;
    Ok(ok())
}

/// BGSAVE [SCHEDULE]: SAVE's work, started within a second by the upkeep task.
fn bgsave<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    match ctx.args.len() {
        1 => {}
        2 if is(ctx.arg(1), "schedule") => {}
        _ => return Err(CmdError::Syntax),
    }
    if !ctx.core.request_background_save() {
        return Err(CmdError::err("Background save already in progress"));
    }
    Ok(Frame::Simple("Background saving started".into()))
}

/// BGREWRITEAOF: docdb's log is RocksDB's WAL, which a flush of the memtables empties, so
/// the rewrite is the background save.
fn bgrewriteaof<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if !ctx.core.request_background_save() {
        return Err(CmdError::err(
            "Background append only file rewriting already in progress",
        ));
    }
    // Inside EXEC Redis defers the rewrite until the transaction ends, and says so.
    let done = if ctx.session.in_exec {
        "scheduled"
    } else {
        "started"
    };
    Ok(Frame::Simple(format!(
        "Background append only file rewriting {done}"
    )))
}

/// LASTSAVE: unix seconds of the last finished SAVE or BGSAVE (the start, before any).
fn lastsave<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(ctx.core.last_save()))
}

fn ping<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.args.len() > 2 {
        return Err(super::wrong_arity("ping"));
    }
    let message = ctx.args.get(1).cloned();
    if ctx.session.in_subscribed_mode() {
        return Ok(bulk_array([b"pong".to_vec(), message.unwrap_or_default()]));
    }
    Ok(message.map_or_else(|| Frame::Simple("PONG".into()), Frame::Bulk))
}

/// TIME: the server's clock as Unix seconds and microseconds.
fn time<E: Engine>(_ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(bulk_array([
        now.as_secs().to_string().into_bytes(),
        now.subsec_micros().to_string().into_bytes(),
    ]))
}

fn echo<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Bulk(ctx.arg(1).to_vec()))
}

fn quit<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    ctx.session.quit = true;
    Ok(ok())
}

/// AUTH's and HELLO AUTH's check: the one-argument form (no user) is refused while the
/// default user has no password, as in Redis 7; otherwise the ACL user table decides.
fn check_password<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    user: Option<&[u8]>,
    pass: &[u8],
) -> CmdResult<()> {
    let default_nopass = ctx
        .core
        .acl
        .users()
        .get("default")
        .is_some_and(|u| u.flag_names().contains(&"nopass"));
    if user.is_none() && default_nopass {
        return Err(CmdError::err(
            "AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        ));
    }
    super::acl::authenticate(ctx, user, pass)
}

fn auth<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    match ctx.args.len() {
        2 => check_password(ctx, None, &ctx.args[1].clone())?,
        3 => {
            let (user, pass) = (ctx.args[1].clone(), ctx.args[2].clone());
            check_password(ctx, Some(&user), &pass)?
        }
        _ => return Err(CmdError::Syntax),
    }
    Ok(ok())
}

fn hello<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let args = ctx.args;
    let mut protocol = ctx.session.protocol;
    if let Some(version) = args.get(1) {
        protocol = match int_arg(version) {
            Ok(2) => Protocol::Resp2,
            Ok(3) => Protocol::Resp3,
            Ok(_) => {
                return Err(CmdError::Err("NOPROTO unsupported protocol version".into()));
            }
            Err(_) => {
                return Err(CmdError::err(
                    "Protocol version is not an integer or out of range",
                ));
            }
        };
    }
    let mut i = 2;
    while i < args.len() {
        if is(&args[i], "auth") && i + 2 < args.len() {
            check_password(ctx, Some(&args[i + 1]), &args[i + 2])?;
            i += 3;
        } else if is(&args[i], "setname") && i + 1 < args.len() {
            set_name(ctx, &args[i + 1])?;
            i += 2;
        } else {
            return Err(CmdError::err(format!(
                "Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(&args[i])
            )));
        }
    }
    if ctx.core.needs_auth(ctx.session) {
        return Err(CmdError::Err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time"
                .into(),
        ));
    }
    // The reply is already in the new protocol.
    ctx.session.protocol = protocol;
    ctx.core.registry.update(ctx.session);
    let field = |name: &str, value: Frame| (Frame::Bulk(name.as_bytes().to_vec()), value);
    let bulk = |text: &str| Frame::Bulk(text.as_bytes().to_vec());
    Ok(Frame::Map(vec![
        field("server", bulk("redis")),
        field("version", bulk(REDIS_VERSION)),
        field("proto", Frame::Integer(protocol.number())),
        field("id", Frame::Integer(ctx.session.id as i64)),
        field("mode", bulk("standalone")),
        field("role", bulk("master")),
        field("modules", Frame::Array(Vec::new())),
    ]))
}

/// HELLO's and CLIENT INFO's number for a protocol.
fn command_info<E: Engine>(spec: &Spec<E>) -> Frame {
    let (first, last, step) = keyspec::key_range(spec);
    Frame::Array(vec![
        Frame::Bulk(spec.name.as_bytes().to_vec()),
        Frame::Integer(i64::from(spec.arity)),
        Frame::Set(
            spec.flag_names()
                .into_iter()
                .map(|f| Frame::Simple(f.into()))
                .collect(),
        ),
        Frame::Integer(i64::from(first)),
        Frame::Integer(i64::from(last)),
        Frame::Integer(i64::from(step)),
    ])
}

fn command<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let table = &ctx.core.table;
    let Some(sub) = ctx.args.get(1) else {
        return Ok(Frame::Array(table.all().map(command_info).collect()));
    };
    if is(sub, "count") {
        Ok(Frame::Integer(table.len() as i64))
    } else if is(sub, "docs") {
        Ok(Frame::Map(Vec::new()))
    } else if is(sub, "info") {
        Ok(Frame::Array(
            ctx.args[2..]
                .iter()
                .map(|name| table.get(name).map_or(Frame::NullArray, command_info))
                .collect(),
        ))
    } else if is(sub, "getkeys") {
        command_getkeys(ctx)
    } else if is(sub, "list") {
        Ok(bulk_array(table.all().map(|s| s.name.as_bytes().to_vec())))
    } else {
        Err(unknown_subcommand(sub, "COMMAND"))
    }
}

/// COMMAND GETKEYS command [arg ...]: the keys of that request.
fn command_getkeys<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.args.len() < 4 {
        return Err(super::wrong_arity("command|getkeys"));
    }
    let request = &ctx.args[2..];
    let spec = ctx
        .core
        .table
        .get(&request[0])
        .ok_or_else(|| CmdError::err("Invalid command specified"))?;
    if !keyspec::has_keys(spec) {
        return Err(CmdError::err("The command has no key arguments"));
    }
    if !spec.arity_ok(request.len()) {
        return Err(CmdError::err(
            "Invalid number of arguments specified for command",
        ));
    }
    let keys = keyspec::getkeys(spec, request)?;
    Ok(bulk_array(keys.into_iter().map(|i| request[i].clone())))
}

fn info<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let section = ctx.args.get(1).map(|s| s.to_ascii_lowercase());
    let wants = |name: &str| {
        section.as_deref().is_none_or(|s| {
            s == b"all" || s == b"everything" || s == b"default" || s == name.as_bytes()
        })
    };
    let core = ctx.core;
    let config = core.config();
    let mut out = String::new();
    if wants("server") {
        let port = config.listen.rsplit(':').next().unwrap_or("6379");
        let _ = write!(
            out,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\ndocdb_version:{}\r\nredis_mode:standalone\r\n\
             os:{} {}\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:{port}\r\nuptime_in_seconds:{}\r\n\
             executable:docdb\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            std::process::id(),
            core.started.elapsed().as_secs(),
        );
    }
    if wants("clients") {
        let _ = write!(
            out,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\n\
             tracking_clients:{}\r\n\r\n",
            core.clients.load(Ordering::Relaxed),
            config.maxclients,
            core.blocking.count(),
            core.tracking.clients()
        );
    }
    if wants("memory") {
        let rss = resident_memory().unwrap_or(0);
        let _ = write!(
            out,
            "# Memory\r\nused_memory:{rss}\r\nused_memory_rss:{rss}\r\nmaxmemory:0\r\n\r\n"
        );
    }
    if wants("persistence") {
        let _ = write!(
            out,
            "# Persistence\r\nloading:0\r\naof_enabled:1\r\nappendfsync:{}\r\ndata_dir:{}\r\n\
             rdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\n\r\n",
            config.fsync.name(),
            config.data_dir,
            i32::from(core.background_save_pending()),
            core.last_save(),
        );
    }
    if wants("stats") {
        let m = &core.metrics;
        let spans = core.store.docdb().span_totals();
        let (channels, shard_channels) = core.broker.num_channels();
        let _ = write!(
            out,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             rejected_connections:{}\r\npubsub_channels:{channels}\r\npubsub_patterns:{}\r\n\
             pubsubshard_channels:{shard_channels}\r\ndead_spans:{}\r\ndead_spans_restored:{}\r\n\
             deleted_keys_unswept:{}\r\npipelining_connections:{}\r\n\
             moved_connections:{}\r\npipelining_stopped:{}\r\nwrite_groups:{}\r\n\
             write_group_runs:{}\r\n\r\n",
            m.connections_total.load(Ordering::Relaxed),
            m.total_commands(),
            m.connections_rejected.load(Ordering::Relaxed),
            core.broker.num_patterns(),
            spans.spans,
            spans.restored,
            core.store.docdb().sweep_queue().0,
            m.pipelining_connections.load(Ordering::Relaxed),
            m.moved_connections.load(Ordering::Relaxed),
            m.pipelining_stopped.load(Ordering::Relaxed),
            m.write_groups.load(Ordering::Relaxed),
            m.write_group_runs.load(Ordering::Relaxed),
        );
    }
    if wants("replication") {
        out.push_str("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    // Counting keys takes a scan of every database (as DBSIZE does), so only a request
    // naming the section, `all` or `everything` gets it, not the default INFO.
    if matches!(
        section.as_deref(),
        Some(b"keyspace" | b"all" | b"everything")
    ) {
        keyspace(ctx, &mut out)?;
    }
    if section.as_deref() == Some(b"commandstats") {
        out.push_str("# Commandstats\r\n");
        for (name, c) in core.metrics.commands() {
            let per_call = if c.calls == 0 {
                0.0
            } else {
                c.usec as f64 / c.calls as f64
            };
            let _ = write!(
                out,
                "cmdstat_{name}:calls={},usec={},usec_per_call={per_call:.2},failed_calls={}\r\n",
                c.calls, c.usec, c.errors
            );
        }
        out.push_str("\r\n");
    }
    // A blank line separates sections, as in Redis; none follows the last.
    if out.ends_with("\r\n\r\n") {
        out.truncate(out.len() - 2);
    }
    Ok(Frame::Verbatim(out.into_bytes()))
}

/// INFO's keyspace section: per non-empty database, its keys, how many have a TTL, and
/// their average TTL left in milliseconds.
fn keyspace<E: Engine>(ctx: &mut Ctx<'_, '_, E>, out: &mut String) -> CmdResult<()> {
    out.push_str("# Keyspace\r\n");
    let store = ctx.store();
    let now = ctx.read_time();
    let now_micros = now.physical_micros();
    for (name, db) in store.db_names().into_iter().zip(store.db_ids()) {
        let (mut keys, mut expires, mut ttl_ms) = (0u64, 0u64, 0u64);
        store.scan_keys(db, None, now, |_, _, info| {
            keys += 1;
            if let Some(at) = info.expires_at {
                expires += 1;
                ttl_ms += at.saturating_sub(now_micros) / 1000;
            }
            true
        })?;
        if keys > 0 {
            let avg_ttl = ttl_ms.checked_div(expires).unwrap_or(0);
            let _ = write!(
                out,
                "db{name}:keys={keys},expires={expires},avg_ttl={avg_ttl}\r\n"
            );
        }
    }
    out.push_str("\r\n");
    Ok(())
}

/// This process's resident memory in bytes (Linux), for INFO and the load test.
pub fn resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn set_name<E: Engine>(ctx: &mut Ctx<'_, '_, E>, name: &[u8]) -> CmdResult<()> {
    if name.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err(CmdError::err(
            "Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    ctx.session.name = (!name.is_empty()).then(|| name.to_vec());
    ctx.core.registry.update(ctx.session);
    Ok(())
}

/// CLIENT's subcommands with Redis 7.0's arities (SETINFO, from 7.2, for the client
/// libraries that send it on connect).
const CLIENT_SUBCOMMANDS: &[(&str, i32)] = &[
    ("caching", 3),
    ("getname", 2),
    ("getredir", 2),
    ("help", 2),
    ("id", 2),
    ("info", 2),
    ("kill", -3),
    ("list", -2),
    ("no-evict", 3),
    ("pause", -3),
    ("reply", 3),
    ("setinfo", 4),
    ("setname", 3),
    ("tracking", -3),
    ("trackinginfo", 2),
    ("unblock", -3),
    ("unpause", 2),
];

fn client<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = subcommand("client", CLIENT_SUBCOMMANDS, ctx.arg(1), ctx.args.len())?;
    match sub {
        "setname" => {
            let name = ctx.arg(2).to_vec();
            set_name(ctx, &name)?;
            Ok(ok())
        }
        "getname" => Ok(bulk_or_null(ctx.session.name.clone())),
        "id" => Ok(Frame::Integer(ctx.session.id as i64)),
        "setinfo" => Ok(ok()),
        "no-evict" if is(ctx.arg(2), "on") || is(ctx.arg(2), "off") => Ok(ok()),
        "info" => {
            let own = ClientFilter {
                ids: vec![ctx.session.id],
                addr: None,
                user: None,
            };
            Ok(Frame::Verbatim(ctx.core.registry.list(&own).into_bytes()))
        }
        "list" => {
            let filter = list_filter(&ctx.args[2..])?;
            Ok(Frame::Verbatim(
                ctx.core.registry.list(&filter).into_bytes(),
            ))
        }
        "kill" if ctx.args.len() == 3 => {
            // The old form: one address; the caller's own connection included.
            let filter = ClientFilter {
                ids: Vec::new(),
                addr: Some(String::from_utf8_lossy(ctx.arg(2)).into_owned()),
                user: None,
            };
            if ctx.core.registry.kill(&filter, None).is_empty() {
                return Err(CmdError::err("No such client"));
            }
            Ok(ok())
        }
        "kill" => {
            let (filter, skip_me) = kill_filter(&ctx.args[2..])?;
            if let Some(user) = &filter.user
                && !ctx.core.acl.users().contains_key(user)
            {
                return Err(CmdError::err(format!("No such user '{user}'")));
            }
            let skip = skip_me.then_some(ctx.session.id);
            Ok(Frame::Integer(
                ctx.core.registry.kill(&filter, skip).len() as i64
            ))
        }
        "reply" => client_reply(ctx),
        "unblock" => client_unblock(ctx),
        "pause" => client_pause(ctx),
        "unpause" => {
            ctx.core.pause.unpause();
            Ok(ok())
        }
        "help" => Ok(help_reply(CLIENT_HELP)),
        "getredir" => Ok(Frame::Integer(redirect_reply(ctx.session))),
        "trackinginfo" => Ok(tracking_info(ctx.session)),
        "caching" => client_caching(ctx),
        "tracking" => client_tracking(ctx),
        _ => Err(CmdError::Syntax),
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if that client was blocked (it gets its timeout
/// reply, or an `UNBLOCKED` error), else 0.
fn client_unblock<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if ctx.args.len() > 4 {
        return Err(subcommand_syntax("CLIENT", ctx.arg(1)));
    }
    let id = int_arg(ctx.arg(2))?;
    let with_error = match ctx.args.get(3) {
        None => false,
        Some(reason) if is(reason, "timeout") => false,
        Some(reason) if is(reason, "error") => true,
        Some(_) => {
            return Err(CmdError::err(
                "CLIENT UNBLOCK reason should be TIMEOUT or ERROR",
            ));
        }
    };
    let unblocked =
        u64::try_from(id).is_ok_and(|id| ctx.core.blocking.lock().unblock(id, with_error));
    Ok(Frame::Integer(i64::from(unblocked)))
}

/// CLIENT PAUSE timeout-ms [WRITE|ALL]: holds every client's commands (ALL, the default),
/// or those that may write, until the timeout or CLIENT UNPAUSE.
fn client_pause<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let ms = int_arg(ctx.arg(2))
        .map_err(|_| CmdError::err("timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(CmdError::err("timeout is negative"));
    }
    if ctx.args.len() > 4 {
        return Err(subcommand_syntax("CLIENT", ctx.arg(1)));
    }
    let all = match ctx.args.get(3) {
        None => true,
        Some(mode) if is(mode, "all") => true,
        Some(mode) if is(mode, "write") => false,
        Some(_) => return Err(CmdError::err("CLIENT PAUSE mode must be WRITE or ALL")),
    };
    // A timeout past what the clock can hold pauses for a century instead.
    let now = std::time::Instant::now();
    let until = now
        .checked_add(std::time::Duration::from_millis(ms as u64))
        .unwrap_or(now + std::time::Duration::from_secs(100 * 365 * 86_400));
    ctx.core.pause.pause(until, all);
    Ok(ok())
}

/// CLIENT GETREDIR's and TRACKINGINFO's redirect: -1 when not tracking, 0 without a
/// redirect.
fn redirect_reply(session: &Session) -> i64 {
    match &session.tracking {
        None => -1,
        Some(mode) => mode.redirect.map_or(0, |id| id as i64),
    }
}

fn tracking_info(session: &Session) -> Frame {
    let mut flags: Vec<&str> = Vec::new();
    match &session.tracking {
        None => flags.push("off"),
        Some(mode) => {
            flags.push("on");
            for (set, name) in [
                (mode.bcast, "bcast"),
                (mode.optin, "optin"),
                (mode.optout, "optout"),
                (mode.optin && session.caching, "caching-yes"),
                (mode.optout && session.caching, "caching-no"),
                (mode.noloop, "noloop"),
            ] {
                if set {
                    flags.push(name);
                }
            }
        }
    }
    let prefixes = session
        .tracking
        .as_ref()
        .map(|m| m.prefixes.clone())
        .unwrap_or_default();
    Frame::Map(vec![
        (
            Frame::Bulk(b"flags".to_vec()),
            bulk_set(flags.into_iter().map(|f| f.as_bytes().to_vec())),
        ),
        (
            Frame::Bulk(b"redirect".to_vec()),
            Frame::Integer(redirect_reply(session)),
        ),
        (Frame::Bulk(b"prefixes".to_vec()), bulk_array(prefixes)),
    ])
}

/// CLIENT CACHING YES|NO: whether the next command's reads are remembered, in OPTIN
/// (YES) or OPTOUT (NO) mode.
fn client_caching<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let Some(mode) = &ctx.session.tracking else {
        return Err(CmdError::err(
            "CLIENT CACHING can be called only when the client is in tracking mode with OPTIN \
             or OPTOUT mode enabled",
        ));
    };
    let arg = ctx.arg(2);
    if is(arg, "yes") && !mode.optin {
        return Err(CmdError::err(
            "CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
        ));
    }
    if is(arg, "no") && !mode.optout {
        return Err(CmdError::err(
            "CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
        ));
    }
    if !is(arg, "yes") && !is(arg, "no") {
        return Err(CmdError::Syntax);
    }
    ctx.session.caching = true;
    Ok(ok())
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP],
/// checked as Redis 7.0 checks it.
fn client_tracking<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let on = ctx.arg(2);
    let mut mode = TrackingMode::default();
    let mut args = ctx.args[3..].iter();
    while let Some(arg) = args.next() {
        if is(arg, "redirect") {
            let id = args.next().ok_or(CmdError::Syntax)?;
            if mode.redirect.is_some() {
                return Err(CmdError::err(
                    "A client can only redirect to a single other client",
                ));
            }
            let id = int_arg(id)?;
            match u64::try_from(id) {
                Ok(id) if ctx.core.registry.contains(id) => mode.redirect = Some(id),
                _ => {
                    return Err(CmdError::err(
                        "The client ID you want redirect to does not exist",
                    ));
                }
            }
        } else if is(arg, "prefix") {
            mode.prefixes
                .push(args.next().ok_or(CmdError::Syntax)?.clone());
        } else if is(arg, "bcast") {
            mode.bcast = true;
        } else if is(arg, "optin") {
            mode.optin = true;
        } else if is(arg, "optout") {
            mode.optout = true;
        } else if is(arg, "noloop") {
            mode.noloop = true;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    if is(on, "off") {
        if ctx.args.len() > 3 {
            return Err(CmdError::Syntax);
        }
        ctx.session.tracking = None;
        ctx.session.caching = false;
        ctx.core.tracking.disable(ctx.session.id);
        return Ok(ok());
    }
    if !is(on, "on") {
        return Err(CmdError::Syntax);
    }
    let mode = checked_tracking(ctx.session.tracking.as_ref(), mode)?;
    ctx.core.tracking.enable(ctx.session.id, mode.clone());
    ctx.session.tracking = Some(mode);
    Ok(ok())
}

/// `new` options against themselves and the options in force (`old`), as Redis refuses
/// them; BCAST prefixes add to those already given.
fn checked_tracking(old: Option<&TrackingMode>, mut new: TrackingMode) -> CmdResult<TrackingMode> {
    let err = |text: &str| Err(CmdError::err(text));
    if !new.bcast && !new.prefixes.is_empty() {
        return err("PREFIX option requires BCAST mode to be enabled");
    }
    if let Some(old) = old
        && old.bcast != new.bcast
    {
        return err(
            "You can't switch BCAST mode on/off before disabling tracking for this client, \
             and then re-enabling it with a different mode.",
        );
    }
    if new.bcast && (new.optin || new.optout) {
        return err("OPTIN and OPTOUT are not compatible with BCAST");
    }
    if new.optin && new.optout {
        return err("You can't specify both OPTIN mode and OPTOUT mode");
    }
    if let Some(old) = old
        && ((new.optin && old.optout) || (new.optout && old.optin))
    {
        return err(
            "You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, \
             and then re-enabling it with a different mode.",
        );
    }
    let existing = old.map(|m| m.prefixes.as_slice()).unwrap_or_default();
    let overlaps = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    for (i, prefix) in new.prefixes.iter().enumerate() {
        let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
        if let Some(other) = existing
            .iter()
            .find(|e| overlaps(e, prefix) && *e != prefix)
        {
            return Err(CmdError::err(format!(
                "Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single \
                 client must not overlap.",
                show(prefix),
                show(other)
            )));
        }
        if let Some(other) = new.prefixes[i + 1..].iter().find(|o| overlaps(o, prefix)) {
            return Err(CmdError::err(format!(
                "Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single \
                 client must not overlap.",
                show(prefix),
                show(other)
            )));
        }
    }
    // Redis keeps a client's prefixes in a radix tree: sorted, once each.
    new.prefixes.extend_from_slice(existing);
    new.prefixes.sort();
    new.prefixes.dedup();
    Ok(new)
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
];

/// CLIENT REPLY ON|OFF|SKIP: OFF silences this and every later reply until ON, SKIP this
/// and the next one's (Redis's `CLIENT_REPLY_OFF` and `CLIENT_REPLY_SKIP_NEXT`).
fn client_reply<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mode = ctx.arg(2);
    let session = &mut *ctx.session;
    match () {
        _ if is(mode, "on") => {
            session.replies_off = false;
            session.skip_next = false;
            session.skipping = false;
        }
        _ if is(mode, "off") => {
            session.replies_off = true;
            session.unanswered = true;
        }
        _ if is(mode, "skip") => {
            session.skip_next = true;
            session.unanswered = true;
        }
        _ => return Err(CmdError::Syntax),
    }
    Ok(ok())
}

/// CLIENT LIST's arguments: nothing, or `ID id [id ...]`.
fn list_filter(args: &[Vec<u8>]) -> CmdResult<ClientFilter> {
    match args.split_first() {
        None => Ok(ClientFilter::default()),
        Some((first, ids)) if is(first, "id") && !ids.is_empty() => Ok(ClientFilter {
            ids: ids
                .iter()
                .map(|id| client_id(id))
                .collect::<CmdResult<_>>()?,
            addr: None,
            user: None,
        }),
        Some(_) => Err(CmdError::Syntax),
    }
}

/// CLIENT KILL's `filter value` pairs (ID, ADDR, SKIPME): the filter, and whether the
/// caller's own connection is spared (the default).
fn kill_filter(args: &[Vec<u8>]) -> CmdResult<(ClientFilter, bool)> {
    if args.is_empty() || !args.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    let mut filter = ClientFilter::default();
    let mut skip_me = true;
    for pair in args.chunks_exact(2) {
        let (name, value) = (&pair[0], &pair[1]);
        if is(name, "id") {
            filter.ids.push(client_id(value)?);
        } else if is(name, "addr") {
            filter.addr = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(name, "user") {
            filter.user = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(name, "skipme") && (is(value, "yes") || is(value, "no")) {
            skip_me = is(value, "yes");
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok((filter, skip_me))
}

fn client_id(arg: &[u8]) -> CmdResult<u64> {
    match std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
    {
        Some(id) if id > 0 => Ok(id as u64),
        _ => Err(CmdError::err("client-id should be greater than 0")),
    }
}

/// `(name, value)` of every setting CONFIG GET knows.
fn settings<E: Engine>(core: &Core<E>) -> Vec<(&'static str, String)> {
    let config = core.config();
    let history_secs = core.store.docdb().options().history_retention.as_secs();
    vec![
        (
            "requirepass",
            config.requirepass.clone().unwrap_or_default(),
        ),
        ("maxclients", config.maxclients.to_string()),
        ("proto-max-bulk-len", config.limits.max_bulk_len.to_string()),
        ("appendonly", "yes".into()),
        ("appendfsync", config.fsync.name().into()),
        ("save", String::new()),
        ("databases", crate::store::NUMBERED_DBS.to_string()),
        (
            "bind",
            config
                .listen
                .rsplit_once(':')
                .map_or("", |(h, _)| h)
                .to_string(),
        ),
        (
            "port",
            config.listen.rsplit(':').next().unwrap_or("").to_string(),
        ),
        ("dir", config.data_dir.clone()),
        ("aclfile", config.aclfile.clone().unwrap_or_default()),
        ("timeout", "0".into()),
        ("history-retention-seconds", history_secs.to_string()),
        (
            "slowlog-log-slower-than",
            core.slowlog.slower_than_us().to_string(),
        ),
        ("slowlog-max-len", core.slowlog.max_len().to_string()),
        (
            "latency-monitor-threshold",
            core.latency.threshold_ms().to_string(),
        ),
        // DEBUG and MODULE are refused, as by a Redis without these options set.
        ("enable-debug-command", "no".into()),
        ("enable-module-command", "no".into()),
    ]
}

fn config<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let sub = ctx.arg(1).to_ascii_lowercase();
    match sub.as_slice() {
        b"get" if ctx.args.len() >= 3 => {
            let all = settings(ctx.core);
            let mut out = Vec::new();
            for (name, value) in all {
                if ctx.args[2..]
                    .iter()
                    .any(|p| glob::matches(&p.to_ascii_lowercase(), name.as_bytes()))
                {
                    out.push((
                        Frame::Bulk(name.as_bytes().to_vec()),
                        Frame::Bulk(value.into_bytes()),
                    ));
                }
            }
            Ok(Frame::Map(out))
        }
        b"set" if ctx.args.len() >= 4 && ctx.args.len().is_multiple_of(2) => {
            for pair in ctx.args[2..].chunks(2) {
                config_set(ctx, &pair[0], &pair[1])?;
            }
            Ok(ok())
        }
        b"resetstat" if ctx.args.len() == 2 => Ok(ok()),
        b"help" if ctx.args.len() == 2 => Ok(help_reply(CONFIG_HELP)),
        b"rewrite" if ctx.args.len() == 2 => config_rewrite(ctx.core),
        b"get" | b"set" | b"resetstat" | b"help" | b"rewrite" => Err(super::wrong_arity(&format!(
            "config|{}",
            String::from_utf8_lossy(&sub)
        ))),
        _ => Err(unknown_subcommand(ctx.arg(1), "CONFIG")),
    }
}

/// CONFIG REWRITE: the settings CONFIG SET changes, written into the TOML file given with
/// `--config` (see [`crate::rewrite`]); without one, Redis's error.
fn config_rewrite<E: Engine>(core: &Core<E>) -> CmdResult<Frame> {
    let (path, settings) = {
        let config = core.config();
        let Some(path) = config.config_file.clone() else {
            return Err(CmdError::err("The server is running without a config file"));
        };
        let history = core.store.docdb().options().history_retention.as_secs();
        let text = |key, value: &str, default: bool| Setting {
            key,
            value: toml::Value::String(value.to_string()),
            default,
        };
        let number = |key, value: u64, default: u64| Setting {
            key,
            value: toml::Value::Integer(i64::try_from(value).unwrap_or(i64::MAX)),
            default: value == default,
        };
        let password = config.requirepass.as_deref();
        let settings = vec![
            text("requirepass", password.unwrap_or(""), password.is_none()),
            number("maxclients", config.maxclients as u64, 10_000),
            number(
                "proto-max-bulk-len",
                config.limits.max_bulk_len as u64,
                Limits::default().max_bulk_len as u64,
            ),
            text(
                "fsync",
                config.fsync.name(),
                config.fsync == Fsync::default(),
            ),
            number("history-retention", history, 900),
        ];
        (path, settings)
    };
    crate::rewrite::rewrite_file(std::path::Path::new(&path), &settings).map_err(|e| {
        tracing::warn!(path, error = %e, "CONFIG REWRITE failed");
        CmdError::err(format!("Rewriting config file: {e}"))
    })?;
    Ok(ok())
}

fn config_set<E: Engine>(ctx: &Ctx<'_, '_, E>, name: &[u8], value: &[u8]) -> CmdResult<()> {
    let text = String::from_utf8_lossy(value).into_owned();
    let name_text = String::from_utf8_lossy(name).to_ascii_lowercase();
    let bad = || {
        CmdError::err(format!(
            "CONFIG SET failed (possibly related to argument '{name_text}') - argument couldn't be parsed into an integer"
        ))
    };
    match name_text.as_str() {
        "requirepass" => {
            // The default user's password follows requirepass, as in Redis.
            let password = (!text.is_empty()).then_some(text);
            ctx.core.acl.set_default_password(password.as_deref());
            ctx.core.update_config(|c| c.requirepass = password);
        }
        "maxclients" => {
            let n: usize = text.parse().map_err(|_| bad())?;
            ctx.core.update_config(|c| c.maxclients = n.max(1));
        }
        "proto-max-bulk-len" => {
            let n: usize = text.parse().map_err(|_| bad())?;
            ctx.core
                .update_config(|c| c.limits.max_bulk_len = n.max(1024 * 1024));
        }
        "appendfsync" => {
            let mode = Fsync::parse(&text).ok_or_else(|| {
                CmdError::err(
                    "CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: always, everysec, no",
                )
            })?;
            ctx.core.update_config(|c| c.fsync = mode);
        }
        "slowlog-log-slower-than" => {
            let us = ranged_setting(&name_text, &text, -1)?;
            ctx.core.slowlog.set_slower_than_us(us);
        }
        "slowlog-max-len" => {
            let len = ranged_setting(&name_text, &text, 0)?;
            ctx.core.slowlog.set_max_len(len as u64);
        }
        "latency-monitor-threshold" => {
            let ms = ranged_setting(&name_text, &text, 0)?;
            ctx.core.latency.set_threshold_ms(ms as u64);
        }
        "aclfile" | "databases" => {
            return Err(CmdError::err(format!(
                "CONFIG SET failed (possibly related to argument '{name_text}') - can't set immutable config"
            )));
        }
        "history-retention-seconds" => {
            let secs: u64 = text.parse().map_err(|_| bad())?;
            let db = ctx.store().docdb();
            let mut options = db.options();
            options.history_retention = std::time::Duration::from_secs(secs);
            db.set_options(options);
        }
        _ => {
            return Err(CmdError::err(format!(
                "Unknown option or number of arguments for CONFIG SET - '{name_text}'"
            )));
        }
    }
    Ok(())
}

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
];

/// An integer setting from `min` to `i64::MAX`, refused with Redis's words otherwise.
fn ranged_setting(name: &str, text: &str, min: i64) -> CmdResult<i64> {
    let failed = |why: String| {
        CmdError::err(format!(
            "CONFIG SET failed (possibly related to argument '{name}') - {why}"
        ))
    };
    let n: i64 = text
        .parse()
        .map_err(|_| failed("argument couldn't be parsed into an integer".into()))?;
    if n < min {
        return Err(failed(format!(
            "argument must be between {min} and {} inclusive",
            i64::MAX
        )));
    }
    Ok(n)
}

fn role<E: Engine>(_ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Array(vec![
        Frame::Bulk(b"master".to_vec()),
        Frame::Integer(0),
        Frame::Array(Vec::new()),
    ]))
}

fn monitor<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    ctx.core
        .broker
        .add_monitor(ctx.session.id, &ctx.session.push);
    Ok(ok())
}

fn publish<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Ok(Frame::Integer(
        ctx.core.broker.publish(ctx.arg(1), ctx.arg(2)),
    ))
}

fn subscription_count<E: Engine>(ctx: &Ctx<'_, '_, E>) -> i64 {
    (ctx.session.channels.len() + ctx.session.patterns.len()) as i64
}

/// A subscription confirmation: its kind, the channel (or null) and the count after it.
pub(super) fn confirm(kind: &str, name: Option<Vec<u8>>, count: i64) -> Frame {
    Frame::Push(vec![
        Frame::Bulk(kind.as_bytes().to_vec()),
        bulk_or_null(name),
        Frame::Integer(count),
    ])
}

/// SUBSCRIBE/PSUBSCRIBE: one confirmation per name; the last is the command's reply.
fn subscribe_generic<E: Engine>(ctx: &mut Ctx<'_, '_, E>, pattern: bool) -> CmdResult<Frame> {
    let kind = if pattern { "psubscribe" } else { "subscribe" };
    let mut replies = Vec::new();
    for name in &ctx.args[1..] {
        ctx.core
            .broker
            .subscribe(ctx.session.id, name, pattern, &ctx.session.push);
        let set = if pattern {
            &mut ctx.session.patterns
        } else {
            &mut ctx.session.channels
        };
        set.insert(name.clone());
        replies.push(confirm(kind, Some(name.clone()), subscription_count(ctx)));
    }
    finish_replies(ctx, replies)
}

/// RESET: the connection as it was when it connected (Redis's `clearClientConnectionState`):
/// no transaction or watched keys, no subscriptions, database 0, RESP2, no name, replies
/// on, and, with a password set, not authenticated.
fn reset<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let (core, session) = (ctx.core, &mut *ctx.session);
    session.multi = None;
    session.watched.clear();
    for (names, pattern) in [
        (&mut session.channels, false),
        (&mut session.patterns, true),
    ] {
        for name in std::mem::take(names) {
            core.broker.unsubscribe(session.id, &name, pattern);
        }
    }
    super::sharded::leave_all(core, session);
    session.db = 0;
    session.db_name = "0".into();
    session.protocol = Protocol::Resp2;
    session.name = None;
    (session.replies_off, session.skip_next, session.skipping) = (false, false, false);
    core.acl
        .start_session(session, core.config().requirepass.is_some());
    core.registry.update(session);
    session.tracking = None;
    session.caching = false;
    core.tracking.disable(session.id);
    Ok(Frame::Simple("RESET".into()))
}

fn unsubscribe_generic<E: Engine>(ctx: &mut Ctx<'_, '_, E>, pattern: bool) -> CmdResult<Frame> {
    let kind = if pattern {
        "punsubscribe"
    } else {
        "unsubscribe"
    };
    let names: Vec<Vec<u8>> = if ctx.args.len() > 1 {
        ctx.args[1..].to_vec()
    } else if pattern {
        ctx.session.patterns.iter().cloned().collect()
    } else {
        ctx.session.channels.iter().cloned().collect()
    };
    if names.is_empty() {
        return Ok(confirm(kind, None, subscription_count(ctx)));
    }
    let mut replies = Vec::new();
    for name in names {
        ctx.core.broker.unsubscribe(ctx.session.id, &name, pattern);
        let set = if pattern {
            &mut ctx.session.patterns
        } else {
            &mut ctx.session.channels
        };
        set.remove(&name);
        replies.push(confirm(kind, Some(name), subscription_count(ctx)));
    }
    finish_replies(ctx, replies)
}

/// Sends all but the last confirmation early and returns the last; CLIENT LIST then shows
/// the new subscription counts.
pub(super) fn finish_replies<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    mut replies: Vec<Frame>,
) -> CmdResult<Frame> {
    ctx.core.registry.update(ctx.session);
    let last = replies.pop().unwrap_or(Frame::Null);
    ctx.early.extend(replies);
    Ok(last)
}

fn subscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    subscribe_generic(ctx, false)
}

fn unsubscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    unsubscribe_generic(ctx, false)
}

fn psubscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    subscribe_generic(ctx, true)
}

fn punsubscribe<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    unsubscribe_generic(ctx, true)
}

/// DOCDB.ASOF <unix-µs> <read command ...>: the command as of that time.
fn asof<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let micros = int_arg(ctx.arg(1))?;
    let micros = u64::try_from(micros)
        .map_err(|_| CmdError::err("DOCDB.ASOF time must be unix microseconds"))?;
    // Every logical tick of that microsecond is included.
    let ht = HybridTime((micros << LOGICAL_BITS) | ((1 << LOGICAL_BITS) - 1));
    let now = ctx.store().read_time();
    if ht > now {
        return Err(CmdError::err("DOCDB.ASOF time is in the future"));
    }
    let cutoff = ctx.store().docdb().gc_policy().history_cutoff();
    if ht < cutoff {
        let retention = ctx.store().docdb().options().history_retention.as_secs();
        return Err(CmdError::err(format!(
            "DOCDB.ASOF time is older than the history retained ({retention} s)"
        )));
    }
    let inner = ctx.args[2..].to_vec();
    execute_as_of(ctx, ht, &inner)
}
