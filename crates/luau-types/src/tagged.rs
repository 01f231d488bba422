//! Plain-data datatypes (`CFrame`, `Color3`, `EnumItem`) as Luau *tagged* userdata: the value's
//! bytes straight in the userdata block, one metatable per tag installed in the VM
//! (`lua_setuserdatametatable`), so creating one is a single allocation and reading one is a
//! tag check. mlua userdata cost ~900 instructions to create and a type-id lookup to read;
//! these are what every generated part's CFrame and Color go through.
//!
//! A type declares its members with mlua's own `UserDataFields`/`UserDataMethods` API
//! ([`Tagged::add_fields`]/[`Tagged::add_methods`]); [`register`] collects them into the tag's
//! metatable (`__index` looks fields up, then methods, then the type's `__index` fallback).
//! [`Index`] puts a raw C `__index` in front of that: the common fields of a [`FastFields`]
//! type and its methods without mlua, or memoised lookups for unique objects (`Enum`,
//! `Enum.X`). `impl_tagged!` gives a type `FromLua` (reading the stack directly), `IntoLua`
//! and `FromValue`.

use std::collections::HashMap;
use std::ffi::c_int;
use std::rc::Rc;

use mlua::{
    AnyUserData, FromLua, FromLuaMulti, Function, IntoLua, IntoLuaMulti, Lua, UserDataFields,
    UserDataMethods, Value, ffi,
};

use crate::raw::Key;

/// The tags of this crate's types (mlua uses 0 and 1; the host none).
pub const TAG_CFRAME: c_int = 64;
pub const TAG_COLOR3: c_int = 65;
pub const TAG_ENUM_ITEM: c_int = 66;
pub const TAG_ENUM: c_int = 67;
pub const TAG_ENUMS: c_int = 68;

/// A `Copy` value stored as a tagged userdata.
pub trait Tagged: Copy + 'static {
    /// The userdata tag (unique per type, below `LUA_UTAG_LIMIT`; mlua uses 0 and 1).
    const TAG: c_int;
    /// The Roblox type name (`typeof`, error messages).
    const NAME: &'static str;
    fn add_fields<F: UserDataFields<Self>>(_fields: &mut F) {}
    fn add_methods<M: UserDataMethods<Self>>(_methods: &mut M) {}
}

/// The value at stack index `idx`, if it is a `T`.
///
/// # Safety
/// `idx` is a valid or absent index of `state`'s stack.
pub unsafe fn get<T: Tagged>(state: *mut ffi::lua_State, idx: c_int) -> Option<T> {
    // SAFETY: as the caller promises; a block with our tag is a `T` (below).
    if let Some(slot) = unsafe { crate::raw::arg(state, idx) } {
        return slot.and_then(|s| s.userdata_tagged(T::TAG)).map(|p| {
            // SAFETY: only `push` makes userdata with our tags, each of `size_of::<T>()`.
            unsafe { std::ptr::read_unaligned(p as *const T) }
        });
    }
    // SAFETY: lua_touserdatatagged returns the block of a userdata with exactly this tag
    // (null otherwise), and only `push` makes userdata with our tags, each of `size_of::<T>()`.
    unsafe {
        let p = ffi::lua_touserdatatagged(state, idx, T::TAG);
        (!p.is_null()).then(|| std::ptr::read_unaligned(p as *const T))
    }
}

/// Checks the layouts the direct argument reads rely on (`raw::arg`) against the C API, on
/// an argument of every kind the hot callbacks read (nil, booleans, a number, a vector, a
/// light userdata, a string, a tagged userdata, an absent one), and turns the direct reads
/// on when every read agrees (off otherwise: the readers then use the C API). Returns
/// whether they are on. Call it on a VM whose tagged types are registered.
pub fn enable_direct_reads(lua: &Lua) -> bool {
    let color = match to_value(
        lua,
        crate::Color3 {
            r: 0.25,
            g: 0.5,
            b: 0.75,
        },
    ) {
        Ok(v) => v,
        Err(_) => return false,
    };
    let args = (
        Value::Nil,
        true,
        false,
        -1.25f64,
        Value::Vector(mlua::Vector::new(1.5, -2.0, 3.25)),
        Value::LightUserData(mlua::LightUserData(0x5eed_0123 as *mut std::ffi::c_void)),
        "text",
        color,
    );
    let agree = std::cell::Cell::new(false);
    // SAFETY: `exec_raw` pushes the arguments at 1..=8 of the thread it runs the closure on
    // (ffi.rs, assumption 7). Nothing assumed is dereferenced before it is confirmed by
    // addresses the C API gives: `base` by the vector's value (which `lua_tovector` returns
    // in place: `&base[4].value`) and `top` by the argument count, so every slot read is
    // one of the eight arguments; a userdata's header is read only once its block's address
    // (`lua_touserdata`) confirms where the header is, a string's once its bytes'
    // (`lua_tolstring`) do.
    let run = unsafe {
        lua.exec_raw::<()>(args, |state| {
            let kinds = [
                ffi::LUA_TNIL,
                ffi::LUA_TBOOLEAN,
                ffi::LUA_TBOOLEAN,
                ffi::LUA_TNUMBER,
                ffi::LUA_TVECTOR,
                ffi::LUA_TLIGHTUSERDATA,
                ffi::LUA_TSTRING,
                ffi::LUA_TUSERDATA,
            ];
            if ffi::lua_gettop(state) != 8
                || (1..=8).any(|i| ffi::lua_type(state, i) != kinds[i as usize - 1])
                || !crate::raw::stack_layout_matches(
                    state,
                    ffi::lua_tovector(state, 5) as *const u8,
                    8,
                )
            {
                return;
            }
            let mut ok = crate::raw::arg_unchecked(state, 9).is_none();
            for idx in 1..=8 {
                let Some(slot) = crate::raw::arg_unchecked(state, idx) else {
                    ok = false;
                    break;
                };
                ok &= slot.ty() == kinds[idx as usize - 1];
                ok &= match slot.ty() {
                    ffi::LUA_TBOOLEAN => {
                        slot.boolean() == Some(ffi::lua_toboolean(state, idx) != 0)
                    }
                    ffi::LUA_TNUMBER => {
                        slot.number().map(f64::to_bits)
                            == Some(ffi::lua_tonumber(state, idx).to_bits())
                    }
                    ffi::LUA_TVECTOR => {
                        let p = ffi::lua_tovector(state, idx);
                        slot.vector() == Some(glam::Vec3::new(*p, *p.add(1), *p.add(2)))
                    }
                    ffi::LUA_TLIGHTUSERDATA => {
                        slot.light() == Some(ffi::lua_tolightuserdata(state, idx))
                    }
                    ffi::LUA_TSTRING => {
                        let mut len = 0usize;
                        let bytes = ffi::lua_tolstring(state, idx, &mut len) as *const u8;
                        crate::raw::string_bytes_match(slot, bytes)
                            && slot.string() == Some(std::slice::from_raw_parts(bytes, len))
                    }
                    ffi::LUA_TUSERDATA => {
                        let block = ffi::lua_touserdata(state, idx) as *const u8;
                        let api = ffi::lua_touserdatatagged(state, idx, TAG_COLOR3) as *const u8;
                        crate::raw::userdata_block_matches(slot, block)
                            && block == api
                            && slot.userdata_tagged(TAG_COLOR3) == Some(api)
                            && slot.userdata_tagged(TAG_CFRAME).is_none()
                    }
                    _ => true,
                };
                if !ok {
                    break;
                }
            }
            agree.set(ok);
        })
    };
    let on = run.is_ok() && agree.get();
    crate::raw::set_direct_reads(on);
    on
}

/// Pushes `v` as a new userdata. May raise a memory error (a Luau exception): call it with
/// nothing Rust-owned that needs dropping.
///
/// # Safety
/// `state` has room for one push and `T`'s metatable was installed by [`register`].
pub unsafe fn push<T: Tagged>(state: *mut ffi::lua_State, v: T) {
    // SAFETY: the block is `size_of::<T>()` bytes; unaligned write for any `T`.
    unsafe {
        let p = ffi::lua_newuserdatataggedwithmetatable(state, std::mem::size_of::<T>(), T::TAG);
        std::ptr::write_unaligned(p as *mut T, v);
    }
}

/// Luau's `Udata` header before the block (`raw::UDATA_*`): the tag is 13 bytes and the
/// length 12 bytes before the data. A unit test checks this against the C API for every tag.
const TAG_OFFSET: usize = crate::raw::UDATA_BLOCK - crate::raw::UDATA_TAG;
const LEN_OFFSET: usize = crate::raw::UDATA_BLOCK - crate::raw::UDATA_LEN;

/// The value of an mlua userdata handle, if it is a `T`.
pub fn from_userdata<T: Tagged>(ud: &AnyUserData) -> Option<T> {
    let p = ud.to_pointer() as *const u8;
    // SAFETY: `to_pointer` of a userdata is its data block (lua_topointer), preceded by the
    // Udata header described above; the length check guards the read of the value.
    unsafe {
        let tag = *p.sub(TAG_OFFSET);
        let len = std::ptr::read_unaligned(p.sub(LEN_OFFSET) as *const i32);
        (c_int::from(tag) == T::TAG && len as usize == std::mem::size_of::<T>())
            .then(|| std::ptr::read_unaligned(p as *const T))
    }
}

/// The Roblox type name of an mlua userdata handle holding one of this crate's tagged types.
pub fn type_name(ud: &AnyUserData) -> Option<&'static str> {
    let p = ud.to_pointer() as *const u8;
    // SAFETY: as in `from_userdata`: the tag byte of the Udata header.
    let tag = c_int::from(unsafe { *p.sub(TAG_OFFSET) });
    match tag {
        TAG_CFRAME => Some("CFrame"),
        TAG_COLOR3 => Some("Color3"),
        TAG_ENUM_ITEM => Some("EnumItem"),
        TAG_ENUM => Some("Enum"),
        TAG_ENUMS => Some("Enums"),
        _ => None,
    }
}

/// `v` as a Luau value (a new userdata), with the allocation protected.
pub fn to_value<T: Tagged>(lua: &Lua, v: T) -> mlua::Result<Value> {
    // SAFETY: `exec_raw` runs the push under a protected call, with stack space checked.
    unsafe { lua.exec_raw::<Value>((), |state| push(state, v)) }
}

/// `FromLua` failure naming the Roblox type.
pub fn conversion_error(value: &Value, to: &'static str) -> mlua::Error {
    mlua::Error::FromLuaConversionError {
        from: value.type_name(),
        to: to.to_string(),
        message: Some(format!("{to} expected, got {}", crate::type_name(value))),
    }
}

/// `value` as a `T`, or the `FromLua` error naming the Roblox type.
pub fn from_value_or_error<T: Tagged>(value: Value) -> mlua::Result<T> {
    match &value {
        Value::UserData(ud) => from_userdata::<T>(ud),
        _ => None,
    }
    .ok_or_else(|| conversion_error(&value, T::NAME))
}

/// Implements `FromLua` (reading the stack directly), `IntoLua` and `FromValue` for
/// [`Tagged`] types.
macro_rules! impl_tagged {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl mlua::FromLua for $ty {
                fn from_lua(value: mlua::Value, _: &mlua::Lua) -> mlua::Result<Self> {
                    $crate::tagged::from_value_or_error(value)
                }

                unsafe fn from_stack(
                    idx: std::ffi::c_int,
                    lua: &mlua::state::RawLua,
                ) -> mlua::Result<Self> {
                    // SAFETY: mlua passes a valid index of the running thread's stack.
                    unsafe {
                        match $crate::tagged::get::<$ty>(lua.state(), idx) {
                            Some(v) => Ok(v),
                            None => $crate::tagged::from_value_or_error(mlua::Value::from_stack(idx, lua)?),
                        }
                    }
                }
            }

            impl mlua::IntoLua for $ty {
                fn into_lua(self, lua: &mlua::Lua) -> mlua::Result<mlua::Value> {
                    $crate::tagged::to_value(lua, self)
                }
            }

            impl $crate::args::FromValue for $ty {
                fn from_value(v: &mlua::Value) -> Option<Self> {
                    match v {
                        mlua::Value::UserData(ud) => $crate::tagged::from_userdata::<$ty>(ud),
                        _ => None,
                    }
                }
            }
        )+
    };
}
pub(crate) use impl_tagged;

/// `self` of a method: the tagged value, or None when the first argument is not one (the
/// method was called with `.`, not `:`), which the method reports by its name.
struct SelfArg<T>(Option<T>);

impl<T: Tagged> SelfArg<T> {
    fn from_value(value: Value) -> SelfArg<T> {
        SelfArg(match &value {
            Value::UserData(ud) => from_userdata::<T>(ud),
            _ => None,
        })
    }

    /// The value, or Roblox's error for a method called with `.`.
    fn get(self, method: &str) -> mlua::Result<T> {
        self.0.ok_or_else(|| {
            mlua::Error::runtime(format!(
                "Expected ':' not '.' calling member function {method}"
            ))
        })
    }
}

impl<T: Tagged> FromLua for SelfArg<T> {
    fn from_lua(value: Value, _: &Lua) -> mlua::Result<Self> {
        Ok(Self::from_value(value))
    }

    unsafe fn from_stack(idx: c_int, lua: &mlua::state::RawLua) -> mlua::Result<Self> {
        // SAFETY: mlua passes a valid index of the running thread's stack.
        unsafe {
            match get::<T>(lua.state(), idx) {
                Some(v) => Ok(SelfArg(Some(v))),
                None => Ok(Self::from_value(Value::from_stack(idx, lua)?)),
            }
        }
    }
}

type Getter<T> = Box<dyn Fn(&Lua, &T) -> mlua::Result<Value>>;

enum Member<T> {
    Field(Getter<T>),
    Value(Value),
}

/// Collects a type's members through mlua's registration API.
struct Registry<T> {
    lua: Lua,
    members: HashMap<Vec<u8>, Member<T>>,
    meta: Vec<(String, Value)>,
    error: Option<mlua::Error>,
}

impl<T: Tagged> Registry<T> {
    fn keep(&mut self, r: mlua::Result<()>) {
        if let Err(e) = r
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    fn method_fn<M, A, R>(&self, name: &str, method: M) -> mlua::Result<Function>
    where
        M: Fn(&Lua, &T, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let name: Rc<str> = name.into();
        self.lua
            .create_function(move |lua, (this, args): (SelfArg<T>, A)| {
                method(lua, &this.get(&name)?, args)
            })
    }

    fn add_member(&mut self, name: String, m: Member<T>) {
        self.members.insert(name.into_bytes(), m);
    }

    /// Records a method (or the first error).
    fn method(&mut self, name: impl Into<String>, f: mlua::Result<Function>) {
        match f {
            Ok(f) => self.add_member(name.into(), Member::Value(Value::Function(f))),
            Err(e) => self.keep(Err(e)),
        }
    }

    /// Records a metatable entry (or the first error).
    fn meta_entry(&mut self, name: impl Into<String>, v: mlua::Result<Value>) {
        match v {
            Ok(v) => self.meta.push((name.into(), v)),
            Err(e) => self.keep(Err(e)),
        }
    }
}

fn read_only(name: &str) -> mlua::Error {
    mlua::Error::runtime(format!("{name} cannot be assigned to"))
}

impl<T: Tagged> UserDataFields<T> for Registry<T> {
    fn add_field<V: IntoLua + 'static>(&mut self, name: impl Into<String>, value: V) {
        match value.into_lua(&self.lua) {
            Ok(v) => self.add_member(name.into(), Member::Value(v)),
            Err(e) => self.keep(Err(e)),
        }
    }

    fn add_field_method_get<M, R>(&mut self, name: impl Into<String>, method: M)
    where
        M: Fn(&Lua, &T) -> mlua::Result<R> + 'static,
        R: IntoLua,
    {
        let get: Getter<T> = Box::new(move |lua, t| method(lua, t)?.into_lua(lua));
        self.add_member(name.into(), Member::Field(get));
    }

    fn add_field_method_set<M, A>(&mut self, name: impl Into<String>, _: M)
    where
        M: FnMut(&Lua, &mut T, A) -> mlua::Result<()> + 'static,
        A: FromLua,
    {
        self.keep(Err(read_only(&name.into())));
    }

    fn add_field_function_get<F, R>(&mut self, name: impl Into<String>, function: F)
    where
        F: Fn(&Lua, AnyUserData) -> mlua::Result<R> + 'static,
        R: IntoLua,
    {
        let get: Getter<T> = Box::new(move |lua, t| match to_value(lua, *t)? {
            Value::UserData(ud) => function(lua, ud)?.into_lua(lua),
            _ => Err(mlua::Error::runtime(
                "internal error: tagged value is not userdata",
            )),
        });
        self.add_member(name.into(), Member::Field(get));
    }

    fn add_field_function_set<F, A>(&mut self, name: impl Into<String>, _: F)
    where
        F: FnMut(&Lua, AnyUserData, A) -> mlua::Result<()> + 'static,
        A: FromLua,
    {
        self.keep(Err(read_only(&name.into())));
    }

    fn add_meta_field<V: IntoLua + 'static>(&mut self, name: impl Into<String>, value: V) {
        let v = value.into_lua(&self.lua);
        self.meta_entry(name, v);
    }

    fn add_meta_field_with<F, R>(&mut self, name: impl Into<String>, f: F)
    where
        F: FnOnce(&Lua) -> mlua::Result<R> + 'static,
        R: IntoLua,
    {
        let v = f(&self.lua).and_then(|v| v.into_lua(&self.lua));
        self.meta_entry(name, v);
    }
}

impl<T: Tagged> UserDataMethods<T> for Registry<T> {
    fn add_method<M, A, R>(&mut self, name: impl Into<String>, method: M)
    where
        M: Fn(&Lua, &T, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let name = name.into();
        let f = self.method_fn(&name, method);
        self.method(name, f);
    }

    fn add_method_mut<M, A, R>(&mut self, name: impl Into<String>, _: M)
    where
        M: FnMut(&Lua, &mut T, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        // Datatypes are immutable values.
        self.keep(Err(read_only(&name.into())));
    }

    fn add_function<F, A, R>(&mut self, name: impl Into<String>, function: F)
    where
        F: Fn(&Lua, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let f = self.lua.create_function(function);
        self.method(name, f);
    }

    fn add_function_mut<F, A, R>(&mut self, name: impl Into<String>, function: F)
    where
        F: FnMut(&Lua, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let f = self.lua.create_function_mut(function);
        self.method(name, f);
    }

    fn add_meta_method<M, A, R>(&mut self, name: impl Into<String>, method: M)
    where
        M: Fn(&Lua, &T, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let name = name.into();
        let f = self.method_fn(&name, method).map(Value::Function);
        self.meta_entry(name, f);
    }

    fn add_meta_method_mut<M, A, R>(&mut self, name: impl Into<String>, _: M)
    where
        M: FnMut(&Lua, &mut T, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        self.keep(Err(read_only(&name.into())));
    }

    fn add_meta_function<F, A, R>(&mut self, name: impl Into<String>, function: F)
    where
        F: Fn(&Lua, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let f = self.lua.create_function(function).map(Value::Function);
        self.meta_entry(name, f);
    }

    fn add_meta_function_mut<F, A, R>(&mut self, name: impl Into<String>, function: F)
    where
        F: FnMut(&Lua, A) -> mlua::Result<R> + 'static,
        A: FromLuaMulti,
        R: IntoLuaMulti,
    {
        let f = self.lua.create_function_mut(function).map(Value::Function);
        self.meta_entry(name, f);
    }
}

/// A field value the raw `__index` pushes without mlua.
pub enum Field<T> {
    Number(f64),
    Vector(glam::Vec3),
    Str(&'static str),
    This(T),
}

/// The members a type's raw `__index` answers itself (the common reads in generator loops:
/// `cf.Position`, `color.R`, `item.Name`, ...); anything else goes to the generated one.
pub trait FastFields: Tagged {
    fn field(&self, key: &[u8]) -> Option<Field<Self>>;
}

/// How a type's `__index` is served.
pub enum Index {
    /// Raw: [`FastFields`], then the methods (a table lookup), then the generated function.
    Fields(ffi::lua_CFunction),
    /// Raw, memoised per (object, key): for objects that are unique in the VM and whose
    /// members never change (`Enum`, `Enum.Material`), so `Enum.Material.Wood` in a loop is
    /// two table lookups after the first time.
    Memo,
}

/// The raw `__index` of [`Index::Fields`] for `T` (upvalues: the generated function, the
/// methods table).
pub fn fields_index<T: FastFields>() -> Index {
    Index::Fields(raw_index_fields::<T>)
}

unsafe extern "C-unwind" fn raw_index_fields<T: FastFields>(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: an `__index` call (self, key); type-checked reads; the pushes allocate at most
    // one value with nothing Rust-owned alive.
    unsafe {
        if ffi::lua_type(state, 2) == ffi::LUA_TSTRING
            && let Some(v) = get::<T>(state, 1)
        {
            match v.field(crate::raw::string_bytes(state, 2)) {
                Some(Field::Number(n)) => ffi::lua_pushnumber(state, n),
                Some(Field::Vector(p)) => ffi::lua_pushvector(state, p.x, p.y, p.z),
                Some(Field::Str(s)) => {
                    ffi::lua_pushlstring(state, s.as_ptr() as *const std::ffi::c_char, s.len());
                }
                Some(Field::This(t)) => push(state, t),
                None => {
                    return crate::raw::method_or_slow(state);
                }
            }
            return 1;
        }
        crate::raw::call_slow(state, 1)
    }
}

/// The raw `__index` of [`Index::Memo`] (upvalues: the generated function, the memo table
/// `object -> {key -> value}`). Only successful lookups are stored.
unsafe extern "C-unwind" fn raw_index_memo(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: an `__index` call (self, key); only Luau API calls, errors unwind with nothing
    // Rust-owned alive.
    unsafe {
        let memo = ffi::lua_upvalueindex(2);
        ffi::lua_settop(state, 2);
        ffi::lua_pushvalue(state, 1);
        if ffi::lua_rawget(state, memo) == ffi::LUA_TTABLE {
            ffi::lua_pushvalue(state, 2);
            if ffi::lua_rawget(state, 3) != ffi::LUA_TNIL {
                return 1;
            }
            ffi::lua_settop(state, 3);
        } else {
            ffi::lua_settop(state, 2);
            ffi::lua_createtable(state, 0, 4);
            ffi::lua_pushvalue(state, 1);
            ffi::lua_pushvalue(state, 3);
            ffi::lua_rawset(state, memo);
        }
        // Stack: self, key, inner. Ask the generated function, then remember its answer.
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_pushvalue(state, 1);
        ffi::lua_pushvalue(state, 2);
        ffi::lua_call(state, 2, 1);
        if ffi::lua_type(state, 4) != ffi::LUA_TNIL {
            ffi::lua_pushvalue(state, 2);
            ffi::lua_pushvalue(state, 4);
            ffi::lua_rawset(state, 3);
        }
        1
    }
}

/// Builds `T`'s metatable from its declared members and installs it for `T::TAG`. Meta
/// entries given as raw functions in `overrides` (e.g. a raw C `__mul`) replace the declared
/// ones of the same name; `index` chooses how `__index` is served.
pub fn register<T: Tagged>(
    lua: &Lua,
    overrides: &[(&str, Function)],
    index: Index,
) -> mlua::Result<()> {
    let mut reg = Registry::<T> {
        lua: lua.clone(),
        members: HashMap::new(),
        meta: Vec::new(),
        error: None,
    };
    T::add_fields(&mut reg);
    T::add_methods(&mut reg);
    if let Some(e) = reg.error {
        return Err(e);
    }
    let mt = lua.create_table()?;
    let mut fallback = None;
    for (name, v) in reg.meta {
        if name == "__index" {
            fallback = Some(v);
        } else {
            mt.raw_set(name, v)?;
        }
    }
    for (name, f) in overrides {
        mt.raw_set(*name, f.clone())?;
    }
    let methods = lua.create_table()?;
    for (name, m) in &reg.members {
        if let Member::Value(v @ Value::Function(_)) = m {
            methods.raw_set(lua.create_string(name)?, v.clone())?;
        }
    }
    let members = Rc::new(reg.members);
    let generated = lua.create_function(move |lua, (this, key): (SelfArg<T>, Key)| {
        let this = this.get("__index")?;
        match members.get(key.bytes()) {
            Some(Member::Field(get)) => get(lua, &this),
            Some(Member::Value(v)) => Ok(v.clone()),
            None => match &fallback {
                Some(Value::Function(f)) => {
                    f.call::<Value>((to_value(lua, this)?, key.text().into_owned()))
                }
                _ => Err(mlua::Error::runtime(format!(
                    "{} is not a valid member of {}",
                    key.text(),
                    T::NAME
                ))),
            },
        }
    })?;
    let index = match index {
        Index::Fields(f) => crate::raw::closure_with(lua, f, generated, methods)?,
        Index::Memo => {
            crate::raw::closure_with(lua, raw_index_memo, generated, lua.create_table()?)?
        }
    };
    mt.raw_set("__index", index)?;
    mt.raw_set(
        "__newindex",
        lua.create_function(|_, (_, key): (Value, Key)| -> mlua::Result<()> {
            Err(read_only(&key.text()))
        })?,
    )?;
    if !mt.contains_key("__metatable")? {
        mt.raw_set("__metatable", "The metatable is locked")?;
    }
    mt.set_readonly(true);
    // SAFETY: the table is pushed as the one argument and taken by lua_setuserdatametatable.
    unsafe {
        lua.exec_raw::<()>(mt, |state| {
            ffi::lua_setuserdatametatable(state, T::TAG);
        })
    }
}

/// A constructor or operator returning one datatype value: `f` computes it from the stack
/// (None = not a plain case), and it is pushed afterwards.
///
/// # Safety
/// `state` is the running thread of a call of a [`closure`]; `f` only reads the stack.
pub unsafe fn dispatch_value<T: Tagged>(
    state: *mut ffi::lua_State,
    f: impl FnOnce() -> Option<T>,
) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        // SAFETY: C functions have room for one push; an allocation failure unwinds with
        // nothing Rust-owned alive.
        Ok(Some(v)) => unsafe {
            push(state, v);
            1
        },
        // SAFETY: as in `dispatch`.
        Ok(None) => unsafe { crate::raw::call_slow(state, 1) },
        // SAFETY: as in `dispatch`: `f` has unwound and dropped its values; raising from a C
        // function of this state is what Luau expects.
        Err(_) => unsafe {
            crate::raw::raise(state, "internal error in the host (a bug)".to_owned())
        },
    }
}
