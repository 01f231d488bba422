//! One `#[test]` per `tests/luau/*.luau` script, run in a fresh VM with the datatypes
//! registered; each script is a list of `assert`s and fails with its file, line and message.

use std::path::Path;

fn run_script(path: &Path) -> Result<(), String> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let lua = mlua::Lua::new();
    procmodel_luau_types::register(&lua).map_err(|e| format!("register failed: {e}"))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    lua.load(source.as_str())
        .set_name(format!("={name}"))
        .exec()
        .map_err(|e| e.to_string())
}

#[test]
fn brickcolor() {
    check("brickcolor");
}

#[test]
fn cframe() {
    check("cframe");
}

#[test]
fn color3() {
    check("color3");
}

#[test]
fn enum_items() {
    check("enum");
}

#[test]
fn extras() {
    check("extras");
}

#[test]
fn random() {
    check("random");
}

#[test]
fn rect_font() {
    check("rect_font");
}

#[test]
fn sequences() {
    check("sequences");
}

#[test]
fn tagged() {
    check("tagged");
}

#[test]
fn typeof_names() {
    check("typeof");
}

#[test]
fn udim() {
    check("udim");
}

#[test]
fn vector2() {
    check("vector2");
}

#[test]
fn vector3() {
    check("vector3");
}

const LISTED: &[&str] = &[
    "brickcolor",
    "cframe",
    "color3",
    "enum",
    "extras",
    "random",
    "rect_font",
    "sequences",
    "tagged",
    "typeof",
    "udim",
    "vector2",
    "vector3",
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
