//! The class the engine manages, as scripts see it: installing a
//! [`procmodel_script::ManagedClass`] (the engine's ProceduralModel rules) makes its force
//! and wait methods. The write paths (`instance`, `classes::instance`, `globals`) set its
//! flag from `Ctx::managed`; this crate knows no class by name.

use crate::context::{MANAGED_FORCE, MANAGED_WAIT, Managed, ctx};
use crate::instance::opt_instance;
use mlua::{Function, Lua, Value};
use procmodel_script::ManagedClass;
use rbx_types::Variant;

/// Records `class` in the context and makes its methods (registry functions the member
/// lookup hands out for instances of the class).
pub(crate) fn install(lua: &Lua, class: &ManagedClass) -> mlua::Result<()> {
    {
        let mut c = ctx(lua)?;
        c.managed = Some(Managed::new(class));
        c.may_have_managed = c.has_managed(&c.dom, c.dom.root_ref());
    }
    let force_name = class.force_method;
    // `model:Force…()`: sets the flag and queues the instance; false when not in the scene.
    let force = lua.create_function(move |lua, this: Value| {
        let mut c = ctx(lua)?;
        let Some(i) = c.instance(&this) else {
            return Err(mlua::Error::runtime(format!(
                "Expected ':' not '.' calling member function {force_name}"
            )));
        };
        // Called on an instance of another class (through a stored reference to the method):
        // the error a method of one class gives on another, as before the seam.
        let Some(flag) = c.managed_flag(i.class) else {
            return Err(crate::methods::not_member(&c, &i, force_name));
        };
        if !c.in_scene(i.r) {
            return Ok(false);
        }
        crate::instance::inst_mut(&mut c, &i)?
            .properties
            .insert(flag, Variant::Bool(true));
        c.forced.push(i.r);
        Ok(true)
    })?;
    lua.set_named_registry_value(MANAGED_FORCE, force)?;

    // `model:Wait…()`: yields (task.wait) while the flag is up.
    let state = lua.create_function(|lua, model: Value| {
        let Some(m) = opt_instance(&*ctx(lua)?, &model)? else {
            return Ok("missing");
        };
        let c = ctx(lua)?;
        if !c.in_scene(m.r) {
            return Ok("missing");
        }
        let flag = c.managed_flag(m.class);
        let up = c
            .dom
            .get_by_ref(m.r)
            .zip(flag)
            .and_then(|(i, flag)| i.properties.get(&flag))
            .is_some_and(|v| matches!(v, Variant::Bool(true)));
        Ok(if up { "pending" } else { "done" })
    })?;
    let wait: Function = lua
        .load(
            r#"local state, name = ...
            return function(self)
                local s = state(self)
                if s == "missing" then
                    error(name .. ": " .. self:GetFullName() .. " is not in the scene", 2)
                end
                while s == "pending" do
                    task.wait()
                    s = state(self)
                    if s == "missing" then
                        return false
                    end
                end
                return true
            end"#,
        )
        .set_name(format!("=[{}]", class.wait_method))
        .call((state, class.wait_method))?;
    lua.set_named_registry_value(MANAGED_WAIT, wait)
}
