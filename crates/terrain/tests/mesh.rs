//! Surface meshes: closed shapes are watertight and consistently wound, normals face out,
//! and meshing by chunks gives exactly the triangles of the whole.

use glam::{Affine3A, IVec3, Vec3};
use procmodel_terrain::*;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

type Key = [u32; 3];

fn key(p: [f32; 3]) -> Key {
    p.map(f32::to_bits)
}

/// Triangles of all parts as welded position keys.
fn triangles(m: &TerrainMesh) -> Vec<[Key; 3]> {
    let mut out = Vec::new();
    for p in &m.parts {
        for t in p.indices.chunks(3) {
            out.push([0, 1, 2].map(|k| key(p.positions[t[k] as usize])));
        }
    }
    out
}

fn assert_watertight(m: &TerrainMesh) {
    let tris = triangles(m);
    assert!(!tris.is_empty());
    let mut undirected: BTreeMap<(Key, Key), u32> = BTreeMap::new();
    let mut directed: BTreeMap<(Key, Key), u32> = BTreeMap::new();
    for t in &tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            assert_ne!(a, b, "degenerate triangle");
            *undirected.entry((a.min(b), a.max(b))).or_default() += 1;
            *directed.entry((a, b)).or_default() += 1;
        }
    }
    for (e, n) in &undirected {
        assert_eq!(*n, 2, "edge {e:?} shared by {n} triangles");
    }
    for (e, n) in &directed {
        assert_eq!(*n, 1, "directed edge {e:?} used {n} times (winding)");
    }
}

#[test]
fn ball_is_watertight_with_outward_normals() {
    let mut t = Terrain::new();
    let c = Vec3::new(3.0, 5.0, -7.0);
    t.fill_ball(c, 13.0, Material::Rock).unwrap();
    let m = mesh_terrain(&t);
    assert_eq!(m.parts.len(), 1);
    assert_watertight(&m);
    let p = &m.parts[0];
    for (pos, n) in p.positions.iter().zip(&p.normals) {
        let d = Vec3::from(*pos) - c;
        assert!(d.dot(Vec3::from(*n)) > 0.0);
        assert!((d.length() - 13.0).abs() < 4.0, "{d:?}");
    }
    // Face winding agrees with the normals: the geometric normal points out.
    for tri in p.indices.chunks(3) {
        let [a, b, cc] = [0, 1, 2].map(|k| Vec3::from(p.positions[tri[k] as usize]));
        let g = (b - a).cross(cc - a);
        assert!(g.dot((a + b + cc) / 3.0 - c) > 0.0);
    }
}

#[test]
fn multi_material_block_across_chunks_is_watertight() {
    let mut t = Terrain::new();
    // Straddles the chunk borders at 0 (cells -3..5) and has two materials.
    t.fill_block(
        Affine3A::from_translation(Vec3::new(4.0, 0.0, 2.0)),
        Vec3::new(32.0, 24.0, 20.0),
        Material::Grass,
    )
    .unwrap();
    t.fill_block(
        Affine3A::from_translation(Vec3::new(12.0, 0.0, 2.0)),
        Vec3::new(16.0, 24.0, 20.0),
        Material::Sand,
    )
    .unwrap();
    let m = mesh_terrain(&t);
    assert_eq!(
        m.parts.iter().map(|p| p.material).collect::<Vec<_>>(),
        vec![Material::Grass, Material::Sand]
    );
    assert_watertight(&m);
    // A single full voxel is a closed cube-like surface: 6 quads = 12 triangles.
    let mut one = Terrain::new();
    one.set(IVec3::new(31, 31, 31), Voxel::solid(Material::Ice, 255));
    let m = mesh_terrain(&one);
    assert_eq!(m.triangle_count(), 12);
    assert_watertight(&m);
}

#[test]
fn chunked_meshes_equal_the_whole() {
    let w = World::new(WorldConfig {
        seed: 3.0,
        height: 40.0,
        zones: vec![Zone::circle(40.0, 40.0, 6.0, 30.0, 70.0)],
        ..WorldConfig::default()
    })
    .unwrap();
    let mut t = Terrain::new();
    w.write_voxels(
        &mut t,
        VoxelColumns {
            min: [-40, -40],
            max: [40, 40],
        },
        -30.0,
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let whole_region = CellRegion {
        min: IVec3::new(-41, -12, -41),
        max: IVec3::new(41, 14, 41),
    };
    let whole = mesh_region(&t, whole_region);
    assert!(whole.triangle_count() > 1000);
    let mut parts = TerrainMesh::default();
    for (x0, x1) in [(-41, -7), (-7, 20), (20, 41)] {
        for (z0, z1) in [(-41, 3), (3, 41)] {
            for (y0, y1) in [(-12, 1), (1, 14)] {
                parts.append(mesh_region(
                    &t,
                    CellRegion {
                        min: IVec3::new(x0, y0, z0),
                        max: IVec3::new(x1, y1, z1),
                    },
                ));
            }
        }
    }
    let norm = |m: &TerrainMesh| {
        let mut v = triangles(m);
        for t in &mut v {
            // Rotate so the smallest vertex is first (same triangle, same winding).
            let i = (0..3).min_by_key(|&k| t[k]).unwrap();
            t.rotate_left(i);
        }
        v.sort_unstable();
        v
    };
    assert_eq!(norm(&whole), norm(&parts));
}

#[test]
fn sample_block_errors() {
    let b = SampleBlock {
        dims: [65, 2, 2],
        origin: IVec3::ZERO,
        occupancy: vec![0.0; 65 * 4],
        materials: vec![Material::Air; 65 * 4],
    };
    assert!(mesh_block(&b, [1; 3], [64, 1, 1]).is_err());
}

/// Water has a surface of its own (it was not meshed at all): a pool straddling chunk borders
/// is a closed `Water` surface where it meets air, none where it meets the rock it rests in,
/// and the rock's mesh is the same with or without the water.
#[test]
fn water_is_meshed_where_it_meets_air_only() {
    let mut rock = Terrain::new();
    rock.fill_block(
        Affine3A::from_translation(Vec3::new(0.0, -8.0, 0.0)),
        Vec3::new(48.0, 16.0, 48.0),
        Material::Rock,
    )
    .unwrap();
    let mut pool = rock.clone();
    // A water box on top of the rock, crossing the chunk borders at 0.
    pool.fill_block(
        Affine3A::from_translation(Vec3::new(0.0, 4.0, 0.0)),
        Vec3::new(16.0, 8.0, 16.0),
        Material::Water,
    )
    .unwrap();
    let dry = mesh_terrain(&rock);
    let wet = mesh_terrain(&pool);
    assert!(dry.parts.iter().all(|p| p.material != Material::Water));
    let water = wet
        .parts
        .iter()
        .find(|p| p.material == Material::Water)
        .expect("a Water part");
    let solid = TerrainMesh {
        parts: wet
            .parts
            .iter()
            .filter(|p| p.material != Material::Water)
            .cloned()
            .collect(),
    };
    assert_eq!(triangles(&solid), triangles(&dry));
    // No water face lies on the rock's top (y = 0): the pool's bottom is not drawn.
    let on_floor = water
        .indices
        .chunks(3)
        .filter(|t| {
            t.iter()
                .all(|&i| water.positions[i as usize][1].abs() < 1e-3)
        })
        .count();
    assert_eq!(on_floor, 0);
    // The top (y = 8) and the four sides are there.
    assert!(water.positions.iter().any(|p| (p[1] - 8.0).abs() < 1e-3));
    assert!(water.positions.iter().any(|p| (p[0] + 8.0).abs() < 1e-3));
    // A floating water box is closed.
    let mut blob = Terrain::new();
    blob.fill_block(
        Affine3A::from_translation(Vec3::new(0.0, 20.0, 0.0)),
        Vec3::new(12.0, 8.0, 12.0),
        Material::Water,
    )
    .unwrap();
    let m = mesh_terrain(&blob);
    assert_eq!(m.parts.len(), 1);
    assert_eq!(m.parts[0].material, Material::Water);
    assert_watertight(&m);
}
