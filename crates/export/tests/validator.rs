//! Runs the Khronos glTF validator (npm `gltf-validator`, installed under
//! `tests/validator/`) over exported `.glb` and `.gltf` + `.bin` files and
//! requires zero errors. Fails, rather than skipping, when the validator is
//! not installed: run `npm ci --prefix crates/export/tests/validator`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use procmodel_export::{ExportOptions, to_glb, to_gltf};
use rbx_dom_weak::types::Enum;
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use serde_json::Value;

const INSTALL: &str = "npm ci --prefix crates/export/tests/validator";

fn validator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validator")
}

fn output_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("procmodel-export-validator")
        .join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Validates `files` and returns one report per file.
fn validate(files: &[PathBuf]) -> Vec<Value> {
    let dir = validator_dir();
    assert!(
        dir.join("node_modules/gltf-validator").is_dir(),
        "the Khronos glTF validator is not installed; run `{INSTALL}` (needs node and npm)"
    );
    let output = Command::new("node")
        .arg(dir.join("validate.mjs"))
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `node` ({e}); install Node.js and run `{INSTALL}`"));
    assert!(
        output.status.success(),
        "validator failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let reports: Vec<Value> =
        serde_json::from_slice(&output.stdout).expect("validator prints JSON");
    assert_eq!(reports.len(), files.len());
    reports
}

/// Exports `model` as `<name>.glb` and as `<name>.gltf` + `<name>.bin` into a fresh folder
/// of its own; returns the two documents' paths.
fn write_both(dom: &WeakDom, model: rbx_dom_weak::types::Ref, name: &str) -> [PathBuf; 2] {
    let dir = output_dir(name);
    let opts = ExportOptions {
        bin_name: format!("{name}.bin"),
        ..ExportOptions::default()
    };
    let glb = dir.join(format!("{name}.glb"));
    std::fs::write(&glb, to_glb(dom, &[model], &opts).unwrap().output).unwrap();
    let gltf = to_gltf(dom, &[model], &opts).unwrap().output;
    let json = dir.join(format!("{name}.gltf"));
    std::fs::write(&json, &gltf.json).unwrap();
    std::fs::write(dir.join(&opts.bin_name), &gltf.bin).unwrap();
    [glb, json]
}

/// Asserts a report has no errors; prints its warnings, infos and hints.
fn assert_valid(entry: &Value) {
    let file = entry["file"].as_str().unwrap();
    let issues = &entry["report"]["issues"];
    for message in issues["messages"].as_array().into_iter().flatten() {
        eprintln!("{file}: {message}");
    }
    eprintln!(
        "{file}: {} errors, {} warnings, {} infos, {} hints",
        issues["numErrors"], issues["numWarnings"], issues["numInfos"], issues["numHints"]
    );
    assert_eq!(
        issues["numErrors"], 0,
        "{file} has validation errors: {}",
        issues["messages"]
    );
    assert_eq!(
        issues["numWarnings"], 0,
        "{file} has validation warnings: {}",
        issues["messages"]
    );
    assert!(
        entry["report"]["info"].is_object(),
        "no info in report for {file}"
    );
}

#[test]
fn sample_glb_and_gltf_pass_the_khronos_validator() {
    let (dom, root) = sample();
    let dir = output_dir("sample");
    let opts = ExportOptions {
        bin_name: "sample data.bin".to_owned(),
        ..ExportOptions::default()
    };
    let glb = to_glb(&dom, &[root], &opts).unwrap().output;
    std::fs::write(dir.join("sample.glb"), &glb).unwrap();
    let gltf = to_gltf(&dom, &[root], &opts).unwrap().output;
    std::fs::write(dir.join("sample.gltf"), &gltf.json).unwrap();
    std::fs::write(dir.join("sample data.bin"), &gltf.bin).unwrap();

    let reports = validate(&[dir.join("sample.glb"), dir.join("sample.gltf")]);
    for entry in &reports {
        assert_valid(entry);
        let info = &entry["report"]["info"];
        assert_eq!(info["generator"], "procmodel");
        assert_eq!(info["materialCount"], 6);
        assert_eq!(info["totalTriangleCount"], 12 + 528 + 96 + 8 + 6 + 12 + 12);
    }
}

#[test]
fn large_fine_and_empty_exports_pass_the_khronos_validator() {
    // The finest tessellation, an odd scale, every Part shape with rotations,
    // transparency and several materials, and a tree without any geometry.
    let mut model = InstanceBuilder::new("Model").with_name("Big");
    for (i, shape) in (0..5).enumerate() {
        model.add_child(
            part(
                "Part",
                &format!("P{i}"),
                v3(1.5, 2.5, 3.5),
                turned_y(i as f32 * 4.0, 0.0, 0.0, 30.0 * i as f32),
            )
            .with_property("Shape", Enum::from_u32(shape))
            .with_property("Transparency", 0.25f32 * i as f32)
            .with_property(
                "Material",
                material(["Neon", "Ice", "Foil", "Brick", "Plastic"][i]),
            ),
        );
    }
    // A script-built mesh (per-vertex colors), stretched and turned.
    model.add_child(pyramid_part(
        "Mesh",
        v3(3.0, 2.0, 1.0),
        turned_y(0.0, 5.0, 0.0, 45.0),
    ));
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    let empty = dom.insert(root, InstanceBuilder::new("Folder").with_name("Empty"));
    let opts = ExportOptions {
        scale: 0.28,
        segments: 256,
        ..ExportOptions::default()
    };
    let dir = output_dir("large");
    std::fs::write(
        dir.join("big.glb"),
        to_glb(&dom, &[model], &opts).unwrap().output,
    )
    .unwrap();
    std::fs::write(
        dir.join("empty.glb"),
        to_glb(&dom, &[empty], &opts).unwrap().output,
    )
    .unwrap();
    let both = to_glb(&dom, &[model, empty], &opts).unwrap().output;
    std::fs::write(dir.join("both.glb"), both).unwrap();
    for entry in validate(&[
        dir.join("big.glb"),
        dir.join("empty.glb"),
        dir.join("both.glb"),
    ]) {
        assert_valid(&entry);
    }
}

#[test]
fn textured_meshes_pass_the_khronos_validator() {
    // A MeshPart painted by its TextureContent, one by a see-through SurfaceAppearance, and
    // a plain part, as .glb and .gltf + .bin.
    let mut attributes = rbx_dom_weak::types::Attributes::new();
    attributes.insert("ProcmodelColorMap".to_owned(), image_attribute().into());
    let surface = InstanceBuilder::new("SurfaceAppearance")
        .with_property("Attributes", attributes)
        .with_property("AlphaMode", enum_item("AlphaMode", "Transparency"));
    let model = InstanceBuilder::new("Model")
        .with_name("Painted")
        .with_children([
            textured_pyramid("A", rbx_dom_weak::types::Color3::new(0.2, 0.4, 0.6)),
            textured_pyramid("B", rbx_dom_weak::types::Color3::new(1.0, 1.0, 1.0))
                .with_child(surface),
            part("Part", "Plain", v3(1.0, 1.0, 1.0), at(4.0, 0.0, 0.0)),
        ]);
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    for entry in validate(&write_both(&dom, model, "painted")) {
        assert_valid(&entry);
        assert_eq!(entry["report"]["info"]["materialCount"], 3);
    }
}

#[test]
fn lights_pass_the_khronos_validator() {
    // Point and spot lights (a SurfaceLight among them) on parts and in an attachment, as
    // .glb and .gltf + .bin; the validator knows KHR_lights_punctual and checks its fields.
    let (dom, model) = lit_model();
    for entry in validate(&write_both(&dom, model, "lit")) {
        assert_valid(&entry);
        let used = &entry["report"]["info"]["extensionsUsed"];
        assert_eq!(used, &serde_json::json!(["KHR_lights_punctual"]), "{used}");
    }
}

#[test]
fn terrain_glb_passes_the_khronos_validator() {
    use procmodel_export::terrain::{TerrainPrimitive, terrain_glb};
    // A closed box split into two materials (top/bottom and sides) plus an empty primitive,
    // the shape a terrain mesh has: indexed triangles, one primitive per material.
    let c = |x: f32, y: f32, z: f32| [x * 4.0, y * 4.0 - 2.0, z * 4.0];
    let corners: Vec<[f32; 3]> = (0..8)
        .map(|i| c((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32))
        .collect();
    let normals: Vec<[f32; 3]> = corners
        .iter()
        .map(|p| {
            let v = [p[0] - 2.0, p[1], p[2] - 2.0];
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            v.map(|x| x / l)
        })
        .collect();
    let caps = [0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6];
    let sides = [
        0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3,
    ];
    let prim = |name, color, indices| TerrainPrimitive {
        name,
        color,
        opacity: if name == "Water" { 0.7 } else { 1.0 },
        positions: &corners,
        normals: &normals,
        indices,
    };
    let glb = terrain_glb(
        &[
            prim("Grass", [106, 127, 63], &caps),
            prim("Rock", [102, 108, 111], &[]),
            prim("Ground", [102, 92, 59], &sides),
            prim("Water", [12, 84, 92], &caps),
        ],
        0.28,
    )
    .unwrap();
    let dir = output_dir("terrain");
    std::fs::write(dir.join("terrain.glb"), glb).unwrap();
    let reports = validate(&[dir.join("terrain.glb")]);
    assert_valid(&reports[0]);
    let info = &reports[0]["report"]["info"];
    // Grass, Ground and the translucent Water (blended, alpha 0.7).
    assert_eq!(info["materialCount"], 3);
    assert_eq!(info["totalTriangleCount"], 16);
}
