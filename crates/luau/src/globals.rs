//! Roblox globals: `Instance`, `game`/`workspace`, `require` (ModuleScripts, relative files,
//! `@procmodel/*` built-ins), `print`/`warn` tagged with the script name, and a virtual `os`
//! clock (no wall-clock access ever).
//!
//! String requires: for a script loaded from a file, relative to the file and confined to
//! the generator's folder, the extension appended (`./X.spec` is `X.spec.luau`), with
//! `.luaurc` aliases and `@self/`; for a script of a place or project, `./X`, `../X` and
//! `@self/X` over the instance tree, as Roblox resolves them. A cycle error names its chain;
//! a module whose code fails can be required again.

use crate::context::{Ctx, Instance, LogLevel, NewClass, ctx};
use crate::instance::opt_instance;
use crate::sched::now;
use mlua::{Function, Lua, MultiValue, Table, Value};
use procmodel_dom::is_a;
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Ref, Variant};
use std::path::{Component, Path, PathBuf};

const REQUIRE_LUAU: &str = r#"
local resolve, load, results, loading, rawpcall, mark = ...
local chain = {}
local function run(what)
    return load(what)()
end
return function(base)
    return function(target)
        local key, what, label = resolve(base, target)
        local cached = results[key]
        if cached ~= nil then
            return cached
        end
        if loading[key] then
            local names = {}
            local from = 1
            for i, k in chain do
                if k[1] == key then from = i break end
            end
            for i = from, #chain do table.insert(names, chain[i][2]) end
            table.insert(names, label)
            error("Requested module was required recursively: " .. table.concat(names, " -> "), 2)
        end
        loading[key] = true
        table.insert(chain, { key, label })
        mark(what, true)
        -- A module whose code fails is not "loading" any more: a later require runs it again.
        local packed = table.pack(rawpcall(run, what))
        mark(what, false)
        table.remove(chain)
        loading[key] = nil
        if not packed[1] then
            error(packed[2], 0)
        end
        if packed.n ~= 2 then
            error("Module code did not return exactly one value: " .. label, 2)
        end
        results[key] = packed[2]
        return packed[2]
    end
end
"#;

/// pcall/xpcall that hand Luau code string errors (Roblox semantics) instead of the host's
/// error objects, so `err:find(...)` and `"x" .. err` work as in Studio; and the
/// debug.traceback that leaves these wrappers' frames out.
const PCALL_LUAU: &str = r##"
local rawpcall, rawxpcall, native, rawtraceback, rawresume, rawclose = ...
local gsub = string.gsub
local function fixone(e)
    if type(e) == "userdata" then
        return native(e)
    end
    return e
end
local function fix(ok, ...)
    if ok then
        return ok, ...
    end
    return false, fixone((...))
end
local function pcall(f, ...)
    return fix(rawpcall(f, ...))
end
local function xpcall(f, handler, ...)
    return rawxpcall(f, function(e)
        return handler(fixone(e))
    end, ...)
end
-- A coroutine that an engine call's error ended gives its message as a string, as every
-- error reaches a script in Roblox (not the host's error object, which `..` refuses).
local function resume(co, ...)
    return fix(rawresume(co, ...))
end
local function close(co)
    return fix(rawclose(co))
end
-- debug.traceback without the frames of these wrappers (Luau leaves out C functions, as
-- Roblox's pcall and xpcall are; a `xpcall(f, debug.traceback)` printed "[pcall]:20" first).
-- The wrapper's own frame is skipped by asking one level further up.
local function traceback(...)
    local args = table.pack(...)
    local first = if type(args[1]) == "thread" then 2 else 1
    local msg, level = args[first], args[first + 1]
    -- Luau's own argument errors, raised here so they name the caller's line.
    if msg ~= nil and type(msg) ~= "string" and type(msg) ~= "number" then
        error(`invalid argument #{first} to 'traceback' (string expected, got {typeof(msg)})`, 2)
    end
    if level ~= nil and tonumber(level) == nil then
        error(`invalid argument #{first + 1} to 'traceback' (number expected, got {typeof(level)})`, 2)
    end
    local out
    if first == 2 then
        out = rawtraceback(args[1], msg, level)
    else
        out = rawtraceback(msg, (tonumber(level) or 1) + 1)
    end
    return (gsub(out, "%[pcall%]:%d+[^\n]*\n", ""))
end
return pcall, xpcall, traceback, resume, close
"##;

/// The security identity `printidentity` reports: a game script's (Roblox's level 2).
const GAME_SCRIPT_IDENTITY: u32 = 2;

fn error_to_string(lua: &Lua, v: Value) -> mlua::Result<Value> {
    Ok(match v {
        Value::Error(e) => Value::String(lua.create_string(crate::error::script(&e).to_string())?),
        other => other,
    })
}

pub fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    // `math.random` and `math.randomseed` draw from the running run's own generator (the
    // same PCG32 stream as Luau's, `crate::sched::Sched::rng`): Luau keeps one per VM,
    // seeded from an address, so a generator's numbers depended on the process, on the runs
    // before it on that VM and on those interleaved with it.
    let math: Table = globals.get("math")?;
    let readonly = math.is_readonly();
    math.set_readonly(false);
    math.raw_set("random", lua.create_function(math_random)?)?;
    math.raw_set("randomseed", lua.create_function(math_randomseed)?)?;
    math.set_readonly(readonly);
    // `BrickColor.random()` draws from the same stream (one `math.random(n)` draw).
    let brick: Table = globals.get("BrickColor")?;
    let readonly = brick.is_readonly();
    brick.set_readonly(false);
    let random = lua.create_function(brick_color_random)?;
    brick.raw_set("random", random.clone())?;
    // `BrickColor.Random()`: the spelling of old scripts and free models.
    brick.raw_set("Random", random)?;
    brick.set_readonly(readonly);
    // `DateTime.now()` reads the run's virtual clock, as `os.time` does.
    let datetime: Table = globals.get("DateTime")?;
    let readonly = datetime.is_readonly();
    datetime.set_readonly(false);
    datetime.raw_set(
        "now",
        lua.create_function(|lua, ()| {
            Ok(procmodel_luau_types::DateTime(
                (now(lua) * 1000.0).floor() as i64
            ))
        })?,
    )?;
    datetime.set_readonly(readonly);
    let rawpcall: Function = globals.get("pcall")?;
    let debug: Table = globals.get("debug")?;
    let coroutine: Table = globals.get("coroutine")?;
    let (pcall, xpcall, traceback, resume, close): (
        Function,
        Function,
        Function,
        Function,
        Function,
    ) = lua.load(PCALL_LUAU).set_name("=[pcall]").call((
        rawpcall.clone(),
        globals.get::<Function>("xpcall")?,
        lua.create_function(error_to_string)?,
        debug.get::<Function>("traceback")?,
        coroutine.get::<Function>("resume")?,
        coroutine.get::<Function>("close")?,
    ))?;
    debug.set("traceback", traceback)?;
    let readonly = coroutine.is_readonly();
    coroutine.set_readonly(false);
    coroutine.raw_set("resume", resume)?;
    coroutine.raw_set("close", close)?;
    coroutine.set_readonly(readonly);
    // `ypcall`: the old name of a pcall that may yield (every pcall may, in Luau).
    globals.set("ypcall", pcall.clone())?;
    globals.set("pcall", pcall)?;
    globals.set("xpcall", xpcall)?;
    // Instance
    let instance = lua.create_table()?;
    let slow = lua.create_function(instance_new)?;
    instance.set(
        "new",
        procmodel_luau_types::raw::closure_with(
            lua,
            crate::ffi::raw_instance_new::<Ctx>,
            slow,
            crate::context::cell_value(lua)?,
        )?,
    )?;
    instance.set("fromExisting", lua.create_function(instance_from_existing)?)?;
    globals.set("Instance", instance)?;
    crate::classes::register_query_params(lua, globals)?;

    // game / workspace
    let (root, workspace) = {
        let mut c = ctx(lua)?;
        let root = c.dom.root_ref();
        let ws = c
            .dom
            .root()
            .children()
            .iter()
            .copied()
            .find(|&r| c.dom.get_by_ref(r).is_some_and(|i| i.class == "Workspace"));
        let root_ud = c.push(root)?;
        let ws_ud = match ws {
            Some(w) => c.push(w)?,
            None => Value::Nil,
        };
        (root_ud, ws_ud)
    };
    // `_G` and `shared` are Roblox's writable tables: each script gets its own pair
    // (crate::env::chunk_env), so they are removed from the shared base globals.
    globals.raw_remove("_G")?;
    globals.raw_remove("shared")?;
    globals.set("Game", root.clone())?;
    globals.set("game", root)?;
    globals.set("workspace", workspace.clone())?;
    globals.set("Workspace", workspace)?;

    // `print`, `warn`, `require` and `script` are per chunk (see `chunk_env`). They must not be
    // globals: Luau resolves imports against the thread's globals at load time, so a global of
    // the same name would shadow the chunk's own.
    globals.raw_remove("print")?;
    globals.raw_remove("require")?;
    globals.set("loadstring", loadstring(lua)?)?;

    // Virtual clock; `os.clock` and `tick` also move while code runs (`sched::cpu_clock`).
    let os = procmodel_luau_types::datetime::os_library(lua, now)?;
    os.raw_set(
        "clock",
        lua.create_function(|lua, ()| Ok(crate::sched::cpu_clock(lua)))?,
    )?;
    globals.set("os", os)?;
    globals.set(
        "tick",
        lua.create_function(|lua, ()| Ok(crate::sched::cpu_clock(lua)))?,
    )?;
    globals.set("time", lua.create_function(|lua, ()| Ok(now(lua)))?)?;
    globals.set("elapsedTime", lua.create_function(|lua, ()| Ok(now(lua)))?)?;
    // `version()`: the Roblox version whose API this engine implements (the bundled reflection
    // database's), so the string is the same on every run and machine.
    globals.set(
        "version",
        lua.create_function(|_, ()| {
            let [generation, version, patch, commit] = procmodel_dom::db().version;
            Ok(format!("{generation}.{version}.{patch}.{commit}"))
        })?,
    )?;
    // The deprecated capitalised spellings Roblox still has.
    let elapsed: Value = globals.get("elapsedTime")?;
    globals.set("ElapsedTime", elapsed)?;
    let version: Value = globals.get("version")?;
    globals.set("Version", version)?;
    // Roblox globals with nothing behind them here (client and Studio settings, plugin
    // managers, datatypes of engine systems procmodel does not run): using one says so,
    // instead of "attempt to call a nil value".
    for (name, what) in MISSING_GLOBALS {
        let message = format!("{name} is {what}, which procmodel does not have");
        let raise = lua.create_function(move |_, _: MultiValue| {
            Err::<(), _>(mlua::Error::runtime(message.clone()))
        })?;
        let stand_in = lua.create_table()?;
        let meta = lua.create_table()?;
        meta.raw_set("__index", raise.clone())?;
        meta.raw_set("__call", raise)?;
        // Iterating it goes over nothing (a generic `for` would otherwise call `__call`).
        let next: Value = lua.globals().get("next")?;
        let empty = lua.create_table()?;
        meta.raw_set(
            "__iter",
            lua.create_function(move |_, _: Value| Ok((next.clone(), empty.clone())))?,
        )?;
        meta.raw_set("__metatable", "The metatable is locked")?;
        stand_in.set_metatable(Some(meta))?;
        globals.set(*name, stand_in)?;
    }
    // `printidentity(prefix)`: scripts and generators run at a game script's security level.
    globals.set(
        "printidentity",
        lua.create_function(|lua, prefix: Option<String>| {
            let print: Function = lua.globals().get("print")?;
            let prefix = prefix.unwrap_or_else(|| "Current identity is".to_owned());
            print.call::<()>(format!("{prefix} {GAME_SCRIPT_IDENTITY}"))
        })?,
    )?;
    // `stats()`: the Stats service, as `game:GetService("Stats")` gives it.
    globals.set(
        "stats",
        lua.load("return game:GetService('Stats')")
            .set_name("=[stats]")
            .into_function()?,
    )?;

    // require
    let results = lua.create_table()?;
    lua.set_named_registry_value("procmodel.require_results", &results)?;
    let loading = lua.create_table()?;
    let resolve = lua.create_function(resolve)?;
    let load = lua.create_function(load)?;
    let mark = lua.create_function(mark_loading)?;
    let factory: Function = lua
        .load(REQUIRE_LUAU)
        .set_name("=[require]")
        .call((resolve, load, results, loading, rawpcall, mark))?;
    lua.set_named_registry_value("procmodel.require_factory", factory.clone())?;
    let builtin = lua.create_table()?;
    crate::toolkit::install(lua, &builtin, crate::classes::edit_voxels)?;
    lua.set_named_registry_value("procmodel.builtin_modules", builtin)?;
    // A require for host use: instance targets only.
    lua.set_named_registry_value(
        "procmodel.require_instance",
        factory.call::<Function>(Value::Nil)?,
    )?;
    Ok(())
}

/// Roblox globals procmodel has no counterpart of, and what each is ([`install`]): each is a
/// stand-in that raises on use, which editor definitions leave out.
pub const MISSING_GLOBALS: &[(&str, &str)] = &[
    ("settings", "Roblox's client settings (GlobalSettings)"),
    ("UserSettings", "a Roblox player's settings (UserSettings)"),
    ("PluginManager", "a Studio plugin API"),
    ("DebuggerManager", "Studio's debugger"),
    ("DockWidgetPluginGuiInfo", "a Studio plugin datatype"),
    ("PathWaypoint", "a datatype of Roblox's pathfinding"),
    (
        "CatalogSearchParams",
        "a datatype of Roblox's avatar catalog",
    ),
    ("FloatCurveKey", "a datatype of Roblox's animation curves"),
    (
        "RotationCurveKey",
        "a datatype of Roblox's animation curves",
    ),
    ("Path2DControlPoint", "a datatype of Roblox's Path2D UI"),
    ("ValueCurveKey", "a datatype of Roblox's animation curves"),
    ("User", "a datatype of Roblox's user identities"),
];

fn make_printer(lua: &Lua, level: LogLevel, script: String) -> mlua::Result<Function> {
    // Luau's own tostring, so values print as in Roblox (`__tostring` of datatypes and
    // instances, Vector3 as "1, 2, 3").
    let tostring: Function = lua.globals().get("tostring")?;
    lua.create_function(move |lua, args: MultiValue| {
        let mut parts = Vec::with_capacity(args.len());
        for v in args.iter() {
            parts.push(match v {
                Value::String(s) => s.to_string_lossy(),
                other => tostring.call::<mlua::LuaString>(other)?.to_string_lossy(),
            });
        }
        let text = parts.join(" ");
        let ty = match level {
            LogLevel::Print => crate::context::MessageType::Output,
            LogLevel::Warn => crate::context::MessageType::Warning,
        };
        crate::signals::script_output(lua, ty, format!("[{script}] {text}"), &text, None)
    })
}

fn instance_new(lua: &Lua, (class, parent): (Value, Value)) -> mlua::Result<Value> {
    let class = match class {
        Value::Nil => return Err(mlua::Error::runtime("Argument 1 missing or nil")),
        // A number names a class as its text does (and none is one).
        Value::String(_) | Value::Integer(_) | Value::Number(_) => {
            <mlua::LuaString as mlua::FromLua>::from_lua(class, lua)?
        }
        other => {
            return Err(mlua::Error::runtime(format!(
                "invalid argument #1 to 'new' (string expected, got {})",
                procmodel_luau_types::type_name(&other)
            )));
        }
    };
    let class = class.to_str()?;
    let handle = new_instance(&mut *ctx(lua)?, &class, &parent)?;
    crate::context::after_call(lua)?;
    Ok(handle)
}

/// `Instance.fromExisting(instance)`: a new instance of the same class with the same
/// property values (its name included, its UniqueId not) and no children, parented to nil.
fn instance_from_existing(lua: &Lua, v: Value) -> mlua::Result<Value> {
    let mut guard = ctx(lua)?;
    let c = &mut *guard;
    let src = c.instance(&v).ok_or_else(|| {
        mlua::Error::runtime(format!(
            "invalid argument #1 to 'fromExisting' (Instance expected, got {})",
            procmodel_luau_types::type_name(&v)
        ))
    })?;
    let inst = c
        .dom
        .get_by_ref(src.r)
        .ok_or_else(|| mlua::Error::runtime("fromExisting: the instance no longer exists"))?;
    if NewClass::resolve(inst.class.as_str()).is_none() {
        return Err(mlua::Error::runtime(format!(
            "fromExisting: unable to create an Instance of type \"{}\"",
            inst.class
        )));
    }
    let (class, name) = (inst.class, inst.name.clone());
    // A new instance: no UniqueId (a copy of the original's would collide, and rbx_dom_weak
    // would replace it with one made from the clock).
    let props: Vec<_> = inst
        .properties
        .iter()
        .filter(|(k, _)| **k != crate::keys::KEYS.unique_id)
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    crate::classes::count_new_instance(c)?;
    // The copy's text counts as `Clone`'s does.
    let text: usize = props
        .iter()
        .map(|(_, v)| crate::context::text_bytes(v))
        .sum();
    c.charge_bytes(name.len() + text)?;
    let mut builder = InstanceBuilder::empty().with_class(class).with_name(name);
    builder.add_properties(props);
    Ok(c.create(class, builder).1)
}

/// The raw C callback's `Instance.new` (see `crate::ffi::raw_instance_new`).
impl crate::ffi::NewInstance for Ctx {
    #[inline]
    fn new_instance(&mut self, class: &str, parent: &Value) -> mlua::Result<Option<Value>> {
        if self.signals.immediate && !parent.is_nil() {
            // Parenting fires events whose handlers run before `new` returns: the mlua
            // function does that.
            return Ok(None);
        }
        new_instance(self, class, parent).map(Some)
    }
}

/// `Instance.new` on the run context (also called by the raw C callback).
pub fn new_instance(c: &mut Ctx, class: &str, parent: &Value) -> mlua::Result<Value> {
    let parent = opt_instance(c, parent)?;
    let info = match c.new_classes.get(class) {
        Some(info) => *info,
        None => {
            let info = NewClass::resolve(class);
            c.new_classes.insert(Box::from(class), info);
            info
        }
    };
    let Some(info) = info else {
        return Err(mlua::Error::runtime(format!(
            "unable to create an Instance of type \"{class}\""
        )));
    };
    crate::classes::count_new_instance(c)?;
    // Named as Roblox names a new one (`NewClass::name`: mostly its class; copied from a
    // str: `InstanceBuilder::new` formats it through `Display`, measurably slower per
    // instance).
    let mut builder = InstanceBuilder::empty()
        .with_class(info.class)
        .with_name(info.name);
    if let Some(m) = c
        .managed
        .as_ref()
        .filter(|m| m.class.as_str() == info.class)
    {
        // A new instance of the managed class is processed at the next frame.
        builder = builder.with_property(m.flag, true);
    }
    let (r, handle) = c.create(info.class, builder);
    if let Some(size) = info.size {
        // Parts get their Size now and typically CFrame, Color, Material, Anchored and a few
        // more from the generator: room for 7 at once instead of growing the map twice.
        let inst = c.dom.get_by_ref_mut(r).expect("just inserted");
        inst.properties.reserve(7);
        inst.properties.insert(crate::keys::KEYS.size, size.into());
    }
    if let Some(p) = parent {
        crate::instance::set_parent(c, r, p.r)?;
    }
    Ok(handle)
}

/// `load(what)`: the loader for what `resolve` returned — a built-in module's function, or a
/// ModuleScript compiled now (only on a cache miss: compiling costs far more than a lookup).
fn load(lua: &Lua, what: Value) -> mlua::Result<Function> {
    match what {
        Value::Function(f) => Ok(f),
        other => {
            let module = ctx(lua)?
                .instance(&other)
                .ok_or_else(|| mlua::Error::runtime("require: module no longer exists"))?;
            module_loader(lua, module)
        }
    }
}

/// `mark(what, loading)`: a ModuleScript's code starts (true) or ends (false) loading.
fn mark_loading(lua: &Lua, (what, on): (Value, bool)) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    let Some(module) = c.instance(&what) else {
        return Ok(());
    };
    let count = c.loading_modules.entry(module.r).or_default();
    if on {
        *count += 1;
        c.loads.get_mut().start(module.r);
        c.loading.set(true);
    } else {
        *count = count.saturating_sub(1);
        if *count == 0 {
            c.loading_modules.remove(&module.r);
        }
        let crate::context::Ctx { loads, dom, .. } = &mut *c;
        let still = loads.get_mut().end(module.r, dom);
        c.loading.set(still);
    }
    Ok(())
}

/// `resolve(base, target)`: returns (cache key, what `load` turns into the loader).
fn resolve(lua: &Lua, (base, target): (Value, Value)) -> mlua::Result<(String, Value, String)> {
    let (key, what) = resolve_target(lua, &base, &target)?;
    // Every require (cached or not) records who required what, for `Host::requirers`,
    // what a loading module required, and what the running generation reached.
    {
        let mut c = ctx(lua)?;
        if let Some(to) = c.instance(&what) {
            if let Some(from) = opt_instance(&c, &base)? {
                c.required_by.entry(to.r).or_default().insert(from.r);
                if c.loading_modules.contains_key(&from.r) {
                    c.load_requires.entry(from.r).or_default().insert(to.r);
                }
            }
            if let Some(run) = c.run_requires.as_mut() {
                run.insert(to.r);
            }
        }
    }
    // A module read from a file is named by its path (a require chain names files).
    let label = {
        let c = ctx(lua)?;
        match c.instance(&what) {
            Some(i) => match c.files.get(&i.r) {
                Some(path) => path.display().to_string(),
                None => c.full_name(i.r),
            },
            None => key.clone(),
        }
    };
    Ok((key, what, label))
}

/// `resolve` without the label: (cache key, what `load` turns into the loader).
fn resolve_target(lua: &Lua, base: &Value, target: &Value) -> mlua::Result<(String, Value)> {
    match target {
        Value::LightUserData(_) => {
            let module = opt_instance(&*ctx(lua)?, target)?.expect("instance handle");
            if !is_a(&module.class, "ModuleScript") {
                return Err(mlua::Error::runtime(format!(
                    "attempted to call require with an invalid argument: {} is a {}, not a ModuleScript",
                    ctx(lua)?.full_name(module.r),
                    module.class
                )));
            }
            let key = format!("instance:{}", module.r);
            Ok((key, target.clone()))
        }
        Value::String(s) => {
            let spec = s.to_str()?.to_owned();
            if let Some(name) = spec.strip_prefix("@procmodel/") {
                let builtin: Table = lua.named_registry_value("procmodel.builtin_modules")?;
                let loader: Option<Function> = builtin.get(name)?;
                return match loader {
                    Some(f) => Ok((spec.clone(), Value::Function(f))),
                    None => Err(mlua::Error::runtime(format!("unknown module '{spec}'"))),
                };
            }
            let base = opt_instance(&*ctx(lua)?, base)?;
            let file = base.and_then(|b| ctx(lua).ok()?.files.get(&b.r).cloned());
            match (file, base) {
                // A script loaded from a file: relative to the file, as Luau's CLI resolves.
                (Some(file), _) => {
                    let path = resolve_path(lua, &file, &spec)?;
                    let module = file_module(lua, &path)?;
                    // Cached under the module, however it is reached: `require(script.X)`
                    // and `require("@self/X")` give the same value, as in Roblox.
                    let key = format!("instance:{}", module.r);
                    Ok((key, ctx(lua)?.push(module.r)?))
                }
                // A script of a place or project: relative to its instance, as Roblox does.
                (None, Some(base)) => {
                    let module = resolve_instance_path(lua, base, &spec)?;
                    let key = format!("instance:{}", module.r);
                    Ok((key, ctx(lua)?.push(module.r)?))
                }
                (None, None) => Err(mlua::Error::runtime(format!(
                    "cannot require '{spec}': string requires are relative to the requiring script, and this code has none"
                ))),
            }
        }
        // Roblox loads a published module by its asset id from its servers.
        Value::Integer(_) | Value::Number(_) => {
            // As Luau writes the number (a whole id has no ".0").
            let id = lua
                .coerce_string(target.clone())?
                .map_or_else(String::new, |s| s.to_string_lossy());
            Err(mlua::Error::runtime(format!(
                "require({id}): requiring a module by asset id needs Roblox's servers, which procmodel does not reach; put the module in the place (or a file beside the script) and require that"
            )))
        }
        other => Err(mlua::Error::runtime(format!(
            "attempted to call require with invalid argument(s): expected ModuleScript or string, got {}",
            procmodel_luau_types::type_name(other)
        ))),
    }
}

/// Whether `file` is a folder's module (`init.luau`, `init.lua`): the module is the folder.
fn is_init(file: &Path) -> bool {
    file.file_stem().and_then(|s| s.to_str()) == Some("init")
}

fn resolve_path(lua: &Lua, from: &Path, spec: &str) -> mlua::Result<PathBuf> {
    let root = lua.app_data_ref::<RequireRoot>().map(|r| r.0.clone());
    require_file(from, spec, root.as_deref()).map_err(mlua::Error::runtime)
}

/// The file a string require `spec` names from the module read from `from`, as `require`
/// resolves it: `./X`, `../X` and `@self/X` beside or under the module (a folder's
/// `init.luau` is the folder), an alias through the nearest `.luaurc`; `X.luau`, `X.lua`,
/// `X/init.luau`, `X/init.lua` or the file `X`. With `root`, a file outside that folder
/// is refused. The error says what is missing or refused.
pub fn require_file(from: &Path, spec: &str, root: Option<&Path>) -> Result<PathBuf, String> {
    let dir = from.parent().unwrap_or(Path::new("."));
    let (mut joined, rel) = if let Some(rest) = spec.strip_prefix("@self/") {
        // A folder module (init.luau) owns its folder; `Foo.luau` owns `Foo/`.
        let own = match from.file_stem().and_then(|s| s.to_str()) {
            Some("init") => dir.to_path_buf(),
            Some(stem) => dir.join(stem),
            None => dir.to_path_buf(),
        };
        (own, rest)
    } else if let Some(aliased) = spec.strip_prefix('@') {
        let (alias, rest) = aliased.split_once('/').unwrap_or((aliased, ""));
        (luaurc_alias(dir, alias, spec)?, rest)
    } else {
        // Relative to the module: a folder's init.luau is the folder, so `./X` is beside the
        // folder and its own files are `@self/X` (Luau's require-by-string, as Roblox's
        // instance tree has it).
        let base = match dir.parent() {
            Some(up) if is_init(from) => up,
            _ => dir,
        };
        (base.to_path_buf(), spec.strip_prefix("./").unwrap_or(spec))
    };
    for comp in Path::new(rel).components() {
        match comp {
            Component::Normal(p) => joined.push(p),
            Component::ParentDir => {
                joined.pop();
            }
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "cannot require '{spec}': absolute paths are not allowed"
                ));
            }
        }
    }
    // The extension is appended, never substituted: `./RoadMath.spec` is RoadMath.spec.luau.
    let with_ext = |ext: &str| {
        let mut name = joined.clone().into_os_string();
        name.push(ext);
        PathBuf::from(name)
    };
    let candidates = [
        with_ext(".luau"),
        with_ext(".lua"),
        joined.join("init.luau"),
        joined.join("init.lua"),
        joined.clone(),
    ];
    for cand in candidates {
        if cand.is_file() {
            if let Some(root) = root {
                let canon = cand.canonicalize().unwrap_or(cand.clone());
                if !canon.starts_with(root) {
                    return Err(format!(
                        "cannot require '{spec}': {} is outside {}, which string requires may not leave (a generator's folder; for a script, the folder of the nearest .luaurc above it, else its own)",
                        canon.display(),
                        root.display()
                    ));
                }
            }
            return Ok(cand);
        }
    }
    // A folder's init.luau that reached for its own file with `./` is told the way there.
    let hint = match spec.strip_prefix("./") {
        Some(own) if is_init(from) && require_file(from, &format!("@self/{own}"), root).is_ok() => {
            format!(
                "; a folder's {} is the folder, so ./ is beside it: its own files are @self/{own}",
                from.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("init.luau")
            )
        }
        _ => String::new(),
    };
    Err(format!(
        "cannot require '{spec}': no file {}.luau (or .lua, or init.luau) next to {}{hint}",
        joined.display(),
        from.display()
    ))
}

/// Roblox's string requires over the instance tree: `./X` is a sibling of the requiring
/// script, `../X` a sibling of its parent (each further `../` one level up), `@self/X` a child
/// of the script itself; then each path component is a child by name. The target must be a
/// ModuleScript.
fn resolve_instance_path(lua: &Lua, base: Instance, spec: &str) -> mlua::Result<Instance> {
    let c = ctx(lua)?;
    let from = c.full_name(base.r);
    let fail =
        |why: String| mlua::Error::runtime(format!("cannot require '{spec}' from {from}: {why}"));
    let parent = |r: Ref| {
        c.dom
            .get_by_ref(r)
            .map(|i| i.parent())
            .filter(|p| p.is_some())
    };
    let (cur, rest) = if let Some(rest) = spec.strip_prefix("@self/") {
        (base.r, rest)
    } else if let Some(rest) = spec.strip_prefix("./") {
        (
            parent(base.r).ok_or_else(|| fail("the script has no parent".into()))?,
            rest,
        )
    } else if spec.starts_with("../") {
        let p = parent(base.r).ok_or_else(|| fail("the script has no parent".into()))?;
        (p, spec)
    } else if spec.starts_with('@') {
        return Err(fail(
            "aliases other than @self are resolved only for scripts loaded from files (.luaurc)"
                .into(),
        ));
    } else {
        return Err(fail(
            "a string require must start with ./, ../ or @self/".into(),
        ));
    };
    // Each path component from `start`: the instance reached, or why not.
    let walk = |mut cur: Ref, rest: &str| -> Result<Ref, String> {
        for comp in rest.split('/') {
            match comp {
                "" | "." => {}
                ".." => {
                    cur =
                        parent(cur).ok_or_else(|| format!("{} has no parent", c.full_name(cur)))?;
                }
                name => {
                    let inst = c.dom.get_by_ref(cur).ok_or("instance gone")?;
                    cur = inst
                        .children()
                        .iter()
                        .copied()
                        .find(|&ch| c.dom.get_by_ref(ch).is_some_and(|i| i.name == name))
                        .ok_or_else(|| {
                            format!("{} has no child named '{name}'", c.full_name(cur))
                        })?;
                }
            }
        }
        Ok(cur)
    };
    let cur = match walk(cur, rest) {
        Ok(found) => found,
        // A module reaching for its own child with `./` is told the way there.
        Err(why) if spec.starts_with("./") && walk(base.r, rest).is_ok() => {
            return Err(fail(format!(
                "{why}; ./ is beside the script: its own children are @self/{rest}"
            )));
        }
        Err(why) => return Err(fail(why)),
    };
    let inst = c
        .dom
        .get_by_ref(cur)
        .ok_or_else(|| fail("instance gone".into()))?;
    if !is_a(&inst.class, "ModuleScript") {
        return Err(fail(format!(
            "{} is a {}, not a ModuleScript",
            c.full_name(cur),
            inst.class
        )));
    }
    Ok(Instance {
        r: cur,
        class: inst.class,
    })
}

/// The folder of `.luaurc` alias `alias` (case-insensitive, as Luau resolves them): the
/// nearest `.luaurc` from `dir` upwards that defines it; its path is relative to that file.
fn luaurc_alias(dir: &Path, alias: &str, spec: &str) -> Result<PathBuf, String> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        let rc = d.join(".luaurc");
        if let Ok(text) = std::fs::read_to_string(&rc) {
            let (json, _) = crate::luaurc::parse_luaurc(&text)
                .map_err(|e| format!("cannot require '{spec}': {}: {e}", rc.display()))?;
            if let Some(aliases) = json.get("aliases").and_then(|a| a.as_object()) {
                let mut keys: Vec<&String> = aliases.keys().collect();
                keys.sort();
                if let Some(k) = keys.into_iter().find(|k| k.eq_ignore_ascii_case(alias)) {
                    let Some(target) = aliases[k].as_str() else {
                        return Err(format!(
                            "cannot require '{spec}': {}: alias \"{k}\" must be a string path",
                            rc.display()
                        ));
                    };
                    return Ok(d.join(target));
                }
            }
        }
        cur = d.parent();
    }
    Err(format!(
        "cannot require '{spec}': no .luaurc from {} upwards defines the alias '{alias}'",
        dir.display()
    ))
}

/// The folder string requires may not leave (app data).
pub struct RequireRoot(pub PathBuf);

/// How a folder reached by a string require is built (app data; see
/// [`procmodel_script::ScriptHost::set_module_folder_loader`]).
pub struct FolderLoader(pub procmodel_script::ModuleFolderLoader);

/// A ModuleScript instance for a file, created once per path next to the generator.
fn file_module(lua: &Lua, path: &Path) -> mlua::Result<Instance> {
    let mut c = ctx(lua)?;
    if let Some((&r, _)) = c.files.iter().find(|(_, p)| p.as_path() == path) {
        let class = c.dom.get_by_ref(r).map(|i| i.class).unwrap_or_default();
        return Ok(Instance { r, class });
    }
    if is_init(path)
        && let Some(dir) = path.parent()
        && let Some(loader) = lua.app_data_ref::<FolderLoader>()
    {
        // The folder is one module with its files as children, as Rojo and Roblox have it.
        let (mut tree, top, scripts) = (loader.0)(dir).map_err(mlua::Error::runtime)?;
        // Moved in whole, referents kept, parented to nil (as the host moves any tree in).
        let root = c.dom.root_ref();
        tree.transfer(top, &mut c.dom, root);
        c.dom.transfer_within(top, Ref::none());
        let r = top;
        for (module, file) in scripts {
            c.files.insert(module, file);
        }
        let class = c.dom.get_by_ref(r).map(|i| i.class).unwrap_or_default();
        return Ok(Instance { r, class });
    }
    let source = std::fs::read_to_string(path)
        .map_err(|e| mlua::Error::runtime(format!("cannot read {}: {e}", path.display())))?;
    // A folder's init.luau is the folder's module, named after it (as Rojo and Roblox's
    // instance tree name it).
    let named = if is_init(path) {
        path.parent().and_then(Path::file_name)
    } else {
        path.file_stem()
    };
    let name = named
        .and_then(|s| s.to_str())
        .unwrap_or("Module")
        .to_owned();
    let r = c.dom.insert(
        Ref::none(),
        InstanceBuilder::new("ModuleScript")
            .with_name(name)
            .with_property("Source", Variant::String(source)),
    );
    c.files.insert(r, path.to_path_buf());
    let class = c.dom.get_by_ref(r).map(|i| i.class).unwrap_or_default();
    Ok(Instance { r, class })
}

/// Compiles a ModuleScript's Source with its own environment (`script`, `require`, printers).
pub fn module_loader(lua: &Lua, module: Instance) -> mlua::Result<Function> {
    let (source, chunk_name, script_name) = {
        let c = ctx(lua)?;
        let inst = c
            .dom
            .get_by_ref(module.r)
            .ok_or_else(|| mlua::Error::runtime("module no longer exists"))?;
        let source = match inst.properties.get(&crate::keys::KEYS.source) {
            Some(Variant::String(s)) => s.clone(),
            _ => String::new(),
        };
        let chunk_name = match c.files.get(&module.r) {
            Some(p) => format!("@{}", p.display()),
            None => format!("@{}", c.full_name(module.r)),
        };
        (source, chunk_name, inst.name.clone())
    };
    let env = chunk_env(lua, module, &script_name)?;
    crate::env::load_chunk(lua, source, chunk_name, env)
}

/// `loadstring(contents, chunkname)` (Roblox reference): with the place's
/// `ServerScriptService.LoadStringEnabled` off (its default, and the reference's advice) it
/// returns nil and "loadstring() is not available"; on, it compiles Luau source (never
/// bytecode) into a function whose environment is its caller's (so `script`, `print` and
/// `require` are the calling script's), or returns nil and the syntax error. The code runs
/// in the same VM under the same limits and sandbox as its caller.
fn loadstring(lua: &Lua) -> mlua::Result<Function> {
    let compile = lua.create_function(
        |lua, (contents, chunkname, env): (Value, Value, Table)| -> mlua::Result<(Value, Value)> {
            let unavailable = || {
                Ok((
                    Value::Nil,
                    Value::String(lua.create_string("loadstring() is not available")?),
                ))
            };
            if !loadstring_enabled(&*ctx(lua)?) {
                return unavailable();
            }
            let Value::String(source) = contents else {
                return Err(mlua::Error::runtime(format!(
                    "invalid argument #1 to 'loadstring' (string expected, got {})",
                    procmodel_luau_types::type_name(&contents)
                )));
            };
            let name = match &chunkname {
                Value::Nil => source.to_string_lossy(),
                Value::String(s) => s.to_string_lossy(),
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "invalid argument #2 to 'loadstring' (string expected, got {})",
                        procmodel_luau_types::type_name(other)
                    )));
                }
            };
            let compiled = lua
                .load(source.as_bytes().to_vec())
                .set_name(name)
                .set_mode(mlua::chunk::ChunkMode::Text)
                .set_environment(env)
                .into_function();
            match compiled {
                Ok(f) => Ok((Value::Function(f), Value::Nil)),
                Err(mlua::Error::SyntaxError { message, .. }) => {
                    Ok((Value::Nil, Value::String(lua.create_string(message)?)))
                }
                Err(e) => Ok((Value::Nil, Value::String(lua.create_string(e.to_string())?))),
            }
        },
    )?;
    lua.load(
        "local compile = ...\n\
         return function(contents, chunkname)\n\
             return compile(contents, chunkname, getfenv(2))\n\
         end",
    )
    .set_name("=[loadstring]")
    .call(compile)
}

/// Whether the place lets `loadstring` compile: its ServerScriptService's LoadStringEnabled,
/// noted as a read of the scene (a place that turns it on is another input).
fn loadstring_enabled(c: &crate::context::Ctx) -> bool {
    let Some(service) = crate::services::find_service(c, "ServerScriptService") else {
        c.note_lookup(
            c.dom.root_ref(),
            &[],
            crate::context::Lookup::Child("ServerScriptService"),
        );
        return false;
    };
    let Some(inst) = c.dom.get_by_ref(service) else {
        return false;
    };
    c.note_state_read(Instance {
        r: service,
        class: inst.class,
    });
    matches!(
        inst.properties
            .get(&rbx_dom_weak::ustr("LoadStringEnabled")),
        Some(rbx_types::Variant::Bool(true))
    )
}

/// The `_G` and `shared` tables of the chunk of `module`: a top-level script (a trusted
/// tool, like a plugin or the command bar) and every module first loaded while it runs share
/// the VM's one pair, as Roblox's scripts do; a generator's chunks each keep their own, so no
/// generator reaches what another put there.
fn shared_tables(lua: &Lua, module: &Instance) -> mlua::Result<Option<(Table, Table)>> {
    const KEY: &str = "procmodel.script_shared_tables";
    let script = matches!(module.class.as_str(), "Script" | "LocalScript")
        || crate::sched::sched(lua)?.in_script();
    if !script {
        return Ok(None);
    }
    let pair: Option<Table> = lua.named_registry_value(KEY)?;
    let pair = match pair {
        Some(p) => p,
        None => {
            let p = lua.create_table()?;
            p.raw_set(1, lua.create_table()?)?;
            p.raw_set(2, lua.create_table()?)?;
            lua.set_named_registry_value(KEY, &p)?;
            p
        }
    };
    Ok(Some((pair.raw_get(1)?, pair.raw_get(2)?)))
}

fn chunk_env(lua: &Lua, module: Instance, script_name: &str) -> mlua::Result<Table> {
    let env = crate::env::chunk_env(lua, shared_tables(lua, &module)?)?;
    let script = ctx(lua)?.push(module.r)?;
    let factory: Function = lua.named_registry_value("procmodel.require_factory")?;
    env.raw_set("script", script.clone())?;
    env.raw_set("require", factory.call::<Function>(script)?)?;
    env.raw_set(
        "print",
        make_printer(lua, LogLevel::Print, script_name.to_owned())?,
    )?;
    env.raw_set(
        "warn",
        make_printer(lua, LogLevel::Warn, script_name.to_owned())?,
    )?;
    env.set_safeenv(true);
    Ok(env)
}

/// Argument `i` (1-based) of a `math` function as Luau's `luaL_checkinteger` reads it:
/// numbers (and numeric strings) truncated toward zero.
fn int_arg(lua: &Lua, args: &MultiValue, i: usize, name: &str) -> mlua::Result<i32> {
    let v = args.get(i - 1).cloned().unwrap_or(Value::Nil);
    match lua.coerce_number(v.clone())? {
        Some(n) => Ok(n as i32),
        None => Err(mlua::Error::runtime(format!(
            "invalid argument #{i} to '{name}' (number expected, got {})",
            procmodel_luau_types::type_name(&v)
        ))),
    }
}

/// `math.random()`, `math.random(m)`, `math.random(m, n)`.
fn math_random(lua: &Lua, args: MultiValue) -> mlua::Result<f64> {
    let empty = |i: usize| {
        mlua::Error::runtime(format!(
            "invalid argument #{i} to 'random' (interval is empty)"
        ))
    };
    match args.len() {
        0 => Ok(crate::sched::sched(lua)?.rng.next_f64()),
        1 => {
            let upper = int_arg(lua, &args, 1, "random")?;
            let r = crate::sched::sched(lua)?.rng.next_upto(upper);
            r.map(f64::from).ok_or_else(|| empty(1))
        }
        2 => {
            let lower = int_arg(lua, &args, 1, "random")?;
            let upper = int_arg(lua, &args, 2, "random")?;
            if lower > upper {
                return Err(empty(2));
            }
            let r = crate::sched::sched(lua)?.rng.next_range(lower, upper);
            r.map(f64::from).ok_or_else(|| {
                mlua::Error::runtime("invalid argument #2 to 'random' (interval is too large)")
            })
        }
        _ => Err(mlua::Error::runtime("wrong number of arguments")),
    }
}

/// Every BrickColor number, ascending: what `BrickColor.random()` picks from.
static BRICK_COLORS: std::sync::LazyLock<Vec<u16>> = std::sync::LazyLock::new(|| {
    (0..=u16::MAX)
        .filter(|&n| rbx_types::BrickColor::from_number(n).is_some())
        .collect()
});

/// `BrickColor.random()`: one of [`BRICK_COLORS`], chosen by the running run's
/// `math.random` stream (so the same seed gives the same colours).
fn brick_color_random(lua: &Lua, _: MultiValue) -> mlua::Result<procmodel_luau_types::BrickColor> {
    let n = BRICK_COLORS.len() as i32;
    let i = crate::sched::sched(lua)?
        .rng
        .next_upto(n)
        .ok_or_else(|| mlua::Error::runtime("BrickColor.random: no colours"))?;
    Ok(procmodel_luau_types::BrickColor::from_number(
        BRICK_COLORS[(i - 1) as usize],
    ))
}

/// `math.randomseed(seed)`: reseeds the running run's generator.
fn math_randomseed(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    let seed = int_arg(lua, &args, 1, "randomseed")?;
    crate::sched::sched(lua)?.rng = procmodel_base::Pcg32::new(i64::from(seed));
    Ok(())
}
