//! Lua scripting (EVAL, EVALSHA, SCRIPT, and FUNCTION/FCALL in [`functions`]): the Lua 5.1
//! environment redis-server 7.0 gives scripts, and the conversions between Lua values and
//! replies.
//!
//! Each thread that runs scripts keeps its own Lua state ([`with_vm`]); the scripts'
//! bodies live in [`Scripts`], shared by every connection, and each state compiles a body
//! the first time it runs it. A script sees what Redis 7.0's does: `KEYS` and `ARGV`,
//! `redis.*`, the `string`, `table`, `math`, `coroutine`, `cjson`, `bit`, `struct` and
//! `cmsgpack` libraries, read-only globals and library tables, and errors worded as Redis
//! words them (`... script: <sha>, on @user_script:<line>.`).

mod bit;
mod cjson;
mod cmsgpack;
mod convert;
pub mod functions;
mod structlib;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, LuaOptions, RegistryKey, StdLib, Table, Value, VmState};

use crate::frame::{Frame, Protocol};

/// The chunk name Redis gives every script (errors then say `user_script:1:`).
const CHUNK_NAME: &str = "@user_script";

/// After this long a running script makes the server answer BUSY, as Redis's default
/// `busy-reply-threshold` does, and SCRIPT KILL can stop it.
pub const BUSY_AFTER: Duration = Duration::from_secs(5);

/// How many Lua instructions run between two checks of the clock and of SCRIPT KILL.
const CHECK_EVERY: u32 = 100_000;

/// The flags of a script's `#!lua` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// A `#!lua` line was given (Redis then leaves compatibility mode).
    pub shebang: bool,
    /// `flags=no-writes`: write commands are refused.
    pub no_writes: bool,
}

/// A script body, with its flags read from its first line.
#[derive(Debug)]
pub struct Script {
    /// Lower-case hex SHA-1 of the whole body.
    pub sha: String,
    /// The body as given.
    pub body: Vec<u8>,
    /// From the `#!lua` line.
    pub flags: ScriptFlags,
}

impl Script {
    /// Reads `body`'s `#!lua` line; the error is Redis's reply.
    pub fn new(body: Vec<u8>) -> Result<Script, String> {
        let flags = shebang_flags(&body)?;
        Ok(Script {
            sha: sha1_hex(&body),
            body,
            flags,
        })
    }

    /// The text Lua compiles: without the `#!` line, but keeping its newline so that line
    /// numbers stay those of the body.
    fn code(&self) -> &[u8] {
        if !self.flags.shebang {
            return &self.body;
        }
        let end = self.body.iter().position(|&b| b == b'\n');
        self.body
            .get(end.unwrap_or(self.body.len())..)
            .unwrap_or(&[])
    }
}

/// `evalExtractShebangFlags`: the flags of a body starting with `#!`.
fn shebang_flags(body: &[u8]) -> Result<ScriptFlags, String> {
    if !body.starts_with(b"#!") {
        return Ok(ScriptFlags::default());
    }
    let end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    let line = String::from_utf8_lossy(body.get(..end).unwrap_or_default()).into_owned();
    let mut parts = line.split(' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or("");
    if engine != "#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = ScriptFlags {
        shebang: true,
        no_writes: false,
    };
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        for flag in list.split(',').filter(|f| !f.is_empty()) {
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" | "allow-stale" | "no-cluster" | "allow-cross-slot-keys" => {}
                _ => return Err(format!("ERR Unexpected flag in script shebang: {flag}")),
            }
        }
    }
    Ok(flags)
}

/// Lower-case hex SHA-1, as `redis.sha1hex` and script ids are.
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// The scripts every connection shares (SCRIPT LOAD, EVAL), and the one running now.
#[derive(Default)]
pub struct Scripts {
    by_sha: Mutex<HashMap<String, Arc<Script>>>,
    /// Bumped by SCRIPT FLUSH: each thread's Lua state then starts afresh.
    generation: AtomicU64,
    flags: Arc<RunFlags>,
    /// `math.random`'s generator, one per server as in Redis.
    rand: convert::SharedRand,
    /// FUNCTION LOAD's libraries.
    pub libraries: functions::Libraries,
}

/// The state of the script running now (scripts run one at a time: each holds the
/// database's writer).
#[derive(Default)]
struct RunFlags {
    /// A script is running.
    running: AtomicBool,
    /// The running script has been running for longer than [`BUSY_AFTER`].
    busy: AtomicBool,
    /// The running script has run a write command (it can no longer be killed).
    wrote: AtomicBool,
    /// SCRIPT KILL asked the running script to stop.
    kill: AtomicBool,
}

impl Scripts {
    /// The script with id `sha` (any case).
    pub fn get(&self, sha: &[u8]) -> Option<Arc<Script>> {
        let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
        self.lock().get(&sha).cloned()
    }

    /// Keeps `script` (EVAL and SCRIPT LOAD do), returning the kept one.
    pub fn add(&self, script: Script) -> Arc<Script> {
        let mut scripts = self.lock();
        let kept = scripts
            .entry(script.sha.clone())
            .or_insert_with(|| Arc::new(script));
        kept.clone()
    }

    /// SCRIPT FLUSH.
    pub fn flush(&self) {
        self.lock().clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// A script is running and has been for longer than [`BUSY_AFTER`].
    pub fn busy(&self) -> bool {
        self.flags.busy.load(Ordering::SeqCst)
    }

    /// A script is running (scripts run one at a time, holding the database's writer: a
    /// session inside EXEC while one runs is that script's own, as XREAD BLOCK checks).
    pub fn running(&self) -> bool {
        self.flags.running.load(Ordering::SeqCst)
    }

    /// SCRIPT KILL: `Err` with Redis's reply when there is nothing it may stop.
    pub fn kill(&self) -> Result<(), String> {
        if !self.flags.running.load(Ordering::SeqCst) {
            return Err("NOTBUSY No scripts in execution right now.".into());
        }
        if self.flags.wrote.load(Ordering::SeqCst) {
            return Err(
                "UNKILLABLE Sorry the script already executed write commands against the \
                 dataset. You can either wait the script termination or kill the server in a \
                 hard way using the SHUTDOWN NOSAVE command."
                    .into(),
            );
        }
        self.flags.kill.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Stops the running script even if it wrote (the server is shutting down, as
    /// SHUTDOWN NOSAVE stops a script SCRIPT KILL cannot).
    pub fn stop(&self) {
        if self.flags.running.load(Ordering::SeqCst) {
            self.flags.kill.store(true, Ordering::SeqCst);
        }
    }

    /// Records that the running script wrote.
    pub fn note_write(&self) {
        self.flags.wrote.store(true, Ordering::SeqCst);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Script>>> {
        self.by_sha.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start(&self) -> RunningGuard<'_> {
        self.flags.kill.store(false, Ordering::SeqCst);
        self.flags.wrote.store(false, Ordering::SeqCst);
        self.flags.running.store(true, Ordering::SeqCst);
        RunningGuard(self)
    }
}

/// Clears the running state when a script ends, however it ends.
struct RunningGuard<'a>(&'a Scripts);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.0.flags.running.store(false, Ordering::SeqCst);
        self.0.flags.busy.store(false, Ordering::SeqCst);
        self.0.flags.kill.store(false, Ordering::SeqCst);
    }
}

/// What a script's `redis.call` runs: a command's arguments, and the protocol the script
/// asked for with `redis.setresp`; the reply (an error reply for a refused command).
pub type CallFn<'a> = dyn FnMut(&[Vec<u8>], Protocol) -> Frame + 'a;

/// Runs `script` with `keys` and `argv`, each command it calls going through `call`.
/// The result is the reply; a script error is an error reply, as Redis words it.
pub fn run(
    scripts: &Scripts,
    script: &Script,
    keys: &[Vec<u8>],
    argv: &[Vec<u8>],
    call: &mut CallFn<'_>,
) -> Frame {
    running(scripts, |vm| vm.run(scripts, script, keys, argv, call))
}

/// Runs `f` on this thread's Lua state as the running script (SCRIPT KILL and BUSY see
/// it); a failure of Lua itself becomes an error reply.
fn running(scripts: &Scripts, f: impl FnOnce(&mut Vm) -> mlua::Result<Frame>) -> Frame {
    let _running = scripts.start();
    with_vm(scripts, f)
        .unwrap_or_else(|e| Frame::Error(format!("ERR {}", convert::root_message(&e))))
}

/// Reads `body`'s flags and compiles it on this thread (as SCRIPT LOAD and EVAL do), then
/// keeps it; the error is the reply (a bad `#!lua` line, a compile error).
pub fn load(scripts: &Scripts, body: Vec<u8>) -> Result<Arc<Script>, Frame> {
    let script = Script::new(body).map_err(Frame::Error)?;
    if let Some(known) = scripts.get(script.sha.as_bytes()) {
        return Ok(known);
    }
    match with_vm(scripts, |vm| vm.compile(&script)) {
        Ok(Ok(_)) => Ok(scripts.add(script)),
        Ok(Err(reply)) => Err(reply),
        Err(e) => Err(Frame::Error(format!("ERR {}", convert::root_message(&e)))),
    }
}

/// FUNCTION LOAD: runs `code` on this thread to get its functions, then keeps the library
/// (replacing one of its name only if `replace`); its name, or Redis's error.
pub fn load_library(scripts: &Scripts, code: Vec<u8>, replace: bool) -> Result<String, String> {
    let library = compile_library(scripts, code)?;
    let name = library.name.clone();
    scripts.libraries.add(library, replace)?;
    Ok(name)
}

/// Runs library `code` on this thread to get its name and functions, without keeping it;
/// Redis's error if the code is not a library.
pub fn compile_library(scripts: &Scripts, code: Vec<u8>) -> Result<functions::Library, String> {
    let name = functions::library_name(&code)?;
    let registered = with_vm(scripts, |vm| vm.run_library(&code))
        .map_err(|e| format!("ERR {}", convert::root_message(&e)))??;
    Ok(functions::Library {
        name,
        functions: registered.into_iter().map(|(info, _)| info).collect(),
        code,
    })
}

/// FCALL: runs function `name` (which FCALL has found) with `keys` and `args`, each command
/// it calls going through `call`.
pub fn call_function(
    scripts: &Scripts,
    name: &str,
    keys: &[Vec<u8>],
    args: &[Vec<u8>],
    call: &mut CallFn<'_>,
) -> Frame {
    running(scripts, |vm| {
        vm.call_function(scripts, name, keys, args, call)
    })
}

thread_local! {
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's Lua state, made anew after a SCRIPT FLUSH.
fn with_vm<R>(scripts: &Scripts, f: impl FnOnce(&mut Vm) -> mlua::Result<R>) -> mlua::Result<R> {
    let generation = scripts.generation.load(Ordering::SeqCst);
    VM.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|vm| vm.generation != generation) {
            *slot = None;
            *slot = Some(Vm::new(generation, scripts.rand.clone())?);
        }
        match slot.as_mut() {
            Some(vm) => f(vm),
            None => Err(mlua::Error::RuntimeError("no Lua state".into())),
        }
    })
}

/// One thread's Lua state.
struct Vm {
    lua: Lua,
    generation: u64,
    /// The real globals table, behind the read-only one scripts see.
    globals: RegistryKey,
    /// The read-only globals table, every script's environment.
    protected: RegistryKey,
    /// `run(f)`: runs `f` under Redis's error handler.
    runner: RegistryKey,
    /// The real `redis` table, where each run puts its `call`, `pcall` and `setresp`.
    redis: RegistryKey,
    /// The sandbox's `call_function`, `library_env`, `load_library` and `strict`.
    call_function: RegistryKey,
    strict: RegistryKey,
    library_env: RegistryKey,
    load_library: RegistryKey,
    /// The functions of every library, loaded in this state.
    loaded: functions::Loaded,
    /// Compiled scripts by SHA-1.
    compiled: HashMap<String, RegistryKey>,
    /// Per run: when it started, and the state SCRIPT KILL reaches it through.
    run_state: Arc<RunState>,
}

/// What the instruction hook of a running script reads: when it started, and the flags
/// SCRIPT KILL reaches it through.
#[derive(Default)]
struct RunState {
    current: Mutex<Option<(Instant, Arc<RunFlags>)>>,
}

impl RunState {
    fn set(&self, current: Option<(Instant, Arc<RunFlags>)>) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = current;
    }

    fn get(&self) -> Option<(Instant, Arc<RunFlags>)> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Vm {
    fn new(generation: u64, rand: convert::SharedRand) -> mlua::Result<Vm> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH;
        let lua = Lua::new_with(libs, LuaOptions::new())?;
        let globals = lua.globals();
        let redis = convert::install_redis_api(&lua, &globals, rand)?;
        // They raise their errors as C libraries do, located and naming the function.
        register_libraries(&lua)?;
        let setup: Table = lua
            .load(include_str!("sandbox.lua"))
            .set_name("=docdb")
            .call(())?;
        let protected: Table = setup.get("globals")?;
        let runner: Function = setup.get("run")?;
        let registry = |name: &str| -> mlua::Result<RegistryKey> {
            lua.create_registry_value(setup.get::<Function>(name)?)
        };
        let (call_function, library_env, load_library, strict) = (
            registry("call_function")?,
            registry("library_env")?,
            registry("load_library")?,
            registry("strict")?,
        );
        let vm = Vm {
            globals: lua.create_registry_value(globals)?,
            protected: lua.create_registry_value(protected)?,
            runner: lua.create_registry_value(runner)?,
            redis: lua.create_registry_value(redis)?,
            call_function,
            strict,
            library_env,
            load_library,
            loaded: functions::Loaded::default(),
            lua,
            generation,
            compiled: HashMap::new(),
            run_state: Arc::new(RunState::default()),
        };
        vm.install_hook();
        Ok(vm)
    }

    /// Checks the clock and SCRIPT KILL every [`CHECK_EVERY`] instructions.
    fn install_hook(&self) {
        let state = self.run_state.clone();
        let triggers = HookTriggers::new().every_nth_instruction(CHECK_EVERY);
        self.lua.set_hook(triggers, move |_, _| {
            let Some((started, scripts)) = state.get() else {
                return Ok(VmState::Continue);
            };
            if started.elapsed() >= BUSY_AFTER && !scripts.busy.swap(true, Ordering::SeqCst) {
                // From now on other connections are answered BUSY; free this thread's
                // share of the runtime so that they are answered at all.
                release_runtime_thread();
            }
            if scripts.kill.load(Ordering::SeqCst) {
                return Err(mlua::Error::RuntimeError(
                    convert::KILLED_MESSAGE.to_string(),
                ));
            }
            Ok(VmState::Continue)
        });
    }

    fn run(
        &mut self,
        scripts: &Scripts,
        script: &Script,
        keys: &[Vec<u8>],
        argv: &[Vec<u8>],
        call: &mut CallFn<'_>,
    ) -> mlua::Result<Frame> {
        let function = match self.compile(script)? {
            Ok(function) => function,
            Err(reply) => return Ok(reply),
        };
        let globals: Table = self.lua.registry_value(&self.globals)?;
        globals.raw_set("KEYS", self.strings(keys)?)?;
        globals.raw_set("ARGV", self.strings(argv)?)?;
        let runner: Function = self.lua.registry_value(&self.runner)?;
        self.invoke(scripts, &script.sha, call, || runner.call(function))
    }

    /// Runs a script or function (`invoke` calls it under the error handler) with the
    /// instruction hook watching it; its reply, its errors located by `name` (a script's
    /// SHA-1, a function's name).
    fn invoke(
        &self,
        scripts: &Scripts,
        name: &str,
        call: &mut CallFn<'_>,
        invoke: impl FnOnce() -> mlua::Result<(bool, Value)>,
    ) -> mlua::Result<Frame> {
        self.run_state
            .set(Some((Instant::now(), scripts.flags.clone())));
        let redis: Table = self.lua.registry_value(&self.redis)?;
        let outcome = convert::run_with_api(&self.lua, &redis, call, invoke);
        self.run_state.set(None);
        let (ok, value, protocol) = outcome?;
        Ok(if ok {
            convert::reply_from_lua(&value, protocol, 0)
        } else {
            convert::error_reply(&value, Some(name))
        })
    }

    /// Runs a library's `code` with the load API: the functions it registered, or Redis's
    /// error.
    fn run_library(
        &self,
        code: &[u8],
    ) -> mlua::Result<Result<Vec<(functions::FunctionInfo, Function)>, String>> {
        let env: Table = self
            .lua
            .registry_value::<Function>(&self.library_env)?
            .call(())?;
        let compiled = self
            .lua
            .load(functions::code_body(code))
            .set_name(functions::CHUNK_NAME)
            .set_environment(env)
            .into_function();
        let function = match compiled {
            Ok(function) => function,
            Err(mlua::Error::SyntaxError { message, .. }) => {
                return Ok(Err(format!("ERR Error compiling function: {message}")));
            }
            Err(e) => return Err(e),
        };
        let redis: Table = self.lua.registry_value(&self.redis)?;
        let loader: Function = self.lua.registry_value(&self.load_library)?;
        let strict: Function = self.lua.registry_value(&self.strict)?;
        let registered = functions::Registered::default();
        let (ok, value) = self.lua.scope(|scope| {
            let api = functions::load_api(&self.lua, scope, &redis, &strict, &registered)?;
            loader.call::<(bool, Value)>((function, api))
        })?;
        if !ok {
            let Frame::Error(text) = convert::error_reply(&value, None) else {
                return Ok(Err("ERR Error registering functions".into()));
            };
            return Ok(Err(format!("ERR Error registering functions: {text}")));
        }
        let registered = registered.into_inner();
        if registered.is_empty() {
            return Ok(Err("ERR No functions registered".into()));
        }
        Ok(Ok(registered))
    }

    /// Loads every library into this state if any changed since it last did.
    fn sync_libraries(&mut self, libraries: &functions::Libraries) -> mlua::Result<()> {
        let generation = libraries.generation();
        if self.loaded.generation == Some(generation) {
            return Ok(());
        }
        self.loaded.by_name.clear();
        for library in libraries.all() {
            match self.run_library(&library.code)? {
                Ok(registered) => {
                    for (info, function) in registered {
                        let key = self.lua.create_registry_value(function)?;
                        self.loaded.by_name.insert(info.name, key);
                    }
                }
                Err(e) => {
                    tracing::error!(library = %library.name, error = %e, "library failed to load")
                }
            }
        }
        self.loaded.generation = Some(generation);
        Ok(())
    }

    /// FCALL: function `name` with `keys` and `args`.
    fn call_function(
        &mut self,
        scripts: &Scripts,
        name: &str,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        call: &mut CallFn<'_>,
    ) -> mlua::Result<Frame> {
        self.sync_libraries(&scripts.libraries)?;
        let Some(key) = self.loaded.by_name.get(name) else {
            return Ok(Frame::Error("ERR Function not found".into()));
        };
        let function: Function = self.lua.registry_value(key)?;
        let keys = self.strings(keys)?;
        let args = self.strings(args)?;
        let invoker: Function = self.lua.registry_value(&self.call_function)?;
        self.invoke(scripts, name, call, || invoker.call((function, keys, args)))
    }

    /// A Lua array of `items`.
    fn strings(&self, items: &[Vec<u8>]) -> mlua::Result<Table> {
        let strings = items
            .iter()
            .map(|item| self.lua.create_string(item))
            .collect::<mlua::Result<Vec<_>>>()?;
        self.lua.create_sequence_from(strings)
    }

    /// The compiled function of `script`, or the compile error's reply.
    fn compile(&mut self, script: &Script) -> mlua::Result<Result<Function, Frame>> {
        if let Some(key) = self.compiled.get(&script.sha) {
            return Ok(Ok(self.lua.registry_value(key)?));
        }
        let env: Table = self.lua.registry_value(&self.protected)?;
        let loaded = self
            .lua
            .load(script.code())
            .set_name(CHUNK_NAME)
            .set_environment(env)
            .into_function();
        let function = match loaded {
            Ok(function) => function,
            Err(mlua::Error::SyntaxError { message, .. }) => {
                return Ok(Err(Frame::Error(format!(
                    "ERR Error compiling script (new function): {message}"
                ))));
            }
            Err(e) => return Err(e),
        };
        let key = self.lua.create_registry_value(function.clone())?;
        self.compiled.insert(script.sha.clone(), key);
        Ok(Ok(function))
    }
}

/// Lets the tokio runtime go on serving other connections on another thread while this
/// one runs a long script (`block_in_place` hands this thread's worker to a new thread).
fn release_runtime_thread() {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi_thread =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if multi_thread {
        // The pause gives the new thread time to take the worker over, so that it is not
        // handed straight back when the closure returns.
        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(5)));
    }
}

/// Feeds `bytes` to the decoders a script may run on untrusted data (`cjson.decode`,
/// `cmsgpack.unpack`, `struct.unpack`), for fuzzing: each must return values or a Lua
/// error, and never panic.
pub fn decode_untrusted(bytes: &[u8]) -> mlua::Result<()> {
    thread_local! {
        static LUA: RefCell<Option<Lua>> = const { RefCell::new(None) };
    }
    LUA.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let lua = Lua::new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH,
                LuaOptions::new(),
            )?;
            register_libraries(&lua)?;
            *slot = Some(lua);
        }
        let Some(lua) = slot.as_ref() else {
            return Ok(());
        };
        let input = lua.create_string(bytes)?;
        let globals = lua.globals();
        for (library, decoder) in [("cjson", "decode"), ("cmsgpack", "unpack")] {
            let decode: Function = globals.get::<Table>(library)?.get(decoder)?;
            let _ = decode.call::<mlua::MultiValue>(input.clone());
        }
        // The first bytes as a format, the rest as data.
        let split = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let (format, data) = bytes.split_at(split);
        let unpack: Function = globals.get::<Table>("struct")?.get("unpack")?;
        let _ =
            unpack.call::<mlua::MultiValue>((lua.create_string(format)?, lua.create_string(data)?));
        Ok(())
    })
}

/// Installs Redis's libraries (`bit`, `cjson`, `cmsgpack`, `struct`) as globals of `lua`.
pub(crate) fn register_libraries(lua: &Lua) -> mlua::Result<()> {
    bit::register(lua)?;
    cjson::register(lua)?;
    cmsgpack::register(lua)?;
    structlib::register(lua)?;
    Ok(())
}
