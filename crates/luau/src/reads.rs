//! What a watched generator run read of the scene, noted as it happens and named at its end
//! (`procmodel_script::SceneRead`), so a result cache can key the run by what it saw as well
//! as by its inputs.
//!
//! Owns: the notes and turning them into paths and digests. Must never: decide what counts
//! as a read (that is `Ctx::note_read` and its kin).

use procmodel_dom::reads::{path_of, read_digest};
use procmodel_script::SceneRead;
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use rustc_hash::{FxHashMap, FxHashSet};

/// One read as it was noted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Note {
    /// An instance used (a template cloned, a value read, a folder listed): its subtree.
    Tree(Ref),
    /// A path's own state read (a service's property, a Folder's attribute).
    Own(Ref),
    /// A child looked for by name from an instance (`FindFirstChild(name)`,
    /// `WaitForChild(name)`), found or not: the subtree of its first child so named.
    Child(Ref, String),
}

/// Reads a run may name before the cache gives up on it (the notes of a run that walks a
/// whole world of instances would cost more to check than the run).
const MAX_READS: usize = 4096;

/// Sibling comparisons naming the reads may cost ([`path_of`]).
const PATH_BUDGET: usize = 1 << 20;

/// A run's reads so far.
#[derive(Debug, Default)]
pub struct ReadNotes {
    /// Whether reads are noted (a run from start to end on one VM, nothing else changing
    /// the scene meanwhile); otherwise any read makes the run one that cannot be named.
    pub collect: bool,
    notes: Vec<Note>,
    seen: FxHashSet<Note>,
}

impl ReadNotes {
    /// Starts a run's notes; `collect` as [`ReadNotes::collect`].
    pub fn start(&mut self, collect: bool) {
        self.collect = collect;
        self.notes.clear();
        self.seen.clear();
    }

    /// Whether nothing was noted.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    /// Notes `note`; false when reads are not collected (the caller counts the run as one
    /// whose reads cannot be named) or there are too many to name.
    pub fn note(&mut self, note: Note) -> bool {
        if !self.collect {
            return false;
        }
        if self.seen.insert(note.clone()) {
            self.notes.push(note);
        }
        self.notes.len() <= MAX_READS
    }

    /// The reads named, each with the digest of what `dom` holds there, sorted by path and
    /// without those another read covers (a part of a template whose whole subtree is
    /// read); None when one of them cannot be named (not in the scene, hidden by a
    /// namesake earlier among its siblings, or too many). Empties the notes.
    pub fn settle(&mut self, dom: &WeakDom) -> Option<Vec<SceneRead>> {
        let notes = std::mem::take(&mut self.notes);
        self.seen.clear();
        if notes.len() > MAX_READS {
            return None;
        }
        let trees: FxHashSet<Ref> = notes
            .iter()
            .filter_map(|n| match n {
                Note::Tree(r) => Some(*r),
                _ => None,
            })
            .collect();
        // Whether a Tree read covers `r` (itself when `including`, else an ancestor).
        let covered = |r: Ref, including: bool| {
            let mut cur = if including {
                r
            } else {
                dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent())
            };
            while cur.is_some() {
                if trees.contains(&cur) {
                    return true;
                }
                cur = dom.get_by_ref(cur).map_or(Ref::none(), |i| i.parent());
            }
            false
        };
        let mut budget = PATH_BUDGET;
        let mut reads = Vec::new();
        for note in notes {
            let (path, own) = match note {
                Note::Tree(r) if covered(r, false) => continue,
                Note::Own(r) | Note::Child(r, _) if covered(r, true) => continue,
                Note::Tree(r) => (path_of(dom, r, &mut budget)?, false),
                Note::Own(r) => (path_of(dom, r, &mut budget)?, true),
                Note::Child(r, name) => {
                    let mut path = path_of(dom, r, &mut budget)?;
                    path.push(name);
                    (path, false)
                }
            };
            let digest = read_digest(dom, &path, own);
            reads.push(SceneRead { path, own, digest });
        }
        reads.sort();
        reads.dedup();
        Some(reads)
    }
}

/// What modules' code read of the scene while it loaded. A module's value is made once and
/// kept, so every generation that requires it depends on what its code saw then, with the
/// digests of then (a later change of what it read does not change the value until the
/// module loads again).
#[derive(Debug, Default)]
pub struct LoadReads {
    /// Modules loading now, innermost last: the reads their code made, and whether one could
    /// not be named.
    stack: Vec<(Ref, ReadNotes, bool)>,
    /// What each module's code read when it last loaded; None: something it could not name.
    done: FxHashMap<Ref, Option<Vec<SceneRead>>>,
}

impl LoadReads {
    /// `module`'s code starts loading.
    pub fn start(&mut self, module: Ref) {
        let mut notes = ReadNotes::default();
        notes.start(true);
        self.stack.push((module, notes, false));
    }

    /// Notes a read by the module loading innermost (None: one it cannot name).
    pub fn note(&mut self, note: Option<Note>) {
        if let Some((_, notes, unnamed)) = self.stack.last_mut()
            && !note.is_some_and(|n| notes.note(n))
        {
            *unnamed = true;
        }
    }

    /// `module`'s code ended loading (or failed): what it read is named with what `dom`
    /// holds there now. Returns whether another module is still loading.
    pub fn end(&mut self, module: Ref, dom: &WeakDom) -> bool {
        if let Some(at) = self.stack.iter().rposition(|(m, ..)| *m == module) {
            let (_, mut notes, unnamed) = self.stack.remove(at);
            let reads = if unnamed { None } else { notes.settle(dom) };
            self.done.insert(module, reads);
        }
        !self.stack.is_empty()
    }

    /// Forgets what `module` read (its code is to load again).
    pub fn forget(&mut self, module: Ref) {
        self.done.remove(&module);
    }

    /// What a run read: its `notes`, named with what `dom` holds there, and what its
    /// generator `module` and the modules it `requires` read when they loaded; None when
    /// one of them cannot be named.
    pub fn of_run(
        &self,
        notes: &mut ReadNotes,
        dom: &WeakDom,
        module: Ref,
        requires: &[Ref],
    ) -> Option<Vec<SceneRead>> {
        let reads = notes.settle(dom)?;
        self.with_modules(
            reads,
            std::iter::once(module).chain(requires.iter().copied()),
        )
    }

    /// `reads` with what `modules` read when they loaded, sorted, each once; None when one
    /// of them read something it could not name.
    fn with_modules(
        &self,
        mut reads: Vec<SceneRead>,
        modules: impl IntoIterator<Item = Ref>,
    ) -> Option<Vec<SceneRead>> {
        let mut added = false;
        for m in modules {
            match self.done.get(&m) {
                Some(None) => return None,
                Some(Some(list)) if !list.is_empty() => {
                    reads.extend(list.iter().cloned());
                    added = true;
                }
                _ => {}
            }
        }
        if added {
            reads.sort();
            reads.dedup();
        }
        Some(reads)
    }
}
