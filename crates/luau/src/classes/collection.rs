//! `CollectionService:CreateCollection` and the reference's Collection datatype: a live set
//! of the instances under a root that match a selector (the grammar of
//! `Instance:QueryDescendants`), with callbacks. Written in Luau (`collection.luau`) over
//! the public API: the selector is run again at the start of every frame, so a change is
//! seen at the next frame (Roblox sees it as it happens and queues the callbacks). Must
//! never keep state outside the collection's own closures (it ends with the run that made
//! it, as that run's connections do).

use crate::context::ctx;
use crate::methods::MethodTable;
use mlua::{Lua, Value};

/// Registry name of the Luau collection factory.
const FACTORY: &str = "procmodel.collection_factory";

const COLLECTION_LUAU: &str = include_str!("collection.luau");

/// Whether `name` is an event of some class the reference lists.
fn is_event(name: &str) -> bool {
    crate::api::any_event(name)
}

/// Whether `name` is a scriptable property of some class of the reflection database.
fn is_property(name: &str) -> bool {
    procmodel_dom::db().classes.values().any(|c| {
        c.properties
            .get(name)
            .is_some_and(|p| !p.tags.contains(&rbx_reflection::PropertyTag::NotScriptable))
    })
}

fn factory(lua: &Lua) -> mlua::Result<mlua::Function> {
    crate::methods::luau_function(lua, FACTORY, "=[Collection]", COLLECTION_LUAU, || {
        Ok((
            lua.globals().get::<mlua::Table>("task")?,
            lua.create_function(|_, name: String| Ok(is_event(&name)))?,
            lua.create_function(|_, name: String| Ok(is_property(&name)))?,
        ))
    })
}

pub fn register(m: &mut MethodTable) {
    m.class("CollectionService");
    m.add_method(
        "CreateCollection",
        |lua, _this, (query, root): (Value, Value)| {
            let Value::String(query) = query else {
                return Err(mlua::Error::runtime(format!(
                    "CollectionService:CreateCollection: argument 1 must be a selector string, got {}",
                    procmodel_luau_types::type_name(&query)
                )));
            };
            let (root, run_service) = {
                let mut c = ctx(lua)?;
                let root = match &root {
                    Value::Nil => {
                        let ws = crate::services::get_service(&mut c, "Workspace")?;
                        c.push(ws)?
                    }
                    v => match crate::instance::opt_instance(&c, v) {
                        Ok(Some(i)) => c.push(i.r)?,
                        _ => {
                            return Err(mlua::Error::runtime(format!(
                                "CollectionService:CreateCollection: argument 2 must be an Instance (the root), got {}",
                                procmodel_luau_types::type_name(v)
                            )));
                        }
                    },
                };
                let rs = crate::services::get_service(&mut c, "RunService")?;
                (root, c.push(rs)?)
            };
            factory(lua)?.call::<Value>((query, root, run_service))
        },
    );
}
