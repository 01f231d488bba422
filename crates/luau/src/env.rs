//! Script environments: every chunk (ModuleScript, Script) gets its own global table over
//! the read-only base globals, and every thread the host starts runs with the environment
//! of the function it runs, so nothing one generator writes is seen by another.
//!
//! Roblox gives each script its own environment; here that also holds for `getfenv(0)`
//! (the thread's globals), `getfenv(n)`/`setfenv(n)` at any level and `rawset` on any of
//! them. Host functions written in Luau keep the base globals as their environment, which
//! is read-only, and `setfenv` refuses to change it (it would let one script redirect what
//! a shared host function sees, e.g. the `pcall` wrapper every script calls).

use mlua::{Function, Lua, Table, Thread, Value};

const BASE_KEY: &str = "procmodel.base_globals";

/// `setfenv` that refuses to change the environment of host functions (those whose
/// environment is the base globals). Levels are shifted by one for the wrapper's own frame.
const SETFENV_LUAU: &str = r#"
local rawsetfenv, rawgetfenv, base, type, error = ...
return function(target, env)
    if type(target) == "number" and target > 0 then
        if rawgetfenv(target + 1) == base then
            error("'setfenv' cannot change the environment of a built-in function", 2)
        end
        return rawsetfenv(target + 1, env)
    elseif type(target) == "function" and rawgetfenv(target) == base then
        error("'setfenv' cannot change the environment of a built-in function", 2)
    end
    return rawsetfenv(target, env)
end
"#;

/// Records the base globals and replaces `setfenv`; call before the sandbox seals them.
pub fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    lua.set_named_registry_value(BASE_KEY, globals)?;
    let setfenv: Function = globals.get("setfenv")?;
    let getfenv: Function = globals.get("getfenv")?;
    let wrapped: Function = lua.load(SETFENV_LUAU).set_name("=[setfenv]").call((
        setfenv,
        getfenv,
        globals.clone(),
        globals.get::<Function>("type")?,
        globals.get::<Function>("error")?,
    ))?;
    globals.set("setfenv", wrapped)?;
    Ok(())
}

/// After the sandbox: the main thread's own global table (which mlua's sandbox puts over
/// the base globals) is sealed too, so no thread can reach a shared writable table.
pub fn seal(lua: &Lua) {
    lua.globals().set_readonly(true);
}

/// The base globals: read-only once the host is built.
pub fn base(lua: &Lua) -> mlua::Result<Table> {
    lua.named_registry_value(BASE_KEY)
}

/// A new environment for one chunk: its own table of globals, reading through to the base
/// globals, with the `_G` and `shared` tables given (a script's tree shares one pair) or
/// new ones of its own.
pub fn chunk_env(lua: &Lua, shared: Option<(Table, Table)>) -> mlua::Result<Table> {
    let env = lua.create_table()?;
    let (g, shared) = match shared {
        Some(pair) => pair,
        None => (lua.create_table()?, lua.create_table()?),
    };
    env.raw_set("_G", g)?;
    env.raw_set("shared", shared)?;
    let meta = lua.create_table()?;
    meta.raw_set("__index", base(lua)?)?;
    meta.set_readonly(true);
    env.set_metatable(Some(meta))?;
    Ok(env)
}

/// A new thread running `f`, whose globals (`getfenv(0)`) are `f`'s environment (the
/// base globals for functions that have none of their own).
pub fn new_thread(lua: &Lua, f: Function) -> mlua::Result<Thread> {
    thread_with(lua, f, None)
}

/// Compiles `source` as a chunk whose environment is `env`. Luau resolves a chunk's global
/// imports against the globals of the thread that loads it, not against the environment it
/// is given, so the chunk is loaded on a thread of its own whose globals are `env`: its
/// imports then see its own `_G`, `script` and `require`, and nothing another script set in
/// its own thread's globals.
pub fn load_chunk(lua: &Lua, source: String, name: String, env: Table) -> mlua::Result<Function> {
    let chunk_env = env.clone();
    let loader = lua.create_function(move |lua, ()| {
        lua.load(source.as_str())
            .set_name(name.as_str())
            .set_environment(chunk_env.clone())
            .into_function()
    })?;
    let th = thread_with(lua, loader, Some(env))?;
    th.resume::<Function>(())
}

fn thread_with(lua: &Lua, f: Function, globals: Option<Table>) -> mlua::Result<Thread> {
    let th = lua.create_thread(f.clone())?;
    let globals = match globals {
        Some(g) => Value::Table(g),
        None => Value::Nil,
    };
    let base = base(lua)?;
    // SAFETY: `th` was just made from `f` and has not run.
    unsafe { crate::ffi::set_thread_globals(lua, &th, f, base, globals)? };
    Ok(th)
}
