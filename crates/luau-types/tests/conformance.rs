//! Runs every `tests/luau/*.luau` script in a fresh VM with the datatypes registered; each
//! script is a list of `assert`s and fails with its file, line and message.

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
fn luau_conformance_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/luau");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/luau exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "luau"))
        .collect();
    scripts.sort();
    assert!(
        scripts.len() >= 10,
        "expected the datatype scripts, found {}",
        scripts.len()
    );
    let failures: Vec<String> = scripts
        .iter()
        .filter_map(|p| run_script(p).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "failing scripts:\n{}",
        failures.join("\n\n")
    );
}

/// `types/datatypes.d.luau` declares every global `register` installs and every constructor.
#[test]
fn type_definitions_cover_the_globals() {
    let defs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("types/datatypes.d.luau"),
    )
    .expect("types/datatypes.d.luau exists");
    let lua = mlua::Lua::new();
    procmodel_luau_types::register(&lua).expect("register");
    let globals = [
        "Vector3",
        "Vector2",
        "CFrame",
        "Color3",
        "BrickColor",
        "UDim",
        "UDim2",
        "NumberRange",
        "NumberSequence",
        "NumberSequenceKeypoint",
        "ColorSequence",
        "ColorSequenceKeypoint",
        "Rect",
        "Random",
        "Font",
        "Ray",
        "PhysicalProperties",
        "Faces",
        "Axes",
        "Region3",
        "Region3int16",
        "Vector3int16",
        "Vector2int16",
        "Content",
    ];
    assert!(defs.contains("declare Enum:"));
    for g in globals {
        let decl = format!("declare {g}: {{");
        let start = defs.find(&decl).unwrap_or_else(|| panic!("no `{decl}`"));
        let block = &defs[start..];
        let block = &block[..block.find("\n}").map_or(block.len(), |e| e + 2)];
        let table: mlua::Table = lua.globals().get(g).expect(g);
        for pair in table.pairs::<String, mlua::Value>() {
            let (key, _) = pair.expect("key");
            assert!(
                block.contains(&format!("{key}:")),
                "{g}.{key} is not declared"
            );
        }
    }
}
