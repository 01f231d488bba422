//! The ProceduralModel lifecycle (SPEC §2–4): a scene (a DataModel) whose ProceduralModels
//! regenerate when their inputs change — deferred to `step()`, coalesced, top-down for nested
//! models, failing into an error placeholder, undoable, and saved with their dirty state.
//!
//! Owns: dirty tracking (input fingerprints), the generation order, applying results, undo
//! waypoints, scene files, and the ProceduralModel rules scripts see ([`PROCEDURAL_MODEL`],
//! installed into every host). Must never: run a generator outside `step()`/`force`, block
//! on a generator without the host's timeout, let a generator failure escape as an error of
//! the engine (failures are data: placeholder + `GenerationError`), or know which VM runs
//! the scripts (it drives a `procmodel_script::ScriptHost`; front ends pass the runtime).

mod apply;
mod bundle;
pub mod cache;
mod conclude;
mod declared;
mod error;
mod fingerprint;
mod frame;
mod inflight;
mod locate;
mod parallel;
pub mod provenance;
mod report;
mod scene;
pub mod terrain;
mod undo;

pub mod thread;

pub use bundle::{TextRequires, required_by_text};
pub use cache::{MemoryCache, ResultCache, SavedRecord};
pub use declared::DeclaredDefaults;
pub use error::EngineError;
pub use report::{GenerationFailure, Report};
pub use scene::{
    AttributeBlobError, Hashing, ProjectFiles, SceneFormat, Staged, check_attributes,
    is_rojo_project, module_folder, module_init, read as read_scene,
    read_bytes as read_scene_bytes, read_module_folder, remove_stale_temp_files, stage_atomic_with,
    write_atomic, write_atomic_with,
};

use inflight::InFlight;
use procmodel_dom::keys::KEYS;
pub use procmodel_script::{HostConfig, Limit, LogLevel, LogLine, ScriptRuntime};
use procmodel_script::{HostError, ManagedClass, ScriptHost};
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};
use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// The script host as the engine sees it (the contract in `procmodel-script`).
pub(crate) type Host = dyn ScriptHost;

/// The engine's rules for ProceduralModel, installed into every host it makes (its own and
/// its workers'): a script's write to Size, Generator or an attribute, and a new model, set
/// Dirty, and so does a change of its generator's Source (or of a module that generator
/// required); `ForceGeneration` queues the model; `WaitForGenerationAsync` waits until it is
/// not dirty.
pub const PROCEDURAL_MODEL: ManagedClass = ManagedClass {
    class: "ProceduralModel",
    flag: "Dirty",
    inputs: &["Size", "Generator"],
    code: Some("Generator"),
    force_method: "ForceGeneration",
    wait_method: "WaitForGenerationAsync",
};

/// A scene without a Workspace gets one. A model file (a package) holds none, but its
/// generators may use `workspace` as they would inside any place: the scene gets one for the
/// session, not archivable, so no save, content hash or lockfile ever sees it. A place
/// without one (a Rojo project listing only other services) gets a real one, as Studio adds
/// it when it opens the place: what a script builds there is saved with the place.
fn ensure_workspace(dom: &mut WeakDom, place: bool) {
    let (root, workspace) = parallel::scene_identity(dom);
    if workspace.is_none() {
        let mut builder = rbx_dom_weak::InstanceBuilder::new("Workspace").with_name("Workspace");
        if !place {
            builder = builder.with_property("Archivable", false);
        }
        dom.insert(root, builder);
    }
}

/// A host from `runtime` with the engine's ProceduralModel rules installed.
pub(crate) fn new_host(
    runtime: &dyn ScriptRuntime,
    config: &HostConfig,
    dom: Option<WeakDom>,
) -> Result<Rc<Host>, HostError> {
    let host = runtime.new_host(config, dom)?;
    host.manage(PROCEDURAL_MODEL)?;
    // A folder a string require reaches is built as a module folder generator is.
    host.set_module_folder_loader(Box::new(|dir| {
        scene::read_module_folder(dir)
            .map(|built| (built.dom, built.top, built.scripts))
            .map_err(|e| e.to_string())
    }));
    Ok(host)
}

/// A generator module as the engine loaded it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedGenerator {
    /// The ModuleScript.
    pub module: Ref,
    /// Declared attributes and their defaults, sorted by name (None: it declares none).
    pub attributes: Option<Vec<(String, Variant)>>,
}

/// Limits for generations run by the engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub host: HostConfig,
    /// Deepest nesting of generated ProceduralModels before it is reported as runaway.
    pub max_depth: usize,
    /// Time a step may spend generating before `params:Pause()` yields the running
    /// generators to the next step (None: no budget; a run yields only in `task.wait`).
    pub frame_budget: Option<Duration>,
    /// Worker VMs for independent models (1 = generate on the scene's own VM). Results are
    /// applied in scene order, so the saved scene is the same bytes for any value.
    pub jobs: usize,
    /// Most execution time one generation may use in total, over all the frames it spans
    /// (beyond Roblox: a generator that calls `params:Pause()` forever never hits the
    /// no-yield timeout). Time spent waiting between frames does not count.
    pub run_limit: Duration,
    /// Where applied results are looked up before a generation starts and stored after one
    /// succeeds (`cache.rs`); None: always generate.
    pub cache: Option<std::sync::Arc<dyn ResultCache>>,
    /// Record provenance (the inputs, and the results' content hash) on every GeneratedFolder
    /// (`provenance.rs`). `procmodel generate` turns it off: its output is the results alone,
    /// without the folder's attributes. With a cache it is recorded anyway: entries carry it
    /// and are checked by it.
    pub provenance: bool,
    /// Most result instances the undo history keeps aside (each costs about 1 KB): past it,
    /// the results of the oldest steps are freed, and undoing such a step generates them
    /// again (a cache hit when a cache is set). The inputs of every step are kept.
    pub undo_instances: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            host: HostConfig {
                echo_output: false,
                ..HostConfig::default()
            },
            max_depth: 16,
            frame_budget: None,
            jobs: 1,
            run_limit: Duration::from_secs(60),
            cache: None,
            provenance: true,
            undo_instances: 2_000_000,
        }
    }
}

impl EngineConfig {
    /// Whether applied results get their provenance recorded: asked for, or needed by the
    /// cache (its entries carry it).
    pub(crate) fn records_provenance(&self) -> bool {
        self.provenance || self.cache.is_some()
    }
}

#[derive(Default)]
pub(crate) struct ModelState {
    /// Fingerprint of the inputs the current results were made from (or failed on).
    pub applied: Option<u64>,
    /// How many times the generator ran for this model (for tests and reports).
    pub runs: usize,
}

/// Engine state, shared by the `Engine` and the frame hook a script run installs (a script
/// waiting in `task.wait` or `WaitForGenerationAsync` steps the engine from inside the VM).
pub(crate) struct EngineState {
    config: EngineConfig,
    /// Makes the worker VMs.
    runtime: Arc<dyn ScriptRuntime>,
    states: HashMap<Ref, ModelState>,
    undo: undo::History,
    /// The Source each generator module was last required with.
    required: HashMap<Ref, String>,
    /// Generator sources already digested for input fingerprints.
    sources: fingerprint::SourceDigests,
    /// Worker VMs for `jobs > 1`, kept between steps.
    pool: parallel::Pool,
    /// Generations waiting for a later frame.
    in_flight: HashMap<Ref, InFlight>,
    /// Called with every report as it is made (progress display).
    on_report: Option<Box<dyn FnMut(&Report)>>,
    /// Base cache keys (`provenance::Inputs::base_key`) of runs in progress, for filling
    /// the cache when they succeed.
    cache_keys: HashMap<Ref, [u8; 32]>,
    /// The modules each run applied since its provenance was recorded depended on.
    run_requires: HashMap<Ref, Vec<Ref>>,
    /// What each run applied since its provenance was recorded read of the scene.
    run_reads: HashMap<Ref, Vec<procmodel_script::SceneRead>>,
    /// Bumped whenever a ModuleScript's code is replaced (see [`Engine::code_revision`]).
    code_revision: u64,
    /// The models' voxels merged into the scene's Terrain (`terrain.rs`).
    terrain: terrain::Book,
    /// Models whose results were just applied from the cache (their provenance came with
    /// them).
    from_cache: std::collections::HashSet<Ref>,
    /// Models whose hit of this step took their results back from the undo history, with
    /// the record those results keep (their inputs are the ones they were placed for).
    reused: HashMap<Ref, cache::Placed>,
    /// Instances each model's run being applied created (taken by its report).
    created: HashMap<Ref, usize>,
    /// The files worker VMs loaded modules from ([`Engine::module_files`]).
    worker_files: std::collections::BTreeSet<std::path::PathBuf>,
    /// Per model, the results a run or a hit put in place while a result cache is on, for
    /// hits that keep them (`cache.rs`).
    placed: HashMap<Ref, cache::Placed>,
    /// The records of results in place whose model's inputs were changed since: the undo
    /// step holding them when they are replaced keeps the record, so a regeneration back to
    /// those inputs takes them from there.
    superseded: HashMap<Ref, cache::Placed>,
    /// Models whose hit of this step kept the results in place.
    kept: std::collections::HashSet<Ref>,
    /// The step in progress (a number of its own per step), None between steps: stamps the
    /// module list `sources` may reuse within it.
    step: Option<u64>,
    steps: u64,
    /// Provenance a worker computed for the results of a model being applied this step
    /// (taken when its provenance is recorded).
    precomputed: HashMap<Ref, provenance::Precomputed>,
    /// ProceduralModels in the results applied during the current nesting pass (pre-order
    /// per model, models in the order applied): the next pass's scope.
    found_nested: Vec<Ref>,
    /// Models whose results hold a nested model applied this step: applying it may change
    /// the nested model itself (its defaults, its pivot), so their content hash is recorded
    /// again when the step ends.
    rerecord: Vec<Ref>,
    /// A Rojo project's scripts and their files, named in failure texts (`locate.rs`).
    script_files: Vec<(Ref, String)>,
}

/// A scene with its engine. Not `Send`: the engine, its VM and its state live on one thread
/// (front ends drive it through [`thread::EngineThread`]).
pub struct Engine {
    host: Rc<Host>,
    state: Rc<RefCell<EngineState>>,
}

impl Engine {
    /// An empty scene (DataModel with Workspace and ServerStorage), run by hosts from
    /// `runtime` (e.g. `procmodel_luau::runtime()`).
    pub fn new(
        runtime: Arc<dyn ScriptRuntime>,
        config: EngineConfig,
    ) -> Result<Engine, EngineError> {
        let host = new_host(&*runtime, &config.host, None)?;
        Ok(Engine::with_host(host, runtime, config))
    }

    /// Loads a scene from `.rbxl`, `.rbxlx`, `.rbxm` or `.rbxmx`. Models saved dirty are
    /// queued, and so are models whose inputs differ from those their results record
    /// (the file was edited elsewhere); `GenerationError` is not loaded.
    pub fn load(
        runtime: Arc<dyn ScriptRuntime>,
        path: &Path,
        config: EngineConfig,
    ) -> Result<Engine, EngineError> {
        if scene::is_rojo_project(path) {
            return Engine::load_project(runtime, path, config).map(|(engine, _)| engine);
        }
        let (dom, digest) = scene::read_digested(path, config.cache.is_some())?;
        // Read, so a place (`.rbxl`, `.rbxlx`) or a model file.
        let place = !scene::is_model_file(path);
        Engine::over_loaded(runtime, dom, digest, config, place)
    }

    /// [`Engine::load`] of a Rojo project, with the files it was built from: what a front
    /// end watches to put an edited script back ([`Engine::set_source`]) or to read the
    /// project again ([`Engine::reload_project`]).
    pub fn load_project(
        runtime: Arc<dyn ScriptRuntime>,
        path: &Path,
        config: EngineConfig,
    ) -> Result<(Engine, scene::ProjectFiles), EngineError> {
        let (dom, files) = scene::read_project_files(path)?;
        let place = files.place;
        let engine = Engine::over_loaded(runtime, dom, None, config, place)?;
        engine.st().script_files = locate::display_paths(path, &files.scripts);
        Ok((engine, files))
    }

    /// Reads the Rojo project at `path` again (its structure changed on disk: the project
    /// file, a meta or model file, a script added or removed) and makes it the scene, on
    /// the same VM, so a [`Canceller`](procmodel_script::Canceller) taken before still
    /// reaches its runs. Runs in flight are cancelled; the undo history and what the engine
    /// knew of the results start afresh; the project's models generate at the next step as
    /// a project's do (they are dirty; with a cache, unchanged ones hit). Returns the files
    /// it was built from, as [`Engine::load_project`] does. A project that does not build
    /// is an error and leaves the scene as it was.
    pub fn reload_project(&mut self, path: &Path) -> Result<scene::ProjectFiles, EngineError> {
        let (mut dom, files) = scene::read_project_files(path)?;
        ensure_workspace(&mut dom, files.place);
        // `game` and `workspace` are bound to the scene's DataModel and Workspace.
        let (root, workspace) = self.host.with_dom_ref(parallel::scene_identity);
        let dom = scene::rekey_top(dom, root, workspace);
        let flights: Vec<Ref> = self.st().in_flight.keys().copied().collect();
        for m in flights {
            self.cancel(m);
        }
        self.host.replace_dom(dom);
        let (config, runtime, on_report) = {
            let mut st = self.st();
            (st.config.clone(), st.runtime.clone(), st.on_report.take())
        };
        *self = Engine::with_host(self.host.clone(), runtime, config);
        self.st().on_report = on_report;
        self.st().script_files = locate::display_paths(path, &files.scripts);
        self.adopt_loaded();
        Ok(files)
    }

    /// An engine over a scene read from a file whose bytes had `digest` (when the cache
    /// records saved scenes).
    fn over_loaded(
        runtime: Arc<dyn ScriptRuntime>,
        mut dom: WeakDom,
        digest: Option<[u8; 32]>,
        config: EngineConfig,
        place: bool,
    ) -> Result<Engine, EngineError> {
        ensure_workspace(&mut dom, place);
        let host = new_host(&*runtime, &config.host, Some(dom))?;
        let mut engine = Engine::with_host(host, runtime, config);
        engine.adopt_loaded();
        if let Some(digest) = digest {
            engine.adopt_saved(digest);
        }
        Ok(engine)
    }

    /// Loads a scene for a script to work on, as Studio opens a file: a place (`.rbxl`,
    /// `.rbxlx`, a Rojo project) as [`Engine::load`] does; a model file's (`.rbxm`, `.rbxmx`)
    /// instances go into the Workspace of a new DataModel, as Studio inserts a model into
    /// an open place (with the same referents). A model whose own top level already holds a
    /// Workspace (a DataModel saved as a model) loads as it is. The flag says whether the
    /// file's instances were put into Workspace.
    pub fn load_into_place(
        runtime: Arc<dyn ScriptRuntime>,
        path: &Path,
        config: EngineConfig,
    ) -> Result<(Engine, bool), EngineError> {
        if !scene::is_model_file(path) {
            return Ok((Engine::load(runtime, path, config)?, false));
        }
        let (mut loaded, digest) = scene::read_digested(path, config.cache.is_some())?;
        let top = loaded.root().children().to_vec();
        if top
            .iter()
            .any(|&r| loaded.get_by_ref(r).is_some_and(|i| i.class == "Workspace"))
        {
            return Ok((
                Engine::over_loaded(runtime, loaded, digest, config, false)?,
                false,
            ));
        }
        let mut engine = Engine::new(runtime, config)?;
        let workspace = engine.workspace();
        engine.host.with_dom_mut(|dom| {
            for r in top {
                loaded.transfer(r, dom, workspace);
            }
        });
        engine.adopt_loaded();
        Ok((engine, true))
    }

    fn with_host(host: Rc<Host>, runtime: Arc<dyn ScriptRuntime>, config: EngineConfig) -> Engine {
        let undo_instances = config.undo_instances;
        // Runs are timed from their start: the reflection database (decoded at its first use,
        // possibly on another thread already) is made ready here, so the first run's report
        // does not include decoding it.
        procmodel_dom::db();
        let state = Rc::new(RefCell::new(EngineState {
            config,
            runtime,
            states: HashMap::new(),
            undo: undo::History::new(undo_instances),
            required: HashMap::new(),
            sources: Default::default(),
            pool: Default::default(),
            on_report: None,
            in_flight: HashMap::new(),
            cache_keys: HashMap::new(),
            run_requires: HashMap::new(),
            run_reads: HashMap::new(),
            code_revision: 0,
            terrain: terrain::Book::default(),
            from_cache: std::collections::HashSet::new(),
            reused: HashMap::new(),
            created: HashMap::new(),
            worker_files: Default::default(),
            placed: HashMap::new(),
            superseded: HashMap::new(),
            kept: std::collections::HashSet::new(),
            step: None,
            steps: 0,
            precomputed: HashMap::new(),
            found_nested: Vec::new(),
            rerecord: Vec::new(),
            script_files: Vec::new(),
        }));
        if state.borrow().config.cache.is_some() {
            // Hits that keep results in place need to know nothing wrote to them since.
            host.count_scene_writes();
        }
        Engine { host, state }
    }

    fn st(&self) -> RefMut<'_, EngineState> {
        self.state.borrow_mut()
    }

    /// Calls `f` with each generation report as soon as it is made (e.g. a progress bar).
    pub fn on_report(&mut self, f: Option<Box<dyn FnMut(&Report)>>) {
        self.st().on_report = f;
    }

    /// Runs a plain Luau script (a trusted local tool, like a Studio plugin) against the
    /// scene; the engine steps at every frame boundary while the script waits.
    pub fn run_script(&mut self, path: &Path) -> Result<(), EngineError> {
        let state = self.state.clone();
        self.host
            .set_frame_hook(Some(Box::new(move |host: &dyn ScriptHost| {
                let mut e = Engine {
                    host: host.handle(),
                    state: state.clone(),
                };
                // ChangeHistoryService requests since the last frame, in order. The engine
                // records a waypoint per mutation, so SetWaypoint has nothing more to mark.
                for request in e.host.take_history_requests() {
                    match request {
                        procmodel_script::HistoryRequest::Undo => {
                            e.undo();
                        }
                        procmodel_script::HistoryRequest::Redo => {
                            e.redo();
                        }
                        procmodel_script::HistoryRequest::Waypoint(_) => {}
                    }
                }
                e.step();
            })));
        let result = self.host.run_script_file(path);
        self.host.set_frame_hook(None);
        // Models the script removed give their voxels back before anything is saved.
        self.sync_terrain(terrain::Discover::Nothing);
        result?;
        Ok(())
    }

    /// Saves the scene atomically (temp file + rename). `Dirty` is saved as it is. The
    /// modules file generators required by path, which were read from disk and are not in
    /// the tree, are saved beside their generators ([`bundle`]), so the saved scene
    /// regenerates without the files; the live scene is left as it was.
    pub fn save(&self, path: &Path) -> Result<(), EngineError> {
        // The modules this VM read from files, then the files only workers read (their
        // modules are not in this scene: read again from the file).
        let mut files: Vec<bundle::FileModule> = self
            .host
            .file_modules()
            .into_iter()
            .map(|(path, module)| bundle::FileModule::loaded(path, module))
            .collect();
        for path in self.st().worker_files.iter() {
            if !files.iter().any(|f| &f.path == path) {
                files.push(bundle::FileModule::unread(path));
            }
        }
        // And the files their text requires that no run took (another attribute value's
        // branch), so the saved scene regenerates for every input.
        if !files.is_empty() {
            let start: Vec<std::path::PathBuf> = files.iter().map(|f| f.path.clone()).collect();
            let runtime = self.st().runtime.clone();
            // The files already held are left out of what it finds.
            for more in bundle::required_by_text(&*runtime, &start, None).files {
                files.push(bundle::FileModule::unread(&more));
            }
        }
        let placed = self.place_files(&files, path)?;
        let written = self.host.with_dom_ref(|dom| scene::write(dom, path));
        if !placed.roots.is_empty() || !placed.dirtied.is_empty() {
            self.host.with_dom_mut(|d| bundle::remove(d, &placed));
        }
        let digest = written?;
        // A scene saved with modules the live one lacks is not the scene its results were
        // recorded in: no record of intact results for it.
        if placed.roots.is_empty() {
            self.record_saved(digest);
        }
        Ok(())
    }

    /// Ends the engine and returns its scene. The VM, its handles and any worker VMs are
    /// freed first, so a large save that follows reuses their memory.
    pub fn into_dom(self) -> WeakDom {
        self.host.take_dom()
    }

    /// A `Send` handle that stops the engine VM's running code from another thread.
    pub(crate) fn canceller(&self) -> procmodel_script::Canceller {
        self.host.canceller()
    }

    /// ProceduralModels in the scene, top-down (pre-order).
    pub fn models(&self) -> Vec<Ref> {
        if !self.host.may_have_managed() {
            return Vec::new();
        }
        self.host.with_dom_ref(apply::models_in_scene)
    }

    /// True when the model will regenerate at the next step.
    pub fn is_dirty(&self, model: Ref) -> bool {
        self.host.with_dom_ref(|dom| apply::dirty_flag(dom, model))
    }

    /// How many times the generator ran for `model`.
    pub fn runs(&self, model: Ref) -> usize {
        self.st().states.get(&model).map_or(0, |s| s.runs)
    }

    /// Runs `f` on the scene DOM.
    pub fn with_dom<R>(&self, f: impl FnOnce(&WeakDom) -> R) -> R {
        self.host.with_dom_ref(f)
    }

    fn adopt_loaded(&mut self) {
        let book = self.host.with_dom_ref(terrain::Book::adopt);
        self.st().terrain = book;
        for m in self.models() {
            // Saved dirty, or its inputs were edited in the file since its results were
            // made (the provenance the results record says so): it regenerates.
            let dirty = self.is_dirty(m)
                || self
                    .host
                    .with_dom_ref(|d| provenance::recorded_inputs_differ(d, m));
            let fp = self.fingerprint(m);
            let mut state = self.st();
            let st = state.states.entry(m).or_default();
            if !dirty {
                st.applied = Some(fp);
            }
        }
    }

    fn fingerprint(&self, model: Ref) -> u64 {
        let mut sources = self.take_sources();
        let fp = self
            .host
            .with_dom_ref(|dom| fingerprint::inputs(dom, model, &mut sources));
        self.st().sources = sources;
        fp
    }

    /// The engine's source digests, taken out to be used (put them back after), stamped so
    /// the scene's module list is walked once while nothing can change it: within this
    /// step, while the host counts no scene write.
    pub(crate) fn take_sources(&self) -> fingerprint::SourceDigests {
        let step = self.st().step;
        let mut sources = std::mem::take(&mut self.st().sources);
        sources.stamp(step.zip(self.host.scene_writes()));
        sources
    }

    // ----- mutations (each is an undo waypoint; setting the value an input already has is
    // no change: no waypoint, nothing regenerates) -----

    /// Sets an attribute on a model (an explicit input).
    pub fn set_attribute(
        &mut self,
        model: Ref,
        name: &str,
        value: Option<Variant>,
    ) -> Result<(), EngineError> {
        if self.model_holds(model, |i| apply::attribute(i, name) == value.as_ref()) {
            return Ok(());
        }
        self.change(model, "set attribute", |dom| {
            apply::set_attribute(dom, model, name, value)
        })
    }

    /// Sets the model's Size (an explicit input).
    pub fn set_size(&mut self, model: Ref, size: glam::Vec3) -> Result<(), EngineError> {
        if !size.is_finite() || size.min_element() < 0.0 {
            return Err(EngineError::invalid(format!(
                "Size must be finite and not negative, got {size}"
            )));
        }
        let value = Variant::Vector3(procmodel_dom::from_vec3(size));
        if self.model_holds(model, |i| apply::prop(i, KEYS.size) == Some(&value)) {
            return Ok(());
        }
        self.change(model, "set Size", |dom| {
            apply::set_prop(dom, model, KEYS.size, value)
        })
    }

    /// Points the model at a generator module, or bakes it with `None` (keeps the results,
    /// stops regenerating).
    pub fn set_generator(&mut self, model: Ref, module: Option<Ref>) -> Result<(), EngineError> {
        let value = Variant::Ref(module.unwrap_or_else(Ref::none));
        if self.model_holds(model, |i| apply::prop(i, KEYS.generator) == Some(&value)) {
            return Ok(());
        }
        self.change(model, "set Generator", |dom| {
            apply::set_prop(dom, model, KEYS.generator, value)
        })
    }

    /// Rescales the model's results without regenerating (`ScaleTo`).
    pub fn scale_to(&mut self, model: Ref, scale: f32) -> Result<(), EngineError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(EngineError::invalid(format!(
                "Scale must be positive, got {scale}"
            )));
        }
        if self.model_holds(model, |i| procmodel_dom::model_scale(i) == scale) {
            return Ok(());
        }
        // The results are rescaled in place (nested models' with them).
        self.forget_placed();
        self.change(model, "scale", |dom| {
            // Size scales with the model, so Size ÷ Scale (the generator's input) is unchanged.
            procmodel_dom::scale_to(dom, model, scale);
            Ok(())
        })
    }

    /// Edits a ModuleScript's Source: an implicit input of every model whose generator is
    /// the module or required it (directly or through other modules, as the host recorded).
    /// Those models regenerate at the next step (a generator's own edit changes their input
    /// fingerprint; a required module's edit marks them dirty), the module and every module
    /// that required it are required afresh, and the edit is one undo step, whose undo
    /// restores the Source and the models' results and puts the restored code back in use.
    pub fn set_source(&mut self, module: Ref, source: &str) -> Result<(), EngineError> {
        let requirers = self.host.requirers(module);
        let users: Vec<(Ref, bool)> = self
            .models()
            .into_iter()
            .filter_map(|m| {
                let g = self.host.with_dom_ref(|d| apply::generator_of(d, m))?;
                let own = g == module;
                (own || requirers.contains(&g)).then_some((m, own))
            })
            .collect();
        let mut touched: Vec<Ref> = users.iter().map(|&(m, _)| m).collect();
        touched.push(module);
        let before = self.st().undo.snapshot_all(&*self.host, &touched);
        self.host.with_dom_mut(|dom| {
            apply::set_prop(dom, module, KEYS.source, Variant::String(source.to_owned()))
        })?;
        self.replace_code(&[module])?;
        // Their inputs did not change: only the code they required did.
        self.host.with_dom_mut(|dom| {
            for &(m, own) in &users {
                if !own {
                    apply::set_dirty(dom, m, true);
                }
            }
        });
        let host = self.host.clone();
        self.st().undo.push(&*host, "set Source", before);
        Ok(())
    }

    /// Counts the times module code was replaced (a Source edit, an undo or redo that
    /// restored one): what a generator declares may have changed with it even when the
    /// generator's own Source did not.
    pub fn code_revision(&self) -> u64 {
        self.st().code_revision
    }

    /// The ModuleScripts among `touched` got other code: they and every module that required
    /// them are required afresh at the next run.
    pub(crate) fn replace_code(&mut self, touched: &[Ref]) -> Result<(), EngineError> {
        let modules: Vec<Ref> = self.host.with_dom_ref(|d| {
            touched
                .iter()
                .copied()
                .filter(|&r| {
                    d.get_by_ref(r)
                        .is_some_and(|i| procmodel_dom::is_a(i.class.as_str(), "ModuleScript"))
                })
                .collect()
        });
        if modules.is_empty() {
            return Ok(());
        }
        self.st().code_revision += 1;
        for m in modules {
            for r in std::iter::once(m).chain(self.host.requirers(m)) {
                self.host.invalidate_module(r)?;
            }
        }
        Ok(())
    }

    /// The attributes `module`'s generator declares (its `Attributes` table; None when it
    /// declares none). The module is loaded as a run loads it, so front ends that show
    /// declared defaults never leave the host's require cache holding a Source the engine
    /// does not know of (an undo back to an older Source then still runs the older code).
    pub fn declared_attributes(
        &self,
        module: Ref,
    ) -> Result<Option<Vec<(String, Variant)>>, EngineError> {
        let origin = self
            .host
            .with_dom_ref(|d| procmodel_dom::full_name(d, module));
        let mut required = std::mem::take(&mut self.st().required);
        let loaded = apply::load(&*self.host, module, &origin, &mut required);
        self.st().required = required;
        loaded
            .map(|g| g.attributes)
            .map_err(|f| EngineError::invalid(f.to_string()))
    }

    /// Adds the generator file `path` as a ModuleScript under `parent` (relative string
    /// requires resolve beside the file) and loads it as a run does: its top-level code runs
    /// once, here, and the first run uses the module it returned.
    ///
    /// A module folder ([`module_folder`]: a folder with an `init.luau`, or that file) is
    /// built as Rojo builds it, a ModuleScript with the folder's other files as children, so
    /// `require(script.Util)` finds them; errors name each module's file.
    pub fn load_generator_file(
        &mut self,
        path: &Path,
        parent: Ref,
    ) -> Result<LoadedGenerator, EngineError> {
        if let Some(dir) = module_folder(path) {
            let module = self.add_module_folder(&dir, parent)?;
            return self.load_generator(module, &path.display().to_string());
        }
        let g = self.host.load_generator_file(path, parent)?;
        // Record the Source it was required with, as every load through the engine does:
        // without it the first run would require the module (and run its top-level code)
        // a second time.
        let source = self
            .host
            .with_dom_ref(|d| apply::source_of(d, g.module).to_owned());
        self.st().required.insert(g.module, source);
        Ok(LoadedGenerator {
            module: g.module,
            attributes: g.attributes,
        })
    }

    /// Adds the module folder `dir` ([`module_folder`]) under `parent` as Rojo builds it (a
    /// ModuleScript named after the folder, the folder's other files its children), without
    /// loading it; errors name each module's file.
    pub fn add_module_folder(&mut self, dir: &Path, parent: Ref) -> Result<Ref, EngineError> {
        let (top, built) = self.insert_module_folder(dir, parent)?;
        let dir = &dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        for (module, file) in &built.scripts {
            let file = file.canonicalize().unwrap_or_else(|_| file.clone());
            self.host.set_module_file(*module, &file);
        }
        // String requires stay among the files beside the folder, as beside a file.
        if let Some(beside) = dir.parent() {
            self.host.set_require_root(beside);
        }
        Ok(top)
    }

    /// [`Engine::add_module_folder`] with no file behind its modules: their requires resolve
    /// over the instance tree only, as a package's do once it is inserted.
    pub fn add_module_folder_unbound(
        &mut self,
        dir: &Path,
        parent: Ref,
    ) -> Result<Ref, EngineError> {
        Ok(self.insert_module_folder(dir, parent)?.0)
    }

    /// The module folder `dir` built and moved under `parent`: its top module and the build.
    fn insert_module_folder(
        &mut self,
        dir: &Path,
        parent: Ref,
    ) -> Result<(Ref, procmodel_rojo::LoadedPath), EngineError> {
        // Named after the folder: `.` (or `init.luau` named in it) is the folder it stands for.
        let dir = &dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let mut built = scene::read_module_folder(dir)?;
        let top = built.top;
        self.forget_intact();
        self.host
            .with_dom_mut(|d| procmodel_dom::move_into(&mut built.dom, &[top], d, parent));
        Ok((top, built))
    }

    /// Reads a generator's module folder ([`module_folder`]) again — a file added to it or
    /// removed, a meta file changed — in place of the module read from it before: the
    /// models using that module use the new one and regenerate (their attributes stay), and
    /// the undo history starts afresh (its steps name the modules replaced). Returns each
    /// module's file, as [`Engine::add_generator_model`] does. A folder that does not build
    /// is an error and leaves the scene as it was.
    pub fn reload_module_folder(
        &mut self,
        dir: &Path,
    ) -> Result<Vec<(std::path::PathBuf, Ref)>, EngineError> {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let old = scene::MODULE_INITS
            .iter()
            .find_map(|init| self.file_module(&dir.join(init)))
            .ok_or_else(|| {
                EngineError::invalid(format!(
                    "{}: no module was read from this folder",
                    dir.display()
                ))
            })?;
        let parent = self
            .with_dom(|d| d.get_by_ref(old).map(|i| i.parent()))
            .unwrap_or_else(|| self.server_storage());
        let new = self.add_module_folder(&dir, parent)?;
        let models = self.models();
        self.with_dom_mut(|d| {
            for m in models {
                if apply::generator_of(d, m) == Some(old) {
                    let _ = apply::set_prop(d, m, KEYS.generator, Variant::Ref(new));
                    apply::set_dirty(d, m, true);
                }
            }
            d.destroy(old);
        });
        let undo_instances = self.st().config.undo_instances;
        self.st().undo = undo::History::new(undo_instances);
        self.st().code_revision += 1;
        Ok(self.module_sources())
    }

    /// Each file modules were read from, with the module read from it.
    fn module_sources(&self) -> Vec<(std::path::PathBuf, Ref)> {
        self.module_files()
            .into_iter()
            .filter_map(|f| self.file_module(&f).map(|m| (f, m)))
            .collect()
    }

    /// Adds the generator at `path` (a file, or a module folder: [`module_folder`]) to
    /// ServerStorage without requiring it, and a ProceduralModel named after it that uses it:
    /// a one-model scene whose generator, if it fails to load, shows its error on the model.
    /// Returns the model and each module's file (the generator's and, for a folder, its
    /// children's), for a front end to watch.
    pub fn add_generator_model(
        &mut self,
        path: &Path,
    ) -> Result<(Ref, Vec<(std::path::PathBuf, Ref)>), EngineError> {
        let storage = self.server_storage();
        let (module, name) = match module_folder(path) {
            Some(dir) => {
                let module = self.add_module_folder(&dir, storage)?;
                let name = self.with_dom(|d| d.get_by_ref(module).map(|m| m.name.clone()));
                (module, name)
            }
            None => {
                let module = self.host.add_generator_file(path, storage)?;
                let name = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned);
                (module, name)
            }
        };
        let model = self.add_procedural_model(name.as_deref().unwrap_or("Generated"), module);
        Ok((model, self.module_sources()))
    }

    /// Loads the ModuleScript `module` as a generator, as a run does (again only when its
    /// Source changed since it was last loaded); `origin` names it in errors.
    pub fn load_generator(
        &mut self,
        module: Ref,
        origin: &str,
    ) -> Result<LoadedGenerator, EngineError> {
        let mut required = std::mem::take(&mut self.st().required);
        let loaded = apply::load_host(&*self.host, module, origin, &mut required);
        self.st().required = required;
        let g = loaded?;
        Ok(LoadedGenerator {
            module: g.module,
            attributes: g.attributes,
        })
    }

    /// Puts ModuleScripts read from `files` (a generator file's requires by path) around
    /// `module`, the generator read from `generator_file`, as a saved scene holds them
    /// ([`bundle`]: `./X` a sibling, `@self/X` a child), for a scene that runs the generator
    /// from its text alone (a package). `module` must be a ProceduralModel's Generator.
    /// Returns the instances put into the tree (the top of each subtree placed).
    pub fn place_file_modules(
        &mut self,
        generator_file: &Path,
        module: Ref,
        files: &[std::path::PathBuf],
    ) -> Result<Vec<Ref>, EngineError> {
        let mut all = vec![bundle::FileModule::loaded(
            generator_file.to_path_buf(),
            module,
        )];
        all.extend(files.iter().map(|f| bundle::FileModule::unread(f)));
        self.forget_intact();
        Ok(self.place_files(&all, generator_file)?.roots)
    }

    /// Places `files` around their generators ([`bundle::place`]). A file that cannot be
    /// placed (an instance of its name is already there) is an error naming it, reported
    /// against `at`, and nothing stays placed.
    fn place_files(
        &self,
        files: &[bundle::FileModule],
        at: &Path,
    ) -> Result<bundle::Placed, EngineError> {
        if files.is_empty() {
            return Ok(bundle::Placed::default());
        }
        let placed = self.host.with_dom_mut(|d| bundle::place(d, files));
        match placed.unplaced.first() {
            None => Ok(placed),
            Some(file) => {
                let error = EngineError::file(
                    at.display().to_string(),
                    format!(
                        "cannot place the module read from {} beside its generator: an instance of its name is already there (rename one of them)",
                        file.display()
                    ),
                );
                self.host.with_dom_mut(|d| bundle::remove(d, &placed));
                Err(error)
            }
        }
    }

    /// Creates a ModuleScript holding `source` under `parent` (`file`: the file it came from,
    /// for relative requires and for finding it again when the file changes).
    pub fn add_module_script(
        &mut self,
        parent: Ref,
        name: &str,
        source: &str,
        file: Option<&Path>,
    ) -> Ref {
        self.host.add_module_script(parent, name, source, file)
    }

    /// The folder relative string requires of scene modules without a file resolve in.
    pub fn set_require_root(&mut self, root: &Path) {
        self.host.set_require_root(root);
    }

    /// Takes the `print`/`warn` lines scripts and generators wrote since the last call, on
    /// the engine's VM and (as their results are applied) on workers' — what a front end
    /// shows as its output. Bounded: the newest lines are kept, with a line saying how many
    /// earlier ones were not.
    pub fn take_output(&self) -> Vec<procmodel_script::LogLine> {
        self.host.take_output()
    }

    /// The files the scene's ModuleScripts were loaded from, on the engine's VM and on
    /// workers' (a generator's file, what string requires loaded): sorted, without repeats.
    pub fn module_files(&self) -> Vec<std::path::PathBuf> {
        let mut files = self.host.module_files();
        files.extend(self.st().worker_files.iter().cloned());
        files.sort();
        files.dedup();
        files
    }

    /// For a scene built from a Rojo project: each script's full name and its file,
    /// relative to the project's folder (as failures name them), sorted by name; empty
    /// for any other scene.
    pub fn script_files(&self) -> Vec<(String, String)> {
        let st = self.st();
        let mut out: Vec<(String, String)> = self.host.with_dom_ref(|dom| {
            st.script_files
                .iter()
                .filter(|(r, _)| dom.get_by_ref(*r).is_some())
                .map(|(r, file)| (procmodel_dom::full_name(dom, *r), file.clone()))
                .collect()
        });
        out.sort();
        out
    }

    /// The ModuleScript loaded from `path`, if one was.
    pub fn file_module(&self, path: &Path) -> Option<Ref> {
        self.host.file_module(path)
    }

    /// Runs `f` on the scene DOM with write access. Not an undo waypoint: for setting up a
    /// scene before its first step (the mutations above are the undoable edits).
    pub fn with_dom_mut<R>(&mut self, f: impl FnOnce(&mut WeakDom) -> R) -> R {
        // Anything may change: no results in place or held are known intact any more.
        self.forget_intact();
        self.host.with_dom_mut(f)
    }

    /// Inserts a new ProceduralModel named `name` into Workspace, using `generator`, with the
    /// inputs Studio gives a new one (Size 12, 12, 12; Scale 1; no attributes).
    pub fn add_procedural_model(&mut self, name: &str, generator: Ref) -> Ref {
        let workspace = self.workspace();
        self.insert(
            workspace,
            rbx_dom_weak::InstanceBuilder::new("ProceduralModel")
                .with_name(name)
                .with_property("Generator", Variant::Ref(generator))
                .with_property("Size", rbx_types::Vector3::new(12.0, 12.0, 12.0))
                .with_property("Scale", Variant::Float32(1.0))
                .with_property(
                    "Attributes",
                    Variant::Attributes(rbx_types::Attributes::new()),
                ),
        )
    }

    /// Inserts a new instance under `parent` (e.g. a ProceduralModel, a ModuleScript).
    pub fn insert(&mut self, parent: Ref, builder: rbx_dom_weak::InstanceBuilder) -> Ref {
        // The parent may be in some model's results (in place or held for undo).
        self.forget_intact();
        self.host.with_dom_mut(|dom| dom.insert(parent, builder))
    }

    /// The scene's Workspace (or the DataModel when there is none).
    pub fn workspace(&self) -> Ref {
        self.service("Workspace")
    }

    /// The scene's ServerStorage, where a front end puts a generator module it loads from a
    /// file (or the DataModel when there is none).
    pub fn server_storage(&self) -> Ref {
        self.service("ServerStorage")
    }

    /// The DataModel's first child of `class`, or the DataModel itself.
    fn service(&self, class: &str) -> Ref {
        self.host.with_dom_ref(|dom| {
            dom.root()
                .children()
                .iter()
                .copied()
                .find(|&r| dom.get_by_ref(r).is_some_and(|i| i.class == class))
                .unwrap_or(dom.root_ref())
        })
    }

    /// Removes an instance from the scene (cancels its generation if it is a model).
    pub fn remove(&mut self, inst: Ref) -> Result<(), EngineError> {
        // The instance may be in some model's results (in place or held for undo).
        self.forget_intact();
        self.host.with_dom_mut(|dom| {
            if inst == dom.root_ref() || dom.get_by_ref(inst).is_none() {
                return Err(EngineError::invalid("cannot remove that instance"));
            }
            dom.transfer_within(inst, Ref::none());
            Ok(())
        })?;
        // A removed model's voxels go with it.
        self.sync_terrain(terrain::Discover::Nothing);
        // Removing a model (or an ancestor) cancels its generation.
        let models = self.models();
        let flying: Vec<Ref> = self.st().in_flight.keys().copied().collect();
        for m in flying {
            if !models.contains(&m) {
                self.cancel(m);
            }
        }
        Ok(())
    }

    /// Whether `model` is a ProceduralModel of the scene for which `test` holds: an input
    /// already holding the value a mutation would set is no change (no undo step, no
    /// regeneration).
    fn model_holds(&self, model: Ref, test: impl FnOnce(&rbx_dom_weak::Instance) -> bool) -> bool {
        self.host.with_dom_ref(|d| {
            d.get_by_ref(model)
                .is_some_and(|i| i.class == "ProceduralModel" && test(i))
        })
    }

    fn change(
        &mut self,
        model: Ref,
        what: &str,
        f: impl FnOnce(&mut WeakDom) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        if !self.model_holds(model, |_| true) {
            return Err(EngineError::invalid(format!(
                "{what}: not a ProceduralModel"
            )));
        }
        let before = self.st().undo.snapshot_all(&*self.host, &[model]);
        // Its inputs change (a different key from now on), and so do the results of the
        // models it is nested in.
        {
            let mut st = self.st();
            if let Some(p) = st.placed.remove(&model) {
                st.superseded.insert(model, p);
            }
        }
        self.forget_enclosing(model);
        self.host.with_dom_mut(f)?;
        let host = self.host.clone();
        self.st().undo.push(&*host, what, before);
        Ok(())
    }

    // ----- undo -----

    /// Starts a gesture (a drag of a value in an editor): every change until
    /// [`Engine::end_gesture`] joins one undo step, whose undo restores the inputs and
    /// results from before the gesture. Undo, redo and a second `begin_gesture` end it.
    pub fn begin_gesture(&mut self) {
        self.st().undo.begin_gesture();
    }

    /// Ends the open gesture (nothing when none is open).
    pub fn end_gesture(&mut self) {
        self.st().undo.end_gesture();
    }

    /// Undoes the last change: previous inputs and previous results, without running the
    /// generator. Returns false when there is nothing to undo.
    pub fn undo(&mut self) -> bool {
        self.travel(true)
    }

    /// Redoes the last undone change.
    pub fn redo(&mut self) -> bool {
        self.travel(false)
    }

    /// Undoes (`back`) or redoes a change, then brings the engine's records in line.
    fn travel(&mut self, back: bool) -> bool {
        let host = self.host.clone();
        let writes = self.host.scene_writes();
        let restored = {
            let mut st = self.st();
            let st = &mut *st;
            if back {
                st.undo.undo(&*host, &st.placed, writes)
            } else {
                st.undo.redo(&*host, &st.placed, writes)
            }
        };
        let Some(restored) = restored else {
            return false;
        };
        // Fails only when the VM's registry is gone, which the next run reports.
        let _ = self.replace_code(&restored.touched);
        self.sync_terrain(terrain::Discover::All);
        self.resync(&restored.touched);
        // The results brought back are in place again, with their records.
        self.st().placed.extend(restored.records);
        true
    }

    /// Forgets which results in place are intact (the held ones keep their records).
    fn forget_placed(&mut self) {
        let mut st = self.st();
        st.placed.clear();
        st.superseded.clear();
    }

    /// Forgets which results, in place or held for undo, are intact.
    fn forget_intact(&mut self) {
        self.forget_placed();
        self.st().undo.forget_records();
    }

    fn resync(&mut self, models: &[Ref]) {
        // Undo and redo swap results and restore inputs.
        self.forget_placed();
        for &m in models {
            let fp = self.fingerprint(m);
            let dirty = self.is_dirty(m);
            let mut state = self.st();
            let st = state.states.entry(m).or_default();
            st.applied = if dirty { None } else { Some(fp) };
        }
    }
}
