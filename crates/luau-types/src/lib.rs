//! Roblox datatypes bound to the Luau VM: `Vector3`, `CFrame`, `Color3`, `Enum`, `Random`, ...
//! with the Roblox constructors, members and operators (Vector3 is Luau's native vector;
//! CFrame, Color3 and EnumItem are tagged userdata, see [`tagged`]; the rest `mlua` userdata),
//! plus strict conversions between Lua values and `rbx_types::Variant` for property writes and
//! attributes, and the raw C-API callback helpers ([`raw`]) the host shares.
//!
//! **Architecture invariant:** this crate owns values only. It never holds an Instance or DOM
//! tree (the host crate does, and handles `Ref`), does no I/O (the reflection database is the
//! bundled one, never a file or environment override) and reads no clock (`Random.new()`
//! without a seed uses the fixed [`random::DEFAULT_SEED`]).
//!
//! For the host: every datatype is a public newtype implementing `FromLua`/`IntoLua` (take
//! `Vector3`/`CFrame` arguments directly) with `From` both ways to its `rbx_types` value. Push
//! EnumItems with [`enum_item_value`] (one userdata per item per VM) rather than `IntoLua`.
//! Argument errors read like Roblox's: `invalid argument #1 to 'new' (number expected, got
//! string)`. `types/datatypes.d.luau` declares the globals for editors; a test keeps it in step.

mod args;
pub mod brickcolor;
pub mod capabilities;
pub mod cframe;
mod cframe_lua;
pub mod color3;
pub mod content;
mod convert;
pub mod datetime;
pub mod editable_image;
pub mod editable_mesh;
pub mod enums;
pub mod extras;
pub mod font;
pub mod int16;
pub mod random;
pub mod raw;
pub mod rect;
pub mod sequences;
pub mod shared_table;
pub mod tagged;
pub mod tween;
pub mod udim;
mod utf8;
mod vec_arith;
pub mod vector2;
pub mod vector3;

pub use args::FromValue;
pub use brickcolor::BrickColor;
pub use cframe::CFrame;
pub use color3::Color3;
pub use content::Content;
pub use convert::{
    ConvertError, lua_to_attribute, lua_to_variant, validate_attribute_name, variant_to_lua,
    zero_value,
};
pub use datetime::DateTime;
pub use enums::{EnumItem, LuaEnum, enum_item_value};
pub use extras::{Axes, Faces, PhysicalProperties, Ray, Region3};
pub use font::Font;
pub use int16::{Region3int16, Vector2int16, Vector3int16};
pub use random::Random;
/// The reflection types this crate's API uses (7.x: the version the bundled database is typed with).
pub use rbx_reflection;
pub use rect::Rect;
pub use sequences::{
    ColorSequence, ColorSequenceKeypoint, NumberRange, NumberSequence, NumberSequenceKeypoint,
};
pub use tween::TweenInfo;
pub use udim::{UDim, UDim2};
pub use vector2::Vector2;
pub use vector3::Vector3;

/// Installs the datatype globals (`Vector3`, `Vector2`, `CFrame`, `Color3`, `BrickColor`, `UDim`,
/// `UDim2`, `NumberRange`, `NumberSequence`, `NumberSequenceKeypoint`, `ColorSequence`,
/// `ColorSequenceKeypoint`, `Rect`, `Enum`, `Random`, `Font`, `Ray`, `PhysicalProperties`, `Faces`,
/// `Axes`, `Region3`, `Region3int16`, `Vector3int16`, `Vector2int16`, `Content`, `DateTime` without `now`, `TweenInfo`, `SharedTable`), plus the
/// no-op `debug.profilebegin`/`debug.profileend` and the memory categories when the VM has a
/// writable `debug` table.
/// Constructor tables are read-only. Enum objects are built lazily on first access and cached
/// in the VM's app data, so call this before holding any app-data borrow.
pub fn register(lua: &mlua::Lua) -> mlua::Result<()> {
    vector3::register(lua)?;
    vector2::register(lua)?;
    cframe_lua::register(lua)?;
    color3::register(lua)?;
    brickcolor::register(lua)?;
    udim::register(lua)?;
    sequences::register(lua)?;
    rect::register(lua)?;
    enums::register(lua)?;
    random::register(lua)?;
    font::register(lua)?;
    extras::register(lua)?;
    int16::register(lua)?;
    content::register(lua)?;
    datetime::register(lua)?;
    tween::register(lua)?;
    shared_table::register(lua)?;
    capabilities::register(lua)?;
    utf8::register(lua)?;
    install_profiler_no_ops(lua)
}

/// `debug.profilebegin(label)` / `debug.profileend()`: Roblox's MicroProfiler markers. Headless
/// there is no profiler, so they only check their argument and do nothing.
fn install_profiler_no_ops(lua: &mlua::Lua) -> mlua::Result<()> {
    let Ok(mlua::Value::Table(debug)) = lua.globals().raw_get::<mlua::Value>("debug") else {
        return Ok(());
    };
    if debug.is_readonly() {
        return Ok(());
    }
    debug.raw_set(
        "profilebegin",
        lua.create_function(|_, a: mlua::MultiValue| {
            args::Args::new("profilebegin", a).string(1).map(|_| ())
        })?,
    )?;
    debug.raw_set("profileend", lua.create_function(|_, ()| Ok(()))?)?;
    install_memory_categories(lua, &debug)
}

/// `debug.setmemorycategory(tag)`, `debug.getmemorycategory()` and
/// `debug.resetmemorycategory()`: Roblox's tags for the Developer Console's memory view, per
/// thread. Headless there is no console to show them in, but a script reads back what it set:
/// each thread's tag (kept while the thread lives), else the name of the script whose code
/// asks (Roblox: "typically, the script name"). `setmemorycategory` returns the category it
/// replaces.
fn install_memory_categories(lua: &mlua::Lua, debug: &mlua::Table) -> mlua::Result<()> {
    let tags = lua.create_table()?;
    let weak_keys = lua.create_table()?;
    weak_keys.raw_set("__mode", "k")?;
    tags.set_metatable(Some(weak_keys))?;
    let current = {
        let tags = tags.clone();
        move |lua: &mlua::Lua| -> mlua::Result<String> {
            match tags.raw_get::<Option<String>>(lua.current_thread())? {
                Some(tag) => Ok(tag),
                None => Ok(calling_script_name(lua)),
            }
        }
    };
    let get = current.clone();
    debug.raw_set(
        "getmemorycategory",
        lua.create_function(move |lua, ()| get(lua))?,
    )?;
    let set_tags = tags.clone();
    debug.raw_set(
        "setmemorycategory",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let tag = args::Args::new("setmemorycategory", a).string(1)?;
            let previous = current(lua)?;
            set_tags.raw_set(lua.current_thread(), tag)?;
            Ok(previous)
        })?,
    )?;
    debug.raw_set(
        "resetmemorycategory",
        lua.create_function(move |lua, ()| tags.raw_set(lua.current_thread(), mlua::Value::Nil))?,
    )
}

/// The name of the script whose Luau function called the running native function: the
/// last part of its chunk name (`@ServerStorage.Gen.Util` → `Util`, `@/x/Gen.luau` → `Gen`).
fn calling_script_name(lua: &mlua::Lua) -> String {
    let source = lua
        .inspect_stack(1, |d| d.source().source.map(|s| s.into_owned()))
        .flatten()
        .unwrap_or_default();
    let chunk = source.strip_prefix('@').unwrap_or(&source);
    let mut parts = chunk.rsplit(['/', '\\']);
    let file = parts.next().unwrap_or(chunk);
    let name = match file.rsplit_once('.') {
        // A module folder's init script is named after its folder.
        Some(("init", "luau" | "lua")) => parts.next().unwrap_or("init"),
        // A file's stem.
        Some((stem, "luau" | "lua")) => stem,
        // An instance path's last name.
        Some((_, last)) => last,
        None => file,
    };
    name.to_owned()
}

/// Roblox's `typeof` of a value: the `__type` metafield for userdata (`"Vector3"`,
/// `"Instance"`, ...), else the Luau type name (`"number"`, `"string"`, `"table"`, ...).
pub fn type_name(v: &mlua::Value) -> String {
    use mlua::Value;
    match v {
        Value::Nil => "nil".into(),
        Value::Boolean(_) => "boolean".into(),
        Value::Integer(_) | Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Table(_) => "table".into(),
        Value::Function(_) => "function".into(),
        Value::Thread(_) => "thread".into(),
        // Vector3 is Luau's native vector, as in Roblox.
        Value::Vector(_) => "Vector3".into(),
        Value::Buffer(_) => "buffer".into(),
        Value::UserData(ud) => match tagged::type_name(ud) {
            Some(name) => name.into(),
            None => ud
                .type_name()
                .map(|s| s.to_string_lossy())
                .unwrap_or_else(|_| "userdata".into()),
        },
        Value::Error(_) => "error".into(),
        // The procmodel host represents instances as light userdata (see the luau crate).
        Value::LightUserData(_) => "Instance".into(),
        _ => "userdata".into(),
    }
}
