//! Whole-grid fingerprints: every config filled over grids with fractional steps and over
//! lattice-aligned half steps (where signed zeros and exact ties occur), hashed bit by bit.
//! The values were recorded before the grid fast paths were specialised; a change here is a
//! change of output, not a refactor.

mod common;

use procmodel_noise::{Exec, Grid2, Grid3, Noise};

const G2S: [Grid2; 2] = [
    Grid2 {
        origin: [-37.3, 11.9],
        step: [0.173, 0.311],
        size: [131, 29],
    },
    Grid2 {
        origin: [-8.0, -6.0],
        step: [0.5, 0.5],
        size: [40, 24],
    },
];
const G3S: [Grid3; 2] = [
    Grid3 {
        origin: [-9.3, 1.7, -0.45],
        step: [0.137, 0.29, 0.53],
        size: [97, 13, 11],
    },
    Grid3 {
        origin: [-4.0, -3.0, -2.0],
        step: [0.5, 0.5, 0.5],
        size: [35, 14, 12],
    },
];

/// FNV-1a over the f32 bit patterns.
fn fnv(v: &[f32]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for x in v {
        for b in x.to_bits().to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn fingerprint(n: &Noise) -> u64 {
    let mut h = 0u64;
    for g in &G2S {
        let mut out = vec![0.0; g.size[0] * g.size[1]];
        n.fill2(g, &mut out, Exec::default()).unwrap();
        h = h.rotate_left(17) ^ fnv(&out);
    }
    for g in &G3S {
        let mut out = vec![0.0; g.size[0] * g.size[1] * g.size[2]];
        n.fill3(g, &mut out, Exec::default()).unwrap();
        h = h.rotate_left(17) ^ fnv(&out);
    }
    h
}

const WANT: &[(&str, u64)] = &[
    ("perlin_seed0", 0x2bf9c75d75eb8c3f),
    ("perlin_seed7", 0x90a594e4b151a87a),
    ("simplex", 0xf029aa8565fea31e),
    ("opensimplex2", 0xc8a28a7e5bce5b0f),
    ("worley_euclid_f1", 0xb2ee55d31dd7843b),
    ("worley_euclid_f2", 0x9f2632f9b97153b4),
    ("worley_euclid_f2mf1", 0x0b22ce021d2a0ff7),
    ("worley_manhattan_f1", 0x1649b3f1a470a7ab),
    ("worley_manhattan_f2", 0x1d20ed298332abc3),
    ("worley_manhattan_f2mf1", 0x1a97a750ae432443),
    ("fbm_perlin", 0x2745b539064373ce),
    ("fbm_simplex", 0xf8e28e784da1c8c2),
    ("ridged_simplex", 0x5520c35e153beb7c),
    ("billow_opensimplex2", 0x875de9b9ffc58da0),
    ("warp_fbm_simplex", 0xbc57098249886a31),
    ("warp_perlin", 0x0334b56f57d4e585),
];

#[test]
fn grid_fingerprints_are_unchanged() {
    let got: Vec<(&str, u64)> = common::configs()
        .into_iter()
        .map(|(name, cfg)| (name, fingerprint(&Noise::new(cfg).unwrap())))
        .collect();
    for (name, h) in &got {
        eprintln!("    (\"{name}\", {h:#018x}),");
    }
    assert_eq!(got, WANT);
}
