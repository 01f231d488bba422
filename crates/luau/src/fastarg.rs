//! Arguments read straight off the Luau stack for the hottest callbacks (instance property
//! reads and writes). mlua's generic path turns every string and userdata argument into a
//! reference on its auxiliary thread (a push there and a replace on drop, ~1k instructions
//! each); these types copy out what the host needs instead: key bytes, primitive values, and
//! the plain-data Roblox datatypes (type-checked borrows, no reference made).
//!
//! This module holds the crate's only stack-level code: it implements mlua's hidden
//! `FromLua::from_stack` hook, which mlua calls with a valid stack index of the running
//! thread, and reads that slot with the C API's type-checked accessors.

use mlua::{FromLua, Lua, Value};
use procmodel_luau_types::{CFrame, Color3, EnumItem, Vector3};
use std::ffi::c_int;

/// A member name: its bytes copied inline when short (all Roblox member names are).
pub struct Key {
    len: usize,
    inline: [u8; 48],
    heap: Vec<u8>,
}

impl Key {
    pub fn bytes(&self) -> &[u8] {
        if self.len <= self.inline.len() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    fn from_bytes(b: &[u8]) -> Key {
        let mut k = Key {
            len: b.len(),
            inline: [0; 48],
            heap: Vec::new(),
        };
        if b.len() <= k.inline.len() {
            k.inline[..b.len()].copy_from_slice(b);
        } else {
            k.heap = b.to_vec();
        }
        k
    }
}

fn not_a_string(v: &Value) -> mlua::Error {
    mlua::Error::runtime(format!(
        "member name must be a string, got {}",
        procmodel_luau_types::type_name(v)
    ))
}

impl FromLua for Key {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<Key> {
        match &value {
            Value::String(s) => Ok(Key::from_bytes(&s.as_bytes())),
            _ => Err(not_a_string(&value)),
        }
    }

    unsafe fn from_stack(idx: c_int, lua: &mlua::state::RawLua) -> mlua::Result<Key> {
        let state = lua.state();
        // SAFETY: mlua passes a valid index of the running thread's stack; the string's bytes
        // stay alive while it is on the stack, and they are copied before returning.
        unsafe {
            if mlua::ffi::lua_type(state, idx) == mlua::ffi::LUA_TSTRING {
                let mut len = 0usize;
                let p = mlua::ffi::lua_tolstring(state, idx, &mut len);
                return Ok(Key::from_bytes(std::slice::from_raw_parts(
                    p as *const u8,
                    len,
                )));
            }
            let v = Value::from_stack(idx, lua)?;
            Err(not_a_string(&v))
        }
    }
}

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
            FastValue::CFrame(v) => Value::UserData(lua.create_userdata(v)?),
            FastValue::Color3(v) => Value::UserData(lua.create_userdata(v)?),
            FastValue::Enum(v) => Value::UserData(lua.create_userdata(v)?),
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
                if let Ok(v) = ud.borrow::<CFrame>() {
                    FastValue::CFrame(*v)
                } else if let Ok(v) = ud.borrow::<Color3>() {
                    FastValue::Color3(*v)
                } else if let Ok(v) = ud.borrow::<EnumItem>() {
                    FastValue::Enum(*v)
                } else {
                    FastValue::Other(value)
                }
            }
            other => FastValue::Other(other),
        })
    }

    unsafe fn from_stack(idx: c_int, lua: &mlua::state::RawLua) -> mlua::Result<FastValue> {
        use mlua::UserDataRef;
        use mlua::ffi;
        let state = lua.state();
        // SAFETY: as for `Key`: a valid index of the running thread's stack, read with the
        // type-checked accessors; userdata are borrowed through mlua's own type check.
        unsafe {
            Ok(match ffi::lua_type(state, idx) {
                ffi::LUA_TNIL => FastValue::Nil,
                ffi::LUA_TVECTOR => {
                    let p = ffi::lua_tovector(state, idx);
                    FastValue::Vector3(Vector3(glam::Vec3::new(*p, *p.add(1), *p.add(2))))
                }
                ffi::LUA_TBOOLEAN => FastValue::Bool(ffi::lua_toboolean(state, idx) != 0),
                ffi::LUA_TNUMBER => FastValue::Number(ffi::lua_tonumber(state, idx)),
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(state, idx, &mut len);
                    let bytes = std::slice::from_raw_parts(p as *const u8, len);
                    match std::str::from_utf8(bytes) {
                        Ok(s) => FastValue::Str(s.to_owned()),
                        Err(_) => FastValue::Other(Value::from_stack(idx, lua)?),
                    }
                }
                ffi::LUA_TUSERDATA => {
                    if let Ok(v) = UserDataRef::<CFrame>::from_stack(idx, lua) {
                        FastValue::CFrame(*v)
                    } else if let Ok(v) = UserDataRef::<Color3>::from_stack(idx, lua) {
                        FastValue::Color3(*v)
                    } else if let Ok(v) = UserDataRef::<EnumItem>::from_stack(idx, lua) {
                        FastValue::Enum(*v)
                    } else {
                        FastValue::Other(Value::from_stack(idx, lua)?)
                    }
                }
                _ => FastValue::Other(Value::from_stack(idx, lua)?),
            })
        }
    }
}
