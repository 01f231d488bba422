//! Issue #3's latency benchmark: an attribute change on the spiral staircase (100 steps) until
//! the new results are applied (`set_attribute` + `step`).
//!
//! Run: `cargo bench -p procmodel-engine --bench regen`

use criterion::{Criterion, criterion_group, criterion_main};
use procmodel_engine::{Engine, EngineConfig};
use rbx_types::Variant;

#[path = "common/scenes.rs"]
mod scenes;

fn staircase(c: &mut Criterion) {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let g = scenes::staircase_module(&mut e);
    let m = scenes::staircase(&mut e, g, "Stairs", 100.0);
    let first = e.step();
    assert!(first[0].is_ok(), "{:?}", first[0].error());
    let mut angle = 20.0;
    let mut group = c.benchmark_group("engine");
    group.sample_size(50);
    group.bench_function("staircase_100_steps_attribute_change_to_applied", |b| {
        b.iter(|| {
            angle = if angle == 20.0 { 21.0 } else { 20.0 };
            e.set_attribute(m, "DegreesPerStep", Some(Variant::Float64(angle)))
                .unwrap();
            let r = e.step();
            assert_eq!(r.len(), 1);
        })
    });
    group.finish();
}

/// Issue #3: a scene of 200 models regenerated with 1 and 2 worker VMs.
fn scene_200(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine_scene_200_models");
    group.sample_size(10);
    for jobs in [1usize, 2] {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let g = scenes::staircase_module(&mut e);
        let models: Vec<_> = (0..200)
            .map(|i| scenes::staircase(&mut e, g, &format!("Stairs{i}"), 20.0))
            .collect();
        assert_eq!(e.step().len(), 200);
        group.bench_function(format!("jobs_{jobs}"), |b| {
            b.iter(|| {
                for &m in &models {
                    e.force_generation(m);
                }
                assert_eq!(e.step().len(), 200);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, staircase, scene_200);
criterion_main!(benches);
