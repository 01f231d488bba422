//! `Font`: a font family asset id plus `Enum.FontWeight` and `Enum.FontStyle`.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use rbx_types::{FontStyle, FontWeight};

use crate::args::{Args, as_ud, impl_from_lua, no_member};
use crate::enums::{EnumItem, enum_item_value};
use crate::vector3::enum_arg;

/// A Roblox `Font`.
#[derive(Clone, Debug, PartialEq)]
pub struct Font(pub rbx_types::Font);

impl_from_lua!(Font => "Font");

impl From<rbx_types::Font> for Font {
    fn from(f: rbx_types::Font) -> Self {
        Font(f)
    }
}

impl From<Font> for rbx_types::Font {
    fn from(f: Font) -> Self {
        f.0
    }
}

fn style_name(s: FontStyle) -> &'static str {
    match s {
        FontStyle::Italic => "Italic",
        _ => "Normal",
    }
}

fn enum_item(lua: &Lua, enum_name: &str, value: u32) -> mlua::Result<Value> {
    match EnumItem::from_value(enum_name, value) {
        Some(item) => enum_item_value(lua, item),
        None => Ok(Value::Number(value as f64)),
    }
}

impl UserData for Font {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Font");
        f.add_field_method_get("Family", |_, f| Ok(f.0.family.clone()));
        f.add_field_method_get("Weight", |lua, f| {
            enum_item(lua, "FontWeight", f.0.weight.as_u16() as u32)
        });
        f.add_field_method_get("Style", |lua, f| {
            enum_item(lua, "FontStyle", f.0.style.as_u8() as u32)
        });
        f.add_field_method_get("Bold", |_, f| Ok(f.0.weight.as_u16() >= 600));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, f, ()| {
            Ok(format!(
                "Font {{ Family = {}, Weight = {:?}, Style = {} }}",
                f.0.family,
                f.0.weight,
                style_name(f.0.style)
            ))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<Font>(&a), as_ud::<Font>(&b)),
                (Some(a), Some(b)) if a.0.family == b.0.family && a.0.weight == b.0.weight && a.0.style == b.0.style))
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "Font"))
        });
    }
}

fn build(a: &Args, family: String) -> mlua::Result<Font> {
    let weight = if a.is_nil(2) {
        FontWeight::Regular
    } else {
        FontWeight::from_u16(enum_arg(a, 2, "FontWeight")? as u16)
            .ok_or_else(|| a.bad(2, "Enum.FontWeight"))?
    };
    let style = if a.is_nil(3) {
        FontStyle::Normal
    } else {
        FontStyle::from_u8(enum_arg(a, 3, "FontStyle")? as u8)
            .ok_or_else(|| a.bad(3, "Enum.FontStyle"))?
    };
    Ok(Font(rbx_types::Font::new(&family, weight, style)))
}

/// Installs the `Font` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let family = a.string(1)?;
            build(&a, family)
        })?,
    )?;
    t.raw_set(
        "fromName",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromName", a);
            let family = format!("rbxasset://fonts/families/{}.json", a.string(1)?);
            build(&a, family)
        })?,
    )?;
    t.raw_set(
        "fromId",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromId", a);
            let family = format!("rbxassetid://{}", a.number(1)? as i64);
            build(&a, family)
        })?,
    )?;
    crate::args::install_global(lua, "Font", t)
}
