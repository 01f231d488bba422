//! `NumberRange`, `NumberSequence(Keypoint)` and `ColorSequence(Keypoint)` with Roblox validation.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_number, as_ud, fmt_num, impl_from_lua, no_member};
use crate::color3::Color3;

/// A Roblox `NumberRange` (`min <= max`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct NumberRange {
    /// Lower bound.
    pub min: f32,
    /// Upper bound.
    pub max: f32,
}

/// A Roblox `NumberSequenceKeypoint`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct NumberSequenceKeypoint {
    /// Time in 0–1.
    pub time: f32,
    /// Value.
    pub value: f32,
    /// Envelope (random variance).
    pub envelope: f32,
}

/// A Roblox `NumberSequence`: 2–20 keypoints, times ascending from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberSequence(pub Vec<NumberSequenceKeypoint>);

/// A Roblox `ColorSequenceKeypoint`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ColorSequenceKeypoint {
    /// Time in 0–1.
    pub time: f32,
    /// Colour.
    pub value: Color3,
}

/// A Roblox `ColorSequence`: 2–20 keypoints, times ascending from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct ColorSequence(pub Vec<ColorSequenceKeypoint>);

impl_from_lua!(
    NumberRange => "NumberRange",
    NumberSequenceKeypoint => "NumberSequenceKeypoint",
    NumberSequence => "NumberSequence",
    ColorSequenceKeypoint => "ColorSequenceKeypoint",
    ColorSequence => "ColorSequence",
);

/// Checks the Roblox keypoint rules: 2–20 keypoints, first time 0, last 1, ascending.
pub(crate) fn check_times(ty: &str, times: &[f32]) -> Result<(), String> {
    if times.len() < 2 {
        return Err(format!("{ty}: requires at least 2 keypoints"));
    }
    if times.len() > 20 {
        return Err(format!("{ty}: table is too long (at most 20 keypoints)"));
    }
    if times[0] != 0.0 || times[times.len() - 1] != 1.0 {
        return Err(format!("{ty} time must start at 0, and end at 1"));
    }
    if times.windows(2).any(|w| w[1] < w[0]) {
        return Err(format!("{ty}: all keypoints must be ordered by time"));
    }
    Ok(())
}

impl From<rbx_types::NumberRange> for NumberRange {
    fn from(r: rbx_types::NumberRange) -> Self {
        NumberRange {
            min: r.min,
            max: r.max,
        }
    }
}

impl From<NumberRange> for rbx_types::NumberRange {
    fn from(r: NumberRange) -> Self {
        rbx_types::NumberRange::new(r.min, r.max)
    }
}

impl From<rbx_types::NumberSequence> for NumberSequence {
    fn from(s: rbx_types::NumberSequence) -> Self {
        NumberSequence(
            s.keypoints
                .iter()
                .map(|k| NumberSequenceKeypoint {
                    time: k.time,
                    value: k.value,
                    envelope: k.envelope,
                })
                .collect(),
        )
    }
}

impl From<NumberSequence> for rbx_types::NumberSequence {
    fn from(s: NumberSequence) -> Self {
        rbx_types::NumberSequence {
            keypoints: s
                .0
                .iter()
                .map(|k| rbx_types::NumberSequenceKeypoint::new(k.time, k.value, k.envelope))
                .collect(),
        }
    }
}

impl From<rbx_types::ColorSequence> for ColorSequence {
    fn from(s: rbx_types::ColorSequence) -> Self {
        ColorSequence(
            s.keypoints
                .iter()
                .map(|k| ColorSequenceKeypoint {
                    time: k.time,
                    value: k.color.into(),
                })
                .collect(),
        )
    }
}

impl From<ColorSequence> for rbx_types::ColorSequence {
    fn from(s: ColorSequence) -> Self {
        rbx_types::ColorSequence {
            keypoints: s
                .0
                .iter()
                .map(|k| rbx_types::ColorSequenceKeypoint::new(k.time, k.value.into()))
                .collect(),
        }
    }
}

fn eq<T: UserData + Clone + PartialEq + 'static>(a: &Value, b: &Value) -> bool {
    matches!((as_ud::<T>(a), as_ud::<T>(b)), (Some(a), Some(b)) if a == b)
}

macro_rules! common_meta {
    ($m:ident, $ty:ident, $name:literal) => {
        $m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(eq::<$ty>(&a, &b))
        });
        $m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), $name))
        });
    };
}

fn ns_kp_str(k: &NumberSequenceKeypoint) -> String {
    format!(
        "{} {} {} ",
        fmt_num(k.time),
        fmt_num(k.value),
        fmt_num(k.envelope)
    )
}

fn cs_kp_str(k: &ColorSequenceKeypoint) -> String {
    let c = k.value;
    format!(
        "{} {} {} {} 0 ",
        fmt_num(k.time),
        fmt_num(c.r),
        fmt_num(c.g),
        fmt_num(c.b)
    )
}

impl UserData for NumberRange {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "NumberRange");
        f.add_field_method_get("Min", |_, r| Ok(r.min));
        f.add_field_method_get("Max", |_, r| Ok(r.max));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, r, ()| {
            Ok(format!("{} {} ", fmt_num(r.min), fmt_num(r.max)))
        });
        common_meta!(m, NumberRange, "NumberRange");
    }
}

impl UserData for NumberSequenceKeypoint {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "NumberSequenceKeypoint");
        f.add_field_method_get("Time", |_, k| Ok(k.time));
        f.add_field_method_get("Value", |_, k| Ok(k.value));
        f.add_field_method_get("Envelope", |_, k| Ok(k.envelope));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, k, ()| Ok(ns_kp_str(k)));
        common_meta!(m, NumberSequenceKeypoint, "NumberSequenceKeypoint");
    }
}

impl UserData for NumberSequence {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "NumberSequence");
        f.add_field_method_get("Keypoints", |lua, s| lua.create_sequence_from(s.0.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            Ok(s.0.iter().map(ns_kp_str).collect::<String>())
        });
        common_meta!(m, NumberSequence, "NumberSequence");
    }
}

impl UserData for ColorSequenceKeypoint {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "ColorSequenceKeypoint");
        f.add_field_method_get("Time", |_, k| Ok(k.time));
        f.add_field_method_get("Value", |_, k| Ok(k.value));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, k, ()| Ok(cs_kp_str(k)));
        common_meta!(m, ColorSequenceKeypoint, "ColorSequenceKeypoint");
    }
}

impl UserData for ColorSequence {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "ColorSequence");
        f.add_field_method_get("Keypoints", |lua, s| lua.create_sequence_from(s.0.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            Ok(s.0.iter().map(cs_kp_str).collect::<String>())
        });
        common_meta!(m, ColorSequence, "ColorSequence");
    }
}

/// Reads the keypoint table of `NumberSequence.new`/`ColorSequence.new`.
fn keypoints<T: UserData + Clone + 'static>(a: &Args, expected: &str) -> mlua::Result<Vec<T>> {
    let t = a.table(1)?;
    let mut out = Vec::new();
    for v in t.sequence_values::<Value>() {
        let v = v?;
        out.push(as_ud::<T>(&v).ok_or_else(|| a.bad(1, &format!("table of {expected}")))?);
    }
    Ok(out)
}

fn number_sequence_new(a: &Args) -> mlua::Result<NumberSequence> {
    let kp = |time, value| NumberSequenceKeypoint {
        time,
        value,
        envelope: 0.0,
    };
    if let Some(n0) = as_number(a.get(1)) {
        let n1 = if a.is_nil(2) { n0 as f32 } else { a.f32(2)? };
        return Ok(NumberSequence(vec![kp(0.0, n0 as f32), kp(1.0, n1)]));
    }
    let points = keypoints::<NumberSequenceKeypoint>(a, "NumberSequenceKeypoint")?;
    let times: Vec<f32> = points.iter().map(|k| k.time).collect();
    check_times("NumberSequence", &times).map_err(mlua::Error::runtime)?;
    Ok(NumberSequence(points))
}

fn color_sequence_new(a: &Args) -> mlua::Result<ColorSequence> {
    let kp = |time, value| ColorSequenceKeypoint { time, value };
    if let Some(c0) = as_ud::<Color3>(a.get(1)) {
        let c1 = if a.is_nil(2) {
            c0
        } else {
            a.ud::<Color3>(2, "Color3")?
        };
        return Ok(ColorSequence(vec![kp(0.0, c0), kp(1.0, c1)]));
    }
    if !matches!(a.get(1), Value::Table(_)) {
        return Err(a.bad(1, "Color3 or table"));
    }
    let points = keypoints::<ColorSequenceKeypoint>(a, "ColorSequenceKeypoint")?;
    let times: Vec<f32> = points.iter().map(|k| k.time).collect();
    check_times("ColorSequence", &times).map_err(mlua::Error::runtime)?;
    Ok(ColorSequence(points))
}

/// Installs `NumberRange`, `NumberSequence(Keypoint)` and `ColorSequence(Keypoint)`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let ctor = |global: &str, f| crate::args::install_constructor(lua, global, f);
    ctor(
        "NumberRange",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let min = a.f32(1)?;
            let max = if a.is_nil(2) { min } else { a.f32(2)? };
            if max < min {
                return Err(mlua::Error::runtime(
                    "invalid range: NumberRange max must be greater than or equal to min",
                ));
            }
            Ok(NumberRange { min, max })
        })?,
    )?;
    ctor(
        "NumberSequenceKeypoint",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(NumberSequenceKeypoint {
                time: a.f32(1)?,
                value: a.f32(2)?,
                envelope: a.opt_f32(3, 0.0)?,
            })
        })?,
    )?;
    ctor(
        "NumberSequence",
        lua.create_function(|_, a: MultiValue| number_sequence_new(&Args::new("new", a)))?,
    )?;
    ctor(
        "ColorSequenceKeypoint",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(ColorSequenceKeypoint {
                time: a.f32(1)?,
                value: a.ud::<Color3>(2, "Color3")?,
            })
        })?,
    )?;
    ctor(
        "ColorSequence",
        lua.create_function(|_, a: MultiValue| color_sequence_new(&Args::new("new", a)))?,
    )
}
