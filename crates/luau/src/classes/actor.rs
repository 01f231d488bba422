//! Methods of Actor: its messages (`BindToMessage`, `BindToMessageParallel`, `SendMessage`).
//! Messages are delivered as deferred events, by copy; parallel callbacks run serially here,
//! as every thread of a VM does (`task.desynchronize` is a no-op).

use crate::context::Instance;
use crate::methods::MethodTable;
use mlua::{Lua, MultiValue, Table, Value};
use rustc_hash::FxHashMap;

/// Deepest table nesting a message may carry (a cycle is copied as a cycle, not followed).
const MAX_MESSAGE_DEPTH: usize = 512;

fn topic(v: Value, method: &str) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_string_lossy()),
        other => Err(mlua::Error::runtime(format!(
            "Actor:{method}: topic must be a string, got {}",
            procmodel_luau_types::type_name(&other)
        ))),
    }
}

fn bind(lua: &Lua, this: &Instance, (t, f): (Value, Value), method: &str) -> mlua::Result<Value> {
    let topic = topic(t, method)?;
    if !matches!(f, Value::Function(_)) {
        return Err(mlua::Error::runtime(format!(
            "Actor:{method}: argument 2 must be a function, got {}",
            procmodel_luau_types::type_name(&f)
        )));
    }
    let conn = crate::signals::bind_message(lua, this.r, &topic, f)?;
    lua.create_userdata(conn).map(Value::UserData)
}

/// A message argument as the receiver gets it: tables copied (their metatables left
/// behind, shared and cyclic parts kept shared), every other value as it is; functions and
/// threads cannot cross, as they cannot between Roblox's VMs.
fn copy(
    lua: &Lua,
    v: Value,
    copies: &mut FxHashMap<usize, Table>,
    depth: usize,
    arg: usize,
) -> mlua::Result<Value> {
    match v {
        Value::Function(_) | Value::Thread(_) => Err(mlua::Error::runtime(format!(
            "Actor:SendMessage: argument {arg} holds a {}, which cannot be sent in a message (messages are copied between VMs)",
            procmodel_luau_types::type_name(&v)
        ))),
        Value::Table(t) => {
            let key = t.to_pointer() as usize;
            if let Some(done) = copies.get(&key) {
                return Ok(Value::Table(done.clone()));
            }
            if depth >= MAX_MESSAGE_DEPTH {
                return Err(mlua::Error::runtime(format!(
                    "Actor:SendMessage: argument {arg} nests tables deeper than {MAX_MESSAGE_DEPTH} levels"
                )));
            }
            let out = lua.create_table()?;
            copies.insert(key, out.clone());
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                let k = copy(lua, k, copies, depth + 1, arg)?;
                let v = copy(lua, v, copies, depth + 1, arg)?;
                out.raw_set(k, v)?;
            }
            Ok(Value::Table(out))
        }
        other => Ok(other),
    }
}

pub fn register(m: &mut MethodTable) {
    m.class("Actor");
    m.add_method("BindToMessage", |lua, this, args: (Value, Value)| {
        bind(lua, this, args, "BindToMessage")
    });
    m.add_method(
        "BindToMessageParallel",
        |lua, this, args: (Value, Value)| bind(lua, this, args, "BindToMessageParallel"),
    );
    m.add_method(
        "SendMessage",
        |lua, this, (t, message): (Value, MultiValue)| {
            let topic = topic(t, "SendMessage")?;
            let mut copies = FxHashMap::default();
            let mut args = MultiValue::with_capacity(message.len());
            for (i, v) in message.into_iter().enumerate() {
                args.push_back(copy(lua, v, &mut copies, 0, i + 2)?);
            }
            // Sent asynchronously (the reference): handlers run at the next resumption point.
            let ready = crate::signals::message_handlers(lua, this.r, &topic, &args)?;
            crate::task::queue_ready(lua, ready)
        },
    );
}
