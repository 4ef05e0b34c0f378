//! ACL SETUSER|GETUSER|DELUSER|LIST|USERS|WHOAMI|CAT|GENPASS|LOG|DRYRUN|LOAD|SAVE|HELP over
//! [`crate::acl`], and the permission check [`check`] that dispatch runs for every request.

use std::time::Instant;

use engine::Engine;

use super::{
    ADMIN, Ctx, READONLY, Spec, WRITE, bulk_array, help_reply, keyspec, ok, spec, subcommand,
    subcommand_syntax, wrong_arity,
};
use crate::acl::{self, COMMANDS, LogEntry, User};
use crate::clients::ClientFilter;
use crate::core::Core;
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::session::Session;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![spec("acl", -2, ADMIN, 0, acl_command)]
}

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
];

/// ACL's subcommands with Redis 7.0's arities.
const SUBCOMMANDS: &[(&str, i32)] = &[
    ("cat", -2),
    ("deluser", -3),
    ("dryrun", -4),
    ("genpass", -2),
    ("getuser", 3),
    ("help", 2),
    ("list", 2),
    ("load", 2),
    ("log", -2),
    ("save", 2),
    ("setuser", -3),
    ("users", 2),
    ("whoami", 2),
];

const NO_ACLFILE: &str = "This Redis instance is not configured to use an ACL file. You may \
                          want to specify users via the ACL SETUSER command and then issue a \
                          CONFIG REWRITE (assuming you have a Redis configuration file set) \
                          in order to store users in the Redis configuration.";

fn acl_command<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    match subcommand("acl", SUBCOMMANDS, ctx.arg(1), ctx.args.len())? {
        "setuser" => setuser(ctx),
        "getuser" => Ok(getuser(ctx)),
        "deluser" => deluser(ctx),
        "list" => Ok(list(ctx)),
        "users" => Ok(bulk_array(
            ctx.core.acl.users().keys().map(|n| n.as_bytes().to_vec()),
        )),
        "whoami" => Ok(Frame::Bulk(ctx.session.user.as_bytes().to_vec())),
        "cat" => cat(ctx),
        "genpass" => genpass(ctx),
        "log" => log(ctx),
        "dryrun" => dryrun(ctx),
        "load" => load(ctx),
        "save" => save(ctx),
        _ => Ok(help_reply(HELP)),
    }
}

/// ACL SETUSER: the rules apply to a copy, which replaces the user only if all apply.
fn setuser<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let name = String::from_utf8_lossy(ctx.arg(2)).into_owned();
    let mut user = ctx
        .core
        .acl
        .users()
        .get(&name)
        .cloned()
        .unwrap_or_else(|| User::new(&name));
    let rules = acl::merge_selectors(ctx.args[3..].iter().map(Vec::as_slice)).map_err(|at| {
        CmdError::err(format!(
            "Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(&ctx.args[3 + at])
        ))
    })?;
    for rule in &rules {
        user.apply(rule).map_err(|e| {
            CmdError::err(format!(
                "Error in ACL SETUSER modifier '{}': {e}",
                String::from_utf8_lossy(rule)
            ))
        })?;
    }
    ctx.core.acl.update(|users| users.insert(name, user));
    Ok(ok())
}

fn getuser<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> Frame {
    let name = String::from_utf8_lossy(ctx.arg(2));
    let users = ctx.core.acl.users();
    let Some(user) = users.get(name.as_ref()) else {
        return Frame::Null;
    };
    let field = |name: &str, value: Frame| (Frame::Bulk(name.as_bytes().to_vec()), value);
    let text = |s: String| Frame::Bulk(s.into_bytes());
    Frame::Map(vec![
        field(
            "flags",
            bulk_array(user.flag_names().iter().map(|f| f.as_bytes().to_vec())),
        ),
        field(
            "passwords",
            bulk_array(user.password_hashes().iter().map(|p| p.as_bytes().to_vec())),
        ),
        field("commands", text(user.commands_text())),
        field("keys", text(user.keys_text())),
        field("channels", text(user.channels_text())),
        field(
            "selectors",
            Frame::Array(
                user.selectors
                    .iter()
                    .map(|selector| {
                        Frame::Map(vec![
                            field("commands", text(selector.commands_text())),
                            field("keys", text(selector.keys_text())),
                            field("channels", text(selector.channels_text())),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

/// ACL DELUSER: the count deleted; their connections close, as in Redis.
fn deluser<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let names: Vec<String> = ctx.args[2..]
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    if names.iter().any(|n| n == "default") {
        return Err(CmdError::err("The 'default' user cannot be removed"));
    }
    let deleted: Vec<String> = ctx.core.acl.update(|users| {
        names
            .iter()
            .filter(|n| users.remove(n.as_str()).is_some())
            .cloned()
            .collect()
    });
    close_connections_of(ctx, &deleted);
    Ok(Frame::Integer(deleted.len() as i64))
}

/// Closes every connection of the users named, this one after its reply.
fn close_connections_of<E: Engine>(ctx: &mut Ctx<'_, '_, E>, names: &[String]) {
    for name in names {
        let filter = ClientFilter {
            user: Some(name.clone()),
            ..ClientFilter::default()
        };
        ctx.core.registry.kill(&filter, None);
        if ctx.session.user == *name {
            ctx.session.quit = true;
        }
    }
}

/// ACL LOAD: every user from the ACL file, or none if it has an error; the replaced
/// users' connections close, as in Redis 7.0.
fn load<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let replaced = ctx
        .core
        .load_acl_file()
        .ok_or_else(|| CmdError::err(NO_ACLFILE))?
        .map_err(CmdError::err)?;
    close_connections_of(ctx, &replaced);
    Ok(ok())
}

/// ACL SAVE: every user to the ACL file, replacing it whole.
fn save<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let Some(path) = ctx.core.config().aclfile.clone() else {
        return Err(CmdError::err(NO_ACLFILE));
    };
    let saved = crate::aclfile::save(std::path::Path::new(&path), &ctx.core.acl.users());
    saved.map(|()| ok()).map_err(|e| {
        tracing::warn!(path, error = %e, "ACL SAVE failed");
        CmdError::err(
            "There was an error trying to save the ACLs. Please check the server logs for more \
             information",
        )
    })
}

fn list<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> Frame {
    bulk_array(
        ctx.core
            .acl
            .users()
            .values()
            .map(|u| u.acl_line().into_bytes()),
    )
}

/// ACL CAT: the categories, or the commands (of docdb's table) in one.
fn cat<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    match ctx.args.len() {
        2 => Ok(bulk_array(
            acl::CATEGORIES.iter().map(|(n, _)| n.as_bytes().to_vec()),
        )),
        3 => {
            let flag = acl::category(ctx.arg(2)).ok_or_else(|| {
                CmdError::err(format!(
                    "Unknown category '{}'",
                    String::from_utf8_lossy(ctx.arg(2))
                ))
            })?;
            let table = &ctx.core.table;
            Ok(bulk_array(
                COMMANDS
                    .iter()
                    .filter(|(name, flags)| {
                        flags & flag != 0
                            && table
                                .get(name.split('|').next().unwrap_or_default().as_bytes())
                                .is_some()
                    })
                    .map(|(name, _)| name.as_bytes().to_vec()),
            ))
        }
        _ => Err(subcommand_syntax("ACL", ctx.arg(1))),
    }
}

/// ACL GENPASS [bits]: random hex, one digit per 4 bits rounded up.
fn genpass<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let bits = match ctx.args.get(2) {
        None => 256,
        Some(arg) => crate::number::int_arg(arg)?,
    };
    if !(1..=4096).contains(&bits) {
        return Err(CmdError::err(
            "ACL GENPASS argument must be the number of bits for the output password, a \
             positive number up to 4096",
        ));
    }
    let chars = (bits as usize).div_ceil(4);
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    random_bytes(&mut bytes)
        .map_err(|e| CmdError::err(format!("cannot read random bytes: {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Frame::Bulk(hex.as_bytes()[..chars].to_vec()))
}

/// Fills `out` from the OS's random source. There is no fallback: a password from a
/// guessable source would be worse than an error.
fn random_bytes(out: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read as _;
    std::fs::File::open("/dev/urandom")?.read_exact(out)
}

/// ACL LOG [count|RESET].
fn log<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let count = match ctx.args.get(2) {
        None => 10,
        Some(arg) if super::is(arg, "reset") => {
            ctx.core.acl.reset_log();
            return Ok(ok());
        }
        Some(_) if ctx.args.len() > 3 => return Err(subcommand_syntax("ACL", ctx.arg(1))),
        Some(arg) => crate::number::int_arg(arg)?.max(0) as usize,
    };
    let now = Instant::now();
    let field = |name: &str, value: Frame| (Frame::Bulk(name.as_bytes().to_vec()), value);
    let text = |s: &str| Frame::Bulk(s.as_bytes().to_vec());
    let entries = ctx.core.acl.log_entries(count);
    Ok(Frame::Array(
        entries
            .iter()
            .map(|e| {
                let age = now.duration_since(e.at).as_millis() as f64 / 1000.0;
                Frame::Map(vec![
                    field("count", Frame::Integer(e.count as i64)),
                    field("reason", text(e.reason)),
                    field("context", text(e.context)),
                    field("object", text(&e.object)),
                    field("username", text(&e.username)),
                    field("age-seconds", Frame::Double(age)),
                    field("client-info", text(&e.client_info)),
                ])
            })
            .collect(),
    ))
}

/// ACL DRYRUN user command [arg ...].
fn dryrun<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let name = String::from_utf8_lossy(ctx.arg(2)).into_owned();
    let users = ctx.core.acl.users();
    let Some(user) = users.get(&name) else {
        return Err(CmdError::err(format!("User '{name}' not found")));
    };
    let args = &ctx.args[3..];
    let Some(spec) = ctx.core.table.get(&args[0]) else {
        return Err(CmdError::err(format!(
            "Command '{}' not found",
            String::from_utf8_lossy(&args[0])
        )));
    };
    if !spec.arity_ok(args.len()) {
        return Err(wrong_arity(spec.name));
    }
    Ok(match verdict(user, spec, args) {
        None => ok(),
        Some(d) => Frame::Bulk(d.dryrun_text().into_bytes()),
    })
}

/// Why a request is refused.
struct Denial {
    reason: &'static str,
    object: String,
}

impl Denial {
    fn error(&self) -> CmdError {
        CmdError::Err(match self.reason {
            "command" => format!(
                "NOPERM this user has no permissions to run the '{}' command",
                self.object
            ),
            "key" => "NOPERM this user has no permissions to access one of the keys used as \
                      arguments"
                .into(),
            _ => "NOPERM this user has no permissions to access one of the channels used as \
                  arguments"
                .into(),
        })
    }

    fn dryrun_text(&self) -> String {
        match self.reason {
            "command" => format!(
                "This user has no permissions to run the '{}' command",
                self.object
            ),
            kind => format!(
                "This user has no permissions to access the '{}' {kind}",
                self.object
            ),
        }
    }
}

/// Whether `user` may run `args` (a request to `spec`, arity checked), as Redis's
/// `ACLCheckAllUserCommandPerm`: allowed if its own permissions or any selector's allow
/// all of it; else the most relevant denial (channel over key over command, then the one
/// at the later argument).
fn verdict<E: Engine>(user: &User, spec: &Spec<E>, args: &[Vec<u8>]) -> Option<Denial> {
    if spec.flags & super::NO_AUTH != 0 || user.unrestricted() {
        return None;
    }
    let mut relevant: Option<(u8, usize, Denial)> = None;
    for permissions in std::iter::once(user).chain(&user.selectors) {
        let denial = permissions_verdict(permissions, spec, args)?;
        if relevant
            .as_ref()
            .is_none_or(|(rank, at, _)| (denial.0, denial.1) > (*rank, *at))
        {
            relevant = Some(denial);
        }
    }
    relevant.map(|(_, _, denial)| denial)
}

/// One set of permissions' denial of `args`, if any, with its rank (Redis's `ACL_DENIED_*`
/// value) and argument index: its command, then its keys, then its channels.
fn permissions_verdict<E: Engine>(
    user: &User,
    spec: &Spec<E>,
    args: &[Vec<u8>],
) -> Option<(u8, usize, Denial)> {
    let name = acl::full_name(spec.name, args);
    if !user.can_run(&name, args) {
        let denial = Denial {
            reason: "command",
            object: name,
        };
        return Some((1, 0, denial));
    }
    let write = spec.flags & WRITE != 0;
    let read = spec.flags & READONLY != 0 || !write;
    for i in keyspec::key_positions(spec, args).unwrap_or_default() {
        if !user.can_key(&args[i], read, write) {
            let denial = Denial {
                reason: "key",
                object: String::from_utf8_lossy(&args[i]).into_owned(),
            };
            return Some((2, i, denial));
        }
    }
    let (channels, pattern): (&[Vec<u8>], bool) = match spec.name {
        "publish" | "spublish" => (&args[1..2], false),
        "subscribe" | "ssubscribe" => (&args[1..], false),
        "psubscribe" => (&args[1..], true),
        _ => (&[], false),
    };
    channels
        .iter()
        .position(|c| !user.can_channel(c, pattern))
        .map(|at| {
            let denial = Denial {
                reason: "channel",
                object: String::from_utf8_lossy(&channels[at]).into_owned(),
            };
            (4, at + 1, denial)
        })
}

/// The permission check of every request: NOPERM (and an ACL LOG entry) if the session's
/// user may not run it. Only called when the session is not known to be unrestricted at
/// the current ACL epoch; finding it unrestricted records that.
pub(super) fn check<E: Engine>(ctx: &mut Ctx<'_, '_, E>, spec: &Spec<E>) -> CmdResult<()> {
    let core = ctx.core;
    let users = core.acl.users();
    let epoch = core.acl.epoch();
    let denial = match users.get(&ctx.session.user) {
        Some(user) if user.unrestricted() => {
            ctx.session.acl_ok = epoch;
            return Ok(());
        }
        Some(user) => verdict(user, spec, ctx.args),
        // The user was deleted (its connections are closing).
        None => Some(Denial {
            reason: "command",
            object: acl::full_name(spec.name, ctx.args),
        }),
    };
    drop(users);
    match denial {
        None => Ok(()),
        Some(d) => {
            log_denial(ctx, d.reason, d.object.clone(), ctx.session.user.clone());
            Err(d.error())
        }
    }
}

/// The ACL check of a command a script calls (Redis's `scriptVerifyACL`): the error text
/// if the session's user may not run it, after an ACL LOG entry in the `lua` context.
pub(super) fn check_script<E: Engine>(
    core: &Core<E>,
    session: &Session,
    spec: &Spec<E>,
    args: &[Vec<u8>],
) -> Option<&'static str> {
    if session.acl_ok == core.acl.epoch() {
        return None;
    }
    let denial = match core.acl.users().get(&session.user) {
        Some(user) => verdict(user, spec, args)?,
        None => Denial {
            reason: "command",
            object: acl::full_name(spec.name, args),
        },
    };
    let text = match denial.reason {
        "command" => "The user executing the script can't run this command or subcommand",
        "key" => {
            "The user executing the script can't access at least one of the keys mentioned \
             in the command arguments"
        }
        _ => {
            "The user executing the script can't publish to the channel mentioned in the \
              command"
        }
    };
    let entry = log_entry(core, session, denial.reason, "lua", denial.object);
    core.acl.log(entry);
    Some(text)
}

/// Adds an ACL LOG entry for the session of `ctx`.
fn log_denial<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    reason: &'static str,
    object: String,
    username: String,
) {
    let context = if ctx.session.multi.is_some() {
        "multi"
    } else {
        "toplevel"
    };
    let mut entry = log_entry(ctx.core, ctx.session, reason, context, object);
    entry.username = username;
    ctx.core.acl.log(entry);
}

/// An ACL LOG entry for `session`'s user, with its CLIENT LIST line.
fn log_entry<E: Engine>(
    core: &Core<E>,
    session: &Session,
    reason: &'static str,
    context: &'static str,
    object: String,
) -> LogEntry {
    let own = ClientFilter {
        ids: vec![session.id],
        ..ClientFilter::default()
    };
    LogEntry {
        count: 1,
        reason,
        context,
        object,
        username: session.user.clone(),
        at: Instant::now(),
        client_info: core.registry.list(&own).trim_end().to_string(),
    }
}

/// AUTH / HELLO AUTH as `user` (None: `default`) with `pass`: on success the session runs
/// as that user; on failure an `auth` ACL LOG entry and WRONGPASS.
pub(super) fn authenticate<E: Engine>(
    ctx: &mut Ctx<'_, '_, E>,
    user: Option<&[u8]>,
    pass: &[u8],
) -> CmdResult<()> {
    let name = user.unwrap_or(b"default");
    if ctx.core.acl.authenticate(name, pass) {
        set_user(ctx.session, String::from_utf8_lossy(name).into_owned());
        ctx.core.registry.update(ctx.session);
        return Ok(());
    }
    let name = String::from_utf8_lossy(name).into_owned();
    // The object is the command as the client spelled it (AUTH or HELLO), as in Redis.
    let object = String::from_utf8_lossy(&ctx.args[0]).into_owned();
    log_denial(ctx, "auth", object, name);
    Err(CmdError::Err(
        "WRONGPASS invalid username-password pair or user is disabled.".into(),
    ))
}

/// Makes the session run as `user`, authenticated, checked afresh on its next request.
pub(super) fn set_user(session: &mut Session, user: String) {
    session.user = user;
    session.authenticated = true;
    session.acl_ok = 0;
}
