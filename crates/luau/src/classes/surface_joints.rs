//! The deprecated surface joining old scripts still call: `Model:MakeJoints()`,
//! `BasePart:MakeJoints()` and `Workspace:MakeJoints(parts)`. Per the reference, each joins
//! the given parts to every part in the Workspace with a planar face touching one of theirs,
//! by the two faces' `SurfaceType`s: Hinge a `Rotate`, Motor a `RotateV`, Weld a `Weld` (with
//! any surface), Glue a `Glue`, and Studs, Inlet and Universal a `Snap` with one of the other
//! two (Universal also with itself); Smooth alone joins nothing. Only box-shaped parts have
//! planar faces here, and nothing happens to parts outside the Workspace (a generator's
//! results, as in Studio). Each joint is parented to its `Part0` with `C0`/`C1` at the
//! contact's centre; parts already joined are not joined again.
//!
//! Studio's build tools' pair, `Workspace:JoinToOutsiders(parts, mode)` and
//! `Workspace:UnjoinFromOutsiders(parts)`, join the given parts to the touching parts *not*
//! given (never to each other) — by the reference's other table: a Hinge face a `Rotate`, a
//! Motor (or SteppingMotor) face a `RotateP`, any other pair a `Weld` — and
//! break the JointInstances between a given part and one not given. `JointCreationMode.None`
//! joins nothing. Cylinders' flat ends, which Roblox welds, are not box faces here.

use crate::assembly::ref_prop;
use crate::context::{Ctx, ctx};
use crate::methods::MethodTable;
use glam::{Affine3A, Vec2, Vec3};
use rbx_dom_weak::{InstanceBuilder, Ustr};
use rbx_types::{Ref, Variant};

/// `SurfaceType` values.
const GLUE: u32 = 1;
const WELD: u32 = 2;
const STUDS: u32 = 3;
const INLET: u32 = 4;
const UNIVERSAL: u32 = 5;
const HINGE: u32 = 6;
const MOTOR: u32 = 7;
const STEPPING_MOTOR: u32 = 8;

/// The joint two touching faces make, by their surface types (either order).
pub(crate) fn joint_class(a: u32, b: u32) -> Option<&'static str> {
    let either = |s: &[u32]| s.contains(&a) || s.contains(&b);
    if either(&[HINGE]) {
        return Some("Rotate");
    }
    if either(&[MOTOR, STEPPING_MOTOR]) {
        return Some("RotateV");
    }
    if either(&[WELD]) {
        return Some("Weld");
    }
    if either(&[GLUE]) {
        return Some("Glue");
    }
    let snaps = [STUDS, INLET, UNIVERSAL];
    (snaps.contains(&a) && snaps.contains(&b) && !(a == b && a != UNIVERSAL)).then_some("Snap")
}

/// The joint `JoinToOutsiders` makes between two touching faces (either order): the
/// reference's "Glue, Studs, Inlets, Universal, Weld, and Smooth surfaces will all create
/// Weld instances", Hinge and Motor their rotating joints.
pub(crate) fn outsider_joint_class(a: u32, b: u32) -> &'static str {
    let either = |s: &[u32]| s.contains(&a) || s.contains(&b);
    if either(&[HINGE]) {
        "Rotate"
    } else if either(&[MOTOR, STEPPING_MOTOR]) {
        "RotateP"
    } else {
        "Weld"
    }
}

/// Which joints a call makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Joining {
    /// `MakeJoints`: by [`joint_class`], the given parts to each other too.
    Surfaces,
    /// `JoinToOutsiders`: by [`outsider_joint_class`], only to parts not given.
    Outsiders,
}

/// The surface properties of a box's six faces: (local axis, sign, property).
const FACES: [(usize, f32, &str); 6] = [
    (0, 1.0, "RightSurface"),
    (0, -1.0, "LeftSurface"),
    (1, 1.0, "TopSurface"),
    (1, -1.0, "BottomSurface"),
    (2, 1.0, "BackSurface"),
    (2, -1.0, "FrontSurface"),
];

/// Distance (studs) within which two opposite faces count as touching.
const TOUCH: f32 = 0.01;

/// A box-shaped part: its frame, half size and the surface type of each of [`FACES`].
struct Box3 {
    frame: Affine3A,
    half: Vec3,
    surfaces: [u32; 6],
}

fn enum_prop(inst: &rbx_dom_weak::Instance, name: &str) -> u32 {
    match inst
        .properties
        .get(&Ustr::from(name))
        .or_else(|| procmodel_dom::db_default(inst.class.as_str(), name))
    {
        Some(Variant::Enum(e)) => e.to_u32(),
        _ => 0,
    }
}

/// The part as a box, if it is one (a Block-shaped Part, a VehicleSeat, a TrussPart).
fn as_box(inst: &rbx_dom_weak::Instance) -> Option<Box3> {
    let class = inst.class.as_str();
    let boxy = (procmodel_dom::is_a(class, "Part") && enum_prop(inst, "Shape") == 1)
        || class == "VehicleSeat"
        || class == "TrussPart";
    if !boxy {
        return None;
    }
    let frame = match inst.properties.get(&procmodel_dom::keys::KEYS.cframe) {
        Some(Variant::CFrame(cf)) => procmodel_dom::cframe_to_affine(cf),
        _ => Affine3A::IDENTITY,
    };
    let size = match inst.properties.get(&procmodel_dom::keys::KEYS.size) {
        Some(Variant::Vector3(v)) => Vec3::new(v.x, v.y, v.z),
        _ => Vec3::new(4.0, 1.0, 2.0),
    };
    Some(Box3 {
        frame,
        half: size * 0.5,
        surfaces: FACES.map(|(_, _, p)| enum_prop(inst, p)),
    })
}

/// Area of a convex polygon.
fn area(poly: &[Vec2]) -> f32 {
    let n = poly.len();
    (0..n)
        .map(|i| poly[i].perp_dot(poly[(i + 1) % n]))
        .sum::<f32>()
        .abs()
        * 0.5
}

/// The part of convex polygon `poly` inside the rectangle `[-h, h]` (Sutherland–Hodgman).
fn clip(mut poly: Vec<Vec2>, h: Vec2) -> Vec<Vec2> {
    for (axis, sign) in [(0, 1.0f32), (0, -1.0), (1, 1.0), (1, -1.0)] {
        let inside = |p: Vec2| sign * p[axis] <= h[axis];
        let mut out = Vec::with_capacity(poly.len() + 1);
        for i in 0..poly.len() {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            if inside(a) {
                out.push(a);
            }
            if inside(a) != inside(b) {
                let t = (sign * h[axis] - a[axis]) / (b[axis] - a[axis]);
                out.push(a + (b - a) * t);
            }
        }
        poly = out;
        if poly.is_empty() {
            break;
        }
    }
    poly
}

/// Where a face of `a` touches a face of `b`: (face of `a`, face of `b`, contact centre in
/// world space), for the first pair of opposite faces that lie in one plane and overlap with
/// a positive area.
fn touching(a: &Box3, b: &Box3) -> Option<(usize, usize, Vec3)> {
    let (ra, rb) = (a.frame.matrix3, b.frame.matrix3);
    let (ta, tb) = (
        Vec3::from(a.frame.translation),
        Vec3::from(b.frame.translation),
    );
    // Bounding spheres first: most pairs are far apart.
    if (ta - tb).length() > a.half.length() + b.half.length() + TOUCH {
        return None;
    }
    for (i, &(ax, sa, _)) in FACES.iter().enumerate() {
        let n = Vec3::from(ra.col(ax)) * sa;
        let ca = ta + n * a.half[ax];
        let (u_ax, v_ax) = ((ax + 1) % 3, (ax + 2) % 3);
        let (u, v) = (Vec3::from(ra.col(u_ax)), Vec3::from(ra.col(v_ax)));
        let h = Vec2::new(a.half[u_ax], a.half[v_ax]);
        for (j, &(bx, sb, _)) in FACES.iter().enumerate() {
            let m = Vec3::from(rb.col(bx)) * sb;
            if n.dot(m) > -0.999 {
                continue;
            }
            let cb = tb + m * b.half[bx];
            if (cb - ca).dot(n).abs() > TOUCH {
                continue;
            }
            let (bu, bv) = ((bx + 1) % 3, (bx + 2) % 3);
            let eu = Vec3::from(rb.col(bu)) * b.half[bu];
            let ev = Vec3::from(rb.col(bv)) * b.half[bv];
            let corners = [cb - eu - ev, cb + eu - ev, cb + eu + ev, cb - eu + ev]
                .map(|p| Vec2::new((p - ca).dot(u), (p - ca).dot(v)));
            let poly = clip(corners.to_vec(), h);
            if poly.len() < 3 || area(&poly) < 1e-4 {
                continue;
            }
            let mid = poly.iter().copied().sum::<Vec2>() / poly.len() as f32;
            return Some((i, j, ca + u * mid.x + v * mid.y));
        }
    }
    None
}

/// Joins `parts` (those in the Workspace) to every touching part of the Workspace.
fn make_joints(c: &mut Ctx, parts: &[Ref], method: &str, joining: Joining) -> mlua::Result<()> {
    let Some(ws) = crate::services::find_service(c, "Workspace") else {
        return Ok(());
    };
    let mine: Vec<Ref> = parts
        .iter()
        .copied()
        .filter(|&p| p != ws && procmodel_dom::is_within(&c.dom, p, ws))
        .collect();
    if mine.is_empty() {
        return Ok(());
    }
    c.scene_query(|| method.to_owned())?;
    // One walk of the Workspace: its box-shaped parts, and the pairs of parts its joints
    // already connect (each pair both ways round).
    let mut world: Vec<(Ref, Box3)> = Vec::new();
    let mut joined = std::collections::HashSet::new();
    procmodel_dom::preorder(&c.dom, &[ws], |r, inst| {
        let class = inst.class.as_str();
        if procmodel_dom::is_a(class, "BasePart")
            && let Some(b) = as_box(inst)
        {
            world.push((r, b));
        } else if procmodel_dom::is_a(class, "JointInstance") {
            let (a, b) = (ref_prop(inst, "Part0"), ref_prop(inst, "Part1"));
            joined.insert((a, b));
            joined.insert((b, a));
        }
        true
    });
    let index: std::collections::HashMap<Ref, usize> = world
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (*r, i))
        .collect();
    let given: std::collections::HashSet<Ref> = mine.iter().copied().collect();
    let mut joints = Vec::new();
    for &p in &mine {
        let Some(&i) = index.get(&p) else { continue };
        for (j, (q, qb)) in world.iter().enumerate() {
            // A pair of given parts is looked at once, from the earlier one (or, joining to
            // outsiders, never).
            if *q == p || (given.contains(q) && (j < i || joining == Joining::Outsiders)) {
                continue;
            }
            let pb = &world[i].1;
            let Some((fa, fb, at)) = touching(pb, qb) else {
                continue;
            };
            let (sa, sb) = (pb.surfaces[fa], qb.surfaces[fb]);
            let class = match joining {
                Joining::Surfaces => match joint_class(sa, sb) {
                    Some(class) => class,
                    None => continue,
                },
                Joining::Outsiders => outsider_joint_class(sa, sb),
            };
            // Joined already (or just now: a part may be listed twice).
            if !joined.insert((p, *q)) {
                continue;
            }
            joined.insert((*q, p));
            // The joint's frame: the contact centre, in the first part's orientation.
            let frame = Affine3A::from_mat3_translation(pb.frame.matrix3.into(), at);
            let c0 = pb.frame.inverse() * frame;
            let c1 = qb.frame.inverse() * frame;
            joints.push((p, *q, class, c0, c1));
        }
    }
    for (p0, p1, class, c0, c1) in joints {
        c.check_write(p0, || {
            format!("{method}: a joint under {}", c.full_name(p0))
        })?;
        let builder = InstanceBuilder::new(class)
            .with_name(class)
            .with_property("Part0", Variant::Ref(p0))
            .with_property("Part1", Variant::Ref(p1))
            .with_property("C0", Variant::CFrame(procmodel_dom::affine_to_cframe(&c0)))
            .with_property("C1", Variant::CFrame(procmodel_dom::affine_to_cframe(&c1)));
        let (r, _) = c.create(Ustr::from(class), builder);
        c.dom.transfer_within(r, p0);
    }
    c.outside_change();
    Ok(())
}

pub fn register(m: &mut MethodTable) {
    m.class("Model");
    m.add_method("MakeJoints", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let mut parts = Vec::new();
        procmodel_dom::preorder(&c.dom, &[this.r], |r, inst| {
            if procmodel_dom::is_a(inst.class.as_str(), "BasePart") {
                parts.push(r);
            }
            true
        });
        make_joints(&mut c, &parts, "Model:MakeJoints", Joining::Surfaces)
    });
    m.class("BasePart");
    m.add_method("MakeJoints", |lua, this, ()| {
        let mut c = ctx(lua)?;
        make_joints(&mut c, &[this.r], "BasePart:MakeJoints", Joining::Surfaces)
    });
    m.class("Workspace");
    m.add_method("MakeJoints", |lua, _this, parts: mlua::Value| {
        let mut c = ctx(lua)?;
        let refs = part_list(&c, &parts, "Workspace:MakeJoints")?;
        make_joints(&mut c, &refs, "Workspace:MakeJoints", Joining::Surfaces)
    });
    m.add_method(
        "JoinToOutsiders",
        |lua, _this, (parts, mode): (mlua::Value, mlua::Value)| {
            const M: &str = "Workspace:JoinToOutsiders";
            let mut c = ctx(lua)?;
            let refs = part_list(&c, &parts, M)?;
            let mode = super::instance::enum_arg(&mode, "JointCreationMode", "JoinToOutsiders", 2)?;
            // All and Surface both join always; None never.
            if mode == JOINT_CREATION_NONE {
                return Ok(());
            }
            make_joints(&mut c, &refs, M, Joining::Outsiders)
        },
    );
    m.add_method("UnjoinFromOutsiders", |lua, _this, parts: mlua::Value| {
        const M: &str = "Workspace:UnjoinFromOutsiders";
        let mut c = ctx(lua)?;
        let refs = part_list(&c, &parts, M)?;
        let Some(ws) = crate::services::find_service(&c, "Workspace") else {
            return Ok(());
        };
        c.scene_query(|| M.to_owned())?;
        let given: rustc_hash::FxHashSet<Ref> = refs.into_iter().collect();
        let dom = &c.dom;
        let is_part = |r: Ref| {
            dom.get_by_ref(r)
                .is_some_and(|i| procmodel_dom::is_a(i.class.as_str(), "BasePart"))
        };
        let mut doomed = Vec::new();
        procmodel_dom::preorder(dom, &[ws], |r, inst| {
            if procmodel_dom::is_a(inst.class.as_str(), "JointInstance") {
                let (a, b) = (ref_prop(inst, "Part0"), ref_prop(inst, "Part1"));
                let (ga, gb) = (given.contains(&a), given.contains(&b));
                if ga != gb && is_part(a) && is_part(b) {
                    doomed.push(r);
                }
            }
            true
        });
        for joint in doomed {
            super::instance::destroy_as(&mut c, joint, M)?;
        }
        Ok(())
    });
}

/// `JointCreationMode.None`.
const JOINT_CREATION_NONE: u32 = 2;

/// A list argument of BaseParts (`Workspace:MakeJoints` and the outsider methods): an array
/// of instances ([`super::worldroot::instance_list`]), each a BasePart.
fn part_list(c: &Ctx, parts: &mlua::Value, method: &str) -> mlua::Result<Vec<Ref>> {
    let refs = super::worldroot::instance_list(c, parts, method, false)?;
    for (n, &r) in refs.iter().enumerate() {
        let class = c.dom.get_by_ref(r).map_or("", |i| i.class.as_str());
        if !procmodel_dom::is_a(class, "BasePart") {
            return Err(mlua::Error::runtime(format!(
                "{method}: every item of the list must be a BasePart (item {} is a {class})",
                n + 1
            )));
        }
    }
    Ok(refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surface_pairs_join_as_the_reference_table_says() {
        let (smooth, glue, weld, studs, inlet, universal) =
            (0, GLUE, WELD, STUDS, INLET, UNIVERSAL);
        assert_eq!(joint_class(smooth, smooth), None);
        assert_eq!(joint_class(weld, smooth), Some("Weld"));
        assert_eq!(joint_class(smooth, glue), Some("Glue"));
        assert_eq!(joint_class(studs, inlet), Some("Snap"));
        assert_eq!(joint_class(inlet, universal), Some("Snap"));
        assert_eq!(joint_class(universal, universal), Some("Snap"));
        assert_eq!(joint_class(studs, studs), None);
        assert_eq!(joint_class(inlet, inlet), None);
        assert_eq!(joint_class(studs, smooth), None);
        assert_eq!(joint_class(studs, weld), Some("Weld"));
        assert_eq!(joint_class(HINGE, smooth), Some("Rotate"));
        assert_eq!(joint_class(inlet, MOTOR), Some("RotateV"));
    }

    #[test]
    fn faces_touch_when_coplanar_opposite_and_overlapping() {
        let block = |t: Vec3, size: Vec3| Box3 {
            frame: Affine3A::from_translation(t),
            half: size * 0.5,
            surfaces: [0; 6],
        };
        let floor = block(Vec3::ZERO, Vec3::new(4.0, 1.0, 2.0));
        // Stacked: the floor's top on the brick's bottom, contact at their overlap's centre.
        let (fa, fb, at) = touching(
            &floor,
            &block(Vec3::new(1.0, 1.0, 0.0), Vec3::new(4.0, 1.0, 2.0)),
        )
        .unwrap();
        assert_eq!((FACES[fa].2, FACES[fb].2), ("TopSurface", "BottomSurface"));
        assert!((at - Vec3::new(0.5, 0.5, 0.0)).length() < 1e-5, "{at}");
        // A gap, only an edge in common, or no overlap: not touching.
        assert!(touching(&floor, &block(Vec3::new(0.0, 1.1, 0.0), Vec3::ONE)).is_none());
        assert!(
            touching(
                &floor,
                &block(Vec3::new(4.0, 1.0, 0.0), Vec3::new(4.0, 1.0, 2.0))
            )
            .is_none()
        );
        assert!(touching(&floor, &block(Vec3::new(10.0, 1.0, 0.0), Vec3::ONE)).is_none());
        // Rotated about the shared normal, still touching.
        let turned = Box3 {
            frame: Affine3A::from_rotation_translation(
                glam::Quat::from_rotation_y(0.6),
                Vec3::new(0.0, 1.0, 0.0),
            ),
            half: Vec3::new(2.0, 0.5, 1.0),
            surfaces: [0; 6],
        };
        assert!(touching(&floor, &turned).is_some());
    }
}
