//! Redis's `bit` Lua library: LuaBitOp 1.0.2 (`tobit`, `tohex`, `bnot`, `band`, `bor`, `bxor`,
//! `lshift`, `rshift`, `arshift`, `rol`, `ror`, `bswap`), with 32-bit results returned as signed
//! numbers.
//!
//! Also home of [`lauxlib`], the emulation of the Lua C API's argument checks and error texts
//! shared by the ports of Redis's C libraries (`bit`, `struct`, `cmsgpack`).

use mlua::{Lua, MultiValue, Value};

use self::lauxlib::{Args, type_error};

/// A library function: its arguments in, its result (or a Lua error) out.
type Op = fn(&Lua, &Args) -> mlua::Result<Value>;

/// The functions in LuaBitOp's registration order (which fixes `pairs(bit)` order).
const FUNCS: [(&str, Op); 12] = [
    ("tobit", tobit),
    ("bnot", bnot),
    ("band", band),
    ("bor", bor),
    ("bxor", bxor),
    ("lshift", lshift),
    ("rshift", rshift),
    ("arshift", arshift),
    ("rol", rol),
    ("ror", ror),
    ("bswap", bswap),
    ("tohex", tohex),
];

/// Installs the library as a global of `lua`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    // `luaL_register` sizes the table for the functions; the same size gives the same
    // `pairs` order as Redis.
    let bit = lua.create_table_with_capacity(0, FUNCS.len())?;
    for (name, op) in FUNCS {
        let function =
            lua.create_function(move |lua, args: MultiValue| op(lua, &Args::new(args)))?;
        bit.set(name, function)?;
    }
    lua.globals().set("bit", bit)
}

/// LuaBitOp's `barg`: argument `i` as 32 bits. Adding 2^52+2^51 puts the integer part of any
/// double below 2^51 in magnitude into the low mantissa bits, rounding to nearest even; the
/// low 32 bits of the representation are then the value modulo 2^32.
fn barg(lua: &Lua, args: &Args, i: usize) -> mlua::Result<u32> {
    match lauxlib::to_number(lua, args.get(i))? {
        Some(n) => Ok(normalize(n)),
        None => Err(type_error(lua, i, "number", args.get(i))),
    }
}

/// The 2^52+2^51 trick (see [`barg`]).
fn normalize(n: f64) -> u32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32
}

/// LuaBitOp's `BRET`: 32 bits returned as a signed number.
fn ret(b: u32) -> Value {
    Value::Number(f64::from(b as i32))
}

fn tobit(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    Ok(ret(barg(lua, args, 1)?))
}

fn bnot(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    Ok(ret(!barg(lua, args, 1)?))
}

/// `band`/`bor`/`bxor`: the first argument, then the rest from the last down (so a bad
/// argument near the end is reported before one in the middle, as in C).
fn fold(lua: &Lua, args: &Args, op: fn(u32, u32) -> u32) -> mlua::Result<Value> {
    let mut b = barg(lua, args, 1)?;
    for i in (2..=args.len()).rev() {
        b = op(b, barg(lua, args, i)?);
    }
    Ok(ret(b))
}

fn band(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    fold(lua, args, |a, b| a & b)
}

fn bor(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    fold(lua, args, |a, b| a | b)
}

fn bxor(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    fold(lua, args, |a, b| a ^ b)
}

/// The shifts and rotations: the count is the second argument modulo 32.
fn shift(lua: &Lua, args: &Args, op: fn(u32, u32) -> u32) -> mlua::Result<Value> {
    let b = barg(lua, args, 1)?;
    let n = barg(lua, args, 2)? & 31;
    Ok(ret(op(b, n)))
}

fn lshift(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    shift(lua, args, |b, n| b << n)
}

fn rshift(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    shift(lua, args, |b, n| b >> n)
}

fn arshift(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    shift(lua, args, |b, n| ((b as i32) >> n) as u32)
}

fn rol(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    shift(lua, args, u32::rotate_left)
}

fn ror(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    shift(lua, args, u32::rotate_right)
}

fn bswap(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    Ok(ret(barg(lua, args, 1)?.swap_bytes()))
}

/// `tohex(x [, n])`: the low `|n|` hex digits (at most 8; default 8), uppercase when `n` is
/// negative. An absent `n` means 8, but an explicit nil is a bad argument.
fn tohex(lua: &Lua, args: &Args) -> mlua::Result<Value> {
    let b = barg(lua, args, 1)?;
    let n = if args.len() < 2 {
        8
    } else {
        barg(lua, args, 2)? as i32
    };
    // i32::MIN negates to itself in C; Redis's build then prints 8 uppercase digits, as here.
    let width = n.unsigned_abs().min(8) as usize;
    let digits = if n < 0 {
        format!("{b:08X}")
    } else {
        format!("{b:08x}")
    };
    let text = digits.get(8 - width..).unwrap_or_default();
    Ok(Value::String(lua.create_string(text)?))
}

/// What the ports of Redis's C libraries need of Lua 5.1's C API and auxiliary library
/// (`lauxlib.c`): argument access by 1-based index, the `luaL_check*` conversions and the exact
/// error texts of `luaL_error`, `luaL_argerror` and `luaL_typerror`, plus the C conversions
/// of doubles to integers on x86-64 that the libraries' results depend on.
///
/// Errors are `mlua::Error::RuntimeError` holding the whole message Lua would raise, position
/// prefix included (`user_script:1: bad argument #1 to 'tobit' (...)`).
pub(super) mod lauxlib {
    use mlua::{Lua, MultiValue, Value};

    /// `LUAI_MAXCSTACK`: the most stack slots one C function may use; `lua_checkstack` fails
    /// beyond it.
    pub(in crate::script) const MAX_C_STACK: usize = 8000;

    /// mlua panics when more than about 8000 references (handles on Lua strings, tables and
    /// functions) are alive at once: its auxiliary stack has Lua's C-stack limit. Functions
    /// that build many such values hold at most this many, failing as if Lua's stack were
    /// full beyond it, which leaves room for the references held elsewhere.
    pub(in crate::script) const MAX_HELD_REFS: usize = 7000;

    /// Whether a value pins an mlua reference while Rust holds it.
    pub(in crate::script) fn holds_ref(value: &Value) -> bool {
        !matches!(
            value,
            Value::Nil
                | Value::Boolean(_)
                | Value::Integer(_)
                | Value::Number(_)
                | Value::LightUserData(_)
                | Value::Error(_)
        )
    }

    /// A library function's arguments, indexed from 1 like the Lua stack.
    pub(in crate::script) struct Args(Vec<Value>);

    impl Args {
        /// Takes the arguments of a call.
        pub(in crate::script) fn new(args: MultiValue) -> Self {
            Args(args.into_vec())
        }

        /// Argument `i` (1-based); `None` past the last ("no value").
        pub(in crate::script) fn get(&self, i: usize) -> Option<&Value> {
            i.checked_sub(1).and_then(|i| self.0.get(i))
        }

        /// All the arguments, in order.
        pub(in crate::script) fn values(&self) -> &[Value] {
            &self.0
        }

        /// How many arguments were passed (`lua_gettop`).
        pub(in crate::script) fn len(&self) -> usize {
            self.0.len()
        }
    }

    /// `luaL_where(L, 1)`: `"chunk:line: "` of the Lua code calling the library function, or
    /// nothing when the caller is not Lua code (such as `pcall`).
    fn caller_position(lua: &Lua) -> String {
        let Some(caller) = lua.inspect_stack(1) else {
            return String::new();
        };
        let line = caller.curr_line();
        if line <= 0 {
            return String::new();
        }
        let source = caller.source();
        let short_src = source.short_src.as_deref().unwrap_or("?");
        format!("{short_src}:{line}: ")
    }

    /// `luaL_error`: `message` prefixed with the caller's position.
    pub(in crate::script) fn error(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
        mlua::Error::RuntimeError(format!("{}{message}", caller_position(lua)))
    }

    /// An error raised by the Lua core itself (such as "table index is nil"): no position,
    /// since the running function is not Lua code.
    pub(in crate::script) fn core_error(message: &str) -> mlua::Error {
        mlua::Error::RuntimeError(message.to_owned())
    }

    /// `luaL_argerror`: names the function as its caller called it (`'?'` when unknown) and
    /// does not count `self` in a method call.
    pub(in crate::script) fn arg_error(lua: &Lua, narg: usize, extra: &str) -> mlua::Error {
        let mut narg = narg as i64;
        let Some(frame) = lua.inspect_stack(0) else {
            return error(lua, format!("bad argument #{narg} ({extra})"));
        };
        let names = frame.names();
        let name = names.name.as_deref().unwrap_or("?");
        if names.name_what == Some("method") {
            narg -= 1;
            if narg == 0 {
                return error(lua, format!("calling '{name}' on bad self ({extra})"));
            }
        }
        error(lua, format!("bad argument #{narg} to '{name}' ({extra})"))
    }

    /// `luaL_typerror`: "`expected` expected, got `<type of the argument>`".
    pub(in crate::script) fn type_error(
        lua: &Lua,
        narg: usize,
        expected: &str,
        got: Option<&Value>,
    ) -> mlua::Error {
        let extra = format!("{expected} expected, got {}", type_name(got));
        arg_error(lua, narg, &extra)
    }

    /// `luaL_typename`: Lua's name for the type of a value, "no value" for an absent one.
    pub(in crate::script) fn type_name(value: Option<&Value>) -> &'static str {
        match value {
            None => "no value",
            Some(Value::Nil) => "nil",
            Some(Value::Boolean(_)) => "boolean",
            Some(Value::Integer(_) | Value::Number(_)) => "number",
            Some(Value::String(_)) => "string",
            Some(Value::Table(_)) => "table",
            Some(Value::Function(_)) => "function",
            Some(Value::Thread(_)) => "thread",
            Some(_) => "userdata",
        }
    }

    /// `lua_tonumber` where `lua_isnumber` holds: numbers, and strings Lua converts.
    pub(in crate::script) fn to_number(
        lua: &Lua,
        value: Option<&Value>,
    ) -> mlua::Result<Option<f64>> {
        Ok(match value {
            Some(Value::Integer(i)) => Some(*i as f64),
            Some(Value::Number(n)) => Some(*n),
            Some(s @ Value::String(_)) => lua.coerce_number(s.clone())?,
            _ => None,
        })
    }

    /// `luaL_checknumber`.
    pub(in crate::script) fn check_number(
        lua: &Lua,
        value: Option<&Value>,
        narg: usize,
    ) -> mlua::Result<f64> {
        to_number(lua, value)?.ok_or_else(|| type_error(lua, narg, "number", value))
    }

    /// `luaL_checkinteger`: the number truncated as C does (`lua_Integer` is 64 bits).
    pub(in crate::script) fn check_integer(
        lua: &Lua,
        args: &Args,
        narg: usize,
    ) -> mlua::Result<i64> {
        check_number(lua, args.get(narg), narg).map(c_double_to_i64)
    }

    /// `luaL_optinteger`: `default` when the argument is absent or nil.
    pub(in crate::script) fn opt_integer(
        lua: &Lua,
        args: &Args,
        narg: usize,
        default: i64,
    ) -> mlua::Result<i64> {
        match args.get(narg) {
            None | Some(Value::Nil) => Ok(default),
            Some(_) => check_integer(lua, args, narg),
        }
    }

    /// `luaL_checklstring`: the bytes of a string, or of a number in Lua's `%.14g` form.
    pub(in crate::script) fn check_bytes(
        lua: &Lua,
        value: Option<&Value>,
        narg: usize,
    ) -> mlua::Result<Vec<u8>> {
        match value {
            Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
            Some(n @ (Value::Integer(_) | Value::Number(_))) => {
                match lua.coerce_string(n.clone())? {
                    Some(s) => Ok(s.as_bytes().to_vec()),
                    None => Err(type_error(lua, narg, "string", value)),
                }
            }
            _ => Err(type_error(lua, narg, "string", value)),
        }
    }

    /// `luaL_checkstack(L, extra, what)` for a C function already using `used` slots.
    pub(in crate::script) fn check_stack(
        lua: &Lua,
        used: usize,
        extra: usize,
        what: &str,
    ) -> mlua::Result<()> {
        if used + extra > MAX_C_STACK {
            return Err(error(lua, format!("stack overflow ({what})")));
        }
        Ok(())
    }

    /// A C cast of a double to a 64-bit signed integer on x86-64 (`cvttsd2si`): truncation,
    /// with NaN and out-of-range values giving `i64::MIN`.
    pub(in crate::script) fn c_double_to_i64(x: f64) -> i64 {
        const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
        if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
            i64::MIN
        } else {
            x as i64
        }
    }

    /// A C cast of a double to a 64-bit unsigned integer as gcc compiles it on x86-64: below
    /// 2^63 (NaN included) as [`c_double_to_i64`], else converted less 2^63 with the top bit
    /// flipped back (so 2^64 and beyond give 0).
    pub(in crate::script) fn c_double_to_u64(x: f64) -> u64 {
        const TOP: f64 = 9_223_372_036_854_775_808.0; // 2^63
        if x >= TOP {
            (c_double_to_i64(x - TOP) as u64) ^ (1 << 63)
        } else {
            c_double_to_i64(x) as u64
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use mlua::Lua;

    /// A Lua state with the library, running `code` as Redis runs a script body.
    fn eval<T: mlua::FromLuaMulti>(code: &str) -> mlua::Result<T> {
        let lua = Lua::new();
        super::register(&lua).expect("register");
        lua.load(code).set_name("@user_script").eval::<T>()
    }

    /// The error message of a failing snippet.
    fn error_of(code: &str) -> String {
        match eval::<mlua::Value>(code) {
            Ok(v) => panic!("{code}: expected an error, got {v:?}"),
            Err(e) => root_message(&e),
        }
    }

    /// The message a library function raised, without mlua's callback wrapping.
    pub(in crate::script) use crate::script::convert::root_message;

    // Every expected value below was first obtained from redis-server 7.0.15 with
    // `redis-cli eval "return <expr>" 0` (Redis turns numbers into integers; the snippets here
    // stay within integers or use tostring/tables so nothing is lost).

    #[test]
    fn tobit_normalises_like_luabitop() {
        let got: Vec<i64> = eval(
            "return {bit.tobit(2^32+5), bit.tobit(-1), bit.tobit(2^31), bit.tobit(1.5), \
             bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(2^52), bit.tobit(2^53+2), \
             bit.tobit(1e300), bit.tobit(1/0), bit.tobit(0/0), bit.tobit(' 0x10 '), \
             bit.tobit('1e3')}",
        )
        .expect("eval");
        assert_eq!(
            got,
            [
                5,
                -1,
                -2147483648,
                2,
                2,
                -2,
                0,
                1,
                -2013235812,
                0,
                0,
                16,
                1000
            ]
        );
    }

    #[test]
    fn tohex_widths_and_case() {
        let got: Vec<String> = eval(
            "return {bit.tohex(1), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255,-2), \
             bit.tohex(0x1234, 0), bit.tohex(0x12345678, 12), bit.tohex(0x12345678, -12), \
             bit.tohex(1, 2.7), bit.tohex(1,'3'), bit.tohex(65535, -4), \
             bit.tohex(0xabcdef, -2147483648), bit.tohex(0xabcdef, 2147483648), \
             bit.tohex(0xabcdef, -9)}",
        )
        .expect("eval");
        assert_eq!(
            got,
            [
                "00000001", "ffffffff", "ff", "FF", "", "12345678", "12345678", "001", "001",
                "FFFF", "00ABCDEF", "00ABCDEF", "00ABCDEF"
            ]
        );
    }

    #[test]
    fn logic_shifts_and_rotations() {
        let got: Vec<i64> = eval(
            "return {bit.band(0xff, 0x0f, 0x3), bit.bor(1,2,4,8), bit.bxor(1,3,7), bit.band(5), \
             bit.bnot(0), bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1,33), \
             bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(0x12345678, 4), \
             bit.ror(0x12345678, 4), bit.rol(1, 0), bit.ror(1,32), bit.bswap(0x12345678), \
             bit.lshift(1,-1)}",
        )
        .expect("eval");
        assert_eq!(
            got,
            [
                3,
                15,
                5,
                5,
                -1,
                -2147483648,
                1,
                2,
                15,
                -16,
                591751041,
                -2128394905,
                1,
                1,
                2018915346,
                -2147483648
            ]
        );
    }

    #[test]
    fn argument_errors_match_lua() {
        let cases = [
            (
                "return bit.tobit('x')",
                "user_script:1: bad argument #1 to 'tobit' (number expected, got string)",
            ),
            (
                "return bit.tobit()",
                "user_script:1: bad argument #1 to 'tobit' (number expected, got no value)",
            ),
            (
                "return bit.band(1, {})",
                "user_script:1: bad argument #2 to 'band' (number expected, got table)",
            ),
            (
                "return bit.band()",
                "user_script:1: bad argument #1 to 'band' (number expected, got no value)",
            ),
            (
                "return bit.band(1, 2, 'a')",
                "user_script:1: bad argument #3 to 'band' (number expected, got string)",
            ),
            (
                "return bit.tohex(1, 'x')",
                "user_script:1: bad argument #2 to 'tohex' (number expected, got string)",
            ),
            (
                "return bit.tohex(1, nil)",
                "user_script:1: bad argument #2 to 'tohex' (number expected, got nil)",
            ),
            (
                "return bit.lshift(1)",
                "user_script:1: bad argument #2 to 'lshift' (number expected, got no value)",
            ),
            (
                "return bit.rol(1, {})",
                "user_script:1: bad argument #2 to 'rol' (number expected, got table)",
            ),
            (
                "return bit:tobit()",
                "user_script:1: calling 'tobit' on bad self (number expected, got table)",
            ),
            (
                "local f = bit.tobit; return f('x')",
                "user_script:1: bad argument #1 to 'f' (number expected, got string)",
            ),
            (
                "local t = {f = bit.band}; return t.f(1, nil)",
                "user_script:1: bad argument #2 to 'f' (number expected, got nil)",
            ),
            (
                "return bit.tobit(true)",
                "user_script:1: bad argument #1 to 'tobit' (number expected, got boolean)",
            ),
        ];
        for (code, want) in cases {
            assert_eq!(error_of(code), want, "{code}");
        }
    }

    #[test]
    fn error_through_pcall_has_no_position_or_name() {
        // Redis: `local ok, e = pcall(bit.tobit, 'x'); return e` gives this text.
        let lua = Lua::new();
        super::register(&lua).expect("register");
        let f: mlua::Function = lua
            .globals()
            .get::<mlua::Table>("bit")
            .and_then(|b| b.get("tobit"))
            .expect("tobit");
        let err = lua
            .load("local f = ...; return f('x')")
            .set_name("=(tail)")
            .call::<mlua::Value>(f.clone())
            .expect_err("error");
        // Called from a Lua chunk named "(tail)": position of that chunk.
        assert_eq!(
            root_message(&err),
            "(tail):1: bad argument #1 to 'f' (number expected, got string)"
        );
        let direct = f.call::<mlua::Value>("x").expect_err("error");
        assert_eq!(
            root_message(&direct),
            "bad argument #1 to '?' (number expected, got string)"
        );
    }

    #[test]
    fn library_table_has_the_twelve_functions() {
        let n: i64 = eval("local n=0 for k,v in pairs(bit) do n=n+1 end return n").expect("eval");
        assert_eq!(n, 12);
    }

    #[test]
    fn c_casts_match_x86_64() {
        use super::lauxlib::{c_double_to_i64, c_double_to_u64};
        assert_eq!(c_double_to_i64(-1.9), -1);
        assert_eq!(c_double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_double_to_i64(1e30), i64::MIN);
        assert_eq!(c_double_to_u64(2f64.powi(64)), 0);
        assert_eq!(c_double_to_u64(1.5 * 2f64.powi(63)), 0xC000_0000_0000_0000);
        assert_eq!(c_double_to_u64(f64::NAN), 1 << 63);
    }
}
