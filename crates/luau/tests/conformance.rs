//! Runs every `tests/luau/*.luau` script in the host; each is a list of `assert`s.

use procmodel_luau::{Host, HostConfig};
use std::path::Path;

fn run_script(path: &Path) -> Result<(), String> {
    let mut host = Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .map_err(|e| e.to_string())?;
    host.run_script_file(path).map_err(|e| match e {
        procmodel_luau::HostError::Script { message, traceback } => {
            format!("{message}\n{}", traceback.unwrap_or_default())
        }
        other => other.to_string(),
    })
}

#[test]
fn luau_conformance_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/luau");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/luau exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "luau"))
        .collect();
    scripts.sort();
    assert!(
        scripts.len() >= 3,
        "expected the conformance scripts, found {scripts:?}"
    );
    let mut failures = Vec::new();
    for s in &scripts {
        if let Err(e) = run_script(s) {
            failures.push(format!("{}: {e}", s.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts failed:\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}
