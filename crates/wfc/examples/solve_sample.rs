//! Profiling driver: solves one fixture sample at one size over a range of seeds and prints
//! attempts, backtracks, time and an output hash per seed. For `valgrind --tool=callgrind`
//! and quick comparisons of solver variants:
//! `cargo run --release -p procmodel-wfc --example solve_sample -- Cat 256 1 3`
//! (sample, size, first seed, seed count). A fifth argument `peer` runs the `wfc` crate's
//! single attempts on the same seeds instead (for `perf stat` CPU-time comparisons that the
//! shared machine's load disturbs less than wall-clock criterion runs); `nocheck` skips the
//! overlap check of each output (it costs ~20 % of a Chess run).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use procmodel_wfc::{OverlappingModel, Sample, SolverConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("Cat", String::as_str);
    let size: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(48);
    let first: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let cfg = common::SAMPLES
        .iter()
        .find(|s| s.0 == name)
        .unwrap_or_else(|| panic!("unknown sample {name}"))
        .1;
    let img = common::load_png(&format!("{name}.png"));
    let sample = Sample {
        pixels: &img.pixels,
        width: img.width,
        height: img.height,
    };
    if args.get(5).is_some_and(|a| a == "peer") {
        let peer = common::Peer::new(&img, &cfg);
        for seed in first..first + count {
            let start = Instant::now();
            let ok = peer.run_once(size as u32, seed);
            let t = start.elapsed().as_secs_f64() * 1e3;
            println!("peer seed {seed}: success {ok}, {t:.2} ms");
        }
        return;
    }
    let start = Instant::now();
    let model = OverlappingModel::new(sample, cfg).expect("model");
    let setup = start.elapsed();
    println!(
        "{name}: {} patterns, model built in {:.3} ms",
        model.pattern_count(),
        setup.as_secs_f64() * 1e3
    );
    let rules = model.rules();
    let t = rules.len();
    let total: usize = (0..4)
        .map(|d| {
            let d = procmodel_wfc::Direction::from_index(d).expect("direction");
            (0..t).map(|p| rules.allowed(d, p).len()).sum::<usize>()
        })
        .sum();
    println!(
        "mean allowed list length per direction: {:.2}",
        total as f64 / (4 * t) as f64
    );
    for seed in first..first + count {
        let start = Instant::now();
        let s = model
            .run(size, size, SolverConfig::with_seed(seed))
            .expect("solve");
        let t = start.elapsed().as_secs_f64() * 1e3;
        if args.get(5).is_none_or(|a| a != "nocheck") {
            assert_eq!(model.check(&s), None);
        }
        println!(
            "seed {seed}: {} attempts, {} backtracks, {t:.2} ms, hash {:016x}",
            s.attempts,
            s.backtracks,
            common::hash_patterns(&s.patterns)
        );
    }
}
