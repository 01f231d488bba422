//! Sharded bakes of a world (issue 16 with #12's tiles): `plan world.toml` lists the tiles,
//! N `bake --shard` processes side by side then `bake --merge URL -o DIR` give exactly the
//! files of one `procmodel terrain --tiles` run (index included); a shard killed with SIGKILL
//! leaves no manifest and its rerun completes the bake; a duplicated shard is harmless, a
//! missing one is named, a corrupt file is caught.

use std::path::{Path, PathBuf};
use std::process::Stdio;

mod common;
use common::*;

/// A world of 3 × 2 tiles of 512 studs (with a zone across a tile border) and resources.
fn world(name: &str) -> PathBuf {
    let p = tmp(name);
    std::fs::write(
        &p,
        r#"
seed = 3
grid = 4
columns = [300, 200]
origin = [0, 0]
[[zones]]
shape = "circle"
center = [512, 400]
r1 = 60
r2 = 120
material = "Asphalt"
[resources]
seed = 9
min_distance = 20
density = 0.5
"#,
    )
    .unwrap();
    p
}

/// Every file of a folder, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn one_process(world: &Path, name: &str) -> PathBuf {
    let out = tmp(name);
    ok(bin()
        .args([
            "terrain",
            s(world),
            "--tiles",
            s(&out),
            "--tile-size",
            "512",
        ])
        .args(["--tile-output", "glb,png,r32"])
        .output()
        .unwrap());
    out
}

/// Runs shards `indices` of `count` as processes side by side.
fn shards(world: &Path, count: u32, indices: &[u32], out: &Path) {
    run_side_by_side(indices.iter().map(|i| {
        let mut c = bin();
        c.args(["bake", s(world), "--shard", &format!("{i}/{count}")])
            .args(["--out", s(out), "--tile-size", "512"])
            .args(["--tile-output", "glb,png,r32"]);
        c
    }));
}

/// Removes a test's folders when it is done (a world bake writes ~100 MB).
fn clean(paths: &[&Path]) {
    for p in paths {
        let _ = std::fs::remove_dir_all(p);
    }
}

fn merge(bake: &Path, out: &Path) -> std::process::Output {
    bin()
        .args(["bake", "--merge", s(bake), "-o", s(out)])
        .output()
        .unwrap()
}

#[test]
fn r16_world_plan_lists_the_tiles() {
    let w = world("plan-world.toml");
    let plan = json(&ok(bin()
        .args([
            "plan",
            s(&w),
            "--json",
            "--shards",
            "2",
            "--tile-size",
            "512",
        ])
        .output()
        .unwrap()));
    assert_eq!(plan["kind"], "world");
    // Cells 0..300 × 0..200 grown by one: tiles -1..=2 × -1..=1 of 128 cells.
    let keys: Vec<&str> = plan["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 12, "{keys:?}");
    assert!(keys.contains(&"tile_0_0") && keys.contains(&"tile_2_1"));
    let sizes: u64 = plan["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["size"].as_u64().unwrap())
        .sum();
    // Voxel columns whose centres lie within the columns: cells 0..299 × 0..199.
    assert_eq!(sizes, 299 * 199, "every voxel column in exactly one tile");
    let per: Vec<u64> = plan["per_shard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(per.iter().sum::<u64>(), 12);
}

#[test]
fn r16_world_shards_side_by_side_merge_to_the_tiles_of_one_process() {
    let w = world("sides-world.toml");
    let reference = one_process(&w, "sides-one");
    let bake = tmp("sides-bake");
    shards(&w, 3, &[0, 1, 2], &bake);
    let out = tmp("sides-merged");
    let report = json(&ok(merge(&bake, &out)));
    assert_eq!(report["kind"], "world");
    assert_eq!(report["units"], 12);
    let (a, b) = (files(&reference), files(&out));
    assert_eq!(
        a.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs between one process and the merge");
    }
    assert!(a.len() > 12 * 3, "{} files", a.len());
    clean(&[&reference, &bake, &out]);
}

#[test]
fn r16_world_killed_shard_leaves_no_manifest_and_a_rerun_completes() {
    let w = world("kill-world.toml");
    let bake = tmp("kill-bake");
    let child = bin()
        .args(["bake", s(&w), "--shard", "0/1", "--out", s(&bake)])
        .args(["--tile-size", "512", "--tile-output", "glb,png,r32"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // SIGKILL after its first unit: nothing runs after it.
    kill_after_first_unit(child);
    assert!(!bake.join("manifests/shard-00000-of-00001.json").exists());
    let o = merge(&bake, &tmp("kill-merged"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no shard manifests"), "{}", stderr(&o));
    shards(&w, 1, &[0], &bake);
    let out = tmp("kill-merged");
    ok(merge(&bake, &out));
    let one = one_process(&w, "kill-one");
    assert!(files(&out) == files(&one));
    clean(&[&bake, &out, &one]);
}

#[test]
fn r16_world_duplicate_missing_and_corrupt_shards() {
    let w = world("dup-world.toml");
    let bake = tmp("dup-bake");
    shards(&w, 4, &[0, 1, 1, 3], &bake);
    let out = tmp("dup-merged");
    let o = merge(&bake, &out);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("rerun shard 2/4"), "{err}");
    assert!(err.contains("missing unit tile_"), "{err}");
    assert!(!out.join("index.json").exists());
    shards(&w, 4, &[2], &bake);
    let report = json(&ok(merge(&bake, &out)));
    assert!(report["missing_shards"].as_array().unwrap().is_empty());
    let one = one_process(&w, "dup-one");
    assert!(files(&out) == files(&one));
    clean(&[&out, &one]);
    // A damaged tile file: the merge names it and the shard to rerun.
    let victim = std::fs::read_dir(bake.join("files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&victim, bytes).unwrap();
    let o = merge(&bake, &tmp("dup-merged-2"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("corrupt") && err.contains("rerun the shard"),
        "{err}"
    );
    clean(&[&bake, &tmp("dup-merged-2")]);
    // Tile settings are for worlds only.
    let scene = tmp("not-a-world.rbxl");
    std::fs::write(&scene, b"x").unwrap();
    let o = bin()
        .args(["plan", s(&scene), "--tile-size", "512"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("--tile-size and --tile-output are for world files"));
}
