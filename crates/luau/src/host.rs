//! The Luau VM host: builds a sandboxed VM with the Roblox globals, the watchdog-driven
//! timeout, the memory limit, and per-chunk environments (`script`, `require`, `print`).

use crate::context::{Ctx, LogLevel, ctx};
use crate::error::HostError;
use crate::watchdog::Watchdog;
use mlua::chunk::Compiler;
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Thread, Value, VmState};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{Ref, Variant};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use procmodel_script::{
    DEFAULT_MAX_INSTANCES, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_TERRAIN_BYTES, FrameHook,
    HostConfig, MEMORY_MESSAGE, RUN_LIMIT_MESSAGE, TIMEOUT_MESSAGE,
};

/// The globals whose fields change while scripts run (Roblox's list): Luau's compiler must
/// not turn `workspace.Part.Position` into an import resolved once at load time.
const MUTABLE_GLOBALS: [&str; 7] = [
    "game",
    "Game",
    "workspace",
    "Workspace",
    "script",
    "shared",
    "plugin",
];

/// A Luau VM with the Roblox environment and one DataModel. A cheap handle: the VM's state
/// (DOM, scheduler, watchdog, limits) lives in the VM's app data, so code inside this crate
/// that only has the `Lua` (a callback) can make a `Host` again with [`Host::from_lua`].
#[derive(Clone)]
pub struct Host {
    pub(crate) lua: Lua,
}

/// Host-wide state kept in app data.
pub(crate) struct HostCore {
    pub(crate) watchdog: Watchdog,
    pub(crate) config: HostConfig,
    pub(crate) pause: Function,
    pub(crate) control: Table,
}

impl Host {
    /// A host over a fresh DataModel (Workspace, ServerStorage).
    pub fn new(config: HostConfig) -> Result<Host, HostError> {
        let mut dom = Ctx::new_datamodel();
        let root = dom.root_ref();
        dom.insert(
            root,
            InstanceBuilder::new("ServerStorage").with_name("ServerStorage"),
        );
        Host::with_dom(config, dom)
    }

    /// A host over an existing DataModel tree.
    pub fn with_dom(config: HostConfig, dom: WeakDom) -> Result<Host, HostError> {
        // The heap in an arena of its own: a table keyed by tables or functions iterates in
        // the same order on every run of the same work (its keys' addresses repeat).
        let lua = crate::ffi::with_arena_heap(|| {
            Lua::new_with(
                StdLib::ALL_SAFE ^ StdLib::OS,
                LuaOptions::new().catch_rust_panics(true),
            )
        })
        .map_err(crate::error::vm)?;
        // Luau's native code generator, as Roblox and Lune use it: loaded chunks are compiled to
        // machine code where the CPU is supported (same results as the interpreter).
        lua.enable_jit(config.native_code);
        // As in Roblox, `Vector3.new(x, y, z)` compiles to Luau's native vector constructor.
        // Optimisation level 1, as Studio (where ProceduralModel generators run) compiles
        // scripts: level 2 inlines local functions, so `debug.info`/`debug.traceback` would see
        // fewer frames than Studio shows (libraries key state by call site). A script asks for
        // more with `--!optimize 2` or `--!native`, which the compiler honours, as in Roblox.
        lua.set_compiler(
            Compiler::new()
                .set_optimization_level(1)
                .set_debug_level(1)
                .set_vector_ctor("Vector3.new")
                .set_vector_type("Vector3")
                // As in Roblox: paths through these globals are read when the code runs.
                // Otherwise Luau resolves `game.Lighting.ClockTime` once, as the chunk
                // loads (running the instance's `__index` then), and keeps that value.
                .set_mutable_globals(MUTABLE_GLOBALS),
        );
        // mlua's own hard limit would make every allocation from Rust a protected call (a
        // pcall per userdata: measured ~2k instructions each), so the limit is enforced here.
        let watchdog = Watchdog::new();
        let probe = watchdog.probe();
        let limit = config.memory_limit;
        // Long native work (solid modelling) reads the same flags.
        lua.set_app_data(watchdog.probe());
        lua.set_interrupt(move |lua| {
            if let Some(message) = probe.stop_message() {
                return Err(mlua::Error::runtime(crate::error::at_running_code(
                    lua, message,
                )));
            }
            if probe.take_budget_spent()
                && let Some(core) = lua.app_data_ref::<HostCore>()
            {
                // The frame budget ran out: the next params:Pause() yields to the next frame.
                core.control.raw_set("requested", true)?;
            }
            if limit > 0 && lua.used_memory() > limit {
                return Err(mlua::Error::runtime(crate::error::at_running_code(
                    lua,
                    &format!("{MEMORY_MESSAGE} ({} MiB, --max-memory-mb)", limit >> 20),
                )));
            }
            Ok(VmState::Continue)
        });
        crate::ffi::install_fast_interrupt(&lua, watchdog.probe(), limit)
            .map_err(crate::error::vm)?;
        let mut c = Ctx::new(dom).map_err(crate::error::vm)?;
        c.instance_limit = config.instance_limit;
        c.output_limit = config.max_output_bytes;
        c.terrain_limit = config.max_terrain_bytes;
        c.echo = config.echo_output;
        crate::context::install(&lua, c);
        let (pause, control) =
            install_globals(&lua, watchdog.handle(), config.timeout).map_err(crate::error::vm)?;
        // The hot callbacks read their arguments' stack slots in place when Luau's layouts are
        // the ones they expect (checked against the C API here; the C API otherwise).
        procmodel_luau_types::tagged::enable_direct_reads(&lua);
        if let Some(mut s) = lua.app_data_mut::<crate::sched::Sched>() {
            s.max_wait = config.max_wait;
        }
        lua.sandbox(true).map_err(crate::error::vm)?;
        // `_G` and `shared` are per script (crate::env), never a table shared between scripts.
        crate::env::seal(&lua);
        lua.set_app_data(HostCore {
            watchdog,
            config,
            pause,
            control,
        });
        Ok(Host { lua })
    }

    /// A handle to the host that owns `lua`.
    pub fn from_lua(lua: &Lua) -> Host {
        Host { lua: lua.clone() }
    }

    pub(crate) fn core(&self) -> mlua::AppDataRef<'_, HostCore> {
        self.lua
            .app_data_ref::<HostCore>()
            .expect("host core installed")
    }

    /// The host's limits.
    pub fn config(&self) -> HostConfig {
        self.core().config.clone()
    }

    /// The underlying VM (for bindings and tests).
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// Runs `f` with the DOM borrowed.
    pub fn with_dom_ref<R>(&self, f: impl FnOnce(&WeakDom) -> R) -> R {
        self.flush_terrain(false);
        let c = crate::context::ctx_ref(&self.lua).expect("context installed");
        f(&c.dom)
    }

    /// Runs `f` with the DOM mutably borrowed.
    pub fn with_dom_mut<R>(&self, f: impl FnOnce(&mut WeakDom) -> R) -> R {
        self.flush_terrain(true);
        let mut c = ctx(&self.lua).expect("context installed");
        // `f` may add anything, and move anything.
        c.may_have_managed = true;
        c.outside_change();
        f(&mut c.dom)
    }

    /// Writes the voxels scripts changed back into their Terrain instances (`SmoothGrid`),
    /// and changed EditableMeshes into the MeshParts showing them, before the DOM is read
    /// from outside; `forget` drops the decoded voxels too, before the DOM is changed or
    /// replaced from outside.
    fn flush_terrain(&self, forget: bool) {
        // Fails only if the context is borrowed, which these entry points never do.
        let _ = crate::classes::flush_terrain(&self.lua, forget);
        // The same for MeshParts showing an EditableMesh that changed since (their links
        // outlive changes to the DOM; `replace_dom` and `take_dom` drop them).
        let _ = crate::classes::flush_meshes(&self.lua, false);
        let _ = crate::classes::flush_images(&self.lua, false);
    }

    /// False when the DOM is known to hold no instance of the managed class (see
    /// `Ctx::may_have_managed`).
    pub fn may_have_managed(&self) -> bool {
        crate::context::ctx_ref(&self.lua).map_or(true, |c| c.may_have_managed)
    }

    /// Installs the rules of the class the engine manages ([`procmodel_script::ManagedClass`]):
    /// script writes to its inputs and attributes and new instances of it set its flag,
    /// and its force and wait methods exist. One class per host; a second call replaces it.
    pub fn manage(&self, class: procmodel_script::ManagedClass) -> Result<(), HostError> {
        crate::managed::install(&self.lua, &class).map_err(crate::error::vm)
    }

    /// Runs over `dom` from now on (a long-lived worker VM given a fresh copy of the scene):
    /// handles of instances not in it are refused from now on, per-tree state is reset, and
    /// required modules stay cached (the caller invalidates those whose Source changed).
    pub fn replace_dom(&self, dom: WeakDom) {
        self.flush_terrain(true);
        let _ = crate::classes::flush_meshes(&self.lua, true);
        let _ = crate::classes::flush_images(&self.lua, true);
        let mut c = ctx(&self.lua).expect("context installed");
        c.may_have_managed = c.has_managed(&dom, dom.root_ref());
        c.outside_change();
        let mut old = std::mem::replace(&mut c.dom, dom);
        keep_own_instances(&mut c, &mut old);
        c.destroyed.clear();
        c.files.clear();
        c.forced.clear();
        c.created = 0;
        c.created_bytes = 0;
        let Ctx { handles, dom, .. } = &mut *c;
        handles.prune(dom);
    }

    /// Takes the DOM out of the host (leaving an empty DataModel), e.g. to move a worker's
    /// results into the main scene.
    pub fn take_dom(&self) -> WeakDom {
        self.flush_terrain(true);
        let _ = crate::classes::flush_meshes(&self.lua, true);
        let _ = crate::classes::flush_images(&self.lua, true);
        let mut c = ctx(&self.lua).expect("context installed");
        c.may_have_managed = false;
        c.outside_change();
        std::mem::replace(&mut c.dom, Ctx::new_datamodel())
    }

    /// Marks `destroyed` (and their descendants) destroyed, as `Destroy` does: their Parent
    /// is locked while references to them still read. `gone` are instances removed from the
    /// DOM since; they are forgotten.
    pub fn mark_destroyed(&self, destroyed: &[Ref], gone: &[Ref]) {
        let mut c = ctx(&self.lua).expect("context installed");
        for r in gone {
            c.destroyed.remove(r);
        }
        c.destroyed.extend(destroyed.iter().copied());
    }

    /// Starts counting writes to instances in the scene ([`Host::scene_writes`]).
    pub fn count_scene_writes(&self) {
        if let Ok(mut c) = ctx(&self.lua) {
            c.scene_writes = Some(std::cell::Cell::new(0));
        }
    }

    /// Writes Luau code made since [`Host::count_scene_writes`] to instances other than a
    /// running generation's own — in the scene, or outside it (results held for undo) — (None
    /// before it, or when the VM is gone).
    pub fn scene_writes(&self) -> Option<u64> {
        crate::context::ctx_ref(&self.lua)
            .ok()
            .and_then(|c| c.scene_writes.as_ref().map(std::cell::Cell::get))
    }

    /// Takes the captured print/warn output (see [`crate::context::Ctx::take_log`]).
    pub fn take_log(&self) -> Vec<crate::LogLine> {
        ctx(&self.lua).map(|mut c| c.take_log()).unwrap_or_default()
    }

    /// Adds lines another VM captured after this VM's own (no echo: that VM echoed them).
    pub fn push_log(&self, lines: Vec<crate::LogLine>) {
        if let Ok(mut c) = ctx(&self.lua) {
            let echo = std::mem::replace(&mut c.echo, false);
            for line in lines {
                c.log(line.level, line.message);
            }
            c.echo = echo;
        }
    }

    /// Restricts string `require`s to files under `root`.
    pub fn set_require_root(&mut self, root: &Path) {
        self.lua
            .set_app_data(crate::globals::RequireRoot(root.to_path_buf()));
    }

    /// Creates a ModuleScript holding `source` under `parent` and returns its Ref.
    pub fn add_module_script(
        &self,
        parent: Ref,
        name: &str,
        source: &str,
        file: Option<&Path>,
    ) -> Ref {
        let mut c = ctx(&self.lua).expect("context installed");
        let r = c.dom.insert(
            parent,
            InstanceBuilder::new("ModuleScript")
                .with_name(name)
                .with_property("Source", Variant::String(source.to_owned())),
        );
        if let Some(f) = file {
            c.files.insert(r, f.to_path_buf());
        }
        r
    }

    /// Records that the Source of `module` was read from `file` (errors name the file;
    /// relative string requires resolve beside it).
    pub fn set_module_file(&self, module: Ref, file: &Path) {
        let mut c = ctx(&self.lua).expect("context installed");
        c.files.insert(module, file.to_path_buf());
    }

    /// Runs a function in a new thread to completion under the scheduler and the watchdog,
    /// then ends the threads it leaked. Returns the results and how many threads were ended.
    pub fn run_thread(&self, f: Function, args: MultiValue) -> mlua::Result<(MultiValue, usize)> {
        self.run_thread_with(f, args, false)
    }

    pub(crate) fn run_thread_with(
        &self,
        f: Function,
        args: MultiValue,
        frames: bool,
    ) -> mlua::Result<(MultiValue, usize)> {
        let th: Thread = crate::env::new_thread(&self.lua, f)?;
        let hooks = self.watchdog_hooks();
        let result = crate::task::run_to_completion(&self.lua, &th, args, &hooks, frames);
        let group = match &result {
            Ok((g, _)) => Some(*g),
            Err(_) => self
                .lua
                .app_data_ref::<crate::sched::Sched>()
                .map(|s| s.last_group()),
        };
        if frames && result.is_ok() {
            // A script's `game.Close` handlers outlive its connections, to run at the close.
            crate::classes::services::keep_close_handlers(&self.lua)?;
        }
        let leaked = match group {
            Some(g) => crate::task::end_leaked(&self.lua, g).unwrap_or(0),
            None => 0,
        };
        if result.is_err() {
            // After a memory-limit error the heap must be collected before the VM is reused.
            let _ = crate::ffi::collect_garbage(&self.lua);
        }
        result.map(|(_, v)| (v, leaked))
    }

    /// A `Send` handle that stops this VM's running Luau code from another thread.
    pub fn canceller(&self) -> crate::watchdog::Canceller {
        self.core().watchdog.canceller()
    }

    /// What run drivers call around each resumption: arm the watchdog with this host's
    /// timeout and run-time cap before Luau runs, disarm it when Luau yields or returns.
    pub(crate) fn watchdog_hooks(&self) -> impl Fn(bool) + use<> {
        let core = self.core();
        let (timeout, run_limit) = (core.config.timeout, core.config.run_limit);
        let probe = core.watchdog.handle();
        move |arm: bool| {
            if arm {
                probe.arm(timeout, run_limit);
            } else {
                probe.disarm();
            }
        }
    }

    /// Requires a ModuleScript instance from Rust (runs it under the scheduler).
    pub fn require(&self, module: Ref) -> mlua::Result<Value> {
        let require: Function = self
            .lua
            .named_registry_value("procmodel.require_instance")?;
        let ud = ctx(&self.lua)?.push(module)?;
        let (out, _) = self.run_thread(require, MultiValue::from_iter([ud]))?;
        Ok(out.into_iter().next().unwrap_or(Value::Nil))
    }

    /// Installs (or removes) the hook a top-level script run calls at frame boundaries
    /// (the engine steps there while a script waits). The hook gets this VM's host.
    pub fn set_frame_hook(&self, hook: Option<FrameHook>) {
        match hook {
            Some(h) => {
                self.lua
                    .set_app_data(crate::task::FrameHook(Box::new(move |lua| {
                        h(&Host::from_lua(lua) as &dyn procmodel_script::ScriptHost);
                        Ok(())
                    })));
            }
            None => {
                self.lua.remove_app_data::<crate::task::FrameHook>();
            }
        }
    }

    /// Starts an engine frame: Pause stops yielding, and with a budget, the first
    /// `params:Pause()` after `budget` has passed yields to the next frame.
    pub fn begin_frame(&self, budget: Option<Duration>) -> mlua::Result<()> {
        let core = self.core();
        core.control.raw_set("requested", false)?;
        core.watchdog.handle().set_budget(budget);
        Ok(())
    }

    /// Ends an engine frame's budget.
    pub fn end_frame(&self) {
        self.core().watchdog.handle().set_budget(None);
    }

    /// Asks running generators to yield at their next `params:Pause()` (frame budget,
    /// cancellation). Off by default: then Pause returns at once.
    pub fn request_pause(&self, on: bool) -> mlua::Result<()> {
        self.core().control.raw_set("requested", on)
    }

    /// Forgets the cached result of requiring `module`, so the next require runs its
    /// (possibly edited) Source again.
    pub fn invalidate_module(&self, module: Ref) -> mlua::Result<()> {
        if let Ok(mut c) = ctx(&self.lua) {
            // Its new code may require other modules, and read other things, when it loads.
            c.load_requires.remove(&module);
            c.loads.get_mut().forget(module);
        }
        let results: Table = self.lua.named_registry_value("procmodel.require_results")?;
        // Every require of a module (by instance or by string) caches under its instance.
        results.raw_set(format!("instance:{module}"), Value::Nil)
    }

    /// The ModuleScript loaded from the file at `path` (a generator file added with
    /// [`Host::add_module_script`], or a module a string `require` read), if any.
    pub fn file_module(&self, path: &Path) -> Option<Ref> {
        let c = ctx(&self.lua).ok()?;
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let want = canon(path);
        let mut found: Vec<Ref> = c
            .files
            .iter()
            .filter(|(_, p)| p.as_path() == path || canon(p) == want)
            .map(|(&r, _)| r)
            // A module read from the file again replaced the one destroyed.
            .filter(|&r| c.dom.get_by_ref(r).is_some())
            .collect();
        found.sort_by_key(|r| r.to_string());
        found.first().copied()
    }

    /// Every module loaded from a file that still exists, with its file (sorted by file).
    pub fn file_modules(&self) -> Vec<(PathBuf, Ref)> {
        let Ok(c) = ctx(&self.lua) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Ref)> = c
            .files
            .iter()
            .filter(|(r, _)| c.dom.get_by_ref(**r).is_some())
            .map(|(&r, p)| (p.clone(), r))
            .collect();
        out.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.1.to_string().cmp(&b.1.to_string()))
        });
        out
    }

    /// The files modules were loaded from (sorted, each once).
    pub fn module_files(&self) -> Vec<PathBuf> {
        let Ok(c) = ctx(&self.lua) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = c.files.values().cloned().collect();
        files.sort();
        files.dedup();
        files
    }

    /// The modules whose code required `module`, directly or through other modules
    /// (recorded at every `require` since the VM started); `module` itself is not
    /// listed unless it is part of a cycle. Sorted by referent.
    pub fn requirers(&self, module: Ref) -> Vec<Ref> {
        let Ok(c) = ctx(&self.lua) else {
            return Vec::new();
        };
        let mut out: Vec<Ref> = c.requirers(module).into_iter().collect();
        out.sort_by_key(|r| r.to_string());
        out
    }

    /// Every (module, the module whose code required it) recorded, sorted.
    pub fn require_edges(&self) -> Vec<(Ref, Ref)> {
        let Ok(c) = ctx(&self.lua) else {
            return Vec::new();
        };
        let mut out: Vec<(Ref, Ref)> = c
            .required_by
            .iter()
            .flat_map(|(&m, by)| by.iter().map(move |&r| (m, r)))
            .collect();
        out.sort_by_cached_key(|(m, r)| (m.to_string(), r.to_string()));
        out
    }

    /// What the last generation that failed with a script error depended on (as
    /// `RunOutput::requires` says for one that succeeded), once.
    pub fn take_failed_requires(&self) -> Option<Vec<Ref>> {
        ctx(&self.lua).ok()?.failed_requires.take()
    }

    /// Records requires another VM of the same scene made ([`Host::require_edges`]).
    pub fn note_requires(&self, edges: &[(Ref, Ref)]) {
        let Ok(mut c) = ctx(&self.lua) else {
            return;
        };
        for &(module, by) in edges {
            c.required_by.entry(module).or_default().insert(by);
        }
    }

    /// Takes the ChangeHistoryService requests scripts made since the last call, in order
    /// (the engine drains them at each frame of a script run).
    pub fn take_history_requests(&self) -> Vec<procmodel_script::HistoryRequest> {
        match crate::services::state(&self.lua) {
            Ok(mut s) => std::mem::take(&mut s.history),
            Err(_) => Vec::new(),
        }
    }

    /// Takes the ModuleScripts whose Source scripts changed (see
    /// [`procmodel_script::ScriptHost::take_code_changes`]).
    pub fn take_code_changes(&self) -> Vec<Ref> {
        let mut c = ctx(&self.lua).expect("context installed");
        std::mem::take(&mut c.code_changed)
    }

    /// Takes the set of models scripts asked to regenerate with `ForceGeneration()`.
    pub fn take_forced(&self) -> Vec<Ref> {
        let mut c = ctx(&self.lua).expect("context installed");
        std::mem::take(&mut c.forced)
    }

    /// The Luau value (handle) of an instance.
    pub fn instance_value(&self, r: Ref) -> mlua::Result<Value> {
        ctx(&self.lua)?.push(r)
    }

    /// How many instance handles the VM holds (bounded by the DOM's size, not by history).
    pub fn instance_handles(&self) -> usize {
        ctx(&self.lua).map_or(0, |c| c.handles.len())
    }

    /// Resolves a Luau instance handle back to the instance it wraps.
    pub fn instance_ref(&self, v: &Value) -> Option<Ref> {
        ctx(&self.lua).ok()?.instance(v).map(|i| i.r)
    }

    /// Writes a line to the run log.
    pub fn log(&self, level: LogLevel, message: String) {
        if let Ok(mut c) = ctx(&self.lua) {
            c.log(level, message);
        }
    }
}

fn install_globals(
    lua: &Lua,
    watchdog: crate::watchdog::Handle,
    timeout: Duration,
) -> mlua::Result<(Function, Table)> {
    let globals = lua.globals();
    procmodel_luau_types::register(lua)?;
    crate::env::install(lua, &globals)?;
    // Host-only helpers saved before the sandbox seals the globals.
    let coroutine: Table = globals.get("coroutine")?;
    lua.set_named_registry_value(
        "procmodel.coroutine_close",
        coroutine.get::<Function>("close")?,
    )?;
    let debug: Table = globals.get("debug")?;
    lua.set_named_registry_value("procmodel.traceback", debug.get::<Function>("traceback")?)?;
    let pause_yield = crate::task::install(lua, &globals)?;
    crate::signals::install(lua)?;
    crate::instance::install(lua, crate::classes::methods(lua)?)?;
    crate::globals::install(lua, &globals)?;
    let control = lua.create_table()?;
    // Pause yields when the engine asked for it; otherwise it restarts the no-yield countdown:
    // a generator that calls Pause at least once per timeout never times out, in any mode.
    let touch = lua.create_function(move |_, ()| {
        watchdog.extend(timeout);
        Ok(())
    })?;
    let pause: Function = lua
        .load(
            "local control, pause, touch = ...\n\
             return function() if control.requested then return pause() end touch() end",
        )
        .set_name("=[Pause]")
        .call((control.clone(), pause_yield, touch))?;
    Ok((pause, control))
}

/// What this VM's Luau may still hold of the tree a new copy of the scene replaces (a module
/// runs once per VM, so its upvalues outlive the copy): trees outside the scene — a template
/// part a module made when it loaded — move into the new tree, still outside the scene, and a
/// service this VM made (`game:GetService` of one the scene lacked) leads from now on to the
/// new copy's service of its class, or moves over when the copy has none. Everything else
/// the new copy lacks (results being replaced) is gone, and its handles are pruned.
fn keep_own_instances(c: &mut crate::context::Ctx, old: &mut rbx_dom_weak::WeakDom) {
    let old_root = old.root_ref();
    let new_root = c.dom.root_ref();
    let mut moved: Vec<Ref> = Vec::new();
    for (r, class) in c.handles.live() {
        if c.dom.get_by_ref(r).is_some() || moved.contains(&r) {
            continue;
        }
        let Some(inst) = old.get_by_ref(r) else {
            continue;
        };
        // The top of the tree `r` is in, and whether that tree is the scene.
        let (mut top, mut parent) = (r, inst.parent());
        while parent.is_some() && parent != old_root {
            top = parent;
            parent = old.get_by_ref(parent).map_or(Ref::none(), |i| i.parent());
        }
        if parent.is_none() && top != old_root {
            if !moved.contains(&top) && c.dom.get_by_ref(top).is_none() {
                old.transfer(top, &mut c.dom, new_root);
                c.dom.transfer_within(top, Ref::none());
                moved.push(top);
            }
        } else if top == r && procmodel_dom::is_service(class.as_str()) {
            let same = c
                .dom
                .root()
                .children()
                .iter()
                .copied()
                .find(|&s| c.dom.get_by_ref(s).is_some_and(|i| i.class == class));
            let retargeted = same.is_some_and(|s| c.handles.retarget(r, s));
            if !retargeted && same.is_none() {
                old.transfer(r, &mut c.dom, new_root);
                moved.push(r);
            }
        }
    }
}
