//! The scheduler's state (app data, separate from the run context so resuming never holds
//! it): the virtual clock, the waiting, deferred and next-frame queues, the runs (groups)
//! and their limits, and which run is executing now. Plain state: `task` drives it, and
//! `signals` reads the current run here, below the driver that dispatches its events.

use mlua::{Lua, MultiValue, Thread};
use procmodel_base::Pcg32;
use std::collections::{BTreeMap, VecDeque};

/// One frame of virtual time.
pub const FRAME: f64 = 1.0 / 60.0;

/// Registry name of the Luau function (`task` installs it) that queues the running thread for
/// `t` seconds and yields; the scheduler resumes it with the time waited.
pub(crate) const WAIT_FOR: &str = "procmodel.wait_for";

/// How a queued thread is resumed.
pub(crate) enum Resume {
    /// Resume with these arguments.
    Args(MultiValue),
    /// Resume with the elapsed virtual time since `since` (task.wait's return value), never
    /// less than the `wait` asked for (`since + wait - since` may round below it).
    Elapsed { since: f64, wait: f64 },
}

/// A queued thread.
pub(crate) struct Entry {
    pub(crate) thread: Thread,
    pub(crate) resume: Resume,
    /// The run this thread belongs to (a generation, a script); each run steps only its own.
    pub(crate) group: u32,
    /// Event depth of a signal handler's first resumption (`signals::MAX_EVENT_DEPTH`); 0
    /// for every other resumption.
    pub(crate) depth: u8,
}

/// Scheduler state (app data, separate from the DOM context so resuming never holds it).
pub struct Sched {
    pub now: f64,
    seq: u64,
    /// (wake time bits, sequence) → entry; f64 bits order correctly for non-negative times.
    pub(crate) waiting: BTreeMap<(u64, u64), Entry>,
    pub(crate) deferred: VecDeque<Entry>,
    /// Threads resumed at the start of the next frame (`params:Pause()` yields).
    pub(crate) next_frame: VecDeque<Entry>,
    /// Every thread started by scripts, with its run, to end leaks.
    pub(crate) tracked: Vec<(u32, Thread)>,
    /// The run whose thread is executing now (threads it starts join it).
    pub(crate) current: u32,
    next_group: u32,
    /// Virtual time at which each live run started, and its resumptions since the clock
    /// last advanced (runs end in `task::end_leaked`).
    pub(crate) runs: Vec<RunClock>,
    /// Virtual time of the last frame the frame signals fired for.
    pub(crate) last_frame: f64,
    /// Most virtual time one run may wait in total (`task.wait`, frames), in seconds.
    pub max_wait: f64,
    /// `math.random`'s generator for the run being driven (each run has its own, swapped in
    /// with its clock).
    pub(crate) rng: Pcg32,
    /// How many times the running code read its clock (`os.clock`, `tick`), which moves
    /// while code runs: [`cpu_clock`].
    reads: u64,
    /// Event depth of the code running now, or of the thread resumed last until the events
    /// it recorded are dispatched: 0 outside signal handlers, n inside a handler of an event
    /// that n - 1 nested handlers fired.
    pub(crate) event_depth: u8,
}

/// The seed every run's `math.random` starts from: unseeded calls give the same numbers in
/// every run, on every VM (Luau seeds its one generator per VM from an address).
pub const RANDOM_SEED: i64 = 0;

/// What [`Sched::enter`] replaced, for [`Sched::leave`].
pub(crate) struct Saved {
    now: f64,
    last_frame: f64,
    rng: Option<Pcg32>,
    reads: u64,
}

/// A live run's clock (see [`Sched::check_run`]).
pub(crate) struct RunClock {
    pub(crate) group: u32,
    started: f64,
    last_now: f64,
    resumes: u64,
    /// The run's own virtual time, last frame and `math.random` generator while another
    /// run is driven ([`Sched::enter`]).
    now: f64,
    last_frame: f64,
    rng: Pcg32,
    reads: u64,
    /// A wait of the run's that may never end (`Infinite yield possible on ...`), named in
    /// the wait limit's error.
    stuck: Option<String>,
    /// The run's main thread (a script's chunk, a generation's `OnGenerate`).
    main: Option<Thread>,
    /// A top-level script's run (a trusted tool's), whose modules share its `_G`.
    script: bool,
    /// How the main thread ended when a `task.spawn` resumed it (the scheduler did not, so it
    /// did not see the values or the error): `Promise:await()` and signal libraries resume a
    /// waiting thread that way.
    pub(crate) main_end: Option<mlua::Result<mlua::MultiValue>>,
}

/// Most resumptions of one run's threads while the virtual clock stands still (a
/// `task.defer` storm never reaches a frame boundary, so no time limit would see it).
pub const MAX_RESUMES_PER_FRAME: u64 = 250_000;

/// The default of [`Sched::max_wait`]: an hour of virtual time, far beyond any legitimate
/// wait, reached in moments by a run that waits in a loop forever.
pub use procmodel_script::DEFAULT_MAX_WAIT;

impl Default for Sched {
    fn default() -> Self {
        Sched {
            now: 0.0,
            seq: 0,
            waiting: BTreeMap::new(),
            deferred: VecDeque::new(),
            next_frame: VecDeque::new(),
            tracked: Vec::new(),
            current: 0,
            next_group: 0,
            runs: Vec::new(),
            last_frame: 0.0,
            max_wait: DEFAULT_MAX_WAIT,
            rng: Pcg32::new(RANDOM_SEED),
            reads: 0,
            event_depth: 0,
        }
    }
}

/// The scheduler state, borrowed mutably; errors (never panics) when missing or busy.
pub(crate) fn sched(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Sched>> {
    lua.try_app_data_mut::<Sched>()
        .map_err(|_| mlua::Error::runtime("internal: scheduler is busy"))?
        .ok_or_else(|| mlua::Error::runtime("internal: no scheduler"))
}

/// The run whose thread is executing now (connections and threads it makes join it).
pub fn current_group(lua: &Lua) -> mlua::Result<u32> {
    Ok(sched(lua)?.current)
}

impl Sched {
    /// Queues `thread` to resume at virtual time `at`, in the current run.
    pub(crate) fn schedule(&mut self, at: f64, thread: Thread, resume: Resume) {
        self.seq += 1;
        let group = self.current;
        self.waiting.insert(
            (at.max(0.0).to_bits(), self.seq),
            Entry {
                thread,
                resume,
                group,
                depth: 0,
            },
        );
    }

    /// A fresh run id.
    pub fn new_group(&mut self) -> u32 {
        self.next_group += 1;
        self.runs.push(RunClock {
            group: self.next_group,
            started: 0.0,
            last_now: 0.0,
            resumes: 0,
            now: 0.0,
            last_frame: 0.0,
            rng: Pcg32::new(RANDOM_SEED),
            reads: 0,
            stuck: None,
            main: None,
            main_end: None,
            script: false,
        });
        self.next_group
    }

    /// Records `main` as run `group`'s main thread.
    pub(crate) fn set_main(&mut self, group: u32, main: &Thread) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.group == group) {
            r.main = Some(main.clone());
        }
    }

    /// Marks run `group` as a top-level script's.
    pub(crate) fn set_script(&mut self, group: u32) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.group == group) {
            r.script = true;
        }
    }

    /// Whether the code running now is a top-level script's run.
    pub(crate) fn in_script(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.group == self.current && r.script)
    }

    /// The live run whose main thread `th` is.
    pub(crate) fn run_of_main(&mut self, th: &Thread) -> Option<&mut RunClock> {
        self.runs.iter_mut().find(|r| r.main.as_ref() == Some(th))
    }

    /// Makes `group`'s own clock the scheduler's while it is driven. A run's virtual time
    /// starts at 0 and moves only with its own waits and frames, so what it reads
    /// (`os.clock`, `task.wait`'s result) does not depend on the runs beside it or on which
    /// VM runs it. Returns the clock it replaces, for [`Sched::leave`].
    pub(crate) fn enter(&mut self, group: u32) -> Saved {
        let mut saved = Saved {
            now: self.now,
            last_frame: self.last_frame,
            rng: None,
            reads: self.reads,
        };
        if let Some(r) = self.runs.iter_mut().find(|r| r.group == group) {
            self.now = r.now;
            self.last_frame = r.last_frame;
            self.reads = r.reads;
            saved.rng = Some(std::mem::replace(&mut self.rng, r.rng.clone()));
        }
        saved
    }

    /// Keeps `group`'s clock and generator and puts back what [`Sched::enter`] replaced.
    pub(crate) fn leave(&mut self, group: u32, saved: Saved) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.group == group) {
            r.now = self.now;
            r.last_frame = self.last_frame;
            r.rng = self.rng.clone();
            r.reads = self.reads;
        }
        self.now = saved.now;
        self.last_frame = saved.last_frame;
        self.reads = saved.reads;
        if let Some(rng) = saved.rng {
            self.rng = rng;
        }
    }

    /// Counts one resumption of `group`'s threads and fails once the run has waited longer
    /// than [`Sched::max_wait`] or resumed [`MAX_RESUMES_PER_FRAME`] times without the clock
    /// advancing: a run that waits forever ends with an error instead of spinning.
    pub(crate) fn check_run(&mut self, group: u32) -> mlua::Result<()> {
        let (now, max_wait) = (self.now, self.max_wait);
        let Some(run) = self.runs.iter_mut().find(|r| r.group == group) else {
            return Ok(());
        };
        if now - run.started > max_wait {
            let stuck = match &run.stuck {
                Some(what) => format!(", still waiting in {what}"),
                None => String::new(),
            };
            return Err(mlua::Error::runtime(format!(
                "{} the run waited {:.0} s of virtual time (task.wait, frames) without finishing{stuck} (limit {max_wait:.0} s; --max-wait to change)",
                crate::error::WAIT_LIMIT,
                now - run.started
            )));
        }
        if now != run.last_now {
            run.last_now = now;
            run.resumes = 0;
        }
        run.resumes += 1;
        if run.resumes > MAX_RESUMES_PER_FRAME {
            return Err(mlua::Error::runtime(format!(
                "{} the run resumed its threads {MAX_RESUMES_PER_FRAME} times without virtual time advancing (a task.defer or task.spawn loop that never waits?)",
                crate::error::WAIT_LIMIT
            )));
        }
        Ok(())
    }

    /// Records that the current run waits in `what` (`ReplicatedStorage:WaitForChild("X")`)
    /// past the point where Roblox warns of an infinite yield.
    pub(crate) fn note_stuck(&mut self, what: String) {
        let current = self.current;
        if let Some(run) = self.runs.iter_mut().find(|r| r.group == current) {
            run.stuck = Some(what);
        }
    }

    /// Forgets [`Sched::note_stuck`]'s wait: it ended.
    pub(crate) fn clear_stuck(&mut self) {
        let current = self.current;
        if let Some(run) = self.runs.iter_mut().find(|r| r.group == current) {
            run.stuck = None;
        }
    }

    /// The id of the newest run (for cleaning up after a failed one).
    pub fn last_group(&self) -> u32 {
        self.next_group
    }

    /// When the next entry of `group` is due (deferred and next-frame ones: now).
    pub(crate) fn next_time(&self, group: u32) -> Option<f64> {
        if self.deferred.iter().any(|e| e.group == group) {
            return Some(self.now);
        }
        if self.next_frame.iter().any(|e| e.group == group) {
            return Some(self.now + FRAME);
        }
        self.waiting
            .iter()
            .find(|(_, e)| e.group == group)
            .map(|(k, _)| f64::from_bits(k.0))
    }

    /// Whether taking the next entry of `group` crosses a frame boundary (`None`: nothing
    /// queued for it).
    pub(crate) fn peek(&self, group: u32) -> Option<bool> {
        if self.deferred.iter().any(|e| e.group == group) {
            return Some(false);
        }
        if self.next_frame.iter().any(|e| e.group == group) {
            return Some(true);
        }
        let (k, _) = self.waiting.iter().find(|(_, e)| e.group == group)?;
        Some(f64::from_bits(k.0) > self.now)
    }

    /// The next entry of `group`: deferred first, then next-frame, then the earliest wait.
    /// Returns whether taking it crosses a frame boundary.
    pub(crate) fn pop(&mut self, group: u32) -> Option<(Entry, bool)> {
        if let Some(i) = self.deferred.iter().position(|e| e.group == group) {
            return self.deferred.remove(i).map(|e| (e, false));
        }
        if let Some(i) = self.next_frame.iter().position(|e| e.group == group) {
            self.now += FRAME;
            return self.next_frame.remove(i).map(|e| (e, true));
        }
        let key = self
            .waiting
            .iter()
            .find(|(_, e)| e.group == group)
            .map(|(k, _)| *k)?;
        let e = self.waiting.remove(&key)?;
        self.now = self.now.max(f64::from_bits(key.0));
        Some((e, true))
    }

    /// Drops the queued entries of `th`.
    pub(crate) fn forget(&mut self, th: &Thread) {
        self.waiting.retain(|_, e| e.thread != *th);
        self.deferred.retain(|e| e.thread != *th);
        self.next_frame.retain(|e| e.thread != *th);
    }
}

/// The run's virtual clock, in seconds (0 before a scheduler is installed).
pub(crate) fn now(lua: &mlua::Lua) -> f64 {
    lua.app_data_ref::<Sched>().map(|s| s.now).unwrap_or(0.0)
}

/// How much later each reading of the running code's clock is than the one before, beyond
/// the virtual time.
pub const CLOCK_STEP: f64 = 1e-6;

/// The running code's clock (`os.clock`, `tick`): the run's virtual time plus
/// [`CLOCK_STEP`] for each earlier reading, as a real clock moves while code runs. Strictly
/// increasing and deterministic (it counts readings, never reads a clock), so time budgets,
/// busy waits and libraries ordering their updates by it (Fusion's `lastChange`) work, and
/// a wait still shows as its whole length between two readings.
pub(crate) fn cpu_clock(lua: &mlua::Lua) -> f64 {
    let Some(mut s) = lua.app_data_mut::<Sched>() else {
        return 0.0;
    };
    let t = s.now + s.reads as f64 * CLOCK_STEP;
    s.reads += 1;
    t
}
