//! End-to-end tests in real headless chromium (Debian's package) driven by playwright-core
//! (`tests/browser/e2e.mjs`): WebGL renderer and drawn pixels, attribute edits, undo, bad
//! messages, two pages, hot reload by rename, a failing generator over its ghost, cancel,
//! latency figures (`<target>/studio-e2e/latency.json`), save and reopen, a place's terrain. Without chromium
//! or the npm package the test fails when `CI` is set and is skipped (saying why) otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::browser_env::{CHROMIUM, browser_dir, missing};

fn out_dir() -> PathBuf {
    // <target>/tmp → <target>/studio-e2e
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|t| t.join("studio-e2e"))
        .unwrap_or_else(|| PathBuf::from("target/studio-e2e"))
}

fn node(phase: &str, url: &str, file: &Path, extra: &[(&str, String)]) {
    let mut cmd = Command::new("node");
    cmd.arg(browser_dir().join("e2e.mjs"))
        .current_dir(browser_dir())
        .env("STUDIO_URL", url)
        .env("STUDIO_FILE", file)
        .env("OUT_DIR", out_dir())
        .env("PHASE", phase)
        .env("CHROMIUM", CHROMIUM);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("node runs");
    assert!(
        status.success(),
        "the browser test ({phase}) failed: {status}"
    );
}

#[test]
fn r13_browser_end_to_end() {
    if let Some(why) = missing() {
        if std::env::var_os("CI").is_some() {
            panic!("the browser test cannot run: {why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    let (dir, file) = common::fixture("e2e");
    let studio = common::studio(&file);
    node("main", &studio.url(), &file, &[]);
    studio.stop();

    // Save and reload: the saved place opens with the saved attribute and its 9 parts.
    let saved = std::fs::read_to_string(out_dir().join("saved.txt")).expect("the page saved");
    let saved = PathBuf::from(saved.trim());
    assert!(saved.starts_with(&dir), "{}", saved.display());
    let studio = common::studio(&saved);
    node(
        "reload",
        &studio.url(),
        &file,
        &[("EXPECT_PARTS", "9".into()), ("EXPECT_STEPS", "9".into())],
    );
    studio.stop();

    // A place with terrain: drawn as a mesh per material.
    let place = common::terrain_place(&dir);
    let studio = common::studio(&place);
    node("terrain", &studio.url(), &file, &[]);
    studio.stop();
    let latency = std::fs::read_to_string(out_dir().join("latency.json")).unwrap();
    println!("latency: {latency}");
}
