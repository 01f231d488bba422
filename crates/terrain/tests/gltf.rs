//! A world's terrain mesh through procmodel-export's glTF writer: one primitive per material
//! with the default material colours; the file is left in the test temp dir for the Khronos
//! validator (`node crates/export/tests/validator/validate.mjs <file>`).

use procmodel_export::terrain::{TerrainPrimitive, terrain_glb};
use procmodel_terrain::*;
use std::ops::ControlFlow;

#[test]
fn world_mesh_to_glb() {
    let w = World::new(WorldConfig {
        seed: 4.0,
        height: 30.0,
        zones: vec![
            Zone::circle(0.0, 0.0, 2.0, 40.0, 90.0).with_material(Material::Asphalt),
            Zone::rect(120.0, 40.0, 8.0, 40.0, 80.0, 40.0, 90.0).with_material(Material::Sandstone),
        ],
        ..WorldConfig::default()
    })
    .unwrap();
    let mut t = Terrain::new();
    w.write_voxels(
        &mut t,
        VoxelColumns {
            min: [-48, -48],
            max: [48, 48],
        },
        -24.0,
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let mesh = mesh_terrain(&t);
    let prims: Vec<TerrainPrimitive<'_>> = mesh
        .parts
        .iter()
        .map(|p| TerrainPrimitive {
            name: p.material.name(),
            color: p.material.default_color(),
            opacity: 1.0,
            positions: &p.positions,
            normals: &p.normals,
            indices: &p.indices,
        })
        .collect();
    let glb = terrain_glb(&prims, 1.0).unwrap();
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let j: serde_json::Value = serde_json::from_slice(&glb[20..20 + len]).unwrap();
    let names: Vec<&str> = j["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Asphalt") && names.contains(&"Sandstone"),
        "{names:?}"
    );
    assert_eq!(
        j["meshes"][0]["primitives"].as_array().unwrap().len(),
        mesh.parts.len()
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(dir.join("terrain_world.glb"), &glb).unwrap();
}
