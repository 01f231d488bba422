//! The per-VM run context: the DOM a script sees, instance identity (handles), limits and
//! logs, and the state of the layers above that the write paths touch (property resolutions,
//! signal connections, `Instance.new`'s class cache). Stored as mlua app data; never a
//! process-global registry. Plain state: it imports only the state types below it and `ffi`
//! (handles as light userdata, the cell's pinned address).

use crate::props::PropCache;
use crate::reads::Note;
use mlua::{Lua, Value};
use rbx_dom_weak::Ustr;
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{Ref, Variant};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::{RefCell, RefMut};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A handle to one instance in the run's DOM.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    pub r: Ref,
    pub class: Ustr,
}

impl mlua::FromLua for Instance {
    fn from_lua(value: Value, lua: &Lua) -> mlua::Result<Self> {
        let c = ctx(lua)?;
        c.instance(&value).ok_or_else(|| {
            mlua::Error::runtime(format!(
                "Instance expected, got {}",
                procmodel_luau_types::type_name(&value)
            ))
        })
    }
}

pub use procmodel_script::{LogLevel, LogLine};

/// Lines of output kept until they are taken ([`Ctx::take_log`]); older ones are dropped
/// (a long-running front end that never takes them must not grow without bound).
pub const LOG_LINES_KEPT: usize = 10_000;
/// Bytes of one kept line (the echo to stderr prints it whole).
pub const LOG_LINE_BYTES: usize = 4096;

/// What one instance costs in the DOM, for the output quota: its property map, its entry in
/// the instance table and its handle, measured for parts at about 0.9 KB.
pub const INSTANCE_BYTES: usize = 1024;

pub struct Ctx {
    /// The DataModel tree. Instances with a none parent are orphans (`Parent == nil`).
    pub dom: WeakDom,
    /// Instances whose Parent is locked by `Destroy`.
    pub destroyed: FxHashSet<Ref>,
    /// Instance handles (see [`Handles`]).
    pub handles: Handles,
    pub props: PropCache,
    /// Instances created by scripts so far in this run, and the cap (beyond Roblox).
    pub created: usize,
    pub instance_limit: Option<usize>,
    /// Estimated bytes of DOM data created so far in this run (instances at
    /// [`INSTANCE_BYTES`] each, plus the strings written), and the cap (beyond Roblox).
    pub created_bytes: usize,
    pub output_limit: Option<usize>,
    /// [`crate::HostConfig::max_terrain_bytes`].
    pub terrain_limit: Option<usize>,
    /// Captured output, the newest [`LOG_LINES_KEPT`] lines; also echoed to stderr when
    /// `echo` is set.
    pub log: std::collections::VecDeque<LogLine>,
    /// Lines dropped from the front of `log` since it was last taken.
    pub log_dropped: usize,
    pub echo: bool,
    /// While a generator runs: writes to instances in the scene are refused (a generator may
    /// only modify its targetContainer and instances it created).
    pub outside_write_locked: bool,
    /// True while a generator sandboxed without the CSG capability runs: solid modelling
    /// is refused.
    pub csg_locked: bool,
    /// While a generator that may write to the scene runs: whether such writes are watched.
    pub watch_outside: procmodel_script::WatchOutside,
    /// A watched run wrote (Note) or tried to write (Defer) outside its container, or
    /// queried the scene.
    pub touched_outside: std::cell::Cell<bool>,
    /// A watched run read the scene in a way [`Ctx::reads`] cannot name (a spatial query's
    /// kin, a tag lookup over the scene, terrain, an ancestor search, or any read of a run
    /// stepped across frames): its results depend on more than its inputs, so a result
    /// cache must not keep them ([`Ctx::note_read`]). Never a reason to defer a run.
    pub read_outside: std::cell::Cell<bool>,
    /// The reads of the running generation it can name (a template it clones, a value it
    /// reads, a child it looks for): a result cache keys the run by what it saw there.
    pub reads: RefCell<crate::reads::ReadNotes>,
    /// What modules' code read of the scene while it loaded (a module's value, made once,
    /// stands for what it saw then): a generation that requires the module depends on it.
    pub loads: RefCell<crate::reads::LoadReads>,
    /// Whether a module's code is loading now ([`Ctx::loads`]).
    pub loading: std::cell::Cell<bool>,
    /// Parts some rigid joint (a JointInstance or WeldConstraint) named as its Part0 or Part1,
    /// a superset kept as scripts write those properties, and refilled from the scene's
    /// joints when `jointed_stale` says the DOM changed in ways the writes do not show (a
    /// load, a clone of joints, MakeJoints): a CFrame write looks for an assembly to move
    /// only for these (`assembly::moving`).
    pub jointed: FxHashSet<Ref>,
    /// The rigid joints that named them (the ones gone are dropped when next looked at).
    pub joints: FxHashSet<Ref>,
    pub jointed_stale: std::cell::Cell<bool>,
    /// Writes to instances other than the running generation's own so far (in the scene or
    /// outside it), when counted ([`crate::Host::count_scene_writes`]): the engine's test
    /// that results it placed or holds are untouched. Every write path goes through
    /// [`Ctx::check_write`], which counts while this is on.
    pub scene_writes: Option<std::cell::Cell<u64>>,
    /// Bumped by every write to an instance in the scene and by every change of the DOM from
    /// outside the Luau API ([`Ctx::outside_change`]): the spatial query index
    /// ([`Ctx::query_index`]) is used only while this stands where it was built.
    pub query_epoch: std::cell::Cell<u64>,
    /// Set by the first spatial query: until then no index or scan exists to be dated, so
    /// writes skip [`Ctx::note_write`] (a generator that never queries pays nothing for it).
    pub query_watch: std::cell::Cell<bool>,
    /// The running generation parented an instance it created into the scene: from then on
    /// its writes to the instances it created may be writes to the scene.
    pub run_escaped: std::cell::Cell<bool>,
    /// The running generation's targetContainer (none between runs): its instance and the
    /// ones the run created are its own (see [`Ctx::parented`]).
    pub run_container: std::cell::Cell<Ref>,
    /// The running generation's generator module (none between runs): what it carries
    /// (children, attributes) is an input of the run, so using it is no read of the scene.
    pub run_module: std::cell::Cell<Ref>,
    /// Services a generator asked for that the scene lacked, made for the session (not
    /// archivable) until something is put in or set on them ([`Ctx::keep_session_services`]).
    pub session_services: Vec<Ref>,
    /// The spatial index of a world's parts and what the last query without one scanned.
    pub query_index: std::cell::RefCell<crate::query_index::IndexState>,
    /// While a generator runs: the instances its spatial queries do not see
    /// ([`procmodel_script::RunInputs::hidden`]).
    pub query_hidden: Vec<Ref>,
    /// Models whose `ForceGeneration()` was called, in call order.
    pub forced: Vec<Ref>,
    /// ModuleScripts whose Source a script changed, each once, in the order first changed.
    pub code_changed: Vec<Ref>,
    /// `Instance.new` class resolutions (None: not creatable).
    pub new_classes: FxHashMap<Box<str>, Option<NewClass>>,
    /// ModuleScripts loaded from files, for relative string requires.
    pub files: FxHashMap<Ref, std::path::PathBuf>,
    /// Module → the modules whose code required it (recorded at every `require`, so a
    /// front end can find what an edited module file affects).
    pub required_by: FxHashMap<Ref, FxHashSet<Ref>>,
    /// Modules whose code is loading now (their top-level code runs inside a `require`),
    /// with how many loads of each are under way.
    pub loading_modules: FxHashMap<Ref, u32>,
    /// Module → the modules its code required while it loaded: what a run that finds the
    /// module already loaded depends on through it. Forgotten when its code is replaced.
    pub load_requires: FxHashMap<Ref, FxHashSet<Ref>>,
    /// While a generation runs: every module a `require` reached (loaded or cached).
    pub run_requires: Option<FxHashSet<Ref>>,
    /// What the last generation that failed with a script error depended on
    /// ([`Ctx::run_dependencies`]), until taken.
    pub failed_requires: Option<Vec<Ref>>,
    /// The class the engine manages, if it installed one ([`crate::Host::manage`]).
    pub managed: Option<Managed>,
    /// False while the DOM is known to hold no instance of the managed class: the engine
    /// then skips its walk of the whole scene at every step (a script building a large world
    /// between `task.wait`s would pay for it each frame). Set by a scan of a new DOM's tree,
    /// when a script parents such an instance (the only way one enters the tree from Luau:
    /// new instances and clones start unparented), and by any mutable DOM access from
    /// outside the Luau API ([`crate::Host::with_dom_mut`]); never cleared while the DOM
    /// stays.
    pub may_have_managed: bool,
    /// Connections and recorded events (`signals.watch.any` is the write paths' only check).
    pub signals: crate::signal_state::SignalState,
    /// The last instance [`Ctx::check_write`] looked up and whether it was in the scene: a
    /// part's several property writes walk its ancestors once. Cleared by every change of
    /// the tree's shape ([`Ctx::tree_changed`]).
    scene_cache: std::cell::Cell<(Ref, bool)>,
    /// (class, property) pairs whose writes were warned about as not saved (once per VM).
    pub unsaved_warned: FxHashSet<(Ustr, Ustr)>,
    /// Content properties showing an EditableImage (`classes::image`).
    pub(crate) images: ImageLinks,
    /// What scripts output, for `LogService:GetLogHistory` (the newest [`LOG_LINES_KEPT`]
    /// lines; `signals::script_output` keeps it).
    pub(crate) log_history: std::collections::VecDeque<HistoryLine>,
}

/// Roblox's `Enum.MessageType` of a line a script outputs (its value is the enum's).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MessageType {
    Output = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
}

impl MessageType {
    /// The level procmodel's own output shows it at.
    pub fn level(self) -> LogLevel {
        match self {
            MessageType::Output | MessageType::Info => LogLevel::Print,
            MessageType::Warning | MessageType::Error => LogLevel::Warn,
        }
    }
}

/// One line of `LogService:GetLogHistory`.
pub(crate) struct HistoryLine {
    pub(crate) message: Box<str>,
    pub(crate) ty: MessageType,
    /// Seconds of the run's virtual clock (what `os.time` reads).
    pub(crate) timestamp: f64,
}

/// The Content properties that show an EditableImage: (instance, property, the image, the
/// image version its attribute holds), in the order they were set, so flushing is the same
/// every run; and the attribute text last made, by (image uid, version), so an image shown by
/// many instances is encoded once. Kept up to date by `classes::image`.
#[derive(Default)]
pub(crate) struct ImageLinks(
    pub(crate) Vec<(Ref, Ustr, mlua::AnyUserData, u64)>,
    pub(crate) Option<((u64, u64), String)>,
);

impl ImageLinks {
    pub(crate) fn position(&self, r: Ref, key: Ustr) -> Option<usize> {
        self.0.iter().position(|l| l.0 == r && l.1 == key)
    }
}

impl Ctx {
    pub fn new(dom: WeakDom) -> mlua::Result<Ctx> {
        Ok(Ctx {
            destroyed: FxHashSet::default(),
            handles: Handles::default(),
            props: PropCache::default(),
            created: 0,
            instance_limit: None,
            created_bytes: 0,
            output_limit: None,
            terrain_limit: None,
            log: Default::default(),
            log_dropped: 0,
            echo: true,
            files: FxHashMap::default(),
            required_by: FxHashMap::default(),
            loading_modules: FxHashMap::default(),
            load_requires: FxHashMap::default(),
            run_requires: None,
            failed_requires: None,
            new_classes: FxHashMap::default(),
            forced: Vec::new(),
            code_changed: Vec::new(),
            outside_write_locked: false,
            csg_locked: false,
            watch_outside: procmodel_script::WatchOutside::Off,
            touched_outside: std::cell::Cell::new(false),
            read_outside: std::cell::Cell::new(false),
            reads: Default::default(),
            loads: Default::default(),
            loading: std::cell::Cell::new(false),
            jointed: Default::default(),
            joints: Default::default(),
            jointed_stale: std::cell::Cell::new(true),
            scene_writes: None,
            query_epoch: std::cell::Cell::new(0),
            query_watch: std::cell::Cell::new(false),
            run_escaped: std::cell::Cell::new(false),
            run_container: std::cell::Cell::new(Ref::none()),
            run_module: std::cell::Cell::new(Ref::none()),
            session_services: Vec::new(),
            query_index: Default::default(),
            query_hidden: Vec::new(),
            managed: None,
            may_have_managed: false,
            scene_cache: std::cell::Cell::new((Ref::none(), false)),
            unsaved_warned: FxHashSet::default(),
            images: Default::default(),
            log_history: Default::default(),
            signals: Default::default(),
            dom,
        })
    }

    /// An empty DataModel with a Workspace.
    pub fn new_datamodel() -> WeakDom {
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel").with_name("Game"));
        let root = dom.root_ref();
        dom.insert(
            root,
            InstanceBuilder::new("Workspace").with_name("Workspace"),
        );
        dom
    }

    /// The Luau value for `r` (its handle, made on first use).
    pub fn push(&mut self, r: Ref) -> mlua::Result<Value> {
        if let Some(h) = self.handles.find(r) {
            return Ok(Handles::value(h));
        }
        let class = match self.dom.get_by_ref(r) {
            Some(inst) => inst.class,
            None => return Err(mlua::Error::runtime("instance no longer exists")),
        };
        self.handles.prune_if_due(&self.dom);
        Ok(Handles::value(self.handles.make(Instance { r, class })))
    }

    /// A new unparented instance from `builder` (of `class`) with its handle: the instance's
    /// Ref is minted from the handle, so this VM finds the handle again without a map entry.
    pub fn create(&mut self, class: Ustr, builder: InstanceBuilder) -> (Ref, Value) {
        self.handles.prune_if_due(&self.dom);
        let (h, r) = self.handles.mint(class);
        let r = self.dom.insert(Ref::none(), builder.with_referent(r));
        (r, Handles::value(h))
    }

    /// The instance behind a Luau value, if it is a live instance handle of this VM.
    #[inline]
    pub fn instance(&self, v: &Value) -> Option<Instance> {
        let h = crate::ffi::handle_of(v)?;
        let (i, born) = self.handles.get_born(h)?;
        if !born && self.watching_reads() && !self.handles.born_in_run(i.r) {
            self.note_read(i);
        }
        Some(i)
    }

    /// Whether a generator runs whose reads of the scene are still to be noted: every run's
    /// are, whatever watches its writes (a run's provenance records what it read, with a
    /// result cache or without), until one cannot be named ([`Ctx::read_outside`]).
    #[inline]
    fn watching_reads(&self) -> bool {
        (self.run_container.get().is_some() && !self.read_outside.get()) || self.loading.get()
    }

    /// Notes a watched run's use of an instance of the scene that is not its own
    /// ([`Ctx::read_outside`]). The DataModel, services, Folders, Configurations,
    /// ModuleScripts and ProceduralModels are the ways to reach things (`game:GetService`,
    /// `script.Parent.Util`) and do not count ([`only_leads_elsewhere`]); what is reached
    /// through them (a template Model, a StringValue, another model's results) does.
    /// Instances outside the scene (the run's own, its params.Terrain) do not count either.
    #[cold]
    fn note_read(&self, i: Instance) {
        if i.r == self.run_container.get()
            || only_leads_elsewhere(i.class.as_str())
            || self.carried(i.r)
        {
            return;
        }
        if self.in_scene_cached(i.r) {
            // Terrain keeps its voxels beside the DOM while scripts run.
            self.note_named((i.class != "Terrain").then_some(Note::Tree(i.r)));
        }
    }

    /// Notes `note` (None: a read it cannot name) for the module loading now, if any
    /// ([`Ctx::loads`]), and for the running generation ([`Ctx::reads`]).
    fn note_named(&self, note: Option<Note>) {
        if self.loading.get() {
            self.loads.borrow_mut().note(note.clone());
        }
        if self.run_container.get().is_some() && !self.read_outside.get() {
            let named = note.is_some_and(|n| self.reads.borrow_mut().note(n));
            if !named {
                self.read_outside.set(true);
            }
        }
    }

    /// Whether `r` is the running generator's module or under it: what the module carries
    /// is the run's `carried` input (the engine's provenance), not a fact about the scene.
    fn carried(&self, r: Ref) -> bool {
        let module = self.run_module.get();
        if module.is_none() {
            return false;
        }
        let mut cur = r;
        while cur.is_some() {
            if cur == module {
                return true;
            }
            cur = self.dom.get_by_ref(cur).map_or(Ref::none(), |i| i.parent());
        }
        false
    }

    /// Notes a watched run's read of a property or an attribute of `i`. A handle's use already
    /// counts for every instance but the paths ([`Ctx::instance`]); this covers the paths'
    /// own state — `workspace.Gravity`, `Lighting.ClockTime`, a Configuration's or a
    /// Folder's attributes — which a run may act on. Names, parents and references are
    /// finding the way, and a ProceduralModel's properties and attributes are inputs.
    #[inline]
    pub fn note_state_read(&self, i: Instance) {
        if !self.watching_reads() {
            return;
        }
        self.note_path_state_read(i);
    }

    #[cold]
    fn note_path_state_read(&self, i: Instance) {
        if i.class == "ProceduralModel"
            || !only_leads_elsewhere(i.class.as_str())
            || self.own(i.r)
            || self.carried(i.r)
        {
            return;
        }
        if self.in_scene_cached(i.r) {
            self.note_named(Some(Note::Own(i.r)));
        }
    }

    /// Notes a watched run's lookup from `receiver` (FindFirstChild and its kin, GetChildren,
    /// WaitForChild), which found `found`. From an instance of the scene that is not the
    /// run's own, finding nothing, or finding something other than a way to reach things
    /// ([`only_leads_elsewhere`]), is a fact about the scene the run may act on without ever
    /// using a handle — `if ReplicatedStorage:FindFirstChild("Tree") then … else … end` — so
    /// it counts as a read: of the child looked for by name (`how`: [`Lookup::Child`]), of
    /// the receiver's subtree, or one that cannot be named.
    pub fn note_lookup(&self, receiver: Ref, found: &[Ref], how: Lookup<'_>) {
        if !self.watching_reads() || self.own(receiver) || self.carried(receiver) {
            return;
        }
        let leads_elsewhere = |r: &Ref| {
            self.own(*r)
                || self
                    .dom
                    .get_by_ref(*r)
                    .is_some_and(|i| only_leads_elsewhere(i.class.as_str()))
        };
        if (found.is_empty() || !found.iter().all(leads_elsewhere))
            && self.in_scene_cached(receiver)
        {
            self.note_named(match how {
                Lookup::Child(name) => Some(Note::Child(receiver, name.to_owned())),
                // The whole world, or the scene: no run is keyed by all of it.
                Lookup::Subtree
                    if self
                        .dom
                        .get_by_ref(receiver)
                        .is_some_and(|i| matches!(i.class.as_str(), "DataModel" | "Workspace")) =>
                {
                    None
                }
                Lookup::Subtree => Some(Note::Tree(receiver)),
                Lookup::Other => None,
            });
        } else if let (Lookup::Child(_), [f]) = (how, found)
            && self
                .dom
                .get_by_ref(*f)
                .is_some_and(|i| matches!(i.class.as_str(), "Folder" | "Configuration"))
            && !self.own(*f)
            && self.in_scene_cached(*f)
        {
            // A folder found by name may be a flag (`if storage:FindFirstChild("Winter")`):
            // that it is there, as what, is what the run saw.
            self.note_named(Some(Note::Own(*f)));
        }
    }

    /// The modules whose code required `module`, directly or through other modules, as
    /// recorded at every `require` ([`Ctx::required_by`]); `module` itself only when it is
    /// part of a cycle.
    pub fn requirers(&self, module: Ref) -> FxHashSet<Ref> {
        let mut seen: FxHashSet<Ref> = Default::default();
        let mut stack = vec![module];
        while let Some(m) = stack.pop() {
            for &r in self.required_by.get(&m).into_iter().flatten() {
                if seen.insert(r) {
                    stack.push(r);
                }
            }
        }
        seen
    }

    /// The modules a generation of `generator` depended on, given the modules `reached` by
    /// requires during the run: those, the generator's and theirs required while each
    /// loaded, and so on — the same set whichever VM ran it and whatever that VM loaded
    /// before. The generator itself is not listed. Sorted by referent.
    pub fn run_dependencies(&self, generator: Ref, reached: &FxHashSet<Ref>) -> Vec<Ref> {
        let mut seen: FxHashSet<Ref> = reached.clone();
        let mut stack: Vec<Ref> = std::iter::once(generator)
            .chain(reached.iter().copied())
            .collect();
        while let Some(m) = stack.pop() {
            for &r in self.load_requires.get(&m).into_iter().flatten() {
                if seen.insert(r) {
                    stack.push(r);
                }
            }
        }
        seen.remove(&generator);
        let mut out: Vec<Ref> = seen.into_iter().collect();
        out.sort_by_cached_key(|r| r.to_string());
        out
    }

    /// A lookup's answer from `receiver` as a Luau value (the handle of `found`, or nil),
    /// noted as a read of the scene ([`Ctx::note_lookup`]): what FindFirstChild and its kin,
    /// and WaitForChild, return.
    pub fn push_found(
        &mut self,
        receiver: Ref,
        found: Option<Ref>,
        how: Lookup<'_>,
    ) -> mlua::Result<Value> {
        self.note_lookup(receiver, found.as_slice(), how);
        match found {
            Some(r) => self.push(r),
            None => Ok(Value::Nil),
        }
    }

    /// Whether `r` is one of the running generation's own instances while none of them is in
    /// the scene (it parented none there): outside the scene for certain, without a walk.
    #[inline]
    pub fn unplaced_own(&self, r: Ref) -> bool {
        !self.run_escaped.get() && self.handles.born_in_run(r)
    }

    /// `GetFullName`: names from the top ancestor below the DataModel, joined by dots.
    pub fn full_name(&self, r: Ref) -> String {
        // The DataModel's full name is its own name, as `GetFullName` gives it in Roblox
        // (its descendants' paths leave it out).
        if r == self.dom.root_ref() {
            return self.dom.root().name.clone();
        }
        procmodel_dom::full_name(&self.dom, r)
    }

    /// True when `r` is a descendant of the DataModel (in the scene, not an orphan).
    pub fn in_scene(&self, r: Ref) -> bool {
        procmodel_dom::in_scene(&self.dom, r)
    }

    /// Forgets what [`Ctx::check_write`] cached: call on every reparenting, destruction or
    /// outside change of the DOM, and whenever the write lock changes.
    #[inline]
    pub fn tree_changed(&self) {
        self.scene_cache.set((Ref::none(), false));
    }

    /// Counts `bytes` of new DOM data against the run's output quota (error: [`crate::error::OUTPUT_LIMIT`]).
    #[inline]
    /// Charges the text `v` holds (a string, binary string, or the string values of an
    /// attribute map) towards the output limit: what a write or a copy of it adds beyond the
    /// instance itself.
    pub fn charge_text(&mut self, v: &Variant) -> mlua::Result<()> {
        self.charge_bytes(text_bytes(v))
    }

    pub fn charge_bytes(&mut self, bytes: usize) -> mlua::Result<()> {
        self.created_bytes += bytes;
        match self.output_limit {
            Some(limit) if self.created_bytes > limit => Err(mlua::Error::runtime(format!(
                "{}: a run may create at most {} MB of instance data (--max-output-mb)",
                crate::error::OUTPUT_LIMIT,
                limit >> 20
            ))),
            _ => Ok(()),
        }
    }

    /// Whether writes must go through [`Ctx::check_write`]: a generator runs that may not
    /// write to the scene, or whose writes there are watched, or writes to the scene are
    /// counted.
    #[inline]
    pub fn checks_writes(&self) -> bool {
        self.outside_write_locked
            || self.watch_outside != procmodel_script::WatchOutside::Off
            || self.scene_writes.is_some()
    }

    /// Refuses a generator's write to an instance in the scene (SPEC §4 sandboxing), or notes
    /// it for a watched run ([`procmodel_script::WatchOutside`]).
    ///
    /// Every write path calls this (always, not only when [`Ctx::checks_writes`]): it also
    /// tells the spatial query index that the scene changed ([`Ctx::note_write`]).
    #[inline]
    pub fn check_write(&self, r: Ref, what: impl FnOnce() -> String) -> mlua::Result<()> {
        // An instance this run created is outside the scene unless the run parented it
        // there, and that write was checked (its new parent is in the scene).
        if self.query_watch.get() && (!self.own(r) || self.run_escaped.get()) {
            self.note_write();
        }
        if !self.checks_writes() || self.handles.born_in_run(r) {
            return Ok(());
        }
        self.check_write_in_scene(r, what)
    }

    /// A write that may be to the scene: the spatial query index is out of date. (Not
    /// narrowed down by a walk of the instance's ancestors: a script's writes cost one
    /// addition, and a generation's writes to its own instances do not get here.)
    #[inline]
    fn note_write(&self) {
        self.query_epoch.set(self.query_epoch.get() + 1);
    }

    /// Whether `r` is the running generation's own: an instance it created, or its
    /// targetContainer (outside the scene unless it parented one there, `run_escaped`).
    #[inline]
    fn own(&self, r: Ref) -> bool {
        self.handles.born_in_run(r) || r == self.run_container.get()
    }

    /// A change of the DOM from outside the Luau API (anything may have moved): forgets what
    /// the write checks cached and puts the spatial query index out of date.
    pub fn outside_change(&self) {
        self.jointed_stale.set(true);
        self.tree_changed();
        self.note_write();
    }

    /// Ends the running generation's limits and watch (between runs, and around the
    /// scripts that run between a stepped run's frames, nothing is limited or watched).
    pub fn leave_run(&mut self) {
        self.outside_write_locked = false;
        self.csg_locked = false;
        self.watch_outside = procmodel_script::WatchOutside::Off;
        self.query_hidden.clear();
        self.handles.leave_run();
        self.run_container.set(Ref::none());
        self.run_module.set(Ref::none());
        self.reads.get_mut().collect = false;
        self.keep_session_services();
    }

    /// Makes the session services something was put in or set on (a child, a property, an
    /// attribute, a tag) archivable, so a saved file keeps what was written there; the empty
    /// ones stay out of files, as if they had always been there (every service exists in
    /// Roblox).
    pub fn keep_session_services(&mut self) {
        if self.session_services.is_empty() {
            return;
        }
        let archivable = rbx_dom_weak::ustr("Archivable");
        let dom = &mut self.dom;
        self.session_services.retain(|&r| {
            let Some(i) = dom.get_by_ref_mut(r) else {
                return false;
            };
            let written = !i.children().is_empty() || i.properties.keys().any(|&k| k != archivable);
            if written {
                i.properties.remove(&archivable);
            }
            !written
        });
    }

    /// [`Ctx::in_scene`], remembered for the last instance asked about until the tree's
    /// shape changes ([`Ctx::tree_changed`]): a part's several writes walk its ancestors once.
    #[inline]
    fn in_scene_cached(&self, r: Ref) -> bool {
        let (cached, inside) = self.scene_cache.get();
        if cached == r && r.is_some() {
            inside
        } else {
            let inside = self.in_scene(r);
            self.scene_cache.set((r, inside));
            inside
        }
    }

    /// After a run parented `r` to `parent`: when `r` is its own (an instance it created, or
    /// its targetContainer) and it is now in the scene, the run's later writes to its own
    /// instances are scene writes too. (An own parent is outside the scene unless this
    /// already happened.)
    #[inline]
    pub fn parented(&self, r: Ref, parent: Ref) {
        if self.run_escaped.get() || parent.is_none() || !self.own(r) || self.own(parent) {
            return;
        }
        if self.in_scene(parent) {
            self.run_escaped.set(true);
            self.note_write();
        }
    }

    #[inline(never)]
    fn check_write_in_scene(&self, r: Ref, what: impl FnOnce() -> String) -> mlua::Result<()> {
        let inside = self.in_scene_cached(r);
        if inside {
            if let Some(n) = &self.scene_writes {
                n.set(n.get() + 1);
            }
            if self.outside_write_locked {
                return Err(mlua::Error::runtime(format!(
                    "{}: a generator may only modify its targetContainer, and {} is outside it (capability AccessOutsideWrite is not granted)",
                    what(),
                    self.full_name(r)
                )));
            }
            return self.outside_write(what);
        }
        // Outside the scene, an instance that is not the running generation's own may be
        // in results the engine holds (for undo, or replaced): counted too, so held
        // results written to are never taken for intact ones. (Writes by scripts to their
        // own new instances are counted as well; counting too many only costs a check.)
        if r != self.run_container.get()
            && let Some(n) = &self.scene_writes
        {
            n.set(n.get() + 1);
        }
        Ok(())
    }

    /// A watched run changes the scene outside its container (a write, a new service or
    /// Terrain): noted, and refused when the run is to be deferred.
    pub fn outside_write(&self, what: impl FnOnce() -> String) -> mlua::Result<()> {
        self.watched(
            what,
            "writes outside targetContainer reach the scene only from the scene's own VM",
        )
    }

    /// A watched run queries the scene (`workspace:Raycast`, ...): noted, and refused when
    /// the run is to be deferred (a worker's copy of the scene is from before the step, so
    /// its answers could differ from a run on one VM).
    pub fn scene_query(&self, what: impl FnOnce() -> String) -> mlua::Result<()> {
        self.watched(
            what,
            "queries of the scene happen only on the scene's own VM",
        )
    }

    /// What [`procmodel_script::WatchOutside`] does about one access outside the container:
    /// nothing, note it, or note it and refuse it with `refusal`.
    fn watched(&self, what: impl FnOnce() -> String, refusal: &str) -> mlua::Result<()> {
        match self.watch_outside {
            procmodel_script::WatchOutside::Off => Ok(()),
            procmodel_script::WatchOutside::Note => {
                self.touched_outside.set(true);
                Ok(())
            }
            procmodel_script::WatchOutside::Defer => {
                self.touched_outside.set(true);
                Err(mlua::Error::runtime(format!("{}: {refusal}", what())))
            }
        }
    }

    pub fn log(&mut self, level: LogLevel, message: String) {
        if self.echo {
            match level {
                LogLevel::Print => eprintln!("{message}"),
                LogLevel::Warn => eprintln!("warning: {message}"),
            }
        }
        let mut message = message;
        if message.len() > LOG_LINE_BYTES {
            let mut end = LOG_LINE_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            let more = message.len() - end;
            message.truncate(end);
            message.push_str(&format!("… ({more} more bytes)"));
        }
        if self.log.len() == LOG_LINES_KEPT {
            self.log.pop_front();
            self.log_dropped += 1;
        }
        self.log.push_back(LogLine { level, message });
    }

    /// The output captured since the last call, oldest first; when lines were dropped, a
    /// first line says how many.
    pub fn take_log(&mut self) -> Vec<LogLine> {
        let mut out = Vec::with_capacity(self.log.len() + 1);
        if self.log_dropped > 0 {
            out.push(LogLine {
                level: LogLevel::Warn,
                message: format!(
                    "{} earlier lines of output were not kept (the newest {LOG_LINES_KEPT} are)",
                    self.log_dropped
                ),
            });
            self.log_dropped = 0;
        }
        out.extend(self.log.drain(..));
        out
    }
}

/// The engine's [`procmodel_script::ManagedClass`] in the forms the write paths compare.
pub struct Managed {
    pub class: Ustr,
    pub flag: Ustr,
    pub inputs: Vec<Ustr>,
    pub code: Option<Ustr>,
    pub force_method: &'static str,
    pub wait_method: &'static str,
}

/// Registry names of the managed class's methods (`managed.rs` makes them).
pub const MANAGED_WAIT: &str = "procmodel.managed_wait";
pub const MANAGED_FORCE: &str = "procmodel.managed_force";

impl Managed {
    pub fn new(m: &procmodel_script::ManagedClass) -> Managed {
        Managed {
            class: Ustr::from(m.class),
            flag: Ustr::from(m.flag),
            inputs: m.inputs.iter().map(|&p| Ustr::from(p)).collect(),
            code: m.code.map(Ustr::from),
            force_method: m.force_method,
            wait_method: m.wait_method,
        }
    }
}

impl Ctx {
    /// The managed class's flag key, when `class` is the managed class.
    #[inline]
    pub fn managed_flag(&self, class: Ustr) -> Option<Ustr> {
        self.managed
            .as_ref()
            .filter(|m| m.class == class)
            .map(|m| m.flag)
    }

    /// True when the subtree at `root` holds an instance of the managed class.
    pub fn has_managed(&self, dom: &WeakDom, root: Ref) -> bool {
        match &self.managed {
            Some(m) => dom.descendants_of(root).any(|i| i.class == m.class),
            None => false,
        }
    }
}

/// Instance handles. Luau sees an instance as a light userdata whose pointer value is a
/// handle: `(slot + 1) << 32 | key`. One instance is one value while it lives, so `==`,
/// table keys and `rawequal` give identity for free and no Luau object exists per instance.
///
/// Luau places a light userdata table key by the low 32 bits of its value alone: the *key*.
/// A generator run numbers the handles it makes 1, 2, 3, … (a script outside runs has its own
/// count), so the iteration order of a table keyed by the instances a run made depends only
/// on the run — not on the VM's history, which VM of a parallel step ran it, or the slots.
/// Slots of instances that left the DOM (destroyed by the engine, moved into undo history)
/// are reused only for a handle with a larger key than the slot's last one, so the keys of a
/// slot's handles increase, no handle value is ever issued twice, and a stale handle is
/// refused, never aliased.
///
/// Instances this VM creates get a Ref *minted* from their handle (`tag << 64 | handle`,
/// the tag unique to this `Handles`), so finding their handle again needs no map: only
/// instances from elsewhere (loaded files, clones, results moved in from worker VMs) have an
/// entry in `ids`. Refs are never written to files, so minted values change no output.
pub struct Handles {
    slots: Vec<Slot>,
    /// Free slots with the key of the last handle each held (see above), smallest key (then
    /// lowest slot) first. Only a prune frees slots; a heap takes them without re-sorting
    /// the ones already free (a worker VM frees a step's results on every step).
    free: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    ids: FxHashMap<Ref, u64>,
    /// The high 64 bits of every Ref minted here.
    tag: u64,
    live: usize,
    /// Prune when this many handles exist (amortised: twice the live count after a prune).
    prune_at: usize,
    /// The generator run now executing (0: none), stamped on the handles it creates.
    run: u32,
    /// The stamp the next run gets.
    next_run: u32,
    /// The key of the running generation's next handle…
    run_key: u32,
    /// …and of the next handle made outside runs.
    outside_key: u32,
    /// Instances `Clone` made during run `cloned_run` (their Refs are the DOM's, not minted
    /// here): the run's own as much as those it made with `Instance.new`. Forgotten when
    /// another run clones (a run stepped beside it then counts writes to its copies as
    /// writes to the scene's instances, which only costs checks).
    cloned: FxHashSet<Ref>,
    cloned_run: u32,
}

/// 32 bytes: the Ref as two words keeps the slot 8-aligned (a `Ref` is 16-aligned).
#[derive(Clone, Copy)]
struct Slot {
    r: [u64; 2],
    /// None while free.
    class: Option<Ustr>,
    /// The key of the slot's current (or, while free, last) handle.
    key: u32,
    /// The run that created the instance with a Ref minted here ([`Handles::run`] then; 0
    /// for a handle to an instance made elsewhere; it fits in the padding).
    born: u32,
}

impl Default for Handles {
    fn default() -> Handles {
        static NEXT_TAG: AtomicU64 = AtomicU64::new(1);
        // "pm" in the top bits keeps minted Refs apart from `Ref::new`'s random ones in
        // practice; the counter keeps every VM's apart for certain.
        let tag = 0x706d_0000_0000_0000 | NEXT_TAG.fetch_add(1, Ordering::Relaxed);
        Handles {
            slots: Vec::new(),
            free: std::collections::BinaryHeap::new(),
            ids: FxHashMap::default(),
            tag,
            live: 0,
            prune_at: 4096,
            run: 0,
            next_run: 1,
            run_key: 1,
            outside_key: 1,
            cloned: FxHashSet::default(),
            cloned_run: 0,
        }
    }
}

impl Handles {
    fn value(h: u64) -> Value {
        crate::ffi::handle_value(h)
    }

    /// The key of the next handle: the running generation's count, or the count outside
    /// runs. Past `u32::MAX` handles in one count the key stays there (every slot then is a
    /// new one: no handle repeats).
    fn next_key(&mut self) -> u32 {
        let count = match self.run {
            0 => &mut self.outside_key,
            _ => &mut self.run_key,
        };
        let key = *count;
        *count = count.saturating_add(1);
        key
    }

    /// A slot holding `r` and `class` — a free one whose last key is below the new handle's
    /// (the lowest such slot), else a new one; returns the handle. `born`: the run that
    /// created the instance (0: none, or not with a Ref minted here).
    fn occupy(&mut self, r: u128, class: Ustr, born: u32) -> u64 {
        let key = self.next_key();
        let reused = match self.free.peek() {
            Some(&std::cmp::Reverse((last, slot))) if last < key => {
                self.free.pop();
                Some(slot)
            }
            _ => None,
        };
        let slot = match reused {
            Some(s) => s,
            None => {
                self.slots.push(Slot {
                    r: [0; 2],
                    class: None,
                    key: 0,
                    born: 0,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[slot as usize];
        s.r = split(r);
        s.class = Some(class);
        s.key = key;
        s.born = born;
        self.live += 1;
        (slot as u64 + 1) << 32 | key as u64
    }

    /// The slot and key of handle `h`.
    fn parts(h: u64) -> Option<(usize, u32)> {
        let slot = (h >> 32).checked_sub(1)?;
        Some((slot as usize, h as u32))
    }

    /// A handle for an instance whose Ref was not minted here.
    fn make(&mut self, inst: Instance) -> u64 {
        let h = self.occupy(ref_bits(inst.r), inst.class, 0);
        self.ids.insert(inst.r, h);
        h
    }

    /// A handle and the Ref minted from it, for a new instance of `class`.
    fn mint(&mut self, class: Ustr) -> (u64, Ref) {
        // The slot is taken first: the Ref depends on the handle.
        let h = self.occupy(0, class, self.run);
        let r = (self.tag as u128) << 64 | h as u128;
        if let Some((slot, _)) = Self::parts(h) {
            self.slots[slot].r = split(r);
        }
        (h, Ref::some(r))
    }

    /// A new stamp for a generator run ([`Handles::set_run`] makes it current).
    pub fn new_run(&mut self) -> u32 {
        let stamp = self.next_run;
        self.next_run = self.next_run.checked_add(1).unwrap_or(1);
        stamp
    }

    /// The run now executing (0 outside runs): the instances it creates carry its stamp.
    /// `next_key`: the key its next handle gets — 1 when it starts, [`Handles::run_key`]
    /// as it was when it last stopped when it resumes (ignored for stamp 0; see
    /// [`Handles::leave_run`]).
    pub fn set_run(&mut self, stamp: u32, next_key: u32) {
        self.run = stamp;
        if stamp != 0 {
            self.run_key = next_key.max(1);
        }
    }

    /// Outside any run again: the instances made from now on belong to no generation.
    pub fn leave_run(&mut self) {
        self.run = 0;
    }

    /// The key the running generation's next handle gets (to resume it with).
    pub fn run_key(&self) -> u32 {
        self.run_key
    }

    /// Whether `r` was created by this VM during the run now executing (a Ref minted here
    /// whose slot carries that run's stamp: no hashing, no walk; or a copy the run's
    /// `Clone` made).
    #[inline]
    pub fn born_in_run(&self, r: Ref) -> bool {
        let bits = ref_bits(r);
        if (bits >> 64) as u64 == self.tag {
            self.get_born(bits as u64).is_some_and(|(_, born)| born)
        } else {
            self.run != 0
                && self.cloned_run == self.run
                && !self.cloned.is_empty()
                && self.cloned.contains(&r)
        }
    }

    /// Whether a generator run is executing.
    pub fn in_run(&self) -> bool {
        self.run != 0
    }

    /// Notes instances the running generation's `Clone` made ([`Handles::born_in_run`]).
    pub fn note_cloned(&mut self, copies: impl IntoIterator<Item = Ref>) {
        if self.run == 0 {
            return;
        }
        if self.cloned_run != self.run {
            self.cloned.clear();
            self.cloned_run = self.run;
        }
        self.cloned.extend(copies);
    }

    /// The live handle of `r`, if it has one.
    fn find(&self, r: Ref) -> Option<u64> {
        let bits = ref_bits(r);
        if (bits >> 64) as u64 == self.tag {
            let h = bits as u64;
            if self.get(h).is_some_and(|i| i.r == r) {
                return Some(h);
            }
        }
        self.ids.get(&r).copied()
    }

    /// [`Handles::get`], and whether the running generation created the instance: a Ref
    /// minted here whose slot carries that run's stamp (the test [`Handles::born_in_run`]
    /// makes), read from the same slot.
    #[inline]
    fn get_born(&self, h: u64) -> Option<(Instance, bool)> {
        let (slot, key) = Self::parts(h)?;
        let s = self.slots.get(slot)?;
        if s.key != key {
            return None;
        }
        // Only minted Refs' slots carry a run (`occupy`).
        let born = self.run != 0 && s.born == self.run;
        Some((
            Instance {
                r: Ref::some(join(s.r)),
                class: s.class?,
            },
            born,
        ))
    }

    fn get(&self, h: u64) -> Option<Instance> {
        let (slot, key) = Self::parts(h)?;
        let s = self.slots.get(slot)?;
        if s.key != key {
            return None;
        }
        Some(Instance {
            r: Ref::some(join(s.r)),
            class: s.class?,
        })
    }

    /// The instances live handles lead to, in slot order.
    pub fn live(&self) -> Vec<(Ref, Ustr)> {
        self.slots
            .iter()
            .filter_map(|s| s.class.map(|c| (Ref::some(join(s.r)), c)))
            .collect()
    }

    /// Makes the handle of `from` lead to `to` (a service of another copy of the scene),
    /// unless `to` has a handle of its own or `from` none (then nothing changes).
    pub fn retarget(&mut self, from: Ref, to: Ref) -> bool {
        if self.find(to).is_some() {
            return false;
        }
        let Some(h) = self.find(from) else {
            return false;
        };
        let Some((slot, _)) = Self::parts(h) else {
            return false;
        };
        self.slots[slot].r = split(ref_bits(to));
        self.ids.remove(&from);
        self.ids.insert(to, h);
        true
    }

    fn prune_if_due(&mut self, dom: &WeakDom) {
        if self.live >= self.prune_at {
            self.prune(dom);
        }
    }

    /// Frees the handles of instances no longer in `dom`. Slots are handed out again
    /// smallest last key first, then lowest slot first.
    pub fn prune(&mut self, dom: &WeakDom) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.class.is_some() {
                let r = Ref::some(join(s.r));
                if dom.get_by_ref(r).is_none() {
                    self.ids.remove(&r);
                    s.class = None;
                    self.free.push(std::cmp::Reverse((s.key, i as u32)));
                    self.live -= 1;
                }
            }
        }
        self.prune_at = (self.live * 2).max(4096);
    }

    /// Handles currently held.
    pub fn len(&self) -> usize {
        self.live
    }
}

fn split(v: u128) -> [u64; 2] {
    [v as u64, (v >> 64) as u64]
}

fn join(v: [u64; 2]) -> u128 {
    (v[1] as u128) << 64 | v[0] as u128
}

/// The value of a Ref (0 for none). rbx_types keeps it private; `Hash` hands it over intact
/// (`Option<NonZeroU128>` hashes its discriminant, then the `u128`).
pub fn ref_bits(r: Ref) -> u128 {
    struct Capture(u128);
    impl Hasher for Capture {
        fn write(&mut self, _: &[u8]) {}
        fn write_u128(&mut self, v: u128) {
            self.0 = v;
        }
        fn finish(&self) -> u64 {
            0
        }
    }
    let mut c = Capture(0);
    r.hash(&mut c);
    c.0
}

// The run context lives in the VM's app data as a `RefCell<Ctx>`, installed once by
// [`install`] when the host is made and never replaced or removed while the VM lives (no
// other code names that app-data type). mlua boxes app data, so the cell's address is stable
// for the VM's life: [`cell`] hands out references tied to the `Lua`, and the raw C callbacks
// keep the address as a light-userdata upvalue ([`cell_upvalue`]), skipping mlua's app-data
// lookup (~100 instructions a call) on every property write and read.

/// Installs the run context of a new VM.
pub fn install(lua: &Lua, c: Ctx) {
    lua.set_app_data(RefCell::new(c));
}

/// The run context's cell; errors (never panics) when it is missing.
pub fn cell(lua: &Lua) -> mlua::Result<&RefCell<Ctx>> {
    // SAFETY: the cell is never replaced or removed while the VM lives (see above).
    unsafe { crate::ffi::pinned_app_data::<RefCell<Ctx>>(lua) }
        .map_err(|_| busy())?
        .ok_or_else(|| mlua::Error::runtime("internal: no run context"))
}

/// The cell's address, for a raw callback's upvalue.
pub fn cell_value(lua: &Lua) -> mlua::Result<Value> {
    Ok(crate::ffi::address_value(cell(lua)?))
}

/// Borrows the run context mutably; errors (never panics) when it is missing or busy.
pub fn ctx(lua: &Lua) -> mlua::Result<RefMut<'_, Ctx>> {
    cell(lua)?.try_borrow_mut().map_err(|_| busy())
}

/// Borrows the run context shared.
pub fn ctx_ref(lua: &Lua) -> mlua::Result<std::cell::Ref<'_, Ctx>> {
    cell(lua)?.try_borrow().map_err(|_| busy())
}

/// After a call from Luau that may have fired events (a property write, an instance method,
/// `Instance.new` with a parent): in a place whose events are immediate, their handlers run
/// now, before the call returns to the script (`SignalState::immediate`).
#[inline]
pub fn after_call(lua: &Lua) -> mlua::Result<()> {
    let driver = ctx_ref(lua)?.signals.immediate_pending();
    match driver {
        Some(run) => run(lua),
        None => Ok(()),
    }
}

const BUSY: &str = "internal: run context is busy";

fn busy() -> mlua::Error {
    mlua::Error::runtime(BUSY)
}

/// The raw callbacks borrow the run context through an upvalue set from [`cell_value`].
impl crate::ffi::RawContext for Ctx {
    const BUSY: &'static str = BUSY;
}

/// What `Instance.new` needs to know about a class, resolved once per class name.
#[derive(Clone, Copy)]
pub struct NewClass {
    pub class: Ustr,
    /// The name a new one gets: its class's, but for the classes Roblox names otherwise.
    pub name: &'static str,
    /// Modern Studio parts are 4×1×2 (the database keeps the legacy 4×1.2×2).
    pub size: Option<rbx_types::Vector3>,
}

/// What a lookup from an instance answers ([`Ctx::note_lookup`]).
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a> {
    /// Its first child with this name (FindFirstChild, WaitForChild).
    Child(&'a str),
    /// Something of its subtree (its children, descendants, a class among them).
    Subtree,
    /// Something a read cannot name: one of its ancestors, the tags of the whole scene.
    Other,
}

/// Whether using an instance of `class` tells a script nothing but where other instances are:
/// the DataModel, a service, a Folder, a Configuration, a ModuleScript (whose Source a
/// generator's inputs already cover) or a ProceduralModel (a module kept under its model
/// reaches the model as `script.Parent`; the model's attributes and Size are its inputs).
/// See [`Ctx::note_read`].
fn only_leads_elsewhere(class: &str) -> bool {
    matches!(
        class,
        "DataModel" | "Workspace" | "Folder" | "Configuration" | "ModuleScript" | "ProceduralModel"
    ) || procmodel_dom::is_service(class)
}

impl NewClass {
    /// The class `name` if scripts may create it (None: not creatable, or a service).
    pub fn resolve(name: &str) -> Option<NewClass> {
        let db = procmodel_dom::db();
        let creatable = db.classes.get(name).is_some_and(|c| {
            !c.tags.contains(&rbx_reflection::ClassTag::NotCreatable)
                && !c.tags.contains(&rbx_reflection::ClassTag::Service)
        });
        if !creatable {
            return None;
        }
        let size = match procmodel_dom::db_default(name, "Size") {
            Some(Variant::Vector3(v)) if procmodel_dom::is_a(name, "BasePart") && v.y == 1.2 => {
                Some(rbx_types::Vector3::new(v.x, 1.0, v.z))
            }
            _ => None,
        };
        let class = Ustr::from(name);
        Some(NewClass {
            class,
            name: default_name(class.as_str()),
            size,
        })
    }
}

/// The name Roblox gives a new instance of `class`: the class's own, but "Value" for the
/// value objects (the reference's RayValue page: `Instance.new("RayValue")` makes "a new
/// RayValue named \"Value\"", "like all -Value objects"), and the names the classic
/// clothing guide shows for a newly inserted ShirtGraphic ("Shirt Graphic") and Shirt or
/// Pants ("Clothing").
fn default_name(class: &'static str) -> &'static str {
    match class {
        "ShirtGraphic" => "Shirt Graphic",
        "Shirt" | "Pants" => "Clothing",
        c if procmodel_dom::is_a(c, "ValueBase") => "Value",
        c => c,
    }
}

/// The bytes of text `v` holds ([`Ctx::charge_text`]).
pub fn text_bytes(v: &Variant) -> usize {
    match v {
        Variant::String(s) => s.len(),
        Variant::BinaryString(b) => AsRef::<[u8]>::as_ref(b).len(),
        Variant::Attributes(a) => a.iter().map(|(name, v)| name.len() + text_bytes(v)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Creates `n` parts in a new run of `c`, returning their handles.
    fn run_creating(c: &mut Ctx, n: usize) -> Vec<u64> {
        let part = Ustr::from("Part");
        let stamp = c.handles.new_run();
        c.handles.set_run(stamp, 1);
        let hs = (0..n)
            .map(|_| {
                let (_, v) = c.create(part, InstanceBuilder::new(part));
                crate::ffi::handle_of(&v).unwrap()
            })
            .collect();
        c.handles.leave_run();
        hs
    }

    #[test]
    fn a_runs_handles_hash_the_same_on_any_vm() {
        // Luau places a light userdata key by the low 32 bits of its value: the keys of a
        // run's handles must not depend on what the VM did before.
        let mut fresh = Ctx::new(Ctx::new_datamodel()).unwrap();
        let mut used = Ctx::new(Ctx::new_datamodel()).unwrap();
        let part = Ustr::from("Part");
        for _ in 0..37 {
            used.create(part, InstanceBuilder::new(part));
        }
        let earlier = run_creating(&mut used, 500);
        // Its results are destroyed: their slots come free.
        for &h in &earlier {
            let r = used.instance(&Handles::value(h)).unwrap().r;
            used.dom.destroy(r);
        }
        used.handles.prune(&used.dom);
        let a = run_creating(&mut fresh, 300);
        let b = run_creating(&mut used, 300);
        let keys = |hs: &[u64]| hs.iter().map(|&h| h as u32).collect::<Vec<_>>();
        assert_eq!(keys(&a), keys(&b));
        assert_eq!(keys(&a), (1..=300).collect::<Vec<u32>>());
        // Every handle is new, and the stale ones are refused.
        let all: FxHashSet<u64> = earlier.iter().chain(&b).copied().collect();
        assert_eq!(all.len(), earlier.len() + b.len(), "no handle issued twice");
        assert!(
            b.iter().any(|&h| (h >> 32) <= 537),
            "freed slots are reused"
        );
        for &h in &earlier {
            assert!(used.instance(&Handles::value(h)).is_none(), "stale: {h:#x}");
        }
    }

    #[test]
    fn a_resumed_run_continues_its_keys_and_scripts_outside_runs_have_their_own() {
        let mut c = Ctx::new(Ctx::new_datamodel()).unwrap();
        let part = Ustr::from("Part");
        let key = |c: &mut Ctx| {
            let (_, v) = c.create(part, InstanceBuilder::new(part));
            crate::ffi::handle_of(&v).unwrap() as u32
        };
        let (first, second) = (c.handles.new_run(), c.handles.new_run());
        c.handles.set_run(first, 1);
        assert_eq!((key(&mut c), key(&mut c)), (1, 2));
        let resume_first = c.handles.run_key();
        c.handles.set_run(second, 1);
        assert_eq!(key(&mut c), 1, "another run counts from 1");
        c.handles.leave_run();
        let outside = key(&mut c);
        c.handles.set_run(first, resume_first);
        assert_eq!(key(&mut c), 3, "the first run goes on where it stopped");
        c.handles.leave_run();
        assert_eq!(key(&mut c), outside + 1);
    }

    #[test]
    fn ref_bits_reads_the_value() {
        for v in [1u128, 0xdead_beef, u128::MAX, 1 << 64, (7 << 64) | 9] {
            assert_eq!(ref_bits(Ref::some(v)), v);
        }
        assert_eq!(ref_bits(Ref::none()), 0);
        let r = Ref::new();
        assert_eq!(Ref::some(ref_bits(r)), r);
    }

    #[test]
    fn minted_refs_find_their_handle_and_stale_ones_get_a_new_one() {
        let mut c = Ctx::new(Ctx::new_datamodel()).unwrap();
        let part = Ustr::from("Part");
        let (r, v) = c.create(part, InstanceBuilder::new(part));
        assert_eq!(c.push(r).unwrap(), v);
        assert!(c.handles.ids.is_empty(), "a minted Ref needs no map entry");
        assert_eq!(c.instance(&v).map(|i| i.r), Some(r));

        // An instance from elsewhere gets a map entry, and the same handle every time.
        let root = c.dom.root_ref();
        let loaded = c.dom.insert(root, InstanceBuilder::new("Folder"));
        let lv = c.push(loaded).unwrap();
        assert_eq!(c.push(loaded).unwrap(), lv);
        assert_eq!(c.handles.ids.len(), 1);

        // The part leaves this DOM: a prune frees its slot and the handle goes stale. When it
        // comes back (as undo does), it gets a fresh handle; the slot's next instance gets
        // a larger key, so no handle is ever aliased.
        let mut elsewhere = WeakDom::new(InstanceBuilder::new("Folder"));
        let dest = elsewhere.root_ref();
        c.dom.transfer(r, &mut elsewhere, dest);
        c.handles.prune(&c.dom);
        assert!(c.instance(&v).is_none());
        let (r2, v2) = c.create(part, InstanceBuilder::new(part));
        assert_ne!(v2, v);
        elsewhere.transfer(r, &mut c.dom, root);
        let back = c.push(r).unwrap();
        assert!(back != v && back != v2);
        assert_eq!(c.instance(&back).map(|i| i.r), Some(r));
        assert_eq!(c.instance(&v2).map(|i| i.r), Some(r2));
        assert_eq!(
            c.handles.len(),
            3,
            "the folder, the new part and the returned one"
        );
    }
}
