//! The instance method registry: [`MethodTable`], where each class module (`classes`) adds
//! the methods of its class, and [`Methods`], what the instance metatable looks them up in. A
//! member lookup finds a method only on a class that has it (or a subclass, through the
//! reflection database's superclass chain), so `part.FillBlock` is "not a valid member", as
//! in Roblox, and a function taken from one class refuses an instance of another.

use crate::context::{Ctx, Instance, ctx};
use crate::props::MethodIndex;
use mlua::{Lua, Value};
use procmodel_dom::is_a;
use rustc_hash::FxHashMap;

/// The function a Luau chunk returns, for a method written in Luau: the chunk (`source`,
/// named `name` in tracebacks) runs once per VM with the arguments `args` gives, and its
/// result is kept in the registry under `key`.
pub(crate) fn luau_function<A: mlua::IntoLuaMulti>(
    lua: &Lua,
    key: &str,
    name: &str,
    source: &str,
    args: impl FnOnce() -> mlua::Result<A>,
) -> mlua::Result<mlua::Function> {
    if let Value::Function(f) = lua.named_registry_value::<Value>(key)? {
        return Ok(f);
    }
    let f: mlua::Function = lua.load(source).set_name(name).call(args()?)?;
    lua.set_named_registry_value(key, f.clone())?;
    Ok(f)
}

/// Calls a method written in Luau on `this`: the function of [`luau_function`] (`chunk` is
/// its registry key, chunk name and source; `load` gives the chunk's arguments) with the
/// instance's handle first, then `args`.
pub(crate) fn call_luau_method<L, A, R>(
    lua: &Lua,
    this: &Instance,
    chunk: (&str, &str, &str),
    load: impl FnOnce() -> mlua::Result<L>,
    args: A,
) -> mlua::Result<R>
where
    L: mlua::IntoLuaMulti,
    A: mlua::IntoLuaMulti,
    R: mlua::FromLuaMulti,
{
    let handle = ctx(lua)?.push(this.r)?;
    let (key, name, source) = chunk;
    let f = luau_function(lua, key, name, source, load)?;
    let mut all = args.into_lua_multi(lua)?;
    all.push_front(handle);
    f.call(all)
}

/// A method's options table (`arg` is its argument number as a script sees it): None for
/// nil; an error for anything but a table, or for a key not in `known`.
pub(crate) fn options_table(
    method: &str,
    arg: usize,
    v: &Value,
    known: &[&str],
) -> mlua::Result<Option<mlua::Table>> {
    let t = match v {
        Value::Nil => return Ok(None),
        Value::Table(t) => t,
        other => {
            return Err(mlua::Error::runtime(format!(
                "invalid argument #{arg} to '{method}' (table expected, got {})",
                procmodel_luau_types::type_name(other)
            )));
        }
    };
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        if !matches!(&k, Value::String(s) if known.iter().any(|f| s.as_bytes() == f.as_bytes())) {
            return Err(mlua::Error::runtime(format!(
                "{method}: unknown option {} (the options are {})",
                match &k {
                    Value::String(s) => format!("\"{}\"", s.to_string_lossy()),
                    other => procmodel_luau_types::type_name(other),
                },
                known.join(", ")
            )));
        }
    }
    Ok(Some(t.clone()))
}

/// An optional enum argument or option `name` of `method`: nil, or an item of `Enum.{name}`.
pub(crate) fn enum_option(
    method: &str,
    name: &str,
    v: &Value,
) -> mlua::Result<Option<procmodel_luau_types::EnumItem>> {
    if v.is_nil() {
        return Ok(None);
    }
    match procmodel_luau_types::FromValue::from_value(v) {
        Some(item @ procmodel_luau_types::EnumItem { enum_name, .. }) if enum_name == name => {
            Ok(Some(item))
        }
        _ => Err(mlua::Error::runtime(format!(
            "{method}: {name} must be an Enum.{name} item, got {}",
            procmodel_luau_types::type_name(v)
        ))),
    }
}

/// The error for a member `key` that `this` does not have.
/// A method Roblox's API gives the class (`api`) says so, rather than sending the author
/// looking for a typo.
pub fn not_member(c: &Ctx, this: &Instance, key: &str) -> mlua::Error {
    // Writes of a callback are handled before this; what reaches here is a read.
    if let Some((by, name)) = crate::api::callback(&this.class, key) {
        return mlua::Error::runtime(format!(
            "{name} is a callback member of {by}; you can only set the callback value, get is not available"
        ));
    }
    if let Some((by, reason)) = crate::api::unavailable(&this.class, key) {
        return mlua::Error::runtime(format!("{by}:{key}: {reason}"));
    }
    if let Some(by) = crate::api::method(&this.class, key) {
        return mlua::Error::runtime(format!(
            "{by}:{key} is a Roblox method that procmodel does not implement (called on {} \"{}\")",
            this.class,
            c.full_name(this.r)
        ));
    }
    if let Some(by) = crate::api::plugin_method(&this.class, key) {
        return mlua::Error::runtime(format!(
            "{by}:{key} is a Roblox Studio plugin method that procmodel does not implement (called on {} \"{}\")",
            this.class,
            c.full_name(this.r)
        ));
    }
    let hint = file_beside(c, this.r, key)
        .map(|(module, file, spec)| {
            format!(
                " ({module} was loaded from a file, and the files beside it are not instances: \
                 require(\"{spec}\") loads {}; or lay the generator out as Rojo does, a \
                 folder with init.luau beside {key}, and give procmodel the folder)",
                file.display()
            )
        })
        .or_else(|| {
            // A slip of the keyboard or of case: the member (or child) it most likely meant.
            let children = c
                .dom
                .get_by_ref(this.r)
                .map(|i| i.children())
                .unwrap_or_default()
                .iter()
                .filter_map(|&k| c.dom.get_by_ref(k))
                .map(|k| k.name.as_str());
            crate::api::did_you_mean(&this.class, key, children)
                .map(|m| format!(" (did you mean {m}?)"))
        })
        .unwrap_or_default();
    mlua::Error::runtime(format!(
        "{key} is not a valid member of {} \"{}\"{hint}",
        this.class,
        c.full_name(this.r),
    ))
}

/// For `script.Parent.X` / `script.X` in a module loaded from a file: the module's file name,
/// the file the author most likely meant and the string require that loads it. `script.X` is
/// `@self/X`: in the folder of an `init` module, or the folder named after the module's file;
/// `script.Parent.X` is `./X`, beside the module (beside the folder of an `init` module).
fn file_beside(
    c: &Ctx,
    r: rbx_types::Ref,
    key: &str,
) -> Option<(String, std::path::PathBuf, String)> {
    let mut modules: Vec<(&rbx_types::Ref, &std::path::PathBuf)> = c.files.iter().collect();
    modules.sort_by(|a, b| a.1.cmp(b.1));
    for (&module, file) in modules {
        let parent = c.dom.get_by_ref(module).map(|m| m.parent());
        let dir = file.parent()?;
        let stem = file.file_stem()?.to_string_lossy();
        let init = stem == "init";
        let (folder, spec) = if module == r {
            let own = if init {
                dir.to_path_buf()
            } else {
                dir.join(&*stem)
            };
            (own, format!("@self/{key}"))
        } else if parent == Some(r) {
            let beside = if init { dir.parent()? } else { dir };
            (beside.to_path_buf(), format!("./{key}"))
        } else {
            continue;
        };
        let candidates = [
            folder.join(format!("{key}.luau")),
            folder.join(format!("{key}.lua")),
            folder.join(key).join("init.luau"),
            folder.join(key).join("init.lua"),
        ];
        if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
            let name = file.file_name()?.to_string_lossy().into_owned();
            return Some((name, found, spec));
        }
    }
    None
}

/// Collects methods by (class, name). Methods are added for the class last named with
/// [`MethodTable::class`]; each function takes the instance as its first argument, as
/// `inst:Method(...)` passes it, and checks that it is one of that class.
pub struct MethodTable<'a> {
    lua: &'a Lua,
    class: &'static str,
    entries: Vec<(&'static str, &'static str, mlua::Function)>,
    result: mlua::Result<()>,
}

impl<'a> MethodTable<'a> {
    pub fn new(lua: &'a Lua) -> MethodTable<'a> {
        MethodTable {
            lua,
            class: "Instance",
            entries: Vec::new(),
            result: Ok(()),
        }
    }

    /// The class the following methods belong to.
    pub fn class(&mut self, class: &'static str) -> &mut Self {
        debug_assert!(procmodel_dom::db().classes.contains_key(class), "{class}");
        self.class = class;
        self
    }

    pub fn add_method<A, R, F>(&mut self, name: &'static str, f: F)
    where
        A: mlua::FromLuaMulti,
        R: mlua::IntoLuaMulti,
        F: Fn(&Lua, &Instance, A) -> mlua::Result<R> + 'static,
    {
        self.add_method_with(name, f, None);
    }

    /// As [`MethodTable::add_method`], with a raw C function for the plain calls of a hot
    /// method (`ffi`): it gets the mlua function as upvalue 1 and calls it for anything
    /// it does not handle itself (other argument types, errors to report, wrong classes).
    pub fn add_raw_method<A, R, F>(
        &mut self,
        name: &'static str,
        raw: mlua::ffi::lua_CFunction,
        f: F,
    ) where
        A: mlua::FromLuaMulti,
        R: mlua::IntoLuaMulti,
        F: Fn(&Lua, &Instance, A) -> mlua::Result<R> + 'static,
    {
        self.add_method_with(name, f, Some(raw));
    }

    fn add_method_with<A, R, F>(
        &mut self,
        name: &'static str,
        f: F,
        raw: Option<mlua::ffi::lua_CFunction>,
    ) where
        A: mlua::FromLuaMulti,
        R: mlua::IntoLuaMulti,
        F: Fn(&Lua, &Instance, A) -> mlua::Result<R> + 'static,
    {
        if self.result.is_err() {
            return;
        }
        let class = self.class;
        let func = self
            .lua
            .create_function(move |lua, mut args: mlua::MultiValue| {
                let first = args.pop_front().unwrap_or(Value::Nil);
                let this = ctx(lua)?.instance(&first).ok_or_else(|| {
                    mlua::Error::runtime(format!(
                        "Expected ':' not '.' calling member function {name}"
                    ))
                })?;
                if class != "Instance" && !is_a(&this.class, class) {
                    return Err(not_member(&*ctx(lua)?, &this, name));
                }
                let a =
                    A::from_lua_args(args, 1, Some(name), lua).map_err(|e| arg_error(name, &e))?;
                let out = f(lua, &this, a)?;
                crate::context::after_call(lua)?;
                Ok(out)
            });
        let func = match (func, raw) {
            (Ok(slow), Some(raw)) => procmodel_luau_types::raw::closure(self.lua, raw, slow),
            (func, _) => func,
        };
        self.result = func.map(|func| self.entries.push((class, name, func)));
    }

    /// The VM the methods are made in.
    pub fn lua(&self) -> &'a Lua {
        self.lua
    }

    /// Records a failure to build a method: [`MethodTable::finish`] returns it.
    pub fn fail(&mut self, e: mlua::Error) {
        if self.result.is_ok() {
            self.result = Err(e);
        }
    }

    /// Adds a method written in Luau (`f` takes the instance first and checks it itself):
    /// for one that throws an error value other than a string, which a Rust method would turn
    /// into text.
    pub fn add_function(&mut self, name: &'static str, f: mlua::Function) {
        if self.result.is_ok() {
            self.entries.push((self.class, name, f));
        }
    }

    /// Makes `name` another name of the current class's method `existing`.
    pub fn alias(&mut self, name: &'static str, existing: &'static str) {
        self.alias_in(self.class, name, existing);
    }

    /// Makes `name` another name of `class`'s method `existing` (added before); false when
    /// there is no such method.
    pub fn alias_in(
        &mut self,
        class: &'static str,
        name: &'static str,
        existing: &'static str,
    ) -> bool {
        let found = self
            .entries
            .iter()
            .find(|(c, n, _)| *c == class && *n == existing)
            .map(|e| e.2.clone());
        match found {
            Some(f) => {
                self.entries.push((class, name, f));
                true
            }
            None => false,
        }
    }

    /// Every (class, name) pair added so far, in the order added.
    pub fn names(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.entries.iter().map(|(c, n, _)| (*c, *n))
    }

    pub fn finish(self) -> mlua::Result<Methods> {
        self.result?;
        let mut by_name: FxHashMap<&'static [u8], Vec<(&'static str, mlua::Function)>> =
            FxHashMap::default();
        for (class, name, f) in self.entries {
            by_name.entry(name.as_bytes()).or_default().push((class, f));
        }
        // Most derived class first, so a subclass's method shadows its base's.
        for list in by_name.values_mut() {
            list.sort_by_key(|(class, _)| std::cmp::Reverse(depth(class)));
        }
        Ok(Methods { by_name })
    }
}

fn depth(class: &str) -> usize {
    let mut n = 0;
    let mut cur = procmodel_dom::db().classes.get(class);
    while let Some(c) = cur {
        n += 1;
        cur = c
            .superclass
            .and_then(|s| procmodel_dom::db().classes.get(s));
    }
    n
}

/// The registered methods by name.
pub struct Methods {
    by_name: FxHashMap<&'static [u8], Vec<(&'static str, mlua::Function)>>,
}

impl Methods {
    /// The method `name` of an instance of `class`.
    pub fn lookup(&self, class: &str, name: &[u8]) -> Option<&mlua::Function> {
        self.by_name
            .get(name)?
            .iter()
            .find(|(c, _)| is_a(class, c))
            .map(|(_, f)| f)
    }

    /// Which classes have a method `name` (for the property cache's member resolution).
    pub fn index(&self) -> MethodIndex {
        MethodIndex::new(
            self.by_name
                .iter()
                .map(|(name, list)| (Box::from(*name), list.iter().map(|e| e.0).collect()))
                .collect(),
        )
    }

    /// Names served by a single function whatever the class (the fast path's table: the
    /// class check has already been made by the member resolution).
    pub fn unambiguous(&self) -> impl Iterator<Item = (&'static [u8], &mlua::Function)> {
        self.by_name
            .iter()
            .filter_map(|(name, list)| match list.as_slice() {
                [(_, f)] => Some((*name, f)),
                _ => None,
            })
    }
}

/// The error for a method's argument that does not convert, worded as Roblox words it: a
/// missing one is "Argument N missing or nil", a wrong one names the Luau type expected.
fn arg_error(method: &str, e: &mlua::Error) -> mlua::Error {
    let mlua::Error::BadArgument { pos, cause, .. } = e else {
        return mlua::Error::runtime(format!("{method}: {}", crate::error::script(e)));
    };
    let text = match cause.as_ref() {
        mlua::Error::FromLuaConversionError { from: "nil", .. } => {
            format!("Argument {pos} missing or nil")
        }
        mlua::Error::FromLuaConversionError { from, to, .. } => {
            let expected = match to.as_str() {
                "String" | "str" | "BorrowedStr" => "string",
                "bool" => "boolean",
                "f32" | "f64" | "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64"
                | "usize" | "isize" | "Number" | "Integer" => "number",
                "Table" => "table",
                "Function" => "function",
                other => other,
            };
            // Luau's native vector is Roblox's Vector3.
            let got = if *from == "vector" { "Vector3" } else { from };
            format!("argument #{pos} expects a {expected}, got {got}")
        }
        other => format!("argument #{pos}: {}", crate::error::script(other)),
    };
    mlua::Error::runtime(format!("{method}: {text}"))
}
