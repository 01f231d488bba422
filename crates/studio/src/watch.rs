//! Hot reload: watches the folders of the generator files (not the files: editors that save
//! by writing a new file and renaming it over the old one end a watch on the file itself),
//! debounced, and re-reads a changed generator into its ModuleScript's Source.

use crate::server::{self, App};
use crate::session::Opened;
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Editors write in bursts (temp file, rename, attributes); one reload per burst.
const DEBOUNCE: Duration = Duration::from_millis(60);

pub(crate) type Watcher = Debouncer<RecommendedWatcher, RecommendedCache>;

/// Starts watching; `None` when there is nothing to watch or the platform refuses (the
/// studio works without hot reload then, and says so on stderr).
pub(crate) fn start(app: Arc<App>, opened: &Opened) -> Option<Watcher> {
    let sources = opened.sources.clone();
    if sources.is_empty() {
        return None;
    }
    let mut dirs: Vec<PathBuf> = sources
        .iter()
        .filter_map(|(p, _)| p.parent().map(|d| d.to_path_buf()))
        .collect();
    dirs.sort();
    dirs.dedup();
    let watched = sources.clone();
    let handler = move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        for (path, module) in &watched {
            let touched = events.iter().any(|e| {
                e.paths
                    .iter()
                    .any(|p| p.file_name() == path.file_name() && p.parent() == path.parent())
            });
            if touched && path.exists() {
                server::reload(&app, path.clone(), *module);
            }
        }
    };
    let mut debouncer = match new_debouncer(DEBOUNCE, None, handler) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("procmodel studio: hot reload is off: {e}");
            return None;
        }
    };
    for dir in &dirs {
        if let Err(e) = debouncer.watch(dir, RecursiveMode::NonRecursive) {
            eprintln!(
                "procmodel studio: hot reload is off for {}: {e}",
                dir.display()
            );
        }
    }
    Some(debouncer)
}
