//! Roblox's lights (`PointLight`, `SpotLight`, `SurfaceLight`) as glTF punctual lights
//! (`KHR_lights_punctual`): where each shines from and which way, and how `Brightness`,
//! `Range`, `Color` and `Angle` become glTF's intensity, range, colour and cone.
//!
//! What the Roblox reference says a light does, and so what is exported:
//! - a light shines only as the direct child of a BasePart or of an Attachment (in a part);
//!   anywhere else, or with `Enabled` false, `Range` 0 or `Brightness` 0, it lights nothing
//!   and nothing is exported;
//! - a PointLight shines from its part's centre, or its attachment's position;
//! - a SpotLight shines from its part's `Face` (the centre of that face, outwards), or from
//!   its attachment along the attachment's axis `Face` names (−Z is Front); `Angle` is the
//!   whole cone's angle at its apex, in degrees;
//! - a SurfaceLight shines from a whole face of its part: glTF has no area lights, so it is a
//!   spot light at the face's centre (with a warning); in an attachment it *is* a SpotLight.
//!
//! Where the reference is silent: glTF lights fall off with the inverse square of the
//! distance and reach `range`; a Roblox light is still strong halfway to its `Range`. The
//! intensity (candela) is `Brightness × (Range / 2)²` in output units, so a surface halfway
//! to the range receives `Brightness` lux. A spot light's inner cone is 80% of its outer one
//! (Roblox's cone is even with a soft edge). `Shadows` has no glTF counterpart.
//!
//! This module reads no DOM: the scene builder hands it the values it read.

use glam::{DQuat, DVec3, Vec3};
use std::f64::consts::{FRAC_PI_2, PI};

/// Roblox clamps a light's `Range` to this many studs.
const MAX_RANGE: f32 = 60.0;
/// A spot light's inner cone angle over its outer one.
const INNER_CONE: f32 = 0.8;

/// The three light classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Point,
    Spot,
    Surface,
}

impl Class {
    pub fn of(class: &str) -> Option<Class> {
        match class {
            "PointLight" => Some(Class::Point),
            "SpotLight" => Some(Class::Spot),
            "SurfaceLight" => Some(Class::Surface),
            _ => None,
        }
    }
}

/// A light's properties as its instance holds them (colour in sRGB, as `Color3`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub class: Class,
    pub enabled: bool,
    pub brightness: f32,
    pub color: [f32; 3],
    pub range: f32,
    /// Degrees; spot and surface lights.
    pub angle: f32,
    /// `Enum.NormalId` value; spot and surface lights.
    pub face: u32,
}

/// What a light is the child of, when it shines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Holder {
    /// A part of this size (studs).
    Part { size: Vec3 },
    /// An attachment with this offset in its part (studs, as its `CFrame`).
    Attachment { rotation: DQuat, translation: DVec3 },
}

/// A glTF punctual light.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Light {
    pub name: String,
    /// Linear RGB.
    pub color: [f32; 3],
    /// Candela.
    pub intensity: f32,
    /// Output units.
    pub range: f32,
    /// (inner, outer) cone half-angles in radians for a spot light; None for a point light.
    pub spot: Option<(f32, f32)>,
}

/// A light placed in its holder's node: the light, and its node's rotation and translation
/// there (glTF lights shine along their node's −Z).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub light: Light,
    pub rotation: DQuat,
    pub translation: DVec3,
    /// A SurfaceLight on a part, which glTF can only approximate.
    pub approximated: bool,
}

/// The widest spot cone glTF allows, π/2 (a half-space), as the nearest f32 not above it:
/// `f32::consts::FRAC_PI_2` rounds up, past the limit validators check in double precision.
const MAX_OUTER_CONE: f32 = 1.570_796_2;

/// The light `s` (named `name`) in `holder`, with translations times `scale`; None when it
/// lights nothing.
pub(crate) fn place(name: &str, s: &Settings, holder: Holder, scale: f32) -> Option<Placed> {
    let range = s.range.min(MAX_RANGE);
    let brightness = s.brightness;
    let spot = s.class != Class::Point;
    let angle = s.angle.min(180.0);
    if !s.enabled || range <= 0.0 || brightness <= 0.0 || (spot && angle <= 0.0) {
        return None;
    }
    let range = range * scale;
    let light = Light {
        name: name.to_owned(),
        color: s
            .color
            .map(|c| crate::material::srgb_to_linear(c.clamp(0.0, 1.0))),
        intensity: brightness * (range / 2.0) * (range / 2.0),
        range,
        spot: spot.then(|| {
            let outer = (angle / 2.0).to_radians().min(MAX_OUTER_CONE);
            (outer * INNER_CONE, outer)
        }),
    };
    let (normal, facing) = face(s.face);
    let (rotation, translation) = match (holder, spot) {
        (Holder::Part { .. }, false) => (DQuat::IDENTITY, DVec3::ZERO),
        (Holder::Part { size }, true) => {
            let half = (normal * size.as_dvec3()).abs().element_sum() / 2.0;
            (facing, normal * half * f64::from(scale))
        }
        (
            Holder::Attachment {
                rotation,
                translation,
            },
            spot,
        ) => (
            if spot { rotation * facing } else { rotation },
            translation * f64::from(scale),
        ),
    };
    Some(Placed {
        light,
        rotation,
        translation,
        approximated: s.class == Class::Surface && matches!(holder, Holder::Part { .. }),
    })
}

/// The outward normal of `Enum.NormalId` value `id` and the rotation turning −Z (where a
/// glTF light points) to it; an unknown value is Front, the property's default.
fn face(id: u32) -> (DVec3, DQuat) {
    match id {
        0 => (DVec3::X, DQuat::from_rotation_y(-FRAC_PI_2)),
        1 => (DVec3::Y, DQuat::from_rotation_x(FRAC_PI_2)),
        2 => (DVec3::Z, DQuat::from_rotation_y(PI)),
        3 => (DVec3::NEG_X, DQuat::from_rotation_y(FRAC_PI_2)),
        4 => (DVec3::NEG_Y, DQuat::from_rotation_x(-FRAC_PI_2)),
        _ => (DVec3::NEG_Z, DQuat::IDENTITY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(class: Class) -> Settings {
        Settings {
            class,
            enabled: true,
            brightness: 2.0,
            color: [1.0, 0.5, 0.0],
            range: 16.0,
            angle: 90.0,
            face: 5,
        }
    }

    const PART: Holder = Holder::Part {
        size: Vec3::new(4.0, 2.0, 6.0),
    };

    #[test]
    fn every_face_points_the_light_outwards() {
        for id in 0..6 {
            let (normal, turn) = face(id);
            let pointing = turn * DVec3::NEG_Z;
            assert!(pointing.abs_diff_eq(normal, 1e-12), "{id}: {pointing}");
        }
    }

    #[test]
    fn a_spot_light_shines_from_the_centre_of_its_face() {
        for (id, at) in [
            (0, DVec3::new(2.0, 0.0, 0.0)),
            (1, DVec3::new(0.0, 1.0, 0.0)),
            (2, DVec3::new(0.0, 0.0, 3.0)),
            (5, DVec3::new(0.0, 0.0, -3.0)),
        ] {
            let s = Settings {
                face: id,
                ..settings(Class::Spot)
            };
            let p = place("L", &s, PART, 0.5).unwrap();
            assert!(p.translation.abs_diff_eq(at * 0.5, 1e-12), "{id}");
            assert!(!p.approximated);
        }
        // A point light sits at the part's centre, whatever its Face.
        let p = place("L", &settings(Class::Point), PART, 1.0).unwrap();
        assert_eq!((p.translation, p.rotation), (DVec3::ZERO, DQuat::IDENTITY));
        assert_eq!(p.light.spot, None);
    }

    #[test]
    fn brightness_range_and_angle_map_as_documented() {
        let p = place("L", &settings(Class::Spot), PART, 1.0).unwrap();
        // Brightness lux halfway to the range: 2 × 8².
        assert_eq!(p.light.intensity, 128.0);
        assert_eq!(p.light.range, 16.0);
        let (inner, outer) = p.light.spot.unwrap();
        assert!((outer - std::f32::consts::FRAC_PI_4).abs() < 1e-6);
        assert!((inner - 0.8 * outer).abs() < 1e-6);
        assert_eq!(p.light.color[0], 1.0);
        assert!((p.light.color[1] - 0.214_041).abs() < 1e-5, "linear");
        // Roblox's limits: 60 studs of range, a half-space of cone.
        let wide = Settings {
            range: 500.0,
            angle: 400.0,
            ..settings(Class::Spot)
        };
        let p = place("L", &wide, PART, 2.0).unwrap();
        assert_eq!(p.light.range, 120.0);
        // A half-space, and not a hair past it (glTF: outerConeAngle ≤ π/2; the f32 nearest
        // π/2 is above it).
        let outer = p.light.spot.unwrap().1;
        assert!(f64::from(outer) <= FRAC_PI_2, "{outer}");
        assert!(FRAC_PI_2 - f64::from(outer) < 1e-6, "{outer}");
    }

    #[test]
    fn a_light_that_lights_nothing_is_left_out() {
        for s in [
            Settings {
                enabled: false,
                ..settings(Class::Point)
            },
            Settings {
                range: 0.0,
                ..settings(Class::Point)
            },
            Settings {
                brightness: 0.0,
                ..settings(Class::Point)
            },
            Settings {
                angle: 0.0,
                ..settings(Class::Spot)
            },
        ] {
            assert_eq!(place("L", &s, PART, 1.0), None, "{s:?}");
        }
    }

    #[test]
    fn a_surface_light_is_a_spot_light_approximated_on_a_part_and_exact_in_an_attachment() {
        let s = settings(Class::Surface);
        let on_part = place("L", &s, PART, 1.0).unwrap();
        assert!(on_part.approximated && on_part.light.spot.is_some());
        let turned = DQuat::from_rotation_y(FRAC_PI_2);
        let holder = Holder::Attachment {
            rotation: turned,
            translation: DVec3::new(1.0, 2.0, 3.0),
        };
        let in_attachment = place("L", &s, holder, 2.0).unwrap();
        assert!(!in_attachment.approximated);
        assert_eq!(in_attachment.translation, DVec3::new(2.0, 4.0, 6.0));
        // Front of the attachment: its own −Z, turned with it.
        let pointing = in_attachment.rotation * DVec3::NEG_Z;
        assert!(pointing.abs_diff_eq(turned * DVec3::NEG_Z, 1e-12));
    }
}
