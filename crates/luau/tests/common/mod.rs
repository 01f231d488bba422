//! Shared runner for the Roblox conformance corpus under `tests/roblox/<area>/`: each script
//! is a list of `assert`s written from the Roblox reference, run as a plain script (the
//! `procmodel run` environment) and given its own `#[test]` by [`roblox_tests!`].

#![allow(dead_code)]

use procmodel_luau::{Host, HostConfig, HostError};
use std::path::{Path, PathBuf};

/// The corpus folder of one area.
pub fn area_dir(area: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/roblox")
        .join(area)
}

/// Runs `tests/roblox/<area>/<name>.luau`; panics with the script's error and traceback.
pub fn run_roblox_script(area: &str, name: &str) {
    let path = area_dir(area).join(format!("{name}.luau"));
    let mut host = Host::new(HostConfig {
        echo_output: false,
        // The no-yield limit stops runaway scripts; these are not, and an unoptimised build
        // on a busy machine runs the heavier ones (spatial/index.luau: about 9 s alone) past
        // the default 10 s.
        timeout: std::time::Duration::from_secs(120),
        ..HostConfig::default()
    })
    .expect("host");
    if let Err(e) = host.run_script_file(&path) {
        let text = match e {
            HostError::Script { message, traceback } => {
                format!("{message}\n{}", traceback.unwrap_or_default())
            }
            other => other.to_string(),
        };
        panic!("{}: {text}", path.display());
    }
}

/// A host as `procmodel run` makes one, its scripts' output not echoed.
pub fn quiet_host() -> Host {
    Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .expect("host")
}

/// Writes each `(file name, Luau source)` into a fresh directory named for `test`; returns
/// the directory (removed with the test process's scratch root).
pub fn script_files(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = procmodel_testkit::scratch(test);
    for (name, source) in files {
        std::fs::write(dir.join(name), source).unwrap();
    }
    dir
}

/// Fails when a script in the area's folder has no `#[test]` in `listed`.
pub fn check_all_listed(area: &str, listed: &[&str]) {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(area_dir(area)).expect("corpus folder") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "luau") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if !listed.contains(&stem.as_str()) {
                missing.push(stem);
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "scripts in tests/roblox/{area} without a #[test]: {missing:?}"
    );
}

/// One `#[test]` per script of an area, plus a test that every script is listed.
#[macro_export]
macro_rules! roblox_tests {
    ($area:literal: $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                common::run_roblox_script($area, stringify!($name));
            }
        )*
        #[test]
        fn every_script_has_a_test() {
            common::check_all_listed($area, &[$(stringify!($name)),*]);
        }
    };
}
