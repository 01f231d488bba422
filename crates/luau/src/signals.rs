//! `RBXScriptSignal` / `RBXScriptConnection`: instance events (Changed, property and attribute
//! signals, ChildAdded/Removed, DescendantAdded/Removing, AncestryChanged, Destroying),
//! BindableEvent's Event, RunService's frame signals, CollectionService's tag signals, and
//! the events of the outside world (input, physics, players, media: every one Roblox's API
//! lists, `api`), which exist but never fire headless; `Signal:Wait()` and
//! `Instance:WaitForChild`.
//!
//! Handlers run as in Roblox's deferred signal mode: a change only *records* an event (when
//! someone listens: one flag check on the write paths otherwise); at the next resumption
//! point the scheduler ([`flush`]) turns recorded events into new threads of the group that
//! connected, queued with `task.defer`'s machinery. A run's connections are cut when it ends.
//! The state lives in the run context (`signal_state`); the scheduler's current run comes
//! from `sched`, so this module sits below the `task` driver that calls it.

use crate::context::{Ctx, Instance, ctx};
use crate::signal_state::{Callback, ChangedArg, Kind, NamedArgs};
use mlua::{Function, Lua, MetaMethod, MultiValue, Thread, UserData, Value};
use rbx_dom_weak::Ustr;
use rbx_types::{Ref, Variant};

// ----- recording (called on the write paths only when `watch.any`) -----------------------

/// A property of `r` was written (`name`: the member name Roblox reports).
pub fn prop_changed(c: &mut Ctx, r: Ref, name: &str) {
    if !c.signals.watch.listens(r, WRITE_KINDS) {
        return;
    }
    if c.signals.watch.listens(r, Kind::Named.bit()) {
        lighting_changed(c, r, name);
    }
    if !c.signals.watch.listens(r, PROPERTY_KINDS) {
        return;
    }
    let changed = match c.dom.get_by_ref(r) {
        Some(i) if procmodel_dom::is_a(&i.class, "ValueBase") => {
            if name == "Value" {
                let v = i.properties.get(&Ustr::from("Value")).cloned();
                v.map_or(ChangedArg::Name, |v| ChangedArg::Value(Box::new(v)))
            } else {
                ChangedArg::Skip
            }
        }
        _ => ChangedArg::Name,
    };
    let s = &mut c.signals;
    s.record(
        r,
        Kind::Changed,
        Some(Ustr::from(name)),
        Ref::none(),
        Ref::none(),
    );
    if let Some(ev) = s.events.last_mut() {
        ev.changed = changed;
    }
}

/// `Lighting.LightingChanged(false)` for a change of one of Lighting's properties but those
/// the reference leaves out (GlobalShadows and the fog's).
fn lighting_changed(c: &mut Ctx, r: Ref, name: &str) {
    let lighting = c.dom.get_by_ref(r).is_some_and(|i| i.class == "Lighting");
    if lighting && !matches!(name, "GlobalShadows" | "FogColor" | "FogStart" | "FogEnd") {
        c.signals
            .named(r, "LightingChanged", NamedArgs::Flag(false));
    }
}

/// `Lighting.LightingChanged(true)` when a Sky enters or leaves Lighting (`old` and `new`:
/// its parents before and after).
fn sky_moved(c: &mut Ctx, r: Ref, old: Ref, new: Ref) {
    if c.dom.get_by_ref(r).is_none_or(|i| i.class != "Sky") {
        return;
    }
    for parent in [old, new] {
        let lighting = c
            .dom
            .get_by_ref(parent)
            .is_some_and(|i| i.class == "Lighting");
        if lighting {
            c.signals
                .named(parent, "LightingChanged", NamedArgs::Flag(true));
        }
    }
}

/// The kinds a property change fires (`Changed`, `GetPropertyChangedSignal`).
pub const PROPERTY_KINDS: u32 = Kind::Changed.bit() | Kind::PropertyChanged.bit();

/// The kinds a property write may fire: the change signals and an instance's own events
/// (`Lighting.LightingChanged`).
pub const WRITE_KINDS: u32 = PROPERTY_KINDS | Kind::Named.bit();

/// The kinds an attribute change fires (`AttributeChanged`, `GetAttributeChangedSignal`).
pub const ATTRIBUTE_KINDS: u32 = Kind::AttributeChanged.bit() | Kind::AttributeChangedNamed.bit();

/// An attribute of `r` was set or removed.
pub fn attribute_changed(c: &mut Ctx, r: Ref, name: &str) {
    let s = &mut c.signals;
    if s.watch.listens(r, ATTRIBUTE_KINDS) {
        s.record(
            r,
            Kind::AttributeChanged,
            Some(Ustr::from(name)),
            Ref::none(),
            Ref::none(),
        );
    }
}

/// A tag was added to or removed from `r`.
pub fn tag_changed(c: &mut Ctx, r: Ref, tag: &str, added: bool) {
    let kind = if added {
        Kind::TagAdded
    } else {
        Kind::TagRemoved
    };
    // GetInstanceAddedSignal / GetInstanceRemovedSignal: a tag assigned to or removed from
    // an instance within the DataModel (out of it, parenting in or out fires them).
    if c.signals.watch.listens(Ref::none(), kind.bit()) && c.in_scene(r) {
        c.signals
            .record(Ref::none(), kind, Some(Ustr::from(tag)), r, Ref::none());
    }
    // CollectionService.TagAdded / TagRemoved: the tag's first use in the place, or its last.
    if c.signals.watch.kinds & Kind::Named.bit() != 0
        && c.in_scene(r)
        && let Some(service) = crate::services::find_service(c, "CollectionService")
        && c.signals.watch.listens(service, Kind::Named.bit())
    {
        let mut users = 0usize;
        procmodel_dom::preorder(&c.dom, &[c.dom.root_ref()], |_, inst| {
            users += usize::from(crate::services::has_tag(inst, tag));
            users < 2
        });
        let (event, fires) = if added {
            ("TagAdded", users == 1)
        } else {
            ("TagRemoved", users == 0)
        };
        if fires {
            c.signals
                .record_named(service, Ustr::from(event), NamedArgs::Text(tag.into()));
        }
    }
}

fn subtree(c: &Ctx, r: Ref) -> Vec<Ref> {
    let mut out = vec![r];
    let mut i = 0;
    while i < out.len() {
        if let Some(inst) = c.dom.get_by_ref(out[i]) {
            out.extend_from_slice(inst.children());
        }
        i += 1;
    }
    out
}

fn ancestors(c: &Ctx, mut r: Ref) -> Vec<Ref> {
    let mut out = Vec::new();
    while r.is_some() {
        out.push(r);
        r = c
            .dom
            .get_by_ref(r)
            .map(|i| i.parent())
            .unwrap_or_else(Ref::none);
    }
    out
}

/// `r`'s own event `name` fired by one of its methods, with the argument `text`.
pub fn named(c: &mut Ctx, r: Ref, name: &str, text: String) {
    c.signals
        .named(r, name, NamedArgs::Text(text.into_boxed_str()));
}

/// A line a script outputs (`print`, `warn`, an error no one caught, LogService's and
/// TestService's lines): procmodel's output shows `line`; `message` is kept for
/// `LogService:GetLogHistory` and fires `LogService.MessageOut` (and an error
/// `ScriptContext.Error`, with `stack`). Where events are immediate, the handlers run
/// before this returns.
pub fn script_output(
    lua: &Lua,
    ty: crate::context::MessageType,
    line: String,
    message: &str,
    stack: Option<&str>,
) -> mlua::Result<()> {
    let timestamp = crate::sched::now(lua).floor();
    {
        let mut c = ctx(lua)?;
        c.log(ty.level(), line);
        if c.log_history.len() == crate::context::LOG_LINES_KEPT {
            c.log_history.pop_front();
        }
        c.log_history.push_back(crate::context::HistoryLine {
            message: message.into(),
            ty,
            timestamp,
        });
        if any_named(&c) {
            if let Some(logs) = crate::services::find_service(&c, "LogService") {
                let args = NamedArgs::Message(message.into(), ty as u32);
                c.signals.named(logs, "MessageOut", args);
            }
            if let (Some(stack), Some(context)) =
                (stack, crate::services::find_service(&c, "ScriptContext"))
            {
                let args = NamedArgs::ScriptError(message.into(), stack.into(), Ref::none());
                c.signals.named(context, "Error", args);
            }
        }
    }
    crate::context::after_call(lua)
}

/// The functions connected to `game.Close` (the DataModel's), in the order connected: the
/// session runs them when it closes, beside the functions bound with `BindToClose`.
pub(crate) fn close_handlers(c: &Ctx) -> Vec<Function> {
    let root = c.dom.root_ref();
    let close = Some(Ustr::from("Close"));
    let Some(ids) = c.signals.index.get(&(root, Kind::Named)) else {
        return Vec::new();
    };
    ids.iter()
        .filter(|id| !c.signals.cut.contains(id))
        .filter_map(|id| c.signals.conns.get(id))
        .filter(|conn| conn.filter == close)
        .filter_map(|conn| match &conn.cb {
            Callback::Func(f) => Some(f.clone()),
            Callback::Thread(..) => None,
        })
        .collect()
}

/// Whether anything listens to an event some instance's methods fire (the cheap check
/// before looking for the instance).
pub(crate) fn any_named(c: &Ctx) -> bool {
    c.signals.watch.kinds & Kind::Named.bit() != 0
}

/// `r` and its descendants entered the DataModel (`added`) or left it: their tags'
/// `GetInstanceAddedSignal`/`GetInstanceRemovedSignal` fire.
fn tags_moved(c: &mut Ctx, r: Ref, added: bool) {
    let kind = if added {
        Kind::TagAdded
    } else {
        Kind::TagRemoved
    };
    if !c.signals.watch.listens(Ref::none(), kind.bit()) {
        return;
    }
    for m in subtree(c, r) {
        let tags: Vec<Ustr> = match c
            .dom
            .get_by_ref(m)
            .and_then(|i| i.properties.get(&crate::keys::KEYS.tags))
        {
            Some(rbx_types::Variant::Tags(t)) => t.iter().map(Ustr::from).collect(),
            _ => continue,
        };
        for tag in tags {
            c.signals
                .record(Ref::none(), kind, Some(tag), m, Ref::none());
        }
    }
}

/// `r` moved from `old` to `new` (already done in the DOM).
pub fn reparented(c: &mut Ctx, r: Ref, old: Ref, new: Ref) {
    if c.signals.watch.kinds & (Kind::TagAdded.bit() | Kind::TagRemoved.bit()) != 0 {
        let was_in = old.is_some() && c.in_scene(old);
        let is_in = new.is_some() && c.in_scene(new);
        if was_in != is_in {
            tags_moved(c, r, is_in);
        }
    }
    let kinds = c.signals.watch.kinds;
    let descendant = Kind::DescendantAdded.bit() | Kind::DescendantRemoving.bit();
    let moved = if kinds & (descendant | Kind::AncestryChanged.bit()) != 0 {
        subtree(c, r)
    } else {
        vec![r]
    };
    if kinds & Kind::DescendantRemoving.bit() != 0 {
        for a in ancestors(c, old) {
            if c.signals.watch.listens(a, Kind::DescendantRemoving.bit()) {
                for &m in &moved {
                    c.signals
                        .record(a, Kind::DescendantRemoving, None, m, Ref::none());
                }
            }
        }
    }
    let s = &mut c.signals;
    if old.is_some() && s.watch.listens(old, Kind::ChildRemoved.bit()) {
        s.record(old, Kind::ChildRemoved, None, r, Ref::none());
    }
    if new.is_some() && s.watch.listens(new, Kind::ChildAdded.bit()) {
        s.record(new, Kind::ChildAdded, None, r, Ref::none());
    }
    if kinds & Kind::DescendantAdded.bit() != 0 {
        for a in ancestors(c, new) {
            if c.signals.watch.listens(a, Kind::DescendantAdded.bit()) {
                for &m in &moved {
                    c.signals
                        .record(a, Kind::DescendantAdded, None, m, Ref::none());
                }
            }
        }
    }
    if kinds & Kind::AncestryChanged.bit() != 0 {
        for &m in &moved {
            if c.signals.watch.listens(m, Kind::AncestryChanged.bit()) {
                c.signals.record(m, Kind::AncestryChanged, None, r, new);
            }
        }
    }
    if kinds & Kind::Named.bit() != 0 {
        sky_moved(c, r, old, new);
    }
    prop_changed(c, r, "Parent");
}

/// `r` and its descendants are being destroyed.
pub fn destroying(c: &mut Ctx, r: Ref) {
    if c.signals.watch.kinds & Kind::Destroying.bit() == 0 {
        return;
    }
    for m in subtree(c, r) {
        if c.signals.watch.listens(m, Kind::Destroying.bit()) {
            c.signals
                .record(m, Kind::Destroying, None, Ref::none(), Ref::none());
        }
    }
}

// ----- dispatch ---------------------------------------------------------------------------

/// How deep events may fire one another: an event fired by a handler running at this depth
/// reaches no handler (Roblox's re-entrancy limit, "currently 10" in its deferred-events
/// guide), so handlers that set what they listen to end instead of looping forever.
pub const MAX_EVENT_DEPTH: u8 = 10;

/// A handler ready to run: resume `thread` with `args` as a thread of `group`, at event
/// `depth` (1 for an event no handler fired).
pub struct Ready {
    pub thread: Thread,
    pub args: MultiValue,
    pub group: u32,
    pub depth: u8,
}

/// Skipped handlers beyond [`MAX_EVENT_DEPTH`], reported once per signal.
#[derive(Default)]
struct TooDeep(Vec<(Ref, Kind, Option<Ustr>)>);

impl TooDeep {
    fn note(&mut self, target: Ref, kind: Kind, filter: Option<Ustr>) {
        if !self.0.contains(&(target, kind, filter)) {
            self.0.push((target, kind, filter));
        }
    }

    fn report(self, c: &mut Ctx) {
        for (target, kind, filter) in self.0 {
            let owner = if target.is_none() {
                "CollectionService".to_owned()
            } else {
                c.full_name(target)
            };
            let filter = filter.map(|f| f.as_str()).unwrap_or_default();
            let signal = match kind {
                Kind::PropertyChanged => format!("GetPropertyChangedSignal(\"{filter}\")"),
                Kind::AttributeChangedNamed => format!("GetAttributeChangedSignal(\"{filter}\")"),
                Kind::TagAdded => format!("GetInstanceAddedSignal(\"{filter}\")"),
                Kind::TagRemoved => format!("GetInstanceRemovedSignal(\"{filter}\")"),
                Kind::Named => filter.to_owned(),
                Kind::Message => format!("messages \"{filter}\""),
                Kind::Event => "Event".to_owned(),
                k => format!("{k:?}"),
            };
            c.log(
                crate::context::LogLevel::Warn,
                format!(
                    "Maximum event re-entrancy depth ({MAX_EVENT_DEPTH}) exceeded for {owner}.{signal}: its handlers did not run (handlers firing one another in a loop?)"
                ),
            );
        }
    }
}

/// Turns the recorded events into ready handlers (the scheduler queues them as deferred, or
/// runs them at once in immediate mode). `depth`: that of the code that recorded them (0
/// outside any handler).
pub fn flush(lua: &Lua, depth: u8) -> mlua::Result<Vec<Ready>> {
    let mut c = ctx(lua)?;
    if c.signals.events.is_empty() && c.signals.cuts.is_empty() {
        return Ok(Vec::new());
    }
    let events = std::mem::take(&mut c.signals.events);
    let mut cuts: std::collections::VecDeque<_> = std::mem::take(&mut c.signals.cuts).into();
    let mut out = Vec::new();
    let mut too_deep = TooDeep::default();
    for (i, ev) in events.into_iter().enumerate() {
        // The connections a `Destroy` cut get the events recorded before it, no later ones.
        c.signals.apply_cuts(&mut cuts, i);
        let kinds: &[Kind] = match ev.kind {
            Kind::Changed => &[Kind::Changed, Kind::PropertyChanged],
            Kind::AttributeChanged => &[Kind::AttributeChanged, Kind::AttributeChangedNamed],
            k => std::slice::from_ref(match k {
                Kind::ChildAdded => &Kind::ChildAdded,
                Kind::ChildRemoved => &Kind::ChildRemoved,
                Kind::DescendantAdded => &Kind::DescendantAdded,
                Kind::DescendantRemoving => &Kind::DescendantRemoving,
                Kind::AncestryChanged => &Kind::AncestryChanged,
                Kind::Destroying => &Kind::Destroying,
                Kind::TagAdded => &Kind::TagAdded,
                Kind::TagRemoved => &Kind::TagRemoved,
                Kind::Named => &Kind::Named,
                _ => continue,
            }),
        };
        for &kind in kinds {
            let ids = c
                .signals
                .index
                .get(&(ev.target, kind))
                .cloned()
                .unwrap_or_default();
            for id in ids {
                let Some(conn) = c.signals.conns.get(&id) else {
                    continue;
                };
                let named = matches!(
                    kind,
                    Kind::PropertyChanged
                        | Kind::AttributeChangedNamed
                        | Kind::TagAdded
                        | Kind::TagRemoved
                        | Kind::Named
                );
                if named && conn.filter != ev.name {
                    continue;
                }
                if depth >= MAX_EVENT_DEPTH {
                    too_deep.note(ev.target, kind, conn.filter);
                    continue;
                }
                let mut args = MultiValue::new();
                match (kind, &ev.changed) {
                    (Kind::Changed, ChangedArg::Skip) => continue,
                    (Kind::Changed, ChangedArg::Value(v)) => args.push_back(match &**v {
                        Variant::Ref(r) => push_opt(&mut c, *r)?,
                        v => procmodel_luau_types::variant_to_lua(lua, v, None)?,
                    }),
                    (Kind::Changed | Kind::AttributeChanged, _) => {
                        let name = ev.name.map(|n| n.as_str()).unwrap_or_default();
                        args.push_back(Value::String(lua.create_string(name)?));
                    }
                    (Kind::PropertyChanged | Kind::AttributeChangedNamed | Kind::Destroying, _) => {
                    }
                    (Kind::Named, _) => match ev.text.as_deref() {
                        None => args.push_back(Value::String(lua.create_string("")?)),
                        Some(NamedArgs::Text(text)) => {
                            args.push_back(Value::String(lua.create_string(&**text)?));
                        }
                        Some(NamedArgs::Message(text, ty)) => {
                            args.push_back(Value::String(lua.create_string(&**text)?));
                            args.push_back(procmodel_luau_types::variant_to_lua(
                                lua,
                                &Variant::Enum(rbx_types::Enum::from_u32(*ty)),
                                Some("MessageType"),
                            )?);
                        }
                        Some(NamedArgs::Flag(b)) => args.push_back(Value::Boolean(*b)),
                        Some(NamedArgs::Instance(r)) => args.push_back(push_opt(&mut c, *r)?),
                        Some(NamedArgs::ScriptError(text, stack, script)) => {
                            args.push_back(Value::String(lua.create_string(&**text)?));
                            args.push_back(Value::String(lua.create_string(&**stack)?));
                            args.push_back(push_opt(&mut c, *script)?);
                        }
                    },
                    (Kind::AncestryChanged, _) => {
                        args.push_back(push_opt(&mut c, ev.a)?);
                        args.push_back(push_opt(&mut c, ev.b)?);
                    }
                    _ => args.push_back(push_opt(&mut c, ev.a)?),
                }
                out.push(take_ready(lua, &mut c, id, args, depth + 1)?);
            }
        }
    }
    c.signals.apply_cuts(&mut cuts, usize::MAX);
    too_deep.report(&mut c);
    Ok(out)
}

fn push_opt(c: &mut Ctx, r: Ref) -> mlua::Result<Value> {
    if r.is_none() {
        Ok(Value::Nil)
    } else {
        c.push(r)
    }
}

/// The handler of connection `id` as a ready thread; a `Once`/`Wait` connection is cut.
fn take_ready(lua: &Lua, c: &mut Ctx, id: u64, args: MultiValue, depth: u8) -> mlua::Result<Ready> {
    let conn = &c.signals.conns[&id];
    let group = conn.group;
    let (thread, once) = match &conn.cb {
        Callback::Func(f) => (lua.create_thread(f.clone())?, conn.once),
        Callback::Thread(t, _) => (t.clone(), true),
    };
    if once {
        c.signals.disconnect(id);
    }
    Ok(Ready {
        thread,
        args,
        group,
        depth,
    })
}

/// The handlers of a signal fired with Luau values (RunService frames; BindableEvent:Fire
/// and Actor:SendMessage from code at event depth `depth`), for the connections of run
/// `only` alone (all of them for None) and, with `filter`, those made with it.
fn fire_now_of(
    lua: &Lua,
    (target, kind, filter): (Ref, Kind, Option<Ustr>),
    args: &MultiValue,
    only: Option<u32>,
    depth: u8,
) -> mlua::Result<Vec<Ready>> {
    let mut c = ctx(lua)?;
    let mut ids = c
        .signals
        .index
        .get(&(target, kind))
        .cloned()
        .unwrap_or_default();
    if kind == Kind::Render && !c.signals.render_steps.is_empty() {
        // PreRender's own connections in the order made, then the render step bindings,
        // lowest priority first (ties in the order bound, where Roblox picks at random).
        let steps = &c.signals.render_steps;
        ids.sort_by(|a, b| {
            let key = |id: &u64| steps.get(id).map(|(_, p)| *p);
            match (key(a), key(b)) {
                (Some(x), Some(y)) => x.total_cmp(&y).then(a.cmp(b)),
                (x, y) => x.is_some().cmp(&y.is_some()).then(a.cmp(b)),
            }
        });
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if c.signals.cut.contains(&id) {
            continue;
        }
        if only.is_some_and(|g| c.signals.conns.get(&id).is_some_and(|conn| conn.group != g)) {
            continue;
        }
        if filter.is_some_and(|f| {
            c.signals
                .conns
                .get(&id)
                .is_some_and(|conn| conn.filter != Some(f))
        }) {
            continue;
        }
        if depth >= MAX_EVENT_DEPTH {
            let mut too_deep = TooDeep::default();
            too_deep.note(target, kind, filter);
            too_deep.report(&mut c);
            return Ok(Vec::new());
        }
        out.push(take_ready(lua, &mut c, id, args.clone(), depth + 1)?);
    }
    Ok(out)
}

/// The kinds RunService fires each frame.
const FRAME_KINDS: u32 = Kind::Heartbeat.bit() | Kind::Stepped.bit() | Kind::Render.bit();

/// RunService's frame signals for one engine frame of `dt` seconds ending at `now`.
pub fn fire_frame(lua: &Lua, now: f64, dt: f64) -> mlua::Result<Vec<Ready>> {
    fire_frame_of(lua, None, now, dt)
}

/// [`fire_frame`] for the connections of run `group` alone: a generation stepped frame by
/// frame among others on one VM crosses its frames on its own.
pub fn fire_group_frame(lua: &Lua, group: u32, now: f64, dt: f64) -> mlua::Result<Vec<Ready>> {
    fire_frame_of(lua, Some(group), now, dt)
}

fn fire_frame_of(lua: &Lua, only: Option<u32>, now: f64, dt: f64) -> mlua::Result<Vec<Ready>> {
    let service = {
        let c = ctx(lua)?;
        if c.signals.watch.kinds & FRAME_KINDS == 0 {
            return Ok(Vec::new());
        }
        c.signals
            .index
            .keys()
            .find(|(_, k)| k.bit() & FRAME_KINDS != 0)
            .map(|(r, _)| *r)
    };
    let Some(service) = service else {
        return Ok(Vec::new());
    };
    // A frame's order (the reference's RunService events): PreRender, PreSimulation
    // (Stepped), then Heartbeat.
    let mut out = fire_now_of(
        lua,
        (service, Kind::Render, None),
        &MultiValue::from_iter([Value::Number(dt)]),
        only,
        0,
    )?;
    out.extend(fire_now_of(
        lua,
        (service, Kind::Stepped, None),
        &MultiValue::from_iter([Value::Number(now), Value::Number(dt)]),
        only,
        0,
    )?);
    out.extend(fire_now_of(
        lua,
        (service, Kind::Heartbeat, None),
        &MultiValue::from_iter([Value::Number(dt)]),
        only,
        0,
    )?);
    Ok(out)
}

/// True when a thread of `group` waits on a frame signal (so an empty frame must pass).
pub fn frame_listeners(lua: &Lua, group: u32) -> mlua::Result<bool> {
    let c = ctx(lua)?;
    Ok(c.signals
        .conns
        .values()
        .any(|conn| conn.group == group && conn.kind.bit() & FRAME_KINDS != 0))
}

/// True when a thread of `group` is suspended in a frame signal's `Wait()`.
pub fn frame_waiters(lua: &Lua, group: u32) -> mlua::Result<bool> {
    let c = ctx(lua)?;
    Ok(c.signals.conns.values().any(|conn| {
        conn.group == group
            && conn.kind.bit() & FRAME_KINDS != 0
            && matches!(conn.cb, Callback::Thread(..))
    }))
}

/// Cuts every connection run `group` made (a generator's, when its run ends).
pub fn end_group(lua: &Lua, group: u32) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    let ids: Vec<u64> = c
        .signals
        .conns
        .iter()
        .filter(|(_, conn)| conn.group == group)
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        c.signals.disconnect(id);
    }
    Ok(())
}

// ----- Luau objects -----------------------------------------------------------------------

/// An `RBXScriptSignal`.
#[derive(Clone, Copy)]
pub struct Signal {
    target: Ref,
    kind: Kind,
    filter: Option<Ustr>,
    name: &'static str,
}

impl Signal {
    /// What its connections listen to.
    fn key(&self) -> (Ref, Kind, Option<Ustr>) {
        (self.target, self.kind, self.filter)
    }
}

/// An `RBXScriptConnection`.
pub struct Connection(u64);

fn connect(lua: &Lua, sig: &Signal, f: Value, once: bool) -> mlua::Result<Connection> {
    let Value::Function(f) = f else {
        return Err(mlua::Error::runtime(
            "Attempt to connect failed: Passed value is not a function",
        ));
    };
    let group = crate::sched::current_group(lua)?;
    let mut c = ctx(lua)?;
    read_behavior(&mut c);
    let id = c.signals.connect(sig.key(), Callback::Func(f), once, group);
    Ok(Connection(id))
}

/// Reads the place's `Workspace.SignalBehavior` (at each connection, before any event of
/// it fires): Default and Immediate run handlers inside the call that fired them, as Roblox
/// does for places saved so; Deferred and AncestryDeferred, and a Workspace without the
/// property (a DataModel procmodel made, a Rojo project: new places are Deferred), at the
/// next resumption point.
fn read_behavior(c: &mut Ctx) {
    let Some(ws) = crate::services::find_service(c, "Workspace") else {
        c.signals.immediate = false;
        return;
    };
    c.signals.immediate = c.dom.get_by_ref(ws).is_some_and(|w| {
        matches!(
            w.properties.get(&Ustr::from("SignalBehavior")),
            Some(Variant::Enum(e)) if e.to_u32() <= 1
        )
    });
}

impl UserData for Signal {
    fn add_fields<F: mlua::UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "RBXScriptSignal");
    }

    fn add_methods<M: mlua::UserDataMethods<Self>>(m: &mut M) {
        for name in ["Connect", "connect", "ConnectParallel"] {
            m.add_method(name, |lua, sig, f: Value| connect(lua, sig, f, false));
        }
        m.add_method("Once", |lua, sig, f: Value| connect(lua, sig, f, true));
        // `Wait` yields, so it is a Luau function handed out by `__index`.
        m.add_meta_function(
            MetaMethod::Index,
            |lua, (_, key): (Value, String)| match key.as_str() {
                "Wait" | "wait" => lua
                    .named_registry_value::<Function>("procmodel.signal_wait")
                    .map(Value::Function),
                _ => Err(mlua::Error::runtime(format!(
                    "{key} is not a valid member of RBXScriptSignal"
                ))),
            },
        );
        m.add_meta_method(MetaMethod::ToString, |_, sig, ()| {
            Ok(format!("Signal {}", sig.name))
        });
        m.add_meta_method(MetaMethod::Eq, |_, a, b: mlua::UserDataRef<Signal>| {
            Ok(a.target == b.target && a.kind == b.kind && a.filter == b.filter)
        });
    }
}

impl UserData for Connection {
    fn add_fields<F: mlua::UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "RBXScriptConnection");
        f.add_field_method_get("Connected", |lua, c| Ok(ctx(lua)?.signals.connected(c.0)));
    }

    fn add_methods<M: mlua::UserDataMethods<Self>>(m: &mut M) {
        for name in ["Disconnect", "disconnect"] {
            m.add_method(name, |lua, c, ()| {
                ctx(lua)?.signals.disconnect(c.0);
                Ok(())
            });
        }
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("Connection"));
    }
}

/// Installs the Luau half of `Signal:Wait()` (it yields, so it cannot be a Rust method).
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let register = lua.create_function(|lua, sig: mlua::UserDataRef<Signal>| {
        let group = crate::sched::current_group(lua)?;
        let th = lua.current_thread();
        let mut c = ctx(lua)?;
        read_behavior(&mut c);
        c.signals
            .connect(sig.key(), Callback::Thread(th, sig.name), true, group);
        Ok(())
    })?;
    // The thread connects itself, then yields with no values: the scheduler resumes it
    // with the event's arguments, whoever resumed it (a plain coroutine too).
    let wait: Function = lua
        .load(
            "local register = ...\n\
             local yield, isyieldable = coroutine.yield, coroutine.isyieldable\n\
             return function(sig)\n\
                 if not isyieldable() then return yield() end\n\
                 register(sig)\n\
                 return yield()\n\
             end",
        )
        .set_name("=[RBXScriptSignal.Wait]")
        .call(register)?;
    lua.set_named_registry_value("procmodel.signal_wait", wait)?;

    // Instance:WaitForChild(name, timeout?) yields on virtual time, so it is Luau too.
    let find = lua.create_function(|lua, (this, name): (Instance, String)| {
        let mut c = ctx(lua)?;
        let found = c
            .dom
            .get_by_ref(this.r)
            .and_then(|i| {
                i.children()
                    .iter()
                    .copied()
                    .find(|&ch| c.dom.get_by_ref(ch).is_some_and(|x| x.name == name))
            })
            .or_else(|| crate::services::always_there(&mut c, &this, &name));
        c.push_found(this.r, found, crate::context::Lookup::Child(&name))
    })?;
    // `warn(self, name, true)` warns of the infinite yield and records it for the wait
    // limit's error; `warn(self, name, false)`, once the child came after all, forgets it.
    let warn = lua.create_function(|lua, (this, name, on): (Instance, String, bool)| {
        if !on {
            crate::sched::sched(lua)?.clear_stuck();
            return Ok(());
        }
        let what = {
            let mut c = ctx(lua)?;
            let what = format!("{}:WaitForChild(\"{name}\")", c.full_name(this.r));
            c.log(
                crate::context::LogLevel::Warn,
                format!("Infinite yield possible on '{what}'"),
            );
            what
        };
        crate::sched::sched(lua)?.note_stuck(what);
        Ok(())
    })?;
    let wait_for: Function = lua.named_registry_value(crate::sched::WAIT_FOR)?;
    let now = lua.create_function(|lua, ()| Ok(crate::sched::now(lua)))?;
    let wait_for_child: Function = lua
        .load(
            "local find, warn, wait_for, now = ...\n\
             return function(self, name, timeout)\n\
                 if type(name) ~= 'string' then\n\
                     error('WaitForChild: Argument 1 missing or nil', 2)\n\
                 end\n\
                 local child = find(self, name)\n\
                 if child ~= nil then return child end\n\
                 local start, warned = now(), false\n\
                 while true do\n\
                     wait_for(0)\n\
                     local waited = now() - start\n\
                     child = find(self, name)\n\
                     if child ~= nil then\n\
                         if warned then warn(self, name, false) end\n\
                         return child\n\
                     end\n\
                     if timeout ~= nil then\n\
                         if waited >= timeout then return nil end\n\
                     elseif not warned and waited >= 5 then\n\
                         warned = true\n\
                         warn(self, name, true)\n\
                     end\n\
                 end\n\
             end",
        )
        .set_name("=[WaitForChild]")
        .call((find, warn, wait_for, now))?;
    lua.set_named_registry_value("procmodel.wait_for_child", wait_for_child)
}

fn signal(
    lua: &Lua,
    target: Ref,
    kind: Kind,
    filter: Option<Ustr>,
    name: &'static str,
) -> mlua::Result<Value> {
    lua.create_userdata(Signal {
        target,
        kind,
        filter,
        name,
    })
    .map(Value::UserData)
}

/// The instances' own events procmodel fires as [`Kind::Named`] (the event's name is the
/// connection's filter), by the class that has them.
const NAMED_EVENTS: &[(&str, &str)] = &[
    // A tag's first use in the place and its last (`tag_changed`).
    ("CollectionService", "TagAdded"),
    ("CollectionService", "TagRemoved"),
    // Sound's events its methods fire (`classes/sound.rs`).
    ("Sound", "Played"),
    ("Sound", "Paused"),
    ("Sound", "Resumed"),
    ("Sound", "Stopped"),
    // Lighting's own changes (`lighting_changed`, `sky_moved`).
    ("Lighting", "LightingChanged"),
    // A service made on first use (`services::get_service`).
    ("ServiceProvider", "ServiceAdded"),
    // The session closing (`close_handlers`).
    ("DataModel", "Close"),
    // What scripts output (`script_output`).
    ("LogService", "MessageOut"),
    ("ScriptContext", "Error"),
];

/// The event `key` of `this`, if it has one (looked up after properties and methods).
pub fn member(lua: &Lua, this: &Instance, key: &[u8]) -> mlua::Result<Option<Value>> {
    let Ok(key) = std::str::from_utf8(key) else {
        return Ok(None);
    };
    let class = this.class.as_str();
    let is_a = |base: &str| procmodel_dom::is_a(class, base);
    if let Some(&(_, name)) = NAMED_EVENTS
        .iter()
        .find(|&&(owner, event)| event == key && is_a(owner))
    {
        return signal(lua, this.r, Kind::Named, Some(Ustr::from(name)), name).map(Some);
    }
    let (kind, name) = match key {
        "Changed" | "changed" => (Kind::Changed, "Changed"),
        "AttributeChanged" => (Kind::AttributeChanged, "AttributeChanged"),
        "ChildAdded" | "childAdded" => (Kind::ChildAdded, "ChildAdded"),
        "ChildRemoved" | "childRemoved" => (Kind::ChildRemoved, "ChildRemoved"),
        "DescendantAdded" => (Kind::DescendantAdded, "DescendantAdded"),
        "DescendantRemoving" => (Kind::DescendantRemoving, "DescendantRemoving"),
        "AncestryChanged" => (Kind::AncestryChanged, "AncestryChanged"),
        "Destroying" => (Kind::Destroying, "Destroying"),
        "Event" if is_a("BindableEvent") => (Kind::Event, "Event"),
        "Heartbeat" if is_a("RunService") => (Kind::Heartbeat, "Heartbeat"),
        "Stepped" if is_a("RunService") => (Kind::Stepped, "Stepped"),
        // Fired each virtual frame, as Studio's edit mode (where `IsClient()` is true too)
        // fires them each frame it draws.
        "PreRender" if is_a("RunService") => (Kind::Render, "PreRender"),
        "RenderStepped" if is_a("RunService") => (Kind::Render, "RenderStepped"),
        _ => {
            return match crate::api::event(class, key) {
                // Events of the outside world (input, physics, players, media) exist and
                // never fire headless. The name is the filter: `GetTouchingParts` asks
                // whether something listens to Touched (Roblox's TouchInterest).
                crate::api::Event::Outside(name) => {
                    signal(lua, this.r, Kind::Never, Some(Ustr::from(name)), name).map(Some)
                }
                crate::api::Event::NotFired(by) => Err(mlua::Error::runtime(format!(
                    "{by}.{key} is not available: procmodel does not fire it yet"
                ))),
                crate::api::Event::Unknown => Ok(None),
            };
        }
    };
    signal(lua, this.r, kind, None, name).map(Some)
}

/// `GetPropertyChangedSignal(name)`.
pub fn property_signal(lua: &Lua, this: &Instance, name: &str) -> mlua::Result<Value> {
    let key = {
        let mut c = ctx(lua)?;
        if !c.props.is_property(this.class, name.as_bytes()) {
            return Err(mlua::Error::runtime(format!(
                "{name} is not a valid property name."
            )));
        }
        c.props.signal_key(this.class, name)
    };
    signal(
        lua,
        this.r,
        Kind::PropertyChanged,
        Some(key),
        "PropertyChanged",
    )
}

/// `GetAttributeChangedSignal(name)`.
pub fn attribute_signal(lua: &Lua, this: &Instance, name: &str) -> mlua::Result<Value> {
    signal(
        lua,
        this.r,
        Kind::AttributeChangedNamed,
        Some(Ustr::from(name)),
        "AttributeChanged",
    )
}

/// `CollectionService:GetInstanceAddedSignal(tag)` / `GetInstanceRemovedSignal(tag)`.
pub fn tag_signal(lua: &Lua, tag: &str, added: bool) -> mlua::Result<Value> {
    let (kind, name) = if added {
        (Kind::TagAdded, "InstanceAdded")
    } else {
        (Kind::TagRemoved, "InstanceRemoved")
    };
    signal(lua, Ref::none(), kind, Some(Ustr::from(tag)), name)
}

/// The handlers of BindableEvent `this`'s `Event` for a `Fire(...)` with `args` (the caller
/// queues them: they run at the next resumption point).
pub fn event_handlers(lua: &Lua, this: &Instance, args: &MultiValue) -> mlua::Result<Vec<Ready>> {
    let depth = crate::sched::sched(lua)?.event_depth;
    fire_now_of(lua, (this.r, Kind::Event, None), args, None, depth)
}

/// `RunService:BindToRenderStep(name, priority, f)`: `f` becomes a PreRender connection of
/// the running run (so it ends with the run, as its other connections do), called after
/// PreRender's own connections in priority order ([`fire_now_of`]).
pub fn bind_render_step(
    lua: &Lua,
    service: Ref,
    name: &str,
    priority: f64,
    f: Function,
) -> mlua::Result<()> {
    let sig = Signal {
        target: service,
        kind: Kind::Render,
        filter: None,
        name: "PreRender",
    };
    let Connection(id) = connect(lua, &sig, Value::Function(f), false)?;
    ctx(lua)?
        .signals
        .render_steps
        .insert(id, (name.into(), priority));
    Ok(())
}

/// `RunService:UnbindFromRenderStep(name)`: every binding of that name ends; none is fine.
pub fn unbind_render_step(lua: &Lua, name: &str) -> mlua::Result<()> {
    let mut c = ctx(lua)?;
    let mut ids: Vec<u64> = c
        .signals
        .render_steps
        .iter()
        .filter(|(_, (n, _))| &**n == name)
        .map(|(id, _)| *id)
        .collect();
    ids.sort_unstable();
    for id in ids {
        c.signals.disconnect(id);
    }
    Ok(())
}

/// `Actor:BindToMessage(topic, f)` (and `BindToMessageParallel`): `f` gets the actor's
/// messages of `topic`; the connection disconnects it.
pub fn bind_message(lua: &Lua, actor: Ref, topic: &str, f: Value) -> mlua::Result<Connection> {
    let sig = Signal {
        target: actor,
        kind: Kind::Message,
        filter: Some(Ustr::from(topic)),
        name: "Message",
    };
    connect(lua, &sig, f, false)
}

/// The handlers bound to `actor`'s messages of `topic` (`Actor:SendMessage`), one event
/// deeper than the sender.
pub fn message_handlers(
    lua: &Lua,
    actor: Ref,
    topic: &str,
    args: &MultiValue,
) -> mlua::Result<Vec<Ready>> {
    let depth = crate::sched::sched(lua)?.event_depth;
    let key = (actor, Kind::Message, Some(Ustr::from(topic)));
    fire_now_of(lua, key, args, None, depth)
}
