//! Undo/redo waypoints. A waypoint records the properties of the instances an input change
//! touched; the regeneration that change causes joins it (the most recent change of that
//! model wins), and the replaced results are kept — moved, not copied, so references into
//! them stay valid — so undo restores previous inputs *and* results without running the
//! generator. The results kept are bounded by an instance budget: past it the oldest steps'
//! are freed, and undoing those marks the model dirty, to be generated again.

use crate::Host;
use crate::apply::results_folder;
use crate::cache::Placed;
use rbx_dom_weak::{UstrMap, WeakDom};
use rbx_types::{Ref, Variant};
use std::collections::HashMap;

/// A results folder held outside the scene: an orphan (Parent nil) in the scene's own DOM,
/// so references scripts hold into it keep answering reads, and undo brings back the very
/// same instances.
///
/// With a result cache, a held folder whose results were intact when they were replaced
/// keeps their record ([`Placed`]: the cache key of their inputs). A regeneration to those
/// inputs again (an attribute toggled back) takes the folder instead of decoding a cache
/// entry ([`History::take_held`]); its slot then keeps only the record, and restoring that
/// slot takes the folder back from wherever it is held by then, or regenerates.
struct Held {
    /// None once the folder was taken by a regeneration or freed (the history's budget).
    folder: Option<Ref>,
    record: Option<Placed>,
    /// Instances in the folder, itself included (0 once it is gone from this slot).
    instances: usize,
}

impl Held {
    /// Detaches `folder` from the scene (it stays in the DOM as an orphan). `record`: the
    /// results' record, when it describes this very folder.
    fn take(scene: &mut WeakDom, folder: Ref, record: Option<Placed>) -> Held {
        detach(scene, folder);
        let record = record.filter(|r| r.folder == folder);
        let instances = match &record {
            Some(r) => r.instances + 1,
            None => procmodel_dom::count_subtree(scene, folder),
        };
        Held {
            folder: Some(folder),
            record,
            instances,
        }
    }

    /// Empties the slot (the folder was taken or freed); its record stays. Returns the
    /// instances it held.
    fn vacate(&mut self) -> usize {
        self.folder = None;
        std::mem::take(&mut self.instances)
    }

    /// Destroys the folder this slot holds, if any. Returns the instances it held.
    fn free(&mut self, dom: &mut WeakDom) -> usize {
        if let Some(folder) = self.folder
            && dom.get_by_ref(folder).is_some()
        {
            dom.destroy(folder);
        }
        self.vacate()
    }

    /// Whether this slot holds the intact results `key` names (no Luau write since they
    /// were placed, `writes` being the host's count now, and no voxels to merge again).
    fn intact(&self, scene: &WeakDom, key: &[u8; 32], writes: u64) -> bool {
        match (self.folder, &self.record) {
            (Some(folder), Some(record)) => {
                record.key == *key
                    && record.writes == writes
                    && scene.get_by_ref(folder).is_some()
                    && crate::terrain::generated_region(scene, folder).is_none()
            }
            _ => false,
        }
    }
}

/// Takes `folder` out of the scene (it stays in the DOM as an orphan).
fn detach(scene: &mut WeakDom, folder: Ref) {
    if scene
        .get_by_ref(folder)
        .is_some_and(|i| i.parent().is_some())
    {
        scene.transfer_within(folder, Ref::none());
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

/// What an undo or redo did: the instances it touched, and the records of the results it
/// brought back (they are in place again, and still intact if no write came since).
pub(crate) struct Restored {
    pub touched: Vec<Ref>,
    pub records: Vec<(Ref, Placed)>,
}

struct Waypoint {
    #[allow(dead_code)]
    name: String,
    entries: Vec<Entry>,
}

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
    /// Models that may have held results with a record (a superset): [`History::take_held`]
    /// looks through the steps only for these.
    recorded: std::collections::HashSet<Ref>,
    /// Instances in the folders the steps hold, and the most they may hold
    /// ([`crate::EngineConfig::undo_instances`]).
    held_instances: usize,
    budget: usize,
}

impl Waypoint {
    /// Frees the results this step held (it is being forgotten). Returns the instances
    /// they held.
    fn release(self, dom: &mut WeakDom) -> usize {
        let mut freed = 0;
        for e in self.entries {
            for mut held in [e.before_results, e.after_results].into_iter().flatten() {
                freed += held.free(dom);
            }
        }
        freed
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
    /// An empty history that keeps at most `budget` result instances aside.
    pub fn new(budget: usize) -> History {
        History {
            undo: Vec::new(),
            redo: Vec::new(),
            replaced: HashMap::new(),
            destroyed: Vec::new(),
            gone: Vec::new(),
            gesture: None,
            recorded: Default::default(),
            held_instances: 0,
            budget,
        }
    }

    /// Frees the results of the oldest steps (then of the farthest redo steps) until the
    /// history holds no more than its budget. Their slots keep their records: undoing them
    /// finds the results elsewhere in the history, or generates them again.
    fn trim(&mut self, dom: &mut WeakDom) {
        if self.held_instances <= self.budget {
            return;
        }
        let steps = self.undo.iter_mut().chain(self.redo.iter_mut());
        for e in steps.flat_map(|w| w.entries.iter_mut()) {
            for held in [&mut e.before_results, &mut e.after_results]
                .into_iter()
                .flatten()
            {
                if held.folder.is_some() {
                    self.held_instances = self.held_instances.saturating_sub(held.free(dom));
                    if self.held_instances <= self.budget {
                        return;
                    }
                }
            }
        }
    }

    /// Places `folder` (`model`'s results) in the history's keeping, with `record` when it
    /// describes that folder, and counts it.
    fn hold(&mut self, dom: &mut WeakDom, model: Ref, folder: Ref, record: Option<Placed>) -> Held {
        let held = Held::take(dom, folder, record);
        if held.record.is_some() {
            self.recorded.insert(model);
        }
        self.held_instances += held.instances;
        held
    }

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
            let freed: usize =
                host.with_dom_mut(|dom| dropped.into_iter().map(|wp| wp.release(dom)).sum());
            self.held_instances = self.held_instances.saturating_sub(freed);
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
    /// caused it (with `record`, their record when they were intact), or destroyed when no
    /// change is waiting for them.
    pub fn retire(&mut self, dom: &mut WeakDom, model: Ref, old: Ref, record: Option<Placed>) {
        let kept = self
            .open_entry(model)
            .is_some_and(|e| e.before_results.is_none());
        if kept {
            let held = self.hold(dom, model, old, record);
            if let Some(e) = self.open_entry(model) {
                e.before_results = Some(held);
            }
            self.trim(dom);
        } else {
            detach(dom, old);
            self.destroyed.push(old);
            if let Some(previous) = self.replaced.insert(model, old)
                && dom.get_by_ref(previous).is_some()
            {
                dom.destroy(previous);
                self.gone.push(previous);
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

    /// Takes out of the history the results of `model` held for cache key `key`, intact
    /// (`writes`: the host's count of Luau writes now), for a regeneration to those inputs to
    /// use; the slot keeps their record, to find them again when it is restored.
    pub fn take_held(
        &mut self,
        dom: &WeakDom,
        model: Ref,
        key: &[u8; 32],
        writes: u64,
    ) -> Option<Placed> {
        if !self.recorded.contains(&model) {
            return None;
        }
        let steps = self.undo.iter_mut().rev().chain(self.redo.iter_mut().rev());
        for e in steps.flat_map(|w| w.entries.iter_mut()) {
            if e.inst != model {
                continue;
            }
            for held in [&mut e.before_results, &mut e.after_results]
                .into_iter()
                .flatten()
            {
                if held.intact(dom, key, writes) {
                    self.held_instances = self.held_instances.saturating_sub(held.vacate());
                    return held.record;
                }
            }
        }
        None
    }

    /// Forgets the records of every held result: they may have been changed by something
    /// the host does not count (a front end's direct access to the DOM).
    pub fn forget_records(&mut self) {
        self.recorded.clear();
        for e in self
            .undo
            .iter_mut()
            .chain(self.redo.iter_mut())
            .flat_map(|w| w.entries.iter_mut())
        {
            for held in [&mut e.before_results, &mut e.after_results]
                .into_iter()
                .flatten()
            {
                held.record = None;
            }
        }
    }

    /// Puts `held` back under `model`. A slot whose folder a regeneration took finds it
    /// again elsewhere in the history by its record. None when the results are gone, else
    /// their record, if any.
    fn restore(
        &mut self,
        dom: &mut WeakDom,
        model: Ref,
        held: Held,
        writes: Option<u64>,
    ) -> Option<Option<Placed>> {
        let (folder, record) = match held.folder {
            Some(f) => {
                self.held_instances = self.held_instances.saturating_sub(held.instances);
                (f, held.record)
            }
            None => {
                let (record, writes) = held.record.zip(writes)?;
                let found = self.take_held(dom, model, &record.key, writes)?;
                (found.folder, Some(found))
            }
        };
        dom.get_by_ref(folder)?;
        dom.transfer_within(folder, model);
        Some(record)
    }

    /// Swaps the results of one entry: `held` comes back under `model`, the live ones are
    /// returned (with their record from `placed`) for the entry's other side, and the record
    /// of what came back joins `records`. Results that cannot come back leave the model
    /// dirty, to be generated again.
    fn swap(
        &mut self,
        dom: &mut WeakDom,
        model: Ref,
        held: Held,
        placed: &HashMap<Ref, Placed>,
        writes: Option<u64>,
        records: &mut Vec<(Ref, Placed)>,
    ) -> Option<Held> {
        let out = results_folder(dom, model)
            .map(|live| self.hold(dom, model, live, placed.get(&model).copied()));
        match self.restore(dom, model, held, writes) {
            Some(record) => records.extend(record.map(|r| (model, r))),
            None => crate::apply::set_dirty(dom, model, true),
        }
        out
    }

    /// Restores the inputs and results before the last change. Returns the touched
    /// instances and the records of the results brought back. `placed`: the records of the
    /// results in place; `writes`: the host's count of Luau writes now.
    pub fn undo(
        &mut self,
        host: &Host,
        placed: &HashMap<Ref, Placed>,
        writes: Option<u64>,
    ) -> Option<Restored> {
        self.gesture = None;
        let mut wp = self.undo.pop()?;
        let mut records = Vec::new();
        host.with_dom_mut(|dom| {
            for e in wp.entries.iter_mut().rev() {
                if e.after.is_none() {
                    e.after = Some(props(dom, e.inst));
                }
                let held = e.before_results.take();
                // The inputs first: a model whose results cannot come back is marked dirty
                // on top of them.
                if let Some(i) = dom.get_by_ref_mut(e.inst) {
                    i.properties = e.before.clone();
                }
                if let Some(held) = held {
                    e.after_results = self.swap(dom, e.inst, held, placed, writes, &mut records);
                }
            }
        });
        Some(self.arrive(host, wp, false, records))
    }

    /// Re-applies the last undone change (inputs and results).
    pub fn redo(
        &mut self,
        host: &Host,
        placed: &HashMap<Ref, Placed>,
        writes: Option<u64>,
    ) -> Option<Restored> {
        self.gesture = None;
        let mut wp = self.redo.pop()?;
        let mut records = Vec::new();
        host.with_dom_mut(|dom| {
            for e in wp.entries.iter_mut() {
                let held = e.after_results.take();
                if let (Some(after), Some(i)) = (&e.after, dom.get_by_ref_mut(e.inst)) {
                    i.properties = after.clone();
                }
                if let Some(held) = held {
                    e.before_results = self.swap(dom, e.inst, held, placed, writes, &mut records);
                }
            }
        });
        Some(self.arrive(host, wp, true, records))
    }

    /// Files an undone (onto the redo stack) or redone step, and keeps the history within its
    /// budget.
    fn arrive(
        &mut self,
        host: &Host,
        wp: Waypoint,
        redone: bool,
        records: Vec<(Ref, Placed)>,
    ) -> Restored {
        let touched = wp.entries.iter().map(|e| e.inst).collect();
        if redone {
            self.undo.push(wp);
        } else {
            self.redo.push(wp);
        }
        host.with_dom_mut(|dom| self.trim(dom));
        Restored { touched, records }
    }
}
