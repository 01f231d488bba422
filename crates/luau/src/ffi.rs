//! The crate's only code below mlua's documented safe API: raw C callbacks and stack reads for
//! the hottest calls, the interrupt's fast path, thread globals, the run context's address in
//! raw callbacks and instance handles as light userdata. A bump of mlua or Luau re-checks this
//! file (its tests do most of that) and `procmodel-luau-types`' `raw` and `tagged` modules,
//! which hold the rest (C closures and their argument readers — stack slots read in place,
//! turned on by `tagged::enable_direct_reads` only when Luau's `lua_State`, `TValue`,
//! `Udata` and `TString` layouts check out against the C API — `Key::from_stack`, tagged userdata and their
//! layout), with tests of their own.
//!
//! Generic over what it serves, so it imports nothing above it but the watchdog's flag reader:
//! the raw callbacks call traits the layers above implement ([`PropertyAccess`] and
//! [`NewInstance`] for the run context, [`FillBlock`] for Terrain) and are instantiated where
//! those layers make the closures: the calls are static, as if written in place.
//!
//! # What this relies on (each has a test below that fails when it no longer holds)
//! 1. mlua calls the hidden `FromLua::from_stack` hook for the arguments of functions made
//!    with `create_function`, with a valid index of the running thread's stack: [`FastValue`]
//!    copies the slot from there (`mlua_reads_arguments_with_from_stack`).
//! 2. A light userdata carries any pointer-sized value intact; one mlua pushes
//!    (`Value::LightUserData`) and one `lua_pushlightuserdata` pushes are the same Luau value
//!    (`rawequal`, table keys), and `set_type_metatable::<LightUserData>` is the metatable of
//!    both: instance handles ([`handle_value`], [`handle_of`], the raw callbacks)
//!    (`light_userdata_handles_round_trip`).
//! 3. mlua keeps every app data in a box of its own: its address stays the same until it is
//!    replaced or removed, whatever else is added or removed ([`pinned_app_data`])
//!    (`app_data_does_not_move`).
//! 4. A light userdata upvalue of a C closure made by `exec_raw` reads back with
//!    `lua_touserdata` as the address it was made from (the run context's cell:
//!    [`address_value`], `cell_upvalue`) (`an_upvalue_address_reads_back`).
//! 5. `Lua::get_or_init_from_ptr` in a raw C function, on the main thread or a coroutine of a
//!    VM mlua made, returns that VM's `Lua` ([`raw_fill_block`])
//!    (`get_or_init_from_ptr_finds_the_vm_from_any_thread`).
//! 6. `Lua::set_interrupt` installs mlua's entry as the `interrupt` of `lua_callbacks` (shared by
//!    every thread of the VM) and nothing in mlua replaces it later (`sandbox` included); mlua
//!    leaves the main thread's `lua_setthreaddata` slot unused; its entry runs the host's
//!    callback when called with `gc < 0` and ignores GC-step calls, which Luau makes while
//!    the heap grows ([`install_fast_interrupt`])
//!    (`the_fast_interrupt_takes_over_mluas_entry`, `gc_steps_flag_the_memory_check`).
//! 7. `exec_raw` pushes its arguments at stack indices 1..=n; a thread from `create_thread` is
//!    a fresh coroutine (not a recycled one with another's globals), and
//!    `lua_replace(thread, LUA_GLOBALSINDEX)` sets its globals, `getfenv(0)`
//!    ([`set_thread_globals`]) (`a_new_threads_globals_are_replaced`).
//! 8. Luau's `lua_State` holds its `global_State*` at byte 24, and `global_State` holds the
//!    VM's allocation function and its userdata at bytes 16 and 24 (both checked against
//!    `lua_getallocf` before anything is written); mlua's allocator userdata starts with the
//!    bytes in use as an `isize` (checked against `Lua::used_memory`), mlua's allocator
//!    takes blocks from the global allocator with 16-byte alignment, and mlua frees the VM
//!    (`lua_close`) before it drops the app data ([`with_arena_heap`])
//!    (`the_heap_moves_into_an_arena_and_addresses_repeat`).

use crate::watchdog::Probe;
use mlua::{FromLua, Function, IntoLua, LightUserData, Lua, Table, Thread, Value, ffi};
use procmodel_alloc::arena::Arena;
use procmodel_luau_types::raw::{dispatch, light_at, message, string_at, string_bytes};
use procmodel_luau_types::tagged;
use procmodel_luau_types::{CFrame, Color3, EnumItem, Vector3};
use std::cell::{Cell, RefCell, RefMut};
use std::ffi::{c_int, c_void};

// ----- instance handles and the run context's address ------------------------------------

/// The Luau value of instance handle `h`: a light userdata whose pointer value *is* the
/// handle (nothing ever dereferences it).
#[inline]
pub fn handle_value(h: u64) -> Value {
    Value::LightUserData(LightUserData(h as usize as *mut c_void))
}

/// The handle a Luau value carries, if it is a light userdata (the only light userdata in
/// these VMs are instance handles).
#[inline]
pub fn handle_of(v: &Value) -> Option<u64> {
    match v {
        Value::LightUserData(p) => Some(p.0 as usize as u64),
        _ => None,
    }
}

/// App data `T` as a plain reference for as long as `lua` is borrowed: mlua's guard is let go
/// at once, so holding the reference costs no app-data lookup later (raw callbacks keep the
/// address as an upvalue, see [`address_value`]).
///
/// # Safety
/// App data of type `T` is never replaced or removed while the VM lives.
pub unsafe fn pinned_app_data<T: 'static>(lua: &Lua) -> Result<Option<&T>, std::cell::BorrowError> {
    let Some(guard) = lua.try_app_data_ref::<T>()? else {
        return Ok(None);
    };
    let p: *const T = &*guard;
    drop(guard);
    // SAFETY: mlua boxes app data, so `p` stays valid until the entry is replaced or removed,
    // which the caller rules out while the VM lives; the VM outlives the borrow of `lua`.
    Ok(Some(unsafe { &*p }))
}

/// `p`'s address as a light userdata, for a raw closure's upvalue (never handed to scripts:
/// Luau has no way to read a C closure's upvalues).
pub fn address_value<T>(p: &T) -> Value {
    Value::LightUserData(LightUserData(p as *const T as *mut c_void))
}

/// A run context that raw callbacks reach through an upvalue holding the address of its
/// `RefCell` (made with [`address_value`] from a cell that lives as long as the VM).
pub trait RawContext: Sized + 'static {
    /// What a raw callback raises when the context is already borrowed.
    const BUSY: &'static str;
}

/// Borrows the run context whose cell's address is upvalue `n` of the running C closure.
///
/// # Safety
/// `state` runs a C closure of this VM whose upvalue `n` is the address of a `RefCell<C>`
/// that outlives the call.
unsafe fn cell_upvalue<'a, C: RawContext>(
    state: *mut ffi::lua_State,
    n: c_int,
) -> Result<RefMut<'a, C>, String> {
    // SAFETY: the upvalue is the cell's address, valid while the VM (running this call) lives.
    let cell =
        unsafe { &*(ffi::lua_touserdata(state, ffi::lua_upvalueindex(n)) as *const RefCell<C>) };
    cell.try_borrow_mut().map_err(|_| C::BUSY.to_owned())
}

// ----- arguments read straight off the stack ---------------------------------------------
//
// mlua's generic path turns every string and userdata argument into a reference on its
// auxiliary thread (a push there and a replace on drop, ~1k instructions each); these types
// copy out what the host needs instead: key bytes, primitive values, and the plain-data
// Roblox datatypes (tag-checked copies, no reference made).

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

/// A plain value at stack index `idx`, or None for a userdata, table, function...
///
/// # Safety
/// `idx` is a valid index of `state`'s stack; the string case borrows the stack slot's bytes
/// only for the copy.
unsafe fn plain_value(state: *mut ffi::lua_State, idx: c_int) -> Option<FastValue> {
    use procmodel_luau_types::raw;
    // SAFETY: type-checked readers on a valid index.
    unsafe {
        Some(match raw::type_at(state, idx) {
            ffi::LUA_TNIL => FastValue::Nil,
            ffi::LUA_TBOOLEAN => FastValue::Bool(raw::boolean(state, idx)?),
            ffi::LUA_TNUMBER => FastValue::Number(raw::number(state, idx)?),
            ffi::LUA_TVECTOR => FastValue::Vector3(Vector3(raw::vector(state, idx)?)),
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
    let p = unsafe { light_at(state, idx) }.unwrap_or(std::ptr::null_mut());
    Value::LightUserData(LightUserData(p))
}

// ----- raw C callbacks -------------------------------------------------------------------
//
// The calls every generated part makes (`Instance.new`, property writes and reads) and the
// terrain tutorial's `Terrain:FillBlock` skip mlua's callback machinery when their arguments
// are plain (strings, numbers, booleans, vectors, instance handles, CFrame/Color3/EnumItem
// values): they read the stack, work on the run context, and push at most one value.
// Anything else (another datatype, a bad argument) goes to the mlua function of the same
// behaviour (see `procmodel_luau_types::raw`).

/// A property read answered without a Luau value: what the raw `__index` pushes.
pub enum Read {
    Nil,
    Bool(bool),
    Number(f64),
    Str(String),
    Vector(glam::Vec3),
    CFrame(CFrame),
    Color3(Color3),
    /// An instance handle (light userdata pointer value).
    Handle(*mut c_void),
    /// Not a property: look among the methods, then take the general path.
    Method,
}

/// The property reads and writes the raw `__index` and `__newindex` of instance handles make
/// on the run context, without a Lua state.
pub trait PropertyAccess: RawContext {
    /// The common reads; None: the mlua function answers (derived properties, errors...).
    fn read(&mut self, this: &Value, key: &[u8]) -> mlua::Result<Option<Read>>;
    /// A write of `value`: true when done, false when the mlua function must convert it.
    fn write(&mut self, this: &Value, key: &[u8], value: FastValue) -> mlua::Result<bool>;
}

/// `Instance.new` on the run context.
pub trait NewInstance: RawContext {
    /// A new instance of `class` under `parent` (nil or a handle): its handle; None leaves
    /// the call to the mlua function.
    fn new_instance(&mut self, class: &str, parent: &Value) -> mlua::Result<Option<Value>>;
}

/// `Terrain:FillBlock` for the plain call.
pub trait FillBlock {
    /// Ok(None) leaves the call (wrong class, another enum...) to the mlua method.
    fn fill_block(
        lua: &Lua,
        this: &Value,
        cf: CFrame,
        size: glam::Vec3,
        material: EnumItem,
    ) -> mlua::Result<Option<()>>;
}

/// `__newindex(handle, key, value)` of instance handles (upvalue 2: the run context's cell).
///
/// # Safety
/// Called by Luau only, as the light-userdata metatable's `__newindex`.
pub unsafe extern "C-unwind" fn raw_newindex<C: PropertyAccess>(
    state: *mut ffi::lua_State,
) -> c_int {
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
            let mut c = cell_upvalue::<C>(state, 2)?;
            let this = Value::LightUserData(LightUserData(this));
            match c.write(&this, key, value) {
                Ok(true) => Ok(Some(0)),
                Ok(false) => Ok(None),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `Instance.new(className, parent?)` (upvalue 2: the run context's cell).
///
/// # Safety
/// Called by Luau only, as a C function.
pub unsafe extern "C-unwind" fn raw_instance_new<C: NewInstance>(
    state: *mut ffi::lua_State,
) -> c_int {
    // SAFETY: reads at most two arguments with type-checked accessors; pushes one light
    // userdata, which neither allocates nor raises.
    unsafe {
        dispatch(state, 1, || {
            let top = ffi::lua_gettop(state);
            let Some(class) = string_at(state, 1).filter(|_| (1..=2).contains(&top)) else {
                return Ok(None);
            };
            let parent = match procmodel_luau_types::raw::type_at(state, 2) {
                ffi::LUA_TNIL | ffi::LUA_TNONE => Value::Nil,
                ffi::LUA_TLIGHTUSERDATA => handle(state, 2),
                _ => return Ok(None),
            };
            let Ok(class) = std::str::from_utf8(class) else {
                return Ok(None);
            };
            let mut c = cell_upvalue::<C>(state, 2)?;
            match c.new_instance(class, &parent) {
                Ok(None) => Ok(None),
                Ok(Some(Value::LightUserData(h))) => {
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
pub unsafe extern "C-unwind" fn raw_fill_block<F: FillBlock>(state: *mut ffi::lua_State) -> c_int {
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
            let this = Value::LightUserData(LightUserData(this));
            match F::fill_block(lua, &this, cf, size, material) {
                Ok(Some(())) => Ok(Some(0)),
                Ok(None) => Ok(None),
                Err(e) => Err(message(e)),
            }
        })
    }
}

/// `__index(handle, key)` of instance handles: the common property reads and the methods
/// (upvalue 2, a table) without mlua, on the run context of upvalue 3; everything else
/// (derived properties, enums, children by name, errors) goes to the mlua function
/// (upvalue 1).
///
/// # Safety
/// Called by Luau only, as the light-userdata metatable's `__index`.
pub unsafe extern "C-unwind" fn raw_index<C: PropertyAccess>(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: an `__index` call (handle, key); the read runs under catch_unwind without
    // touching the stack, and its result is pushed afterwards (at most one allocation).
    unsafe {
        let (Some(this), Some(key)) = (light_at(state, 1), string_at(state, 2)) else {
            return procmodel_luau_types::raw::call_slow(state, 1);
        };
        let this = Value::LightUserData(LightUserData(this));
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut c = cell_upvalue::<C>(state, 3).ok()?;
            c.read(&this, key).ok().flatten()
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

// ----- thread globals --------------------------------------------------------------------

/// Makes the globals (`getfenv(0)`) of the new thread `th`, which runs `f`: `globals` when it
/// is a table, else `f`'s environment, else (a C function, or one without an environment of
/// its own) `base`.
///
/// # Safety
/// `th` was just made by `create_thread` from `f` and has not run.
pub unsafe fn set_thread_globals(
    lua: &Lua,
    th: &Thread,
    f: Function,
    base: Table,
    globals: Value,
) -> mlua::Result<()> {
    // SAFETY: `exec_raw` pushes the four arguments (thread, function, base globals, the
    // explicit globals or nil) at stack indices 1..=4 of a protected call. The thread is a
    // fresh coroutine whose stack holds only its function (room for LUA_MINSTACK values), so
    // moving one value onto it and replacing its globals with it keeps both stacks balanced;
    // `lua_replace` with LUA_GLOBALSINDEX sets a thread's globals, as `luaL_sandboxthread`
    // does.
    unsafe {
        lua.exec_raw::<()>((th.clone(), Value::Function(f), base, globals), |state| {
            let thread = ffi::lua_tothread(state, 1);
            if ffi::lua_type(state, 4) == ffi::LUA_TTABLE {
                ffi::lua_pushvalue(state, 4);
            } else if ffi::lua_iscfunction(state, 2) == 0 {
                ffi::lua_getfenv(state, 2);
                if ffi::lua_type(state, -1) != ffi::LUA_TTABLE {
                    ffi::lua_pop(state, 1);
                    ffi::lua_pushvalue(state, 3);
                }
            } else {
                ffi::lua_pushvalue(state, 3);
            }
            ffi::lua_xmove(state, thread, 1);
            ffi::lua_replace(thread, ffi::LUA_GLOBALSINDEX);
        })
    }
}

// ----- the VM's heap in a deterministic arena --------------------------------------------

/// Luau's `lua_State::global` and `global_State::frealloc`/`ud` byte offsets (64-bit).
const STATE_GLOBAL: usize = 24;
const GLOBAL_FREALLOC: usize = 16;
const GLOBAL_UD: usize = 24;
/// mlua's allocator aligns every block to this (`SYS_MIN_ALIGN` on 64-bit targets).
const MLUA_ALIGN: usize = 16;

/// The arenas of the VMs alive, by their allocator userdata, and a count of removals (a
/// thread's cached lookup is good while the count is the same).
static ARENAS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());
static ARENAS_REMOVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    /// The last (userdata, arena, removal count) this thread looked up.
    static LAST_ARENA: Cell<(usize, usize, u64)> = const { Cell::new((0, 0, u64::MAX)) };
}

fn arenas() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    ARENAS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The arena of the VM whose allocator userdata is `ud`.
fn arena_of(ud: *mut c_void) -> Option<&'static Arena> {
    use std::sync::atomic::Ordering;
    let removed = ARENAS_REMOVED.load(Ordering::Acquire);
    let cached = LAST_ARENA
        .try_with(|c| c.get())
        .ok()
        .filter(|&(u, _, r)| u == ud as usize && r == removed)
        .map(|(_, a, _)| a);
    let arena = match cached {
        Some(a) => a,
        None => {
            let a = arenas().iter().find(|(u, _)| *u == ud as usize)?.1;
            let _ = LAST_ARENA.try_with(|c| c.set((ud as usize, a, removed)));
            a
        }
    };
    // SAFETY: an arena stays registered only while the guard owning it ([`ArenaHeap`]) lives,
    // and the guard outlives every allocation of its VM (mlua closes the VM before it drops
    // the app data).
    Some(unsafe { &*(arena as *const Arena) })
}

/// App data owning a VM's arena: dropped after the VM is closed (every Luau block freed), it
/// takes the VM out of the lookup and frees the arena, or leaves it to the blocks the VM's
/// set-up made through the global allocator that are still in use ([`Arena::orphan`]).
struct ArenaHeap {
    ud: usize,
    arena: Option<Box<Arena>>,
}

impl Drop for ArenaHeap {
    fn drop(&mut self) {
        arenas().retain(|&(u, _)| u != self.ud);
        ARENAS_REMOVED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        if let Some(arena) = self.arena.take() {
            arena.orphan();
        }
    }
}

/// The VM's allocation function once [`with_arena_heap`] made the VM: blocks from the VM's arena
/// (blocks made before, or that the arena cannot hold, from the global allocator as mlua's
/// function makes them), counting the bytes in use where mlua counts them.
unsafe extern "C" fn arena_frealloc(
    ud: *mut c_void,
    ptr: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    use std::alloc::{Layout, alloc, dealloc};
    let arena = arena_of(ud);
    let ptr = ptr.cast::<u8>();
    // The arena a block is in: the VM's, or (for a block made while the VM was set up) the
    // same one found by address.
    let owner = procmodel_alloc::arena::owner(ptr);
    let used = ud.cast::<isize>();
    let give_back = |p: *mut u8, size: usize| {
        // SAFETY: Luau passes a block with the size it was allocated with; an arena's block
        // goes back to its arena, any other came from mlua's function (the global allocator,
        // `MLUA_ALIGN`) or from this one's fallback (the same).
        unsafe {
            match owner {
                Some(a) => a.free(p, size),
                None => dealloc(p, Layout::from_size_align_unchecked(size, MLUA_ALIGN)),
            }
        }
    };
    let Ok(layout) = Layout::from_size_align(nsize.max(1), MLUA_ALIGN) else {
        return std::ptr::null_mut();
    };
    // A new block: the arena's, else the global allocator's as mlua's function makes them.
    let new_block = || match arena.map_or(std::ptr::null_mut(), |a| a.alloc(nsize)) {
        // SAFETY: `layout` is non-zero (`nsize > 0` wherever a block is made).
        p if p.is_null() => unsafe { alloc(layout) },
        p => p,
    };
    if nsize == 0 {
        if !ptr.is_null() {
            give_back(ptr, osize);
            // SAFETY: `used` is mlua's count (checked where the function was installed).
            unsafe { *used -= osize as isize };
        }
        return std::ptr::null_mut();
    }
    let out = if ptr.is_null() {
        new_block()
    } else {
        let same = matches!((owner, arena), (Some(o), Some(a)) if std::ptr::eq(o, a));
        let resized = match arena {
            // SAFETY: `ptr` is this arena's block for `osize` bytes.
            Some(a) if same => unsafe { a.realloc(ptr, osize, nsize) },
            _ => std::ptr::null_mut(),
        };
        if !resized.is_null() {
            resized
        } else {
            // Into the arena from elsewhere, or out of a full one.
            let q = new_block();
            if !q.is_null() {
                // SAFETY: `ptr` holds `osize` bytes, `q` at least `nsize`; they are distinct.
                unsafe { std::ptr::copy_nonoverlapping(ptr, q, osize.min(nsize)) };
                give_back(ptr, osize);
            }
            q
        }
    };
    if !out.is_null() {
        // SAFETY: `ud` is mlua's allocator userdata, whose first field is the count.
        unsafe {
            *used += nsize as isize - if ptr.is_null() { 0 } else { osize as isize };
        }
    }
    out.cast()
}

/// A new VM made by `make` with its heap in an arena of its own
/// ([`procmodel_alloc::arena`]), so its blocks' addresses agree in their low 32 bits whenever
/// the VM makes the same requests: the order `pairs` visits a table keyed by tables or
/// functions (which Luau places by address) is then the same on every run of the same
/// script, generator or scene. While `make` runs, the arena serves this thread's requests to
/// the global allocator (when it is procmodel's: its binaries), so what the VM's set-up
/// allocates is in the arena too; after it, the VM's allocation function is replaced by one
/// taking every block from the arena. Without an arena (no address space, another platform)
/// or when Luau's or mlua's layout is not the one expected, the VM keeps mlua's allocator.
pub fn with_arena_heap(make: impl FnOnce() -> mlua::Result<Lua>) -> mlua::Result<Lua> {
    let arena = if cfg!(all(unix, target_pointer_width = "64")) {
        Arena::new().map(Box::new)
    } else {
        None
    };
    let Some(arena) = arena else {
        return make();
    };
    arena.register();
    let lua = match procmodel_alloc::arena::with_thread_arena(&arena, make) {
        Ok(lua) => lua,
        Err(e) => {
            arena.orphan();
            return Err(e);
        }
    };
    let mut arena = Some(arena);
    // SAFETY: reads the VM's global state through the offsets checked here against
    // `lua_getallocf`, and replaces its allocation function (keeping its userdata) only when
    // they match and mlua's count reads where expected.
    unsafe {
        let _ = lua.exec_raw::<()>((), |state| {
            let mut ud = std::ptr::null_mut();
            let f = ffi::lua_getallocf(state, &mut ud);
            let global = state
                .cast::<u8>()
                .add(STATE_GLOBAL)
                .cast::<*mut u8>()
                .read();
            if global.is_null() || ud.is_null() {
                return;
            }
            let f_slot = global.add(GLOBAL_FREALLOC).cast::<ffi::lua_Alloc>();
            let ud_slot = global.add(GLOBAL_UD).cast::<*mut c_void>();
            if f_slot.cast::<usize>().read() != f as usize || ud_slot.read() != ud {
                return;
            }
            let count = ud.cast::<isize>().read();
            if count <= 0 || count as usize != lua.used_memory() {
                return;
            }
            let Some(a) = arena.take() else { return };
            arenas().push((ud as usize, &*a as *const Arena as usize));
            f_slot.write(arena_frealloc);
            lua.set_app_data(ArenaHeap {
                ud: ud as usize,
                arena: Some(a),
            });
        });
    }
    if let Some(a) = arena {
        // Not installed: the blocks the set-up made in the arena keep it until freed.
        a.orphan();
    }
    Ok(lua)
}

// ----- the interrupt's fast path ---------------------------------------------------------
//
// Luau calls the interrupt at every loop back-edge, call and return. mlua's interrupt entry
// costs ~150 instructions a call (its callback and error machinery), which made a tight
// numeric loop several times slower than the VM itself. The fast path reads the two watchdog
// flags and a "memory check due" flag and returns; only when one of them is up does it hand
// over to mlua's entry, which runs the host's callback (errors, the budget flag, the exact
// memory check). The heap size is read at the GC's own interrupts (it steps as the heap
// grows), where no error may be raised, and only raises the flag there.

/// What the fast path reads; kept in the VM's app data (stable address, freed with the VM),
/// pointed to by the main thread's thread data.
struct FastInterrupt {
    probe: Probe,
    /// The memory limit in KiB (0 = none).
    limit_kib: usize,
    /// Set by a GC step that saw the heap at or over the limit.
    memory_due: Cell<bool>,
    /// mlua's interrupt entry, which calls the host's callback.
    slow: unsafe extern "C-unwind" fn(*mut ffi::lua_State, c_int),
    /// With the heap in an arena ([`with_arena_heap`]): the count of bytes in use the
    /// arena's allocation function keeps, and the count at which the interrupt collects
    /// next (see [`collect_at_interrupt`]).
    used: Option<*const isize>,
    next_gc: Cell<usize>,
}

/// Heap growth that never triggers a collection by itself: a heap this much over what the
/// last collection left is collected.
const GC_MIN_GROWTH: usize = 4 << 20;

/// The heap size at which the interrupt collects next, `live` bytes having survived the last
/// collection: double (Luau's default goal), and at least [`GC_MIN_GROWTH`] more.
fn next_collection(live: usize) -> usize {
    (live * 2).max(live + GC_MIN_GROWTH)
}

/// Luau's collector starts a cycle when a wall-clock estimate of the allocation rate says so
/// (`getheaptrigger`), so when it frees blocks, and which freed blocks new objects reuse,
/// changed from run to run. With the heap in an arena, the automatic collector is stopped and
/// the interrupt collects instead, at the first interrupt after the heap has doubled since
/// the last collection (Luau's default goal, and at least [`GC_MIN_GROWTH`]) or reached the
/// memory limit: points that depend only on what the code did.
///
/// # Safety
/// Called from the interrupt (a point where the VM may run its collector) with `d` the VM's.
unsafe fn collect_at_interrupt(state: *mut ffi::lua_State, d: &FastInterrupt, used: *const isize) {
    // SAFETY: the caller's guarantees; `used` is the live count of the VM's allocator.
    unsafe {
        ffi::lua_gc(state, ffi::LUA_GCCOLLECT, 0);
        ffi::lua_gc(state, ffi::LUA_GCSTOP, 0);
        let live = (*used).max(0) as usize;
        let mut next = next_collection(live);
        let limit = d.limit_kib << 10;
        if limit > 0 {
            if live >= limit {
                d.memory_due.set(true);
            }
            next = next.min(limit.max(live + 1));
        }
        d.next_gc.set(next);
    }
}

/// A full collection that leaves the automatic collector as the VM had it: stopped when the
/// interrupt collects ([`collect_at_interrupt`]), running otherwise.
pub fn collect_garbage(lua: &Lua) -> mlua::Result<()> {
    lua.gc_collect()?;
    if lua
        .app_data_ref::<FastInterrupt>()
        .is_some_and(|d| d.used.is_some())
    {
        lua.gc_stop();
    }
    Ok(())
}

unsafe extern "C-unwind" fn fast_interrupt(state: *mut ffi::lua_State, gc: c_int) {
    // SAFETY: the thread data of the main thread is set only by `install_fast_interrupt`, to
    // app data that lives as long as the VM (a VM runs on one thread at a time, so the Cell
    // is not shared); lua_gc(COUNT) only reads a counter.
    unsafe {
        let data = ffi::lua_getthreaddata(ffi::lua_mainthread(state)) as *const FastInterrupt;
        let Some(d) = data.as_ref() else { return };
        if gc >= 0 {
            if d.limit_kib > 0 && ffi::lua_gc(state, ffi::LUA_GCCOUNT, 0) as usize >= d.limit_kib {
                d.memory_due.set(true);
            }
            return;
        }
        if let Some(used) = d.used
            && (*used).max(0) as usize >= d.next_gc.get()
        {
            collect_at_interrupt(state, d, used);
        }
        if d.probe.raised() || d.memory_due.get() {
            d.memory_due.set(false);
            (d.slow)(state, gc);
        }
    }
}

/// Puts the fast path in front of the interrupt callback `lua.set_interrupt` installed.
pub fn install_fast_interrupt(
    lua: &mlua::Lua,
    probe: Probe,
    memory_limit: usize,
) -> mlua::Result<()> {
    // SAFETY: reads and replaces the VM's interrupt hook on the main thread's callbacks, and
    // points the main thread's data at the app data installed just before.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            let cb = ffi::lua_callbacks(state);
            let Some(slow) = (*cb).interrupt else { return };
            // With the heap in an arena, the interrupt collects (and the collector stops).
            let used = lua
                .app_data_ref::<ArenaHeap>()
                .map(|h| h.ud as *const isize);
            lua.set_app_data(FastInterrupt {
                probe,
                limit_kib: memory_limit >> 10,
                memory_due: Cell::new(false),
                slow,
                used,
                next_gc: Cell::new(0),
            });
            if let Some(d) = lua.app_data_ref::<FastInterrupt>() {
                ffi::lua_setthreaddata(
                    ffi::lua_mainthread(state),
                    &*d as *const FastInterrupt as *mut std::ffi::c_void,
                );
                (*cb).interrupt = Some(fast_interrupt);
                if let Some(used) = d.used {
                    ffi::lua_gc(state, ffi::LUA_GCSTOP, 0);
                    d.next_gc.set(next_collection((*used).max(0) as usize));
                }
            }
        })
    }
}

/// The binaries' allocator in this crate's unit tests, so a VM's set-up lands in its arena
/// as it does in `procmodel` ([`with_arena_heap`]).
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: procmodel_alloc::Allocator = procmodel_alloc::Allocator;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watchdog::Watchdog;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn mlua_reads_arguments_with_from_stack() {
        // `from_lua` makes `Other` of a string; only the stack hook copies it as `Str`.
        let lua = Lua::new();
        let f = lua
            .create_function(|_, (_, v): (Value, FastValue)| {
                Ok(matches!(v, FastValue::Str(s) if s == "Part"))
            })
            .unwrap();
        assert!(f.call::<bool>((Value::Nil, "Part")).unwrap());
        let single = lua
            .create_function(|_, v: FastValue| Ok(matches!(v, FastValue::Str(_))))
            .unwrap();
        assert!(single.call::<bool>("x").unwrap());
    }

    const HANDLE: u64 = (7 << 32) | 42;

    unsafe extern "C-unwind" fn push_handle(state: *mut ffi::lua_State) -> c_int {
        // SAFETY: a C function may push one value.
        unsafe { ffi::lua_pushlightuserdata(state, HANDLE as usize as *mut c_void) };
        1
    }

    #[test]
    fn light_userdata_handles_round_trip() {
        let lua = Lua::new();
        // SAFETY: `push_handle` pushes one light userdata and returns it.
        let raw = unsafe { lua.create_c_function(push_handle) }.unwrap();
        let meta = lua.create_table().unwrap();
        meta.set(
            "__index",
            lua.create_function(|_, ()| Ok("shared")).unwrap(),
        )
        .unwrap();
        lua.set_type_metatable::<LightUserData>(Some(meta));
        let (same, keyed, member, back): (bool, bool, String, Value) = lua
            .load(
                "local v, raw = ...\n\
                 local t = { [v] = true }\n\
                 return rawequal(v, raw()), t[raw()] == true, raw().anything, v",
            )
            .call((handle_value(HANDLE), raw))
            .unwrap();
        assert!(same, "a raw push and mlua's push are one value");
        assert!(keyed, "and one table key");
        assert_eq!(member, "shared", "one metatable for all light userdata");
        assert_eq!(
            handle_of(&back),
            Some(HANDLE),
            "the value comes back intact"
        );
        assert_eq!(handle_of(&Value::Boolean(true)), None);
    }

    #[test]
    fn app_data_does_not_move() {
        struct Filler<const N: usize>;
        let lua = Lua::new();
        lua.set_app_data(RefCell::new(5u32));
        // SAFETY: the cell is neither replaced nor removed in this test.
        let cell = unsafe { pinned_app_data::<RefCell<u32>>(&lua) }
            .unwrap()
            .unwrap();
        let before = cell as *const RefCell<u32>;
        // Enough other entries that mlua's map grows (and moves its entries) several times.
        macro_rules! fill {
            ($($n:literal)*) => { $( lua.set_app_data(Filler::<$n>); )* };
        }
        fill!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
              30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56
              57 58 59 60 61 62 63);
        lua.remove_app_data::<Filler<3>>();
        // SAFETY: as above.
        let after = unsafe { pinned_app_data::<RefCell<u32>>(&lua) }
            .unwrap()
            .unwrap();
        assert_eq!(after as *const RefCell<u32>, before);
        *cell.borrow_mut() += 1;
        assert_eq!(*lua.app_data_ref::<RefCell<u32>>().unwrap().borrow(), 6);
    }

    struct TestCtx(u32);

    impl RawContext for TestCtx {
        const BUSY: &'static str = "test context busy";
    }

    unsafe extern "C-unwind" fn read_upvalue(state: *mut ffi::lua_State) -> c_int {
        // SAFETY: made below with a `RefCell<TestCtx>`'s address as upvalue 2; pushes one
        // value (the string push allocates outside any Rust frame that needs dropping).
        unsafe {
            let n = cell_upvalue::<TestCtx>(state, 2).map(|c| c.0);
            match n {
                Ok(n) => ffi::lua_pushnumber(state, n as f64),
                Err(m) => {
                    ffi::lua_pushlstring(state, m.as_ptr() as *const _, m.len());
                }
            }
        }
        1
    }

    #[test]
    fn an_upvalue_address_reads_back() {
        let lua = Lua::new();
        let cell = Box::new(RefCell::new(TestCtx(7)));
        let slow = lua.create_function(|_, ()| Ok(())).unwrap();
        let f = procmodel_luau_types::raw::closure_with(
            &lua,
            read_upvalue,
            slow,
            address_value(&*cell),
        )
        .unwrap();
        assert_eq!(f.call::<f64>(()).unwrap(), 7.0);
        let held = cell.borrow_mut();
        assert_eq!(f.call::<String>(()).unwrap(), TestCtx::BUSY);
        drop(held);
    }

    unsafe extern "C-unwind" fn read_app_data(state: *mut ffi::lua_State) -> c_int {
        // SAFETY: called by the VM of the test below, which mlua made; pushes one number.
        unsafe {
            let lua = Lua::get_or_init_from_ptr(state);
            let n = lua.app_data_ref::<u32>().map_or(0, |v| *v);
            ffi::lua_pushnumber(state, n as f64);
        }
        1
    }

    #[test]
    fn get_or_init_from_ptr_finds_the_vm_from_any_thread() {
        let lua = Lua::new();
        lua.set_app_data(99u32);
        // SAFETY: `read_app_data` pushes one number and returns it.
        let f = unsafe { lua.create_c_function(read_app_data) }.unwrap();
        let (main, co): (f64, f64) = lua
            .load("local f = ... return f(), coroutine.wrap(function() return f() end)()")
            .call(f)
            .unwrap();
        assert_eq!((main, co), (99.0, 99.0));
    }

    /// The interrupt entry installed now (as an address, to compare).
    fn interrupt_entry(lua: &Lua) -> Option<usize> {
        let mut out = None;
        // SAFETY: reads the callbacks of the VM's main state; pushes nothing.
        unsafe {
            lua.exec_raw::<()>((), |state| {
                out = (*ffi::lua_callbacks(state)).interrupt.map(|f| f as usize);
            })
        }
        .unwrap();
        out
    }

    #[test]
    fn the_fast_interrupt_takes_over_mluas_entry() {
        let lua = Lua::new();
        // SAFETY: reads the main thread's data slot.
        let slot_free = unsafe {
            lua.exec_raw::<bool>((), |state| {
                let free = ffi::lua_getthreaddata(ffi::lua_mainthread(state)).is_null();
                ffi::lua_pushboolean(state, free as c_int);
            })
        }
        .unwrap();
        assert!(slot_free, "mlua leaves the main thread's data slot to us");
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        lua.set_interrupt(move |_| {
            seen.fetch_add(1, Ordering::Relaxed);
            Err(mlua::Error::runtime("stopped by the host"))
        });
        assert!(
            interrupt_entry(&lua).is_some(),
            "set_interrupt sets the entry"
        );
        let wd = Watchdog::new();
        install_fast_interrupt(&lua, wd.probe(), 0).unwrap();
        let fast = Some(fast_interrupt as *const () as usize);
        assert_eq!(interrupt_entry(&lua), fast);
        lua.sandbox(true).unwrap();
        lua.load("local n = 0 for i = 1, 100000 do n += i end return n")
            .exec()
            .unwrap();
        assert_eq!(
            interrupt_entry(&lua),
            fast,
            "nothing in mlua puts its entry back"
        );
        assert_eq!(calls.load(Ordering::Relaxed), 0, "no flag, no callback");
        // A raised flag hands over to mlua's entry, which runs the callback.
        wd.canceller().cancel();
        let err = lua.load("while true do end").exec().unwrap_err();
        assert!(err.to_string().contains("stopped by the host"), "{err}");
        assert!(calls.load(Ordering::Relaxed) >= 1);
    }

    #[test]
    fn gc_steps_flag_the_memory_check() {
        let lua = Lua::new();
        let limit = 4 << 20;
        lua.set_interrupt(move |lua| {
            if lua.used_memory() > limit {
                return Err(mlua::Error::runtime("over the limit"));
            }
            Ok(mlua::VmState::Continue)
        });
        let wd = Watchdog::new();
        install_fast_interrupt(&lua, wd.probe(), limit).unwrap();
        // No watchdog flag is ever raised: only a GC step can start the memory check.
        let err = lua
            .load("local t = {} for i = 1, 1e6 do t[i] = { i } end")
            .exec()
            .unwrap_err();
        assert!(err.to_string().contains("over the limit"), "{err}");
    }

    /// The order a table keyed by tables iterates in, and where the last key was (low 32
    /// bits), in a new VM with its heap in an arena; the work churns garbage so the
    /// interrupt collects several times.
    fn table_keyed_order() -> (String, String) {
        let lua = with_arena_heap(|| Ok(Lua::new())).unwrap();
        assert!(lua.app_data_ref::<ArenaHeap>().is_some(), "the heap moved");
        lua.set_interrupt(|_| Ok(mlua::VmState::Continue));
        install_fast_interrupt(&lua, Watchdog::new().probe(), 0).unwrap();
        let before = lua.used_memory();
        let (order, last): (String, String) = lua
            .load(
                r#"
                local set, last = {}, nil
                for i = 1, 3000 do
                    for _ = 1, 20 do local _ = { i, { i } } end -- garbage
                    last = { i = i }
                    if i % 7 ~= 0 then set[last] = true end
                    if i % 3 == 0 then set[next(set)] = nil end
                end
                local out = {}
                for k in pairs(set) do table.insert(out, k.i) end
                return table.concat(out, ","), string.sub(tostring(last), -8)
                "#,
            )
            .eval()
            .unwrap();
        assert!(
            lua.used_memory() > before,
            "the arena's function keeps mlua's count"
        );
        (order, last)
    }

    #[test]
    fn the_heap_moves_into_an_arena_and_addresses_repeat() {
        let first = table_keyed_order();
        // Other work in the process between the two VMs changes nothing.
        let noise: Vec<Box<[u8; 300]>> = (0..2000).map(|_| Box::new([0; 300])).collect();
        assert_eq!(first, table_keyed_order());
        drop(noise);
    }

    #[test]
    fn a_dropped_vm_gives_its_arena_back() {
        for _ in 0..3 {
            let lua = with_arena_heap(|| Ok(Lua::new())).unwrap();
            let t = lua.create_table().unwrap();
            let at = t.to_pointer().cast::<u8>();
            assert!(
                procmodel_alloc::arena::owner(at).is_some(),
                "a table in the arena"
            );
            drop(t);
            drop(lua);
            assert!(
                procmodel_alloc::arena::owner(at).is_none(),
                "unmapped with the VM: nothing its set-up made outlives it"
            );
        }
    }

    #[test]
    fn with_the_heap_in_an_arena_the_interrupt_collects_and_checks_the_limit() {
        let lua = with_arena_heap(|| Ok(Lua::new())).unwrap();
        let limit = 8 << 20;
        lua.set_interrupt(move |lua| {
            if lua.used_memory() > limit {
                return Err(mlua::Error::runtime("over the limit"));
            }
            Ok(mlua::VmState::Continue)
        });
        install_fast_interrupt(&lua, Watchdog::new().probe(), limit).unwrap();
        assert!(!lua.gc_is_running(), "the interrupt collects instead");
        // Garbage far beyond the limit is collected as it goes.
        lua.load("for i = 1, 2e5 do local _ = { i, i, i, i } end")
            .exec()
            .unwrap();
        assert!(lua.used_memory() < limit);
        // What is kept is not: the limit is checked.
        let err = lua
            .load("local t = {} for i = 1, 1e6 do t[i] = { i } end")
            .exec()
            .unwrap_err();
        assert!(err.to_string().contains("over the limit"), "{err}");
        collect_garbage(&lua).unwrap();
        assert!(!lua.gc_is_running(), "a full collection leaves it stopped");
    }

    #[test]
    fn a_new_threads_globals_are_replaced() {
        let lua = Lua::new();
        let base = lua.globals();
        base.set("marker", "base").unwrap();
        let read = "return getfenv(0).marker";
        let run = |f: Function, globals: Value| -> Option<String> {
            let th = lua.create_thread(f.clone()).unwrap();
            // SAFETY: `th` was just made from `f` and has not run.
            unsafe { set_thread_globals(&lua, &th, f, lua.globals(), globals) }.unwrap();
            th.resume(()).unwrap()
        };
        // Explicit globals.
        let own = lua.create_table().unwrap();
        own.set("marker", "own").unwrap();
        let f = lua.load(read).into_function().unwrap();
        assert_eq!(run(f, Value::Table(own)).as_deref(), Some("own"));
        // The function's environment.
        let env = lua.create_table().unwrap();
        env.set("marker", "env").unwrap();
        env.set("getfenv", base.get::<Function>("getfenv").unwrap())
            .unwrap();
        let f = lua.load(read).set_environment(env).into_function().unwrap();
        assert_eq!(run(f, Value::Nil).as_deref(), Some("env"));
        // A C function runs with the base globals given.
        let getfenv: Function = base.get("getfenv").unwrap();
        let other = lua.create_table().unwrap();
        let th = lua.create_thread(getfenv.clone()).unwrap();
        // SAFETY: as above.
        unsafe { set_thread_globals(&lua, &th, getfenv, other.clone(), Value::Nil) }.unwrap();
        let g: Table = th.resume(0).unwrap();
        assert_eq!(g, other);
        // A thread made afterwards is fresh: the base globals, not a replaced table.
        lua.gc_collect().unwrap();
        let f = lua.load(read).into_function().unwrap();
        let th = lua.create_thread(f).unwrap();
        assert_eq!(
            th.resume::<Option<String>>(()).unwrap().as_deref(),
            Some("base")
        );
    }
}
