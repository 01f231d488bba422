//! A saved scene holds the modules its file generators required by path.
//!
//! A generator loaded from a file (`gen.luau`) that string-requires the files beside it
//! (`require("./Shape")`) gets those modules read from disk, outside the scene's tree. A
//! scene saved as it is would hold the generator without them, and `./Shape` would not
//! resolve when the place is regenerated or opened in Studio. [`place`] puts a copy of each
//! such module where its file sits relative to the generator's: a file beside a module is
//! its sibling, a file in the folder named after a module (`gen/Part.luau`, `@self/Part`) its
//! child, a folder in between a `Folder` — where Luau's string requires over the instance
//! tree look for it (`./X` a sibling, `@self/X` a child). The models of such a generator are
//! saved dirty: their results record the modules they required only when those are in the
//! tree, so they regenerate once where the placed modules are. The caller writes the scene
//! and then removes what was placed ([`remove`]), so the live scene is as it was.
//!
//! Owns: the file-to-instance placement. Must never: change an instance that was in the
//! tree before, or place a module that a name already taken would hide.

use crate::apply;
use procmodel_dom::{in_scene, is_a};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{Ref, Variant};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module read from a file: its path (canonical) and the module the VM made of it, when
/// it is in this scene's DOM (a module loaded only on a worker VM is read from the file).
pub(crate) struct FileModule {
    pub path: PathBuf,
    pub module: Option<Ref>,
}

impl FileModule {
    /// The file `path`, which this scene's VM made `module` of.
    pub fn loaded(path: PathBuf, module: Ref) -> Self {
        FileModule {
            path,
            module: Some(module),
        }
    }

    /// The file `path`, read again when placed.
    pub fn unread(path: &Path) -> Self {
        FileModule {
            path: path.to_path_buf(),
            module: None,
        }
    }
}

/// What [`required_by_text`] found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TextRequires {
    /// The files required (canonical, sorted, each once), the starting files left out.
    pub files: Vec<PathBuf>,
    /// The specs that named no file a saved scene could hold: a `.luaurc` alias, a file
    /// that is not there, a path outside the root. Only a run says what those need.
    pub unresolved: Vec<String>,
}

/// The files the module files `start` require by a path their text spells out
/// (`require("./Desert")` in whichever branch a run would take), followed from file to file
/// and resolved as `require` resolves them (confined to `root`); a module folder reached
/// (its `init.luau`) brings all its scripts. What a generator needs around it for inputs
/// other than those it ran with.
pub fn required_by_text(
    runtime: &dyn procmodel_script::ScriptRuntime,
    start: &[PathBuf],
    root: Option<&Path>,
) -> TextRequires {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let seen_start: std::collections::BTreeSet<PathBuf> =
        start.iter().map(|p| canonical(p)).collect();
    let mut found = std::collections::BTreeSet::new();
    let mut unresolved = Vec::new();
    let mut queue: Vec<PathBuf> = seen_start.iter().cloned().collect();
    while let Some(file) = queue.pop() {
        for (spec, target) in runtime.literal_requires(&file, root) {
            let target = match target {
                Ok(t) => canonical(&t),
                Err(_) => {
                    if !unresolved.contains(&spec) {
                        unresolved.push(spec);
                    }
                    continue;
                }
            };
            // A folder's init script is the folder, built with all its scripts.
            let files = match crate::scene::module_folder(&target) {
                Some(dir) => crate::scene::read_module_folder(&dir)
                    .map(|b| b.scripts.iter().map(|(_, f)| canonical(f)).collect())
                    .unwrap_or_else(|_| vec![target]),
                None => vec![target],
            };
            for f in files {
                if !seen_start.contains(&f) && found.insert(f.clone()) {
                    queue.push(f);
                }
            }
        }
    }
    TextRequires {
        files: found.into_iter().collect(),
        unresolved,
    }
}

/// What [`place`] did.
#[derive(Debug, Default)]
pub(crate) struct Placed {
    /// The instances inserted whose parent was in the tree before (remove these).
    pub roots: Vec<Ref>,
    /// Files of a generator's folder that could not be placed (a name already taken).
    pub unplaced: Vec<PathBuf>,
    /// The models whose generator's folder had modules placed, each with its `Dirty` before:
    /// saved dirty, since their results record only the modules in the tree (a module read
    /// from a file is not one), so they regenerate once and record the placed ones.
    pub dirtied: Vec<(Ref, bool)>,
}

fn is_init(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| crate::scene::MODULE_INITS.contains(&n))
}

/// The folder path a module's file stands for (`gen.luau` → `gen`, `Lib/init.luau` → `Lib`)
/// and its name in the tree.
fn stands_for(path: &Path) -> Option<(PathBuf, String)> {
    if is_init(path) {
        let dir = path.parent()?;
        Some((dir.to_path_buf(), dir.file_name()?.to_str()?.to_owned()))
    } else {
        let stem = path.file_stem()?.to_str()?.to_owned();
        Some((path.with_file_name(&stem), stem))
    }
}

/// Places the modules of `files` that are not in the scene's tree next to the file
/// generators that are (the modules ProceduralModels name as their Generator, and a module
/// folder's own modules): only files under such a generator's folder (where its requires
/// are confined) are placed, in path order, so the same files give the same tree.
pub(crate) fn place(dom: &mut WeakDom, files: &[FileModule]) -> Placed {
    let mut placed = Placed::default();
    // (model, its generator)
    let models: Vec<(Ref, Ref)> = apply::models_in_scene(dom)
        .into_iter()
        .filter_map(
            |m| match dom.get_by_ref(m)?.properties.get(&"Generator".into()) {
                Some(Variant::Ref(g)) if g.is_some() => Some((m, *g)),
                _ => None,
            },
        )
        .collect();
    // Each generator once (a sweep's million variants share one; only looked up, never
    // walked in order).
    let generators: std::collections::HashSet<Ref> = models.iter().map(|&(_, g)| g).collect();
    // The generators whose models were marked dirty.
    let mut dirtied_generators: std::collections::HashSet<Ref> = Default::default();
    // A generator's folder (where its requires are confined) and the generator.
    let mut generator_roots: Vec<(PathBuf, Ref)> = Vec::new();
    // Folder path -> the instance that stands for it in the tree.
    let mut anchors: BTreeMap<PathBuf, Ref> = BTreeMap::new();
    // The folders a file generator's requires may reach (its own folder and below).
    let mut roots: Vec<PathBuf> = Vec::new();
    let in_tree = |dom: &WeakDom, r: Ref| dom.get_by_ref(r).is_some() && in_scene(dom, r);
    for f in files {
        let Some(r) = f.module.filter(|&r| in_tree(dom, r)) else {
            continue;
        };
        // A generator, or a module inside a generator's module folder.
        let of_generator = generators
            .iter()
            .any(|&g| g == r || procmodel_dom::is_within(dom, r, g));
        let Some((folder, _)) = stands_for(&f.path).filter(|_| of_generator) else {
            continue;
        };
        anchors.insert(folder.clone(), r);
        if let (Some(up), Some(parent)) = (folder.parent(), dom.get_by_ref(r).map(|i| i.parent())) {
            anchors.entry(up.to_path_buf()).or_insert(parent);
            if generators.contains(&r) {
                roots.push(up.to_path_buf());
                generator_roots.push((up.to_path_buf(), r));
            }
        }
    }
    let mut orphans: Vec<&FileModule> = files
        .iter()
        .filter(|f| !f.module.is_some_and(|r| in_tree(dom, r)))
        .filter(|f| roots.iter().any(|root| f.path.starts_with(root)))
        .collect();
    // One module per file: a file read again (a reload) may leave the earlier module
    // about, and a file whose module is in the tree needs nothing.
    orphans.sort_by(|a, b| a.path.cmp(&b.path));
    orphans.dedup_by(|a, b| a.path == b.path);
    orphans.retain(|f| {
        !files
            .iter()
            .any(|t| t.path == f.path && t.module.is_some_and(|r| in_tree(dom, r)))
    });
    // Module folders are placed whole: their own files come with them.
    let whole: Vec<PathBuf> = orphans
        .iter()
        .filter(|f| is_init(&f.path))
        .filter_map(|f| f.path.parent().map(Path::to_path_buf))
        .collect();
    for f in orphans {
        let inside = |w: &PathBuf| f.path.starts_with(w) && f.path.parent() != Some(w.as_path());
        let own_file = |w: &PathBuf| f.path.parent() == Some(w.as_path()) && !is_init(&f.path);
        if whole.iter().any(|w| inside(w) || own_file(w)) {
            continue;
        }
        let Some((stands, name)) = stands_for(&f.path) else {
            continue;
        };
        let Some(parent) = stands
            .parent()
            .and_then(|folder| mirror(dom, &mut anchors, &mut placed, folder))
        else {
            placed.unplaced.push(f.path.clone());
            continue;
        };
        let taken = dom.get_by_ref(parent).is_some_and(|p| {
            p.children()
                .iter()
                .any(|&c| dom.get_by_ref(c).is_some_and(|i| i.name == name))
        });
        if taken {
            placed.unplaced.push(f.path.clone());
            continue;
        }
        let Some(copy) = copy_of(dom, f) else {
            placed.unplaced.push(f.path.clone());
            continue;
        };
        dom.transfer_within(copy, parent);
        if let Some(i) = dom.get_by_ref_mut(copy) {
            i.name = name;
        }
        placed.roots.push(copy);
        for (root, g) in &generator_roots {
            if !f.path.starts_with(root) || !dirtied_generators.insert(*g) {
                continue;
            }
            for &(m, _) in models.iter().filter(|&&(_, mg)| mg == *g) {
                placed.dirtied.push((m, apply::dirty_flag(dom, m)));
                apply::set_dirty(dom, m, true);
            }
        }
        anchors.insert(stands, copy);
    }
    // Roots under roots placed in this call are removed with them.
    let all = placed.roots.clone();
    placed.roots.retain(|&r| {
        !all.iter()
            .any(|&o| o != r && procmodel_dom::is_within(dom, r, o))
    });
    placed
}

/// The instance standing for `folder`: an anchor, or Folders made below the nearest one.
fn mirror(
    dom: &mut WeakDom,
    anchors: &mut BTreeMap<PathBuf, Ref>,
    placed: &mut Placed,
    folder: &Path,
) -> Option<Ref> {
    let base = folder.ancestors().find(|a| anchors.contains_key(*a))?;
    let mut at = anchors[base];
    let rest = folder.strip_prefix(base).ok()?.to_path_buf();
    let mut path = base.to_path_buf();
    for part in rest.components() {
        let name = part.as_os_str().to_str()?;
        path.push(name);
        let existing = dom.get_by_ref(at)?.children().iter().copied().find(|&c| {
            dom.get_by_ref(c).is_some_and(|i| {
                i.name == name && (is_a(&i.class, "Folder") || is_a(&i.class, "ModuleScript"))
            })
        });
        at = match existing {
            Some(c) => c,
            None => {
                let f = dom.insert(at, InstanceBuilder::new("Folder").with_name(name));
                placed.roots.push(f);
                f
            }
        };
        anchors.insert(path.clone(), at);
    }
    Some(at)
}

/// A parentless copy of the module of `f`: of the one the VM made, or read from its file.
fn copy_of(dom: &mut WeakDom, f: &FileModule) -> Option<Ref> {
    if let Some(r) = f.module.filter(|&r| dom.get_by_ref(r).is_some()) {
        let copy = procmodel_dom::clone_archivable(dom, r);
        dom.transfer_within(copy, Ref::none());
        return Some(copy);
    }
    if is_init(&f.path) {
        let mut built = crate::scene::read_module_folder(f.path.parent()?).ok()?;
        let top = built.top;
        let root = dom.root_ref();
        procmodel_dom::move_into(&mut built.dom, &[top], dom, root);
        dom.transfer_within(top, Ref::none());
        return Some(top);
    }
    let source = std::fs::read_to_string(&f.path).ok()?;
    Some(dom.insert(
        Ref::none(),
        InstanceBuilder::new("ModuleScript").with_property("Source", Variant::String(source)),
    ))
}

/// Removes what [`place`] put into the tree, and gives the models their `Dirty` back.
pub(crate) fn remove(dom: &mut WeakDom, placed: &Placed) {
    for &r in placed.roots.iter().rev() {
        if dom.get_by_ref(r).is_some() {
            dom.destroy(r);
        }
    }
    for &(m, dirty) in &placed.dirtied {
        apply::set_dirty(dom, m, dirty);
    }
}
