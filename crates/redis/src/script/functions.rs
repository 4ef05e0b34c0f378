//! Redis 7.0 functions (FUNCTION LOAD, FCALL): libraries of named Lua functions, each
//! registered by its library's code with `redis.register_function`.
//!
//! The server keeps each library's code ([`Library`]); every thread's Lua state runs the
//! code of every library once to get its functions, again after any library changes.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mlua::{Function, Lua, Table, Value, Variadic};

use super::convert::{RaisedReply, located};
use crate::frame::Frame;

/// The chunk name of library code (errors then say `user_function:2:`).
pub const CHUNK_NAME: &str = "@user_function";

/// Flags `redis.register_function` accepts.
const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// One registered function.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionInfo {
    /// Its name (FCALL's first argument).
    pub name: String,
    /// `description=` of the table form, if given.
    pub description: Option<Vec<u8>>,
    /// Its flags, as given.
    pub flags: Vec<&'static str>,
}

impl FunctionInfo {
    /// `no-writes`: FCALL_RO may call it, and it may not write.
    pub fn no_writes(&self) -> bool {
        self.flags.contains(&"no-writes")
    }
}

/// A loaded library: its code and the functions that code registered.
#[derive(Debug, Clone)]
pub struct Library {
    /// From `#!lua name=<name>`.
    pub name: String,
    /// The whole code as loaded.
    pub code: Vec<u8>,
    /// In the order they were registered.
    pub functions: Vec<FunctionInfo>,
}

/// What FUNCTION RESTORE does with the libraries already loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestorePolicy {
    /// Keep them; a restored library of the same name is an error (the default).
    Append,
    /// Keep them, but those a restored library replaces.
    Replace,
    /// Drop them all first.
    Flush,
}

impl RestorePolicy {
    /// `APPEND`, `REPLACE` or `FLUSH`, in any case.
    pub fn parse(word: &[u8]) -> Option<Self> {
        [
            ("append", RestorePolicy::Append),
            ("replace", RestorePolicy::Replace),
            ("flush", RestorePolicy::Flush),
        ]
        .into_iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, policy)| policy)
    }
}

/// Every library, shared by all connections.
#[derive(Default)]
pub struct Libraries {
    by_name: Mutex<BTreeMap<String, Library>>,
    /// Bumped at every change: each thread's Lua state then reloads them.
    generation: AtomicU64,
}

impl Libraries {
    /// Every library, by name.
    pub fn all(&self) -> Vec<Library> {
        self.lock().values().cloned().collect()
    }

    /// The library holding function `name`, and the function.
    pub fn function(&self, name: &str) -> Option<(String, FunctionInfo)> {
        self.lock().values().find_map(|library| {
            library
                .functions
                .iter()
                .find(|f| f.name == name)
                .map(|f| (library.name.clone(), f.clone()))
        })
    }

    /// Adds `library` (replacing one of its name only if `replace`); the error is Redis's.
    pub fn add(&self, library: Library, replace: bool) -> Result<(), String> {
        let mut libraries = self.lock();
        if !replace && libraries.contains_key(&library.name) {
            return Err(format!("ERR Library '{}' already exists", library.name));
        }
        for other in libraries.values().filter(|l| l.name != library.name) {
            if let Some(f) = library
                .functions
                .iter()
                .find(|f| other.functions.iter().any(|o| o.name == f.name))
            {
                return Err(format!("ERR Function {} already exists", f.name));
            }
        }
        libraries.insert(library.name.clone(), library);
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// FUNCTION RESTORE: adds `restored` (libraries of distinct names) as `policy` says,
    /// all or none; Redis's error if a name collides. Returns the libraries replaced or
    /// dropped, by name.
    pub fn restore(
        &self,
        restored: Vec<Library>,
        policy: RestorePolicy,
    ) -> Result<Vec<String>, String> {
        let mut libraries = self.lock();
        let mut kept = match policy {
            RestorePolicy::Flush => BTreeMap::new(),
            RestorePolicy::Append | RestorePolicy::Replace => libraries.clone(),
        };
        for library in &restored {
            if kept.remove(&library.name).is_some() && policy == RestorePolicy::Append {
                return Err(format!("ERR Library {} already exists", library.name));
            }
        }
        for function in restored.iter().flat_map(|l| &l.functions) {
            if kept
                .values()
                .any(|l| l.functions.iter().any(|f| f.name == function.name))
            {
                return Err(format!("ERR Function {} already exists", function.name));
            }
        }
        let gone: Vec<String> = libraries
            .keys()
            .filter(|name| !kept.contains_key(*name))
            .cloned()
            .collect();
        kept.extend(restored.into_iter().map(|l| (l.name.clone(), l)));
        *libraries = kept;
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(gone)
    }

    /// FUNCTION DELETE: whether there was such a library.
    pub fn delete(&self, name: &str) -> bool {
        let removed = self.lock().remove(name).is_some();
        self.generation.fetch_add(1, Ordering::SeqCst);
        removed
    }

    /// FUNCTION FLUSH.
    pub fn flush(&self) {
        self.lock().clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The current generation (see [`Libraries::generation`]'s field).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Library>> {
        self.by_name.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The library name of `code`'s `#!lua name=<name>` line, checked as Redis checks it.
pub fn library_name(code: &[u8]) -> Result<String, String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let end = code.iter().position(|&b| b == b'\n').unwrap_or(code.len());
    let line = String::from_utf8_lossy(code.get(2..end).unwrap_or_default()).into_owned();
    let mut parts = line.split(' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or("");
    if engine != "lua" {
        return Err(format!("ERR Engine '{engine}' not found"));
    }
    let mut name = None;
    for part in parts {
        match part.strip_prefix("name=") {
            Some(value) => name = Some(value.to_string()),
            None => return Err(format!("ERR Invalid metadata value given: {part}")),
        }
    }
    let name = name.ok_or("ERR Library name was not given")?;
    if !valid_name(&name) {
        return Err(format!("ERR {BAD_NAME}"));
    }
    Ok(name)
}

/// What Redis 7.0 says of a bad library name, and (sic) of a bad function name.
const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and \
                        must be at least one character long";

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The code Lua compiles: without the `#!` line, keeping its newline for line numbers.
pub fn code_body(code: &[u8]) -> &[u8] {
    let end = code.iter().position(|&b| b == b'\n').unwrap_or(code.len());
    code.get(end..).unwrap_or_default()
}

/// The functions one run of a library's code registered.
pub type Registered = RefCell<Vec<(FunctionInfo, Function)>>;

/// The load API's `redis` table: `register_function` (adding to `registered`), `log` and
/// the constants, from `redis` (the scripts' table).
pub fn load_api<'s>(
    lua: &Lua,
    scope: &'s mlua::Scope<'s, '_>,
    redis: &Table,
    strict: &Function,
    registered: &'s Registered,
) -> mlua::Result<Table> {
    let api = lua.create_table()?;
    let load_redis = lua.create_table()?;
    for (key, value) in redis.pairs::<String, Value>().filter_map(Result::ok) {
        if key.starts_with("LOG_") || key.starts_with("REDIS_VERSION") || key == "log" {
            load_redis.raw_set(key, value)?;
        }
    }
    let register = scope.create_function(move |_, args: Variadic<Value>| {
        let registered_now = register_args(&args)?;
        let mut registered = registered.borrow_mut();
        if registered
            .iter()
            .any(|(info, _)| info.name == registered_now.0.name)
        {
            return Err(raised("Function already exists in the library"));
        }
        registered.push(registered_now);
        Ok(())
    })?;
    load_redis.raw_set("register_function", located(lua, register)?)?;
    api.raw_set("redis", strict.call::<Table>(load_redis)?)?;
    Ok(api)
}

fn raised(text: &str) -> mlua::Error {
    mlua::Error::external(RaisedReply(format!("ERR {text}")))
}

/// `redis.register_function(name, callback)` or `redis.register_function{function_name=,
/// callback=, flags=, description=}`.
fn register_args(args: &[Value]) -> mlua::Result<(FunctionInfo, Function)> {
    let (name, callback, flags, description) = match args {
        [Value::Table(t)] => table_form(t)?,
        [name, callback] => {
            let Value::String(name) = name else {
                return Err(raised(
                    "first argument to redis.register_function must be a string",
                ));
            };
            let Value::Function(callback) = callback else {
                return Err(raised(
                    "second argument to redis.register_function must be a function",
                ));
            };
            (name.to_string_lossy(), callback.clone(), Vec::new(), None)
        }
        _ => {
            return Err(raised(
                "wrong number of arguments to redis.register_function",
            ));
        }
    };
    if !valid_name(&name) {
        return Err(raised(BAD_NAME));
    }
    let info = FunctionInfo {
        name,
        description,
        flags,
    };
    Ok((info, callback))
}

type TableForm = (String, Function, Vec<&'static str>, Option<Vec<u8>>);

fn table_form(table: &Table) -> mlua::Result<TableForm> {
    let (mut name, mut callback, mut flags, mut description) = (None, None, Vec::new(), None);
    for (key, value) in table.pairs::<Value, Value>().filter_map(Result::ok) {
        let key = match &key {
            Value::String(s) => s.to_string_lossy(),
            _ => String::new(),
        };
        match (key.as_str(), value) {
            ("function_name", Value::String(s)) => name = Some(s.to_string_lossy()),
            ("function_name", _) => {
                return Err(raised(
                    "function_name argument given to redis.register_function must be a string",
                ));
            }
            ("callback", Value::Function(f)) => callback = Some(f),
            ("callback", _) => {
                return Err(raised(
                    "callback argument given to redis.register_function must be a function",
                ));
            }
            ("description", Value::String(s)) => description = Some(s.as_bytes().to_vec()),
            ("description", _) => {
                return Err(raised(
                    "description argument given to redis.register_function must be a string",
                ));
            }
            ("flags", Value::Table(t)) => flags = flag_list(&t)?,
            ("flags", _) => {
                return Err(raised(
                    "flags argument to redis.register_function must be a table representing function flags",
                ));
            }
            _ => return Err(raised("unknown argument given to redis.register_function")),
        }
    }
    let name =
        name.ok_or_else(|| raised("redis.register_function must get a function name argument"))?;
    let callback =
        callback.ok_or_else(|| raised("redis.register_function must get a callback argument"))?;
    Ok((name, callback, flags, description))
}

/// The flags of `table`, in Redis's order (FUNCTION LIST shows them so).
fn flag_list(table: &Table) -> mlua::Result<Vec<&'static str>> {
    let mut given = Vec::new();
    for value in table.sequence_values::<Value>() {
        let known = match value? {
            Value::String(s) => FLAGS.iter().position(|f| s.as_bytes() == f.as_bytes()),
            _ => None,
        };
        given.push(known.ok_or_else(|| raised("unknown flag given"))?);
    }
    given.sort_unstable();
    given.dedup();
    Ok(given
        .into_iter()
        .filter_map(|i| FLAGS.get(i).copied())
        .collect())
}

/// FUNCTION LIST's entry for `library`.
pub fn list_entry(library: &Library, with_code: bool) -> Frame {
    let bulk = |s: &str| Frame::Bulk(s.as_bytes().to_vec());
    let functions = library
        .functions
        .iter()
        .map(|f| {
            Frame::Map(vec![
                (bulk("name"), bulk(&f.name)),
                (
                    bulk("description"),
                    f.description.clone().map_or(Frame::Null, Frame::Bulk),
                ),
                (
                    bulk("flags"),
                    Frame::Set(
                        f.flags
                            .iter()
                            .map(|flag| Frame::Simple(flag.to_string()))
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let mut entry = vec![
        (bulk("library_name"), bulk(&library.name)),
        (bulk("engine"), bulk("LUA")),
        (bulk("functions"), Frame::Array(functions)),
    ];
    if with_code {
        entry.push((bulk("library_code"), Frame::Bulk(library.code.clone())));
    }
    Frame::Map(entry)
}

/// The functions a Lua state loaded, by name, and the library generation they are of.
#[derive(Default)]
pub struct Loaded {
    /// The [`Libraries`] generation loaded, if any.
    pub generation: Option<u64>,
    /// Each function, in the state's registry.
    pub by_name: HashMap<String, mlua::RegistryKey>,
}
