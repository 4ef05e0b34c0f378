-- The environment Redis 7.0 gives scripts, built once per Lua state (chunk "=docdb"; the
-- error handler skips this chunk's frames when it looks for the script's line).
-- Returns { globals = <read-only globals>, run = function(f) }.
local G = _G
local where = G.__docdb_where
local raw_pcall, raw_xpcall, raw_error = pcall, xpcall, error
local raw_type, raw_tostring, raw_select, raw_unpack = type, tostring, select, unpack
local raw_rawset, raw_setmetatable = rawset, setmetatable
local pairs, ipairs = pairs, ipairs
local raw_loadstring, raw_load, raw_setfenv = loadstring, load, setfenv
local errvalue = G.__docdb_errvalue
local protected = {}

local function pack(...)
  return { n = raw_select('#', ...), ... }
end

local function readonly()
  raw_error('Attempt to modify a readonly table', 2)
end

-- The error of reading a missing global, located at the script line whose read of a
-- table called the `__index` that calls this.
local function nonexistent(name)
  raw_error("Script attempted to access nonexistent global variable '"
    .. raw_tostring(name) .. "'", 3)
end

-- A read-only view of `real`: reads go through, writes fail.
local function guard(real)
  local proxy = {}
  raw_setmetatable(proxy, { __index = real, __newindex = readonly, __metatable = false })
  protected[proxy] = true
  return proxy
end

-- Redis's pcall: an error table with an `err` field comes back as that text.
G.pcall = function(...)
  local r = pack(raw_pcall(...))
  if not r[1] then
    local e = r[2]
    if raw_type(e) == 'userdata' then
      e = errvalue(e)
    end
    if raw_type(e) == 'table' then
      local err = e.err
      if raw_type(err) == 'string' or raw_type(err) == 'number' then
        e = err
      end
    end
    r[2] = e
  end
  return raw_unpack(r, 1, r.n)
end
G.rawset = function(t, k, v)
  if protected[t] then
    raw_error('Attempt to modify a readonly table', 0)
  end
  return raw_rawset(t, k, v)
end
G.setmetatable = function(t, m)
  if protected[t] then
    raw_error('Attempt to modify a readonly table', 0)
  end
  return raw_setmetatable(t, m)
end

-- Globals a script may read (Redis 7.0's allow lists).
local allowed = {
  'xpcall', 'tostring', 'setmetatable', 'next', 'assert', 'tonumber', 'rawequal',
  'collectgarbage', 'getmetatable', 'rawset', 'rawget', 'pcall', 'coroutine', 'type',
  'select', 'unpack', 'gcinfo', 'pairs', 'loadstring', 'ipairs', 'error', 'load', '_VERSION',
  'string', 'cjson', 'bit', 'cmsgpack', 'math', 'table', 'struct', 'redis',
}
-- Library tables are read-only, behind a proxy: a script can neither add nor replace a
-- library's function (and so change it for the scripts after it). Unlike Redis's, a proxy
-- shows no fields to `pairs`.
local libraries = {
  string = true, cjson = true, bit = true, cmsgpack = true, math = true, table = true,
  struct = true, redis = true, coroutine = true,
}
local kept = {}
for _, name in ipairs(allowed) do
  local value = G[name]
  if libraries[name] and raw_type(value) == 'table' then
    value = guard(value)
  end
  kept[name] = value
end
for name in pairs(G) do
  G[name] = nil
end
for name, value in pairs(kept) do
  G[name] = value
end

local globals = {}
raw_setmetatable(globals, {
  __index = function(_, name)
    local value = G[name]
    if value == nil then
      nonexistent(name)
    end
    return value
  end,
  __newindex = readonly,
  __metatable = false,
})
protected[globals] = true
G._G = globals

-- Chunks a script compiles see the same read-only globals as the script.
local function sandboxed(loader)
  return function(...)
    local f, err = loader(...)
    if f then
      raw_setfenv(f, globals)
    end
    return f, err
  end
end
G.loadstring = sandboxed(raw_loadstring)
G.load = sandboxed(raw_load)

-- Redis's error handler: a table {err=..., source=..., line=...} for every error, located
-- at the script's frame (past C functions and this chunk's wrappers).
local function handler(err)
  local level = 2
  local what, source, line = where(level)
  while what and (what == 'C' or source == '=docdb') do
    level = level + 1
    what, source, line = where(level)
  end
  if raw_type(err) == 'userdata' then
    err = errvalue(err)
  end
  if raw_type(err) ~= 'table' then
    err = { err = 'ERR ' .. raw_tostring(err) }
  end
  if what then
    err.source = source
    err.line = line
  end
  return err
end

local function run(f)
  return raw_xpcall(f, handler)
end

-- FCALL: a registered function called with its keys and arguments.
local function call_function(f, keys, args)
  return raw_xpcall(function()
    -- Not a tail call: errors inside `f` are located counting this frame.
    local result = f(keys, args)
    return result
  end, handler)
end

-- A function library's globals (Redis 7.0's functions engine): while its code loads, only
-- the load API (`redis.register_function`, `redis.log`); when its functions run, the
-- globals every script sees. Its functions are closures over this table, so they see the
-- swap.
local loading
local function library_env()
  local env = {}
  raw_setmetatable(env, {
    __index = function(_, name)
      local value = (loading or G)[name]
      if value == nil then
        nonexistent(name)
      end
      return value
    end,
    __newindex = readonly,
    __metatable = false,
  })
  protected[env] = true
  return env
end

-- Runs a library's compiled code `f` with `api` as its globals.
local function load_library(f, api)
  loading = api
  local ok, value = raw_xpcall(f, handler)
  loading = nil
  return ok, value
end

-- `t`, answering a read of a missing field as a missing global is answered.
local function strict(t)
  raw_setmetatable(t, {
    __index = function(_, name)
      nonexistent(name)
    end,
  })
  return t
end

return {
  strict = strict,
  globals = globals,
  run = run,
  call_function = call_function,
  library_env = library_env,
  load_library = load_library,
}
