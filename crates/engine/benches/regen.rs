//! Issue #3's latency benchmark: an attribute change on the spiral staircase (100 steps) until
//! the new results are applied (`set_attribute` + `step`).
//!
//! Also a generator that places 3,000 rocks by raycasting down onto a floor of 3,600 parts in
//! the scene (the spatial queries' index at work).
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

/// A generator that raycasts 3,000 times down onto a scene of 3,600 floor parts.
fn scatter(c: &mut Criterion) {
    const ROCKS: &str = r#"
return { OnGenerate = function(params, target)
    local rng = Random.new(4)
    local rp = RaycastParams.new()
    rp.FilterType = Enum.RaycastFilterType.Include
    rp.FilterDescendantsInstances = { workspace.Floor }
    for i = 1, 3000 do
        local x, z = rng:NextNumber(2, 242), rng:NextNumber(2, 242)
        local hit = workspace:Raycast(Vector3.new(x, 50, z), Vector3.new(0, -100, 0), rp)
        if hit then
            local r = Instance.new("Part")
            r.Shape = Enum.PartType.Ball
            r.Size = Vector3.one
            r.Position = hit.Position + Vector3.new(0, 0.5, 0)
            r.Parent = target
        end
    end
end }
"#;
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let ws = e.workspace();
    let floor = e.insert(
        ws,
        rbx_dom_weak::InstanceBuilder::new("Folder").with_name("Floor"),
    );
    for x in 1..=60 {
        for z in 1..=60 {
            let h = 1.0 + ((x * 7 + z * 13) % 10) as f32 * 0.2;
            e.insert(
                floor,
                rbx_dom_weak::InstanceBuilder::new("Part")
                    .with_property("Anchored", true)
                    .with_property("Size", rbx_types::Vector3::new(4.0, h, 4.0))
                    .with_property(
                        "CFrame",
                        rbx_types::CFrame::new(
                            rbx_types::Vector3::new(x as f32 * 4.0, h / 2.0, z as f32 * 4.0),
                            rbx_types::Matrix3::identity(),
                        ),
                    ),
            );
        }
    }
    let ss = e.server_storage();
    let g = e.insert(
        ss,
        rbx_dom_weak::InstanceBuilder::new("ModuleScript")
            .with_name("Rocks")
            .with_property("Source", Variant::String(ROCKS.to_owned())),
    );
    let m = e.add_procedural_model("Rocks", g);
    let first = e.step();
    assert!(first[0].is_ok(), "{:?}", first[0].error());
    let mut group = c.benchmark_group("engine");
    group.sample_size(20);
    group.bench_function("scatter_3000_raycasts_on_3600_parts", |b| {
        b.iter(|| {
            e.force_generation(m);
            let r = e.step();
            assert!(r[0].is_ok());
        })
    });
    group.finish();
}

criterion_group!(benches, staircase, scene_200, scatter);
criterion_main!(benches);
