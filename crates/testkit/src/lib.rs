//! Test-only support shared by the workspace's test binaries: scratch folders that go away
//! with the test process.
//!
//! Tests write scenes, generators and caches to disk. Each test process gets one root,
//! `<temp>/procmodel-tests-<pid>`, and every [`scratch`] folder lives under it; the root and
//! everything in it is removed when the process exits (pass or fail), so running the suite
//! leaves nothing behind in the system's temporary directory. A process that is killed
//! leaves its root; the next test process of the same id starts from an empty one.
//!
//! This crate is only ever a dev-dependency: it must never be linked into a library or a
//! binary users run, and it holds no test logic of its own.

use std::path::PathBuf;
use std::sync::OnceLock;

static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// The scratch folder `label` of this test process (created, with its parents, if missing).
/// One label is one folder for the whole process: tests that run in parallel use distinct
/// labels, or distinct names inside one.
///
/// # Panics
/// When the folder cannot be created (a test cannot go on without it).
pub fn scratch(label: &str) -> PathBuf {
    let root = ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("procmodel-tests-{}", std::process::id()));
        // A root left by a killed process that had this id.
        let _ = std::fs::remove_dir_all(&root);
        // SAFETY: `remove_root` is an `extern "C"` function taking nothing, valid for the
        // whole life of the process; it catches any panic, so nothing unwinds into libc.
        unsafe {
            libc::atexit(remove_root);
        }
        root
    });
    let dir = root.join(label);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create the scratch folder {}: {e}", dir.display());
    }
    dir
}

/// Run by libc at process exit: removes this process's scratch root.
extern "C" fn remove_root() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(root) = ROOT.get() {
            let _ = std::fs::remove_dir_all(root);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_folders_live_under_one_root_per_process() {
        let a = scratch("a");
        let b = scratch("b/c");
        assert!(a.is_dir() && b.is_dir());
        assert_eq!(a.parent(), b.parent().and_then(|p| p.parent()));
        assert!(
            a.parent()
                .unwrap()
                .ends_with(format!("procmodel-tests-{}", std::process::id()))
        );
        // The same label is the same folder.
        assert_eq!(scratch("a"), a);
    }

    #[test]
    fn the_root_is_removed_when_the_process_exits() {
        // A child process (this test binary, running only the marker test) makes a scratch
        // folder and exits; its root must be gone afterwards.
        if std::env::var_os("PROCMODEL_TESTKIT_CHILD").is_some() {
            let d = scratch("child");
            std::fs::write(d.join("f"), b"x").unwrap();
            println!("ROOT={}", d.parent().unwrap().display());
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::the_root_is_removed_when_the_process_exits",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("PROCMODEL_TESTKIT_CHILD", "1")
            .output()
            .unwrap();
        assert!(out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let root = stdout
            .lines()
            .find_map(|l| l.split_once("ROOT=").map(|(_, root)| root))
            .expect("the child printed its root");
        assert!(root.contains("procmodel-tests-"));
        assert!(
            !std::path::Path::new(root).exists(),
            "{root} outlived its process"
        );
    }
}
