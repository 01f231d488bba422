//! One `#[test]` per `tests/luau/*.luau` script, run in the host; each is a list of `assert`s.

use procmodel_luau::{Host, HostConfig};
use std::path::Path;

fn run_script(path: &Path) -> Result<(), String> {
    // The scripts assert behaviour, not speed: a debug build on a loaded machine runs the
    // heavier ones (the L-system work limits) for several seconds with no yield, so the
    // no-yield timeout is far above the default here (the trust tests test the timeout).
    let mut host = Host::new(HostConfig {
        echo_output: false,
        timeout: std::time::Duration::from_secs(120),
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
fn instance() {
    check("instance");
}

#[test]
fn pivot() {
    check("pivot");
}

#[test]
fn task() {
    check("task");
}

#[test]
fn task_coroutines() {
    check("task_coroutines");
}

#[test]
fn toolkit_automata() {
    check("toolkit_automata");
}

#[test]
fn toolkit_lsystem() {
    check("toolkit_lsystem");
}

#[test]
fn toolkit_noise() {
    check("toolkit_noise");
}

#[test]
fn toolkit_terrain() {
    check("toolkit_terrain");
}

#[test]
fn toolkit_terrain_errors() {
    check("toolkit_terrain_errors");
}

#[test]
fn toolkit_terrain_write() {
    check("toolkit_terrain_write");
}

#[test]
fn toolkit_wfc() {
    check("toolkit_wfc");
}

const LISTED: &[&str] = &[
    "instance",
    "pivot",
    "task",
    "task_coroutines",
    "toolkit_automata",
    "toolkit_lsystem",
    "toolkit_noise",
    "toolkit_terrain",
    "toolkit_terrain_errors",
    "toolkit_terrain_write",
    "toolkit_wfc",
];

/// Every script in tests/luau has a `#[test]` above (a new script must be listed).
#[test]
fn every_script_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/luau");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/luau exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "luau"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    found.sort();
    let mut listed: Vec<String> = LISTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "tests/luau scripts and the tests listed here differ"
    );
}

/// Runs `tests/luau/<name>.luau`; a failure names the script, its line and message.
fn check(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/luau")
        .join(format!("{name}.luau"));
    if let Err(e) = run_script(&path) {
        panic!("{}: {e}", path.display());
    }
}

/// A script's threads outlive its main chunk, as a Roblox Script's do: what it deferred,
/// spawned with the legacy `spawn` or delayed runs before the run is over, in scheduler
/// order; background threads still waiting at `max_wait` are ended, and the run succeeds.
#[test]
fn a_scripts_threads_run_after_its_main_chunk() {
    let dir = procmodel_testkit::scratch("after-main");
    let path = dir.join("after_main.luau");
    std::fs::write(
        &path,
        r#"
local order = Instance.new("StringValue")
order.Name = "Order"
order.Parent = workspace
local function note(what) order.Value ..= what .. ";" end
task.delay(2, note, "delay2")
spawn(function() note("spawn") end)
task.defer(note, "defer")
task.spawn(function() while true do task.wait(1) end end)
note("main")
"#,
    )
    .unwrap();
    let mut host = Host::new(HostConfig {
        echo_output: false,
        max_wait: 10.0,
        ..HostConfig::default()
    })
    .unwrap();
    host.run_script_file(&path).unwrap();
    let value = host.with_dom_ref(|d| {
        d.descendants().find(|i| i.name == "Order").and_then(|i| {
            match i.properties.get(&"Value".into()) {
                Some(rbx_types::Variant::String(s)) => Some(s.clone()),
                _ => None,
            }
        })
    });
    assert_eq!(value.as_deref(), Some("main;defer;spawn;delay2;"));
    let _ = std::fs::remove_dir_all(&dir);
}
