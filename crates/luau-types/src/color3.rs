//! `Color3`: f32 RGB with the Roblox constructors (`new`, `fromRGB`, `fromHSV`, `fromHex`) and members.

use mlua::{Lua, MetaMethod, MultiValue, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, fmt_num, no_member};
use crate::raw;
use crate::tagged::Tagged;
use mlua::ffi;
use std::ffi::c_int;

/// A Roblox `Color3` (f32 components, nominally 0–1).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Color3 {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
}

crate::tagged::impl_tagged!(Color3);

impl Color3 {
    /// A colour from 0–1 components.
    pub const fn new(r: f32, g: f32, b: f32) -> Self {
        Color3 { r, g, b }
    }

    /// A colour from 0–255 components.
    pub fn from_rgb(r: f64, g: f64, b: f64) -> Self {
        Color3::new((r / 255.0) as f32, (g / 255.0) as f32, (b / 255.0) as f32)
    }

    /// `Color3.fromHSV(h, s, v)` with all of h, s, v in 0–1.
    pub fn from_hsv(h: f64, s: f64, v: f64) -> Self {
        let h = (h - h.floor()) * 6.0;
        let i = h.floor();
        let f = h - i;
        let p = v * (1.0 - s);
        let q = v * (1.0 - s * f);
        let t = v * (1.0 - s * (1.0 - f));
        let (r, g, b) = match i as i32 {
            0 => (v, t, p),
            1 => (q, v, p),
            2 => (p, v, t),
            3 => (p, q, v),
            4 => (t, p, v),
            _ => (v, p, q),
        };
        Color3::new(r as f32, g as f32, b as f32)
    }

    /// `Color3:ToHSV()`: hue, saturation and value in 0–1 (hue 0 for greys).
    pub fn to_hsv(&self) -> (f64, f64, f64) {
        let (r, g, b) = (self.r as f64, self.g as f64, self.b as f64);
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        let s = if max > 0.0 { d / max } else { 0.0 };
        let h = if d == 0.0 {
            0.0
        } else if max == r {
            ((g - b) / d).rem_euclid(6.0) / 6.0
        } else if max == g {
            ((b - r) / d + 2.0) / 6.0
        } else {
            ((r - g) / d + 4.0) / 6.0
        };
        (h, s, max)
    }

    /// Parses `#rrggbb`, `rrggbb`, `#rgb` or `rgb`.
    pub fn from_hex(hex: &str) -> Option<Self> {
        let h = hex.strip_prefix('#').unwrap_or(hex);
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let digit = |i: usize, n: usize| u8::from_str_radix(&h[i..i + n], 16).ok();
        let (r, g, b) = match h.len() {
            6 => (digit(0, 2)?, digit(2, 2)?, digit(4, 2)?),
            3 => (digit(0, 1)? * 17, digit(1, 1)? * 17, digit(2, 1)? * 17),
            _ => return None,
        };
        Some(Color3::from_rgb(r as f64, g as f64, b as f64))
    }

    /// The nearest 0–255 components (rounded, clamped).
    pub fn to_rgb8(&self) -> [u8; 3] {
        [self.r, self.g, self.b].map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
    }

    /// Six lowercase hex digits, no `#`.
    pub fn to_hex(&self) -> String {
        let [r, g, b] = self.to_rgb8();
        format!("{r:02x}{g:02x}{b:02x}")
    }

    /// Component-wise linear interpolation.
    pub fn lerp(&self, o: &Color3, t: f32) -> Self {
        Color3::new(
            self.r + (o.r - self.r) * t,
            self.g + (o.g - self.g) * t,
            self.b + (o.b - self.b) * t,
        )
    }
}

impl From<rbx_types::Color3> for Color3 {
    fn from(c: rbx_types::Color3) -> Self {
        Color3::new(c.r, c.g, c.b)
    }
}

impl From<Color3> for rbx_types::Color3 {
    fn from(c: Color3) -> Self {
        rbx_types::Color3::new(c.r, c.g, c.b)
    }
}

impl From<rbx_types::Color3uint8> for Color3 {
    fn from(c: rbx_types::Color3uint8) -> Self {
        Color3::from_rgb(c.r as f64, c.g as f64, c.b as f64)
    }
}

impl From<Color3> for rbx_types::Color3uint8 {
    fn from(c: Color3) -> Self {
        let [r, g, b] = c.to_rgb8();
        rbx_types::Color3uint8::new(r, g, b)
    }
}

impl Tagged for Color3 {
    const TAG: std::ffi::c_int = crate::tagged::TAG_COLOR3;
    const NAME: &'static str = "Color3";

    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Color3");
        f.add_field_method_get("R", |_, c| Ok(c.r));
        f.add_field_method_get("G", |_, c| Ok(c.g));
        f.add_field_method_get("B", |_, c| Ok(c.b));
        f.add_field_method_get("r", |_, c| Ok(c.r));
        f.add_field_method_get("g", |_, c| Ok(c.g));
        f.add_field_method_get("b", |_, c| Ok(c.b));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["Lerp", "lerp"] {
            m.add_method(name, |_, c, a: MultiValue| {
                let a = Args::new("Lerp", a);
                Ok(c.lerp(&a.ud::<Color3>(1, "Color3")?, a.f32(2)?))
            });
        }
        m.add_method("ToHSV", |_, c, ()| Ok(c.to_hsv()));
        m.add_method("ToHex", |_, c, ()| Ok(c.to_hex()));
        m.add_meta_method(MetaMethod::ToString, |_, c, ()| {
            Ok(format!(
                "{}, {}, {}",
                fmt_num(c.r),
                fmt_num(c.g),
                fmt_num(c.b)
            ))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<Color3>(&a), as_ud::<Color3>(&b)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            })
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "Color3"))
        });
    }
}

impl crate::tagged::FastFields for Color3 {
    fn field(&self, key: &[u8]) -> Option<crate::tagged::Field<Color3>> {
        use crate::tagged::Field::Number;
        Some(match key {
            b"R" | b"r" => Number(self.r.into()),
            b"G" | b"g" => Number(self.g.into()),
            b"B" | b"b" => Number(self.b.into()),
            _ => return None,
        })
    }
}

/// Three optional numbers (nil = 0), as `new` and `fromRGB` take them.
unsafe fn raw_components(state: *mut ffi::lua_State) -> Option<[f64; 3]> {
    // SAFETY: type-checked reads.
    unsafe {
        if ffi::lua_gettop(state) > 3 {
            return None;
        }
        let a = |i| raw::opt_number(state, i, 0.0);
        Some([a(1)?, a(2)?, a(3)?])
    }
}

/// `Color3.new` with plain arguments (see `raw`).
unsafe extern "C-unwind" fn raw_new(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: type-checked reads; the result is pushed by dispatch_value.
    unsafe {
        crate::tagged::dispatch_value(state, || {
            raw_components(state).map(|[r, g, b]| Color3::new(r as f32, g as f32, b as f32))
        })
    }
}

/// `Color3.fromRGB` with plain arguments (see `raw`).
unsafe extern "C-unwind" fn raw_from_rgb(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `raw_new`.
    unsafe {
        crate::tagged::dispatch_value(state, || {
            raw_components(state).map(|[r, g, b]| Color3::from_rgb(r, g, b))
        })
    }
}

/// Installs the `Color3` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    crate::tagged::register::<Color3>(lua, &[], crate::tagged::fields_index::<Color3>())?;
    let t = lua.create_table()?;
    // new and fromRGB: three optional numbers (nil = 0); raw fast path, mlua for errors.
    let components = |name: &'static str, make: fn([f64; 3]) -> Color3| {
        lua.create_function(move |_, a: MultiValue| {
            let a = Args::new(name, a);
            Ok(make([
                a.opt_number(1, 0.0)?,
                a.opt_number(2, 0.0)?,
                a.opt_number(3, 0.0)?,
            ]))
        })
    };
    let slow = components("new", |[r, g, b]| Color3::new(r as f32, g as f32, b as f32))?;
    t.raw_set("new", raw::closure(lua, raw_new, slow)?)?;
    let slow = components("fromRGB", |[r, g, b]| Color3::from_rgb(r, g, b))?;
    t.raw_set("fromRGB", raw::closure(lua, raw_from_rgb, slow)?)?;
    t.raw_set(
        "fromHSV",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromHSV", a);
            Ok(Color3::from_hsv(a.number(1)?, a.number(2)?, a.number(3)?))
        })?,
    )?;
    t.raw_set(
        "fromHex",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromHex", a);
            let s = a.string(1)?;
            Color3::from_hex(&s).ok_or_else(|| {
                mlua::Error::runtime(format!("unable to convert characters to hex value: {s}"))
            })
        })?,
    )?;
    t.raw_set(
        "toHSV",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("toHSV", a);
            Ok(a.ud::<Color3>(1, "Color3")?.to_hsv())
        })?,
    )?;
    crate::args::install_global(lua, "Color3", t)
}
