//! Raw C-API callbacks for the hottest calls (instance property writes, `Instance.new`, the
//! CFrame/Color3 constructors and CFrame `*`). mlua's callback machinery costs ~1.5–2k
//! instructions a call; these read the stack with the C API's type-checked accessors, and
//! hand every case that is not plain (a bad argument, a rare overload) to an mlua function of
//! the same behaviour, kept as the closure's upvalue, so errors and conversions stay in one
//! place.
//!
//! Errors: everything Rust-owned is dropped before `lua_error` unwinds (a C++ exception
//! through these `C-unwind` frames); the message gets Luau's `file:line: ` of the caller.
//! Allocation (which may raise a memory error) happens only outside `catch_unwind`.

use mlua::{FromLua, Lua, Value, ffi};
use std::ffi::c_int;

/// Makes the C closure `f` whose first upvalue is `slow`, the mlua function it hands every
/// case that is not plain.
pub fn closure(
    lua: &Lua,
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

/// [`closure`] with more upvalues (2, 3, ... in order) that the raw function reads: a
/// methods table, a light userdata...
pub fn closure_with(
    lua: &Lua,
    f: ffi::lua_CFunction,
    slow: mlua::Function,
    extra: impl mlua::IntoLuaMulti,
) -> mlua::Result<mlua::Function> {
    let mut args = extra.into_lua_multi(lua)?;
    args.push_front(mlua::Value::Function(slow));
    let n = args.len() as c_int;
    // SAFETY: the `n` values are pushed as arguments and become the closure's upvalues.
    unsafe {
        lua.exec_raw::<mlua::Function>(args, |state| {
            ffi::lua_pushcclosure(state, f, n);
        })
    }
}

/// Calls the closure's upvalue (the mlua function) with the whole stack as arguments.
///
/// # Safety
/// `state` is the running thread of a call of a [`closure`].
pub unsafe fn call_slow(state: *mut ffi::lua_State, nresults: c_int) -> c_int {
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

/// In a raw `__index(self, key)` closure made by [`closure_with`] with a methods table: the
/// method the key names, else the mlua function's answer (upvalue 1).
///
/// # Safety
/// `state` is the running thread of such a call, with `self` and `key` at 1 and 2.
pub unsafe fn method_or_slow(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: a raw lookup in the upvalue table, then the fallback call.
    unsafe {
        ffi::lua_pushvalue(state, 2);
        if ffi::lua_rawget(state, ffi::lua_upvalueindex(2)) != ffi::LUA_TNIL {
            return 1;
        }
        ffi::lua_settop(state, 2);
        call_slow(state, 1)
    }
}

/// Raises `msg` as a Luau error at the caller's line.
///
/// # Safety
/// `state` is the running thread of a C function call.
pub(crate) unsafe fn raise(state: *mut ffi::lua_State, msg: String) -> ! {
    // SAFETY: pushes two strings and concatenates them; `msg` is dropped before unwinding.
    unsafe {
        ffi::luaL_where(state, 1);
        ffi::lua_pushlstring(state, msg.as_ptr() as *const std::ffi::c_char, msg.len());
        drop(msg);
        ffi::lua_concat(state, 2);
        ffi::lua_error(state)
    }
}

/// The text of an mlua error, as a raw callback raises it.
pub fn message(e: mlua::Error) -> String {
    match e {
        mlua::Error::RuntimeError(m) => m,
        other => other.to_string(),
    }
}

/// Runs `f` (which must not touch the Luau stack); Ok(None) means "not a plain case, use the
/// mlua function".
///
/// # Safety
/// `state` is the running thread of a call of a [`closure`].
pub unsafe fn dispatch(
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

/// The number at `idx`, if it is one (no string coercion, as the mlua paths).
///
/// # Safety
/// `idx` is a valid or absent index of `state`'s stack.
pub unsafe fn number(state: *mut ffi::lua_State, idx: c_int) -> Option<f64> {
    // SAFETY: type-checked accessors.
    unsafe {
        (ffi::lua_type(state, idx) == ffi::LUA_TNUMBER).then(|| ffi::lua_tonumber(state, idx))
    }
}

/// The number at `idx`, `default` when nil or absent; None for anything else.
///
/// # Safety
/// As for [`number`].
pub unsafe fn opt_number(state: *mut ffi::lua_State, idx: c_int, default: f64) -> Option<f64> {
    // SAFETY: type-checked accessors.
    unsafe {
        match ffi::lua_type(state, idx) {
            ffi::LUA_TNIL | ffi::LUA_TNONE => Some(default),
            ffi::LUA_TNUMBER => Some(ffi::lua_tonumber(state, idx)),
            _ => None,
        }
    }
}

/// The vector at `idx`, if it is one.
///
/// # Safety
/// As for [`number`].
pub unsafe fn vector(state: *mut ffi::lua_State, idx: c_int) -> Option<glam::Vec3> {
    // SAFETY: lua_tovector returns null unless the slot holds a vector of three floats.
    unsafe {
        let p = ffi::lua_tovector(state, idx);
        (!p.is_null()).then(|| glam::Vec3::new(*p, *p.add(1), *p.add(2)))
    }
}

/// The bytes of the string at `idx` (the caller checked its type). They live as long as the
/// string stays in that stack slot.
///
/// # Safety
/// `idx` is a valid index of `state`'s stack holding a string.
pub unsafe fn string_bytes<'a>(state: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a string slot; Luau strings are immutable and pinned while referenced.
    unsafe {
        let p = ffi::lua_tolstring(state, idx, &mut len);
        std::slice::from_raw_parts(p as *const u8, len)
    }
}

/// The bytes of the string at `idx`, or None when it holds anything else (numbers are not
/// converted): one C API call where a type check and a read would be two.
///
/// # Safety
/// `idx` is a valid index of `state`'s stack; the slice lives as long as the slot holds it.
pub unsafe fn string_at<'a>(state: *mut ffi::lua_State, idx: c_int) -> Option<&'a [u8]> {
    let mut len = 0usize;
    // SAFETY: `lua_tolstringatom` returns NULL for a non-string and never converts.
    unsafe {
        let p = ffi::lua_tolstringatom(state, idx, &mut len, std::ptr::null_mut());
        (!p.is_null()).then(|| std::slice::from_raw_parts(p as *const u8, len))
    }
}

/// The pointer of the light userdata at `idx`, or None when it holds anything else (or a
/// null light userdata, which instance handles never are).
///
/// # Safety
/// `idx` is a valid index of `state`'s stack.
pub unsafe fn light_at(state: *mut ffi::lua_State, idx: c_int) -> Option<*mut std::ffi::c_void> {
    // SAFETY: returns NULL for anything but a light userdata.
    let p = unsafe { ffi::lua_tolightuserdata(state, idx) };
    (!p.is_null()).then_some(p)
}

/// A member name: its bytes copied inline when short (all Roblox member names are). As an
/// mlua argument it is read straight off the stack (no string reference is made).
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

    /// The name as text (lossy for invalid UTF-8), for messages.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.bytes())
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
        crate::type_name(v)
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
            if ffi::lua_type(state, idx) == ffi::LUA_TSTRING {
                return Ok(Key::from_bytes(string_bytes(state, idx)));
            }
            let v = Value::from_stack(idx, lua)?;
            Err(not_a_string(&v))
        }
    }
}
