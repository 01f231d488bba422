//! Undo/redo waypoints. A waypoint records the properties of the instances an input change
//! touched; the regeneration that change causes joins it (the most recent change of that
//! model wins), and the replaced results are kept — moved, not copied, so references into
//! them stay valid — so undo restores previous inputs *and* results without running the
//! generator.

use crate::apply::results_folder;
use procmodel_luau::Host;
use rbx_dom_weak::{InstanceBuilder, UstrMap, WeakDom};
use rbx_types::{Ref, Variant};

/// A results folder held outside the scene.
struct Held {
    dom: WeakDom,
    folder: Ref,
}

impl Held {
    /// Moves the orphan `folder` out of `scene`.
    fn take(scene: &mut WeakDom, folder: Ref) -> Held {
        let mut dom = WeakDom::new(InstanceBuilder::new("Folder"));
        let root = dom.root_ref();
        scene.transfer(folder, &mut dom, root);
        Held { dom, folder }
    }

    /// Moves the folder back under `parent` in `scene`.
    fn restore(mut self, scene: &mut WeakDom, parent: Ref) {
        self.dom.transfer(self.folder, scene, parent);
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

    pub fn push(&mut self, name: &str, pending: Pending) {
        self.undo.push(Waypoint {
            name: name.to_owned(),
            entries: pending.0,
        });
        self.redo.clear();
        if self.undo.len() > MAX_WAYPOINTS {
            // The oldest step (and the results it holds) is forgotten.
            self.undo.remove(0);
        }
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
            _ => dom.destroy(old),
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
