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
                return Ok(Key::from_bytes(string_bytes(state, idx)));
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
            if ffi::lua_type(state, idx) == ffi::LUA_TUSERDATA {
                return Ok(if let Ok(v) = UserDataRef::<CFrame>::from_stack(idx, lua) {
                    FastValue::CFrame(*v)
                } else if let Ok(v) = UserDataRef::<Color3>::from_stack(idx, lua) {
                    FastValue::Color3(*v)
                } else if let Ok(v) = UserDataRef::<EnumItem>::from_stack(idx, lua) {
                    FastValue::Enum(*v)
                } else {
                    FastValue::Other(Value::from_stack(idx, lua)?)
                });
            }
            match plain_value(state, idx) {
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
// instance handles): they read the stack, work on the run context, and push at most a light
// userdata. Anything else (a datatype userdata, a bad argument) goes to the mlua function of
// the same behaviour, so errors and conversions stay in one place.
//
// Errors: everything Rust-owned is dropped before `lua_error` unwinds (a C++ exception
// through these `C-unwind` frames); the message gets Luau's `file:line: ` of the caller.

use mlua::ffi;

/// Makes the C closure `f` whose first upvalue is `slow`, the mlua function it hands every
/// case that is not plain.
pub fn closure(
    lua: &mlua::Lua,
    f: ffi::lua_CFunction,
    slow: mlua::Function,
) -> mlua::Result<mlua::Function> {
    // SAFETY: `slow` is pushed as the one argument; the closure takes it as its upvalue and
    // is left as the one result.
    unsafe {
        lua.exec_raw::<mlua::Function>(slow, |state| {
            ffi::lua_pushcclosure(state, f, 1);
        })
    }
}

/// Calls the closure's upvalue (the mlua function) with the whole stack as arguments.
///
/// # Safety
/// `state` is the running thread of a call of a [`closure`].
unsafe fn call_slow(state: *mut ffi::lua_State, nresults: c_int) -> c_int {
    // SAFETY: the caller's stack holds the call's arguments; upvalue 1 was set by `closure`,
    // and lua_call propagates errors by unwinding (nothing here needs dropping).
    unsafe {
        let nargs = ffi::lua_gettop(state);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, nargs, nresults);
    }
    nresults
}

/// Raises `msg` as a Luau error at the caller's line.
///
/// # Safety
/// `state` is the running thread of a C function call.
unsafe fn raise(state: *mut ffi::lua_State, msg: String) -> ! {
    // SAFETY: pushes two strings and concatenates them; `msg` is dropped before unwinding.
    unsafe {
        ffi::luaL_where(state, 1);
        ffi::lua_pushlstring(state, msg.as_ptr() as *const std::ffi::c_char, msg.len());
        drop(msg);
        ffi::lua_concat(state, 2);
        ffi::lua_error(state)
    }
}

fn message(e: mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(m) => m,
        other => other.to_string(),
    }
}

/// Runs `f`; Ok(None) means "not a plain case, use the mlua function".
///
/// # Safety
/// `state` is the running thread of a C function call.
unsafe fn dispatch(
    state: *mut ffi::lua_State,
    nresults: c_int,
    f: impl FnOnce() -> Result<Option<c_int>, String>,
) -> c_int {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    // SAFETY: as for the callees; every Rust value of `f` has been dropped by now.
    unsafe {
        match outcome {
            Ok(Ok(Some(n))) => n,
            Ok(Ok(None)) => call_slow(state, nresults),
            Ok(Err(msg)) => raise(state, msg),
            Err(_) => raise(state, "internal error in the host (a bug)".to_owned()),
        }
    }
}

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
                let p = ffi::lua_tovector(state, idx);
                FastValue::Vector3(Vector3(glam::Vec3::new(*p, *p.add(1), *p.add(2))))
            }
            ffi::LUA_TLIGHTUSERDATA => FastValue::Handle(handle(state, idx)),
            ffi::LUA_TSTRING => FastValue::Str(
                std::str::from_utf8(string_bytes(state, idx))
                    .ok()?
                    .to_owned(),
            ),
            _ => return None,
        })
    }
}

/// The bytes of the string at `idx` (the caller checked its type). They live as long as the
/// string stays in that stack slot.
///
/// # Safety
/// `idx` is a valid index of `state`'s stack holding a string.
unsafe fn string_bytes<'a>(state: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a string slot; Luau strings are immutable and pinned while referenced.
    unsafe {
        let p = ffi::lua_tolstring(state, idx, &mut len);
        std::slice::from_raw_parts(p as *const u8, len)
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

/// `__newindex(handle, key, value)` of instance handles.
///
/// # Safety
/// Called by Luau only, as the light-userdata metatable's `__newindex`.
pub unsafe extern "C-unwind" fn raw_newindex(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Luau calls a `__newindex` metamethod with exactly three stack slots.
    unsafe {
        dispatch(state, 0, || {
            if ffi::lua_type(state, 1) != ffi::LUA_TLIGHTUSERDATA
                || ffi::lua_type(state, 2) != ffi::LUA_TSTRING
            {
                return Ok(None);
            }
            let Some(value) = plain_value(state, 3) else {
                return Ok(None);
            };
            // The key stays on the stack (slot 2) for the whole call.
            let key = string_bytes(state, 2);
            let lua = mlua::Lua::get_or_init_from_ptr(state);
            let mut c = crate::context::ctx(lua).map_err(message)?;
            match crate::instance::write_direct(&mut c, &handle(state, 1), key, value) {
                Ok(crate::instance::Direct::Done) => Ok(Some(0)),
                Ok(crate::instance::Direct::General(..)) => Ok(None),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `Instance.new(className, parent?)`.
///
/// # Safety
/// Called by Luau only, as a C function.
pub unsafe extern "C-unwind" fn raw_instance_new(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: reads at most two arguments with type-checked accessors; pushes one light
    // userdata, which neither allocates nor raises.
    unsafe {
        dispatch(state, 1, || {
            let top = ffi::lua_gettop(state);
            if !(1..=2).contains(&top) || ffi::lua_type(state, 1) != ffi::LUA_TSTRING {
                return Ok(None);
            }
            let parent = match ffi::lua_type(state, 2) {
                ffi::LUA_TNIL | ffi::LUA_TNONE => Value::Nil,
                ffi::LUA_TLIGHTUSERDATA => handle(state, 2),
                _ => return Ok(None),
            };
            let Ok(class) = std::str::from_utf8(string_bytes(state, 1)) else {
                return Ok(None);
            };
            let lua = mlua::Lua::get_or_init_from_ptr(state);
            let mut c = crate::context::ctx(lua).map_err(message)?;
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
