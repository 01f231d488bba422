//! The frame loop: a step finds the dirty models (input fingerprints, `Dirty`,
//! `ForceGeneration`), then generates them top-down, pass by pass for models nested in new
//! results, on the scene's VM or in parallel.
//!
//! Owns: the order of a step and what counts as dirty. Must never: apply results or write
//! reports itself (that is `conclude.rs`), or run a generator outside a step.

use crate::report::{GenerationFailure, Report};
use crate::{Engine, InFlight, apply, terrain};
use rbx_types::Ref;
use std::collections::HashSet;
use std::time::{Duration, Instant};

impl Engine {
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
        {
            let mut st = self.st();
            st.steps += 1;
            st.step = Some(st.steps);
        }
        for forced in self.host.take_forced() {
            self.host
                .with_dom_mut(|dom| apply::set_dirty(dom, forced, true));
        }
        // Module code a script replaced: it and what required it are required afresh (the
        // host already flagged the models that use it).
        let code = self.host.take_code_changes();
        if let Err(e) = self.replace_code(&code) {
            self.host
                .warn(format!("cannot reload changed module code: {e}"));
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
        // Pass 0 looks at the whole scene; a later pass only at the ProceduralModels found
        // in the results the pass before applied (no second walk of the results). A model
        // whose inputs a generator changed after it ran in this step is found dirty by the
        // next step's pass 0, as any input change between steps is.
        let mut scope: Option<Vec<Ref>> = None;
        for pass in 0..=max_depth {
            let mut dirty = self.collect_dirty(scope.as_deref());
            dirty.retain(|m| !self.is_generating(*m));
            if dirty.is_empty() {
                break;
            }
            self.st().found_nested.clear();
            if jobs > 1 && dirty.len() > 1 && pass < max_depth {
                reports.extend(self.generate_parallel(&dirty, jobs, max_depth));
            } else {
                for model in dirty {
                    let depth = self.host.with_dom_ref(|d| apply::nesting_depth(d, model));
                    if depth > max_depth || pass == max_depth {
                        let failure = GenerationFailure::Nesting {
                            depth,
                            limit: max_depth,
                        };
                        reports.push(self.fail(model, failure, Duration::ZERO));
                    } else if let Some(r) = self.begin(model) {
                        reports.push(r);
                    }
                }
            }
            scope = Some(std::mem::take(&mut self.st().found_nested));
        }
        self.rerecord_enclosing();
        self.host.end_frame();
        self.st().step = None;
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
            let failure = GenerationFailure::NotFinished { frames: max_steps };
            all.push(self.fail(m, failure, started.map_or(Duration::ZERO, |s| s.elapsed())));
        }
        all
    }

    /// The dirty models of the whole scene (`None`, pre-order), or of exactly `models`
    /// (those still in the scene, in the order given).
    pub(crate) fn collect_dirty(&mut self, models: Option<&[Ref]>) -> Vec<Ref> {
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
    pub(crate) fn begin(&mut self, model: Ref) -> Option<Report> {
        let started = Instant::now();
        self.st().states.entry(model).or_default().runs += 1;
        let fp = self.fingerprint(model);
        let mut prepared = match self.host.with_dom_ref(|dom| apply::prepare(dom, model)) {
            Ok(p) => p,
            Err(failure) => return Some(self.fail(model, failure, started.elapsed())),
        };
        prepared.inputs.watch_outside = self.watch_outside();
        if let Some(hit) = self.cached(model, &prepared, started) {
            return Some(hit);
        }
        let mut required = std::mem::take(&mut self.st().required);
        let outcome = apply::start(&*self.host, &prepared, &mut required);
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
            Err(failure) => {
                self.note_failed_requires(model);
                Some(self.fail(model, failure, started.elapsed()))
            }
        }
    }
}
