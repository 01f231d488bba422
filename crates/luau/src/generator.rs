//! Running one generator module: load it, read its `Attributes`, build `params`, call
//! `OnGenerate(params, targetContainer)` in a new thread, end leaked threads, take results.

use crate::context::ctx;
use crate::error::HostError;
use crate::host::Host;
use mlua::{Function, IntoLuaMulti, MultiValue, Table, Value};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Ref, Variant};
use std::path::Path;

/// A loaded generator module.
pub struct Generator {
    /// The ModuleScript instance.
    pub module: Ref,
    /// Declared attributes and defaults, sorted by name. `None` when the module declares none.
    pub attributes: Option<Vec<(String, Variant)>>,
    pub on_generate: Function,
    /// Display name (file or instance path) used in errors.
    pub origin: String,
}

pub use procmodel_script::{RunInputs, RunOutput, RunState};

/// A generation started with [`Host::start_generator`], not finished yet.
pub struct PendingRun {
    run: Option<crate::task::Run>,
    /// The temporary GeneratedFolder (`targetContainer`).
    pub container: Ref,
    created: usize,
    created_bytes: usize,
    allow_outside_write: bool,
    /// [`RunInputs::allow_csg`].
    allow_csg: bool,
    watch_outside: procmodel_script::WatchOutside,
    touched_outside: bool,
    /// [`crate::context::Ctx::read_outside`] so far.
    read_outside: bool,
    /// [`RunInputs::hidden`].
    hidden: Vec<Ref>,
    /// Stamps the instances the run creates ([`crate::context::Handles::set_run`]).
    stamp: u32,
    /// The key of its next instance handle ([`crate::context::Handles::set_run`]).
    next_key: u32,
    /// [`crate::context::Ctx::run_escaped`] at the end of its last frame.
    escaped: bool,
    /// The generator module.
    module: Ref,
    /// [`crate::context::Ctx::run_requires`] so far.
    reached: rustc_hash::FxHashSet<Ref>,
    /// [`crate::context::Ctx::reads`] so far: named only for a run that finishes in the
    /// frame it started in (between frames other code may change what it read).
    reads: crate::reads::ReadNotes,
    /// Whether its first frame ran.
    started: bool,
}

/// Roblox's error for a module whose code returns no value or several.
const NOT_ONE_VALUE: &str = "Module code did not return exactly one value";

impl Host {
    /// Reads a script file and confines its string requires to the file's folder.
    fn read_script_file(&self, path: &Path) -> Result<(String, std::path::PathBuf), HostError> {
        let source = read_script_text(path)?;
        let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(dir) = abs.parent() {
            self.lua
                .set_app_data(crate::globals::RequireRoot(dir.to_path_buf()));
        }
        Ok((source, abs))
    }

    /// Loads a generator from a file as a ModuleScript under `parent`.
    pub fn load_generator_file(
        &mut self,
        path: &Path,
        parent: Ref,
    ) -> Result<Generator, HostError> {
        let module = self.add_generator_file(path, parent)?;
        self.load_generator(module, &path.display().to_string())
    }

    /// Reads a generator file into a ModuleScript under `parent` (named after the file, its
    /// file recorded, string requires kept beside it) without requiring it.
    pub fn add_generator_file(&self, path: &Path, parent: Ref) -> Result<Ref, HostError> {
        let (source, abs) = self.read_script_file(path)?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("Generator");
        Ok(self.add_module_script(parent, name, &source, Some(&abs)))
    }

    /// Requires a ModuleScript and checks it is a generator.
    pub fn load_generator(&self, module: Ref, origin: &str) -> Result<Generator, HostError> {
        let bad = |message: String| HostError::BadGenerator {
            file: origin.to_owned(),
            message,
        };
        let value = self.require(module).map_err(|e| match self.script_error(&e) {
            // The module's own code ran and returned nothing (or several values): said of
            // the file, without the loader's traceback.
            HostError::Script { message, .. } if message.contains(NOT_ONE_VALUE) => bad(format!(
                "{NOT_ONE_VALUE}: a generator module must return a table with Attributes and OnGenerate"
            )),
            other => crate::error::at_origin(other, origin),
        })?;
        let Value::Table(t) = value else {
            return Err(bad(format!(
                "a generator module must return a table with Attributes and OnGenerate, got {}",
                procmodel_luau_types::type_name(&value)
            )));
        };
        let on_generate = match t
            .get::<Value>("OnGenerate")
            .map_err(|e| bad(e.to_string()))?
        {
            Value::Function(f) => f,
            Value::Nil => {
                // Names are case-sensitive: `onGenerate` or `Ongenerate` is not the function.
                let near = t
                    .pairs::<Value, Value>()
                    .filter_map(Result::ok)
                    .filter_map(|(k, _)| match k {
                        Value::String(s) => Some(s.to_string_lossy()),
                        _ => None,
                    })
                    .filter(|k| k.eq_ignore_ascii_case("OnGenerate"))
                    .min();
                return Err(bad(match near {
                    Some(k) => format!(
                        "the module has no OnGenerate function (it has {k}: names are case-sensitive)"
                    ),
                    None => "the module has no OnGenerate function".into(),
                }));
            }
            other => {
                return Err(bad(format!(
                    "OnGenerate must be a function, got {}",
                    procmodel_luau_types::type_name(&other)
                )));
            }
        };
        let attributes = match t
            .get::<Value>("Attributes")
            .map_err(|e| bad(e.to_string()))?
        {
            Value::Nil => None,
            Value::Table(a) => Some(
                read_attributes(&a)
                    .map_err(|(name, message)| bad(format!("attribute {name}: {message}")))?,
            ),
            other => {
                return Err(bad(format!(
                    "Attributes must be a table of name = default value, got {}",
                    procmodel_luau_types::type_name(&other)
                )));
            }
        };
        Ok(Generator {
            module,
            attributes,
            on_generate,
            origin: origin.to_owned(),
        })
    }

    /// Runs `OnGenerate` once. Results stay in the returned orphan GeneratedFolder.
    pub fn run_generator(
        &self,
        generator: &Generator,
        inputs: &RunInputs,
    ) -> Result<RunOutput, HostError> {
        let lua = &self.lua;
        let container = {
            let mut c = ctx(lua).map_err(|e| crate::error::script(&e))?;
            // Limits are per run.
            c.created = 0;
            c.created_bytes = 0;
            c.outside_write_locked = !inputs.allow_outside_write;
            c.csg_locked = !inputs.allow_csg;
            c.watch_outside = inputs.watch_outside;
            c.touched_outside.set(false);
            c.read_outside.set(false);
            c.reads.get_mut().start(true);
            c.query_hidden.clone_from(&inputs.hidden);
            c.run_requires = Some(Default::default());
            c.failed_requires = None;
            // Its own instances start outside the scene.
            c.run_escaped.set(false);
            c.tree_changed();
            let container = c.dom.insert(
                Ref::none(),
                InstanceBuilder::new("GeneratedFolder").with_name("GeneratedFolder"),
            );
            c.run_container.set(container);
            c.run_module.set(generator.module);
            container
        };
        let params = match self.build_params(generator, inputs, container) {
            Ok(p) => p,
            Err(e) => {
                if let Ok(mut c) = ctx(lua) {
                    c.leave_run();
                    c.run_requires = None;
                }
                self.discard(container);
                return Err(self.script_error(&e));
            }
        };
        let container_ud = self
            .instance_value(container)
            .map_err(|e| crate::error::script(&e))?;
        // The run's own handles start here, after its container's and params' (as a stepped
        // run's do): their keys, and so the order of tables keyed by its instances, are the
        // same whichever way and on whichever VM it runs.
        {
            let mut c = ctx(lua).map_err(|e| crate::error::script(&e))?;
            let stamp = c.handles.new_run();
            c.handles.set_run(stamp, 1);
        }
        let result = self.run_thread(
            generator.on_generate.clone(),
            MultiValue::from_iter([Value::Table(params), container_ud]),
        );
        let (touched_outside, read_outside, created, requires, reads) = match ctx(lua) {
            Ok(mut c) => {
                c.leave_run();
                let reached = c.run_requires.take().unwrap_or_default();
                let requires = c.run_dependencies(generator.module, &reached);
                // What it read, as it saw it: nothing but the run changed the scene since.
                let crate::context::Ctx {
                    reads,
                    dom,
                    read_outside,
                    loads,
                    ..
                } = &mut *c;
                // And what its modules read when they loaded.
                let reads = match read_outside.get() {
                    true => None,
                    false => {
                        loads
                            .get_mut()
                            .of_run(reads.get_mut(), dom, generator.module, &requires)
                    }
                };
                (
                    c.touched_outside.get(),
                    reads.is_none(),
                    c.created,
                    requires,
                    reads.unwrap_or_default(),
                )
            }
            Err(_) => (false, false, 0, Vec::new(), Vec::new()),
        };
        if touched_outside && inputs.watch_outside == procmodel_script::WatchOutside::Defer {
            // Whatever the script made of the refusal (it may have caught it), the run is
            // to happen again where its writes reach the scene.
            self.discard(container);
            return Err(HostError::OutsideAccessDeferred {
                what: generator.origin.clone(),
            });
        }
        let (_, leaked) = match result {
            Ok(x) => x,
            Err(e) => {
                let err = self.script_error(&e);
                self.discard(container);
                if let Ok(mut c) = ctx(lua) {
                    c.failed_requires = Some(requires);
                }
                return Err(err);
            }
        };
        self.emit_terrain(container)?;
        let primary_part = self.with_dom_ref(|dom| {
            match dom
                .get_by_ref(container)
                .and_then(|i| i.properties.get(&crate::keys::KEYS.primary_part))
            {
                Some(Variant::Ref(r)) if r.is_some() => Some(*r),
                _ => None,
            }
        });
        Ok(RunOutput {
            container,
            primary_part,
            leaked_threads: leaked,
            // Reads of the scene do not defer a run, but its results are not the inputs' alone.
            touched_outside: touched_outside || read_outside,
            created,
            requires,
            reads,
        })
    }

    /// Starts `OnGenerate` as a run that the caller steps frame by frame (the engine): it
    /// runs until it finishes or waits for a later frame (`task.wait`, or a `Pause()` after
    /// [`Host::request_pause`]).
    pub fn start_generator(
        &self,
        generator: &Generator,
        inputs: &RunInputs,
    ) -> Result<(PendingRun, RunState), HostError> {
        let container = {
            let mut c = ctx(&self.lua).map_err(|e| crate::error::script(&e))?;
            c.dom.insert(
                Ref::none(),
                InstanceBuilder::new("GeneratedFolder").with_name("GeneratedFolder"),
            )
        };
        let params = match self.build_params(generator, inputs, container) {
            Ok(p) => p,
            Err(e) => {
                self.discard(container);
                return Err(self.script_error(&e));
            }
        };
        let container_ud = self
            .instance_value(container)
            .map_err(|e| crate::error::script(&e))?;
        let mut pending = PendingRun {
            run: None,
            container,
            created: 0,
            created_bytes: 0,
            allow_outside_write: inputs.allow_outside_write,
            allow_csg: inputs.allow_csg,
            watch_outside: inputs.watch_outside,
            touched_outside: false,
            read_outside: false,
            hidden: inputs.hidden.clone(),
            stamp: ctx(&self.lua)
                .map_err(|e| crate::error::script(&e))?
                .handles
                .new_run(),
            next_key: 1,
            escaped: false,
            module: generator.module,
            reached: Default::default(),
            reads: Default::default(),
            started: false,
        };
        if let Ok(mut c) = ctx(&self.lua) {
            c.failed_requires = None;
        }
        let hooks = self.watchdog_hooks();
        let f = generator.on_generate.clone();
        let args = MultiValue::from_iter([Value::Table(params), container_ud]);
        let result = self.within_run(&mut pending, || {
            crate::task::start_run(&self.lua, f, args, &hooks)
        });
        let (run, progress) = match result {
            Ok(x) => x,
            Err(e) => {
                let err = self.script_error(&e);
                let group = self
                    .lua
                    .app_data_ref::<crate::sched::Sched>()
                    .map(|s| s.last_group());
                if let Some(g) = group {
                    let _ = crate::task::end_leaked(&self.lua, g);
                }
                self.discard(container);
                let _ = self.lua.gc_collect();
                self.note_failed(&pending);
                return Err(err);
            }
        };
        pending.run = Some(run);
        let state = self.finish_step(&mut pending, Ok(progress))?;
        Ok((pending, state))
    }

    /// Steps a started generation across at most `frames` frame boundaries.
    pub fn resume_generator(
        &self,
        pending: &mut PendingRun,
        frames: u32,
    ) -> Result<RunState, HostError> {
        let Some(run) = pending.run.take() else {
            return Err(HostError::Vm("generation already finished".into()));
        };
        let hooks = self.watchdog_hooks();
        let result = self.within_run(pending, || {
            crate::task::pump(&self.lua, &run, frames, &hooks)
        });
        pending.run = Some(run);
        self.finish_step(pending, result)
    }

    /// Cancels a started generation: ends its threads and discards its partial results.
    pub fn cancel_generator(&self, mut pending: PendingRun) {
        if let Some(run) = pending.run.take() {
            let _ = crate::task::end_leaked(&self.lua, run.group);
        }
        self.discard(pending.container);
    }

    /// Runs `f` with this generation's limits in force: its own instance count and the lock on
    /// writes outside its container (scripts running between its frames are not limited).
    fn within_run<R>(&self, pending: &mut PendingRun, f: impl FnOnce() -> R) -> R {
        if let Ok(mut c) = ctx(&self.lua) {
            c.created = pending.created;
            c.created_bytes = pending.created_bytes;
            c.outside_write_locked = !pending.allow_outside_write;
            c.csg_locked = !pending.allow_csg;
            c.watch_outside = pending.watch_outside;
            c.touched_outside.set(pending.touched_outside);
            // A run going on in a later frame may have seen the scene change between its
            // reads: what it read is not named.
            if pending.started && !pending.reads.is_empty() {
                pending.read_outside = true;
            }
            c.read_outside.set(pending.read_outside);
            let mut reads = std::mem::take(&mut pending.reads);
            reads.collect = !pending.started;
            *c.reads.get_mut() = reads;
            c.query_hidden.clone_from(&pending.hidden);
            c.handles.set_run(pending.stamp, pending.next_key);
            c.run_escaped.set(pending.escaped);
            c.run_container.set(pending.container);
            c.run_module.set(pending.module);
            c.run_requires = Some(std::mem::take(&mut pending.reached));
            c.tree_changed();
        }
        let r = f();
        if let Ok(mut c) = ctx(&self.lua) {
            pending.created = c.created;
            pending.created_bytes = c.created_bytes;
            pending.touched_outside = c.touched_outside.get();
            pending.read_outside = c.read_outside.get();
            pending.escaped = c.run_escaped.get();
            pending.next_key = c.handles.run_key();
            pending.reached = c.run_requires.take().unwrap_or_default();
            pending.reads = std::mem::take(c.reads.get_mut());
            pending.started = true;
            c.leave_run();
        }
        r
    }

    /// What a stepped run depended on so far (`RunOutput::requires`).
    fn dependencies(&self, pending: &PendingRun) -> Vec<Ref> {
        ctx(&self.lua)
            .map(|c| c.run_dependencies(pending.module, &pending.reached))
            .unwrap_or_default()
    }

    /// Keeps what a stepped run that failed in its code depended on
    /// ([`Host::take_failed_requires`]).
    fn note_failed(&self, pending: &PendingRun) {
        let requires = self.dependencies(pending);
        if let Ok(mut c) = ctx(&self.lua) {
            c.failed_requires = Some(requires);
        }
    }

    fn finish_step(
        &self,
        pending: &mut PendingRun,
        result: mlua::Result<crate::task::Progress>,
    ) -> Result<RunState, HostError> {
        match result {
            Ok(crate::task::Progress::Suspended) => Ok(RunState::Suspended),
            Ok(crate::task::Progress::Done) => {
                let group = pending.run.take().map(|r| r.group);
                let leaked =
                    group.map_or(0, |g| crate::task::end_leaked(&self.lua, g).unwrap_or(0));
                let container = pending.container;
                if let Err(e) = self.emit_terrain(container) {
                    self.discard(container);
                    return Err(e);
                }
                let primary_part = self.with_dom_ref(|dom| {
                    match dom
                        .get_by_ref(container)
                        .and_then(|i| i.properties.get(&crate::keys::KEYS.primary_part))
                    {
                        Some(Variant::Ref(r)) if r.is_some() => Some(*r),
                        _ => None,
                    }
                });
                let requires = self.dependencies(pending);
                let reads = match pending.read_outside {
                    true => None,
                    false => ctx(&self.lua).ok().and_then(|c| {
                        c.loads.borrow().of_run(
                            &mut pending.reads,
                            &c.dom,
                            pending.module,
                            &requires,
                        )
                    }),
                };
                Ok(RunState::Done(RunOutput {
                    container,
                    primary_part,
                    leaked_threads: leaked,
                    touched_outside: pending.touched_outside || reads.is_none(),
                    created: pending.created,
                    requires,
                    reads: reads.unwrap_or_default(),
                }))
            }
            Err(e) => {
                let err = self.script_error(&e);
                if let Some(run) = pending.run.take() {
                    let _ = crate::task::end_leaked(&self.lua, run.group);
                }
                self.discard(pending.container);
                let _ = self.lua.gc_collect();
                self.note_failed(pending);
                Err(err)
            }
        }
    }

    /// Moves the voxels the run wrote through `params.Terrain` into its results: a
    /// TerrainRegion named [`crate::GENERATED_TERRAIN`] whose `SmoothGrid` holds them in the
    /// model's local space (nothing when the run wrote none).
    fn emit_terrain(&self, container: Ref) -> Result<(), HostError> {
        let taken = crate::classes::take_generator_terrain(&self.lua, container)
            .map_err(|e| crate::error::script(&e))?;
        let Some(mut voxels) = taken else {
            return Ok(());
        };
        voxels.compact();
        if voxels.is_empty() {
            return Ok(());
        }
        let grid = procmodel_terrain::smoothgrid::encode(&voxels);
        self.with_dom_mut(|dom| {
            if dom.get_by_ref(container).is_some() {
                dom.insert(
                    container,
                    InstanceBuilder::new("TerrainRegion")
                        .with_name(crate::GENERATED_TERRAIN)
                        .with_property("SmoothGrid", rbx_types::BinaryString::from(grid)),
                );
            }
        });
        Ok(())
    }

    fn discard(&self, container: Ref) {
        // The run's params.Terrain, if it made one, goes with it.
        let _ = crate::classes::take_generator_terrain(&self.lua, container);
        self.with_dom_mut(|dom| {
            if dom.get_by_ref(container).is_some() {
                dom.destroy(container);
            }
        });
    }

    fn build_params(
        &self,
        generator: &Generator,
        inputs: &RunInputs,
        container: Ref,
    ) -> mlua::Result<Table> {
        let lua = &self.lua;
        // `function M:OnGenerate(params, targetContainer)` is a slip Roblox makes too: the
        // call passes two values, so `self` gets params, `params` the container and the last
        // one nil. No generator has a use for a third parameter: say so at each run.
        let info = generator.on_generate.info();
        if info.num_params >= 3 && !info.is_vararg {
            ctx(lua)?.log(
                crate::context::LogLevel::Warn,
                format!(
                    "OnGenerate declares {} parameters but is called with two, (params, targetContainer): one declared with a colon (function M:OnGenerate(params, targetContainer)) gets params as self and targetContainer as params; declare it with a dot (function M.OnGenerate(params, targetContainer))",
                    info.num_params
                ),
            );
        }
        let attrs = lua.create_table()?;
        let given = |name: &str| {
            inputs
                .attributes
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
        };
        match &generator.attributes {
            Some(declared) => {
                for (name, default) in declared {
                    let v = given(name).unwrap_or(default);
                    attrs.raw_set(
                        name.as_str(),
                        procmodel_luau_types::variant_to_lua(lua, v, None)?,
                    )?;
                }
            }
            None => {
                for (name, v) in &inputs.attributes {
                    attrs.raw_set(
                        name.as_str(),
                        procmodel_luau_types::variant_to_lua(lua, v, None)?,
                    )?;
                }
            }
        }
        let params = lua.create_table()?;
        params.raw_set("Attributes", &attrs)?;
        params.raw_set("Size", procmodel_luau_types::Vector3(inputs.size).value())?;
        params.raw_set("Pause", self.core().pause.clone())?;
        // `params.Terrain`: made on first read (see `classes/terrain.rs`), then a plain field.
        let meta = lua.create_table_with_capacity(0, 1)?;
        let warned = std::cell::Cell::new(false);
        let index = lua.create_function(move |lua, (t, k): (Table, Value)| {
            let Value::String(s) = &k else {
                return Ok(Value::Nil);
            };
            if s.as_bytes() == "Terrain".as_bytes() {
                let v = crate::classes::generator_terrain(lua, container)?;
                t.raw_set("Terrain", v.clone())?;
                return Ok(v);
            }
            // Nil, as in Roblox; but reading an attribute from `params` itself is a common
            // slip, so the first one of a run gets a warning that names the right place.
            if !warned.get() && !attrs.raw_get::<Value>(k.clone())?.is_nil() {
                warned.set(true);
                let name = s.to_string_lossy();
                if let Ok(mut c) = ctx(lua) {
                    c.log(
                        crate::context::LogLevel::Warn,
                        format!(
                            "params.{name} is nil: a generator reads its attributes from params.Attributes (params.Attributes.{name})"
                        ),
                    );
                }
            }
            Ok(Value::Nil)
        })?;
        meta.raw_set("__index", index)?;
        params.set_metatable(Some(meta))?;
        Ok(params)
    }

    /// Turns an mlua error into a HostError with a traceback and, for timeouts, the remedy.
    pub fn script_error(&self, e: &mlua::Error) -> HostError {
        let err = crate::error::script(e);
        match err {
            HostError::Limit {
                limit: procmodel_script::Limit::Timeout,
                message,
                traceback,
            } => HostError::Limit {
                limit: procmodel_script::Limit::Timeout,
                message: {
                    // The limit as given: 1.0 s, 0.25 s (not rounded to 0.2).
                    let t = self.config().timeout.as_secs_f64();
                    let t = if t.fract() == 0.0 {
                        format!("{t:.1}")
                    } else {
                        format!("{t}")
                    };
                    format!(
                        "{message} (no yield for {t} s): call params:Pause() inside long loops so the engine can yield"
                    )
                },
                traceback,
            },
            other => other,
        }
    }
}

/// Reads and validates a module's `Attributes` table, sorted by name; of several bad
/// entries, the first by name is the one reported (whatever order the table keeps them in).
fn read_attributes(t: &Table) -> Result<Vec<(String, Variant)>, (String, String)> {
    let mut entries = Vec::new();
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(|e| ("?".to_owned(), e.to_string()))?;
        let name = match &k {
            Value::String(s) => s.to_string_lossy(),
            other => {
                let key = match other {
                    Value::Integer(i) => i.to_string(),
                    Value::Number(n) => n.to_string(),
                    Value::Boolean(b) => b.to_string(),
                    _ => procmodel_luau_types::type_name(other).to_owned(),
                };
                return Err((
                    key,
                    format!(
                        "attribute names must be strings, and this key is a {} (Attributes maps names to default values: {{ Count = 6 }}, not a list)",
                        procmodel_luau_types::type_name(other)
                    ),
                ));
            }
        };
        entries.push((name, v));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(entries.len());
    for (name, v) in entries {
        procmodel_luau_types::validate_attribute_name(&name)
            .map_err(|e| (name.clone(), e.to_string()))?;
        let variant = procmodel_luau_types::lua_to_attribute(&v).map_err(|e| {
            let mut message = e.to_string();
            // A schema table ({ Type = "number", Default = 6 }), as other tools declare
            // parameters: ProceduralModel takes the default value itself.
            if let Value::Table(t) = &v {
                message.push_str(
                    "; Attributes maps each name to its default value \
                     (Count = 6, Tint = Color3.new(1, 0, 0)), not to a table",
                );
                if t.contains_key("Default").unwrap_or(false) {
                    message.push_str(&format!(": write {name} = <its Default>"));
                }
            }
            (name.clone(), message)
        })?;
        out.push((name, variant));
    }
    Ok(out)
}

impl Host {
    /// Runs a plain script file (a `Script` in ServerScriptService) to completion, stepping
    /// virtual time while it waits.
    pub fn run_script_file(&mut self, path: &Path) -> Result<(), HostError> {
        let (source, abs) = self.read_script_file(path)?;
        // A script (not a generator, whose cache keys hash only the files beside it) may
        // require anything in its project: the folder of the nearest `.luaurc` above it, as
        // a test suite in `test/` requires `@lib` from `src/` through the repository's aliases.
        if let Some(project) = abs
            .parent()
            .and_then(|dir| dir.ancestors().find(|d| d.join(".luaurc").is_file()))
        {
            self.lua
                .set_app_data(crate::globals::RequireRoot(project.to_path_buf()));
        }
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("Script")
            .to_owned();
        let (script, service, made_service) = {
            let mut c = ctx(&self.lua).map_err(|e| crate::error::script(&e))?;
            let root = c.dom.root_ref();
            let service = c.dom.root().children().iter().copied().find(|&r| {
                c.dom
                    .get_by_ref(r)
                    .is_some_and(|i| i.class == "ServerScriptService")
            });
            let made_service = service.is_none();
            let service = service.unwrap_or_else(|| {
                c.dom.insert(
                    root,
                    InstanceBuilder::new("ServerScriptService").with_name("ServerScriptService"),
                )
            });
            let r = c.dom.insert(
                service,
                InstanceBuilder::new("Script")
                    .with_name(name)
                    .with_property("Source", Variant::String(source)),
            );
            c.files.insert(r, abs);
            (r, service, made_service)
        };
        let class =
            self.with_dom_ref(|d| d.get_by_ref(script).map(|i| i.class).unwrap_or_default());
        let ran =
            crate::globals::module_loader(&self.lua, crate::context::Instance { r: script, class })
                .and_then(|chunk| self.run_thread_with(chunk, MultiValue::new(), true))
                .and_then(|_| self.close_session());
        self.retire_script(script, service, made_service);
        ran.map_err(|e| self.script_error(&e))
    }

    /// The script a run put in ServerScriptService is not part of the place it works on (as
    /// the command bar's code is not): once it has run it is taken out again, and so is the
    /// service if it was made for it and holds nothing else. A script that moved itself
    /// elsewhere stays where it put itself.
    fn retire_script(&mut self, script: Ref, service: Ref, made_service: bool) {
        let Ok(mut c) = ctx(&self.lua) else {
            return;
        };
        c.files.remove(&script);
        if c.dom
            .get_by_ref(script)
            .is_some_and(|i| i.parent() == service)
        {
            crate::classes::destroy(&mut c, script);
        }
        let empty = c
            .dom
            .get_by_ref(service)
            .is_some_and(|s| s.children().is_empty() && s.parent() == c.dom.root_ref());
        if made_service && empty {
            crate::classes::destroy(&mut c, service);
        }
        // What the script put in the services its generators asked for is saved with them.
        c.keep_session_services();
    }

    /// The session closes: the functions bound with `game:BindToClose` (and the handlers of
    /// `game.Close`, `classes::services::keep_close_handlers`) run, each in a thread of its own, for at most 30 seconds of virtual time; those still running then are ended
    /// with a warning. Their errors are reported as a spawned thread's are.
    fn close_session(&mut self) -> mlua::Result<()> {
        let Value::Table(bound) = self
            .lua
            .named_registry_value(crate::classes::services::CLOSE)?
        else {
            return Ok(());
        };
        if bound.raw_len() == 0 {
            return Ok(());
        }
        self.lua
            .set_named_registry_value(crate::classes::services::CLOSE, Value::Nil)?;
        let task: mlua::Table = self.lua.globals().get("task")?;
        let run = self
            .lua
            .load(crate::classes::services::CLOSE_LUAU)
            .set_name("=[BindToClose]")
            .into_function()?;
        let args = (
            bound,
            task.get::<Value>("spawn")?,
            task.get::<Value>("wait")?,
            task.get::<Value>("cancel")?,
        )
            .into_lua_multi(&self.lua)?;
        let (out, _) = self.run_thread_with(run, args, true)?;
        let ended = out.front().and_then(Value::as_integer).unwrap_or(0);
        if ended > 0 {
            ctx(&self.lua)?.log(
                crate::context::LogLevel::Warn,
                format!(
                    "BindToClose: {ended} function(s) still running after 30 s were ended, as a closing server ends them"
                ),
            );
        }
        Ok(())
    }
}

/// Whether `text` is an XML Roblox place or model (`<roblox …>`, perhaps after a byte-order
/// mark, an XML declaration or blank space): Luau could only call it a syntax error at `<`.
fn is_xml_roblox_file(text: &str) -> bool {
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    if rest.starts_with("<?xml") {
        rest = rest.find("?>").map_or("", |i| rest[i + 2..].trim_start());
    }
    rest.starts_with("<roblox ") || rest.starts_with("<roblox>")
}

/// The text of a Luau script file; a file that is not one (not UTF-8, or a Roblox place or
/// model passed by mistake) is an error that says what it is.
pub fn read_script_text(path: &Path) -> Result<String, HostError> {
    let bad = |bytes: &[u8]| HostError::Read {
        path: path.to_path_buf(),
        error: std::io::Error::new(std::io::ErrorKind::InvalidData, not_a_script(bytes)),
    };
    let bytes = std::fs::read(path).map_err(|error| HostError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    let source = String::from_utf8(bytes).map_err(|e| bad(e.as_bytes()))?;
    if is_xml_roblox_file(&source) {
        return Err(bad(source.as_bytes()));
    }
    Ok(source)
}

/// Why bytes that are not a script are not one, naming the Roblox files people pass by
/// mistake (a place or model goes to `regen`, `status`, `export` or `studio`).
fn not_a_script(bytes: &[u8]) -> String {
    let kind = if bytes.starts_with(b"<roblox!") {
        "a binary Roblox place or model (.rbxl/.rbxm)"
    } else if std::str::from_utf8(bytes).is_ok_and(is_xml_roblox_file) {
        "an XML Roblox place or model (.rbxlx/.rbxmx)"
    } else {
        "not UTF-8 text"
    };
    format!(
        "it is {kind}, not a Luau script (a place or model file is opened with `procmodel regen`, `status`, `export` or `studio`)"
    )
}
