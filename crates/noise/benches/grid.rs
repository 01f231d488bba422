//! Grid throughput, 1 thread, f32 output: procmodel-noise against noise-functions,
//! simdnoise, noise (noise-rs) and fastnoise-lite in one run, every SIMD level this CPU has.
//! `NOISE_BENCH_ONLY_OURS=1` skips the peers; results are kept in BENCHMARKS.md.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use noise::{MultiFractal, NoiseFn};
use noise_functions::Noise as _;
use procmodel_noise::{Basis, Exec, Fractal, Grid2, Grid3, Noise, NoiseConfig, SimdLevel};
use std::hint::black_box;
use std::time::Duration;

const N2: usize = 1024;
const N3: usize = 128;
const STEP: f32 = 0.031;

fn g2() -> Grid2 {
    Grid2 {
        origin: [0.5, 0.25],
        step: [STEP; 2],
        size: [N2, N2],
    }
}
fn g3() -> Grid3 {
    Grid3 {
        origin: [0.5, 0.25, 0.125],
        step: [STEP; 3],
        size: [N3, N3, N3],
    }
}

fn ours2(c: &mut Criterion, group: &str, cfg: NoiseConfig) {
    let n = Noise::new(cfg).unwrap();
    let mut out = vec![0.0; N2 * N2];
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements((N2 * N2) as u64));
    for level in levels() {
        let exec = Exec {
            simd: Some(level),
            parallel: false,
        };
        g.bench_function(
            BenchmarkId::new("procmodel-noise", format!("{level:?}")),
            |b| b.iter(|| n.fill2(&g2(), black_box(&mut out), exec).unwrap()),
        );
    }
    g.finish();
}

/// Every level this CPU has, fastest first (AVX2 and the portable path are measured even
/// where AVX-512 exists), or only the one `PROCMODEL_SIMD` names if it is set.
fn levels() -> Vec<SimdLevel> {
    if let Ok(v) = std::env::var(procmodel_noise::SIMD_ENV)
        && let Some(l) = SimdLevel::parse(&v).unwrap()
    {
        return vec![l];
    }
    SimdLevel::ALL
        .into_iter()
        .rev()
        .filter(|l| l.is_available())
        .collect()
}

fn ours3(c: &mut Criterion, group: &str, cfg: NoiseConfig) {
    let n = Noise::new(cfg).unwrap();
    let mut out = vec![0.0; N3 * N3 * N3];
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements((N3 * N3 * N3) as u64));
    for level in levels() {
        let exec = Exec {
            simd: Some(level),
            parallel: false,
        };
        g.bench_function(
            BenchmarkId::new("procmodel-noise", format!("{level:?}")),
            |b| b.iter(|| n.fill3(&g3(), black_box(&mut out), exec).unwrap()),
        );
    }
    g.finish();
}

/// Scalar peers over the same 2D grid, writing into a reused buffer.
fn loop2(out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    for j in 0..N2 {
        let y = 0.25 + j as f32 * STEP;
        for i in 0..N2 {
            out[j * N2 + i] = f(0.5 + i as f32 * STEP, y);
        }
    }
}

fn loop3(out: &mut [f32], f: impl Fn(f32, f32, f32) -> f32) {
    for k in 0..N3 {
        let z = 0.125 + k as f32 * STEP;
        for j in 0..N3 {
            let y = 0.25 + j as f32 * STEP;
            for i in 0..N3 {
                out[(k * N3 + j) * N3 + i] = f(0.5 + i as f32 * STEP, y, z);
            }
        }
    }
}

fn peer2(c: &mut Criterion, group: &str, name: &str, f: impl Fn(f32, f32) -> f32) {
    let mut out = vec![0.0; N2 * N2];
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements((N2 * N2) as u64));
    g.bench_function(name, |b| b.iter(|| loop2(black_box(&mut out), &f)));
    g.finish();
}

fn peer3(c: &mut Criterion, group: &str, name: &str, f: impl Fn(f32, f32, f32) -> f32) {
    let mut out = vec![0.0; N3 * N3 * N3];
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements((N3 * N3 * N3) as u64));
    g.bench_function(name, |b| b.iter(|| loop3(black_box(&mut out), &f)));
    g.finish();
}

fn block(c: &mut Criterion, group: &str, name: &str, elems: usize, f: impl Fn() -> Vec<f32>) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(elems as u64));
    g.bench_function(name, |b| b.iter(|| black_box(f())));
    g.finish();
}

fn fnl(t: fastnoise_lite::NoiseType, fbm: bool) -> fastnoise_lite::FastNoiseLite {
    let mut n = fastnoise_lite::FastNoiseLite::new();
    n.set_noise_type(Some(t));
    n.set_frequency(Some(1.0));
    if fbm {
        n.set_fractal_type(Some(fastnoise_lite::FractalType::FBm));
        n.set_fractal_octaves(Some(6));
    }
    n
}

fn benches(c: &mut Criterion) {
    use fastnoise_lite::NoiseType as T;
    let only = std::env::var("NOISE_BENCH_ONLY_OURS").is_ok();
    let base = NoiseConfig::default();
    let simplex = NoiseConfig {
        basis: Basis::Simplex,
        ..base
    };
    let fbm = NoiseConfig {
        basis: Basis::Simplex,
        fractal: Fractal::Fbm,
        octaves: 6,
        ..base
    };

    // Perlin 2D
    ours2(c, "perlin2d_1024x1024", base);
    if !only {
        peer2(c, "perlin2d_1024x1024", "noise-functions", |x, y| {
            noise_functions::Perlin.sample2([x, y])
        });
        let p = noise::Perlin::new(0);
        peer2(c, "perlin2d_1024x1024", "noise-rs", |x, y| {
            p.get([x as f64, y as f64]) as f32
        });
        let f = fnl(T::Perlin, false);
        peer2(c, "perlin2d_1024x1024", "fastnoise-lite", |x, y| {
            f.get_noise_2d(x, y)
        });
    }
    // Simplex 2D
    ours2(c, "simplex2d_1024x1024", simplex);
    if !only {
        peer2(c, "simplex2d_1024x1024", "noise-functions", |x, y| {
            noise_functions::Simplex.sample2([x, y])
        });
        block(c, "simplex2d_1024x1024", "simdnoise", N2 * N2, || {
            simdnoise::NoiseBuilder::gradient_2d_offset(0.5, N2, 0.25, N2)
                .with_freq(STEP)
                .generate()
                .0
        });
        let p = noise::Simplex::new(0);
        peer2(c, "simplex2d_1024x1024", "noise-rs", |x, y| {
            p.get([x as f64, y as f64]) as f32
        });
        let f = fnl(T::OpenSimplex2, false);
        peer2(
            c,
            "simplex2d_1024x1024",
            "fastnoise-lite(OpenSimplex2)",
            |x, y| f.get_noise_2d(x, y),
        );
    }
    // Perlin 3D
    ours3(c, "perlin3d_128^3", base);
    if !only {
        peer3(c, "perlin3d_128^3", "noise-functions", |x, y, z| {
            noise_functions::Perlin.sample3([x, y, z])
        });
        let p = noise::Perlin::new(0);
        peer3(c, "perlin3d_128^3", "noise-rs", |x, y, z| {
            p.get([x as f64, y as f64, z as f64]) as f32
        });
        let f = fnl(T::Perlin, false);
        peer3(c, "perlin3d_128^3", "fastnoise-lite", |x, y, z| {
            f.get_noise_3d(x, y, z)
        });
    }
    // Simplex 3D
    ours3(c, "simplex3d_128^3", simplex);
    if !only {
        peer3(c, "simplex3d_128^3", "noise-functions", |x, y, z| {
            noise_functions::Simplex.sample3([x, y, z])
        });
        block(c, "simplex3d_128^3", "simdnoise", N3 * N3 * N3, || {
            simdnoise::NoiseBuilder::gradient_3d_offset(0.5, N3, 0.25, N3, 0.125, N3)
                .with_freq(STEP)
                .generate()
                .0
        });
        let p = noise::Simplex::new(0);
        peer3(c, "simplex3d_128^3", "noise-rs", |x, y, z| {
            p.get([x as f64, y as f64, z as f64]) as f32
        });
        let f = fnl(T::OpenSimplex2, false);
        peer3(
            c,
            "simplex3d_128^3",
            "fastnoise-lite(OpenSimplex2)",
            |x, y, z| f.get_noise_3d(x, y, z),
        );
    }
    // fBm 6 octaves 2D (simplex basis)
    ours2(c, "fbm6_simplex2d_1024x1024", fbm);
    if !only {
        let nf = noise_functions::Simplex.fbm(6, 0.5, 2.0);
        peer2(c, "fbm6_simplex2d_1024x1024", "noise-functions", |x, y| {
            nf.sample2([x, y])
        });
        block(c, "fbm6_simplex2d_1024x1024", "simdnoise", N2 * N2, || {
            simdnoise::NoiseBuilder::fbm_2d_offset(0.5, N2, 0.25, N2)
                .with_freq(STEP)
                .with_octaves(6)
                .with_gain(0.5)
                .with_lacunarity(2.0)
                .generate()
                .0
        });
        let p = noise::Fbm::<noise::Simplex>::new(0).set_octaves(6);
        peer2(c, "fbm6_simplex2d_1024x1024", "noise-rs", |x, y| {
            p.get([x as f64, y as f64]) as f32
        });
        let f = fnl(T::OpenSimplex2, true);
        peer2(
            c,
            "fbm6_simplex2d_1024x1024",
            "fastnoise-lite(OpenSimplex2)",
            |x, y| f.get_noise_2d(x, y),
        );
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! { name = grid; config = config(); targets = benches }
criterion_main!(grid);
