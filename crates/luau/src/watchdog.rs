//! Execution-time watchdog: a timer thread raises an atomic flag once a deadline passes; the
//! VM's interrupt callback only reads the flag (never the clock — measured 3.6× slower). The
//! interrupt's fast path in front of mlua's entry, which reads these flags, is in `ffi`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Armed {
    /// The no-yield timeout of the running resumption.
    deadline: Option<Instant>,
    /// The latest the running resumption may go on, however often it calls
    /// `params:Pause()` (which moves `deadline` but never past this).
    run_end: Option<Instant>,
    /// The end of the current frame's time budget (engine frames).
    budget: Option<Instant>,
    shutdown: bool,
    /// When the timer thread will next wake by itself (None: only when woken). Arming a later
    /// deadline than that needs no wake-up: the thread re-reads the deadlines when it wakes.
    /// Arming happens for every run and every frame, so this saves a thread switch each time.
    scheduled: Option<Instant>,
}

struct Shared {
    armed: Mutex<Armed>,
    wake: Condvar,
    expired: AtomicBool,
    /// Set with `expired` when the deadline that passed was the run-time cap.
    run_limit_hit: AtomicBool,
    budget_spent: AtomicBool,
    /// Set from any thread to end the running resumption (a front end's Cancel button).
    cancelled: AtomicBool,
}

/// One timer thread per VM. `arm` before resuming Luau, `disarm` after it yields or returns.
pub struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn new() -> Self {
        let shared = Arc::new(Shared {
            armed: Mutex::new(Armed::default()),
            wake: Condvar::new(),
            expired: AtomicBool::new(false),
            run_limit_hit: AtomicBool::new(false),
            budget_spent: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("procmodel-watchdog".into())
            .spawn(move || run(&s))
            .ok();
        Watchdog { shared, thread }
    }

    /// A handle the interrupt closure can own (it must be `'static`).
    pub fn probe(&self) -> Probe {
        Probe(self.shared.clone())
    }

    /// A clonable handle that arms and disarms this watchdog.
    pub fn handle(&self) -> Handle {
        Handle(self.shared.clone())
    }

    /// A `Send` handle that cancels the running resumption from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller(self.shared.clone())
    }
}

/// Ends the VM's running (or next resumed) Luau code with [`CANCEL_MESSAGE`] from any
/// thread: the interrupt raises the error at the next loop back-edge or call, and keeps
/// raising it (so a `pcall` cannot swallow it) until the resumption ends.
#[derive(Clone)]
pub struct Canceller(Arc<Shared>);

impl Canceller {
    /// Requests the cancellation; it stays pending until a resumption ends or `clear`.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    /// Withdraws a pending request (when nothing was running to cancel).
    pub fn clear(&self) {
        self.0.cancelled.store(false, Ordering::Relaxed);
    }

    /// Whether a request is pending.
    pub fn is_pending(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }
}

pub use procmodel_script::CANCEL_MESSAGE;

/// Arms and disarms the watchdog (clonable, owned by run drivers).
#[derive(Clone)]
pub struct Handle(Arc<Shared>);

impl Handle {
    /// Starts a countdown of `limit` from now, which `params:Pause()` may extend up to
    /// `run_limit` from now.
    pub fn arm(&self, limit: Duration, run_limit: Duration) {
        let mut a = self.0.armed.lock().unwrap_or_else(|e| e.into_inner());
        self.0.expired.store(false, Ordering::Relaxed);
        self.0.run_limit_hit.store(false, Ordering::Relaxed);
        let now = Instant::now();
        a.run_end = now.checked_add(run_limit);
        a.deadline = now.checked_add(limit.min(run_limit));
        if wakes_later(&a, a.deadline) {
            self.0.wake.notify_one();
        }
    }

    /// Restarts a running countdown of `limit` from now (`params:Pause()`: a generator that
    /// offers to yield has not run `limit` without yielding). No effect while disarmed.
    pub fn extend(&self, limit: Duration) {
        let mut a = self.0.armed.lock().unwrap_or_else(|e| e.into_inner());
        if a.deadline.is_some() && !self.0.expired.load(Ordering::Relaxed) {
            // A later deadline needs no wake-up: the timer thread re-reads it when it wakes.
            let wanted = Instant::now().checked_add(limit);
            a.deadline = match (wanted, a.run_end) {
                (Some(w), Some(end)) => Some(w.min(end)),
                (w, end) => w.or(end),
            };
        }
    }

    /// Stops the countdown and clears the flag.
    pub fn disarm(&self) {
        let mut a = self.0.armed.lock().unwrap_or_else(|e| e.into_inner());
        a.deadline = None;
        a.run_end = None;
        self.0.expired.store(false, Ordering::Relaxed);
        self.0.run_limit_hit.store(false, Ordering::Relaxed);
        self.0.cancelled.store(false, Ordering::Relaxed);
    }

    /// Starts a frame's time budget (`None` ends it).
    pub fn set_budget(&self, budget: Option<Duration>) {
        let mut a = self.0.armed.lock().unwrap_or_else(|e| e.into_inner());
        self.0.budget_spent.store(false, Ordering::Relaxed);
        a.budget = budget.and_then(|b| Instant::now().checked_add(b));
        if wakes_later(&a, a.budget) {
            self.0.wake.notify_one();
        }
    }
}

/// A cheap clonable reader of the expiry flag.
#[derive(Clone)]
pub struct Probe(Arc<Shared>);

impl Probe {
    #[inline]
    pub fn expired(&self) -> bool {
        self.0.expired.load(Ordering::Relaxed)
    }

    /// Whether the deadline that expired was the run-time cap (not the no-yield timeout).
    pub fn run_limit_hit(&self) -> bool {
        self.0.run_limit_hit.load(Ordering::Relaxed)
    }

    /// Whether a cancellation was requested (see [`Canceller`]).
    pub fn cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// The error that ends the running code when the run was cancelled or a time limit
    /// passed (what the interrupt raises), or None.
    pub fn stop_message(&self) -> Option<&'static str> {
        if self.cancelled() {
            Some(CANCEL_MESSAGE)
        } else if self.expired() {
            Some(if self.run_limit_hit() {
                procmodel_script::RUN_LIMIT_MESSAGE
            } else {
                procmodel_script::TIMEOUT_MESSAGE
            })
        } else {
            None
        }
    }

    /// Whether any flag is up (what the interrupt's fast path checks).
    #[inline]
    pub fn raised(&self) -> bool {
        self.0.expired.load(Ordering::Relaxed)
            || self.0.budget_spent.load(Ordering::Relaxed)
            || self.0.cancelled.load(Ordering::Relaxed)
    }

    /// True once, when the frame budget has run out (the flag is cleared by reading it).
    #[inline]
    pub fn take_budget_spent(&self) -> bool {
        self.0.budget_spent.load(Ordering::Relaxed)
            && self.0.budget_spent.swap(false, Ordering::Relaxed)
    }
}

impl Default for Watchdog {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        {
            let mut a = self.shared.armed.lock().unwrap_or_else(|e| e.into_inner());
            a.shutdown = true;
            self.shared.wake.notify_one();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// True when the timer thread would wake after `at` on its own (so it must be woken now).
fn wakes_later(a: &Armed, at: Option<Instant>) -> bool {
    match (at, a.scheduled) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(at), Some(s)) => at < s,
    }
}

fn run(shared: &Shared) {
    let mut guard = shared.armed.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if guard.shutdown {
            return;
        }
        let now = Instant::now();
        if guard.budget.is_some_and(|b| now >= b) {
            shared.budget_spent.store(true, Ordering::Relaxed);
            guard.budget = None;
        }
        let next = match (guard.deadline, guard.budget) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match next {
            None => {
                guard.scheduled = None;
                guard = shared.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
            }
            Some(deadline) => {
                if guard.deadline.is_some_and(|d| now >= d) {
                    if guard.run_end.is_some_and(|end| now >= end) {
                        shared.run_limit_hit.store(true, Ordering::Relaxed);
                    }
                    shared.expired.store(true, Ordering::Relaxed);
                    guard.deadline = None;
                } else if now >= deadline {
                    continue;
                } else {
                    guard.scheduled = Some(deadline);
                    let (g, _) = shared
                        .wake
                        .wait_timeout(guard, deadline - now)
                        .unwrap_or_else(|e| e.into_inner());
                    guard = g;
                    guard.scheduled = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `flag` until it is true; fails after 10 s with `what`.
    fn wait_for(mut flag: impl FnMut() -> bool, what: &str) {
        let start = Instant::now();
        while !flag() {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn fires_after_deadline_and_resets_on_disarm() {
        let wd = Watchdog::new();
        let p = wd.probe();
        let w = wd.handle();
        w.arm(Duration::from_millis(5), Duration::from_secs(7200));
        wait_for(|| p.expired(), "watchdog never fired");
        w.disarm();
        assert!(!p.expired());
        w.arm(Duration::from_secs(3600), Duration::from_secs(7200));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!p.expired());
    }

    #[test]
    fn an_earlier_deadline_after_a_later_one_still_fires() {
        // The thread sleeps until the hour-long deadline; arming a short one must wake it.
        let wd = Watchdog::new();
        let p = wd.probe();
        let w = wd.handle();
        w.arm(Duration::from_secs(3600), Duration::from_secs(7200));
        std::thread::sleep(Duration::from_millis(20));
        w.arm(Duration::from_millis(5), Duration::from_secs(7200));
        wait_for(|| p.expired(), "never fired");
        // A budget shorter than the pending deadline is noticed too.
        w.disarm();
        w.arm(Duration::from_secs(3600), Duration::from_secs(7200));
        std::thread::sleep(Duration::from_millis(20));
        w.set_budget(Some(Duration::from_millis(5)));
        wait_for(|| p.take_budget_spent(), "budget never spent");
    }
}
