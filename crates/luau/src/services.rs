//! Roblox services for plain scripts: `game:GetService` (reusing a loaded place's services,
//! creating missing ones), RunService, HttpService (deterministic GUIDs, JSON),
//! CollectionService, Players (empty) and ChangeHistoryService (requests the engine drains).
//! Generators keep their restricted view: while a generator may not write outside its
//! container, GetService only finds services the scene already has.

use crate::context::{Ctx, ctx};
use crate::host::Host;
use crate::instance::{Instance, not_member, opt_instance};
use crate::methods::MethodTable;
use mlua::{Lua, MultiValue, Value};
use rbx_dom_weak::InstanceBuilder;
use rbx_reflection::ClassTag;
use rbx_types::{Ref, Variant};

/// What a script asked ChangeHistoryService to do, in call order (see
/// [`Host::take_history_requests`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryRequest {
    /// `SetWaypoint(name)`, or a committed recording.
    Waypoint(String),
    Undo,
    Redo,
}

/// Per-VM service state (app data).
struct ServiceState {
    /// GenerateGUID's PCG32 stream (state, increment).
    guid: (u64, u64),
    history: Vec<HistoryRequest>,
    /// Open `TryBeginRecording` ids and their names.
    recordings: Vec<(String, String)>,
    next_recording: u64,
}

/// The GUID stream's seed: fixed, so a script's GUIDs are the same on every run.
const GUID_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for ServiceState {
    fn default() -> Self {
        let mut s = ServiceState {
            guid: (0, (GUID_SEED << 1) | 1),
            history: Vec::new(),
            recordings: Vec::new(),
            next_recording: 0,
        };
        s.next_u32();
        s.guid.0 = s.guid.0.wrapping_add(GUID_SEED);
        s.next_u32();
        s
    }
}

impl ServiceState {
    /// PCG32 (XSH RR).
    fn next_u32(&mut self) -> u32 {
        let old = self.guid.0;
        self.guid.0 = old
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(self.guid.1);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }
}

fn state(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, ServiceState>> {
    if lua.app_data_ref::<ServiceState>().is_none() {
        lua.set_app_data(ServiceState::default());
    }
    lua.try_app_data_mut::<ServiceState>()
        .map_err(|_| mlua::Error::runtime("internal: service state is busy"))?
        .ok_or_else(|| mlua::Error::runtime("internal: no service state"))
}

/// Services a plain script also finds as `game.<Name>` before asking for them.
const STANDARD: &[&str] = &[
    "Workspace",
    "ReplicatedStorage",
    "ServerScriptService",
    "ServerStorage",
    "Lighting",
    "StarterPack",
    "StarterGui",
    "StarterPlayer",
    "Players",
    "RunService",
    "HttpService",
    "CollectionService",
    "ChangeHistoryService",
    "Teams",
    "SoundService",
    "TweenService",
    "Debris",
];

fn is_service(name: &str) -> bool {
    procmodel_dom::db()
        .classes
        .get(name)
        .is_some_and(|c| c.tags.contains(&ClassTag::Service))
}

fn find_service(c: &Ctx, class: &str) -> Option<Ref> {
    c.dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&r| c.dom.get_by_ref(r).is_some_and(|i| i.class == class))
}

/// `game:GetService(name)`: the DataModel's service of that class, created when missing.
pub fn get_service(c: &mut Ctx, name: &str) -> mlua::Result<Ref> {
    if !is_service(name) {
        return Err(mlua::Error::runtime(format!(
            "'{name}' is not a valid Service name"
        )));
    }
    if let Some(r) = find_service(c, name) {
        return Ok(r);
    }
    if c.outside_write_locked {
        return Err(mlua::Error::runtime(format!(
            "GetService: '{name}' is not in the scene, and a generator may not create services (it may only modify its targetContainer)"
        )));
    }
    let root = c.dom.root_ref();
    Ok(c.dom
        .insert(root, InstanceBuilder::new(name).with_name(name)))
}

/// `game.<Name>` for a standard service the scene does not hold yet (plain scripts only).
pub fn standard_child(c: &mut Ctx, this: &Instance, key: &[u8]) -> Option<Ref> {
    if this.r != c.dom.root_ref() || c.outside_write_locked {
        return None;
    }
    let name = STANDARD.iter().find(|n| n.as_bytes() == key)?;
    get_service(c, name).ok()
}

fn check(c: &Ctx, this: &Instance, class: &str, method: &str) -> mlua::Result<()> {
    if this.class == class {
        Ok(())
    } else {
        Err(not_member(c, this, method))
    }
}

fn refuse_in_generator(c: &Ctx, what: &str) -> mlua::Result<()> {
    if c.outside_write_locked {
        return Err(mlua::Error::runtime(format!(
            "{what} is not available to generators (outputs must be reproducible: use params.Seed)"
        )));
    }
    Ok(())
}

/// Tags of an instance, in order.
fn tags(c: &Ctx, r: Ref) -> Vec<String> {
    match c
        .dom
        .get_by_ref(r)
        .and_then(|i| i.properties.get(&crate::keys::KEYS.tags))
    {
        Some(Variant::Tags(t)) => t.iter().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn instance_arg(c: &Ctx, v: &Value, method: &str) -> mlua::Result<Instance> {
    opt_instance(c, v)?
        .ok_or_else(|| mlua::Error::runtime(format!("{method}: Argument 1 missing or nil")))
}

pub fn add_methods(m: &mut MethodTable) {
    m.add_method("GetService", |lua, this, name: String| {
        let mut c = ctx(lua)?;
        if this.class != "DataModel" {
            return Err(not_member(&c, this, "GetService"));
        }
        let r = get_service(&mut c, &name)?;
        c.push(r)
    });
    m.add_method("FindService", |lua, this, name: String| {
        let mut c = ctx(lua)?;
        check(&c, this, "DataModel", "FindService")?;
        match find_service(&c, &name) {
            Some(r) => c.push(r),
            None => Ok(Value::Nil),
        }
    });

    // RunService: a headless Studio session (edit mode, server side).
    for (name, answer) in [
        ("IsStudio", true),
        ("IsServer", true),
        ("IsClient", false),
        ("IsRunning", false),
        ("IsRunMode", false),
        ("IsEdit", true),
    ] {
        m.add_method(name, move |lua, this, ()| {
            check(&*ctx(lua)?, this, "RunService", name)?;
            Ok(answer)
        });
    }

    // Players: nobody joins a headless session.
    m.add_method("GetPlayers", |lua, this, ()| {
        check(&*ctx(lua)?, this, "Players", "GetPlayers")?;
        lua.create_table()
    });
    for name in ["GetPlayerFromCharacter", "GetPlayerByUserId"] {
        m.add_method(name, move |lua, this, _: MultiValue| {
            check(&*ctx(lua)?, this, "Players", name)?;
            Ok(Value::Nil)
        });
    }

    // HttpService
    m.add_method("GenerateGUID", |lua, this, wrap: Option<bool>| {
        {
            let c = ctx(lua)?;
            check(&c, this, "HttpService", "GenerateGUID")?;
            refuse_in_generator(&c, "HttpService:GenerateGUID")?;
        }
        let mut s = state(lua)?;
        let mut b = [0u8; 16];
        for chunk in b.chunks_mut(4) {
            chunk.copy_from_slice(&s.next_u32().to_be_bytes());
        }
        // A version-4 (random) UUID, upper-case as Roblox writes them.
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
        let guid = format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        );
        Ok(if wrap.unwrap_or(true) {
            format!("{{{guid}}}")
        } else {
            guid
        })
    });
    m.add_method("JSONEncode", |lua, this, v: Value| {
        check(&*ctx(lua)?, this, "HttpService", "JSONEncode")?;
        crate::json::encode(&v)
    });
    m.add_method("JSONDecode", |lua, this, text: String| {
        check(&*ctx(lua)?, this, "HttpService", "JSONDecode")?;
        crate::json::decode(lua, &text)
    });
    m.add_method("UrlEncode", |lua, this, text: String| {
        check(&*ctx(lua)?, this, "HttpService", "UrlEncode")?;
        let mut out = String::new();
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        Ok(out)
    });
    for name in ["GetAsync", "PostAsync", "RequestAsync"] {
        m.add_method(name, move |lua, this, _: MultiValue| -> mlua::Result<()> {
            check(&*ctx(lua)?, this, "HttpService", name)?;
            Err(mlua::Error::runtime(format!(
                "HttpService:{name}: HTTP requests are not available (scripts have no network access)"
            )))
        });
    }

    // CollectionService: over the instances' Tags.
    m.add_method("AddTag", |lua, this, (a, b): (Value, Option<String>)| {
        let collection = this.class == "CollectionService";
        let (target, tag) = {
            let c = ctx(lua)?;
            if collection {
                let t = instance_arg(&c, &a, "AddTag")?;
                (t, b.unwrap_or_default())
            } else {
                (*this, string_arg(&a, "AddTag")?)
            }
        };
        crate::methods::add_tag(lua, &target, tag)
    });
    m.add_method("RemoveTag", |lua, this, (a, b): (Value, Option<String>)| {
        let collection = this.class == "CollectionService";
        let (target, tag) = {
            let c = ctx(lua)?;
            if collection {
                (instance_arg(&c, &a, "RemoveTag")?, b.unwrap_or_default())
            } else {
                (*this, string_arg(&a, "RemoveTag")?)
            }
        };
        crate::methods::remove_tag(lua, &target, tag)
    });
    m.add_method("HasTag", |lua, this, (a, b): (Value, Option<String>)| {
        let c = ctx(lua)?;
        let (target, tag) = if this.class == "CollectionService" {
            (instance_arg(&c, &a, "HasTag")?, b.unwrap_or_default())
        } else {
            (*this, string_arg(&a, "HasTag")?)
        };
        Ok(tags(&c, target.r).contains(&tag))
    });
    m.add_method("GetTags", |lua, this, a: Value| {
        let c = ctx(lua)?;
        let target = if this.class == "CollectionService" {
            instance_arg(&c, &a, "GetTags")?
        } else {
            *this
        };
        lua.create_sequence_from(tags(&c, target.r))
    });
    m.add_method("GetTagged", |lua, this, tag: String| {
        let mut c = ctx(lua)?;
        check(&c, this, "CollectionService", "GetTagged")?;
        let root = c.dom.root_ref();
        let found: Vec<Ref> = c
            .dom
            .descendants_of(root)
            .filter(|i| match i.properties.get(&crate::keys::KEYS.tags) {
                Some(Variant::Tags(t)) => t.iter().any(|x| x == tag),
                _ => false,
            })
            .map(|i| i.referent())
            .collect();
        let t = lua.create_table_with_capacity(found.len(), 0)?;
        for (i, r) in found.into_iter().enumerate() {
            t.raw_set(i + 1, c.push(r)?)?;
        }
        Ok(t)
    });
    m.add_method("GetAllTags", |lua, this, ()| {
        let c = ctx(lua)?;
        check(&c, this, "CollectionService", "GetAllTags")?;
        let root = c.dom.root_ref();
        let mut all: Vec<String> = Vec::new();
        for i in c.dom.descendants_of(root) {
            if let Some(Variant::Tags(t)) = i.properties.get(&crate::keys::KEYS.tags) {
                for x in t.iter() {
                    if !all.iter().any(|a| a == x) {
                        all.push(x.to_owned());
                    }
                }
            }
        }
        lua.create_sequence_from(all)
    });
    m.add_method("GetInstanceAddedSignal", |lua, this, tag: String| {
        check(
            &*ctx(lua)?,
            this,
            "CollectionService",
            "GetInstanceAddedSignal",
        )?;
        crate::signals::tag_signal(lua, &tag, true)
    });
    m.add_method("GetInstanceRemovedSignal", |lua, this, tag: String| {
        check(
            &*ctx(lua)?,
            this,
            "CollectionService",
            "GetInstanceRemovedSignal",
        )?;
        crate::signals::tag_signal(lua, &tag, false)
    });

    // ChangeHistoryService: requests for the engine's undo history.
    m.add_method("SetWaypoint", |lua, this, name: String| {
        check(&*ctx(lua)?, this, "ChangeHistoryService", "SetWaypoint")?;
        state(lua)?.history.push(HistoryRequest::Waypoint(name));
        Ok(())
    });
    m.add_method("Undo", |lua, this, ()| {
        check(&*ctx(lua)?, this, "ChangeHistoryService", "Undo")?;
        state(lua)?.history.push(HistoryRequest::Undo);
        Ok(())
    });
    m.add_method("Redo", |lua, this, ()| {
        check(&*ctx(lua)?, this, "ChangeHistoryService", "Redo")?;
        state(lua)?.history.push(HistoryRequest::Redo);
        Ok(())
    });
    m.add_method(
        "TryBeginRecording",
        |lua, this, (name, _display): (String, Option<String>)| {
            check(
                &*ctx(lua)?,
                this,
                "ChangeHistoryService",
                "TryBeginRecording",
            )?;
            let mut s = state(lua)?;
            if !s.recordings.is_empty() {
                // As in Studio: one recording at a time.
                return Ok(None);
            }
            s.next_recording += 1;
            let id = format!("{}", s.next_recording);
            s.recordings.push((id.clone(), name));
            Ok(Some(id))
        },
    );
    m.add_method("FinishRecording", |lua, this, (id, op): (String, Value)| {
        check(&*ctx(lua)?, this, "ChangeHistoryService", "FinishRecording")?;
        let commit = match &op {
            Value::Nil => true,
            other => {
                let item = procmodel_luau_types::lua_to_variant(
                    other,
                    &rbx_reflection::DataType::Enum("FinishRecordingOperation"),
                )
                .map_err(|e| mlua::Error::runtime(format!("FinishRecording: {e}")))?;
                // Cancel = 0, Commit = 1, Append = 2.
                !matches!(item, Variant::Enum(e) if e.to_u32() == 0)
            }
        };
        let mut s = state(lua)?;
        let Some(i) = s.recordings.iter().position(|(r, _)| *r == id) else {
            return Err(mlua::Error::runtime(format!(
                "FinishRecording: no recording with identifier \"{id}\" is open"
            )));
        };
        let (_, name) = s.recordings.remove(i);
        if commit {
            s.history.push(HistoryRequest::Waypoint(name));
        }
        Ok(())
    });
}

fn string_arg(v: &Value, method: &str) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_str()?.to_owned()),
        other => Err(mlua::Error::runtime(format!(
            "{method}: string expected, got {}",
            procmodel_luau_types::type_name(other)
        ))),
    }
}

impl Host {
    /// Takes the ChangeHistoryService requests scripts made since the last call, in order
    /// (the engine drains them at each frame of a script run).
    pub fn take_history_requests(&self) -> Vec<HistoryRequest> {
        match state(&self.lua) {
            Ok(mut s) => std::mem::take(&mut s.history),
            Err(_) => Vec::new(),
        }
    }
}
