//! Issue #3's parallel benchmark outside criterion: a scene of 200 spiral staircases (20
//! steps each), all regenerated, with `jobs` worker VMs. Prints the median step time.
//!
//! `cargo run --release -p procmodel-engine --example scene_jobs -- 2 [iterations]`

use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Variant, Vector3};

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let mut e = Engine::new(EngineConfig {
        jobs,
        ..EngineConfig::default()
    })
    .expect("engine");
    let root = e.with_dom(|d| d.root_ref());
    let g = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("SpiralStaircase")
            .with_property(
                "Source",
                Variant::String(include_str!("../../../examples/SpiralStaircase.luau").into()),
            ),
    );
    let ws = e.workspace();
    let models: Vec<_> = (0..200)
        .map(|i| {
            e.insert(
                ws,
                InstanceBuilder::new("ProceduralModel")
                    .with_name(format!("Stairs{i}"))
                    .with_property("Generator", Variant::Ref(g))
                    .with_property("Size", Vector3::new(12.0, 20.0, 12.0)),
            )
        })
        .collect();
    assert_eq!(e.step().len(), 200);
    let mut times = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        for &m in &models {
            e.force_generation(m);
        }
        let started = std::time::Instant::now();
        let reports = e.step();
        times.push(started.elapsed());
        assert!(reports.len() == 200 && reports.iter().all(|r| r.ok));
    }
    times.sort();
    println!(
        "jobs {jobs}: median {:?} per step of 200 models",
        times[times.len() / 2]
    );
}
