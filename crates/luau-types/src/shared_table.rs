//! `SharedTable`: Roblox's table-like store for Parallel Luau, with the documented
//! constructor (`SharedTable.new()`, `SharedTable.new(t)`), element access, generalized
//! iteration (`for k, v in st do`) and the functions `clear`, `clone`, `cloneAndFreeze`,
//! `increment`, `isFrozen`, `size` and `update`.
//!
//! The reference's rules: keys are strings or integers from 0 to 2³² − 1; values are
//! booleans, numbers, vectors, strings, SharedTables or serializable datatypes (a Luau table
//! given to `new` or stored is turned into a new SharedTable, recursively); a frozen
//! SharedTable refuses every change; two SharedTables are never equal unless they are one.
//!
//! One VM runs one execution context here, so every operation is trivially atomic. The
//! elements live in a Luau table held as the userdata's user value, so SharedTables that
//! refer to each other are collected like tables; iteration visits a snapshot taken when the
//! loop starts, in that table's order (integer keys ascending, then the rest in the order
//! Luau's hashing of the keys gives — the same in every run, as the keys are strings and
//! integers only).

use std::collections::HashMap;

use mlua::{AnyUserData, Lua, MetaMethod, MultiValue, Table, UserData, Value};

use crate::args::{Args, bad_arg};
use crate::type_name;

/// A SharedTable's own state; its elements are the user value (a Luau table).
pub struct SharedTable {
    frozen: bool,
    len: usize,
}

/// The datatypes a SharedTable stores: the serializable ones (those a property, attribute or
/// file can hold). Instances, functions, threads, buffers and the script-only objects
/// (`Random`, `RaycastParams`, …) are refused.
const SERIALIZABLE: &[&str] = &[
    "Axes",
    "BrickColor",
    "CFrame",
    "Color3",
    "ColorSequence",
    "ColorSequenceKeypoint",
    "Content",
    "DateTime",
    "EnumItem",
    "Faces",
    "Font",
    "NumberRange",
    "NumberSequence",
    "NumberSequenceKeypoint",
    "PhysicalProperties",
    "Ray",
    "Rect",
    "Region3",
    "Region3int16",
    "UDim",
    "UDim2",
    "Vector2",
    "Vector2int16",
    "Vector3int16",
];

impl UserData for SharedTable {
    fn add_fields<F: mlua::UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "SharedTable");
    }

    fn add_methods<M: mlua::UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("SharedTable"));
        m.add_meta_function(MetaMethod::Index, |_, (ud, k): (AnyUserData, Value)| {
            let k = key("index", &k)?;
            elements(&ud)?.raw_get::<Value>(k)
        });
        m.add_meta_function(
            MetaMethod::NewIndex,
            |lua, (ud, k, v): (AnyUserData, Value, Value)| {
                let k = key("newindex", &k)?;
                writable(&ud, "assign to")?;
                let v = storable(lua, "newindex", &v)?;
                set(&ud, k, v)
            },
        );
        m.add_meta_function(MetaMethod::Iter, |lua, ud: AnyUserData| {
            let snapshot: Vec<(Value, Value)> = elements(&ud)?
                .pairs::<Value, Value>()
                .collect::<mlua::Result<_>>()?;
            let mut items = snapshot.into_iter();
            lua.create_function_mut(move |_, _: MultiValue| {
                Ok(match items.next() {
                    Some((k, v)) => MultiValue::from_vec(vec![k, v]),
                    None => MultiValue::from_vec(vec![Value::Nil]),
                })
            })
        });
    }
}

/// The table holding `ud`'s elements.
fn elements(ud: &AnyUserData) -> mlua::Result<Table> {
    ud.user_value::<Table>()
}

/// A new, empty, unfrozen SharedTable.
fn create(lua: &Lua) -> mlua::Result<AnyUserData> {
    let ud = lua.create_userdata(SharedTable {
        frozen: false,
        len: 0,
    })?;
    ud.set_user_value(lua.create_table()?)?;
    Ok(ud)
}

/// `v` as a SharedTable, if it is one.
fn as_shared(v: &Value) -> Option<AnyUserData> {
    match v {
        Value::UserData(ud) if ud.is::<SharedTable>() => Some(ud.clone()),
        _ => None,
    }
}

/// A key as stored: a string as it is, a number only if it is an integer from 0 to 2³² − 1.
fn key(func: &str, k: &Value) -> mlua::Result<Value> {
    match k {
        Value::String(_) => Ok(k.clone()),
        Value::Integer(i) if (0..1 << 32).contains(i) => Ok(Value::Number(*i as f64)),
        Value::Number(n) if n.fract() == 0.0 && (0.0..4_294_967_296.0).contains(n) => {
            Ok(Value::Number(*n))
        }
        Value::Integer(_) | Value::Number(_) => Err(mlua::Error::runtime(format!(
            "SharedTable.{func}: a number key must be an integer from 0 to 4294967295, got {}",
            crate::args::as_number(k).unwrap_or_default()
        ))),
        other => Err(mlua::Error::runtime(format!(
            "SharedTable.{func}: keys must be strings or integers, got {}",
            type_name(other)
        ))),
    }
}

/// Errors when `ud` is frozen ("attempt to {what} a frozen SharedTable").
fn writable(ud: &AnyUserData, what: &str) -> mlua::Result<()> {
    if ud.borrow::<SharedTable>()?.frozen {
        return Err(mlua::Error::runtime(format!(
            "attempt to {what} a frozen SharedTable"
        )));
    }
    Ok(())
}

/// `v` as a SharedTable stores it: a Luau table becomes a new SharedTable, and so does every
/// table it holds, each once (a table that holds itself becomes a SharedTable that holds
/// itself). Worked through a list, not recursion, so no nesting depth overflows the stack.
fn storable(lua: &Lua, func: &str, v: &Value) -> mlua::Result<Value> {
    let Value::Table(root) = v else {
        return plain(func, v);
    };
    let mut made: HashMap<*const std::ffi::c_void, AnyUserData> = HashMap::new();
    let mut convert = |t: &Table, work: &mut Vec<(Table, AnyUserData)>| {
        if let Some(st) = made.get(&t.to_pointer()) {
            return Ok::<_, mlua::Error>(st.clone());
        }
        let st = create(lua)?;
        made.insert(t.to_pointer(), st.clone());
        work.push((t.clone(), st.clone()));
        Ok(st)
    };
    let mut work = Vec::new();
    let top = convert(root, &mut work)?;
    while let Some((t, st)) = work.pop() {
        for pair in t.pairs::<Value, Value>() {
            let (k, x) = pair?;
            let k = key(func, &k)?;
            let x = match &x {
                Value::Table(inner) => Value::UserData(convert(inner, &mut work)?),
                other => plain(func, other)?,
            };
            set(&st, k, x)?;
        }
    }
    Ok(Value::UserData(top))
}

/// A value other than a table, checked: what a SharedTable may store as it is.
fn plain(func: &str, v: &Value) -> mlua::Result<Value> {
    match v {
        Value::Nil
        | Value::Boolean(_)
        | Value::Integer(_)
        | Value::Number(_)
        | Value::Vector(_)
        | Value::String(_) => Ok(v.clone()),
        Value::UserData(ud)
            if ud.is::<SharedTable>() || SERIALIZABLE.contains(&type_name(v).as_str()) =>
        {
            Ok(v.clone())
        }
        other => Err(mlua::Error::runtime(format!(
            "SharedTable.{func}: a SharedTable cannot store a value of type {}",
            type_name(other)
        ))),
    }
}

/// Stores `v` (already checked) under `k` (already a key), keeping the count.
fn set(ud: &AnyUserData, k: Value, v: Value) -> mlua::Result<()> {
    let t = elements(ud)?;
    let had = !t.raw_get::<Value>(k.clone())?.is_nil();
    let has = !v.is_nil();
    t.raw_set(k, v)?;
    let mut st = ud.borrow_mut::<SharedTable>()?;
    match (had, has) {
        (false, true) => st.len += 1,
        (true, false) => st.len -= 1,
        _ => {}
    }
    Ok(())
}

/// `clone`/`cloneAndFreeze`: a copy of `ud` (and, when `deep`, of every SharedTable it
/// reaches, each copied once), frozen or not. Worked through a list, as [`storable`] is.
fn clone(lua: &Lua, ud: &AnyUserData, deep: bool, frozen: bool) -> mlua::Result<AnyUserData> {
    let mut made: HashMap<*const std::ffi::c_void, AnyUserData> = HashMap::new();
    let mut copies = Vec::new();
    let mut copy_of = |orig: &AnyUserData, work: &mut Vec<(AnyUserData, AnyUserData)>| {
        if let Some(copy) = made.get(&orig.to_pointer()) {
            return Ok::<_, mlua::Error>(copy.clone());
        }
        // Filled while still unfrozen, then frozen.
        let copy = create(lua)?;
        made.insert(orig.to_pointer(), copy.clone());
        work.push((orig.clone(), copy.clone()));
        copies.push(copy.clone());
        Ok(copy)
    };
    let mut work = Vec::new();
    let top = copy_of(ud, &mut work)?;
    while let Some((orig, copy)) = work.pop() {
        for pair in elements(&orig)?.pairs::<Value, Value>() {
            let (k, v) = pair?;
            let v = match as_shared(&v) {
                Some(inner) if deep => Value::UserData(copy_of(&inner, &mut work)?),
                _ => v,
            };
            set(&copy, k, v)?;
        }
    }
    for copy in copies {
        copy.borrow_mut::<SharedTable>()?.frozen = frozen;
    }
    Ok(top)
}

/// Argument `pos` of `func` as a SharedTable.
fn shared_arg(a: &Args, pos: usize) -> mlua::Result<AnyUserData> {
    as_shared(a.get(pos)).ok_or_else(|| bad_arg(pos, a.func(), "SharedTable", a.get(pos)))
}

/// Installs the `SharedTable` global: `new` and the functions of the reference.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|lua, a: MultiValue| {
            let a = Args::new("new", a);
            match a.get(1) {
                Value::Nil => create(lua),
                Value::Table(_) => match storable(lua, "new", a.get(1))? {
                    Value::UserData(ud) => Ok(ud),
                    _ => unreachable!("a table is stored as a SharedTable"),
                },
                other => Err(bad_arg(1, "new", "table", other)),
            }
        })?,
    )?;
    t.raw_set(
        "clear",
        lua.create_function(|lua, a: MultiValue| {
            let a = Args::new("clear", a);
            let ud = shared_arg(&a, 1)?;
            writable(&ud, "clear")?;
            ud.set_user_value(lua.create_table()?)?;
            ud.borrow_mut::<SharedTable>()?.len = 0;
            Ok(())
        })?,
    )?;
    for (name, frozen) in [("clone", false), ("cloneAndFreeze", true)] {
        t.raw_set(
            name,
            lua.create_function(move |lua, a: MultiValue| {
                let a = Args::new(name, a);
                let ud = shared_arg(&a, 1)?;
                let deep = match a.get(2) {
                    Value::Nil => false,
                    Value::Boolean(b) => *b,
                    other => return Err(bad_arg(2, name, "boolean", other)),
                };
                clone(lua, &ud, deep, frozen)
            })?,
        )?;
    }
    t.raw_set(
        "increment",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("increment", a);
            let ud = shared_arg(&a, 1)?;
            let k = key("increment", a.get(2))?;
            let delta = a.number(3)?;
            writable(&ud, "increment a value of")?;
            let current = elements(&ud)?.raw_get::<Value>(k.clone())?;
            let Some(old) = crate::args::as_number(&current) else {
                return Err(mlua::Error::runtime(format!(
                    "SharedTable.increment: the value of key {} is {}, not a number",
                    key_text(&k),
                    if current.is_nil() {
                        "missing".to_owned()
                    } else {
                        format!("a {}", type_name(&current))
                    }
                )));
            };
            set(&ud, k, Value::Number(old + delta))?;
            Ok(old)
        })?,
    )?;
    t.raw_set(
        "isFrozen",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("isFrozen", a);
            Ok(shared_arg(&a, 1)?.borrow::<SharedTable>()?.frozen)
        })?,
    )?;
    t.raw_set(
        "size",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("size", a);
            Ok(shared_arg(&a, 1)?.borrow::<SharedTable>()?.len)
        })?,
    )?;
    t.raw_set(
        "update",
        lua.create_function(|lua, a: MultiValue| {
            let a = Args::new("update", a);
            let ud = shared_arg(&a, 1)?;
            let k = key("update", a.get(2))?;
            let f = match a.get(3) {
                Value::Function(f) => f.clone(),
                other => return Err(bad_arg(3, "update", "function", other)),
            };
            writable(&ud, "update")?;
            let old = elements(&ud)?.raw_get::<Value>(k.clone())?;
            let new = storable(lua, "update", &f.call::<Value>(old)?)?;
            set(&ud, k, new)
        })?,
    )?;
    crate::args::install_global(lua, "SharedTable", t)
}

/// A key as an error message shows it: a string quoted, an integer as it is.
fn key_text(k: &Value) -> String {
    match k {
        Value::String(s) => format!("\"{}\"", s.to_string_lossy()),
        other => crate::args::as_number(other)
            .unwrap_or_default()
            .to_string(),
    }
}

/// `SharedTableRegistry`'s store for one run: a name → SharedTable table the host keeps.
/// `GetSharedTable(name)` returns the registered one, registering a new empty one first.
pub fn registry_get(lua: &Lua, registry: &Table, name: &str) -> mlua::Result<AnyUserData> {
    if let Some(ud) = as_shared(&registry.raw_get::<Value>(name)?) {
        return Ok(ud);
    }
    let ud = create(lua)?;
    registry.raw_set(name, ud.clone())?;
    Ok(ud)
}

/// `SetSharedTable(name, st)`: registers `st` under `name`, or unregisters the name for nil.
pub fn registry_set(registry: &Table, name: &str, st: &Value) -> mlua::Result<()> {
    match st {
        Value::Nil => registry.raw_set(name, Value::Nil),
        v if as_shared(v).is_some() => registry.raw_set(name, v.clone()),
        other => Err(bad_arg(2, "SetSharedTable", "SharedTable", other)),
    }
}
