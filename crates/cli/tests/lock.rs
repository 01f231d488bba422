//! Verifiable generation from the command line (issue 14): content hashes in `--json`,
//! `lock` / `verify` catching edited inputs and outputs and refusing bad lockfiles, `status`,
//! the result cache shared by two processes, and one lockfile for any `--jobs`.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::*;

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// A scene of three models of two generators (one scaled), saved with its results.
const SCENE: &str = r#"
local function module(name, source)
    local m = Instance.new("ModuleScript")
    m.Name = name
    m.Source = source
    m.Parent = game:GetService("ServerStorage")
    return m
end
local row = module("Row", [[
return {
    Attributes = { Count = 3, Seed = 1 },
    OnGenerate = function(params, target)
        local rng = Random.new(params.Attributes.Seed)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = "P" .. i
            p.Anchored = true
            p.Color = Color3.new(rng:NextNumber(), 0.3, 0.7)
            p.Size = Vector3.new(1, rng:NextNumber(1, 4), 1)
            p.Position = Vector3.new(i * 2, 0, 0)
            p.Parent = target
        end
        target:SetPrimaryPart(target:FindFirstChild("P1"))
    end,
}
]])
local tower = module("Tower", [[
return {
    Attributes = { Floors = 2 },
    OnGenerate = function(params, target)
        for i = 1, params.Attributes.Floors do
            local p = Instance.new("Part")
            p.Name = "Floor" .. i
            p.Size = Vector3.new(params.Size.X, 1, params.Size.Z)
            p.Position = Vector3.new(0, i * 3, 0)
            p.Parent = target
        end
    end,
}
]])
for i = 1, 2 do
    local m = Instance.new("ProceduralModel")
    m.Name = "Row" .. i
    m.Generator = row
    m:SetAttribute("Count", i + 2)
    m.Parent = workspace
end
local t = Instance.new("ProceduralModel")
t.Name = "Tower"
t.Generator = tower
t.Size = Vector3.new(10, 10, 10)
t.Parent = workspace
t:ScaleTo(2)
"#;

fn script(name: &str, source: &str) -> PathBuf {
    let p = tmp(name);
    std::fs::write(&p, source).unwrap();
    p
}

fn make_scene(name: &str) -> PathBuf {
    let scene = tmp(name);
    let sc = script(&format!("{name}.luau"), SCENE);
    ok(bin()
        .args(["run", s(&sc), "--save", s(&scene)])
        .output()
        .unwrap());
    scene
}

fn lock(input: &Path, out: &Path, extra: &[&str]) -> Output {
    bin()
        .args(["lock", s(input), "-o", s(out)])
        .args(extra)
        .output()
        .unwrap()
}

fn verify(lockfile: &Path) -> Output {
    bin().args(["verify", s(lockfile)]).output().unwrap()
}

#[test]
fn r14_1_content_hash_is_the_same_for_rbxm_rbxmx_and_their_reloads() {
    let stairs = examples().join("SpiralStaircase.luau");
    let mut hashes = Vec::new();
    for ext in ["rbxm", "rbxmx"] {
        let out = tmp(&format!("hash.{ext}"));
        let o = ok(bin()
            .args([
                "generate",
                s(&stairs),
                "--size",
                "12,9,12",
                "--json",
                "--no-cache",
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap());
        let h = json(&o)["content_hash"].as_str().unwrap().to_owned();
        assert_eq!(h.len(), 64);
        let bytes = std::fs::read(&out).unwrap();
        let dom = if ext == "rbxm" {
            rbx_binary::from_reader(bytes.as_slice()).unwrap()
        } else {
            rbx_xml::from_reader_default(bytes.as_slice()).unwrap()
        };
        let model = dom.root().children()[0];
        let reloaded =
            procmodel_dom::hash::to_hex(&procmodel_dom::hash::children_hash(&dom, model));
        assert_eq!(reloaded, h, "{ext} reloaded");
        hashes.push(h);
    }
    assert_eq!(hashes[0], hashes[1]);
}

#[test]
fn r14_2_regen_and_run_report_content_hashes() {
    let scene = make_scene("hashes.rbxl");
    let o = ok(bin()
        .args(["regen", s(&scene), "--force", "--json", "--no-cache", "-o"])
        .arg(tmp("hashes-out.rbxl"))
        .output()
        .unwrap());
    let v = json(&o);
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 3);
    assert!(
        models
            .iter()
            .all(|m| m["content_hash"].as_str().unwrap().len() == 64)
    );
    let sc = script("hashes-run.luau", SCENE);
    let o = ok(bin().args(["run", s(&sc), "--json"]).output().unwrap());
    let run = json(&o);
    let by_model = |v: &serde_json::Value, name: &str| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["model"] == name)
            .map(|m| m["content_hash"].clone())
            .unwrap()
    };
    for name in ["Workspace.Row1", "Workspace.Row2", "Workspace.Tower"] {
        assert_eq!(by_model(&run, name), by_model(&v, name), "{name}");
    }
}

#[test]
fn r14_3_lock_then_verify_a_scene_matches() {
    let scene = make_scene("ok.rbxl");
    let lockfile = tmp("ok.lock");
    ok(lock(&scene, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    assert!(text.contains("path = \"Workspace.Row1\""), "{text}");
    assert!(text.contains("name = \"attr.Count\""), "{text}");
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 3 models match"), "{}", stdout(&o));
}

#[test]
fn r14_3_verify_catches_an_edited_output() {
    let scene = make_scene("edited-out.rbxl");
    let lockfile = tmp("edited-out.lock");
    ok(lock(&scene, &lockfile, &[]));
    // Someone moves one generated part in the published scene.
    let edit = script(
        "edit-out.luau",
        "workspace.Row2.GeneratedFolder.P2.Position = Vector3.new(0, 50, 0)",
    );
    ok(bin()
        .args(["run", s(&edit), "--place", s(&scene), "--save", s(&scene)])
        .output()
        .unwrap());
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("MISMATCH  Workspace.Row2:")
            && out.contains("Workspace.Row2.GeneratedFolder: property CFrame of P2"),
        "{out}"
    );
    assert!(out.contains("match     Workspace.Row1"), "{out}");
    assert!(out.contains("1 of 3 models do not match"), "{out}");
}

#[test]
fn r14_3_verify_catches_an_edited_input() {
    let scene = make_scene("edited-in.rbxl");
    let lockfile = tmp("edited-in.lock");
    ok(lock(&scene, &lockfile, &[]));
    let edit = script("edit-in.luau", "workspace.Row1:SetAttribute(\"Seed\", 2)");
    ok(bin()
        .args(["run", s(&edit), "--place", s(&scene), "--save", s(&scene)])
        .output()
        .unwrap());
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("input attr.Seed differs: locked Float64 1.0, now Float64 2.0"),
        "{out}"
    );
}

/// A generator's lockfile lists the files its run required (string requires, through
/// other modules too), not every Luau file beside it: a sibling generator edited in the same
/// folder is no mismatch, an edited required module is, and so is a file the generator
/// requires now that the lockfile does not list.
#[test]
fn a_generators_lockfile_lists_the_files_it_required() {
    let gdir = tmp("required-files");
    let _ = std::fs::remove_dir_all(&gdir);
    std::fs::create_dir_all(gdir.join("lib")).unwrap();
    let g = gdir.join("Gen.luau");
    std::fs::write(
        &g,
        "local Util = require(\"./lib/Util\")\nreturn { Attributes = { N = 2 }, OnGenerate = function(params, target)\n    for i = 1, params.Attributes.N do Util.block(target, i) end\nend }\n",
    )
    .unwrap();
    std::fs::write(
        gdir.join("lib/Util.luau"),
        "local Size = require(\"./Size\")\nreturn { block = function(target, i) local p = Instance.new(\"Part\"); p.Size = Size; p.Position = Vector3.new(i * 3, 0, 0); p.Parent = target end }\n",
    )
    .unwrap();
    std::fs::write(gdir.join("lib/Size.luau"), "return Vector3.new(2, 2, 2)\n").unwrap();
    std::fs::write(
        gdir.join("Sibling.luau"),
        "return { OnGenerate = function() end }\n",
    )
    .unwrap();
    let lockfile = gdir.join("procmodel.lock");
    ok(lock(&g, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    let paths: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("path = \""))
        .filter(|p| p.ends_with(".luau\""))
        .collect();
    assert_eq!(
        paths,
        [
            "Gen.luau\"",
            "Gen.luau\"",
            "lib/Size.luau\"",
            "lib/Util.luau\""
        ],
        "{text}"
    );
    // The sibling generator changes: not an input.
    std::fs::write(gdir.join("Sibling.luau"), "return 2\n").unwrap();
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
    // A module required through another changes: named, and the results differ.
    std::fs::write(gdir.join("lib/Size.luau"), "return Vector3.new(3, 2, 2)\n").unwrap();
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("file lib/Size.luau changed"),
        "{}",
        stdout(&o)
    );
    std::fs::write(gdir.join("lib/Size.luau"), "return Vector3.new(2, 2, 2)\n").unwrap();
    ok(verify(&lockfile));
    // The module requires a new file (its text changes too): both are named.
    std::fs::write(gdir.join("lib/Extra.luau"), "return 0\n").unwrap();
    let util = std::fs::read_to_string(gdir.join("lib/Util.luau")).unwrap();
    std::fs::write(
        gdir.join("lib/Util.luau"),
        format!("local _ = require(\"./Extra\")\n{util}"),
    )
    .unwrap();
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("file lib/Util.luau changed"), "{out}");
    assert!(
        out.contains("file lib/Extra.luau is required now and not in the lockfile"),
        "{out}"
    );
    assert!(
        out.contains(
            "all 1 models match, but the files the generator requires are not the locked ones"
        ),
        "{out}"
    );
}

#[test]
fn r14_3_lock_and_verify_a_generator_with_attributes() {
    let gdir = tmp("gen");
    std::fs::create_dir_all(&gdir).unwrap();
    let g = gdir.join("Stairs.luau");
    std::fs::copy(examples().join("SpiralStaircase.luau"), &g).unwrap();
    let lockfile = gdir.join("procmodel.lock");
    ok(lock(
        &g,
        &lockfile,
        &["--attr", "StepSize=0.5", "--size", "12,6,12"],
    ));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    assert!(text.contains("path = \"Stairs.luau\""), "{text}");
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
    // Another Luau file beside it that nothing requires is no input: it still matches (it
    // failed with "file Other.luau is new beside the generator").
    let other = gdir.join("Other.luau");
    std::fs::write(&other, "return 1\n").unwrap();
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
    std::fs::remove_file(&other).unwrap();
    // The generator changes: verify says which input.
    let src = std::fs::read_to_string(&g).unwrap();
    std::fs::write(
        &g,
        src.replace("StepThickness = 0.4", "StepThickness = 0.5"),
    )
    .unwrap();
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("file Stairs.luau changed"), "{out}");
    assert!(
        out.contains("input source of ServerStorage.Stairs differs"),
        "{out}"
    );
    // Gone: a clear error naming the entry.
    std::fs::remove_file(&g).unwrap();
    let o = verify(&lockfile);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("source: the generator") && stderr(&o).contains("is missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn r14_3_tampered_truncated_and_foreign_lockfiles_are_refused() {
    let scene = make_scene("tamper.rbxl");
    let lockfile = tmp("tamper.lock");
    ok(lock(&scene, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    let check = |name: &str, content: &str, expect: &str| {
        let p = tmp(name);
        std::fs::write(&p, content).unwrap();
        let o = verify(&p);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let err = stderr(&o);
        assert!(err.contains(expect), "{name}: {err}");
        assert!(
            !stdout(&o).contains("match"),
            "{name}: nothing is reported as matching"
        );
        assert!(!err.contains("panicked"), "{err}");
    };
    // A result hash edited to another valid one.
    let i = text.find("content_hash = \"").unwrap() + 16;
    let mut edited = text.clone();
    let c = if &text[i..i + 1] == "0" { "1" } else { "0" };
    edited.replace_range(i..i + 1, c);
    check("t1.lock", &edited, "checksum does not match");
    check("t2.lock", &text[..text.len() * 2 / 3], "t2.lock: ");
    let cut = text.rfind("[[model]]").unwrap();
    check(
        "t3.lock",
        &text[..cut],
        "model_count says 3 models but the file holds 2",
    );
    check(
        "t4.lock",
        &text
            .lines()
            .map(|l| {
                // An epoch no procmodel has had (a foreign one: later, or tampered).
                if l.starts_with("epoch = ") {
                    "epoch = 9999"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "unknown determinism epoch 9999",
    );
    let o = verify(&tmp("no-such.lock"));
    assert!(
        stderr(&o).contains("cannot read the lockfile"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn r14_4_status_lists_fresh_stale_failed_and_never_generated() {
    let scene = make_scene("status.rbxl");
    let o = ok(bin()
        .args(["status", s(&scene), "--json"])
        .output()
        .unwrap());
    let v = json(&o);
    assert!(
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["status"] == "fresh"),
        "{v}"
    );
    let edit = script(
        "status-edit.luau",
        r#"
workspace.Row1:SetAttribute("Count", 9)
workspace.Tower.Size = Vector3.new(4, 4, 4)
local broken = Instance.new("ModuleScript")
broken.Source = "return { OnGenerate = function() error('no stairs today') end }"
broken.Parent = game:GetService("ServerStorage")
local m = Instance.new("ProceduralModel")
m.Name = "Broken"
m.Generator = broken
m.Parent = workspace
"#,
    );
    // run regenerates the edited models before it saves; the new one fails.
    let o = bin()
        .args(["run", s(&edit), "--place", s(&scene), "--save", s(&scene)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "the broken model fails");
    let o = ok(bin()
        .args(["status", s(&scene), "--json"])
        .output()
        .unwrap());
    let v = json(&o);
    let get = |name: &str| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["model"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(get("Workspace.Broken")["status"], "failed", "{v}");
    assert!(
        get("Workspace.Broken")["reasons"][0]
            .as_str()
            .unwrap()
            .contains("no stairs today")
    );
    // Row1 and Tower were regenerated by run: fresh again; and a module added to the scene
    // that no other generator requires leaves the others fresh.
    assert_eq!(get("Workspace.Row1")["status"], "fresh", "{v}");
    for m in v["models"].as_array().unwrap() {
        if m["model"] != "Workspace.Broken" {
            assert_eq!(m["status"], "fresh", "{m}");
        }
    }
}

/// Two processes fill one cache at once; a third run is all hits and the same bytes.
#[test]
fn r14_5_two_processes_share_one_cache() {
    let scene = make_scene("shared.rbxl");
    let cache = tmp("shared-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let outs: Vec<PathBuf> = (0..3)
        .map(|i| tmp(&format!("shared-out{i}.rbxl")))
        .collect();
    let regen = |out: &Path| {
        bin()
            .args([
                "regen",
                s(&scene),
                "--force",
                "--json",
                "--cache",
                s(&cache),
                "-o",
                s(out),
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (regen(&outs[0]), regen(&outs[1]));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let o = ok(bin()
        .args([
            "regen",
            s(&scene),
            "--force",
            "--json",
            "--cache",
            s(&cache),
            "-o",
            s(&outs[2]),
        ])
        .output()
        .unwrap());
    let v = json(&o);
    // The scene's bytes are those a save recorded intact results for (the runs above wrote
    // the same bytes): every model keeps its results and no entry is read.
    assert_eq!(v["cache"]["hits"], 0, "{v}");
    assert_eq!(v["cache"]["kept"], 3, "{v}");
    let rows = v["models"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["cached"] == true), "{v}");
    // The table says it too.
    let o = ok(bin()
        .args(["regen", s(&scene), "--force", "--cache", s(&cache)])
        .args(["-o", s(&tmp("shared-table.rbxl"))])
        .output()
        .unwrap());
    let table = String::from_utf8_lossy(&o.stdout);
    assert_eq!(table.matches("  cached  ").count(), 3, "{table}");
    assert!(
        stderr(&o).contains("3 regenerated (3 from the result cache), 0 failed"),
        "{}",
        stderr(&o)
    );
    let fresh = tmp("shared-fresh.rbxl");
    ok(bin()
        .args(["regen", s(&scene), "--force", "--no-cache", "-o", s(&fresh)])
        .output()
        .unwrap());
    let want = std::fs::read(&fresh).unwrap();
    for out in &outs {
        assert_eq!(std::fs::read(out).unwrap(), want, "{}", out.display());
    }
    // One result edited in the file (written by another tool, which writes the edited
    // property on every Part): that model's entry is decoded over it and the others' results
    // stay. The results are a fresh run's by content hash; the file keeps the others' explicit
    // default values, so its bytes are not compared.
    let mut dom = rbx_binary::from_reader(std::fs::read(&scene).unwrap().as_slice()).unwrap();
    let part = dom
        .descendants()
        .find(|i| i.name == "P2")
        .map(|i| i.referent())
        .unwrap();
    dom.get_by_ref_mut(part)
        .unwrap()
        .properties
        .insert("Transparency".into(), rbx_types::Variant::Float32(0.5));
    let edited = tmp("shared-edited.rbxl");
    let top = dom.root().children().to_vec();
    rbx_binary::to_writer(std::fs::File::create(&edited).unwrap(), &dom, &top).unwrap();
    let out = tmp("shared-edited-out.rbxl");
    let o = ok(bin()
        .args([
            "regen",
            s(&edited),
            "--force",
            "--json",
            "--cache",
            s(&cache),
            "-o",
            s(&out),
        ])
        .output()
        .unwrap());
    let v = json(&o);
    assert_eq!(
        (&v["cache"]["hits"], &v["cache"]["kept"]),
        (&3.into(), &2.into()),
        "{v}"
    );
    let hashes = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content_hash"].clone())
            .collect()
    };
    let first = json(&ok(bin()
        .args(["regen", s(&scene), "--force", "--no-cache", "--json", "-o"])
        .arg(tmp("shared-fresh-again.rbxl"))
        .output()
        .unwrap()));
    assert_eq!(hashes(&v), hashes(&first));
    let saved = rbx_binary::from_reader(std::fs::read(&out).unwrap().as_slice()).unwrap();
    let transparencies: Vec<_> = saved
        .descendants()
        .filter(|i| i.class == "Part")
        .filter_map(|i| match i.properties.get(&"Transparency".into()) {
            Some(rbx_types::Variant::Float32(t)) => Some(*t),
            _ => None,
        })
        .collect();
    assert!(
        transparencies.iter().all(|&t| t == 0.0),
        "{transparencies:?}"
    );
    // Damage every entry: reported, ignored, the same bytes again.
    for sub in std::fs::read_dir(&cache).unwrap().flatten() {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let mut bytes = std::fs::read(f.path()).unwrap();
            let n = bytes.len() / 2;
            bytes[n] ^= 0xff;
            std::fs::write(f.path(), bytes).unwrap();
        }
    }
    let again = tmp("shared-again.rbxl");
    let o = ok(bin()
        .args([
            "regen",
            s(&scene),
            "--force",
            "--json",
            "--cache",
            s(&cache),
            "-o",
            s(&again),
        ])
        .output()
        .unwrap());
    assert!(stderr(&o).contains("is corrupt"), "{}", stderr(&o));
    assert_eq!(json(&o)["cache"]["hits"], 0);
    assert_eq!(std::fs::read(&again).unwrap(), want);
}

/// The determinism matrix: one lockfile for --jobs 1 and 2, and for every noise SIMD level
/// an environment switch can force.
#[test]
fn r14_6_one_lockfile_for_any_jobs() {
    let scene = make_scene("matrix.rbxl");
    let one = tmp("matrix1.lock");
    let two = tmp("matrix2.lock");
    ok(lock(&scene, &one, &["--jobs", "1"]));
    ok(lock(&scene, &two, &["--jobs", "2"]));
    let a = std::fs::read_to_string(&one).unwrap();
    assert_eq!(a, std::fs::read_to_string(&two).unwrap());
    // The SIMD levels only change noise code, and the scene draws none: a generator that
    // fills noise grids is locked at every level too. A level may be missing only because
    // this CPU lacks it.
    // In a folder of its own: a generator's lockfile lists the Luau files beside it, and
    // other tests write theirs into the shared temporary folder meanwhile.
    std::fs::create_dir_all(tmp("noise-grid")).unwrap();
    let noisy = script("noise-grid/NoiseGrid.luau", NOISE_GRID);
    let auto = tmp("noise-auto.lock");
    ok(lock(&noisy, &auto, &[]));
    let want = std::fs::read_to_string(&auto).unwrap();
    let mut ran = 0;
    for level in ["scalar", "sse2", "avx2", "avx512", "avx512vbmi"] {
        let p = tmp(&format!("matrix-{level}.lock"));
        let q = tmp(&format!("noise-{level}.lock"));
        let o = bin()
            .env("PROCMODEL_SIMD", level)
            .args(["lock", s(&noisy), "-o", s(&q)])
            .output()
            .unwrap();
        if !o.status.success() {
            assert!(
                stderr(&o).contains("is not available on this cpu"),
                "PROCMODEL_SIMD={level}: {}",
                stderr(&o)
            );
            continue;
        }
        ran += 1;
        assert_eq!(
            std::fs::read_to_string(&q).unwrap(),
            want,
            "PROCMODEL_SIMD={level}"
        );
        ok(bin()
            .env("PROCMODEL_SIMD", level)
            .args(["lock", s(&scene), "-o", s(&p)])
            .output()
            .unwrap());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            a,
            "PROCMODEL_SIMD={level}"
        );
    }
    assert!(ran >= 2, "scalar and sse2 run on every x86-64 CPU");
    // A name the noise crate does not know is an error, not a silent fallback.
    let o = bin()
        .env("PROCMODEL_SIMD", "sse41")
        .args(["lock", s(&noisy), "-o", s(&tmp("noise-bad.lock"))])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("PROCMODEL_SIMD must be"),
        "{}",
        stderr(&o)
    );
}

/// Noise grids as parts (the fixture `scripts/determinism.sh` uses too).
const NOISE_GRID: &str = include_str!("fixtures/NoiseGrid.luau");

/// A generator that makes nested ProceduralModels (the Rojo city's towers, whose Generator is
/// a module outside the results) is cached like any other: a second process over the saved
/// place finds every model's results in place and keeps them, and saves a fresh run's bytes.
#[test]
fn r14_5_nested_generators_are_cached_and_kept_across_processes() {
    let city = examples().join("rojo-city");
    let cache = tmp("city-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let first = tmp("city.rbxl");
    let regen = |scene: &Path, out: &Path, cached: bool| {
        let mut c = bin();
        c.arg("regen").arg(scene).args(["--json", "-o"]).arg(out);
        if scene != city.as_path() {
            c.arg("--force");
        }
        match cached {
            true => c.arg("--cache").arg(&cache),
            false => c.arg("--no-cache"),
        };
        json(&ok(c.output().unwrap()))
    };
    let v = regen(&city, &first, true);
    let models = v["models"].as_array().unwrap().len();
    assert!(models > 1, "{v}");
    assert_eq!(v["cache"]["stored"], models, "every model stored: {v}");
    let again = tmp("city-again.rbxl");
    // The saved place's record names the towers' results intact: kept, no entry read. The
    // city's own record was dropped when its towers generated inside it, so its entry is
    // read and its results are checked in place: kept too.
    let v = regen(&first, &again, true);
    assert_eq!(
        (&v["cache"]["hits"], &v["cache"]["kept"]),
        (&1.into(), &models.into()),
        "{v}"
    );
    let fresh = tmp("city-fresh.rbxl");
    regen(&first, &fresh, false);
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&fresh).unwrap()
    );
}

/// A model whose results hold a nested model that fills in its own default attributes when
/// it generates: its recorded content hash is of its results as the step leaves them, so a
/// freshly generated scene is fresh (it read "results edited since they were generated").
#[test]
fn r14_4_results_with_a_nested_model_filling_its_defaults_are_fresh() {
    const NEST: &str = r#"
local ss = game:GetService("ServerStorage")
local inner = Instance.new("ModuleScript")
inner.Name = "Inner"
inner.Source = [[
return { Attributes = { Height = 2 }, OnGenerate = function(params, target)
    local p = Instance.new("Part")
    p.Size = Vector3.new(1, params.Attributes.Height, 1)
    p.Parent = target
end }
]]
inner.Parent = ss
local outer = Instance.new("ModuleScript")
outer.Name = "Outer"
outer.Source = [[
return { OnGenerate = function(params, target)
    local m = Instance.new("ProceduralModel")
    m.Name = "Nested"
    m.Generator = game.ServerStorage.Inner
    m.Parent = target
end }
]]
outer.Parent = ss
local a = Instance.new("ProceduralModel")
a.Name = "A"
a.Generator = outer
a.Parent = workspace
"#;
    let scene = tmp("nest.rbxl");
    let sc = script("nest.luau", NEST);
    ok(bin()
        .args(["run", s(&sc), "--save", s(&scene)])
        .output()
        .unwrap());
    let v = json(&ok(bin()
        .args(["status", s(&scene), "--json"])
        .output()
        .unwrap()));
    let statuses: Vec<(String, String)> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["model"].as_str().unwrap().to_owned(),
                m["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), 2, "{v}");
    assert!(statuses.iter().all(|(_, st)| st == "fresh"), "{statuses:?}");
}

/// A place a script built and saved with `run --save` records its intact results, as a
/// `regen` save does: `regen --force` of it in a new process keeps every model's results
/// without reading an entry, and gives the bytes a run without the cache gives.
#[test]
fn a_place_saved_by_run_keeps_its_results_in_the_next_regen() {
    let cache = tmp("run-save-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let script = tmp("run-save-build.luau");
    std::fs::write(
        &script,
        "local gen = Instance.new('ModuleScript')\n\
         gen.Name = 'Tower'\n\
         gen.Source = [[return { Attributes = { Floors = 3 }, OnGenerate = function(params, target)\n\
           for i = 1, params.Attributes.Floors do local p = Instance.new('Part') p.Name = 'F' .. i p.Position = Vector3.new(0, i * 2, 0) p.Parent = target end\n\
         end }]]\n\
         gen.Parent = game:GetService('ServerStorage')\n\
         for i = 1, 3 do\n\
           local m = Instance.new('ProceduralModel') m.Name = 'Tower' .. i m.Generator = gen\n\
           m:SetAttribute('Floors', i + 1) m.Parent = workspace\n\
         end\n",
    )
    .unwrap();
    let place = tmp("run-save-place.rbxl");
    ok(bin()
        .args(["run", s(&script), "--cache", s(&cache), "--save", s(&place)])
        .output()
        .unwrap());
    let out = tmp("run-save-regen.rbxl");
    let v = json(&ok(bin()
        .args([
            "regen",
            s(&place),
            "--force",
            "--json",
            "--cache",
            s(&cache),
            "-o",
            s(&out),
        ])
        .output()
        .unwrap()));
    assert_eq!(
        (&v["cache"]["hits"], &v["cache"]["kept"]),
        (&0.into(), &3.into()),
        "{v}"
    );
    let fresh = tmp("run-save-fresh.rbxl");
    ok(bin()
        .args(["regen", s(&place), "--force", "--no-cache", "-o", s(&fresh)])
        .output()
        .unwrap());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap());
}

/// `text` edited as someone who knows the documented checksum rule would: the change
/// made, the checksum recomputed.
fn resealed(text: &str, edit: impl FnOnce(&mut procmodel_lock::Lockfile)) -> String {
    let mut lock: procmodel_lock::Lockfile = toml::from_str(text).unwrap();
    edit(&mut lock);
    lock.checksum = lock.seal().unwrap();
    toml::to_string(&lock).unwrap()
}

/// An input of a lock entry by name.
fn input<'a>(
    m: &'a mut procmodel_lock::ModelLock,
    name: &str,
) -> &'a mut procmodel_lock::InputLock {
    m.inputs.iter_mut().find(|i| i.name == name).unwrap()
}

/// Verifies `text` written to `name`: refused (exit 1), nothing reported as matching, the
/// error containing `expect`.
fn refused(name: &str, text: &str, expect: &str) {
    let p = tmp(name);
    std::fs::write(&p, text).unwrap();
    let o = verify(&p);
    assert_eq!(o.status.code(), Some(1), "{name}: {}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains(expect), "{name}: {err}");
    assert!(!stdout(&o).contains("match"), "{name}: {}", stdout(&o));
}

/// Bug fixed: values written in a lockfile (an attribute's value or type, Size,
/// Scale) edited with the checksum recomputed verified as "all models match": verify
/// compared only the digests beside them. Now an entry whose written values are not the
/// ones its digests were made from is refused naming the model and the input, and values
/// edited together with their digests are compared with the regenerated ones.
#[test]
fn verify_checks_the_values_written_in_the_lockfile() {
    let scene = make_scene("written.rbxl");
    let lockfile = tmp("written.lock");
    ok(lock(&scene, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    let row1 = "model Workspace.Row1: ";
    refused(
        "w-value.lock",
        &resealed(&text, |l| {
            input(&mut l.models[0], "attr.Count").value = Some(r#"{"Float64":8.0}"#.into())
        }),
        &format!(
            "{row1}input attr.Count: the value written (Float64 8.0) is not the one its digest was made from: the lockfile was edited"
        ),
    );
    refused(
        "w-type.lock",
        &resealed(&text, |l| {
            input(&mut l.models[0], "attr.Count").ty = Some("Bogus".into())
        }),
        &format!(
            "{row1}input attr.Count: type Bogus is not the type of the value written (Float64)"
        ),
    );
    refused(
        "w-size.lock",
        &resealed(&text, |l| l.models[0].size = [91.0, 40.0, 90.0]),
        &format!("{row1}input size: the value written ([91.0, 40.0, 90.0] at scale 1)"),
    );
    refused(
        "w-scale.lock",
        &resealed(&text, |l| l.models[0].scale = -1.0),
        &format!("{row1}scale -1 is not a positive number"),
    );
    refused(
        "w-nan.lock",
        &resealed(&text, |l| l.models[0].scale = f64::NAN),
        &format!("{row1}scale NaN is not a positive number"),
    );
    // A value edited with its digest: compared with the regenerated one.
    let p = tmp("w-digest.lock");
    std::fs::write(
        &p,
        resealed(&text, |l| {
            let i = input(&mut l.models[0], "attr.Count");
            let nine = rbx_types::Variant::Float64(9.0);
            i.value = Some(serde_json::to_string(&nine).unwrap());
            i.digest = procmodel_dom::hash::to_hex(&procmodel_dom::hash::value_digest(&nine));
        }),
    )
    .unwrap();
    let o = verify(&p);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains(
            "MISMATCH  Workspace.Row1: input attr.Count differs: locked Float64 9.0, now Float64 3.0"
        ),
        "{}",
        stdout(&o)
    );
    // Size and Scale edited together digest alike (the generator is given Size ÷ Scale):
    // the written values are compared too.
    let p = tmp("w-scaled.lock");
    std::fs::write(
        &p,
        resealed(&text, |l| {
            l.models[2].size = [10.0; 3];
            l.models[2].scale = 1.0;
        }),
    )
    .unwrap();
    let o = verify(&p);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains(
            "MISMATCH  Workspace.Tower: input size differs: locked [10.0, 10.0, 10.0] at scale 1, now [20.0, 20.0, 20.0] at scale 2"
        ),
        "{}",
        stdout(&o)
    );
    // The instance count is compared too.
    let p = tmp("w-count.lock");
    std::fs::write(&p, resealed(&text, |l| l.models[0].instances += 1)).unwrap();
    let o = verify(&p);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("MISMATCH  Workspace.Row1: results differ: 3 instances, locked 4"),
        "{}",
        stdout(&o)
    );
    // Untouched, it still matches.
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 3 models match"), "{}", stdout(&o));
}

/// Bug fixed: a generator's lockfile with a value edited (checksum recomputed)
/// reported `locked Float64 3.0, now Float64 3.0` (verify regenerates from the values
/// written, then showed the edited value on both sides). The edited entry is refused naming
/// the input and the value written; no message shows one value as both sides.
#[test]
fn an_edited_generator_lockfile_names_the_edited_value() {
    let gdir = tmp("gen-edit");
    std::fs::create_dir_all(&gdir).unwrap();
    let g = gdir.join("T.luau");
    std::fs::copy(examples().join("TableWithChairs.luau"), &g).unwrap();
    let label = gdir.join("Label.luau");
    std::fs::write(
        &label,
        r#"return {
    Attributes = { Label = "x" },
    OnGenerate = function(params, target)
        local p = Instance.new("Part")
        p.Name = params.Attributes.Label
        p.Parent = target
    end,
}
"#,
    )
    .unwrap();
    let lockfile = gdir.join("t.lock");
    ok(lock(&g, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    let model = "model Workspace.T: ";
    let spacing = |l: &mut procmodel_lock::Lockfile| {
        input(&mut l.models[0], "attr.ChairSpacing")
            .value
            .clone()
            .unwrap()
    };
    let was = spacing(&mut toml::from_str(&text).unwrap());
    let other = if was.contains("2.0") { 3.0 } else { 2.0 };
    let edited = resealed(&text, |l| {
        input(&mut l.models[0], "attr.ChairSpacing").value =
            Some(format!(r#"{{"Float64":{other:?}}}"#))
    });
    let p = gdir.join("t-value.lock");
    std::fs::write(&p, &edited).unwrap();
    let o = verify(&p);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{model}input attr.ChairSpacing: the value written (Float64 {other:?})"
        )),
        "{err}"
    );
    let same = format!("locked Float64 {other:?}, now Float64 {other:?}");
    assert!(!stdout(&o).contains(&same) && !err.contains(&same), "{err}");
    refused(
        "gen-edit/t-size.lock",
        &resealed(&text, |l| l.models[0].size = [12.0, 4.0, 12.0]),
        &format!("{model}input size: the value written ([12.0, 4.0, 12.0] at scale 1)"),
    );
    let lockfile = gdir.join("label.lock");
    ok(lock(&label, &lockfile, &[]));
    let text = std::fs::read_to_string(&lockfile).unwrap();
    refused(
        "gen-edit/label-type.lock",
        &resealed(&text, |l| {
            input(&mut l.models[0], "attr.Label").ty = Some("Float64".into())
        }),
        "model Workspace.Label: input attr.Label: type Float64 is not the type of the value written (String)",
    );
}

/// Bug fixed: `lock ut/sc/T.luau -o ut/sc/sub/x.lock` wrote absolute paths (only
/// paths inside the lockfile's folder were made relative). Paths are relative to the
/// lockfile's folder with `..` where needed, so the folder can be moved or published; a
/// lockfile of an earlier version with absolute paths still verifies.
#[test]
fn lockfile_paths_are_relative_to_the_lockfile() {
    let root = tmp("rel");
    let _ = std::fs::remove_dir_all(&root);
    let sc = root.join("ut/sc");
    std::fs::create_dir_all(sc.join("sub")).unwrap();
    // (A module it requires is listed with it.)
    let table = std::fs::read_to_string(examples().join("TableWithChairs.luau")).unwrap();
    std::fs::write(
        sc.join("T.luau"),
        format!("local _ = require(\"./Util\")\n{table}"),
    )
    .unwrap();
    std::fs::write(sc.join("Util.luau"), "return 1\n").unwrap();
    // As a user types it: paths relative to the working folder.
    let o = bin()
        .current_dir(&root)
        .args(["lock", "ut/sc/T.luau", "-o", "ut/sc/sub/x.lock"])
        .output()
        .unwrap();
    ok(o);
    let text = std::fs::read_to_string(sc.join("sub/x.lock")).unwrap();
    let paths: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("path = \"") && l.contains(".luau"))
        .collect();
    assert_eq!(
        paths,
        [
            "path = \"../T.luau\"",
            "path = \"../T.luau\"",
            "path = \"../Util.luau\""
        ],
        "{text}"
    );
    assert!(!text.contains(s(&root)), "{text}");
    // Published elsewhere, the folder still verifies.
    let moved = tmp("rel-moved");
    let _ = std::fs::remove_dir_all(&moved);
    std::fs::rename(&root, &moved).unwrap();
    let lockfile = moved.join("ut/sc/sub/x.lock");
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
    // A lockfile beside the generator, and one in a sibling folder.
    let sib = moved.join("ut/other");
    std::fs::create_dir_all(&sib).unwrap();
    ok(lock(&moved.join("ut/sc/T.luau"), &sib.join("y.lock"), &[]));
    let y = std::fs::read_to_string(sib.join("y.lock")).unwrap();
    assert!(y.contains("path = \"../sc/T.luau\""), "{y}");
    ok(verify(&sib.join("y.lock")));
    // Absolute paths (as earlier versions wrote them) still verify.
    let abs = resealed(&text, |l| {
        let dir = moved.join("ut/sc").canonicalize().unwrap();
        l.source.path = s(&dir.join("T.luau")).to_owned();
        for f in &mut l.files {
            f.path = s(&dir.join(f.path.trim_start_matches("../"))).to_owned();
        }
    });
    std::fs::write(&lockfile, abs).unwrap();
    let o = ok(verify(&lockfile));
    assert!(stdout(&o).contains("all 1 models match"), "{}", stdout(&o));
}

/// Bug fixed: an intact cache entry copied over another key's file name was used
/// for that key (`generate --size 12,12,12` gave the 20,12,20 results). It is reported as
/// corrupt, removed and the model generated: the results are the fresh run's.
#[test]
fn a_cache_entry_under_another_keys_name_is_not_used() {
    let cave = examples().join("Cave.luau");
    let cache = tmp("wrong-key-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let entries = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let generate = |size: &str, cached: bool| {
        let mut c = bin();
        c.args(["generate", s(&cave), "--size", size, "--json", "-o"])
            .arg(tmp("wrong-key.rbxm"));
        match cached {
            true => c.arg("--cache").arg(&cache),
            false => c.arg("--no-cache"),
        };
        let o = ok(c.output().unwrap());
        (
            json(&o)["content_hash"].as_str().unwrap().to_owned(),
            stderr(&o),
        )
    };
    let (big, _) = generate("20,12,20", true);
    let big_entries = entries();
    let (small, _) = generate("12,12,12", true);
    assert_ne!(big, small);
    let small_entries: Vec<PathBuf> = entries()
        .into_iter()
        .filter(|e| !big_entries.contains(e))
        .collect();
    assert!(!small_entries.is_empty());
    for e in &small_entries {
        std::fs::copy(&big_entries[0], e).unwrap();
    }
    let (again, err) = generate("12,12,12", true);
    assert!(
        err.contains("is corrupt (stored under key") && err.contains("ignored and removed"),
        "{err}"
    );
    assert_eq!(again, small, "the 12,12,12 results, not the 20,12,20 ones");
    assert_eq!(generate("12,12,12", false).0, small);
    // Stored again under its own key: a hit with no warning.
    let (hit, err) = generate("12,12,12", true);
    assert_eq!(hit, small);
    assert!(!err.contains("corrupt"), "{err}");
}

/// `lock -o` naming the generator or scene it reads is refused and the input kept: before,
/// the lockfile replaced the generator's source (or the scene) and the command succeeded.
#[test]
fn a_lockfile_never_replaces_its_input() {
    let dir = tmp("lock-over-input");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let g = dir.join("T.luau");
    std::fs::copy(examples().join("TableWithChairs.luau"), &g).unwrap();
    let before = std::fs::read(&g).unwrap();
    let o = bin()
        .arg("lock")
        .arg(&g)
        .arg("-o")
        .arg(dir.join(".").join("T.luau"))
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the generator this command reads"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&g).unwrap(), before);
}

/// A Rojo project is a scene to every command that reads one: `status` lists its models,
/// `lock` and `verify` regenerate them from the project's files (and verify notices an
/// edited source), `plan` lists its work units.
#[test]
fn a_rojo_project_is_a_scene_to_status_lock_verify_and_plan() {
    let src = examples().join("rojo-city");
    let city = tmp("rojo-city-lock");
    let _ = std::fs::remove_dir_all(&city);
    copy_dir(&src, &city);
    let project = city.join("default.project.json");
    let o = ok(bin()
        .arg("status")
        .arg(&project)
        .arg("--json")
        .output()
        .unwrap());
    let v = json(&o);
    assert_eq!(v["models"][0]["model"], "Workspace.City", "{v}");
    assert_eq!(v["models"][0]["status"], "never generated", "{v}");
    let lockfile = tmp("rojo-city.lock");
    let o = ok(lock(&project, &lockfile, &[]));
    assert!(
        stderr(&o).contains("the project's files do not hold"),
        "{}",
        stderr(&o)
    );
    let o = ok(verify(&lockfile));
    assert!(String::from_utf8_lossy(&o.stdout).contains("models match"));
    let plan = ok(bin().arg("plan").arg(&project).output().unwrap());
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("Workspace.City"),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
    // An edited generator in the project is caught.
    let util = city.join("src/generators/City/Tower.luau");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replacen("local", "local _edited = 1\nlocal", 1)).unwrap();
    let o = verify(&lockfile);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    // The finding names the module and its file in the project.
    assert!(
        out.contains(
            "Workspace.City.GeneratedFolder.Tower_1_1: input source of ServerStorage.Generators.City.Tower (src/generators/City/Tower.luau) differs"
        ),
        "{out}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A place Studio saved gives its instances UniqueIds. A generator that clones a template
/// from it (`Clone`, `Instance.fromExisting`) got copies whose colliding ids rbx_dom_weak
/// replaced with ones made from the clock: each regeneration wrote other bytes and `verify` of a fresh lockfile reported a
/// mismatch. Likewise a Rojo project linking one model file twice. Both are the same bytes
/// every run now, and the lockfile verifies.
#[test]
fn templates_carrying_unique_ids_give_the_same_bytes_every_run() {
    let dir = tmp("unique-ids");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("studio.rbxlx");
    std::fs::write(
        &scene,
        r#"<roblox version="4">
<Item class="Workspace" referent="RBX0">
<Properties><string name="Name">Workspace</string></Properties>
<Item class="ProceduralModel" referent="RBX3">
<Properties><string name="Name">Row</string><Ref name="Generator">RBX2</Ref>
<Vector3 name="Size"><X>12</X><Y>4</Y><Z>4</Z></Vector3><bool name="Dirty">true</bool></Properties>
</Item>
</Item>
<Item class="ServerStorage" referent="RBX1">
<Properties><string name="Name">ServerStorage</string></Properties>
<Item class="Part" referent="RBX4">
<Properties><string name="Name">Template</string>
<UniqueId name="UniqueId">0168cc43867d92b2cb04059b00000007</UniqueId></Properties>
</Item>
<Item class="ModuleScript" referent="RBX2">
<Properties><string name="Name">Gen</string><ProtectedString name="Source"><![CDATA[
local SS = game:GetService("ServerStorage")
return { Attributes = { N = 2 }, OnGenerate = function(p, t)
	for i = 1, p.Attributes.N do
		local c = if i == 1 then SS.Template:Clone() else Instance.fromExisting(SS.Template)
		c.Position = Vector3.new(i * 4, 0, 0)
		c.Parent = t
	end
end }
]]></ProtectedString></Properties>
</Item>
</Item>
</roblox>"#,
    )
    .unwrap();
    let regen = |input: &Path, out: &Path| {
        ok(bin()
            .arg("regen")
            .arg(input)
            .args(["--force", "--no-cache", "-o"])
            .arg(out)
            .output()
            .unwrap());
        std::fs::read(out).unwrap()
    };
    let first = regen(&scene, &dir.join("a.rbxlx"));
    let second = regen(&scene, &dir.join("b.rbxlx"));
    assert!(first == second, "two regenerations differ");
    let text = String::from_utf8(first).unwrap();
    assert_eq!(
        text.matches("<UniqueId").count(),
        1,
        "the template keeps its id, the copies carry none"
    );
    let lockfile = dir.join("procmodel.lock");
    ok(lock(&scene, &lockfile, &[]));
    let v = ok(verify(&lockfile));
    assert!(stdout(&v).contains("all 1 models match"), "{}", stdout(&v));

    // One model file linked twice into a project.
    std::fs::write(
        dir.join("rock.rbxmx"),
        r#"<roblox version="4"><Item class="Part" referent="RBX1"><Properties><string name="Name">Rock</string>
<UniqueId name="UniqueId">0168cc43867d92b2cb04059b00000009</UniqueId></Properties></Item></roblox>"#,
    )
    .unwrap();
    let project = dir.join("default.project.json");
    std::fs::write(
        &project,
        r#"{ "name": "rocks", "tree": { "$className": "DataModel", "Workspace": {
  "A": { "$path": "rock.rbxmx" }, "B": { "$path": "rock.rbxmx" } } } }"#,
    )
    .unwrap();
    let first = regen(&project, &dir.join("p1.rbxlx"));
    let second = regen(&project, &dir.join("p2.rbxlx"));
    assert!(first == second, "two builds of the project differ");
    assert_eq!(
        String::from_utf8(first)
            .unwrap()
            .matches("<UniqueId")
            .count(),
        1
    );
}

#[test]
fn a_scene_without_models_prints_a_note_not_an_empty_table() {
    let sc = script(
        "no-models.luau",
        "Instance.new(\"Part\").Parent = workspace\n",
    );
    let scene = tmp("no-models.rbxl");
    ok(bin()
        .args(["run", s(&sc), "--save", s(&scene)])
        .output()
        .unwrap());
    let o = ok(bin().args(["status", s(&scene)]).output().unwrap());
    assert_eq!(stdout(&o), "", "no table header without rows");
    assert!(
        stderr(&o).contains("holds no ProceduralModel"),
        "{}",
        stderr(&o)
    );
    let o = ok(bin().args(["regen", s(&scene)]).output().unwrap());
    assert_eq!(stdout(&o), "", "no table header without rows");
    assert!(
        stderr(&o).contains("0 regenerated, 0 failed"),
        "{}",
        stderr(&o)
    );
}
