//! Throughput by on-CPU time of this thread (`CLOCK_THREAD_CPUTIME_ID`), which a
//! busy shared machine disturbs far less than wall-clock time: `cargo run --release -p
//! procmodel-noise --example cputime [filter] [reps]`. Prints the median and the best of
//! `reps` fills per row (M samples per CPU-second), ours and the best Rust peer of each
//! column. Same grids and calls as `benches/grid.rs`.

use procmodel_noise::{Basis, Exec, Fractal, Grid2, Grid3, Noise, NoiseConfig, SimdLevel};
use std::hint::black_box;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// This thread's CPU time in ns (Linux x86-64 `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
fn cpu_ns() -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable `struct timespec` (two i64 on x86-64 Linux).
    let rc = unsafe { clock_gettime(3, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

fn measure(reps: usize, elems: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = cpu_ns();
            f();
            elems as f64 / ((cpu_ns() - t) as f64 / 1e9) / 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let filter = args.get(1).cloned().unwrap_or_default();
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(31);
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
    let g2 = Grid2 {
        origin: [0.5, 0.25],
        step: [0.031; 2],
        size: [1024, 1024],
    };
    let g3 = Grid3 {
        origin: [0.5, 0.25, 0.125],
        step: [0.031; 3],
        size: [128, 128, 128],
    };
    let cases: [(&str, NoiseConfig, bool); 5] = [
        ("perlin2d", base, false),
        ("simplex2d", simplex, false),
        ("perlin3d", base, true),
        ("simplex3d", simplex, true),
        ("fbm6", fbm, false),
    ];
    let mut out = vec![0.0f32; 1 << 21];
    for (name, cfg, three) in cases {
        for level in [SimdLevel::best(), SimdLevel::Avx2] {
            let label = format!("{name}/{level:?}");
            if !label.contains(&filter) || !level.is_available() {
                continue;
            }
            let n = Noise::new(cfg).unwrap();
            let exec = Exec {
                simd: Some(level),
                parallel: false,
            };
            let (med, best) = if three {
                let o = &mut out[..128 * 128 * 128];
                measure(reps, o.len(), || {
                    n.fill3(&g3, black_box(&mut *o), exec).unwrap()
                })
            } else {
                let o = &mut out[..1024 * 1024];
                measure(reps, o.len(), || {
                    n.fill2(&g2, black_box(&mut *o), exec).unwrap()
                })
            };
            println!("{label:<30} median {med:7.1}  best {best:7.1} M/s (cpu time)");
            if level == SimdLevel::Avx2 {
                break;
            }
        }
        peers(name, &filter, reps, &mut out);
    }
}

/// The best Rust peer of each column in `benches/grid.rs`, called the same way as there.
fn peers(name: &str, filter: &str, reps: usize, out: &mut [f32]) {
    use noise_functions::Noise as _;
    const STEP: f32 = 0.031;
    let (label, elems): (&str, usize) = match name {
        "perlin2d" => ("perlin2d/noise-functions", 1 << 20),
        "perlin3d" => ("perlin3d/noise-functions", 1 << 21),
        "simplex2d" => ("simplex2d/simdnoise", 1 << 20),
        "simplex3d" => ("simplex3d/simdnoise", 1 << 21),
        _ => ("fbm6/simdnoise", 1 << 20),
    };
    if !label.contains(filter) {
        return;
    }
    let o = &mut out[..elems];
    let (med, best) = measure(reps, elems, || match name {
        "perlin2d" => {
            for j in 0..1024 {
                let y = 0.25 + j as f32 * STEP;
                for i in 0..1024 {
                    o[j * 1024 + i] = noise_functions::Perlin.sample2([0.5 + i as f32 * STEP, y]);
                }
            }
            black_box(&mut *o);
        }
        "perlin3d" => {
            for k in 0..128 {
                let z = 0.125 + k as f32 * STEP;
                for j in 0..128 {
                    let y = 0.25 + j as f32 * STEP;
                    for i in 0..128 {
                        o[(k * 128 + j) * 128 + i] =
                            noise_functions::Perlin.sample3([0.5 + i as f32 * STEP, y, z]);
                    }
                }
            }
            black_box(&mut *o);
        }
        "simplex2d" => {
            black_box(
                simdnoise::NoiseBuilder::gradient_2d_offset(0.5, 1024, 0.25, 1024)
                    .with_freq(STEP)
                    .generate(),
            );
        }
        "simplex3d" => {
            black_box(
                simdnoise::NoiseBuilder::gradient_3d_offset(0.5, 128, 0.25, 128, 0.125, 128)
                    .with_freq(STEP)
                    .generate(),
            );
        }
        _ => {
            black_box(
                simdnoise::NoiseBuilder::fbm_2d_offset(0.5, 1024, 0.25, 1024)
                    .with_freq(STEP)
                    .with_octaves(6)
                    .with_gain(0.5)
                    .with_lacunarity(2.0)
                    .generate(),
            );
        }
    });
    println!("{label:<30} median {med:7.1}  best {best:7.1} M/s (cpu time)");
    if name == "perlin3d" {
        // noise-rs (f64) beats noise-functions on Perlin 3D in the criterion runs.
        use noise::NoiseFn;
        let p = noise::Perlin::new(0);
        let (med, best) = measure(reps, elems, || {
            for k in 0..128 {
                let z = 0.125 + k as f32 * STEP;
                for j in 0..128 {
                    let y = 0.25 + j as f32 * STEP;
                    for i in 0..128 {
                        let x = 0.5 + i as f32 * STEP;
                        o[(k * 128 + j) * 128 + i] =
                            p.get([f64::from(x), f64::from(y), f64::from(z)]) as f32;
                    }
                }
            }
            black_box(&mut *o);
        });
        let label = "perlin3d/noise-rs";
        println!("{label:<30} median {med:7.1}  best {best:7.1} M/s (cpu time)");
    }
}
