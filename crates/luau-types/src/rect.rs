//! `Rect`: an axis-aligned 2D rectangle given by its `Min` and `Max` corners.

use glam::Vec2;
use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods};

use crate::args::{Args, as_ud, fmt_num, impl_from_lua};
use crate::vector2::Vector2;

/// A Roblox `Rect`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Rect {
    /// Minimum corner.
    pub min: Vec2,
    /// Maximum corner.
    pub max: Vec2,
}

impl_from_lua!(Rect => "Rect");

impl From<rbx_types::Rect> for Rect {
    fn from(r: rbx_types::Rect) -> Self {
        Rect {
            min: Vector2::from(r.min).0,
            max: Vector2::from(r.max).0,
        }
    }
}

impl From<Rect> for rbx_types::Rect {
    fn from(r: Rect) -> Self {
        rbx_types::Rect::new(Vector2(r.min).into(), Vector2(r.max).into())
    }
}

impl UserData for Rect {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Rect");
        f.add_field_method_get("Min", |_, r| Ok(Vector2(r.min)));
        f.add_field_method_get("Max", |_, r| Ok(Vector2(r.max)));
        f.add_field_method_get("Width", |_, r| Ok(r.max.x - r.min.x));
        f.add_field_method_get("Height", |_, r| Ok(r.max.y - r.min.y));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, r, ()| {
            Ok([r.min.x, r.min.y, r.max.x, r.max.y].map(fmt_num).join(", "))
        });
        crate::args::value_meta::<Rect, M>(m, "Rect");
    }
}

/// Installs the `Rect` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            if let Some(min) = as_ud::<Vector2>(a.get(1)) {
                let max = a.ud::<Vector2>(2, "Vector2")?;
                return Ok(Rect {
                    min: min.0,
                    max: max.0,
                });
            }
            Ok(Rect {
                min: Vec2::new(a.opt_f32(1, 0.0)?, a.opt_f32(2, 0.0)?),
                max: Vec2::new(a.opt_f32(3, 0.0)?, a.opt_f32(4, 0.0)?),
            })
        })?,
    )?;
    crate::args::install_global(lua, "Rect", t)
}
