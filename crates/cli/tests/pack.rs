//! `procmodel pack` (issue 15 item 7): a packed ProceduralModel holds its generator module,
//! attributes, Size and results (Dirty false), reloads and regenerates to the same bytes;
//! `--sandboxed` marks the module with the minimal capabilities; bad input is refused.

use rbx_dom_weak::{WeakDom, ustr};
use rbx_types::{Ref, Variant};
use std::path::{Path, PathBuf};

mod common;
use common::*;

fn decode(path: &Path) -> WeakDom {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "rbxmx") {
        rbx_xml::from_reader_default(bytes.as_slice()).unwrap()
    } else {
        rbx_binary::from_reader(bytes.as_slice()).unwrap()
    }
}

fn prop(dom: &WeakDom, r: Ref, name: &str) -> Option<Variant> {
    dom.get_by_ref(r)
        .unwrap()
        .properties
        .get(&ustr(name))
        .cloned()
}

fn pack(name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp(name);
    ok(bin()
        .arg("pack")
        .arg(examples().join("SpiralStaircase.luau"))
        .args(["--size", "12,20,12", "--attr", "StepSize=0.5"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap());
    out
}

fn regen(scene: &Path, out: &Path, force: bool) {
    let mut c = bin();
    c.arg("regen")
        .arg(scene)
        .arg("--no-cache")
        .arg("-o")
        .arg(out);
    if force {
        c.arg("--force");
    }
    ok(c.output().unwrap());
}

fn generator_of(dom: &WeakDom, pm: Ref) -> Ref {
    match prop(dom, pm, "Generator") {
        Some(Variant::Ref(m)) => m,
        other => panic!("no Generator: {other:?}"),
    }
}

#[test]
fn r15_7_packed_model_reloads_and_regenerates_to_the_same_bytes() {
    let packed = pack("Staircase.rbxm", &[]);
    let dom = decode(&packed);
    let tops = dom.root().children();
    assert_eq!(tops.len(), 1, "one ProceduralModel at the top");
    let pm = tops[0];
    let inst = dom.get_by_ref(pm).unwrap();
    assert_eq!(inst.class, "ProceduralModel");
    assert_eq!(inst.name, "SpiralStaircase");
    assert_eq!(prop(&dom, pm, "Dirty"), Some(Variant::Bool(false)));
    assert_eq!(
        prop(&dom, pm, "Size"),
        Some(Variant::Vector3(rbx_types::Vector3::new(12.0, 20.0, 12.0)))
    );
    let module = generator_of(&dom, pm);
    let m = dom.get_by_ref(module).unwrap();
    assert_eq!(m.class, "ModuleScript");
    assert_eq!(m.parent(), pm, "the generator is inside the package");
    let source = std::fs::read_to_string(examples().join("SpiralStaircase.luau")).unwrap();
    assert_eq!(prop(&dom, module, "Source"), Some(Variant::String(source)));
    let Some(Variant::Attributes(a)) = prop(&dom, pm, "Attributes") else {
        panic!("no attributes")
    };
    assert_eq!(a.get("StepSize"), Some(&Variant::Float64(0.5)));
    assert!(a.get("Railing").is_some(), "defaults are filled in");
    let folder = inst
        .children()
        .iter()
        .copied()
        .find(|&c| dom.get_by_ref(c).unwrap().class == "GeneratedFolder")
        .expect("results");
    // 20 / 0.5 = 40 steps, plus pole and railing.
    assert!(dom.descendants_of(folder).count() >= 40);
    assert_eq!(prop(&dom, module, "Sandboxed"), None);

    // Reloaded: nothing is dirty, and regenerated from scratch: the same bytes.
    let same = tmp("Staircase-load.rbxm");
    regen(&packed, &same, false);
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(&same).unwrap()
    );
    let again = tmp("Staircase-regen.rbxm");
    regen(&packed, &again, true);
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // And packing twice gives the same bytes.
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(pack("Staircase2.rbxm", &[])).unwrap()
    );
}

#[test]
fn r15_7_xml_package_regenerates_to_the_same_bytes() {
    let packed = pack("Staircase.rbxmx", &[]);
    let dom = decode(&packed);
    let pm = dom.root().children()[0];
    assert_eq!(prop(&dom, pm, "Dirty"), Some(Variant::Bool(false)));
    let again = tmp("Staircase-regen.rbxmx");
    regen(&packed, &again, true);
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn r15_7_sandboxed_package_has_minimal_capabilities() {
    let packed = pack("Sandboxed.rbxm", &["--sandboxed"]);
    let dom = decode(&packed);
    let pm = dom.root().children()[0];
    let module = generator_of(&dom, pm);
    assert_eq!(prop(&dom, module, "Sandboxed"), Some(Variant::Bool(true)));
    let items = &procmodel_dom::db().enums["SecurityCapability"].items;
    let bits = ["Basic", "RunServerScript", "CreateInstances"]
        .iter()
        .fold(0u64, |b, n| b | 1 << items[n]);
    assert_eq!(
        prop(&dom, module, "Capabilities"),
        Some(Variant::SecurityCapabilities(
            rbx_types::SecurityCapabilities::from_bits(bits)
        ))
    );
    // The sandbox state is one of the inputs: the results are not those of the open package.
    let open = decode(&pack("Open.rbxm", &[]));
    let inputs = |dom: &WeakDom| {
        let pm = dom.root().children()[0];
        let folder = dom
            .get_by_ref(pm)
            .unwrap()
            .children()
            .iter()
            .copied()
            .find(|&c| dom.get_by_ref(c).unwrap().class == "GeneratedFolder");
        let Some(Variant::Attributes(a)) = prop(dom, folder.unwrap(), "Attributes") else {
            panic!("no provenance")
        };
        a.get("ProcmodelInputs").cloned()
    };
    assert_ne!(inputs(&dom), inputs(&open));

    let again = tmp("Sandboxed-regen.rbxm");
    regen(&packed, &again, true);
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn r15_7_pack_refuses_failures_and_bad_flags() {
    let broken = tmp("Broken.luau");
    std::fs::write(
        &broken,
        "return { OnGenerate = function() error('no luck') end }",
    )
    .unwrap();
    let e = failed(
        bin()
            .arg("pack")
            .arg(&broken)
            .arg("-o")
            .arg(tmp("Broken.rbxm"))
            .output()
            .unwrap(),
    );
    // Named by its file and line, as `generate` names it (the packed module has no file
    // behind it, and named only "Broken.Broken:1").
    assert!(
        e.contains("generation failed") && e.contains("no luck") && e.contains("Broken.luau:1:"),
        "{e}"
    );
    assert!(!tmp("Broken.rbxm").exists(), "nothing written on failure");
    // A module folder's failing child is named by its file too.
    let kit = tmp("BrokenKit");
    let _ = std::fs::remove_dir_all(&kit);
    std::fs::create_dir_all(&kit).unwrap();
    std::fs::write(
        kit.join("init.luau"),
        "local Part = require(script.Part)\nreturn { Attributes = {}, OnGenerate = function() Part.make() end }\n",
    )
    .unwrap();
    std::fs::write(
        kit.join("Part.luau"),
        "return { make = function()\n\tlocal x = nil\n\treturn x.y\nend }\n",
    )
    .unwrap();
    let e = failed(
        bin()
            .arg("pack")
            .arg(&kit)
            .arg("-o")
            .arg(tmp("BrokenKit.rbxm"))
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("attempt to index nil") && e.contains("Part.luau:3:"),
        "{e}"
    );

    let stairs = examples().join("SpiralStaircase.luau");
    let run = |args: &[&str]| failed(bin().arg("pack").arg(&stairs).args(args).output().unwrap());
    let e = run(&["-o", tmp("x.glb").to_str().unwrap()]);
    assert!(e.contains("a package is a model file"), "{e}");
    let e = run(&["-o", tmp("x.rbxl").to_str().unwrap()]);
    assert!(e.contains("a package is a model file"), "{e}");
    // An extension no command writes gets the same rule, not `generate`'s list of formats.
    let e = run(&["-o", tmp("x.zip").to_str().unwrap()]);
    assert!(
        e.contains("a package is a model file (.rbxm or .rbxmx)") && !e.contains(".glb"),
        "{e}"
    );
    let e = run(&["--attr", "Nope=1", "-o", tmp("x.rbxm").to_str().unwrap()]);
    assert!(
        e.contains("no attribute 'Nope'") && e.contains("StepSize"),
        "{e}"
    );
    let e = run(&[
        "--attr",
        "StepSize=tall",
        "-o",
        tmp("x.rbxm").to_str().unwrap(),
    ]);
    assert!(e.contains("StepSize"), "{e}");
    let e = run(&["--size", "1,2", "-o", tmp("x.rbxm").to_str().unwrap()]);
    assert!(e.contains("--size"), "{e}");
    let e = run(&[]);
    assert!(e.contains("--output"), "{e}");
    assert!(!tmp("x.rbxm").exists());

    let e = failed(
        bin()
            .arg("pack")
            .arg(tmp("Missing.luau"))
            .arg("-o")
            .arg(tmp("m.rbxm"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("Missing.luau") && e.contains("not found"), "{e}");
    let e = failed(
        bin()
            .arg("pack")
            .arg(tmp("Staircase.rbxm"))
            .arg("-o")
            .arg(tmp("m.rbxm"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("generator module"), "{e}");

    // A string require of another file survives packing: the package holds the module
    // beside the generator (it was refused before), and regenerates to its own bytes.
    let multi = dir().join("multi");
    std::fs::create_dir_all(&multi).unwrap();
    std::fs::write(multi.join("Helper.luau"), "return 1").unwrap();
    std::fs::write(
        multi.join("Uses.luau"),
        "local h = require('./Helper')\nreturn { OnGenerate = function() end }",
    )
    .unwrap();
    let package = tmp("Uses.rbxm");
    pack_regenerating_to_its_bytes(&multi.join("Uses.luau"), &package);
    let dom = rbx_binary::from_reader(std::fs::File::open(&package).unwrap()).unwrap();
    let model = dom.root().children()[0];
    let names: Vec<(String, String)> = dom
        .get_by_ref(model)
        .unwrap()
        .children()
        .iter()
        .map(|&c| {
            let i = dom.get_by_ref(c).unwrap();
            (i.class.to_string(), i.name.clone())
        })
        .collect();
    assert!(
        names.contains(&("ModuleScript".into(), "Uses".into()))
            && names.contains(&("ModuleScript".into(), "Helper".into())),
        "{names:?}"
    );
    // So does a module folder's require of a file beside the folder (`./Helper` from its
    // init script): the package failed to regenerate ("Tower has no child named 'Helper'").
    std::fs::create_dir_all(multi.join("Tower")).unwrap();
    std::fs::write(
        multi.join("Tower/init.luau"),
        "local h = require('./Helper')\nreturn { OnGenerate = function(_, t) Instance.new('Part', t).Name = tostring(h) end }",
    )
    .unwrap();
    pack_regenerating_to_its_bytes(&multi.join("Tower"), &tmp("Tower.rbxm"));
}

/// A package's generator uses the scene as it would inside any place: `workspace` (nil in a
/// model file's scene before, an error) and services it asks for (saved into the model file
/// before, so the regenerated package had an HttpService). It regenerates to the same bytes.
#[test]
fn a_package_using_workspace_and_services_regenerates_to_the_same_bytes() {
    let generator = tmp("WorldUser.luau");
    std::fs::write(
        &generator,
        r#"local HttpService = game:GetService("HttpService")
return {
    Attributes = { N = 2 },
    OnGenerate = function(params, target)
        local hit = workspace:Raycast(Vector3.new(0, 50, 0), Vector3.new(0, -100, 0))
        local lighting = game.Lighting
        for i = 1, params.Attributes.N do
            local p = Instance.new("Part")
            p.Name = HttpService:JSONEncode({ i = i, hit = hit ~= nil, lit = lighting ~= nil })
            p.Parent = target
        end
    end,
}
"#,
    )
    .unwrap();
    let packed = tmp("WorldUser.rbxm");
    ok(bin()
        .args(["pack", s(&generator), "-o", s(&packed)])
        .output()
        .unwrap());
    let again = tmp("WorldUser-regen.rbxm");
    regen(&packed, &again, true);
    let dom = decode(&again);
    let top: Vec<&str> = dom
        .root()
        .children()
        .iter()
        .map(|&r| dom.get_by_ref(r).unwrap().class.as_str())
        .collect();
    assert_eq!(top, ["ProceduralModel"]);
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn packing_a_generator_that_needs_the_toolkit_warns_that_studio_cannot_regenerate_it() {
    // The toolkit is procmodel's own: Studio keeps the packed results but its require fails.
    let out = tmp("cave-package.rbxm");
    let o = ok(bin()
        .arg("pack")
        .arg(examples().join("Cave.luau"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap());
    let err = stderr(&o);
    assert!(
        err.contains("warning: ")
            && err.contains("Cave.luau requires @procmodel/automata, which only procmodel has")
            && err.contains("Roblox Studio cannot regenerate it"),
        "{err}"
    );
    assert!(out.exists(), "the package is still written");
    // A generator on Roblox's own APIs packs without it.
    let o = ok(bin()
        .arg("pack")
        .arg(examples().join("SpiralStaircase.luau"))
        .arg("-o")
        .arg(tmp("stairs-package.rbxm"))
        .output()
        .unwrap());
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

/// A generator file that requires a file beside it under `pcall`, with a fallback, runs
/// without it in the package's first run (nothing fails there); that module is packed all
/// the same, as a run from the files requires it, and the package regenerates with it.
#[test]
fn a_module_required_under_pcall_beside_the_generator_is_packed() {
    let dir = tmp("pcall-beside");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        "local ok, Shape = pcall(require, './Shape')\nif not ok then Shape = { name = 'Fallback' } end\nreturn { Attributes = {}, OnGenerate = function(_, t)\n\tlocal p = Instance.new('Part')\n\tp.Name = Shape.name\n\tp.Parent = t\nend }\n",
    )
    .unwrap();
    std::fs::write(dir.join("Shape.luau"), "return { name = 'FromShape' }\n").unwrap();
    let package = dir.join("Gen.rbxm");
    pack_regenerating_to_its_bytes(&dir.join("Gen.luau"), &package);
    let dom = decode(&package);
    let names: Vec<String> = dom
        .descendants()
        .map(|i| format!("{}:{}", i.class, i.name))
        .collect();
    assert!(
        names.contains(&"ModuleScript:Shape".to_owned())
            && names.contains(&"Part:FromShape".to_owned())
            && !names.contains(&"Part:Fallback".to_owned()),
        "{names:?}"
    );
}

/// A generator that picks a module by its attributes (`require("./Biomes/Desert")` in one
/// branch, `./Biomes/Forest` in another) was packed with only the module the package's own
/// inputs required: in Studio, another Biome failed with "cannot require". Every module its
/// text requires by a literal path is packed, followed from file to file (a module folder
/// with its scripts), and nothing else beside it.
#[test]
fn modules_other_inputs_require_are_packed_too() {
    let dir = tmp("biomes");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("Biomes/Swamp")).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        r#"local Gen = { Attributes = { Biome = "Desert" } }
function Gen.OnGenerate(params, folder)
	local biome
	if params.Attributes.Biome == "Desert" then
		biome = require("./Biomes/Desert")
	elseif params.Attributes.Biome == "Swamp" then
		biome = require("./Biomes/Swamp")
	else
		biome = require("./Biomes/Forest")
	end
	local p = Instance.new("Part")
	p.Name = biome.name
	p.Parent = folder
end
return Gen
"#,
    )
    .unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write("Biomes/Desert.luau", "return { name = 'Sand' }\n");
    write(
        "Biomes/Forest.luau",
        "local Tree = require('./Tree')\nreturn { name = 'Forest' .. Tree.kind }\n",
    );
    write("Biomes/Tree.luau", "return { kind = 'Oak' }\n");
    write(
        "Biomes/Swamp/init.luau",
        "return { name = 'Swamp' .. require('@self/Reed').n }\n",
    );
    write("Biomes/Swamp/Reed.luau", "return { n = 'Reed' }\n");
    write("Biomes/Unused.luau", "return {}\n");
    let package = dir.join("Gen.rbxm");
    pack_regenerating_to_its_bytes(&dir.join("Gen.luau"), &package);
    let dom = decode(&package);
    let mut modules: Vec<String> = dom
        .descendants()
        .filter(|i| i.class == "ModuleScript")
        .map(|i| i.name.to_string())
        .collect();
    modules.sort();
    assert_eq!(
        modules,
        ["Desert", "Forest", "Gen", "Reed", "Swamp", "Tree"],
        "every module a Biome requires, and nothing else"
    );
    // Each Biome regenerates from the package alone.
    let script = dir.join("switch.luau");
    std::fs::write(
        &script,
        r#"local pm = workspace:FindFirstChildWhichIsA("ProceduralModel", true)
local names = {}
for _, b in { "Forest", "Swamp", "Desert" } do
	pm:SetAttribute("Biome", b)
	pm:WaitForGenerationAsync()
	assert(pm:GetAttribute("GenerationError") == nil and pm.GenerationError == "", pm.GenerationError)
	table.insert(names, pm.GeneratedFolder:GetChildren()[1].Name)
end
assert(table.concat(names, ",") == "ForestOak,SwampReed,Sand", table.concat(names, ","))
"#,
    )
    .unwrap();
    ok(bin()
        .arg("run")
        .arg(&script)
        .arg("--place")
        .arg(&package)
        .output()
        .unwrap());
}
