//! Success rates over fixed seeds: ours must solve every one of the 14 samples at 48×48 on
//! every seed (within its backtracking/restart budget); the peer's single-attempt rate is
//! printed for the benchmark notes (`cargo test --release --test success_rates -- --nocapture`).

mod common;

use procmodel_wfc::{OverlappingModel, Sample, SolverConfig};

#[test]
fn ours_always_succeeds_at_48_and_peer_rate_is_reported() {
    let seeds = 0..10u64;
    for (name, cfg) in common::SAMPLES {
        let img = common::load_png(&format!("{name}.png"));
        let sample = Sample {
            pixels: &img.pixels,
            width: img.width,
            height: img.height,
        };
        let model = OverlappingModel::new(sample, cfg).expect("model");
        let peer = common::Peer::new(&img, &cfg);
        let mut first_attempt = 0;
        let mut backtracks = 0;
        for seed in seeds.clone() {
            let s = model
                .run(48, 48, SolverConfig::with_seed(seed))
                .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            assert_eq!(model.check(&s), None);
            first_attempt += u32::from(s.attempts == 1);
            backtracks += s.backtracks;
        }
        let peer_ok = seeds.clone().filter(|&s| peer.run_once(48, s)).count();
        eprintln!(
            "{name:12} patterns {:4}  ours 10/10 (first attempt {first_attempt}/10, {backtracks} backtracks)  wfc crate single attempt {peer_ok}/10",
            model.pattern_count()
        );
    }
}
