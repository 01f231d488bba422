//! `BrickColor`: the legacy named palette from `rbx_types::BrickColor` (nearest-colour lookup too).

use std::sync::OnceLock;

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_number, as_ud, impl_from_lua, no_member};
use crate::color3::Color3;

/// A Roblox `BrickColor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrickColor(pub rbx_types::BrickColor);

impl_from_lua!(BrickColor => "BrickColor");

/// `Medium stone grey`, what Roblox falls back to for unknown names and numbers.
const DEFAULT_NUMBER: u16 = 194;

/// The numbers of the 128 colours of `BrickColor.palette`, by palette index (Roblox's
/// order, as its API reference lists each colour's palette index).
const PALETTE: [u16; 128] = [
    141, 301, 107, 26, 1012, 303, 1011, 304, 28, 1018, 302, 305, 306, 307, 308, 1021, 309, 310,
    1019, 135, 102, 23, 1010, 312, 313, 37, 1022, 1020, 1027, 311, 315, 1023, 1031, 316, 151, 317,
    318, 319, 1024, 314, 1013, 1006, 321, 322, 104, 1008, 119, 323, 324, 325, 320, 11, 1026, 1016,
    1032, 1015, 327, 1005, 1009, 29, 328, 1028, 208, 45, 329, 330, 331, 1004, 21, 332, 333, 24,
    334, 226, 1029, 335, 336, 342, 343, 338, 1007, 339, 133, 106, 340, 341, 1001, 1, 9, 1025, 337,
    344, 345, 1014, 105, 346, 347, 348, 349, 1030, 125, 101, 350, 192, 351, 352, 353, 354, 1002, 5,
    18, 217, 355, 356, 153, 357, 358, 359, 360, 38, 361, 362, 199, 194, 363, 364, 365, 1003,
];

/// Every BrickColor, in number order (built once; immutable data).
fn all() -> &'static [rbx_types::BrickColor] {
    static ALL: OnceLock<Vec<rbx_types::BrickColor>> = OnceLock::new();
    ALL.get_or_init(|| {
        (0..=2048)
            .filter_map(rbx_types::BrickColor::from_number)
            .collect()
    })
}

impl BrickColor {
    /// The colour numbered `n`, or Medium stone grey when there is none.
    pub fn from_number(n: u16) -> Self {
        BrickColor(
            rbx_types::BrickColor::from_number(n)
                .or_else(|| rbx_types::BrickColor::from_number(DEFAULT_NUMBER))
                .unwrap_or(rbx_types::BrickColor::MediumStoneGrey),
        )
    }

    /// The colour named `name`, or Medium stone grey when there is none.
    pub fn from_name(name: &str) -> Self {
        rbx_types::BrickColor::from_name(name)
            .map(BrickColor)
            .unwrap_or_else(|| Self::from_number(DEFAULT_NUMBER))
    }

    /// The palette colour nearest to `c` (squared RGB distance; lowest number on ties).
    pub fn nearest(c: Color3) -> Self {
        let [r, g, b] = [c.r, c.g, c.b].map(|x| x * 255.0);
        let mut best = (f32::INFINITY, Self::from_number(DEFAULT_NUMBER));
        for bc in all() {
            let k = bc.to_color3uint8();
            let d = (k.r as f32 - r).powi(2) + (k.g as f32 - g).powi(2) + (k.b as f32 - b).powi(2);
            if d < best.0 {
                best = (d, BrickColor(*bc));
            }
        }
        best.1
    }

    /// The colour's number.
    pub fn number(&self) -> u16 {
        self.0 as u16
    }

    /// The colour's name.
    pub fn name(&self) -> String {
        self.0.to_string()
    }

    /// The colour as a `Color3`.
    pub fn color(&self) -> Color3 {
        Color3::from(self.0.to_color3uint8())
    }
}

impl From<rbx_types::BrickColor> for BrickColor {
    fn from(b: rbx_types::BrickColor) -> Self {
        BrickColor(b)
    }
}

impl From<BrickColor> for rbx_types::BrickColor {
    fn from(b: BrickColor) -> Self {
        b.0
    }
}

impl UserData for BrickColor {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "BrickColor");
        f.add_field_method_get("Name", |_, b| Ok(b.name()));
        f.add_field_method_get("Number", |_, b| Ok(b.number()));
        f.add_field_method_get("Color", |_, b| Ok(b.color()));
        for (upper, lower, i) in [("R", "r", 0), ("G", "g", 1), ("B", "b", 2)] {
            let channel = move |b: &BrickColor| {
                let c = b.color();
                [c.r, c.g, c.b][i]
            };
            f.add_field_method_get(upper, move |_, b| Ok(channel(b)));
            f.add_field_method_get(lower, move |_, b| Ok(channel(b)));
        }
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, b, ()| Ok(b.name()));
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<BrickColor>(&a), as_ud::<BrickColor>(&b)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            })
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "BrickColor"))
        });
    }
}

fn new(a: &Args) -> mlua::Result<BrickColor> {
    let v = a.get(1);
    if a.len() >= 3 {
        let c = Color3::new(a.f32(1)?, a.f32(2)?, a.f32(3)?);
        return Ok(BrickColor::nearest(c));
    }
    if let Some(n) = as_number(v) {
        return Ok(BrickColor::from_number(n as u16));
    }
    if let Value::String(s) = v {
        return Ok(BrickColor::from_name(&s.to_string_lossy()));
    }
    if let Some(c) = as_ud::<Color3>(v) {
        return Ok(BrickColor::nearest(c));
    }
    Err(a.bad(1, "string, number or Color3"))
}

/// `BrickColor.palette(index)`: the palette's colour at `index` (0–127, rounded to the
/// nearest integer); Roblox's error otherwise.
fn palette(a: &Args) -> mlua::Result<BrickColor> {
    let x = a.number(1)?.round();
    match (0.0..128.0).contains(&x).then(|| PALETTE[x as usize]) {
        Some(n) => Ok(BrickColor::from_number(n)),
        None => Err(mlua::Error::runtime(format!(
            "palette index out of bounds ({x})"
        ))),
    }
}

/// Installs the `BrickColor` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "new",
        lua.create_function(|_, a: MultiValue| new(&Args::new("new", a)))?,
    )?;
    t.raw_set(
        "palette",
        lua.create_function(|_, a: MultiValue| palette(&Args::new("palette", a)))?,
    )?;
    for (name, number) in [
        ("White", 1u16),
        ("Gray", 194),
        ("DarkGray", 199),
        ("Black", 26),
        ("Red", 21),
        ("Yellow", 24),
        ("Green", 28),
        ("Blue", 23),
    ] {
        t.raw_set(
            name,
            lua.create_function(move |_, ()| Ok(BrickColor::from_number(number)))?,
        )?;
    }
    crate::args::install_global(lua, "BrickColor", t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_palette_colour_is_a_brick_colour_and_appears_once() {
        let mut seen = std::collections::HashSet::new();
        for n in PALETTE {
            assert!(rbx_types::BrickColor::from_number(n).is_some(), "{n}");
            assert!(seen.insert(n), "{n} twice");
        }
    }
}
