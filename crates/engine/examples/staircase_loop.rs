//! Stable instruction counts for issue #3's latency benchmark (the 100-step staircase,
//! attribute change → results applied), for `valgrind --tool=callgrind`:
//!
//! `cargo build --release -p procmodel-engine --example staircase_loop`
//! `valgrind --tool=callgrind target/release/examples/staircase_loop 20`
//!
//! Prints the wall time per iteration (noisy on shared machines; the criterion benchmark in
//! `benches/regen.rs` is the reference figure).

use procmodel_engine::{Engine, EngineConfig};
use rbx_types::Variant;

#[path = "../benches/common/scenes.rs"]
mod scenes;

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).expect("engine");
    let g = scenes::staircase_module(&mut e);
    let m = scenes::staircase(&mut e, g, "Stairs", 100.0);
    assert!(e.step()[0].is_ok());
    let started = std::time::Instant::now();
    for i in 0..iterations {
        let angle = if i % 2 == 0 { 21.0 } else { 20.0 };
        e.set_attribute(m, "DegreesPerStep", Some(Variant::Float64(angle)))
            .expect("set attribute");
        let r = e.step();
        assert!(
            r.len() == 1 && r[0].is_ok(),
            "{:?}",
            r.first().and_then(|r| r.error())
        );
    }
    let per = started.elapsed() / iterations.max(1);
    println!("{iterations} iterations, {per:?} per attribute change → applied");
}
