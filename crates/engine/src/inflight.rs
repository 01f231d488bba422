//! Runs in flight: generations on the scene's VM that wait (`task.wait`, `params:Pause()`)
//! continue one frame per step, and are cancelled when their inputs change or their model
//! leaves the scene.
//!
//! Owns: [`InFlight`] and its frame-by-frame resumption. Must never: let a run exceed its
//! whole-run time limit across frames.

use crate::report::{GenerationFailure, Report};
use crate::{Engine, apply};
use rbx_types::{Ref, Variant};
use std::time::{Duration, Instant};

/// A generation that waits for a later frame.
pub(crate) struct InFlight {
    pub(crate) pending: procmodel_script::PendingRun,
    /// Input fingerprint when it started: a different one cancels it.
    pub(crate) fp: u64,
    pub(crate) prepared: apply::Prepared,
    pub(crate) defaults: Vec<(String, Variant)>,
    pub(crate) started: Instant,
    /// Execution time used so far (the frames it ran in).
    pub(crate) busy: Duration,
}

impl Engine {
    /// Runs in flight: those whose inputs changed while they waited, or whose model left the
    /// scene, are cancelled (a changed model restarts with its new inputs in this step); the
    /// others continue for one frame.
    pub(crate) fn advance_in_flight(&mut self) -> Vec<Report> {
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
                Ok(procmodel_script::RunState::Suspended) => {
                    let limit = self.st().config.run_limit;
                    if f.busy > limit {
                        self.host.cancel_generator(f.pending);
                        let failure = GenerationFailure::run_time(f.busy, limit);
                        reports.push(self.fail(m, failure, f.started.elapsed()));
                        continue;
                    }
                    self.st().in_flight.insert(m, f);
                }
                Ok(procmodel_script::RunState::Done(out)) => {
                    let produced = apply::Produced::of_run(out, std::mem::take(&mut f.defaults));
                    reports.push(self.complete(m, &f.prepared, produced, f.started));
                }
                Err(e) => {
                    let failure = GenerationFailure::from(&e);
                    self.note_failed_requires(m);
                    reports.push(self.fail(m, failure, f.started.elapsed()));
                }
            }
        }
        reports
    }

    pub(crate) fn cancel(&mut self, model: Ref) {
        let flight = self.st().in_flight.remove(&model);
        if let Some(f) = flight {
            self.host.cancel_generator(f.pending);
        }
    }

    /// True while a generation of `model` waits for a later frame.
    pub fn is_generating(&self, model: Ref) -> bool {
        self.st().in_flight.contains_key(&model)
    }
}
