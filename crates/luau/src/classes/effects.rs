//! Methods of visual effects that act only on what a client draws: `ParticleEmitter:Emit`
//! and `Clear`, `Trail:Clear`, `Beam:SetTextureOffset`. A headless session draws nothing
//! and no file keeps particles or a texture's scroll, so they check their arguments and
//! change nothing, as on a Roblox server (which draws nothing either).

use crate::methods::MethodTable;
use mlua::Value;

/// An optional number argument of `method`.
fn opt_number(method: &str, what: &str, v: &Value) -> mlua::Result<()> {
    match v {
        Value::Nil | Value::Number(_) | Value::Integer(_) => Ok(()),
        other => Err(mlua::Error::runtime(format!(
            "{method}: {what} must be a number, got {}",
            procmodel_luau_types::type_name(other)
        ))),
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("ParticleEmitter");
    m.add_method("Emit", |_, _, count: Value| {
        opt_number("ParticleEmitter:Emit", "the particle count", &count)
    });
    m.add_method("Clear", |_, _, ()| Ok(()));
    m.class("Trail");
    m.add_method("Clear", |_, _, ()| Ok(()));
    m.class("Beam");
    m.add_method("SetTextureOffset", |_, _, offset: Value| {
        opt_number("Beam:SetTextureOffset", "the offset", &offset)
    });
}
