//! Hot reload: watches the folders of the generator files and of the module files they
//! required (not the files: editors that save by writing a new file and renaming it over
//! the old one end a watch on the file itself), debounced. A changed generator is re-read
//! into its ModuleScript's Source; a changed module file regenerates the models whose
//! generators required it, directly or through other modules. For a Rojo project or a
//! generator's module folder, a change of its structure — the project file, a meta, model or
//! data file, a script or folder added or removed — reads it again.

use notify_debouncer_full::notify::event::{CreateKind, RemoveKind};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use rbx_types::Ref;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A change the watcher reports, in the order it saw them within one burst.
pub(crate) enum Change {
    /// A generator file changed: re-read it into its ModuleScript.
    Generator(PathBuf, Ref),
    /// Another Luau file changed (a module some generator may have required).
    Required(PathBuf),
    /// The structure of the Rojo project or module folder changed: read it again (reported
    /// alone).
    Structure,
}

/// The script files watched and the scripts read from them; a project read again replaces
/// them.
pub(crate) type Sources = Arc<Mutex<Vec<(PathBuf, Ref)>>>;

/// Every file a Rojo project was built from (scripts, meta, model and data files, the
/// project files); a project read again replaces them.
pub(crate) type Built = Arc<Mutex<Vec<PathBuf>>>;

/// Editors write in bursts (temp file, rename, attributes); one reload per burst.
const DEBOUNCE: Duration = Duration::from_millis(60);

/// The debouncer and the folders it watches (more are added as generators require files
/// from other folders).
pub(crate) struct Watcher {
    inner: Mutex<(
        Debouncer<RecommendedWatcher, RecommendedCache>,
        BTreeSet<PathBuf>,
    )>,
}

impl Watcher {
    /// Watches the folders of `files` not watched yet.
    pub(crate) fn watch_folders_of(&self, files: &[PathBuf]) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (debouncer, dirs) = &mut *g;
        for dir in files.iter().filter_map(|f| f.parent()) {
            if dirs.contains(dir) {
                continue;
            }
            dirs.insert(dir.to_path_buf());
            if let Err(e) = debouncer.watch(dir, RecursiveMode::NonRecursive) {
                eprintln!(
                    "procmodel studio: hot reload is off for {}: {e}",
                    dir.display()
                );
            }
        }
    }
}

/// Starts watching the folders of `sources` (generator files and their ModuleScripts, or a
/// Rojo project's scripts) and of the files a project was built from (`built`) and reports
/// each burst's changes to `on_change`, generators first; with `structured` (a project or a
/// module folder, whose files make its tree), a change of the structure alone. `None` when
/// there is nothing to watch or the platform refuses (the studio works without hot reload
/// then, and says so on stderr).
pub(crate) fn start(
    sources: Sources,
    structured: bool,
    built: Built,
    on_change: impl Fn(Vec<Change>) + Send + 'static,
) -> Option<Arc<Watcher>> {
    let mut files: Vec<PathBuf> = lock(&sources).iter().map(|(p, _)| p.clone()).collect();
    files.extend(lock(&built).iter().cloned());
    if files.is_empty() {
        return None;
    }
    let handler = move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        let mut touched: BTreeSet<PathBuf> = BTreeSet::new();
        let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
        // Reads are reported too (inotify's open/close): the reload's own read of the file
        // must not count as a change, or every reload schedules the next.
        for e in events
            .iter()
            .filter(|e| !e.kind.is_access() && !e.kind.is_other())
        {
            if matches!(
                e.kind,
                EventKind::Create(CreateKind::Folder) | EventKind::Remove(RemoveKind::Folder)
            ) {
                folders.extend(e.paths.iter().cloned());
            }
            touched.extend(e.paths.iter().cloned());
        }
        let sources = lock(&sources).clone();
        let tree = Tree {
            sources: &sources,
            built: &lock(&built).clone(),
        };
        if structured
            && (folders.iter().any(|f| tree.builds_from(f))
                || touched.iter().any(|p| tree.changed_by(p)))
        {
            on_change(vec![Change::Structure]);
            return;
        }
        let mut changes = Vec::new();
        let mut others = Vec::new();
        for path in &touched {
            if let Some((file, module)) = sources.iter().find(|(f, _)| same_file(f, path)) {
                if file.exists() {
                    changes.push(Change::Generator(file.clone(), *module));
                }
            } else if is_luau(path) && path.exists() {
                others.push(Change::Required(path.clone()));
            }
        }
        changes.extend(others);
        if !changes.is_empty() {
            on_change(changes);
        }
    };
    let debouncer = match new_debouncer(DEBOUNCE, None, handler) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("procmodel studio: hot reload is off: {e}");
            return None;
        }
    };
    let watcher = Watcher {
        inner: Mutex::new((debouncer, BTreeSet::new())),
    };
    watcher.watch_folders_of(&files);
    Some(Arc::new(watcher))
}

/// What a project or module folder was built from, to tell which changes of files change
/// its tree.
struct Tree<'a> {
    sources: &'a [(PathBuf, Ref)],
    built: &'a [PathBuf],
}

/// Whether `a` and `b` name one file (the same name in the same folder).
fn same_file(a: &Path, b: &Path) -> bool {
    a.file_name() == b.file_name() && a.parent() == b.parent()
}

impl Tree<'_> {
    fn known(&self, path: &Path) -> bool {
        self.sources.iter().any(|(f, _)| same_file(f, path))
            || self.built.iter().any(|f| same_file(f, path))
    }

    /// Whether something added or removed at `path` is part of the tree: it is in a folder
    /// a script or data file of the tree came from. (A project's own folder, which holds
    /// only project files, is not: `sourcemap.json`, a build script or `node_modules` there
    /// are not part of the tree.)
    fn builds_from(&self, path: &Path) -> bool {
        let dir = path.parent();
        self.sources.iter().any(|(f, _)| f.parent() == dir)
            || self.built.iter().any(|f| {
                f.parent() == dir
                    && !f
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(procmodel_rojo::is_project_file_name)
            })
    }

    /// Whether a change of `path` changes the tree's structure: a file it was built from other
    /// than a script changed or gone (the project file, a meta, model or data file), a script
    /// of it gone, or a file Rojo builds instances from added where the tree comes from.
    /// Editors' temporary and backup files are none of these.
    fn changed_by(&self, path: &Path) -> bool {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let script = matches!(ext.as_str(), "luau" | "lua");
        let data = matches!(
            ext.as_str(),
            "json" | "jsonc" | "toml" | "yaml" | "yml" | "txt" | "csv" | "rbxm" | "rbxmx"
        );
        if !script && !data {
            return false;
        }
        let exists = path.exists();
        if self.known(path) {
            // A script's new text is put back into it; anything else is structure.
            return !script || !exists;
        }
        exists && self.builds_from(path)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_luau(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("luau" | "lua")
    )
}
