//! Issue #10 item 1: a generator's globals are its own. A hostile generator that plants
//! globals every way Luau allows never changes what another generator builds, whatever the
//! run order or the number of worker VMs.

use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Ref, Variant, Vector3};

/// Plants globals by assignment, `getfenv`/`setfenv` at every level, `rawset`, `_G`,
/// `shared`, the environment's metatable, library tables and spawned threads.
const HOSTILE: &str = r#"
local function plant(tag)
    local evil = function() return tag end
    pcall(function() Random = tag end)
    pcall(function() print = evil end)
    pcall(function() getfenv(0).Vector3 = tag end)
    pcall(function() rawset(getfenv(0), "CFrame", tag) end)
    for level = 0, 6 do
        pcall(function() getfenv(level).Instance = tag end)
        pcall(function() rawset(getfenv(level), "Color3", tag) end)
        pcall(function() local mt = getmetatable(getfenv(level)); if mt then mt.__index = { Random = tag, typeof = evil } end end)
        pcall(function() setfenv(level, setmetatable({}, { __index = function() return tag end })) end)
    end
    pcall(function() _G.Marker = tag end)
    pcall(function() shared.Marker = tag end)
    pcall(function() math.floor = evil end)
    pcall(function() string.rep = evil end)
    pcall(function() table.insert = evil end)
    pcall(function() getmetatable("").__index = { rep = evil } end)
    pcall(function() Vector3.new = evil end)
    pcall(function() Enum.Material = tag end)
    pcall(function() task.wait = evil end)
    pcall(function() rawset(_G, "Random", tag) end)
    pcall(function() setfenv(print, {}) end)
    for _, v in { Vector2.new(1, 2), Random.new(1), CFrame.new(), Color3.new(), BrickColor.new("Red"), UDim2.new(), Enum.Material, Enum.Material.Slate, Vector3.new(), game, "" } do
        pcall(function() local mt = getmetatable(v); mt.__index = evil end)
        pcall(function() local mt = getmetatable(v); mt.__tostring = evil end)
        pcall(function() rawset(getmetatable(v), "__index", evil) end)
    end
end
plant("module")
return {
    Attributes = {},
    OnGenerate = function(params, target)
        -- The first require of a module shared with the probe happens from a poisoned thread.
        pcall(function()
            Instance, Vector3, Color3 = "poison", "poison", "poison"
            require(script.Parent.Shared)
            Instance, Vector3, Color3 = nil, nil, nil
        end)
        pcall(function()
            setfenv(0, setmetatable({}, { __index = function() return "poison" end }))
            require(script.Parent.Shared)
        end)
        plant("planted")
        pcall(plant, "pcall")
        xpcall(plant, function() end, "xpcall")
        task.spawn(plant, "spawned")
        task.defer(plant, "deferred")
        coroutine.wrap(plant)("coroutine")
        local p = Instance.new("Part")
        p.Parent = target
    end,
}
"#;

/// Builds parts whose names record what it sees of the shared globals.
const PROBE: &str = r#"
local function seen()
    local out = {}
    for _, name in { "Random", "print", "Vector3", "CFrame", "Instance", "Color3", "typeof", "math", "task", "Enum" } do
        table.insert(out, name .. "=" .. type(getfenv(0)[name]) .. "/" .. typeof(getfenv(1)[name]))
    end
    table.insert(out, "Marker=" .. tostring(_G.Marker) .. "/" .. tostring(shared.Marker))
    table.insert(out, "floor=" .. tostring(math.floor(2.5)))
    table.insert(out, "rep=" .. ("ab"):rep(2) .. string.rep("c", 2))
    table.insert(out, "random=" .. tostring(Random.new(7):NextInteger(1, 1000)))
    table.insert(out, "mat=" .. tostring(Enum.Material.Slate))
    return table.concat(out, ";")
end
return {
    Attributes = {},
    OnGenerate = function(params, target)
        local p = Instance.new("Part")
        p.Name = seen()
        p.Size = Vector3.new(1, 2, 3)
        p.Parent = target
        task.wait()
        local q = Instance.new("Part")
        q.Name = seen()
        q.Parent = target
        require(script.Parent.Shared)(target)
    end,
}
"#;

/// A module both generators require: its imports must be the real globals.
const SHARED: &str = r#"
return function(target)
    local p = Instance.new("WedgePart")
    p.Name = typeof(Vector3) .. typeof(Instance) .. tostring(math.floor(1.5))
    p.Color = Color3.fromRGB(10, 20, 30)
    p.Parent = target
end
"#;

fn scene(jobs: usize, hostile_models: usize) -> (Engine, Ref) {
    let mut engine = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs,
            ..EngineConfig::default()
        },
    )
    .expect("engine");
    let root = engine.with_dom(|d| d.root_ref());
    let storage = engine.insert(root, InstanceBuilder::new("ServerStorage"));
    let hostile = engine.insert(
        storage,
        InstanceBuilder::new("ModuleScript")
            .with_name("Hostile")
            .with_property("Source", Variant::String(HOSTILE.into())),
    );
    engine.insert(
        storage,
        InstanceBuilder::new("ModuleScript")
            .with_name("Shared")
            .with_property("Source", Variant::String(SHARED.into())),
    );
    let probe = engine.insert(
        storage,
        InstanceBuilder::new("ModuleScript")
            .with_name("Probe")
            .with_property("Source", Variant::String(PROBE.into())),
    );
    let ws = engine.workspace();
    for i in 0..hostile_models {
        engine.insert(
            ws,
            InstanceBuilder::new("ProceduralModel")
                .with_name(format!("A{i}"))
                .with_property("Generator", Variant::Ref(hostile))
                .with_property("Size", Vector3::new(4.0, 4.0, 4.0)),
        );
    }
    let model = engine.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("B")
            .with_property("Generator", Variant::Ref(probe))
            .with_property("Size", Vector3::new(4.0, 4.0, 4.0)),
    );
    (engine, model)
}

/// The probe model's results, as names (what it saw) and as `.rbxm` bytes.
fn probe_results(jobs: usize, hostile_models: usize) -> (Vec<String>, Vec<u8>) {
    let (mut engine, model) = scene(jobs, hostile_models);
    let reports = engine.settle(16);
    // The hostile models may break themselves (their own environment is theirs to wreck);
    // the probe must not notice.
    assert!(
        reports.iter().any(|r| r.path == "Workspace.B" && r.is_ok()),
        "the probe generates: {reports:?}"
    );
    engine.with_dom(|dom| {
        let folder = dom.get_by_ref(model).unwrap().children()[0];
        let names = dom
            .get_by_ref(folder)
            .unwrap()
            .children()
            .iter()
            .map(|&c| dom.get_by_ref(c).unwrap().name.clone())
            .collect();
        let mut bytes = Vec::new();
        rbx_binary::to_writer(&mut bytes, dom, &[folder]).unwrap();
        (names, bytes)
    })
}

#[test]
fn r10_1_planted_globals_never_reach_another_generator() {
    let (alone_names, alone_bytes) = probe_results(1, 0);
    assert!(
        alone_names[0].contains("Random=table/table") || alone_names[0].contains("Random=userdata"),
        "the probe sees the real globals: {alone_names:?}"
    );
    assert!(alone_names[0].contains("Marker=nil/nil"), "{alone_names:?}");
    for jobs in [1, 2, 3] {
        let (names, bytes) = probe_results(jobs, 3);
        assert_eq!(names, alone_names, "what the probe saw with --jobs {jobs}");
        assert_eq!(bytes, alone_bytes, "the probe's bytes with --jobs {jobs}");
    }
}

/// An engine whose scene has generator module `name` (`source`) and `models` models of it,
/// each generated once, then the first regenerated (forced) as well.
fn generated_twice(name: &str, source: &str, models: usize) -> (Engine, Vec<Ref>) {
    let mut engine =
        Engine::new(procmodel_luau::runtime(), EngineConfig::default()).expect("engine");
    let root = engine.with_dom(|d| d.root_ref());
    let m = engine.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name(name)
            .with_property("Source", Variant::String(source.into())),
    );
    let ws = engine.workspace();
    let models: Vec<Ref> = (0..models)
        .map(|_| {
            engine.insert(
                ws,
                InstanceBuilder::new("ProceduralModel")
                    .with_property("Generator", Variant::Ref(m))
                    .with_property("Size", Vector3::new(4.0, 4.0, 4.0)),
            )
        })
        .collect();
    let reports = engine.settle(8);
    assert!(reports.iter().all(|r| r.is_ok()), "{reports:?}");
    engine.force_generation(models[0]);
    let reports = engine.settle(8);
    assert!(reports.iter().all(|r| r.is_ok()), "{reports:?}");
    (engine, models)
}

/// The name of the first instance in `model`'s results.
fn first_result_name(engine: &Engine, model: Ref) -> String {
    engine.with_dom(|dom| {
        let folder = dom.get_by_ref(model).unwrap().children()[0];
        let part = dom.get_by_ref(folder).unwrap().children()[0];
        dom.get_by_ref(part).unwrap().name.clone()
    })
}

#[test]
fn r10_1_a_generator_keeps_its_own_globals_across_its_threads() {
    const OWN: &str = r#"
Counter = 0
return {
    Attributes = {},
    OnGenerate = function(params, target)
        Counter += 1
        _G.Seen = (_G.Seen or 0) + 1
        local p = Instance.new("Part")
        p.Name = "run" .. Counter .. "/" .. _G.Seen
        p.Parent = target
    end,
}
"#;
    let (engine, models) = generated_twice("Own", OWN, 1);
    // The module's top level ran once; its globals persist between its own runs, as a
    // ModuleScript's do in Roblox.
    assert_eq!(first_result_name(&engine, models[0]), "run2/2");
}

#[test]
fn a_shared_table_registry_is_the_runs_own() {
    // Each run finds the registry empty, whether it is the model's second run or another
    // model's run on the same VM.
    const REGISTERS: &str = r#"
return {
    Attributes = {},
    OnGenerate = function(params, target)
        local registry = game:GetService("SharedTableRegistry")
        local st = registry:GetSharedTable("state")
        local p = Instance.new("Part")
        p.Name = "found " .. SharedTable.size(st)
        st.mark = true
        registry:SetSharedTable("other", SharedTable.new({ 1 }))
        p.Parent = target
    end,
}
"#;
    let (engine, models) = generated_twice("Registers", REGISTERS, 2);
    for model in models {
        assert_eq!(first_result_name(&engine, model), "found 0");
    }
}

/// A script and the modules it requires share `_G` and `shared` (Roblox's scripts do); the
/// generators of the ProceduralModels it makes still see only their own, even when the
/// script puts something there first.
#[test]
fn a_scripts_globals_do_not_reach_its_generators() {
    let dir = procmodel_testkit::scratch("isolation-script-globals");
    let script = dir.join("make.luau");
    std::fs::write(
        &script,
        r#"
_G.Marker = "script"
shared.Marker = "script"
local gen = Instance.new("ModuleScript")
gen.Name = "Gen"
gen.Source = "return { OnGenerate = function(p, t) local part = Instance.new('Part') part.Name = tostring(_G.Marker) .. '/' .. tostring(shared.Marker) part.Parent = t end }"
gen.Parent = game:GetService("ServerStorage")
local m = Instance.new("ProceduralModel")
m.Generator = gen
m.Parent = workspace
assert(m:WaitForGenerationAsync() == true)
assert(m.GeneratedFolder:GetChildren()[1].Name == "nil/nil", m.GeneratedFolder:GetChildren()[1].Name)
"#,
    )
    .unwrap();
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    e.run_script(&script).unwrap();
}
