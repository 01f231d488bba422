//! The contract between the engine and a script host: what the engine asks of the VM that
//! runs generators and scripts over its scene, and the plain data that crosses between them.
//!
//! - [`ScriptHost`]: one VM with one scene DOM (object safe; the engine holds an
//!   `Rc<dyn ScriptHost>`), and [`ScriptRuntime`], the `Send + Sync` factory the engine makes
//!   hosts with (its own, and one per worker thread).
//! - [`ManagedClass`]: the class-behaviour seam. The engine installs the rules of the class
//!   it manages (ProceduralModel: which writes mark it dirty, `ForceGeneration`,
//!   `WaitForGenerationAsync`) and the host applies them where scripts act, without knowing
//!   the class itself.
//! - Limits ([`HostConfig`]), typed errors ([`HostError`], with the [`Limit`] a run hit),
//!   a run's inputs and outputs, [`Canceller`], ChangeHistoryService requests.
//!
//! Owns: the vocabulary both sides share. Must never: depend on a VM (no mlua, no Luau), on
//! the engine, or hold state (everything here is data, traits and small forwarding types).

use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Host limits. Defaults follow Roblox Studio's generous interactive limits.
#[derive(Debug, Clone, PartialEq)]
pub struct HostConfig {
    /// Longest a script may run without yielding.
    pub timeout: Duration,
    /// Luau heap limit in bytes (0 = none). Checked where the VM checks for timeouts (loop
    /// back-edges and calls), so it costs nothing per allocation; a single allocation can
    /// overshoot it.
    pub memory_limit: usize,
    /// Most instances a run may create (None = unlimited).
    pub instance_limit: Option<usize>,
    /// Echo print/warn to stderr.
    pub echo_output: bool,
    /// Longest one resumption of a script may run even while it calls `params:Pause()`
    /// (which restarts the no-yield timeout): a generator that pauses in an endless loop ends
    /// with "Run time limit" instead of running forever.
    pub run_limit: Duration,
    /// Most virtual time (seconds of `task.wait` and frames) one run may spend waiting: a
    /// generator or script that waits in a loop forever ends with "Wait limit" instead of
    /// spinning. Virtual time costs no real time, so the default is far beyond any real wait.
    pub max_wait: f64,
    /// Most instances one run may hold in its results, and bytes of DOM data it may create
    /// (None = unlimited): a generator that pauses politely still cannot fill the host's
    /// memory with instances.
    pub max_output_bytes: Option<usize>,
    /// Compile loaded chunks to machine code with Luau's native code generator (where the CPU
    /// supports it). Results are the interpreter's either way; a test holds them equal.
    pub native_code: bool,
    /// Most bytes of voxel data one Terrain (`workspace.Terrain`, or a run's `params.Terrain`)
    /// may hold (None = unlimited): voxels live outside the Luau heap, so `memory_limit` does
    /// not see them.
    pub max_terrain_bytes: Option<usize>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            timeout: Duration::from_secs(10),
            memory_limit: 1 << 30,
            instance_limit: Some(DEFAULT_MAX_INSTANCES),
            run_limit: Duration::from_secs(600),
            max_wait: DEFAULT_MAX_WAIT,
            max_output_bytes: Some(DEFAULT_MAX_OUTPUT_BYTES),
            echo_output: true,
            native_code: true,
            max_terrain_bytes: Some(DEFAULT_MAX_TERRAIN_BYTES),
        }
    }
}

/// Default instance quota per run (`--max-instances`).
pub const DEFAULT_MAX_INSTANCES: usize = 2_000_000;
/// Default DOM-size quota per run (`--max-output-mb`): 4 GiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 4 << 30;
/// Default [`HostConfig::max_terrain_bytes`]: 4 GiB of voxels (a 16,384-stud square world's
/// surface, as dense chunks).
pub const DEFAULT_MAX_TERRAIN_BYTES: usize = 4 << 30;
/// Default [`HostConfig::max_wait`]: an hour of virtual time.
pub const DEFAULT_MAX_WAIT: f64 = 3600.0;

/// The error text of a run that went [`HostConfig::timeout`] without yielding.
pub const TIMEOUT_MESSAGE: &str = "Script timeout: exhausted allowed execution time";
/// The error text of a run that used its whole [`HostConfig::run_limit`].
pub const RUN_LIMIT_MESSAGE: &str = "Run time limit: the script ran its whole allowed time without finishing, although it called params:Pause() (--max-run-time to change)";
/// The error text of a run that went over [`HostConfig::memory_limit`].
pub const MEMORY_MESSAGE: &str = "not enough memory: the script exceeded its memory limit";
/// The error a cancelled run ends with.
pub const CANCEL_MESSAGE: &str = "cancelled: the run was stopped on request";

/// The child a generator's results hold its voxels in (local space), for the engine to
/// merge into the scene's Terrain when it applies them.
pub const GENERATED_TERRAIN: &str = "GeneratedTerrain";

/// Which limit a run hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The execution-time limit of one run (`--timeout`).
    Timeout,
    /// The whole allowed execution time, over several frames (`--max-run-time`).
    RunTime,
    /// The VM's memory limit.
    Memory,
    /// Virtual time waited, or resumes without virtual time advancing (`--max-wait`).
    Wait,
    /// Instances a run may create (`--max-instances`).
    Instances,
    /// Size of a run's output (`--max-output-mb`).
    Output,
    /// Voxels a run may write (`--max-terrain-mb`).
    Terrain,
}

impl Limit {
    /// A stable name for reports (`limit.timeout`, …).
    pub fn kind(self) -> &'static str {
        match self {
            Limit::Timeout => "limit.timeout",
            Limit::RunTime => "limit.run_time",
            Limit::Memory => "limit.memory",
            Limit::Wait => "limit.wait",
            Limit::Instances => "limit.instances",
            Limit::Output => "limit.output",
            Limit::Terrain => "limit.terrain",
        }
    }
}

/// What went wrong in the host. The text of each is what users see.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start the Luau VM: {0}")]
    Vm(String),
    /// The cause is part of the message, so it is not also a `source` (an error chain would
    /// print it twice).
    #[error("cannot read {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{file}: {message}")]
    BadGenerator { file: String, message: String },
    /// A script error (a Luau error, or one a host function raised).
    #[error("{message}")]
    Script {
        message: String,
        traceback: Option<String>,
    },
    /// The run hit one of the host's limits.
    #[error("{message}")]
    Limit {
        limit: Limit,
        message: String,
        traceback: Option<String>,
    },
    /// The run was cancelled ([`Canceller`]).
    #[error("{message}")]
    Cancelled {
        message: String,
        traceback: Option<String>,
    },
    #[error("attribute {name}: {message}")]
    Attribute { name: String, message: String },
    /// The run, watched with [`WatchOutside::Defer`], wrote outside its container or queried
    /// the scene (a raycast): it ended there, its results discarded, to be run again where
    /// its writes reach the scene and its queries see it as a run on one VM would.
    #[error(
        "{what}: writes outside targetContainer and queries of the scene happen only on the scene's own VM"
    )]
    OutsideAccessDeferred { what: String },
}

impl HostError {
    /// The message and traceback of an error raised while a script ran (a script error, a
    /// limit, a cancellation).
    pub fn script_parts(&self) -> Option<(&str, Option<&str>)> {
        match self {
            HostError::Script { message, traceback }
            | HostError::Limit {
                message, traceback, ..
            }
            | HostError::Cancelled { message, traceback } => {
                Some((message.as_str(), traceback.as_deref()))
            }
            _ => None,
        }
    }
}

/// A loaded generator module.
pub struct Generator {
    /// The ModuleScript instance.
    pub module: Ref,
    /// Declared attributes and defaults, sorted by name. `None` when the module declares none.
    pub attributes: Option<Vec<(String, Variant)>>,
    /// Display name (file or instance path) used in errors.
    pub origin: String,
    /// The host's own handle on the module's `OnGenerate` (opaque to everyone else).
    pub entry: Box<dyn Any>,
}

/// Inputs for one run.
#[derive(Debug, Clone, Default)]
pub struct RunInputs {
    /// Attribute values set on the model (override defaults).
    pub attributes: Vec<(String, Variant)>,
    /// `params.Size` (already divided by the model's scale).
    pub size: glam::Vec3,
    /// Let the generator modify the scene outside its container (an unsandboxed module, or
    /// a sandboxed one granted AccessOutsideWrite). Off by default.
    pub allow_outside_write: bool,
    /// Let the generator use solid modelling (`UnionAsync`, ...): an unsandboxed module, or a
    /// sandboxed one granted the CSG capability.
    pub allow_csg: bool,
    /// What the host does about such writes (when they are allowed) and about spatial
    /// queries of the scene (`workspace:Raycast`, ...).
    pub watch_outside: WatchOutside,
    /// Instances the run's spatial queries do not see: the model's current results, which
    /// the run replaces (so a generator that raycasts gives the same results whether it
    /// ran before or not).
    pub hidden: Vec<Ref>,
}

/// How a run's dealings with the scene outside its container are watched: its writes there
/// (when it may make them), its spatial queries of the scene (`workspace:Raycast`,
/// `GetPartBoundsInBox`, ...) and its uses of the scene's instances (a template it clones),
/// whose answers depend on more than the run's inputs. Uses of instances are only noted,
/// never deferred: a worker's copy of the scene holds them as they were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WatchOutside {
    /// Not at all (no cost on the write paths).
    #[default]
    Off,
    /// They happen; [`RunOutput::touched_outside`] says whether there were any (a result
    /// cache must not keep such a run: a hit would skip its writes, or answer from a scene
    /// that has changed since).
    Note,
    /// The first one ends the run with [`HostError::OutsideAccessDeferred`]: the run is on
    /// a VM whose writes cannot reach the scene and whose queries would see a copy of it
    /// from before the step (a worker's), so the caller runs it again where they can.
    Defer,
}

/// A generation started with [`ScriptHost::start_generator`], not finished yet.
pub struct PendingRun {
    /// The temporary GeneratedFolder (`targetContainer`).
    pub container: Ref,
    /// The host's own state of the run (opaque to everyone else).
    pub state: Box<dyn Any>,
}

/// Where a frame-stepped generation stands.
pub enum RunState {
    Done(RunOutput),
    Suspended,
}

/// What a run produced: an orphan GeneratedFolder holding the results.
#[derive(Debug)]
pub struct RunOutput {
    pub container: Ref,
    pub primary_part: Option<Ref>,
    pub leaked_threads: usize,
    /// The run changed the scene outside its container, queried it, or used its instances
    /// (watched with [`WatchOutside::Note`] or [`WatchOutside::Defer`]).
    pub touched_outside: bool,
    /// Instances the run created (`Instance.new`, `Clone`, ...), wherever they ended up.
    pub created: usize,
    /// The ModuleScripts the run depended on: every module a `require` reached during it
    /// and, through each module's own requires when it loaded, what those required (the
    /// same list whichever VM ran it). The generator itself is not listed.
    pub requires: Vec<Ref>,
    /// What the run read of the scene that it could name (a watched run only): each read
    /// with the digest of what it saw, sorted by path. A read it could not name makes
    /// `touched_outside` true instead.
    pub reads: Vec<SceneRead>,
}

/// One read of the scene by a generator run: the instance at `path` (names from the
/// DataModel, each step the first child with that name) — its whole subtree, or (`own`) its
/// own record without children — and the digest of it when the run read it
/// (`procmodel_dom::reads::read_digest`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SceneRead {
    pub path: Vec<String>,
    pub own: bool,
    pub digest: [u8; 32],
}

/// A ChangeHistoryService request a script made (the engine maps them onto its undo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryRequest {
    /// `SetWaypoint(name)`, or a committed recording.
    Waypoint(String),
    Undo,
    Redo,
}

/// Something that can stop a VM's running code from any thread.
pub trait CancelSignal: Send + Sync {
    /// Requests the cancellation; it stays pending until a resumption ends or `clear`.
    fn cancel(&self);
    /// Withdraws a pending request (when nothing was running to cancel).
    fn clear(&self);
    /// Whether a request is pending.
    fn is_pending(&self) -> bool;
}

/// Ends a VM's running (or next resumed) code with [`CANCEL_MESSAGE`] from any thread.
#[derive(Clone)]
pub struct Canceller(Arc<dyn CancelSignal>);

impl Canceller {
    pub fn new(signal: Arc<dyn CancelSignal>) -> Canceller {
        Canceller(signal)
    }
    /// Requests the cancellation; it stays pending until a resumption ends or `clear`.
    pub fn cancel(&self) {
        self.0.cancel()
    }
    /// Withdraws a pending request (when nothing was running to cancel).
    pub fn clear(&self) {
        self.0.clear()
    }
    /// Whether a request is pending.
    pub fn is_pending(&self) -> bool {
        self.0.is_pending()
    }
}

/// The hook a top-level script run calls at every frame boundary, with the run's host (the
/// engine steps there while a script waits).
pub type FrameHook = Box<dyn Fn(&dyn ScriptHost)>;

/// The rules of a class whose instances the engine manages (ProceduralModel), installed into
/// a host with [`ScriptHost::manage`]. The host knows nothing of the class but this.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedClass {
    /// The class name.
    pub class: &'static str,
    /// The Bool property the host sets to true when an instance must be processed: on a new
    /// instance made by a script, when a script writes one of `inputs` or an attribute, and
    /// on `force_method`. The engine clears it when it has processed the instance.
    pub flag: &'static str,
    /// Properties whose writes by a script set `flag` (attributes always do).
    pub inputs: &'static [&'static str],
    /// A Ref property naming the ModuleScript whose code is an input too: a script's change
    /// of that module's Source, or of one it required, sets `flag` at once.
    pub code: Option<&'static str>,
    /// A method that sets `flag`, queues the instance for [`ScriptHost::take_forced`] and
    /// returns true (false when the instance is not in the scene).
    pub force_method: &'static str,
    /// A yielding method that waits until `flag` is false: returns true then, false when the
    /// instance left the scene while it waited, and errors when it is not in the scene.
    pub wait_method: &'static str,
}

/// Builds the module folder at a path (a folder whose `init.luau` is the module): a DOM whose
/// root holds it, the module, and each of its scripts with the file its Source came from;
/// or the error, naming the file.
pub type ModuleFolderLoader =
    Box<dyn Fn(&Path) -> Result<(WeakDom, Ref, Vec<(Ref, PathBuf)>), String>>;

/// One line scripts wrote with `print` or `warn` (also echoed to stderr when
/// [`HostConfig::echo_output`] is set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Print,
    Warn,
}

impl LogLevel {
    /// The level's name in front ends' output (`print`, `warn`).
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Print => "print",
            LogLevel::Warn => "warn",
        }
    }
}

/// One VM with one scene DOM, as the engine drives it. Object safe: the engine holds an
/// `Rc<dyn ScriptHost>`; the generic helpers are on `dyn ScriptHost` below. Not `Send`: a
/// host lives on the thread that made it.
pub trait ScriptHost {
    /// Another handle to this host (hosts are cheap handles to their VM).
    fn handle(&self) -> Rc<dyn ScriptHost>;

    /// Installs the rules of a class the engine manages (see [`ManagedClass`]).
    fn manage(&self, class: ManagedClass) -> Result<(), HostError>;

    /// Runs `f` with the DOM borrowed. Never call back into the host from `f`.
    fn visit_dom(&self, f: &mut dyn FnMut(&WeakDom));
    /// Runs `f` with the DOM mutably borrowed (anything may change, as after a script).
    fn visit_dom_mut(&self, f: &mut dyn FnMut(&mut WeakDom));
    /// False when the DOM is known to hold no instance of a managed class.
    fn may_have_managed(&self) -> bool;
    /// Runs over `dom` from now on (a long-lived worker VM given a fresh copy of the scene):
    /// handles of instances not in it are refused, per-tree state is reset, required modules
    /// stay cached (the caller invalidates those whose Source changed).
    fn replace_dom(&self, dom: WeakDom);
    /// Takes the DOM out (leaving an empty DataModel).
    fn take_dom(&self) -> WeakDom;
    /// Marks `destroyed` (and their descendants) destroyed, as `Destroy` does; `gone` were
    /// removed from the DOM since and are forgotten.
    fn mark_destroyed(&self, destroyed: &[Ref], gone: &[Ref]);
    /// Starts counting the writes Luau code makes to instances other than a running
    /// generation's own — in the scene (descendants of the DataModel) or outside it, where the
    /// engine holds replaced results for undo — for [`ScriptHost::scene_writes`]. A run's
    /// writes to the instances it created and to its own targetContainer are not counted.
    fn count_scene_writes(&self) {}
    /// How many such writes Luau code has made since counting started (every write path
    /// counts, allowed or refused); None when this host does not count.
    fn scene_writes(&self) -> Option<u64> {
        None
    }

    /// Restricts string `require`s of modules without a file to files under `root`.
    fn set_require_root(&self, root: &Path);
    /// How a string `require` that reaches a folder's `init.luau` builds the folder: as one
    /// ModuleScript with the folder's other files as its children (so `script.Child` finds
    /// them), the way the front end builds a module folder generator.
    fn set_module_folder_loader(&self, loader: ModuleFolderLoader);
    /// Creates a ModuleScript holding `source` under `parent` (`file`: where it came from).
    fn add_module_script(&self, parent: Ref, name: &str, source: &str, file: Option<&Path>) -> Ref;
    /// Records that the Source of `module`, already in the scene, was read from `file`
    /// (errors name the file; relative requires resolve beside it).
    fn set_module_file(&self, module: Ref, file: &Path);
    /// The files modules were loaded from, sorted, without repeats.
    fn module_files(&self) -> Vec<PathBuf>;
    /// The ModuleScript loaded from the file at `path`, if any.
    fn file_module(&self, path: &Path) -> Option<Ref>;
    /// Every module loaded from a file that still exists, with its file, sorted by file.
    fn file_modules(&self) -> Vec<(PathBuf, Ref)>;
    /// The modules whose code required `module`, directly or through others, sorted.
    fn requirers(&self, module: Ref) -> Vec<Ref>;
    /// Every (module, the module whose code required it) this VM recorded, sorted: what
    /// another VM of the same scene adds with [`ScriptHost::note_requires`].
    fn require_edges(&self) -> Vec<(Ref, Ref)>;
    /// Records requires another VM of the same scene made (a worker's), so a change of the
    /// required code reaches the models whose generators required it there.
    fn note_requires(&self, edges: &[(Ref, Ref)]);
    /// What the last run that failed with a script error depended on (as
    /// [`RunOutput::requires`] says of one that succeeded), once; None when no run failed
    /// since the last call.
    fn take_failed_requires(&self) -> Option<Vec<Ref>>;
    /// Forgets the cached result of requiring `module` (its Source changed).
    fn invalidate_module(&self, module: Ref) -> Result<(), HostError>;
    /// Takes the `print`/`warn` lines scripts wrote since the last call (a bounded number:
    /// the newest are kept, with a line saying how many earlier ones were not).
    fn take_output(&self) -> Vec<LogLine>;
    /// Adds lines another VM of the same scene captured (a worker's), after this VM's own.
    fn push_output(&self, lines: Vec<LogLine>);
    /// Writes a warning of the engine's own to the output, as a script's `warn` goes
    /// (echoed to stderr when [`HostConfig::echo_output`] is set).
    fn warn(&self, message: String);

    /// A `Send` handle that stops this VM's running code from another thread.
    fn canceller(&self) -> Canceller;
    /// Installs (or removes) the hook a top-level script run calls at frame boundaries.
    fn set_frame_hook(&self, hook: Option<FrameHook>);
    /// Starts an engine frame: with a budget, the first `params:Pause()` after `budget` has
    /// passed yields to the next frame.
    fn begin_frame(&self, budget: Option<Duration>) -> Result<(), HostError>;
    /// Ends an engine frame's budget.
    fn end_frame(&self);
    /// Takes the ChangeHistoryService requests scripts made since the last call, in order.
    fn take_history_requests(&self) -> Vec<HistoryRequest>;
    /// Takes the instances scripts called the managed class's `force_method` on.
    fn take_forced(&self) -> Vec<Ref>;
    /// Takes the ModuleScripts whose Source scripts changed since the last call (each once,
    /// in the order first changed): their code, and the code of every module that required
    /// them, must be required afresh.
    fn take_code_changes(&self) -> Vec<Ref>;

    /// Runs a plain script file (a `Script` in ServerScriptService) to completion.
    fn run_script_file(&self, path: &Path) -> Result<(), HostError>;
    /// Reads a generator file into a ModuleScript under `parent` and loads it.
    fn load_generator_file(&self, path: &Path, parent: Ref) -> Result<Generator, HostError>;
    /// Reads a generator file into a ModuleScript under `parent` without requiring it
    /// (named after the file, the file recorded, string requires kept beside it).
    fn add_generator_file(&self, path: &Path, parent: Ref) -> Result<Ref, HostError>;
    /// Requires a ModuleScript and checks it is a generator (`origin` names it in errors).
    fn load_generator(&self, module: Ref, origin: &str) -> Result<Generator, HostError>;
    /// Runs `OnGenerate` once, to completion. Results stay in the returned orphan folder.
    fn run_generator(
        &self,
        generator: &Generator,
        inputs: &RunInputs,
    ) -> Result<RunOutput, HostError>;
    /// Starts `OnGenerate` as a run the caller steps frame by frame.
    fn start_generator(
        &self,
        generator: &Generator,
        inputs: &RunInputs,
    ) -> Result<(PendingRun, RunState), HostError>;
    /// Steps a started generation across at most `frames` frame boundaries.
    fn resume_generator(
        &self,
        pending: &mut PendingRun,
        frames: u32,
    ) -> Result<RunState, HostError>;
    /// Cancels a started generation: ends its threads and discards its partial results.
    fn cancel_generator(&self, pending: PendingRun);
}

impl dyn ScriptHost + '_ {
    /// Runs `f` with the DOM borrowed and returns what it returns.
    pub fn with_dom_ref<R>(&self, f: impl FnOnce(&WeakDom) -> R) -> R {
        let mut f = Some(f);
        let mut out = None;
        self.visit_dom(&mut |dom| {
            if let Some(f) = f.take() {
                out = Some(f(dom));
            }
        });
        out.expect("ScriptHost::visit_dom calls its visitor once")
    }

    /// Runs `f` with the DOM mutably borrowed and returns what it returns.
    pub fn with_dom_mut<R>(&self, f: impl FnOnce(&mut WeakDom) -> R) -> R {
        let mut f = Some(f);
        let mut out = None;
        self.visit_dom_mut(&mut |dom| {
            if let Some(f) = f.take() {
                out = Some(f(dom));
            }
        });
        out.expect("ScriptHost::visit_dom_mut calls its visitor once")
    }
}

/// Makes hosts: the engine's own, and one per worker thread (hence `Send + Sync`).
pub trait ScriptRuntime: Send + Sync {
    /// A host over `dom`, or over a fresh DataModel (Workspace, ServerStorage) when None.
    fn new_host(
        &self,
        config: &HostConfig,
        dom: Option<WeakDom>,
    ) -> Result<Rc<dyn ScriptHost>, HostError>;

    /// The string requires written in module file `file`, whichever branch a run would take,
    /// each with the file it names as `require` resolves it (confined to `root`) or why an
    /// instance tree built from the files could not follow it (no such file, outside
    /// `root`, a path alias). Read without running anything; the runtime's own modules are
    /// left out.
    /// None by default (a runtime whose modules require no files).
    fn literal_requires(
        &self,
        file: &Path,
        root: Option<&Path>,
    ) -> Vec<(String, Result<PathBuf, String>)> {
        let _ = (file, root);
        Vec::new()
    }
}
