//! Sharded bakes from the command line (issue 16): `plan`, `sweep`, `bake --shard`, `bake
//! --merge`. The contract: N shard processes side by side, then the merge, give the bytes of
//! one `regen --force` of the same input — for a scene and for a sweep; a shard killed with
//! SIGKILL leaves nothing a merge takes for complete; a duplicated shard is harmless; a
//! missing shard is named with its index. The S3 path runs against moto's server on loopback
//! (skipped, with a notice, only when `moto_server` is not installed). The deploy files parse.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// A scene of `models` + 1 models: two generators (one requiring a module), with `dup` two
/// models of one name (keys `#2`), one model
/// whose results hold a nested ProceduralModel, and a `Slow` attribute that makes a run busy
/// for that many hundred thousand loop turns (for the kill test).
fn scene_script(models: usize, slow_ms: u32, dup: bool) -> String {
    format!(
        r#"
local function module(name, source)
    local m = Instance.new("ModuleScript")
    m.Name = name
    m.Source = source
    m.Parent = game:GetService("ServerStorage")
    return m
end
-- Required when Row loads: the merge, whose scene has no results, finds Row's entries
-- through the bake's record of the modules they required.
module("Palette", "return {{ green = 0.3 }}")
local row = module("Row", [[
local Palette = require(game:GetService("ServerStorage").Palette)
return {{
    Attributes = {{ Count = 3, Seed = 1, Slow = 0 }},
    OnGenerate = function(params, target)
        local x = 0
        for i = 1, params.Attributes.Slow * 100000 do x = (x + i) % 7 end
        local rng = Random.new(params.Attributes.Seed)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = "P" .. i
            p.Anchored = true
            p.Color = Color3.new(rng:NextNumber(), Palette.green, 0.7)
            p.Size = Vector3.new(1, rng:NextNumber(1, 4), 1)
            p.Position = Vector3.new(i * 2, 0, 0)
            p.Parent = target
        end
    end,
}}
]])
local outer = module("Outer", [[
return {{
    OnGenerate = function(params, target)
        local base = Instance.new("Part")
        base.Name = "Base"
        base.Size = Vector3.new(8, 1, 8)
        base.Parent = target
        local inner = Instance.new("ProceduralModel")
        inner.Name = "Inner"
        inner.Generator = game:GetService("ServerStorage").Row
        inner:SetAttribute("Count", 2)
        inner.Parent = target
    end,
}}
]])
local town = Instance.new("Folder")
town.Name = "Town"
town.Parent = workspace
for i = 1, {models} do
    local m = Instance.new("ProceduralModel")
    m.Name = if {dup} and i == 2 then "Row1" else "Row" .. i
    m.Generator = row
    m:SetAttribute("Count", (i % 5) + 1)
    m:SetAttribute("Seed", i)
    m:SetAttribute("Slow", {slow_ms})
    m:PivotTo(CFrame.new(i * 20, 0, 0))
    m.Parent = town
end
local o = Instance.new("ProceduralModel")
o.Name = "Outer"
o.Generator = outer
o.Parent = workspace
"#
    )
}

fn make_scene(name: &str, models: usize, slow_ms: u32, dup: bool) -> PathBuf {
    let scene = tmp(name);
    let sc = tmp(&format!("{name}.luau"));
    std::fs::write(&sc, scene_script(models, slow_ms, dup)).unwrap();
    ok(bin()
        .args(["run", s(&sc), "--save", s(&scene)])
        .output()
        .unwrap());
    scene
}

/// The bytes of a one-process `regen --force` of `input`.
fn regen(input: &Path, name: &str) -> Vec<u8> {
    let out = tmp(name);
    ok(bin()
        .args(["regen", s(input), "--force", "--no-cache", "-o", s(&out)])
        .output()
        .unwrap());
    std::fs::read(&out).unwrap()
}

fn shard_cmd(input: &Path, shard: &str, out: &str) -> Command {
    let mut c = bin();
    c.args(["bake", s(input), "--shard", shard, "--out", out]);
    c
}

/// Runs shards `indices` of `count` as processes side by side.
fn bake_shards(input: &Path, count: u32, indices: &[u32], out: &str, env: &[(&str, String)]) {
    run_side_by_side(indices.iter().map(|i| {
        let mut c = shard_cmd(input, &format!("{i}/{count}"), out);
        c.envs(env.iter().map(|(k, v)| (k, v)));
        c
    }));
}

fn merge(out: &str, place: &Path, env: &[(&str, String)]) -> Output {
    bin()
        .args(["bake", "--merge", out, "-o", s(place)])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

#[test]
fn r16_scene_shards_side_by_side_merge_to_the_bytes_of_one_regen() {
    let scene = make_scene("town.rbxl", 11, 0, false);
    let expected = regen(&scene, "town-regen.rbxl");
    let plan = json(&ok(bin()
        .args(["plan", s(&scene), "--shards", "3", "--json"])
        .output()
        .unwrap()));
    assert_eq!(plan["count"], 12);
    let keys: Vec<&str> = plan["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"Workspace.Outer"));
    assert!(
        !keys.iter().any(|k| k.contains("Inner")),
        "nested models bake with their unit"
    );
    let per: u64 = plan["per_shard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(per, 12);

    let out = tmp("town-bake");
    bake_shards(&scene, 3, &[0, 1, 2], s(&out), &[]);
    let place = tmp("town-merged.rbxl");
    let o = ok(merge(s(&out), &place, &[]));
    let report = json(&o);
    assert_eq!(report["units"], 12);
    // Every unit hits, Outer too: its results refer to a generator module outside them,
    // which its entry holds by path; its nested model generates again after the decode.
    assert_eq!(report["regenerated"], serde_json::json!([]), "{report}");
    assert_eq!(report["cache_misses"], 0, "{report}");
    assert!(
        std::fs::read(&place).unwrap() == expected,
        "merged place differs from regen"
    );
    // The lockfile the merge wrote checks out against the merged place.
    let lock = place.with_extension("lock");
    let v = bin().args(["verify", s(&lock)]).output().unwrap();
    assert!(v.status.success(), "{}", stderr(&v));

    // A rerun of a shard is idempotent: the same manifest bytes.
    let m = out.join("manifests/shard-00001-of-00003.json");
    let before = std::fs::read(&m).unwrap();
    bake_shards(&scene, 3, &[1], s(&out), &[]);
    assert_eq!(std::fs::read(&m).unwrap(), before);

    // A tampered result file is caught by name.
    let results = out.join("results");
    let victim = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    let n = bytes.len() - 1;
    bytes[n] ^= 0xff;
    std::fs::write(&victim, &bytes).unwrap();
    let o = merge(s(&out), &tmp("town-tampered.rbxl"), &[]);
    assert!(!o.status.success());
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        stderr(&o).contains(&name) && stderr(&o).contains("corrupt"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp("town-tampered.rbxl").exists());
}

/// A Rojo project is baked as the place it builds: every shard stores the same input, and
/// the merge gives the bytes of one `regen` of the project.
#[test]
fn a_rojo_project_bakes_in_shards_to_the_bytes_of_one_regen() {
    let dir = tmp("rojo-bake");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let models: Vec<String> = (1..=5)
        .map(|i| {
            format!(
                r#""Row{i}": {{ "$className": "ProceduralModel",
                "$attributes": {{ "Rojo_Target_Generator": "row", "Count": {i}, "Seed": {i} }} }}"#
            )
        })
        .collect();
    let project = dir.join("default.project.json");
    std::fs::write(
        &project,
        format!(
            r#"{{ "name": "Rows", "tree": {{ "$className": "DataModel",
            "ServerStorage": {{ "Row": {{ "$path": "src/Row.luau", "$id": "row" }},
                "Palette": {{ "$path": "src/Palette.luau" }} }},
            "Workspace": {{ {} }} }} }}"#,
            models.join(",\n")
        ),
    )
    .unwrap();
    // The scene script's Row generator, as a file.
    let script = scene_script(1, 0, false);
    let row = script
        .split("[[")
        .nth(1)
        .and_then(|r| r.split("]]").next())
        .unwrap()
        .replace("{{", "{")
        .replace("}}", "}");
    std::fs::write(dir.join("src/Row.luau"), row).unwrap();
    std::fs::write(dir.join("src/Palette.luau"), "return { green = 0.3 }").unwrap();
    let expected = regen(&project, "rojo-regen.rbxl");
    // Row5 made five parts, P1 to P5 (names are stored as they are).
    assert!(
        expected.windows(2).any(|w| w == b"P5"),
        "the models generated"
    );
    let out = dir.join("bake");
    let out = s(&out);
    bake_shards(&project, 2, &[0, 1], out, &[]);
    let inputs: Vec<_> = std::fs::read_dir(dir.join("bake/input")).unwrap().collect();
    assert_eq!(inputs.len(), 1, "one input for both shards");
    let place = tmp("rojo-merged.rbxl");
    ok(merge(out, &place, &[]));
    assert!(
        std::fs::read(&place).unwrap() == expected,
        "merge differs from regen"
    );
}

#[test]
fn r16_sweep_shards_merge_to_the_bytes_of_one_regen_with_a_summary() {
    let generator = tmp("SweepRow.luau");
    std::fs::write(
        &generator,
        r#"
return {
    Attributes = { Seed = 1, Floors = 2, Label = "Floor" },
    OnGenerate = function(params, target)
        local rng = Random.new(params.Attributes.Seed)
        for i = 1, params.Attributes.Floors do
            local p = Instance.new("Part")
            p.Name = params.Attributes.Label .. i
            p.Size = Vector3.new(rng:NextNumber(4, 10), 1, 6)
            p.Position = Vector3.new(0, i * 3, 0)
            p.Parent = target
        end
    end,
}
"#,
    )
    .unwrap();
    let scene = tmp("sweep.rbxl");
    ok(bin()
        .args([
            "sweep",
            s(&generator),
            "--attr",
            "Seed=1..5",
            "--attr",
            "Floors=2,4",
        ])
        .args(["-o", s(&scene)])
        .output()
        .unwrap());
    let plan = json(&ok(bin()
        .args(["plan", s(&scene), "--json"])
        .output()
        .unwrap()));
    assert_eq!(plan["kind"], "sweep");
    assert_eq!(plan["count"], 10);
    let expected = regen(&scene, "sweep-regen.rbxl");
    // The variants are saved dirty: a plain `regen` (no --force) generates them all.
    let plain = tmp("sweep-plain.rbxl");
    let o = ok(bin()
        .args(["regen", s(&scene), "--no-cache", "-o", s(&plain)])
        .output()
        .unwrap());
    assert!(
        stderr(&o).contains("10 regenerated, 0 failed"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read(&plain).unwrap() == expected,
        "a plain regen of the sweep differs from regen --force"
    );
    let out = tmp("sweep-bake");
    bake_shards(&scene, 2, &[0, 1], s(&out), &[]);
    let place = tmp("sweep-merged.rbxl");
    let report = json(&ok(merge(s(&out), &place, &[])));
    assert!(
        std::fs::read(&place).unwrap() == expected,
        "merged sweep differs from regen"
    );
    // The merge's lockfile checks out against the merged place: its string attribute, locked
    // from memory, is the one read back from the file (rbx_types reads a BinaryString).
    let v = bin()
        .args(["verify", s(&place.with_extension("lock"))])
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", stderr(&v));
    let summary_path = report["summary"].as_str().unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(summary_path).unwrap()).unwrap();
    assert_eq!(summary["variants"], 10);
    assert_eq!(summary["failures"], 0);
    let inst = &summary["distribution"]["instances"];
    assert_eq!(inst["min"], 2.0);
    assert_eq!(inst["max"], 4.0);
    assert_eq!(inst["mean"], 3.0);
    let rows = summary["per_variant"].as_array().unwrap();
    assert_eq!(rows[0]["attributes"]["Seed"], 1.0);
    assert_eq!(rows[0]["attributes"]["Floors"], 2.0);
    assert_eq!(rows[0]["content_hash"].as_str().unwrap().len(), 64);
    assert!(rows[0]["bounding_box"]["size"].is_array());
    // `--grid 3`: the variants side by side, 12 + 3 studs apart, two columns for four.
    let grid = tmp("sweep-grid.rbxl");
    ok(bin()
        .args(["sweep", s(&generator), "--attr", "Seed=1..4", "--grid", "3"])
        .args(["-o", s(&grid)])
        .output()
        .unwrap());
    let out = tmp("sweep-grid-bake");
    bake_shards(&grid, 1, &[0], s(&out), &[]);
    let report = json(&ok(merge(s(&out), &tmp("sweep-grid-merged.rbxl"), &[])));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report["summary"].as_str().unwrap()).unwrap())
            .unwrap();
    let centres: Vec<(f64, f64)> = summary["per_variant"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let c = &r["bounding_box"]["center"];
            (c[0].as_f64().unwrap(), c[2].as_f64().unwrap())
        })
        .collect();
    assert_eq!(
        centres,
        [(0.0, 0.0), (15.0, 0.0), (0.0, 15.0), (15.0, 15.0)],
        "{centres:?}"
    );
    // A bad axis is named.
    let o = bin()
        .args([
            "sweep",
            s(&generator),
            "--attr",
            "Seed=1..x",
            "-o",
            s(&tmp("bad.rbxl")),
        ])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("Seed=1..x"),
        "{}",
        stderr(&o)
    );
    // A misspelt attribute or a value of the wrong type is named before the sweep is
    // counted: before, a large sweep was refused for its size, hiding the typo.
    for (attrs, want) in [
        (
            ["Sede=1..2000", "Seed=1..1000"],
            "--attr Sede: the generator has no attribute 'Sede'",
        ),
        (["Seed=1..2000", "Seed=1..1000"], "--attr Seed: swept twice"),
        (["Seed=1..2000", "Seed=a,b"], "attribute Seed"),
    ] {
        let o = bin()
            .args([
                "sweep",
                s(&generator),
                "--attr",
                attrs[0],
                "--attr",
                attrs[1],
            ])
            .args(["-o", s(&tmp("bad.rbxl"))])
            .output()
            .unwrap();
        assert!(
            !o.status.success() && stderr(&o).contains(want),
            "{attrs:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn r16_killed_shard_leaves_no_manifest_and_a_rerun_completes() {
    let scene = make_scene("slow.rbxl", 7, 150, false);
    let out = tmp("slow-bake");
    // Shard 0 of 1 owns every unit: kill it after its first unit.
    let child = shard_cmd(&scene, "0/1", s(&out))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // SIGKILL after its first unit: nothing runs after it.
    kill_after_first_unit(child);
    assert!(!out.join("manifests/shard-00000-of-00001.json").exists());
    let o = merge(s(&out), &tmp("slow-merged.rbxl"), &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no shard manifests"), "{}", stderr(&o));
    // The rerun completes over what the killed one left.
    bake_shards(&scene, 1, &[0], s(&out), &[]);
    let place = tmp("slow-merged.rbxl");
    ok(merge(s(&out), &place, &[]));
    assert!(std::fs::read(&place).unwrap() == regen(&scene, "slow-regen.rbxl"));
}

#[test]
fn r16_duplicated_shard_is_harmless_and_a_missing_shard_is_named() {
    let scene = make_scene("dup.rbxl", 9, 0, true);
    let plan = json(&ok(bin()
        .args(["plan", s(&scene), "--json"])
        .output()
        .unwrap()));
    let keys: Vec<&str> = plan["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"Workspace.Town.Row1#2"), "{keys:?}");
    let out = tmp("dup-bake");
    // Shard 1 twice at once (a scheduler's duplicate attempt), shard 3 missing.
    bake_shards(&scene, 4, &[0, 1, 1, 2], s(&out), &[]);
    let place = tmp("dup-merged.rbxl");
    let o = merge(s(&out), &place, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("rerun shard 3/4"), "{err}");
    assert!(err.contains("missing unit Workspace."), "{err}");
    assert!(!place.exists());
    bake_shards(&scene, 4, &[3], s(&out), &[]);
    // A stray second partition of the same input counts as duplicates, not a conflict.
    bake_shards(&scene, 2, &[0], s(&out), &[]);
    let report = json(&ok(merge(s(&out), &place, &[])));
    assert!(
        !report["duplicates"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert!(std::fs::read(&place).unwrap() == regen(&scene, "dup-regen.rbxl"));
}

#[test]
fn r16_bad_arguments_are_named() {
    let scene = make_scene("args.rbxl", 2, 0, false);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["bake", s(&scene), "--shard", "3/3", "--out", "x"],
            "not below",
        ),
        (vec!["bake", s(&scene), "--shard", "1/2"], "--out"),
        (vec!["bake", s(&scene), "--out", "x"], "--shard"),
        (
            vec!["bake", s(&scene), "--shard", "0/1", "--out", "ftp://h/x"],
            "ftp",
        ),
        (
            vec!["bake", "--merge", "/nonexistent-bake", "-o", "x.rbxl"],
            "no shard manifests",
        ),
        (vec!["bake", "--merge", "/nonexistent-bake"], "-o"),
        (vec!["plan", s(&scene), "--shards", "0"], "--shards 0"),
        // An unset variable in `--out "$OUT"` must not bake into the working directory.
        (
            vec!["bake", s(&scene), "--shard", "0/1", "--out", ""],
            "the bake location is empty",
        ),
        (
            vec!["bake", "--merge", " ", "-o", "x.rbxl"],
            "the bake location is empty",
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(&args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    // Many shards are summarised, not listed one by one (100000 shards printed 100000 numbers).
    let o = bin()
        .args(["plan", s(&scene), "--shards", "100"])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("3 units (columns: shard, size in instances when planned, then key) over 100 shards: 0 to 1 per shard, 97 with none"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["plan", s(&scene), "--shards", "3"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("per shard"), "{}", stderr(&o));
    // --shard auto reads the scheduler's variables.
    let out = tmp("auto-bake");
    let o = bin()
        .args(["bake", s(&scene), "--shard", "auto", "--out", s(&out)])
        .env("JOB_COMPLETION_INDEX", "1")
        .env("PROCMODEL_SHARDS", "2")
        .output()
        .unwrap();
    ok(o);
    assert!(out.join("manifests/shard-00001-of-00002.json").exists());
    let o = bin()
        .args(["bake", s(&scene), "--shard", "auto", "--out", s(&out)])
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("JOB_COMPLETION_INDEX"),
        "{}",
        stderr(&o)
    );
}

/// The merge never writes over its own outputs or into the bake it reads: before, `-o`
/// equal to `--lock` left the place replaced by the lockfile, and `-o` onto the bake's
/// stored input made the bake unusable. Nothing is written, and the bake still merges.
#[test]
fn r16_merge_outputs_that_collide_are_refused() {
    let scene = make_scene("collide.rbxl", 2, 0, false);
    let out = tmp("collide-bake");
    ok(shard_cmd(&scene, "0/1", s(&out)).output().unwrap());
    let stored: Vec<PathBuf> = std::fs::read_dir(out.join("input"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let before = std::fs::read(&stored[0]).unwrap();
    let same = tmp("collide-same.rbxl");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "bake",
                "--merge",
                s(&out),
                "-o",
                s(&same),
                "--lock",
                s(&same),
            ],
            "-o and --lock name the same file",
        ),
        (
            vec![
                "bake",
                "--merge",
                s(&out),
                "-o",
                s(&same),
                "--summary",
                s(&same),
            ],
            "-o and --summary name the same file",
        ),
        (
            vec!["bake", "--merge", s(&out), "-o", s(&stored[0])],
            "inside the bake",
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(&args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    assert!(!same.exists(), "nothing written");
    assert_eq!(
        std::fs::read(&stored[0]).unwrap(),
        before,
        "the bake's input kept"
    );
    ok(merge(s(&out), &tmp("collide-merged.rbxl"), &[]));
}

// ----- S3 against moto on loopback -----

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One plain HTTP request to the server on loopback; the status code.
fn http(port: u16, method: &str, path: &str) -> u16 {
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    let _ = c.read_to_string(&mut resp);
    resp.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn r16_s3_bake_against_moto_on_loopback() {
    let moto = Command::new("moto_server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !moto.is_ok_and(|s| s.success()) {
        println!(
            "notice: moto_server is not installed (pip install 'moto[server]'); S3 bake test skipped"
        );
        return;
    }
    let port = free_port();
    let _server = Moto(
        Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "moto_server did not start on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(http(port, "PUT", "/bake-bucket"), 200, "create bucket");
    let env = vec![
        ("AWS_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
        ("AWS_ACCESS_KEY_ID", "testing".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "testing".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ];
    let scene = make_scene("s3.rbxl", 5, 0, false);
    let url = "s3://bake-bucket/runs/town";
    bake_shards(&scene, 2, &[0, 1], url, &env);
    let place = tmp("s3-merged.rbxl");
    ok(merge(url, &place, &env));
    assert!(std::fs::read(&place).unwrap() == regen(&scene, "s3-regen.rbxl"));
    // The objects are under the URL's prefix, not beside it.
    let o = merge("s3://bake-bucket/runs", &tmp("s3-none.rbxl"), &env);
    assert!(stderr(&o).contains("no shard manifests"), "{}", stderr(&o));
    // A missing shard is named over S3 too.
    let url2 = "s3://bake-bucket/runs/partial";
    bake_shards(&scene, 2, &[1], url2, &env);
    let o = merge(url2, &tmp("s3-partial.rbxl"), &env);
    assert!(stderr(&o).contains("rerun shard 0/2"), "{}", stderr(&o));
}

// ----- deploy files -----

#[test]
fn r16_deploy_files_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let text = std::fs::read_to_string(root.join("kubernetes/bake-job.yaml")).unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    let job = docs
        .iter()
        .find(|d| d["kind"].as_str() == Some("Job"))
        .expect("a Job");
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["spec"]["completionMode"].as_str(), Some("Indexed"));
    let completions = job["spec"]["completions"].as_i64().unwrap();
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let env = container["env"].as_vec().unwrap();
    let shards = env
        .iter()
        .find(|e| e["name"].as_str() == Some("PROCMODEL_SHARDS"))
        .expect("PROCMODEL_SHARDS");
    assert_eq!(
        shards["value"].as_str(),
        Some(completions.to_string().as_str())
    );
    let args: Vec<&str> = container["args"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(
        args.contains(&"--shard") && args.contains(&"auto"),
        "{args:?}"
    );
    for script in ["slurm/bake.sbatch", "slurm/merge.sh"] {
        let o = Command::new("bash")
            .arg("-n")
            .arg(root.join(script))
            .output()
            .unwrap();
        assert!(o.status.success(), "{script}: {}", stderr(&o));
    }
    let docker = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    assert!(docker.matches("FROM ").count() >= 2, "multi-stage");
    assert!(docker.contains("cargo build --release -p procmodel"));
}

/// A generator file that requires a file beside it runs from the files, but a sweep scene
/// held its module alone, where `./Shape` did not resolve: every variant failed in the
/// bake, and the shard's log and the merge said only `"ok": false` and the unit's name. The
/// sweep scene now holds the module it required beside the generator (so the bake succeeds),
/// a `.luaurc` alias, which no scene resolves, is warned about, pack says how to lay such a
/// generator out, and a failed unit's error is in the shard's event and on the merge's
/// stderr.
#[test]
fn a_generator_split_over_files_sweeps_and_bakes_and_failures_say_why() {
    let dir = tmp("split-gen");
    std::fs::create_dir_all(dir.join("Tower")).unwrap();
    let body = |req: &str| {
        format!(
            r#"local Shape = require("{req}")
return {{ Attributes = {{ Seed = 1 }}, OnGenerate = function(params, target)
    local p = Instance.new("Part")
    p.Size = Shape.size(params.Attributes.Seed)
    p.Parent = target
end }}
"#
        )
    };
    let shape = "return { size = function(n) return Vector3.new(n, 1, 1) end }";
    std::fs::write(dir.join("Split.luau"), body("./Shape")).unwrap();
    std::fs::write(dir.join("Shape.luau"), shape).unwrap();
    std::fs::write(dir.join("Tower/init.luau"), body("@self/Shape")).unwrap();
    std::fs::write(dir.join("Tower/Shape.luau"), shape).unwrap();
    let sweep = |generator: &str, out: &str| {
        bin()
            .args([
                "sweep",
                s(&dir.join(generator)),
                "--attr",
                "Seed=1..2",
                "-o",
            ])
            .arg(dir.join(out))
            .output()
            .unwrap()
    };
    let o = ok(sweep("Split.luau", "split.rbxl"));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let out = dir.join("split-bake");
    let o = ok(shard_cmd(&dir.join("split.rbxl"), "0/1", s(&out))
        .output()
        .unwrap());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(r#""failed":0"#),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // An alias is named: the scene cannot resolve it.
    std::fs::write(dir.join(".luaurc"), r#"{ "aliases": { "shapes": "." } }"#).unwrap();
    std::fs::write(dir.join("Aliased.luau"), body("@shapes/Shape")).unwrap();
    let o = ok(sweep("Aliased.luau", "aliased.rbxl"));
    assert!(
        stderr(&o).contains("requires '@shapes/Shape' through a .luaurc alias"),
        "{}",
        stderr(&o)
    );
    // pack holds the module around the generator too: the package regenerates to its
    // own bytes; an alias is named.
    pack_regenerating_to_its_bytes(&dir.join("Split.luau"), &dir.join("split.rbxm"));
    let o = bin()
        .args(["pack", s(&dir.join("Aliased.luau")), "-o"])
        .arg(dir.join("aliased.rbxm"))
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("a .luaurc alias means nothing there"),
        "{}",
        stderr(&o)
    );
    // The module folder sweeps, and bakes with no failure.
    ok(sweep("Tower", "tower.rbxl"));
    let out = dir.join("tower-bake");
    let o = ok(shard_cmd(&dir.join("tower.rbxl"), "0/1", s(&out))
        .output()
        .unwrap());
    assert!(String::from_utf8_lossy(&o.stdout).contains(r#""failed":0"#));
    // A unit that fails says why: a sweep of a generator that errors for Seed 2.
    std::fs::write(
        dir.join("Tower/Shape.luau"),
        r#"return { size = function(n) if n == 2 then error("no tower of seed 2") end return Vector3.new(n, 1, 1) end }"#,
    )
    .unwrap();
    ok(sweep("Tower", "failing.rbxl"));
    let out = dir.join("failing-bake");
    let o = ok(shard_cmd(&dir.join("failing.rbxl"), "0/1", s(&out))
        .output()
        .unwrap());
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let failed: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "unit" && e["ok"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no tower of seed 2")),
        "{:?}",
        failed[0]
    );
    let o = merge(s(&out), &dir.join("failing-merged.rbxl"), &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("error: Workspace.Sweep.Tower_0001: ") && err.contains("no tower of seed 2"),
        "{err}"
    );
}
