//! The signal state the run context holds (plain data): who listens (the one flag the write
//! paths check, `watch.any`), the connections by target and kind, the events recorded since
//! the last resumption point, and BindableFunction callbacks. Recording events, dispatching
//! them and the Luau objects are in `signals`.

use mlua::{Function, Thread};
use rbx_dom_weak::Ustr;
use rbx_types::Ref;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// What a signal reports.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    Changed,
    PropertyChanged,
    AttributeChanged,
    AttributeChangedNamed,
    ChildAdded,
    ChildRemoved,
    DescendantAdded,
    DescendantRemoving,
    AncestryChanged,
    Destroying,
    /// BindableEvent.Event.
    Event,
    Heartbeat,
    Stepped,
    /// RunService.PreRender and its older name RenderStepped (and `BindToRenderStep`).
    Render,
    /// CollectionService:GetInstanceAddedSignal(tag) / Removed (target: none).
    TagAdded,
    TagRemoved,
    /// An event of the instance's own that one of its methods fires (`Sound:Play` →
    /// `Played`), named by the filter; handlers get the text recorded with it.
    Named,
    /// An Actor's messages of one topic (the filter): `BindToMessage`, `SendMessage`.
    Message,
    /// Input and physics events: exist, never fire headless.
    Never,
}

/// Every kind, for walking a watch bit mask.
const ALL_KINDS: [Kind; 19] = [
    Kind::Changed,
    Kind::PropertyChanged,
    Kind::AttributeChanged,
    Kind::AttributeChangedNamed,
    Kind::ChildAdded,
    Kind::ChildRemoved,
    Kind::DescendantAdded,
    Kind::DescendantRemoving,
    Kind::AncestryChanged,
    Kind::Destroying,
    Kind::Event,
    Kind::Heartbeat,
    Kind::Stepped,
    Kind::Render,
    Kind::TagAdded,
    Kind::TagRemoved,
    Kind::Named,
    Kind::Message,
    Kind::Never,
];
// `Never` is the last kind: a kind added without its entry above fails to compile.
const _: () = assert!(ALL_KINDS.len() == Kind::Never as usize + 1);

impl Kind {
    pub(crate) const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// Who listens, kept in the run context so the write paths test one flag.
#[derive(Default)]
pub struct Watch {
    /// Any connection to an instance or tag event exists.
    pub any: bool,
    /// Kinds listened to per target.
    refs: FxHashMap<Ref, u32>,
    /// Union of all listened kinds.
    pub(crate) kinds: u32,
}

impl Watch {
    pub(crate) fn listens(&self, r: Ref, kinds: u32) -> bool {
        self.refs.get(&r).is_some_and(|m| m & kinds != 0)
    }
}

/// An event recorded on a write path, dispatched at the next resumption point.
pub struct Fired {
    pub(crate) target: Ref,
    pub(crate) kind: Kind,
    pub(crate) name: Option<Ustr>,
    pub(crate) a: Ref,
    pub(crate) b: Ref,
    /// The arguments of a [`Kind::Named`] event.
    pub(crate) text: Option<Box<NamedArgs>>,
    /// What a [`Kind::Changed`] event passes to `Changed` handlers.
    pub(crate) changed: ChangedArg,
}

/// What the handlers of a [`Kind::Named`] event get.
pub(crate) enum NamedArgs {
    /// One string.
    Text(Box<str>),
    /// `LogService.MessageOut`: the message and its `Enum.MessageType` value.
    Message(Box<str>, u32),
    /// `ScriptContext.Error`: the message, the stack trace and the script (none: nil).
    ScriptError(Box<str>, Box<str>, Ref),
    /// One boolean (`Lighting.LightingChanged`'s `skyChanged`).
    Flag(bool),
    /// One instance (`ServiceProvider.ServiceAdded`'s service).
    Instance(Ref),
}

/// The argument `Changed` handlers get. Roblox's ValueBase objects (IntValue, ObjectValue,
/// …) override `Changed`: it fires only when `Value` changes, with the new value; every
/// other instance's `Changed` fires for any property, with the property's name.
pub(crate) enum ChangedArg {
    /// The property's name (`ev.name`).
    Name,
    /// A ValueBase's new Value, as it was when written.
    Value(Box<rbx_types::Variant>),
    /// A ValueBase property other than Value: no `Changed` (its property signal still fires).
    Skip,
}

/// Signal state of the run context: the recorded events, the connections, callbacks.
#[derive(Default)]
pub struct SignalState {
    pub watch: Watch,
    pub(crate) events: Vec<Fired>,
    pub(crate) conns: BTreeMap<u64, Conn>,
    pub(crate) index: FxHashMap<(Ref, Kind), Vec<u64>>,
    next_id: u64,
    /// Connections `Destroy` cut (no longer `Connected`, reached by no new firing) that stay
    /// in `conns` until the events recorded before the cut are dispatched: a destroyed
    /// instance's `Destroying` (and its `AncestryChanged`) reach them at the next resumption
    /// point, as Roblox's deferred events do.
    pub(crate) cut: FxHashSet<u64>,
    /// The cuts in order: (number of `events` recorded before it, the connections).
    pub(crate) cuts: Vec<(usize, Vec<u64>)>,
    /// Callbacks scripts set, by instance and Roblox's name for them: BindableFunction's
    /// `OnInvoke` (which `Invoke` calls) and the ones nothing headless calls
    /// (`RemoteFunction.OnServerInvoke`, `MarketplaceService.ProcessReceipt`, ...).
    pub callbacks: FxHashMap<(Ref, &'static str), Function>,
    /// Whether handlers run inside the call that fired their event (the place's
    /// `Workspace.SignalBehavior` is Default or Immediate) instead of at the next resumption
    /// point (Deferred, the default of new places and of a DataModel procmodel makes). Read
    /// again at each connection.
    pub immediate: bool,
    /// What runs the handlers of the events a call recorded, in immediate mode: `task`
    /// installs its driver here, which the instance methods and property writes (below
    /// the scheduler) reach through [`SignalState::immediate_pending`].
    pub driver: Option<fn(&mlua::Lua) -> mlua::Result<()>>,
    /// The PreRender connections `RunService:BindToRenderStep` made: their binding's name and
    /// priority (`signals::bind_render_step`); each goes with its connection.
    pub(crate) render_steps: FxHashMap<u64, (Box<str>, f64)>,
}

/// One connection: what it listens to, its handler, and the run (group) that made it.
pub(crate) struct Conn {
    pub(crate) target: Ref,
    pub(crate) kind: Kind,
    pub(crate) filter: Option<Ustr>,
    pub(crate) cb: Callback,
    pub(crate) once: bool,
    pub(crate) group: u32,
}

/// A connection's handler.
pub(crate) enum Callback {
    Func(Function),
    /// A thread suspended in `Wait()`, and the name of the signal it waits on.
    Thread(Thread, &'static str),
}

impl SignalState {
    /// The driver to run now: events are recorded and their handlers run immediately.
    #[inline]
    pub fn immediate_pending(&self) -> Option<fn(&mlua::Lua) -> mlua::Result<()>> {
        if self.immediate && !self.events.is_empty() {
            self.driver
        } else {
            None
        }
    }

    /// Connects `cb` to the signal (`target`, `kind`, `filter`) for run `group`.
    pub(crate) fn connect(
        &mut self,
        (target, kind, filter): (Ref, Kind, Option<Ustr>),
        cb: Callback,
        once: bool,
        group: u32,
    ) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.conns.insert(
            id,
            Conn {
                target,
                kind,
                filter,
                cb,
                once,
                group,
            },
        );
        self.index.entry((target, kind)).or_default().push(id);
        self.rewatch();
        id
    }

    /// Whether a connection to `target`'s never-firing event `name` is open (a part's
    /// `Touched`: Roblox's TouchInterest).
    pub(crate) fn listens_to_never(&self, target: Ref, name: &str) -> bool {
        self.index.get(&(target, Kind::Never)).is_some_and(|ids| {
            ids.iter().any(|id| {
                self.conns
                    .get(id)
                    .is_some_and(|c| c.filter.is_some_and(|f| f.as_str() == name))
            })
        })
    }

    /// What `thread` waits on, if it is suspended in a signal's `Wait()`: the signal's
    /// target (none for a tag's signals), name and kind.
    pub(crate) fn waited_on(&self, thread: &Thread) -> Option<(Ref, &'static str, Kind)> {
        self.conns.values().find_map(|c| match &c.cb {
            Callback::Thread(t, name) if t == thread => Some((c.target, *name, c.kind)),
            _ => None,
        })
    }

    pub(crate) fn disconnect(&mut self, id: u64) {
        if self.remove(id) {
            self.rewatch();
        }
    }

    /// Removes connection `id` (the watch is not updated).
    fn remove(&mut self, id: u64) -> bool {
        let Some(c) = self.conns.remove(&id) else {
            return false;
        };
        self.cut.remove(&id);
        self.render_steps.remove(&id);
        if let Some(ids) = self.index.get_mut(&(c.target, c.kind)) {
            ids.retain(|&i| i != id);
            if ids.is_empty() {
                self.index.remove(&(c.target, c.kind));
            }
        }
        true
    }

    /// Whether connection `id` is connected (`RBXScriptConnection.Connected`).
    pub(crate) fn connected(&self, id: u64) -> bool {
        self.conns.contains_key(&id) && !self.cut.contains(&id)
    }

    /// Cuts every connection to an event of `targets` (destroyed instances): at once they
    /// are no longer connected and no new firing reaches them; they are removed once the
    /// events recorded so far are dispatched ([`SignalState::apply_cuts`]). Costs a lookup
    /// per target.
    pub(crate) fn cut_targets(&mut self, targets: &[Ref]) {
        let mut ids = Vec::new();
        for r in targets {
            let Some(&bits) = self.watch.refs.get(r) else {
                continue;
            };
            for kind in ALL_KINDS {
                if bits & kind.bit() == 0 {
                    continue;
                }
                if let Some(list) = self.index.get(&(*r, kind)) {
                    ids.extend(list.iter().copied().filter(|id| !self.cut.contains(id)));
                }
            }
        }
        if ids.is_empty() {
            return;
        }
        self.cut.extend(ids.iter().copied());
        self.cuts.push((self.events.len(), ids));
    }

    /// Removes the connections of the cuts made before `events` events were recorded
    /// (all of them for `usize::MAX`); `cuts` must be in order.
    pub(crate) fn apply_cuts(
        &mut self,
        cuts: &mut std::collections::VecDeque<(usize, Vec<u64>)>,
        events: usize,
    ) {
        let mut any = false;
        while cuts.front().is_some_and(|(at, _)| *at <= events) {
            let (_, ids) = cuts.pop_front().expect("checked");
            for id in ids {
                any |= self.remove(id);
            }
        }
        if any {
            self.rewatch();
        }
    }

    fn rewatch(&mut self) {
        let mut refs: FxHashMap<Ref, u32> = FxHashMap::default();
        let mut kinds = 0;
        for &(r, k) in self.index.keys() {
            *refs.entry(r).or_default() |= k.bit();
            kinds |= k.bit();
        }
        self.watch = Watch {
            any: !refs.is_empty(),
            refs,
            kinds,
        };
    }

    pub(crate) fn record(&mut self, target: Ref, kind: Kind, name: Option<Ustr>, a: Ref, b: Ref) {
        self.events.push(Fired {
            target,
            kind,
            name,
            a,
            b,
            text: None,
            changed: ChangedArg::Name,
        });
    }

    /// Records `target`'s [`Kind::Named`] event `name` with `args` when something listens
    /// to one of its named events.
    pub(crate) fn named(&mut self, target: Ref, name: &str, args: NamedArgs) {
        if self.watch.listens(target, Kind::Named.bit()) {
            self.record_named(target, Ustr::from(name), args);
        }
    }

    /// Records `target`'s [`Kind::Named`] event `name`, whose handlers get `text`.
    pub(crate) fn record_named(&mut self, target: Ref, name: Ustr, args: NamedArgs) {
        self.events.push(Fired {
            target,
            kind: Kind::Named,
            name: Some(name),
            a: Ref::none(),
            b: Ref::none(),
            text: Some(Box::new(args)),
            changed: ChangedArg::Name,
        });
    }
}
