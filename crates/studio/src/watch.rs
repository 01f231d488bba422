//! Hot reload: watches the folders of the generator files and of the module files they
//! required (not the files: editors that save by writing a new file and renaming it over
//! the old one end a watch on the file itself), debounced. A changed generator is re-read
//! into its ModuleScript's Source; a changed module file regenerates the models whose
//! generators required it, directly or through other modules.

use crate::server::{self, App};
use crate::session::Opened;
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

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

/// Starts watching; `None` when there is nothing to watch or the platform refuses (the
/// studio works without hot reload then, and says so on stderr). The app is reached
/// weakly: the watcher must not keep the server alive.
pub(crate) fn start(app: Weak<App>, opened: &Opened) -> Option<Arc<Watcher>> {
    let sources = opened.sources.clone();
    if sources.is_empty() {
        return None;
    }
    let handler = move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        let Some(app) = app.upgrade() else { return };
        let mut touched: BTreeSet<PathBuf> = BTreeSet::new();
        // Reads are reported too (inotify's open/close): the reload's own read of the file
        // must not count as a change, or every reload schedules the next.
        for e in events
            .iter()
            .filter(|e| !e.kind.is_access() && !e.kind.is_other())
        {
            touched.extend(e.paths.iter().cloned());
        }
        let same = |a: &Path, b: &Path| a.file_name() == b.file_name() && a.parent() == b.parent();
        let mut others = Vec::new();
        for path in &touched {
            if let Some((file, module)) = sources.iter().find(|(f, _)| same(f, path)) {
                if file.exists() {
                    server::reload(&app, file.clone(), *module);
                }
            } else if is_luau(path) && path.exists() {
                others.push(path.clone());
            }
        }
        for path in others {
            server::reload_required(&app, path);
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
    let files: Vec<PathBuf> = opened.sources.iter().map(|(p, _)| p.clone()).collect();
    watcher.watch_folders_of(&files);
    Some(Arc::new(watcher))
}

fn is_luau(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("luau" | "lua")
    )
}
