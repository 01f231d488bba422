//! The engine-thread pattern for front ends: one thread owns the `Engine` (which is `!Send`:
//! it owns a Luau VM), takes commands over a channel, steps once per batch of commands and
//! publishes a snapshot the front end builds on that thread. Publication is "latest wins": a
//! reader that is slow skips revisions and never sees a backlog.
//!
//! Owns: the command loop, the published slot, cross-thread cancellation. Must never: block a
//! caller on a generator (commands queue while a step runs; `cancel` works from any thread),
//! or let a panic on the engine thread take the caller down (it becomes an error reply).

use crate::{Engine, EngineError, Report};
use procmodel_script::Canceller;
use rbx_types::{Ref, Variant};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a front end asks the engine thread to do. Mutations are undo waypoints, as the
/// matching `Engine` methods are; none of them generates (the step after the batch does).
/// A batch publishes a snapshot when a command in it changed something: one that replies
/// [`Reply::Changed`]`(false)` did not.
pub enum Command {
    /// [`Engine::set_attribute`] (`None` removes it).
    SetAttribute {
        model: Ref,
        name: String,
        value: Option<Variant>,
    },
    /// [`Engine::set_size`].
    SetSize { model: Ref, size: glam::Vec3 },
    /// [`Engine::scale_to`].
    ScaleTo { model: Ref, scale: f32 },
    /// [`Engine::force_generation`].
    ForceGeneration(Ref),
    /// [`Engine::undo`]; replies [`Reply::Changed`].
    Undo,
    /// [`Engine::redo`]; replies [`Reply::Changed`].
    Redo,
    /// [`Engine::save`] (atomic: temp file + rename); replies [`Reply::Saved`].
    Save(PathBuf),
    /// Re-reads a generator file into its ModuleScript's Source (hot reload): the models
    /// using it become dirty through their Source input. Replies [`Reply::Changed`] (false
    /// when the text is the same).
    ReloadSource { module: Ref, path: PathBuf },
    /// Publishes a snapshot even if nothing changed (a page that reconnects).
    Snapshot,
    /// Runs a closure on the engine (queries, exports, anything the other commands lack).
    /// It counts as a mutation: a snapshot is published after it, unless it replies
    /// [`Reply::Changed`]`(false)`.
    With(Box<dyn FnOnce(&mut Engine) -> Result<Reply, String> + Send>),
    /// Like `With`, for reads (exports, queries): nothing is published after it.
    Query(Box<dyn FnOnce(&mut Engine) -> Result<Reply, String> + Send>),
    /// Ends the thread after the commands before it in the queue.
    Shutdown,
}

/// A command's answer.
pub enum Reply {
    Done,
    /// Whether the command changed anything (undo/redo with nothing to do: false).
    Changed(bool),
    Saved(PathBuf),
    /// What a [`Command::With`] closure returned.
    Value(Box<dyn Any + Send>),
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Done => f.write_str("Done"),
            Reply::Changed(c) => write!(f, "Changed({c})"),
            Reply::Saved(p) => write!(f, "Saved({})", p.display()),
            Reply::Value(_) => f.write_str("Value(..)"),
        }
    }
}

/// Errors of the engine thread. Messages name the command that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ThreadError {
    /// Making the engine failed (the scene file, the VM).
    #[error("starting the engine: {0}")]
    Start(String),
    /// The thread has ended (shut down, or its channel closed).
    #[error("the engine thread has stopped")]
    Stopped,
    /// The command was refused (bad input, a failed save, a panic caught on the thread).
    #[error("{command}: {message}")]
    Command {
        command: &'static str,
        message: String,
    },
}

/// What the publish closure is told about the batch it publishes.
#[derive(Debug, Clone)]
pub struct Step {
    /// The revision this publication gets (1 for the first, +1 for each).
    pub revision: u64,
    /// Ids (from [`EngineThread::submit`]) of the commands applied since the last publication.
    pub commands: Vec<u64>,
    /// Reports of the steps since the last publication, in order.
    pub reports: Vec<Report>,
    /// Whether generations are still in flight (the thread keeps stepping each frame).
    pub busy: bool,
    /// Time the last step took (detecting changes and generating).
    pub step_time: Duration,
    /// A panic caught on the engine thread since the last publication.
    pub panic: Option<String>,
}

/// One published snapshot.
pub struct Frame<T> {
    pub revision: u64,
    pub value: Arc<T>,
}

impl<T> Clone for Frame<T> {
    fn clone(&self) -> Self {
        Frame {
            revision: self.revision,
            value: self.value.clone(),
        }
    }
}

/// Called with each new revision (on the engine thread: must be quick, e.g. a notify).
pub type Listener = Box<dyn Fn(u64) + Send + Sync>;
/// Receives a command's answer (on the engine thread).
pub type Responder = Box<dyn FnOnce(Result<Reply, ThreadError>) + Send>;

struct Slot<T> {
    latest: Mutex<Option<Frame<T>>>,
    changed: Condvar,
    listeners: Mutex<Vec<Listener>>,
}

enum Envelope {
    Command {
        id: u64,
        command: Command,
        reply: Option<Responder>,
    },
    /// Sent by `cancel`: drop a cancellation nothing was running to receive.
    CancelDone,
}

/// Steps of the engine while a generation waits for later frames (virtual 60 Hz).
const FRAME: Duration = Duration::from_millis(16);

/// An engine owned by its own thread. Dropping it shuts the thread down.
pub struct EngineThread<T> {
    tx: mpsc::Sender<Envelope>,
    slot: Arc<Slot<T>>,
    canceller: Canceller,
    next_id: AtomicU64,
    join: Option<JoinHandle<()>>,
}

impl<T: Send + Sync + 'static> EngineThread<T> {
    /// Starts the thread: `make` builds the engine there, and `publish` builds each snapshot
    /// there (first right after `make`, then after every batch that changed something).
    pub fn spawn<M, P>(make: M, publish: P) -> Result<EngineThread<T>, ThreadError>
    where
        M: FnOnce() -> Result<Engine, EngineError> + Send + 'static,
        P: FnMut(&mut Engine, &Step) -> T + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Envelope>();
        let slot = Arc::new(Slot {
            latest: Mutex::new(None),
            changed: Condvar::new(),
            listeners: Mutex::new(Vec::new()),
        });
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Canceller, ThreadError>>();
        let s = slot.clone();
        let join = std::thread::Builder::new()
            .name("procmodel-engine".into())
            .spawn(move || {
                let made = catch_unwind(AssertUnwindSafe(make));
                let mut engine = match made {
                    Ok(Ok(e)) => e,
                    Ok(Err(e)) => {
                        let _ = ready_tx.send(Err(ThreadError::Start(e.to_string())));
                        return;
                    }
                    Err(p) => {
                        let _ = ready_tx.send(Err(ThreadError::Start(panic_text(&*p))));
                        return;
                    }
                };
                let canceller = engine.canceller();
                let _ = ready_tx.send(Ok(canceller.clone()));
                drop(ready_tx);
                Looper {
                    engine: &mut engine,
                    publish,
                    slot: &s,
                    canceller,
                    revision: 0,
                }
                .run(&rx);
            })
            .map_err(|e| ThreadError::Start(format!("cannot start the engine thread: {e}")))?;
        let canceller = match ready_rx.recv() {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                let _ = join.join();
                return Err(e);
            }
            Err(_) => {
                let _ = join.join();
                return Err(ThreadError::Start("the engine thread ended early".into()));
            }
        };
        Ok(EngineThread {
            tx,
            slot,
            canceller,
            next_id: AtomicU64::new(1),
            join: Some(join),
        })
    }

    /// Queues a command; `reply` is called on the engine thread once it is applied. Returns
    /// the command's id (reported in [`Step::commands`] of the publication that includes it).
    pub fn submit(&self, command: Command, reply: Option<Responder>) -> Result<u64, ThreadError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.tx
            .send(Envelope::Command { id, command, reply })
            .map_err(|_| ThreadError::Stopped)?;
        Ok(id)
    }

    /// Queues a command and waits for its answer (not from an async task: it blocks).
    pub fn call(&self, command: Command) -> Result<Reply, ThreadError> {
        let (tx, rx) = mpsc::channel();
        self.submit(
            command,
            Some(Box::new(move |r| {
                let _ = tx.send(r);
            })),
        )?;
        rx.recv().map_err(|_| ThreadError::Stopped)?
    }

    /// Stops the generation running now (from any thread, even while the engine thread is
    /// inside a step): it fails with `procmodel_script::CANCEL_MESSAGE` and the model gets the
    /// error placeholder, as any failed generation does.
    pub fn cancel(&self) -> Result<(), ThreadError> {
        self.canceller.cancel();
        self.tx
            .send(Envelope::CancelDone)
            .map_err(|_| ThreadError::Stopped)
    }

    /// The latest publication.
    pub fn latest(&self) -> Option<Frame<T>> {
        lock(&self.slot.latest).clone()
    }

    /// Waits up to `timeout` for a publication newer than `revision`.
    pub fn wait_newer(&self, revision: u64, timeout: Duration) -> Option<Frame<T>> {
        let deadline = Instant::now() + timeout;
        let mut g = lock(&self.slot.latest);
        loop {
            if let Some(f) = g.as_ref().filter(|f| f.revision > revision) {
                return Some(f.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            g = self
                .slot
                .changed
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Calls `f` with every new revision (on the engine thread, after it is published).
    pub fn subscribe(&self, f: Listener) {
        lock(&self.slot.listeners).push(f);
    }

    /// Ends the thread after the queued commands and waits for it.
    pub fn shutdown(mut self) -> Result<(), ThreadError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), ThreadError> {
        let _ = self.tx.send(Envelope::Command {
            id: 0,
            command: Command::Shutdown,
            reply: None,
        });
        match self.join.take() {
            Some(j) => j.join().map_err(|p| ThreadError::Command {
                command: "shutdown",
                message: panic_text(&*p),
            }),
            None => Ok(()),
        }
    }
}

impl<T> Drop for EngineThread<T> {
    fn drop(&mut self) {
        if let Some(j) = self.join.take() {
            let _ = self.tx.send(Envelope::Command {
                id: 0,
                command: Command::Shutdown,
                reply: None,
            });
            let _ = j.join();
        }
    }
}

struct Looper<'a, T, P> {
    engine: &'a mut Engine,
    publish: P,
    slot: &'a Slot<T>,
    canceller: Canceller,
    revision: u64,
}

impl<T, P: FnMut(&mut Engine, &Step) -> T> Looper<'_, T, P> {
    fn run(&mut self, rx: &mpsc::Receiver<Envelope>) {
        let mut pending = Step {
            revision: 0,
            commands: Vec::new(),
            reports: Vec::new(),
            busy: false,
            step_time: Duration::ZERO,
            panic: None,
        };
        // The first snapshot: the scene as loaded, after its first step (models saved dirty).
        let mut publish = true;
        let mut busy = true;
        loop {
            let mut batch = Vec::new();
            if !publish {
                let first = if busy {
                    match rx.recv_timeout(FRAME) {
                        Ok(e) => Some(e),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                } else {
                    match rx.recv() {
                        Ok(e) => Some(e),
                        Err(_) => return,
                    }
                };
                batch.extend(first);
            }
            batch.extend(rx.try_iter());
            let mut stop = false;
            for envelope in batch {
                match envelope {
                    Envelope::CancelDone => {
                        if !self.generating() {
                            self.canceller.clear();
                        }
                    }
                    Envelope::Command { id, command, reply } => {
                        if matches!(command, Command::Shutdown) {
                            stop = true;
                            if let Some(r) = reply {
                                r(Ok(Reply::Done));
                            }
                            continue;
                        }
                        let mutates = !matches!(command, Command::Query(_));
                        let name = command_name(&command);
                        let engine = &mut *self.engine;
                        let result = catch_unwind(AssertUnwindSafe(|| apply(engine, command)))
                            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&*p))));
                        // A command that changed nothing (the same text reloaded, an undo
                        // with nothing to undo) publishes nothing.
                        let changed = !matches!(result, Ok(Reply::Changed(false)));
                        if result.is_ok() && mutates && changed {
                            publish = true;
                        }
                        pending.commands.push(id);
                        if let Some(r) = reply {
                            r(result.map_err(|message| ThreadError::Command {
                                command: name,
                                message,
                            }));
                        }
                    }
                }
            }
            if stop {
                return;
            }
            let started = Instant::now();
            let engine = &mut *self.engine;
            match catch_unwind(AssertUnwindSafe(|| engine.step())) {
                Ok(reports) => {
                    if !reports.is_empty() {
                        publish = true;
                    }
                    pending.reports.extend(reports);
                }
                Err(p) => {
                    pending.panic = Some(format!("step panicked: {}", panic_text(&*p)));
                    publish = true;
                }
            }
            pending.step_time = started.elapsed();
            busy = self.generating();
            if publish {
                self.revision += 1;
                pending.revision = self.revision;
                pending.busy = busy;
                let engine = &mut *self.engine;
                let publish_fn = &mut self.publish;
                let step = &pending;
                match catch_unwind(AssertUnwindSafe(|| publish_fn(engine, step))) {
                    Ok(value) => {
                        *lock(&self.slot.latest) = Some(Frame {
                            revision: self.revision,
                            value: Arc::new(value),
                        });
                        self.slot.changed.notify_all();
                        for l in lock(&self.slot.listeners).iter() {
                            l(self.revision);
                        }
                    }
                    Err(_) => self.revision -= 1,
                }
                pending.commands.clear();
                pending.reports.clear();
                pending.panic = None;
                publish = false;
            }
        }
    }

    fn generating(&self) -> bool {
        self.engine
            .models()
            .into_iter()
            .any(|m| self.engine.is_generating(m))
    }
}

fn apply(engine: &mut Engine, command: Command) -> Result<Reply, String> {
    let done = |r: Result<(), EngineError>| r.map(|()| Reply::Done).map_err(|e| e.to_string());
    match command {
        Command::SetAttribute { model, name, value } => {
            done(engine.set_attribute(model, &name, value))
        }
        Command::SetSize { model, size } => done(engine.set_size(model, size)),
        Command::ScaleTo { model, scale } => done(engine.scale_to(model, scale)),
        Command::ForceGeneration(model) => {
            if engine.force_generation(model) {
                Ok(Reply::Done)
            } else {
                Err("not a ProceduralModel in the scene".into())
            }
        }
        Command::Undo => Ok(Reply::Changed(engine.undo())),
        Command::Redo => Ok(Reply::Changed(engine.redo())),
        Command::Save(path) => engine
            .save(&path)
            .map(|()| Reply::Saved(path))
            .map_err(|e| e.to_string()),
        Command::ReloadSource { module, path } => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let same = engine.with_dom(|dom| {
                dom.get_by_ref(module)
                    .and_then(|i| i.properties.get(&procmodel_dom::keys::KEYS.source))
                    .is_some_and(|v| matches!(v, Variant::String(s) if *s == text))
            });
            if same {
                return Ok(Reply::Changed(false));
            }
            engine
                .set_source(module, &text)
                .map(|()| Reply::Changed(true))
                .map_err(|e| e.to_string())
        }
        Command::Snapshot => Ok(Reply::Done),
        Command::With(f) | Command::Query(f) => f(engine),
        Command::Shutdown => Ok(Reply::Done),
    }
}

fn command_name(c: &Command) -> &'static str {
    match c {
        Command::SetAttribute { .. } => "set attribute",
        Command::SetSize { .. } => "set Size",
        Command::ScaleTo { .. } => "scale",
        Command::ForceGeneration(_) => "force generation",
        Command::Undo => "undo",
        Command::Redo => "redo",
        Command::Save(_) => "save",
        Command::ReloadSource { .. } => "reload source",
        Command::Snapshot => "snapshot",
        Command::With(_) | Command::Query(_) => "engine call",
        Command::Shutdown => "shutdown",
    }
}

fn panic_text(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
