//! The result cache seam (issue 14): a hit gives the same scene bytes as a fresh run, in
//! both file formats and on any number of workers; damaged entries are ignored; the
//! provenance a run records names every input that changed since.

use procmodel_engine::provenance::{Status, status};
use procmodel_engine::{Engine, EngineConfig, MemoryCache, ResultCache};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Attributes, Ref, Variant, Vector3};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Parts with unquantised colours, a weld between two of them, a nested folder, tags,
/// attributes, a PrimaryPart and a quarter turn in float noise (a file format may store it
/// as an exact basic rotation): what could go wrong through a file round trip.
const GEN: &str = r#"
local G = {}
G.Attributes = { Count = 4, Seed = 7, Label = "a" }
function G.OnGenerate(params, target)
    local rng = Random.new(params.Attributes.Seed)
    local folder = Instance.new("Folder")
    folder.Name = "Inner"
    folder.Parent = target
    local first
    for i = 1, params.Attributes.Count do
        local p = Instance.new("Part")
        p.Name = "P" .. i
        p.Size = Vector3.new(rng:NextNumber(1, 3), 1, params.Size.Z / 4)
        p.CFrame = CFrame.new(i * 2, 0, 0) * CFrame.Angles(0, rng:NextNumber(), 0)
        p.Color = Color3.new(rng:NextNumber(), 0.5, 0.123)
        p.Anchored = i % 2 == 0
        p:SetAttribute("Index", i)
        p:AddTag("step")
        p.Parent = if i % 2 == 0 then folder else target
        if first then
            local w = Instance.new("WeldConstraint")
            w.Part0 = first
            w.Part1 = p
            w.Parent = p
        else
            first = p
        end
    end
    local label = Instance.new("StringValue")
    label.Value = params.Attributes.Label
    label.Parent = target
    local pole = Instance.new("Part")
    pole.Name = "Pole"
    pole.CFrame = CFrame.new(0, 3, 0) * CFrame.Angles(0, 0, math.rad(90))
    pole.Parent = target
    target:SetPrimaryPart(first)
end
return G
"#;

/// An in-memory cache that counts what happens, optionally damaging what it returns.
#[derive(Debug, Default)]
struct Mem {
    entries: Mutex<BTreeMap<[u8; 32], Vec<u8>>>,
    hits: AtomicUsize,
    kept: AtomicUsize,
    puts: AtomicUsize,
    rejected: AtomicUsize,
    damage: bool,
}

impl ResultCache for Mem {
    fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let mut e = self.entries.lock().unwrap().get(key).cloned()?;
        if self.damage {
            // A flipped bit deep in the results (past the headers).
            let n = e.len() - 40;
            e[n] ^= 0x10;
        }
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(e)
    }
    fn put(&self, key: &[u8; 32], entry: &[u8]) {
        self.puts.fetch_add(1, Ordering::Relaxed);
        self.entries.lock().unwrap().insert(*key, entry.to_vec());
    }
    fn reject(&self, _key: &[u8; 32], _reason: &str) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }
    fn kept(&self, _key: &[u8; 32]) {
        self.kept.fetch_add(1, Ordering::Relaxed);
    }
}

/// A scene of `n` models of GEN (one scaled, one moved), the engine and the models.
fn scene(cache: Option<Arc<dyn ResultCache>>, jobs: usize, n: usize) -> (Engine, Vec<Ref>) {
    scene_with(
        EngineConfig {
            cache,
            jobs,
            ..EngineConfig::default()
        },
        n,
    )
}

fn scene_with(config: EngineConfig, n: usize) -> (Engine, Vec<Ref>) {
    let mut e = Engine::new(procmodel_luau::runtime(), config).unwrap();
    let root = e.with_dom(|d| d.root_ref());
    let g = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen")
            .with_property("Source", Variant::String(GEN.to_owned())),
    );
    let ws = e.workspace();
    let models = (0..n)
        .map(|i| {
            let mut a = Attributes::new();
            a.insert("Count".into(), Variant::Float64(3.0 + (i % 3) as f64));
            let mut b = InstanceBuilder::new("ProceduralModel")
                .with_name(format!("M{i}"))
                .with_property("Generator", Variant::Ref(g))
                .with_property("Size", Vector3::new(8.0, 8.0, 8.0 + i as f32))
                .with_property("Attributes", Variant::Attributes(a));
            if i == 1 {
                b = b.with_property("Scale", Variant::Float32(2.0));
            }
            if i == 2 {
                b = b.with_property(
                    "WorldPivotData",
                    Variant::OptionalCFrame(Some(rbx_types::CFrame::new(
                        Vector3::new(10.0, 5.0, -3.0),
                        rbx_types::Matrix3::identity(),
                    ))),
                );
            }
            e.insert(ws, b)
        })
        .collect();
    (e, models)
}

fn saved(e: &Engine, ext: &str) -> Vec<u8> {
    let dir = procmodel_testkit::scratch("engine-cache");
    let n = SAVES.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("scene{n}.{ext}"));
    e.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

static SAVES: AtomicUsize = AtomicUsize::new(0);

fn settle(e: &mut Engine) -> Vec<procmodel_engine::Report> {
    let reports = e.settle(100);
    assert!(reports.iter().all(|r| r.is_ok()), "{reports:?}");
    reports
}

/// Whether each report says its results came from the cache.
fn cached(reports: &[procmodel_engine::Report]) -> Vec<bool> {
    reports.iter().map(|r| r.cached).collect()
}

/// Forces every model to generate again and settles: the reports.
fn regenerate_all(e: &mut Engine) -> Vec<procmodel_engine::Report> {
    for m in e.models() {
        e.force_generation(m);
    }
    settle(e)
}

/// [`regenerate_all`] after an edit the engine cannot see into (an empty `with_dom_mut`),
/// so results it placed are checked, not taken as untouched.
fn regenerate_all_unseen(e: &mut Engine) -> Vec<procmodel_engine::Report> {
    e.with_dom_mut(|_| {});
    regenerate_all(e)
}

/// The names of the Parts in the scene, in order.
fn part_names(e: &Engine) -> Vec<String> {
    e.with_dom(|d| {
        d.descendants()
            .filter(|i| i.class == "Part" && procmodel_dom::in_scene(d, i.referent()))
            .map(|i| i.name.to_string())
            .collect()
    })
}

#[test]
fn r14_5_a_hit_saves_the_same_bytes_as_a_fresh_run() {
    let (mut fresh, _) = scene(None, 1, 4);
    settle(&mut fresh);
    let cache = Arc::new(Mem::default());
    let (mut filling, _) = scene(Some(cache.clone()), 1, 4);
    assert_eq!(
        cached(&settle(&mut filling)),
        [false; 4],
        "runs are not hits"
    );
    // Under the inputs it started from and, defaults filled in, the ones it leaves.
    assert_eq!(cache.puts.load(Ordering::Relaxed), 8, "every run stored");
    assert_eq!(cache.hits.load(Ordering::Relaxed), 0);
    let (mut hit, _) = scene(Some(cache.clone()), 1, 4);
    assert_eq!(cached(&settle(&mut hit)), [true; 4], "hits say so");
    assert_eq!(cache.hits.load(Ordering::Relaxed), 4, "every model a hit");
    assert_eq!(cache.rejected.load(Ordering::Relaxed), 0);
    for ext in ["rbxl", "rbxlx"] {
        let a = saved(&fresh, ext);
        assert_eq!(
            a,
            saved(&filling, ext),
            "{ext}: filling the cache changes nothing"
        );
        assert_eq!(a, saved(&hit, ext), "{ext}: a hit is the fresh run's bytes");
    }
}

#[test]
fn r14_5_hits_on_workers_and_on_toggling_an_attribute_back() {
    let (mut fresh, _) = scene(None, 1, 5);
    settle(&mut fresh);
    let cache = Arc::new(Mem::default());
    let (mut a, _) = scene(Some(cache.clone()), 2, 5);
    settle(&mut a);
    let (mut b, models) = scene(Some(cache.clone()), 2, 5);
    settle(&mut b);
    assert_eq!(cache.hits.load(Ordering::Relaxed), 5);
    assert_eq!(saved(&fresh, "rbxl"), saved(&b, "rbxl"));
    // Count 3 -> 9 -> 3: the third generation is a hit. The Count-3 results are still held
    // by the undo step of the first change, intact: they come back from there, and no
    // entry is read.
    let m = models[0];
    b.set_attribute(m, "Count", Some(Variant::Float64(9.0)))
        .unwrap();
    settle(&mut b);
    let (hits, kept) = (
        cache.hits.load(Ordering::Relaxed),
        cache.kept.load(Ordering::Relaxed),
    );
    b.set_attribute(m, "Count", Some(Variant::Float64(3.0)))
        .unwrap();
    settle(&mut b);
    assert_eq!(cache.hits.load(Ordering::Relaxed), hits);
    assert_eq!(cache.kept.load(Ordering::Relaxed), kept + 1);
    assert_eq!(saved(&fresh, "rbxl"), saved(&b, "rbxl"));
}

/// An engine over `n` models of GEN with an in-memory cache, settled: the engine, the
/// models, the cache and each model's results folder.
fn toggled_scene(jobs: usize, n: usize) -> (Engine, Vec<Ref>, Arc<Mem>, Vec<Ref>) {
    let cache = Arc::new(Mem::default());
    let (mut e, models) = scene(Some(cache.clone()), jobs, n);
    settle(&mut e);
    let folders = folders(&e, &models);
    (e, models, cache, folders)
}

fn folders(e: &Engine, models: &[Ref]) -> Vec<Ref> {
    e.with_dom(|d| {
        models
            .iter()
            .map(|&m| procmodel_engine::provenance::results(d, m).unwrap())
            .collect()
    })
}

fn counts(cache: &Mem) -> (usize, usize) {
    (
        cache.hits.load(Ordering::Relaxed),
        cache.kept.load(Ordering::Relaxed),
    )
}

fn set_count(e: &mut Engine, m: Ref, count: f64) -> Vec<procmodel_engine::Report> {
    e.set_attribute(m, "Count", Some(Variant::Float64(count)))
        .unwrap();
    settle(e)
}

#[test]
fn r14_5_an_attribute_toggled_back_takes_its_results_back_from_the_undo_history() {
    let (mut fresh, fresh_models) = scene(None, 1, 2);
    settle(&mut fresh);
    let three = results_hashes(&fresh, &fresh_models);
    for jobs in [1, 2] {
        let (mut e, models, cache, first) = toggled_scene(jobs, 2);
        let m = models[0];
        assert_eq!(cached(&set_count(&mut e, m, 9.0)), [false], "jobs {jobs}");
        let nine = folders(&e, &models)[0];
        let nine_hash = results_hashes(&e, &models)[0];
        // Back to 3: the very folder of the first generation, nothing read.
        let before = counts(&cache);
        assert_eq!(cached(&set_count(&mut e, m, 3.0)), [true], "jobs {jobs}");
        assert_eq!(counts(&cache), (before.0, before.1 + 1), "jobs {jobs}");
        assert_eq!(
            folders(&e, &models),
            first,
            "jobs {jobs}: the same instances"
        );
        assert!(results_hashes(&e, &models) == three, "jobs {jobs}");
        assert!(!e.is_dirty(m));
        assert_eq!(saved(&fresh, "rbxl"), saved(&e, "rbxl"), "jobs {jobs}");
        // And to 9 again: the Count-9 folder, from the second change's undo step.
        set_count(&mut e, m, 9.0);
        assert_eq!(counts(&cache), (before.0, before.1 + 2), "jobs {jobs}");
        assert_eq!(folders(&e, &models)[0], nine, "jobs {jobs}");
        // Undo walks back through 3, 9, 3 and redo forward again, each step bringing back
        // the results of its inputs, wherever the toggles moved them.
        for (step, want) in [first[0], nine, first[0]].into_iter().enumerate() {
            assert!(e.undo(), "jobs {jobs}: undo {step}");
            assert_eq!(folders(&e, &models)[0], want, "jobs {jobs}: undo {step}");
            assert!(!e.is_dirty(m), "jobs {jobs}: undo {step}");
        }
        assert!(results_hashes(&e, &models) == three);
        for step in 0..3 {
            assert!(e.redo(), "jobs {jobs}: redo {step}");
            assert!(!e.is_dirty(m), "jobs {jobs}: redo {step}");
        }
        assert_eq!(folders(&e, &models)[0], nine);
        assert!(results_hashes(&e, &models)[0] == nine_hash);
        // Nothing was generated or read for any of it.
        assert_eq!(counts(&cache).0, before.0, "jobs {jobs}");
    }
}

#[test]
fn r14_5_held_results_a_script_wrote_to_are_not_taken_back() {
    let (mut fresh, fresh_models) = scene(None, 1, 2);
    settle(&mut fresh);
    let cache = Arc::new(Mem::default());
    let (mut e, models) = scene(Some(cache.clone()), 1, 2);
    // Scripts share state through a module.
    let root = e.with_dom(|d| d.root_ref());
    e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Store")
            .with_property("Source", Variant::String("return {}".into())),
    );
    settle(&mut e);
    let first = folders(&e, &models);
    // Untouched, M1's results toggled away and back come back from the undo history.
    set_count(&mut e, models[1], 9.0);
    let before = counts(&cache);
    set_count(&mut e, models[1], 4.0);
    assert_eq!(counts(&cache), (before.0, before.1 + 1));
    assert_eq!(folders(&e, &models)[1], first[1]);
    // A script keeps a part of M0's results, which a change then replaces (the undo step
    // holds them), and renames it there.
    run_luau(
        &mut e,
        "require(game.Store).kept = workspace.M0.GeneratedFolder.Pole",
    );
    set_count(&mut e, models[0], 9.0);
    run_luau(&mut e, "require(game.Store).kept.Name = 'Edited'");
    let edited = e.with_dom(|d| {
        d.get_by_ref(first[0])
            .unwrap()
            .children()
            .iter()
            .any(|&c| d.get_by_ref(c).unwrap().name == "Edited")
    });
    assert!(edited, "the held results were written to");
    // Back to 3: the held folder is not intact, the entry is decoded instead.
    let before = counts(&cache);
    set_count(&mut e, models[0], 3.0);
    assert_eq!(counts(&cache), (before.0 + 1, before.1));
    assert_ne!(folders(&e, &models)[0], first[0]);
    assert!(results_hashes(&e, &models) == results_hashes(&fresh, &fresh_models));
}

#[test]
fn r14_5_undo_regenerates_results_it_can_no_longer_bring_back() {
    let (mut fresh, fresh_models) = scene(None, 1, 1);
    settle(&mut fresh);
    let (mut e, models, cache, first) = toggled_scene(1, 1);
    let m = models[0];
    set_count(&mut e, m, 9.0);
    set_count(&mut e, m, 3.0);
    assert_eq!(
        folders(&e, &models),
        first,
        "taken back from the first undo step"
    );
    // A front end's direct access to the DOM: no held result is vouched for any more.
    e.with_dom_mut(|_| ());
    // Undo the second change (the Count-9 results come back from its step, as always),
    // then the first: its results (Count 3) were taken, and the record that would find
    // them again is forgotten. The model is left dirty and generated again.
    assert!(e.undo());
    assert!(!e.is_dirty(m));
    assert!(e.undo());
    assert!(e.is_dirty(m), "its results are to be generated again");
    let before = counts(&cache);
    settle(&mut e);
    assert!(!e.is_dirty(m));
    assert_eq!(counts(&cache).0, before.0 + 1, "a hit, decoded");
    assert!(results_hashes(&e, &models) == results_hashes(&fresh, &fresh_models));
    assert_eq!(saved(&fresh, "rbxl"), saved(&e, "rbxl"));
}

/// Every instance under each model's results folder, by model (pre-order referents).
fn result_refs(e: &Engine, models: &[Ref]) -> Vec<Vec<Ref>> {
    e.with_dom(|d| {
        models
            .iter()
            .map(|&m| {
                let f = procmodel_engine::provenance::results(d, m).unwrap();
                d.descendants_of(f).map(|i| i.referent()).collect()
            })
            .collect()
    })
}

/// The content hash of each model's results.
fn results_hashes(e: &Engine, models: &[Ref]) -> Vec<[u8; 32]> {
    e.with_dom(|d| {
        models
            .iter()
            .map(|&m| {
                let f = procmodel_engine::provenance::results(d, m).unwrap();
                procmodel_dom::hash::children_hash(d, f)
            })
            .collect()
    })
}

/// An engine over the scene file `path`, with `cache` and `jobs` VMs.
fn load_cached(path: &std::path::Path, cache: Arc<dyn ResultCache>, jobs: usize) -> Engine {
    Engine::load(
        procmodel_luau::runtime(),
        path,
        EngineConfig {
            cache: Some(cache),
            jobs,
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

/// Runs the Luau script `source` on the scene (from a file, as `procmodel run` does).
fn run_luau(e: &mut Engine, source: &str) {
    static SCRIPTS: AtomicUsize = AtomicUsize::new(0);
    let dir = procmodel_testkit::scratch("engine-scripts");
    let n = SCRIPTS.fetch_add(1, Ordering::Relaxed);
    let script = dir.join(format!("script{n}.luau"));
    std::fs::write(&script, source).unwrap();
    let result = e.run_script(&script);
    let _ = std::fs::remove_file(&script);
    result.unwrap();
}

fn force_all(e: &mut Engine, models: &[Ref]) {
    for &m in models {
        assert!(e.force_generation(m));
    }
    let reports = e.step();
    assert_eq!(reports.len(), models.len());
    assert!(reports.iter().all(|r| r.is_ok()), "{reports:?}");
}

#[test]
fn r14_5_forcing_untouched_results_keeps_them_without_reading_the_cache() {
    let (mut fresh, _) = scene(None, 1, 3);
    settle(&mut fresh);
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let (mut e, models) = scene(Some(cache.clone()), jobs, 3);
        settle(&mut e);
        let before = result_refs(&e, &models);
        force_all(&mut e, &models);
        assert_eq!(
            cache.kept.load(Ordering::Relaxed),
            3,
            "jobs {jobs}: every model kept"
        );
        assert_eq!(
            cache.hits.load(Ordering::Relaxed),
            0,
            "jobs {jobs}: nothing read"
        );
        assert_eq!(result_refs(&e, &models), before, "the very same instances");
        assert!(models.iter().all(|&m| !e.is_dirty(m)));
        // Again: the kept results stay kept.
        force_all(&mut e, &models);
        assert_eq!(cache.kept.load(Ordering::Relaxed), 6);
        for ext in ["rbxl", "rbxlx"] {
            assert!(saved(&fresh, ext) == saved(&e, ext), "jobs {jobs}: {ext}");
        }
    }
}

#[test]
fn r14_5_a_script_edit_of_the_results_is_replaced_by_the_next_hit() {
    let (mut fresh, fresh_models) = scene(None, 1, 2);
    settle(&mut fresh);
    let cache = Arc::new(Mem::default());
    let (mut e, models) = scene(Some(cache.clone()), 1, 2);
    settle(&mut e);
    // A plugin-style script renames a part of M0's results and recolours the model's pole.
    let expected = results_hashes(&fresh, &fresh_models);
    run_luau(
        &mut e,
        "local f = workspace.M0.GeneratedFolder\nf.P1.Name = 'Edited'\nf.Pole.Color = Color3.new(1, 0, 0)",
    );
    let edited = results_hashes(&e, &models);
    assert!(
        edited[0] != expected[0] && edited[1] == expected[1],
        "the edit is in"
    );
    force_all(&mut e, &models);
    // After a write to the scene both entries are read; M1's results still hash to its
    // entry's content and stay, M0's edited ones are replaced.
    assert_eq!(cache.hits.load(Ordering::Relaxed), 2, "both entries read");
    assert_eq!(cache.kept.load(Ordering::Relaxed), 1, "M1 kept, M0 decoded");
    assert!(results_hashes(&e, &models) == expected, "the edit is gone");
    // Untouched since that hit: kept from now on, without reading the entries.
    force_all(&mut e, &models);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 3);
    assert_eq!(cache.hits.load(Ordering::Relaxed), 2);
}

#[test]
fn r14_5_an_edit_through_the_dom_is_not_kept_and_undone_results_are() {
    let cache = Arc::new(Mem::default());
    let (mut e, models) = scene(Some(cache.clone()), 1, 1);
    let m = models[0];
    settle(&mut e);
    let (mut fresh, fresh_models) = scene(None, 1, 1);
    settle(&mut fresh);
    e.with_dom_mut(|d| {
        let f = procmodel_engine::provenance::results(d, m).unwrap();
        let p = d.get_by_ref(f).unwrap().children()[1];
        d.get_by_ref_mut(p).unwrap().name = "Moved".into();
    });
    force_all(&mut e, &models);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 0);
    assert!(saved(&fresh, "rbxl") == saved(&e, "rbxl"));
    // Count 3 -> 9, then undo: the results of Count 3 come back from the history, with the
    // record of the hit that placed them and no Luau write since: a forced regeneration
    // keeps them without reading the entry.
    e.set_attribute(m, "Count", Some(Variant::Float64(9.0)))
        .unwrap();
    settle(&mut e);
    assert!(e.undo());
    let hits = cache.hits.load(Ordering::Relaxed);
    let before = result_refs(&e, &models);
    force_all(&mut e, &models);
    assert_eq!(cache.hits.load(Ordering::Relaxed), hits);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 1);
    assert_eq!(result_refs(&e, &models), before);
    // After an edit through the DOM the history vouches for nothing: undo and redo bring the
    // results back, and a forced regeneration reads the entry and keeps them, as they hash
    // to its content.
    e.with_dom_mut(|_| ());
    assert!(e.redo());
    assert!(e.undo());
    let before = result_refs(&e, &models);
    force_all(&mut e, &models);
    assert_eq!(cache.hits.load(Ordering::Relaxed), hits + 1);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 2);
    assert_eq!(result_refs(&e, &models), before);
    assert!(results_hashes(&fresh, &fresh_models) == results_hashes(&e, &models));
}

/// An empty engine with `cache`.
fn cached_engine(cache: &Arc<Mem>) -> Engine {
    Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            cache: Some(cache.clone()),
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

/// A ModuleScript named `name` in ServerStorage.
fn module(e: &mut Engine, name: &str, src: &str) -> Ref {
    let ss = e.server_storage();
    e.insert(
        ss,
        InstanceBuilder::new("ModuleScript")
            .with_name(name)
            .with_property("Source", Variant::String(src.to_owned())),
    )
}

/// Results holding a nested model are cached (its Generator, a module outside them, by
/// path) and checked in place: the same module keeps them, and the nested model is looked
/// at again; a nested model pointed at another module of the scene (the inputs and the hash
/// alike) is not the entry's, so the entry is decoded.
#[test]
fn r14_5_nested_results_are_checked_in_place_by_their_modules() {
    let cache = Arc::new(Mem::default());
    let mut e = cached_engine(&cache);
    let inner = module(&mut e, "Inner", INNER);
    let other = module(&mut e, "Other", INNER);
    // The nested model's inputs in full (generating it fills in nothing), so A's results
    // stay what A's run made.
    let outer = module(
        &mut e,
        "Outer",
        &OUTER.replace(
            "m.Parent = target",
            "m:SetAttribute(\"Height\", 2)\n    m:PivotTo(CFrame.new())\n    m.Parent = target",
        ),
    );
    let a = e.add_procedural_model("A", outer);
    settle(&mut e);
    assert_eq!(
        cache.puts.load(Ordering::Relaxed),
        2,
        "A and its nested model, stored"
    );
    let nested = |e: &Engine| {
        e.with_dom(|d| {
            let f = procmodel_engine::provenance::results(d, a).unwrap();
            d.get_by_ref(f).unwrap().children()[0]
        })
    };
    let generator = |e: &Engine| {
        e.with_dom(|d| {
            d.get_by_ref(nested(e))
                .unwrap()
                .properties
                .get(&"Generator".into())
                .cloned()
        })
    };
    let before = nested(&e);
    // The engine forgets what it placed; A is checked against its entry and kept, and its
    // nested model is looked at again (kept too).
    e.with_dom_mut(|_| ());
    assert!(e.force_generation(a));
    let reports = e.settle(10);
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert_eq!(cache.kept.load(Ordering::Relaxed), 2);
    assert_eq!(nested(&e), before);
    // Pointed at the other module: A's results hash the same, but are not the entry's.
    let n = nested(&e);
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(n)
            .unwrap()
            .properties
            .insert("Generator".into(), Variant::Ref(other));
    });
    assert!(e.force_generation(a));
    settle(&mut e);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 2, "decoded");
    assert_eq!(generator(&e), Some(Variant::Ref(inner)));
}

/// A scene saved after generating, loaded by another engine (another process): a forced
/// regeneration reads every entry, finds the results in the file are its content, and keeps
/// them; the saved scene is a fresh run's, in both formats and with any number of workers.
#[test]
fn r14_5_results_loaded_from_a_file_are_checked_against_the_entry_and_kept() {
    let (mut fresh, _) = scene(None, 1, 4);
    settle(&mut fresh);
    let dir = procmodel_testkit::scratch("loaded");
    for (jobs, ext) in [(1, "rbxl"), (2, "rbxl"), (1, "rbxlx")] {
        let cache = Arc::new(Mem::default());
        let (mut e, _) = scene(Some(cache.clone()), jobs, 4);
        settle(&mut e);
        let path = dir.join(format!("scene{jobs}.{ext}"));
        e.save(&path).unwrap();
        let mut loaded = load_cached(&path, cache.clone(), jobs);
        let models = loaded.models();
        assert_eq!(models.len(), 4);
        let before = result_refs(&loaded, &models);
        force_all(&mut loaded, &models);
        assert_eq!(
            cache.hits.load(Ordering::Relaxed),
            4,
            "jobs {jobs}: every entry read"
        );
        assert_eq!(cache.kept.load(Ordering::Relaxed), 4, "jobs {jobs} {ext}");
        assert_eq!(
            result_refs(&loaded, &models),
            before,
            "the very same instances"
        );
        // PrimaryPart is the same part of the results as in the fresh run.
        loaded.with_dom(|d| {
            for &m in &models {
                let pp = match d
                    .get_by_ref(m)
                    .unwrap()
                    .properties
                    .get(&"PrimaryPart".into())
                {
                    Some(Variant::Ref(r)) => *r,
                    other => panic!("{other:?}"),
                };
                assert_eq!(d.get_by_ref(pp).unwrap().name, "P1");
            }
        });
        assert!(
            saved(&fresh, ext) == saved(&loaded, ext),
            "jobs {jobs}: {ext}"
        );
        // Kept from now on without reading the entries again.
        force_all(&mut loaded, &models);
        assert_eq!(cache.kept.load(Ordering::Relaxed), 8);
        assert_eq!(cache.hits.load(Ordering::Relaxed), 4);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Results in place that do not hash to the entry's content, or whose folder's record
/// differs from the entry's, are replaced by the entry's.
#[test]
fn r14_5_results_that_differ_from_the_entry_in_any_way_are_decoded() {
    let (mut fresh, fresh_models) = scene(None, 1, 1);
    settle(&mut fresh);
    let expected = saved(&fresh, "rbxl");
    type Edit = fn(&mut rbx_dom_weak::WeakDom, Ref);
    let edits: [(&str, Edit); 6] = [
        ("a property deep in the results", |d, f| {
            let inner = d.get_by_ref(f).unwrap().children()[0];
            let p = d.get_by_ref(inner).unwrap().children()[0];
            d.get_by_ref_mut(p)
                .unwrap()
                .properties
                .insert("Transparency".into(), Variant::Float32(0.25));
        }),
        ("an instance added", |d, f| {
            d.insert(f, InstanceBuilder::new("Part"));
        }),
        ("a second GeneratedFolder beside the results", |d, f| {
            let model = d.get_by_ref(f).unwrap().parent();
            d.insert(model, InstanceBuilder::new("GeneratedFolder"));
        }),
        ("the folder's name", |d, f| {
            d.get_by_ref_mut(f).unwrap().name = "Renamed".into();
        }),
        ("the recorded provenance", |d, f| {
            let inst = d.get_by_ref_mut(f).unwrap();
            if let Some(Variant::Attributes(a)) = inst.properties.get_mut(&"Attributes".into()) {
                a.insert("ProcmodelInputs".into(), Variant::String("v2".into()));
            }
        }),
        ("the folder's PrimaryPart", |d, f| {
            let pole = d
                .get_by_ref(f)
                .unwrap()
                .children()
                .iter()
                .copied()
                .find(|&c| d.get_by_ref(c).unwrap().name == "Pole")
                .unwrap();
            d.get_by_ref_mut(f)
                .unwrap()
                .properties
                .insert("PrimaryPart".into(), Variant::Ref(pole));
        }),
    ];
    for (what, edit) in edits {
        let cache = Arc::new(Mem::default());
        let (mut e, models) = scene(Some(cache.clone()), 1, 1);
        settle(&mut e);
        let m = models[0];
        e.with_dom_mut(|d| {
            let f = procmodel_engine::provenance::results(d, m).unwrap();
            edit(d, f);
        });
        force_all(&mut e, &models);
        assert_eq!(cache.hits.load(Ordering::Relaxed), 1, "{what}");
        assert_eq!(cache.kept.load(Ordering::Relaxed), 0, "{what}");
        assert!(saved(&e, "rbxl") == expected, "{what}");
        assert!(results_hashes(&e, &models) == results_hashes(&fresh, &fresh_models));
    }
}

/// A generator whose results hold a nested ProceduralModel of the `Inner` generator.
const OUTER: &str = r#"
return { OnGenerate = function(params, target)
    local m = Instance.new("ProceduralModel")
    m.Name = "Nested"
    m.Generator = game.ServerStorage.Inner
    m.Parent = target
end }
"#;
const INNER: &str = r#"
return { Attributes = { Height = 2 }, OnGenerate = function(params, target)
    local p = Instance.new("Part")
    p.Size = Vector3.new(1, params.Attributes.Height, 1)
    p.Parent = target
end }
"#;

#[test]
fn r14_5_results_with_a_changed_nested_model_are_not_kept() {
    let cache = Arc::new(Mem::default());
    let mut e = cached_engine(&cache);
    module(&mut e, "Inner", INNER);
    let outer = module(&mut e, "Outer", OUTER);
    let a = e.add_procedural_model("A", outer);
    settle(&mut e);
    let nested = e.with_dom(|d| {
        let f = procmodel_engine::provenance::results(d, a).unwrap();
        d.get_by_ref(f).unwrap().children()[0]
    });
    e.set_attribute(nested, "Height", Some(Variant::Float64(5.0)))
        .unwrap();
    settle(&mut e);
    // Regenerating A replaces the nested model by a fresh one, with the default Height.
    assert!(e.force_generation(a));
    settle(&mut e);
    assert_eq!(cache.kept.load(Ordering::Relaxed), 0);
    let height = e.with_dom(|d| {
        let f = procmodel_engine::provenance::results(d, a).unwrap();
        let n = d.get_by_ref(f).unwrap().children()[0];
        match d
            .get_by_ref(n)
            .unwrap()
            .properties
            .get(&"Attributes".into())
        {
            Some(Variant::Attributes(at)) => at.get("Height").cloned(),
            _ => None,
        }
    });
    assert_eq!(height, Some(Variant::Float64(2.0)));
}

#[test]
fn r14_5_a_damaged_entry_is_ignored_and_the_model_generated() {
    let (mut fresh, _) = scene(None, 1, 2);
    settle(&mut fresh);
    let good = Arc::new(Mem::default());
    let (mut fill, _) = scene(Some(good.clone()), 1, 2);
    settle(&mut fill);
    let bad = Arc::new(Mem {
        entries: Mutex::new(good.entries.lock().unwrap().clone()),
        damage: true,
        ..Mem::default()
    });
    let (mut e, _) = scene(Some(bad.clone()), 1, 2);
    settle(&mut e);
    assert_eq!(
        bad.rejected.load(Ordering::Relaxed),
        2,
        "both entries refused"
    );
    assert_eq!(bad.puts.load(Ordering::Relaxed), 4, "and regenerated");
    assert_eq!(saved(&fresh, "rbxl"), saved(&e, "rbxl"));
}

#[test]
fn r14_4_status_names_every_stale_reason() {
    let (mut e, models) = scene(None, 1, 1);
    let m = models[0];
    assert_eq!(e.with_dom(|d| status(d, m)), Status::NeverGenerated);
    settle(&mut e);
    assert_eq!(e.with_dom(|d| status(d, m)), Status::Fresh);
    let stale = |e: &Engine| match e.with_dom(|d| status(d, m)) {
        Status::Stale(r) => r,
        other => panic!("expected stale, got {other:?}"),
    };
    let g = e.with_dom(|d| procmodel_engine::provenance::generator(d, m).unwrap());
    let edit = |e: &mut Engine, f: &dyn Fn(&mut rbx_dom_weak::WeakDom)| e.with_dom_mut(f);
    // Size
    edit(&mut e, &|d| {
        d.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("Size".into(), Vector3::new(1.0, 2.0, 3.0).into());
    });
    assert_eq!(stale(&e), ["Size"]);
    edit(&mut e, &|d| {
        d.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("Size".into(), Vector3::new(8.0, 8.0, 8.0).into());
    });
    assert_eq!(e.with_dom(|d| status(d, m)), Status::Fresh);
    // An attribute
    e.set_attribute(m, "Seed", Some(Variant::Float64(99.0)))
        .unwrap();
    assert_eq!(stale(&e), ["attribute Seed"]);
    e.set_attribute(m, "Seed", Some(Variant::Float64(7.0)))
        .unwrap();
    assert_eq!(e.with_dom(|d| status(d, m)), Status::Fresh);
    // Source
    e.set_source(g, &GEN.replace("0.123", "0.124")).unwrap();
    assert_eq!(stale(&e), ["Source"]);
    e.set_source(g, GEN).unwrap();
    // Sandbox
    edit(&mut e, &|d| {
        d.get_by_ref_mut(g)
            .unwrap()
            .properties
            .insert("Sandboxed".into(), Variant::Bool(true));
    });
    assert_eq!(stale(&e), ["sandbox"]);
    edit(&mut e, &|d| {
        d.get_by_ref_mut(g)
            .unwrap()
            .properties
            .insert("Sandboxed".into(), Variant::Bool(false));
    });
    // Generator: a copy of the module under another name.
    let root = e.with_dom(|d| d.root_ref());
    let g2 = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen2")
            .with_property("Source", Variant::String(GEN.to_owned())),
    );
    e.set_generator(m, Some(g2)).unwrap();
    let r = stale(&e);
    assert!(r.contains(&"generator".to_owned()), "{r:?}");
    e.set_generator(m, Some(g)).unwrap();
    // Another module, which the generator does not require: no input of it.
    assert_eq!(e.with_dom(|d| status(d, m)), Status::Fresh);
    e.remove(g2).unwrap();
    assert_eq!(e.with_dom(|d| status(d, m)), Status::Fresh);
    // Results edited by hand.
    edit(&mut e, &|d| {
        let f = procmodel_engine::provenance::results(d, m).unwrap();
        let p = d.get_by_ref(f).unwrap().children()[1];
        d.get_by_ref_mut(p).unwrap().name = "Moved".into();
    });
    assert_eq!(stale(&e), ["results edited since they were generated"]);
}

#[test]
fn r14_4_a_failed_generation_is_reported_with_its_error() {
    let (mut e, models) = scene(None, 1, 1);
    let g = e.with_dom(|d| procmodel_engine::provenance::generator(d, models[0]).unwrap());
    e.set_source(
        g,
        "return { OnGenerate = function() error('no stairs today') end }",
    )
    .unwrap();
    e.settle(10);
    match e.with_dom(|d| status(d, models[0])) {
        Status::Failed(msg) => assert!(msg.contains("no stairs today"), "{msg}"),
        other => panic!("expected failed, got {other:?}"),
    }
}

/// The folder's provenance attributes of each model, as (inputs, content hash).
fn provenance_of(e: &Engine, models: &[Ref]) -> Vec<(Option<String>, Option<String>)> {
    e.with_dom(|d| {
        models
            .iter()
            .map(|&m| {
                let folder = d
                    .get_by_ref(m)
                    .unwrap()
                    .children()
                    .iter()
                    .copied()
                    .find(|&c| d.get_by_ref(c).unwrap().class == "GeneratedFolder")
                    .expect("results");
                (
                    procmodel_engine::provenance::string_attribute(d, folder, "ProcmodelInputs"),
                    procmodel_engine::provenance::string_attribute(
                        d,
                        folder,
                        "ProcmodelContentHash",
                    ),
                )
            })
            .collect()
    })
}

#[test]
fn provenance_off_records_nothing_unless_a_cache_needs_it() {
    let (mut on, models) = scene(None, 1, 2);
    settle(&mut on);
    let recorded = provenance_of(&on, &models);
    assert!(recorded.iter().all(|(i, h)| i.is_some() && h.is_some()));

    let off = |cache| EngineConfig {
        cache,
        provenance: false,
        ..EngineConfig::default()
    };
    let (mut plain, models) = scene_with(off(None), 2);
    settle(&mut plain);
    assert!(
        provenance_of(&plain, &models)
            .iter()
            .all(|p| *p == (None, None)),
        "no provenance asked for, no cache: nothing recorded"
    );

    let cache: Arc<dyn ResultCache> = Arc::new(Mem::default());
    let (mut cached, models) = scene_with(off(Some(cache)), 2);
    settle(&mut cached);
    assert_eq!(
        provenance_of(&cached, &models),
        recorded,
        "a cache's entries are checked by the content hash: it is recorded anyway"
    );
}

/// Models whose generator changes the scene outside its container: a Part parented to the
/// Workspace and voxels written to `workspace.Terrain` (an unsandboxed module may).
const WRITES_OUTSIDE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local x = 0
    for i = 1, 200000 do x = x + i % 7 end
    local k = params.Attributes.K
    local p = Instance.new("Part")
    p.Name = "Outside" .. k
    p.Parent = workspace
    workspace.Terrain:FillBlock(CFrame.new(k * 8, 0, 0), Vector3.new(4, 4, 4), Enum.Material.Grass)
    local q = Instance.new("Part")
    q.Name = "Inside" .. k
    q.Parent = target
end
return G
"#;

fn outside_scene(cache: Option<Arc<dyn ResultCache>>, jobs: usize) -> Engine {
    models_of(WRITES_OUTSIDE, cache, jobs, 8, |_, _| {})
}

/// An engine with a generator module of `source` and `models` ProceduralModels of it in the
/// Workspace (`M0`, `M1`, ... with attribute `K` = 0, 1, ...), after what `before` adds to
/// the Workspace.
fn models_of(
    source: &str,
    cache: Option<Arc<dyn ResultCache>>,
    jobs: usize,
    models: usize,
    before: impl FnOnce(&mut Engine, Ref),
) -> Engine {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            cache,
            jobs,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let root = e.with_dom(|d| d.root_ref());
    let g = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen")
            .with_property("Source", Variant::String(source.to_owned())),
    );
    let ws = e.workspace();
    before(&mut e, ws);
    for k in 0..models {
        let mut a = Attributes::new();
        a.insert("K".into(), Variant::Float64(k as f64));
        e.insert(
            ws,
            InstanceBuilder::new("ProceduralModel")
                .with_name(format!("M{k}"))
                .with_property("Generator", Variant::Ref(g))
                .with_property("Attributes", Variant::Attributes(a)),
        );
    }
    e
}

fn outside_parts(e: &Engine) -> Vec<String> {
    e.with_dom(|d| {
        d.get_by_ref(e.workspace())
            .unwrap()
            .children()
            .iter()
            .map(|&c| d.get_by_ref(c).unwrap().name.clone())
            .filter(|n| n.starts_with("Outside"))
            .collect()
    })
}

#[test]
fn writes_outside_the_container_reach_the_scene_in_order_with_any_number_of_workers() {
    // On a worker such a write went to the worker's copy of the scene and was lost; every
    // run that makes one now happens on the scene's VM, when its turn to be applied comes.
    let run = |jobs: usize| {
        let mut e = outside_scene(None, jobs);
        settle(&mut e);
        let names = outside_parts(&e);
        (saved(&e, "rbxl"), names)
    };
    let (one, names) = run(1);
    let expected: Vec<String> = (0..8).map(|k| format!("Outside{k}")).collect();
    assert_eq!(names, expected);
    let (two, names) = run(2);
    assert_eq!(names, expected, "jobs 2");
    assert!(one == two, "the saved scenes differ between --jobs 1 and 2");
}

#[test]
fn a_run_that_writes_outside_its_container_is_never_cached() {
    // A hit gives the results alone: the Part in the Workspace and the voxels would be
    // missing from a scene whose models all came from the cache.
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut first = outside_scene(Some(cache.clone()), jobs);
        settle(&mut first);
        assert_eq!(
            cache.puts.load(Ordering::Relaxed),
            0,
            "jobs {jobs}: nothing stored"
        );
        let mut second = outside_scene(Some(cache.clone()), jobs);
        settle(&mut second);
        assert_eq!(cache.hits.load(Ordering::Relaxed), 0, "jobs {jobs}");
        assert_eq!(outside_parts(&second).len(), 8, "jobs {jobs}");
        let (mut fresh, ext) = (outside_scene(None, 1), "rbxl");
        settle(&mut fresh);
        assert!(
            saved(&fresh, ext) == saved(&second, ext),
            "jobs {jobs}: the cached engine's scene differs from a fresh one"
        );
    }
}

/// Generators that raycast down the world's centre column and put a slab on what they hit:
/// each one's answer depends on the models applied before it.
const RAYCASTS: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local x = 0
    for i = 1, 200000 do x = x + i % 7 end
    local hit = workspace:Raycast(Vector3.new(0, 500, 0), Vector3.new(0, -1000, 0))
    local y = hit and hit.Position.Y or 0
    local p = Instance.new("Part")
    p.Anchored = true
    p.Size = Vector3.new(4, 1, 4)
    p.Position = Vector3.new(0, y + 0.5, 0)
    p.Name = string.format("S%d_on_%s_%.0f", params.Attributes.K, hit and hit.Instance.Name or "nothing", y)
    p.Parent = target
end
return G
"#;

fn raycast_scene(cache: Option<Arc<dyn ResultCache>>, jobs: usize, models: usize) -> Engine {
    models_of(RAYCASTS, cache, jobs, models, |e, ws| {
        e.insert(
            ws,
            InstanceBuilder::new("Part")
                .with_name("Base")
                .with_property("Size", Variant::Vector3(Vector3::new(100.0, 1.0, 100.0)))
                .with_property(
                    "CFrame",
                    Variant::CFrame(rbx_types::CFrame::new(
                        Vector3::new(0.0, -0.5, 0.0),
                        rbx_types::Matrix3::identity(),
                    )),
                ),
        );
    })
}

/// The names of every generated slab, in scene order.
fn slabs(e: &Engine) -> Vec<String> {
    e.with_dom(|d| {
        let mut out = Vec::new();
        let mut stack = vec![d.root_ref()];
        while let Some(r) = stack.pop() {
            let i = d.get_by_ref(r).unwrap();
            if i.name.starts_with('S') && i.class == "Part" {
                out.push(i.name.clone());
            }
            stack.extend(i.children().iter().rev());
        }
        out
    })
}

#[test]
fn raycasting_generators_see_the_same_scene_with_any_number_of_workers() {
    // A worker's copy of the scene is from before the step: a raycast there could not see
    // the models applied before its own. Such a run happens again on the scene's VM at its
    // turn, so each model finds the slab of the one before it, as with one VM.
    let run = |jobs: usize| {
        let mut e = raycast_scene(None, jobs, 6);
        settle(&mut e);
        (saved(&e, "rbxl"), slabs(&e))
    };
    let (one, names) = run(1);
    let expected: Vec<String> = std::iter::once("S0_on_Base_0".to_string())
        .chain((1..6).map(|k| format!("S{k}_on_S{}_on_", k - 1)))
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for (got, want) in names.iter().zip(&expected) {
        assert!(
            got.starts_with(want.as_str()),
            "{got} should start with {want}: {names:?}"
        );
    }
    assert!(
        names[5].ends_with("_5"),
        "the sixth slab sits on five: {names:?}"
    );
    let (two, names2) = run(2);
    assert_eq!(names2, names, "jobs 2");
    assert!(one == two, "the saved scenes differ between --jobs 1 and 2");
}

#[test]
fn a_generators_raycasts_do_not_see_the_results_it_replaces() {
    // Regenerating must not stack the new slab on the old one.
    let mut e = raycast_scene(None, 1, 1);
    settle(&mut e);
    let first = saved(&e, "rbxl");
    assert_eq!(slabs(&e), vec!["S0_on_Base_0".to_string()]);
    let m = e.with_dom(|d| {
        let ws = d.get_by_ref(e.workspace()).unwrap();
        *ws.children()
            .iter()
            .find(|&&c| d.get_by_ref(c).unwrap().name == "M0")
            .unwrap()
    });
    assert!(e.force_generation(m));
    settle(&mut e);
    assert_eq!(slabs(&e), vec!["S0_on_Base_0".to_string()]);
    assert!(
        first == saved(&e, "rbxl"),
        "a forced regeneration changed the scene"
    );
}

#[test]
fn a_run_that_queries_the_scene_is_never_cached() {
    // Its answer depends on the scene, not only on its inputs: a hit could replay a slab
    // standing on something no longer there.
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = raycast_scene(Some(cache.clone()), jobs, 4);
        settle(&mut e);
        assert_eq!(
            cache.puts.load(Ordering::Relaxed),
            0,
            "jobs {jobs}: nothing stored"
        );
        assert_eq!(slabs(&e).len(), 4);
    }
}

/// Makes a ModuleScript in ServerStorage the first time it runs (an input of every model:
/// the scene's modules).
const MAKES_A_MODULE: &str = r#"
return { OnGenerate = function(params, target)
    if not game.ServerStorage:FindFirstChild("Made") then
        local m = Instance.new("ModuleScript")
        m.Name = "Made"
        m.Source = "return 1"
        m.Parent = game.ServerStorage
    end
    Instance.new("Part").Parent = target
end }
"#;

#[test]
fn r14_4_a_module_made_during_a_step_is_an_input_of_the_runs_that_end_after_it() {
    let cache = Arc::new(Mem::default());
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            cache: Some(cache),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let ss = e.server_storage();
    let g = e.insert(
        ss,
        InstanceBuilder::new("ModuleScript")
            .with_name("Maker")
            .with_property("Source", Variant::String(MAKES_A_MODULE.to_owned())),
    );
    let a = e.add_procedural_model("A", g);
    let b = e.add_procedural_model("B", g);
    let first = e.step();
    assert_eq!(first.len(), 2, "{first:?}");
    // Both record the inputs as they were after their run, the new module among them (A's
    // own run made it; B ran after it in the same step).
    assert_eq!(e.with_dom(|d| status(d, a)), Status::Fresh);
    assert_eq!(e.with_dom(|d| status(d, b)), Status::Fresh);
}

/// Parents a part of its own into the scene, then moves it: its queries must see it where it
/// is after each write (the spatial index of the scene is rebuilt after either).
const ESCAPES: &str = r#"
return { OnGenerate = function(params, target)
    local function down()
        local r = workspace:Raycast(Vector3.new(100, 50, 0), Vector3.new(0, -100, 0))
        return if r then r.Instance.Name else "nil"
    end
    local seen = { down(), down() }
    local p = Instance.new("Part")
    p.Name = "Mine"
    p.Anchored = true
    p.Size = Vector3.new(4, 1, 4)
    p.Position = Vector3.new(0, 0, 0)
    p.Parent = workspace
    table.insert(seen, down())
    table.insert(seen, down())
    p.Position = Vector3.new(100, 0, 0)
    table.insert(seen, down())
    table.insert(seen, down())
    p.Parent = target
    table.insert(seen, down())
    table.insert(seen, down())
    local v = Instance.new("StringValue")
    v.Name = "Seen"
    v.Value = table.concat(seen, ",")
    v.Parent = target
end }
"#;

#[test]
fn a_generators_queries_see_the_parts_it_put_in_the_scene_where_they_are_now() {
    let mut e = Engine::new(procmodel_luau::runtime(), EngineConfig::default()).unwrap();
    let ss = e.server_storage();
    let g = e.insert(
        ss,
        InstanceBuilder::new("ModuleScript")
            .with_name("Escapes")
            .with_property("Source", Variant::String(ESCAPES.to_owned())),
    );
    let m = e.add_procedural_model("M", g);
    settle(&mut e);
    let seen = e.with_dom(|d| {
        let f = procmodel_engine::provenance::results(d, m).unwrap();
        let v = d
            .get_by_ref(f)
            .unwrap()
            .children()
            .iter()
            .map(|&c| d.get_by_ref(c).unwrap())
            .find(|i| i.name == "Seen")
            .unwrap();
        match v.properties.get(&"Value".into()) {
            Some(Variant::String(s)) => s.clone(),
            other => panic!("{other:?}"),
        }
    });
    assert_eq!(seen, "nil,nil,nil,nil,Mine,Mine,nil,nil");
}

/// A scene the engine saved, loaded again by another engine sharing the cache: the save
/// recorded which results were intact, the load finds the record by the file's digest, and
/// a forced regeneration keeps every model's results without reading an entry or hashing
/// the results (as in the process that placed them). The same bytes are saved. A file
/// changed by anything else has no record: its results are checked against their entries.
#[test]
fn r14_5_an_unchanged_saved_scene_keeps_its_results_without_reading_entries() {
    let dir = procmodel_testkit::scratch("saved-record");
    for (jobs, ext) in [(1, "rbxl"), (2, "rbxlx")] {
        let cache = Arc::new(procmodel_engine::MemoryCache::default());
        let (mut e, _) = scene(Some(cache.clone()), jobs, 4);
        settle(&mut e);
        let path = dir.join(format!("saved{jobs}.{ext}"));
        e.save(&path).unwrap();
        let original = std::fs::read(&path).unwrap();
        let load = || load_cached(&path, cache.clone(), jobs);
        let mut loaded = load();
        let models = loaded.models();
        let before = result_refs(&loaded, &models);
        let hits = cache.hits();
        force_all(&mut loaded, &models);
        assert_eq!(cache.hits(), hits, "jobs {jobs} {ext}: no entry read");
        assert_eq!(cache.kept(), 4, "jobs {jobs} {ext}: every model kept");
        assert_eq!(result_refs(&loaded, &models), before);
        assert!(
            saved(&loaded, ext) == original,
            "jobs {jobs} {ext}: same bytes"
        );
        // Another tool's edit (a part renamed): no record for these bytes, so each entry is
        // read and the edited model's results are decoded, the others kept in place.
        let mut dom = if ext == "rbxl" {
            rbx_binary::from_reader(original.as_slice()).unwrap()
        } else {
            procmodel_dom::decode_xml(original.as_slice()).unwrap()
        };
        let part = dom
            .descendants()
            .find(|i| i.class == "Part")
            .map(|i| i.referent())
            .unwrap();
        dom.get_by_ref_mut(part).unwrap().name = "Edited".into();
        let mut bytes = Vec::new();
        let roots = dom.root().children().to_vec();
        if ext == "rbxl" {
            rbx_binary::to_writer(&mut bytes, &dom, &roots).unwrap();
        } else {
            procmodel_dom::encode_xml(&mut bytes, &dom, &roots).unwrap();
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut edited = load();
        let models = edited.models();
        let (hits, kept) = (cache.hits(), cache.kept());
        force_all(&mut edited, &models);
        assert_eq!(
            cache.hits() - hits,
            4,
            "jobs {jobs} {ext}: every entry read"
        );
        assert_eq!(
            cache.kept() - kept,
            3,
            "jobs {jobs} {ext}: the edited model decoded"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn undo_keeps_results_aside_up_to_its_budget_and_generates_the_rest_again() {
    // Each result of GEN holds 2 × Count + 2 instances and its folder: Count 3 -> 9,
    // 4 -> 11, 5 -> 13. A budget of 20 keeps the first two of them aside, not all three.
    let (mut e, models) = scene_with(
        EngineConfig {
            undo_instances: 20,
            ..EngineConfig::default()
        },
        1,
    );
    let m = models[0];
    settle(&mut e);
    let mut hashes = vec![results_hashes(&e, &models)[0]];
    let mut folders_seen = vec![folders(&e, &models)[0]];
    for count in [4.0, 5.0, 6.0] {
        set_count(&mut e, m, count);
        hashes.push(results_hashes(&e, &models)[0]);
        folders_seen.push(folders(&e, &models)[0]);
    }
    // Holding the results of 3, 4 and 5 (9 + 11 + 13) is over budget: those of 3 and then
    // of 4, the oldest steps', were freed.
    assert!(e.with_dom(|d| d.get_by_ref(folders_seen[0]).is_none()));
    assert!(e.with_dom(|d| d.get_by_ref(folders_seen[1]).is_none()));
    assert!(e.with_dom(|d| d.get_by_ref(folders_seen[2]).is_some()));
    // Undo to 5: its results are still aside, and come back as they were.
    let runs = e.runs(m);
    assert!(e.undo());
    assert!(!e.is_dirty(m));
    assert_eq!(folders(&e, &models)[0], folders_seen[2]);
    // Undo to 4 and to 3: freed, so the model is left dirty and generated again, to the
    // same content.
    for want in [1, 0] {
        assert!(e.undo());
        assert!(e.is_dirty(m), "undo to {want}");
        settle(&mut e);
        assert!(
            results_hashes(&e, &models)[0] == hashes[want],
            "undo to {want}"
        );
    }
    assert_eq!(
        e.runs(m),
        runs + 2,
        "two generations, for the freed steps only"
    );
    // Redo all the way: every step's results are back (from the history, or generated).
    for want in [1, 2, 3] {
        assert!(e.redo());
        settle(&mut e);
        assert!(
            results_hashes(&e, &models)[0] == hashes[want],
            "redo to {want}"
        );
    }
}

/// A generator that clones a template it finds in ReplicatedStorage (reaching it through the
/// service and a Folder, as creators keep their assets), tags its copies through
/// CollectionService and reads its own module: what it builds depends on the template.
const TEMPLATE: &str = r#"
local CollectionService = game:GetService("CollectionService")
local assets = game:GetService("ReplicatedStorage"):WaitForChild("Assets")
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    assert(script.Name == "Gen")
    local tree = assets:WaitForChild("Tree"):Clone()
    tree:PivotTo(CFrame.new(params.Attributes.K * 8, 0, 0))
    CollectionService:AddTag(tree, "Tree")
    tree.Parent = target
end
return G
"#;

/// [`TEMPLATE`]'s scene: the template, a Part coloured `colour` in ReplicatedStorage.Assets.
fn template_scene(cache: Option<Arc<dyn ResultCache>>, jobs: usize) -> Engine {
    models_of(TEMPLATE, cache, jobs, 4, |e, _| {
        let root = e.with_dom(|d| d.root_ref());
        let storage = e.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        let assets = e.insert(storage, InstanceBuilder::new("Folder").with_name("Assets"));
        e.insert(
            assets,
            InstanceBuilder::new("Part")
                .with_name("Tree")
                .with_property("Color", rbx_types::Color3::new(0.0, 1.0, 0.0)),
        );
    })
}

/// The colours of the copies of the template in the Workspace, in order.
fn tree_colours(e: &Engine) -> Vec<String> {
    e.with_dom(|d| {
        d.descendants()
            .filter(|i| i.name == "Tree" && i.class == "Part")
            .filter(|i| procmodel_dom::in_scene(d, i.referent()))
            .filter(|i| {
                d.get_by_ref(i.parent())
                    .is_some_and(|p| p.class == "GeneratedFolder")
            })
            .map(|i| format!("{:?}", i.properties.get(&"Color".into())))
            .collect()
    })
}

#[test]
fn a_run_that_uses_the_scene_s_instances_is_keyed_by_what_it_saw() {
    // Its results depend on the template as well as on its inputs. Such runs were never
    // cached (a hit after the template changed would give the old template's copies); now
    // the run names what it read (the template's path and content hash) and is keyed by it:
    // cached, an edited template is a miss with the new copies, and the template changed
    // back is a hit with the old ones.
    let set_colour = |e: &mut Engine, r: f32| {
        e.with_dom_mut(|d| {
            let tree = d
                .descendants()
                .find(|i| {
                    i.name == "Tree" && d.get_by_ref(i.parent()).is_some_and(|p| p.name == "Assets")
                })
                .unwrap()
                .referent();
            d.get_by_ref_mut(tree)
                .unwrap()
                .properties
                .insert("Color".into(), rbx_types::Color3::new(r, 1.0, 0.0).into());
        });
    };
    let mut saved = Vec::new();
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = template_scene(Some(cache.clone()), jobs);
        settle(&mut e);
        let green = tree_colours(&e);
        assert_eq!(green.len(), 4, "jobs {jobs}: {green:?}");
        assert_eq!(cache.puts.load(Ordering::Relaxed), 4, "jobs {jobs}: stored");
        let models = e.models();
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 4],
            "jobs {jobs}: hits"
        );
        set_colour(&mut e, 1.0);
        assert_eq!(
            e.with_dom(|d| status(d, models[0])),
            Status::Stale(vec!["game.ReplicatedStorage.Assets.Tree (read)".into()])
        );
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [false; 4],
            "jobs {jobs}: misses"
        );
        let yellow = tree_colours(&e);
        assert_eq!(yellow.len(), 4, "jobs {jobs}");
        assert!(
            yellow.iter().all(|c| !green.contains(c)),
            "jobs {jobs}: the copies kept the old template's colour: {yellow:?}"
        );
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 4],
            "jobs {jobs}: hits"
        );
        // The template as it was: the first results, from the cache.
        set_colour(&mut e, 0.0);
        let hits = cache.hits.load(Ordering::Relaxed);
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 4],
            "jobs {jobs}: hits"
        );
        assert_eq!(cache.hits.load(Ordering::Relaxed), hits + 4, "jobs {jobs}");
        assert_eq!(tree_colours(&e), green, "jobs {jobs}");
        assert_eq!(e.with_dom(|d| status(d, models[0])), Status::Fresh);
        // The template gone: the run fails (WaitForChild never finds it), nothing served.
        e.with_dom_mut(|d| {
            let tree = d.descendants().find(|i| i.name == "Assets").unwrap();
            let first = tree.children()[0];
            d.destroy(first);
        });
        assert_eq!(
            e.with_dom(|d| status(d, models[0])),
            Status::Stale(vec![
                "game.ReplicatedStorage.Assets.Tree (read, now missing)".into()
            ])
        );
        // A damaged record of the reads is named as such.
        e.with_dom_mut(|d| {
            let folder = procmodel_engine::provenance::results(d, models[0]).unwrap();
            let f = d.get_by_ref_mut(folder).unwrap();
            if let Some(Variant::Attributes(a)) = f.properties.get_mut(&"Attributes".into()) {
                a.insert("ProcmodelReads".into(), Variant::String("zz t game".into()));
            }
        });
        assert_eq!(
            e.with_dom(|d| status(d, models[0])),
            Status::Stale(vec!["ProcmodelReads is damaged".into()])
        );
        saved.push(e.with_dom(|d| procmodel_dom::hash::content_hash(d, d.root_ref())));
    }
    assert_eq!(saved[0], saved[1], "jobs 1 and 2 give the same scene");
}

#[test]
fn copies_a_run_clones_are_its_own_and_leave_other_results_kept() {
    // `Clone` makes its copies with the DOM's referents, not the host's, so writes to them
    // (a PivotTo, a tag) counted as writes to instances of the scene: each such run made
    // the engine forget that the results it placed before were untouched, and a forced
    // regeneration read and checked every other model's entry instead of keeping it.
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = template_scene(Some(cache.clone()), jobs);
        settle(&mut e);
        assert_eq!(cache.puts.load(Ordering::Relaxed), 4, "jobs {jobs}");
        let read = cache.hits.load(Ordering::Relaxed);
        assert_eq!(cached(&regenerate_all(&mut e)), [true; 4], "jobs {jobs}");
        assert_eq!(
            cache.hits.load(Ordering::Relaxed),
            read,
            "jobs {jobs}: kept in place, no entry read"
        );
    }
}

#[test]
fn a_folder_found_by_name_is_what_the_run_saw() {
    // A Folder is only a path to what it holds, but finding one by name can be a flag the
    // run branches on. Adding the flag gave a hit with the results made without it.
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local storage = game:GetService("ReplicatedStorage")
    local p = Instance.new("Part")
    p.Name = if storage:FindFirstChild("Winter") then "Snowy" else "Green"
    p.Parent = target
end
return G
"#;
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 2, |e, _| {
            let root = e.with_dom(|d| d.root_ref());
            e.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        });
        settle(&mut e);
        assert_eq!(part_names(&e), ["Green", "Green"], "jobs {jobs}");
        assert_eq!(cache.puts.load(Ordering::Relaxed), 2, "jobs {jobs}: stored");
        let storage = e.with_dom(|d| {
            d.descendants()
                .find(|i| i.class == "ReplicatedStorage")
                .unwrap()
                .referent()
        });
        let winter = e.insert(storage, InstanceBuilder::new("Folder").with_name("Winter"));
        assert_eq!(cached(&regenerate_all(&mut e)), [false; 2], "jobs {jobs}");
        assert_eq!(part_names(&e), ["Snowy", "Snowy"], "jobs {jobs}");
        e.with_dom_mut(|d| d.destroy(winter));
        assert_eq!(cached(&regenerate_all(&mut e)), [true; 2], "jobs {jobs}");
        assert_eq!(part_names(&e), ["Green", "Green"], "jobs {jobs}");
    }
}

#[test]
fn what_a_module_read_when_it_loaded_keys_the_runs_that_use_it() {
    // A generator (or a module it requires) that reads a setting at its top level keeps the
    // value in the module, read once when it loaded, outside any run: those reads were not
    // noted, so another process with another setting was served the results made with the
    // old one.
    const SOURCE: &str = r#"
local Settings = game:GetService("ReplicatedStorage"):WaitForChild("Settings")
local HEIGHT = Settings:GetAttribute("Height")
local Shapes = require(game:GetService("ReplicatedStorage").Shapes)
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local p = Instance.new("Part")
    p.Size = Vector3.new(Shapes.width, HEIGHT, 1)
    p.Parent = target
end
return G
"#;
    const SHAPES: &str = r#"
local t = game:GetService("ReplicatedStorage"):WaitForChild("Width")
return { width = t.Value }
"#;
    let sizes = |e: &Engine| -> Vec<(f32, f32)> {
        e.with_dom(|d| {
            d.descendants()
                .filter(|i| i.class == "Part" && procmodel_dom::in_scene(d, i.referent()))
                .map(|i| {
                    let s = procmodel_dom::part_size(i);
                    (s.x, s.y)
                })
                .collect()
        })
    };
    // A new engine (another process) over a scene whose settings are `height`, `width`.
    let engine = |cache: &Arc<MemoryCache>, jobs: usize, height: f64, width: f64| {
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 2, |e, _| {
            let root = e.with_dom(|d| d.root_ref());
            let storage = e.insert(root, InstanceBuilder::new("ReplicatedStorage"));
            let mut a = Attributes::new();
            a.insert("Height".into(), Variant::Float64(height));
            e.insert(
                storage,
                InstanceBuilder::new("Configuration")
                    .with_name("Settings")
                    .with_property("Attributes", Variant::Attributes(a)),
            );
            e.insert(
                storage,
                InstanceBuilder::new("NumberValue")
                    .with_name("Width")
                    .with_property("Value", Variant::Float64(width)),
            );
            e.insert(
                storage,
                InstanceBuilder::new("ModuleScript")
                    .with_name("Shapes")
                    .with_property("Source", Variant::String(SHAPES.into())),
            );
        });
        let reports = settle(&mut e);
        (e, cached(&reports))
    };
    for jobs in [1, 2] {
        // A cache that keeps records too (which modules and reads to look up with).
        let cache = Arc::new(MemoryCache::default());
        let (e, hits) = engine(&cache, jobs, 2.0, 3.0);
        assert_eq!((sizes(&e), hits), (vec![(3.0, 2.0); 2], vec![false; 2]));
        let (e, hits) = engine(&cache, jobs, 2.0, 3.0);
        assert_eq!(
            (sizes(&e), hits),
            (vec![(3.0, 2.0); 2], vec![true; 2]),
            "jobs {jobs}"
        );
        let (e, hits) = engine(&cache, jobs, 5.0, 3.0);
        assert_eq!(
            (sizes(&e), hits),
            (vec![(3.0, 5.0); 2], vec![false; 2]),
            "jobs {jobs}"
        );
        let (e, hits) = engine(&cache, jobs, 5.0, 4.0);
        assert_eq!(
            (sizes(&e), hits),
            (vec![(4.0, 5.0); 2], vec![false; 2]),
            "jobs {jobs}"
        );
        let (e, hits) = engine(&cache, jobs, 2.0, 3.0);
        assert_eq!(
            (sizes(&e), hits),
            (vec![(3.0, 2.0); 2], vec![true; 2]),
            "jobs {jobs}"
        );
    }
}

#[test]
fn reads_that_cannot_be_keyed_stop_caching() {
    // What a run read is named by a path from the DataModel and keyed by its digest, except
    // where that cannot be trusted: a subtree holding the model itself (its results change
    // it), a run that waited for a later frame after reading (other code ran meanwhile),
    // an instance an earlier namesake hides from its path.
    let stores = |source: &str, jobs: usize, inside: bool| -> usize {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(source, Some(cache.clone()), jobs, 0, |e, ws| {
            let root = e.with_dom(|d| d.root_ref());
            let storage = e.insert(root, InstanceBuilder::new("ReplicatedStorage"));
            e.insert(storage, InstanceBuilder::new("Part").with_name("Tree"));
            let hidden = e.insert(storage, InstanceBuilder::new("Part").with_name("Tree"));
            e.insert(
                storage,
                InstanceBuilder::new("ObjectValue")
                    .with_name("Pick")
                    .with_property("Value", Variant::Ref(hidden)),
            );
            let town = e.insert(ws, InstanceBuilder::new("Model").with_name("Town"));
            let g = e.with_dom(|d| {
                d.root()
                    .children()
                    .iter()
                    .copied()
                    .find(|&c| d.get_by_ref(c).unwrap().name == "Gen")
                    .unwrap()
            });
            let mut a = Attributes::new();
            a.insert("K".into(), Variant::Float64(1.0));
            e.insert(
                if inside { town } else { ws },
                InstanceBuilder::new("ProceduralModel")
                    .with_property("Generator", Variant::Ref(g))
                    .with_property("Attributes", Variant::Attributes(a)),
            );
        });
        settle(&mut e);
        cache.puts.load(Ordering::Relaxed)
    };
    let town = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local p = Instance.new("Part")
    p.Name = "N" .. #workspace.Town:GetChildren()
    p.Parent = target
end
return G
"#;
    assert_eq!(stores(town, 1, false), 1, "a Model beside the model: keyed");
    assert_eq!(stores(town, 1, true), 0, "the Model holding the model");
    let waits = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local tree = game:GetService("ReplicatedStorage").Tree:Clone()
    task.wait()
    tree.Parent = target
end
return G
"#;
    assert_eq!(stores(waits, 1, false), 0, "read, then waited for a frame");
    let no_wait = waits.replace("task.wait()", "");
    assert_eq!(stores(&no_wait, 1, false), 1, "the same without the wait");
    let hidden = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    game:GetService("ReplicatedStorage").Pick.Value:Clone().Parent = target
end
return G
"#;
    assert_eq!(stores(hidden, 1, false), 0, "the second of two namesakes");
    assert_eq!(stores(hidden, 2, false), 0, "the same on a worker");
}

#[test]
fn reaching_modules_services_and_folders_does_not_stop_caching() {
    // A generator that only finds its way (game:GetService, script, a Folder of modules)
    // and writes to its own results is cached as before.
    const SOURCE: &str = r#"
local CollectionService = game:GetService("CollectionService")
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    assert(script.Parent ~= nil and workspace ~= nil)
    local p = Instance.new("Part")
    p.Name = "P" .. params.Attributes.K
    CollectionService:AddTag(p, "Made")
    p.Parent = target
end
return G
"#;
    let cache = Arc::new(Mem::default());
    let mut e = models_of(SOURCE, Some(cache.clone()), 1, 3, |_, _| {});
    settle(&mut e);
    assert_eq!(cache.puts.load(Ordering::Relaxed), 3);
}

#[test]
fn a_service_the_scene_lacks_is_no_change_a_run_makes() {
    // Every service exists in Roblox; a scene built elsewhere (a Rojo project, `generate`'s
    // one-model scene) holds a few. A run asking for a missing one made it, which counted as
    // a write outside its container: the run was never cached, and at --jobs 2 each run of
    // the step was refused on the worker and ran again on the scene's VM, one after another.
    // (A sandboxed generator got an error.) Now the service is made for the session: out of
    // saved files while empty, kept once something is put in it.
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    print("run", params.Attributes.K)
    local tags = game:GetService("CollectionService")
    local http = game:GetService("HttpService")
    local p = Instance.new("Part")
    p.Name = "P" .. http:JSONEncode({ params.Attributes.K })
    tags:AddTag(p, "Made")
    p.Parent = target
    if params.Attributes.K == 2 then
        local note = Instance.new("StringValue")
        note.Name = "Note"
        note.Parent = game:GetService("ReplicatedStorage")
    end
end
return G
"#;
    let mut saved = Vec::new();
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 4, |_, _| {});
        settle(&mut e);
        // (The run writing outside its container may run twice: refused on a worker.)
        let mut runs: Vec<String> = e
            .take_output()
            .into_iter()
            .map(|l| l.message)
            .filter(|m| m.contains("run") && !m.ends_with(" 2"))
            .collect();
        runs.sort();
        assert_eq!(
            runs,
            ["[Gen] run 0", "[Gen] run 1", "[Gen] run 3"],
            "jobs {jobs}: each model ran once"
        );
        // The run that put a value in ReplicatedStorage wrote outside its container.
        assert_eq!(cache.puts.load(Ordering::Relaxed), 3, "jobs {jobs}");
        let path = procmodel_testkit::scratch("session-services").join(format!("{jobs}.rbxlx"));
        e.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(
            !text.contains("class=\"CollectionService\"")
                && !text.contains("class=\"HttpService\""),
            "{text}"
        );
        assert!(
            text.contains("class=\"ReplicatedStorage\"") && text.contains(">Note<"),
            "{text}"
        );
        saved.push(text);
    }
    assert_eq!(
        saved[0], saved[1],
        "the saved scenes differ between --jobs 1 and 2"
    );
}

#[test]
fn what_the_generator_module_holds_is_an_input_not_a_read() {
    // A generator that clones a template kept under its own module (a package's assets, a
    // Rojo folder module's `.model.json` children) or reads the module's attributes counted
    // as reading the scene: it was never cached (`generate` of a folder generator missed
    // every time). What the module holds is now the `carried` input: cached, and an edit to
    // the template or an attribute is a miss with the new results, and `status` says why.
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local tree = script:FindFirstChild("Tree"):Clone()
    tree.Name = "Tree" .. params.Attributes.K .. (script:GetAttribute("Suffix") or "")
    tree.Parent = target
end
return G
"#;
    // The clones in the results (the template itself is named "Tree"): name and height.
    let trees = |e: &Engine| -> Vec<(String, f32)> {
        e.with_dom(|d| {
            d.descendants()
                .filter(|i| i.name.len() > 4 && i.name.starts_with("Tree"))
                .map(|i| match i.properties.get(&rbx_dom_weak::ustr("Size")) {
                    Some(Variant::Vector3(v)) => (i.name.clone(), v.y),
                    _ => (i.name.clone(), -1.0),
                })
                .collect()
        })
    };
    let tree_size = |e: &Engine| -> Vec<f32> { trees(e).into_iter().map(|t| t.1).collect() };
    let mut saved = Vec::new();
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 3, |_, _| {});
        let module = e.with_dom(|d| {
            d.root()
                .children()
                .iter()
                .copied()
                .find(|&c| d.get_by_ref(c).unwrap().name == "Gen")
                .unwrap()
        });
        let tree = e.insert(
            module,
            InstanceBuilder::new("Part")
                .with_name("Tree")
                .with_property("Size", Vector3::new(1.0, 6.0, 1.0)),
        );
        settle(&mut e);
        assert_eq!(
            cache.puts.load(Ordering::Relaxed),
            3,
            "jobs {jobs}: every run cached"
        );
        assert_eq!(tree_size(&e), [6.0; 3]);
        let models = e.models();
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 3],
            "jobs {jobs}: hits"
        );
        // The template edited: stale, then a miss with the new template.
        e.with_dom_mut(|d| {
            d.get_by_ref_mut(tree)
                .unwrap()
                .properties
                .insert("Size".into(), Variant::Vector3(Vector3::new(1.0, 9.0, 1.0)));
        });
        assert_eq!(
            e.with_dom(|d| status(d, models[0])),
            Status::Stale(vec!["what the generator module holds".into()])
        );
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [false; 3],
            "jobs {jobs}: misses"
        );
        assert_eq!(tree_size(&e), [9.0; 3]);
        // An attribute of the module, the same.
        e.with_dom_mut(|d| {
            let mut a = Attributes::new();
            a.insert("Suffix".into(), Variant::String("x".into()));
            d.get_by_ref_mut(module)
                .unwrap()
                .properties
                .insert("Attributes".into(), Variant::Attributes(a));
        });
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [false; 3],
            "jobs {jobs}: misses"
        );
        let names: Vec<String> = trees(&e).into_iter().map(|t| t.0).collect();
        assert_eq!(names, ["Tree0x", "Tree1x", "Tree2x"]);
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 3],
            "jobs {jobs}: hits"
        );
        // A tag on the module (`script:HasTag`), the same.
        e.with_dom_mut(|d| {
            let tags: rbx_types::Tags = vec!["Night".to_owned()].into();
            d.get_by_ref_mut(module)
                .unwrap()
                .properties
                .insert("Tags".into(), Variant::Tags(tags));
        });
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [false; 3],
            "jobs {jobs}: misses"
        );
        assert_eq!(
            cached(&regenerate_all_unseen(&mut e)),
            [true; 3],
            "jobs {jobs}: hits"
        );
        saved.push(e.with_dom(|d| procmodel_dom::hash::content_hash(d, d.root_ref())));
    }
    assert_eq!(saved[0], saved[1], "jobs 1 and 2 give the same scene");
}

#[test]
fn a_run_that_only_looks_for_something_in_the_scene_is_not_cached() {
    // `if ReplicatedStorage:FindFirstChild("Tree") then` decides what it builds without ever
    // using a handle: not finding the template (or finding it) is a fact about the scene. A
    // hit after the template appeared gave the fallback (it was stored under the inputs).
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local storage = game:GetService("ReplicatedStorage")
    local p = Instance.new("Part")
    p.Name = if storage:FindFirstChild("Tree") then "FromTemplate" else "Fallback"
    p.Parent = target
    local tagged = #game:GetService("CollectionService"):GetTagged("Marker")
    p:SetAttribute("Tagged", tagged)
end
return G
"#;
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 2, |_, _| {});
        settle(&mut e);
        assert_eq!(part_names(&e), ["Fallback", "Fallback"], "jobs {jobs}");
        assert_eq!(
            cache.puts.load(Ordering::Relaxed),
            0,
            "jobs {jobs}: nothing stored"
        );
        let root = e.with_dom(|d| d.root_ref());
        let storage = e.with_dom(|d| {
            d.root().children().iter().copied().find(|&c| {
                d.get_by_ref(c)
                    .is_some_and(|i| i.class == "ReplicatedStorage")
            })
        });
        let storage =
            storage.unwrap_or_else(|| e.insert(root, InstanceBuilder::new("ReplicatedStorage")));
        e.insert(storage, InstanceBuilder::new("Model").with_name("Tree"));
        for m in e.models() {
            e.force_generation(m);
        }
        settle(&mut e);
        assert_eq!(
            part_names(&e),
            ["FromTemplate", "FromTemplate"],
            "jobs {jobs}"
        );
    }
}

#[test]
fn a_run_that_reads_settings_kept_in_the_scene_is_keyed_by_them() {
    // Settings kept as a Configuration's attributes (or a service's properties) are scene
    // state, though a Configuration is only a path to what it holds: a hit keyed by the
    // inputs alone after the setting changed gave parts of the old height. The run is keyed
    // by the Configuration's own record (not its children): a new height is a miss, the
    // old one again a hit.
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local settings = game:GetService("ReplicatedStorage"):WaitForChild("Settings")
    local p = Instance.new("Part")
    p.Size = Vector3.new(1, settings:GetAttribute("Height"), 1)
    p.Parent = target
end
return G
"#;
    let heights = |e: &Engine| -> Vec<f32> {
        e.with_dom(|d| {
            d.descendants()
                .filter(|i| i.class == "Part" && procmodel_dom::in_scene(d, i.referent()))
                .map(|i| procmodel_dom::part_size(i).y)
                .collect()
        })
    };
    let set_height = |e: &mut Engine, h: f64| {
        e.with_dom_mut(|d| {
            let settings = d
                .descendants()
                .find(|i| i.name == "Settings")
                .unwrap()
                .referent();
            let mut attrs = rbx_types::Attributes::new();
            attrs.insert("Height".into(), rbx_types::Variant::Float64(h));
            d.get_by_ref_mut(settings)
                .unwrap()
                .properties
                .insert("Attributes".into(), attrs.into());
        });
    };
    for jobs in [1, 2] {
        let cache = Arc::new(Mem::default());
        let mut e = models_of(SOURCE, Some(cache.clone()), jobs, 2, |e, _| {
            let root = e.with_dom(|d| d.root_ref());
            let storage = e.insert(root, InstanceBuilder::new("ReplicatedStorage"));
            e.insert(
                storage,
                InstanceBuilder::new("Configuration").with_name("Settings"),
            );
        });
        set_height(&mut e, 2.0);
        for m in e.models() {
            e.force_generation(m);
        }
        settle(&mut e);
        assert_eq!(heights(&e), [2.0, 2.0], "jobs {jobs}");
        let puts = cache.puts.load(Ordering::Relaxed);
        assert!(puts >= 2, "jobs {jobs}: stored");
        set_height(&mut e, 5.0);
        assert_eq!(cached(&regenerate_all(&mut e)), [false; 2], "jobs {jobs}");
        assert_eq!(heights(&e), [5.0, 5.0], "jobs {jobs}");
        // A child of the Configuration is not what the run read.
        let settings = e.with_dom(|d| {
            d.descendants()
                .find(|i| i.name == "Settings")
                .unwrap()
                .referent()
        });
        e.insert(settings, InstanceBuilder::new("Folder"));
        set_height(&mut e, 2.0);
        assert_eq!(cached(&regenerate_all(&mut e)), [true; 2], "jobs {jobs}");
        assert_eq!(heights(&e), [2.0, 2.0], "jobs {jobs}");
    }
}

#[test]
fn a_run_that_counts_tagged_instances_of_the_scene_is_not_cached() {
    const SOURCE: &str = r#"
local G = { Attributes = { K = 1 } }
function G.OnGenerate(params, target)
    local p = Instance.new("Part")
    p:SetAttribute("Lamps", #game:GetService("CollectionService"):GetTagged("Lamp"))
    p.Parent = target
end
return G
"#;
    let cache = Arc::new(Mem::default());
    let mut e = models_of(SOURCE, Some(cache.clone()), 1, 2, |_, _| {});
    settle(&mut e);
    assert_eq!(cache.puts.load(Ordering::Relaxed), 0, "nothing stored");
}

#[test]
fn a_script_s_change_of_generator_code_is_waited_for_and_runs_the_new_code() {
    // The generator's Source, and the Source of a module it required, are inputs: a wait
    // right after a script changes them waits for the regeneration with the new code (it
    // returned at once with the old results, and a required module's change was never seen,
    // so even a forced run used the old code). With a cache each code has its own entry and
    // the old code again is a hit; a model whose generator uses none of it runs once.
    for (cached, jobs) in [(false, 1), (true, 1), (true, 2)] {
        let cache = Arc::new(Mem::default());
        let mut e = Engine::new(
            procmodel_luau::runtime(),
            EngineConfig {
                cache: cached.then(|| cache.clone() as Arc<dyn ResultCache>),
                jobs,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        e.on_report(Some(Box::new(move |r: &procmodel_engine::Report| {
            sink.lock().unwrap().push(r.path.clone())
        })));
        run_luau(
            &mut e,
            r#"
            local shape = Instance.new("ModuleScript")
            shape.Name = "Shape"
            shape.Source = "return 'Part'"
            shape.Parent = game
            local gen = Instance.new("ModuleScript")
            gen.Source = "local Shape = require(game.Shape) return { Attributes = {}, OnGenerate = function(p, t) Instance.new(Shape, t) end }"
            gen.Parent = game
            local other = Instance.new("ModuleScript")
            other.Source = "return { Attributes = {}, OnGenerate = function(p, t) Instance.new('Part', t) end }"
            other.Parent = game
            local m = Instance.new("ProceduralModel")
            m.Name = "Uses"
            m.Generator = gen
            m.Parent = workspace
            local o = Instance.new("ProceduralModel")
            o.Name = "Other"
            o.Generator = other
            o.Parent = workspace
            assert(m:WaitForGenerationAsync() and o:WaitForGenerationAsync())
            local function class() return m.GeneratedFolder:GetChildren()[1].ClassName end
            assert(class() == "Part")
            shape.Source = "return 'WedgePart'"
            assert(m:WaitForGenerationAsync() == true)
            assert(class() == "WedgePart", class())
            m:ForceGeneration()
            m:WaitForGenerationAsync()
            assert(class() == "WedgePart", "forced: " .. class())
            shape.Source = "return 'Part'"
            m:WaitForGenerationAsync()
            assert(class() == "Part", "back: " .. class())
            gen.Source = gen.Source:gsub("Instance.new%(Shape, t%)", "Instance.new('TrussPart', t)")
            assert(m:WaitForGenerationAsync() == true)
            assert(class() == "TrussPart", class())
            "#,
        );
        e.on_report(None);
        let runs = |path: &str| {
            reports
                .lock()
                .unwrap()
                .iter()
                .filter(|p| *p == path)
                .count()
        };
        // Uses: the first run and one per change or force (no run more, none less).
        assert_eq!(runs("Workspace.Uses"), 5, "cache {cached}, jobs {jobs}");
        assert_eq!(runs("Workspace.Other"), 1, "cache {cached}, jobs {jobs}");
        if cached {
            // Part, WedgePart and TrussPart for Uses, Part for Other.
            let entries = cache.entries.lock().unwrap().len();
            assert_eq!(entries, 4, "one entry per code (jobs {jobs})");
            assert!(
                counts(&cache).0 >= 1,
                "the old code again is a hit (jobs {jobs})"
            );
        }
    }
}

/// A generator requiring `Lib` when it loads and `Lazy` only from OnGenerate, only when its
/// model's `Tall` is true.
const REQUIRING: &str = r#"
local Lib = require(game:GetService("ServerStorage").Lib)
return {
    Attributes = { Tall = false },
    OnGenerate = function(params, target)
        local h = 1
        if params.Attributes.Tall then
            h = require(game:GetService("ServerStorage").Lazy).h
        end
        local p = Instance.new("Part")
        p.Size = Vector3.new(Lib.w, h, 1)
        p.Parent = target
    end,
}
"#;

/// An engine of `jobs` VMs over four models of REQUIRING (Tall false, true, false, true),
/// and modules Lib, Lazy and Other (which nothing requires).
fn requiring_scene(jobs: usize, cache: Option<Arc<dyn ResultCache>>) -> (Engine, Vec<Ref>) {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs,
            cache,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    module(&mut e, "Lib", "return { w = 2 }");
    module(&mut e, "Lazy", "return { h = 3 }");
    module(&mut e, "Other", "return {}");
    let g = module(&mut e, "Gen", REQUIRING);
    let ws = e.workspace();
    let models = (0..4)
        .map(|i| {
            let mut a = Attributes::new();
            a.insert("Tall".into(), Variant::Bool(i % 2 == 1));
            e.insert(
                ws,
                InstanceBuilder::new("ProceduralModel")
                    .with_name(format!("M{i}"))
                    .with_property("Generator", Variant::Ref(g))
                    .with_property("Attributes", Variant::Attributes(a)),
            )
        })
        .collect();
    (e, models)
}

fn recorded_modules(e: &Engine, m: Ref) -> Option<Vec<String>> {
    e.with_dom(|d| procmodel_engine::provenance::recorded_names(d, m))
}

/// The module named `name` in ServerStorage.
fn stored_module(e: &Engine, name: &str) -> Ref {
    let ss = e.server_storage();
    e.with_dom(|d| {
        d.get_by_ref(ss)
            .unwrap()
            .children()
            .iter()
            .copied()
            .find(|&r| d.get_by_ref(r).unwrap().name == name)
            .unwrap()
    })
}

/// Sets a module's Source behind the engine's back (as an edit of the saved file would).
fn edit_module(e: &mut Engine, name: &str, src: &str) {
    let r = stored_module(e, name);
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(r)
            .unwrap()
            .properties
            .insert("Source".into(), Variant::String(src.to_owned()));
    });
}

/// The `modules` input covers what each run required — at load (remembered when the module
/// is already loaded) and from OnGenerate (that run's own requires, not another's on the
/// same VM) — the same on any number of VMs; editing a module makes stale exactly the
/// models whose runs required it.
#[test]
fn r14_4_the_modules_input_is_what_each_run_required() {
    let lib = "ServerStorage.Lib".to_owned();
    let lazy = "ServerStorage.Lazy".to_owned();
    let mut recorded = Vec::new();
    for jobs in [1, 2] {
        let (mut e, models) = requiring_scene(jobs, None);
        settle(&mut e);
        let names: Vec<_> = models.iter().map(|&m| recorded_modules(&e, m)).collect();
        assert_eq!(
            names,
            [
                Some(vec![lib.clone()]),
                Some(vec![lazy.clone(), lib.clone()]),
                Some(vec![lib.clone()]),
                Some(vec![lazy.clone(), lib.clone()]),
            ],
            "jobs {jobs}"
        );
        recorded.push(saved(&e, "rbxlx"));
        let fresh = |e: &Engine| -> Vec<bool> {
            models
                .iter()
                .map(|&m| e.with_dom(|d| status(d, m)) == Status::Fresh)
                .collect()
        };
        edit_module(&mut e, "Other", "return { x = 1 }");
        assert_eq!(fresh(&e), [true; 4], "a module no run required");
        edit_module(&mut e, "Lazy", "return { h = 4 }");
        assert_eq!(fresh(&e), [true, false, true, false]);
        assert_eq!(
            e.with_dom(|d| status(d, models[1])),
            Status::Stale(vec!["module ServerStorage.Lazy".into()])
        );
        edit_module(&mut e, "Lazy", "return { h = 3 }");
        edit_module(&mut e, "Lib", "return { w = 5 }");
        assert_eq!(fresh(&e), [false; 4]);
        // A required module gone.
        let lazy = stored_module(&e, "Lazy");
        e.with_dom_mut(|d| d.destroy(lazy));
        assert_eq!(
            e.with_dom(|d| status(d, models[1])),
            Status::Stale(vec![
                "module ServerStorage.Lazy (removed)".into(),
                "module ServerStorage.Lib".into()
            ])
        );
    }
    assert!(
        recorded[0] == recorded[1],
        "jobs 1 and 2 save the same scene"
    );
}

/// A process whose scene holds no results finds the entries of runs that required modules:
/// the cache records which modules the runs from each inputs required.
#[test]
fn r14_5_results_of_runs_that_required_modules_hit_in_a_scene_without_results() {
    let cache = Arc::new(procmodel_engine::MemoryCache::default());
    let (mut first, _) = requiring_scene(1, Some(cache.clone()));
    settle(&mut first);
    let (mut second, _) = requiring_scene(1, Some(cache.clone()));
    let reports = settle(&mut second);
    assert_eq!(cached(&reports), [true; 4]);
    assert_eq!(saved(&first, "rbxl"), saved(&second, "rbxl"));
    // A required module edited: the entries are not for it (M3, with M1's inputs, finds the
    // entry M1's run just stored).
    let (mut third, _) = requiring_scene(1, Some(cache.clone()));
    edit_module(&mut third, "Lazy", "return { h = 9 }");
    let reports = settle(&mut third);
    assert_eq!(cached(&reports), [true, false, true, true]);
    let (mut fourth, _) = requiring_scene(1, None);
    edit_module(&mut fourth, "Lazy", "return { h = 9 }");
    settle(&mut fourth);
    assert_eq!(saved(&third, "rbxl"), saved(&fourth, "rbxl"));
}

/// A run that fails in its code records the modules it required on its error placeholder, on
/// the scene's VM and on a worker: an edit of another module leaves it failed, an edit of
/// one it required makes it stale.
#[test]
fn r14_4_a_failed_run_names_the_modules_it_required() {
    for jobs in [1, 2] {
        let (mut e, models) = requiring_scene(jobs, None);
        let g = procmodel_engine::provenance::generator;
        let gen_ = e.with_dom(|d| g(d, models[0]).unwrap());
        // Tall models fail after requiring Lazy (Lib is required when the module loads).
        let failing = REQUIRING.replace(
            "h = require(game:GetService(\"ServerStorage\").Lazy).h",
            "h = require(game:GetService(\"ServerStorage\").Lazy).h\n            error(\"too tall\")",
        );
        assert_ne!(failing, REQUIRING);
        e.with_dom_mut(|d| {
            d.get_by_ref_mut(gen_)
                .unwrap()
                .properties
                .insert("Source".into(), Variant::String(failing));
        });
        e.settle(100);
        let status_of = |e: &Engine, m: Ref| e.with_dom(|d| status(d, m));
        assert!(
            matches!(status_of(&e, models[1]), Status::Failed(ref m) if m.contains("too tall")),
            "jobs {jobs}: {:?}",
            status_of(&e, models[1])
        );
        edit_module(&mut e, "Other", "return { x = 2 }");
        assert!(
            matches!(status_of(&e, models[1]), Status::Failed(_)),
            "jobs {jobs}: a module the run did not require"
        );
        edit_module(&mut e, "Lazy", "return { h = 5 }");
        assert_eq!(
            status_of(&e, models[1]),
            Status::Stale(vec!["module ServerStorage.Lazy".into()]),
            "jobs {jobs}"
        );
    }
}
