//! `procmodel regen --write-generated DIR` (issue 15 item 2): each model's GeneratedFolder as
//! `.rbxm` at its instance path under DIR, the same bytes every time, never over the scene's
//! own files; a Rojo project is never saved over.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::*;

fn city() -> PathBuf {
    examples().join("rojo-city")
}

/// Every file under `root` with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn decode(path: &Path) -> rbx_dom_weak::WeakDom {
    rbx_binary::from_reader(std::fs::read(path).unwrap().as_slice()).unwrap()
}

#[test]
fn r15_2_write_generated_writes_results_and_never_sources() {
    let before = snapshot(&city());
    let out = tmp("generated");
    let _ = std::fs::remove_dir_all(&out);
    ok(bin()
        .arg("regen")
        .arg(city())
        .arg("--no-cache")
        .arg("--write-generated")
        .arg(&out)
        .output()
        .unwrap());
    assert_eq!(
        snapshot(&city()),
        before,
        "the project's files are untouched"
    );
    let file = out.join("Workspace/City.rbxm");
    let bytes = std::fs::read(&file).unwrap();
    let dom = decode(&file);
    let tops = dom.root().children();
    assert_eq!(tops.len(), 1);
    let top = dom.get_by_ref(tops[0]).unwrap();
    assert_eq!(top.class, "GeneratedFolder");
    assert!(top.children().len() >= 10, "ground and nine towers");
    // The nested towers' results are inside the city's file: one file in all.
    assert_eq!(snapshot(&out).len(), 1, "{:?}", snapshot(&out).keys());

    // Again, from the project file and with two worker VMs: the same bytes.
    ok(bin()
        .arg("regen")
        .arg(city().join("default.project.json"))
        .args(["--no-cache", "-j", "2", "--write-generated"])
        .arg(&out)
        .output()
        .unwrap());
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[test]
fn r15_2_a_project_is_never_saved_over() {
    let e = failed(bin().arg("regen").arg(city()).output().unwrap());
    assert!(
        e.contains("never overwritten") && e.contains("--write-generated"),
        "{e}"
    );

    // A results path that is a source file of the project is refused, and left as it was.
    let proj = tmp("overlap");
    let _ = std::fs::remove_dir_all(&proj);
    std::fs::create_dir_all(proj.join("src/Workspace")).unwrap();
    std::fs::write(
        proj.join("default.project.json"),
        r#"{"name": "O", "tree": {"$className": "DataModel",
            "ServerStorage": {"Gen": {"$path": "src/Gen.luau"}},
            "Workspace": {"$path": "src/Workspace"}}}"#,
    )
    .unwrap();
    std::fs::write(
        proj.join("src/Gen.luau"),
        "return { OnGenerate = function(p, c) local x = Instance.new('Part'); x.Parent = c end }",
    )
    .unwrap();
    std::fs::write(proj.join("src/Gen.meta.json"), r#"{"id": "g"}"#).unwrap();
    std::fs::write(
        proj.join("src/Workspace/M.model.json"),
        r#"{"className": "ProceduralModel", "attributes": {"Rojo_Target_Generator": "g"}}"#,
    )
    .unwrap();
    // The project's Workspace folder already holds a model file (plain Parts) named like
    // M's results.
    let placed = tmp("placed.rbxm");
    ok(bin()
        .arg("generate")
        .arg(examples().join("SpiralStaircase.luau"))
        .arg("-o")
        .arg(&placed)
        .output()
        .unwrap());
    std::fs::copy(&placed, proj.join("src/Workspace/M.rbxm")).unwrap();
    let before = snapshot(&proj);
    let e = failed(
        bin()
            .arg("regen")
            .arg(&proj)
            .arg("--no-cache")
            .arg("--write-generated")
            .arg(proj.join("src"))
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("is a source file") && e.contains("Workspace.M"),
        "{e}"
    );
    assert_eq!(snapshot(&proj), before);
    // Nor is -o a source file of the project.
    let e = failed(
        bin()
            .arg("regen")
            .arg(&proj)
            .arg("--no-cache")
            .arg("-o")
            .arg(proj.join("src/Workspace/M.rbxm"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("never overwritten"), "{e}");
    assert_eq!(snapshot(&proj), before);
    // Elsewhere it works.
    let out = tmp("overlap-out");
    let _ = std::fs::remove_dir_all(&out);
    ok(bin()
        .arg("regen")
        .arg(&proj)
        .arg("--no-cache")
        .arg("--write-generated")
        .arg(&out)
        .output()
        .unwrap());
    assert!(out.join("Workspace/M.rbxm").is_file());
    assert_eq!(snapshot(&proj), before);
}

#[test]
fn r15_2_write_generated_from_a_scene_file_leaves_it_alone() {
    let packed = tmp("Stairs.rbxm");
    ok(bin()
        .arg("pack")
        .arg(examples().join("SpiralStaircase.luau"))
        .arg("-o")
        .arg(&packed)
        .output()
        .unwrap());
    let before = std::fs::read(&packed).unwrap();
    let out = tmp("stairs-out");
    let _ = std::fs::remove_dir_all(&out);
    ok(bin()
        .arg("regen")
        .arg(&packed)
        .args(["--force", "--no-cache", "--write-generated"])
        .arg(&out)
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        before,
        "the scene is not saved"
    );
    // The model is at the top of a model file: its results at the top of DIR.
    let dom = decode(&out.join("SpiralStaircase.rbxm"));
    let folder = dom.root().children()[0];
    let written = dom.get_by_ref(folder).unwrap();
    assert_eq!(written.class, "GeneratedFolder");
    let packed_dom = decode(&packed);
    let pm = packed_dom.root().children()[0];
    let stored = packed_dom
        .get_by_ref(pm)
        .unwrap()
        .children()
        .iter()
        .map(|&c| packed_dom.get_by_ref(c).unwrap())
        .find(|i| i.class == "GeneratedFolder")
        .unwrap();
    assert_eq!(written.children().len(), stored.children().len());
    assert_eq!(
        written.properties.get(&rbx_dom_weak::ustr("Attributes")),
        stored.properties.get(&rbx_dom_weak::ustr("Attributes")),
        "the same provenance: the same results"
    );
}

#[test]
fn r15_2_a_model_name_that_is_no_file_name_is_refused() {
    let script = tmp("slash.luau");
    std::fs::write(
        &script,
        r#"
local m = Instance.new("ModuleScript")
m.Name = "Gen"
m.Source = "return { OnGenerate = function(p, c) local x = Instance.new('Part'); x.Parent = c end }"
m.Parent = game:GetService("ServerStorage")
local pm = Instance.new("ProceduralModel")
pm.Name = "a/b"
pm.Generator = m
pm.Parent = workspace
"#,
    )
    .unwrap();
    let scene = tmp("slash.rbxl");
    ok(bin()
        .arg("run")
        .arg(&script)
        .arg("--save")
        .arg(&scene)
        .output()
        .unwrap());
    let out = tmp("slash-out");
    let e = failed(
        bin()
            .arg("regen")
            .arg(&scene)
            .args(["--force", "--no-cache", "--write-generated"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("a/b") && e.contains("cannot be a file name"),
        "{e}"
    );
}

#[test]
fn r15_2_run_writes_generated_results_too() {
    let script = tmp("make.luau");
    std::fs::write(
        &script,
        r#"
local m = Instance.new("ModuleScript")
m.Name = "Gen"
m.Source = "return { OnGenerate = function(p, c) for i = 1, 3 do local x = Instance.new('Part'); x.Name = 'P' .. i; x.Parent = c end end }"
m.Parent = game:GetService("ServerStorage")
local folder = Instance.new("Folder")
folder.Name = "Props"
folder.Parent = workspace
local pm = Instance.new("ProceduralModel")
pm.Name = "Crate"
pm.Generator = m
pm.Parent = folder
"#,
    )
    .unwrap();
    let out = tmp("run-out");
    let _ = std::fs::remove_dir_all(&out);
    ok(bin()
        .arg("run")
        .arg(&script)
        .arg("--write-generated")
        .arg(&out)
        .output()
        .unwrap());
    let dom = decode(&out.join("Workspace/Props/Crate.rbxm"));
    let folder = dom.get_by_ref(dom.root().children()[0]).unwrap();
    assert_eq!(folder.class, "GeneratedFolder");
    assert_eq!(folder.children().len(), 3);
}

#[test]
fn a_broken_project_is_named_once_with_the_field_at_fault() {
    // The error named the project file twice ("a.project.json: a.project.json: tree...").
    let root = tmp("broken-project");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let project = root.join("default.project.json");
    std::fs::write(
        &project,
        r#"{ "name": "P", "tree": { "$className": "DataModel",
             "ReplicatedStorage": { "Shared": { "$path": "src/missing" } } } }"#,
    )
    .unwrap();
    let out = bin()
        .args(["regen", s(&root), "-o", s(&root.join("out.rbxl"))])
        .output()
        .unwrap();
    let err = failed(out);
    assert!(
        err.contains("tree.ReplicatedStorage.Shared.$path: no file or folder"),
        "{err}"
    );
    assert_eq!(err.matches("default.project.json").count(), 1, "{err}");
}

#[test]
fn a_failing_project_script_is_named_by_its_file() {
    // Errors named the instance ("ServerStorage.Gen.Util:3: …"), which a project's author has
    // to map back to a file by hand; they name the file relative to the project's folder.
    let root = tmp("failing-project");
    let _ = std::fs::remove_dir_all(&root);
    let gen_dir = root.join("src/Gen");
    std::fs::create_dir_all(&gen_dir).unwrap();
    std::fs::write(
        gen_dir.join("init.luau"),
        "local Util = require(script.Util)\nreturn {\n  Attributes = {},\n  OnGenerate = function(params, folder)\n    Util.boom()\n  end,\n}\n",
    )
    .unwrap();
    std::fs::write(
        gen_dir.join("Util.luau"),
        "local Util = {}\nfunction Util.boom()\n  error(\"no stone left\")\nend\nreturn Util\n",
    )
    .unwrap();
    // The model points at the generator through a Rojo ref attribute.
    let meta = r#"{ "name": "P", "tree": { "$className": "DataModel",
             "ServerStorage": { "Gen": { "$path": "src/Gen", "$id": "gen" } },
             "Workspace": { "M": { "$className": "ProceduralModel",
                 "$attributes": { "Rojo_Target_Generator": "gen" } } } } }"#;
    std::fs::write(root.join("default.project.json"), meta).unwrap();
    for (cwd, scene) in [
        (root.clone(), "."),
        (root.parent().unwrap().to_path_buf(), "failing-project"),
    ] {
        let out = bin()
            .current_dir(&cwd)
            .args(["regen", scene, "--json", "-o"])
            .arg(root.join("out.rbxl"))
            .output()
            .unwrap();
        let v = json(&out);
        let error = v["models"][0]["error"].as_str().unwrap().to_owned();
        assert!(
            error.starts_with("src/Gen/Util.luau:3: no stone left"),
            "{error}"
        );
        assert!(
            error.contains("\tsrc/Gen/Util.luau:3: in function 'boom'"),
            "{error}"
        );
        assert!(
            error.contains("\tsrc/Gen/init.luau:5: in function 'OnGenerate'"),
            "{error}"
        );
        // The error placeholder in the saved place says the same.
        let dom = rbx_binary::from_reader(std::fs::read(root.join("out.rbxl")).unwrap().as_slice())
            .unwrap();
        let saved = dom.descendants().find_map(|i| {
            let Some(rbx_types::Variant::Attributes(a)) = i.properties.get(&"Attributes".into())
            else {
                return None;
            };
            match a.get("Error")? {
                rbx_types::Variant::String(s) => Some(s.clone()),
                rbx_types::Variant::BinaryString(s) => {
                    Some(String::from_utf8_lossy(s.as_ref()).into_owned())
                }
                _ => None,
            }
        });
        assert_eq!(saved.as_deref(), Some(error.as_str()));
    }
}

/// A place project that lists only other services (a library's test place, a Rojo project
/// of ReplicatedStorage) has no Workspace: it gets a real one, as Studio adds it when it
/// opens the place, so what a script builds there — parts, Terrain voxels — is saved with
/// the place. It was a session Workspace, as a package's is, and `--save` silently dropped
/// everything in it. A model project (a package) still gets a session Workspace.
#[test]
fn a_place_project_without_a_workspace_saves_what_a_script_builds_there() {
    let dir = tmp("no-workspace-project");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/Shapes.luau"), "return { size = 4 }").unwrap();
    std::fs::write(
        dir.join("default.project.json"),
        r#"{ "name": "lib", "tree": { "$className": "DataModel",
  "ReplicatedStorage": { "$className": "ReplicatedStorage", "Shapes": { "$path": "lib/Shapes.luau" } } } }"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("model.project.json"),
        r#"{ "name": "Shapes", "tree": { "$path": "lib/Shapes.luau" } }"#,
    )
    .unwrap();
    let script = dir.join("build.luau");
    std::fs::write(
        &script,
        r#"
local size = require(game:GetService("ReplicatedStorage").Shapes).size
local p = Instance.new("Part")
p.Name = "Built"
p.Size = Vector3.new(size, 1, 1)
p.Parent = workspace
workspace.Terrain:FillBlock(CFrame.new(0, 8, 0), Vector3.new(16, 16, 16), Enum.Material.Grass)
"#,
    )
    .unwrap();
    let saved = dir.join("out.rbxl");
    ok(bin()
        .arg("run")
        .arg("--place")
        .arg(dir.join("default.project.json"))
        .arg(&script)
        .arg("--save")
        .arg(&saved)
        .output()
        .unwrap());
    let dom = decode(&saved);
    let workspace = child_of_class(&dom, None, "Workspace").expect("a Workspace");
    let built = child_of_class(&dom, Some(workspace.referent()), "Part").expect("the part");
    assert_eq!(built.name, "Built");
    let terrain = child_of_class(&dom, Some(workspace.referent()), "Terrain").expect("Terrain");
    match terrain.properties.get(&"SmoothGrid".into()) {
        Some(rbx_types::Variant::BinaryString(b)) => assert!(AsRef::<[u8]>::as_ref(b).len() > 8),
        other => panic!("no voxels saved: {other:?}"),
    }
    // A model project's Workspace is the session's: the saved model holds the package only.
    let saved_model = dir.join("out.rbxm");
    let touch = dir.join("touch.luau");
    std::fs::write(&touch, "Instance.new('Part', workspace)").unwrap();
    ok(bin()
        .arg("run")
        .arg("--place")
        .arg(dir.join("model.project.json"))
        .arg(&touch)
        .arg("--save")
        .arg(&saved_model)
        .output()
        .unwrap());
    let dom = decode(&saved_model);
    let top: Vec<_> = dom
        .root()
        .children()
        .iter()
        .map(|&r| dom.get_by_ref(r).unwrap().class.to_string())
        .collect();
    assert_eq!(top, ["ModuleScript"]);
    let _ = std::fs::remove_dir_all(&dir);
}
