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

/// `Font.fromEnum`'s table from the Roblox reference: each `Enum.Font` item's family file
/// (under `rbxasset://fonts/families/`), weight and style. The removed faces come last: the
/// reference maps `Arial`/`ArialBold` to the Arimo family and the `Gotham` items to Montserrat,
/// so a face of those families reads back as `Arimo`/`ArimoBold` ([`to_enum`] takes the first
/// match) and as the `Gotham` item of its weight.
const FROM_ENUM: [(&str, &str, FontWeight, FontStyle); 52] = {
    use FontStyle::{Italic, Normal};
    use FontWeight::{Bold, ExtraBold, Heavy, Light, Medium, Regular, SemiBold};
    [
        ("AmaticSC", "AmaticSC", Regular, Normal),
        ("Antique", "RomanAntique", Regular, Normal),
        ("Arcade", "PressStart2P", Regular, Normal),
        ("Arimo", "Arimo", Regular, Normal),
        ("ArimoBold", "Arimo", Bold, Normal),
        ("Bangers", "Bangers", Regular, Normal),
        ("Bodoni", "AccanthisADFStd", Regular, Normal),
        ("BuilderSans", "BuilderSans", Regular, Normal),
        ("BuilderSansBold", "BuilderSans", Bold, Normal),
        ("BuilderSansExtraBold", "BuilderSans", ExtraBold, Normal),
        ("BuilderSansMedium", "BuilderSans", Medium, Normal),
        ("Cartoon", "ComicNeueAngular", Regular, Normal),
        ("Code", "Inconsolata", Regular, Normal),
        ("Creepster", "Creepster", Regular, Normal),
        ("DenkOne", "DenkOne", Regular, Normal),
        ("Fantasy", "Balthazar", Regular, Normal),
        ("Fondamento", "Fondamento", Regular, Normal),
        ("FredokaOne", "FredokaOne", Regular, Normal),
        ("Garamond", "Guru", Regular, Normal),
        ("GrenzeGotisch", "GrenzeGotisch", Regular, Normal),
        ("Highway", "HighwayGothic", Regular, Normal),
        ("IndieFlower", "IndieFlower", Regular, Normal),
        ("JosefinSans", "JosefinSans", Regular, Normal),
        ("Jura", "Jura", Regular, Normal),
        ("Kalam", "Kalam", Regular, Normal),
        ("Legacy", "LegacyArial", Regular, Normal),
        ("LuckiestGuy", "LuckiestGuy", Regular, Normal),
        ("Merriweather", "Merriweather", Regular, Normal),
        ("Michroma", "Michroma", Regular, Normal),
        ("Nunito", "Nunito", Regular, Normal),
        ("Oswald", "Oswald", Regular, Normal),
        ("PatrickHand", "PatrickHand", Regular, Normal),
        ("PermanentMarker", "PermanentMarker", Regular, Normal),
        ("Roboto", "Roboto", Regular, Normal),
        ("RobotoCondensed", "RobotoCondensed", Regular, Normal),
        ("RobotoMono", "RobotoMono", Regular, Normal),
        ("Sarpanch", "Sarpanch", Regular, Normal),
        ("SciFi", "Zekton", Regular, Normal),
        ("SourceSans", "SourceSansPro", Regular, Normal),
        ("SourceSansBold", "SourceSansPro", Bold, Normal),
        ("SourceSansItalic", "SourceSansPro", Regular, Italic),
        ("SourceSansLight", "SourceSansPro", Light, Normal),
        ("SourceSansSemibold", "SourceSansPro", SemiBold, Normal),
        ("SpecialElite", "SpecialElite", Regular, Normal),
        ("TitilliumWeb", "TitilliumWeb", Regular, Normal),
        ("Ubuntu", "Ubuntu", Regular, Normal),
        ("Arial", "Arimo", Regular, Normal),
        ("ArialBold", "Arimo", Bold, Normal),
        ("Gotham", "Montserrat", Regular, Normal),
        ("GothamMedium", "Montserrat", Medium, Normal),
        ("GothamBold", "Montserrat", Bold, Normal),
        ("GothamBlack", "Montserrat", Heavy, Normal),
    ]
};

/// `Font.fromEnum(item)`: `None` for `Enum.Font.Unknown` and names that are no `Enum.Font`
/// item.
pub fn from_enum(name: &str) -> Option<Font> {
    let (_, file, weight, style) = FROM_ENUM.iter().find(|(n, ..)| *n == name)?;
    let family = format!("rbxasset://fonts/families/{file}.json");
    Some(Font(rbx_types::Font::new(&family, *weight, *style)))
}

/// The `Enum.Font` item whose face `font` is (what a text object's `Font` reads for its
/// `FontFace`), or `None` for a face no item names (Roblox reads `Enum.Font.Unknown`).
pub fn to_enum(font: &rbx_types::Font) -> Option<&'static str> {
    let file = font
        .family
        .strip_prefix("rbxasset://fonts/families/")?
        .strip_suffix(".json")?;
    FROM_ENUM
        .iter()
        .find(|(_, f, w, s)| *f == file && *w == font.weight && *s == font.style)
        .map(|(n, ..)| *n)
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
            let name = a.string(1)?;
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(a.error(
                    1,
                    "font names may only contain letters, digits, '_' and '-'",
                ));
            }
            let family = format!("rbxasset://fonts/families/{name}.json");
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
    t.raw_set(
        "fromEnum",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromEnum", a);
            let item = match as_ud::<EnumItem>(a.get(1)) {
                Some(item) if item.enum_name == "Font" => item,
                _ => return Err(a.bad(1, "Enum.Font")),
            };
            from_enum(item.name)
                .ok_or_else(|| a.error(1, &format!("Enum.Font.{} has no font family", item.name)))
        })?,
    )?;
    crate::args::install_global(lua, "Font", t)
}
