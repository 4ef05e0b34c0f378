//! DEBUG and MODULE as a default Redis 7.0 answers them: `enable-debug-command` and
//! `enable-module-command` are `no` there, so DEBUG and MODULE LOAD|LOADEX|UNLOAD are
//! refused before they run (inside MULTI too, which then fails), while MODULE LIST (no
//! modules) and MODULE HELP answer.

use engine::Engine;

use super::{ADMIN, Ctx, Spec, help_reply, spec, subcommand};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("debug", -2, ADMIN, 0, debug),
        spec("module", -2, 0, 0, module),
    ]
}

const MODULE_HELP: &[&str] = &[
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and \
     optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
];

/// MODULE's subcommands with Redis 7.0's arities (the command's name counted).
const MODULE_SUBCOMMANDS: &[(&str, i32)] = &[
    ("list", 2),
    ("load", -3),
    ("loadex", -3),
    ("unload", 3),
    ("help", 2),
];

/// Redis's refusal of a protected command while its `enable-*-command` option is `no`.
fn not_allowed(command: &str, option: &str) -> CmdError {
    CmdError::err(format!(
        "{command} command not allowed. If the {option} option is set to \"local\", you can \
         run it from a local connection, otherwise you need to set this option in the \
         configuration file, and then restart the server."
    ))
}

/// Why a request to `name` (its arity checked) is refused before it runs or is queued, as
/// Redis's `processCommand` refuses it: any DEBUG; for MODULE an unknown subcommand, a
/// subcommand's wrong arity, or a protected subcommand.
pub(super) fn refusal(name: &str, args: &[Vec<u8>]) -> Option<CmdError> {
    match name {
        "debug" => Some(not_allowed("DEBUG", "enable-debug-command")),
        "module" => match subcommand("module", MODULE_SUBCOMMANDS, &args[1], args.len()) {
            Err(e) => Some(e),
            Ok("load" | "loadex" | "unload") => {
                Some(not_allowed("MODULE", "enable-module-command"))
            }
            Ok(_) => None,
        },
        _ => None,
    }
}

fn debug<E: Engine>(_ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    Err(not_allowed("DEBUG", "enable-debug-command"))
}

/// MODULE LIST (none are loaded) and HELP; the rest is refused.
fn module<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    if let Some(refused) = refusal("module", ctx.args) {
        return Err(refused);
    }
    if super::is(ctx.arg(1), "list") {
        Ok(Frame::Array(Vec::new()))
    } else {
        Ok(help_reply(MODULE_HELP))
    }
}
