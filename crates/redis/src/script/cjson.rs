//! Redis's `cjson` Lua library: lua-cjson 2.1.0 as bundled with Redis 7.0 (`encode`,
//! `decode`, the configuration functions, `new`, `null`, `_NAME`, `_VERSION`).
//!
//! The C library walks Lua tables on the Lua stack; here the walk is iterative, with the
//! tables of the current path kept in a Lua table (the "spine") rather than as Rust handles,
//! since mlua's reference slots are as limited as the C stack (8000). The C library's depth
//! limits are reproduced exactly, `lua_checkstack` failures included: [`MAX_C_STACK`]
//! bounds the slots the C code would have used at each depth.
//!
//! One difference from C remains: mlua hands a Rust function a number argument below
//! 2.2e-16 in magnitude (or -0) as the integer 0, so `cjson.encode(-0.0)` at the top level
//! gives `0` where Redis gives `-0` (numbers inside tables are read exactly).

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Function, LightUserData, Lua, MultiValue, Table, Value};

use super::bit::lauxlib::{self, Args, MAX_C_STACK, arg_error, check_bytes, check_integer};

/// `CJSON_VERSION`.
const VERSION: &str = "2.1.0";

/// Collects a table's pairs in `lua_next` order into `{k1, v1, k2, v2, ...}` (and the
/// count), so that keys and values keep their exact Lua values (mlua reads a number below
/// 2.2e-16 as the integer 0).
const SNAPSHOT_LUA: &str = "
local next = ...
return function(t)
  local s, n = {}, 0
  local k, v = next(t)
  while k ~= nil do
    s[n + 1] = k
    s[n + 2] = v
    n = n + 2
    k, v = next(t, k)
  end
  return s, n
end
";

/// One module's settings (`json_config_t`); each `cjson.new()` has its own.
#[derive(Debug, Clone, Copy)]
struct Config {
    sparse_convert: usize,
    sparse_ratio: i32,
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    /// 0 refuse, 1 write `nan`/`inf`, 2 write `null`.
    encode_invalid_numbers: usize,
    encode_number_precision: i32,
    encode_keep_buffer: usize,
    decode_invalid_numbers: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sparse_convert: 0,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            encode_number_precision: 14,
            encode_keep_buffer: 1,
            decode_invalid_numbers: 1,
        }
    }
}

/// A module's settings, shared by its functions.
type Shared = Rc<Cell<Config>>;

/// Installs the library as a global of `lua`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let next: Function = lua.globals().raw_get("next")?;
    let snapshot: Function = lua.load(SNAPSHOT_LUA).set_name("=cjson").call(next)?;
    let module = new_module(lua, &snapshot)?;
    lua.globals().raw_set("cjson", module)
}

/// A configuration function: the module's settings and the (nil-padded) arguments in, the
/// function's results out.
type ConfigFn = fn(&Lua, &mut Config, &Args) -> mlua::Result<MultiValue>;

/// The configuration functions with how many arguments each takes, in `lua_cjson_new`'s
/// registration order (which fixes `pairs` order).
const CONFIG_FUNCS: [(&str, usize, ConfigFn); 7] = [
    ("encode_sparse_array", 3, cfg_encode_sparse_array),
    ("encode_max_depth", 1, cfg_encode_max_depth),
    ("decode_max_depth", 1, cfg_decode_max_depth),
    ("encode_number_precision", 1, cfg_encode_number_precision),
    ("encode_keep_buffer", 1, cfg_encode_keep_buffer),
    ("encode_invalid_numbers", 1, cfg_encode_invalid_numbers),
    ("decode_invalid_numbers", 1, cfg_decode_invalid_numbers),
];

/// `lua_cjson_new`: a module table with its own settings, filled in the C order.
fn new_module(lua: &Lua, snapshot: &Function) -> mlua::Result<Table> {
    let cfg: Shared = Rc::new(Cell::new(Config::default()));
    let module = lua.create_table()?;
    let (c, s) = (cfg.clone(), snapshot.clone());
    module.raw_set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| encode(lua, c.get(), &s, args))?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| decode(lua, c.get(), args))?,
    )?;
    for (name, nargs, apply) in CONFIG_FUNCS {
        let c = cfg.clone();
        let function = lua
            .create_function(move |lua, args: MultiValue| configure(lua, &c, nargs, apply, args))?;
        module.raw_set(name, function)?;
    }
    let s = snapshot.clone();
    module.raw_set(
        "new",
        lua.create_function(move |lua, _: MultiValue| new_module(lua, &s))?,
    )?;
    module.raw_set("null", null())?;
    module.raw_set("_NAME", "cjson")?;
    module.raw_set("_VERSION", VERSION)?;
    Ok(module)
}

/// `cjson.null`: a NULL light userdata.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

// ---------------------------------------------------------------------------------------
// Configuration

/// `json_arg_init` then `apply`: too many arguments is an error, missing ones are nil.
/// Settings changed before an error stay changed, as in C.
fn configure(
    lua: &Lua,
    cfg: &Shared,
    nargs: usize,
    apply: ConfigFn,
    args: MultiValue,
) -> mlua::Result<MultiValue> {
    if args.len() > nargs {
        return Err(arg_error(lua, nargs + 1, "found too many arguments"));
    }
    let mut settings = cfg.get();
    let result = apply(lua, &mut settings, &Args::new(args));
    cfg.set(settings);
    result
}

fn cfg_encode_sparse_array(lua: &Lua, cfg: &mut Config, args: &Args) -> mlua::Result<MultiValue> {
    let convert = enum_option(lua, args, 1, &mut cfg.sparse_convert, &["off", "on"])?;
    let ratio = integer_option(lua, args, 2, &mut cfg.sparse_ratio, 0)?;
    let safe = integer_option(lua, args, 3, &mut cfg.sparse_safe, 0)?;
    Ok(MultiValue::from_vec(vec![convert, ratio, safe]))
}

fn cfg_encode_max_depth(lua: &Lua, cfg: &mut Config, args: &Args) -> mlua::Result<MultiValue> {
    one(integer_option(lua, args, 1, &mut cfg.encode_max_depth, 1))
}

fn cfg_decode_max_depth(lua: &Lua, cfg: &mut Config, args: &Args) -> mlua::Result<MultiValue> {
    one(integer_option(lua, args, 1, &mut cfg.decode_max_depth, 1))
}

/// Precision is 1..=14 (`json_integer_option` with a narrower range).
fn cfg_encode_number_precision(
    lua: &Lua,
    cfg: &mut Config,
    args: &Args,
) -> mlua::Result<MultiValue> {
    let setting = &mut cfg.encode_number_precision;
    one(integer_option_in(lua, args, 1, setting, 1, 14))
}

fn cfg_encode_keep_buffer(lua: &Lua, cfg: &mut Config, args: &Args) -> mlua::Result<MultiValue> {
    one(enum_option(
        lua,
        args,
        1,
        &mut cfg.encode_keep_buffer,
        &["off", "on"],
    ))
}

fn cfg_encode_invalid_numbers(
    lua: &Lua,
    cfg: &mut Config,
    args: &Args,
) -> mlua::Result<MultiValue> {
    let options = ["off", "on", "null"];
    one(enum_option(
        lua,
        args,
        1,
        &mut cfg.encode_invalid_numbers,
        &options,
    ))
}

fn cfg_decode_invalid_numbers(
    lua: &Lua,
    cfg: &mut Config,
    args: &Args,
) -> mlua::Result<MultiValue> {
    one(enum_option(
        lua,
        args,
        1,
        &mut cfg.decode_invalid_numbers,
        &["off", "on"],
    ))
}

fn one(value: mlua::Result<Value>) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_vec(vec![value?]))
}

/// `json_integer_option` with the range `min..=INT_MAX`.
fn integer_option(
    lua: &Lua,
    args: &Args,
    narg: usize,
    setting: &mut i32,
    min: i32,
) -> mlua::Result<Value> {
    integer_option_in(lua, args, narg, setting, min, i32::MAX)
}

/// `json_integer_option`: a non-nil argument (`luaL_checkinteger`, then cut to a C `int`)
/// must be within `min..=max`; the range error always names argument 1, as in C.
fn integer_option_in(
    lua: &Lua,
    args: &Args,
    narg: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> mlua::Result<Value> {
    if !is_nil(args, narg) {
        let value = check_integer(lua, args, narg)? as i32;
        if !(min..=max).contains(&value) {
            let message = format!("expected integer between {min} and {max}");
            return Err(arg_error(lua, 1, &message));
        }
        *setting = value;
    }
    Ok(Value::Integer(i64::from(*setting)))
}

/// `json_enum_option` with `bool_true` 1: a boolean sets 0 or 1, a string must be one of
/// `options` (`luaL_checkoption`); off and on come back as booleans, others as their name.
fn enum_option(
    lua: &Lua,
    args: &Args,
    narg: usize,
    setting: &mut usize,
    options: &[&str],
) -> mlua::Result<Value> {
    match args.get(narg) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = usize::from(*b),
        Some(_) => *setting = check_option(lua, args, narg, options)?,
    }
    Ok(match *setting {
        0 | 1 => Value::Boolean(*setting == 1),
        n => Value::String(lua.create_string(options.get(n).copied().unwrap_or_default())?),
    })
}

/// `luaL_checkoption` without a default: the option's index. C compares up to a NUL.
fn check_option(lua: &Lua, args: &Args, narg: usize, options: &[&str]) -> mlua::Result<usize> {
    let bytes = check_bytes(lua, args.get(narg), narg)?;
    let name = bytes.split(|&b| b == 0).next().unwrap_or_default();
    match options.iter().position(|o| o.as_bytes() == name) {
        Some(index) => Ok(index),
        None => {
            let message = format!("invalid option '{}'", String::from_utf8_lossy(name));
            Err(arg_error(lua, narg, &message))
        }
    }
}

fn is_nil(args: &Args, narg: usize) -> bool {
    matches!(args.get(narg), None | Some(Value::Nil))
}

// ---------------------------------------------------------------------------------------
// Encoding

/// `cjson.encode(value)`.
fn encode(lua: &Lua, cfg: Config, snapshot: &Function, args: MultiValue) -> mlua::Result<Value> {
    if args.len() != 1 {
        return Err(arg_error(lua, 1, "expected 1 argument"));
    }
    let value = args.into_iter().next().unwrap_or(Value::Nil);
    let mut encoder = Encoder {
        lua,
        cfg,
        snapshot,
        spine: lua.create_table()?,
        frames: Vec::new(),
        slots: 1,
        out: Vec::new(),
    };
    encoder.value(value)?;
    while encoder.step()? {}
    Ok(Value::String(lua.create_string(&encoder.out)?))
}

/// A table being written.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An array of `len` elements; `next` is the next index to write.
    Array { len: i64, next: i64 },
    /// An object whose pairs are in a snapshot of `len` slots; `next` is the next key's slot.
    Object { len: i64, next: i64 },
}

impl Frame {
    /// The Lua stack slots the C code holds at this level while writing a member: the
    /// table, plus the key for an object.
    fn slots(self) -> i64 {
        match self {
            Frame::Array { .. } => 1,
            Frame::Object { .. } => 2,
        }
    }
}

/// The state of one `cjson.encode` call.
struct Encoder<'a> {
    lua: &'a Lua,
    cfg: Config,
    snapshot: &'a Function,
    /// `spine[d]`: the table (array) or snapshot (object) being written at depth `d`.
    spine: Table,
    frames: Vec<Frame>,
    /// Lua stack slots the C code would be using (the argument, then per level).
    slots: i64,
    out: Vec<u8>,
}

impl Encoder<'_> {
    /// `json_append_data`: writes a scalar, or opens a table.
    fn value(&mut self, value: Value) -> mlua::Result<()> {
        match value {
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::Boolean(b) => self
                .out
                .extend_from_slice(if b { b"true" } else { b"false" }),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Integer(i) => self.number(i as f64)?,
            Value::Number(n) => self.number(n)?,
            Value::String(s) => append_string(&mut self.out, &s.as_bytes()),
            Value::Table(t) => self.open(t)?,
            other => return Err(self.unsupported(&other, "type not supported")),
        }
        Ok(())
    }

    /// `json_encode_exception`: "Cannot serialise <type>: <reason>".
    fn unsupported(&self, value: &Value, reason: &str) -> mlua::Error {
        let type_name = lauxlib::type_name(Some(value));
        lauxlib::error(self.lua, format!("Cannot serialise {type_name}: {reason}"))
    }

    /// `json_append_number`, with the invalid-number setting.
    fn number(&mut self, n: f64) -> mlua::Result<()> {
        if !n.is_finite() {
            match self.cfg.encode_invalid_numbers {
                0 => {
                    return Err(self.unsupported(&Value::Number(n), "must not be NaN or Inf"));
                }
                1 if n.is_nan() => {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
                1 => {}
                _ => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
            }
        }
        let text = format_g(n, self.cfg.encode_number_precision);
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    /// A table: the depth check, then `[` or `{` and a new frame.
    fn open(&mut self, table: Table) -> mlua::Result<()> {
        let depth = self.frames.len() as i64 + 1;
        // `json_check_encode_depth`: the C code also needs 3 free stack slots.
        if depth > i64::from(self.cfg.encode_max_depth) || self.slots + 3 > MAX_C_STACK as i64 {
            let message = format!("Cannot serialise, excessive nesting ({depth})");
            return Err(lauxlib::error(self.lua, message));
        }
        let len = self.array_length(&table)?;
        let frame = if len > 0 {
            self.out.push(b'[');
            self.spine.raw_set(depth, table)?;
            Frame::Array {
                len: i64::from(len),
                next: 1,
            }
        } else {
            self.out.push(b'{');
            let (pairs, len): (Table, i64) = self.snapshot.call(table)?;
            self.spine.raw_set(depth, pairs)?;
            Frame::Object { len, next: 1 }
        };
        self.slots += frame.slots();
        self.frames.push(frame);
        Ok(())
    }

    /// `lua_array_length`: the largest key when every key is a positive integer (as a C
    /// `int`), else -1; an excessively sparse array is an error or (when converting) -1.
    fn array_length(&self, table: &Table) -> mlua::Result<i32> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for pair in table.pairs::<Value, bool>() {
            let k = match pair?.0 {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                _ => return Ok(-1),
            };
            // A zero key (C tests `k = lua_tonumber(..)` for truth) is not an index.
            if k == 0.0 || k.floor() != k || k < 1.0 {
                return Ok(-1);
            }
            if k > f64::from(max) {
                max = c_double_to_int(k);
            }
            items = items.wrapping_add(1);
        }
        let cfg = &self.cfg;
        if cfg.sparse_ratio > 0
            && max > items.wrapping_mul(cfg.sparse_ratio)
            && max > cfg.sparse_safe
        {
            if cfg.sparse_convert == 0 {
                let table = Value::Table(table.clone());
                return Err(self.unsupported(&table, "excessively sparse array"));
            }
            return Ok(-1);
        }
        Ok(max)
    }

    /// Writes the next member of the innermost table, or closes it; false when done.
    fn step(&mut self) -> mlua::Result<bool> {
        let depth = self.frames.len() as i64;
        let Some(frame) = self.frames.last_mut() else {
            return Ok(false);
        };
        match *frame {
            Frame::Array { len, next } if next > len => self.close(b']')?,
            Frame::Object { len, next } if next > len => self.close(b'}')?,
            Frame::Array { len, next } => {
                *frame = Frame::Array {
                    len,
                    next: next + 1,
                };
                self.element(depth, next)?;
            }
            Frame::Object { len, next } => {
                *frame = Frame::Object {
                    len,
                    next: next + 2,
                };
                self.member(depth, next)?;
            }
        }
        Ok(true)
    }

    /// Array element `index` (`lua_rawgeti`; holes are nil, so `null`).
    fn element(&mut self, depth: i64, index: i64) -> mlua::Result<()> {
        if index > 1 {
            self.out.push(b',');
        }
        let table: Table = self.spine.raw_get(depth)?;
        let value = exact_get(&table, index)?;
        self.value(value)
    }

    /// The object member whose key is in snapshot slot `slot`.
    fn member(&mut self, depth: i64, slot: i64) -> mlua::Result<()> {
        if slot > 1 {
            self.out.push(b',');
        }
        let pairs: Table = self.spine.raw_get(depth)?;
        let key = exact_get(&pairs, slot)?;
        let value = exact_get(&pairs, slot + 1)?;
        match key {
            Value::Integer(i) => self.number_key(i as f64)?,
            Value::Number(n) => self.number_key(n)?,
            Value::String(s) => {
                append_string(&mut self.out, &s.as_bytes());
                self.out.push(b':');
            }
            other => {
                return Err(self.unsupported(&other, "table key must be a number or string"));
            }
        }
        self.value(value)
    }

    /// A number key, written as a string.
    fn number_key(&mut self, n: f64) -> mlua::Result<()> {
        self.out.push(b'"');
        self.number(n)?;
        self.out.extend_from_slice(b"\":");
        Ok(())
    }

    /// Ends the innermost table.
    fn close(&mut self, bracket: u8) -> mlua::Result<()> {
        self.out.push(bracket);
        let depth = self.frames.len() as i64;
        if let Some(frame) = self.frames.pop() {
            self.slots -= frame.slots();
        }
        // Lets the table or snapshot go before the whole call ends.
        self.spine.raw_set(depth, Value::Nil)
    }
}

/// `table[key]` with numbers exact: mlua reads a number below 2.2e-16 in magnitude (or -0)
/// as the integer 0, so those are read again as a float.
fn exact_get(table: &Table, key: i64) -> mlua::Result<Value> {
    match table.raw_get::<Value>(key)? {
        Value::Integer(0) => Ok(Value::Number(table.raw_get::<f64>(key)?)),
        value => Ok(value),
    }
}

/// A C conversion of a double to `int` on x86-64 (`cvttsd2si`): out of range gives
/// `INT_MIN`.
fn c_double_to_int(k: f64) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&k) {
        k as i32
    } else {
        i32::MIN
    }
}

/// `json_append_string`: quoted, with lua-cjson's escapes (`/` and DEL included); other
/// bytes, UTF-8 or not, pass through.
fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'/' => b"\\/",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0..=0x1f | 0x7f => {
                out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                continue;
            }
            _ => {
                out.push(b);
                continue;
            }
        };
        out.extend_from_slice(short);
    }
    out.push(b'"');
}

/// C's `printf("%.<precision>g", n)` as glibc prints it (also Lua's number-to-string
/// conversion with precision 14).
fn format_g(n: f64, precision: i32) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.into();
    }
    if n == 0.0 {
        return if n.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let p = precision.max(1) as usize;
    // Rust rounds exactly (ties to even), as glibc does.
    let scientific = format!("{:.*e}", p - 1, n);
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= p as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        let mantissa = trim_fraction(mantissa);
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exponent) as usize;
        trim_fraction(&format!("{n:.decimals$}")).to_owned()
    }
}

/// `%g` drops trailing zeros of the fraction, and the point if nothing is left after it.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------
// Decoding

/// `cjson.decode(text)`.
fn decode(lua: &Lua, cfg: Config, args: MultiValue) -> mlua::Result<Value> {
    if args.len() != 1 {
        return Err(arg_error(lua, 1, "expected 1 argument"));
    }
    let args = Args::new(args);
    let data = check_bytes(lua, args.get(1), 1)?;
    // Only the first character is sure to be ASCII; a NUL in the first two means UTF-16/32.
    if data.len() >= 2 && (data.first() == Some(&0) || data.get(1) == Some(&0)) {
        let message = "JSON parser does not support UTF-16 or UTF-32";
        return Err(lauxlib::error(lua, message));
    }
    let mut decoder = Decoder {
        lua,
        lexer: Lexer {
            data: &data,
            pos: 0,
            invalid_numbers: cfg.decode_invalid_numbers != 0,
        },
        max_depth: i64::from(cfg.decode_max_depth),
        spine: lua.create_table()?,
        frames: Vec::new(),
        current: None,
        slots: 1,
    };
    decoder.run()
}

/// A token kind (`json_token_type_t`), with its value.
#[derive(Debug)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    /// `T_ERROR` with its reason.
    Error(&'static str),
}

/// A token and where it starts (0-based; errors show it 1-based).
#[derive(Debug)]
struct Token {
    tok: Tok,
    index: usize,
}

impl Token {
    /// What an error says was found: the token type's C name, or the reason of an error.
    fn found(&self) -> &'static str {
        match self.tok {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(reason) => reason,
        }
    }
}

/// `json_next_token` over the text. Reading past the end gives NUL, which ends the input
/// as Lua's terminating NUL does in C (so does a NUL inside the text).
struct Lexer<'a> {
    data: &'a [u8],
    pos: usize,
    invalid_numbers: bool,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.data.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.peek(0), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let index = self.pos;
        let single = match self.peek(0) {
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(tok) = single {
            self.pos += 1;
            return Token { tok, index };
        }
        let tok = match self.peek(0) {
            0 => Tok::End,
            b'"' => return self.string_token(),
            b'-' | b'0'..=b'9' => self.number_token(),
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => self.word_token(),
            _ => Tok::Error("invalid token"),
        };
        // Errors here leave the position at the token's start, where C reports them.
        Token { tok, index }
    }

    /// A number starting with `-` or a digit; strict JSON unless invalid numbers are on.
    fn number_token(&mut self) -> Tok {
        if !self.invalid_numbers && self.is_invalid_number() {
            return Tok::Error("invalid number");
        }
        self.strtod_token()
    }

    /// `true`, `false`, `null`, or (when allowed) `+1`, `inf`, `nan` and the like.
    fn word_token(&mut self) -> Tok {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        for (word, tok) in [
            (&b"true"[..], Tok::Bool(true)),
            (b"false", Tok::Bool(false)),
            (b"null", Tok::Null),
        ] {
            if rest.starts_with(word) {
                self.pos += word.len();
                return tok;
            }
        }
        if self.invalid_numbers && self.is_invalid_number() {
            return self.strtod_token();
        }
        Tok::Error("invalid token")
    }

    /// `json_next_number_token`: `strtod` from here.
    fn strtod_token(&mut self) -> Tok {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        match strtod(rest) {
            (_, 0) => Tok::Error("invalid number"),
            (n, used) => {
                self.pos += used;
                Tok::Num(n)
            }
        }
    }

    /// `json_is_invalid_number`: what `strtod` takes but JSON does not (a leading `+`,
    /// hex, leading zeros, inf, nan).
    fn is_invalid_number(&self) -> bool {
        let mut at = 0;
        match self.peek(0) {
            b'+' => return true,
            b'-' => at = 1,
            _ => {}
        }
        let c = self.peek(at);
        if c == b'0' {
            let c2 = self.peek(at + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        // C compares a signed char: bytes from 0x80 count as "<= '9'".
        if (c as i8) <= b'9' as i8 {
            return false;
        }
        let word = [c, self.peek(at + 1), self.peek(at + 2)].map(|b| b.to_ascii_lowercase());
        word == *b"inf" || word == *b"nan"
    }

    /// `json_next_string_token`, from the opening quote.
    fn string_token(&mut self) -> Token {
        let start = self.pos;
        self.pos += 1;
        let mut text = Vec::new();
        loop {
            let ch = self.peek(0);
            match ch {
                b'"' => break,
                0 => return self.error_here("unexpected end of string"),
                b'\\' => match escape_char(self.peek(1)) {
                    Some(b'u') => {
                        if !self.unicode_escape(&mut text) {
                            return self.error_here("invalid unicode escape code");
                        }
                    }
                    Some(c) => {
                        text.push(c);
                        self.pos += 2;
                    }
                    None => return self.error_here("invalid escape code"),
                },
                _ => {
                    text.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        Token {
            tok: Tok::Str(text),
            index: start,
        }
    }

    fn error_here(&self, reason: &'static str) -> Token {
        Token {
            tok: Tok::Error(reason),
            index: self.pos,
        }
    }

    /// `json_append_unicode_escape` at a `\u`: the code point (a surrogate pair taking two
    /// escapes) as UTF-8; false when malformed.
    fn unicode_escape(&mut self, text: &mut Vec<u8>) -> bool {
        let Some(mut code) = self.hex4(2) else {
            return false;
        };
        let mut len = 6;
        if code & 0xF800 == 0xD800 {
            // A high surrogate first, then `\u` and a low one.
            if code & 0x400 != 0 || self.peek(6) != b'\\' || self.peek(7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(8).filter(|low| low & 0xFC00 == 0xDC00) else {
                return false;
            };
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        push_utf8(text, code);
        self.pos += len;
        true
    }

    /// Four hex digits `ahead` bytes on.
    fn hex4(&self, ahead: usize) -> Option<u32> {
        (0..4).try_fold(0, |acc, i| {
            let digit = char::from(self.peek(ahead + i)).to_digit(16)?;
            Some((acc << 4) | digit)
        })
    }
}

/// `escape2char`: what a backslash escape stands for (`u` for a Unicode escape).
fn escape_char(c: u8) -> Option<u8> {
    Some(match c {
        b'"' | b'\\' | b'/' | b'u' => c,
        b'b' => 0x08,
        b't' => b'\t',
        b'n' => b'\n',
        b'f' => 0x0c,
        b'r' => b'\r',
        _ => return None,
    })
}

/// `codepoint_to_utf8` (code points here are at most 0x10FFFF, never lone surrogates).
fn push_utf8(out: &mut Vec<u8>, code: u32) {
    let cont = |shift: u32| 0x80 | ((code >> shift) & 0x3F) as u8;
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (code >> 6) as u8, cont(0)]),
        0x800..=0xFFFF => out.extend_from_slice(&[0xE0 | (code >> 12) as u8, cont(6), cont(0)]),
        _ => out.extend_from_slice(&[0xF0 | (code >> 18) as u8, cont(12), cont(6), cont(0)]),
    }
}

/// An open array or object.
#[derive(Debug)]
enum Open {
    /// The next element's index.
    Array(i64),
    /// An object; the key of the member being read.
    Object(Vec<u8>),
}

impl Open {
    /// Lua stack slots the C code holds for this level: the table, plus a key for objects.
    fn slots(&self) -> i64 {
        match self {
            Open::Array(_) => 1,
            Open::Object(_) => 2,
        }
    }
}

/// What a token read as a value turned out to be.
enum Parsed {
    Scalar(Value),
    Array,
    Object,
}

/// Where the parse goes next.
enum Step {
    /// A value starts (a scalar is already read).
    Value(Parsed),
    /// The innermost table has ended.
    Closed,
}

/// The state of one `cjson.decode` call.
struct Decoder<'a> {
    lua: &'a Lua,
    lexer: Lexer<'a>,
    max_depth: i64,
    /// `spine[d]`: the table being filled at depth `d` (`spine[1]` is the result).
    spine: Table,
    frames: Vec<Open>,
    /// The innermost open table (also in the spine).
    current: Option<Table>,
    /// Lua stack slots the C code would be using (the argument, then per level).
    slots: i64,
}

impl Decoder<'_> {
    /// Parses the whole text: one value, then the end.
    fn run(&mut self) -> mlua::Result<Value> {
        let token = self.lexer.next_token();
        let mut step = Step::Value(self.value(&token)?);
        let root = loop {
            step = match step {
                Step::Value(Parsed::Scalar(value)) if self.frames.is_empty() => break value,
                Step::Value(Parsed::Scalar(value)) => {
                    self.attach(value)?;
                    self.after_member()?
                }
                Step::Value(Parsed::Array) => self.open_array()?,
                Step::Value(Parsed::Object) => self.open_object()?,
                Step::Closed => {
                    if !self.ascend()? {
                        break self.spine.raw_get::<Value>(1)?;
                    }
                    self.after_member()?
                }
            };
        };
        let token = self.lexer.next_token();
        if !matches!(token.tok, Tok::End) {
            return Err(self.parse_error("the end", &token));
        }
        Ok(root)
    }

    /// `json_process_value`: a scalar, or which container starts.
    fn value(&self, token: &Token) -> mlua::Result<Parsed> {
        Ok(Parsed::Scalar(match &token.tok {
            Tok::Str(s) => Value::String(self.lua.create_string(s)?),
            Tok::Num(n) => Value::Number(*n),
            Tok::Bool(b) => Value::Boolean(*b),
            Tok::Null => null(),
            Tok::ObjBegin => return Ok(Parsed::Object),
            Tok::ArrBegin => return Ok(Parsed::Array),
            _ => return Err(self.parse_error("value", token)),
        }))
    }

    /// `json_throw_parse_error`.
    fn parse_error(&self, expected: &str, token: &Token) -> mlua::Error {
        let (found, at) = (token.found(), token.index + 1);
        let message = format!("Expected {expected} but found {found} at character {at}");
        lauxlib::error(self.lua, message)
    }

    /// `json_decode_descend` then a new table, put in its parent now (its place in the
    /// parent is fixed; filling it later changes nothing).
    fn descend(&mut self, open: Open, need: i64) -> mlua::Result<()> {
        let depth = self.frames.len() as i64 + 1;
        if depth > self.max_depth || self.slots + need > MAX_C_STACK as i64 {
            let at = self.lexer.pos;
            let message =
                format!("Found too many nested data structures ({depth}) at character {at}");
            return Err(lauxlib::error(self.lua, message));
        }
        let table = self.lua.create_table()?;
        if !self.frames.is_empty() {
            self.attach(Value::Table(table.clone()))?;
        }
        self.spine.raw_set(depth, &table)?;
        self.slots += open.slots();
        self.frames.push(open);
        self.current = Some(table);
        Ok(())
    }

    /// Closes the innermost table; false when it was the outermost.
    fn ascend(&mut self) -> mlua::Result<bool> {
        if let Some(open) = self.frames.pop() {
            self.slots -= open.slots();
        }
        let depth = self.frames.len() as i64;
        self.current = match depth {
            0 => None,
            _ => Some(self.spine.raw_get(depth)?),
        };
        Ok(depth > 0)
    }

    /// Stores `value` in the innermost table: the next array index, or the pending key.
    fn attach(&mut self, value: Value) -> mlua::Result<()> {
        let (Some(table), Some(open)) = (&self.current, self.frames.last_mut()) else {
            return Ok(());
        };
        match open {
            Open::Array(index) => {
                table.raw_set(*index, value)?;
                *index += 1;
            }
            Open::Object(key) => table.raw_set(self.lua.create_string(&*key)?, value)?,
        }
        Ok(())
    }

    /// `json_parse_array_context` up to its first element (or its end).
    fn open_array(&mut self) -> mlua::Result<Step> {
        self.descend(Open::Array(1), 2)?;
        let token = self.lexer.next_token();
        if matches!(token.tok, Tok::ArrEnd) {
            return Ok(Step::Closed);
        }
        self.value(&token).map(Step::Value)
    }

    /// `json_parse_object_context` up to its first value (or its end).
    fn open_object(&mut self) -> mlua::Result<Step> {
        self.descend(Open::Object(Vec::new()), 3)?;
        let token = self.lexer.next_token();
        if matches!(token.tok, Tok::ObjEnd) {
            return Ok(Step::Closed);
        }
        self.member_from(token)
    }

    /// An object member from its key token: the key, the colon, then the value's start.
    fn member_from(&mut self, token: Token) -> mlua::Result<Step> {
        let Tok::Str(key) = token.tok else {
            return Err(self.parse_error("object key string", &token));
        };
        if let Some(Open::Object(pending)) = self.frames.last_mut() {
            *pending = key;
        }
        let colon = self.lexer.next_token();
        if !matches!(colon.tok, Tok::Colon) {
            return Err(self.parse_error("colon", &colon));
        }
        let token = self.lexer.next_token();
        self.value(&token).map(Step::Value)
    }

    /// After a member of the innermost table: a comma and the next member's start, or the
    /// table's end.
    fn after_member(&mut self) -> mlua::Result<Step> {
        let token = self.lexer.next_token();
        match (self.frames.last(), &token.tok) {
            (Some(Open::Array(_)), Tok::ArrEnd) | (Some(Open::Object(_)), Tok::ObjEnd) => {
                Ok(Step::Closed)
            }
            (Some(Open::Array(_)), Tok::Comma) => {
                let token = self.lexer.next_token();
                self.value(&token).map(Step::Value)
            }
            (Some(Open::Object(_)), Tok::Comma) => {
                let token = self.lexer.next_token();
                self.member_from(token)
            }
            (Some(Open::Array(_)), _) => Err(self.parse_error("comma or array end", &token)),
            _ => Err(self.parse_error("comma or object end", &token)),
        }
    }
}

// ---------------------------------------------------------------------------------------
// strtod

/// glibc's `strtod` on the front of `s` (the C locale): the value and how many bytes it
/// used, 0 when `s` does not start with a number. Takes a sign, then `inf`/`infinity`,
/// `nan`/`nan(chars)` (any case), hex (`0x1.8p3`) or decimal.
fn strtod(s: &[u8]) -> (f64, usize) {
    let (negative, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    match unsigned_number(s.get(start..).unwrap_or_default()) {
        Some((n, used)) => (if negative { -n } else { n }, start + used),
        None => (0.0, 0),
    }
}

fn unsigned_number(s: &[u8]) -> Option<(f64, usize)> {
    if starts_with_ignore_case(s, b"inf") {
        let used = if starts_with_ignore_case(s, b"infinity") {
            8
        } else {
            3
        };
        return Some((f64::INFINITY, used));
    }
    if starts_with_ignore_case(s, b"nan") {
        return Some((
            f64::NAN,
            3 + nan_payload_len(s.get(3..).unwrap_or_default()),
        ));
    }
    if s.first() == Some(&b'0') && matches!(s.get(1), Some(b'x' | b'X')) {
        // "0x" without hex digits is the number 0 followed by an `x`.
        if let Some((n, used)) = hex_number(s.get(2..).unwrap_or_default()) {
            return Some((n, 2 + used));
        }
    }
    decimal_number(s)
}

fn starts_with_ignore_case(s: &[u8], word: &[u8]) -> bool {
    s.get(..word.len())
        .is_some_and(|front| front.eq_ignore_ascii_case(word))
}

/// The length of a `(n-char-sequence)` after `nan`, or 0 without a closing parenthesis.
fn nan_payload_len(s: &[u8]) -> usize {
    if s.first() != Some(&b'(') {
        return 0;
    }
    let inner = s
        .iter()
        .skip(1)
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    if s.get(1 + inner) == Some(&b')') {
        inner + 2
    } else {
        0
    }
}

fn count_digits(s: &[u8], from: usize, radix: u32) -> usize {
    let rest = s.get(from..).unwrap_or_default();
    rest.iter()
        .take_while(|&&b| char::from(b).is_digit(radix))
        .count()
}

/// `digits[.digits][e[sign]digits]`, at least one digit before the exponent; Rust's
/// parser rounds as glibc does (correctly).
fn decimal_number(s: &[u8]) -> Option<(f64, usize)> {
    let whole = count_digits(s, 0, 10);
    let mut used = whole;
    if s.get(used) == Some(&b'.') {
        let fraction = count_digits(s, used + 1, 10);
        if whole + fraction > 0 {
            used += 1 + fraction;
        }
    }
    if used == 0 {
        return None;
    }
    if matches!(s.get(used), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(s.get(used + 1), Some(b'+' | b'-')));
        let digits = count_digits(s, used + 1 + sign, 10);
        if digits > 0 {
            used += 1 + sign + digits;
        }
    }
    let text = std::str::from_utf8(s.get(..used)?).ok()?;
    text.parse::<f64>().ok().map(|n| (n, used))
}

/// Hex digits with an optional point, then an optional `p[sign]digits` binary exponent;
/// `None` without any digit.
fn hex_number(s: &[u8]) -> Option<(f64, usize)> {
    let mut mantissa = HexMantissa::default();
    let mut used = 0;
    let mut point = false;
    while let Some(&b) = s.get(used) {
        match char::from(b).to_digit(16) {
            Some(digit) => mantissa.push(digit, point),
            None if b == b'.' && !point => point = true,
            None => break,
        }
        used += 1;
    }
    if !mantissa.any {
        return None;
    }
    let mut exponent: i64 = 0;
    if matches!(s.get(used), Some(b'p' | b'P')) {
        let negative = s.get(used + 1) == Some(&b'-');
        let sign = usize::from(matches!(s.get(used + 1), Some(b'+' | b'-')));
        let digits = count_digits(s, used + 1 + sign, 10);
        if digits > 0 {
            let text = s
                .get(used + 1 + sign..used + 1 + sign + digits)
                .unwrap_or_default();
            // Saturate: anything this large is already infinite or zero.
            let value = text.iter().fold(0i64, |acc, &d| {
                (acc * 10 + i64::from(d - b'0')).min(1_000_000_000)
            });
            exponent = if negative { -value } else { value };
            used += 1 + sign + digits;
        }
    }
    let n = compose(mantissa.bits, mantissa.sticky, mantissa.exponent + exponent);
    Some((n, used))
}

/// The leading 64 bits of a hex mantissa, scaled by `2^exponent`.
#[derive(Default)]
struct HexMantissa {
    bits: u64,
    /// Nonzero digits were dropped below `bits`.
    sticky: bool,
    exponent: i64,
    kept: u32,
    any: bool,
}

impl HexMantissa {
    fn push(&mut self, digit: u32, after_point: bool) {
        self.any = true;
        if self.bits == 0 && digit == 0 {
            // A leading zero: only its place value matters.
            if after_point {
                self.exponent -= 4;
            }
        } else if self.kept < 16 {
            self.bits = (self.bits << 4) | u64::from(digit);
            self.kept += 1;
            if after_point {
                self.exponent -= 4;
            }
        } else {
            self.sticky |= digit != 0;
            if !after_point {
                self.exponent += 4;
            }
        }
    }
}

/// `mantissa * 2^exponent` rounded to the nearest double, ties to even; `sticky` says
/// nonzero bits were dropped below `mantissa`.
fn compose(mantissa: u64, sticky: bool, exponent: i64) -> f64 {
    if mantissa == 0 {
        return 0.0;
    }
    let width = 64 - i64::from(mantissa.leading_zeros());
    let top = exponent + width - 1;
    if top > 1023 {
        return f64::INFINITY;
    }
    // The weight of the last bit kept: 52 below the top, but not below the subnormals'.
    let mut lsb = (top - 52).max(-1074);
    let shift = lsb - exponent;
    let mut m = if shift <= 0 {
        mantissa << (-shift)
    } else if shift >= 64 {
        0
    } else {
        mantissa >> shift
    };
    if shift > 0 && round_up(mantissa, shift, sticky, m & 1 == 1) {
        m += 1;
    }
    if m == 1 << 53 {
        m >>= 1;
        lsb += 1;
    }
    if m < 1 << 52 {
        return f64::from_bits(m); // subnormal (or zero)
    }
    let field = lsb + 52 + 1023;
    if field > 2046 {
        return f64::INFINITY;
    }
    f64::from_bits(((field as u64) << 52) | (m & ((1 << 52) - 1)))
}

/// Whether dropping the low `shift` bits of `mantissa` (and the sticky bits below) rounds
/// up to even.
fn round_up(mantissa: u64, shift: i64, sticky: bool, odd: bool) -> bool {
    if shift > 64 {
        return false; // everything is below half of the last kept bit
    }
    let (rest, half) = if shift == 64 {
        (mantissa, 1u64 << 63)
    } else {
        (mantissa & ((1u64 << shift) - 1), 1u64 << (shift - 1))
    };
    rest > half || (rest == half && (sticky || odd))
}

#[cfg(test)]
mod tests {
    use mlua::Lua;

    /// A Lua state with the library; snippets run as a script body named like Redis's.
    fn lua() -> Lua {
        let lua = Lua::new();
        super::register(&lua).expect("register");
        lua
    }

    fn eval<T: mlua::FromLuaMulti>(lua: &Lua, code: &str) -> mlua::Result<T> {
        lua.load(code).set_name("@user_script").eval::<T>()
    }

    /// The string a snippet returns.
    fn text(lua: &Lua, code: &str) -> String {
        let s: mlua::String = eval(lua, code).unwrap_or_else(|e| panic!("{code}: {e}"));
        String::from_utf8_lossy(&s.as_bytes()).into_owned()
    }

    /// The error message of a failing snippet.
    fn error_of(lua: &Lua, code: &str) -> String {
        match eval::<mlua::Value>(lua, code) {
            Ok(v) => panic!("{code}: expected an error, got {v:?}"),
            Err(e) => root_message(&e),
        }
    }

    use crate::script::convert::root_message;

    /// Checks `(snippet, error)` pairs: each snippet fails with that error, located at the
    /// script's first line.
    fn check_errors<C: AsRef<str>>(lua: &Lua, cases: &[(C, &str)]) {
        for (code, want) in cases {
            let code = code.as_ref();
            assert_eq!(
                error_of(lua, code),
                format!("user_script:1: {want}"),
                "{code}"
            );
        }
    }

    /// Checks `(snippet, result)` pairs: the returned string, or the error's text.
    fn check(lua: &Lua, cases: &[(&str, &str)]) {
        for (code, want) in cases {
            let got = match eval::<mlua::Value>(lua, code) {
                Ok(mlua::Value::String(s)) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
                Ok(other) => format!("{other:?}"),
                Err(e) => root_message(&e),
            };
            assert_eq!(&got, want, "{code}");
        }
    }

    // Every expected value below was first obtained from redis-server 7.0.15 with
    // `redis-cli eval "<snippet>" 0` (an error's text is the part before " script: ...").

    #[test]
    fn encode_scalars_strings_and_numbers() {
        check(
            &lua(),
            &[
                ("return cjson.encode({1,2,3})", "[1,2,3]"),
                ("return cjson.encode(nil)", "null"),
                (
                    "return cjson.encode({true, false, cjson.null})",
                    "[true,false,null]",
                ),
                (
                    r#"return cjson.encode({'a/b', '"q"', 'back\\slash', '\1\2\8\9\10\11\12\13\14\31\127'})"#,
                    r#"["a\/b","\"q\"","back\\slash","\u0001\u0002\b\t\n\u000b\f\r\u000e\u001f\u007f"]"#,
                ),
                ("return cjson.encode('a\\0b')", r#""a\u0000b""#),
                ("return cjson.encode({['a\\0']=1})", r#"{"a\u0000":1}"#),
                (
                    "return cjson.encode({1e15, 1e16, 123456789012345, 0.1+0.2, 100, -0.000001, \
                     0.0001, 0.00001, 1e21, 2^63, 5e-324, 1.7976931348623157e308, \
                     99999999999999.5, 0.5e-4})",
                    "[1e+15,1e+16,1.2345678901234e+14,0.3,100,-1e-06,0.0001,1e-05,1e+21,\
                     9.2233720368548e+18,4.9406564584125e-324,1.7976931348623e+308,1e+14,5e-05]",
                ),
                (
                    "return cjson.encode({1e-300, 0.1, 1/3, 123456789012345678, -1.5e100})",
                    "[1e-300,0.1,0.33333333333333,1.2345678901235e+17,-1.5e+100]",
                ),
                (
                    "local z=0 return cjson.encode({-z, 1e-20, -1e-300, {[1e-20]=1}})",
                    r#"[-0,1e-20,-1e-300,{"1e-20":1}]"#,
                ),
                ("local z=0 return cjson.encode({[-z]=1})", r#"{"-0":1}"#),
            ],
        );
        // Bytes from 0x80 pass through untouched.
        let lua = lua();
        let raw: mlua::String = eval(&lua, "return cjson.encode('\\128\\255é')").expect("eval");
        assert_eq!(&raw.as_bytes()[..], b"\"\x80\xff\xc3\xa9\"");
    }

    #[test]
    fn encode_tables() {
        check(
            &lua(),
            &[
                ("return cjson.encode({[1]=1,[2]=2,[4]=4})", "[1,2,null,4]"),
                (
                    "return cjson.encode({[10]=1})",
                    "[null,null,null,null,null,null,null,null,null,1]",
                ),
                ("return cjson.encode({[0]=1})", r#"{"0":1}"#),
                ("return cjson.encode({[-1]=1})", r#"{"-1":1}"#),
                ("return cjson.encode({[1.5]=1})", r#"{"1.5":1}"#),
                ("return cjson.encode({[1e300]=1})", r#"{"1e+300":1}"#),
                ("return cjson.encode({[2^31]=1})", r#"{"2147483648":1}"#),
                // 2^31 first (as a C int: INT_MIN), then 1: an array of one.
                ("return cjson.encode({[2^31]=1, [1]=2})", "[2]"),
                (
                    "return cjson.encode({[2^53]=1})",
                    r#"{"9.007199254741e+15":1}"#,
                ),
                (
                    "return cjson.encode({{}, {{}}, {a={}}})",
                    r#"[{},[{}],{"a":{}}]"#,
                ),
                (
                    "return cjson.encode({a={b={c={}}}})",
                    r#"{"a":{"b":{"c":{}}}}"#,
                ),
                ("return cjson.encode({[1]=1, n=2})", r#"{"1":1,"n":2}"#),
                (
                    "return cjson.encode(setmetatable({}, {__index=function() return 1 end}))",
                    "{}",
                ),
            ],
        );
    }

    #[test]
    fn encode_errors() {
        let lua = lua();
        let deep = |open: &str, depth: usize| {
            format!(
                "local c=cjson.new() c.encode_max_depth(100000) local t={{}} local x=t \
                 for i=1,{depth} do {open} end return c.encode(t)"
            )
        };
        let cases = [
            (
                "return cjson.encode({[1]=1,[11]=2})".to_owned(),
                "Cannot serialise table: excessively sparse array",
            ),
            (
                "return cjson.encode({[11]=1})".into(),
                "Cannot serialise table: excessively sparse array",
            ),
            (
                "return cjson.encode({[true]=1})".into(),
                "Cannot serialise boolean: table key must be a number or string",
            ),
            (
                "return cjson.encode({[{}]=1})".into(),
                "Cannot serialise table: table key must be a number or string",
            ),
            (
                "return cjson.encode({[1/0]=1})".into(),
                "Cannot serialise number: must not be NaN or Inf",
            ),
            (
                "return cjson.encode(math.huge)".into(),
                "Cannot serialise number: must not be NaN or Inf",
            ),
            (
                "return cjson.encode(function() end)".into(),
                "Cannot serialise function: type not supported",
            ),
            (
                "return cjson.encode({function() end})".into(),
                "Cannot serialise function: type not supported",
            ),
            (
                "return cjson.encode(coroutine.create(function() end))".into(),
                "Cannot serialise thread: type not supported",
            ),
            (
                "return cjson.encode()".into(),
                "bad argument #1 to 'encode' (expected 1 argument)",
            ),
            (
                "return cjson.encode(1,2)".into(),
                "bad argument #1 to 'encode' (expected 1 argument)",
            ),
            (
                "return cjson:encode(1)".into(),
                "calling 'encode' on bad self (expected 1 argument)",
            ),
            (
                "local e = cjson.encode return e(1,2)".into(),
                "bad argument #1 to 'e' (expected 1 argument)",
            ),
            (
                "local t={} local c=t for i=1,1000 do c[1]={} c=c[1] end return cjson.encode(t)"
                    .into(),
                "Cannot serialise, excessive nesting (1001)",
            ),
            (
                "local c=cjson.new() c.encode_max_depth(2) return c.encode({{{1}}})".into(),
                "Cannot serialise, excessive nesting (3)",
            ),
            // Past 8000 Lua stack slots the C code's lua_checkstack fails.
            (
                deep("x[1]={} x=x[1]", 9000),
                "Cannot serialise, excessive nesting (7998)",
            ),
            (
                deep("x.a={} x=x.a", 9000),
                "Cannot serialise, excessive nesting (4000)",
            ),
            (
                deep("if i%2==0 then x.a={} x=x.a else x[1]={} x=x[1] end", 9000),
                "Cannot serialise, excessive nesting (5333)",
            ),
        ];
        check_errors(&lua, &cases);
        let ok: mlua::Integer = eval(
            &lua,
            "local t={} local c=t for i=1,999 do c[1]={} c=c[1] end return #cjson.encode(t)",
        )
        .expect("eval");
        assert_eq!(ok, 2000);
    }

    #[test]
    fn decode_values() {
        check(
            &lua(),
            &[
                (
                    r#"return cjson.encode(cjson.decode('  {"k" : [ 1 , "x" , true , null , -2.5e3 ] }  '))"#,
                    r#"{"k":[1,"x",true,null,-2500]}"#,
                ),
                (
                    r#"return cjson.encode(cjson.decode('"\\u00e9\\u20ac\\ud83d\\ude00\\u0000x\\/\\b\\f\\n\\r\\t"'))"#,
                    "\"é€😀\\u0000x\\/\\b\\f\\n\\r\\t\"",
                ),
                (r#"return cjson.decode('"\\uD83D\\uDE00"')"#, "😀"),
                ("return cjson.decode('\"\\t\"')", "\t"),
                ("return tostring(cjson.decode('+1'))", "1"),
                ("return tostring(cjson.decode(123))", "123"),
                ("return tostring(cjson.decode('[1]\\0garbage')[1])", "1"),
                (
                    "local c=cjson.new() c.encode_invalid_numbers(true) return c.encode(c.decode(\
                     '[+1, -0x10, 0x1p4, Infinity, -inf, 1e400, 01, 1., -.5, 0x.8, 1.e5, 0x1P-2, \
                     0X1f, 4.9e-324, 2.2250738585072011e-308, 0x1.fffffffffffff8p1023, \
                     0x0.0000000000001p-1022, 123456789012345678901234567890]'))",
                    "[1,-16,16,inf,-inf,inf,1,1,-0.5,0.5,100000,0.25,31,4.9406564584125e-324,\
                     2.2250738585072e-308,inf,4.9406564584125e-324,1.2345678901235e+29]",
                ),
                (
                    "local c=cjson.new() c.encode_invalid_numbers(true) \
                     return c.encode(c.decode('[NaN, nan(123), -nan, infinity, 0x1.8p1]'))",
                    "[nan,nan,nan,inf,3]",
                ),
                (
                    "local c=cjson.new() c.decode_invalid_numbers(false) \
                     return c.encode(c.decode('[0, -0, 0.5, -1e5]'))",
                    "[0,-0,0.5,-100000]",
                ),
                (
                    "return string.format('%.17g %.17g %.17g', cjson.decode('0x1.00000000000008p0'), \
                     cjson.decode('0x1.00000000000018p0'), cjson.decode('2.4703282292062328e-324'))",
                    "1 1.0000000000000004 4.9406564584124654e-324",
                ),
            ],
        );
        let checks: Vec<bool> = eval(
            &lua(),
            r#"return {cjson.decode('{"a":[1,2,{"b":null}]}').a[3].b == cjson.null,
                #cjson.decode('[1,2,3]') == 3, cjson.decode('{"a":1,"a":2}').a == 2,
                cjson.decode('[true,false]')[2] == false, cjson.decode('null') == cjson.null}"#,
        )
        .expect("eval");
        assert_eq!(checks, [true; 5]);
    }

    /// The numbers read agree with Lua's own `tonumber` (glibc's strtod), as on Redis.
    #[test]
    fn decode_numbers_agree_with_strtod() {
        let all: Vec<mlua::Value> = eval(
            &lua(),
            "local t = {'1', '0x1.8p1', '1e400', '-1e-400', '4.9e-324', \
             '2.4703282292062327e-324', '2.4703282292062328e-324', '0x1.00000000000008p0', \
             '0x1.00000000000018p0', '0x1.000000000000080000001p0', \
             '123456789012345678901234567890e-10', '0.1', '1e23', '9007199254740993', \
             '0x1fffffffffffff1', '0x.0000000000000000000000000001p0', '0x1p-1075', \
             '0x1.8p-1074', '1e-99999999999999999999', '1e99999999999999999999', '0X10', \
             '0x1P+4', '-.5e1', '00012', '0x1.fffffffffffff7ffp1023', \
             '0x0.fffffffffffff8p-1022', '2.2250738585072011e-308', '-0', '+0x1p-3', \
             '-infinity', 'InFiNiTy'} \
             local out = {} for i, s in ipairs(t) do local ok, a = pcall(cjson.decode, s) \
             out[i] = (ok and a == tonumber(s)) or s end return out",
        )
        .expect("eval");
        for value in all {
            assert!(matches!(value, mlua::Value::Boolean(true)), "{value:?}");
        }
    }

    #[test]
    fn decode_errors() {
        let lua = lua();
        let cases = [
            (
                "return cjson.decode('x')",
                "Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('')",
                "Expected value but found T_END at character 1",
            ),
            (
                "return cjson.decode(' ')",
                "Expected value but found T_END at character 2",
            ),
            (
                "return cjson.decode('[1,')",
                "Expected value but found T_END at character 4",
            ),
            (
                "return cjson.decode('[1 2]')",
                "Expected comma or array end but found T_NUMBER at character 4",
            ),
            (
                "return cjson.decode('[1,2')",
                "Expected comma or array end but found T_END at character 5",
            ),
            (
                "return cjson.decode('{1:2}')",
                "Expected object key string but found T_NUMBER at character 2",
            ),
            (
                r#"return cjson.decode('{"a" 1}')"#,
                "Expected colon but found T_NUMBER at character 6",
            ),
            (
                r#"return cjson.decode('{"a"')"#,
                "Expected colon but found T_END at character 5",
            ),
            (
                r#"return cjson.decode('{"a":1')"#,
                "Expected comma or object end but found T_END at character 7",
            ),
            (
                r#"return cjson.decode('{"a":1,}')"#,
                "Expected object key string but found T_OBJ_END at character 8",
            ),
            (
                "return cjson.decode('{,}')",
                "Expected object key string but found T_COMMA at character 2",
            ),
            (
                "return cjson.decode(']')",
                "Expected value but found T_ARR_END at character 1",
            ),
            (
                "return cjson.decode('1 2')",
                "Expected the end but found T_NUMBER at character 3",
            ),
            (
                "return cjson.decode('[1,]')",
                "Expected value but found T_ARR_END at character 4",
            ),
            (
                "return cjson.decode('[1]x')",
                "Expected the end but found invalid token at character 4",
            ),
            (
                r#"return cjson.decode('{"a":1}}')"#,
                "Expected the end but found T_OBJ_END at character 8",
            ),
            (
                "return cjson.decode('\"abc')",
                "Expected value but found unexpected end of string at character 5",
            ),
            (
                "return cjson.decode('\"ab\\0\"')",
                "Expected value but found unexpected end of string at character 4",
            ),
            (
                r#"return cjson.decode('"a\\qb"')"#,
                "Expected value but found invalid escape code at character 3",
            ),
            (
                r#"return cjson.decode('"\\')"#,
                "Expected value but found invalid escape code at character 2",
            ),
            (
                r#"return cjson.decode('"a\\u12"')"#,
                "Expected value but found invalid unicode escape code at character 3",
            ),
            (
                r#"return cjson.decode('["\\u0"]')"#,
                "Expected value but found invalid unicode escape code at character 3",
            ),
            (
                r#"return cjson.decode('"\\uzzzz"')"#,
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                r#"return cjson.decode('"\\ud83d"')"#,
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                r#"return cjson.decode('"\\ude00"')"#,
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                r#"return cjson.decode('"\\ud83d\\u0041"')"#,
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                r#"return cjson.decode('{"a\\x":1}')"#,
                "Expected object key string but found invalid escape code at character 4",
            ),
            (
                "return cjson.decode('nul')",
                "Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('tru')",
                "Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('\\1')",
                "Expected value but found invalid token at character 1",
            ),
            (
                "return cjson.decode('infinit')",
                "Expected the end but found invalid token at character 4",
            ),
            (
                "return cjson.decode('0x')",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "return cjson.decode('1e')",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "return cjson.decode('1.5.5')",
                "Expected the end but found invalid token at character 4",
            ),
            (
                "return cjson.decode('-')",
                "Expected value but found invalid number at character 1",
            ),
            (
                "return cjson.decode('a\\0b')",
                "JSON parser does not support UTF-16 or UTF-32",
            ),
            (
                "return cjson.decode('\"\\0\"')",
                "JSON parser does not support UTF-16 or UTF-32",
            ),
            (
                "return cjson.decode(nil)",
                "bad argument #1 to 'decode' (string expected, got nil)",
            ),
            (
                "return cjson.decode()",
                "bad argument #1 to 'decode' (expected 1 argument)",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('01')",
                "Expected value but found invalid number at character 1",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('-inf')",
                "Expected value but found invalid number at character 1",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('+1')",
                "Expected value but found invalid token at character 1",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('0x10')",
                "Expected value but found invalid number at character 1",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('-')",
                "Expected value but found invalid number at character 1",
            ),
            (
                "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('NaN')",
                "Expected value but found invalid token at character 1",
            ),
        ];
        check_errors(&lua, &cases);
    }

    #[test]
    fn decode_depth_limits() {
        let lua = lua();
        let deep = |unit: &str| {
            format!(
                "local c=cjson.new() c.decode_max_depth(100000) \
                 return c.decode(string.rep('{unit}', 9000))"
            )
        };
        let cases = [
            (
                "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))".to_owned(),
                "Found too many nested data structures (1001) at character 1001",
            ),
            (
                "local c=cjson.new() c.decode_max_depth(2) return c.decode('[[[1]]]')".into(),
                "Found too many nested data structures (3) at character 3",
            ),
            // Past 8000 Lua stack slots the C code's lua_checkstack fails.
            (
                deep("["),
                "Found too many nested data structures (7999) at character 7999",
            ),
            (
                deep(r#"{"a":"#),
                "Found too many nested data structures (4000) at character 19996",
            ),
            (
                deep(r#"{"a":["#),
                "Found too many nested data structures (5333) at character 15997",
            ),
        ];
        check_errors(&lua, &cases);
        let n: mlua::Integer = eval(
            &lua,
            "return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))",
        )
        .expect("eval");
        assert_eq!(n, 1);
    }

    #[test]
    fn configuration_functions() {
        check(
            &lua(),
            &[
                (
                    "local c=cjson.new() local a,b,d = c.encode_sparse_array() \
                     return table.concat({tostring(a), b, d}, ' ')",
                    "false 2 10",
                ),
                (
                    "local c=cjson.new() return table.concat({c.encode_max_depth(), \
                     c.decode_max_depth(), c.encode_number_precision(), \
                     tostring(c.encode_keep_buffer()), tostring(c.encode_invalid_numbers()), \
                     tostring(c.decode_invalid_numbers())}, ' ')",
                    "1000 1000 14 true false true",
                ),
                (
                    "local c=cjson.new() local a,b,d = c.encode_sparse_array(true, 0, 3) \
                     return table.concat({tostring(a), b, d}, ' ')",
                    "true 0 3",
                ),
                (
                    "local c=cjson.new() local a,b,d = c.encode_sparse_array(nil, nil, 4) \
                     return table.concat({tostring(a), b, d}, ' ')",
                    "false 2 4",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_sparse_array('on'))",
                    "true",
                ),
                (
                    "local c=cjson.new() c.encode_sparse_array(true) return c.encode({[1]=1,[11]=2})",
                    r#"{"1":1,"11":2}"#,
                ),
                (
                    "local c=cjson.new() c.encode_sparse_array(false, 0) return c.encode({[1]=1,[20]=2})",
                    "[1,null,null,null,null,null,null,null,null,null,null,null,null,null,null,\
                     null,null,null,null,2]",
                ),
                (
                    "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers('null')), \
                     c.encode(0/0), c.encode(1/0)}, ' ')",
                    "null null null",
                ),
                (
                    "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers(true)), \
                     c.encode(0/0), c.encode(1/0), c.encode(-1/0), c.encode(-(0/0))}, ' ')",
                    "true nan inf -inf nan",
                ),
                (
                    "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers('off')), \
                     tostring(c.encode_invalid_numbers('on')), c.encode_invalid_numbers('null'), \
                     tostring(c.encode_invalid_numbers(false)), \
                     tostring(c.decode_invalid_numbers('on'))}, ' ')",
                    "false true null false true",
                ),
                (
                    "local c=cjson.new() c.encode_number_precision(3) return c.encode({1/3, 12345, 0.5})",
                    "[0.333,1.23e+04,0.5]",
                ),
                (
                    "local c = cjson.new() c.encode_number_precision(1) local d = cjson.new() \
                     d.encode_number_precision(2) return table.concat({cjson.encode(0.15), \
                     c.encode(0.15), c.encode(1234), c.encode(5), c.encode(2.5), d.encode(0.125), \
                     c.encode(0.5), c.encode(1.5), c.encode(25), c.encode(35)}, ' ')",
                    "0.15 0.1 1e+03 5 2 0.12 0.5 2 2e+01 4e+01",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_max_depth('5'))",
                    "5",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_max_depth(2.7))",
                    "2",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_max_depth(2^32+5))",
                    "5",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_max_depth(-2^32+5))",
                    "5",
                ),
                (
                    "local c=cjson.new() return tostring(c.encode_max_depth(' 0x10 '))",
                    "16",
                ),
                (
                    "local c=cjson.new() return table.concat({tostring(c.encode_keep_buffer(false)), \
                     c.encode('x'), tostring(c.encode_keep_buffer())}, ' ')",
                    "false \"x\" false",
                ),
            ],
        );
    }

    #[test]
    fn configuration_errors() {
        let lua = lua();
        let cases = [
            (
                "local c=cjson.new() return c.encode_invalid_numbers('bogus')",
                "bad argument #1 to 'encode_invalid_numbers' (invalid option 'bogus')",
            ),
            (
                "local c=cjson.new() return c.decode_invalid_numbers('null')",
                "bad argument #1 to 'decode_invalid_numbers' (invalid option 'null')",
            ),
            (
                "local c=cjson.new() return c.encode_invalid_numbers({})",
                "bad argument #1 to 'encode_invalid_numbers' (string expected, got table)",
            ),
            (
                "local c=cjson.new() return c.encode_max_depth(0)",
                "bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)",
            ),
            (
                "local c=cjson.new() return c.encode_max_depth(1e20)",
                "bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)",
            ),
            (
                "local c=cjson.new() return c.encode_max_depth(0/0)",
                "bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)",
            ),
            (
                "local c=cjson.new() return c.encode_max_depth('x')",
                "bad argument #1 to 'encode_max_depth' (number expected, got string)",
            ),
            (
                "local c=cjson.new() return c.encode_max_depth(1,2)",
                "bad argument #2 to 'encode_max_depth' (found too many arguments)",
            ),
            (
                "local c=cjson.new() return c.encode_number_precision(15)",
                "bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)",
            ),
            (
                "local c=cjson.new() return c.encode_keep_buffer('bad')",
                "bad argument #1 to 'encode_keep_buffer' (invalid option 'bad')",
            ),
            (
                "local c=cjson.new() return c.encode_keep_buffer(1)",
                "bad argument #1 to 'encode_keep_buffer' (invalid option '1')",
            ),
            (
                "local c=cjson.new() return c.encode_keep_buffer(true, 2)",
                "bad argument #2 to 'encode_keep_buffer' (found too many arguments)",
            ),
            (
                "local c=cjson.new() return c.encode_sparse_array(true, -1)",
                "bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)",
            ),
            (
                "local c=cjson.new() return c.encode_sparse_array(true, 'x')",
                "bad argument #2 to 'encode_sparse_array' (number expected, got string)",
            ),
            (
                "local c=cjson.new() return c.encode_sparse_array(1)",
                "bad argument #1 to 'encode_sparse_array' (invalid option '1')",
            ),
            (
                "local c=cjson.new() return c.encode_sparse_array(true, 2, 3, 4)",
                "bad argument #4 to 'encode_sparse_array' (found too many arguments)",
            ),
            (
                "return cjson:encode_max_depth()",
                "calling 'encode_max_depth' on bad self (number expected, got table)",
            ),
        ];
        check_errors(&lua, &cases);
    }

    #[test]
    fn module_fields_and_new() {
        let lua = lua();
        assert_eq!(text(&lua, "return cjson._VERSION"), "2.1.0");
        assert_eq!(text(&lua, "return cjson._NAME"), "cjson");
        assert_eq!(
            text(
                &lua,
                "local t={} for k,v in pairs(cjson) do t[#t+1]=k..'='..type(v) end \
                 table.sort(t) return table.concat(t, ' ')"
            ),
            "_NAME=string _VERSION=string decode=function decode_invalid_numbers=function \
             decode_max_depth=function encode=function encode_invalid_numbers=function \
             encode_keep_buffer=function encode_max_depth=function \
             encode_number_precision=function encode_sparse_array=function new=function \
             null=userdata"
        );
        let checks: Vec<mlua::Value> = eval(
            &lua,
            "return {cjson.new()._VERSION, cjson.new()._NAME, type(cjson.new().null), \
             cjson.new().null == cjson.null, cjson.decode('null') == cjson.null, \
             tostring(cjson.null)}",
        )
        .expect("eval");
        let shown: Vec<String> = checks
            .iter()
            .map(|v| v.to_string().expect("text"))
            .collect();
        assert_eq!(
            shown,
            [
                "2.1.0",
                "cjson",
                "userdata",
                "true",
                "true",
                "userdata: (nil)"
            ]
        );
        // A new module's settings are its own.
        assert_eq!(
            text(
                &lua,
                "local c = cjson.new() c.encode_max_depth(3) return cjson.encode_max_depth() .. \
                 ' ' .. c.encode_max_depth()"
            ),
            "1000 3"
        );
    }

    /// Random number-like text reads as glibc's strtod reads it: Lua's `tonumber` (strtod
    /// on the whole text) accepts exactly what `decode` accepts, with the same value.
    #[test]
    fn numbers_read_as_strtod_reads_them() {
        use proptest::test_runner::TestRunner;
        let lua = lua();
        let agree: mlua::Function = eval(
            &lua,
            "return function(s) local ok, v = pcall(cjson.decode, s) local t = tonumber(s) \
             if not ok then return t == nil end \
             return t ~= nil and (v == t or (v ~= v and t ~= t)) end",
        )
        .expect("checker");
        let texts = "[-+0-9iInN][-+0-9a-fA-FxXpPiInNtTyY.()_]{0,24}";
        TestRunner::default()
            .run(&texts, |text| {
                let ok: bool = agree.call(text.as_str()).expect("call");
                proptest::prop_assert!(ok, "{text:?}");
                Ok(())
            })
            .expect("decode and tonumber agree");
    }

    /// Any bytes decode to a value or a Lua error, never a panic.
    #[test]
    fn decoding_anything_is_a_value_or_an_error() {
        use proptest::test_runner::TestRunner;
        let lua = lua();
        let decode: mlua::Function = eval(&lua, "return cjson.decode").expect("decode");
        let jsonish = "[\\[\\]{}\",:0-9a-fnrtulsu\\\\ .eE+-]{0,40}";
        TestRunner::default()
            .run(&jsonish, |text| {
                let _ = decode.call::<mlua::Value>(text.as_str());
                Ok(())
            })
            .expect("json-like text");
        TestRunner::default()
            .run(
                &proptest::collection::vec(proptest::num::u8::ANY, 0..64),
                |bytes| {
                    let text = lua.create_string(&bytes).expect("string");
                    let _ = decode.call::<mlua::Value>(text);
                    Ok(())
                },
            )
            .expect("any bytes");
    }
}
