//! World generation: the tutorial's formulas through the whole pipeline, zones, chunk
//! independence, thread-count determinism, golden values and resources.

use procmodel_noise::{Basis, Fractal, NoiseConfig};
use procmodel_terrain::*;
use std::ops::ControlFlow;

fn tutorial(zones: Vec<Zone>) -> World {
    World::new(WorldConfig {
        seed: 7.0,
        zones,
        ..WorldConfig::default()
    })
    .unwrap()
}

fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn hf_hash(hf: &Heightfield) -> u64 {
    fnv(hf
        .heights
        .iter()
        .flat_map(|h| h.to_bits().to_le_bytes())
        .chain(hf.materials.iter().map(|m| m.index())))
}

#[test]
fn tutorial_height_and_bands() {
    let w = tutorial(vec![]);
    for (i, j) in [(0i64, 0i64), (3, 5), (-17, 40), (100, -3)] {
        let n = procmodel_noise::perlin3(7.0, i as f64 / 15.0, j as f64 / 15.0);
        let c = w.column(i, j);
        assert_eq!(c.height, -4.0 + 20.0 * n + 4.0);
        assert_eq!(c.material, MaterialBands::default().material(n));
    }
    let b = MaterialBands::default();
    let table = [
        (0.55, Material::Glacier),
        (0.5, Material::Snow),
        (0.45, Material::Snow),
        (0.3, Material::LeafyGrass),
        (0.2, Material::Grass),
        (0.1, Material::Grass),
        (0.0, Material::Ground),
        (-0.1, Material::Ground),
        (-0.2, Material::Ground),
        (-0.3, Material::Mud),
    ];
    for (n, m) in table {
        assert_eq!(b.material(n), m, "n = {n}");
    }
    // Configurable table.
    let custom = MaterialBands {
        rules: vec![BandRule::Below(0.0, Material::Sand)],
        default: Material::Rock,
    };
    assert_eq!(custom.material(-0.01), Material::Sand);
    assert_eq!(custom.material(0.3), Material::Rock);
}

#[test]
fn circle_zone_in_the_world() {
    let raw = tutorial(vec![]);
    let w = tutorial(vec![
        Zone::circle(0.0, 0.0, 10.0, 40.0, 80.0).with_material(Material::Asphalt),
    ]);
    // Inside R1 (column 5 = 20 studs): flat, Asphalt.
    let c = w.column(5, 0);
    assert_eq!((c.height, c.material), (10.0, Material::Asphalt));
    // Between: column 15 = 60 studs → k = 0.5.
    let h1 = raw.column(15, 0).height;
    assert_eq!(w.column(15, 0).height, 10.0 + (h1 - 10.0) * 0.5);
    assert_eq!(w.column(15, 0).material, raw.column(15, 0).material);
    // Beyond R2: untouched.
    assert_eq!(w.column(25, 0), raw.column(25, 0));
}

#[test]
fn rectangle_zone_in_the_world() {
    let raw = tutorial(vec![]);
    let w = tutorial(vec![
        Zone::rect(200.0, 200.0, -2.0, 80.0, 160.0, 160.0, 320.0)
            .with_material(Material::Sandstone),
    ]);
    // Column (50, 50) = (200, 200) studs: centre.
    assert_eq!(w.column(50, 50).height, -2.0);
    assert_eq!(w.column(50, 50).material, Material::Sandstone);
    // X band: dx = 60 → (60 - 40)/(80 - 40) = 0.5; column 65 = 260 studs.
    let h = raw.column(65, 50).height;
    assert_eq!(w.column(65, 50).height, -2.0 + (h + 2.0) * 0.5);
    // Corner: dx = 60 (kx .5), dz = 140 (kz (140-80)/80 = .75) → max .75.
    let h = raw.column(65, 85).height;
    assert_eq!(w.column(65, 85).height, -2.0 + (h + 2.0) * 0.75);
}

#[test]
fn later_zones_win_and_equal_levels_merge_flat() {
    let a = Zone::circle(0.0, 0.0, 5.0, 40.0, 80.0).with_material(Material::Salt);
    let b = Zone::circle(40.0, 0.0, 12.0, 20.0, 40.0).with_material(Material::Concrete);
    let w = tutorial(vec![a, b]);
    // Column 8 = 32 studs: inside both flat parts → the later one.
    let c = w.column(8, 0);
    assert_eq!((c.height, c.material), (12.0, Material::Concrete));
    let w = tutorial(vec![b, a]);
    let c = w.column(8, 0);
    assert_eq!((c.height, c.material), (5.0, Material::Salt));
    // Same level: the union is flat.
    let b5 = Zone { level: 5.0, ..b };
    let w = tutorial(vec![a, b5]);
    for i in 0..14 {
        assert_eq!(w.column(i, 0).height, 5.0, "column {i}");
    }
}

#[test]
fn zone_errors_stop_the_world() {
    let e = World::new(WorldConfig {
        zones: vec![
            Zone::circle(0.0, 0.0, 0.0, 10.0, 20.0),
            Zone::rect(0.0, 0.0, 0.0, 20.0, 20.0, 10.0, 30.0),
        ],
        ..WorldConfig::default()
    })
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "zone 1: x2 must be greater than x1 (got x2 = 20, x1 = 20)"
    );
    let e = World::new(WorldConfig {
        scale: f64::NAN,
        ..WorldConfig::default()
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "scale: is not a finite number (NaN)");
}

#[test]
fn chunks_equal_the_whole_and_share_borders() {
    let w = tutorial(vec![
        Zone::circle(30.0, 30.0, 3.0, 40.0, 90.0),
        Zone::rect(-60.0, 20.0, 8.0, 40.0, 80.0, 30.0, 70.0),
    ]);
    let whole = w.heightfield(
        SampleRect {
            min: [-40, -20],
            size: [80, 60],
        },
        true,
    );
    // Four chunks of 40×30 samples, each one sample larger to share the border column/row.
    for (ox, oz) in [(0usize, 0usize), (40, 0), (0, 30), (40, 30)] {
        let sx = if ox == 0 { 41 } else { 40 };
        let sz = if oz == 0 { 31 } else { 30 };
        let part = w.heightfield(
            SampleRect {
                min: [-40 + ox as i64, -20 + oz as i64],
                size: [sx, sz],
            },
            false,
        );
        for z in 0..sz {
            for x in 0..sx {
                assert_eq!(part.at(x, z), whole.at(ox + x, oz + z));
                let i = (oz + z) * 80 + ox + x;
                assert_eq!(part.materials[z * sx + x], whole.materials[i]);
            }
        }
    }
    // Bands concatenate to the whole.
    let mut heights = Vec::new();
    for band in w.bands(whole.rect, 7, false) {
        heights.extend(band.heights);
    }
    assert_eq!(heights, whole.heights);
}

#[test]
fn voxel_chunks_equal_the_whole() {
    let w = tutorial(vec![Zone::circle(64.0, 64.0, 2.0, 30.0, 60.0)]);
    let mut whole = Terrain::new();
    let all = VoxelColumns {
        min: [-20, -20],
        max: [60, 60],
    };
    w.write_voxels(&mut whole, all, -40.0, |_| ControlFlow::Continue(()))
        .unwrap();
    let mut parts = Terrain::new();
    for (x0, x1) in [(-20, 13), (13, 60)] {
        for (z0, z1) in [(-20, 31), (31, 60)] {
            w.write_voxels(
                &mut parts,
                VoxelColumns {
                    min: [x0, z0],
                    max: [x1, z1],
                },
                -40.0,
                |_| ControlFlow::Continue(()),
            )
            .unwrap();
        }
    }
    whole.compact();
    parts.compact();
    assert_eq!(smoothgrid::encode(&whole), smoothgrid::encode(&parts));
    // Bands are reported and a Break stops after the first.
    let mut t = Terrain::new();
    let mut seen = Vec::new();
    w.write_voxels(&mut t, all, -40.0, |rows| {
        seen.push(rows);
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(seen, vec![20]); // -20..0 is the first band (chunk-aligned)
    assert!(t.get(glam::IVec3::new(0, -5, 10)).is_empty());
}

#[test]
fn strips_stream_into_one_smoothgrid_and_origins_move_voxels() {
    // A world voxelised in strips of one chunk column each (x ∈ [32k, 32k + 32)), each strip
    // encoded after the last and dropped, gives the bytes of the whole terrain encoded at once.
    let w = tutorial(vec![Zone::circle(64.0, 64.0, 2.0, 30.0, 60.0)]);
    let all = VoxelColumns {
        min: [-40, -20],
        max: [70, 60],
    };
    let mut whole = Terrain::new();
    w.write_voxels(&mut whole, all, -40.0, |_| ControlFlow::Continue(()))
        .unwrap();
    whole.compact();
    let mut enc = smoothgrid::Encoder::new();
    let mut x = all.min[0];
    let mut strips = 0;
    while x < all.max[0] {
        let x1 = (x.div_euclid(32) + 1) * 32;
        let x1 = x1.min(all.max[0]);
        let mut strip = Terrain::new();
        let cells = VoxelColumns {
            min: [x, all.min[1]],
            max: [x1, all.max[1]],
        };
        w.write_voxels(&mut strip, cells, -40.0, |_| ControlFlow::Continue(()))
            .unwrap();
        strip.compact();
        enc.try_append(&strip).unwrap();
        strips += 1;
        x = x1;
    }
    assert_eq!(strips, 5); // -40..-32, -32..0, 0..32, 32..64, 64..70
    assert_eq!(enc.finish(), smoothgrid::encode(&whole));
    // Strips out of order are refused, naming the chunks.
    let mut enc = smoothgrid::Encoder::new();
    enc.try_append(&whole).unwrap();
    let e = enc.try_append(&whole).unwrap_err().to_string();
    assert!(e.contains("appended after chunk"), "{e}");

    // write_voxels_at: world cell c lands at c − origin.
    let origin = glam::IVec3::new(10, -3, -7);
    let mut moved = Terrain::new();
    w.write_voxels_at(
        &mut moved,
        all,
        -40.0,
        origin,
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let mut solid = 0;
    for c in [
        glam::IVec3::new(-40, -5, -20),
        glam::IVec3::new(0, 0, 0),
        glam::IVec3::new(16, -2, 16),
        glam::IVec3::new(69, -1, 59),
    ] {
        for dy in -8..8 {
            let c = c + glam::IVec3::new(0, dy, 0);
            assert_eq!(moved.get(c - origin), whole.get(c), "cell {c}");
            solid += usize::from(!whole.get(c).is_empty());
        }
    }
    assert!(solid > 8, "{solid} solid cells checked");
    assert!(
        w.write_voxels_at(
            &mut moved,
            all,
            -40.0,
            glam::IVec3::new(1 << 22, 0, 0),
            |_| { ControlFlow::Continue(()) }
        )
        .is_err()
    );
}

#[test]
fn height_range_is_the_heightfields_without_keeping_it() {
    let w = tutorial(vec![
        Zone::circle(64.0, 64.0, 2.0, 30.0, 60.0),
        Zone::circle(-200.0, 90.0, -30.0, 20.0, 50.0),
    ]);
    let rect = SampleRect {
        min: [-70, -5],
        size: [131, 77],
    };
    assert_eq!(w.height_range(rect), Ok(w.heightfield(rect, false).range()));
    assert_eq!(
        w.height_range(SampleRect {
            min: [0, 0],
            size: [0, 9]
        }),
        Ok(None)
    );
}

#[test]
fn a_surface_the_terrain_cannot_hold_is_an_error_naming_its_column() {
    let rect = SampleRect {
        min: [-3, -2],
        size: [40, 30],
    };
    // Heights that overflow f32 (the noise times 1e300), and a seed math.noise turns into NaN.
    for cfg in [
        WorldConfig {
            height: 1e300,
            ..WorldConfig::default()
        },
        WorldConfig {
            seed: 1e300,
            ..WorldConfig::default()
        },
        WorldConfig {
            base: 9e6,
            ..WorldConfig::default()
        },
    ] {
        let w = World::new(cfg).unwrap();
        let e = w.height_range(rect).unwrap_err();
        let TerrainError::Surface { i, j, value } = e else {
            panic!("{e:?}");
        };
        // The first bad column row by row, whatever rayon's split: the same as a serial scan.
        let hf = w.heightfield(rect, false);
        let k = hf
            .heights
            .iter()
            .position(|h| h.is_nan() || h.abs() > 8_388_608.0)
            .unwrap();
        let (x, z) = (k % rect.size[0], k / rect.size[0]);
        assert_eq!((i, j), (rect.min[0] + x as i64, rect.min[1] + z as i64));
        assert_eq!(value.to_bits(), f64::from(hf.at(x, z)).to_bits());
        // A heightfield's own check names the same column.
        assert_eq!(hf.check().unwrap_err().to_string(), e.to_string());
        assert!(
            e.to_string().contains("outside the terrain's ±8388608"),
            "{e}"
        );
    }
    // The edge: a surface exactly at the extent is held.
    let flat = World::new(WorldConfig {
        height: 0.0,
        base: 8_388_608.0 - 4.0,
        ..WorldConfig::default()
    })
    .unwrap();
    assert_eq!(
        flat.height_range(rect),
        Ok(Some((8_388_608.0, 8_388_608.0)))
    );
}

#[test]
fn voxel_columns_follow_the_surface() {
    let w = tutorial(vec![Zone::circle(0.0, 0.0, 9.0, 100.0, 200.0)]);
    let mut t = Terrain::new();
    w.write_voxels(
        &mut t,
        VoxelColumns {
            min: [-2, -2],
            max: [2, 2],
        },
        -8.0,
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    // Flat at 9 studs: cells y = 0 (centre 2) and 1 (centre 6) full, y = 2 (centre 10):
    // (9 - 10)/4 + 0.5 = 0.25; floor -8: y = -2 full, y = -3 empty.
    let c = |y| t.get(glam::IVec3::new(0, y, 0));
    assert_eq!(c(1).occupancy, 255);
    assert_eq!(c(2).occupancy, quantize(0.25));
    assert_eq!(c(3).occupancy, 0);
    assert_eq!(c(-2).occupancy, 255);
    assert_eq!(c(-3).occupancy, 0);
    assert_eq!(c(0).material, w.material_at(2.0, 2.0));
}

#[test]
fn same_bytes_on_any_thread_count() {
    let w = tutorial(vec![Zone::circle(0.0, 0.0, 0.0, 20.0, 60.0)]);
    let rect = SampleRect {
        min: [-30, -30],
        size: [64, 64],
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let hf = w.heightfield(rect, true);
                let mut t = Terrain::new();
                w.write_voxels(
                    &mut t,
                    VoxelColumns {
                        min: [-30, -30],
                        max: [34, 34],
                    },
                    -20.0,
                    |_| ControlFlow::Continue(()),
                )
                .unwrap();
                (hf, smoothgrid::encode(&t))
            })
    };
    let (a, ta) = run(1);
    let (b, tb) = run(2);
    let (c, tc) = run(3);
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(ta, tb);
    assert_eq!(ta, tc);
    assert_eq!(a, w.heightfield(rect, false));
}

#[test]
fn golden_heightfields() {
    let rect = SampleRect {
        min: [-8, -8],
        size: [16, 16],
    };
    let golden = |seed: f64, noise: HeightNoise| {
        let w = World::new(WorldConfig {
            seed,
            noise,
            zones: vec![Zone::circle(0.0, 0.0, 1.0, 8.0, 24.0)],
            ..WorldConfig::default()
        })
        .unwrap();
        hf_hash(&w.heightfield(rect, false))
    };
    let fbm = HeightNoise::Field(NoiseConfig {
        basis: Basis::Simplex,
        fractal: Fractal::Fbm,
        octaves: 5,
        seed: 3,
        ..NoiseConfig::default()
    });
    let got = [
        golden(0.0, HeightNoise::Tutorial),
        golden(7.0, HeightNoise::Tutorial),
        golden(0.0, fbm),
    ];
    assert_eq!(got, GOLDEN, "{got:#x?}");
}

/// Pinned outputs: a change here must be deliberate.
const GOLDEN: [u64; 3] = [
    0xa214_912e_1501_ed08,
    0xa6e6_f52b_c026_00e8,
    0x8fda_8ecc_b41a_a419,
];

#[test]
fn fractal_noise_heights() {
    let w = World::new(WorldConfig {
        noise: HeightNoise::Field(NoiseConfig {
            basis: Basis::Perlin,
            fractal: Fractal::Fbm,
            octaves: 4,
            seed: 11,
            ..NoiseConfig::default()
        }),
        ..WorldConfig::default()
    })
    .unwrap();
    let hf = w.heightfield(
        SampleRect {
            min: [0, 0],
            size: [32, 32],
        },
        false,
    );
    let (lo, hi) = hf.range().unwrap();
    assert!(lo >= -20.0 && hi <= 20.0 && hi > lo, "{lo}..{hi}");
    assert!(matches!(
        World::new(WorldConfig {
            noise: HeightNoise::Field(NoiseConfig {
                octaves: 0,
                fractal: Fractal::Fbm,
                ..NoiseConfig::default()
            }),
            ..WorldConfig::default()
        }),
        Err(TerrainError::Noise(_))
    ));
}

#[test]
fn resources_avoid_zones_and_agree_across_chunks() {
    let zones = vec![
        Zone::circle(0.0, 0.0, 0.0, 60.0, 120.0),
        Zone::rect(200.0, -100.0, 3.0, 80.0, 120.0, 60.0, 100.0),
    ];
    let w = tutorial(zones.clone());
    for exclude in [ZoneExclusion::Inner, ZoneExclusion::Whole] {
        let cfg = ResourceConfig {
            seed: 5,
            min_distance: 16.0,
            density: 0.8,
            exclude,
        };
        let all = w.resources([-300.0, -300.0, 300.0, 300.0], &cfg).unwrap();
        assert!(all.len() > 100, "{}", all.len());
        for r in &all {
            for z in &zones {
                let inside = match exclude {
                    ZoneExclusion::Inner => z.is_inner(r.x, r.z),
                    ZoneExclusion::Whole => z.factor(r.x, r.z).is_some(),
                };
                assert!(!inside, "{r:?} in {z:?}");
            }
            assert_eq!(r.y, w.surface_at(r.x, r.z));
        }
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                let d = ((a.x - b.x).powi(2) + (a.z - b.z).powi(2)).sqrt();
                assert!(d >= 16.0, "{a:?} {b:?}");
            }
        }
        // Chunks: the union of four quadrants is the whole set.
        let mut parts = Vec::new();
        for (x0, x1) in [(-300.0, 17.0), (17.0, 300.0)] {
            for (z0, z1) in [(-300.0, -41.0), (-41.0, 300.0)] {
                parts.extend(w.resources([x0, z0, x1, z1], &cfg).unwrap());
            }
        }
        let key = |r: &Resource| (r.x.to_bits(), r.z.to_bits());
        let mut a: Vec<_> = all.iter().map(key).collect();
        let mut b: Vec<_> = parts.iter().map(key).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
    let bad = ResourceConfig {
        seed: 0,
        min_distance: 0.0,
        density: 1.0,
        exclude: ZoneExclusion::Inner,
    };
    assert!(w.resources([0.0, 0.0, 10.0, 10.0], &bad).is_err());
}

#[test]
fn placed_resources_never_float_and_agree_across_chunks() {
    let spec = WorldSpec {
        seed: 3.0,
        columns: Some([96, 96]),
        zones: vec![ZoneSpec {
            shape: "circle".into(),
            r1: Some(40.0),
            r2: Some(80.0),
            ..ZoneSpec::default()
        }],
        resources: Some(ResourcesSpec {
            seed: 9,
            min_distance: 12.0,
            density: 0.7,
            exclude: None,
            sink: Some(1.5),
            trees_on: Some(vec!["Grass".into(), "LeafyGrass".into()]),
        }),
        ..WorldSpec::default()
    };
    let plan = spec.plan().unwrap();
    let (w, rp) = (&plan.world, plan.resources.as_ref().unwrap());
    let area = plan.resource_area().unwrap();
    let all = w.place_resources(area, rp).unwrap();
    assert!(all.len() > 50, "{}", all.len());
    let (mut trees, mut rocks) = (0, 0);
    for p in &all {
        assert!(!w.config().zones[0].is_inner(p.x, p.z), "{p:?}");
        assert_eq!(p.ground, w.surface_at(p.x, p.z));
        assert_eq!(p.material, w.material_at(p.x, p.z));
        // Sunk: the bottom is `sink` below the surface of every voxel column the footprint
        // touches (the voxel surface between column centres is interpolated from them).
        let cells =
            |a: f64| ((a - p.half) / 4.0).floor() as i32..=((a + p.half) / 4.0).floor() as i32;
        for cx in cells(p.x) {
            for cz in cells(p.z) {
                let (x, z) = (f64::from(cx) * 4.0 + 2.0, f64::from(cz) * 4.0 + 2.0);
                assert!(
                    p.bottom <= w.surface_at(x, z) - 1.5,
                    "{p:?} floats at ({x}, {z})"
                );
            }
        }
        assert!(p.half <= MAX_HALF);
        match p.kind {
            ResourceKind::Tree => {
                trees += 1;
                assert!(matches!(p.material, Material::Grass | Material::LeafyGrass));
            }
            ResourceKind::Rock => rocks += 1,
        }
    }
    assert!(trees > 0 && rocks > 0, "{trees} trees, {rocks} rocks");
    // Any split of the area places the same resources the same way.
    let [x0, z0, x1, z1] = area;
    let mut parts = Vec::new();
    for (a, b) in [(x0, 13.0), (13.0, x1)] {
        for (c, d) in [(z0, -50.0), (-50.0, z1)] {
            parts.extend(w.place_resources([a, c, b, d], rp).unwrap());
        }
    }
    let key = |p: &PlacedResource| (p.x.to_bits(), p.z.to_bits());
    parts.sort_by_key(key);
    let mut whole = all.clone();
    whole.sort_by_key(key);
    assert_eq!(parts, whole);
}

#[test]
fn write_voxel_count_is_what_a_write_covers() {
    // A flat world at 9 studs (height 0): every column spans floor -8 .. 9, i.e. cells
    // y = -3 .. 2 inclusive (ylo = floor((-8 - 2)/4) = -3, yhi = ceil((9 + 2)/4) = 3).
    let w = World::new(WorldConfig {
        height: 0.0,
        base: 5.0,
        ..WorldConfig::default()
    })
    .unwrap();
    let cells = VoxelColumns {
        min: [-5, 30],
        max: [3, 40],
    };
    assert_eq!(w.write_voxel_count(cells, -8.0), 8 * 10 * 6);
    let mut t = Terrain::new();
    w.write_voxels(&mut t, cells, -8.0, |_| ControlFlow::Continue(()))
        .unwrap();
    assert_eq!(t.get(glam::IVec3::new(0, 2, 35)).occupancy, quantize(0.25));
    assert!(t.get(glam::IVec3::new(0, 3, 35)).is_empty());
    // Refused inputs count as more than any cap.
    assert_eq!(w.write_voxel_count(cells, f64::NAN), u128::MAX);
    let far = VoxelColumns {
        min: [0, 0],
        max: [1 << 22, 1],
    };
    assert_eq!(w.write_voxel_count(far, 0.0), u128::MAX);
    // A hilly world: at least one voxel per column, no more than its surface range allows.
    let hills = tutorial(vec![]);
    let n = hills.write_voxel_count(cells, -40.0);
    assert!((80..=80 * 20).contains(&n), "{n}");
}
