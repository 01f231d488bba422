//! Directional texture of 3D simplex noise, measured objectively.
//!
//! Second-order statistics (autocorrelation, variance of directional derivatives) cannot see
//! the texture of a small gradient set: the four tetrahedral directions, the eight cube
//! corners and the twelve cube edges all have an isotropic second moment, and all give the same
//! autocorrelation along every axis and diagonal. What the eye sees in the four-gradient kernel
//! (45° lines in axis-aligned slices, streaks along (1, 1, 1)) is a fourth-order effect: the
//! *direction* of the noise's own gradient clusters. So this test takes the unit gradient `u`
//! of the noise (central differences) at many points and, for each of the 13 lattice-symmetry
//! directions `v` (3 axes, 6 face diagonals, 4 body diagonals), the mean of the Legendre
//! polynomial `P₄(u·v)`, which is 0 for an isotropic field. Its largest magnitude is the score.
//!
//! Reference kernels are computed here in f64 with the same simplex lattice: the four
//! tetrahedral gradients (a cheaper kernel that was measured and not kept for its texture)
//! and the eight cube corners (both must fail), and the standard twelve-edge kernel (Gustavson's, `(0.6 − d²)⁴`), which sets
//! the like-for-like bar the crate's kernel must meet.

use procmodel_noise::{Basis, Noise, NoiseConfig};

/// Largest `|E[P₄(u·v)]|` a kernel may have. Measured: tetrahedral 0.040, cube corners 0.045,
/// twelve edges 0.013, the crate's 32-direction kernel 0.004.
const MAX_P4: f64 = 0.02;

/// f64 simplex noise with a given gradient set and falloff `max(r2 − d², 0)^pow`.
fn ref_simplex(p: [f64; 3], grads: &[[f64; 3]], r2: f64, pow: i32) -> f64 {
    let s = (p[0] + p[1] + p[2]) / 3.0;
    let c = [(p[0] + s).floor(), (p[1] + s).floor(), (p[2] + s).floor()];
    let t = (c[0] + c[1] + c[2]) / 6.0;
    let d0 = [p[0] - (c[0] - t), p[1] - (c[1] - t), p[2] - (c[2] - t)];
    let mut ord = [0usize, 1, 2];
    ord.sort_by(|&a, &b| d0[b].total_cmp(&d0[a]));
    let mut e = [0i64; 3];
    let mut sum = 0.0;
    for corner in 0..4 {
        if corner > 0 {
            e[ord[corner - 1]] = 1;
        }
        let d: [f64; 3] = core::array::from_fn(|a| d0[a] - e[a] as f64 + corner as f64 / 6.0);
        let l: [i64; 3] = core::array::from_fn(|a| c[a] as i64 + e[a]);
        let mut h = (l[0].wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)
            ^ l[1].wrapping_mul(0xC2B2_AE3D_27D4_EB4Fu64 as i64)
            ^ l[2].wrapping_mul(0x1656_67B1_9E37_79F9u64 as i64)) as u64;
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        let g = grads[(h % grads.len() as u64) as usize];
        let w = (r2 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2])).max(0.0);
        sum += w.powi(pow) * (g[0] * d[0] + g[1] * d[1] + g[2] * d[2]);
    }
    sum
}

const DIRS: [[f64; 3]; 13] = [
    [1., 0., 0.],
    [0., 1., 0.],
    [0., 0., 1.],
    [1., 1., 0.],
    [1., -1., 0.],
    [1., 0., 1.],
    [1., 0., -1.],
    [0., 1., 1.],
    [0., 1., -1.],
    [1., 1., 1.],
    [1., 1., -1.],
    [1., -1., 1.],
    [1., -1., -1.],
];

/// `max over DIRS of |mean P₄(u·v)|`, `u` the unit gradient of `f` on a 40³ grid of step
/// 0.377 (≈ 3000 simplex cells).
fn p4_score(f: &dyn Fn([f64; 3]) -> f64) -> f64 {
    const N: usize = 40;
    const H: f64 = 1e-3;
    let mut sums = [0.0f64; 13];
    let mut count = 0.0;
    for q in 0..N * N * N {
        let (i, j, k) = (q % N, (q / N) % N, q / (N * N));
        let p = [
            -9.1 + i as f64 * 0.377,
            3.3 + j as f64 * 0.377,
            -5.7 + k as f64 * 0.377,
        ];
        let g: [f64; 3] = core::array::from_fn(|a| {
            let (mut hi, mut lo) = (p, p);
            hi[a] += H;
            lo[a] -= H;
            f(hi) - f(lo)
        });
        let gl = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        if gl < 1e-9 {
            continue;
        }
        count += 1.0;
        for (s, v) in sums.iter_mut().zip(DIRS) {
            let x2 = (g[0] * v[0] + g[1] * v[1] + g[2] * v[2]).powi(2)
                / (gl * gl * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
            *s += (35.0 * x2 * x2 - 30.0 * x2 + 3.0) / 8.0;
        }
    }
    sums.iter().map(|s| (s / count).abs()).fold(0.0, f64::max)
}

fn signs(n: usize) -> Vec<[f64; 3]> {
    (0..n)
        .map(|c| core::array::from_fn(|a| if c >> a & 1 == 0 { 1.0 } else { -1.0 }))
        .collect()
}

#[test]
fn small_gradient_sets_fail_the_isotropy_score() {
    let cube = signs(8);
    let tetra: Vec<[f64; 3]> = cube
        .iter()
        .copied()
        .filter(|g| g[0] * g[1] * g[2] > 0.0)
        .collect();
    assert_eq!(tetra.len(), 4);
    let t = p4_score(&|p| ref_simplex(p, &tetra, 0.5, 3));
    let c = p4_score(&|p| ref_simplex(p, &cube, 0.5, 3));
    eprintln!("tetrahedral {t:.4}, cube corners {c:.4}");
    assert!(t > 1.5 * MAX_P4, "tetrahedral gradients scored {t}");
    assert!(c > 1.5 * MAX_P4, "cube-corner gradients scored {c}");
}

#[test]
fn simplex3_is_at_least_as_isotropic_as_twelve_edge_simplex() {
    let mut edges = Vec::new();
    for zero in 0..3 {
        for s in signs(4) {
            let mut g = [0.0; 3];
            g[(zero + 1) % 3] = s[0];
            g[(zero + 2) % 3] = s[1];
            edges.push(g);
        }
    }
    let classic = p4_score(&|p| ref_simplex(p, &edges, 0.6, 4));
    eprintln!("twelve edges {classic:.4}");
    assert!(classic < MAX_P4, "the reference itself scored {classic}");
    for seed in [0, 3, 1_000_003] {
        let n = Noise::new(NoiseConfig {
            basis: Basis::Simplex,
            seed,
            ..NoiseConfig::default()
        })
        .unwrap();
        let ours = p4_score(&|p| f64::from(n.sample3(p[0] as f32, p[1] as f32, p[2] as f32)));
        eprintln!("simplex3 seed {seed}: {ours:.4}");
        assert!(ours < MAX_P4, "seed {seed} scored {ours}");
        assert!(
            ours <= classic,
            "seed {seed} scored {ours} > twelve edges {classic}"
        );
    }
}
