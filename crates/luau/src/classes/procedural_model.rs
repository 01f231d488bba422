//! Methods of ProceduralModel: `ForceGeneration` (the engine regenerates the model at its next
//! step). `WaitForGenerationAsync` yields, so it is a Luau function (installed by `globals`).

use crate::context::ctx;
use crate::instance::inst_mut;
use crate::methods::MethodTable;
use rbx_types::Variant;

pub fn register(m: &mut MethodTable) {
    m.class("ProceduralModel");
    m.add_method("ForceGeneration", |lua, this, ()| {
        let mut c = ctx(lua)?;
        if !c.in_scene(this.r) {
            return Ok(false);
        }
        inst_mut(&mut c, this)?
            .properties
            .insert(crate::keys::KEYS.dirty, Variant::Bool(true));
        c.forced.push(this.r);
        Ok(true)
    });
}
