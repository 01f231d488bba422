//! Methods of BindableEvent (`Fire`: its `Event` handlers run at the next resumption point,
//! or before `Fire` returns where events are immediate)
//! and BindableFunction (`Invoke`: calls `OnInvoke`, set as a property).

use crate::context::{Instance, ctx};
use crate::methods::MethodTable;
use mlua::{Lua, MultiValue};

/// `BindableEvent:Fire(...)`: the handlers get the arguments at the next resumption point
/// (at once where events are immediate).
fn fire(lua: &Lua, this: &Instance, args: MultiValue) -> mlua::Result<()> {
    let ready = crate::signals::event_handlers(lua, this, &args)?;
    crate::task::fire_handlers(lua, ready)
}

/// `BindableFunction:Invoke(...)`: calls OnInvoke and returns what it returns.
fn invoke(lua: &Lua, this: &Instance, args: MultiValue) -> mlua::Result<MultiValue> {
    let f = ctx(lua)?
        .signals
        .callbacks
        .get(&(this.r, "OnInvoke"))
        .cloned();
    match f {
        Some(f) => f.call(args),
        None => Err(mlua::Error::runtime(
            "BindableFunction:Invoke: OnInvoke is not set (the call would yield forever)",
        )),
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("BindableEvent");
    m.add_method("Fire", fire);
    m.class("BindableFunction");
    m.add_method("Invoke", invoke);
}
