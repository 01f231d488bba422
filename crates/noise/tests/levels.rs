//! Every function gives the same bytes on every SIMD level this CPU has, on any thread
//! count, and equal to `sample2`/`sample3` at the documented grid coordinates.

mod common;

use procmodel_noise::{Exec, Grid2, Grid3, Noise, NoiseError, SimdLevel};

const G2: Grid2 = Grid2 {
    origin: [-13.37, 5.25],
    step: [0.173, 0.311],
    size: [67, 23],
};
const G3: Grid3 = Grid3 {
    origin: [-3.3, 1.7, -0.45],
    step: [0.37, 0.29, 0.53],
    size: [37, 9, 7],
};

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn fill2(n: &Noise, simd: SimdLevel, parallel: bool) -> Vec<u32> {
    let mut out = vec![0.0; G2.size[0] * G2.size[1]];
    n.fill2(
        &G2,
        &mut out,
        Exec {
            simd: Some(simd),
            parallel,
        },
    )
    .unwrap();
    bits(&out)
}

fn fill3(n: &Noise, simd: SimdLevel, parallel: bool) -> Vec<u32> {
    let mut out = vec![0.0; G3.size[0] * G3.size[1] * G3.size[2]];
    n.fill3(
        &G3,
        &mut out,
        Exec {
            simd: Some(simd),
            parallel,
        },
    )
    .unwrap();
    bits(&out)
}

/// The SIMD levels this CPU has.
fn available_levels() -> Vec<SimdLevel> {
    SimdLevel::ALL
        .into_iter()
        .filter(|l| l.is_available())
        .collect()
}

/// `g2` and `g3` filled on every available level, serially and split over a 3-thread pool:
/// `(level, parallel, 2D samples, 3D samples)`.
fn fills_everywhere(
    n: &Noise,
    g2: &Grid2,
    g3: &Grid3,
) -> Vec<(SimdLevel, bool, Vec<f32>, Vec<f32>)> {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
    });
    let mut all = Vec::new();
    for l in available_levels() {
        for parallel in [false, true] {
            let exec = Exec {
                simd: Some(l),
                parallel,
            };
            let mut out2 = vec![0.0; g2.size[0] * g2.size[1]];
            let mut out3 = vec![0.0; g3.size[0] * g3.size[1] * g3.size[2]];
            pool.install(|| {
                n.fill2(g2, &mut out2, exec).unwrap();
                n.fill3(g3, &mut out3, exec).unwrap();
            });
            all.push((l, parallel, out2, out3));
        }
    }
    all
}

#[test]
fn all_levels_and_threads_give_identical_bytes() {
    let levels = available_levels();
    eprintln!("levels exercised: {levels:?}");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    for (name, cfg) in common::configs() {
        let n = Noise::new(cfg).unwrap();
        let r2 = fill2(&n, SimdLevel::Scalar, false);
        let r3 = fill3(&n, SimdLevel::Scalar, false);
        for &l in &levels {
            assert_eq!(fill2(&n, l, false), r2, "{name} 2D {l:?}");
            assert_eq!(fill3(&n, l, false), r3, "{name} 3D {l:?}");
            let (p2, p3) = pool.install(|| (fill2(&n, l, true), fill3(&n, l, true)));
            assert_eq!(p2, r2, "{name} 2D {l:?} parallel");
            assert_eq!(p3, r3, "{name} 3D {l:?} parallel");
        }
    }
}

/// Grids through lattice points (the origin, half steps), where exact zeros and ties occur:
/// every level must give the same bytes there too, signs of zeros included.
#[test]
fn lattice_aligned_grids_are_identical_on_every_level() {
    let grids = [
        Grid3 {
            origin: [-4.0, -3.0, -2.0],
            step: [0.5, 0.5, 0.5],
            size: [17, 13, 9],
        },
        Grid3 {
            origin: [-1.0, -1.0, -1.0],
            step: [0.25, 0.125, 0.5],
            size: [9, 17, 5],
        },
    ];
    for (name, cfg) in common::configs() {
        let n = Noise::new(cfg).unwrap();
        for g in &grids {
            let fill = |simd| {
                let mut out = vec![0.0; g.size[0] * g.size[1] * g.size[2]];
                let exec = Exec {
                    simd: Some(simd),
                    parallel: false,
                };
                n.fill3(g, &mut out, exec).unwrap();
                bits(&out)
            };
            let want = fill(SimdLevel::Scalar);
            for l in available_levels() {
                let got = fill(l);
                let bad = got.iter().zip(&want).position(|(a, b)| a != b);
                assert!(
                    bad.is_none(),
                    "{name} {l:?} {g:?}: sample {bad:?} is {:#x}, scalar {:#x}",
                    got[bad.unwrap_or(0)],
                    want[bad.unwrap_or(0)]
                );
            }
        }
    }
}

/// Fine grids, where the lanes of a vector share lattice cells (the AVX2 simplex path takes
/// their gradients from per-cell tables then): every level gives the scalar bytes, for
/// several seeds and frequencies, steps of either sign and lattice-aligned steps, on one
/// thread and split across threads (whose cell caches outlive a task).
#[test]
fn fine_grids_are_identical_on_every_level() {
    let grids = [
        Grid3 {
            origin: [0.5, 0.25, 0.125],
            step: [0.031, 0.031, 0.031],
            size: [131, 7, 5],
        },
        Grid3 {
            origin: [-2.0, -1.0, -0.5],
            step: [1.0 / 32.0, 1.0 / 16.0, 0.25],
            size: [100, 9, 6],
        },
        Grid3 {
            origin: [3.7, -0.2, 1.1],
            step: [-0.013, 0.07, -0.11],
            size: [77, 6, 5],
        },
    ];
    for seed in [0, 3, 1_000_003] {
        for frequency in [1.0, 0.37, 2.5] {
            let n = Noise::new(procmodel_noise::NoiseConfig {
                basis: procmodel_noise::Basis::Simplex,
                seed,
                frequency,
                ..Default::default()
            })
            .unwrap();
            for g in &grids {
                let fill = |simd, parallel| {
                    let mut out = vec![0.0; g.size[0] * g.size[1] * g.size[2]];
                    let exec = Exec {
                        simd: Some(simd),
                        parallel,
                    };
                    n.fill3(g, &mut out, exec).unwrap();
                    bits(&out)
                };
                let want = fill(SimdLevel::Scalar, false);
                for l in available_levels() {
                    for parallel in [false, true] {
                        let got = fill(l, parallel);
                        let bad = got.iter().zip(&want).position(|(a, b)| a != b);
                        assert!(
                            bad.is_none(),
                            "seed {seed} frequency {frequency} {l:?} parallel {parallel} {g:?}: \
                             sample {bad:?}"
                        );
                    }
                }
            }
        }
    }
}

/// Single-octave Perlin on fine grids, where the grid path goes by lattice cell along x
/// (hashing once per row and cell, `pgrid.rs`) on the scalar, SSE2 and AVX2 levels: every
/// level, serial and split across threads, gives `sample2` / `sample3` at every point. Steps
/// with one cell per vector, lattice-aligned ones, negative ones, ones where a vector's lanes
/// span three or more cells, coarse ones past the cell path's limits (the reference loop),
/// rows through many lattice points (signs of zeros); origins near and far from 0; row
/// lengths that are no multiple of 32.
#[test]
fn fine_perlin_grids_equal_samples_on_every_level() {
    let grids = [
        ([0.5, 0.25, 0.125], [0.031, 0.031, 0.031], [131, 5, 4]),
        (
            [-2.0, -1.0, -0.5],
            [1.0 / 32.0, 1.0 / 16.0, 0.25],
            [100, 6, 3],
        ),
        ([3.7, -0.2, 1.1], [-0.013, 0.07, -0.11], [77, 5, 4]),
        ([0.0, 0.0, 0.0], [-1.0 / 32.0, -0.125, -0.5], [70, 5, 3]),
        ([-1.3, 0.6, 2.2], [0.21, 0.17, 0.3], [45, 5, 3]),
        ([-5.1, 2.3, 0.7], [0.37, 0.29, 0.53], [37, 4, 3]),
        ([-9.9, 1.1, -3.3], [1.3, 0.9, 0.7], [29, 4, 3]),
        ([1e4, -7.5e3, 2.5e3], [0.031, 0.5, 0.031], [67, 4, 3]),
        (
            [-300.5, 255.75, -256.0],
            [0.031, 0.031, 1.0 / 32.0],
            [97, 4, 3],
        ),
        ([-0.3, -0.3, -0.3], [0.011, 0.031, 0.031], [33, 4, 3]),
        // Many lattice points (integer y and z on every row), where exact zeros meet.
        ([-8.0, -8.0, -4.0], [0.125, 1.0, 1.0], [131, 6, 4]),
    ];
    for seed in [0, 3, 1_000_003] {
        for frequency in [1.0, 0.37, 2.5, -1.5] {
            let n = Noise::new(procmodel_noise::NoiseConfig {
                basis: procmodel_noise::Basis::Perlin,
                seed,
                frequency,
                ..Default::default()
            })
            .unwrap();
            for &(origin, step, size) in &grids {
                let g2 = Grid2 {
                    origin: [origin[0], origin[1]],
                    step: [step[0], step[1]],
                    size: [size[0], size[1] * size[2]],
                };
                let g3 = Grid3 { origin, step, size };
                let at = |i: usize, a: usize| origin[a] + (i as f32) * step[a];
                let mut want2 = Vec::new();
                for j in 0..g2.size[1] {
                    for i in 0..size[0] {
                        want2.push(n.sample2(at(i, 0), at(j, 1)).to_bits());
                    }
                }
                let mut want3 = Vec::new();
                for k in 0..size[2] {
                    for j in 0..size[1] {
                        for i in 0..size[0] {
                            want3.push(n.sample3(at(i, 0), at(j, 1), at(k, 2)).to_bits());
                        }
                    }
                }
                for (l, parallel, out2, out3) in fills_everywhere(&n, &g2, &g3) {
                    for (dim, got, want) in [(2, bits(&out2), &want2), (3, bits(&out3), &want3)] {
                        let bad = got.iter().zip(want).position(|(a, b)| a != b);
                        assert!(
                            bad.is_none(),
                            "{dim}D seed {seed} frequency {frequency} {l:?} parallel \
                             {parallel} origin {origin:?} step {step:?}: sample {bad:?} \
                             is {:#x}, sample{dim} {:#x}",
                            got[bad.unwrap_or(0)],
                            want[bad.unwrap_or(0)]
                        );
                    }
                }
            }
        }
    }
}

/// Output bits with every NaN as the one quiet NaN `f32::NAN`.
fn bits_nan_canonical(v: &[f32]) -> Vec<u32> {
    v.iter()
        .map(|x| if x.is_nan() { f32::NAN } else { *x }.to_bits())
        .collect()
}

/// Non-finite coordinates on the Perlin grid path (NaN or infinite x, y or z, whole rows or
/// single rows, and steps): every level, serial and parallel, gives the bits of `sample2` /
/// `sample3`, except for the sign and payload of a NaN result. Where an x NaN (`∞ − ∞`, the
/// negative default NaN) meets a y NaN (the positive input NaN) in an add, x86 returns the
/// first operand's, and which operand is first is the compiler's choice for a commutative
/// add (Rust leaves NaN bits unspecified): the 2D grid at `(∞, NaN)` already gave −NaN on AVX2
/// against `sample2`'s +NaN before the cell path. Every other output is compared bit for bit.
#[test]
fn non_finite_perlin_grids_equal_samples_on_every_level() {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let grids = [
        ([nan, 0.25, 0.5], [0.031, 0.031, 0.031]),
        ([inf, 0.25, 0.5], [0.031, 0.031, 0.031]),
        ([-inf, 0.25, 0.5], [0.031, 0.031, 0.031]),
        ([0.5, nan, 0.5], [0.031, 0.031, 0.031]),
        ([0.5, inf, -inf], [0.031, 0.031, 0.031]),
        ([0.5, 0.25, nan], [0.031, 0.031, 0.031]),
        ([inf, nan, -inf], [0.031, 0.031, 0.031]),
        ([0.5, 0.25, 0.5], [inf, 0.031, 0.031]),
        ([0.5, 0.25, 0.5], [0.031, -inf, 0.031]),
        ([3e38, -3e38, 0.5], [1e38, 0.031, 0.031]),
        ([0.5, 0.25, 0.5], [0.031, 0.031, nan]),
    ];
    let size = [41, 3, 3];
    let mut nans = 0;
    for seed in [0, 3] {
        let n = Noise::new(procmodel_noise::NoiseConfig {
            basis: procmodel_noise::Basis::Perlin,
            seed,
            ..Default::default()
        })
        .unwrap();
        for &(origin, step) in &grids {
            let at = |i: usize, a: usize| origin[a] + (i as f32) * step[a];
            let g2 = Grid2 {
                origin: [origin[0], origin[1]],
                step: [step[0], step[1]],
                size: [size[0], size[1]],
            };
            let g3 = Grid3 { origin, step, size };
            let mut want2 = Vec::new();
            for j in 0..size[1] {
                for i in 0..size[0] {
                    want2.push(n.sample2(at(i, 0), at(j, 1)));
                }
            }
            let mut want3 = Vec::new();
            for k in 0..size[2] {
                for j in 0..size[1] {
                    for i in 0..size[0] {
                        want3.push(n.sample3(at(i, 0), at(j, 1), at(k, 2)));
                    }
                }
            }
            nans += want2.iter().chain(&want3).filter(|v| v.is_nan()).count();
            let (want2, want3) = (bits_nan_canonical(&want2), bits_nan_canonical(&want3));
            for (l, parallel, out2, out3) in fills_everywhere(&n, &g2, &g3) {
                let what = format!("seed {seed} {l:?} parallel {parallel} {origin:?} {step:?}");
                assert_eq!(bits_nan_canonical(&out2), want2, "2D {what}");
                assert_eq!(bits_nan_canonical(&out3), want3, "3D {what}");
            }
        }
    }
    assert!(nans > 0, "the grids reach NaN outputs");
}

#[test]
fn grid_equals_single_samples() {
    for (name, cfg) in common::configs() {
        let n = Noise::new(cfg).unwrap();
        let r2 = fill2(&n, SimdLevel::best(), false);
        for j in 0..G2.size[1] {
            for i in 0..G2.size[0] {
                let x = G2.origin[0] + i as f32 * G2.step[0];
                let y = G2.origin[1] + j as f32 * G2.step[1];
                assert_eq!(
                    n.sample2(x, y).to_bits(),
                    r2[j * G2.size[0] + i],
                    "{name} ({i},{j})"
                );
            }
        }
        let r3 = fill3(&n, SimdLevel::best(), false);
        for k in 0..G3.size[2] {
            for j in 0..G3.size[1] {
                for i in 0..G3.size[0] {
                    let x = G3.origin[0] + i as f32 * G3.step[0];
                    let y = G3.origin[1] + j as f32 * G3.step[1];
                    let z = G3.origin[2] + k as f32 * G3.step[2];
                    let at = (k * G3.size[1] + j) * G3.size[0] + i;
                    assert_eq!(n.sample3(x, y, z).to_bits(), r3[at], "{name} ({i},{j},{k})");
                }
            }
        }
    }
}

#[test]
fn perlin_seed0_grid_is_math_noise() {
    let n = Noise::new(Default::default()).unwrap();
    let r3 = fill3(&n, SimdLevel::best(), false);
    let at = (2 * G3.size[1] + 3) * G3.size[0] + 5;
    let (x, y, z) = (
        G3.origin[0] + 5.0 * G3.step[0],
        G3.origin[1] + 3.0 * G3.step[1],
        G3.origin[2] + 2.0 * G3.step[2],
    );
    assert_eq!(procmodel_noise::perlin3_f32(x, y, z).to_bits(), r3[at]);
}

#[test]
fn bad_inputs_are_errors() {
    let n = Noise::new(Default::default()).unwrap();
    let mut out = vec![0.0; 10];
    assert_eq!(
        n.fill2(&G2, &mut out, Exec::default()),
        Err(NoiseError::Len {
            expected: 67 * 23,
            got: 10
        })
    );
    let huge = Grid2 {
        size: [1 << 25, 1],
        ..G2
    };
    assert!(matches!(
        n.fill2(&huge, &mut out, Exec::default()),
        Err(NoiseError::GridSize(_))
    ));
    let bad = procmodel_noise::NoiseConfig {
        octaves: 0,
        fractal: procmodel_noise::Fractal::Fbm,
        ..Default::default()
    };
    assert_eq!(Noise::new(bad).err(), Some(NoiseError::Octaves(0)));
    let nan = procmodel_noise::NoiseConfig {
        frequency: f32::NAN,
        ..Default::default()
    };
    assert!(matches!(
        Noise::new(nan),
        Err(NoiseError::NonFinite {
            name: "frequency",
            ..
        })
    ));
    // Octaves whose frequency or amplitude leave f32 would make every sample NaN (a world of
    // such noise came out flat, its NaN clamped away).
    let steep = procmodel_noise::NoiseConfig {
        octaves: 32,
        lacunarity: 20.0,
        fractal: procmodel_noise::Fractal::Fbm,
        ..Default::default()
    };
    let e = Noise::new(steep).unwrap_err();
    assert!(
        matches!(
            e,
            NoiseError::Overflow {
                octave: 30,
                what: "frequency",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "octave 30's frequency is 1.074e39, beyond f32: lower the lacunarity, the gain (persistence) or the octaves"
    );
    let loud = procmodel_noise::NoiseConfig {
        octaves: 12,
        gain: 1e5,
        fractal: procmodel_noise::Fractal::Fbm,
        ..Default::default()
    };
    assert!(matches!(
        Noise::new(loud),
        Err(NoiseError::Overflow {
            octave: 8,
            what: "amplitude",
            ..
        })
    ));
    // The steepest that fits is still a generator.
    let fits = procmodel_noise::NoiseConfig {
        octaves: 30,
        ..steep
    };
    assert!(Noise::new(fits).is_ok());
    let mut empty: Vec<f32> = Vec::new();
    let zero = Grid2 { size: [0, 5], ..G2 };
    assert_eq!(n.fill2(&zero, &mut empty, Exec::default()), Ok(()));
}
