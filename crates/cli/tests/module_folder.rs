//! A generator written as a module folder, the way Rojo lays out a ModuleScript with
//! children: `Gen/init.luau` is the module, `Gen/Util.luau` its child `script.Util`.

mod common;

use common::{bin, failed, ok, s, stderr, stdout, tmp};
use std::path::{Path, PathBuf};

/// A module folder named `name` whose generator builds `Floors` parts with the help of two
/// child modules (one found with `script.Util`, one with `WaitForChild`), and a nested one.
fn tower(name: &str) -> PathBuf {
    // In a folder of its own: a lock records every Luau file beside the generator's folder,
    // and the tests run side by side.
    let dir = tmp(&format!("{name}-beside")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("Shapes")).unwrap();
    std::fs::write(
        dir.join("init.luau"),
        r#"local Util = require(script.Util)
-- The same module by string: the same value (one cache entry per module).
assert(require("@self/Util") == Util)
local Shapes = require(script:WaitForChild("Shapes"))
local Tower = {}
Tower.Attributes = { Floors = 3, Style = "Stone" }
function Tower.OnGenerate(params, container)
	for f = 1, params.Attributes.Floors do
		local p = Shapes.slab(f)
		p.Material = Util.material(params.Attributes.Style)
		p:SetAttribute("Modules", `{script.Name} {script.Util:GetFullName()} {#script:GetChildren()}`)
		p.Parent = container
	end
end
return Tower
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("Util.luau"),
        r#"local Util = {}
local materials = { Stone = Enum.Material.Slate, Wood = Enum.Material.WoodPlanks }
function Util.material(style)
	return materials[style] or error(`unknown Style "{style}"`)
end
return Util
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("Shapes/init.luau"),
        r#"local Size = require(script.Size)
return {
	slab = function(f)
		local p = Instance.new("Part")
		p.Name = "Floor" .. f
		p.Size = Size
		p.Position = Vector3.new(0, f * 2, 0)
		return p
	end,
}
"#,
    )
    .unwrap();
    std::fs::write(dir.join("Shapes/Size.lua"), "return Vector3.new(8, 1, 8)\n").unwrap();
    dir
}

/// The `Modules` attribute and the part names the generator wrote into `out` (read back by
/// a script run over the file).
fn read_back(out: &Path) -> String {
    let script = out.with_extension("read.luau");
    std::fs::write(
        &script,
        r#"local m = workspace:FindFirstChildOfClass("Model") or workspace:GetChildren()[1]
local names, modules = {}, nil
for _, d in m:GetDescendants() do
	if d:IsA("BasePart") then
		table.insert(names, d.Name .. ":" .. d.Material.Name)
		modules = d:GetAttribute("Modules")
	end
end
table.sort(names)
print(modules, table.concat(names, ","))
"#,
    )
    .unwrap();
    let o = ok(bin()
        .args(["run", s(&script), "--place", s(out)])
        .output()
        .unwrap());
    stdout(&o) + &stderr(&o)
}

#[test]
fn a_module_folder_is_a_generator_whose_files_are_its_children() {
    let dir = tower("Tower");
    for named in [dir.clone(), dir.join("init.luau")] {
        let out = tmp("tower.rbxm");
        let o = ok(bin()
            .args(["generate", s(&named), "-o", s(&out), "--attr", "Floors=2"])
            .output()
            .unwrap());
        assert!(
            stderr(&o).contains("generated 2 instances"),
            "{}",
            stderr(&o)
        );
        let seen = read_back(&out);
        assert!(
            seen.contains("Tower ServerStorage.Tower.Util 2")
                && seen.contains("Floor1:Slate,Floor2:Slate"),
            "{named:?}: {seen}"
        );
    }
}

#[test]
fn the_folder_named_from_inside_it_is_named_after_itself() {
    let dir = tower("TowerHere");
    for named in [".", "init.luau"] {
        let out = tmp("here.rbxm");
        ok(bin()
            .current_dir(&dir)
            .args(["generate", named, "-o", s(&out)])
            .output()
            .unwrap());
        let seen = read_back(&out);
        assert!(
            seen.contains("TowerHere ServerStorage.TowerHere.Util 2"),
            "{named}: {seen}"
        );
    }
}

#[test]
fn errors_in_a_child_module_name_its_file_and_line() {
    let dir = tower("TowerBad");
    let e = failed(
        bin()
            .args([
                "generate",
                s(&dir),
                "-o",
                s(&tmp("bad.rbxm")),
                "--attr",
                "Style=Glass",
            ])
            .output()
            .unwrap(),
    );
    let util = dir.join("Util.luau").canonicalize().unwrap();
    assert!(
        e.contains(&format!("{}:4: unknown Style \"Glass\"", util.display())),
        "{e}"
    );
}

#[test]
fn info_lock_verify_and_pack_take_a_module_folder() {
    let dir = tower("TowerLock");
    let o = ok(bin().args(["info", s(&dir)]).output().unwrap());
    assert!(
        stdout(&o).contains("Floors") && stdout(&o).contains("Style"),
        "{}",
        stdout(&o)
    );
    let lock = dir.with_extension("lock");
    ok(bin()
        .args(["lock", s(&dir), "-o", s(&lock)])
        .output()
        .unwrap());
    let o = ok(bin().args(["verify", s(&lock)]).output().unwrap());
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
    // A change to a child module is caught by verify.
    let size = dir.join("Shapes/Size.lua");
    std::fs::write(&size, "return Vector3.new(9, 1, 8)\n").unwrap();
    let o = bin().args(["verify", s(&lock)]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stdout(&o).contains("ServerStorage.TowerLock.Shapes.Size changed"),
        "{}",
        stdout(&o)
    );
    // A package holds the module with its children.
    let pkg = tmp("tower-pkg.rbxm");
    ok(bin()
        .args(["pack", s(&dir), "-o", s(&pkg)])
        .output()
        .unwrap());
    let script = tmp("pkg.luau");
    std::fs::write(
        &script,
        r#"local pm = workspace:FindFirstChildOfClass("ProceduralModel")
local m = pm.Generator
print(m.Name, m.Util.ClassName, m.Shapes.Size.ClassName)
"#,
    )
    .unwrap();
    let o = ok(bin()
        .args(["run", s(&script), "--place", s(&pkg)])
        .output()
        .unwrap());
    let said = stdout(&o) + &stderr(&o);
    assert!(
        said.contains("TowerLock ModuleScript ModuleScript"),
        "{said}"
    );
}

#[test]
fn a_folder_without_an_init_script_says_what_to_do() {
    let dir = tmp("NoInit");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Gen.luau"), "return {}").unwrap();
    let e = failed(
        bin()
            .args(["generate", s(&dir), "-o", s(&tmp("x.rbxm"))])
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("is a folder without an init.luau") && e.contains("Generator.luau"),
        "{e}"
    );
    // An init script that makes a Script, not a ModuleScript, is named.
    let dir = tmp("ServerInit");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("init.server.luau"), "print(1)").unwrap();
    std::fs::write(dir.join("init.luau"), "return {}").unwrap();
    let e = failed(
        bin()
            .args(["generate", s(&dir), "-o", s(&tmp("y.rbxm"))])
            .output()
            .unwrap(),
    );
    assert!(e.contains("one init file"), "{e}");
}

/// A generator of a Rojo project that reads the project's tree (Wally's
/// `ReplicatedStorage.Packages`) fails when run alone, where that tree is absent: the error
/// says which project it belongs to and how to run it there (outside a project: how to run
/// it in a place). An error of its own gets no such hint.
#[test]
fn a_project_generator_run_alone_is_told_to_run_in_its_project() {
    let root = tmp("wally-project");
    let _ = std::fs::remove_dir_all(&root);
    let gen_dir = root.join("src").join("gen");
    std::fs::create_dir_all(&gen_dir).unwrap();
    std::fs::create_dir_all(root.join("Packages")).unwrap();
    std::fs::write(root.join("Packages/Lib.luau"), "return { n = 2 }\n").unwrap();
    std::fs::write(
        root.join("default.project.json"),
        r#"{ "name": "p", "tree": { "$className": "DataModel",
  "ReplicatedStorage": { "Packages": { "$path": "Packages" } },
  "ServerStorage": { "Gen": { "$path": "src/gen" } } } }"#,
    )
    .unwrap();
    std::fs::write(
        gen_dir.join("init.luau"),
        "local Lib = require(game:GetService('ReplicatedStorage').Packages.Lib)\nreturn { Attributes = {}, OnGenerate = function(_, t) for i = 1, Lib.n do Instance.new('Part').Parent = t end end }\n",
    )
    .unwrap();
    let project = root.join("default.project.json");
    let run_alone = |command: &str| {
        failed(
            bin()
                .arg(command)
                .arg(&gen_dir)
                .arg("-o")
                .arg(root.join("out.rbxm"))
                .output()
                .unwrap(),
        )
    };
    for command in ["generate", "pack"] {
        let e = run_alone(command);
        assert!(
            e.contains("Packages is not a valid member of ReplicatedStorage")
                && e.contains(&format!("in the Rojo project {}", project.display()))
                && e.contains("procmodel regen"),
            "{command}: {e}"
        );
    }
    // In the project it runs.
    ok(bin()
        .arg("regen")
        .arg(&project)
        .arg("-o")
        .arg(root.join("out.rbxl"))
        .output()
        .unwrap());
    // Outside a project, the same lookup is told how to run it in a place.
    let lone = tmp("lone-template");
    let _ = std::fs::remove_dir_all(&lone);
    std::fs::create_dir_all(&lone).unwrap();
    std::fs::write(
        lone.join("Gen.luau"),
        "return { Attributes = {}, OnGenerate = function(_, t) game:GetService('ServerStorage').Template:Clone().Parent = t end }\n",
    )
    .unwrap();
    let e = failed(
        bin()
            .arg("generate")
            .arg(lone.join("Gen.luau"))
            .arg("-o")
            .arg(lone.join("out.rbxm"))
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("Template is not a valid member of ServerStorage")
            && e.contains("run alone has a scene of its own")
            && e.contains("procmodel regen <place>")
            && !e.contains("Rojo project"),
        "{e}"
    );
    // Waiting for the project's instance, the Wait limit says what it waited for, in which
    // file, and how to run it in the project.
    std::fs::write(
        gen_dir.join("init.luau"),
        "local Packages = game:GetService('ReplicatedStorage'):WaitForChild('Packages')\nreturn { Attributes = {}, OnGenerate = function(_, t) end }\n",
    )
    .unwrap();
    for command in ["generate", "pack"] {
        let e = run_alone(command);
        assert!(
            e.contains("gen: Wait limit")
                && e.contains(r#"still waiting in ReplicatedStorage:WaitForChild("Packages")"#)
                && e.contains(&format!("in the Rojo project {}", project.display())),
            "{command}: {e}"
        );
    }
    // A slip of its own (in OnGenerate, a member of the container) is not the project's.
    std::fs::write(
        gen_dir.join("init.luau"),
        "return { Attributes = {}, OnGenerate = function(_, t) local x = t.Missing end }\n",
    )
    .unwrap();
    let e = run_alone("generate");
    assert!(
        e.contains("Missing is not a valid member") && !e.contains("Rojo project"),
        "{e}"
    );
}
