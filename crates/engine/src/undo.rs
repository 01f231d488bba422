//! Undo/redo waypoints. A waypoint records the properties of the instances an input change
//! touched; the regeneration that change causes joins it (the most recent change of that
//! model wins), and the replaced results are kept — moved, not copied, so references into
//! them stay valid — so undo restores previous inputs *and* results without running the
//! generator.

use crate::Host;
use crate::apply::results_folder;
use rbx_dom_weak::{UstrMap, WeakDom};
use rbx_types::{Ref, Variant};
use std::collections::HashMap;

/// A results folder held outside the scene: an orphan (Parent nil) in the scene's own DOM,
/// so references scripts hold into it keep answering reads, and undo brings back the very
/// same instances.
struct Held {
    folder: Ref,
}

impl Held {
    /// Detaches `folder` from the scene (it stays in the DOM as an orphan).
    fn take(scene: &mut WeakDom, folder: Ref) -> Held {
        if scene
            .get_by_ref(folder)
            .is_some_and(|i| i.parent().is_some())
        {
            scene.transfer_within(folder, Ref::none());
        }
        Held { folder }
    }

    /// Moves the folder back under `parent`.
    fn restore(self, scene: &mut WeakDom, parent: Ref) {
        if scene.get_by_ref(self.folder).is_some() {
            scene.transfer_within(self.folder, parent);
        }
    }
}

struct Entry {
    inst: Ref,
    before: UstrMap<Variant>,
    before_results: Option<Held>,
    after: Option<UstrMap<Variant>>,
    after_results: Option<Held>,
}

pub(crate) struct Pending(Vec<Entry>);

struct Waypoint {
    #[allow(dead_code)]
    name: String,
    entries: Vec<Entry>,
}

#[derive(Default)]
pub(crate) struct History {
    undo: Vec<Waypoint>,
    redo: Vec<Waypoint>,
    /// Per model, the results its last regeneration replaced when no undo step keeps them:
    /// destroyed as Roblox destroys them, but still readable through the references
    /// scripts hold, until the model's next regeneration replaces them in turn (a lookup
    /// table only; never iterated).
    replaced: HashMap<Ref, Ref>,
    /// Folders retired since the last [`History::take_destroyed`] (to mark destroyed in the
    /// host) and folders now gone from the DOM (to forget).
    destroyed: Vec<Ref>,
    gone: Vec<Ref>,
    /// An open gesture (a drag in an editor): `Some(true)` once its first change pushed the
    /// waypoint that its later changes join.
    gesture: Option<bool>,
}

impl Waypoint {
    /// Frees the results this step held (it is being forgotten).
    fn release(self, dom: &mut WeakDom) {
        for e in self.entries {
            for held in [e.before_results, e.after_results].into_iter().flatten() {
                if dom.get_by_ref(held.folder).is_some() {
                    dom.destroy(held.folder);
                }
            }
        }
    }
}

/// Undo depth, as in Studio's history: older steps are dropped.
const MAX_WAYPOINTS: usize = 256;

fn props(dom: &WeakDom, r: Ref) -> UstrMap<Variant> {
    dom.get_by_ref(r)
        .map(|i| i.properties.clone())
        .unwrap_or_default()
}

impl History {
    /// Records the current properties of `refs` (call before changing them).
    pub fn snapshot_all(&self, host: &Host, refs: &[Ref]) -> Pending {
        Pending(host.with_dom_ref(|dom| {
            refs.iter()
                .map(|&r| Entry {
                    inst: r,
                    before: props(dom, r),
                    before_results: None,
                    after: None,
                    after_results: None,
                })
                .collect()
        }))
    }

    /// Starts a gesture: the changes until [`History::end_gesture`] make one undo step. An
    /// open gesture is ended first.
    pub fn begin_gesture(&mut self) {
        self.gesture = Some(false);
    }

    /// Ends the open gesture, if any.
    pub fn end_gesture(&mut self) {
        self.gesture = None;
    }

    pub fn push(&mut self, host: &Host, name: &str, pending: Pending) {
        if self.gesture == Some(true)
            && let Some(top) = self.undo.last_mut()
        {
            // A later change of the gesture: its instances' states before the gesture are
            // already recorded; the change reopens them, so the regeneration it causes
            // becomes the step's new "after" (the results in between are destroyed).
            for e in pending.0 {
                match top.entries.iter_mut().find(|x| x.inst == e.inst) {
                    Some(x) => x.after = None,
                    None => top.entries.push(e),
                }
            }
            return;
        }
        if self.gesture.is_some() {
            self.gesture = Some(true);
        }
        self.undo.push(Waypoint {
            name: name.to_owned(),
            entries: pending.0,
        });
        let mut dropped: Vec<Waypoint> = self.redo.drain(..).collect();
        if self.undo.len() > MAX_WAYPOINTS {
            // The oldest step (and the results it holds) is forgotten.
            dropped.push(self.undo.remove(0));
        }
        if !dropped.is_empty() {
            host.with_dom_mut(|dom| {
                for wp in dropped {
                    wp.release(dom);
                }
            });
        }
    }

    /// The folders retired since the last call (to mark destroyed) and the ones freed (to
    /// forget).
    pub fn take_destroyed(&mut self) -> (Vec<Ref>, Vec<Ref>) {
        (
            std::mem::take(&mut self.destroyed),
            std::mem::take(&mut self.gone),
        )
    }

    /// The newest entry for `model`, if its change has not been regenerated yet.
    fn open_entry(&mut self, model: Ref) -> Option<&mut Entry> {
        let wp = self
            .undo
            .iter_mut()
            .rev()
            .find(|w| w.entries.iter().any(|e| e.inst == model))?;
        wp.entries
            .iter_mut()
            .find(|e| e.inst == model && e.after.is_none())
    }

    /// Old results of `model` being replaced by a regeneration: kept with the change that
    /// caused it, or destroyed when no change is waiting for them.
    pub fn retire(&mut self, dom: &mut WeakDom, model: Ref, old: Ref) {
        match self.open_entry(model) {
            Some(e) if e.before_results.is_none() => e.before_results = Some(Held::take(dom, old)),
            _ => {
                Held::take(dom, old);
                self.destroyed.push(old);
                if let Some(previous) = self.replaced.insert(model, old)
                    && dom.get_by_ref(previous).is_some()
                {
                    dom.destroy(previous);
                    self.gone.push(previous);
                }
            }
        }
    }

    /// The regeneration of `model` finished: its results join the most recent change.
    pub fn attach_results(&mut self, host: &Host, model: Ref) {
        let now = host.with_dom_ref(|dom| props(dom, model));
        if let Some(e) = self.open_entry(model) {
            e.after = Some(now);
        }
    }

    /// Restores the inputs and results before the last change. Returns the touched instances.
    pub fn undo(&mut self, host: &Host) -> Option<Vec<Ref>> {
        self.gesture = None;
        let mut wp = self.undo.pop()?;
        host.with_dom_mut(|dom| {
            for e in wp.entries.iter_mut().rev() {
                if e.after.is_none() {
                    e.after = Some(props(dom, e.inst));
                }
                if let Some(held) = e.before_results.take() {
                    if let Some(live) = results_folder(dom, e.inst) {
                        dom.transfer_within(live, Ref::none());
                        e.after_results = Some(Held::take(dom, live));
                    }
                    held.restore(dom, e.inst);
                }
                if let Some(i) = dom.get_by_ref_mut(e.inst) {
                    i.properties = e.before.clone();
                }
            }
        });
        let touched = wp.entries.iter().map(|e| e.inst).collect();
        self.redo.push(wp);
        Some(touched)
    }

    /// Re-applies the last undone change (inputs and results).
    pub fn redo(&mut self, host: &Host) -> Option<Vec<Ref>> {
        self.gesture = None;
        let mut wp = self.redo.pop()?;
        host.with_dom_mut(|dom| {
            for e in wp.entries.iter_mut() {
                if let Some(held) = e.after_results.take() {
                    if let Some(live) = results_folder(dom, e.inst) {
                        dom.transfer_within(live, Ref::none());
                        e.before_results = Some(Held::take(dom, live));
                    }
                    held.restore(dom, e.inst);
                }
                if let (Some(after), Some(i)) = (&e.after, dom.get_by_ref_mut(e.inst)) {
                    i.properties = after.clone();
                }
            }
        });
        let touched = wp.entries.iter().map(|e| e.inst).collect();
        self.undo.push(wp);
        Some(touched)
    }
}
