//! The end of a run: its results applied to the scene (placed, checked, swapped in, voxels
//! merged) or the error placeholder put in their place, then the report made and the run
//! recorded (inputs, provenance, undo).
//!
//! Owns: applying results and failing. Must never: decide what runs (that is the frame loop).

use crate::report::{GenerationFailure, Report};
use crate::{Engine, apply, locate, terrain};
use rbx_types::Ref;
use std::time::{Duration, Instant};

impl Engine {
    /// Applies a finished run's results to the scene and reports.
    pub(crate) fn complete(
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
    pub(crate) fn apply_results(
        &mut self,
        model: Ref,
        prepared: &apply::Prepared,
        produced: apply::Produced,
        held: Option<rbx_dom_weak::WeakDom>,
    ) -> Result<usize, GenerationFailure> {
        if produced.touched_outside {
            // A hit would give these results without the run's changes to the scene.
            self.st().cache_keys.remove(&model);
        }
        let state = self.state.clone();
        self.st().created.insert(model, produced.created);
        let mut produced = produced;
        match produced.requires.take() {
            Some(r) => self.st().run_requires.insert(model, r),
            None => self.st().run_requires.remove(&model),
        };
        let reads = std::mem::take(&mut produced.reads);
        self.st().run_reads.insert(model, reads);
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
                return Err(GenerationFailure::Terrain(e));
            }
            let mut nested = Vec::new();
            let applied = apply::apply_output(
                dom,
                model,
                prepared,
                produced,
                &mut |dom, old| retire(&state, dom, model, old),
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
    pub(crate) fn mark_retired(&mut self) {
        let (destroyed, gone) = self.st().undo.take_destroyed();
        if !destroyed.is_empty() || !gone.is_empty() {
            self.host.mark_destroyed(&destroyed, &gone);
        }
    }

    /// The report of a finished run: results applied, or the error placeholder.
    pub(crate) fn conclude(
        &mut self,
        model: Ref,
        outcome: Result<usize, GenerationFailure>,
        elapsed: Duration,
    ) -> Report {
        match outcome {
            Ok(n) => self.finish(model, Ok(n), elapsed),
            Err(failure) => self.fail(model, failure, elapsed),
        }
    }

    /// Keeps what `model`'s run that just failed on the scene's VM depended on, for its
    /// provenance (`ProcmodelModules` on the error placeholder).
    pub(crate) fn note_failed_requires(&mut self, model: Ref) {
        if let Some(r) = self.host.take_failed_requires() {
            self.st().run_requires.insert(model, r);
        }
    }

    pub(crate) fn fail(
        &mut self,
        model: Ref,
        failure: GenerationFailure,
        elapsed: Duration,
    ) -> Report {
        let failure = {
            let st = self.st();
            self.host
                .with_dom_ref(|dom| locate::name_files(dom, &st.script_files, failure))
        };
        let message = failure.to_string();
        let state = self.state.clone();
        self.host.with_dom_mut(|dom| {
            apply::place_error(dom, model, &message, &mut |dom, old| {
                retire(&state, dom, model, old)
            })
        });
        self.mark_retired();
        self.finish(model, Err(failure), elapsed)
    }

    /// Records a finished run (results applied or placeholder placed): the inputs it was made
    /// from (fingerprinted after applying — filling in default attributes is not a change) and
    /// the results joining the undo step that caused the run.
    pub(crate) fn finish(
        &mut self,
        model: Ref,
        outcome: Result<usize, GenerationFailure>,
        elapsed: Duration,
    ) -> Report {
        // The old results' voxels give way to the new ones' (or to what was under them).
        let outcome = match (
            self.sync_terrain(terrain::Discover::Models(&[model])),
            outcome,
        ) {
            (Some(e), Ok(_)) => Err(GenerationFailure::Terrain(e)),
            (_, outcome) => outcome,
        };
        self.forget_enclosing(model);
        let cached = outcome.is_ok() && {
            let st = self.st();
            st.from_cache.contains(&model)
                || st.kept.contains(&model)
                || st.reused.contains_key(&model)
        };
        let created = self.st().created.remove(&model).unwrap_or(0);
        if created > 0 && matches!(outcome, Ok(0)) {
            // Empty results of a run that made instances are a mistake the report warns
            // about (`Report::warning`); a hit would hide it, so they are not cached.
            self.st().cache_keys.remove(&model);
        }
        self.record_and_fill(model, outcome.as_ref().ok().copied());
        let fp = self.fingerprint(model);
        self.st().states.entry(model).or_default().applied = Some(fp);
        let host = self.host.clone();
        self.st().undo.attach_results(&*host, model);
        let (outcome, instances) = match outcome {
            Ok(n) => (Ok(()), n),
            Err(e) => (Err(e), 1),
        };
        let report = Report {
            model,
            path: self.host.with_dom_ref(|d| apply::full_name(d, model)),
            outcome,
            elapsed,
            instances,
            cached,
            created,
        };
        // Take the callback out while it runs, so it may not re-enter the engine state.
        let callback = self.st().on_report.take();
        if let Some(mut f) = callback {
            f(&report);
            self.st().on_report = Some(f);
        }
        report
    }

    /// Brings the scene's Terrain in line with the results now in the scene (see
    /// `terrain.rs`): a model whose voxels cannot come back because another model owns one
    /// of their cells is marked dirty, so its next generation reports the overlap. Returns
    /// the error when the scene's Terrain cannot be read.
    pub(crate) fn sync_terrain(&mut self, discover: terrain::Discover) -> Option<String> {
        let idle = {
            let st = self.st();
            // Nothing merged, and nothing that could be: no scene walk at all.
            let none = st.terrain.is_empty()
                && (matches!(discover, terrain::Discover::Nothing)
                    || !self.host.may_have_managed());
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
}

/// Hands `model`'s replaced results `old` to the undo history, with their record when they
/// were intact (a change of the model's inputs moved it to `superseded`).
fn retire(
    state: &std::rc::Rc<std::cell::RefCell<crate::EngineState>>,
    dom: &mut rbx_dom_weak::WeakDom,
    model: Ref,
    old: Ref,
) {
    let mut st = state.borrow_mut();
    let record = st
        .superseded
        .remove(&model)
        .or_else(|| st.placed.get(&model).copied());
    st.undo.retire(dom, model, old, record);
}
