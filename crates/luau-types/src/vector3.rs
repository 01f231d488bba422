//! `Vector3`: an f32 3-vector over `glam::Vec3` with the Roblox constructors, members and operators.

use glam::Vec3;
use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_number, as_ud, fmt_num, impl_from_lua, no_member};
use crate::enums::EnumItem;

/// A Roblox `Vector3` (f32 components).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Vector3(pub Vec3);

impl_from_lua!(Vector3 => "Vector3");

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
        3 => -Vec3::X,
        4 => -Vec3::Y,
        5 => -Vec3::Z,
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

impl UserData for Vector3 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Vector3");
        f.add_field_method_get("X", |_, v| Ok(v.0.x));
        f.add_field_method_get("Y", |_, v| Ok(v.0.y));
        f.add_field_method_get("Z", |_, v| Ok(v.0.z));
        f.add_field_method_get("x", |_, v| Ok(v.0.x));
        f.add_field_method_get("y", |_, v| Ok(v.0.y));
        f.add_field_method_get("z", |_, v| Ok(v.0.z));
        f.add_field_method_get("Magnitude", |_, v| Ok(v.0.length()));
        f.add_field_method_get("magnitude", |_, v| Ok(v.0.length()));
        f.add_field_method_get("Unit", |_, v| Ok(Vector3(v.0 / v.0.length())));
        f.add_field_method_get("unit", |_, v| Ok(Vector3(v.0 / v.0.length())));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["Lerp", "lerp"] {
            m.add_method(name, |_, v, a: MultiValue| {
                let a = Args::new("Lerp", a);
                let goal = a.ud::<Vector3>(1, "Vector3")?;
                let t = a.f32(2)?;
                Ok(Vector3(v.0 + (goal.0 - v.0) * t))
            });
        }
        m.add_method("Dot", |_, v, a: MultiValue| {
            let a = Args::new("Dot", a);
            Ok(v.0.dot(a.ud::<Vector3>(1, "Vector3")?.0))
        });
        m.add_method("Cross", |_, v, a: MultiValue| {
            let a = Args::new("Cross", a);
            Ok(Vector3(v.0.cross(a.ud::<Vector3>(1, "Vector3")?.0)))
        });
        m.add_method("FuzzyEq", |_, v, a: MultiValue| {
            let a = Args::new("FuzzyEq", a);
            let o = a.ud::<Vector3>(1, "Vector3")?.0;
            let eps = a.opt_f32(2, 1e-5)?;
            Ok((0..3).all(|i| fuzzy_eq(v.0[i], o[i], eps)))
        });
        m.add_method("Min", |_, v, a: MultiValue| {
            let n = a.len();
            let a = Args::new("Min", a);
            let mut r = v.0;
            for i in 1..=n.max(1) {
                r = r.min(a.ud::<Vector3>(i, "Vector3")?.0);
            }
            Ok(Vector3(r))
        });
        m.add_method("Max", |_, v, a: MultiValue| {
            let n = a.len();
            let a = Args::new("Max", a);
            let mut r = v.0;
            for i in 1..=n.max(1) {
                r = r.max(a.ud::<Vector3>(i, "Vector3")?.0);
            }
            Ok(Vector3(r))
        });
        m.add_method("Abs", |_, v, ()| Ok(Vector3(v.0.abs())));
        m.add_method("Ceil", |_, v, ()| Ok(Vector3(v.0.ceil())));
        m.add_method("Floor", |_, v, ()| Ok(Vector3(v.0.floor())));
        m.add_method("Sign", |_, v, ()| {
            Ok(Vector3(Vec3::from_array(v.0.to_array().map(sign))))
        });
        m.add_method("Angle", |_, v, a: MultiValue| {
            let a = Args::new("Angle", a);
            let other = a.ud::<Vector3>(1, "Vector3")?.0;
            let axis = if a.is_nil(2) {
                None
            } else {
                Some(a.ud::<Vector3>(2, "Vector3")?.0)
            };
            Ok(angle_between(v.0, other, axis))
        });
        m.add_meta_method(MetaMethod::ToString, |_, v, ()| {
            Ok(format!(
                "{}, {}, {}",
                fmt_num(v.0.x),
                fmt_num(v.0.y),
                fmt_num(v.0.z)
            ))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<Vector3>(&a), as_ud::<Vector3>(&b)) {
                (Some(a), Some(b)) => a.0 == b.0,
                _ => false,
            })
        });
        m.add_meta_method(MetaMethod::Unm, |_, v, ()| Ok(Vector3(-v.0)));
        m.add_meta_function(MetaMethod::Add, |_, (a, b): (Value, Value)| {
            arith("__add", &a, &b, false)
        });
        m.add_meta_function(MetaMethod::Sub, |_, (a, b): (Value, Value)| {
            arith("__sub", &a, &b, false)
        });
        m.add_meta_function(MetaMethod::Mul, |_, (a, b): (Value, Value)| {
            arith("__mul", &a, &b, true)
        });
        m.add_meta_function(MetaMethod::Div, |_, (a, b): (Value, Value)| {
            arith("__div", &a, &b, true)
        });
        m.add_meta_function(MetaMethod::IDiv, |_, (a, b): (Value, Value)| {
            arith("__idiv", &a, &b, true)
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, String)| {
            Err::<(), _>(no_member(&k, "Vector3"))
        });
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
                a.opt_f32(1, 0.0)?,
                a.opt_f32(2, 0.0)?,
                a.opt_f32(3, 0.0)?,
            )))
        })?,
    )?;
    t.set("zero", Vector3(Vec3::ZERO))?;
    t.set("one", Vector3(Vec3::ONE))?;
    t.set("xAxis", Vector3(Vec3::X))?;
    t.set("yAxis", Vector3(Vec3::Y))?;
    t.set("zAxis", Vector3(Vec3::Z))?;
    t.set(
        "FromNormalId",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("FromNormalId", a);
            let id = enum_arg(&a, 1, "NormalId")?;
            normal_id_vector(id)
                .map(Vector3)
                .ok_or_else(|| a.bad(1, "Enum.NormalId"))
        })?,
    )?;
    t.set(
        "FromAxis",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("FromAxis", a);
            match enum_arg(&a, 1, "Axis")? {
                0 => Ok(Vector3(Vec3::X)),
                1 => Ok(Vector3(Vec3::Y)),
                2 => Ok(Vector3(Vec3::Z)),
                _ => Err(a.bad(1, "Enum.Axis")),
            }
        })?,
    )?;
    crate::args::install_global(lua, "Vector3", t)
}
