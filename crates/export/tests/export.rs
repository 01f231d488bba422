//! End-to-end tests of the glTF and OBJ exports of small DOM trees.

mod common;

use common::*;
use procmodel_export::{ExportOptions, WarningKind, to_glb, to_gltf, to_obj};
use rbx_dom_weak::types::{Color3uint8, Enum, Ref, Vector3};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use serde_json::Value;

fn gltf_json(dom: &WeakDom, root: Ref) -> Value {
    let export = to_gltf(dom, &[root], &ExportOptions::default()).unwrap();
    serde_json::from_str(&export.output.json).unwrap()
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
}

#[test]
fn sample_gltf_snapshot() {
    let (dom, root) = sample();
    let export = to_gltf(&dom, &[root], &ExportOptions::default()).unwrap();
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
    insta::assert_snapshot!("sample_gltf", export.output.json);
}

#[test]
fn sample_obj_mtl_snapshot() {
    let (dom, root) = sample();
    let export = to_obj(&dom, &[root], &ExportOptions::default()).unwrap();
    insta::assert_snapshot!("sample_mtl", export.output.mtl);
    let obj = &export.output.obj;
    assert!(obj.starts_with("# procmodel\nmtllib model.mtl\n"));
    let objects: Vec<&str> = obj.lines().filter_map(|l| l.strip_prefix("o ")).collect();
    assert_eq!(
        objects,
        [
            "Sample.Block",
            "Sample.Ball",
            "Sample.Cylinder",
            "Sample.Wedge",
            "Sample.CornerWedge",
            "Sample.Props.Crate",
            "Sample.Props.Crate.Lid",
        ]
    );
    assert_eq!(obj.lines().filter(|l| l.starts_with("usemtl ")).count(), 7);
}

#[test]
fn export_is_deterministic_across_dom_builds() {
    let (dom_a, root_a) = sample();
    let (dom_b, root_b) = sample();
    let opts = ExportOptions::default();
    let glb_a = to_glb(&dom_a, &[root_a], &opts).unwrap().output;
    let glb_b = to_glb(&dom_b, &[root_b], &opts).unwrap().output;
    assert_eq!(glb_a, glb_b);
    assert_eq!(glb_a, to_glb(&dom_a, &[root_a], &opts).unwrap().output);
    assert_eq!(
        to_gltf(&dom_a, &[root_a], &opts).unwrap(),
        to_gltf(&dom_b, &[root_b], &opts).unwrap()
    );
    assert_eq!(
        to_obj(&dom_a, &[root_a], &opts).unwrap(),
        to_obj(&dom_b, &[root_b], &opts).unwrap()
    );
}

#[test]
fn glb_and_gltf_carry_the_same_document_and_buffer() {
    let (dom, root) = sample();
    let opts = ExportOptions {
        bin_name: "my model.bin".to_owned(),
        ..ExportOptions::default()
    };
    let glb = to_glb(&dom, &[root], &opts).unwrap().output;
    let (mut from_glb, bin) = parse_glb(&glb);
    let gltf = to_gltf(&dom, &[root], &opts).unwrap().output;
    let mut from_gltf: Value = serde_json::from_str(&gltf.json).unwrap();
    assert_eq!(from_gltf["buffers"][0]["uri"], "my%20model.bin");
    assert_eq!(bin, gltf.bin);
    assert_eq!(from_glb["buffers"][0]["byteLength"], bin.len());
    from_gltf["buffers"][0]
        .as_object_mut()
        .unwrap()
        .remove("uri");
    from_glb["buffers"][0]
        .as_object_mut()
        .unwrap()
        .remove("uri");
    assert_eq!(from_glb, from_gltf);
    assert_eq!(from_glb["asset"]["generator"], "procmodel");
}

#[test]
fn identical_parts_share_meshes_and_materials() {
    let mut model = InstanceBuilder::new("Model").with_name("Grid");
    for i in 0..10 {
        model.add_child(
            part(
                "Part",
                &format!("Tile{i}"),
                v3(2.0, 1.0, 2.0),
                at(i as f32 * 2.0, 0.0, 0.0),
            )
            .with_property("Color", Color3uint8::new(10, 20, 30)),
        );
    }
    // Same geometry, other colour: new mesh over the same accessors.
    model.add_child(
        part("Part", "Red", v3(2.0, 1.0, 2.0), at(0.0, 2.0, 0.0))
            .with_property("Color", Color3uint8::new(200, 0, 0)),
    );
    // Balls depend only on min(Size): these share one geometry.
    for (i, size) in [v3(2.0, 3.0, 4.0), v3(5.0, 2.0, 2.0)]
        .into_iter()
        .enumerate()
    {
        model.add_child(
            part(
                "Part",
                &format!("Ball{i}"),
                size,
                at(0.0, 5.0, i as f32 * 3.0),
            )
            .with_property("Shape", Enum::from_u32(0))
            .with_property("Color", Color3uint8::new(10, 20, 30)),
        );
    }
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    let doc = gltf_json(&dom, model);
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 1 + 13);
    assert_eq!(doc["materials"].as_array().unwrap().len(), 2);
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 3);
    // Two geometries (block, ball) × (position, normal, index).
    assert_eq!(doc["accessors"].as_array().unwrap().len(), 6);
    let mesh_of = |name: &str| node(&doc, name)["mesh"].clone();
    assert_eq!(mesh_of("Tile0"), mesh_of("Tile9"));
    assert_ne!(mesh_of("Tile0"), mesh_of("Red"));
    assert_eq!(mesh_of("Ball0"), mesh_of("Ball1"));
    let primitive = |name: &str| {
        doc["meshes"][mesh_of(name).as_u64().unwrap() as usize]["primitives"][0].clone()
    };
    assert_eq!(
        primitive("Tile0")["attributes"],
        primitive("Red")["attributes"]
    );
}

#[test]
fn hierarchy_names_and_relative_transforms() {
    let (dom, root) = sample();
    let doc = gltf_json(&dom, root);
    let scene_roots = &doc["scenes"][0]["nodes"];
    assert_eq!(scene_roots.as_array().unwrap().len(), 1);
    let model = &doc["nodes"][scene_roots[0].as_u64().unwrap() as usize];
    assert_eq!(model["name"], "Sample");
    assert!(model.get("translation").is_none() && model.get("mesh").is_none());
    assert_eq!(model["children"].as_array().unwrap().len(), 6);

    // Parts without a part ancestor: world CFrame.
    assert!(close(
        &floats(&node(&doc, "Block")["translation"]),
        &[0.0, 0.5, 0.0]
    ));
    assert!(node(&doc, "Block").get("rotation").is_none());
    let crate_ = node(&doc, "Crate");
    assert!(close(&floats(&crate_["translation"]), &[10.0, 1.0, 0.0]));
    let half = std::f32::consts::FRAC_1_SQRT_2;
    assert!(close(&floats(&crate_["rotation"]), &[0.0, half, 0.0, half]));
    // The Lid sits 1.1 studs above the Crate, with the same orientation.
    let lid = node(&doc, "Lid");
    assert!(
        close(&floats(&lid["translation"]), &[0.0, 1.1, 0.0]),
        "{lid}"
    );
    assert!(
        lid.get("rotation").is_none() || close(&floats(&lid["rotation"]), &[0.0, 0.0, 0.0, 1.0])
    );
    // Folder between Model and Crate is an empty node.
    let props = node(&doc, "Props");
    assert!(props.get("mesh").is_none() && props.get("translation").is_none());
}

#[test]
fn materials_follow_colour_transparency_and_material() {
    let (dom, root) = sample();
    let doc = gltf_json(&dom, root);
    let material_of = |name: &str| {
        let mesh = node(&doc, name)["mesh"].as_u64().unwrap() as usize;
        let index = doc["meshes"][mesh]["primitives"][0]["material"]
            .as_u64()
            .unwrap() as usize;
        doc["materials"][index].clone()
    };
    let wedge = material_of("Wedge");
    assert_eq!(wedge["alphaMode"], "BLEND");
    assert_eq!(
        floats(&wedge["pbrMetallicRoughness"]["baseColorFactor"])[3],
        0.5
    );
    assert!(
        wedge["pbrMetallicRoughness"]["roughnessFactor"]
            .as_f64()
            .unwrap()
            < 0.2
    );
    let ball = material_of("Ball");
    assert_eq!(
        floats(&ball["emissiveFactor"]),
        floats(&ball["pbrMetallicRoughness"]["baseColorFactor"])[..3]
    );
    assert_eq!(material_of("Block")["alphaMode"], "OPAQUE");
    assert_eq!(
        material_of("CornerWedge")["pbrMetallicRoughness"]["metallicFactor"],
        1.0
    );
    // BrickColor 21 "Bright red" (196, 40, 28) in linear light.
    let red = floats(&material_of("CornerWedge")["pbrMetallicRoughness"]["baseColorFactor"]);
    assert!(
        close(&red, &[0.552_011_5, 0.021_219_01, 0.011_612_245, 1.0]),
        "{red:?}"
    );
    // Same colour + material on Block and Crate: one material.
    assert_eq!(material_of("Block"), material_of("Crate"));
}

#[test]
fn scale_applies_to_vertices_and_translations() {
    let (dom, root) = sample();
    let opts = ExportOptions {
        scale: 0.5,
        ..ExportOptions::default()
    };
    let doc: Value =
        serde_json::from_str(&to_gltf(&dom, &[root], &opts).unwrap().output.json).unwrap();
    assert!(close(
        &floats(&node(&doc, "Crate")["translation"]),
        &[5.0, 0.5, 0.0]
    ));
    let mesh = node(&doc, "Block")["mesh"].as_u64().unwrap() as usize;
    let position = doc["meshes"][mesh]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(floats(&doc["accessors"][position]["max"]), [1.0, 0.25, 0.5]);
    assert_eq!(
        floats(&doc["accessors"][position]["min"]),
        [-1.0, -0.25, -0.5]
    );
}

#[test]
fn obj_vertices_are_in_world_space() {
    let (dom, root) = sample();
    let obj = to_obj(&dom, &[root], &ExportOptions::default())
        .unwrap()
        .output
        .obj;
    // The upright cylinder (length 4 along local X, turned onto Y) at (-6, 2, 0).
    let section: Vec<[f32; 3]> = obj
        .split("\no ")
        .find(|s| s.starts_with("Sample.Cylinder\n"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f32> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    let lo = section
        .iter()
        .fold([f32::MAX; 3], |a, v| [0, 1, 2].map(|i| a[i].min(v[i])));
    let hi = section
        .iter()
        .fold([f32::MIN; 3], |a, v| [0, 1, 2].map(|i| a[i].max(v[i])));
    assert!(close(&lo, &[-7.0, 0.0, -1.0]), "{lo:?}");
    assert!(close(&hi, &[-5.0, 4.0, 1.0]), "{hi:?}");
    // Face indices are 1-based and never point past the vertices written so far.
    let mut vertices = 0;
    for line in obj.lines() {
        if line.starts_with("v ") {
            vertices += 1;
        } else if let Some(face) = line.strip_prefix("f ") {
            for corner in face.split(' ') {
                let index: usize = corner.split("//").next().unwrap().parse().unwrap();
                assert!((1..=vertices).contains(&index), "{line}");
            }
        }
    }
}

#[test]
fn warnings_for_what_cannot_be_exported_faithfully() {
    let model = InstanceBuilder::new("Model")
        .with_name("W")
        .with_child(part(
            "MeshPart",
            "Statue",
            v3(2.0, 4.0, 2.0),
            at(0.0, 2.0, 0.0),
        ))
        .with_child(
            part("Part", "Odd", v3(1.0, 1.0, 1.0), at(3.0, 0.0, 0.0))
                .with_property("Material", Enum::from_u32(9999))
                .with_property("Shape", Enum::from_u32(42))
                // A FileMesh (an asset): not drawn. (A SpecialMesh's default MeshType is
                // Head, which is.)
                .with_child(
                    InstanceBuilder::new("SpecialMesh")
                        .with_name("Mesh")
                        .with_property("MeshType", Enum::from_u32(5)),
                )
                // A sign's text: warned. An empty or disabled GUI shows nothing: not.
                .with_child(
                    InstanceBuilder::new("SurfaceGui")
                        .with_name("Sign")
                        .with_child(InstanceBuilder::new("TextLabel")),
                )
                .with_child(InstanceBuilder::new("BillboardGui").with_name("Empty"))
                .with_child(
                    InstanceBuilder::new("BillboardGui")
                        .with_name("Off")
                        .with_property("Enabled", false)
                        .with_child(InstanceBuilder::new("TextLabel")),
                ),
        )
        .with_child(part(
            "NegateOperation",
            "Hole",
            v3(1.0, 1.0, 1.0),
            at(0.0, 0.0, 0.0),
        ))
        .with_child(InstanceBuilder::new("Script").with_name("Script"));
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    let got: Vec<(String, WarningKind)> = export
        .warnings
        .iter()
        .map(|w| (w.path.clone(), w.kind.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "W.Statue".to_owned(),
                WarningKind::BoundingBoxOnly {
                    class: "MeshPart".to_owned()
                }
            ),
            ("W.Odd".to_owned(), WarningKind::UnknownShape { value: 42 }),
            (
                "W.Odd".to_owned(),
                WarningKind::UnknownMaterial { value: 9999 }
            ),
            (
                "W.Odd.Mesh".to_owned(),
                WarningKind::AppearanceIgnored {
                    class: "SpecialMesh".to_owned()
                }
            ),
            (
                "W.Odd.Sign".to_owned(),
                WarningKind::GuiNotDrawn {
                    class: "SurfaceGui".to_owned()
                }
            ),
            (
                "W.Hole".to_owned(),
                WarningKind::GeometrySkipped {
                    class: "NegateOperation".to_owned()
                }
            ),
        ]
    );
    assert_eq!(
        export.warnings[0].to_string(),
        "W.Statue: MeshPart has no mesh data here, exported as its bounding box"
    );
    assert_eq!(
        export.warnings[4].to_string(),
        "W.Odd.Sign: SurfaceGui is not drawn in the export (glTF has no GUI)"
    );
    let (doc, _) = parse_glb(&export.output);
    // Every instance is a node (the GUIs and their labels too, without a mesh); the
    // Script and the NegateOperation have no mesh.
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 11);
    assert!(node(&doc, "Sign").get("mesh").is_none());
    assert!(node(&doc, "Hole").get("mesh").is_none());
    assert!(node(&doc, "Statue").get("mesh").is_some());
}

#[test]
fn errors_name_the_instance_or_option() {
    let model = InstanceBuilder::new("Model").with_name("E").with_child(
        InstanceBuilder::new("Part")
            .with_name("Bad")
            .with_property("Size", "big"),
    );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    let error = to_glb(&dom, &[model], &ExportOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "E.Bad: property `Size` is String, expected Vector3"
    );
    assert_eq!(error.instance_path(), Some("E.Bad"));

    let skewed = rbx_dom_weak::types::CFrame::new(
        v3(0.0, 0.0, 0.0),
        rbx_dom_weak::types::Matrix3::new(v3(2.0, 0.0, 0.0), v3(0.0, 1.0, 0.0), v3(0.0, 0.0, 1.0)),
    );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let bad = dom.insert(root, part("Part", "Skew", v3(1.0, 1.0, 1.0), skewed));
    let error = to_obj(&dom, &[bad], &ExportOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Skew: property `CFrame` is not a rotation (orthonormal, right-handed)"
    );

    let error = to_glb(&dom, &[Ref::new()], &ExportOptions::default()).unwrap_err();
    assert!(
        error.to_string().contains("is not an instance of the DOM"),
        "{error}"
    );

    let opts = ExportOptions {
        scale: 0.0,
        ..ExportOptions::default()
    };
    let error = to_gltf(&dom, &[bad], &opts).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid export option `scale`: 0 is not a positive number"
    );
    assert_eq!(error.instance_path(), None);
}

#[test]
fn defaults_come_from_the_reflection_database() {
    // A bare Part: Size 4×1.2×2 and Medium stone grey by the database defaults.
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let bare = dom.insert(root, InstanceBuilder::new("Part").with_name("Bare"));
    let doc = gltf_json(&dom, bare);
    assert_eq!(floats(&doc["accessors"][0]["max"]), [2.0, 0.6, 1.0]);
    assert_eq!(doc["materials"][0]["name"], "m0_Plastic_a3a2a5");
}

#[test]
fn tree_without_parts_has_no_buffer() {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let folder = dom.insert(
        root,
        InstanceBuilder::new("Folder")
            .with_name("Empty")
            .with_child(InstanceBuilder::new("Folder").with_name("Inner")),
    );
    let glb = to_glb(&dom, &[folder], &ExportOptions::default())
        .unwrap()
        .output;
    let (doc, bin) = parse_glb(&glb);
    assert!(bin.is_empty());
    assert!(doc.get("buffers").is_none() && doc.get("accessors").is_none());
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 2);
    let gltf = to_gltf(&dom, &[folder], &ExportOptions::default())
        .unwrap()
        .output;
    assert!(gltf.bin.is_empty());
    let obj = to_obj(&dom, &[folder], &ExportOptions::default())
        .unwrap()
        .output;
    assert_eq!(obj.obj, "# procmodel\nmtllib model.mtl\n");
}

#[test]
fn seats_spawns_and_trusses_are_blocks() {
    let model = InstanceBuilder::new("Model")
        .with_name("M")
        .with_child(part("Seat", "Seat", v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0)))
        .with_child(part(
            "SpawnLocation",
            "Spawn",
            v3(2.0, 1.0, 2.0),
            at(3.0, 0.0, 0.0),
        ))
        .with_child(part(
            "TrussPart",
            "Truss",
            v3(2.0, 1.0, 2.0),
            at(6.0, 0.0, 0.0),
        ))
        .with_child(part("Part", "Block", v3(2.0, 1.0, 2.0), at(9.0, 0.0, 0.0)));
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);
    let export = to_gltf(&dom, &[model], &ExportOptions::default()).unwrap();
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
    let doc: Value = serde_json::from_str(&export.output.json).unwrap();
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 1);
    assert_eq!(doc["meshes"][0]["name"], "Block 2x1x2");
    for name in ["Seat", "Spawn", "Truss", "Block"] {
        assert_eq!(node(&doc, name)["mesh"], 0, "{name}");
    }
}

#[test]
fn exporting_the_dom_root_keeps_getfullname_paths() {
    let dom = WeakDom::new(
        InstanceBuilder::new("Model").with_name("Top").with_child(
            InstanceBuilder::new("Folder")
                .with_name("F")
                .with_child(part(
                    "MeshPart",
                    "Statue",
                    v3(1.0, 1.0, 1.0),
                    at(0.0, 0.0, 0.0),
                )),
        ),
    );
    let export = to_obj(&dom, &[dom.root_ref()], &ExportOptions::default()).unwrap();
    assert_eq!(export.warnings.len(), 1);
    assert_eq!(export.warnings[0].path, "F.Statue");
    assert!(export.output.obj.contains("\no F.Statue\n"));
}

/// The POSITION accessor bounds of `name`'s mesh.
fn mesh_bounds(doc: &Value, name: &str) -> (Vec<f32>, Vec<f32>) {
    let mesh = node(doc, name)["mesh"].as_u64().unwrap() as usize;
    let position = doc["meshes"][mesh]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let accessor = &doc["accessors"][position];
    (floats(&accessor["min"]), floats(&accessor["max"]))
}

/// The world-space vertex bounds of one OBJ object.
fn obj_bounds(obj: &str, object: &str) -> ([f32; 3], [f32; 3]) {
    let vertices: Vec<[f32; 3]> = obj
        .split("\no ")
        .find(|s| s.starts_with(&format!("{object}\n")))
        .unwrap_or_else(|| panic!("no object {object}"))
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f32> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    let lo = vertices
        .iter()
        .fold([f32::MAX; 3], |a, v| [0, 1, 2].map(|i| a[i].min(v[i])));
    let hi = vertices
        .iter()
        .fold([f32::MIN; 3], |a, v| [0, 1, 2].map(|i| a[i].max(v[i])));
    (lo, hi)
}

#[test]
fn mesh_children_change_the_drawn_shape_size_and_offset() {
    let mesh = |class: &str, mesh_type: Option<u32>, scale: Vector3, offset: Vector3| {
        let b = InstanceBuilder::new(class)
            .with_name("Mesh")
            .with_property("Scale", scale)
            .with_property("Offset", offset);
        match mesh_type {
            Some(t) => b.with_property("MeshType", Enum::from_u32(t)),
            None => b,
        }
    };
    let one = v3(1.0, 1.0, 1.0);
    let zero = v3(0.0, 0.0, 0.0);
    let model = InstanceBuilder::new("Model")
        .with_name("M")
        // SpecialMesh Sphere: an ellipsoid filling Size × Scale, moved by Offset.
        .with_child(
            part("Part", "Egg", v3(4.0, 2.0, 2.0), at(0.0, 0.0, 0.0)).with_child(mesh(
                "SpecialMesh",
                Some(3),
                v3(1.0, 2.0, 1.0),
                v3(0.0, 1.0, 0.0),
            )),
        )
        // CylinderMesh: upright, diameter min(X, Z).
        .with_child(
            part("Part", "Coin", v3(2.0, 0.5, 3.0), at(10.0, 0.0, 0.0)).with_child(mesh(
                "CylinderMesh",
                None,
                one,
                zero,
            )),
        )
        // BlockMesh at half scale on a cylinder part: a box of half the size.
        .with_child(
            part("Part", "Crate", v3(4.0, 2.0, 2.0), at(20.0, 0.0, 0.0))
                .with_property("Shape", Enum::from_u32(2))
                .with_child(mesh("BlockMesh", None, v3(0.5, 0.5, 0.5), zero)),
        )
        // SpecialMesh Cylinder: along X like a cylinder part.
        .with_child(
            part("Part", "Log", v3(6.0, 2.0, 4.0), at(30.0, 0.0, 0.0)).with_child(mesh(
                "SpecialMesh",
                Some(4),
                one,
                zero,
            )),
        )
        // A FileMesh's geometry is an asset: the part stays a block, with a warning.
        .with_child(
            part("Part", "Statue", v3(2.0, 2.0, 2.0), at(40.0, 0.0, 0.0)).with_child(mesh(
                "SpecialMesh",
                Some(5),
                one,
                zero,
            )),
        )
        // SpecialMesh Head (it drew the part's block): an upright rounded cylinder in
        // Size × Scale, its diameter the smaller of X and Z (round on the classic 2 × 1 × 1).
        .with_child(
            part("Part", "Head", v3(2.0, 1.0, 1.0), at(60.0, 0.0, 0.0)).with_child(mesh(
                "SpecialMesh",
                Some(0),
                v3(1.25, 1.25, 1.25),
                zero,
            )),
        )
        // The offset is in the part's space: it turns with the part.
        .with_child(
            part(
                "Part",
                "Turned",
                v3(2.0, 2.0, 2.0),
                turned_y(50.0, 0.0, 0.0, 90.0),
            )
            .with_child(mesh("BlockMesh", None, one, v3(3.0, 0.0, 0.0))),
        );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(root, model);

    let export = to_gltf(&dom, &[model], &ExportOptions::default()).unwrap();
    let warnings: Vec<String> = export.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        ["M.Statue.Mesh: SpecialMesh is not applied to the exported geometry"]
    );
    let doc: Value = serde_json::from_str(&export.output.json).unwrap();
    let (lo, hi) = mesh_bounds(&doc, "Egg");
    assert!(
        close(&lo, &[-2.0, -1.0, -1.0]) && close(&hi, &[2.0, 3.0, 1.0]),
        "{lo:?} {hi:?}"
    );
    let (lo, hi) = mesh_bounds(&doc, "Coin");
    assert!(
        close(&lo, &[-1.0, -0.25, -1.0]) && close(&hi, &[1.0, 0.25, 1.0]),
        "{lo:?} {hi:?}"
    );
    let (lo, hi) = mesh_bounds(&doc, "Crate");
    assert!(
        close(&lo, &[-1.0, -0.5, -0.5]) && close(&hi, &[1.0, 0.5, 0.5]),
        "{lo:?} {hi:?}"
    );
    let (lo, hi) = mesh_bounds(&doc, "Log");
    assert!(
        close(&lo, &[-3.0, -1.0, -1.0]) && close(&hi, &[3.0, 1.0, 1.0]),
        "{lo:?} {hi:?}"
    );
    let (lo, hi) = mesh_bounds(&doc, "Head");
    assert!(
        close(&lo, &[-0.625; 3]) && close(&hi, &[0.625; 3]),
        "{lo:?} {hi:?}"
    );
    let (lo, hi) = mesh_bounds(&doc, "Statue");
    assert!(
        close(&lo, &[-1.0; 3]) && close(&hi, &[1.0; 3]),
        "{lo:?} {hi:?}"
    );
    let names: Vec<&str> = doc["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("Ellipsoid ")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("UprightCylinder ")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("Head ")), "{names:?}");
    // The applied meshes stay nodes of their own (the DOM hierarchy is kept).
    assert!(node(&doc, "Mesh").get("mesh").is_none());

    // OBJ vertices are in world space: the turned part's offset +X lands on −Z.
    let obj = to_obj(&dom, &[model], &ExportOptions::default())
        .unwrap()
        .output
        .obj;
    let (lo, hi) = obj_bounds(&obj, "M.Turned");
    assert!(
        close(&lo, &[49.0, -1.0, -4.0]) && close(&hi, &[51.0, 1.0, -2.0]),
        "{lo:?} {hi:?}"
    );
}

/// Reads accessor `index` of a .glb's binary chunk as f32 tuples of `n`.
fn accessor_floats(doc: &Value, bin: &[u8], index: u64, n: usize) -> Vec<Vec<f32>> {
    let a = &doc["accessors"][index as usize];
    let view = &doc["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let start =
        (view["byteOffset"].as_u64().unwrap_or(0) + a["byteOffset"].as_u64().unwrap_or(0)) as usize;
    let count = a["count"].as_u64().unwrap() as usize;
    (0..count)
        .map(|i| {
            (0..n)
                .map(|k| {
                    let at = start + 4 * (i * n + k);
                    f32::from_le_bytes(bin[at..at + 4].try_into().unwrap())
                })
                .collect()
        })
        .collect()
}

/// A DataModel holding a Model "M" of `parts`, and the model.
fn model_of(parts: Vec<InstanceBuilder>) -> (WeakDom, Ref) {
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let model = dom.insert(
        root,
        InstanceBuilder::new("Model")
            .with_name("M")
            .with_children(parts),
    );
    (dom, model)
}

#[test]
fn a_mesh_built_by_a_script_is_drawn_centred_and_stretched_to_its_part() {
    // The pyramid's mesh is 2 × 1 × 2; the part is 4 × 3 × 2 at (10, 0, 0).
    let (dom, model) = model_of(vec![pyramid_part(
        "Pyramid",
        v3(4.0, 3.0, 2.0),
        at(10.0, 0.0, 0.0),
    )]);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
    let (doc, bin) = parse_glb(&export.output);
    assert_eq!(doc["meshes"][0]["name"], "EditableMesh 4x3x2");
    let prim = &doc["meshes"][0]["primitives"][0];
    let attrs = &prim["attributes"];
    let positions = accessor_floats(&doc, &bin, attrs["POSITION"].as_u64().unwrap(), 3);
    let normals = accessor_floats(&doc, &bin, attrs["NORMAL"].as_u64().unwrap(), 3);
    let colors = accessor_floats(&doc, &bin, attrs["COLOR_0"].as_u64().unwrap(), 4);
    // Corners sharing position, normal and color IDs are one vertex: each face has its own
    // normal, so 6 faces × 3.
    assert_eq!(positions.len(), 18);
    assert_eq!(
        doc["accessors"][prim["indices"].as_u64().unwrap() as usize]["count"],
        18
    );
    let lo = (0..3).map(|k| positions.iter().map(|p| p[k]).fold(f32::MAX, f32::min));
    let hi = (0..3).map(|k| positions.iter().map(|p| p[k]).fold(f32::MIN, f32::max));
    assert_eq!(lo.collect::<Vec<_>>(), [-2.0, -1.5, -1.0]);
    assert_eq!(hi.collect::<Vec<_>>(), [2.0, 1.5, 1.0]);
    // The apex is red (linear), the base white; the base faces down.
    for (p, c) in positions.iter().zip(&colors) {
        let expected = if p[1] == 1.5 {
            [1.0, 0.0, 0.0, 1.0]
        } else {
            [1.0; 4]
        };
        assert_eq!(c[..], expected[..], "{p:?}");
    }
    assert_eq!(
        normals.iter().filter(|n| n[..] == [0.0, -1.0, 0.0]).count(),
        6
    );
    // A stretched side's normal follows the stretch (divided by it, then normalised): the +X
    // side of the 2-wide, 1-high mesh has normal (1, 1)/√2; stretched ×2 in X and ×3 in Y
    // it becomes (1/2, 1/3) normalised = (0.832, 0.555).
    let side = normals
        .iter()
        .find(|n| n[0] > 0.5 && n[2].abs() < 1e-6)
        .expect("the +X side");
    assert!(close(side, &[0.832_050_3, 0.554_700_2, 0.0]), "{side:?}");
    assert!(close(
        &floats(&node(&doc, "Pyramid")["translation"]),
        &[10.0, 0.0, 0.0]
    ));
    // Texture coordinates are kept; one-sided by default.
    let uvs = accessor_floats(&doc, &bin, attrs["TEXCOORD_0"].as_u64().unwrap(), 2);
    assert_eq!(uvs.len(), 18);
    assert_eq!(doc["materials"][0]["doubleSided"], false);
}

/// A solid-modelling result shows the colours of the parts it was made from (its mesh's
/// face colours, on a white material) unless `UsePartColor` paints it all in its `Color`
/// (solid modelling guide, "Colors and UVs").
#[test]
fn a_union_shows_its_face_colours_unless_it_uses_its_part_color() {
    let union = |name: &str, use_part_color: bool| {
        part("UnionOperation", name, v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0))
            .with_property("Attributes", pyramid_attributes())
            .with_property("Color", rbx_dom_weak::types::Color3::new(0.0, 1.0, 0.0))
            .with_property("UsePartColor", use_part_color)
    };
    for (use_part_color, base, apex) in [
        (false, [1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0]),
        (true, [0.0, 1.0, 0.0], [1.0; 4]),
    ] {
        let (dom, model) = model_of(vec![union("U", use_part_color)]);
        let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
        assert!(export.warnings.is_empty(), "{:?}", export.warnings);
        let (doc, bin) = parse_glb(&export.output);
        assert_eq!(doc["meshes"][0]["name"], "PartOperation 2x1x2");
        let factor = floats(&doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"]);
        assert!(close(&factor[..3], &base), "{factor:?}");
        let attrs = &doc["meshes"][0]["primitives"][0]["attributes"];
        let positions = accessor_floats(&doc, &bin, attrs["POSITION"].as_u64().unwrap(), 3);
        let colors = accessor_floats(&doc, &bin, attrs["COLOR_0"].as_u64().unwrap(), 4);
        // A result's triangles are in the part's own space, not centred as a MeshPart's
        // are: the pyramid's base stays at y = 0 and its apex at y = 1.
        let lowest = positions.iter().map(|p| p[1]).fold(f32::MAX, f32::min);
        assert_eq!(lowest, 0.0);
        let at_apex = positions.iter().position(|p| p[1] == 1.0).unwrap();
        assert_eq!(
            colors[at_apex][..],
            apex[..],
            "UsePartColor {use_part_color}"
        );
    }
    // A union made in Studio carries no triangles procmodel can read: its box.
    let (dom, model) = model_of(vec![part(
        "UnionOperation",
        "Studio",
        v3(2.0, 1.0, 2.0),
        at(0.0, 0.0, 0.0),
    )]);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    let (doc, _) = parse_glb(&export.output);
    assert!(
        doc["meshes"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("Block ")
    );
}

#[test]
fn a_double_sided_meshpart_gets_a_double_sided_material() {
    let (dom, model) = model_of(vec![
        pyramid_part("One", v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0)),
        pyramid_part("Two", v3(2.0, 1.0, 2.0), at(5.0, 0.0, 0.0))
            .with_property("DoubleSided", true),
    ]);
    let (doc, _) = parse_glb(
        &to_glb(&dom, &[model], &ExportOptions::default())
            .unwrap()
            .output,
    );
    let materials = doc["materials"].as_array().unwrap();
    assert_eq!(materials.len(), 2);
    assert_eq!(materials[0]["doubleSided"], false);
    assert_eq!(materials[1]["doubleSided"], true);
}

#[test]
fn a_broken_mesh_attribute_is_a_warning_and_a_box() {
    let mut attributes = rbx_dom_weak::types::Attributes::new();
    attributes.insert(
        procmodel_mesh::ATTRIBUTE.to_owned(),
        "UE1NMQ==".to_owned().into(),
    );
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let root = dom.root_ref();
    let r = dom.insert(
        root,
        part("MeshPart", "Broken", v3(1.0, 2.0, 3.0), at(0.0, 0.0, 0.0))
            .with_property("Attributes", attributes),
    );
    let export = to_glb(&dom, &[r], &ExportOptions::default()).unwrap();
    assert_eq!(export.warnings.len(), 1);
    let text = export.warnings[0].to_string();
    assert!(
        matches!(export.warnings[0].kind, WarningKind::InvalidMesh { .. })
            && text.contains("ProcmodelMesh")
            && text.contains("PMM1"),
        "{text}"
    );
    let (doc, _) = parse_glb(&export.output);
    assert_eq!(doc["meshes"][0]["name"], "Block 1x2x3");
}

#[test]
fn parts_with_the_same_mesh_and_size_share_it() {
    let (dom, model) = model_of(vec![
        pyramid_part("A", v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0)),
        pyramid_part("B", v3(2.0, 1.0, 2.0), at(5.0, 0.0, 0.0)),
        pyramid_part("C", v3(4.0, 1.0, 2.0), at(9.0, 0.0, 0.0)),
    ]);
    let (doc, _) = parse_glb(
        &to_glb(&dom, &[model], &ExportOptions::default())
            .unwrap()
            .output,
    );
    assert_eq!(node(&doc, "A")["mesh"], node(&doc, "B")["mesh"]);
    assert_ne!(node(&doc, "A")["mesh"], node(&doc, "C")["mesh"]);
    assert_eq!(doc["meshes"].as_array().unwrap().len(), 2);
}

/// The texture a material paints with, decoded from the glb's buffer.
fn material_texture(
    doc: &serde_json::Value,
    bin: &[u8],
    material: usize,
) -> Option<(u32, u32, Vec<u8>)> {
    let info = &doc["materials"][material]["pbrMetallicRoughness"]["baseColorTexture"];
    let texture = info["index"].as_u64()? as usize;
    let image = doc["textures"][texture]["source"].as_u64().unwrap() as usize;
    assert_eq!(doc["images"][image]["mimeType"], "image/png");
    let view = &doc["bufferViews"][doc["images"][image]["bufferView"].as_u64().unwrap() as usize];
    let start = view["byteOffset"].as_u64().unwrap() as usize;
    let png = &bin[start..start + view["byteLength"].as_u64().unwrap() as usize];
    let t = procmodel_mesh::texture::Texture::from_png(png).unwrap();
    Some((t.width, t.height, t.rgba))
}

#[test]
fn an_editable_image_paints_its_meshpart_over_the_part_colour() {
    let blue = rbx_dom_weak::types::Color3::new(0.0, 0.0, 1.0);
    let (dom, model) = model_of(vec![textured_pyramid("Painted", blue)]);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
    let (doc, bin) = parse_glb(&export.output);
    let material = doc["meshes"][0]["primitives"][0]["material"]
        .as_u64()
        .unwrap() as usize;
    let m = &doc["materials"][material];
    // The texture carries the colour (white factor), opaque: clear pixels show Color.
    assert_eq!(m["alphaMode"], "OPAQUE");
    assert_eq!(
        m["pbrMetallicRoughness"]["baseColorFactor"],
        serde_json::json!([1.0, 1.0, 1.0, 1.0])
    );
    let (w, h, rgba) = material_texture(&doc, &bin, material).unwrap();
    assert_eq!((w, h), (2, 2));
    assert_eq!(
        rgba,
        vec![
            255, 0, 0, 255, 0, 128, 127, 255, 0, 0, 255, 255, 0, 0, 255, 255
        ]
    );
    // The mesh has the UVs the texture needs.
    assert!(doc["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"].is_u64());
    // The same bytes every time.
    assert_eq!(
        to_glb(&dom, &[model], &ExportOptions::default())
            .unwrap()
            .output,
        export.output
    );
}

#[test]
fn a_surface_appearance_image_comes_first_and_its_transparency_mode_keeps_alpha() {
    let white = rbx_dom_weak::types::Color3::new(1.0, 1.0, 1.0);
    let mut attributes = rbx_dom_weak::types::Attributes::new();
    let other = procmodel_mesh::texture::Texture::new(1, 1, vec![1, 2, 3, 4]).unwrap();
    attributes.insert("ProcmodelColorMap".to_owned(), other.to_attribute().into());
    let surface = InstanceBuilder::new("SurfaceAppearance")
        .with_property("Attributes", attributes)
        .with_property("AlphaMode", enum_item("AlphaMode", "Transparency"));
    let (dom, model) = model_of(vec![
        textured_pyramid("Surfaced", white).with_child(surface),
    ]);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    // The SurfaceAppearance is applied, so not reported as ignored.
    assert!(export.warnings.is_empty(), "{:?}", export.warnings);
    let (doc, bin) = parse_glb(&export.output);
    let material = doc["meshes"][0]["primitives"][0]["material"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(doc["materials"][material]["alphaMode"], "BLEND");
    assert_eq!(
        material_texture(&doc, &bin, material).unwrap(),
        (1, 1, vec![1, 2, 3, 4])
    );
}

#[test]
fn a_broken_image_attribute_is_a_warning_and_the_part_is_drawn_untextured() {
    let red = rbx_dom_weak::types::Color3::new(1.0, 0.0, 0.0);
    let mut attributes = pyramid_attributes();
    attributes.insert("ProcmodelTexture".to_owned(), "aGVsbG8=".into());
    let (dom, model) = model_of(vec![
        part("MeshPart", "Broken", v3(2.0, 1.0, 2.0), at(0.0, 0.0, 0.0))
            .with_property("Attributes", attributes)
            .with_property("Color", red),
    ]);
    let export = to_glb(&dom, &[model], &ExportOptions::default()).unwrap();
    assert_eq!(export.warnings.len(), 1, "{:?}", export.warnings);
    let text = export.warnings[0].to_string();
    assert!(
        text.contains("M.Broken") && text.contains("ProcmodelTexture") && text.contains("PNG"),
        "{text}"
    );
    let (doc, _) = parse_glb(&export.output);
    assert!(doc.get("images").is_none());
    assert_eq!(
        doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][0],
        1.0
    );
    assert_eq!(
        doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][1],
        0.0
    );
}

#[test]
fn obj_paints_a_textured_meshpart_with_map_kd_and_texture_coordinates() {
    let blue = rbx_dom_weak::types::Color3::new(0.0, 0.0, 1.0);
    let (dom, model) = model_of(vec![
        textured_pyramid("Painted", blue),
        part("Part", "Plain", v3(1.0, 1.0, 1.0), at(4.0, 0.0, 0.0)),
    ]);
    let opts = ExportOptions {
        mtl_name: "court.mtl".to_owned(),
        ..ExportOptions::default()
    };
    let export = procmodel_export::to_obj(&dom, &[model], &opts).unwrap();
    let files = &export.output;
    assert_eq!(files.textures.len(), 1);
    assert_eq!(files.textures[0].0, "court_texture0.png");
    let t = procmodel_mesh::texture::Texture::from_png(&files.textures[0].1).unwrap();
    assert_eq!((t.width, t.height), (2, 2));
    assert_eq!(files.mtl.matches("map_Kd court_texture0.png").count(), 1);
    // Texture coordinates only for the textured part, v flipped (OBJ's v points up): the
    // pyramid's single UV (0, 0) is (0, 1).
    let vts: Vec<&str> = files.obj.lines().filter(|l| l.starts_with("vt ")).collect();
    let positions_of_pyramid = 18;
    assert_eq!(vts.len(), positions_of_pyramid);
    assert!(vts.iter().all(|l| *l == "vt 0 1"));
    let textured_faces = files
        .obj
        .lines()
        .filter(|l| l.starts_with("f ") && !l.contains("//"));
    assert_eq!(textured_faces.count(), 6);
    assert!(
        files
            .obj
            .lines()
            .any(|l| l.starts_with("f ") && l.contains("//")),
        "the plain part"
    );
}

/// The light node under `parent`'s node (the node carrying `KHR_lights_punctual`).
fn light_of<'a>(doc: &'a Value, parent: &str) -> (&'a Value, &'a Value) {
    let nodes = doc["nodes"].as_array().unwrap();
    let holder = node(doc, parent);
    let child = holder["children"]
        .as_array()
        .unwrap_or_else(|| panic!("{parent} has no children"))
        .iter()
        .map(|i| &nodes[i.as_u64().unwrap() as usize])
        .find(|n| n["extensions"]["KHR_lights_punctual"].is_object())
        .unwrap_or_else(|| panic!("{parent} has no light node"));
    let index = child["extensions"]["KHR_lights_punctual"]["light"]
        .as_u64()
        .unwrap() as usize;
    (
        child,
        &doc["extensions"]["KHR_lights_punctual"]["lights"][index],
    )
}

/// Where a node's −Z (a glTF light's direction) points, from its rotation.
fn pointing(node: &Value) -> glam::Vec3 {
    let q = match node.get("rotation") {
        Some(r) => {
            let r = floats(r);
            glam::Quat::from_xyzw(r[0], r[1], r[2], r[3])
        }
        None => glam::Quat::IDENTITY,
    };
    q * glam::Vec3::NEG_Z
}

fn translation(node: &Value) -> glam::Vec3 {
    node.get("translation")
        .map(|t| glam::Vec3::from_slice(&floats(t)))
        .unwrap_or(glam::Vec3::ZERO)
}

#[test]
fn roblox_lights_become_gltf_punctual_lights_where_and_as_they_shine() {
    let (dom, root) = lit_model();
    let export = to_gltf(&dom, &[root], &ExportOptions::default()).unwrap();
    let doc: Value = serde_json::from_str(&export.output.json).unwrap();
    assert_eq!(
        doc["extensionsUsed"],
        serde_json::json!(["KHR_lights_punctual"])
    );
    // Four shine: the disabled one, the one of Range 0 and the one in a Model do not.
    let lights = doc["extensions"]["KHR_lights_punctual"]["lights"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = lights.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Glow", "Beam", "Panel", "Headlight"]);

    // A PointLight: at its part's centre; colour linear; Brightness lux halfway to Range.
    let (at_glow, glow) = light_of(&doc, "Glow");
    assert_eq!(glow["type"], "point");
    assert_eq!(translation(at_glow), glam::Vec3::ZERO);
    assert_eq!(floats(&glow["color"])[0], 1.0);
    assert!((floats(&glow["color"])[1] - 0.214_041).abs() < 1e-5);
    assert_eq!(glow["range"], 12.0);
    assert_eq!(glow["intensity"], 2.0 * 6.0 * 6.0);

    // A SpotLight on the Top face: from the face's centre, upwards; Angle is the whole cone.
    let (at_beam, beam) = light_of(&doc, "Beam");
    assert_eq!(beam["type"], "spot");
    assert!(translation(at_beam).abs_diff_eq(glam::Vec3::new(0.0, 1.0, 0.0), 1e-6));
    assert!(pointing(at_beam).abs_diff_eq(glam::Vec3::Y, 1e-6));
    let outer = beam["spot"]["outerConeAngle"].as_f64().unwrap();
    assert!((outer - 30f64.to_radians()).abs() < 1e-6, "{outer}");
    assert_eq!(beam["range"], 16.0, "the class default");

    // A SurfaceLight on a part: a spot light at its face, and a warning saying so.
    let (at_panel, panel) = light_of(&doc, "Panel");
    assert_eq!(panel["type"], "spot");
    assert!(translation(at_panel).abs_diff_eq(glam::Vec3::new(2.0, 0.0, 0.0), 1e-6));
    assert!(pointing(at_panel).abs_diff_eq(glam::Vec3::X, 1e-6));
    let warned: Vec<String> = export.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        export.warnings.iter().any(|w| w.path == "Lit.Box.Panel"
            && matches!(&w.kind, WarningKind::LightApproximated { class } if class == "SurfaceLight")),
        "{warned:?}"
    );

    // In an attachment: at the attachment's position, along its own Front (−Z) turned 90°
    // about Y, which is −X.
    let (at_head, _) = light_of(&doc, "Headlight");
    assert!(translation(at_head).abs_diff_eq(glam::Vec3::new(0.0, 3.0, 0.0), 1e-6));
    assert!(
        pointing(at_head).abs_diff_eq(glam::Vec3::NEG_X, 1e-6),
        "{}",
        pointing(at_head)
    );

    // The instances' own nodes are unchanged: a light's node is a child of its node.
    assert!(node(&doc, "Glow").get("translation").is_none());
    // The same bytes every time.
    let again = to_gltf(&dom, &[root], &ExportOptions::default()).unwrap();
    assert_eq!(again.output.json, export.output.json);
}

#[test]
fn a_tree_without_lights_declares_no_light_extension() {
    let (dom, root) = sample();
    let doc = gltf_json(&dom, root);
    assert!(
        doc.get("extensionsUsed").is_none(),
        "{}",
        doc["extensionsUsed"]
    );
    assert!(doc.get("extensions").is_none());
}
