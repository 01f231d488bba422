//! `UDim` and `UDim2`: scale (f32) + offset (i32) GUI dimensions.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, bad_arg, fmt_num, impl_from_lua, no_member};

/// A Roblox `UDim`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct UDim {
    /// Scale.
    pub scale: f32,
    /// Offset in pixels.
    pub offset: i32,
}

/// A Roblox `UDim2`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct UDim2 {
    /// X dimension.
    pub x: UDim,
    /// Y dimension.
    pub y: UDim,
}

impl_from_lua!(UDim => "UDim", UDim2 => "UDim2");

impl UDim {
    /// A UDim.
    pub const fn new(scale: f32, offset: i32) -> Self {
        UDim { scale, offset }
    }

    fn lerp(&self, o: &UDim, t: f32) -> UDim {
        UDim::new(
            self.scale + (o.scale - self.scale) * t,
            (self.offset as f32 + (o.offset - self.offset) as f32 * t).round() as i32,
        )
    }

    fn add(&self, o: &UDim, sign: i32) -> UDim {
        UDim::new(
            self.scale + o.scale * sign as f32,
            self.offset.wrapping_add(o.offset.wrapping_mul(sign)),
        )
    }
}

impl From<rbx_types::UDim> for UDim {
    fn from(u: rbx_types::UDim) -> Self {
        UDim::new(u.scale, u.offset)
    }
}

impl From<UDim> for rbx_types::UDim {
    fn from(u: UDim) -> Self {
        rbx_types::UDim::new(u.scale, u.offset)
    }
}

impl From<rbx_types::UDim2> for UDim2 {
    fn from(u: rbx_types::UDim2) -> Self {
        UDim2 {
            x: u.x.into(),
            y: u.y.into(),
        }
    }
}

impl From<UDim2> for rbx_types::UDim2 {
    fn from(u: UDim2) -> Self {
        rbx_types::UDim2::new(u.x.into(), u.y.into())
    }
}

/// `tostring(UDim)`: "0.5, 10", as Roblox prints it (a UDim2 wraps each axis in braces:
/// "{0.5, 10}, {1, -20}", the form the reference documentation writes UDim2 values in).
fn udim_str(u: &UDim) -> String {
    format!("{}, {}", fmt_num(u.scale), u.offset)
}

/// Lua numbers → i32 offset (truncation, as Roblox's int conversion).
fn offset(a: &Args, pos: usize) -> mlua::Result<i32> {
    Ok(a.opt_number(pos, 0.0)? as i32)
}

fn binop<T: UserData + Clone + 'static>(
    a: &Value,
    b: &Value,
    op: &str,
    ty: &str,
) -> mlua::Result<(T, T)> {
    let x = as_ud::<T>(a).ok_or_else(|| bad_arg(1, op, ty, a))?;
    let y = as_ud::<T>(b).ok_or_else(|| bad_arg(2, op, ty, b))?;
    Ok((x, y))
}

impl UserData for UDim {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "UDim");
        f.add_field_method_get("Scale", |_, u| Ok(u.scale));
        f.add_field_method_get("Offset", |_, u| Ok(u.offset));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("Lerp", |_, u, a: MultiValue| {
            let a = Args::new("Lerp", a);
            Ok(u.lerp(&a.ud::<UDim>(1, "UDim")?, a.f32(2)?))
        });
        m.add_meta_method(MetaMethod::ToString, |_, u, ()| Ok(udim_str(u)));
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<UDim>(&a), as_ud::<UDim>(&b)), (Some(a), Some(b)) if a == b))
        });
        m.add_meta_function(MetaMethod::Add, |_, (a, b): (Value, Value)| {
            let (x, y) = binop::<UDim>(&a, &b, "__add", "UDim")?;
            Ok(x.add(&y, 1))
        });
        m.add_meta_function(MetaMethod::Sub, |_, (a, b): (Value, Value)| {
            let (x, y) = binop::<UDim>(&a, &b, "__sub", "UDim")?;
            Ok(x.add(&y, -1))
        });
        m.add_meta_method(MetaMethod::Unm, |_, u, ()| {
            Ok(UDim::new(-u.scale, -u.offset))
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "UDim"))
        });
    }
}

impl UserData for UDim2 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "UDim2");
        f.add_field_method_get("X", |_, u| Ok(u.x));
        f.add_field_method_get("Y", |_, u| Ok(u.y));
        f.add_field_method_get("Width", |_, u| Ok(u.x));
        f.add_field_method_get("Height", |_, u| Ok(u.y));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("Lerp", |_, u, a: MultiValue| {
            let a = Args::new("Lerp", a);
            let (o, t) = (a.ud::<UDim2>(1, "UDim2")?, a.f32(2)?);
            Ok(UDim2 {
                x: u.x.lerp(&o.x, t),
                y: u.y.lerp(&o.y, t),
            })
        });
        m.add_meta_method(MetaMethod::ToString, |_, u, ()| {
            Ok(format!("{{{}}}, {{{}}}", udim_str(&u.x), udim_str(&u.y)))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<UDim2>(&a), as_ud::<UDim2>(&b)), (Some(a), Some(b)) if a == b))
        });
        m.add_meta_function(MetaMethod::Add, |_, (a, b): (Value, Value)| {
            let (p, q) = binop::<UDim2>(&a, &b, "__add", "UDim2")?;
            Ok(UDim2 {
                x: p.x.add(&q.x, 1),
                y: p.y.add(&q.y, 1),
            })
        });
        m.add_meta_function(MetaMethod::Sub, |_, (a, b): (Value, Value)| {
            let (p, q) = binop::<UDim2>(&a, &b, "__sub", "UDim2")?;
            Ok(UDim2 {
                x: p.x.add(&q.x, -1),
                y: p.y.add(&q.y, -1),
            })
        });
        m.add_meta_method(MetaMethod::Unm, |_, u, ()| {
            Ok(UDim2 {
                x: UDim::new(-u.x.scale, -u.x.offset),
                y: UDim::new(-u.y.scale, -u.y.offset),
            })
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "UDim2"))
        });
    }
}

/// Installs the `UDim` and `UDim2` constructor tables.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(UDim::new(a.opt_f32(1, 0.0)?, offset(&a, 2)?))
        })?,
    )?;
    crate::args::install_global(lua, "UDim", t)?;

    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            if let (Some(x), Some(y)) = (as_ud::<UDim>(a.get(1)), as_ud::<UDim>(a.get(2))) {
                return Ok(UDim2 { x, y });
            }
            Ok(UDim2 {
                x: UDim::new(a.opt_f32(1, 0.0)?, offset(&a, 2)?),
                y: UDim::new(a.opt_f32(3, 0.0)?, offset(&a, 4)?),
            })
        })?,
    )?;
    t.raw_set(
        "fromScale",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromScale", a);
            Ok(UDim2 {
                x: UDim::new(a.opt_f32(1, 0.0)?, 0),
                y: UDim::new(a.opt_f32(2, 0.0)?, 0),
            })
        })?,
    )?;
    t.raw_set(
        "fromOffset",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromOffset", a);
            Ok(UDim2 {
                x: UDim::new(0.0, offset(&a, 1)?),
                y: UDim::new(0.0, offset(&a, 2)?),
            })
        })?,
    )?;
    crate::args::install_global(lua, "UDim2", t)
}
