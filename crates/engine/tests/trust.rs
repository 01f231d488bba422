//! Issue #10 at the engine level: ScaleTo never regenerates, Pause works on every path,
//! nothing waits forever in a scene.

use procmodel_engine::{Engine, EngineConfig};
use std::path::PathBuf;
use std::time::Duration;

fn script(name: &str, source: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("procmodel-engine-trust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.luau"));
    std::fs::write(&path, source).unwrap();
    path
}

const COUNTING: &str = r#"
Runs = 0
return {
    Attributes = { Width = 2 },
    OnGenerate = function(params, target)
        Runs += 1
        local p = Instance.new("Part")
        p.Name = "run" .. Runs
        p.Size = Vector3.new(params.Attributes.Width, 1, 1)
        p.Parent = target
    end,
}
"#;

#[test]
fn r10_4_scale_to_from_luau_scales_and_never_regenerates() {
    let src = format!(
        r#"
local gen = Instance.new("ModuleScript")
gen.Source = [==[{COUNTING}]==]
gen.Parent = game:GetService("ServerStorage")
local m = Instance.new("ProceduralModel")
m.Generator = gen
m.Size = Vector3.new(7, 3, 1.7)
m.Parent = workspace
m:WaitForGenerationAsync()
local part = m:FindFirstChildOfClass("GeneratedFolder"):FindFirstChild("run1")
assert(part, "first run")
for _, s in {{ 1.1, 3, 0.37, 2 }} do
    m:ScaleTo(s)
    task.wait()
    task.wait()
    m:WaitForGenerationAsync()
    local folder = m:FindFirstChildOfClass("GeneratedFolder")
    assert(folder:FindFirstChild("run1") == part, "no second run after ScaleTo(" .. s .. ")")
    assert(math.abs(part.Size.X - 2 * s) < 1e-4, "the part is scaled: " .. tostring(part.Size))
    assert(math.abs(m:GetScale() - s) < 1e-6)
end
assert(math.abs(m.Size.X - 14) < 1e-3, "Size scales with the model: " .. tostring(m.Size))
m:SetAttribute("Width", 3)
task.wait()
m:WaitForGenerationAsync()
assert(m:FindFirstChildOfClass("GeneratedFolder"):FindFirstChild("run2"), "an input change still regenerates")
"#
    );
    let path = script("scale_to", &src);
    let mut engine = Engine::new(EngineConfig::default()).unwrap();
    engine.run_script(&path).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn r10_2_pause_keeps_a_long_generation_alive_on_the_engine_and_its_workers() {
    const LONG: &str = r#"
return { OnGenerate = function(params, target)
    local x = 0
    for i = 1, 40_000_000 do
        x += i % 3
        if i % 5_000 == 0 then params:Pause() end
    end
    local p = Instance.new("Part"); p.Name = tostring(x); p.Parent = target
end }"#;
    for jobs in [1, 2] {
        let mut config = EngineConfig {
            jobs,
            ..EngineConfig::default()
        };
        config.host.timeout = Duration::from_millis(100);
        let mut engine = Engine::new(config).unwrap();
        let root = engine.with_dom(|d| d.root_ref());
        let module = engine.insert(
            root,
            rbx_dom_weak::InstanceBuilder::new("ModuleScript")
                .with_property("Source", rbx_types::Variant::String(LONG.into())),
        );
        let ws = engine.workspace();
        for _ in 0..jobs {
            engine.insert(
                ws,
                rbx_dom_weak::InstanceBuilder::new("ProceduralModel")
                    .with_property("Generator", rbx_types::Variant::Ref(module))
                    .with_property("Size", rbx_types::Vector3::new(4.0, 4.0, 4.0)),
            );
        }
        let start = std::time::Instant::now();
        let reports = engine.settle(64);
        assert!(
            reports.iter().all(|r| r.ok),
            "--jobs {jobs}: {reports:?} after {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn r10_3_a_generator_waiting_forever_fails_in_a_scene_and_the_engine_goes_on() {
    const FOREVER: &str = "return { OnGenerate = function() while true do task.wait(1) end end }";
    for jobs in [1, 2] {
        let mut engine = Engine::new(EngineConfig {
            jobs,
            ..EngineConfig::default()
        })
        .unwrap();
        let root = engine.with_dom(|d| d.root_ref());
        let module = engine.insert(
            root,
            rbx_dom_weak::InstanceBuilder::new("ModuleScript")
                .with_property("Source", rbx_types::Variant::String(FOREVER.into())),
        );
        let ws = engine.workspace();
        for _ in 0..2 {
            engine.insert(
                ws,
                rbx_dom_weak::InstanceBuilder::new("ProceduralModel")
                    .with_property("Generator", rbx_types::Variant::Ref(module))
                    .with_property("Size", rbx_types::Vector3::new(4.0, 4.0, 4.0)),
            );
        }
        let reports = engine.settle(1_000_000);
        assert_eq!(reports.len(), 2, "--jobs {jobs}: {reports:?}");
        for r in &reports {
            assert!(!r.ok);
            let e = r.error.as_deref().unwrap_or_default();
            assert!(e.contains("Wait limit"), "--jobs {jobs}: {e}");
        }
    }
}

#[test]
fn r10_5_references_into_replaced_results_stay_readable() {
    let src = format!(
        r#"
local gen = Instance.new("ModuleScript")
gen.Source = [==[{COUNTING}]==]
gen.Parent = game:GetService("ServerStorage")
local m = Instance.new("ProceduralModel")
m.Generator = gen
m.Size = Vector3.new(4, 4, 4)
m.Parent = workspace
m:WaitForGenerationAsync()
local old = m:FindFirstChildOfClass("GeneratedFolder"):FindFirstChild("run1")
local oldFolder = old.Parent
assert(old.Size.X == 2)
m:SetAttribute("Width", 5)
task.wait()
m:WaitForGenerationAsync()
local new = m:FindFirstChildOfClass("GeneratedFolder"):FindFirstChild("run2")
assert(new and new.Size.X == 5, "regenerated")
-- The replaced part answers reads with its last values, as a destroyed Roblox instance does.
assert(old.Name == "run1", "Name keeps its last value")
assert(old.Size.X == 2, "properties keep their last values")
assert(old.Parent == oldFolder, "it stays in its (destroyed) folder")
assert(oldFolder.Parent == nil, "the replaced folder has no parent")
local ok, err = pcall(function() old.Parent = workspace end)
assert(not ok and err:find("locked"), "Parent of a destroyed instance is locked: " .. tostring(err))
local ok2, err2 = pcall(function() oldFolder.Parent = workspace end)
assert(not ok2 and err2:find("locked"), tostring(err2))
-- Two regenerations later the reference still answers (the engine keeps the last replaced
-- results of each model; older ones are freed, and reading them is an error, not a crash).
m:SetAttribute("Width", 6)
task.wait()
m:WaitForGenerationAsync()
local ok3 = pcall(function() return new.Name end)
assert(ok3, "the previous results are readable")
"#
    );
    let path = script("stale", &src);
    let mut engine = Engine::new(EngineConfig::default()).unwrap();
    engine.run_script(&path).unwrap_or_else(|e| panic!("{e}"));
}
