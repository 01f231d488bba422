//! Parallel generation: long-lived worker threads, each with its own Luau VM, run
//! independent models over a copy of the scene that keeps the scene's referents; the engine
//! applies the results, so the outcome does not depend on the number of workers.

use crate::Engine;
use crate::Host;
use crate::apply::{self, Prepared, Produced};
use crate::fingerprint::SourceDigests;
use crate::provenance::{Inputs, Modules, Precomputed};
use crate::report::{GenerationFailure, Report};
use procmodel_script::{HostConfig, ScriptRuntime, WatchOutside};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::Ref;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub type RunResult = Result<(Prepared, Produced), GenerationFailure>;

/// A deep copy of the scene with the same referents (so a model is the same Ref in a
/// worker), leaving out the old results of `regenerating` models (they are about to be
/// replaced, and copying them is most of the cost).
pub fn clone_scene(dom: &WeakDom, regenerating: &[Ref]) -> WeakDom {
    let skip: HashSet<Ref> = regenerating.iter().copied().collect();
    WeakDom::new(procmodel_dom::copy_with_referents(
        dom,
        dom.root_ref(),
        &mut |parent, child| !(child.class == "GeneratedFolder" && skip.contains(&parent)),
        &mut |_, _| true,
    ))
}

/// The models of one parallel step, handed out one at a time: each VM (the engine's own and
/// the workers') takes the next model when it is free, so a slow model does not leave the
/// others idle. Which VM runs a model does not change its results.
pub struct Queue {
    models: Vec<Ref>,
    next: AtomicUsize,
}

impl Queue {
    pub fn new(models: &[Ref]) -> Queue {
        Queue {
            models: models.to_vec(),
            next: AtomicUsize::new(0),
        }
    }

    pub fn take(&self) -> Option<Ref> {
        self.models
            .get(self.next.fetch_add(1, Ordering::Relaxed))
            .copied()
    }
}

/// Runs one model to completion on `host` and positions its results (steps 2–3) there.
/// `watch`: how writes outside the model's container are watched (a parallel step defers
/// them: [`procmodel_script::WatchOutside::Defer`]).
pub fn run_one(
    host: &Host,
    m: Ref,
    required: &mut HashMap<Ref, String>,
    watch: WatchOutside,
) -> (Ref, RunResult, Duration) {
    let start = Instant::now();
    let result = host
        .with_dom_ref(|d| apply::prepare(d, m))
        .map(|mut p| {
            p.inputs.watch_outside = watch;
            p
        })
        .and_then(|p| apply::produce(host, &p, required).map(|o| (p, o)))
        .map(|(p, mut o)| {
            o.delta = Some(host.with_dom_mut(|d| apply::place(d, m, &o)));
            o.placed = true;
            (p, o)
        });
    (m, result, start.elapsed())
}

/// One model's run on a worker, sent to the engine as soon as it is done: its results moved
/// out of the worker's tree into a tree of their own.
pub struct Finished {
    pub model: Ref,
    pub result: Result<(Prepared, Produced, Option<WeakDom>), GenerationFailure>,
    pub elapsed: Duration,
    /// The results' provenance, when the step records it: computed on the worker, in
    /// parallel, instead of on the engine's thread after applying. Applying moves the
    /// folder without changing what is in it, so the content hash is that of the applied
    /// results; the inputs are the model's after applying fills in default attributes.
    pub provenance: Option<Precomputed>,
    /// Every require the worker's VM has recorded ((module, requirer) pairs), when they
    /// changed since its last result (else empty): the engine's VM adds them to its own
    /// record, so a later change of a module reaches the models whose generators required it
    /// on a worker.
    pub requires: Vec<(Ref, Ref)>,
    /// What the run depended on when it failed with a script error
    /// ([`ScriptHost::take_failed_requires`](procmodel_script::ScriptHost::take_failed_requires)).
    pub failed_requires: Option<Vec<Ref>>,
    /// The `print`/`warn` lines the run wrote on the worker's VM, for the engine's output.
    pub output: Vec<procmodel_script::LogLine>,
    /// The files the worker's VM has loaded modules from, when they changed since its last
    /// result (else empty): [`Engine::module_files`] lists them with the engine VM's own.
    pub files: Vec<std::path::PathBuf>,
}

/// One step's work for a worker: a copy of the scene, the shared queue, where to send results.
struct Job {
    dom: WeakDom,
    queue: Arc<Queue>,
    tx: Sender<Finished>,
    /// Whether to compute each model's provenance ([`Finished::provenance`]).
    hash: bool,
    /// The engine's code revision ([`Engine::code_revision`]): a worker whose VM required
    /// modules under an older one requires every module afresh.
    code_revision: u64,
}

/// Long-lived worker threads, each with its own VM, kept from step to step: a step pays for
/// a copy of the scene, not for a new VM, and modules stay compiled.
#[derive(Default)]
pub struct Pool {
    config: Option<HostConfig>,
    /// Makes each worker's VM.
    runtime: Option<Arc<dyn ScriptRuntime>>,
    workers: Vec<(Sender<Job>, JoinHandle<()>)>,
}

impl Pool {
    /// Gives each of `copies.len()` workers a scene copy and the queue; results arrive on
    /// `tx`, and every worker drops its sender when the queue is empty.
    pub fn dispatch(
        &mut self,
        runtime: &Arc<dyn ScriptRuntime>,
        config: &HostConfig,
        copies: Vec<WeakDom>,
        queue: &Arc<Queue>,
        tx: &Sender<Finished>,
        hash: bool,
        code_revision: u64,
    ) {
        let same_runtime = self
            .runtime
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(r, runtime));
        if self.config.as_ref() != Some(config) || !same_runtime {
            self.shutdown();
            self.config = Some(config.clone());
            self.runtime = Some(runtime.clone());
        }
        for (i, dom) in copies.into_iter().enumerate() {
            let mut job = Job {
                dom,
                queue: queue.clone(),
                tx: tx.clone(),
                hash,
                code_revision,
            };
            // A worker that died (a bug) is replaced; a new one is started when missing.
            if let Some((jobs, _)) = self.workers.get(i) {
                match jobs.send(job) {
                    Ok(()) => continue,
                    Err(e) => job = e.0,
                }
                let (_, dead) = self.workers.remove(i);
                let _ = dead.join();
            }
            let (jobs, rx) = mpsc::channel::<Job>();
            let config = config.clone();
            let runtime = runtime.clone();
            let thread = std::thread::Builder::new()
                .name(format!("procmodel-worker-{i}"))
                .spawn(move || worker(&*runtime, config, rx));
            match thread {
                Ok(handle) => {
                    let _ = jobs.send(job);
                    self.workers
                        .insert(i.min(self.workers.len()), (jobs, handle));
                }
                // No thread: the engine's own VM takes this copy's share from the queue.
                Err(_) => drop(job),
            }
        }
    }

    fn shutdown(&mut self) {
        for (jobs, handle) in self.workers.drain(..) {
            drop(jobs);
            let _ = handle.join();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The DataModel and Workspace a scene copy's `game` and `workspace` are.
pub(crate) fn scene_identity(dom: &WeakDom) -> (Ref, Option<Ref>) {
    let root = dom.root_ref();
    let workspace = dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&c| dom.get_by_ref(c).is_some_and(|i| i.class == "Workspace"));
    (root, workspace)
}

/// A worker thread: one VM for its whole life, run over each job's scene copy, taking models
/// from the job's queue until it is empty and sending each result as it finishes.
fn worker(runtime: &dyn ScriptRuntime, config: HostConfig, jobs: Receiver<Job>) {
    // The VM is made over the first job's scene copy: its `game` and `workspace` globals are
    // bound to that DataModel and Workspace when it starts (and resolved into the modules it
    // loads), so they are the scene's. A copy of another DataModel (the scene replaced) gets
    // a new VM.
    let mut vm: Option<(
        Result<std::rc::Rc<Host>, GenerationFailure>,
        (Ref, Option<Ref>),
    )> = None;
    let mut required = HashMap::new();
    let mut sources = SourceDigests::default();
    let mut revision = 0;
    // The requires and module files last sent to the engine (it keeps them: only changes
    // are sent again).
    let mut sent: Vec<(Ref, Ref)> = Vec::new();
    let mut sent_files: Vec<std::path::PathBuf> = Vec::new();
    for job in jobs {
        let identity = scene_identity(&job.dom);
        match &vm {
            Some((Ok(host), bound)) if *bound == identity => {
                host.replace_dom(job.dom);
                if job.code_revision != revision {
                    // Code changed since this VM last required anything: what it cached
                    // may be old code, whichever modules the change reached.
                    forget_required(&**host, &mut required);
                }
            }
            _ => {
                required.clear();
                sources = SourceDigests::default();
                let host = crate::new_host(runtime, &config, Some(job.dom))
                    .map_err(|e| GenerationFailure::Host(format!("cannot start a worker VM: {e}")));
                vm = Some((host, identity));
            }
        }
        revision = job.code_revision;
        let host = &vm.as_ref().expect("set above").0;
        let host = match host {
            Ok(h) => h,
            Err(msg) => {
                // Fail the models this worker takes (the engine's VM runs the others).
                while let Some(model) = job.queue.take() {
                    let _ = job.tx.send(Finished {
                        model,
                        result: Err(msg.clone()),
                        elapsed: Duration::ZERO,
                        provenance: None,
                        requires: Vec::new(),
                        failed_requires: None,
                        output: Vec::new(),
                        files: Vec::new(),
                    });
                }
                continue;
            }
        };
        while let Some(m) = job.queue.take() {
            let (model, result, elapsed) = run_one(&**host, m, &mut required, WatchOutside::Defer);
            let provenance = match (&result, job.hash) {
                (Ok((_, o)), true) => Some(host.with_dom_ref(|d| {
                    let requires = o.requires.as_deref().unwrap_or(&[]);
                    let modules = crate::provenance::run_modules(d, model, requires, &mut sources);
                    let inputs = Inputs::after_defaults(
                        d,
                        model,
                        &o.defaults,
                        Modules::Listed(&modules),
                        &mut sources,
                    )
                    .with_reads(&o.reads);
                    Precomputed {
                        hash: procmodel_dom::hash::children_hash(d, o.container),
                        inputs: inputs.to_attribute(),
                        modules,
                    }
                })),
                _ => None,
            };
            let result = result.map(|(p, o)| {
                let mut held = WeakDom::new(InstanceBuilder::new("Folder"));
                let root = held.root_ref();
                host.with_dom_mut(|d| d.transfer(o.container, &mut held, root));
                (p, o, Some(held))
            });
            let failed_requires = result
                .is_err()
                .then(|| host.take_failed_requires())
                .flatten();
            let requires = if_changed(host.require_edges(), &mut sent);
            let files = if_changed(host.module_files(), &mut sent_files);
            if job
                .tx
                .send(Finished {
                    model,
                    result,
                    elapsed,
                    provenance,
                    requires,
                    failed_requires,
                    output: host.take_output(),
                    files,
                })
                .is_err()
            {
                break;
            }
        }
    }
}

/// `now` when it differs from what was `sent` last (which becomes `now`), else empty: the
/// engine keeps what a worker sent, so only changes are sent again.
fn if_changed<T: PartialEq + Clone>(now: Vec<T>, sent: &mut Vec<T>) -> Vec<T> {
    if now == *sent {
        Vec::new()
    } else {
        sent.clone_from(&now);
        now
    }
}

/// Drops every module result `host`'s require cache holds, and the record of them.
fn forget_required(host: &Host, required: &mut HashMap<Ref, String>) {
    let modules: Vec<Ref> = host.with_dom_ref(|d| {
        d.descendants()
            .filter(|i| procmodel_dom::is_a(i.class.as_str(), "ModuleScript"))
            .map(|i| i.referent())
            .collect()
    });
    for m in modules {
        let _ = host.invalidate_module(m);
    }
    required.clear();
}

// ----- the engine side: dispatching a pass and applying its results in order -----

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
    GenerationFailure,
>;

impl Engine {
    /// Generates `models` on `jobs` VMs — the engine's own and `jobs - 1` worker threads, each
    /// over a copy of the scene (same referents). The engine's VM applies results between its
    /// own runs, in the order of `models` (a result waits for those before it), so applying
    /// overlaps generating and the scene — voxels of overlapping models included — does not
    /// depend on which VM finished first. Reports come back in the order of `models`.
    pub(crate) fn generate_parallel(
        &mut self,
        all: &[Ref],
        jobs: usize,
        max_depth: usize,
    ) -> Vec<Report> {
        let (mut reports, misses) = self.cached_all(all);
        let models = &misses[..];
        let host_config = self.st().config.host.clone();
        let runtime = self.st().runtime.clone();
        let helpers = jobs.min(models.len()).saturating_sub(1);
        // The pivot each model's results land on is pinned first, so the copies (which leave
        // the old results out) place them exactly as the scene would.
        self.host.with_dom_mut(|dom| {
            for &m in models {
                apply::pin_pivot(dom, m);
            }
        });
        let copies: Vec<rbx_dom_weak::WeakDom> = self
            .host
            .with_dom_ref(|scene| (0..helpers).map(|_| clone_scene(scene, models)).collect());
        let queue = std::sync::Arc::new(Queue::new(models));
        let (tx, rx) = std::sync::mpsc::channel::<Finished>();
        let mut pool = std::mem::take(&mut self.st().pool);
        let hash = self.st().config.records_provenance();
        let revision = self.st().code_revision;
        pool.dispatch(&runtime, &host_config, copies, &queue, &tx, hash, revision);
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
            // The scene's VM defers such writes too: every run that makes them happens
            // again when its turn to be applied comes, so they reach the scene in the
            // models' order, whichever VM took them.
            let (m, result, elapsed) = run_one(&*host, m, &mut required, WatchOutside::Defer);
            if result.is_err() {
                self.note_failed_requires(m);
            }
            order
                .ready
                .insert(m, (result.map(|(p, o)| (p, o, None)), elapsed));
            while let Ok(f) = rx.try_recv() {
                self.take_finished(&mut order, f);
            }
            self.apply_in_order(&mut order, &mut reports, max_depth, &mut required);
        }
        // The queue is empty: apply what the workers still send until they are done.
        for f in rx {
            self.take_finished(&mut order, f);
            self.apply_in_order(&mut order, &mut reports, max_depth, &mut required);
        }
        // Models whose worker died leave a gap: apply the rest after it.
        while let Some(m) = order.models.get(order.next) {
            if !order.ready.contains_key(m) {
                order.next += 1;
            }
            self.apply_in_order(&mut order, &mut reports, max_depth, &mut required);
        }
        self.st().required = required;
        all.iter()
            .map(|&m| match reports.remove(&m) {
                Some(r) => r,
                None => {
                    // Its worker thread died (a bug, not a script error): say so, keep going.
                    self.st().states.entry(m).or_default().runs += 1;
                    self.fail(m, GenerationFailure::WorkerDied, Duration::ZERO)
                }
            })
            .collect()
    }

    /// Queues a worker's run for applying in order, keeping the provenance it computed for
    /// recording.
    fn take_finished(&mut self, order: &mut InOrder<'_>, f: Finished) {
        self.host.note_requires(&f.requires);
        if let Some(r) = f.failed_requires {
            self.st().run_requires.insert(f.model, r);
        }
        self.host.push_output(f.output);
        self.st().worker_files.extend(f.files);
        if let Some(p) = f.provenance {
            self.st().precomputed.insert(f.model, p);
        }
        order.ready.insert(f.model, (f.result, f.elapsed));
    }

    /// Applies the results waiting in `order` whose turn has come.
    fn apply_in_order(
        &mut self,
        order: &mut InOrder<'_>,
        reports: &mut HashMap<Ref, Report>,
        max_depth: usize,
        required: &mut HashMap<Ref, String>,
    ) {
        while let Some(&m) = order.models.get(order.next) {
            let Some((result, elapsed)) = order.ready.remove(&m) else {
                break;
            };
            order.next += 1;
            let (result, elapsed) = match result {
                // Its writes outside its container reach the scene from here, in order.
                Err(GenerationFailure::OutsideAccessDeferred(_)) => {
                    let host = self.host.clone();
                    let watch = self.watch_outside();
                    let (_, result, more) = run_one(&*host, m, required, watch);
                    if result.is_err() {
                        self.note_failed_requires(m);
                    }
                    (result.map(|(p, o)| (p, o, None)), elapsed + more)
                }
                other => (other, elapsed),
            };
            let r = self.apply_parallel(m, result, elapsed, max_depth);
            reports.insert(m, r);
        }
    }

    /// Applies one parallel run's results (`held`: the tree they were moved into, for a
    /// worker's; None when they are already in the scene's tree).
    fn apply_parallel(
        &mut self,
        model: Ref,
        result: ParallelResult,
        elapsed: Duration,
        max_depth: usize,
    ) -> Report {
        self.st().states.entry(model).or_default().runs += 1;
        let depth = self.host.with_dom_ref(|d| apply::nesting_depth(d, model));
        if depth > max_depth {
            let failure = GenerationFailure::Nesting {
                depth,
                limit: max_depth,
            };
            return self.fail(model, failure, elapsed);
        }
        let outcome = result.and_then(|(prepared, produced, held)| {
            self.apply_results(model, &prepared, produced, held)
        });
        self.conclude(model, outcome, elapsed)
    }
}
