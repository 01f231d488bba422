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

/// The frame step `TweenService:SmoothDamp` takes when its `dt` is nil (the host's frames
/// are 1/60 s of its virtual clock).
pub const FRAME_STEP: f64 = 1.0 / 60.0;

/// One step of a critically damped spring from `current` towards `target` (any number of
/// components): `TweenService:SmoothDamp`, the reference's "critically damped spring", in
/// the standard closed form (Game Programming Gems 4, 1.10): `omega = 2 / smooth_time`, the
/// decay `exp(-omega·dt)` by its cubic approximation, the distance to cover clamped to
/// `max_speed · smooth_time`, and no overshoot (a step that would pass the target stops on
/// it with zero velocity). Returns the new value and velocity.
pub fn smooth_damp<const N: usize>(
    current: [f64; N],
    target: [f64; N],
    velocity: [f64; N],
    smooth_time: f64,
    max_speed: f64,
    dt: f64,
) -> ([f64; N], [f64; N]) {
    let smooth_time = smooth_time.max(1e-4);
    let omega = 2.0 / smooth_time;
    let x = omega * dt;
    let decay = 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x);
    let mut change: [f64; N] = std::array::from_fn(|i| current[i] - target[i]);
    let max_change = max_speed * smooth_time;
    let length = change.iter().map(|c| c * c).sum::<f64>().sqrt();
    if length > max_change {
        let k = max_change / length;
        change.iter_mut().for_each(|c| *c *= k);
    }
    let mut out = [0.0; N];
    let mut vel = [0.0; N];
    for i in 0..N {
        let temp = (velocity[i] + omega * change[i]) * dt;
        vel[i] = (velocity[i] - omega * temp) * decay;
        out[i] = current[i] - change[i] + (change[i] + temp) * decay;
    }
    // Past the target (the step and the way to it point the same way): stop on it.
    let past: f64 = (0..N)
        .map(|i| (target[i] - current[i]) * (out[i] - target[i]))
        .sum();
    if past > 0.0 {
        return (target, [0.0; N]);
    }
    (out, vel)
}

/// [`smooth_damp`] for an f32 3-vector (a Vector3, a CFrame's position or rotation vector).
pub fn smooth_damp_vec3(
    current: glam::Vec3,
    target: glam::Vec3,
    velocity: glam::Vec3,
    smooth_time: f64,
    max_speed: f64,
    dt: f64,
) -> (glam::Vec3, glam::Vec3) {
    let f64s = |v: glam::Vec3| v.to_array().map(f64::from);
    let vec = |a: [f64; 3]| glam::Vec3::from_array(a.map(|x| x as f32));
    let (value, velocity) = smooth_damp(
        f64s(current),
        f64s(target),
        f64s(velocity),
        smooth_time,
        max_speed,
        dt,
    );
    (vec(value), vec(velocity))
}

/// [`smooth_damp`] for a CFrame: the position as a vector; the rotation as the rotation
/// vector (axis × angle, world space) from `current`'s rotation to `target`'s, damped from
/// zero, with the angular velocity a rotation vector too (radians per second). Returns the
/// new CFrame and the velocity as (linear, angular).
pub fn smooth_damp_cframe(
    current: &crate::CFrame,
    target: &crate::CFrame,
    velocity: (glam::Vec3, glam::Vec3),
    smooth_time: f64,
    max_speed: f64,
    dt: f64,
) -> (crate::CFrame, glam::Vec3, glam::Vec3) {
    let (position, linear) = smooth_damp_vec3(
        current.position,
        target.position,
        velocity.0,
        smooth_time,
        max_speed,
        dt,
    );
    let (from, to) = (current.quat(), target.quat());
    let mut way = to * from.inverse();
    if way.w < 0.0 {
        way = -way;
    }
    let (turned, angular) = smooth_damp_vec3(
        glam::Vec3::ZERO,
        way.to_scaled_axis(),
        velocity.1,
        smooth_time,
        max_speed,
        dt,
    );
    let rotation = glam::Quat::from_scaled_axis(turned) * from;
    let cframe = crate::CFrame {
        position,
        rotation: glam::Mat3::from_quat(rotation.normalize()),
    };
    (cframe, linear, angular)
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

    #[test]
    fn smooth_damp_approaches_without_passing_and_stops_on_the_target() {
        let (mut x, mut v) = ([0.0], [0.0]);
        let mut last = 0.0;
        for _ in 0..600 {
            (x, v) = smooth_damp(x, [10.0], v, 0.5, f64::INFINITY, FRAME_STEP);
            assert!(x[0] >= last && x[0] <= 10.0, "{} after {last}", x[0]);
            last = x[0];
        }
        assert!(
            (x[0] - 10.0).abs() < 1e-6 && v[0].abs() < 1e-5,
            "{x:?} {v:?}"
        );
        // Half way in about smooth time / 2.2 (critically damped: 1 - (1 + wt)e^-wt).
        let (mut x, mut v) = ([0.0], [0.0]);
        for _ in 0..14 {
            (x, v) = smooth_damp(x, [1.0], v, 1.0, f64::INFINITY, FRAME_STEP);
        }
        let t: f64 = 14.0 / 60.0;
        let w = 2.0;
        let exact = 1.0 - (1.0 + w * t) * (-w * t).exp();
        assert!((x[0] - exact).abs() < 1e-3, "{} vs {exact}", x[0]);
        // A zero step changes nothing.
        assert_eq!(
            smooth_damp([1.0, 2.0], [5.0, 5.0], [0.5, 0.0], 1.0, 9.0, 0.0).0,
            [1.0, 2.0]
        );
    }

    #[test]
    fn smooth_damp_clamps_the_speed_and_snaps_an_overshoot() {
        // max speed 1: the spring aims at most 1 * smooth time away.
        let (x, _) = smooth_damp([0.0, 0.0, 0.0], [100.0, 0.0, 0.0], [0.0; 3], 1.0, 1.0, 0.1);
        let free = smooth_damp(
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0; 3],
            1.0,
            f64::INFINITY,
            0.1,
        )
        .0;
        assert_eq!(x, free);
        // A fast velocity towards the target that would carry past it stops on it.
        let (x, v) = smooth_damp([0.9], [1.0], [50.0], 0.3, f64::INFINITY, 0.1);
        assert_eq!((x, v), ([1.0], [0.0]));
    }

    #[test]
    fn smooth_damp_cframe_turns_and_moves_towards_the_target() {
        let from = crate::CFrame::IDENTITY;
        let to = crate::CFrame {
            position: glam::Vec3::new(4.0, 0.0, 0.0),
            rotation: glam::Mat3::from_rotation_y(1.0),
        };
        let (mut c, mut lin, mut ang) = (from, glam::Vec3::ZERO, glam::Vec3::ZERO);
        for _ in 0..600 {
            (c, lin, ang) = smooth_damp_cframe(&c, &to, (lin, ang), 0.4, f64::INFINITY, FRAME_STEP);
        }
        assert!((c.position - to.position).length() < 1e-4, "{c:?}");
        assert!(c.quat().angle_between(to.quat()) < 1e-3, "{c:?}");
        // The first step turns about Y, the target's axis.
        let (one, _, ang) = smooth_damp_cframe(
            &from,
            &to,
            (glam::Vec3::ZERO, glam::Vec3::ZERO),
            0.4,
            f64::INFINITY,
            FRAME_STEP,
        );
        let (axis, angle) = one.quat().to_axis_angle();
        assert!(
            angle > 0.0 && angle < 1.0 && (axis - glam::Vec3::Y).length() < 1e-4,
            "{axis} {angle}"
        );
        assert!(ang.x.abs() < 1e-6 && ang.y > 0.0, "{ang}");
    }
}
