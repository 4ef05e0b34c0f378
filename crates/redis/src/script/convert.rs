//! The `redis` table scripts call, and the conversions Redis 7.0 makes between replies and
//! Lua values (script_lua.c: `redisProtocolToLuaType`, `luaReplyToRedisReply`).

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, MultiValue, Table, Value, Variadic};

use crate::frame::{Frame, Protocol};
use crate::number::format_double;

use super::CallFn;

/// What a script killed by SCRIPT KILL fails with.
pub const KILLED_MESSAGE: &str = "Script killed by user with SCRIPT KILL...";

/// How deep a script's reply may nest before Redis refuses it (its Lua stack's limit).
const MAX_REPLY_DEPTH: usize = 1000;

/// The innermost message of an error a Rust callback raised, without mlua's wrapping.
pub fn root_message(error: &mlua::Error) -> String {
    match error {
        mlua::Error::CallbackError { cause, .. } => root_message(cause),
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::WithContext { cause, .. } => root_message(cause),
        other => other.to_string(),
    }
}

/// An error `redis.call` raises: Redis raises the table `{err = <text>}`, which mlua cannot
/// raise from Rust, so the error handler and `pcall` turn this back into that table.
#[derive(Debug)]
pub struct RaisedReply(pub String);

impl std::fmt::Display for RaisedReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RaisedReply {}

/// The [`RaisedReply`] inside a Rust callback's error, if that is what it is.
fn raised_reply(error: &mlua::Error) -> Option<&RaisedReply> {
    match error {
        mlua::Error::CallbackError { cause, .. } => raised_reply(cause),
        mlua::Error::WithContext { cause, .. } => raised_reply(cause),
        mlua::Error::ExternalError(e) => e.downcast_ref::<RaisedReply>(),
        _ => None,
    }
}

fn raise(text: String) -> mlua::Error {
    mlua::Error::external(RaisedReply(text))
}

/// The Lua value of an error a Rust callback raised (`__docdb_errvalue`): a
/// [`RaisedReply`]'s error table, or any other error's message.
fn error_value(lua: &Lua, value: Value) -> mlua::Result<Value> {
    let Value::Error(e) = value else {
        return Ok(value);
    };
    if let Some(RaisedReply(text)) = raised_reply(&e) {
        let table = lua.create_table()?;
        table.set("err", text.as_str())?;
        return Ok(Value::Table(table));
    }
    Ok(Value::String(lua.create_string(root_message(&e))?))
}

/// `f` as a C library function is seen from Lua: its errors are messages located at the
/// calling line, as `luaL_error` locates them (`user_script:3: ...`).
pub fn located(lua: &Lua, f: Function) -> mlua::Result<Function> {
    lua.create_function(move |lua, args: MultiValue| {
        f.call::<MultiValue>(args).map_err(|e| {
            if raised_reply(&e).is_some() {
                return e;
            }
            mlua::Error::RuntimeError(format!("{}{}", caller_position(lua), root_message(&e)))
        })
    })
}

/// `luaL_where(L, 1)` seen from a Rust function: `chunk:line: ` of its caller, or nothing
/// when the caller is not a Lua function.
fn caller_position(lua: &Lua) -> String {
    let Some(frame) = lua.inspect_stack(1) else {
        return String::new();
    };
    let line = frame.curr_line();
    if line <= 0 {
        return String::new();
    }
    let source = frame.source();
    format!("{}:{line}: ", source.short_src.unwrap_or_default())
}

/// `debug.getinfo(level, 'Sl')` for the error handler (scripts have no `debug`): the
/// frame's kind (`C`, `Lua`, `main`), its chunk and its current line, or nothing past the
/// stack's end.
fn frame_at(lua: &Lua, level: usize) -> mlua::Result<(Option<String>, Option<String>, i32)> {
    Ok(match lua.inspect_stack(level) {
        Some(frame) => {
            let source = frame.source();
            (
                Some(source.what.to_string()),
                source.source.map(|s| s.into_owned()),
                frame.curr_line(),
            )
        }
        None => (None, None, 0),
    })
}

/// The `redis` table's functions that need no running script, `redis.*` constants, and
/// Redis's `math.random` over `rand`; returns the `redis` table (`run_with_api` adds
/// `call`, `pcall` and `setresp` to it for each run).
pub fn install_redis_api(lua: &Lua, globals: &Table, rand: SharedRand) -> mlua::Result<Table> {
    let redis = lua.create_table()?;
    redis.set("sha1hex", located(lua, lua.create_function(sha1hex)?)?)?;
    redis.set("error_reply", lua.create_function(error_reply_fn)?)?;
    redis.set("status_reply", lua.create_function(status_reply_fn)?)?;
    redis.set("log", located(lua, lua.create_function(log_fn)?)?)?;
    redis.set("set_repl", located(lua, lua.create_function(set_repl_fn)?)?)?;
    redis.set("replicate_commands", lua.create_function(|_, ()| Ok(true))?)?;
    redis.set("breakpoint", lua.create_function(|_, ()| Ok(false))?)?;
    redis.set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    for (name, level) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
    ] {
        redis.set(name, level)?;
    }
    for (name, flag) in [
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
    ] {
        redis.set(name, flag)?;
    }
    redis.set("REDIS_VERSION", crate::cmd::REDIS_VERSION)?;
    redis.set("REDIS_VERSION_NUM", redis_version_num())?;
    globals.set("redis", redis.clone())?;
    globals.set("__docdb_errvalue", lua.create_function(error_value)?)?;
    globals.set("__docdb_where", lua.create_function(frame_at)?)?;
    install_random(lua, globals, rand)?;
    Ok(redis)
}

/// `0x070000`-style number of the version this server answers as.
fn redis_version_num() -> i64 {
    crate::cmd::REDIS_VERSION
        .split('.')
        .take(3)
        .map(|part| part.parse::<i64>().unwrap_or(0))
        .fold(0, |num, part| (num << 8) | part)
}

/// An error table as `luaPushError` builds it: `-CODE msg` keeps its code, anything else
/// gets `ERR`, and the text loses trailing newlines.
pub fn error_table_text(text: &str) -> String {
    let (code, message) = match text.strip_prefix('-') {
        Some(rest) => match rest.split_once(' ') {
            Some((code, message)) => (code, message),
            None => ("ERR", rest),
        },
        None => ("ERR", text),
    };
    format!("{code} {}", message.trim_matches(['\r', '\n']))
}

fn error_table(lua: &Lua, text: &str) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.set("err", error_table_text(text))?;
    Ok(table)
}

fn sha1hex(_: &Lua, args: Variadic<Value>) -> mlua::Result<String> {
    let [Value::String(s)] = args.as_slice() else {
        return match args.as_slice() {
            [Value::Number(n)] => Ok(super::sha1_hex(format_lua_number(*n).as_bytes())),
            [Value::Integer(n)] => Ok(super::sha1_hex(n.to_string().as_bytes())),
            _ => Err(mlua::Error::RuntimeError(
                "wrong number of arguments".into(),
            )),
        };
    };
    Ok(super::sha1_hex(&s.as_bytes()))
}

/// Lua 5.1's spelling of a number (`tostring`, `LUA_NUMBER_FMT` `%.14g`).
fn format_lua_number(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.into();
    }
    crate::number::format_g(n, 14)
}

fn error_reply_fn(lua: &Lua, args: Variadic<Value>) -> mlua::Result<Table> {
    match args.as_slice() {
        [Value::String(s)] => {
            let text = s.to_string_lossy();
            let text = if text.starts_with('-') {
                text
            } else {
                format!("-{text}")
            };
            error_table(lua, &text)
        }
        _ => error_table(lua, "wrong number or type of arguments"),
    }
}

fn status_reply_fn(lua: &Lua, args: Variadic<Value>) -> mlua::Result<Table> {
    match args.as_slice() {
        [Value::String(s)] => {
            let table = lua.create_table()?;
            table.set("ok", s.clone())?;
            Ok(table)
        }
        _ => error_table(lua, "wrong number or type of arguments"),
    }
}

fn log_fn(_: &Lua, args: Variadic<Value>) -> mlua::Result<()> {
    if args.len() < 2 {
        return Err(mlua::Error::RuntimeError(
            "redis.log() requires two arguments or more.".into(),
        ));
    }
    let level = match args.first() {
        Some(Value::Integer(n)) => *n as f64,
        Some(Value::Number(n)) => *n,
        _ => {
            return Err(mlua::Error::RuntimeError(
                "First argument must be a number (log level).".into(),
            ));
        }
    };
    if !(0.0..=3.0).contains(&level) {
        return Err(mlua::Error::RuntimeError("Invalid debug level.".into()));
    }
    let message: Vec<String> = args
        .iter()
        .skip(1)
        .map(|v| match v {
            Value::String(s) => s.to_string_lossy(),
            other => format!("{other:?}"),
        })
        .collect();
    tracing::info!(target: "docdb::script", level, message = %message.join(" "), "redis.log");
    Ok(())
}

fn set_repl_fn(_: &Lua, args: Variadic<Value>) -> mlua::Result<()> {
    match args.as_slice() {
        [Value::Integer(n)] if (0..=3).contains(n) => Ok(()),
        [Value::Number(n)] if (0.0..=3.0).contains(n) => Ok(()),
        [_] => Err(mlua::Error::RuntimeError(
            "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.".into(),
        )),
        _ => Err(mlua::Error::RuntimeError(
            "redis.set_repl() requires one argument.".into(),
        )),
    }
}

/// Redis's `redisLrand48`: the 48-bit linear congruential generator of `drand48`, from its
/// default seed; one per server, whose state runs on from script to script (Redis 7.0 no
/// longer reseeds it for each script).
#[derive(Debug)]
pub struct Rand48(u64);

impl Default for Rand48 {
    /// `drand48`'s state before any `srand48`.
    fn default() -> Rand48 {
        Rand48(0x1234_ABCD_330E)
    }
}

impl Rand48 {
    const A: u64 = 0x5_DEEC_E66D;
    const C: u64 = 0xB;
    const MASK: u64 = (1 << 48) - 1;
    /// `REDIS_LRAND48_MAX`.
    const MAX: i64 = i32::MAX as i64;

    fn seeded(seed: i32) -> Rand48 {
        let seed = seed as u32 as u64;
        Rand48(((seed >> 16) << 32) | ((seed & 0xFFFF) << 16) | 0x330E)
    }

    fn next(&mut self) -> i64 {
        self.0 = (Self::A.wrapping_mul(self.0).wrapping_add(Self::C)) & Self::MASK;
        (self.0 >> 17) as i64
    }

    /// `math.random()`'s fraction in [0, 1).
    fn fraction(&mut self) -> f64 {
        (self.next() % Self::MAX) as f64 / Self::MAX as f64
    }
}

/// The generator every script of this Lua state shares.
pub type SharedRand = Arc<Mutex<Rand48>>;

fn install_random(lua: &Lua, globals: &Table, rand: SharedRand) -> mlua::Result<()> {
    let math: Table = globals.get("math")?;
    let state = rand.clone();
    let random = lua.create_function(move |_, args: Variadic<Value>| {
        let r = state.lock().unwrap_or_else(|e| e.into_inner()).fraction();
        random_in(r, &args)
    })?;
    math.set("random", located(lua, random)?)?;
    let state = rand;
    let randomseed = lua.create_function(move |_, seed: Value| {
        let seed = lua_int(&seed, 1)?;
        *state.lock().unwrap_or_else(|e| e.into_inner()) = Rand48::seeded(seed as i32);
        Ok(())
    })?;
    math.set("randomseed", located(lua, randomseed)?)
}

fn random_in(r: f64, args: &[Value]) -> mlua::Result<f64> {
    match args {
        [] => Ok(r),
        [upper] => {
            let u = lua_int(upper, 1)?;
            if u < 1 {
                return Err(bad_argument(1, "random", "interval is empty"));
            }
            Ok((r * u as f64).floor() + 1.0)
        }
        [lower, upper] => {
            let l = lua_int(lower, 1)?;
            let u = lua_int(upper, 2)?;
            if l > u {
                return Err(bad_argument(2, "random", "interval is empty"));
            }
            Ok((r * (u - l + 1) as f64).floor() + l as f64)
        }
        _ => Err(mlua::Error::RuntimeError(
            "wrong number of arguments".into(),
        )),
    }
}

/// `luaL_checkint`: a number (or numeric string), truncated.
fn lua_int(value: &Value, position: usize) -> mlua::Result<i64> {
    let number = match value {
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        Value::String(s) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| bad_argument(position, "random", "number expected, got string"))?,
        other => {
            let got = if matches!(other, Value::Nil) {
                "no value"
            } else {
                other.type_name()
            };
            return Err(bad_argument(
                position,
                "random",
                &format!("number expected, got {got}"),
            ));
        }
    };
    Ok(number as i64)
}

fn bad_argument(position: usize, function: &str, message: &str) -> mlua::Error {
    mlua::Error::RuntimeError(format!(
        "bad argument #{position} to '{function}' ({message})"
    ))
}

/// Runs a script (`invoke` calls it under Redis's error handler), with `redis.call`,
/// `redis.pcall` and `redis.setresp` in `redis` going through `call`: whether
/// it succeeded, its result or its error table, and the protocol it chose with
/// `redis.setresp` (its result's replies follow it).
pub fn run_with_api(
    lua: &Lua,
    redis: &Table,
    call: &mut CallFn<'_>,
    invoke: impl FnOnce() -> mlua::Result<(bool, Value)>,
) -> mlua::Result<(bool, Value, Protocol)> {
    let protocol = Cell::new(Protocol::Resp2);
    let call = std::cell::RefCell::new(call);
    let (ok, value) = lua.scope(|scope| {
        let run = |lua: &Lua, args: Variadic<Value>| {
            let mut call = call.borrow_mut();
            redis_call(lua, &args, protocol.get(), &mut **call)
        };
        redis.raw_set(
            "call",
            scope.create_function(move |lua, args| match run(lua, args)? {
                (true, Value::Table(error)) => Err(raise(error.raw_get::<String>("err")?)),
                (_, value) => Ok(value),
            })?,
        )?;
        redis.raw_set(
            "pcall",
            scope.create_function(move |lua, args| Ok(run(lua, args)?.1))?,
        )?;
        redis.raw_set(
            "setresp",
            scope.create_function(|_, args: Variadic<Value>| {
                let version = match args.as_slice() {
                    [Value::Integer(n)] => *n as f64,
                    [Value::Number(n)] => *n,
                    [_] => 0.0,
                    _ => return Err(raise("ERR redis.setresp() requires one argument.".into())),
                };
                match version {
                    2.0 => protocol.set(Protocol::Resp2),
                    3.0 => protocol.set(Protocol::Resp3),
                    _ => return Err(raise("ERR RESP version must be 2 or 3.".into())),
                }
                Ok(())
            })?,
        )?;
        invoke()
    })?;
    Ok((ok, value, protocol.get()))
}

fn failure(lua: &Lua, text: &str) -> mlua::Result<(bool, Value)> {
    Ok((true, Value::Table(error_table(lua, text)?)))
}

/// `redis.call`: the arguments as a command, run, and the reply as a Lua value; `true` and
/// an error table when it failed.
fn redis_call(
    lua: &Lua,
    args: &[Value],
    protocol: Protocol,
    call: &mut CallFn<'_>,
) -> mlua::Result<(bool, Value)> {
    if args.is_empty() {
        return failure(
            lua,
            "Please specify at least one argument for this redis lib call",
        );
    }
    let mut argv = Vec::with_capacity(args.len());
    for arg in args {
        match arg {
            Value::String(s) => argv.push(s.as_bytes().to_vec()),
            Value::Integer(n) => argv.push(format_g17(*n as f64).into_bytes()),
            Value::Number(n) => argv.push(format_g17(*n).into_bytes()),
            _ => {
                return failure(
                    lua,
                    "Lua redis lib command arguments must be strings or integers",
                );
            }
        }
    }
    match call(&argv, protocol) {
        Frame::Error(text) => {
            let table = lua.create_table()?;
            table.set("err", text)?;
            table.set("ignore_error_stats_update", true)?;
            Ok((true, Value::Table(table)))
        }
        reply => Ok((false, frame_to_lua(lua, &reply, protocol)?)),
    }
}

/// C's `%.17g`, as Redis turns a Lua number argument into a command argument.
fn format_g17(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    format_double(n)
}

/// A reply as the Lua value `redis.call` returns (`redisProtocolToLuaType`), as the reply
/// would be read in `protocol`.
pub fn frame_to_lua(lua: &Lua, frame: &Frame, protocol: Protocol) -> mlua::Result<Value> {
    let resp3 = protocol == Protocol::Resp3;
    let string = |bytes: &[u8]| lua.create_string(bytes).map(Value::String);
    let field = |name: &str, value: Value| -> mlua::Result<Value> {
        let table = lua.create_table()?;
        table.set(name, value)?;
        Ok(Value::Table(table))
    };
    Ok(match frame {
        Frame::Simple(s) => field("ok", string(s.as_bytes())?)?,
        Frame::Error(e) => field("err", string(e.as_bytes())?)?,
        Frame::Integer(n) => Value::Number(*n as f64),
        Frame::Bulk(bytes) => string(bytes)?,
        Frame::Null | Frame::NullArray if resp3 => Value::Nil,
        Frame::Null | Frame::NullArray => Value::Boolean(false),
        Frame::Array(items) | Frame::Push(items) => sequence(lua, items, protocol)?,
        Frame::Set(items) if resp3 => {
            let set = lua.create_table()?;
            for item in items {
                set.raw_set(frame_to_lua(lua, item, protocol)?, true)?;
            }
            field("set", Value::Table(set))?
        }
        Frame::Set(items) => sequence(lua, items, protocol)?,
        Frame::Map(entries) if resp3 => {
            let map = lua.create_table()?;
            for (key, value) in entries {
                map.raw_set(
                    frame_to_lua(lua, key, protocol)?,
                    frame_to_lua(lua, value, protocol)?,
                )?;
            }
            field("map", Value::Table(map))?
        }
        Frame::Map(entries) => {
            let flat: Vec<Frame> = entries
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect();
            sequence(lua, &flat, protocol)?
        }
        Frame::Double(d) if resp3 => field("double", Value::Number(*d))?,
        Frame::Double(d) => string(format_double(*d).as_bytes())?,
        Frame::DoubleText(text) if resp3 => {
            field("double", Value::Number(text.parse().unwrap_or(0.0)))?
        }
        Frame::DoubleText(text) => string(text.as_bytes())?,
        Frame::Boolean(b) if resp3 => Value::Boolean(*b),
        Frame::Boolean(b) => Value::Number(if *b { 1.0 } else { 0.0 }),
        Frame::Verbatim(text) if resp3 => {
            let verbatim = lua.create_table()?;
            verbatim.set("format", "txt")?;
            verbatim.set("string", lua.create_string(text)?)?;
            field("verbatim_string", Value::Table(verbatim))?
        }
        Frame::Verbatim(text) => string(text)?,
        Frame::BigNumber(n) if resp3 => field("big_number", string(n.as_bytes())?)?,
        Frame::BigNumber(n) => string(n.as_bytes())?,
    })
}

fn sequence(lua: &Lua, items: &[Frame], protocol: Protocol) -> mlua::Result<Value> {
    let table = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        table.raw_set(i + 1, frame_to_lua(lua, item, protocol)?)?;
    }
    Ok(Value::Table(table))
}

/// Redis's reply for a Lua value a script returned (`luaReplyToRedisReply`).
pub fn reply_from_lua(value: &Value, protocol: Protocol, depth: usize) -> Frame {
    if depth > MAX_REPLY_DEPTH {
        return Frame::Error("ERR reached lua stack limit".into());
    }
    match value {
        Value::String(s) => Frame::Bulk(s.as_bytes().to_vec()),
        Value::Boolean(b) if protocol == Protocol::Resp3 => Frame::Boolean(*b),
        Value::Boolean(true) => Frame::Integer(1),
        Value::Integer(n) => Frame::Integer(*n),
        Value::Number(n) => Frame::Integer(c_long_long(*n)),
        Value::Table(table) => table_reply(table, protocol, depth),
        _ => Frame::Null,
    }
}

/// C's `(long long)` of a double on x86-64: the integer part, or `LLONG_MIN` when it does
/// not fit (NaN included).
fn c_long_long(n: f64) -> i64 {
    // 2^63: the first double past i64::MAX.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if (-LIMIT..LIMIT).contains(&n) {
        n as i64
    } else {
        i64::MIN
    }
}

fn table_reply(table: &Table, protocol: Protocol, depth: usize) -> Frame {
    let text = |name: &str| match table.raw_get::<Value>(name) {
        Ok(Value::String(s)) => Some(s.to_string_lossy()),
        _ => None,
    };
    if text("err").is_some() {
        return error_reply_of(table, None);
    }
    if let Some(ok) = text("ok") {
        return Frame::Simple(no_newlines(&ok));
    }
    match table.raw_get::<Value>("double") {
        Ok(Value::Number(d)) => return Frame::Double(d),
        Ok(Value::Integer(d)) => return Frame::Double(d as f64),
        _ => {}
    }
    if let Some(n) = text("big_number") {
        return Frame::BigNumber(no_newlines(&n));
    }
    if let Ok(Value::Table(verbatim)) = table.raw_get::<Value>("verbatim_string")
        && let (Ok(Value::String(_)), Ok(Value::String(s))) = (
            verbatim.raw_get::<Value>("format"),
            verbatim.raw_get::<Value>("string"),
        )
    {
        return Frame::Verbatim(s.as_bytes().to_vec());
    }
    if let Ok(Value::Table(map)) = table.raw_get::<Value>("map") {
        let entries = map
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| {
                (
                    reply_from_lua(&k, protocol, depth + 1),
                    reply_from_lua(&v, protocol, depth + 1),
                )
            })
            .collect();
        return Frame::Map(entries);
    }
    if let Ok(Value::Table(set)) = table.raw_get::<Value>("set") {
        let members = set
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, _)| reply_from_lua(&k, protocol, depth + 1))
            .collect();
        return Frame::Set(members);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match table.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(value) => items.push(reply_from_lua(&value, protocol, depth + 1)),
        }
    }
    Frame::Array(items)
}

/// `\r` and `\n` become spaces, as Redis makes status and error lines safe.
fn no_newlines(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// The error reply of an error table (`{err=..., source=..., line=...}`), with Redis's
/// `script: <sha>, on <source>:<line>.` when it carries a location.
fn error_reply_of(table: &Table, sha: Option<&str>) -> Frame {
    let as_text = |name: &str| -> Option<String> {
        match table.raw_get::<Value>(name) {
            Ok(Value::String(s)) => Some(s.to_string_lossy()),
            Ok(Value::Integer(n)) => Some(n.to_string()),
            Ok(Value::Number(n)) => Some(format_lua_number(n)),
            _ => None,
        }
    };
    let mut text = as_text("err").unwrap_or_default();
    if let (Some(sha), Some(source), Some(line)) = (sha, as_text("source"), as_text("line")) {
        text.push_str(&format!(" script: {sha}, on {source}:{line}."));
    }
    let text = text.trim_matches(['\r', '\n']);
    Frame::Error(no_newlines(text))
}

/// The reply of a script that failed with `value` (its error handler's table), located by
/// `script` (its SHA-1, or a function's name) when given.
pub fn error_reply(value: &Value, script: Option<&str>) -> Frame {
    match value {
        Value::Table(table) => error_reply_of(table, script),
        other => Frame::Error(format!(
            "ERR Error running script {}, {}",
            script.unwrap_or("?"),
            match other {
                Value::String(s) => s.to_string_lossy(),
                _ => "execution failure".into(),
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rand48_follows_drand48() {
        // drand48 from seed 0 (x = 0x330E): the first value is (0x5DEECE66D * 0x330E + 0xB)
        // mod 2^48, shifted right by 17.
        let mut rand = Rand48::seeded(0);
        let x = (0x5_DEEC_E66Du64 * 0x330E + 0xB) & ((1 << 48) - 1);
        assert_eq!(rand.next(), (x >> 17) as i64);
    }

    #[test]
    fn rand48_starts_where_redis_does() {
        // redis-server 7.0.15, fresh: EVAL "return {math.random(10), math.random(5, 50)}"
        // after one math.random() gave 9 and 21; math.randomseed(7) then random(1000): 267.
        let mut rand = Rand48::default();
        rand.fraction();
        assert_eq!(
            random_in(rand.fraction(), &[Value::Integer(10)]).ok(),
            Some(9.0)
        );
        let bounds = [Value::Integer(5), Value::Integer(50)];
        assert_eq!(random_in(rand.fraction(), &bounds).ok(), Some(21.0));
        let mut seeded = Rand48::seeded(7);
        assert_eq!(
            random_in(seeded.fraction(), &[Value::Integer(1000)]).ok(),
            Some(267.0)
        );
    }

    #[test]
    fn c_conversion_of_out_of_range_numbers_is_llong_min() {
        assert_eq!(c_long_long(3.99), 3);
        assert_eq!(c_long_long(-3.7), -3);
        assert_eq!(c_long_long(1e20), i64::MIN);
        assert_eq!(c_long_long(f64::NAN), i64::MIN);
        assert_eq!(c_long_long(f64::INFINITY), i64::MIN);
    }

    #[test]
    fn a_table_holding_itself_replies_with_a_bounded_nesting() {
        let lua = Lua::new();
        let table: Table = lua
            .load("local t = {} t[1] = t return t")
            .eval()
            .expect("a cyclic table");
        let mut reply = reply_from_lua(&Value::Table(table), Protocol::Resp2, 0);
        let mut depth = 0;
        while let Frame::Array(mut items) = reply {
            depth += 1;
            reply = items.pop().expect("one element per level");
        }
        assert_eq!(depth, MAX_REPLY_DEPTH + 1);
        assert_eq!(reply, Frame::Error("ERR reached lua stack limit".into()));
    }

    #[test]
    fn error_tables_take_a_code() {
        assert_eq!(error_table_text("-my err"), "my err");
        assert_eq!(error_table_text("-ERR x"), "ERR x");
        assert_eq!(error_table_text("-boom"), "ERR boom");
        assert_eq!(error_table_text("-"), "ERR ");
        assert_eq!(error_table_text("wrong"), "ERR wrong");
    }
}
