//! `Vector3`: an f32 3-vector over `glam::Vec3` with the Roblox constructors, members and operators.

use glam::Vec3;
use mlua::ffi;
use mlua::{Lua, MultiValue, Value};
use std::ffi::c_int;

use crate::args::{Args, as_number, as_ud, fmt_num, impl_from_lua, no_member};
use crate::enums::EnumItem;

/// A Roblox `Vector3` (f32 components).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Vector3(pub Vec3);

impl_from_lua!(Vector3 => "Vector3");

/// As in Roblox, a `Vector3` is Luau's native `vector`: built without a call (the compiler
/// treats `Vector3.new` as the vector constructor), compared and hashed by value, with
/// arithmetic in the VM. Members beyond X/Y/Z come from the vector metatable below.
impl crate::args::FromValue for Vector3 {
    fn from_value(v: &Value) -> Option<Vector3> {
        match v {
            Value::Vector(v) => Some(Vector3(Vec3::new(v.x(), v.y(), v.z()))),
            _ => None,
        }
    }
}

impl Vector3 {
    /// The Luau value (a native vector).
    pub fn value(self) -> Value {
        Value::Vector(mlua::Vector::new(self.0.x, self.0.y, self.0.z))
    }
}

impl mlua::IntoLua for Vector3 {
    fn into_lua(self, _: &Lua) -> mlua::Result<Value> {
        Ok(Value::Vector(mlua::Vector::new(
            self.0.x, self.0.y, self.0.z,
        )))
    }
}

impl From<rbx_types::Vector3> for Vector3 {
    fn from(v: rbx_types::Vector3) -> Self {
        Vector3(Vec3::new(v.x, v.y, v.z))
    }
}

impl From<Vector3> for rbx_types::Vector3 {
    fn from(v: Vector3) -> Self {
        rbx_types::Vector3::new(v.0.x, v.0.y, v.0.z)
    }
}

/// The unit vector of a `NormalId` value (Right, Top, Back, Left, Bottom, Front).
pub(crate) fn normal_id_vector(id: u32) -> Option<Vec3> {
    Some(match id {
        0 => Vec3::X,
        1 => Vec3::Y,
        2 => Vec3::Z,
        // Not `-Vec3::X`: negating the zeros would print `-1, -0, -0` (Roblox: `-1, 0, 0`).
        3 => Vec3::NEG_X,
        4 => Vec3::NEG_Y,
        5 => Vec3::NEG_Z,
        _ => return None,
    })
}

/// Reads an enum argument of enum `enum_name` given as an EnumItem, its name or its number.
pub(crate) fn enum_arg(args: &Args, pos: usize, enum_name: &str) -> mlua::Result<u32> {
    let v = args.get(pos);
    if let Some(item) = as_ud::<EnumItem>(v)
        && item.enum_name == enum_name
    {
        return Ok(item.value);
    }
    if let Some(n) = as_number(v) {
        return Ok(n as u32);
    }
    if let Value::String(s) = v
        && let Some(item) = EnumItem::from_name(enum_name, &s.to_string_lossy())
    {
        return Ok(item.value);
    }
    Err(args.bad(pos, &format!("Enum.{enum_name}")))
}

/// Per-component fuzzy equality used by `FuzzyEq` on vectors and CFrames: each component
/// within `eps` (absolute) of the other's, as the Roblox reference describes.
pub(crate) fn fuzzy_eq(a: f32, b: f32, eps: f32) -> bool {
    (a - b).abs() <= eps
}

/// The signed angle between two vectors, signed by `axis` when given.
pub(crate) fn angle_between(a: Vec3, b: Vec3, axis: Option<Vec3>) -> f32 {
    let cross = a.cross(b);
    let angle = cross.length().atan2(a.dot(b));
    match axis {
        Some(ax) if cross.dot(ax) < 0.0 => -angle,
        _ => angle,
    }
}

fn arith(op: &str, a: &Value, b: &Value, allow_num: bool) -> mlua::Result<Vector3> {
    crate::vec_arith::arith(op, a, b, allow_num, "Vector3", |v| {
        as_ud::<Vector3>(v).map(|v| v.0)
    })
    .map(Vector3)
}

/// Builds the metatable Luau shares between all vectors: `typeof` name, members, methods,
/// `tostring`, and Roblox's errors for the operators the VM does not define (vector ± number).
fn vector_metatable(lua: &Lua) -> mlua::Result<mlua::Table> {
    let methods = lua.create_table()?;
    let method = |name: &str, f: fn(Vec3, Args) -> mlua::Result<Value>| -> mlua::Result<()> {
        let owned: &'static str = Box::leak(name.to_owned().into_boxed_str());
        methods.raw_set(
            name,
            lua.create_function(move |_, mut a: MultiValue| {
                let this = a.pop_front().unwrap_or(Value::Nil);
                let v = as_ud::<Vector3>(&this).ok_or_else(|| {
                    mlua::Error::runtime(format!(
                        "Expected ':' not '.' calling member function {owned}"
                    ))
                })?;
                f(v.0, Args::new(owned, a))
            })?,
        )
    };
    fn v3(v: Vec3) -> mlua::Result<Value> {
        Ok(Value::Vector(mlua::Vector::new(v.x, v.y, v.z)))
    }
    for name in ["Lerp", "lerp"] {
        method(name, |v, a| {
            let goal = a.ud::<Vector3>(1, "Vector3")?.0;
            let t = a.f32(2)?;
            v3(v + (goal - v) * t)
        })?;
    }
    method("Dot", |v, a| {
        Ok(Value::Number(v.dot(a.ud::<Vector3>(1, "Vector3")?.0) as f64))
    })?;
    method(
        "Cross",
        |v, a| v3(v.cross(a.ud::<Vector3>(1, "Vector3")?.0)),
    )?;
    // The two products as raw C functions with the mlua ones above as their fallback.
    for (name, f) in [("Dot", raw_dot as ffi::lua_CFunction), ("Cross", raw_cross)] {
        let slow: mlua::Function = methods.raw_get(name)?;
        methods.raw_set(name, crate::raw::closure(lua, f, slow)?)?;
    }
    method("FuzzyEq", |v, a| {
        let o = a.ud::<Vector3>(1, "Vector3")?.0;
        let eps = a.opt_f32(2, 1e-5)?;
        Ok(Value::Boolean((0..3).all(|i| fuzzy_eq(v[i], o[i], eps))))
    })?;
    method("Min", |v, a| {
        let mut r = v;
        for i in 1..=a.len().max(1) {
            r = r.min(a.ud::<Vector3>(i, "Vector3")?.0);
        }
        v3(r)
    })?;
    method("Max", |v, a| {
        let mut r = v;
        for i in 1..=a.len().max(1) {
            r = r.max(a.ud::<Vector3>(i, "Vector3")?.0);
        }
        v3(r)
    })?;
    method("Abs", |v, _| v3(v.abs()))?;
    method("Ceil", |v, _| v3(v.ceil()))?;
    method("Floor", |v, _| v3(v.floor()))?;
    method("Sign", |v, _| v3(Vec3::from_array(v.to_array().map(sign))))?;
    method("Angle", |v, a| {
        let other = a.ud::<Vector3>(1, "Vector3")?.0;
        let axis = if a.is_nil(2) {
            None
        } else {
            Some(a.ud::<Vector3>(2, "Vector3")?.0)
        };
        Ok(Value::Number(angle_between(v, other, axis) as f64))
    })?;
    methods.set_readonly(true);

    let meta = lua.create_table()?;
    meta.raw_set("__type", "Vector3")?;
    let method_table = methods.clone();
    let slow = lua.create_function(move |_, (v, k): (Vector3, mlua::LuaString)| {
        let v = v.0;
        match &*k.as_bytes() {
            b"Magnitude" | b"magnitude" => Ok(Value::Number(v.length() as f64)),
            b"Unit" | b"unit" => v3(v / v.length()),
            _ => match methods.raw_get::<Value>(&k)? {
                Value::Nil => Err(no_member(&k.to_string_lossy(), "Vector3")),
                f => Ok(f),
            },
        }
    })?;
    // Generator math reads v.Magnitude / v.Unit and calls v:Dot / v:Cross in loops: a raw
    // __index answers those without mlua (the slow function keeps the errors).
    meta.raw_set(
        "__index",
        crate::raw::closure_with(lua, raw_index, slow, method_table)?,
    )?;
    meta.raw_set(
        "__tostring",
        lua.create_function(|_, v: Vector3| {
            Ok(format!(
                "{}, {}, {}",
                fmt_num(v.0.x),
                fmt_num(v.0.y),
                fmt_num(v.0.z)
            ))
        })?,
    )?;
    for (name, allow_num) in [
        ("__add", false),
        ("__sub", false),
        ("__mul", true),
        ("__div", true),
        ("__idiv", true),
    ] {
        meta.raw_set(
            name,
            lua.create_function(move |_, (a, b): (Value, Value)| arith(name, &a, &b, allow_num))?,
        )?;
    }
    meta.raw_set("__metatable", "The metatable is locked")?;
    meta.set_readonly(true);
    Ok(meta)
}

/// `__index` of vectors (upvalues: the mlua function, the methods table).
unsafe extern "C-unwind" fn raw_index(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: an `__index` call (vector, key); type-checked reads, at most one push.
    unsafe {
        if let Some(v) = crate::raw::vector(state, 1)
            && ffi::lua_type(state, 2) == ffi::LUA_TSTRING
        {
            match crate::raw::string_bytes(state, 2) {
                b"Magnitude" | b"magnitude" => ffi::lua_pushnumber(state, v.length() as f64),
                b"Unit" | b"unit" => {
                    let u = v / v.length();
                    ffi::lua_pushvector(state, u.x, u.y, u.z);
                }
                _ => {
                    return crate::raw::method_or_slow(state);
                }
            }
            return 1;
        }
        crate::raw::call_slow(state, 1)
    }
}

/// The two vectors of `v:Dot(w)` / `v:Cross(w)`, if that is exactly what was passed.
unsafe fn two_vectors(state: *mut ffi::lua_State) -> Option<(Vec3, Vec3)> {
    // SAFETY: type-checked reads.
    unsafe {
        if ffi::lua_gettop(state) != 2 {
            return None;
        }
        Some((crate::raw::vector(state, 1)?, crate::raw::vector(state, 2)?))
    }
}

unsafe extern "C-unwind" fn raw_dot(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: a C function call; one push.
    unsafe {
        match two_vectors(state) {
            Some((a, b)) => {
                ffi::lua_pushnumber(state, a.dot(b) as f64);
                1
            }
            None => crate::raw::call_slow(state, 1),
        }
    }
}

unsafe extern "C-unwind" fn raw_cross(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: a C function call; one push.
    unsafe {
        match two_vectors(state) {
            Some((a, b)) => {
                let c = a.cross(b);
                ffi::lua_pushvector(state, c.x, c.y, c.z);
                1
            }
            None => crate::raw::call_slow(state, 1),
        }
    }
}

/// `math.sign` as Roblox's `Vector3:Sign` (0 stays 0).
pub(crate) fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Installs the `Vector3` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(Vector3(Vec3::new(
                a.opt_component(1)?,
                a.opt_component(2)?,
                a.opt_component(3)?,
            )))
        })?,
    )?;
    t.set("zero", Vector3(Vec3::ZERO))?;
    t.set("one", Vector3(Vec3::ONE))?;
    t.set("xAxis", Vector3(Vec3::X))?;
    t.set("yAxis", Vector3(Vec3::Y))?;
    t.set("zAxis", Vector3(Vec3::Z))?;
    // Both spellings exist in Roblox: `fromNormalId`/`fromAxis` and the older capitalised ones.
    for name in ["FromNormalId", "fromNormalId"] {
        t.set(
            name,
            lua.create_function(move |_, a: MultiValue| {
                let a = Args::new(name, a);
                let id = enum_arg(&a, 1, "NormalId")?;
                normal_id_vector(id)
                    .map(Vector3)
                    .ok_or_else(|| a.bad(1, "Enum.NormalId"))
            })?,
        )?;
    }
    for name in ["FromAxis", "fromAxis"] {
        t.set(
            name,
            lua.create_function(move |_, a: MultiValue| {
                let a = Args::new(name, a);
                match enum_arg(&a, 1, "Axis")? {
                    0 => Ok(Vector3(Vec3::X)),
                    1 => Ok(Vector3(Vec3::Y)),
                    2 => Ok(Vector3(Vec3::Z)),
                    _ => Err(a.bad(1, "Enum.Axis")),
                }
            })?,
        )?;
    }
    lua.set_type_metatable::<mlua::Vector>(Some(vector_metatable(lua)?));
    crate::args::install_global(lua, "Vector3", t)
}
