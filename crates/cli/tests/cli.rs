//! CLI integration tests: one binary, many small cases.

mod common;

use common::{glb_json, glb_texture, s};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test, with its own result cache (never the user's).
fn bin() -> Command {
    common::bin()
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn tmp(name: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch("cli");
    dir.join(name)
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "command failed: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// Writes `source` to a script file and runs it with `procmodel run ... --save <save>`.
fn run_and_save(script_name: &str, source: &str, save: &str) -> PathBuf {
    let script = tmp(script_name);
    std::fs::write(&script, source).unwrap();
    let saved = tmp(save);
    ok(bin()
        .args([
            "run",
            script.to_str().unwrap(),
            "--save",
            saved.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    saved
}

/// As [`run_and_save`] for a script whose models fail: `run` saves the place, reports the
/// failures and exits non-zero.
fn run_and_save_failing(script_name: &str, source: &str, save: &str) -> PathBuf {
    let script = tmp(script_name);
    std::fs::write(&script, source).unwrap();
    let saved = tmp(save);
    let out = bin()
        .args(["run", script.to_str().unwrap(), "--save"])
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "failed models make run exit non-zero"
    );
    assert!(saved.is_file(), "the place is saved all the same");
    saved
}

fn generate(args: &[&str]) -> Output {
    bin().arg("generate").args(args).output().unwrap()
}

fn read_rbxm(path: &Path) -> rbx_dom_weak::WeakDom {
    rbx_binary::from_reader(std::fs::File::open(path).unwrap()).unwrap()
}

fn count_named(dom: &rbx_dom_weak::WeakDom, prefix: &str) -> usize {
    dom.descendants()
        .filter(|i| i.name.starts_with(prefix) && i.class == "Part")
        .count()
}

#[test]
fn staircase_step_count_follows_step_size() {
    let stairs = examples().join("SpiralStaircase.luau");
    let out1 = tmp("stairs1.rbxm");
    ok(generate(&[
        stairs.to_str().unwrap(),
        "--size",
        "12,20,12",
        "-o",
        out1.to_str().unwrap(),
    ]));
    assert_eq!(count_named(&read_rbxm(&out1), "Step"), 20);
    let out2 = tmp("stairs2.rbxm");
    ok(generate(&[
        stairs.to_str().unwrap(),
        "--size",
        "12,20,12",
        "--attr",
        "StepSize=0.5",
        "-o",
        out2.to_str().unwrap(),
    ]));
    assert_eq!(count_named(&read_rbxm(&out2), "Step"), 40);
}

#[test]
fn table_adds_chairs_as_it_grows() {
    let table = examples().join("TableWithChairs.luau");
    let chairs = |size: &str| {
        let out = tmp(&format!("table-{size}.rbxm"));
        ok(generate(&[
            table.to_str().unwrap(),
            "--size",
            size,
            "-o",
            out.to_str().unwrap(),
        ]));
        let dom = read_rbxm(&out);
        dom.descendants()
            .filter(|i| i.name == "Chair" && i.class == "Model")
            .count()
    };
    assert_eq!(chairs("6,4,3"), 2 * 2 + 2);
    assert_eq!(chairs("12,4,6"), 2 * 4 + 2 * 2);
}

#[test]
fn output_is_byte_identical_across_runs() {
    let stairs = examples().join("SpiralStaircase.luau");
    for ext in ["rbxm", "rbxmx"] {
        let a = tmp(&format!("det-a.{ext}"));
        let b = tmp(&format!("det-b.{ext}"));
        ok(generate(&[
            stairs.to_str().unwrap(),
            "-o",
            a.to_str().unwrap(),
        ]));
        ok(generate(&[
            stairs.to_str().unwrap(),
            "-o",
            b.to_str().unwrap(),
        ]));
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{ext} differs between runs"
        );
    }
}

#[test]
fn json_summary_reports_instances_and_hash() {
    let stairs = examples().join("SpiralStaircase.luau");
    let out = tmp("summary.rbxm");
    let o = ok(generate(&[
        stairs.to_str().unwrap(),
        "--size",
        "12,10,12",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // pole + folder + 10 steps + 10 posts
    assert_eq!(v["instances"], 22);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(v["blake3"], blake3::hash(&bytes).to_hex().to_string());
}

#[test]
fn bad_attribute_value_lists_expected_type() {
    let stairs = examples().join("SpiralStaircase.luau");
    let out = tmp("bad.rbxm");
    let o = generate(&[
        stairs.to_str().unwrap(),
        "--attr",
        "StepSize=tall",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("attribute StepSize") && err.contains("number"),
        "{err}"
    );
    let o = generate(&[
        stairs.to_str().unwrap(),
        "--attr",
        "Nope=1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("StepSize"),
        "lists known attributes"
    );
    let o = generate(&[
        stairs.to_str().unwrap(),
        "--attr",
        "StepColor=1,2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("R,G,B"));
}

#[test]
fn unwritable_output_and_unknown_format_fail_cleanly() {
    let stairs = examples().join("SpiralStaircase.luau");
    let o = generate(&[stairs.to_str().unwrap(), "-o", "/nonexistent-dir/x.rbxm"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent-dir/x.rbxm"));
    let o = generate(&[stairs.to_str().unwrap(), "-o", "x.fbx"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown output format"));
    // No extension at all (it said "unknown output format '.'").
    let o = generate(&[stairs.to_str().unwrap(), "-o", "/dev/null"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("/dev/null: the output format is the file's extension, and it has none"),
        "{e}"
    );
}

#[test]
fn an_error_object_without_a_message_saves_the_same_bytes_every_run() {
    // error() given a table: its text was the table's heap address, different every run,
    // and the error placeholder saved it.
    let script = r#"
local g = Instance.new("ModuleScript")
g.Name = "Gen"
g.Source = "return { Attributes = {}, OnGenerate = function(p, t) error({ code = 7 }) end }"
g.Parent = game:GetService("ServerStorage")
local pm = Instance.new("ProceduralModel")
pm.Generator = g
pm.Parent = workspace
"#;
    let a = run_and_save_failing("error_object.luau", script, "error_object_a.rbxlx");
    let b = run_and_save_failing("error_object.luau", script, "error_object_b.rbxlx");
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a == b, "same inputs, same bytes");
    let dom = rbx_xml::from_reader_default(&a[..]).unwrap();
    let placeholder = dom
        .descendants()
        .find(|i| i.name == "GenerationErrorPlaceholder")
        .unwrap();
    let error = match placeholder.properties.get(&"Attributes".into()) {
        Some(rbx_dom_weak::types::Variant::Attributes(a)) => match a.get("Error") {
            Some(rbx_dom_weak::types::Variant::String(s)) => s.clone(),
            Some(rbx_dom_weak::types::Variant::BinaryString(s)) => {
                String::from_utf8_lossy(s.as_ref()).into_owned()
            }
            other => panic!("Error attribute: {other:?}"),
        },
        other => panic!("Attributes: {other:?}"),
    };
    assert!(
        error.contains("was given a table, not a message") && !error.contains("0x"),
        "{error}"
    );
}

/// A set of parts keyed by the parts (`placed[part] = true`), walked with `pairs`: Luau
/// orders such a table by the instances' handle values, which depended on what the VM had
/// done before, so `--jobs 2` (another VM, another history) saved the parts in another order.
#[test]
fn instance_keyed_tables_iterate_the_same_on_every_vm() {
    let script = r#"
local g = Instance.new("ModuleScript")
g.Name = "Scatter"
g.Source = [==[
return { Attributes = { Count = 40 }, OnGenerate = function(params, target)
	local placed = {}
	for i = 1, params.Attributes.Count do
		local p = Instance.new("Part")
		p.Name = "Rock" .. i
		placed[p] = i
	end
	local order = 0
	for part, i in pairs(placed) do
		order += 1
		part.Position = Vector3.new(order, i, 0)
		part.Parent = target
	end
end }
]==]
g.Parent = game:GetService("ServerStorage")
for i = 1, 6 do
	local pm = Instance.new("ProceduralModel")
	pm.Name = "Field" .. i
	pm.Generator = g
	pm:SetAttribute("Count", 30 + i)
	pm.Parent = workspace
end
"#;
    let scene = run_and_save("scatter_scene.luau", script, "scatter_scene.rbxl");
    let regen = |jobs: &str, out: &str| {
        let out = tmp(out);
        ok(bin()
            .args([
                "regen",
                s(&scene),
                "--force",
                "--no-cache",
                "--jobs",
                jobs,
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap());
        std::fs::read(out).unwrap()
    };
    let one = regen("1", "scatter_1.rbxl");
    assert!(
        one == regen("2", "scatter_2.rbxl"),
        "--jobs 2 saves what --jobs 1 does"
    );
    assert!(one == regen("2", "scatter_3.rbxl"), "and again");
}

/// A generator in the common Roblox style of graph code: node tables, an A* open set keyed
/// by them, the first of equal candidates taken as `pairs` gives them, and garbage on the
/// way. Luau places table keys by address and its collector started by a wall-clock
/// estimate, so the path, and the parts, came out differently from one run to the next.
#[test]
fn table_keyed_tables_iterate_the_same_on_every_run() {
    let generator = tmp("AStar.luau");
    std::fs::write(
        &generator,
        r#"
return { Attributes = { Size = 24 }, OnGenerate = function(params, target)
	local n = params.Attributes.Size
	local grid = {}
	for x = 1, n do
		grid[x] = {}
		for y = 1, n do
			grid[x][y] = { x = x, y = y, wall = (x * 7 + y * 13) % 5 == 0 }
		end
	end
	local start, goal = grid[1][1], grid[n][n]
	start.wall, goal.wall = false, false
	local open, cost, came = { [start] = true }, { [start] = 0 }, {}
	while next(open) do
		local best, bestF
		for node in pairs(open) do
			local f = cost[node] + math.abs(node.x - goal.x) + math.abs(node.y - goal.y)
			if not bestF or f < bestF then
				best, bestF = node, f
			end
		end
		if best == goal then
			break
		end
		open[best] = nil
		for _, d in { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } } do
			local row = grid[best.x + d[1]]
			local nb = row and row[best.y + d[2]]
			if nb and not nb.wall and (not cost[nb] or cost[best] + 1 < cost[nb]) then
				cost[nb], came[nb], open[nb] = cost[best] + 1, best, true
			end
		end
	end
	local node, i = goal, 0
	while node do
		i += 1
		local p = Instance.new("Part")
		p.Name = "Step" .. i
		p.Anchored = true
		p.Size = Vector3.new(1, 0.2, 1)
		p.Position = Vector3.new(node.x, 0, node.y)
		p.Parent = target
		node = came[node]
	end
end }
"#,
    )
    .unwrap();
    let generate = |out: &str| {
        let out = tmp(out);
        ok(bin()
            .args(["generate", s(&generator), "--no-cache", "-o"])
            .arg(&out)
            .output()
            .unwrap());
        std::fs::read(out).unwrap()
    };
    let first = generate("astar_1.rbxm");
    for run in 2..=4 {
        assert!(
            first == generate(&format!("astar_{run}.rbxm")),
            "run {run} built another path"
        );
    }
}

#[test]
fn generator_errors_exit_nonzero_with_file_and_line() {
    let path = tmp("Broken.luau");
    std::fs::write(
        &path,
        "return { OnGenerate = function(p, t)\n  local x = nil\n  x.y = 1\nend }\n",
    )
    .unwrap();
    let o = generate(&[
        path.to_str().unwrap(),
        "-o",
        tmp("broken.rbxm").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Broken.luau:3"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A generator file written for Studio (`require(script.Parent.Util)`) names the file beside
/// it that it meant and how to require it; a member with no such file gets the plain error.
#[test]
fn instance_requires_of_files_beside_a_generator_file_say_how() {
    let d = tmp("beside");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("Util.luau"), "return { n = 3 }\n").unwrap();
    let run = |require: &str| {
        std::fs::write(
            d.join("Gen.luau"),
            format!(
                "local Util = require({require})\n\
                 return {{ OnGenerate = function(p, t) Instance.new('Part').Parent = t end }}\n"
            ),
        )
        .unwrap();
        generate(&[
            d.join("Gen.luau").to_str().unwrap(),
            "-o",
            d.join("out.rbxm").to_str().unwrap(),
        ])
    };
    let o = run("script.Parent.Util");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("Gen.luau:1: Util is not a valid member of ServerStorage")
            && err.contains("require(\"./Util\") loads")
            && err.contains("Util.luau")
            && !err.contains("run alone has a scene of its own"),
        "{err}"
    );
    let o = run("script.Parent.Other");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Other is not a valid member") && !err.contains("loads"),
        "{err}"
    );
    // The way the message gives works.
    ok(run("\"./Util\""));
}

#[test]
fn new_template_generates_and_info_lists_attributes() {
    let path = tmp("Fresh.luau");
    let _ = std::fs::remove_file(&path);
    ok(bin()
        .args(["new", path.to_str().unwrap()])
        .output()
        .unwrap());
    assert!(
        !bin()
            .args(["new", path.to_str().unwrap()])
            .output()
            .unwrap()
            .status
            .success(),
        "refuses to overwrite"
    );
    let out = tmp("fresh.rbxmx");
    ok(generate(&[
        path.to_str().unwrap(),
        "--attr",
        "Count=4",
        "-o",
        out.to_str().unwrap(),
    ]));
    let dom = rbx_xml::from_reader_default(std::fs::File::open(&out).unwrap()).unwrap();
    assert_eq!(count_named(&dom, "Block"), 4);
    let o = ok(bin()
        .args(["info", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Color", "Count", "RandomSeed"]);
    assert_eq!(v["attributes"][1]["type"], "number");
    assert_eq!(v["attributes"][0]["type"], "Color3");
    // A generator may start a new folder; a file in the way of one is named.
    let nested = tmp("new-folder").join("generators/Fence.luau");
    let _ = std::fs::remove_dir_all(tmp("new-folder"));
    ok(bin().args(["new", s(&nested)]).output().unwrap());
    assert!(nested.is_file());
    let blocked = path.join("Inner.luau");
    let o = bin().args(["new", s(&blocked)]).output().unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("is a file, not a folder"), "{e}");
}

#[test]
fn run_script_saves_a_place() {
    let place = run_and_save(
        "build.luau",
        "for i = 1, 3 do local p = Instance.new('Part') p.Name = 'Built' .. i p.Parent = workspace task.wait(0.1) end",
        "place.rbxlx",
    );
    let dom = rbx_xml::from_reader_default(std::fs::File::open(&place).unwrap()).unwrap();
    assert_eq!(count_named(&dom, "Built"), 3);
    assert!(dom.descendants().any(|i| i.class == "Workspace"));
}

/// Studio leaves instances whose `Archivable` is false out of the files it saves, and a
/// reference to one is saved as none: so do `run --save` and `generate -o`, in both formats,
/// and the content hash `generate` reports is the hash of what the file gives back.
#[test]
fn non_archivable_instances_are_left_out_of_saved_files() {
    let place = run_and_save(
        "scratch.luau",
        "local keep = Instance.new('Part') keep.Name = 'Kept' keep.Parent = workspace\n\
         local temp = Instance.new('Part') temp.Name = 'Scratch' temp.Archivable = false temp.Parent = workspace\n\
         local v = Instance.new('ObjectValue') v.Name = 'Pointer' v.Value = temp v.Parent = keep\n",
        "scratch.rbxl",
    );
    let dom = read_rbxm(&place);
    assert_eq!(count_named(&dom, "Kept"), 1);
    assert_eq!(count_named(&dom, "Scratch"), 0, "not saved");
    let pointer = dom.descendants().find(|i| i.name == "Pointer").unwrap();
    assert_eq!(
        pointer.properties.get(&"Value".into()),
        Some(&rbx_types::Variant::Ref(rbx_types::Ref::none()))
    );

    let generator = tmp("scratch_gen.luau");
    std::fs::write(
        &generator,
        "return { Attributes = {}, OnGenerate = function(_, out)\n\
           local base = Instance.new('Part') base.Name = 'Base' base.Parent = out\n\
           local guide = Instance.new('Part') guide.Name = 'Guide' guide.Archivable = false guide.Parent = base\n\
           local w = Instance.new('WeldConstraint') w.Part0 = base w.Part1 = guide w.Parent = base\n\
         end }",
    )
    .unwrap();
    for ext in ["rbxm", "rbxmx"] {
        let out = tmp(&format!("scratch_gen.{ext}"));
        let o = ok(generate(&[
            generator.to_str().unwrap(),
            "--json",
            "--no-cache",
            "-o",
            out.to_str().unwrap(),
        ]));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let reported = v["content_hash"].as_str().unwrap().to_owned();
        let bytes = std::fs::read(&out).unwrap();
        let dom = if ext == "rbxm" {
            rbx_binary::from_reader(bytes.as_slice()).unwrap()
        } else {
            rbx_xml::from_reader_default(bytes.as_slice()).unwrap()
        };
        assert_eq!(count_named(&dom, "Base"), 1, "{ext}");
        assert_eq!(count_named(&dom, "Guide"), 0, "{ext}: not saved");
        let weld = dom
            .descendants()
            .find(|i| i.class == "WeldConstraint")
            .unwrap();
        assert!(
            !matches!(weld.properties.get(&"Part1Internal".into()), Some(rbx_types::Variant::Ref(r)) if r.is_some()),
            "{ext}: the weld's Part1 is saved as none"
        );
        let model = dom.root().children()[0];
        let reloaded =
            procmodel_dom::hash::to_hex(&procmodel_dom::hash::children_hash(&dom, model));
        assert_eq!(reloaded, reported, "{ext}: the reported hash is the file's");
    }
}

/// A generator file that cannot be read is one error that gives the cause once.
#[test]
fn an_unreadable_generator_names_the_cause_once() {
    let junk = tmp("junk.luau");
    std::fs::write(&junk, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let out_file = tmp("junk.rbxm");
    // (pack said "stream did not contain valid UTF-8".)
    for command in ["info", "generate", "pack"] {
        let mut cmd = bin();
        cmd.arg(command).arg(&junk);
        if command != "info" {
            cmd.arg("-o").arg(&out_file);
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot read") && err.contains("junk.luau"),
            "{command}: {err}"
        );
        assert_eq!(
            err.matches("it is not UTF-8 text, not a Luau script")
                .count(),
            1,
            "{command}: {err}"
        );
    }
    // A place passed where a script goes is named as one.
    let place = tmp("a-place.rbxl");
    let mut bytes = b"<roblox!\x89\xff\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(&[0xff; 16]);
    std::fs::write(&place, bytes).unwrap();
    for command in ["info", "run"] {
        let out = bin().arg(command).arg(&place).output().unwrap();
        assert!(!out.status.success(), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("a-place.rbxl")
                && err.contains(
                    "it is a binary Roblox place or model (.rbxl/.rbxm), not a Luau script"
                ),
            "{command}: {err}"
        );
    }
    // So is an XML place, which is UTF-8 text Luau would only call a syntax error at `<`.
    let xml = tmp("a-place.rbxlx");
    std::fs::write(
        &xml,
        "\u{feff}<?xml version=\"1.0\"?>\n<roblox version=\"4\">\n</roblox>\n",
    )
    .unwrap();
    for command in ["info", "run"] {
        let out = bin().arg(command).arg(&xml).output().unwrap();
        assert!(!out.status.success(), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("a-place.rbxlx")
                && err.contains(
                    "it is an XML Roblox place or model (.rbxlx/.rbxmx), not a Luau script"
                ),
            "{command}: {err}"
        );
    }
}

/// An output that cannot be written is one error naming the file once, whatever the format:
/// one in a missing folder or one that is a folder (both refused before generating), and
/// one the system refuses when the file is written (`/proc/self` takes no new files),
/// leaving nothing behind.
#[test]
fn an_unwritable_output_is_named_once() {
    let stairs = examples().join("SpiralStaircase.luau");
    let missing = tmp("no-such-folder");
    let blocked = tmp("blocked-outputs");
    let _ = std::fs::remove_dir_all(&blocked);
    for ext in ["rbxm", "rbxmx", "glb", "obj"] {
        let in_the_way = blocked.join(format!("stairs.{ext}"));
        std::fs::create_dir_all(in_the_way.join("inside")).unwrap();
        let mut cases = vec![
            (missing.join(format!("stairs.{ext}")), missing.clone()),
            (in_the_way.clone(), in_the_way),
        ];
        if cfg!(target_os = "linux") {
            let proc = std::path::PathBuf::from("/proc/self");
            cases.push((proc.join(format!("stairs.{ext}")), proc));
        }
        for (out, named) in cases {
            let o = generate(&[stairs.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            assert!(!o.status.success(), "{ext}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("cannot write"), "{ext}: {err}");
            // The file that failed (the `.obj`'s `.mtl` is written first), named once.
            assert_eq!(
                err.matches(named.to_str().unwrap()).count(),
                1,
                "{ext}: {err}"
            );
        }
        // Only the folders in the way: no file (a sidecar, a temporary) is left.
        let left: Vec<_> = std::fs::read_dir(&blocked)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.is_dir())
            .collect();
        assert!(left.is_empty(), "{ext}: left behind: {left:?}");
    }
}

/// A place whose images, decals and sounds were set by a script loads again, and a script on
/// it reads the same asset ids back: the binary loader read Content source types wrongly and
/// refused such files, and the ContentId names (`Image`, `SoundId`) read empty after a load.
#[test]
fn a_place_with_content_ids_saves_and_loads_them_back() {
    let build = "local img = Instance.new('ImageLabel') img.Image = 'rbxassetid://123' img.Parent = workspace\n\
                 local img2 = Instance.new('ImageLabel') img2.Name = 'Second' img2.Image = 'rbxassetid://124' img2.Parent = workspace\n\
                 local s = Instance.new('Sound') s.SoundId = 'rbxassetid://9' s.Parent = workspace\n";
    let check = tmp("content_check.luau");
    std::fs::write(
        &check,
        "assert(workspace.ImageLabel.Image == 'rbxassetid://123', workspace.ImageLabel.Image)\n\
         assert(workspace.Second.Image == 'rbxassetid://124')\n\
         assert(workspace.Sound.SoundId == 'rbxassetid://9')\n",
    )
    .unwrap();
    for ext in ["rbxl", "rbxlx"] {
        let place = run_and_save("content_build.luau", build, &format!("content.{ext}"));
        // A failed assert makes `run` exit non-zero.
        ok(bin()
            .arg("run")
            .arg(&check)
            .arg("--place")
            .arg(&place)
            .output()
            .unwrap());
    }
}

/// A model file given as `--place` opens as Studio inserts a model into a place: its
/// instances are in Workspace (`workspace` was nil and the model sat beside the services),
/// and `--save` to a model file writes the edited model, not the services around it.
#[test]
fn a_model_file_as_place_is_in_workspace_and_saves_back_as_the_model() {
    let model = tmp("place_model.rbxm");
    ok(generate(&[
        examples().join("SpiralStaircase.luau").to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]));
    let edit = tmp("place_model_edit.luau");
    std::fs::write(
        &edit,
        "local m = workspace:FindFirstChild('SpiralStaircase')\n\
         assert(m, 'the model is not in Workspace')\n\
         local p = Instance.new('Part') p.Name = 'Added' p.Parent = m\n",
    )
    .unwrap();
    let edit_to = |saved: &Path| {
        ok(bin()
            .arg("run")
            .arg(&edit)
            .arg("--place")
            .arg(&model)
            .arg("--save")
            .arg(saved)
            .output()
            .unwrap())
    };
    for ext in ["rbxm", "rbxmx"] {
        let saved = tmp(&format!("place_model_edited.{ext}"));
        edit_to(&saved);
        let dom = if ext == "rbxm" {
            read_rbxm(&saved)
        } else {
            rbx_xml::from_reader_default(std::fs::File::open(&saved).unwrap()).unwrap()
        };
        let top: Vec<&str> = dom
            .root()
            .children()
            .iter()
            .map(|&r| dom.get_by_ref(r).unwrap().name.as_str())
            .collect();
        assert_eq!(top, ["SpiralStaircase"], "{ext}");
        assert_eq!(count_named(&dom, "Added"), 1, "{ext}");
    }
    // Saved as a place, the model is in the place's Workspace.
    let place = tmp("place_model_edited.rbxl");
    edit_to(&place);
    let dom = read_rbxm(&place);
    let ws = dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&r| dom.get_by_ref(r).unwrap().class == "Workspace")
        .expect("a Workspace");
    assert!(
        dom.get_by_ref(ws)
            .unwrap()
            .children()
            .iter()
            .any(|&r| dom.get_by_ref(r).unwrap().name == "SpiralStaircase")
    );
}

/// A truss's Style is saved: files keep it as `style` (the database marks `Style` unsaved,
/// so the value was dropped with a warning).
#[test]
fn truss_style_is_saved() {
    let place = run_and_save(
        "truss.luau",
        "local t = Instance.new('TrussPart') t.Style = Enum.Style.NoSupports t.Parent = workspace\n",
        "truss.rbxm",
    );
    let dom = read_rbxm(&place);
    let truss = dom
        .descendants()
        .find(|i| i.class == "TrussPart")
        .expect("the truss");
    assert_eq!(
        truss.properties.get(&"style".into()),
        Some(&rbx_types::Variant::Enum(rbx_types::Enum::from_u32(2)))
    );
}

/// The script `run` runs is a Script in ServerScriptService while it runs (`script.Parent`),
/// but not part of the place it saves: running a build script over a place again and again
/// does not pile copies of it into the place.
#[test]
fn the_script_run_runs_is_not_saved_into_the_place() {
    let place = run_and_save(
        "first_build.luau",
        "assert(script.Parent == game:GetService('ServerScriptService'))\n\
         assert(script.ClassName == 'Script' and script.Name == 'first_build')\n\
         local s = Instance.new('Script') s.Name = 'Kept' s.Parent = script.Parent\n\
         Instance.new('Part', workspace)\n",
        "no_script.rbxl",
    );
    let again = tmp("no_script_again.luau");
    std::fs::write(
        &again,
        "local names = {}\n\
         for _, c in game:GetService('ServerScriptService'):GetChildren() do table.insert(names, c.Name) end\n\
         table.sort(names)\n\
         assert(table.concat(names, ',') == 'Kept,no_script_again', table.concat(names, ','))\n",
    )
    .unwrap();
    for _ in 0..2 {
        ok(bin()
            .arg("run")
            .arg(&again)
            .arg("--place")
            .arg(&place)
            .arg("--save")
            .arg(&place)
            .output()
            .unwrap());
    }
    let dom = read_rbxm(&place);
    let scripts: Vec<&str> = dom
        .descendants()
        .filter(|i| i.class == "Script")
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(scripts, ["Kept"]);
    // Saved as a model with nothing in ServerScriptService, the service made for the script
    // is not saved either.
    let model = run_and_save(
        "only_part.luau",
        "Instance.new('Part', workspace)\n",
        "only_part.rbxm",
    );
    let dom = read_rbxm(&model);
    assert!(
        dom.descendants()
            .all(|i| i.class != "ServerScriptService" && i.class != "Script"),
        "{:?}",
        dom.descendants()
            .map(|i| i.class.as_str())
            .collect::<Vec<_>>()
    );
}

/// `game:BindToClose` functions (and `game.Close` handlers) run when the session closes, after the script and its threads
/// and before the place is saved, each in its own thread, for at most 30 s of virtual time:
/// one that never finishes is ended with a warning, one that fails is reported, and the run
/// still succeeds.
#[test]
fn bind_to_close_runs_before_the_place_is_saved() {
    let script = tmp("close.luau");
    std::fs::write(
        &script,
        "game:BindToClose(function() task.wait(2) local p = Instance.new('Part') p.Name = 'SavedOnClose' p.Parent = workspace end)\n\
         game:BindToClose(function() error('a failing closer') end)\n\
         game:BindToClose(function() while true do task.wait(1) end end)\n\
         -- The old game.Close event's handlers run at the close too (connecting was an error).\n\
         game.Close:Connect(function() task.wait(1) local p = Instance.new('Part') p.Name = 'ClosedByEvent' p.Parent = workspace end)\n\
         local gone = game.Close:Connect(function() Instance.new('Part', workspace).Name = 'Disconnected' end)\n\
         gone:Disconnect()\n",
    )
    .unwrap();
    let place = tmp("close.rbxl");
    let out = ok(bin()
        .arg("run")
        .arg(&script)
        .arg("--save")
        .arg(&place)
        .output()
        .unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a failing closer"), "{err}");
    assert!(
        err.contains("1 function(s) still running after 30 s"),
        "{err}"
    );
    let saved = read_rbxm(&place);
    assert_eq!(count_named(&saved, "SavedOnClose"), 1);
    assert_eq!(count_named(&saved, "ClosedByEvent"), 1);
    assert_eq!(count_named(&saved, "Disconnected"), 0);
}

#[test]
fn scale_divides_params_size_and_scales_results() {
    let stairs = examples().join("SpiralStaircase.luau");
    let out = tmp("scaled.rbxm");
    ok(generate(&[
        stairs.to_str().unwrap(),
        "--size",
        "24,40,24",
        "--scale",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]));
    let dom = read_rbxm(&out);
    // params.Size = 12,20,12 → 20 steps, then scaled ×2
    assert_eq!(count_named(&dom, "Step"), 20);
    let model = dom.root().children()[0];
    let m = dom.get_by_ref(model).unwrap();
    assert_eq!(
        m.properties.get(&"Scale".into()),
        Some(&rbx_types::Variant::Float32(2.0))
    );
}

const SCENE_SCRIPT: &str = r#"
local gen = Instance.new("ModuleScript")
gen.Name = "Row"
gen.Source = [[
return {
    Attributes = { Count = 3 },
    OnGenerate = function(params, target)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = "P" .. i
            p.Anchored = true
            p.Position = Vector3.new(i * 2, 0, 0)
            p.Parent = target
        end
    end,
}
]]
gen.Parent = game:GetService("ServerStorage")
for i = 1, 2 do
    local m = Instance.new("ProceduralModel")
    m.Name = "Row" .. i
    m.Generator = gen
    m:SetAttribute("Count", i + 1)
    m.Parent = workspace
end
local broken = Instance.new("ModuleScript")
broken.Source = "return { OnGenerate = function() error('broken generator') end }"
broken.Parent = game:GetService("ServerStorage")
"#;

#[test]
fn run_builds_a_scene_regen_regenerates_and_export_writes_gltf() {
    let scene = run_and_save("scene.luau", SCENE_SCRIPT, "scene.rbxlx");
    let dom = rbx_xml::from_reader_default(std::fs::File::open(&scene).unwrap()).unwrap();
    // the models generated while (and after) the script ran: 2 + 3 parts
    assert_eq!(dom.descendants().filter(|i| i.class == "Part").count(), 5);

    let regen_out = tmp("scene-regen.rbxl");
    let o = ok(bin()
        .args([
            "regen",
            scene.to_str().unwrap(),
            "--force",
            "--json",
            "-o",
            regen_out.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["models"].as_array().unwrap().len(), 2);
    assert_eq!(v["failed"], 0);

    let glb = tmp("scene.glb");
    ok(bin()
        .args([
            "export",
            regen_out.to_str().unwrap(),
            "-o",
            glb.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    let bytes = std::fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
}

#[test]
fn regen_reports_failures_with_nonzero_exit() {
    let scene = run_and_save_failing(
        "broken-scene.luau",
        r#"local g = Instance.new("ModuleScript")
        g.Source = "return { OnGenerate = function() error('broken generator') end }"
        g.Parent = game
        local m = Instance.new("ProceduralModel")
        m.Name = "Bad"
        m.Generator = g
        m.Parent = workspace"#,
        "broken.rbxl",
    );
    let o = bin()
        .args(["regen", scene.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("Workspace.Bad")
            && table.contains("FAILED")
            && table.contains("broken generator"),
        "{table}"
    );
    // --json names the kind of failure, so a CI script can tell a script error from a limit.
    let o = bin()
        .args(["regen", scene.to_str().unwrap(), "--force", "--json"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bad = &v["models"][0];
    assert_eq!(bad["ok"], false, "{v}");
    assert_eq!(bad["failure"], "script", "{v}");
    assert!(bad["error"].as_str().unwrap().contains("broken generator"));
}

#[test]
fn rbxmx_golden_snapshot_of_a_small_staircase() {
    let stairs = examples().join("SpiralStaircase.luau");
    let out = tmp("golden.rbxmx");
    ok(generate(&[
        stairs.to_str().unwrap(),
        "--size",
        "12,3,12",
        "-o",
        out.to_str().unwrap(),
    ]));
    let dom = rbx_xml::from_reader_default(std::fs::File::open(&out).unwrap()).unwrap();
    // The viewer replaces random referents with stable ids.
    let viewed = rbx_dom_weak::DomViewer::new().view_children(&dom);
    insta::assert_snapshot!(serde_json::to_string_pretty(&viewed).unwrap());
}

#[test]
fn regen_with_jobs_saves_the_same_bytes_as_without() {
    // The shared scene's generator, with ten more models of it.
    let script = format!(
        "{SCENE_SCRIPT}\nfor i = 3, 12 do local m = Instance.new('ProceduralModel') m.Name = 'Row' .. i m.Generator = gen m:SetAttribute('Count', i % 4 + 1) m.Parent = workspace end"
    );
    let scene = run_and_save("jobs-scene.luau", &script, "jobs-scene.rbxl");
    let regen = |jobs: &str| {
        let out = tmp(&format!("jobs-{jobs}.rbxl"));
        ok(bin()
            .args([
                "regen",
                scene.to_str().unwrap(),
                "--force",
                "--jobs",
                jobs,
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap());
        std::fs::read(out).unwrap()
    };
    let one = regen("1");
    assert_eq!(regen("2"), one, "--jobs 2 changed the saved scene");
    assert_eq!(regen("3"), one, "--jobs 3 changed the saved scene");
    let dom = rbx_binary::from_reader(one.as_slice()).unwrap();
    // Rows 1 and 2 have Count 2 and 3; rows 3..12 have i % 4 + 1.
    assert_eq!(
        count_named(&dom, "P"),
        2 + 3 + (3..=12).map(|i| i % 4 + 1).sum::<usize>()
    );
}

#[test]
fn a_cache_hit_writes_the_same_rbxmx_bytes_as_the_run_that_filled_it() {
    // The staircase's pole is a quarter turn in float noise; a cache entry that stored it as
    // an exact basic rotation gave a hit's .rbxmx other floats than the fresh run's.
    let stairs = examples().join("SpiralStaircase.luau");
    let cache = tmp("hit-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let cached = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            stairs.to_str().unwrap(),
            "--size",
            "12,3,12",
            "--cache",
            cache.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        ok(generate(&args))
    };
    let run = |name: &str, said: &str| {
        let out = tmp(name);
        let o = cached(&out, &[]);
        // A hit runs nothing (and prints nothing from the generator): it says so.
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(said), "{err}");
        std::fs::read(out).unwrap()
    };
    let fresh = run("miss.rbxmx", "generated 8 instances in");
    assert!(
        std::fs::read_dir(&cache).unwrap().next().is_some(),
        "the run filled the cache"
    );
    assert_eq!(
        run(
            "hit.rbxmx",
            "8 instances from the result cache (generated before with these inputs; --no-cache runs the generator)"
        ),
        fresh
    );
    let o = cached(&tmp("hit2.rbxm"), &["--json"]);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["cached"], true, "{summary}");
}

/// A tower of `Levels` nested models, each adding two parts; the innermost errors when
/// `FailAt` equals its level.
const NESTED: &str = r#"
local G = {}
G.Attributes = { Level = 1, Levels = 3, FailAt = 0 }
function G.OnGenerate(params, target)
    local a = params.Attributes
    if a.Level == a.FailAt then
        error("level " .. a.Level .. " gave up")
    end
    for i = 1, 2 do
        local p = Instance.new("Part")
        p.Name = "L" .. a.Level .. "_" .. i
        p.Parent = target
    end
    if a.Level < a.Levels then
        local m = Instance.new("ProceduralModel")
        m.Name = "Level" .. (a.Level + 1)
        m.Generator = script
        m:SetAttribute("Level", a.Level + 1)
        m:SetAttribute("Levels", a.Levels)
        m:SetAttribute("FailAt", a.FailAt)
        m.Parent = target
    end
end
return G
"#;

#[test]
fn generate_counts_nested_results_and_fails_when_a_nested_model_fails() {
    let g = tmp("Nested.luau");
    std::fs::write(&g, NESTED).unwrap();
    let out = tmp("nested.rbxm");
    let o = ok(generate(&[
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 3 levels × 2 parts + 2 nested models.
    assert_eq!(summary["instances"], 8, "{summary}");
    assert_eq!(summary["nested_failures"], serde_json::json!([]));

    // The innermost level fails: the output is still written (with the placeholder), the
    // error names the nested model, the exit status is non-zero.
    let out2 = tmp("nested-fail.rbxm");
    let o = generate(&[
        g.to_str().unwrap(),
        "--attr",
        "FailAt=3",
        "-o",
        out2.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("nested model") && err.contains("Level3") && err.contains("level 3 gave up"),
        "{err}"
    );
    assert!(out2.exists());
    // A package is refused outright.
    let pkg = tmp("nested-fail-pack.rbxm");
    let o = bin()
        .args(["pack", g.to_str().unwrap(), "--attr", "FailAt=2", "-o"])
        .arg(&pkg)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("nested model") && err.contains("nothing packed"),
        "{err}"
    );
    assert!(!pkg.exists());
}

#[test]
fn generate_runs_a_modules_top_level_code_once() {
    // Roblox runs a ModuleScript's top-level code once per require cache. `generate` reads
    // the declared attributes before the run; that load is the run's own, not a second one.
    let g = tmp("OnceAtTop.luau");
    std::fs::write(
        &g,
        r#"print("module body ran")
local G = { Attributes = { N = 2 } }
function G.OnGenerate(params, target)
    print("generated", params.Attributes.N)
    for i = 1, params.Attributes.N do
        Instance.new("Part").Parent = target
    end
end
return G
"#,
    )
    .unwrap();
    let out = tmp("once-at-top.rbxm");
    let o = ok(generate(&[
        g.to_str().unwrap(),
        "--attr",
        "N=3",
        "--no-cache",
        "-o",
        out.to_str().unwrap(),
    ]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("module body ran").count(), 1, "{err}");
    assert_eq!(err.matches("[OnceAtTop] generated 3").count(), 1, "{err}");
}

/// An EnumItem attribute (a generator's `Material = Enum.Material.Brick`) is shown as Roblox
/// prints it and set from the command line by item name; a name the enum lacks is an error
/// that lists the items.
#[test]
fn enum_item_attributes_are_shown_and_set_by_name() {
    let generator = tmp("enum_attr.luau");
    std::fs::write(
        &generator,
        r#"return {
    Attributes = { Material = Enum.Material.Brick, Spread = NumberRange.new(1, 3) },
    OnGenerate = function(params, target)
        local p = Instance.new("Part")
        p.Material = params.Attributes.Material
        p.Size = Vector3.new(params.Attributes.Spread.Max, 1, 1)
        p.Parent = target
    end,
}"#,
    )
    .unwrap();
    let info = ok(bin().arg("info").arg(&generator).output().unwrap());
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("Enum.Material.Brick") && text.contains("1,3"),
        "{text}"
    );
    let out = tmp("enum_attr.rbxmx");
    ok(bin()
        .arg("generate")
        .arg(&generator)
        .args([
            "--no-cache",
            "--attr",
            "Material=Enum.Material.Wood",
            "--attr",
            "Spread=2,5",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap());
    let dom = rbx_xml::from_reader_default(std::fs::File::open(&out).unwrap()).unwrap();
    let part = dom.descendants().find(|i| i.class == "Part").unwrap();
    assert_eq!(
        part.properties.get(&"Material".into()),
        Some(&rbx_types::Variant::Enum(rbx_types::Enum::from_u32(512)))
    );
    assert_eq!(
        part.properties.get(&"Size".into()),
        Some(&rbx_types::Variant::Vector3(rbx_types::Vector3::new(
            5.0, 1.0, 1.0
        )))
    );
    let bad = bin()
        .arg("generate")
        .arg(&generator)
        .args(["--no-cache", "--attr", "Material=Lava", "-o"])
        .arg(tmp("enum_attr_bad.rbxm"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("attribute Material")
            && err.contains("has no item 'Lava'")
            && err.contains("Wood"),
        "{err}"
    );
}

/// The EditableMesh example: its mesh reaches the glTF with vertex colors, the same bytes
/// every run, and survives a Roblox file: exporting the saved model draws it the same.
#[test]
fn the_mesh_island_example_draws_its_editable_mesh() {
    let island = examples().join("MeshIsland.luau");
    let glb = tmp("island.glb");
    let again = tmp("island-again.glb");
    let rbxm = tmp("island.rbxm");
    let exported = tmp("island-exported.glb");
    for out in [&glb, &again, &rbxm] {
        ok(generate(&[
            island.to_str().unwrap(),
            "--size",
            "120,40,120",
            "--attr",
            "Resolution=40",
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    assert_eq!(std::fs::read(&glb).unwrap(), std::fs::read(&again).unwrap());
    let doc = glb_json(&glb);
    let meshes = doc["meshes"].as_array().unwrap();
    let mesh = meshes
        .iter()
        .find(|m| m["name"].as_str().unwrap().starts_with("EditableMesh "))
        .expect("the island's mesh");
    assert_eq!(mesh["name"], "EditableMesh 120x16x120");
    let prim = &mesh["primitives"][0];
    assert!(prim["attributes"]["COLOR_0"].is_number(), "{prim}");
    let indices = &doc["accessors"][prim["indices"].as_u64().unwrap() as usize];
    assert_eq!(indices["count"], 40 * 40 * 2 * 3);
    // The model file keeps the mesh (an attribute of the MeshPart): its export is the same.
    let dom = read_rbxm(&rbxm);
    let part = dom.descendants().find(|i| i.name == "Island").unwrap();
    assert_eq!(part.class, "MeshPart");
    ok(bin()
        .args([
            "export",
            rbxm.to_str().unwrap(),
            "-o",
            exported.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    let from_file = glb_json(&exported);
    let names = |d: &serde_json::Value| -> Vec<String> {
        d["meshes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].to_string())
            .collect()
    };
    assert_eq!(names(&from_file), names(&doc));
}

/// The volume a closed triangle mesh encloses (divergence theorem), written here from the
/// definition rather than taken from the solid-modelling crate.
fn enclosed_volume(mesh: &procmodel_mesh::TriangleMesh) -> f64 {
    let p = |i: u32| mesh.positions[i as usize].map(f64::from);
    mesh.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.vertices.map(p);
            let cross = [
                b[1] * c[2] - b[2] * c[1],
                b[2] * c[0] - b[0] * c[2],
                b[0] * c[1] - b[1] * c[0],
            ];
            (a[0] * cross[0] + a[1] * cross[1] + a[2] * cross[2]) / 6.0
        })
        .sum()
}

/// The solid-modelling example: its wall is one block with arched windows and battlement
/// notches cut out (GeometryService:SubtractAsync) and its towers are unions
/// (BasePart:UnionAsync). The wall's volume is the block's less exactly what the cutters
/// take, computed by hand from the example's dimensions; the glb is the same every run and
/// the saved model keeps the geometry.
#[test]
fn the_castle_wall_example_cuts_its_openings_with_solid_modelling() {
    let example = examples().join("CastleWall.luau");
    let glb = tmp("wall.glb");
    let again = tmp("wall-again.glb");
    let rbxm = tmp("wall.rbxm");
    for out in [&glb, &again, &rbxm] {
        ok(generate(&[
            example.to_str().unwrap(),
            "--size",
            "40,20,4",
            "--attr",
            "Windows=4",
            "--attr",
            "WindowWidth=3",
            "--attr",
            "Thickness=2",
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    assert_eq!(std::fs::read(&glb).unwrap(), std::fs::read(&again).unwrap());
    let dom = read_rbxm(&rbxm);
    let wall = dom.descendants().find(|i| i.name == "Wall").unwrap();
    assert_eq!(wall.class, "PartOperation");
    let mesh = saved_mesh(&rbxm, "Wall");
    // A 40 x 16 wall (four fifths of 20), 2 studs thick. 4 windows: a 3 x 4.8 opening under a
    // half disc of radius 1.5 (a 24-sided cylinder: half of 24 triangles of area
    // r^2 sin(15 deg) / 2); 11 notches of 1.6 x 0.8.
    let half_disc = 12.0 * 0.5 * 1.5f64 * 1.5 * 15f64.to_radians().sin();
    let window = 3.0 * 4.8 + half_disc;
    let expected = 2.0 * (40.0 * 16.0 - 4.0 * window - 11.0 * 1.6 * 0.8);
    let volume = enclosed_volume(&mesh);
    assert!((volume - expected).abs() < 1e-3, "{volume} vs {expected}");
    let towers: Vec<_> = dom.descendants().filter(|i| i.name == "Tower").collect();
    assert_eq!(towers.len(), 2);
    assert!(towers.iter().all(|t| t.class == "UnionOperation"));
    let doc = glb_json(&glb);
    let solids = doc["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"].as_str().unwrap().starts_with("PartOperation "))
        .count();
    // The wall, and the towers': one mesh both share, or two when the towers' f32 turns
    // round their crowns' places differently in the last bit.
    assert!((2..=3).contains(&solids), "{}", doc["meshes"]);
}

/// The mesh attribute of the instance named `name` in a saved place.
fn saved_mesh(place: &Path, name: &str) -> procmodel_mesh::TriangleMesh {
    let dom = read_rbxm(place);
    let inst = dom.descendants().find(|i| i.name == name).unwrap();
    let Some(rbx_types::Variant::Attributes(a)) = inst.properties.get(&"Attributes".into()) else {
        panic!("{name} has no attributes")
    };
    let text = match a.get(procmodel_mesh::ATTRIBUTE) {
        Some(rbx_types::Variant::String(s)) => s.clone(),
        Some(rbx_types::Variant::BinaryString(b)) => {
            String::from_utf8(AsRef::<[u8]>::as_ref(b).to_vec()).unwrap()
        }
        other => panic!("{name} has no mesh: {other:?}"),
    };
    procmodel_mesh::TriangleMesh::from_attribute(&text).unwrap()
}

/// The solid modelling guide's "Preserve constraints" sample, as written (after a setup of
/// its two blocks): it stopped at "CalculateConstraintsToPreserve is a Roblox method that
/// procmodel does not implement", and its `CollisionFidelity = Default` option warned that
/// files do not keep CollisionFidelity. Now it runs without a word and the saved model has
/// the hinge's attachment on the result.
#[test]
fn the_guides_constraint_preserving_subtract_runs_as_written() {
    let script = tmp("PreserveConstraints.luau");
    std::fs::write(
        &script,
        r#"
local purple = Instance.new("Part")
purple.Name = "PurpleBlock"
purple.Size = Vector3.new(8, 4, 4)
purple.Anchored = true
purple.Parent = workspace
local blue = Instance.new("Part")
blue.Name = "BlueBlock"
blue.Size = Vector3.new(2, 6, 6)
blue.Position = Vector3.new(4, 0, 0)
blue.Parent = workspace
local hinge = Instance.new("Attachment")
hinge.Name = "Hinge"
hinge.Position = Vector3.new(-4, 0, 0)
hinge.Parent = purple
local post = Instance.new("Part")
post.Name = "Post"
post.Position = Vector3.new(-6, 0, 0)
post.Parent = workspace
local postHinge = Instance.new("Attachment")
postHinge.Parent = post
local constraint = Instance.new("HingeConstraint")
constraint.Attachment0, constraint.Attachment1 = hinge, postHinge
constraint.Parent = purple

local GeometryService = game:GetService("GeometryService")

local mainPart = workspace.PurpleBlock
local otherParts = { workspace.BlueBlock }

local options = {
	CollisionFidelity = Enum.CollisionFidelity.Default,
	RenderFidelity = Enum.RenderFidelity.Automatic,
	SplitApart = true,
}

local constraintOptions = {
	tolerance = 0.1,
	weldConstraintPreserve = Enum.WeldConstraintPreserve.All,
	dropAttachmentsWithoutConstraints = false,
}

-- Perform subtract operation in pcall() since it's asynchronous
local success, newParts = pcall(function()
	return GeometryService:SubtractAsync(mainPart, otherParts, options)
end)

if success and newParts then
	-- Loop through resulting parts to reparent/reposition
	for _, newPart in pairs(newParts) do
		newPart.Parent = mainPart.Parent
		newPart.CFrame = mainPart.CFrame
		newPart.Anchored = mainPart.Anchored
	end

	-- Calculate constraints/attachments to either preserve or drop
	local recommendedTable = GeometryService:CalculateConstraintsToPreserve(mainPart, newParts, constraintOptions)

	-- Preserve constraints/attachments based on recommended table
	for _, item in pairs(recommendedTable) do
		if item.Attachment then
			item.Attachment.Parent = item.AttachmentParent
			if item.Constraint then
				item.Constraint.Parent = item.ConstraintParent
			end
		elseif item.NoCollisionConstraint then
			local newNoCollision = Instance.new("NoCollisionConstraint")
			newNoCollision.Part0 = item.NoCollisionPart0
			newNoCollision.Part1 = item.NoCollisionPart1
			newNoCollision.Parent = item.NoCollisionParent
		elseif item.WeldConstraint then
			local newWeldConstraint = Instance.new("WeldConstraint")
			newWeldConstraint.Part0 = item.WeldConstraintPart0
			newWeldConstraint.Part1 = item.WeldConstraintPart1
			newWeldConstraint.Parent = item.WeldConstraintParent
		end
	end

	-- Destroy original parts
	mainPart.Parent = nil
	mainPart:Destroy()
	for _, otherPart in pairs(otherParts) do
		otherPart.Parent = nil
		otherPart:Destroy()
	end
end
"#,
    )
    .unwrap();
    let saved = tmp("preserved.rbxm");
    let out = ok(bin()
        .args(["run", script.to_str().unwrap(), "--save"])
        .arg(&saved)
        .output()
        .unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("warning") && !err.contains("error"), "{err}");
    let dom = read_rbxm(&saved);
    let parent_class = |name: &str| {
        let inst = dom.descendants().find(|i| i.name == name).unwrap();
        dom.get_by_ref(inst.parent()).unwrap().class.to_string()
    };
    assert_eq!(parent_class("Hinge"), "PartOperation");
    assert_eq!(parent_class("HingeConstraint"), "PartOperation");
    assert!(
        !dom.descendants()
            .any(|i| i.name == "PurpleBlock" || i.name == "BlueBlock")
    );
}

/// A MeshPart shows its vertex colours tinted (multiplied) by its Color, so that is what its
/// faces bring to a solid-modelling result (solid modelling guide, "Colors and UVs"): green
/// vertices on a (1, 0.2, 1) MeshPart give (0, 0.2, 0) faces; the block's stay blue.
#[test]
fn a_meshpart_brings_its_tinted_colours_to_solid_modelling() {
    let saved = run_and_save(
        "TintedMesh.luau",
        r#"
local AssetService = game:GetService("AssetService")
local GeometryService = game:GetService("GeometryService")
local em = AssetService:CreateEditableMesh()
local c = {}
for i = 0, 7 do
    c[i] = em:AddVertex(Vector3.new(i % 2 * 2 - 1, (i // 2) % 2 * 2 - 1, (i // 4) * 2 - 1))
end
for _, q in { {0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5} } do
    em:AddTriangle(c[q[1]], c[q[2]], c[q[3]])
    em:AddTriangle(c[q[1]], c[q[3]], c[q[4]])
end
for _, id in em:GetColors() do
    em:SetColor(id, Color3.new(0, 1, 0))
end
local cube = AssetService:CreateMeshPartAsync(Content.fromObject(em))
cube.Color = Color3.fromRGB(255, 51, 255)
cube.Position = Vector3.new(1, 0, 0)
local block = Instance.new("Part")
block.Size = Vector3.new(2, 2, 2)
block.Color = Color3.new(0, 0, 1)
local result = GeometryService:UnionAsync(block, { cube })[1]
result.Name = "Result"
result.Parent = workspace
"#,
        "tinted.rbxm",
    );
    let mesh = saved_mesh(&saved, "Result");
    let mut colors: Vec<[f32; 4]> = mesh.colors.clone();
    colors.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // The block's blue; the cube's green vertices times its (1, 0.2, 1).
    let expected = [[0.0, 0.0, 1.0, 1.0], [0.0, 0.2, 0.0, 1.0]];
    assert_eq!(colors.len(), 2, "{colors:?}");
    for (got, want) in colors.iter().zip(expected) {
        assert!(
            got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6),
            "{colors:?}"
        );
    }
}

/// A generator that paints its mesh with an EditableImage, through `generate` (the path
/// users take): the part carries the image as it is when the run ends (drawn after it was
/// assigned), the .rbxm keeps it, and the glb paints the mesh with it over the part's Color.
#[test]
fn a_generator_paints_its_mesh_with_an_editable_image() {
    let generator = tmp("PaintedQuad.luau");
    std::fs::write(
        &generator,
        r#"
local AssetService = game:GetService("AssetService")
local Quad = { Attributes = { Cells = 4 } }
function Quad.OnGenerate(params, container)
    local em = AssetService:CreateEditableMesh()
    local corners = { Vector3.new(-1, 0, -1), Vector3.new(1, 0, -1), Vector3.new(1, 0, 1), Vector3.new(-1, 0, 1) }
    local uvs = { Vector2.new(0, 0), Vector2.new(1, 0), Vector2.new(1, 1), Vector2.new(0, 1) }
    local v, u = {}, {}
    for i = 1, 4 do
        v[i] = em:AddVertex(corners[i])
        u[i] = em:AddUV(uvs[i])
    end
    em:SetFaceUVs(em:AddTriangle(v[1], v[3], v[2]), { u[1], u[3], u[2] })
    em:SetFaceUVs(em:AddTriangle(v[1], v[4], v[3]), { u[1], u[4], u[3] })
    local part = AssetService:CreateMeshPartAsync(Content.fromObject(em))
    part.Color = Color3.new(0, 0, 1)
    local image = AssetService:CreateEditableImage({ Size = Vector2.new(8, 8) })
    part.TextureContent = Content.fromObject(image)
    part.Parent = container
    -- A copy made now shows the same image, as it is drawn from here on.
    local twin = part:Clone()
    twin.Name = "Twin"
    twin.Parent = container
    -- Drawn after it was assigned: the part shows it all the same.
    local n = params.Attributes.Cells
    local cell = 8 // n
    for y = 0, n - 1 do
        for x = 0, n - 1 do
            if (x + y) % 2 == 0 then
                image:DrawRectangle(Vector2.new(x * cell, y * cell), Vector2.new(cell, cell), Color3.new(1, 1, 0), 0, Enum.ImageCombineType.Overwrite)
            end
        end
    end
end
return Quad
"#,
    )
    .unwrap();
    let glb = tmp("painted-quad.glb");
    let rbxm = tmp("painted-quad.rbxm");
    for out in [&glb, &rbxm] {
        ok(generate(&[
            generator.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    // The yellow cells, and the part's blue where the image is clear.
    let expected: Vec<u8> = (0..64)
        .flat_map(|i| {
            let (x, y) = (i % 8 / 2, i / 8 / 2);
            if (x + y) % 2 == 0 {
                [255, 255, 0, 255]
            } else {
                [0, 0, 255, 255]
            }
        })
        .collect();
    let bytes = std::fs::read(&glb).unwrap();
    let doc = glb_json(&glb);
    let texture = glb_texture(&glb, 0);
    assert_eq!((texture.width, texture.height), (8, 8));
    assert_eq!(texture.rgba, expected);
    // The copy is painted with the same texture (one image, one material for both).
    assert_eq!(doc["images"].as_array().map(Vec::len), Some(1));
    let drawn: Vec<_> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["mesh"].as_u64())
        .map(|m| doc["meshes"][m as usize]["primitives"][0]["material"].clone())
        .collect();
    assert_eq!(drawn.len(), 2);
    assert_eq!(drawn[0], drawn[1]);
    // The .rbxm keeps the image itself (clear where nothing was drawn).
    let dom = read_rbxm(&rbxm);
    let part = dom.descendants().find(|i| i.class == "MeshPart").unwrap();
    let Some(rbx_types::Variant::Attributes(a)) = part.properties.get(&"Attributes".into()) else {
        panic!("no attributes")
    };
    let text = match a.get("ProcmodelTexture") {
        Some(rbx_types::Variant::String(s)) => s.clone(),
        Some(rbx_types::Variant::BinaryString(b)) => {
            String::from_utf8(AsRef::<[u8]>::as_ref(b).to_vec()).unwrap()
        }
        other => panic!("no image: {other:?}"),
    };
    let carried = procmodel_mesh::texture::Texture::from_attribute(&text).unwrap();
    assert_eq!(&carried.rgba[..4], &[255, 255, 0, 255]);
    assert_eq!(&carried.rgba[8..12], &[0, 0, 0, 0]);
    // The same bytes every run.
    ok(generate(&[
        generator.to_str().unwrap(),
        "-o",
        glb.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read(&glb).unwrap(), bytes);
    // OBJ: the texture is written beside the MTL that names it.
    let obj = tmp("painted-quad.obj");
    ok(generate(&[
        generator.to_str().unwrap(),
        "-o",
        obj.to_str().unwrap(),
    ]));
    let mtl = std::fs::read_to_string(tmp("painted-quad.mtl")).unwrap();
    assert!(mtl.contains("map_Kd painted-quad_texture0.png"), "{mtl}");
    // Objects are named from the generated model down, not from the scene it was made in.
    let text = std::fs::read_to_string(&obj).unwrap();
    let objects: Vec<&str> = text.lines().filter(|l| l.starts_with("o ")).collect();
    assert!(
        !objects.is_empty() && objects.iter().all(|o| o.starts_with("o PaintedQuad.")),
        "{objects:?}"
    );
    let png = std::fs::read(tmp("painted-quad_texture0.png")).unwrap();
    let written = procmodel_mesh::texture::Texture::from_png(&png).unwrap();
    assert_eq!(written.rgba, expected);
}

/// The StoneCourtyard example paints its floor: the glb's one texture has the
/// TextureSize asked for, is opaque and varied, and the floor mesh has UVs; the same bytes
/// every run.
#[test]
fn the_stone_courtyard_example_paints_its_floor() {
    let courtyard = examples().join("StoneCourtyard.luau");
    let glb = tmp("courtyard.glb");
    let run = || {
        ok(generate(&[
            courtyard.to_str().unwrap(),
            "--size",
            "40,8,40",
            "--attr",
            "TextureSize=64",
            "-o",
            glb.to_str().unwrap(),
        ]));
        std::fs::read(&glb).unwrap()
    };
    let bytes = run();
    let doc = glb_json(&glb);
    assert_eq!(doc["images"].as_array().map(Vec::len), Some(1));
    let floor = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "Floor")
        .expect("the floor");
    let mesh = &doc["meshes"][floor["mesh"].as_u64().unwrap() as usize];
    let primitive = &mesh["primitives"][0];
    assert!(primitive["attributes"]["TEXCOORD_0"].is_u64());
    let material = &doc["materials"][primitive["material"].as_u64().unwrap() as usize];
    assert_eq!(
        material["pbrMetallicRoughness"]["baseColorTexture"]["index"],
        0
    );
    let t = glb_texture(&glb, 0);
    assert_eq!((t.width, t.height), (64, 64));
    assert!(t.rgba.chunks(4).all(|p| p[3] == 255), "an opaque floor");
    let distinct: std::collections::BTreeSet<&[u8]> = t.rgba.chunks(4).collect();
    assert!(distinct.len() > 100, "{} colours", distinct.len());
    assert_eq!(run(), bytes);
}

/// A copy of a MeshPart showing an EditableMesh shows it too: an edit made after `Clone`
/// reaches both parts, as the mesh content is one object in Roblox.
#[test]
fn a_cloned_meshpart_follows_its_editable_mesh() {
    let saved = run_and_save(
        "ClonedMesh.luau",
        r#"
local AssetService = game:GetService("AssetService")
local em = AssetService:CreateEditableMesh()
local a = em:AddVertex(Vector3.new(0, 0, 0))
local b = em:AddVertex(Vector3.new(1, 0, 0))
local c = em:AddVertex(Vector3.new(0, 1, 0))
em:AddTriangle(a, b, c)
local part = AssetService:CreateMeshPartAsync(Content.fromObject(em))
part.Name = "Original"
part.Parent = workspace
local model = Instance.new("Model")
local inner = part:Clone()
inner.Name = "Copy"
inner.Parent = model
model.Parent = workspace
em:SetPosition(c, Vector3.new(0, 5, 0))
"#,
        "cloned-mesh.rbxm",
    );
    for name in ["Original", "Copy"] {
        let mesh = saved_mesh(&saved, name);
        assert!(
            mesh.positions.contains(&[0.0, 5.0, 0.0]),
            "{name}: {:?}",
            mesh.positions
        );
    }
}

/// A sandboxed generator needs the CSG capability for solid modelling, as in Roblox: without
/// it the run fails naming the capability; `pack --capability CSG` grants it.
#[test]
fn solid_modelling_in_a_sandbox_needs_the_csg_capability() {
    let generator = tmp("SandboxedCsg.luau");
    std::fs::write(
        &generator,
        r#"
local Gen = {}
Gen.Attributes = {}
function Gen.OnGenerate(params, target)
    local block = Instance.new("Part")
    block.Size = Vector3.new(4, 4, 4)
    local hole = Instance.new("Part")
    hole.Size = Vector3.new(2, 2, 8)
    local cut = block:SubtractAsync({ hole })
    cut.Parent = target
end
return Gen
"#,
    )
    .unwrap();
    let denied = tmp("csg-denied.rbxm");
    let out = bin()
        .args(["pack", generator.to_str().unwrap(), "--sandboxed", "-o"])
        .arg(&denied)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SubtractAsync needs the CSG capability"),
        "{err}"
    );
    let granted = tmp("csg-granted.rbxm");
    ok(bin()
        .args([
            "pack",
            generator.to_str().unwrap(),
            "--sandboxed",
            "--capability",
            "CSG",
            "-o",
        ])
        .arg(&granted)
        .output()
        .unwrap());
    let dom = read_rbxm(&granted);
    assert!(dom.descendants().any(|i| i.class == "UnionOperation"));
    let bad = bin()
        .args([
            "pack",
            generator.to_str().unwrap(),
            "--sandboxed",
            "--capability",
            "Csg",
            "-o",
        ])
        .arg(tmp("csg-bad.rbxm"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("unknown SecurityCapability 'Csg'"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// A sandboxed generator may not write outside its container, yet gets AssetService: made
/// for the run and never saved.
#[test]
fn a_sandboxed_mesh_generator_gets_asset_service_without_saving_it() {
    let generator = tmp("SandboxedMesh.luau");
    std::fs::write(
        &generator,
        r#"
local Gen = {}
Gen.Attributes = { Sides = 5 }
function Gen.OnGenerate(params, target)
    local AssetService = game:GetService("AssetService")
    local em = AssetService:CreateEditableMesh()
    local c = em:AddVertex(Vector3.new(0, 1, 0))
    local ring = {}
    for i = 1, params.Attributes.Sides do
        local t = i / params.Attributes.Sides * math.pi * 2
        ring[i] = em:AddVertex(Vector3.new(math.cos(t), 0, math.sin(t)))
    end
    for i = 1, #ring do
        em:AddTriangle(c, ring[i % #ring + 1], ring[i])
    end
    AssetService:CreateMeshPartAsync(Content.fromObject(em)).Parent = target
end
return Gen
"#,
    )
    .unwrap();
    let package = tmp("sandboxed-mesh.rbxm");
    let place = tmp("sandboxed-mesh.rbxlx");
    ok(bin()
        .args(["pack", generator.to_str().unwrap(), "--sandboxed", "-o"])
        .arg(&package)
        .output()
        .unwrap());
    ok(bin()
        .args(["regen", package.to_str().unwrap(), "--force", "-o"])
        .arg(&place)
        .output()
        .unwrap());
    let xml = std::fs::read_to_string(&place).unwrap();
    assert!(
        xml.contains(r#"class="MeshPart""#),
        "the mesh part is generated"
    );
    assert!(
        !xml.contains(r#"class="AssetService""#),
        "AssetService is not saved"
    );
}

/// A MeshPart shows its EditableMesh as it changes, as in Roblox: triangles added after the
/// part was made are in the generated part; destroying the mesh leaves it the last ones.
#[test]
fn a_meshpart_shows_later_edits_of_its_editable_mesh() {
    let generator = tmp("LiveMesh.luau");
    std::fs::write(
        &generator,
        r#"
local AssetService = game:GetService("AssetService")
return { Attributes = {}, OnGenerate = function(params, target)
    local em = AssetService:CreateEditableMesh()
    local a, b, c = em:AddVertex(Vector3.zero), em:AddVertex(Vector3.xAxis), em:AddVertex(Vector3.yAxis)
    em:AddTriangle(a, b, c)
    local part = AssetService:CreateMeshPartAsync(Content.fromObject(em))
    part.Parent = target
    task.wait() -- the engine reads the scene between frames
    local d = em:AddVertex(Vector3.new(1, 1, 0))
    em:AddTriangle(b, d, c)
    -- A second part of the same mesh, made after the change: the first part has still to
    -- take it when the mesh is destroyed.
    local second = AssetService:CreateMeshPartAsync(Content.fromObject(em))
    second.Parent = target
    em:Destroy()
end }
"#,
    )
    .unwrap();
    let glb = tmp("live-mesh.glb");
    ok(generate(&[
        generator.to_str().unwrap(),
        "--no-cache",
        "-o",
        glb.to_str().unwrap(),
    ]));
    let doc = glb_json(&glb);
    // Both parts show the final mesh: one shared glTF mesh of two triangles.
    assert_eq!(
        doc["meshes"].as_array().unwrap().len(),
        1,
        "{}",
        doc["meshes"]
    );
    let prim = &doc["meshes"][0]["primitives"][0];
    assert_eq!(doc["meshes"][0]["name"], "EditableMesh 1x1x0.001");
    assert_eq!(
        doc["accessors"][prim["indices"].as_u64().unwrap() as usize]["count"],
        6
    );
}

/// A mesh the script drops (and the VM collects) after changing it still reaches the parts
/// showing it: the saved place has both triangles.
#[test]
fn a_collected_editable_mesh_leaves_its_last_state_to_its_parts() {
    let script = tmp("collected_mesh.luau");
    std::fs::write(
        &script,
        r#"
local AssetService = game:GetService("AssetService")
local em = AssetService:CreateEditableMesh()
local a, b, c = em:AddVertex(Vector3.zero), em:AddVertex(Vector3.xAxis), em:AddVertex(Vector3.yAxis)
em:AddTriangle(a, b, c)
AssetService:CreateMeshPartAsync(Content.fromObject(em)).Parent = workspace
em:AddTriangle(b, em:AddVertex(Vector3.new(1, 1, 0)), c)
em = nil
for i = 1, 2e6 do local t = { i } end -- garbage enough for the collector to run
"#,
    )
    .unwrap();
    let place = tmp("collected_mesh.rbxmx");
    let glb = tmp("collected_mesh.glb");
    ok(bin()
        .args([
            "run",
            script.to_str().unwrap(),
            "--save",
            place.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    ok(bin()
        .args([
            "export",
            place.to_str().unwrap(),
            "-o",
            glb.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    let doc = glb_json(&glb);
    let mesh = doc["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"].as_str().unwrap().starts_with("EditableMesh"))
        .expect("the mesh");
    let prim = &mesh["primitives"][0];
    assert_eq!(
        doc["accessors"][prim["indices"].as_u64().unwrap() as usize]["count"],
        6
    );
}

/// Text XML cannot hold (a control character in a Name or a string value) is refused when
/// saving as .rbxmx, naming the instance and property, and the file already there stays; a
/// binary file stores it. Before, the .rbxmx was written and no reader could load it back.
#[test]
fn text_xml_cannot_hold_is_refused_and_the_old_file_kept() {
    let generator = tmp("control_chars.luau");
    std::fs::write(
        &generator,
        r#"return { Attributes = { Bad = true }, OnGenerate = function(p, c)
  local v = Instance.new("StringValue")
  v.Name = "Note"
  v.Value = if p.Attributes.Bad then "bell\7" else "fine"
  v.Parent = c
end }"#,
    )
    .unwrap();
    let out = tmp("control_chars.rbxmx");
    ok(generate(&[
        generator.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--attr",
        "Bad=false",
    ]));
    let before = std::fs::read(&out).unwrap();
    let run = generate(&[generator.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(
        err.contains("Note: Value holds the character U+0007") && err.contains(".rbxm"),
        "{err}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before, "the old file stays");
    let bin_out = tmp("control_chars.rbxm");
    ok(generate(&[
        generator.to_str().unwrap(),
        "-o",
        bin_out.to_str().unwrap(),
    ]));
    let dom = read_rbxm(&bin_out);
    let v = dom.descendants().find(|i| i.name == "Note").unwrap();
    assert_eq!(
        v.properties.get(&"Value".into()),
        Some(&rbx_types::Variant::String("bell\u{7}".into()))
    );
}

/// Paths that name no generator file get an error that says so: a folder given to
/// `generate` or `new` (which wrote `pk.luau` beside the folder), a bare `.luau`, and a
/// scene output of `regen` in a format a scene is not saved in (whose error listed glTF).
#[test]
fn paths_that_name_no_file_are_named_for_what_they_are() {
    let folder = tmp("a_folder");
    std::fs::create_dir_all(&folder).unwrap();
    let err = |args: &[&str]| {
        let o = bin().args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let f = folder.to_str().unwrap();
    let e = err(&["generate", f, "-o", tmp("x.rbxm").to_str().unwrap()]);
    assert!(
        e.contains("is a folder") && e.contains("Generator.luau"),
        "{e}"
    );
    let e = err(&["new", &format!("{f}/")]);
    assert!(e.contains("is a folder"), "{e}");
    assert!(
        !tmp("a_folder.luau").exists(),
        "nothing written beside the folder"
    );
    let e = err(&["new", tmp(".luau").to_str().unwrap()]);
    assert!(e.contains("name the generator file"), "{e}");
    let scene = run_and_save(
        "names_scene.luau",
        "Instance.new('Part', workspace)",
        "names.rbxl",
    );
    let e = err(&[
        "regen",
        scene.to_str().unwrap(),
        "-o",
        tmp("r.txt").to_str().unwrap(),
    ]);
    assert!(
        e.contains(".rbxl, .rbxlx, .rbxm or .rbxmx") && !e.contains(".glb"),
        "{e}"
    );
}

/// A generator that builds in the Workspace (old scripts' `Instance.new("Part", workspace)`)
/// gets a warning naming what `generate` leaves out, instead of a silent empty model; the
/// services and the Terrain the engine makes for any script are not named.
#[test]
fn generate_warns_about_instances_put_outside_the_target_container() {
    let generator = tmp("Stray.luau");
    std::fs::write(
        &generator,
        r#"return { Attributes = {}, OnGenerate = function(params, target)
    for i = 1, 5 do Instance.new("Part", workspace).Name = "Stray" .. i end
    local kept = Instance.new("Part")
    kept.Parent = target
    local _ = game:GetService("Lighting"), workspace.Terrain, workspace.CurrentCamera
end }"#,
    )
    .unwrap();
    let out = tmp("stray.rbxm");
    let o = ok(generate(&[s(&generator), "-o", s(&out)]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the generator put 5 instances outside its targetContainer (Workspace.Stray1, Workspace.Stray2, Workspace.Stray3 and 2 more), which"),
        "{err}"
    );
    assert!(
        !err.contains("Lighting") && !err.contains("Terrain"),
        "{err}"
    );
    assert!(err.contains("generated 1 instance in"), "{err}");
    assert!(
        err.contains("which") && err.contains("stray.rbxm does not hold"),
        "{err}"
    );
    // --json lists what stderr said (it had no field for it).
    let o = ok(generate(&[s(&generator), "--json", "-o", s(&out)]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warnings = v["warnings"].as_array().expect("a warnings list");
    assert_eq!(warnings.len(), 1, "{v}");
    assert!(
        warnings[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("5 instances outside its targetContainer")),
        "{v}"
    );
    assert!(
        warnings[0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("Stray.luau")),
        "{v}"
    );
    // A place holds the whole Workspace: nothing to warn about there.
    let place = tmp("stray.rbxl");
    let o = ok(generate(&[s(&generator), "-o", s(&place)]));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    // A generator that builds only in its container gets no warning.
    let stairs = examples().join("SpiralStaircase.luau");
    let o = ok(generate(&[s(&stairs), "-o", s(&out)]));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// A generator whose parts never reach targetContainer (a misspelled `target` is a nil
/// global in Luau, so `p.Parent = targett` unparents them) is told so, by generate and by
/// regen; one that fills its results is not.
#[test]
fn empty_results_of_a_run_that_made_instances_are_warned_about() {
    let g = tmp("Typo.luau");
    std::fs::write(
        &g,
        r#"return { Attributes = { Posts = 5 }, OnGenerate = function(params, target)
    for i = 1, params.Attributes.Posts do
        local p = Instance.new("Part")
        p.Parent = targett
    end
end }
"#,
    )
    .unwrap();
    let o = ok(generate(&[s(&g), "--no-cache", "-o", s(&tmp("typo.rbxm"))]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Typo.luau: the generator created 5 instances but its results are empty")
            && err.contains("targetContainer"),
        "{err}"
    );
    // With a cache, every time: such results are not cached, so no hit hides the mistake.
    let cache = tmp("typo-cache");
    for _ in 0..2 {
        let o = ok(generate(&[
            s(&g),
            "--cache",
            s(&cache),
            "-o",
            s(&tmp("typo.rbxm")),
        ]));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("created 5 instances but its results are empty"),
            "{err}"
        );
    }
    // generate --json carries it too, as regen's does (null when there is none).
    let o = ok(generate(&[
        s(&g),
        "--no-cache",
        "--json",
        "-o",
        s(&tmp("typo.rbxm")),
    ]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["warning"]
            .as_str()
            .is_some_and(|w| w.contains("results are empty")),
        "{v}"
    );
    let o = ok(generate(&[
        s(&examples().join("CastleWall.luau")),
        "--no-cache",
        "--json",
        "-o",
        s(&tmp("wall.rbxm")),
    ]));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["warning"].is_null(), "{v}");
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
    // regen says it per model, and --json carries it.
    let scene = run_and_save(
        "typo-scene.luau",
        &format!(
            r#"local m = Instance.new("ModuleScript")
m.Name = "Typo"
m.Source = [==[{}]==]
m.Parent = game:GetService("ServerStorage")
local pm = Instance.new("ProceduralModel")
pm.Name = "Posts"
pm.Generator = m
pm.Parent = workspace
"#,
            std::fs::read_to_string(&g).unwrap()
        ),
        "typo-scene.rbxl",
    );
    let o = ok(bin()
        .args(["regen", s(&scene), "--force", "--no-cache", "--json"])
        .output()
        .unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: Workspace.Posts: the generator created 5 instances"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["models"][0]["warning"]
            .as_str()
            .is_some_and(|w| w.contains("results are empty")),
        "{v}"
    );
}

/// `export` of a place writes what the world shows: the Workspace's contents (its Terrain
/// meshed on its own), not the templates kept in ReplicatedStorage or ServerStorage, which
/// would otherwise pile up at their stored positions.
#[test]
fn export_of_a_place_writes_the_workspace_not_the_storage() {
    let place = run_and_save(
        "export-storage.luau",
        r#"local template = Instance.new("Part")
template.Name = "Template"
template.Parent = game:GetService("ReplicatedStorage")
local stored = Instance.new("Part")
stored.Name = "Stored"
stored.Parent = game:GetService("ServerStorage")
local shown = Instance.new("Part")
shown.Name = "Shown"
shown.Parent = workspace
"#,
        "export-storage.rbxl",
    );
    let glb = tmp("export-storage.glb");
    ok(bin()
        .args(["export", s(&place), "-o", s(&glb)])
        .output()
        .unwrap());
    let json = glb_json(&glb);
    let roots: Vec<&str> = json["scenes"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            json["nodes"][n.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(roots, ["Workspace"], "{json}");
    let names: Vec<&str> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(
        names.contains(&"Shown") && !names.contains(&"Template") && !names.contains(&"Stored"),
        "{names:?}"
    );
}

/// The files beside a generator key its cache entries (it may require them by path): the
/// walk over them does not follow a linked folder (a link back up made it go round until
/// the path was too long, and the cache was off), and a folder too big to walk says so.
#[test]
fn the_files_beside_a_generator_are_walked_without_following_links() {
    let dir = tmp("linked-folder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::copy(examples().join("CastleWall.luau"), dir.join("Wall.luau")).unwrap();
    std::fs::write(dir.join("lib/Util.luau"), "return 1\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", dir.join("lib/up")).unwrap();
    let cache = tmp("linked-folder-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let run = || {
        ok(generate(&[
            s(&dir.join("Wall.luau")),
            "--cache",
            s(&cache),
            "-o",
            s(&tmp("linked-wall.rbxm")),
        ]))
    };
    let first = String::from_utf8_lossy(&run().stderr).to_string();
    assert!(!first.contains("warning"), "{first}");
    let second = String::from_utf8_lossy(&run().stderr).to_string();
    assert!(second.contains("from the result cache"), "{second}");
    // Too many Luau files beside it to key the cache: it generates, and says the cache is off.
    for i in 0..1001 {
        std::fs::write(dir.join(format!("lib/M{i}.luau")), "return 0\n").unwrap();
    }
    let crowded = String::from_utf8_lossy(&run().stderr).to_string();
    assert!(
        crowded.contains("more than 1000 Luau files beside the generator")
            && crowded.contains("the result cache is off for this run")
            && crowded.contains("generated 3 instances"),
        "{crowded}"
    );
}

/// A `.luaurc` alias decides which file a string require loads, so the `.luaurc` files a
/// generator's requires may use are part of its cache keys: editing the alias in the folder
/// above the generator's gave the results of the file it used to name (a stale hit), and a
/// `.luaurc` added beside the generator, whose alias is nearer, does the same.
#[test]
fn an_edited_luaurc_alias_is_a_cache_miss() {
    let root = tmp("alias-cache");
    let gens = root.join("gens");
    for d in ["a", "b"] {
        std::fs::create_dir_all(gens.join(d)).unwrap();
    }
    std::fs::write(gens.join("a/util.luau"), r#"return { name = "FromA" }"#).unwrap();
    std::fs::write(gens.join("b/util.luau"), r#"return { name = "FromB" }"#).unwrap();
    let g = gens.join("Named.luau");
    std::fs::write(
        &g,
        r#"local util = require("@lib/util")
return { Attributes = {}, OnGenerate = function(params, target)
    local p = Instance.new("Part")
    p.Name = util.name
    p.Parent = target
end }
"#,
    )
    .unwrap();
    let cache = root.join("cache");
    let out = root.join("named.rbxm");
    let name = || {
        let o = ok(generate(&[s(&g), "--cache", s(&cache), "-o", s(&out)]));
        let dom = read_rbxm(&out);
        let names: Vec<String> = dom
            .descendants()
            .filter(|i| i.class == "Part")
            .map(|i| i.name.clone())
            .collect();
        (names, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let above = root.join(".luaurc");
    std::fs::write(&above, r#"{ "aliases": { "lib": "./gens/a" } }"#).unwrap();
    assert_eq!(name().0, ["FromA"]);
    assert!(
        name().1.contains("from the result cache"),
        "the same files: a hit"
    );
    std::fs::write(&above, r#"{ "aliases": { "lib": "./gens/b" } }"#).unwrap();
    let (names, err) = name();
    assert_eq!(names, ["FromB"], "{err}");
    std::fs::write(gens.join(".luaurc"), r#"{ "aliases": { "lib": "./a" } }"#).unwrap();
    let (names, err) = name();
    assert_eq!(names, ["FromA"], "the nearer .luaurc: {err}");
    assert!(!err.contains("from the result cache"), "{err}");
}

/// Event handlers run where the place asks: inside the call that fired them (`Fire`, a
/// property write, `Instance.new` with a parent, a method) when its
/// `Workspace.SignalBehavior` is Default or Immediate, as Roblox runs places saved so; at the
/// next resumption point when it is Deferred or absent (new places, procmodel's own
/// DataModel). Handlers that fire what they listen to stop at Roblox's re-entrancy depth
/// (10) in both modes, with a warning naming the signal.
#[test]
fn handlers_run_inside_the_firing_call_where_the_place_asks_for_immediate_signals() {
    let script = tmp("immediate_signals.luau");
    std::fs::write(
        &script,
        "local seen = {}\n\
         local b = Instance.new('BindableEvent')\n\
         b.Event:Connect(function(x) table.insert(seen, 'fire' .. x) end)\n\
         b:Fire(1)\n\
         table.insert(seen, '|')\n\
         local v = Instance.new('IntValue')\n\
         v.Changed:Connect(function(x) table.insert(seen, 'value' .. x) end)\n\
         v.Value = 5\n\
         table.insert(seen, '|')\n\
         local f = Instance.new('Folder')\n\
         f.ChildAdded:Connect(function(c) table.insert(seen, 'child' .. c.Name) end)\n\
         Instance.new('Part', f).Name = 'A'\n\
         table.insert(seen, '|')\n\
         f:SetAttribute('k', 1)\n\
         f.AttributeChanged:Connect(function(k) table.insert(seen, 'attr' .. k) end)\n\
         f:SetAttribute('k', 2)\n\
         table.insert(seen, '|')\n\
         local loop = Instance.new('IntValue')\n\
         loop.Changed:Connect(function() loop.Value += 1 end)\n\
         loop.Value = 1\n\
         task.wait()\n\
         table.insert(seen, 'loop' .. loop.Value)\n\
         print(table.concat(seen, ' '))\n",
    )
    .unwrap();
    let immediate = "fire1 | value5 | childPart | attrk | loop11";
    let deferred = "| | | | fire1 value5 childA attrk loop11";
    // Studio writes the property as SignalBehavior2 (older versions: SignalBehavior);
    // 0 is Default (Immediate today), 1 Immediate, 2 Deferred, 3 AncestryDeferred.
    for (property, value, expected) in [
        ("SignalBehavior2", 1, immediate),
        ("SignalBehavior", 1, immediate),
        ("SignalBehavior2", 0, immediate),
        ("SignalBehavior2", 2, deferred),
        ("SignalBehavior2", 3, deferred),
    ] {
        let place = tmp(&format!("signals_{property}_{value}.rbxlx"));
        std::fs::write(
            &place,
            format!(
                "<roblox version=\"4\">\n<Item class=\"Workspace\" referent=\"RBX0\"><Properties>\
                 <string name=\"Name\">Workspace</string><token name=\"{property}\">{value}</token>\
                 </Properties></Item>\n</roblox>\n"
            ),
        )
        .unwrap();
        let out = ok(bin()
            .arg("run")
            .arg(&script)
            .arg("--place")
            .arg(&place)
            .output()
            .unwrap());
        let err = common::stderr(&out);
        assert!(err.contains(expected), "{property} = {value}: {err}");
        assert_eq!(
            common::stderr(&out)
                .matches("Maximum event re-entrancy depth (10) exceeded for Value.Changed")
                .count(),
            1,
            "{}",
            common::stderr(&out)
        );
    }
    let without = ok(bin().arg("run").arg(&script).output().unwrap());
    let err = common::stderr(&without);
    assert!(err.contains(deferred), "{err}");
}

/// A file nesting instances deeper than any place does was decoded by recursion and
/// overflowed the native stack (the process aborted); now it is refused by name, while a
/// deep one within the limit reads (the XML decoder runs on a large stack) and saves.
#[test]
fn a_file_nesting_instances_too_deep_is_refused_and_a_deep_one_reads() {
    let nested = |levels: usize| {
        let mut x = String::from("<roblox version=\"4\">\n");
        for i in 0..levels {
            x.push_str(&format!(
                "<Item class=\"Folder\" referent=\"R{i}\"><Properties><string name=\"Name\">F</string></Properties>"
            ));
        }
        x.push_str(&"</Item>".repeat(levels));
        x.push_str("\n</roblox>\n");
        x
    };
    let script = tmp("deep_count.luau");
    std::fs::write(&script, "print(#workspace:GetDescendants())\n").unwrap();
    let too_deep = tmp("too_deep.rbxmx");
    std::fs::write(&too_deep, nested(20_000)).unwrap();
    let o = bin()
        .arg("run")
        .arg(&script)
        .arg("--place")
        .arg(&too_deep)
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("too_deep.rbxmx: its instances nest 20000 levels deep; procmodel reads files nesting at most 10000"),
        "{err}"
    );
    // Deeper than the main thread's stack took (4,000 levels aborted a debug build).
    let deep = tmp("deep_ok.rbxmx");
    std::fs::write(&deep, nested(4_000)).unwrap();
    let saved = tmp("deep_ok_saved.rbxm");
    for (place, save) in [(&deep, Some(&saved)), (&saved, None)] {
        let mut cmd = bin();
        cmd.arg("run").arg(&script).arg("--place").arg(place);
        if let Some(save) = save {
            cmd.arg("--save").arg(save);
        }
        let o = ok(cmd.output().unwrap());
        assert!(
            common::stderr(&o).contains("4000"),
            "{}",
            common::stderr(&o)
        );
    }
}

/// `examples/NpcCrowd.luau`: every villager is one rig — fifteen Motor6Ds from its
/// HumanoidRootPart, each part where its joint holds it (soles on the bottom of the box, head
/// on top of the torso) — coloured by its BodyColors and wearing a welded hat.
#[test]
fn npc_crowd_rigs_every_villager() {
    let crowd = examples().join("NpcCrowd.luau");
    let out = tmp("crowd.rbxm");
    ok(generate(&[
        crowd.to_str().unwrap(),
        "--size",
        "40,8,40",
        "--attr",
        "Count=6",
        "-o",
        out.to_str().unwrap(),
    ]));
    let dom = read_rbxm(&out);
    let villagers: Vec<_> = dom
        .descendants()
        .filter(|i| i.class == "Model" && i.name.starts_with("Villager"))
        .collect();
    assert_eq!(villagers.len(), 6);
    let child = |parent: &rbx_dom_weak::Instance, name: &str| {
        parent
            .children()
            .iter()
            .map(|&r| dom.get_by_ref(r).unwrap())
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("{} has no {name}", parent.name))
    };
    let position = |part: &rbx_dom_weak::Instance| match part.properties.get(&"CFrame".into()) {
        Some(rbx_types::Variant::CFrame(cf)) => cf.position,
        other => panic!("{}: {other:?}", part.name),
    };
    for v in villagers {
        let motors = dom
            .descendants_of(v.referent())
            .filter(|i| i.class == "Motor6D")
            .count();
        assert_eq!(motors, 15, "{}", v.name);
        let neck = child(child(v, "Head"), "Neck");
        assert_eq!(neck.class, "Motor6D");
        let upper = child(v, "UpperTorso");
        assert_eq!(
            neck.properties.get(&"Part0".into()),
            Some(&rbx_types::Variant::Ref(upper.referent()))
        );
        let (head, foot) = (position(child(v, "Head")), position(child(v, "LeftFoot")));
        assert!(
            (foot.y - (-4.0 + 0.2)).abs() < 1e-3,
            "{}: foot at {}",
            v.name,
            foot.y
        );
        assert!(
            head.y > position(upper).y + 1.0,
            "{}: head at {}",
            v.name,
            head.y
        );
        let hat = child(child(v, "Hat"), "Handle");
        assert_eq!(child(hat, "AccessoryWeld").class, "Weld");
    }
}

/// `examples/PipeRun.luau`: every pipe is one MeshPart swept along its path
/// (`GeometryService:SweepPartAsync`), carrying its triangles, inside the box, with a flange
/// at each end; the same seed gives the same bytes.
#[test]
fn pipe_run_sweeps_every_pipe_inside_the_box() {
    let pipes = examples().join("PipeRun.luau");
    let run = |name: &str| {
        let out = tmp(name);
        ok(generate(&[
            pipes.to_str().unwrap(),
            "--size",
            "24,16,24",
            "--attr",
            "Pipes=5",
            "-o",
            out.to_str().unwrap(),
            "--no-cache",
        ]));
        out
    };
    let (first, second) = (run("pipes1.rbxm"), run("pipes2.rbxm"));
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
    let dom = read_rbxm(&first);
    let bodies: Vec<_> = dom
        .descendants()
        .filter(|i| {
            let n = i.name.strip_prefix("Pipe");
            n.is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(bodies.len(), 5);
    for body in bodies {
        assert_eq!(body.class, "MeshPart", "{}", body.name);
        // A long string attribute reads back from the binary format as a BinaryString.
        let mesh = match body.properties.get(&"Attributes".into()) {
            Some(rbx_types::Variant::Attributes(a)) => match a.get("ProcmodelMesh") {
                Some(rbx_types::Variant::String(s)) => s.len(),
                Some(rbx_types::Variant::BinaryString(s)) => AsRef::<[u8]>::as_ref(s).len(),
                _ => 0,
            },
            _ => 0,
        };
        assert!(mesh > 1000, "{} carries no mesh", body.name);
        let (cf, size) = match (
            body.properties.get(&"CFrame".into()),
            body.properties.get(&"Size".into()),
        ) {
            (Some(rbx_types::Variant::CFrame(cf)), Some(rbx_types::Variant::Vector3(s))) => {
                (cf.position, *s)
            }
            other => panic!("{}: {other:?}", body.name),
        };
        for (c, s, half) in [
            (cf.x, size.x, 12.0),
            (cf.y, size.y, 8.0),
            (cf.z, size.z, 12.0),
        ] {
            assert!(
                (c - s / 2.0) >= -half - 1e-3 && (c + s / 2.0) <= half + 1e-3,
                "{} leaves the box: centre {c}, size {s}",
                body.name
            );
        }
        let flanges = body
            .children()
            .iter()
            .filter(|&&r| dom.get_by_ref(r).is_some_and(|i| i.name == "Flange"))
            .count();
        assert_eq!(flanges, 2, "{}", body.name);
    }
}

/// `examples/RuinedWall.luau`: strikes shatter a wall (`GenerateFragmentSites` around a point,
/// `FragmentAsync`): the unbroken rest stays one "Wall" MeshPart, fallen pieces lie on the
/// floor of the box, and the same seed gives the same bytes.
#[test]
fn ruined_wall_keeps_the_rest_and_drops_rubble_on_the_floor() {
    let ruin = examples().join("RuinedWall.luau");
    let run = |name: &str| {
        let out = tmp(name);
        ok(generate(&[
            ruin.to_str().unwrap(),
            "--size",
            "20,10,8",
            "-o",
            out.to_str().unwrap(),
            "--no-cache",
        ]));
        out
    };
    let (first, second) = (run("ruin1.rbxm"), run("ruin2.rbxm"));
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
    let dom = read_rbxm(&first);
    let walls: Vec<_> = dom.descendants().filter(|i| i.name == "Wall").collect();
    assert_eq!(walls.len(), 1);
    assert_eq!(walls[0].class, "MeshPart");
    let placed = |i: &rbx_dom_weak::Instance| match (
        i.properties.get(&"CFrame".into()),
        i.properties.get(&"Size".into()),
    ) {
        (Some(rbx_types::Variant::CFrame(cf)), Some(rbx_types::Variant::Vector3(s))) => {
            (cf.position, *s)
        }
        other => panic!("{}: {other:?}", i.name),
    };
    let rubble: Vec<_> = dom
        .descendants()
        .filter(|i| i.name.starts_with("Rubble"))
        .collect();
    let lodged = dom.descendants().filter(|i| i.name == "Lodged").count();
    assert!(
        rubble.len() >= 3 && lodged >= 1,
        "{} fallen, {lodged} lodged",
        rubble.len()
    );
    for piece in rubble {
        assert_eq!(piece.class, "MeshPart");
        let (p, s) = placed(piece);
        // Turned about Y only: its bounding box still rests on the floor (y = -5).
        assert!(
            (p.y - s.y / 2.0 + 5.0).abs() < 1e-3,
            "{} floats: {p:?} {s:?}",
            piece.name
        );
    }
}
