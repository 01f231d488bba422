//! Benchmarks: surface-nets meshing against the `fast-surface-nets` crate on the same padded
//! 34³ chunks of a heightmap world, and world generation (height + zones + materials) in
//! columns per second on one thread and on the rayon pool, `Terrain.SmoothGrid` encoding of a
//! 4096 × 4096-stud world in MB/s, and single terrain ray casts (`Terrain::raycast`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fast_surface_nets::ndshape::{ConstShape, ConstShape3u32};
use fast_surface_nets::{SurfaceNetsBuffer, surface_nets};
use procmodel_terrain::*;
use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Duration;

type Shape = ConstShape3u32<34, 34, 34>;

fn world() -> World {
    World::new(WorldConfig {
        seed: 5.0,
        height: 48.0,
        zones: vec![
            Zone::circle(0.0, 0.0, 4.0, 60.0, 140.0).with_material(Material::Asphalt),
            Zone::rect(200.0, 120.0, 10.0, 80.0, 160.0, 60.0, 140.0)
                .with_material(Material::Sandstone),
            Zone::rect(-150.0, 220.0, -6.0, 60.0, 120.0, 100.0, 180.0),
        ],
        ..WorldConfig::default()
    })
    .unwrap()
}

/// The heightmap world's voxels over the columns `-half..half` in X and Z (4 studs each),
/// filled from 64 studs below the origin to the surface, compacted.
fn world_voxels(half: i32) -> Terrain {
    let mut t = Terrain::new();
    world()
        .write_voxels(
            &mut t,
            VoxelColumns {
                min: [-half, -half],
                max: [half, half],
            },
            -64.0,
            |_| ControlFlow::Continue(()),
        )
        .unwrap();
    t.compact();
    t
}

/// The surface chunks of a 4×4-chunk heightmap world as padded sample blocks.
fn blocks() -> Vec<SampleBlock> {
    let t = world_voxels(64);
    t.chunks()
        .filter(|(_, c)| c.uniform().is_none())
        .map(|(k, _)| {
            let min = k * CHUNK;
            SampleBlock::from_terrain(
                &t,
                CellRegion {
                    min,
                    max: min + glam::IVec3::splat(CHUNK),
                },
            )
        })
        .collect()
}

fn meshing(c: &mut Criterion) {
    let blocks = blocks();
    assert!(blocks.iter().all(|b| b.dims == [34, 34, 34]));
    let sdfs: Vec<Vec<f32>> = blocks
        .iter()
        .map(|b| b.occupancy.iter().map(|o| 0.5 - o).collect())
        .collect();
    assert_eq!(sdfs[0].len() as u32, Shape::SIZE);
    let ours: usize = blocks
        .iter()
        .map(|b| mesh_block(b, [1; 3], [33; 3]).unwrap().triangle_count())
        .sum();
    let mut buf = SurfaceNetsBuffer::default();
    let theirs: usize = sdfs
        .iter()
        .map(|s| {
            surface_nets(s, &Shape {}, [0; 3], [33; 3], &mut buf);
            buf.indices.len() / 3
        })
        .sum();
    println!(
        "{} chunks; triangles: ours {ours}, fast-surface-nets {theirs}",
        blocks.len()
    );
    // Interleaved minimum of 100 rounds: robust against other load on the machine.
    let (mut best_ours, mut best_theirs) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..100 {
        let t = std::time::Instant::now();
        for blk in &blocks {
            black_box(mesh_block(blk, [1; 3], [33; 3]).unwrap());
        }
        best_ours = best_ours.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        for s in &sdfs {
            surface_nets(s, &Shape {}, [0; 3], [33; 3], &mut buf);
            black_box(&buf.positions);
        }
        best_theirs = best_theirs.min(t.elapsed().as_secs_f64());
    }
    println!(
        "interleaved minimum: ours {:.3} ms, fast-surface-nets {:.3} ms ({:.2}x)",
        best_ours * 1e3,
        best_theirs * 1e3,
        best_theirs / best_ours
    );
    let mut g = c.benchmark_group("mesh_chunks");
    g.throughput(Throughput::Elements(blocks.len() as u64));
    g.bench_function("procmodel-terrain", |b| {
        b.iter(|| {
            for blk in &blocks {
                black_box(mesh_block(blk, [1; 3], [33; 3]).unwrap());
            }
        })
    });
    g.bench_function("fast-surface-nets", |b| {
        let mut buf = SurfaceNetsBuffer::default();
        b.iter(|| {
            for s in &sdfs {
                surface_nets(s, &Shape {}, [0; 3], [33; 3], &mut buf);
                black_box(&buf.positions);
            }
        })
    });
    g.finish();
}

fn columns(c: &mut Criterion) {
    let w = world();
    let rect = SampleRect {
        min: [-128, -128],
        size: [256, 256],
    };
    let mut g = c.benchmark_group("world_columns");
    g.throughput(Throughput::Elements(256 * 256));
    g.bench_function("1 thread", |b| {
        b.iter(|| black_box(w.heightfield(rect, false)))
    });
    g.bench_function("rayon", |b| b.iter(|| black_box(w.heightfield(rect, true))));
    g.finish();
}

/// `Terrain.SmoothGrid` encoding of a 4096 × 4096-stud world (1024² voxel columns, filled
/// from 64 studs below the origin to the surface): throughput in bytes of the encoded blob,
/// whose size is printed once.
fn smoothgrid_encode(c: &mut Criterion) {
    let t = world_voxels(512);
    let bytes = smoothgrid::encode(&t);
    let (chunks, dense) = t.chunk_counts();
    eprintln!(
        "smoothgrid 4096x4096 studs: {} bytes ({:.2} MB) from {chunks} chunks ({dense} dense), {:.1} MB of voxels in memory",
        bytes.len(),
        bytes.len() as f64 / 1e6,
        t.memory_bytes() as f64 / 1e6
    );
    let mut g = c.benchmark_group("smoothgrid");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("encode 4096x4096 studs", |b| {
        b.iter(|| black_box(smoothgrid::encode(&t)))
    });
    g.finish();
}

/// A 512 × 512-stud heightmap-like terrain: a FillBlock slab 64 studs thick, an 8 × 8 grid of
/// noise-free bumps (balls) on it and a tower in one corner, so the stored chunks span
/// 512 × 640 × 512 studs.
fn ray_terrain() -> Terrain {
    let mut t = Terrain::new();
    t.fill_block(
        glam::Affine3A::from_translation(glam::Vec3::new(0.0, -32.0, 0.0)),
        glam::Vec3::new(512.0, 64.0, 512.0),
        Material::Grass,
    )
    .unwrap();
    for i in 0..8 {
        for j in 0..8 {
            let c = glam::Vec3::new(-224.0 + 64.0 * i as f32, -4.0, -224.0 + 64.0 * j as f32);
            let r = 12.0 + 2.0 * ((i * 3 + j * 5) % 7) as f32;
            t.fill_ball(c, r, Material::Rock).unwrap();
        }
    }
    t.fill_block(
        glam::Affine3A::from_translation(glam::Vec3::new(240.0, 224.0, 240.0)),
        glam::Vec3::new(32.0, 448.0, 32.0),
        Material::Slate,
    )
    .unwrap();
    t.compact();
    t
}

/// One ray per iteration: 1,000 studs straight down onto the bumps; 15,000 studs through the
/// empty chunks above the ground (crossing the stored bounds, hitting nothing); 15,000 studs
/// skimming 1 stud above the ground through the dense surface chunks (hitting nothing).
fn raycast(c: &mut Criterion) {
    use glam::Vec3;
    let t = ray_terrain();
    let rays = [
        (
            "vertical 1000 studs onto bumps",
            Vec3::new(37.3, 500.0, -91.7),
            Vec3::new(0.0, -1000.0, 0.0),
        ),
        (
            "15000 studs through empty chunks",
            Vec3::new(-7000.0, 300.0, -7100.0),
            Vec3::new(1.0, 0.0, 1.0).normalize() * 15000.0,
        ),
        (
            "15000 studs skimming the ground",
            Vec3::new(-7000.0, 1.0, -192.0),
            Vec3::new(15000.0, 0.0, 0.0),
        ),
    ];
    let mut g = c.benchmark_group("raycast");
    for (name, o, d) in rays {
        for (mode, opts) in [
            ("smooth", TerrainRay::default()),
            (
                "cubes",
                TerrainRay {
                    cubes: true,
                    ..TerrainRay::default()
                },
            ),
        ] {
            eprintln!("raycast {name} ({mode}): {:?}", t.raycast(o, d, opts));
            g.bench_function(format!("{name} ({mode})"), |b| {
                b.iter(|| black_box(t.raycast(black_box(o), black_box(d), opts)))
            });
        }
    }
    // Scaling with the chunk count: clipping reads only the chunk keys of the X slab the
    // segment crosses (one chunk column here), not all 2048.
    let big = world_voxels(512);
    let (o, d) = (Vec3::new(101.3, 900.0, -77.7), Vec3::new(0.0, -1000.0, 0.0));
    eprintln!(
        "raycast 4096x4096-stud world ({} chunks): {:?}",
        big.chunk_count(),
        big.raycast(o, d, TerrainRay::default())
    );
    g.bench_function("vertical 1000 studs, 4096x4096-stud world (smooth)", |b| {
        b.iter(|| black_box(big.raycast(black_box(o), black_box(d), TerrainRay::default())))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10);
    targets = meshing, columns, smoothgrid_encode, raycast
}
criterion_main!(benches);
