//! Criterion benchmark: the overlapping model on the 14 standard samples at 48×48 and 256×256,
//! against the `wfc` crate (the in-process peer) in the same run.
//!
//! At 48×48 each iteration solves one seed to success: ours with its backtracking/restarts,
//! the peer retrying with fresh seeds (up to 100 attempts). At 256×256 the peer fails most
//! single attempts on several samples, so retrying to success would take minutes per
//! sample: there it is timed per single attempt (`wfc_crate_attempt`), and a survey over
//! seeds 1..=10 printed first gives both solvers' success rates and the peer's measured time
//! per successful output (all its attempts' time over its successes).
//! `WFC_BENCH_SIZES=48` (or `256`) selects one size.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use procmodel_wfc::{OverlappingModel, Sample, SolverConfig};

fn sizes() -> Vec<usize> {
    match std::env::var("WFC_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|v| v.trim().parse().ok()).collect(),
        Err(_) => vec![48, 256],
    }
}

fn bench(c: &mut Criterion) {
    for size in sizes() {
        let mut group = c.benchmark_group(format!("overlapping_{size}"));
        group.throughput(Throughput::Elements((size * size) as u64));
        group.sample_size(10);
        if size > 64 {
            group.warm_up_time(Duration::from_millis(100));
            group.measurement_time(Duration::from_secs(2));
        } else {
            group.warm_up_time(Duration::from_millis(200));
            group.measurement_time(Duration::from_secs(1));
        }
        for (name, cfg) in common::SAMPLES {
            let img = common::load_png(&format!("{name}.png"));
            let sample = Sample {
                pixels: &img.pixels,
                width: img.width,
                height: img.height,
            };
            let model = OverlappingModel::new(sample, cfg).expect("model");
            let peer = common::Peer::new(&img, &cfg);
            let mut seed = 0u64;
            group.bench_function(BenchmarkId::new("procmodel", name), |b| {
                b.iter(|| {
                    seed += 1;
                    let s = model
                        .run(size, size, SolverConfig::with_seed(seed))
                        .expect("procmodel-wfc failed");
                    black_box(s.patterns.len())
                })
            });
            if size > 64 {
                success_rates(name, size, &model, &peer);
                let mut seed = 0u64;
                group.bench_function(BenchmarkId::new("wfc_crate_attempt", name), |b| {
                    b.iter(|| {
                        seed += 1;
                        peer.run_once(size as u32, seed)
                    })
                });
                continue;
            }
            let mut seed = 0u64;
            group.bench_function(BenchmarkId::new("wfc_crate", name), |b| {
                b.iter(|| {
                    for _ in 0..100 {
                        seed += 1;
                        if peer.run_once(size as u32, seed) {
                            return true;
                        }
                    }
                    false
                })
            });
        }
        group.finish();
    }
}

/// Seeds of the 256×256 survey.
const SURVEY_SEEDS: u64 = 10;

/// Prints, over seeds 1..=10, how many succeed — ours (which must) and the peer's single
/// attempts — with the mean time per output (ours) and the peer's mean time per attempt, per
/// success (the time of all its attempts over its successes) and per successful attempt (a
/// failed attempt stops early, so this is its cost of one complete output).
fn success_rates(name: &str, size: usize, model: &OverlappingModel, peer: &common::Peer) {
    let (mut attempts, mut backtracks) = (0, 0);
    let start = Instant::now();
    for seed in 1..=SURVEY_SEEDS {
        let s = model
            .run(size, size, SolverConfig::with_seed(seed))
            .expect("procmodel-wfc failed");
        attempts += s.attempts;
        backtracks += s.backtracks;
    }
    let ours = start.elapsed().as_secs_f64() * 1e3 / SURVEY_SEEDS as f64;
    let (mut total, mut peer_ok, mut ok_time) = (0.0, 0, 0.0);
    for seed in 1..=SURVEY_SEEDS {
        let start = Instant::now();
        let ok = peer.run_once(size as u32, seed);
        let t = start.elapsed().as_secs_f64() * 1e3;
        total += t;
        if ok {
            peer_ok += 1;
            ok_time += t;
        }
    }
    let per_success = if peer_ok == 0 {
        format!("none succeeded (> {total:.0} ms)")
    } else {
        format!(
            "{:.1} ms per success, {:.1} ms per successful attempt",
            total / peer_ok as f64,
            ok_time / peer_ok as f64
        )
    };
    eprintln!(
        "survey {name} {size}: procmodel {SURVEY_SEEDS}/{SURVEY_SEEDS} ({attempts} attempts, \
         {backtracks} backtracks, {ours:.1} ms per output); wfc crate single attempt \
         {peer_ok}/{SURVEY_SEEDS} ({:.1} ms per attempt, {per_success})",
        total / SURVEY_SEEDS as f64
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
