//! Golden values per seed for every function, plus property tests (determinism, ranges,
//! lattice zeros, period 256, 2D = 3D at z = 0, seed independence).

mod common;

use procmodel_noise::{
    Basis, CellDistance, CellReturn, Cellular, Fractal, Noise, NoiseConfig, perlin2_f32, perlin3,
    perlin3_f32,
};
use proptest::prelude::*;

/// `(config name, 2D samples, 3D samples)` as f32 bit patterns at the points below.
/// Changing any of these is a deliberate change of output.
const GOLDEN: &[(&str, [u32; 3], [u32; 3])] = &[
    (
        "perlin_seed0",
        [0xbde9caa2, 0x3eec2000, 0x3dc7b3f6],
        [0xbdd0252e, 0xbe3352e0, 0xbe9b96c7],
    ),
    (
        "perlin_seed7",
        [0x3e22a019, 0x3ea58000, 0xbe416ad7],
        [0x3e59d94c, 0xbee03f20, 0x3e71ed34],
    ),
    (
        "simplex",
        [0x3f4697b4, 0x3d9efffa, 0x3e8465a2],
        [0xbe863190, 0xbf604b38, 0xbde4c99e],
    ),
    (
        "opensimplex2",
        [0x3bed510c, 0x3f064657, 0x3ee5d2a6],
        [0x3d92141c, 0x3e853ba0, 0x3ed3f30f],
    ),
    (
        "worley_euclid_f1",
        [0x3e37b378, 0x3f1d548c, 0x3e2ef1a3],
        [0x3e4cea97, 0x3ec4ffad, 0x3ef7bff8],
    ),
    (
        "worley_euclid_f2",
        [0x3f3d926e, 0x3f200800, 0x3f0e7f58],
        [0x3f3d9a77, 0x3f096903, 0x3f08917f],
    ),
    (
        "worley_euclid_f2mf1",
        [0x3f0fa590, 0x3c2cdd00, 0x3ec585de],
        [0x3f0a5fd1, 0x3e1ba4b2, 0x3d4b1830],
    ),
    (
        "worley_manhattan_f1",
        [0x3e81cccc, 0x3f58c000, 0x3e770000],
        [0x3eaf3332, 0x3f1f0000, 0x3f46c034],
    ),
    (
        "worley_manhattan_f2",
        [0x3f444000, 0x3f5e0000, 0x3f310d00],
        [0x3f47b333, 0x3f49c000, 0x3f4dd9cc],
    ),
    (
        "worley_manhattan_f2mf1",
        [0x3f03599a, 0x3ca80000, 0x3ee69a00],
        [0x3ee03334, 0x3e2b0000, 0x3ce33300],
    ),
    (
        "fbm_perlin",
        [0x3ef6f6dd, 0x3ee0ad6b, 0x3f0b56f1],
        [0x3ef818c0, 0x3f1aceca, 0x3f0f15fc],
    ),
    (
        "fbm_simplex",
        [0x3ec10276, 0x3ef93c8d, 0x3f257b94],
        [0x3f079cf9, 0x3ed846dc, 0x3f0ade4b],
    ),
    (
        "ridged_simplex",
        [0x3ef0056b, 0x3f1d62ac, 0x3ef02ebc],
        [0x3f5adfca, 0x3f3be625, 0x3f4471f1],
    ),
    (
        "billow_opensimplex2",
        [0x3f2ec7a4, 0x3e9ee375, 0x3f34724f],
        [0x3ecd6a7b, 0x3ed59a10, 0x3e4971c2],
    ),
    (
        "warp_fbm_simplex",
        [0x3f27d44e, 0x3ee84e5c, 0x3f20425e],
        [0x3f167ec4, 0x3ecc1cf0, 0x3ea2701c],
    ),
    (
        "warp_perlin",
        [0xbd97a0f0, 0xbeb99a10, 0x3e24e180],
        [0x3d509df4, 0xbe2b171a, 0xbd326b41],
    ),
];

const P2: [(f32, f32); 3] = [(0.3, 0.7), (-12.25, 3.5), (100.1, -47.9)];
const P3: [(f32, f32, f32); 3] = [(0.3, 0.7, 0.2), (-12.25, 3.5, 9.75), (100.1, -47.9, -3.3)];

fn check(name: &str, n: &Noise, want2: [u32; 3], want3: [u32; 3]) {
    for (k, &(x, y)) in P2.iter().enumerate() {
        let got = n.sample2(x, y).to_bits();
        assert_eq!(
            got,
            want2[k],
            "{name} 2D #{k}: {:#010x} = {}",
            got,
            f32::from_bits(got)
        );
    }
    for (k, &(x, y, z)) in P3.iter().enumerate() {
        let got = n.sample3(x, y, z).to_bits();
        assert_eq!(
            got,
            want3[k],
            "{name} 3D #{k}: {:#010x} = {}",
            got,
            f32::from_bits(got)
        );
    }
}

#[test]
fn golden_values_per_seed() {
    let configs = common::configs();
    assert_eq!(configs.len(), GOLDEN.len());
    for ((name, cfg), &(gname, w2, w3)) in configs.iter().zip(GOLDEN) {
        assert_eq!(*name, gname);
        check(name, &Noise::new(*cfg).unwrap(), w2, w3);
    }
}

#[test]
fn golden_math_noise() {
    assert_eq!(perlin3(1.158, 5.723, 0.0), 0.483_975_321_054_458_6);
    assert_eq!(perlin3(0.5, 0.5, 0.5), -0.25);
    assert_eq!(perlin3(3.0, 7.0, -2.0), 0.0);
}

#[test]
fn one_octave_fbm_is_the_basis_remapped() {
    for basis in [Basis::Perlin, Basis::Simplex, Basis::OpenSimplex2] {
        let b = Noise::new(NoiseConfig {
            basis,
            seed: 9,
            ..Default::default()
        })
        .unwrap();
        let f = Noise::new(NoiseConfig {
            basis,
            seed: 9,
            fractal: Fractal::Fbm,
            octaves: 1,
            ..Default::default()
        })
        .unwrap();
        let v = b.sample2(1.3, -2.7);
        assert_eq!(f.sample2(1.3, -2.7), v * 0.5 + 0.5);
    }
}

fn coord() -> impl Strategy<Value = f32> {
    -1000.0f32..1000.0
}

fn any_basis() -> impl Strategy<Value = Basis> {
    prop_oneof![
        Just(Basis::Perlin),
        Just(Basis::Simplex),
        Just(Basis::OpenSimplex2),
        (
            prop_oneof![Just(CellDistance::Euclidean), Just(CellDistance::Manhattan)],
            prop_oneof![
                Just(CellReturn::F1),
                Just(CellReturn::F2),
                Just(CellReturn::F2MinusF1)
            ],
            0.0f32..=1.0,
        )
            .prop_map(|(distance, ret, jitter)| Basis::Worley(Cellular {
                distance,
                ret,
                jitter
            })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn perlin_is_zero_on_the_lattice(x in -70_000i32..70_000, y in -70_000i32..70_000, z in -70_000i32..70_000) {
        let v = perlin3(f64::from(x), f64::from(y), f64::from(z));
        prop_assert_eq!(v, 0.0);
    }

    #[test]
    fn perlin_has_period_256(x in -100i32..100, y in -100i32..100, z in -100i32..100, fx in 0u32..64, fy in 0u32..64, fz in 0u32..64, k in -3i32..3) {
        // Coordinates on a 1/64 grid stay exact after adding multiples of 256.
        let c = |i: i32, f: u32| i as f32 + f as f32 / 64.0;
        let (x, y, z) = (c(x, fx), c(y, fy), c(z, fz));
        let s = 256.0 * k as f32;
        prop_assert_eq!(perlin3_f32(x, y, z).to_bits(), perlin3_f32(x + s, y - s, z + s).to_bits());
    }

    #[test]
    fn perlin2_equals_perlin3_at_z0(x in any::<f32>(), y in any::<f32>()) {
        let a = perlin2_f32(x, y);
        let b = perlin3_f32(x, y, 0.0);
        prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{x} {y}: {a} vs {b}");
    }

    #[test]
    fn perlin2_equals_perlin3_near_lattice(x in -300i32..300, y in -300i32..300, dx in 0u32..4, dy in 0u32..4) {
        let off = [0.0f32, 1e-30, 1e-7, 0.5];
        let (x, y) = (x as f32 + off[dx as usize], y as f32 + off[dy as usize]);
        prop_assert_eq!(perlin2_f32(x, y).to_bits(), perlin3_f32(x, y, 0.0).to_bits());
    }

    #[test]
    fn gradient_bases_stay_in_unit_range(seed in any::<u64>(), x in coord(), y in coord(), z in coord(),
                                         basis in prop_oneof![Just(Basis::Perlin), Just(Basis::Simplex), Just(Basis::OpenSimplex2)]) {
        let n = Noise::new(NoiseConfig { basis, seed, ..Default::default() }).unwrap();
        let (a, b) = (n.sample2(x, y), n.sample3(x, y, z));
        prop_assert!((-1.0..=1.0).contains(&a), "{a}");
        prop_assert!((-1.0..=1.0).contains(&b), "{b}");
    }

    #[test]
    fn fractals_stay_in_zero_one(seed in any::<u64>(), x in coord(), y in coord(), z in coord(), octaves in 1u32..9,
                                 fractal in prop_oneof![Just(Fractal::Fbm), Just(Fractal::Ridged), Just(Fractal::Billow)],
                                 basis in any_basis()) {
        let n = Noise::new(NoiseConfig { basis, seed, fractal, octaves, ..Default::default() }).unwrap();
        let (a, b) = (n.sample2(x, y), n.sample3(x, y, z));
        prop_assert!((0.0..=1.0).contains(&a), "{a}");
        prop_assert!((0.0..=1.0).contains(&b), "{b}");
    }

    #[test]
    fn worley_distances_are_ordered_and_bounded(seed in any::<u64>(), x in coord(), y in coord(), z in coord(), jitter in 0.0f32..=1.0,
                                                 manhattan in any::<bool>()) {
        let distance = if manhattan { CellDistance::Manhattan } else { CellDistance::Euclidean };
        let mk = |ret| Noise::new(NoiseConfig { basis: Basis::Worley(Cellular { distance, ret, jitter }), seed, ..Default::default() }).unwrap();
        let (f1, f2, d) = (mk(CellReturn::F1), mk(CellReturn::F2), mk(CellReturn::F2MinusF1));
        let (b2, b3) = if manhattan { (2.0, 3.0) } else { (2f32.sqrt(), 3f32.sqrt()) };
        let (a1, a2) = (f1.sample2(x, y), f2.sample2(x, y));
        prop_assert!(0.0 <= a1 && a1 < b2 && a1 <= a2, "{a1} {a2}");
        prop_assert_eq!(d.sample2(x, y), a2 - a1);
        let (c1, c2) = (f1.sample3(x, y, z), f2.sample3(x, y, z));
        prop_assert!(0.0 <= c1 && c1 < b3 && c1 <= c2, "{c1} {c2}");
        prop_assert_eq!(d.sample3(x, y, z), c2 - c1);
    }

    #[test]
    fn same_config_same_bits_and_seeds_matter(seed in any::<u64>(), x in coord(), y in coord(), basis in any_basis()) {
        let cfg = NoiseConfig { basis, seed, fractal: Fractal::Fbm, octaves: 4, ..Default::default() };
        let (a, b) = (Noise::new(cfg).unwrap(), Noise::new(cfg).unwrap());
        prop_assert_eq!(a.sample2(x, y).to_bits(), b.sample2(x, y).to_bits());
        prop_assert_eq!(a.sample3(x, y, x).to_bits(), b.sample3(x, y, x).to_bits());
    }
}

#[test]
fn different_seeds_give_different_fields() {
    for basis in [
        Basis::Perlin,
        Basis::Simplex,
        Basis::OpenSimplex2,
        Basis::Worley(Cellular::default()),
    ] {
        let a = Noise::new(NoiseConfig {
            basis,
            seed: 1,
            ..Default::default()
        })
        .unwrap();
        let b = Noise::new(NoiseConfig {
            basis,
            seed: 2,
            ..Default::default()
        })
        .unwrap();
        let differ = (0..64).any(|i| {
            let x = i as f32 * 0.37 + 0.11;
            a.sample2(x, 1.3 * x) != b.sample2(x, 1.3 * x)
        });
        assert!(differ, "{basis:?}");
    }
}

#[test]
fn perlin2_equals_perlin3_on_and_near_the_lattice_exhaustively() {
    let offsets = [0.0f32, 1e-30, 1e-7, 0.25, 0.5];
    let mut coords = vec![-0.0f32];
    for i in -64..64 {
        coords.extend(offsets.iter().map(|o| i as f32 + o));
    }
    for &x in &coords {
        for &y in &coords {
            let (a, b) = (perlin2_f32(x, y), perlin3_f32(x, y, 0.0));
            assert_eq!(a.to_bits(), b.to_bits(), "({x}, {y}): {a} vs {b}");
        }
    }
}
