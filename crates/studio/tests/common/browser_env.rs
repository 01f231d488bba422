//! The browser test stack, shared by the studio's end-to-end test and the gallery
//! (`crates/cli/tests/gallery.rs` includes this file): Debian's chromium driven by the pinned
//! playwright-core in `crates/studio/tests/browser/`, never a downloaded browser.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The node project with playwright-core and the page scripts (`crates/studio/tests/browser`;
/// both including crates sit beside `studio` under `crates/`).
pub fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../studio/tests/browser")
}

/// Why the browser cannot run here, if it cannot.
pub fn missing() -> Option<String> {
    if !Path::new(CHROMIUM).exists() {
        return Some(format!(
            "{CHROMIUM} is missing (apt-get install -y --no-install-recommends chromium)"
        ));
    }
    if !browser_dir().join("node_modules/playwright-core").exists() {
        return Some(
            "playwright-core is not installed (npm ci --prefix crates/studio/tests/browser)".into(),
        );
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("node is not installed".into());
    }
    None
}
