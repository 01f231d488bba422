//! The ProceduralModel lifecycle (SPEC §2–4): a scene (a DataModel) whose ProceduralModels
//! regenerate when their inputs change — deferred to `step()`, coalesced, top-down for nested
//! models, failing into an error placeholder, undoable, and saved with their dirty state.
//!
//! Owns: dirty tracking (input fingerprints), the generation order, applying results, undo
//! waypoints, scene files. Must never: run a generator outside `step()`/`force`, block on a
//! generator without the host's timeout, or let a generator failure escape as an error of
//! the engine (failures are data: placeholder + `GenerationError`).

mod apply;
pub mod cache;
mod declared;
mod fingerprint;
mod parallel;
pub mod provenance;
mod scene;
pub mod terrain;
mod undo;

pub mod thread;

pub use cache::ResultCache;
pub use declared::DeclaredDefaults;
pub use scene::{
    AttributeBlobError, SceneFormat, check_attributes, read_bytes as read_scene_bytes,
    remove_stale_temp_files, write_atomic, write_atomic_with,
};

use procmodel_dom::keys::KEYS;
use procmodel_luau::{Host, HostConfig, HostError};
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};
use std::cell::{RefCell, RefMut};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Engine errors (scene files, bad API use). Generator failures are reports, not errors.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Host(#[from] HostError),
    #[error("{0}")]
    Invalid(String),
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

/// What happened to one model in a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub model: Ref,
    /// `GetFullName` of the model.
    pub path: String,
    pub ok: bool,
    pub error: Option<String>,
    pub elapsed: Duration,
    /// Instances in the model's results after the run.
    pub instances: usize,
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
    /// Cache keys of runs in progress (filled when they succeed).
    cache_keys: HashMap<Ref, [u8; 32]>,
    /// Bumped whenever a ModuleScript's code is replaced (see [`Engine::code_revision`]).
    code_revision: u64,
    /// The models' voxels merged into the scene's Terrain (`terrain.rs`).
    terrain: terrain::Book,
    /// Models whose results were just applied from the cache (their provenance came with
    /// them).
    from_cache: std::collections::HashSet<Ref>,
    /// Content hashes of results a worker computed for a model being applied this step
    /// (taken when its provenance is recorded).
    content_hashes: HashMap<Ref, [u8; 32]>,
    /// ProceduralModels in the results applied during the current nesting pass (pre-order
    /// per model, models in the order applied): the next pass's scope.
    found_nested: Vec<Ref>,
}

/// A parallel step's finished runs, applied in the models' order.
struct InOrder<'a> {
    models: &'a [Ref],
    next: usize,
    ready: HashMap<Ref, (ParallelResult, Duration)>,
}

type ParallelResult = Result<
    (
        apply::Prepared,
        apply::Produced,
        Option<rbx_dom_weak::WeakDom>,
    ),
    String,
>;

/// A generation that waits for a later frame.
struct InFlight {
    pending: procmodel_luau::PendingRun,
    /// Input fingerprint when it started: a different one cancels it.
    fp: u64,
    prepared: apply::Prepared,
    defaults: Vec<(String, Variant)>,
    started: Instant,
    /// Execution time used so far (the frames it ran in).
    busy: Duration,
}

/// A scene with its engine. Not `Send`: the engine, its VM and its state live on one thread
/// (front ends drive it through [`thread::EngineThread`]).
pub struct Engine {
    host: Host,
    state: Rc<RefCell<EngineState>>,
}

impl Engine {
    /// An empty scene (DataModel with Workspace and ServerStorage).
    pub fn new(config: EngineConfig) -> Result<Engine, EngineError> {
        let host = Host::new(config.host.clone())?;
        Ok(Engine::with_host(host, config))
    }

    /// Loads a scene from `.rbxl`, `.rbxlx`, `.rbxm` or `.rbxmx`. Models saved dirty are
    /// queued; `GenerationError` is not loaded.
    pub fn load(path: &Path, config: EngineConfig) -> Result<Engine, EngineError> {
        let dom = scene::read(path)?;
        let host = Host::with_dom(config.host.clone(), dom)?;
        let mut engine = Engine::with_host(host, config);
        engine.adopt_loaded();
        Ok(engine)
    }

    fn with_host(host: Host, config: EngineConfig) -> Engine {
        let state = Rc::new(RefCell::new(EngineState {
            config,
            states: HashMap::new(),
            undo: undo::History::default(),
            required: HashMap::new(),
            sources: Default::default(),
            pool: Default::default(),
            on_report: None,
            in_flight: HashMap::new(),
            cache_keys: HashMap::new(),
            code_revision: 0,
            terrain: terrain::Book::default(),
            from_cache: std::collections::HashSet::new(),
            content_hashes: HashMap::new(),
            found_nested: Vec::new(),
        }));
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
        self.host.set_frame_hook(Some(Box::new(move |host: &Host| {
            let mut e = Engine {
                host: host.clone(),
                state: state.clone(),
            };
            // ChangeHistoryService requests since the last frame, in order. The engine
            // records a waypoint per mutation, so SetWaypoint has nothing more to mark.
            for request in e.host.take_history_requests() {
                match request {
                    procmodel_luau::HistoryRequest::Undo => {
                        e.undo();
                    }
                    procmodel_luau::HistoryRequest::Redo => {
                        e.redo();
                    }
                    procmodel_luau::HistoryRequest::Waypoint(_) => {}
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

    /// Saves the scene atomically (temp file + rename). `Dirty` is saved as it is.
    pub fn save(&self, path: &Path) -> Result<(), EngineError> {
        self.host.with_dom_ref(|dom| scene::write(dom, path))
    }

    /// Ends the engine and returns its scene. The VM, its handles and any worker VMs are
    /// freed first, so a large save that follows reuses their memory.
    pub fn into_dom(self) -> WeakDom {
        self.host.take_dom()
    }

    /// The Luau host running this scene (scripts, DOM access).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// ProceduralModels in the scene, top-down (pre-order).
    pub fn models(&self) -> Vec<Ref> {
        if !self.host.may_have_models() {
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
            let dirty = self.is_dirty(m);
            let fp = self.fingerprint(m);
            let mut state = self.st();
            let st = state.states.entry(m).or_default();
            if !dirty {
                st.applied = Some(fp);
            }
        }
    }

    fn fingerprint(&self, model: Ref) -> u64 {
        let mut sources = std::mem::take(&mut self.st().sources);
        let fp = self
            .host
            .with_dom_ref(|dom| fingerprint::inputs(dom, model, &mut sources));
        self.st().sources = sources;
        fp
    }

    // ----- mutations (each is an undo waypoint) -----

    /// Sets an attribute on a model (an explicit input).
    pub fn set_attribute(
        &mut self,
        model: Ref,
        name: &str,
        value: Option<Variant>,
    ) -> Result<(), EngineError> {
        self.change(model, "set attribute", |dom| {
            apply::set_attribute(dom, model, name, value)
        })
    }

    /// Sets the model's Size (an explicit input).
    pub fn set_size(&mut self, model: Ref, size: glam::Vec3) -> Result<(), EngineError> {
        if !size.is_finite() || size.min_element() < 0.0 {
            return Err(EngineError::Invalid(format!(
                "Size must be finite and not negative, got {size}"
            )));
        }
        self.change(model, "set Size", |dom| {
            apply::set_prop(
                dom,
                model,
                KEYS.size,
                Variant::Vector3(procmodel_dom::from_vec3(size)),
            )
        })
    }

    /// Points the model at a generator module, or bakes it with `None` (keeps the results,
    /// stops regenerating).
    pub fn set_generator(&mut self, model: Ref, module: Option<Ref>) -> Result<(), EngineError> {
        self.change(model, "set Generator", |dom| {
            apply::set_prop(
                dom,
                model,
                KEYS.generator,
                Variant::Ref(module.unwrap_or_else(Ref::none)),
            )
        })
    }

    /// Rescales the model's results without regenerating (`ScaleTo`).
    pub fn scale_to(&mut self, model: Ref, scale: f32) -> Result<(), EngineError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(EngineError::Invalid(format!(
                "Scale must be positive, got {scale}"
            )));
        }
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
        let before = self.st().undo.snapshot_all(&self.host, &touched);
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
        self.st().undo.push(&host, "set Source", before);
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
    fn replace_code(&mut self, touched: &[Ref]) -> Result<(), EngineError> {
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
                self.host
                    .invalidate_module(r)
                    .map_err(|e| EngineError::Invalid(e.to_string()))?;
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
        let loaded = apply::load(&self.host, module, &origin, &mut required);
        self.st().required = required;
        loaded.map(|g| g.attributes).map_err(EngineError::Invalid)
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
        self.host.with_dom_mut(|dom| {
            if inst == dom.root_ref() || dom.get_by_ref(inst).is_none() {
                return Err(EngineError::Invalid("cannot remove that instance".into()));
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

    fn change(
        &mut self,
        model: Ref,
        what: &str,
        f: impl FnOnce(&mut WeakDom) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let is_model = self.host.with_dom_ref(|d| {
            d.get_by_ref(model)
                .is_some_and(|i| i.class == "ProceduralModel")
        });
        if !is_model {
            return Err(EngineError::Invalid(format!(
                "{what}: not a ProceduralModel"
            )));
        }
        let before = self.st().undo.snapshot_all(&self.host, &[model]);
        self.host.with_dom_mut(f)?;
        let host = self.host.clone();
        self.st().undo.push(&host, what, before);
        Ok(())
    }

    // ----- the frame loop -----

    /// Marks a model for regeneration even if its inputs did not change.
    pub fn force_generation(&mut self, model: Ref) -> bool {
        // An ancestry walk, not a walk of the whole scene: scripts and tools call this for
        // many models in a row.
        let in_scene = self.host.with_dom_ref(|d| {
            d.get_by_ref(model)
                .is_some_and(|i| i.class == "ProceduralModel")
                && procmodel_dom::in_scene(d, model)
        });
        if in_scene {
            self.host
                .with_dom_mut(|dom| apply::set_dirty(dom, model, true));
        }
        in_scene
    }

    /// One frame: detects input changes, then regenerates every dirty model top-down
    /// (nested models produced in this step too, deepest last). Returns one report per run.
    pub fn step(&mut self) -> Vec<Report> {
        let mut reports = Vec::new();
        for forced in self.host.take_forced() {
            self.host
                .with_dom_mut(|dom| apply::set_dirty(dom, forced, true));
        }
        let (max_depth, jobs, budget) = {
            let st = self.st();
            (
                st.config.max_depth,
                st.config.jobs.max(1),
                st.config.frame_budget,
            )
        };
        // The frame (and its budget) starts before runs in flight continue: they share it
        // with the runs this frame begins.
        let _ = self.host.begin_frame(budget);
        // Models removed or brought back since the last frame (by scripts, by the front
        // end) take their voxels with them.
        self.sync_terrain(terrain::Discover::Nothing);
        reports.extend(self.advance_in_flight());
        // Pass 0 looks at the whole scene; a later pass only at the models the pass before
        // generated and the ProceduralModels found in their results while applying them
        // (no second walk of the results).
        let mut scope: Option<Vec<Ref>> = None;
        for pass in 0..=max_depth {
            let mut dirty = self.collect_dirty(scope.as_deref());
            dirty.retain(|m| !self.is_generating(*m));
            if dirty.is_empty() {
                break;
            }
            self.st().found_nested.clear();
            let mut next = dirty.clone();
            if jobs > 1 && dirty.len() > 1 && pass < max_depth {
                reports.extend(self.generate_parallel(&dirty, jobs, max_depth));
            } else {
                for model in dirty {
                    let depth = self.host.with_dom_ref(|d| apply::nesting_depth(d, model));
                    if depth > max_depth || pass == max_depth {
                        let msg = format!(
                            "nested ProceduralModels are {depth} levels deep (limit {max_depth}): a generator that outputs itself?"
                        );
                        reports.push(self.fail(model, msg, Duration::ZERO));
                    } else if let Some(r) = self.begin(model) {
                        reports.push(r);
                    }
                }
            }
            next.append(&mut self.st().found_nested);
            scope = Some(next);
        }
        self.host.end_frame();
        reports
    }

    /// Marks models whose inputs changed as dirty without generating (what a save between
    /// frames records). Returns the dirty models.
    pub fn detect_changes(&mut self) -> Vec<Ref> {
        self.collect_dirty(None)
    }

    /// Steps until no model is dirty (or `max_steps` frames passed).
    /// Generations still in flight after `max_steps` frames are cancelled and reported as
    /// failures.
    pub fn settle(&mut self, max_steps: usize) -> Vec<Report> {
        let mut all = Vec::new();
        for _ in 0..max_steps {
            let r = self.step();
            let idle = r.is_empty() && self.st().in_flight.is_empty();
            all.extend(r);
            if idle {
                break;
            }
        }
        // Only runs in flight can be stuck (and walking the scene for them costs time in its
        // size).
        let stuck: Vec<Ref> = if self.st().in_flight.is_empty() {
            Vec::new()
        } else {
            self.models()
                .into_iter()
                .filter(|&m| self.is_generating(m))
                .collect()
        };
        for m in stuck {
            let started = self.st().in_flight.get(&m).map(|f| f.started);
            self.cancel(m);
            let msg = format!("generation did not finish within {max_steps} frames");
            all.push(self.fail(m, msg, started.map_or(Duration::ZERO, |s| s.elapsed())));
        }
        all
    }

    /// The dirty models of the whole scene (`None`, pre-order), or of exactly `models`
    /// (those still in the scene, in the order given).
    fn collect_dirty(&mut self, models: Option<&[Ref]>) -> Vec<Ref> {
        let models = match models {
            None => self.models(),
            Some(list) => self.host.with_dom_ref(|dom| {
                list.iter()
                    .copied()
                    .filter(|&m| {
                        dom.get_by_ref(m)
                            .is_some_and(|i| i.class == "ProceduralModel")
                            && procmodel_dom::in_scene(dom, m)
                    })
                    .collect::<Vec<_>>()
            }),
        };
        let mut dirty = Vec::new();
        for m in models {
            let fp = self.fingerprint(m);
            let has_generator = self
                .host
                .with_dom_ref(|d| apply::generator_of(d, m).is_some());
            let flagged = self.host.with_dom_ref(|d| apply::dirty_flag(d, m));
            let (changed, fresh) = {
                let mut state = self.st();
                let st = state.states.entry(m).or_default();
                (st.applied != Some(fp), st.applied.is_none() && st.runs == 0)
            };
            if has_generator && (flagged || changed || fresh) {
                if !flagged {
                    self.host.with_dom_mut(|d| apply::set_dirty(d, m, true));
                }
                dirty.push(m);
            } else if !has_generator && flagged {
                // A baked model (Generator = nil) never regenerates.
                self.host.with_dom_mut(|d| apply::set_dirty(d, m, false));
            }
        }
        // A model in the results of another dirty model is replaced when that one
        // regenerates: generating it on its own first would be wasted (and would apply
        // results, terrain included, for a model about to leave the scene).
        if dirty.len() > 1 {
            let set: HashSet<Ref> = dirty.iter().copied().collect();
            self.host
                .with_dom_ref(|d| dirty.retain(|&m| !apply::in_results_of_any(d, m, &set)));
        }
        dirty
    }

    /// Starts generating `model` on the scene's VM. Returns its report when it finished
    /// within this frame; otherwise it is in flight and continues at the next step.
    fn begin(&mut self, model: Ref) -> Option<Report> {
        let started = Instant::now();
        self.st().states.entry(model).or_default().runs += 1;
        let fp = self.fingerprint(model);
        let prepared = match self.host.with_dom_ref(|dom| apply::prepare(dom, model)) {
            Ok(p) => p,
            Err(msg) => return Some(self.fail(model, msg, started.elapsed())),
        };
        if let Some(hit) = self.cached(model, &prepared, started) {
            return Some(hit);
        }
        let mut required = std::mem::take(&mut self.st().required);
        let outcome = apply::start(&self.host, &prepared, &mut required);
        self.st().required = required;
        match outcome {
            Ok(apply::Started::Done(produced)) => {
                Some(self.complete(model, &prepared, produced, started))
            }
            Ok(apply::Started::Pending(pending, defaults)) => {
                self.st().in_flight.insert(
                    model,
                    InFlight {
                        pending,
                        fp,
                        prepared,
                        defaults,
                        started,
                        busy: started.elapsed(),
                    },
                );
                None
            }
            Err(msg) => Some(self.fail(model, msg, started.elapsed())),
        }
    }

    /// Applies a finished run's results to the scene and reports.
    fn complete(
        &mut self,
        model: Ref,
        prepared: &apply::Prepared,
        produced: apply::Produced,
        started: Instant,
    ) -> Report {
        let outcome = self.apply_results(model, prepared, produced, None);
        self.conclude(model, outcome, started.elapsed())
    }

    /// Applies a run's results to the scene (moving them in first from `held`, the tree a
    /// worker VM sent them in); the replaced results go to the undo history.
    fn apply_results(
        &mut self,
        model: Ref,
        prepared: &apply::Prepared,
        produced: apply::Produced,
        held: Option<rbx_dom_weak::WeakDom>,
    ) -> Result<usize, String> {
        let state = self.state.clone();
        let mut produced = produced;
        let result = self.host.with_dom_mut(|dom| {
            if let Some(mut held) = held {
                // Move the results (referents kept) next to the model, then apply.
                held.transfer(produced.container, dom, model);
                dom.transfer_within(produced.container, Ref::none());
            }
            if !produced.placed {
                produced.delta = Some(apply::place(dom, model, &produced));
                produced.placed = true;
            }
            // The voxels the run wrote: placed as its parts were, refused before the swap
            // when they cannot be placed or overlap another model's.
            let delta = produced
                .delta
                .unwrap_or_else(|| apply::pin_pivot(dom, model));
            let scale = dom
                .get_by_ref(model)
                .map(procmodel_dom::model_scale)
                .unwrap_or(1.0);
            let checked =
                state
                    .borrow()
                    .terrain
                    .check_new(dom, model, produced.container, &delta, scale);
            if let Err(e) = checked {
                if dom.get_by_ref(produced.container).is_some() {
                    dom.destroy(produced.container);
                }
                return Err(e);
            }
            let mut nested = Vec::new();
            let applied = apply::apply_output(
                dom,
                model,
                prepared,
                produced,
                &mut |dom, old| state.borrow_mut().undo.retire(dom, model, old),
                &mut nested,
            );
            // The next nesting pass looks at exactly these (no second walk of the results).
            state.borrow_mut().found_nested.extend(nested);
            applied
        });
        self.mark_retired();
        result
    }

    /// Tells the host which replaced results are destroyed now (their Parent is locked, as
    /// for Roblox's destroyed instances, while references to them still read) and which
    /// are gone from the DOM.
    fn mark_retired(&mut self) {
        let (destroyed, gone) = self.st().undo.take_destroyed();
        if !destroyed.is_empty() || !gone.is_empty() {
            self.host.mark_destroyed(&destroyed, &gone);
        }
    }

    /// The report of a finished run: results applied, or the error placeholder.
    fn conclude(
        &mut self,
        model: Ref,
        outcome: Result<usize, String>,
        elapsed: Duration,
    ) -> Report {
        match outcome {
            Ok(n) => self.finish(model, Ok(n), elapsed),
            Err(msg) => self.fail(model, msg, elapsed),
        }
    }

    /// Runs in flight: those whose inputs changed while they waited, or whose model left the
    /// scene, are cancelled (a changed model restarts with its new inputs in this step); the
    /// others continue for one frame.
    fn advance_in_flight(&mut self) -> Vec<Report> {
        let mut reports = Vec::new();
        if self.st().in_flight.is_empty() {
            return reports;
        }
        let models = self.models();
        let flying: Vec<Ref> = self.st().in_flight.keys().copied().collect();
        for m in flying {
            if !models.contains(&m) {
                self.cancel(m);
            }
        }
        for m in models {
            let Some(mut f) = self.st().in_flight.remove(&m) else {
                continue;
            };
            if self.fingerprint(m) != f.fp {
                self.host.cancel_generator(f.pending);
                continue;
            }
            let resumed = Instant::now();
            let state = self.host.resume_generator(&mut f.pending, 1);
            f.busy += resumed.elapsed();
            match state {
                Ok(procmodel_luau::RunState::Suspended) => {
                    let limit = self.st().config.run_limit;
                    if f.busy > limit {
                        self.host.cancel_generator(f.pending);
                        let msg = format!(
                            "Run time limit: the generation used {:.1} s of execution time over several frames (limit {:.1} s)",
                            f.busy.as_secs_f64(),
                            limit.as_secs_f64()
                        );
                        reports.push(self.fail(m, msg, f.started.elapsed()));
                        continue;
                    }
                    self.st().in_flight.insert(m, f);
                }
                Ok(procmodel_luau::RunState::Done(out)) => {
                    let produced = apply::Produced {
                        container: out.container,
                        primary_part: out.primary_part,
                        defaults: std::mem::take(&mut f.defaults),
                        placed: false,
                        delta: None,
                    };
                    reports.push(self.complete(m, &f.prepared, produced, f.started));
                }
                Err(e) => reports.push(self.fail(m, apply::message(&e), f.started.elapsed())),
            }
        }
        reports
    }

    fn cancel(&mut self, model: Ref) {
        let flight = self.st().in_flight.remove(&model);
        if let Some(f) = flight {
            self.host.cancel_generator(f.pending);
        }
    }

    /// True while a generation of `model` waits for a later frame.
    pub fn is_generating(&self, model: Ref) -> bool {
        self.st().in_flight.contains_key(&model)
    }

    /// Generates `models` on `jobs` VMs — the engine's own and `jobs - 1` worker threads, each
    /// over a copy of the scene (same referents). The engine's VM applies results between its
    /// own runs, in the order of `models` (a result waits for those before it), so applying
    /// overlaps generating and the scene — voxels of overlapping models included — does not
    /// depend on which VM finished first. Reports come back in the order of `models`.
    fn generate_parallel(&mut self, all: &[Ref], jobs: usize, max_depth: usize) -> Vec<Report> {
        let (mut reports, misses) = self.cached_all(all);
        let models = &misses[..];
        let host_config = self.st().config.host.clone();
        let helpers = jobs.min(models.len()).saturating_sub(1);
        // The pivot each model's results land on is pinned first, so the copies (which leave
        // the old results out) place them exactly as the scene would.
        self.host.with_dom_mut(|dom| {
            for &m in models {
                apply::pin_pivot(dom, m);
            }
        });
        let copies: Vec<rbx_dom_weak::WeakDom> = self.host.with_dom_ref(|scene| {
            (0..helpers)
                .map(|_| parallel::clone_scene(scene, models))
                .collect()
        });
        let queue = std::sync::Arc::new(parallel::Queue::new(models));
        let (tx, rx) = std::sync::mpsc::channel::<parallel::Finished>();
        let mut pool = std::mem::take(&mut self.st().pool);
        let hash = self.st().config.records_provenance();
        pool.dispatch(&host_config, copies, &queue, &tx, hash);
        self.st().pool = pool;
        drop(tx);
        let mut required = std::mem::take(&mut self.st().required);
        let host = self.host.clone();
        // Results are applied in the order of `models` (each as soon as it and those before
        // it are there): overlapping voxels make the order matter, and it must not depend on
        // which VM finished first.
        let mut order = InOrder {
            models,
            next: 0,
            ready: HashMap::new(),
        };
        while let Some(m) = queue.take() {
            let (m, result, elapsed) = parallel::run_one(&host, m, &mut required);
            order
                .ready
                .insert(m, (result.map(|(p, o)| (p, o, None)), elapsed));
            while let Ok(f) = rx.try_recv() {
                self.take_finished(&mut order, f);
            }
            self.apply_in_order(&mut order, &mut reports, max_depth);
        }
        // The queue is empty: apply what the workers still send until they are done.
        for f in rx {
            self.take_finished(&mut order, f);
            self.apply_in_order(&mut order, &mut reports, max_depth);
        }
        // Models whose worker died leave a gap: apply the rest after it.
        while let Some(m) = order.models.get(order.next) {
            if !order.ready.contains_key(m) {
                order.next += 1;
            }
            self.apply_in_order(&mut order, &mut reports, max_depth);
        }
        self.st().required = required;
        all.iter()
            .map(|&m| match reports.remove(&m) {
                Some(r) => r,
                None => {
                    // Its worker thread died (a bug, not a script error): say so, keep going.
                    self.st().states.entry(m).or_default().runs += 1;
                    let msg = "internal error: the worker VM running this model stopped";
                    self.fail(m, msg.to_owned(), Duration::ZERO)
                }
            })
            .collect()
    }

    /// Queues a worker's run for applying in order, keeping the content hash it computed
    /// for recording provenance.
    fn take_finished(&mut self, order: &mut InOrder<'_>, f: parallel::Finished) {
        if let Some(h) = f.content_hash {
            self.st().content_hashes.insert(f.model, h);
        }
        order.ready.insert(f.model, (f.result, f.elapsed));
    }

    /// Applies the results waiting in `order` whose turn has come.
    fn apply_in_order(
        &mut self,
        order: &mut InOrder<'_>,
        reports: &mut HashMap<Ref, Report>,
        max_depth: usize,
    ) {
        while let Some(&m) = order.models.get(order.next) {
            let Some((result, elapsed)) = order.ready.remove(&m) else {
                break;
            };
            order.next += 1;
            let r = self.apply_parallel(m, result, elapsed, max_depth);
            reports.insert(m, r);
        }
    }

    /// Applies one parallel run's results (`held`: the tree they were moved into, for a
    /// worker's; None when they are already in the scene's tree).
    fn apply_parallel(
        &mut self,
        model: Ref,
        result: Result<
            (
                apply::Prepared,
                apply::Produced,
                Option<rbx_dom_weak::WeakDom>,
            ),
            String,
        >,
        elapsed: Duration,
        max_depth: usize,
    ) -> Report {
        self.st().states.entry(model).or_default().runs += 1;
        let depth = self.host.with_dom_ref(|d| apply::nesting_depth(d, model));
        if depth > max_depth {
            let msg =
                format!("nested ProceduralModels are {depth} levels deep (limit {max_depth})");
            return self.fail(model, msg, elapsed);
        }
        let outcome = result.and_then(|(prepared, produced, held)| {
            self.apply_results(model, &prepared, produced, held)
        });
        self.conclude(model, outcome, elapsed)
    }

    fn fail(&mut self, model: Ref, message: String, elapsed: Duration) -> Report {
        let state = self.state.clone();
        self.host.with_dom_mut(|dom| {
            apply::place_error(dom, model, &message, &mut |dom, old| {
                state.borrow_mut().undo.retire(dom, model, old)
            })
        });
        self.mark_retired();
        self.finish(model, Err(message), elapsed)
    }

    /// Records a finished run (results applied or placeholder placed): the inputs it was made
    /// from (fingerprinted after applying — filling in default attributes is not a change) and
    /// the results joining the undo step that caused the run.
    fn finish(&mut self, model: Ref, outcome: Result<usize, String>, elapsed: Duration) -> Report {
        // The old results' voxels give way to the new ones' (or to what was under them).
        let outcome = match (
            self.sync_terrain(terrain::Discover::Models(&[model])),
            outcome,
        ) {
            (Some(e), Ok(_)) => Err(e),
            (_, outcome) => outcome,
        };
        self.record_and_fill(model, outcome.is_ok());
        let fp = self.fingerprint(model);
        self.st().states.entry(model).or_default().applied = Some(fp);
        let host = self.host.clone();
        self.st().undo.attach_results(&host, model);
        let (ok, error, instances) = match outcome {
            Ok(n) => (true, None, n),
            Err(e) => (false, Some(e), 1),
        };
        let report = Report {
            model,
            path: self.host.with_dom_ref(|d| apply::full_name(d, model)),
            ok,
            error,
            elapsed,
            instances,
        };
        // Take the callback out while it runs, so it may not re-enter the engine state.
        let callback = self.st().on_report.take();
        if let Some(mut f) = callback {
            f(&report);
            self.st().on_report = Some(f);
        }
        report
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
        let host = self.host.clone();
        let Some(states) = self.st().undo.undo(&host) else {
            return false;
        };
        // Fails only when the VM's registry is gone, which the next run reports.
        let _ = self.replace_code(&states);
        self.sync_terrain(terrain::Discover::All);
        self.resync(&states);
        true
    }

    /// Redoes the last undone change.
    pub fn redo(&mut self) -> bool {
        let host = self.host.clone();
        let Some(states) = self.st().undo.redo(&host) else {
            return false;
        };
        // Fails only when the VM's registry is gone, which the next run reports.
        let _ = self.replace_code(&states);
        self.sync_terrain(terrain::Discover::All);
        self.resync(&states);
        true
    }

    /// Brings the scene's Terrain in line with the results now in the scene (see
    /// `terrain.rs`): a model whose voxels cannot come back because another model owns one
    /// of their cells is marked dirty, so its next generation reports the overlap. Returns
    /// the error when the scene's Terrain cannot be read.
    fn sync_terrain(&mut self, discover: terrain::Discover) -> Option<String> {
        let idle = {
            let st = self.st();
            // Nothing merged, and nothing that could be: no scene walk at all.
            let none = st.terrain.is_empty()
                && (matches!(discover, terrain::Discover::Nothing) || !self.host.may_have_models());
            none || !self
                .host
                .with_dom_ref(|d| st.terrain.needs_sync(d, discover))
        };
        if idle {
            return None;
        }
        let mut book = std::mem::take(&mut self.st().terrain);
        let result = self.host.with_dom_mut(|dom| book.sync(dom, discover));
        self.st().terrain = book;
        match result {
            Ok(conflicts) => {
                for m in conflicts {
                    self.host.with_dom_mut(|dom| apply::set_dirty(dom, m, true));
                }
                None
            }
            Err(e) => Some(e),
        }
    }

    fn resync(&mut self, models: &[Ref]) {
        for &m in models {
            let fp = self.fingerprint(m);
            let dirty = self.is_dirty(m);
            let mut state = self.st();
            let st = state.states.entry(m).or_default();
            st.applied = if dirty { None } else { Some(fp) };
        }
    }
}
