//! Shared fixtures: one config per function the crate offers.

use procmodel_noise::{Basis, CellDistance, CellReturn, Cellular, Fractal, NoiseConfig, Warp};

/// `(name, config)` for every basis, fractal, Worley variant and the domain warp.
pub fn configs() -> Vec<(&'static str, NoiseConfig)> {
    let base = NoiseConfig::default();
    let cell = |distance, ret| {
        Basis::Worley(Cellular {
            distance,
            ret,
            jitter: 1.0,
        })
    };
    let fr = |basis, fractal| NoiseConfig {
        basis,
        fractal,
        octaves: 5,
        seed: 42,
        ..base
    };
    vec![
        ("perlin_seed0", base),
        ("perlin_seed7", NoiseConfig { seed: 7, ..base }),
        (
            "simplex",
            NoiseConfig {
                basis: Basis::Simplex,
                seed: 3,
                ..base
            },
        ),
        (
            "opensimplex2",
            NoiseConfig {
                basis: Basis::OpenSimplex2,
                seed: 3,
                ..base
            },
        ),
        (
            "worley_euclid_f1",
            NoiseConfig {
                basis: cell(CellDistance::Euclidean, CellReturn::F1),
                seed: 5,
                ..base
            },
        ),
        (
            "worley_euclid_f2",
            NoiseConfig {
                basis: cell(CellDistance::Euclidean, CellReturn::F2),
                seed: 5,
                ..base
            },
        ),
        (
            "worley_euclid_f2mf1",
            NoiseConfig {
                basis: cell(CellDistance::Euclidean, CellReturn::F2MinusF1),
                seed: 5,
                ..base
            },
        ),
        (
            "worley_manhattan_f1",
            NoiseConfig {
                basis: cell(CellDistance::Manhattan, CellReturn::F1),
                seed: 5,
                ..base
            },
        ),
        (
            "worley_manhattan_f2",
            NoiseConfig {
                basis: cell(CellDistance::Manhattan, CellReturn::F2),
                seed: 5,
                ..base
            },
        ),
        (
            "worley_manhattan_f2mf1",
            NoiseConfig {
                basis: cell(CellDistance::Manhattan, CellReturn::F2MinusF1),
                seed: 5,
                ..base
            },
        ),
        ("fbm_perlin", fr(Basis::Perlin, Fractal::Fbm)),
        ("fbm_simplex", fr(Basis::Simplex, Fractal::Fbm)),
        ("ridged_simplex", fr(Basis::Simplex, Fractal::Ridged)),
        (
            "billow_opensimplex2",
            fr(Basis::OpenSimplex2, Fractal::Billow),
        ),
        (
            "warp_fbm_simplex",
            NoiseConfig {
                warp: Some(Warp {
                    amplitude: 0.75,
                    frequency: 0.5,
                }),
                frequency: 0.8,
                ..fr(Basis::Simplex, Fractal::Fbm)
            },
        ),
        (
            "warp_perlin",
            NoiseConfig {
                warp: Some(Warp {
                    amplitude: 2.0,
                    frequency: 0.25,
                }),
                seed: 11,
                ..base
            },
        ),
    ]
}
