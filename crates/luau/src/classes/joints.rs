//! `BasePart:GetJoints`, `GetConnectedParts`, `IsGrounded`, `GetRootPart` and
//! `GetNoCollisionConstraints`, and `Attachment:GetConstraints`, over the assembly rules of
//! `assembly.rs` (joints count wherever they are in the part's tree, in pre-order).

use super::instance::push_list;
use crate::assembly::{all_joints, assembly, connected, enabled, ref_prop, root_part, tree_top};
use crate::context::ctx;
use crate::methods::MethodTable;
use rbx_types::Ref;

pub fn register(m: &mut MethodTable) {
    m.class("Attachment");
    // The Constraints whose Attachment0 or Attachment1 is this attachment.
    m.add_method("GetConstraints", |lua, this, ()| {
        let mut c = ctx(lua)?;
        if c.in_scene(this.r) {
            c.scene_query(|| "Attachment:GetConstraints".to_string())?;
        }
        let mut found = Vec::new();
        procmodel_dom::preorder(&c.dom, &[tree_top(&c, this.r)], |r, inst| {
            if procmodel_dom::is_a(&inst.class, "Constraint")
                && (ref_prop(inst, "Attachment0") == this.r
                    || ref_prop(inst, "Attachment1") == this.r)
            {
                found.push(r);
            }
            true
        });
        push_list(lua, &mut c, &found)
    });
    m.class("BasePart");
    // The enabled NoCollisionConstraints naming this part as Part0 or Part1.
    m.add_method("GetNoCollisionConstraints", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let found: Vec<Ref> = all_joints(&c, this.r, "GetNoCollisionConstraints")?
            .into_iter()
            .filter(|(j, parts, _)| {
                parts.contains(&this.r)
                    && c.dom.get_by_ref(*j).is_some_and(|i| {
                        procmodel_dom::is_a(&i.class, "NoCollisionConstraint") && enabled(i)
                    })
            })
            .map(|(j, _, _)| j)
            .collect();
        push_list(lua, &mut c, &found)
    });
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
    // The part the assembly is built around (see `assembly.rs`).
    m.add_method("GetRootPart", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let parts = assembly(&c, this.r, "GetRootPart")?;
        match root_part(&c, &parts) {
            Some(r) => c.push(r),
            None => Ok(mlua::Value::Nil),
        }
    });
    // The deprecated BreakJoints: destroys the JointInstances (Weld, Snap, Motor6D, ...)
    // joining this part; a Model's breaks those of every part in it.
    for name in ["BreakJoints", "breakJoints"] {
        m.add_method(name, |lua, this, ()| break_joints(lua, &[this.r]));
    }
    // Whether an anchored part holds its assembly in place.
    m.add_method("IsGrounded", |lua, this, ()| {
        let c = ctx(lua)?;
        Ok(connected(&c, this.r, true, "IsGrounded")?
            .iter()
            .any(|&r| c.dom.get_by_ref(r).is_some_and(crate::assembly::anchored)))
    });
    m.class("Model");
    for name in ["BreakJoints", "breakJoints"] {
        m.add_method(name, |lua, this, ()| {
            let parts = {
                let c = ctx(lua)?;
                let mut parts = Vec::new();
                procmodel_dom::preorder(&c.dom, &[this.r], |r, i| {
                    if procmodel_dom::is_a(&i.class, "BasePart") {
                        parts.push(r);
                    }
                    true
                });
                parts
            };
            break_joints(lua, &parts)
        });
    }
}

/// Destroys the JointInstances that join any of `parts` (WeldConstraints and the other
/// constraints are not surface joints and stay).
fn break_joints(lua: &mlua::Lua, parts: &[Ref]) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    let Some(&first) = parts.first() else {
        return Ok(());
    };
    // The parts share one tree (a part, or a model's parts): its joints are found once.
    let parts: rustc_hash::FxHashSet<Ref> = parts.iter().copied().collect();
    let doomed: Vec<Ref> = all_joints(&c, first, "BreakJoints")?
        .into_iter()
        .filter(|(joint, ends, _)| {
            ends.iter().any(|e| parts.contains(e))
                && c.dom
                    .get_by_ref(*joint)
                    .is_some_and(|j| procmodel_dom::is_a(&j.class, "JointInstance"))
        })
        .map(|(joint, _, _)| joint)
        .collect();
    for joint in doomed {
        super::instance::destroy_as(&mut c, joint, "BreakJoints")?;
    }
    Ok(())
}
