//! `procmodel terrain --tiles`: a world baked tile by tile is the whole world cut up — the
//! tiles' terrain triangles are exactly the whole mesh's (no seam, no gap, no duplicate), their
//! resources are the whole world's, and their heightmaps are crops of the whole heightmap on
//! one height scale, sharing their edge rows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::{bin, examples, ok};

fn village() -> PathBuf {
    examples().join("village/world.toml")
}

/// An empty folder of this test binary's own.
fn dir(name: &str) -> PathBuf {
    let d = common::tmp(name);
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap();
    }
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A glb's JSON and BIN chunks.
fn glb(path: &Path) -> (serde_json::Value, Vec<u8>) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..4], b"glTF", "{}", path.display());
    let jlen = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let doc = serde_json::from_slice(&b[20..20 + jlen]).unwrap();
    let rest = &b[20 + jlen..];
    if rest.len() < 8 {
        return (doc, Vec::new());
    }
    let blen = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    (doc, rest[8..8 + blen].to_vec())
}

/// One accessor's elements as little-endian u32 words (positions: 3 per element).
fn accessor(doc: &serde_json::Value, bin: &[u8], i: usize) -> Vec<u32> {
    let a = &doc["accessors"][i];
    let view = &doc["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + a["byteOffset"].as_u64().unwrap_or(0) as usize;
    let count = a["count"].as_u64().unwrap() as usize;
    let comps = match a["type"].as_str().unwrap() {
        "VEC3" => 3,
        "SCALAR" => 1,
        t => panic!("accessor type {t}"),
    };
    let n = count * comps;
    match a["componentType"].as_u64().unwrap() {
        5126 | 5125 => (0..n)
            .map(|k| u32::from_le_bytes(bin[start + 4 * k..start + 4 * k + 4].try_into().unwrap()))
            .collect(),
        5123 => (0..n)
            .map(|k| {
                u32::from(u16::from_le_bytes(
                    bin[start + 2 * k..start + 2 * k + 2].try_into().unwrap(),
                ))
            })
            .collect(),
        c => panic!("component type {c}"),
    }
}

type Triangle = (String, [[u32; 3]; 3]);

/// The terrain triangles of a glb (the mesh of the `Terrain` node), each as its material and
/// its three corners' position bits in a canonical order.
fn terrain_triangles(path: &Path) -> Vec<Triangle> {
    let (doc, bin) = glb(path);
    let nodes = doc["nodes"].as_array().unwrap();
    let Some(node) = nodes.iter().find(|n| n["name"] == "Terrain") else {
        return Vec::new();
    };
    let Some(mesh) = node["mesh"].as_u64() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in doc["meshes"][mesh as usize]["primitives"]
        .as_array()
        .unwrap()
    {
        let m = p["material"].as_u64().unwrap() as usize;
        let name = doc["materials"][m]["name"].as_str().unwrap().to_owned();
        let pos = accessor(
            &doc,
            &bin,
            p["attributes"]["POSITION"].as_u64().unwrap() as usize,
        );
        let idx = accessor(&doc, &bin, p["indices"].as_u64().unwrap() as usize);
        for t in idx.chunks(3) {
            let mut v = [0usize; 3].map(|_| [0u32; 3]);
            for (k, &i) in t.iter().enumerate() {
                let i = i as usize;
                v[k] = [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]];
            }
            // Rotate so the smallest corner is first (keeps the winding).
            let first = (0..3).min_by_key(|&k| v[k]).unwrap();
            v.rotate_left(first);
            out.push((name.clone(), v));
        }
    }
    out.sort();
    out
}

fn node_count(path: &Path, name: &str) -> usize {
    let (doc, _) = glb(path);
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["name"] == name)
        .count()
}

fn r16(path: &Path) -> Vec<u16> {
    std::fs::read(path)
        .unwrap()
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn tiles_put_together_are_the_whole_world() {
    let d = dir("village");
    let tiles = d.join("tiles");
    let out = ok(bin()
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("whole.glb"))
        .arg("-o")
        .arg(d.join("whole.r16"))
        .arg("--tiles")
        .arg(&tiles)
        .args([
            "--tile-size",
            "256",
            "--tile-output",
            "glb,r16,png",
            "--json",
        ])
        .output()
        .unwrap());
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let index = read_json(&tiles.join("index.json"));
    assert_eq!(index["format"], "procmodel-tiles/1");
    // The index pins the input too: the world file's BLAKE3.
    assert_eq!(
        index["world_blake3"].as_str().unwrap(),
        blake3::hash(&std::fs::read(village()).unwrap())
            .to_hex()
            .as_str()
    );
    assert_eq!(index["tile_studs"], 256);
    let entries = index["tiles"].as_array().unwrap();
    // The village covers studs -256..508 (cells -64..127, grown by one for the mesh): tiles
    // -2..=1 along each axis.
    assert_eq!(entries.len(), 16);
    assert_eq!(summary["tiles"], 16);
    let keys: Vec<&str> = entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys[0], "tile_-2_-2");
    assert_eq!(keys[15], "tile_1_1");

    // Every listed file is there with the listed hash.
    for e in entries {
        for f in e["files"].as_array().unwrap() {
            let bytes = std::fs::read(tiles.join(f["name"].as_str().unwrap())).unwrap();
            assert_eq!(f["bytes"].as_u64().unwrap() as usize, bytes.len());
            assert_eq!(
                f["blake3"].as_str().unwrap(),
                blake3::hash(&bytes).to_hex().as_str()
            );
        }
    }

    // Mesh: the tiles' triangles are exactly the whole world's.
    let whole = terrain_triangles(&d.join("whole.glb"));
    assert!(whole.len() > 10_000, "{} triangles", whole.len());
    let mut parts: Vec<Triangle> = Vec::new();
    let mut trees = 0;
    let mut rocks = 0;
    let mut listed = 0;
    for e in entries {
        let key = e["key"].as_str().unwrap();
        let path = tiles.join(format!("{key}.glb"));
        let tris = terrain_triangles(&path);
        assert_eq!(tris.len() as u64, e["triangles"].as_u64().unwrap(), "{key}");
        parts.extend(tris);
        trees += node_count(&path, "Tree");
        rocks += node_count(&path, "Rock");
        listed += e["resources"].as_u64().unwrap() as usize;
    }
    parts.sort();
    assert_eq!(parts.len(), whole.len(), "triangle count of tiles vs whole");
    assert!(
        parts == whole,
        "the tiles' triangles differ from the whole mesh's"
    );
    // Resources: each once, in the tile holding its centre.
    assert_eq!(trees, node_count(&d.join("whole.glb"), "Tree"));
    assert_eq!(rocks, node_count(&d.join("whole.glb"), "Rock"));
    assert_eq!(trees + rocks, listed);
    assert!(listed > 20, "{listed} resources");

    // Heightmaps: crops of the whole one on the whole world's scale, edges shared.
    let whole_hm = r16(&d.join("whole.r16"));
    let whole_side = read_json(&d.join("whole.r16.json"));
    let (ww, wo) = (
        whole_side["width"].as_u64().unwrap() as usize,
        [
            whole_side["origin"][0].as_f64().unwrap(),
            whole_side["origin"][1].as_f64().unwrap(),
        ],
    );
    let step = whole_side["studs_per_pixel"].as_f64().unwrap();
    let mut covered = vec![false; whole_hm.len()];
    for e in entries {
        let key = e["key"].as_str().unwrap();
        let side = read_json(&tiles.join(format!("{key}.r16.json")));
        assert_eq!(side["min_height"], whole_side["min_height"], "{key}");
        assert_eq!(side["max_height"], whole_side["max_height"], "{key}");
        let (w, h) = (
            side["width"].as_u64().unwrap() as usize,
            side["height"].as_u64().unwrap() as usize,
        );
        assert_eq!(e["pixels"], serde_json::json!([w, h]), "{key}");
        let ox = ((side["origin"][0].as_f64().unwrap() - wo[0]) / step) as usize;
        let oz = ((side["origin"][1].as_f64().unwrap() - wo[1]) / step) as usize;
        let px = r16(&tiles.join(format!("{key}.r16")));
        assert_eq!(px.len(), w * h);
        for z in 0..h {
            for x in 0..w {
                let k = (oz + z) * ww + ox + x;
                assert_eq!(px[z * w + x], whole_hm[k], "{key} pixel ({x}, {z})");
                covered[k] = true;
            }
        }
        // The PNG of the tile holds the same samples (16-bit, big-endian in the file).
        let png = std::fs::read(tiles.join(format!("{key}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(
            u32::from_be_bytes(png[16..20].try_into().unwrap()) as usize,
            w
        );
        assert_eq!(png[24], 16, "{key}.png bit depth");
    }
    assert!(
        covered.iter().all(|&c| c),
        "every whole-heightmap pixel is in a tile"
    );
}

#[test]
fn tiles_are_the_same_bytes_on_any_thread_count() {
    let run = |threads: &str, name: &str| {
        let d = dir(name);
        ok(bin()
            .env("RAYON_NUM_THREADS", threads)
            .arg("terrain")
            .arg(village())
            .arg("--tiles")
            .arg(d.join("tiles"))
            .args(["--tile-size", "512"])
            .output()
            .unwrap());
        std::fs::read(d.join("tiles/index.json")).unwrap()
    };
    let one = run("1", "threads-1");
    assert_eq!(one, run("2", "threads-2"));
    let index: serde_json::Value = serde_json::from_slice(&one).unwrap();
    let names: BTreeMap<String, u64> = index["tiles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["files"].as_array().unwrap().clone())
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    // Default outputs: a glb and a PNG (with its sidecar) per tile.
    assert!(names.keys().any(|n| n.ends_with(".glb")));
    assert!(names.keys().any(|n| n.ends_with(".png.json")));
    assert!(names.values().all(|&b| b > 0));
}

#[test]
fn bad_tile_options_are_named() {
    let d = dir("bad");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--tile-size", "100"],
            "--tile-size 100: must be a positive multiple of 128 studs",
        ),
        (
            &["--tile-output", "glb,obj"],
            "--tile-output: unknown tile output 'obj'",
        ),
        (&["--snap", "pow2"], "--snap is for whole heightmaps"),
        (&["--tile-output", ","], "--tile-output: name at least one"),
    ];
    for (extra, want) in cases {
        let out = bin()
            .arg("terrain")
            .arg(village())
            .arg("--tiles")
            .arg(d.join("t"))
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Neither -o nor --tiles: clap names what is missing.
    let out = bin().arg("terrain").arg(village()).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output"));
}
