//! Arguments read straight off the Luau stack for the hottest callbacks (instance property
//! reads and writes). mlua's generic path turns every string and userdata argument into a
//! reference on its auxiliary thread (a push there and a replace on drop, ~1k instructions
//! each); these types copy out what the host needs instead: key bytes, primitive values, and
//! the plain-data Roblox datatypes (tag-checked copies, no reference made).
//!
//! This module holds the crate's only stack-level code: it implements mlua's hidden
//! `FromLua::from_stack` hook, which mlua calls with a valid stack index of the running
//! thread, and reads that slot with the C API's type-checked accessors.

use mlua::{FromLua, IntoLua, Lua, Value};
use procmodel_luau_types::{CFrame, Color3, EnumItem, Vector3};
use std::ffi::c_int;

pub use procmodel_luau_types::raw::Key;

/// A value assigned to a property.
pub enum FastValue {
    Nil,
    Bool(bool),
    Number(f64),
    Str(String),
    /// An instance handle (light userdata pointer value).
    Handle(Value),
    Vector3(Vector3),
    CFrame(CFrame),
    Color3(Color3),
    Enum(EnumItem),
    Other(Value),
}

impl FastValue {
    /// Back to a Luau value, for the general conversion path and its error messages.
    pub fn into_value(self, lua: &Lua) -> mlua::Result<Value> {
        Ok(match self {
            FastValue::Nil => Value::Nil,
            FastValue::Bool(b) => Value::Boolean(b),
            FastValue::Number(n) => Value::Number(n),
            FastValue::Str(s) => Value::String(lua.create_string(s)?),
            FastValue::Handle(v) | FastValue::Other(v) => v,
            FastValue::Vector3(v) => v.value(),
            FastValue::CFrame(v) => v.into_lua(lua)?,
            FastValue::Color3(v) => v.into_lua(lua)?,
            FastValue::Enum(v) => procmodel_luau_types::enum_item_value(lua, v)?,
        })
    }
}

impl FromLua for FastValue {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<FastValue> {
        Ok(match value {
            Value::Nil => FastValue::Nil,
            Value::Boolean(b) => FastValue::Bool(b),
            Value::Integer(n) => FastValue::Number(n as f64),
            Value::Number(n) => FastValue::Number(n),
            Value::LightUserData(_) => FastValue::Handle(value),
            Value::Vector(v) => FastValue::Vector3(Vector3(glam::Vec3::new(v.x(), v.y(), v.z()))),
            Value::UserData(ref ud) => {
                if let Some(v) = tagged::from_userdata::<CFrame>(ud) {
                    FastValue::CFrame(v)
                } else if let Some(v) = tagged::from_userdata::<Color3>(ud) {
                    FastValue::Color3(v)
                } else if let Some(v) = tagged::from_userdata::<EnumItem>(ud) {
                    FastValue::Enum(v)
                } else {
                    FastValue::Other(value)
                }
            }
            other => FastValue::Other(other),
        })
    }

    unsafe fn from_stack(idx: c_int, lua: &mlua::state::RawLua) -> mlua::Result<FastValue> {
        // SAFETY: mlua passes a valid index of the running thread's stack.
        unsafe {
            match plain_value(lua.state(), idx) {
                Some(v) => Ok(v),
                None => Ok(FastValue::Other(Value::from_stack(idx, lua)?)),
            }
        }
    }
}

// ----- raw C callbacks -------------------------------------------------------------------
//
// The two calls every generated part makes (`Instance.new` and property writes) skip mlua's
// callback machinery when their arguments are plain (strings, numbers, booleans, vectors,
// instance handles, CFrame/Color3/EnumItem values): they read the stack, work on the run
// context, and push at most a light userdata. Anything else (another datatype, a bad
// argument) goes to the mlua function of the same behaviour (see
// `procmodel_luau_types::raw`).

use mlua::ffi;

use procmodel_luau_types::raw::{dispatch, light_at, message, string_at, string_bytes};
use procmodel_luau_types::tagged;

/// A plain value at stack index `idx`, or None for a userdata, table, function...
///
/// # Safety
/// `idx` is a valid index of `state`'s stack; the string case borrows the stack slot's bytes
/// only for the copy.
unsafe fn plain_value(state: *mut ffi::lua_State, idx: c_int) -> Option<FastValue> {
    // SAFETY: type-checked accessors on a valid index.
    unsafe {
        Some(match ffi::lua_type(state, idx) {
            ffi::LUA_TNIL => FastValue::Nil,
            ffi::LUA_TBOOLEAN => FastValue::Bool(ffi::lua_toboolean(state, idx) != 0),
            ffi::LUA_TNUMBER => FastValue::Number(ffi::lua_tonumber(state, idx)),
            ffi::LUA_TVECTOR => {
                FastValue::Vector3(Vector3(procmodel_luau_types::raw::vector(state, idx)?))
            }
            ffi::LUA_TLIGHTUSERDATA => FastValue::Handle(handle(state, idx)),
            ffi::LUA_TUSERDATA => {
                if let Some(v) = tagged::get::<CFrame>(state, idx) {
                    FastValue::CFrame(v)
                } else if let Some(v) = tagged::get::<Color3>(state, idx) {
                    FastValue::Color3(v)
                } else {
                    FastValue::Enum(tagged::get::<EnumItem>(state, idx)?)
                }
            }
            ffi::LUA_TSTRING => FastValue::Str(
                std::str::from_utf8(string_bytes(state, idx))
                    .ok()?
                    .to_owned(),
            ),
            _ => return None,
        })
    }
}

/// The light userdata at `idx` as the handle value the run context resolves.
///
/// # Safety
/// `idx` holds a light userdata.
unsafe fn handle(state: *mut ffi::lua_State, idx: c_int) -> Value {
    // SAFETY: reads the pointer value of a light userdata.
    Value::LightUserData(mlua::LightUserData(unsafe {
        ffi::lua_touserdata(state, idx)
    }))
}

/// `__newindex(handle, key, value)` of instance handles (upvalue 2: the run context's cell).
///
/// # Safety
/// Called by Luau only, as the light-userdata metatable's `__newindex`.
pub unsafe extern "C-unwind" fn raw_newindex(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Luau calls a `__newindex` metamethod with exactly three stack slots.
    unsafe {
        dispatch(state, 0, || {
            // The key stays on the stack (slot 2) for the whole call.
            let (Some(this), Some(key)) = (light_at(state, 1), string_at(state, 2)) else {
                return Ok(None);
            };
            let Some(value) = plain_value(state, 3) else {
                return Ok(None);
            };
            let mut c = crate::context::cell_upvalue(state, 2)?;
            let this = Value::LightUserData(mlua::LightUserData(this));
            match crate::instance::write_direct(&mut c, &this, key, value) {
                Ok(crate::instance::Direct::Done) => Ok(Some(0)),
                Ok(crate::instance::Direct::General(..)) => Ok(None),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `Instance.new(className, parent?)` (upvalue 2: the run context's cell).
///
/// # Safety
/// Called by Luau only, as a C function.
pub unsafe extern "C-unwind" fn raw_instance_new(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: reads at most two arguments with type-checked accessors; pushes one light
    // userdata, which neither allocates nor raises.
    unsafe {
        dispatch(state, 1, || {
            let top = ffi::lua_gettop(state);
            let Some(class) = string_at(state, 1).filter(|_| (1..=2).contains(&top)) else {
                return Ok(None);
            };
            let parent = match ffi::lua_type(state, 2) {
                ffi::LUA_TNIL | ffi::LUA_TNONE => Value::Nil,
                ffi::LUA_TLIGHTUSERDATA => handle(state, 2),
                _ => return Ok(None),
            };
            let Ok(class) = std::str::from_utf8(class) else {
                return Ok(None);
            };
            let mut c = crate::context::cell_upvalue(state, 2)?;
            match crate::globals::new_instance(&mut c, class, &parent) {
                Ok(Value::LightUserData(h)) => {
                    // C functions always have room for one push; it cannot raise.
                    ffi::lua_pushlightuserdata(state, h.0);
                    Ok(Some(1))
                }
                Ok(_) => Err("internal error: Instance.new made no handle".to_owned()),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `Terrain:FillBlock(cframe, size, material)` (upvalue 1: the mlua method), the call the
/// terrain tutorial makes once per grid column.
///
/// # Safety
/// Called by Luau only, as a C function made by `MethodTable::add_raw_method`.
pub unsafe extern "C-unwind" fn raw_fill_block(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: reads four arguments with type-checked accessors and pushes nothing; the Lua
    // handle is the one mlua keeps for this state (it created it).
    unsafe {
        dispatch(state, 0, || {
            if ffi::lua_gettop(state) != 4 || ffi::lua_type(state, 3) != ffi::LUA_TVECTOR {
                return Ok(None);
            }
            let (Some(this), Some(cf), Some(size), Some(material)) = (
                light_at(state, 1),
                tagged::get::<CFrame>(state, 2),
                procmodel_luau_types::raw::vector(state, 3),
                tagged::get::<EnumItem>(state, 4),
            ) else {
                return Ok(None);
            };
            let lua = Lua::get_or_init_from_ptr(state);
            let this = Value::LightUserData(mlua::LightUserData(this));
            match crate::classes::fill_block_direct(lua, &this, cf, size, material) {
                Ok(Some(())) => Ok(Some(0)),
                Ok(None) => Ok(None),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `__index(handle, key)` of instance handles: the common property reads and the methods
/// (upvalue 2, a table) without mlua, on the run context of upvalue 3; everything else (derived properties, enums, children by
/// name, errors) goes to the mlua function (upvalue 1).
///
/// # Safety
/// Called by Luau only, as the light-userdata metatable's `__index`.
pub unsafe extern "C-unwind" fn raw_index(state: *mut ffi::lua_State) -> c_int {
    use crate::instance::Read;
    // SAFETY: an `__index` call (handle, key); the read runs under catch_unwind without
    // touching the stack, and its result is pushed afterwards (at most one allocation).
    unsafe {
        let (Some(this), Some(key)) = (light_at(state, 1), string_at(state, 2)) else {
            return procmodel_luau_types::raw::call_slow(state, 1);
        };
        let this = Value::LightUserData(mlua::LightUserData(this));
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut c = crate::context::cell_upvalue(state, 3).ok()?;
            crate::instance::read_direct(&mut c, &this, key)
                .ok()
                .flatten()
        }));
        match read {
            Ok(Some(Read::Nil)) => ffi::lua_pushnil(state),
            Ok(Some(Read::Bool(b))) => ffi::lua_pushboolean(state, b as c_int),
            Ok(Some(Read::Number(n))) => ffi::lua_pushnumber(state, n),
            Ok(Some(Read::Str(s))) => {
                ffi::lua_pushlstring(state, s.as_ptr() as *const std::ffi::c_char, s.len());
            }
            Ok(Some(Read::Vector(v))) => ffi::lua_pushvector(state, v.x, v.y, v.z),
            Ok(Some(Read::CFrame(cf))) => tagged::push(state, cf),
            Ok(Some(Read::Color3(c3))) => tagged::push(state, c3),
            Ok(Some(Read::Handle(p))) => ffi::lua_pushlightuserdata(state, p),
            Ok(Some(Read::Method)) => return procmodel_luau_types::raw::method_or_slow(state),
            // Errors and the general cases: the mlua function says what is wrong.
            Ok(None) | Err(_) => return procmodel_luau_types::raw::call_slow(state, 1),
        }
        1
    }
}
