//! `Vector2`: an f32 2-vector over `glam::Vec2` with the Roblox constructors, members and operators.

use glam::Vec2;
use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, fmt_num, impl_from_lua, no_member};
use crate::vector3::{fuzzy_eq, sign};

/// A Roblox `Vector2` (f32 components).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Vector2(pub Vec2);

impl_from_lua!(Vector2 => "Vector2");

impl From<rbx_types::Vector2> for Vector2 {
    fn from(v: rbx_types::Vector2) -> Self {
        Vector2(Vec2::new(v.x, v.y))
    }
}

impl From<Vector2> for rbx_types::Vector2 {
    fn from(v: Vector2) -> Self {
        rbx_types::Vector2::new(v.0.x, v.0.y)
    }
}

fn arith(op: &str, a: &Value, b: &Value, allow_num: bool) -> mlua::Result<Vector2> {
    crate::vec_arith::arith(op, a, b, allow_num, "Vector2", |v| {
        as_ud::<Vector2>(v).map(|v| v.0)
    })
    .map(Vector2)
}

impl UserData for Vector2 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Vector2");
        f.add_field_method_get("X", |_, v| Ok(v.0.x));
        f.add_field_method_get("Y", |_, v| Ok(v.0.y));
        f.add_field_method_get("x", |_, v| Ok(v.0.x));
        f.add_field_method_get("y", |_, v| Ok(v.0.y));
        f.add_field_method_get("Magnitude", |_, v| Ok(v.0.length()));
        f.add_field_method_get("magnitude", |_, v| Ok(v.0.length()));
        f.add_field_method_get("Unit", |_, v| Ok(Vector2(v.0 / v.0.length())));
        f.add_field_method_get("unit", |_, v| Ok(Vector2(v.0 / v.0.length())));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["Lerp", "lerp"] {
            m.add_method(name, |_, v, a: MultiValue| {
                let a = Args::new("Lerp", a);
                let goal = a.ud::<Vector2>(1, "Vector2")?;
                let t = a.f32(2)?;
                Ok(Vector2(v.0 + (goal.0 - v.0) * t))
            });
        }
        m.add_method("Dot", |_, v, a: MultiValue| {
            let a = Args::new("Dot", a);
            Ok(v.0.dot(a.ud::<Vector2>(1, "Vector2")?.0))
        });
        m.add_method("Cross", |_, v, a: MultiValue| {
            let a = Args::new("Cross", a);
            Ok(v.0.perp_dot(a.ud::<Vector2>(1, "Vector2")?.0))
        });
        m.add_method("FuzzyEq", |_, v, a: MultiValue| {
            let a = Args::new("FuzzyEq", a);
            let o = a.ud::<Vector2>(1, "Vector2")?.0;
            let eps = a.opt_f32(2, 1e-5)?;
            Ok((0..2).all(|i| fuzzy_eq(v.0[i], o[i], eps)))
        });
        m.add_method("Min", |_, v, a: MultiValue| {
            let n = a.len();
            let a = Args::new("Min", a);
            let mut r = v.0;
            for i in 1..=n.max(1) {
                r = r.min(a.ud::<Vector2>(i, "Vector2")?.0);
            }
            Ok(Vector2(r))
        });
        m.add_method("Max", |_, v, a: MultiValue| {
            let n = a.len();
            let a = Args::new("Max", a);
            let mut r = v.0;
            for i in 1..=n.max(1) {
                r = r.max(a.ud::<Vector2>(i, "Vector2")?.0);
            }
            Ok(Vector2(r))
        });
        m.add_method("Abs", |_, v, ()| Ok(Vector2(v.0.abs())));
        m.add_method("Ceil", |_, v, ()| Ok(Vector2(v.0.ceil())));
        m.add_method("Floor", |_, v, ()| Ok(Vector2(v.0.floor())));
        m.add_method("Sign", |_, v, ()| {
            Ok(Vector2(Vec2::from_array(v.0.to_array().map(sign))))
        });
        m.add_method("Angle", |_, v, a: MultiValue| {
            let a = Args::new("Angle", a);
            let other = a.ud::<Vector2>(1, "Vector2")?.0;
            let angle = v.0.perp_dot(other).atan2(v.0.dot(other));
            let signed = matches!(a.get(2), Value::Boolean(true));
            Ok(if signed { angle } else { angle.abs() })
        });
        m.add_meta_method(MetaMethod::ToString, |_, v, ()| {
            Ok(format!("{}, {}", fmt_num(v.0.x), fmt_num(v.0.y)))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<Vector2>(&a), as_ud::<Vector2>(&b)) {
                (Some(a), Some(b)) => a.0 == b.0,
                _ => false,
            })
        });
        m.add_meta_method(MetaMethod::Unm, |_, v, ()| Ok(Vector2(-v.0)));
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
            Err::<(), _>(no_member(&k, "Vector2"))
        });
    }
}

/// Installs the `Vector2` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(Vector2(Vec2::new(a.opt_component(1)?, a.opt_component(2)?)))
        })?,
    )?;
    t.set("zero", Vector2(Vec2::ZERO))?;
    t.set("one", Vector2(Vec2::ONE))?;
    t.set("xAxis", Vector2(Vec2::X))?;
    t.set("yAxis", Vector2(Vec2::Y))?;
    crate::args::install_global(lua, "Vector2", t)
}
