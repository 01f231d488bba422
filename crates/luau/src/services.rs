//! Roblox services for plain scripts: `game:GetService` (reusing a loaded place's services,
//! creating missing ones), RunService, HttpService (deterministic GUIDs, JSON),
//! CollectionService, Players (empty) and ChangeHistoryService (requests the engine drains);
//! `game.<Service>` and `workspace.Terrain` made on first read. Generators keep their
//! restricted view: while a generator may not write outside its container, GetService only
//! finds services the scene already has. The services' methods are in `classes`.

use crate::context::{Ctx, Instance};
use mlua::Lua;
use rbx_dom_weak::InstanceBuilder;
use rbx_types::Ref;

pub use procmodel_script::HistoryRequest;

/// Per-VM service state (app data).
pub(crate) struct ServiceState {
    /// GenerateGUID's PCG32 stream (state, increment).
    pub(crate) guid: (u64, u64),
    pub(crate) history: Vec<HistoryRequest>,
    /// Open `TryBeginRecording` ids and their names.
    pub(crate) recordings: Vec<(String, String)>,
    pub(crate) next_recording: u64,
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
    pub(crate) fn next_u32(&mut self) -> u32 {
        let old = self.guid.0;
        self.guid.0 = old
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(self.guid.1);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }
}

pub(crate) fn state(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, ServiceState>> {
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

/// Services whose methods only compute (meshes, tween curves, the run context) and that
/// save nothing: when the scene lacks one, `GetService` makes it unarchivable, even for a
/// generator that may not write outside its container (see [`get_service`]).
const STATELESS: &[&str] = &[
    "AssetService",
    "GeometryService",
    "RunService",
    "TweenService",
];

/// Roblox's refusal to destroy or reparent the DataModel or a service in it: their Parent
/// is locked (`workspace:Destroy()` fails with "The Parent property of Workspace is locked").
pub(crate) fn locked_parent(c: &Ctx, r: Ref) -> Option<mlua::Error> {
    let inst = c.dom.get_by_ref(r)?;
    let root = c.dom.root_ref();
    let locked =
        r == root || (inst.parent() == root && procmodel_dom::is_service(inst.class.as_str()));
    locked.then(|| mlua::Error::runtime(format!("The Parent property of {} is locked", inst.name)))
}

/// Whether `inst` carries the CollectionService tag `tag`.
pub(crate) fn has_tag(inst: &rbx_dom_weak::Instance, tag: &str) -> bool {
    match inst.properties.get(&crate::keys::KEYS.tags) {
        Some(rbx_types::Variant::Tags(t)) => t.iter().any(|x| x == tag),
        _ => false,
    }
}

pub(crate) fn find_service(c: &Ctx, class: &str) -> Option<Ref> {
    c.dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&r| c.dom.get_by_ref(r).is_some_and(|i| i.class == class))
}

/// `game:GetService(name)`: the DataModel's service of that class, created when missing.
pub fn get_service(c: &mut Ctx, name: &str) -> mlua::Result<Ref> {
    if !procmodel_dom::is_service(name) {
        return Err(mlua::Error::runtime(format!(
            "'{name}' is not a valid Service name"
        )));
    }
    if let Some(r) = find_service(c, name) {
        return Ok(r);
    }
    let root = c.dom.root_ref();
    // A service that holds nothing a script could change (STATELESS), or any one a
    // generator's run asks for: made for this session, not archivable, so no file, content
    // hash or lockfile sees it, and not a write outside a generator's container. Every
    // service exists in Roblox, so the one the scene lacks is no change a run makes (not
    // refused to a sandbox, no reason to defer the run or to leave it out of a result
    // cache); the run's ones are kept in files once something is put in or set on them.
    let stateless = STATELESS.contains(&name);
    if stateless || c.run_container.get().is_some() {
        let r = c.dom.insert(
            root,
            InstanceBuilder::new(name)
                .with_name(name)
                .with_property("Archivable", false),
        );
        if !stateless {
            c.session_services.push(r);
        }
        service_added(c, root, r);
        return Ok(r);
    }
    c.outside_write(|| format!("GetService('{name}')"))?;
    let mut builder = InstanceBuilder::new(name).with_name(name);
    // A model file (a package) has no services of its own: its scene's Workspace is made
    // for the session, not archivable, and so is any service asked for there (saving the
    // model must not add a service to it).
    let session = find_service(c, "Workspace")
        .and_then(|w| c.dom.get_by_ref(w))
        .is_some_and(|w| !procmodel_dom::is_archivable(w));
    if session {
        builder = builder.with_property("Archivable", false);
    }
    let r = c.dom.insert(root, builder);
    service_added(c, root, r);
    Ok(r)
}

/// `game.ServiceAdded(service)` for a service made on first use, as Roblox fires it when
/// `GetService` creates one.
fn service_added(c: &mut Ctx, root: Ref, service: Ref) {
    c.signals.named(
        root,
        "ServiceAdded",
        crate::signal_state::NamedArgs::Instance(service),
    );
}

/// The folders a StarterPlayer always holds in Roblox (each's class is its name).
const STARTER_PLAYER_FOLDERS: [&str; 2] = ["StarterPlayerScripts", "StarterCharacterScripts"];

/// `game.<Name>` for a standard service the scene does not hold yet ([`get_service`]), and
/// `StarterPlayer.StarterPlayerScripts`/`StarterCharacterScripts`, made on first use as the
/// Workspace's Terrain is (plain scripts only).
pub fn standard_child(c: &mut Ctx, this: &Instance, key: &[u8]) -> Option<Ref> {
    if this.class == "StarterPlayer" {
        let folder = STARTER_PLAYER_FOLDERS
            .iter()
            .find(|n| n.as_bytes() == key)?;
        return child_or_new(c, this.r, folder, &format!("StarterPlayer.{folder}"));
    }
    if this.r != c.dom.root_ref() {
        return None;
    }
    let name = STANDARD.iter().find(|n| n.as_bytes() == key)?;
    get_service(c, name).ok()
}

/// The first child of `parent` of class `class`, else a new one named after its class when
/// the run may write outside its container (`what` names the access; a generator may not).
fn child_or_new(c: &mut Ctx, parent: Ref, class: &str, what: &str) -> Option<Ref> {
    let found = c
        .dom
        .get_by_ref(parent)?
        .children()
        .iter()
        .copied()
        .find(|&ch| c.dom.get_by_ref(ch).is_some_and(|i| i.class == class));
    if found.is_some() {
        return found;
    }
    if c.outside_write_locked || c.outside_write(|| what.into()).is_err() {
        return None;
    }
    let r = c.dom.insert(
        parent,
        rbx_dom_weak::InstanceBuilder::new(class).with_name(class),
    );
    // A new Terrain is part of the world queries see.
    c.outside_change();
    Some(r)
}

/// `Workspace.CurrentCamera` when unset: the Workspace's Camera child, made on first use as
/// Studio always has one, and recorded as the current camera (plain scripts only).
pub(crate) fn workspace_camera(c: &mut Ctx, this: &Instance, key: &[u8]) -> Option<Ref> {
    if key != b"CurrentCamera" || this.class != "Workspace" {
        return None;
    }
    let camera = child_or_new(c, this.r, "Camera", "workspace.CurrentCamera")?;
    if !c.outside_write_locked && c.outside_write(|| "workspace.CurrentCamera".into()).is_ok() {
        let key = rbx_dom_weak::ustr("CurrentCamera");
        if let Some(ws) = c.dom.get_by_ref_mut(this.r) {
            ws.properties.insert(key, rbx_types::Variant::Ref(camera));
        }
    }
    Some(camera)
}

/// The children every Roblox place has, found by name or class (`FindFirstChild`,
/// `WaitForChild`, `FindFirstChildOfClass`, `FindFirstChildWhichIsA`) when the scene has
/// none yet: the DataModel's standard services, StarterPlayer's two script folders, and the
/// Workspace's Terrain and Camera, made
/// on first use as `game.Lighting`, `workspace.Terrain` and `workspace.CurrentCamera` make
/// them (plain scripts only).
pub(crate) fn always_there(c: &mut Ctx, this: &Instance, name: &str) -> Option<Ref> {
    match name {
        "Terrain" => workspace_terrain(c, this, b"Terrain"),
        "Camera" => workspace_camera(c, this, b"CurrentCamera"),
        _ => standard_child(c, this, name.as_bytes()),
    }
}

/// `workspace.Terrain`: the Workspace's Terrain child; one is made on first use, as Roblox's
/// Workspace always has one (plain scripts only: a generator cannot add to the scene).
pub(crate) fn workspace_terrain(c: &mut Ctx, this: &Instance, key: &[u8]) -> Option<Ref> {
    if key != b"Terrain" || this.class != "Workspace" {
        return None;
    }
    child_or_new(c, this.r, "Terrain", "workspace.Terrain")
}
