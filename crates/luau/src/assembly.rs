//! Assemblies: what joins parts (the joints of a part's tree, the rigid ones that connect
//! parts into one assembly), a part's mass and an assembly's root part. Shared by
//! `BasePart:GetJoints`/`GetConnectedParts`/`IsGrounded`/`GetRootPart`/`GetMass`
//! (`classes/joints.rs`, `classes/worldroot.rs`) and the derived properties `Mass`,
//! `AssemblyMass` and `AssemblyRootPart` (`instance.rs`).
//!
//! Rules (Roblox reference): a *joint* of a part is a JointInstance (Weld, Motor6D, Snap, …)
//! or a WeldConstraint / NoCollisionConstraint whose Part0 or Part1 is the part, or a
//! Constraint with an Attachment0/Attachment1 parented to it. Parts are *connected* through
//! rigid joints only: JointInstances and WeldConstraints, with `Enabled` not false (hinges,
//! ropes and the other constraints move, so they do not join an assembly). Joints count
//! wherever they are in the part's tree (there is no simulation to activate them), in
//! pre-order: the scene for a part in it (a query of the scene, watched as one), the
//! container for a generator's own parts.
//!
//! The root part of an assembly (the Assemblies page of the reference, highest priority
//! first): an anchored part; a part that is not `Massless`; a higher `RootPriority`; a larger
//! size — the area of the largest face of the part's box, times 20 for a Seat or VehicleSeat
//! and 10 for a part named HumanoidRootPart (the reference names these multipliers' order,
//! not their values; these are the ones Roblox engineers have described). Roblox breaks the
//! remaining ties by an internal id; here the earlier part in pre-order of the tree wins, so
//! every part of an assembly names the same root. A part named Torso gets no multiplier (its
//! value is not documented).

use crate::context::Ctx;
use procmodel_dom::is_a;
use rbx_dom_weak::ustr;
use rbx_types::{Ref, Variant};
use rustc_hash::FxHashSet;
use std::sync::LazyLock;

/// (Material, CustomPhysicalProperties): looked up on every raycast hit.
static KEYS: LazyLock<(rbx_dom_weak::Ustr, rbx_dom_weak::Ustr)> =
    LazyLock::new(|| (ustr("Material"), ustr("CustomPhysicalProperties")));

pub(crate) fn ref_prop(inst: &rbx_dom_weak::Instance, name: &str) -> Ref {
    match inst.properties.get(&ustr(name)) {
        Some(Variant::Ref(r)) => *r,
        _ => Ref::none(),
    }
}

/// Whether a joint or constraint is enabled (`Enabled` not false).
pub(crate) fn enabled(inst: &rbx_dom_weak::Instance) -> bool {
    !matches!(
        inst.properties.get(&ustr("Enabled")),
        Some(Variant::Bool(false))
    )
}

/// The parts a joint instance acts on (none, one or two), and whether it is rigid.
fn joined(c: &Ctx, inst: &rbx_dom_weak::Instance) -> Option<([Ref; 2], bool)> {
    let class = inst.class.as_str();
    if is_a(class, "JointInstance") || is_a(class, "WeldConstraint") {
        let enabled = enabled(inst);
        let parts = if is_a(class, "WeldConstraint") {
            // Its Part0/Part1 are saved as Part0Internal/Part1Internal.
            let pick = |a: &str, b: &str| {
                let r = ref_prop(inst, a);
                if r.is_some() { r } else { ref_prop(inst, b) }
            };
            [
                pick("Part0", "Part0Internal"),
                pick("Part1", "Part1Internal"),
            ]
        } else {
            [ref_prop(inst, "Part0"), ref_prop(inst, "Part1")]
        };
        return Some((parts, enabled));
    }
    if is_a(class, "NoCollisionConstraint") {
        return Some(([ref_prop(inst, "Part0"), ref_prop(inst, "Part1")], false));
    }
    if is_a(class, "Constraint") {
        let parent = |name: &str| {
            c.dom
                .get_by_ref(ref_prop(inst, name))
                .map_or(Ref::none(), |a| a.parent())
        };
        return Some(([parent("Attachment0"), parent("Attachment1")], false));
    }
    None
}

/// Every joint of the tree `part` is in, in pre-order: (joint, parts, rigid).
pub(crate) fn all_joints(
    c: &Ctx,
    part: Ref,
    method: &str,
) -> mlua::Result<Vec<(Ref, [Ref; 2], bool)>> {
    if c.in_scene(part) {
        c.scene_query(|| format!("BasePart:{method}"))?;
    }
    Ok(joints_under(c, tree_top(c, part)))
}

/// Every joint of the tree under `top`, in pre-order: (joint, parts, rigid).
fn joints_under(c: &Ctx, top: Ref) -> Vec<(Ref, [Ref; 2], bool)> {
    let mut out = Vec::new();
    procmodel_dom::preorder(&c.dom, &[top], |r, inst| {
        if let Some((parts, rigid)) = joined(c, inst) {
            out.push((r, parts, rigid));
        }
        true
    });
    out
}

/// Adds the parts that the rigid joints under `top` name to [`Ctx::jointed`] (a clone made
/// joints without writing their Part0/Part1; MakeJoints made some).
pub(crate) fn note_joints(c: &mut Ctx, top: Ref) {
    let mut joints = Vec::new();
    procmodel_dom::preorder(&c.dom, &[top], |r, inst| {
        if joins_rigidly(inst.class.as_str()) {
            joints.push(r);
        }
        true
    });
    for j in joints {
        if let Some(([a, b], _)) = c.dom.get_by_ref(j).and_then(|i| joined(c, i)) {
            c.jointed.extend([a, b].into_iter().filter(|p| p.is_some()));
            c.joints.insert(j);
        }
    }
}

/// Whether instances of `class` join the parts they name rigidly when enabled (a
/// JointInstance or a WeldConstraint).
pub(crate) fn joins_rigidly(class: &str) -> bool {
    is_a(class, "JointInstance") || is_a(class, "WeldConstraint")
}

/// Runs `write`, which sets `part`'s CFrame, under the reference's repositioning rule for
/// welded parts (the Weld page): when a part's `CFrame` is set, "that part will move and all
/// of the connected parts will also move, ensuring they maintain the same offset" (setting
/// `Position` moves the part alone). A running generation's own parts are outside the scene
/// (unless it parented one there), where joints do not act: for them, and for anything
/// that is not a part, `write` is all (one check).
pub(crate) fn moving(
    c: &mut Ctx,
    part: crate::context::Instance,
    write: impl FnOnce(&mut Ctx) -> mlua::Result<()>,
) -> mlua::Result<()> {
    if c.unplaced_own(part.r) || !is_a(part.class.as_str(), "BasePart") {
        return write(c);
    }
    let cframe = |c: &Ctx| c.dom.get_by_ref(part.r).map(procmodel_dom::part_cframe);
    let old = cframe(c);
    write(c)?;
    match (old, cframe(c)) {
        (Some(old), Some(new)) if old != new => drag(c, part.r, old, new),
        _ => Ok(()),
    }
}

/// Joints act in the Workspace only: `part` went from `old` to `new`, and when it is in the
/// Workspace every other part of the Workspace rigidly connected to it moves by the same
/// rigid motion.
fn drag(c: &mut Ctx, part: Ref, old: glam::Affine3A, new: glam::Affine3A) -> mlua::Result<()> {
    if c.jointed_stale.get() {
        // Refill from the scene's joints (writes keep the set between such changes).
        let root = c.dom.root_ref();
        note_joints(c, root);
        c.jointed_stale.set(false);
    }
    if !c.jointed.contains(&part) {
        return Ok(());
    }
    let Some(ws) = crate::services::find_service(c, "Workspace") else {
        return Ok(());
    };
    if !procmodel_dom::is_within(&c.dom, part, ws) {
        return Ok(());
    }
    let delta = new * old.inverse();
    // The known rigid joints that act now: enabled, in the Workspace (their current parts).
    let mut gone = Vec::new();
    let mut joints = Vec::new();
    let mut known: Vec<Ref> = c.joints.iter().copied().collect();
    known.sort_unstable_by_key(|r| crate::context::ref_bits(*r));
    for j in known {
        match c.dom.get_by_ref(j).and_then(|i| joined(c, i)) {
            Some((parts, true)) if procmodel_dom::is_within(&c.dom, j, ws) => joints.push(parts),
            Some(_) => {}
            None => gone.push(j),
        }
    }
    for j in gone {
        c.joints.remove(&j);
    }
    // The assembly: parts reached through enabled rigid joints, in the order reached.
    let mut seen: FxHashSet<Ref> = [part].into_iter().collect();
    let mut frontier = vec![part];
    let mut others = Vec::new();
    while let Some(p) = frontier.pop() {
        for [a, b] in &joints {
            let other = if *a == p {
                *b
            } else if *b == p {
                *a
            } else {
                continue;
            };
            let in_world = c
                .dom
                .get_by_ref(other)
                .is_some_and(|i| is_a(i.class.as_str(), "BasePart"))
                && procmodel_dom::is_within(&c.dom, other, ws);
            if in_world && seen.insert(other) {
                others.push(other);
                frontier.push(other);
            }
        }
    }
    for q in others {
        c.check_write(q, || "moving a welded part with its assembly".into())?;
        let Some(inst) = c.dom.get_by_ref_mut(q) else {
            continue;
        };
        let moved = delta * procmodel_dom::part_cframe(inst);
        inst.properties.insert(
            crate::keys::KEYS.cframe,
            Variant::CFrame(procmodel_dom::affine_to_cframe(&moved)),
        );
    }
    Ok(())
}

/// The parts rigidly connected to `part`: its neighbours, or (`recursive`) its whole
/// assembly, itself included, in the order they are reached.
pub(crate) fn connected(
    c: &Ctx,
    part: Ref,
    recursive: bool,
    method: &str,
) -> mlua::Result<Vec<Ref>> {
    let joints = all_joints(c, part, method)?;
    let mut seen: FxHashSet<Ref> = [part].into_iter().collect();
    let mut order = if recursive { vec![part] } else { Vec::new() };
    let mut frontier = vec![part];
    while let Some(p) = frontier.pop() {
        for (_, [a, b], rigid) in &joints {
            if !rigid {
                continue;
            }
            let other = if *a == p {
                *b
            } else if *b == p {
                *a
            } else {
                continue;
            };
            if other.is_none() || c.dom.get_by_ref(other).is_none() || !seen.insert(other) {
                continue;
            }
            order.push(other);
            if recursive {
                frontier.push(other);
            }
        }
    }
    Ok(order)
}

/// The top of the tree `part` is in: the DataModel for a part in the scene.
pub(crate) fn tree_top(c: &Ctx, part: Ref) -> Ref {
    let mut top = part;
    while let Some(p) = c
        .dom
        .get_by_ref(top)
        .map(|i| i.parent())
        .filter(|p| p.is_some())
    {
        top = p;
    }
    top
}

/// The `Material` enum value of a part (its class default when unset).
pub(crate) fn part_material(inst: &rbx_dom_weak::Instance) -> u32 {
    match inst.properties.get(&KEYS.0) {
        Some(Variant::Enum(e)) => e.to_u32(),
        _ => match procmodel_dom::db_default(&inst.class, "Material") {
            Some(Variant::Enum(e)) => e.to_u32(),
            _ => 256,
        },
    }
}

/// `BasePart.CurrentPhysicalProperties`: its CustomPhysicalProperties when set, else its
/// material's.
pub(crate) fn physical_properties(
    inst: &rbx_dom_weak::Instance,
) -> procmodel_luau_types::PhysicalProperties {
    match inst.properties.get(&KEYS.1) {
        Some(Variant::PhysicalProperties(rbx_types::PhysicalProperties::Custom(p))) => {
            procmodel_luau_types::PhysicalProperties(*p)
        }
        _ => procmodel_luau_types::EnumItem::from_value("Material", part_material(inst))
            .and_then(|m| procmodel_luau_types::PhysicalProperties::for_material(m.name))
            .unwrap_or_else(|| {
                procmodel_luau_types::PhysicalProperties::for_material("Plastic")
                    .expect("Plastic is a material")
            }),
    }
}

/// A part's mass: volume times density (CustomPhysicalProperties' when set, else the
/// material's).
pub(crate) fn mass(inst: &rbx_dom_weak::Instance) -> f64 {
    let density = physical_properties(inst).0.density();
    f64::from(procmodel_dom::spatial::body(inst).volume() * density)
}

/// The mass-weighted centre of `parts` in world space (their body centres; the first part's
/// centre when none has mass).
pub(crate) fn center_of_mass(c: &Ctx, parts: &[Ref]) -> glam::Vec3 {
    let (mut total, mut sum) = (0.0f64, glam::DVec3::ZERO);
    let mut first = None;
    for &r in parts {
        let Some(i) = c.dom.get_by_ref(r) else {
            continue;
        };
        let centre = procmodel_dom::part_cframe(i).translation.as_dvec3();
        first.get_or_insert(centre);
        let m = mass(i);
        total += m;
        sum += centre * m;
    }
    match first {
        Some(_) if total > 0.0 => (sum / total).as_vec3(),
        Some(centre) => centre.as_vec3(),
        None => glam::Vec3::ZERO,
    }
}

fn flag(inst: &rbx_dom_weak::Instance, name: &str) -> bool {
    matches!(inst.properties.get(&ustr(name)), Some(Variant::Bool(true)))
}

pub(crate) fn anchored(inst: &rbx_dom_weak::Instance) -> bool {
    flag(inst, "Anchored")
}

/// `part`'s assembly (itself and every part rigidly connected to it), in pre-order of the
/// tree they are in.
pub(crate) fn assembly(c: &Ctx, part: Ref, method: &str) -> mlua::Result<Vec<Ref>> {
    let mut parts = connected(c, part, true, method)?;
    if parts.len() > 1 {
        let top = tree_top(c, part);
        let members: FxHashSet<Ref> = parts.iter().copied().collect();
        parts.clear();
        procmodel_dom::preorder(&c.dom, &[top], |r, _| {
            if members.contains(&r) {
                parts.push(r);
            }
            true
        });
    }
    Ok(parts)
}

/// The root part of the assembly `parts` (in pre-order), by the rules above.
pub(crate) fn root_part(c: &Ctx, parts: &[Ref]) -> Option<Ref> {
    let score = |r: Ref| {
        let inst = c.dom.get_by_ref(r)?;
        let size = procmodel_dom::part_size(inst).abs();
        let mut area = (size.x * size.y).max(size.y * size.z).max(size.x * size.z);
        if is_a(&inst.class, "Seat") || is_a(&inst.class, "VehicleSeat") {
            area *= 20.0;
        } else if inst.name == "HumanoidRootPart" {
            area *= 10.0;
        }
        let priority = match inst.properties.get(&ustr("RootPriority")) {
            Some(Variant::Int32(p)) => *p,
            _ => 0,
        };
        Some((anchored(inst), !flag(inst, "Massless"), priority, area))
    };
    let mut best: Option<(Ref, (bool, bool, i32, f32))> = None;
    for &r in parts {
        let Some(s) = score(r) else { continue };
        // Strictly better only: the earlier part keeps a tie.
        let better = best.is_none_or(|(_, b)| {
            (s.0, s.1, s.2)
                .cmp(&(b.0, b.1, b.2))
                .then(s.3.total_cmp(&b.3))
                .is_gt()
        });
        if better {
            best = Some((r, s));
        }
    }
    best.map(|(r, _)| r)
}
