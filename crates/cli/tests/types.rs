//! `procmodel types` (issue 15 item 4): the luau-lsp definitions file parses (every type in
//! it compiled by the Luau compiler), names the API the engine implements and only that, and
//! the `.luaurc` alias and toolkit stubs are written without breaking a generator's requires.

use std::path::Path;

mod common;
use common::*;

fn types(out: &Path) -> String {
    ok(bin().arg("types").arg("-o").arg(out).output().unwrap());
    std::fs::read_to_string(out.join("procmodel.d.luau")).unwrap()
}

/// The definitions rewritten as plain Luau type aliases (a class becomes a table type, a
/// method a function-typed field, a declared global a type alias of its type), so that the
/// Luau compiler parses every type expression in the file.
fn as_luau(defs: &str) -> String {
    let mut out = String::new();
    let mut in_class = false;
    let mut n = 0;
    for line in defs.lines() {
        let t = line.trim();
        if let Some(rest) = line.strip_prefix("declare class ") {
            assert!(!in_class, "nested class: {line}");
            let name = rest.split_whitespace().next().unwrap();
            out.push_str(&format!("type {name} = {{\n"));
            in_class = true;
        } else if in_class && line == "end" {
            out.push_str("}\n");
            in_class = false;
        } else if in_class && t.starts_with("function ") {
            let t = t.split(" --").next().unwrap().trim_end();
            let sig = &t["function ".len()..];
            let open = sig.find('(').unwrap();
            let name = &sig[..open];
            let close = sig
                .find("):")
                .unwrap_or_else(|| panic!("no return type: {line}"));
            let params = &sig[open + 1..close];
            let ret = sig[close + 2..].trim();
            // A declaration's `...: T` is `...T` in a function type.
            let params = params.replace("...: ", "...");
            let params = match params.strip_prefix("self") {
                Some(rest) => format!("self: any{rest}"),
                None => panic!("a method without self: {line}"),
            };
            out.push_str(&format!("\t{name}: ({params}) -> {ret},\n"));
        } else if in_class && !t.is_empty() && !t.starts_with("--") {
            let t = t.split(" --").next().unwrap().trim_end();
            assert!(t.contains(": "), "not a field: {line}");
            out.push_str(&format!("\t{t},\n"));
        } else if let Some(rest) = line.strip_prefix("declare ") {
            let (name, ty) = rest.split_once(':').unwrap();
            n += 1;
            out.push_str(&format!("type Declared{n}_{name} ={ty}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(!in_class, "a class is not closed");
    out
}

/// The lines of `declare class <name>`'s body.
fn class_body<'a>(defs: &'a str, name: &str) -> Vec<&'a str> {
    let head = format!("declare class {name}");
    let mut lines = defs.lines();
    let Some(_) = lines.find(|l| *l == head || l.starts_with(&format!("{head} extends "))) else {
        panic!("no class {name}");
    };
    lines.take_while(|l| *l != "end").collect()
}

#[test]
fn r15_4_types_parse_and_name_what_the_engine_implements() {
    let out = dir().join("editor");
    let defs = types(&out);
    // Parsed by the Luau compiler.
    let lua = mlua::Lua::new();
    let luau = as_luau(&defs);
    if let Err(e) = lua
        .load(luau.as_str())
        .set_name("=procmodel.d.luau")
        .into_function()
    {
        let _ = std::fs::write(dir().join("as_luau.luau"), &luau);
        panic!("the definitions do not parse: {e}");
    }

    // Globals, classes, datatypes, the protocol and the toolkit.
    assert!(defs.contains("declare Instance: { new: "), "Instance.new");
    assert!(defs.contains("((className: \"Part\", parent: Instance?) -> Part)"));
    assert!(defs.contains("declare game: DataModel"));
    // Every class a global is declared as is itself declared (`game`'s DataModel was not:
    // it is neither a service nor creatable), with its members.
    let classes: Vec<&str> = defs
        .lines()
        .filter_map(|l| l.strip_prefix("declare class "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    for line in defs.lines().filter(|l| !l.starts_with("declare class ")) {
        if let Some((_, ty)) = line
            .strip_prefix("declare ")
            .and_then(|l| l.split_once(": "))
            && ty.chars().all(|c| c.is_ascii_alphanumeric())
            && ty.starts_with(|c: char| c.is_ascii_uppercase())
        {
            assert!(classes.contains(&ty), "{line}: {ty} is not declared");
        }
    }
    let game = class_body(&defs, "DataModel");
    for m in [
        "\tfunction GetService(",
        "\tfunction BindToClose(",
        "\tfunction IsLoaded(",
    ] {
        assert!(game.iter().any(|l| l.starts_with(m)), "DataModel lacks {m}");
    }
    assert!(defs.contains("declare workspace: Workspace"));
    assert!(defs.contains("declare task: {"));
    assert!(defs.contains("declare class Vector3\n"));
    assert!(defs.contains("declare Vector3: {"));
    assert!(class_body(&defs, "GeneratorParams").contains(&"\tfunction Pause(self): ()"));
    // `params.Terrain` (a generator's own voxels) and `workspace.Terrain` are the Terrain the
    // VM serves, with its methods.
    assert!(class_body(&defs, "GeneratorParams").contains(&"\tTerrain: Terrain"));
    let terrain = class_body(&defs, "Terrain");
    for m in [
        "\tfunction FillBlock(",
        "\tfunction WriteVoxels(",
        "\tfunction Clear(",
    ] {
        assert!(
            terrain.iter().any(|l| l.starts_with(m)),
            "Terrain declares {m}: {terrain:?}"
        );
    }
    assert!(defs.contains("type ProcmodelNoise = {"));
    let instance = class_body(&defs, "Instance");
    for m in [
        "\tfunction FindFirstChild(",
        "\tfunction GetChildren(",
        "\tfunction SetAttribute(",
    ] {
        assert!(
            instance.iter().any(|l| l.starts_with(m)),
            "Instance lacks {m}"
        );
    }
    assert!(instance.contains(&"\tName: string"), "{instance:?}");
    assert!(instance.contains(&"\tChildAdded: RBXScriptSignal"));
    // Every event of Roblox's API the VM serves is declared where the API declares it (those
    // of the outside world never fire); one the VM refuses is not.
    assert!(class_body(&defs, "Tool").contains(&"\tActivated: RBXScriptSignal"));
    assert!(class_body(&defs, "BasePart").contains(&"\tTouched: RBXScriptSignal"));
    assert!(class_body(&defs, "Sound").contains(&"\tPlayed: RBXScriptSignal"));
    assert!(class_body(&defs, "LogService").contains(&"\tMessageOut: RBXScriptSignal"));
    assert!(class_body(&defs, "Lighting").contains(&"\tLightingChanged: RBXScriptSignal"));
    assert!(
        !class_body(&defs, "DataModel")
            .iter()
            .any(|l| l.contains("ItemChanged"))
    );
    let part = class_body(&defs, "BasePart");
    assert!(part.contains(&"\tSize: Vector3"), "{part:?}");
    assert!(part.contains(&"\tAnchored: boolean"));
    assert!(defs.contains("declare class Part extends FormFactorPart"));
    // Methods sit on the class that has them, and only there.
    assert!(!instance.iter().any(|l| l.contains("PivotTo")));
    assert!(
        class_body(&defs, "PVInstance")
            .iter()
            .any(|l| l.starts_with("\tfunction PivotTo("))
    );
    // A yielding method outside the method registry is found too; a Roblox method the
    // engine does not implement is not declared.
    assert!(
        instance
            .iter()
            .any(|l| l.starts_with("\tfunction WaitForChild("))
    );
    assert!(!defs.contains("IKMoveTo"), "no physics solving here");
    assert!(
        class_body(&defs, "WorldRoot").iter().any(|l| l.starts_with(
            "\tfunction Raycast(self, origin: Vector3, direction: Vector3, params: RaycastParams?): RaycastResult?"
        )),
        "the spatial queries are declared with their signatures"
    );
    assert!(defs.contains("declare RaycastParams: { new: () -> RaycastParams }"));
    // Callbacks are set, never read: declared from Roblox's API (luau-lsp flagged
    // `remote.OnServerInvoke = function ... end` as an unknown property).
    assert!(class_body(&defs, "BindableFunction").contains(&"\tOnInvoke: (...any) -> ...any"));
    assert!(class_body(&defs, "RemoteFunction").contains(&"\tOnServerInvoke: (...any) -> ...any"));
    // Luau's own globals are luau-lsp's, not declared again.
    assert!(!defs.contains("declare math:") && !defs.contains("declare print:"));
    // Globals that only say procmodel does not have them are not declared usable.
    assert!(!defs.contains("declare settings:") && !defs.contains("declare PathWaypoint:"));

    // The same bytes every time.
    assert_eq!(types(&dir().join("editor2")), defs);
}

#[test]
fn r15_4_luaurc_alias_and_stubs_keep_requires_working() {
    let out = dir().join("project");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join(".luaurc"),
        r#"{ "languageMode": "strict", "aliases": { "shared": "./shared" } }"#,
    )
    .unwrap();
    types(&out);
    let rc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(".luaurc")).unwrap()).unwrap();
    assert_eq!(rc["languageMode"], "strict", "other settings are kept");
    assert_eq!(rc["aliases"]["shared"], "./shared");
    assert_eq!(rc["aliases"]["procmodel"], "./.procmodel");
    for m in ["noise", "automata", "lsystem", "wfc", "terrain"] {
        let stub = std::fs::read_to_string(out.join(format!(".procmodel/{m}.luau"))).unwrap();
        assert!(stub.contains(":: Procmodel"), "{stub}");
        // Each stub compiles.
        mlua::Lua::new()
            .load(stub.as_str())
            .into_function()
            .unwrap();
    }
    // A generator beside that .luaurc still gets the built-in toolkit modules.
    ok(bin()
        .args(["new", "--template", "noise"])
        .arg(out.join("Rocks.luau"))
        .output()
        .unwrap());
    ok(bin()
        .arg("generate")
        .arg(out.join("Rocks.luau"))
        .args(["--no-cache", "--size", "64,8,64", "-o"])
        .arg(out.join("rocks.rbxm"))
        .output()
        .unwrap());

    // A .luaurc that is not JSON is left alone, and the error names it.
    let bad = dir().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join(".luaurc"), "{ aliases: ").unwrap();
    let o = bin().arg("types").arg("-o").arg(&bad).output().unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(".luaurc") && e.contains("not a .luaurc Luau reads"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(bad.join(".luaurc")).unwrap(),
        "{ aliases: "
    );

    // Luau reads a trailing comma, so the alias is added to such a file; one with comments
    // is left alone (rewriting would drop them), and the error says what to add.
    let commas = dir().join("commas");
    std::fs::create_dir_all(&commas).unwrap();
    std::fs::write(
        commas.join(".luaurc"),
        "{\n  \"aliases\": {\n    \"lib\": \"./lib\",\n  },\n}\n",
    )
    .unwrap();
    ok(bin().arg("types").arg("-o").arg(&commas).output().unwrap());
    let rc = std::fs::read_to_string(commas.join(".luaurc")).unwrap();
    let rc: serde_json::Value = serde_json::from_str(&rc).unwrap();
    assert_eq!(rc["aliases"]["lib"], "./lib");
    assert!(rc["aliases"]["procmodel"].is_string(), "{rc}");
    let commented = dir().join("commented");
    std::fs::create_dir_all(&commented).unwrap();
    let text = "{\n  // mine\n  \"aliases\": { \"lib\": \"./lib\" }\n}\n";
    std::fs::write(commented.join(".luaurc"), text).unwrap();
    let o = bin()
        .arg("types")
        .arg("-o")
        .arg(&commented)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("holds comments") && e.contains("\"procmodel\""),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(commented.join(".luaurc")).unwrap(),
        text
    );
}
