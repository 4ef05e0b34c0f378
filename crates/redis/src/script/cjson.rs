//! Redis's `cjson` Lua library (not yet built: scripts do not see it).

use mlua::Lua;

/// Installs the library as a global of `lua`.
pub(crate) fn register(_lua: &Lua) -> mlua::Result<()> {
    Ok(())
}
