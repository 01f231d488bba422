//! `TweenInfo` and the easing curves behind `TweenService:GetValue` (the host's tweens
//! play on its virtual clock with the same curves).
//!
//! The curves are the standard ones Roblox's reference plots for each `EasingStyle`
//! (Linear, Sine, Quad, Cubic, Quart, Quint, Exponential, Circular, Back with overshoot
//! 1.70158, Bounce, Elastic with period 0.3), applied `In`, `Out` or `InOut`.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, impl_from_lua};
use crate::enums::{EnumItem, enum_item_value};

/// A Roblox `TweenInfo`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TweenInfo {
    pub time: f64,
    pub style: EnumItem,
    pub direction: EnumItem,
    pub repeat_count: i64,
    pub reverses: bool,
    pub delay: f64,
}

impl_from_lua!(TweenInfo => "TweenInfo");

fn out_bounce(t: f64) -> f64 {
    const N: f64 = 7.5625;
    const D: f64 = 2.75;
    if t < 1.0 / D {
        N * t * t
    } else if t < 2.0 / D {
        let t = t - 1.5 / D;
        N * t * t + 0.75
    } else if t < 2.5 / D {
        let t = t - 2.25 / D;
        N * t * t + 0.9375
    } else {
        let t = t - 2.625 / D;
        N * t * t + 0.984375
    }
}

/// The `In` form of a style's curve.
fn ease_in(style: &str, t: f64) -> f64 {
    use std::f64::consts::PI;
    match style {
        "Sine" => 1.0 - (t * PI / 2.0).cos(),
        "Quad" => t * t,
        "Cubic" => t * t * t,
        "Quart" => t.powi(4),
        "Quint" => t.powi(5),
        "Exponential" => {
            if t <= 0.0 {
                0.0
            } else {
                2f64.powf(10.0 * t - 10.0)
            }
        }
        "Circular" => 1.0 - (1.0 - t * t).max(0.0).sqrt(),
        "Back" => {
            const S: f64 = 1.70158;
            t * t * ((S + 1.0) * t - S)
        }
        "Bounce" => 1.0 - out_bounce(1.0 - t),
        "Elastic" => {
            if t <= 0.0 || t >= 1.0 {
                t.clamp(0.0, 1.0)
            } else {
                const P: f64 = 0.3;
                -(2f64.powf(10.0 * (t - 1.0))) * ((t - 1.0 - P / 4.0) * (2.0 * PI) / P).sin()
            }
        }
        _ => t,
    }
}

/// `TweenService:GetValue(alpha, style, direction)`: alpha clamped to [0, 1], eased.
pub fn ease(alpha: f64, style: &str, direction: &str) -> f64 {
    let t = if alpha.is_nan() {
        0.0
    } else {
        alpha.clamp(0.0, 1.0)
    };
    match direction {
        "In" => ease_in(style, t),
        "Out" => 1.0 - ease_in(style, 1.0 - t),
        _ => {
            if t < 0.5 {
                ease_in(style, 2.0 * t) / 2.0
            } else {
                1.0 - ease_in(style, 2.0 - 2.0 * t) / 2.0
            }
        }
    }
}

/// An `EasingStyle`/`EasingDirection` argument: an EnumItem, its name or its number.
fn enum_arg(
    a: &Args,
    pos: usize,
    enum_name: &'static str,
    default: &str,
) -> mlua::Result<EnumItem> {
    let v = a.get(pos);
    if matches!(v, Value::Nil) {
        return EnumItem::from_name(enum_name, default)
            .ok_or_else(|| a.error(pos, "unknown default"));
    }
    match crate::lua_to_variant(v, &rbx_reflection::DataType::Enum(enum_name)) {
        Ok(rbx_types::Variant::Enum(e)) => EnumItem::from_value(enum_name, e.to_u32()),
        _ => None,
    }
    .ok_or_else(|| a.bad(pos, &format!("Enum.{enum_name}")))
}

impl UserData for TweenInfo {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "TweenInfo");
        f.add_field_method_get("Time", |_, t| Ok(t.time));
        f.add_field_method_get("EasingStyle", |lua, t| enum_item_value(lua, t.style));
        f.add_field_method_get("EasingDirection", |lua, t| {
            enum_item_value(lua, t.direction)
        });
        f.add_field_method_get("RepeatCount", |_, t| Ok(t.repeat_count));
        f.add_field_method_get("Reverses", |_, t| Ok(t.reverses));
        f.add_field_method_get("DelayTime", |_, t| Ok(t.delay));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, t, ()| {
            Ok(format!(
                "Time:{} DelayTime:{} RepeatCount:{} Reverses:{} EasingDirection:{} EasingStyle:{}",
                t.time,
                t.delay,
                t.repeat_count,
                if t.reverses { "True" } else { "False" },
                t.direction.name,
                t.style.name
            ))
        });
        crate::args::value_meta::<TweenInfo, M>(m, "TweenInfo");
    }
}

fn finite(a: &Args, pos: usize, default: f64) -> mlua::Result<f64> {
    let n = a.opt_number(pos, default)?;
    if n.is_finite() {
        Ok(n)
    } else {
        Err(a.error(pos, "number must be finite"))
    }
}

/// Installs the `TweenInfo` constructor table.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    crate::args::install_constructor(
        lua,
        "TweenInfo",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let reverses = match a.get(5) {
                Value::Nil => false,
                Value::Boolean(b) => *b,
                _ => return Err(a.bad(5, "boolean")),
            };
            Ok(TweenInfo {
                time: finite(&a, 1, 1.0)?.max(0.0),
                style: enum_arg(&a, 2, "EasingStyle", "Quad")?,
                direction: enum_arg(&a, 3, "EasingDirection", "Out")?,
                repeat_count: finite(&a, 4, 0.0)?.trunc() as i64,
                reverses,
                delay: finite(&a, 6, 0.0)?.max(0.0),
            })
        })?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_start_at_zero_end_at_one_and_mirror() {
        let styles = [
            "Linear",
            "Sine",
            "Quad",
            "Cubic",
            "Quart",
            "Quint",
            "Exponential",
            "Circular",
            "Back",
            "Bounce",
            "Elastic",
        ];
        for s in styles {
            for d in ["In", "Out", "InOut"] {
                assert!(ease(0.0, s, d).abs() < 1e-9, "{s} {d} at 0");
                assert!((ease(1.0, s, d) - 1.0).abs() < 1e-9, "{s} {d} at 1");
            }
            let t = 0.3;
            assert!((ease(t, s, "Out") - (1.0 - ease(1.0 - t, s, "In"))).abs() < 1e-12);
            assert!(
                (ease(0.5, s, "InOut") - 0.5).abs() < 1e-9,
                "{s} InOut is symmetric"
            );
        }
        assert_eq!(ease(0.5, "Quad", "In"), 0.25);
        assert_eq!(ease(0.5, "Quad", "Out"), 0.75);
        assert_eq!(ease(0.25, "Linear", "InOut"), 0.25);
        assert!(ease(0.2, "Back", "In") < 0.0, "Back overshoots");
        assert_eq!(ease(2.0, "Linear", "In"), 1.0);
        assert_eq!(ease(f64::NAN, "Linear", "In"), 0.0);
    }
}
