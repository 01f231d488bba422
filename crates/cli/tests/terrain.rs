//! `procmodel terrain` tests: the village example builds into a place whose Terrain decodes,
//! a validator-clean .glb and a linear 16-bit PNG; bad world files give named errors.

mod common;

use common::{child_of_class, glb_json};
use glam::IVec3;
use procmodel_terrain::{Material, Terrain, smoothgrid};
use rbx_dom_weak::WeakDom;
use rbx_types::Variant;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test, with its own result cache (never the user's).
fn bin() -> Command {
    common::bin()
}

fn village() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/village/world.toml")
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("procmodel-cli-terrain")
        .join(name);
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap();
    }
    std::fs::create_dir_all(&d).unwrap();
    d
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

/// `procmodel <verb> <input> <flag> <output>`, which must succeed (`run … --save`,
/// `export … -o`).
fn cli(verb: &str, input: &Path, flag: &str, output: &Path) -> Output {
    ok(bin()
        .arg(verb)
        .arg(input)
        .arg(flag)
        .arg(output)
        .output()
        .unwrap())
}

/// Builds the village into `d` (.rbxl, .glb, .png) and returns the `--json` summary.
fn build_village(d: &Path) -> serde_json::Value {
    build_village_threads(d, None)
}

/// As [`build_village`], on `threads` rayon threads when given.
fn build_village_threads(d: &Path, threads: Option<usize>) -> serde_json::Value {
    let mut cmd = bin();
    if let Some(n) = threads {
        cmd.env("RAYON_NUM_THREADS", n.to_string());
    }
    let out = ok(cmd
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("village.rbxl"))
        .arg("-o")
        .arg(d.join("village.glb"))
        .arg("-o")
        .arg(d.join("village.png"))
        .arg("--json")
        .output()
        .unwrap());
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

fn load_terrain(path: &Path) -> (WeakDom, Vec<u8>) {
    let dom = rbx_binary::from_reader(std::fs::File::open(path).unwrap()).unwrap();
    let ws = child_of_class(&dom, None, "Workspace").expect("a Workspace");
    let terrain = child_of_class(&dom, Some(ws.referent()), "Terrain").expect("Workspace.Terrain");
    let Some(Variant::BinaryString(b)) = terrain.properties.get(&"SmoothGrid".into()) else {
        panic!("Terrain has no SmoothGrid BinaryString");
    };
    let bytes: &[u8] = b.as_ref();
    let bytes = bytes.to_vec();
    (dom, bytes)
}

fn count(t: &Terrain) -> u64 {
    let mut n = 0;
    for (_, c) in t.chunks() {
        for y in 0..32 {
            for z in 0..32 {
                for x in 0..32 {
                    n += u64::from(!c.get(x, y, z).is_empty());
                }
            }
        }
    }
    n
}

#[test]
fn village_place_has_terrain_that_decodes_with_the_zones_surfaces() {
    let d = dir("village");
    let summary = build_village(&d);
    let (dom, grid) = load_terrain(&d.join("village.rbxl"));
    let t = smoothgrid::decode(&grid).expect("SmoothGrid decodes");
    assert_eq!(
        smoothgrid::encode(&t),
        grid,
        "decode then encode is the same blob"
    );
    assert_eq!(count(&t), summary["voxels"].as_u64().unwrap());
    assert!(count(&t) > 100_000);
    // Every zone is flat at 0 in its surface material: the voxel below Y = 0 full, above empty.
    for (x, z, m) in [
        (0, 0, Material::Asphalt),
        (120, 120, Material::Sandstone),
        (120, 240, Material::Salt),
        (240, 240, Material::Asphalt),
        (240, 120, Material::Concrete),
    ] {
        let below = t.get(IVec3::new(x / 4, -1, z / 4));
        assert_eq!((below.material, below.occupancy), (m, 255), "at ({x}, {z})");
        assert!(
            t.get(IVec3::new(x / 4, 0, z / 4)).is_empty(),
            "at ({x}, {z})"
        );
    }
    // Outside the zones the ground follows the noise: several band materials appear.
    let mut seen = std::collections::BTreeSet::new();
    for (_, c) in t.chunks() {
        for y in 0..32 {
            for z in 0..32 {
                for x in 0..32 {
                    seen.insert(c.get(x, y, z).material.name());
                }
            }
        }
    }
    for m in ["Grass", "Ground", "Mud", "LeafyGrass"] {
        assert!(seen.contains(m), "{m} missing from {seen:?}");
    }

    // Resources: none in a flat part, none floating (solid terrain at every bottom).
    let res = dom
        .descendants()
        .filter(|i| i.class == "Part")
        .collect::<Vec<_>>();
    assert!(res.len() > 50, "{} resource parts", res.len());
    assert!(res.iter().any(|p| p.name == "Trunk"));
    assert_eq!(
        summary["resources"].as_u64().unwrap() as usize,
        dom.descendants()
            .filter(|i| i.name == "Tree" || i.name == "Rock")
            .count()
    );
    for p in res.iter().filter(|p| p.name != "Crown") {
        let Some(Variant::CFrame(cf)) = p.properties.get(&"CFrame".into()) else {
            panic!("no CFrame");
        };
        let Some(Variant::Vector3(size)) = p.properties.get(&"Size".into()) else {
            panic!("no Size");
        };
        let (x, z) = (cf.position.x, cf.position.z);
        let bottom = cf.position.y - size.y / 2.0;
        assert!(
            x.hypot(z) >= 80.0,
            "{} at ({x}, {z}) inside the village",
            p.name
        );
        for (cx, cz) in [
            (120.0, 120.0),
            (120.0, 240.0),
            (240.0, 240.0),
            (240.0, 120.0),
        ] {
            let inside = (x - cx).abs() < 40.0 && (z - cz).abs() < 60.0;
            assert!(
                !inside,
                "{} at ({x}, {z}) inside the zone at ({cx}, {cz})",
                p.name
            );
        }
        // The voxel surface of every column under the footprint is above the bottom.
        let cells = |lo: f32, hi: f32| (lo / 4.0).floor() as i32..=(hi / 4.0).floor() as i32;
        for cx in cells(x - size.x / 2.0, x + size.x / 2.0) {
            for cz in cells(z - size.z / 2.0, z + size.z / 2.0) {
                let top = (-64..64)
                    .rev()
                    .find_map(|y| {
                        let v = t.get(IVec3::new(cx, y, cz));
                        (!v.is_empty())
                            .then(|| 4.0 * y as f32 + 4.0 * f32::from(v.occupancy) / 255.0)
                    })
                    .expect("terrain under every resource");
                assert!(
                    bottom < top,
                    "{} at ({x}, {bottom}, {z}) floats over column ({cx}, {cz}) at {top}",
                    p.name
                );
            }
        }
    }

    let glb = std::fs::read(d.join("village.glb")).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&glb[20..20 + len]).unwrap();
    let names: Vec<&str> = json["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for m in ["Sandstone", "Salt", "Asphalt", "Concrete", "Grass"] {
        assert!(names.contains(&m), "{m} not among {names:?}");
    }
    // The resources are in the .glb as well, one Trunk node per tree.
    let trunks = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["name"] == "Trunk")
        .count();
    assert_eq!(trunks, res.iter().filter(|p| p.name == "Trunk").count());
}

/// PNG chunks after the signature: (type, data).
fn png_chunks(bytes: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let mut out = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let n = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind: [u8; 4] = bytes[at + 4..at + 8].try_into().unwrap();
        out.push((kind, bytes[at + 8..at + 8 + n].to_vec()));
        at += 12 + n;
    }
    out
}

fn png_size_depth(path: &Path) -> (u32, u32, u8, u8, Vec<[u8; 4]>) {
    let chunks = png_chunks(&std::fs::read(path).unwrap());
    let (kind, ihdr) = &chunks[0];
    assert_eq!(kind, b"IHDR");
    let w = u32::from_be_bytes(ihdr[0..4].try_into().unwrap());
    let h = u32::from_be_bytes(ihdr[4..8].try_into().unwrap());
    (w, h, ihdr[8], ihdr[9], chunks.iter().map(|c| c.0).collect())
}

#[test]
fn village_heightmap_is_linear_16_bit_with_a_sidecar() {
    let d = dir("heightmap");
    let out = ok(bin()
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("h.png"))
        .arg("-o")
        .arg(d.join("h.r16"))
        .arg("-o")
        .arg(d.join("h.r32"))
        .arg("--splat")
        .arg(d.join("splat"))
        .output()
        .unwrap());
    assert!(out.stdout.is_empty());
    let (w, h, depth, color, kinds) = png_size_depth(&d.join("h.png"));
    assert_eq!((w, h, depth, color), (192, 192, 16, 0));
    for k in [b"gAMA", b"sRGB", b"iCCP", b"cHRM"] {
        assert!(
            !kinds.contains(k),
            "{} chunk present",
            String::from_utf8_lossy(k)
        );
    }
    assert_eq!(std::fs::read(d.join("h.r16")).unwrap().len(), 192 * 192 * 2);
    let r32 = std::fs::read(d.join("h.r32")).unwrap();
    assert_eq!(r32.len(), 192 * 192 * 4);
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("h.png.json")).unwrap()).unwrap();
    assert_eq!(side["width"], 192);
    assert_eq!(side["studs_per_pixel"], 4.0);
    assert_eq!(side["origin"], serde_json::json!([-256.0, -256.0]));
    // R32 is studs: the village centre (pixel 64, 64) is at the plate's level.
    let at = (64 * 192 + 64) * 4;
    assert_eq!(f32::from_le_bytes(r32[at..at + 4].try_into().unwrap()), 0.0);
    let splat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("splat/splat.json")).unwrap()).unwrap();
    let maps = splat["maps"].as_array().unwrap();
    assert!(!maps.is_empty());
    for m in maps {
        let (w, _, depth, color, _) =
            png_size_depth(&d.join("splat").join(m["file"].as_str().unwrap()));
        assert_eq!((w, depth, color), (192, 8, 6));
    }
    for (rule, size) in [("pow2", 257), ("unreal", 253)] {
        ok(bin()
            .arg("terrain")
            .arg(village())
            .arg("-o")
            .arg(d.join(format!("{rule}.png")))
            .args(["--snap", rule])
            .output()
            .unwrap());
        let (w, h, ..) = png_size_depth(&d.join(format!("{rule}.png")));
        assert_eq!((w, h), (size, size), "{rule}");
    }
}

#[test]
fn same_world_gives_the_same_bytes_on_any_thread_count() {
    let (a, b) = (dir("same-a"), dir("same-b"));
    // Once on the default pool, once on a single thread: the bytes do not depend on it.
    let (sa, sb) = (build_village(&a), build_village_threads(&b, Some(1)));
    for name in [
        "village.rbxl",
        "village.glb",
        "village.png",
        "village.png.json",
    ] {
        assert_eq!(
            std::fs::read(a.join(name)).unwrap(),
            std::fs::read(b.join(name)).unwrap(),
            "{name}"
        );
    }
    let hashes = |s: &serde_json::Value| {
        s["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["blake3"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(hashes(&sa), hashes(&sb));
    assert_eq!(
        hashes(&sa)[0],
        blake3::hash(&std::fs::read(a.join("village.rbxl")).unwrap())
            .to_hex()
            .to_string()
    );
}

/// Runs the pinned Khronos validator on `files`; asserts no errors or warnings and returns
/// each report's `info`.
fn validate(files: &[PathBuf]) -> Vec<serde_json::Value> {
    let validator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../export/tests/validator");
    assert!(
        validator.join("node_modules/gltf-validator").is_dir(),
        "the Khronos glTF validator is not installed; run `npm ci --prefix crates/export/tests/validator`"
    );
    let out = Command::new("node")
        .arg(validator.join("validate.mjs"))
        .args(files)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reports.len(), files.len());
    reports
        .iter()
        .map(|r| {
            let issues = &r["report"]["issues"];
            assert_eq!(
                issues["numErrors"], 0,
                "{}: {}",
                r["file"], issues["messages"]
            );
            assert_eq!(
                issues["numWarnings"], 0,
                "{}: {}",
                r["file"], issues["messages"]
            );
            r["report"]["info"].clone()
        })
        .collect()
}

#[test]
fn village_glb_passes_the_khronos_validator() {
    let d = dir("validator");
    build_village(&d);
    ok(bin()
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("village.gltf"))
        .output()
        .unwrap());
    assert!(d.join("village.bin").is_file());
    let info = validate(&[d.join("village.glb"), d.join("village.gltf")]);
    assert!(info[0]["totalTriangleCount"].as_u64().unwrap() > 10_000);
    assert_eq!(info[0]["totalTriangleCount"], info[1]["totalTriangleCount"]);
}

/// Triangles of each primitive of a mesh, by material name.
fn triangles(doc: &serde_json::Value, mesh: usize) -> Vec<(String, u64)> {
    doc["meshes"][mesh]["primitives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let m = p["material"].as_u64().unwrap() as usize;
            let i = p["indices"].as_u64().unwrap() as usize;
            (
                doc["materials"][m]["name"].as_str().unwrap().to_owned(),
                doc["accessors"][i]["count"].as_u64().unwrap() / 3,
            )
        })
        .collect()
}

/// The mesh of the `Terrain` node under `Workspace`.
fn terrain_mesh_index(doc: &serde_json::Value) -> usize {
    let nodes = doc["nodes"].as_array().unwrap();
    let ws = nodes.iter().position(|n| n["name"] == "Workspace").unwrap();
    let terrain = nodes[ws]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as usize)
        .find(|&c| nodes[c]["name"] == "Terrain")
        .expect("a Terrain node under Workspace");
    nodes[terrain]["mesh"]
        .as_u64()
        .expect("the Terrain node has a mesh") as usize
}

#[test]
fn export_renders_the_places_terrain() {
    let d = dir("export");
    build_village(&d);
    for out in ["scene.glb", "scene.gltf"] {
        let run = cli("export", &d.join("village.rbxl"), "-o", &d.join(out));
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(!err.contains("warning"), "{out}: {err}");
    }
    let infos = validate(&[d.join("scene.glb"), d.join("scene.gltf")]);
    let scene = glb_json(&d.join("scene.glb"));
    let gltf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("scene.gltf")).unwrap()).unwrap();
    assert_eq!(gltf["nodes"], scene["nodes"]);
    assert_eq!(gltf["buffers"][0]["uri"], "scene.bin");
    // The Workspace.Terrain node carries the mesh the terrain command wrote.
    let mesh = terrain_mesh_index(&scene);
    let alone = glb_json(&d.join("village.glb"));
    let tris = triangles(&scene, mesh);
    assert_eq!(tris, triangles(&alone, terrain_mesh_index(&alone)));
    let nodes = scene["nodes"].as_array().unwrap();
    let terrain_tris: u64 = tris.iter().map(|t| t.1).sum();
    // The resources are there too, so the scene has more triangles than the terrain.
    let total = infos[0]["totalTriangleCount"].as_u64().unwrap();
    assert!(total > terrain_tris, "{total} <= {terrain_tris}");
    assert!(nodes.iter().any(|n| n["name"] == "Trunk"));
    assert_eq!(
        infos[1]["totalTriangleCount"],
        infos[0]["totalTriangleCount"]
    );
}

#[test]
fn export_obj_has_the_terrain_object_and_its_materials() {
    let d = dir("export-obj");
    build_village(&d);
    let run = cli(
        "export",
        &d.join("village.rbxl"),
        "-o",
        &d.join("scene.obj"),
    );
    assert!(!String::from_utf8_lossy(&run.stderr).contains("warning"));
    let obj = std::fs::read_to_string(d.join("scene.obj")).unwrap();
    let mtl = std::fs::read_to_string(d.join("scene.mtl")).unwrap();
    assert!(obj.contains("mtllib scene.mtl"));
    let verts = obj.lines().filter(|l| l.starts_with("v ")).count();
    assert_eq!(verts, obj.lines().filter(|l| l.starts_with("vn ")).count());
    let (head, terrain) = obj
        .split_once("o Workspace.Terrain\n")
        .expect("a terrain object");
    assert!(
        head.contains("o Workspace.Resources."),
        "the parts come first"
    );
    for l in obj.lines().filter(|l| l.starts_with("f ")) {
        for i in l[2..].split(' ') {
            let (v, n) = i.split_once("//").unwrap();
            assert_eq!(v, n);
            let v: usize = v.parse().unwrap();
            assert!((1..=verts).contains(&v), "{l}");
        }
    }
    let mut faces = 0;
    for l in terrain.lines() {
        if let Some(m) = l.strip_prefix("usemtl ") {
            assert!(m.starts_with("terrain_"), "{l}");
            assert!(mtl.contains(&format!("newmtl {m}\n")), "{m} not in the MTL");
        }
        faces += u64::from(l.starts_with("f "));
    }
    assert!(mtl.contains("newmtl terrain_Sandstone\nKd 0.5372549 0.3529412 0.2784314\n"));
    let glb = glb_json(&d.join("village.glb"));
    let tris: u64 = triangles(&glb, terrain_mesh_index(&glb))
        .iter()
        .map(|t| t.1)
        .sum();
    assert_eq!(faces, tris);
}

#[test]
fn export_names_a_damaged_smoothgrid() {
    use rbx_dom_weak::InstanceBuilder;
    let d = dir("damaged");
    let dom = WeakDom::new(InstanceBuilder::new("DataModel").with_child(
        InstanceBuilder::new("Workspace").with_child(
            InstanceBuilder::new("Terrain").with_property(
                "SmoothGrid",
                rbx_types::BinaryString::from(vec![1u8, 5, 0, 0, 0]),
            ),
        ),
    ));
    let place = d.join("bad.rbxl");
    let roots = dom.root().children().to_vec();
    rbx_binary::to_writer(std::fs::File::create(&place).unwrap(), &dom, &roots).unwrap();
    let out = bin()
        .arg("export")
        .arg(&place)
        .arg("-o")
        .arg(d.join("bad.glb"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("bad.rbxl: Workspace.Terrain.SmoothGrid: SmoothGrid:"),
        "{err}"
    );
    assert!(!d.join("bad.glb").exists());
}

/// Runs `terrain` on a world file with `text` and expects a failure whose message has `want`.
fn check_bad(name: &str, text: &str, want: &str) {
    let d = dir(&format!("bad-{}", name.replace('.', "-")));
    let world = d.join(name);
    std::fs::write(&world, text).unwrap();
    let out = bin()
        .arg("terrain")
        .arg(&world)
        .arg("-o")
        .arg(d.join("o.rbxl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{name}: accepted\n{text}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(err.contains(want), "{name}: {err:?} lacks {want:?}");
    assert!(
        err.contains(name),
        "{name}: the error names the file: {err}"
    );
    assert!(!d.join("o.rbxl").exists(), "{name}: wrote an output");
}

const HEAD: &str = "columns = [16, 16]\n";

#[test]
fn bad_world_files_name_the_zone_and_field() {
    let circle =
        |body: &str| format!("{HEAD}[[zones]]\nshape = \"circle\"\ncenter = [0, 0]\n{body}");
    let rect = |body: &str| {
        format!(
            "{HEAD}[[zones]]\nshape = \"circle\"\ncenter = [0, 0]\nr1 = 1\nr2 = 2\n[[zones]]\nshape = \"rect\"\ncenter = [0, 0]\n{body}"
        )
    };
    check_bad(
        "r2.toml",
        &circle("r1 = 10\nr2 = 10\n"),
        "zone 0: r2 must be greater than r1",
    );
    check_bad(
        "x2.toml",
        &rect("x1 = 8\nx2 = 4\nz1 = 1\nz2 = 2\n"),
        "zone 1: x2 must be greater than x1",
    );
    check_bad(
        "z2.toml",
        &rect("x1 = 1\nx2 = 4\nz1 = 5\nz2 = 5\n"),
        "zone 1: z2 must be greater than z1",
    );
    check_bad(
        "nan.toml",
        &circle("r1 = 1\nr2 = 2\nlevel = nan\n"),
        "zone 0: level is not a finite number",
    );
    check_bad(
        "nanr.toml",
        &circle("r1 = nan\nr2 = 2\n"),
        "zone 0: r1 is not a finite number",
    );
    check_bad(
        "unknown.toml",
        &circle("r1 = 1\nr2 = 2\nmaterial = \"Lava\"\n"),
        "zone 0: material \"Lava\" is not a terrain material",
    );
    check_bad(
        "plastic.toml",
        &circle("r1 = 1\nr2 = 2\nmaterial = \"Plastic\"\n"),
        "zone 0: material \"Plastic\" is not a terrain material",
    );
    check_bad(
        "water.toml",
        &circle("r1 = 1\nr2 = 2\nmaterial = \"Water\"\n"),
        "zone 0: material must be a solid terrain material (got Water)",
    );
    check_bad(
        "missing.toml",
        &circle("r1 = 1\n"),
        "zone 0: r2 is required for a circle zone",
    );
    check_bad(
        "shape.toml",
        &format!("{HEAD}[[zones]]\nshape = \"star\"\ncenter = [0, 0]\n"),
        "zone 0: shape must be circle or rect",
    );
    check_bad(
        "seed.toml",
        &format!("seed = nan\n{HEAD}"),
        "seed: is not a finite number",
    );
    check_bad(
        "grid.toml",
        &format!("grid = 0\n{HEAD}"),
        "grid: must be a positive number",
    );
    check_bad("size.toml", "seed = 1\n", "columns: (or studs) is required");
    check_bad(
        "field.toml",
        &format!("{HEAD}colour = 1\n"),
        "unknown field `colour`",
    );
    check_bad(
        "band.toml",
        &format!("{HEAD}[[bands]]\nabove = 0.1\nmaterial = \"Neon\"\n"),
        "bands: band 0: material: \"Neon\" is not a terrain material",
    );
    check_bad(
        "zone.json",
        r#"{"columns": [8, 8], "zones": [{"shape": "rect", "center": [0, 0], "x1": 4, "x2": 2, "z1": 1, "z2": 2}]}"#,
        "zone 0: x2 must be greater than x1",
    );
    check_bad(
        "huge.toml",
        "columns = [100000, 100000]\n",
        "columns: 100000×100000 exceeds 1073741824 columns",
    );
    check_bad("zero.toml", "columns = [0, 4]\n", "columns: must not be 0");
    // A grid so large that a few columns span more than the terrain (or any output) holds:
    // before, grid = 1e6 with 4×4 columns ran for ever building 5.6e11 voxel columns.
    check_bad(
        "grid1e6.toml",
        "grid = 1e6\ncolumns = [4, 4]\n",
        "columns: at grid 1000000 the world covers 562501500001 voxel columns (4 studs each), more than 1073741824",
    );
    check_bad(
        "grid1e308.toml",
        "grid = 1e308\ncolumns = [1, 1]\n",
        "grid: must be at most the terrain's extent, 8388608 studs (got 1e308)",
    );
    check_bad(
        "wide.toml",
        "grid = 1e6\ncolumns = [1, 20]\n",
        "columns: at grid 1000000 the world reaches -10000000 studs along Z, beyond the terrain's ±8388608",
    );
    check_bad(
        "grid64.toml",
        "grid = 64\ncolumns = [2048, 2048]\n",
        "32752×32752 voxel columns (4 studs each, at grid 64) is over the 67108864 a place or glTF built whole in memory holds",
    );
    // Heights that overflow, or a seed math.noise turns into NaN: named as a column the
    // terrain cannot hold, not as a floor the file never set.
    for (name, key) in [
        ("tall.toml", "height = 1e300"),
        ("seed1e300.toml", "seed = 1e300"),
    ] {
        check_bad(
            name,
            &format!("{key}\n{HEAD}"),
            "outside the terrain's ±8388608: the seed, scale, height",
        );
    }
    check_bad(
        "scale.toml",
        &format!("scale = 0\n{HEAD}"),
        "scale: must not be 0",
    );
    check_bad(
        "spacing.toml",
        &format!("{HEAD}[resources]\nmin_distance = 0\n"),
        "resources: min_distance: must be a positive number",
    );
    check_bad(
        "density.toml",
        &format!("{HEAD}[resources]\nmin_distance = 4\ndensity = 2\n"),
        "resources: density: must be in 0..=1",
    );
    check_bad(
        "steep.toml",
        &format!(
            "{HEAD}[noise]\nbasis = \"perlin\"\nfractal = \"fbm\"\noctaves = 32\nlacunarity = 20\n"
        ),
        "noise: octave 30's frequency is 1.074e39, beyond f32",
    );
    check_bad(
        "noise.toml",
        &format!("{HEAD}[noise]\nbasis = \"value\"\n"),
        "noise.basis: must be tutorial, perlin, simplex or opensimplex2",
    );
    check_bad("syntax.json", "{\"columns\": [8, 8],", "line 1");
    check_bad("world.yaml", HEAD, "unknown world format '.yaml'");
    check_bad(
        "world",
        HEAD,
        "a world is described in a .toml or .json file",
    );
    // A model passed by mistake is refused by its extension, not as text that is not UTF-8.
    let d = dir("bad-model");
    let model = d.join("tree.rbxm");
    std::fs::write(&model, b"<roblox!\x89\xff\r\n\x1a\n\xff\xff").unwrap();
    let out = bin()
        .arg("terrain")
        .arg(&model)
        .arg("-o")
        .arg(d.join("o.rbxl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tree.rbxm: unknown world format '.rbxm' (use .toml or .json)"),
        "{err}"
    );
}

#[test]
fn unknown_output_extension_is_refused_before_any_work() {
    let d = dir("ext");
    let out = bin()
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("v.rbxm"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown terrain output '.rbxm'"), "{err}");
}

/// The village written by a script with `@procmodel/terrain` (`examples/village/village.luau`,
/// the world as a Luau table, terrain in chunks) saves the Terrain `procmodel terrain` writes
/// for `world.toml`, byte for byte, and as many resources.
#[test]
fn village_script_saves_the_terrain_of_the_world_file() {
    let d = dir("village-script");
    ok(bin()
        .arg("terrain")
        .arg(village())
        .arg("-o")
        .arg(d.join("file.rbxl"))
        .output()
        .unwrap());
    cli(
        "run",
        &village().with_file_name("village.luau"),
        "--save",
        &d.join("script.rbxl"),
    );
    let (file_dom, file_grid) = load_terrain(&d.join("file.rbxl"));
    let (script_dom, script_grid) = load_terrain(&d.join("script.rbxl"));
    assert!(file_grid.len() > 10_000);
    assert!(file_grid == script_grid, "SmoothGrid differs");
    let resources = |dom: &WeakDom| {
        dom.descendants()
            .filter(|i| i.name == "Tree" || i.name == "Rock")
            .count()
    };
    assert!(resources(&file_dom) > 50);
    assert_eq!(resources(&file_dom), resources(&script_dom));
}

#[test]
fn generate_keeps_the_terrain_a_generator_writes() {
    // A place gets the voxels as Workspace.Terrain beside the generated Model; a glb gets
    // the terrain mesh; a model file cannot hold terrain and says so.
    let d = dir("generate");
    let generator =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/TerracedPlateau.luau");
    let run = |out: &str| {
        ok(bin()
            .arg("generate")
            .arg(&generator)
            .arg("-o")
            .arg(d.join(out))
            .output()
            .unwrap())
    };
    run("plateau.rbxl");
    let (dom, grid) = load_terrain(&d.join("plateau.rbxl"));
    let t = smoothgrid::decode(&grid).unwrap();
    assert!(count(&t) > 1000, "{} voxels", count(&t));
    let ws = dom
        .root()
        .children()
        .iter()
        .map(|&c| dom.get_by_ref(c).unwrap())
        .find(|i| i.class == "Workspace")
        .unwrap();
    let classes: Vec<&str> = ws
        .children()
        .iter()
        .map(|&c| dom.get_by_ref(c).unwrap().class.as_str())
        .collect();
    assert!(
        classes.contains(&"Model") && classes.contains(&"Terrain"),
        "{classes:?}"
    );
    assert!(!classes.contains(&"ProceduralModel"), "{classes:?}");

    run("plateau.glb");
    let doc = glb_json(&d.join("plateau.glb"));
    // No Workspace in a generator's glb: the Terrain node sits beside the Model's.
    let terrain = doc["scenes"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &doc["nodes"][n.as_u64().unwrap() as usize])
        .find(|n| n["name"] == "Terrain")
        .expect("a Terrain node at the top");
    let mesh = terrain["mesh"].as_u64().unwrap() as usize;
    let tris: u64 = triangles(&doc, mesh).iter().map(|t| t.1).sum();
    assert!(tris > 100, "{tris} terrain triangles");

    let out = run("plateau.rbxm");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the generator wrote terrain, which a model file cannot hold"),
        "{err}"
    );
}

#[test]
fn terrain_voxels_have_a_memory_limit() {
    // Voxels live outside the Luau heap: a script (workspace.Terrain) or a generator
    // (params.Terrain) that fills more than --max-terrain-mb fails, naming the limit.
    let d = dir("quota");
    let script = d.join("fill.luau");
    std::fs::write(
        &script,
        r#"
local noise = 0
for i = 0, 63 do
    -- 64 columns of 128 × 512 × 16-stud blocks with a rough top: dense chunks, ~200 MB
    workspace.Terrain:FillBlock(CFrame.new(i * 16, 0, 0), Vector3.new(16, 512 + (i % 3), 2048), Enum.Material.Rock)
end
print("filled")
"#,
    )
    .unwrap();
    let out = bin()
        .args(["run", script.to_str().unwrap(), "--max-terrain-mb", "16"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Terrain:FillBlock: the terrain's voxels take")
            && err.contains("over the limit of 16 MB (--max-terrain-mb)"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("filled"));
    // Under the default limit the same script runs.
    ok(bin()
        .args(["run", script.to_str().unwrap()])
        .output()
        .unwrap());

    let generator = d.join("Big.luau");
    std::fs::write(
        &generator,
        r#"
local G = {}
G.Attributes = { Blocks = 64 }
function G.OnGenerate(params, target)
    for i = 0, params.Attributes.Blocks - 1 do
        params.Terrain:FillBlock(CFrame.new(i * 16, 0, 0), Vector3.new(16, 512 + (i % 3), 2048), Enum.Material.Rock)
    end
end
return G
"#,
    )
    .unwrap();
    let out = bin()
        .args([
            "generate",
            generator.to_str().unwrap(),
            "--max-terrain-mb",
            "16",
            "-o",
        ])
        .arg(d.join("big.rbxl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("over the limit of 16 MB (--max-terrain-mb)"),
        "{err}"
    );
}

#[test]
fn run_save_to_glb_carries_the_terrain_mesh_as_export_does() {
    // `procmodel run script --save x.glb` wrote the parts and a Terrain node without a mesh
    // (with a warning), while `procmodel export` of the same place meshed the voxels.
    let d = dir("run-save-glb");
    let script = d.join("hill.luau");
    std::fs::write(
        &script,
        "workspace.Terrain:FillBall(Vector3.new(0, 0, 0), 24, Enum.Material.Grass)\n\
         local p = Instance.new('Part')\n\
         p.Position = Vector3.new(0, 30, 0)\n\
         p.Parent = workspace\n",
    )
    .unwrap();
    let run = cli("run", &script, "--save", &d.join("run.glb"));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!err.contains("warning"), "{err}");
    cli("run", &script, "--save", &d.join("hill.rbxl"));
    cli("export", &d.join("hill.rbxl"), "-o", &d.join("export.glb"));
    let saved = glb_json(&d.join("run.glb"));
    let exported = glb_json(&d.join("export.glb"));
    let tris = triangles(&saved, terrain_mesh_index(&saved));
    assert!(
        tris.iter().any(|(m, n)| m.contains("Grass") && *n > 100),
        "{tris:?}"
    );
    assert_eq!(tris, triangles(&exported, terrain_mesh_index(&exported)));
}

/// A place whose Terrain holds no voxels (every new place in Studio) exports without a
/// warning: it warned "Terrain geometry is not supported" though nothing was left out.
#[test]
fn export_of_a_place_with_empty_terrain_does_not_warn() {
    let d = dir("empty-terrain");
    let script = d.join("part.luau");
    std::fs::write(
        &script,
        "local _ = workspace.Terrain\nInstance.new('Part').Parent = workspace\n",
    )
    .unwrap();
    cli("run", &script, "--save", &d.join("place.rbxl"));
    for out in ["place.glb", "place.gltf", "place.obj"] {
        let export = cli("export", &d.join("place.rbxl"), "-o", &d.join(out));
        let err = String::from_utf8_lossy(&export.stderr);
        assert!(!err.contains("warning"), "{out}: {err}");
    }
}

/// A place's water is exported as its own translucent primitive, in the Terrain's
/// `WaterColor` with `1 − WaterTransparency` as alpha (water was left out of every mesh).
#[test]
fn export_draws_the_places_water_in_its_colour_and_transparency() {
    let d = dir("water");
    let script = d.join("pond.luau");
    std::fs::write(
        &script,
        "local t = workspace.Terrain\n\
         t:FillBlock(CFrame.new(0, -8, 0), Vector3.new(64, 16, 64), Enum.Material.Rock)\n\
         t:FillBlock(CFrame.new(0, 4, 0), Vector3.new(16, 8, 16), Enum.Material.Water)\n\
         t.WaterColor = Color3.fromRGB(255, 0, 0)\n\
         t.WaterTransparency = 0.5\n",
    )
    .unwrap();
    cli("run", &script, "--save", &d.join("pond.rbxl"));
    cli("export", &d.join("pond.rbxl"), "-o", &d.join("pond.glb"));
    validate(&[d.join("pond.glb")]);
    let doc = glb_json(&d.join("pond.glb"));
    let tris = triangles(&doc, terrain_mesh_index(&doc));
    let names: Vec<&str> = tris.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(names, ["Water", "Rock"], "{tris:?}");
    let water = doc["materials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "Water")
        .unwrap();
    assert_eq!(water["alphaMode"], "BLEND");
    assert_eq!(
        water["pbrMetallicRoughness"]["baseColorFactor"],
        serde_json::json!([1.0, 0.0, 0.0, 0.5])
    );
    // OBJ: the same colour, and the opacity as the MTL's dissolve.
    cli("export", &d.join("pond.rbxl"), "-o", &d.join("pond.obj"));
    let mtl = std::fs::read_to_string(d.join("pond.mtl")).unwrap();
    let water = mtl
        .split("newmtl ")
        .find(|m| m.starts_with("terrain_Water"))
        .expect("a terrain_Water material");
    assert!(
        water.contains("Kd 1 0 0\n") && water.contains("d 0.5\n"),
        "{water}"
    );
    let rock = mtl
        .split("newmtl ")
        .find(|m| m.starts_with("terrain_Rock"))
        .unwrap();
    assert!(rock.contains("d 1\n"), "{rock}");
}

/// A heightmap and its sidecar are written together or not at all: when the sidecar cannot
/// be written (a folder sits where it goes), the old heightmap stays byte for byte and no
/// "wrote" line claims otherwise; the same for a place written beside it.
#[test]
fn outputs_that_cannot_all_be_written_leave_every_old_file() {
    let d = dir("all_or_nothing");
    let small = |seed: u32| {
        let p = d.join(format!("w{seed}.toml"));
        std::fs::write(&p, format!("columns = [40, 40]\nseed = {seed}\n")).unwrap();
        p
    };
    let (png, place) = (d.join("h.png"), d.join("p.rbxl"));
    let terrain = |world: PathBuf, a: &Path, b: &Path| {
        bin()
            .arg("terrain")
            .arg(world)
            .arg("-o")
            .arg(a)
            .arg("-o")
            .arg(b)
            .output()
            .unwrap()
    };
    ok(terrain(small(1), &png, &place));
    let (old_png, old_place) = (std::fs::read(&png).unwrap(), std::fs::read(&place).unwrap());
    let sidecar = d.join("h.png.json");
    std::fs::remove_file(&sidecar).unwrap();
    std::fs::create_dir(&sidecar).unwrap();
    let out = terrain(small(2), &place, &png);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("h.png.json") && err.contains("folder"),
        "{err}"
    );
    assert!(!err.contains("wrote"), "{err}");
    assert_eq!(std::fs::read(&png).unwrap(), old_png, "heightmap replaced");
    assert_eq!(std::fs::read(&place).unwrap(), old_place, "place replaced");
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
    // The same output named twice is refused before anything is written.
    let out = terrain(small(2), &place, &d.join(".").join("p.rbxl"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("named twice"),
        "{err}"
    );
    assert_eq!(std::fs::read(&place).unwrap(), old_place, "place replaced");
    // A tiles folder that cannot be made says why (the cause was dropped).
    let world = small(3);
    let out = bin()
        .arg("terrain")
        .arg(&world)
        .arg("--tiles")
        .arg(&world)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("os error"), "{err}");
}

/// The studio's Export .glb of a place with terrain carries the Terrain's mesh, the same
/// triangles `procmodel export` writes (it exported the parts alone).
#[test]
fn the_studios_glb_export_carries_the_terrain() {
    use std::io::{Read, Write};
    let d = dir("studio-export");
    build_village(&d);
    let studio = common::Studio::start(&d.join("village.rbxl"));
    let host = studio
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut s = std::net::TcpStream::connect(&host).unwrap();
    write!(
        s,
        "GET /export/glb HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    s.read_to_end(&mut response).unwrap();
    drop(studio);
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(!head.contains("chunked"), "{head}");
    let glb = d.join("studio.glb");
    std::fs::write(&glb, &response[split + 4..]).unwrap();
    let doc = glb_json(&glb);
    let node = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "Terrain")
        .expect("a Terrain node");
    let mesh = node["mesh"].as_u64().unwrap() as usize;
    let alone = glb_json(&d.join("village.glb"));
    assert_eq!(
        triangles(&doc, mesh),
        triangles(&alone, terrain_mesh_index(&alone))
    );
}
