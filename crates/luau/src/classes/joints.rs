//! What joins parts: `BasePart:GetJoints`, `GetConnectedParts` and `IsGrounded`.
//!
//! Rules (Roblox reference): a *joint* of a part is a JointInstance (Weld, Motor6D, Snap, …)
//! or a WeldConstraint / NoCollisionConstraint whose Part0 or Part1 is the part, or a
//! Constraint with an Attachment0/Attachment1 parented to it. Parts are *connected* through
//! rigid joints only: JointInstances and WeldConstraints, with `Enabled` not false (hinges,
//! ropes and the other constraints move, so they do not join an assembly). Joints count
//! wherever they are in the part's tree (there is no simulation to activate them), in
//! pre-order: the scene for a part in it (a query of the scene, watched as one), the
//! container for a generator's own parts.

use super::instance::push_list;
use crate::context::{Ctx, ctx};
use crate::methods::MethodTable;
use procmodel_dom::is_a;
use rbx_dom_weak::ustr;
use rbx_types::{Ref, Variant};
use rustc_hash::FxHashSet;

fn ref_prop(inst: &rbx_dom_weak::Instance, name: &str) -> Ref {
    match inst.properties.get(&ustr(name)) {
        Some(Variant::Ref(r)) => *r,
        _ => Ref::none(),
    }
}

/// The parts a joint instance acts on (none, one or two), and whether it is rigid.
fn joined(c: &Ctx, inst: &rbx_dom_weak::Instance) -> Option<([Ref; 2], bool)> {
    let class = inst.class.as_str();
    if is_a(class, "JointInstance") || is_a(class, "WeldConstraint") {
        let enabled = !matches!(
            inst.properties.get(&ustr("Enabled")),
            Some(Variant::Bool(false))
        );
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
fn all_joints(c: &Ctx, part: Ref, method: &str) -> mlua::Result<Vec<(Ref, [Ref; 2], bool)>> {
    if c.in_scene(part) {
        c.scene_query(|| format!("BasePart:{method}"))?;
    }
    let mut top = part;
    while let Some(p) = c
        .dom
        .get_by_ref(top)
        .map(|i| i.parent())
        .filter(|p| p.is_some())
    {
        top = p;
    }
    let mut out = Vec::new();
    procmodel_dom::preorder(&c.dom, &[top], |r, inst| {
        if let Some((parts, rigid)) = joined(c, inst) {
            out.push((r, parts, rigid));
        }
        true
    });
    Ok(out)
}

/// The parts rigidly connected to `part`: its neighbours, or (`recursive`) its whole
/// assembly, itself included, in the order they are reached.
fn connected(c: &Ctx, part: Ref, recursive: bool, method: &str) -> mlua::Result<Vec<Ref>> {
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

pub fn register(m: &mut MethodTable) {
    m.class("BasePart");
    m.add_method("GetJoints", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let found: Vec<Ref> = all_joints(&c, this.r, "GetJoints")?
            .into_iter()
            .filter(|(_, parts, _)| parts.contains(&this.r))
            .map(|(j, _, _)| j)
            .collect();
        push_list(lua, &mut c, &found)
    });
    m.add_method("GetConnectedParts", |lua, this, recursive: Option<bool>| {
        let mut c = ctx(lua)?;
        let parts = connected(&c, this.r, recursive.unwrap_or(false), "GetConnectedParts")?;
        push_list(lua, &mut c, &parts)
    });
    // Whether an anchored part holds its assembly in place.
    m.add_method("IsGrounded", |lua, this, ()| {
        let c = ctx(lua)?;
        Ok(connected(&c, this.r, true, "IsGrounded")?.iter().any(|&r| {
            c.dom.get_by_ref(r).is_some_and(|i| {
                matches!(
                    i.properties.get(&ustr("Anchored")),
                    Some(Variant::Bool(true))
                )
            })
        }))
    });
}
