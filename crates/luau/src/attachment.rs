//! Attachment's derived properties. An Attachment (and a Bone) stores one `CFrame`, relative
//! to its parent part; `Position`, `Orientation`, `Axis`, `SecondaryAxis` and the `World*`
//! forms are read from it and written into it, as in Roblox, so they are saved with the
//! place (files keep only `CFrame`).

use glam::{Affine3A, EulerRot, Mat3, Vec3};
use procmodel_dom::{cframe_to_affine, is_a, part_cframe};
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};

/// Which derived property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    Position,
    Orientation,
    Axis,
    SecondaryAxis,
    WorldPosition,
    WorldCFrame,
    WorldOrientation,
    WorldAxis,
    WorldSecondaryAxis,
}

impl Derived {
    /// The derived property `name` of an Attachment, if it is one.
    pub fn of(name: &str) -> Option<Derived> {
        Some(match name {
            "Position" => Derived::Position,
            "Orientation" | "Rotation" => Derived::Orientation,
            "Axis" => Derived::Axis,
            "SecondaryAxis" => Derived::SecondaryAxis,
            "WorldPosition" => Derived::WorldPosition,
            "WorldCFrame" => Derived::WorldCFrame,
            "WorldOrientation" | "WorldRotation" => Derived::WorldOrientation,
            "WorldAxis" => Derived::WorldAxis,
            "WorldSecondaryAxis" => Derived::WorldSecondaryAxis,
            _ => return None,
        })
    }

    /// Whether the value is a CFrame (else a Vector3).
    pub fn is_cframe(self) -> bool {
        self == Derived::WorldCFrame
    }

    fn world(self) -> bool {
        matches!(
            self,
            Derived::WorldPosition
                | Derived::WorldCFrame
                | Derived::WorldOrientation
                | Derived::WorldAxis
                | Derived::WorldSecondaryAxis
        )
    }
}

/// The attachment's own CFrame (relative to its parent).
fn local(dom: &WeakDom, r: Ref) -> Affine3A {
    dom.get_by_ref(r)
        .map(part_cframe)
        .unwrap_or(Affine3A::IDENTITY)
}

/// The frame the attachment's CFrame is relative to: its parent part's CFrame, a parent
/// Bone's world CFrame, else the world itself.
pub fn parent_frame(dom: &WeakDom, r: Ref) -> Affine3A {
    let mut frame = Affine3A::IDENTITY;
    let mut cur = dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
    // Bones chain; anything else ends the walk (depth-bounded against malformed trees).
    for _ in 0..1024 {
        let Some(p) = dom.get_by_ref(cur) else { break };
        if is_a(&p.class, "BasePart") {
            return part_cframe(p) * frame;
        }
        if !is_a(&p.class, "Bone") {
            break;
        }
        frame = part_cframe(p) * frame;
        cur = p.parent();
    }
    frame
}

/// How Roblox turns a rotation into three angles in degrees about X, Y and Z: applied Y,
/// then X, then Z (`Orientation`, of parts and attachments) or X, then Y, then Z
/// (`BasePart.Rotation`).
#[derive(Clone, Copy)]
pub(crate) enum Euler {
    Orientation,
    Rotation,
}

/// `m`'s angles in degrees, (x, y, z), in the `order` given.
pub(crate) fn euler_degrees(m: Mat3, order: Euler) -> Vec3 {
    let (x, y, z) = match order {
        Euler::Orientation => {
            let (y, x, z) = m.to_euler(EulerRot::YXZ);
            (x, y, z)
        }
        Euler::Rotation => m.to_euler(EulerRot::XYZ),
    };
    Vec3::new(x, y, z) * (180.0 / std::f32::consts::PI)
}

/// The rotation of the angles `deg` (x, y, z degrees) in `order`: [`euler_degrees`] inverted.
pub(crate) fn from_euler_degrees(deg: Vec3, order: Euler) -> Mat3 {
    let r = deg * (std::f32::consts::PI / 180.0);
    match order {
        Euler::Orientation => Mat3::from_euler(EulerRot::YXZ, r.y, r.x, r.z),
        Euler::Rotation => Mat3::from_euler(EulerRot::XYZ, r.x, r.y, r.z),
    }
}

/// `m` with its X axis turned to `x`, its Y axis as near its old one as it can be (the
/// reference: "Setting Axis ... re-projects SecondaryAxis onto the plane perpendicular to the
/// new axis"); None for a zero `x`. When the old Y axis is parallel to `x` (`Axis =
/// Vector3.yAxis` on a new attachment) nothing is left to project, so the frame turns by the
/// shortest arc from its old X axis to `x`.
fn from_axes(m: Mat3, x: Vec3) -> Option<Mat3> {
    let x = x.try_normalize()?;
    match x.cross(m.y_axis).try_normalize() {
        Some(z) => Some(Mat3::from_cols(x, z.cross(x), z)),
        None => Some(Mat3::from_quat(glam::Quat::from_rotation_arc(m.x_axis, x)) * m),
    }
}

/// `m` with its Y axis turned to `y` and its X axis as near its old one as it can be; the
/// shortest arc from its old Y axis when the old X axis is parallel to `y`.
fn from_secondary(m: Mat3, y: Vec3) -> Option<Mat3> {
    let y = y.try_normalize()?;
    match m.x_axis.cross(y).try_normalize() {
        Some(z) => Some(Mat3::from_cols(y.cross(z), y, z)),
        None => Some(Mat3::from_quat(glam::Quat::from_rotation_arc(m.y_axis, y)) * m),
    }
}

/// The value of `d` for the attachment `r`.
pub fn read(dom: &WeakDom, r: Ref, d: Derived) -> Variant {
    let l = local(dom, r);
    let f = if d.world() {
        parent_frame(dom, r) * l
    } else {
        l
    };
    let m = Mat3::from(f.matrix3);
    let v = match d {
        Derived::WorldCFrame => return Variant::CFrame(procmodel_dom::affine_to_cframe(&f)),
        Derived::Position | Derived::WorldPosition => Vec3::from(f.translation),
        Derived::Orientation | Derived::WorldOrientation => euler_degrees(m, Euler::Orientation),
        Derived::Axis | Derived::WorldAxis => m.x_axis,
        Derived::SecondaryAxis | Derived::WorldSecondaryAxis => m.y_axis,
    };
    Variant::Vector3(rbx_types::Vector3::new(v.x, v.y, v.z))
}

/// The attachment's new CFrame after writing `value` to `d`; an error says what is wrong
/// with the value (a zero axis).
pub fn write(
    dom: &WeakDom,
    r: Ref,
    d: Derived,
    value: &Variant,
) -> Result<rbx_types::CFrame, String> {
    let l = local(dom, r);
    let parent = parent_frame(dom, r);
    let world = parent * l;
    let new_local = match (d, value) {
        (Derived::WorldCFrame, Variant::CFrame(cf)) => parent.inverse() * cframe_to_affine(cf),
        (_, Variant::Vector3(v)) => {
            let v = Vec3::new(v.x, v.y, v.z);
            let mut target = if d.world() { world } else { l };
            let m = Mat3::from(target.matrix3);
            let bad = || format!("{d:?} must be a non-zero vector");
            match d {
                Derived::Position | Derived::WorldPosition => target.translation = v.into(),
                Derived::Orientation | Derived::WorldOrientation => {
                    target.matrix3 = from_euler_degrees(v, Euler::Orientation).into()
                }
                Derived::Axis | Derived::WorldAxis => {
                    target.matrix3 = from_axes(m, v).ok_or_else(bad)?.into()
                }
                Derived::SecondaryAxis | Derived::WorldSecondaryAxis => {
                    target.matrix3 = from_secondary(m, v).ok_or_else(bad)?.into()
                }
                Derived::WorldCFrame => unreachable!("a CFrame value is matched above"),
            }
            if d.world() {
                parent.inverse() * target
            } else {
                target
            }
        }
        _ => return Err("wrong value type".into()),
    };
    Ok(procmodel_dom::affine_to_cframe(&new_local))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbx_dom_weak::InstanceBuilder;

    fn v3(x: f32, y: f32, z: f32) -> Variant {
        Variant::Vector3(rbx_types::Vector3::new(x, y, z))
    }

    fn vec(v: Variant) -> Vec3 {
        match v {
            Variant::Vector3(v) => Vec3::new(v.x, v.y, v.z),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn world_position_follows_the_part_and_writes_back_locally() {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        let part_cf = Affine3A::from_rotation_translation(
            glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            Vec3::new(10.0, 0.0, 0.0),
        );
        let part = dom.insert(
            dom.root_ref(),
            InstanceBuilder::new("Part")
                .with_property("CFrame", procmodel_dom::affine_to_cframe(&part_cf)),
        );
        let a = dom.insert(part, InstanceBuilder::new("Attachment"));
        let cf = write(&dom, a, Derived::Position, &v3(0.0, 1.0, 2.0)).unwrap();
        dom.get_by_ref_mut(a)
            .unwrap()
            .properties
            .insert("CFrame".into(), cf.into());
        assert_eq!(
            vec(read(&dom, a, Derived::Position)),
            Vec3::new(0.0, 1.0, 2.0)
        );
        // Local +Z turned a quarter about Y is world +X.
        assert!(
            vec(read(&dom, a, Derived::WorldPosition)).abs_diff_eq(Vec3::new(12.0, 1.0, 0.0), 1e-5)
        );
        let cf = write(&dom, a, Derived::WorldPosition, &v3(10.0, 0.0, 0.0)).unwrap();
        dom.get_by_ref_mut(a)
            .unwrap()
            .properties
            .insert("CFrame".into(), cf.into());
        assert!(vec(read(&dom, a, Derived::Position)).abs_diff_eq(Vec3::ZERO, 1e-5));
        // Axis is the X axis, SecondaryAxis the Y axis; setting one keeps them square.
        let cf = write(&dom, a, Derived::Axis, &v3(0.0, 0.0, 2.0)).unwrap();
        dom.get_by_ref_mut(a)
            .unwrap()
            .properties
            .insert("CFrame".into(), cf.into());
        assert!(vec(read(&dom, a, Derived::Axis)).abs_diff_eq(Vec3::Z, 1e-5));
        assert!(vec(read(&dom, a, Derived::SecondaryAxis)).abs_diff_eq(Vec3::Y, 1e-5));
        // SecondaryAxis along the X axis: the frame turns by the shortest arc (Y to Z).
        let cf = write(&dom, a, Derived::SecondaryAxis, &v3(0.0, 0.0, 1.0)).unwrap();
        dom.get_by_ref_mut(a)
            .unwrap()
            .properties
            .insert("CFrame".into(), cf.into());
        assert!(vec(read(&dom, a, Derived::SecondaryAxis)).abs_diff_eq(Vec3::Z, 1e-5));
        assert!(vec(read(&dom, a, Derived::Axis)).abs_diff_eq(Vec3::NEG_Y, 1e-5));
        assert!(write(&dom, a, Derived::Axis, &v3(0.0, 0.0, 0.0)).is_err());
    }
}
