//! Raw C-API callbacks for the hottest calls (instance property writes, `Instance.new`, the
//! CFrame/Color3 constructors and CFrame `*`). mlua's callback machinery costs ~1.5–2k
//! instructions a call; these read their arguments' stack slots in place (once a check at VM
//! start-up has confirmed Luau's layouts against the C API; its type-checked accessors
//! otherwise), and
//! hand every case that is not plain (a bad argument, a rare overload) to an mlua function of
//! the same behaviour, kept as the closure's upvalue, so errors and conversions stay in one
//! place.
//!
//! Errors: everything Rust-owned is dropped before `lua_error` unwinds (a C++ exception
//! through these `C-unwind` frames); the message gets Luau's `file:line: ` of the caller.
//! Allocation (which may raise a memory error) happens only outside `catch_unwind`.

use mlua::{FromLua, Lua, Value, ffi};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

// ----- direct reads of a C function's arguments --------------------------------------------
//
// A C API accessor costs a call and an index check (`lua_type` + `lua_tonumber` for a number:
// two of each); the hot callbacks read their arguments' slots in place instead. This relies
// on Luau's layouts (checked at run time by `tagged::enable_direct_reads`, which turns the
// direct reads on only when every one of them gives what the C API gives; off, every reader
// below uses the C API as before):
// - `lua_State` (`lstate.h`) starts with 8 bytes of header and flags, then `StkId top` and
//   `StkId base`; a C function's argument `i` is `base[i - 1]`, present while below `top`;
// - a stack slot (`TValue`, `lobject.h`, `LUA_VECTOR_SIZE` 3) is the value's 8 bytes, one
//   extra word (a vector's z, a light userdata's tag), then the type tag;
// - a userdata (`Udata`) has its tag byte at offset 3 and its block at offset 16;
// - a string (`TString`) has its length (`unsigned int`) at offset 20 and its bytes at 24.

/// `Udata` (lobject.h: `tt, marked, memcat, tag: u8; len: i32; metatable: *Table`, then the
/// block): where its tag byte, its length and its block are. `tagged` reads userdata
/// headers back from their blocks with the same numbers.
pub(crate) const UDATA_TAG: usize = 3;
pub(crate) const UDATA_LEN: usize = 4;
pub(crate) const UDATA_BLOCK: usize = 16;
/// `TString` (lobject.h): where its length (`unsigned int`) and its bytes are.
const TSTRING_LEN: usize = 20;
const TSTRING_BYTES: usize = 24;

/// One stack slot, as Luau lays it out (see above). Only [`arg`] hands one out, so a `&Slot`
/// is a live argument of the running C function: its readers may follow its pointer.
#[repr(C)]
pub struct Slot {
    value: u64,
    extra: u32,
    tt: c_int,
}

/// The head of a `lua_State`: header and flags, then `top` and `base`.
#[repr(C)]
struct StateHead {
    _flags: [u8; 8],
    top: *const Slot,
    base: *const Slot,
}

static DIRECT: AtomicBool = AtomicBool::new(false);

/// Turns the direct reads on or off (`tagged::enable_direct_reads` decides).
pub(crate) fn set_direct_reads(on: bool) {
    DIRECT.store(on, Ordering::Relaxed);
}

/// For tests: turns the direct reads off (or on without the check) to compare both paths.
#[doc(hidden)]
pub fn set_direct_reads_for_tests(on: bool) {
    set_direct_reads(on);
}

/// Whether the readers read slots directly.
pub fn direct_reads() -> bool {
    DIRECT.load(Ordering::Relaxed)
}

/// The slot of argument `idx` of the running C function: `Some(None)` when absent, `None`
/// when direct reads are off (then use the C API).
///
/// # Safety
/// `state` is the thread running a C function and `idx` one of its argument indices
/// (positive; stack-relative and pseudo indices get `None`).
#[inline(always)]
pub unsafe fn arg<'a>(state: *mut ffi::lua_State, idx: c_int) -> Option<Option<&'a Slot>> {
    if idx <= 0 || !DIRECT.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: the layout above holds (checked before `DIRECT` was set).
    Some(unsafe { arg_unchecked(state, idx) })
}

/// Whether `state`'s head gives `base` at `fifth_value` − 4 slots (the address of argument
/// 5's value, as `lua_tovector` returns it) and `top` `count` slots above `base`. Compares
/// addresses only: nothing is dereferenced but the head itself.
///
/// # Safety
/// `state` is a live thread.
pub(crate) unsafe fn stack_layout_matches(
    state: *mut ffi::lua_State,
    fifth_value: *const u8,
    count: usize,
) -> bool {
    // SAFETY: every `lua_State` is larger than its first 24 bytes; the pointers read are
    // only compared.
    let head = unsafe { &*(state as *const StateHead) };
    !fifth_value.is_null()
        && head.base.wrapping_add(4) as *const u8 == fifth_value
        && head.top == head.base.wrapping_add(count)
}

/// Whether a string slot's value is the header `bytes` (`lua_tolstring`'s) are 24 bytes into.
pub(crate) fn string_bytes_match(slot: &Slot, bytes: *const u8) -> bool {
    slot.tt == ffi::LUA_TSTRING
        && !bytes.is_null()
        && (slot.value as usize).wrapping_add(TSTRING_BYTES) == bytes as usize
}

/// Whether a userdata slot's value is the header `block` (its data) is 16 bytes into.
pub(crate) fn userdata_block_matches(slot: &Slot, block: *const u8) -> bool {
    slot.tt == ffi::LUA_TUSERDATA
        && !block.is_null()
        && (slot.value as usize).wrapping_add(UDATA_BLOCK) == block as usize
}

/// [`arg`] whether or not direct reads are on (for the check that turns them on).
///
/// # Safety
/// As for [`arg`], with `idx` positive, and the layout above must hold.
#[inline(always)]
pub(crate) unsafe fn arg_unchecked<'a>(state: *mut ffi::lua_State, idx: c_int) -> Option<&'a Slot> {
    // SAFETY: slots from `base` up to `top` are the running function's live arguments.
    unsafe {
        let head = &*(state as *const StateHead);
        let p = head.base.add(idx as usize - 1);
        (p < head.top).then(|| &*p)
    }
}

impl Slot {
    /// The type tag (`lua_type`'s result for a present slot).
    #[inline(always)]
    pub fn ty(&self) -> c_int {
        self.tt
    }

    #[inline(always)]
    pub fn number(&self) -> Option<f64> {
        (self.tt == ffi::LUA_TNUMBER).then(|| f64::from_bits(self.value))
    }

    #[inline(always)]
    pub fn boolean(&self) -> Option<bool> {
        (self.tt == ffi::LUA_TBOOLEAN).then_some(self.value as u32 != 0)
    }

    #[inline(always)]
    pub fn vector(&self) -> Option<glam::Vec3> {
        (self.tt == ffi::LUA_TVECTOR).then(|| {
            glam::Vec3::new(
                f32::from_bits(self.value as u32),
                f32::from_bits((self.value >> 32) as u32),
                f32::from_bits(self.extra),
            )
        })
    }

    /// A light userdata's pointer (null ones included).
    #[inline(always)]
    pub fn light(&self) -> Option<*mut std::ffi::c_void> {
        (self.tt == ffi::LUA_TLIGHTUSERDATA).then_some(self.value as usize as *mut std::ffi::c_void)
    }

    /// A string's bytes (`lua_tolstringatom`); they live while the string is referenced.
    #[inline(always)]
    pub fn string<'a>(&self) -> Option<&'a [u8]> {
        if self.tt != ffi::LUA_TSTRING {
            return None;
        }
        let ts = self.value as usize as *const u8;
        // SAFETY: a string slot points at a live, immutable `TString` (layout above).
        unsafe {
            let len = std::ptr::read_unaligned(ts.add(TSTRING_LEN) as *const u32) as usize;
            Some(std::slice::from_raw_parts(ts.add(TSTRING_BYTES), len))
        }
    }

    /// The block of a userdata with tag `tag` (`lua_touserdatatagged`).
    #[inline(always)]
    pub fn userdata_tagged(&self, tag: c_int) -> Option<*const u8> {
        if self.tt != ffi::LUA_TUSERDATA {
            return None;
        }
        let u = self.value as usize as *const u8;
        // SAFETY: a userdata slot points at a live `Udata` (layout above).
        unsafe { (*u.add(UDATA_TAG) as c_int == tag).then(|| u.add(UDATA_BLOCK)) }
    }
}

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

/// `lua_type` of the value at `idx` (`LUA_TNONE` when absent).
///
/// # Safety
/// `idx` is a valid or absent index of `state`'s stack.
pub unsafe fn type_at(state: *mut ffi::lua_State, idx: c_int) -> c_int {
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.map_or(ffi::LUA_TNONE, Slot::ty);
    }
    // SAFETY: as the caller promises.
    unsafe { ffi::lua_type(state, idx) }
}

/// The boolean at `idx`, if it is one.
///
/// # Safety
/// `idx` is a valid or absent index of `state`'s stack.
pub unsafe fn boolean(state: *mut ffi::lua_State, idx: c_int) -> Option<bool> {
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.and_then(Slot::boolean);
    }
    // SAFETY: type-checked accessors.
    unsafe {
        (ffi::lua_type(state, idx) == ffi::LUA_TBOOLEAN)
            .then(|| ffi::lua_toboolean(state, idx) != 0)
    }
}

/// The number at `idx`, if it is one (no string coercion, as the mlua paths).
///
/// # Safety
/// `idx` is a valid or absent index of `state`'s stack.
pub unsafe fn number(state: *mut ffi::lua_State, idx: c_int) -> Option<f64> {
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.and_then(Slot::number);
    }
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
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return match slot {
            None => Some(default),
            Some(s) if s.ty() == ffi::LUA_TNIL => Some(default),
            Some(s) => s.number(),
        };
    }
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
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.and_then(Slot::vector);
    }
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
    // SAFETY: as the caller promises.
    if let Some(Some(bytes)) = unsafe { arg(state, idx) }.map(|s| s.and_then(Slot::string)) {
        return bytes;
    }
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
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.and_then(Slot::string);
    }
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
    // SAFETY: as the caller promises.
    if let Some(slot) = unsafe { arg(state, idx) } {
        return slot.and_then(Slot::light).filter(|p| !p.is_null());
    }
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
