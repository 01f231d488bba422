//! `BasePart:GetJoints`, `GetConnectedParts`, `IsGrounded` and `GetRootPart`, over the
//! assembly rules of `assembly.rs`.

use super::instance::push_list;
use crate::assembly::{all_joints, assembly, connected, root_part};
use crate::context::ctx;
use crate::methods::MethodTable;
use rbx_types::Ref;

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
    // The part the assembly is built around (see `assembly.rs`).
    m.add_method("GetRootPart", |lua, this, ()| {
        let mut c = ctx(lua)?;
        let parts = assembly(&c, this.r, "GetRootPart")?;
        match root_part(&c, &parts) {
            Some(r) => c.push(r),
            None => Ok(mlua::Value::Nil),
        }
    });
    // Whether an anchored part holds its assembly in place.
    m.add_method("IsGrounded", |lua, this, ()| {
        let c = ctx(lua)?;
        Ok(connected(&c, this.r, true, "IsGrounded")?
            .iter()
            .any(|&r| c.dom.get_by_ref(r).is_some_and(crate::assembly::anchored)))
    });
}
