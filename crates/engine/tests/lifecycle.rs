//! One named test per lifecycle rule (SPEC §4, issue #3).

use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::{InstanceBuilder, Ustr, WeakDom};
use rbx_types::{Attributes, Ref, Variant, Vector3};
use std::path::{Path, PathBuf};

/// A generator that builds `Count` parts in a row and records how often it ran.
const ROW: &str = r#"
local G = {}
G.Attributes = { Count = 3, Width = 1 }
function G.OnGenerate(params, target)
    for i = 1, params.Attributes.Count do
        params:Pause()
        local p = Instance.new("Part")
        p.Name = "P" .. i
        p.Size = Vector3.new(params.Attributes.Width, 1, 1)
        p.Position = Vector3.new(i * 2, 0, 0)
        p.Parent = target
    end
    target:SetPrimaryPart(target:FindFirstChild("P1"))
end
return G
"#;

fn module(engine: &mut Engine, name: &str, source: &str) -> Ref {
    let root = engine.with_dom(|d| d.root_ref());
    engine.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name(name)
            .with_property("Source", Variant::String(source.to_owned())),
    )
}

fn model(engine: &mut Engine, generator: Ref, attrs: &[(&str, Variant)]) -> Ref {
    let ws = engine.workspace();
    let mut a = Attributes::new();
    for (k, v) in attrs {
        a.insert((*k).to_owned(), v.clone());
    }
    engine.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("Model")
            .with_property("Generator", Variant::Ref(generator))
            .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
            .with_property("Attributes", Variant::Attributes(a)),
    )
}

/// Marks a module sandboxed with the named capabilities.
fn sandbox(engine: &mut Engine, module: Ref, caps: &[&str]) {
    let db = rbx_reflection_database::get_bundled();
    let bits = caps
        .iter()
        .map(|c| 1u64 << db.enums["SecurityCapability"].items[c])
        .fold(0, |a, b| a | b);
    engine.with_dom_mut(|d| {
        let i = d.get_by_ref_mut(module).unwrap();
        i.properties.insert("Sandboxed".into(), Variant::Bool(true));
        i.properties.insert(
            "Capabilities".into(),
            Variant::SecurityCapabilities(rbx_types::SecurityCapabilities::from_bits(bits)),
        );
    });
}

/// The GeneratedFolder of model `m`, if it has one.
fn generated_folder(d: &WeakDom, m: Ref) -> Option<Ref> {
    d.get_by_ref(m)
        .unwrap()
        .children()
        .iter()
        .copied()
        .find(|&c| d.get_by_ref(c).unwrap().class == "GeneratedFolder")
}

fn results(engine: &Engine, m: Ref) -> Vec<String> {
    engine.with_dom(|d| match generated_folder(d, m) {
        Some(f) => d
            .get_by_ref(f)
            .unwrap()
            .children()
            .iter()
            .map(|&c| d.get_by_ref(c).unwrap().name.clone())
            .collect(),
        None => Vec::new(),
    })
}

fn prop(engine: &Engine, r: Ref, name: &str) -> Option<Variant> {
    engine.with_dom(|d| {
        d.get_by_ref(r)
            .and_then(|i| i.properties.get(&Ustr::from(name)).cloned())
    })
}

fn setup(source: &str) -> (Engine, Ref, Ref) {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let g = module(&mut e, "Row", source);
    let m = model(&mut e, g, &[]);
    (e, g, m)
}

fn tmp(name: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch("engine");
    dir.join(name)
}

/// An engine whose ServerStorage holds the generator file `generator` and whose Workspace a
/// ProceduralModel using it: (engine, ServerStorage, the model).
fn file_generator_model(generator: &Path) -> (Engine, Ref, Ref) {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let storage = e.server_storage();
    let g = e.load_generator_file(generator, storage).unwrap();
    let m = model(&mut e, g.module, &[]);
    (e, storage, m)
}

#[test]
fn new_model_generates_on_step_not_before() {
    let (mut e, _, m) = setup(ROW);
    assert_eq!(
        results(&e, m),
        Vec::<String>::new(),
        "nothing runs before a step"
    );
    let reports = e.step();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].is_ok(), "{:?}", reports[0].error());
    assert_eq!(results(&e, m), ["P1", "P2", "P3"]);
    assert!(!e.is_dirty(m));
    assert!(e.step().is_empty(), "clean models do not regenerate");
}

#[test]
fn several_changes_coalesce_into_one_run() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.set_attribute(m, "Count", Some(Variant::Float64(4.0)))
        .unwrap();
    e.set_attribute(m, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    e.set_size(m, glam::Vec3::new(9.0, 9.0, 9.0)).unwrap();
    assert_eq!(e.runs(m), 1);
    let reports = e.step();
    assert_eq!(reports.len(), 1);
    assert_eq!(e.runs(m), 2);
    assert_eq!(results(&e, m).len(), 5);
}

#[test]
fn missing_attributes_are_filled_and_primary_part_set() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    match prop(&e, m, "Attributes") {
        Some(Variant::Attributes(a)) => {
            assert_eq!(a.get("Count"), Some(&Variant::Float64(3.0)));
            assert_eq!(a.get("Width"), Some(&Variant::Float64(1.0)));
        }
        other => panic!("attributes: {other:?}"),
    }
    let Some(Variant::Ref(pp)) = prop(&e, m, "PrimaryPart") else {
        panic!("no PrimaryPart")
    };
    assert_eq!(e.with_dom(|d| d.get_by_ref(pp).unwrap().name.clone()), "P1");
}

#[test]
fn results_are_placed_at_the_model_pivot() {
    let (mut e, _, m) = setup(ROW);
    e.with_dom_mut(|d| {
        let cf = rbx_types::CFrame::new(
            Vector3::new(100.0, 0.0, 0.0),
            rbx_types::Matrix3::identity(),
        );
        d.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("WorldPivotData".into(), Variant::OptionalCFrame(Some(cf)));
    });
    let p1_x = |e: &Engine| {
        e.with_dom(|d| {
            let p = d.descendants_of(m).find(|i| i.name == "P1").unwrap();
            match p.properties.get(&"CFrame".into()) {
                Some(Variant::CFrame(cf)) => cf.position.x,
                _ => f32::NAN,
            }
        })
    };
    e.step();
    // P1 is the results' PrimaryPart, so it lands on the model's pivot...
    assert_eq!(p1_x(&e), 100.0);
    // ...and stays there when the model regenerates (the pivot is now P1's).
    e.force_generation(m);
    e.step();
    assert_eq!(p1_x(&e), 100.0);
}

#[test]
fn generator_sees_size_divided_by_scale_and_results_are_scaled_back() {
    let src = r#"return { OnGenerate = function(params, target)
        local p = Instance.new("Part")
        p.Name = "Box"
        p.Size = params.Size
        p.Parent = target
    end }"#;
    let (mut e, _, m) = setup(src);
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("Scale".into(), Variant::Float32(2.0));
    });
    e.step();
    let size = e.with_dom(|d| {
        match d
            .descendants_of(m)
            .find(|i| i.name == "Box")
            .unwrap()
            .properties
            .get(&"Size".into())
        {
            Some(Variant::Vector3(v)) => *v,
            _ => panic!(),
        }
    });
    // params.Size = 8/2 = 4, scaled back ×2 → 8
    assert_eq!(size, Vector3::new(8.0, 8.0, 8.0));
}

#[test]
fn scale_rescales_without_regenerating() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.scale_to(m, 2.0).unwrap();
    assert!(e.step().is_empty(), "Scale is not an input");
    assert_eq!(e.runs(m), 1);
    let w = e.with_dom(|d| {
        match d
            .descendants_of(m)
            .find(|i| i.name == "P1")
            .unwrap()
            .properties
            .get(&"Size".into())
        {
            Some(Variant::Vector3(v)) => v.x,
            _ => f32::NAN,
        }
    });
    assert_eq!(w, 2.0);
}

/// A generator that suspends itself and is resumed by `task.spawn` from another thread — how
/// `Promise:await()` (evaera's Promise) and signal libraries wait — failed with "internal:
/// main thread ended unexpectedly" once it ended there. Its run ends with it: the results
/// when it returns, its error when it fails.
#[test]
fn a_generator_resumed_by_task_spawn_ends_its_run() {
    let (mut e, _, m) = setup(
        r#"return { OnGenerate = function(params, target)
    local me = coroutine.running()
    task.delay(0.1, function() task.spawn(me, "Woken") end)
    local name = coroutine.yield()
    local p = Instance.new("Part")
    p.Name = name
    p.Parent = target
end }"#,
    );
    let r = e.settle(100);
    assert!(r[0].is_ok(), "{:?}", r[0].error());
    assert_eq!(results(&e, m), ["Woken"]);
    let (mut e, _, m) = setup(
        r#"return { OnGenerate = function(params, target)
    local me = coroutine.running()
    task.delay(0.1, function() task.spawn(me) end)
    coroutine.yield()
    error("failed after waking")
end }"#,
    );
    let r = e.settle(100);
    assert!(
        r[0].error()
            .as_deref()
            .unwrap()
            .contains("failed after waking"),
        "{:?}",
        r[0].error()
    );
    assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"]);
}

/// The same through the engine's frame-by-frame runs: a generator waiting on a
/// Heartbeat-driven timer (roblox-ts's bundled Promise.delay) failed with "nothing will
/// resume it" as soon as nothing was queued.
#[test]
fn a_generator_woken_by_a_heartbeat_handler_finishes() {
    let (mut e, _, m) = setup(
        r#"return { OnGenerate = function(params, target)
    local me = coroutine.running()
    local frames, conn = 0, nil
    conn = game:GetService("RunService").Heartbeat:Connect(function()
        frames += 1
        if frames == 6 then conn:Disconnect() task.spawn(me, "After" .. frames) end
    end)
    local p = Instance.new("Part")
    p.Name = coroutine.yield()
    p.Parent = target
end }"#,
    );
    let r = e.settle(100);
    assert!(r[0].is_ok(), "{:?}", r[0].error());
    assert_eq!(results(&e, m), ["After6"]);
}

#[test]
fn failure_places_error_placeholder_and_does_not_retry() {
    let (mut e, _, m) = setup("return { OnGenerate = function() error('kaboom') end }");
    let r = e.step();
    assert!(!r[0].is_ok());
    assert!(r[0].error().as_deref().unwrap().contains("kaboom"));
    assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"]);
    match prop(&e, m, "GenerationError") {
        Some(Variant::String(s)) => assert!(s.contains("kaboom"), "{s}"),
        other => panic!("{other:?}"),
    }
    assert!(!e.is_dirty(m));
    assert!(e.step().is_empty(), "no retry loop");
    e.set_attribute(m, "X", Some(Variant::Float64(1.0)))
        .unwrap();
    assert_eq!(e.step().len(), 1, "the next input change retries");
}

#[test]
fn source_edit_regenerates() {
    let (mut e, g, m) = setup(ROW);
    e.step();
    e.set_source(g, &ROW.replace("Count = 3", "Count = 6"))
        .unwrap();
    e.step();
    assert_eq!(
        results(&e, m).len(),
        3,
        "the model's own Count attribute (3) was filled in and still wins"
    );
    e.set_attribute(m, "Count", None).unwrap();
    e.step();
    assert_eq!(
        results(&e, m).len(),
        6,
        "without the attribute the new default applies"
    );
}

#[test]
fn bake_on_generator_nil_keeps_contents_and_stops_regenerating() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.set_generator(m, None).unwrap();
    e.set_attribute(m, "Count", Some(Variant::Float64(9.0)))
        .unwrap();
    assert!(e.step().is_empty());
    assert_eq!(results(&e, m).len(), 3);
}

/// Inputs edited in a saved file by another tool (the generator's Source, Size, an
/// attribute) make the model dirty when the file is loaded, as `procmodel status` calls it
/// stale: before, a plain `regen` regenerated nothing and `status` kept saying stale. An
/// unedited file loads clean.
#[test]
fn inputs_edited_in_the_saved_file_make_the_model_dirty_on_load() {
    let (mut e, _, _) = setup(ROW);
    e.step();
    let path = tmp("edited.rbxlx");
    e.save(&path).unwrap();
    let load =
        |p: &PathBuf| Engine::load(procmodel_luau::runtime(), p, EngineConfig::default()).unwrap();
    assert!(
        load(&path).step().is_empty(),
        "an unedited file has nothing to regenerate"
    );
    type Edit = fn(&mut rbx_dom_weak::Instance);
    let edits: [(&str, &str, Edit); 3] = [
        ("Size", "ProceduralModel", |i| {
            i.properties
                .insert("Size".into(), Variant::Vector3(Vector3::new(9.0, 8.0, 8.0)));
        }),
        ("attribute", "ProceduralModel", |i| {
            let mut a = Attributes::new();
            a.insert("Count".into(), Variant::Float64(5.0));
            i.properties
                .insert("Attributes".into(), Variant::Attributes(a));
        }),
        ("Source", "ModuleScript", |i| {
            let src = ROW.replace("Count = 3", "Count = 4");
            i.properties.insert("Source".into(), Variant::String(src));
        }),
    ];
    for (what, class, edit) in edits {
        let mut dom = procmodel_dom::decode_xml(std::fs::File::open(&path).unwrap()).unwrap();
        let r = dom
            .descendants()
            .find(|i| i.class == class)
            .map(|i| i.referent())
            .unwrap();
        edit(dom.get_by_ref_mut(r).unwrap());
        let edited = tmp(&format!("edited-{what}.rbxlx"));
        let roots = dom.root().children().to_vec();
        procmodel_dom::encode_xml(std::fs::File::create(&edited).unwrap(), &dom, &roots).unwrap();
        let mut loaded = load(&edited);
        let lm = loaded.models()[0];
        let stale = loaded.with_dom(|d| procmodel_engine::provenance::status(d, lm));
        assert!(
            matches!(stale, procmodel_engine::provenance::Status::Stale(_)),
            "{what}: {stale:?}"
        );
        assert_eq!(loaded.step().len(), 1, "{what}: regenerated on load");
        let now = loaded.with_dom(|d| procmodel_engine::provenance::status(d, lm));
        assert_eq!(now, procmodel_engine::provenance::Status::Fresh, "{what}");
    }
}

#[test]
fn dirty_persists_across_save_and_load_and_generation_error_is_not_loaded() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.set_attribute(m, "Count", Some(Variant::Float64(2.0)))
        .unwrap();
    // mark dirty without stepping, then save
    assert_eq!(e.detect_changes(), vec![m]);
    let path = tmp("dirty.rbxlx");
    e.save(&path).unwrap();
    let mut loaded =
        Engine::load(procmodel_luau::runtime(), &path, EngineConfig::default()).unwrap();
    let lm = loaded.models()[0];
    assert!(loaded.is_dirty(lm), "Dirty was saved");
    let r = loaded.step();
    assert_eq!(r.len(), 1);
    assert_eq!(results(&loaded, lm).len(), 2);

    let (mut bad, _, bm) = setup("return { OnGenerate = function() error('x') end }");
    bad.step();
    assert!(prop(&bad, bm, "GenerationError").is_some());
    let path = tmp("err.rbxl");
    bad.save(&path).unwrap();
    let reloaded = Engine::load(procmodel_luau::runtime(), &path, EngineConfig::default()).unwrap();
    let rm = reloaded.models()[0];
    assert_eq!(
        prop(&reloaded, rm, "GenerationError"),
        None,
        "GenerationError is not loaded"
    );
}

#[test]
fn saved_scene_is_byte_identical_across_runs() {
    let build = || {
        let (mut e, _, _) = setup(ROW);
        e.step();
        let path = tmp(&format!("det-{}.rbxl", rand_name()));
        e.save(&path).unwrap();
        std::fs::read(&path).unwrap()
    };
    assert_eq!(build(), build());
}

fn rand_name() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

#[test]
fn nested_models_generate_top_down_in_the_same_step() {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let leaf = module(
        &mut e,
        "Leaf",
        r#"return { OnGenerate = function(p, t)
        local part = Instance.new("Part") part.Name = "LeafPart" part.Parent = t
    end }"#,
    );
    let parent_src = r#"return { OnGenerate = function(p, t)
        local inner = Instance.new("ProceduralModel")
        inner.Name = "Inner"
        inner.Generator = game:FindFirstChild("Leaf")
        inner.Parent = t
    end }"#;
    let outer = module(&mut e, "Outer", parent_src);
    let m = model(&mut e, outer, &[]);
    let reports = e.step();
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert_eq!(reports[0].model, m, "parent first");
    assert!(reports[1].path.ends_with("Inner"), "{}", reports[1].path);
    assert!(e.with_dom(|d| d.descendants_of(m).any(|i| i.name == "LeafPart")));
    let _ = leaf;
}

#[test]
fn runaway_nesting_is_an_error_not_a_hang() {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            max_depth: 4,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(
        &mut e,
        "Self",
        r#"return { OnGenerate = function(p, t)
        local inner = Instance.new("ProceduralModel")
        inner.Generator = game:FindFirstChild("Self")
        inner.Parent = t
    end }"#,
    );
    model(&mut e, g, &[]);
    let reports = e.step();
    assert!(
        reports
            .iter()
            .any(|r| !r.is_ok() && r.error().as_deref().unwrap().contains("levels deep")),
        "{reports:?}"
    );
}

#[test]
fn undo_restores_inputs_and_results_without_running_and_redo_reapplies() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    let first: Vec<Ref> = e.with_dom(|d| {
        d.descendants_of(m)
            .filter(|i| i.class == "Part")
            .map(|i| i.referent())
            .collect()
    });
    e.set_attribute(m, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    e.step();
    assert_eq!(results(&e, m).len(), 5);
    let runs = e.runs(m);
    assert!(e.undo());
    assert_eq!(results(&e, m).len(), 3);
    let restored: Vec<Ref> = e.with_dom(|d| {
        d.descendants_of(m)
            .filter(|i| i.class == "Part")
            .map(|i| i.referent())
            .collect()
    });
    assert_eq!(restored, first, "the very same instances come back");
    match prop(&e, m, "Attributes") {
        Some(Variant::Attributes(a)) => assert_eq!(a.get("Count"), Some(&Variant::Float64(3.0))),
        other => panic!("{other:?}"),
    }
    assert!(e.step().is_empty(), "undo does not regenerate");
    assert_eq!(e.runs(m), runs);
    assert!(e.redo());
    assert_eq!(results(&e, m).len(), 5);
    assert!(e.step().is_empty());
    assert_eq!(e.runs(m), runs);
}

#[test]
fn setting_an_input_to_the_value_it_has_is_no_change_and_no_undo_step() {
    // An editor commits a typed value on Enter and again on the change event that follows:
    // the second, equal write must not become an undo step that the first Undo spends.
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.set_attribute(m, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    e.step();
    let runs = e.runs(m);
    e.set_attribute(m, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    let size = match prop(&e, m, "Size") {
        Some(Variant::Vector3(v)) => glam::Vec3::new(v.x, v.y, v.z),
        other => panic!("{other:?}"),
    };
    e.set_size(m, size).unwrap();
    e.scale_to(m, 1.0).unwrap();
    let generator =
        e.with_dom(
            |d| match d.get_by_ref(m).unwrap().properties.get(&"Generator".into()) {
                Some(Variant::Ref(r)) => *r,
                other => panic!("{other:?}"),
            },
        );
    e.set_generator(m, Some(generator)).unwrap();
    assert!(e.step().is_empty(), "nothing changed, nothing regenerates");
    assert_eq!(e.runs(m), runs);
    assert!(e.undo(), "the one real change is the last step");
    assert_eq!(results(&e, m).len(), 3);
    assert!(!e.undo(), "and the only one");
}

#[test]
fn r13_a_gesture_is_one_undo_step_whatever_it_regenerated_on_the_way() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    let first: Vec<Ref> = e.with_dom(|d| {
        d.descendants_of(m)
            .filter(|i| i.class == "Part")
            .map(|i| i.referent())
            .collect()
    });
    let count = |e: &Engine| match prop(e, m, "Attributes") {
        Some(Variant::Attributes(a)) => a.get("Count").cloned(),
        other => panic!("{other:?}"),
    };
    // A drag: values 4, 5, 6, 7, some regenerated between, two in one frame.
    e.begin_gesture();
    for (v, regenerate) in [(4.0, true), (5.0, false), (6.0, true), (7.0, true)] {
        e.set_attribute(m, "Count", Some(Variant::Float64(v)))
            .unwrap();
        if regenerate {
            e.step();
        }
    }
    e.end_gesture();
    assert_eq!(results(&e, m).len(), 7);
    // A change after the gesture is a step of its own.
    e.set_attribute(m, "Width", Some(Variant::Float64(2.0)))
        .unwrap();
    e.step();
    assert!(e.undo());
    assert_eq!(count(&e), Some(Variant::Float64(7.0)));
    assert_eq!(results(&e, m).len(), 7);
    // One undo takes back the whole drag, to the very instances from before it.
    assert!(e.undo());
    assert_eq!(count(&e), Some(Variant::Float64(3.0)));
    let restored: Vec<Ref> = e.with_dom(|d| {
        d.descendants_of(m)
            .filter(|i| i.class == "Part")
            .map(|i| i.referent())
            .collect()
    });
    assert_eq!(restored, first);
    assert!(e.step().is_empty(), "undo does not regenerate");
    assert!(e.redo());
    assert_eq!(count(&e), Some(Variant::Float64(7.0)));
    assert_eq!(results(&e, m).len(), 7);
    // Undo ends an open gesture: the next change is a new step.
    e.begin_gesture();
    e.set_attribute(m, "Count", Some(Variant::Float64(2.0)))
        .unwrap();
    e.step();
    assert!(e.undo());
    e.set_attribute(m, "Count", Some(Variant::Float64(9.0)))
        .unwrap();
    e.step();
    assert!(e.undo());
    assert_eq!(count(&e), Some(Variant::Float64(7.0)));
}

#[test]
fn several_changes_in_one_frame_join_the_most_recent_waypoint() {
    let (mut e, _, m) = setup(ROW);
    e.step();
    e.set_attribute(m, "Count", Some(Variant::Float64(4.0)))
        .unwrap();
    e.set_attribute(m, "Width", Some(Variant::Float64(2.0)))
        .unwrap();
    e.step();
    assert_eq!(results(&e, m).len(), 4);
    // undoing the most recent change restores its inputs and the results from before the frame
    assert!(e.undo());
    assert_eq!(results(&e, m).len(), 3);
    match prop(&e, m, "Attributes") {
        Some(Variant::Attributes(a)) => {
            assert_eq!(a.get("Count"), Some(&Variant::Float64(4.0)));
            assert_eq!(a.get("Width"), Some(&Variant::Float64(1.0)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn removed_models_are_not_generated() {
    let (mut e, _, m) = setup(ROW);
    e.remove(m).unwrap();
    assert!(e.step().is_empty());
}

#[test]
fn hostile_generators_end_as_placeholders_and_the_engine_keeps_working() {
    // (body, words the message holds, the failure's kind)
    let cases: &[(&str, &str, &str)] = &[
        ("while true do end", "Script timeout", "limit.timeout"),
        (
            "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end",
            "memory",
            "limit.memory",
        ),
        (
            "local function f() return f() + 1 end f()",
            "stack",
            "script",
        ),
        (
            "for i = 1, 1e7 do Instance.new('Part', t) end",
            "instance limit",
            "limit.instances",
        ),
        ("local x = nil; x.y = 1", "attempt to index nil", "script"),
        (
            "game:GetService('Workspace'):ClearAllChildren()",
            "AccessOutsideWrite",
            "script",
        ),
        ("workspace.Name = 'Hacked'", "AccessOutsideWrite", "script"),
        (
            "local p = Instance.new('Part') p.Parent = workspace",
            "AccessOutsideWrite",
            "script",
        ),
        ("error({})", "error", "script"),
    ];
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            host: procmodel_luau::HostConfig {
                // Generous: under a loaded test run the memory bomb must reach the memory limit
                // before the wall-clock watchdog fires (300 ms was flaky on 2 busy cores).
                timeout: std::time::Duration::from_secs(2),
                memory_limit: 64 << 20,
                instance_limit: Some(10_000),
                echo_output: false,
                ..procmodel_luau::HostConfig::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    for (i, (body, expect, kind)) in cases.iter().enumerate() {
        let src = format!("return {{ OnGenerate = function(params, t) {body} end }}");
        let g = module(&mut e, &format!("Hostile{i}"), &src);
        sandbox(&mut e, g, &["Basic", "RunServerScript", "CreateInstances"]);
        let m = model(&mut e, g, &[]);
        let r = e.step();
        let rep = r
            .iter()
            .find(|r| r.model == m)
            .unwrap_or_else(|| panic!("case {i} produced no report: {r:?}"));
        // Every hostile generator ends as a placeholder with a precise message.
        assert!(!rep.is_ok(), "case {i} should fail");
        assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"], "case {i}");
        let msg = rep.error().unwrap_or_default();
        assert!(
            msg.to_lowercase().contains(&expect.to_lowercase()),
            "case {i}: {msg}"
        );
        assert_eq!(
            rep.failure().map(|f| f.kind()),
            Some(*kind),
            "case {i}: {msg}"
        );
    }
    // escape attempts changed nothing outside the containers
    assert_eq!(
        e.with_dom(|d| d.get_by_ref(e.workspace()).unwrap().name.clone()),
        "Workspace"
    );
    // the engine still works afterwards
    let g = module(&mut e, "Fine", ROW);
    let m = model(&mut e, g, &[]);
    let r = e.step();
    assert!(r.iter().any(|r| r.model == m && r.is_ok()), "{r:?}");
}

#[test]
fn luau_script_drives_the_engine_with_wait_for_generation() {
    let script = tmp("tool.luau");
    std::fs::write(
        &script,
        r#"
        local gen = Instance.new("ModuleScript")
        gen.Name = "Gen"
        gen.Source = "return { Attributes = { N = 2 }, OnGenerate = function(p, t) for i = 1, p.Attributes.N do Instance.new('Part', t) end end }"
        gen.Parent = game
        local m = Instance.new("ProceduralModel")
        m.Generator = gen
        m.Parent = workspace
        assert(m:WaitForGenerationAsync() == true)
        assert(#m.GeneratedFolder:GetChildren() == 2)
        m:SetAttribute("N", 4)
        task.wait()
        assert(#m.GeneratedFolder:GetChildren() == 4, "regenerated while the script waited")
        assert(m:ForceGeneration() == true)
        assert(m:WaitForGenerationAsync() == true)
        local orphan = Instance.new("ProceduralModel")
        local ok = pcall(function() orphan:WaitForGenerationAsync() end)
        assert(not ok, "errors when the model is not in the scene")
        "#,
    )
    .unwrap();
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    e.run_script(&script).unwrap();
    let m = e.models()[0];
    assert_eq!(results(&e, m).len(), 4);
}

#[allow(dead_code)]
fn _dom_type_check(_: &WeakDom) {}

#[test]
fn sandboxed_generator_missing_a_capability_fails_naming_it() {
    let (mut e, g, m) = setup(ROW);
    sandbox(&mut e, g, &["Basic", "RunServerScript"]);
    let r = e.step();
    assert!(!r[0].is_ok());
    assert!(
        r[0].error().as_deref().unwrap().contains("CreateInstances"),
        "{r:?}"
    );
    assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"]);
}

#[test]
fn access_outside_write_lets_a_sandboxed_generator_touch_the_scene() {
    let src = "return { OnGenerate = function() workspace.Name = 'Renamed' end }";
    let (mut e, g, _) = setup(src);
    sandbox(&mut e, g, &["Basic", "RunServerScript", "CreateInstances"]);
    assert!(!e.step()[0].is_ok(), "refused without AccessOutsideWrite");
    sandbox(
        &mut e,
        g,
        &[
            "Basic",
            "RunServerScript",
            "CreateInstances",
            "AccessOutsideWrite",
        ],
    );
    let r = e.step();
    assert!(r[0].is_ok(), "{r:?}");
    assert_eq!(
        e.with_dom(|d| d.get_by_ref(e.workspace()).unwrap().name.clone()),
        "Renamed"
    );
}

#[test]
fn a_sandboxed_generator_may_ask_for_a_service_the_scene_lacks() {
    // Every service exists in Roblox, so GetService is no write: a sandboxed generator
    // without AccessOutsideWrite got "a generator may not create services" in a scene that
    // had no CollectionService (a Rojo project's, `generate`'s). Putting something in the
    // service is still a write outside its container.
    let src = r#"return { Attributes = { Into = false }, OnGenerate = function(params, target)
        local tags = game:GetService("CollectionService")
        local p = Instance.new("Part")
        tags:AddTag(p, "Made")
        p.Parent = if params.Attributes.Into then game.Lighting else target
    end }"#;
    let (mut e, g, m) = setup(src);
    sandbox(&mut e, g, &["Basic", "RunServerScript", "CreateInstances"]);
    let r = e.step();
    assert!(r[0].is_ok(), "{r:?}");
    assert_eq!(results(&e, m), ["Part"]);
    e.set_attribute(m, "Into", Some(Variant::Bool(true)))
        .unwrap();
    let r = e.step();
    let error = r[0].error().unwrap_or_default();
    assert!(error.contains("AccessOutsideWrite"), "{r:?}");
}

#[test]
fn parallel_generation_saves_the_same_bytes_as_sequential() {
    let build = |jobs: usize| {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let g = module(&mut e, "Row", ROW);
        let bad = module(
            &mut e,
            "Bad",
            "return { OnGenerate = function() error('no') end }",
        );
        for i in 0..9 {
            let m = model(
                &mut e,
                if i == 4 { bad } else { g },
                &[("Count", Variant::Float64((i % 4 + 1) as f64))],
            );
            e.with_dom_mut(|d| d.get_by_ref_mut(m).unwrap().name = format!("M{i}"));
        }
        let reports = e.step();
        assert_eq!(reports.len(), 9);
        assert_eq!(reports.iter().filter(|r| !r.is_ok()).count(), 1);
        let order: Vec<String> = reports.iter().map(|r| r.path.clone()).collect();
        // Regenerate over existing results: some models scaled, some with their pivot left
        // implicit (as in a file saved elsewhere), so it comes from the old results that the
        // worker copies leave out.
        let models = e.models();
        for (i, &m) in models.iter().enumerate() {
            if i % 3 == 1 {
                e.scale_to(m, 2.0).unwrap();
            }
            if i % 2 == 0 {
                e.with_dom_mut(|d| {
                    let inst = d.get_by_ref_mut(m).unwrap();
                    inst.properties.remove(&"WorldPivotData".into());
                });
            }
            e.set_attribute(m, "Count", Some(Variant::Float64((i % 3 + 2) as f64)))
                .unwrap();
        }
        let again = e.step();
        assert_eq!(again.len(), 9);
        let path = tmp(&format!("par-{jobs}-{}.rbxl", rand_name()));
        e.save(&path).unwrap();
        (std::fs::read(&path).unwrap(), order)
    };
    let (seq, seq_order) = build(1);
    let (par, par_order) = build(2);
    let (par3, _) = build(3);
    assert_eq!(seq_order, par_order, "reports in scene order");
    assert!(
        seq == par && par == par3,
        "saved scene differs with the number of workers"
    );
}

/// A generator that yields to the next frame after every part.
const SLOW: &str = r#"
return {
    Attributes = { Count = 3 },
    OnGenerate = function(params, target)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = "S" .. i
            p.Parent = target
            task.wait()
        end
    end,
}
"#;

#[test]
fn input_change_while_a_run_waits_cancels_it_and_restarts_with_new_inputs() {
    let (mut e, _, m) = setup(SLOW);
    assert!(e.step().is_empty(), "the run waits for the next frame");
    assert!(e.is_generating(m));
    e.set_attribute(m, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    let reports = e.settle(100);
    assert_eq!(
        reports.len(),
        1,
        "only the restarted run reports: {reports:?}"
    );
    assert!(reports[0].is_ok());
    assert_eq!(e.runs(m), 2, "cancelled once, restarted once");
    assert_eq!(results(&e, m), ["S1", "S2", "S3", "S4", "S5"]);
    // the cancelled run's partial container is gone
    let orphans = e.with_dom(|d| d.descendants().count());
    let (mut fresh, _, fm) = setup(SLOW);
    fresh
        .set_attribute(fm, "Count", Some(Variant::Float64(5.0)))
        .unwrap();
    fresh.settle(100);
    assert_eq!(orphans, fresh.with_dom(|d| d.descendants().count()));
}

#[test]
fn pause_yields_when_the_frame_budget_is_spent_and_a_change_then_cancels() {
    let src = r#"return { Attributes = { Count = 4 }, OnGenerate = function(params, target)
        for i = 1, params.Attributes.Count do
            params:Pause()
            local t = 0
            for j = 1, 1e7 do t += j end -- work that outlasts a zero budget
            Instance.new("Part", target).Name = "Q" .. i
        end
    end }"#;
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            frame_budget: Some(std::time::Duration::ZERO),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, "Budget", src);
    let m = model(&mut e, g, &[]);
    assert!(e.step().is_empty());
    assert!(
        e.is_generating(m),
        "Pause yielded once the budget was spent"
    );
    e.set_attribute(m, "Count", Some(Variant::Float64(2.0)))
        .unwrap();
    let r = e.settle(100);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(results(&e, m), ["Q1", "Q2"]);
    assert_eq!(e.runs(m), 2);
}

#[test]
fn without_a_budget_pause_never_yields() {
    let src = r#"return { OnGenerate = function(params, target)
        for i = 1, 1000 do params:Pause() end
        Instance.new("Part", target)
    end }"#;
    let (mut e, _, m) = setup(src);
    assert_eq!(e.step().len(), 1);
    assert!(!e.is_generating(m));
}

#[test]
fn removing_a_model_cancels_its_run() {
    let (mut e, _, m) = setup(SLOW);
    e.step();
    assert!(e.is_generating(m));
    e.remove(m).unwrap();
    assert!(!e.is_generating(m));
    assert!(e.settle(10).is_empty());
}

#[test]
fn a_generation_that_never_finishes_fails_after_the_frame_limit() {
    let (mut e, _, m) =
        setup("return { OnGenerate = function() while true do task.wait() end end }");
    let r = e.settle(20);
    assert_eq!(r.len(), 1);
    assert!(
        r[0].error()
            .as_deref()
            .unwrap()
            .contains("did not finish within 20 frames"),
        "{r:?}"
    );
    assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"]);
    assert!(!e.is_generating(m));
}

#[test]
fn instance_handles_stay_bounded_across_many_regenerations() {
    // Every run makes fresh instances and moves the old results into undo history (kept in
    // the scene's DOM as orphans, so references into them still read); the VM's instance
    // handles must follow what the DOM holds, bounded by the undo depth (256 steps), not
    // grow with every run ever made.
    // A runtime that keeps a handle on the host it makes, to count its handles.
    struct Keeping;
    thread_local! {
        static KEPT: std::cell::RefCell<Option<procmodel_luau::Host>> = const { std::cell::RefCell::new(None) };
    }
    impl procmodel_engine::ScriptRuntime for Keeping {
        fn new_host(
            &self,
            config: &procmodel_engine::HostConfig,
            dom: Option<rbx_dom_weak::WeakDom>,
        ) -> Result<std::rc::Rc<dyn procmodel_luau::ScriptHost>, procmodel_luau::HostError>
        {
            assert!(dom.is_none());
            let host = procmodel_luau::Host::new(config.clone())?;
            KEPT.with(|k| *k.borrow_mut() = Some(host.clone()));
            Ok(std::rc::Rc::new(host))
        }
    }
    let mut e = Engine::new(std::sync::Arc::new(Keeping), EngineConfig::default()).unwrap();
    let g = module(&mut e, "Row", ROW);
    let m = model(&mut e, g, &[]);
    e.set_attribute(m, "Count", Some(Variant::Float64(20.0)))
        .unwrap();
    for i in 0..1500 {
        e.set_attribute(m, "Width", Some(Variant::Float64(1.0 + (i % 2) as f64)))
            .unwrap();
        let r = e.step();
        assert!(r.len() == 1 && r[0].is_ok(), "{r:?}");
    }
    assert_eq!(results(&e, m).len(), 20);
    let handles = KEPT.with(|k| k.borrow().as_ref().unwrap().instance_handles());
    // 1500 runs × 21 instances = 31,500 handles if none were freed; the history holds at
    // most 256 replaced results (and the scene one more).
    assert!(handles <= 4096 + 2 * 258 * 21, "{handles} handles held");
}

#[test]
fn a_run_that_pauses_forever_hits_the_run_time_limit() {
    // Pause yields every frame, so the no-yield timeout never fires; the total execution
    // time over all frames is limited instead, and the failure says which limit was hit.
    let src = r#"return { OnGenerate = function(params, target)
        while true do
            params:Pause()
            local t = 0
            for j = 1, 1e5 do t += j end
        end
    end }"#;
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            frame_budget: Some(std::time::Duration::ZERO),
            run_limit: std::time::Duration::from_millis(30),
            // Each frame must stop at the budget: a frame that ran on (a run resumed before the
            // frame's budget started did) ends in this no-yield timeout instead.
            host: procmodel_luau::HostConfig {
                timeout: std::time::Duration::from_secs(2),
                echo_output: false,
                ..procmodel_luau::HostConfig::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, "Forever", src);
    let m = model(&mut e, g, &[]);
    let mut failure = None;
    for _ in 0..100_000 {
        if let Some(r) = e.step().into_iter().next() {
            failure = Some(r);
            break;
        }
    }
    let r = failure.expect("the run ended");
    assert!(!r.is_ok());
    let msg = r.error().unwrap_or_default();
    assert!(msg.contains("Run time limit"), "{msg}");
    assert_eq!(results(&e, m), ["GenerationErrorPlaceholder"]);
    assert!(!e.is_generating(m));
}

#[test]
fn worker_vms_kept_between_steps_see_source_edits_and_new_models() {
    // With jobs > 1 the worker VMs live from step to step (modules stay compiled): an
    // edited Source must still be required again, and models added later run too.
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs: 2,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, "Row", ROW);
    let mut models: Vec<Ref> = (0..6).map(|_| model(&mut e, g, &[])).collect();
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert!(models.iter().all(|&m| results(&e, m) == ["P1", "P2", "P3"]));
    e.set_source(g, &ROW.replace("\"P\" .. i", "\"Q\" .. i"))
        .unwrap();
    models.push(model(&mut e, g, &[]));
    let reports = e.step();
    assert_eq!(reports.len(), 7);
    assert!(reports.iter().all(|r| r.is_ok()), "{reports:?}");
    for &m in &models {
        assert_eq!(results(&e, m), ["Q1", "Q2", "Q3"]);
    }
}

#[test]
fn declared_attributes_read_between_an_edit_and_its_undo_never_run_the_undone_source() {
    // A front end reads the edited generator's declared attributes before the engine steps,
    // then the edit is undone: the next run must require the restored Source, not the
    // edited one the read loaded.
    let (mut e, g, m) = setup(ROW);
    e.step();
    assert_eq!(results(&e, m), ["P1", "P2", "P3"]);
    e.set_source(g, &ROW.replace("\"P\" .. i", "\"Q\" .. i"))
        .unwrap();
    let declared = e.declared_attributes(g).unwrap().unwrap();
    let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Count", "Width"]);
    e.undo();
    e.force_generation(m);
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(
        results(&e, m),
        ["P1", "P2", "P3"],
        "the restored Source ran"
    );
}

#[test]
fn declared_attributes_of_a_broken_module_is_an_error_naming_it() {
    let (e, g, _) = setup("return 42");
    let err = e.declared_attributes(g).unwrap_err().to_string();
    assert!(
        err.contains("generator module must return a table"),
        "{err}"
    );
}

/// A generator whose part names come from the module `Lib` it requires.
const NAMED_BY_LIB: &str = r#"
local Lib = require(script.Parent.Lib)
return {
    Attributes = { Count = 3 },
    OnGenerate = function(params, target)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = Lib.prefix .. i
            p.Parent = target
        end
    end,
}
"#;

#[test]
fn r13_3_a_required_module_edit_regenerates_and_is_one_undo_step() {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let lib = module(&mut e, "Lib", "return { prefix = \"A\" }");
    let g = module(&mut e, "Gen", NAMED_BY_LIB);
    let m = model(&mut e, g, &[]);
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(results(&e, m), ["A1", "A2", "A3"]);

    // The module's edit regenerates the model whose generator required it.
    e.set_source(lib, "return { prefix = \"B\" }").unwrap();
    assert!(e.is_dirty(m));
    let reports = e.step();
    assert!(reports.len() == 1 && reports[0].is_ok(), "{reports:?}");
    assert_eq!(results(&e, m), ["B1", "B2", "B3"]);

    // One undo step restores the module's Source and the results, without running.
    assert!(e.undo());
    assert_eq!(results(&e, m), ["A1", "A2", "A3"]);
    assert!(!e.is_dirty(m));
    assert!(e.step().is_empty(), "nothing regenerates after the undo");
    assert_eq!(
        prop(&e, lib, "Source"),
        Some(Variant::String("return { prefix = \"A\" }".into()))
    );
    // ... and the restored code is what the next run requires.
    e.force_generation(m);
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(results(&e, m), ["A1", "A2", "A3"], "the restored code ran");

    // Redo brings the edit's Source, results and code back.
    assert!(e.redo());
    assert_eq!(results(&e, m), ["B1", "B2", "B3"]);
    assert!(e.step().is_empty(), "nothing regenerates after the redo");
    e.force_generation(m);
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(results(&e, m), ["B1", "B2", "B3"], "the redone code ran");
}

/// A saved scene whose dirty models sit two ProceduralModels deep (in the results of models
/// saved fresh), loaded with `max_depth` 1 and `jobs`; the saved bytes and the reports.
fn too_deep_scene(jobs: usize) -> (Vec<u8>, Vec<procmodel_engine::Report>) {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let g = module(&mut e, "Row", ROW);
    let outer = model(&mut e, g, &[]);
    // Results as a run leaves them: a GeneratedFolder under the model, holding models.
    let results = |e: &mut Engine, model: Ref, names: &[&str], dirty: bool| -> Ref {
        let folder = e.insert(
            model,
            InstanceBuilder::new("GeneratedFolder").with_name("GeneratedFolder"),
        );
        for name in names {
            e.insert(
                folder,
                InstanceBuilder::new("ProceduralModel")
                    .with_name(*name)
                    .with_property("Generator", Variant::Ref(g))
                    .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
                    .with_property("Dirty", Variant::Bool(dirty)),
            );
        }
        folder
    };
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(outer)
            .unwrap()
            .properties
            .insert(Ustr::from("Dirty"), Variant::Bool(false))
    });
    let folder = results(&mut e, outer, &["Middle"], false);
    let middle = e.with_dom(|d| d.get_by_ref(folder).unwrap().children()[0]);
    results(&mut e, middle, &["C", "D"], true);
    let saved = tmp(&format!("too-deep-{jobs}.rbxl"));
    e.save(&saved).unwrap();
    let mut e = Engine::load(
        procmodel_luau::runtime(),
        &saved,
        EngineConfig {
            max_depth: 1,
            jobs,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let reports = e.step();
    let out = tmp(&format!("too-deep-{jobs}-out.rbxl"));
    e.save(&out).unwrap();
    (std::fs::read(out).unwrap(), reports)
}

#[test]
fn models_nested_too_deep_fail_alike_with_one_job_or_two() {
    // The parallel path used to word the nesting failure differently, so the saved
    // GenerationError depended on --jobs.
    let (one, r1) = too_deep_scene(1);
    let (two, r2) = too_deep_scene(2);
    for reports in [&r1, &r2] {
        let failures: Vec<_> = reports.iter().filter_map(|r| r.failure()).collect();
        assert_eq!(failures.len(), 2, "{reports:?}");
        for f in failures {
            assert_eq!(
                *f,
                procmodel_engine::GenerationFailure::Nesting { depth: 2, limit: 1 }
            );
        }
    }
    assert!(one == two, "the saved scenes differ between --jobs 1 and 2");
}

#[test]
fn parallel_runs_record_the_inputs_their_models_have_after_defaults_are_filled() {
    // A worker records the provenance of its results; applying them fills in the
    // generator's default attributes, and the recorded inputs must be those (or `status`
    // calls the fresh results stale).
    let build = |jobs: usize| {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        // Each run spins long enough that the worker, once its VM is up, takes some.
        let slow = ROW.replace(
            "function G.OnGenerate(params, target)",
            "function G.OnGenerate(params, target)\n    local x = 0\n    for i = 1, 300000 do x = x + i % 7 end",
        );
        let g = module(&mut e, "Row", &slow);
        let models: Vec<Ref> = (0..12).map(|_| model(&mut e, g, &[])).collect();
        assert!(e.step().iter().all(|r| r.is_ok()));
        for &m in &models {
            let status = e.with_dom(|d| procmodel_engine::provenance::status(d, m));
            assert_eq!(
                status,
                procmodel_engine::provenance::Status::Fresh,
                "jobs {jobs}"
            );
        }
        let out = tmp(&format!("defaults-{jobs}.rbxl"));
        e.save(&out).unwrap();
        std::fs::read(out).unwrap()
    };
    assert!(
        build(1) == build(2),
        "the saved scenes differ between --jobs 1 and 2"
    );
}

#[test]
fn a_model_whose_inputs_a_later_generator_changes_regenerates_at_the_next_step() {
    // B runs first; A's generator (unsandboxed, so it may write outside its results) then
    // sets B's Count. B is dirty again and regenerates at the next step, as for any input
    // change between steps; settling ends with B built from the new value.
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let row = module(&mut e, "Row", ROW);
    let b = model(&mut e, row, &[]);
    e.with_dom_mut(|d| d.get_by_ref_mut(b).unwrap().name = "B".into());
    let setter = module(
        &mut e,
        "Setter",
        r#"return { OnGenerate = function(params, target)
            workspace.B:SetAttribute("Count", 5)
        end }"#,
    );
    let a = model(&mut e, setter, &[]);
    let first = e.step();
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(first.iter().all(|r| r.is_ok()), "{first:?}");
    assert_eq!(results(&e, b), ["P1", "P2", "P3"]);
    assert!(e.is_dirty(b) || e.detect_changes().contains(&b));
    let second = e.step();
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0].model, b);
    assert_eq!(results(&e, b), ["P1", "P2", "P3", "P4", "P5"]);
    assert_eq!(e.runs(a), 1);
    assert!(e.step().is_empty());
}

#[test]
fn generators_on_worker_vms_see_the_scenes_game_and_workspace() {
    // A worker's VM starts with a DataModel of its own and then runs over copies of the
    // scene: `game` and `workspace` must be the scene's, not that first DataModel's (they
    // were, so every model a worker took failed with "instance no longer exists").
    const READS_THE_SCENE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local x = 0
    for i = 1, 300000 do x = x + i % 7 end
    local ws = game:GetService("Workspace")
    assert(ws == workspace and workspace == Workspace and game == Game, "globals differ")
    assert(workspace:FindFirstChild("Marker"), "no Marker in the workspace")
    local p = Instance.new("Part")
    p.Name = workspace.Name .. "/" .. game.ClassName .. "/" .. #workspace:GetChildren()
    p.Parent = target
end
return G
"#;
    let build = |jobs: usize| {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let ws = e.workspace();
        e.insert(ws, InstanceBuilder::new("Part").with_name("Marker"));
        let g = module(&mut e, "Reads", READS_THE_SCENE);
        let models: Vec<Ref> = (0..12)
            .map(|i| model(&mut e, g, &[("K", Variant::Float64(i as f64))]))
            .collect();
        for round in 0..2 {
            let reports = e.step();
            assert_eq!(reports.len(), 12);
            for r in &reports {
                assert!(r.is_ok(), "jobs {jobs}, round {round}: {r:?}");
            }
            for &m in &models {
                e.force_generation(m);
            }
        }
        let out = tmp(&format!("reads-scene-{jobs}-{}.rbxl", rand_name()));
        e.save(&out).unwrap();
        std::fs::read(out).unwrap()
    };
    assert!(
        build(1) == build(2),
        "the saved scenes differ between --jobs 1 and 2"
    );
}

#[test]
fn a_generator_can_wait_on_heartbeat_whichever_vm_runs_it() {
    // Old scripts yield in long loops with `RunService.Heartbeat:Wait()`. A generation
    // stepped frame by frame (the engine's VM outside a parallel step) failed there with
    // "the generator yielded and nothing will resume it"; one run to completion (a worker)
    // stepped an empty frame. Both now wait one frame.
    const WAITS: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local run = game:GetService("RunService")
    local total = 0
    for i = 1, 3 do
        local dt = run.Heartbeat:Wait()
        total += dt
        local p = Instance.new("Part")
        p.Name = "Step" .. i
        p.Parent = target
    end
    target:SetAttribute("Waited", math.floor(total * 600 + 0.5))
    -- A connected handler fires every frame while the run waits.
    local beats = 0
    local c = run.Heartbeat:Connect(function() beats += 1 end)
    task.wait(0.25)
    c:Disconnect()
    target:SetAttribute("Beats", beats)
end
return G
"#;
    let build = |jobs: usize| {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let g = module(&mut e, "Waits", WAITS);
        for k in 0..6 {
            model(&mut e, g, &[("K", Variant::Float64(k as f64))]);
        }
        let reports = e.settle(50);
        assert_eq!(reports.len(), 6, "jobs {jobs}: {reports:?}");
        for r in &reports {
            assert!(r.is_ok(), "jobs {jobs}: {r:?}");
        }
        for m in e.models() {
            let folder = e.with_dom(|d| {
                d.get_by_ref(m)
                    .unwrap()
                    .children()
                    .iter()
                    .copied()
                    .find(|&c| d.get_by_ref(c).unwrap().class == "GeneratedFolder")
                    .unwrap()
            });
            let beats = match prop(&e, folder, "Attributes") {
                Some(Variant::Attributes(a)) => a.get("Beats").cloned(),
                _ => None,
            };
            // A quarter second at 60 frames a second.
            assert_eq!(beats, Some(Variant::Float64(15.0)), "jobs {jobs}");
        }
        let out = tmp(&format!("heartbeat-{jobs}-{}.rbxl", rand_name()));
        e.save(&out).unwrap();
        std::fs::read(out).unwrap()
    };
    let one = build(1);
    assert!(
        one == build(2),
        "the saved scenes differ between --jobs 1 and 2"
    );
}

#[test]
fn a_generators_clock_and_math_random_are_its_own_whatever_ran_before_or_beside_it() {
    // Each run's virtual clock starts at 0 and moves only with its own waits: os.clock()
    // read after task.wait(0.1) was 0.1, 0.2, 0.3, ... on a worker that had run other
    // models before, and what runs interleaved on the scene's VM saw depended on each other.
    const CLOCK: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local x = 0
    for i = 1, 200000 do x = x + i % 7 end
    local first = math.random()
    local waited = task.wait(0.1)
    target:SetAttribute("T", os.clock())
    target:SetAttribute("Waited", waited)
    -- math.random is the run's own stream too (seed 0 unless the run reseeds it).
    target:SetAttribute("R", first + math.random(1000))
end
return G
"#;
    let build = |jobs: usize| {
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let g = module(&mut e, "Clock", CLOCK);
        for k in 0..6 {
            model(&mut e, g, &[("K", Variant::Float64(k as f64))]);
        }
        for round in 0..2 {
            let reports = e.settle(50);
            assert!(
                reports.iter().all(|r| r.is_ok()),
                "jobs {jobs}: {reports:?}"
            );
            for m in e.models() {
                let folder = e.with_dom(|d| {
                    d.get_by_ref(m)
                        .unwrap()
                        .children()
                        .iter()
                        .copied()
                        .find(|&c| d.get_by_ref(c).unwrap().class == "GeneratedFolder")
                        .unwrap()
                });
                let attrs = match prop(&e, folder, "Attributes") {
                    Some(Variant::Attributes(a)) => a,
                    _ => panic!("no attributes"),
                };
                assert_eq!(
                    attrs.get("T"),
                    Some(&Variant::Float64(0.1)),
                    "jobs {jobs}, round {round}"
                );
                let mut rng = procmodel_base::Pcg32::new(0);
                let expected = rng.next_f64() + f64::from(rng.next_upto(1000).unwrap());
                assert_eq!(
                    attrs.get("R"),
                    Some(&Variant::Float64(expected)),
                    "jobs {jobs}, round {round}"
                );
            }
            for m in e.models() {
                e.force_generation(m);
            }
        }
        let out = tmp(&format!("clock-{jobs}-{}.rbxl", rand_name()));
        e.save(&out).unwrap();
        std::fs::read(out).unwrap()
    };
    let one = build(1);
    assert!(
        one == build(2),
        "the saved scenes differ between --jobs 1 and 2"
    );
}

#[test]
fn a_folder_a_string_require_reaches_is_a_module_with_its_children() {
    // `require("./Lib")` from a generator file reaches Lib/init.luau: the folder is one
    // module (named Lib) whose files are its children, so `script.Helper` in it is found, and
    // `@self/Helper` is that same child (required once).
    let dir = tmp("string-folder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("Lib")).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        "local Lib = require('./Lib')\nreturn { Attributes = {}, OnGenerate = function(_, t)\n\tlocal p = Instance.new('Part')\n\tp.Name = Lib.name .. Lib.value\n\tp.Parent = t\nend }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Lib/init.luau"),
        "local H = require(script.Helper)\nassert(require('@self/Helper') == H)\nreturn { name = script.Name, value = H.n * 2 }\n",
    )
    .unwrap();
    std::fs::write(dir.join("Lib/Helper.luau"), "return { n = 21 }\n").unwrap();
    let (mut e, _, m) = file_generator_model(&dir.join("Gen.luau"));
    let r = e.step();
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    assert_eq!(results(&e, m), ["Lib42"]);
}

/// A generator file's modules required by path are read from disk, outside the scene's
/// tree: a saved scene held the generator alone, and `./Shape` failed when the place was
/// regenerated (a sweep's every variant, a studio Save). `save` now writes a copy of each
/// where its file sits — `./Shape` a sibling, `@self/Part` a child, `./lib/Deep` in a
/// Folder — and leaves the live scene as it was.
#[test]
fn a_saved_scene_holds_the_modules_its_file_generator_required_by_path() {
    let dir = tmp("save-bundle");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("Gen")).unwrap();
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("Kit")).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        "local Shape = require('./Shape')\nlocal Part = require('@self/Part')\nlocal Kit = require('./Kit')\nreturn { Attributes = {}, OnGenerate = function(_, t)\n\tlocal Deep = require('./lib/Deep')\n\tlocal p = Instance.new('Part')\n\tp.Name = Shape.name .. Part.name .. Deep.name .. Kit.name\n\tp.Parent = t\nend }\n",
    )
    .unwrap();
    // A module folder: placed whole, its files its children (its Helper sorts before init).
    std::fs::write(
        dir.join("Kit/init.luau"),
        "return { name = require(script.Helper).name }\n",
    )
    .unwrap();
    std::fs::write(dir.join("Kit/Helper.luau"), "return { name = 'Kit' }\n").unwrap();
    std::fs::write(dir.join("Shape.luau"), "return { name = 'Shape' }\n").unwrap();
    std::fs::write(dir.join("Gen/Part.luau"), "return { name = 'Part' }\n").unwrap();
    std::fs::write(dir.join("lib/Deep.luau"), "return { name = 'Deep' }\n").unwrap();
    let (mut e, _, m) = file_generator_model(&dir.join("Gen.luau"));
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(results(&e, m), ["ShapePartDeepKit"]);
    let names = |e: &Engine| {
        e.with_dom(|d| {
            let storage = d
                .root()
                .children()
                .iter()
                .copied()
                .find(|&c| d.get_by_ref(c).unwrap().class == "ServerStorage")
                .unwrap();
            let mut out = Vec::new();
            for r in d.descendants_of(storage) {
                if r.referent() != storage {
                    out.push(procmodel_dom::full_name(d, r.referent()));
                }
            }
            out
        })
    };
    let before = names(&e);
    assert_eq!(before, ["ServerStorage.Gen"]);
    let place = dir.join("saved.rbxlx");
    e.save(&place).unwrap();
    assert_eq!(names(&e), before, "the live scene is as it was");
    let mut loaded =
        Engine::load(procmodel_luau::runtime(), &place, EngineConfig::default()).unwrap();
    let mut saved = names(&loaded);
    saved.sort();
    assert_eq!(
        saved,
        [
            "ServerStorage.Gen",
            "ServerStorage.Gen.Part",
            "ServerStorage.Kit",
            "ServerStorage.Kit.Helper",
            "ServerStorage.Shape",
            "ServerStorage.lib",
            "ServerStorage.lib.Deep"
        ]
    );
    assert!(!e.is_dirty(m), "the live model keeps its Dirty");
    // Saved dirty: its results recorded no module read from a file, so it regenerates once
    // and records the placed ones, and an edit of one is then seen.
    let again = loaded.models()[0];
    assert!(loaded.is_dirty(again));
    let r = loaded.step();
    assert!(r.iter().all(|r| r.is_ok()) && r.len() == 1, "{r:?}");
    assert_eq!(results(&loaded, again), ["ShapePartDeepKit"]);
    assert!(loaded.step().is_empty(), "fresh");
    let recorded = loaded.with_dom(|d| {
        let folder = generated_folder(d, again).unwrap();
        match d
            .get_by_ref(folder)
            .unwrap()
            .properties
            .get(&"Attributes".into())
        {
            Some(Variant::Attributes(a)) => match a.get("ProcmodelModules") {
                Some(Variant::String(s)) => s.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    });
    for name in [
        "ServerStorage.Shape",
        "ServerStorage.Gen.Part",
        "ServerStorage.lib.Deep",
    ] {
        assert!(recorded.contains(name), "{recorded}");
    }
}

/// A generator file that picks a module by an attribute (`./Desert` in one branch,
/// `./Forest` in another) was saved with the module its runs took alone: the place, opened
/// again with another value, failed with "cannot require". The files its text requires are
/// saved too, followed from file to file, and every branch regenerates from the saved scene.
#[test]
fn a_saved_scene_holds_the_modules_another_attribute_value_requires() {
    let dir = tmp("save-bundle-branches");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("Biomes")).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        "return { Attributes = { Biome = 'Desert' }, OnGenerate = function(params, t)
	local b = if params.Attributes.Biome == 'Desert' then require('./Biomes/Desert') else require('./Biomes/Forest')
	local p = Instance.new('Part')
	p.Name = b.name
	p.Parent = t
end }
",
    )
    .unwrap();
    std::fs::write(
        dir.join("Biomes/Desert.luau"),
        "return { name = 'Sand' }
",
    )
    .unwrap();
    std::fs::write(
        dir.join("Biomes/Forest.luau"),
        "return { name = 'Forest' .. require('./Tree').kind }
",
    )
    .unwrap();
    std::fs::write(
        dir.join("Biomes/Tree.luau"),
        "return { kind = 'Oak' }
",
    )
    .unwrap();
    std::fs::write(
        dir.join("Biomes/Unused.luau"),
        "return {}
",
    )
    .unwrap();
    let (mut e, _, m) = file_generator_model(&dir.join("Gen.luau"));
    assert!(e.step().iter().all(|r| r.is_ok()));
    assert_eq!(results(&e, m), ["Sand"]);
    let place = dir.join("saved.rbxl");
    e.save(&place).unwrap();
    let mut loaded =
        Engine::load(procmodel_luau::runtime(), &place, EngineConfig::default()).unwrap();
    let mut modules = loaded.with_dom(|d| {
        d.descendants()
            .filter(|i| i.class == "ModuleScript")
            .map(|i| i.name.to_string())
            .collect::<Vec<_>>()
    });
    modules.sort();
    assert_eq!(modules, ["Desert", "Forest", "Gen", "Tree"]);
    let again = loaded.models()[0];
    loaded
        .set_attribute(again, "Biome", Some(Variant::String("Forest".into())))
        .unwrap();
    let r = loaded.step();
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    assert_eq!(results(&loaded, again), ["ForestOak"]);
}

/// A module read from a file cannot be saved beside its generator when an instance of its
/// name is already there (it would hide it, or be hidden): the save fails naming the file,
/// writes nothing, and leaves the live scene as it was.
#[test]
fn a_required_file_whose_name_is_taken_beside_the_generator_is_not_saved() {
    let dir = tmp("save-bundle-taken");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Gen.luau"),
        "local Shape = require('./Shape')\nreturn { Attributes = {}, OnGenerate = function(_, t)\n\tlocal p = Instance.new('Part')\n\tp.Name = Shape.name\n\tp.Parent = t\nend }\n",
    )
    .unwrap();
    std::fs::write(dir.join("Shape.luau"), "return { name = 'Shape' }\n").unwrap();
    let (mut e, storage, m) = file_generator_model(&dir.join("Gen.luau"));
    assert!(e.step().iter().all(|r| r.is_ok()));
    // A Part named Shape beside the generator.
    e.with_dom_mut(|d| {
        d.insert(
            storage,
            rbx_dom_weak::InstanceBuilder::new("Part").with_name("Shape"),
        );
    });
    let count = |e: &Engine| e.with_dom(|d| d.descendants_of(storage).count());
    let before = count(&e);
    let place = dir.join("saved.rbxlx");
    let error = e.save(&place).unwrap_err().to_string();
    assert!(
        error.contains("saved.rbxlx")
            && error.contains("Shape.luau")
            && error.contains("already there"),
        "{error}"
    );
    assert!(!place.exists(), "nothing written");
    assert_eq!(count(&e), before, "nothing left placed");
    assert!(!e.is_dirty(m));
}

#[test]
fn what_runs_on_worker_vms_print_reaches_the_engines_output() {
    // With jobs > 1 most runs happen on workers: their print lines come back with their
    // results, so a front end's Output shows every model's (the studio's panel, MCP).
    let src = r#"return { Attributes = { N = 0 }, OnGenerate = function(params, target)
        print("model", params.Attributes.N)
    end }"#;
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs: 2,
            host: procmodel_luau::HostConfig {
                echo_output: false,
                ..procmodel_luau::HostConfig::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, "Printer", src);
    for i in 0..8 {
        model(&mut e, g, &[("N", Variant::Float64(f64::from(i)))]);
    }
    assert!(e.step().iter().all(|r| r.is_ok()));
    let mut lines: Vec<String> = e.take_output().into_iter().map(|l| l.message).collect();
    lines.sort();
    let want: Vec<String> = (0..8).map(|i| format!("[Printer] model {i}")).collect();
    assert_eq!(lines, want);
    assert!(e.take_output().is_empty(), "taken once");
}
