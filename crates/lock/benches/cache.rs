//! Issue 14's cache benchmark: a forced regeneration of an unchanged scene served by the
//! result cache, against a full regeneration, on the 200-staircase scene and on the 100k-part
//! generator (`bench/parts`). The kinds of hit: `hit_kept` (the engine placed the results
//! and knows them untouched: nothing is read), `hit_verified` (the engine cannot vouch for
//! the results in place, as in a new process over a scene another tool saved: the entry is
//! read from a `DirCache` on disk and the results in place are hashed against it),
//! `hit_loaded` (a new engine over the scene the cached one saved: the save recorded its
//! intact results under the file's digest), `hit_toggled` (an attribute toggled back through
//! `set_attribute`, as the studio and the MCP server change it: the results of the value
//! before are held by the undo history, intact, and come back from there) and `hit_decoded`
//! (the same toggles written to the DOM directly, so no history holds the results: each hit
//! decodes its entry into the scene, as on a machine that shares the cache but not the
//! scene). Target: a hit costs under 10% of a regeneration.
//!
//! Run: `cargo bench -p procmodel-lock --bench cache`

use criterion::{Criterion, criterion_group, criterion_main};
use procmodel_engine::{Engine, EngineConfig, ResultCache};
use procmodel_lock::DirCache;
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Ref, Variant, Vector3};
use std::sync::Arc;

// The same allocator as the `procmodel` binary, so these figures are what users get.
#[global_allocator]
static GLOBAL: procmodel_alloc::Allocator = procmodel_alloc::Allocator;

fn module(e: &mut Engine, source: String) -> Ref {
    let root = e.with_dom(|d| d.root_ref());
    e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen")
            .with_property("Source", Variant::String(source)),
    )
}

fn model(e: &mut Engine, g: Ref, name: &str, size: Vector3) -> Ref {
    let ws = e.workspace();
    e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name(name)
            .with_property("Generator", Variant::Ref(g))
            .with_property("Size", size),
    )
}

/// An engine over `models` models of `source`, with or without a cache, settled once.
fn engine(
    source: &str,
    models: usize,
    size: Vector3,
    cache: Option<Arc<DirCache>>,
) -> (Engine, Vec<Ref>) {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            cache: cache.map(|c| c as Arc<dyn ResultCache>),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, source.to_owned());
    let ms: Vec<Ref> = (0..models)
        .map(|i| model(&mut e, g, &format!("M{i}"), size))
        .collect();
    let r = e.settle(10);
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    (e, ms)
}

fn regenerate(e: &mut Engine, models: &[Ref]) {
    for &m in models {
        e.force_generation(m);
    }
    let r = e.step();
    assert_eq!(r.len(), models.len());
}

fn compare(c: &mut Criterion, group: &str, source: &str, models: usize, size: Vector3) {
    let dir = std::env::temp_dir().join(format!(
        "procmodel-cache-bench-{}-{group}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Arc::new(DirCache::new(&dir, 8 << 30));
    let (mut fresh, fm) = engine(source, models, size, None);
    let (mut cached, cm) = engine(source, models, size, Some(cache.clone()));
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.bench_function("regenerate", |b| b.iter(|| regenerate(&mut fresh, &fm)));
    // Checked outside the measurement, so a filter that skips it does not trip it.
    let hits = |c: &DirCache| {
        let s = c.stats();
        (s.hits, s.kept)
    };
    // Untouched since placed: each hit keeps the results in place, reading nothing.
    let before = hits(&cache);
    regenerate(&mut cached, &cm);
    assert_eq!(hits(&cache).1 - before.1, models as u64, "every model kept");
    g.bench_function("hit_kept", |b| b.iter(|| regenerate(&mut cached, &cm)));
    // After a scene edit the engine no longer vouches for the results in place (as in a
    // new process over a saved scene): each hit reads its entry and hashes the results in
    // place against it, and keeps them.
    let verify = |e: &mut Engine, ms: &[Ref]| {
        e.with_dom_mut(|_| ());
        regenerate(e, ms)
    };
    let before = hits(&cache);
    verify(&mut cached, &cm);
    assert_eq!(
        (hits(&cache).0 - before.0, hits(&cache).1 - before.1),
        (models as u64, models as u64),
        "every entry read, every model kept"
    );
    g.bench_function("hit_verified", |b| b.iter(|| verify(&mut cached, &cm)));
    // A new process over the scene this engine saved (`regen --force` of an unchanged
    // place): the save recorded which results were intact, keyed by the file's digest, so
    // the loaded engine keeps them without reading an entry or hashing them. Loading is
    // outside the measurement (the same for a run without a cache).
    let saved = dir.join("saved.rbxl");
    cached.save(&saved).unwrap();
    let load = || {
        let e = Engine::load(
            procmodel_luau::runtime(),
            &saved,
            EngineConfig {
                cache: Some(cache.clone() as Arc<dyn ResultCache>),
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let models = e.models();
        (e, models)
    };
    {
        let (mut e, ms) = load();
        let before = hits(&cache);
        regenerate(&mut e, &ms);
        assert_eq!(
            (hits(&cache).0 - before.0, hits(&cache).1 - before.1),
            (0, models as u64),
            "no entry read, every model kept"
        );
    }
    g.bench_function("hit_loaded", |b| {
        b.iter_batched(
            load,
            |(mut e, ms)| {
                regenerate(&mut e, &ms);
                e
            },
            criterion::BatchSize::PerIteration,
        )
    });
    // Each engine's value, flipped by every toggle (the cached engine's undoable toggles
    // start where its toggles through the DOM left off).
    let value = std::cell::Cell::new(0.0);
    let fresh_value = std::cell::Cell::new(0.0);
    let flip = |v: &std::cell::Cell<f64>| {
        v.set(1.0 - v.get());
        v.get()
    };
    // An attribute toggled between two values seen before, written to the DOM directly: the
    // results in place are the other value's and no history holds this value's, so each hit
    // decodes its entry into the scene.
    let toggle = |e: &mut Engine, ms: &[Ref]| {
        let value = flip(&value);
        e.with_dom_mut(|d| {
            for &m in ms {
                let props = &mut d.get_by_ref_mut(m).unwrap().properties;
                let mut attrs = match props.get(&"Attributes".into()) {
                    Some(Variant::Attributes(a)) => a.clone(),
                    _ => rbx_types::Attributes::new(),
                };
                attrs.insert("Variant".into(), Variant::Float64(value));
                props.insert("Attributes".into(), Variant::Attributes(attrs));
            }
        });
        let r = e.step();
        assert_eq!(r.len(), ms.len());
    };
    toggle(&mut cached, &cm);
    toggle(&mut cached, &cm);
    let before = hits(&cache);
    toggle(&mut cached, &cm);
    assert_eq!(
        (hits(&cache).0 - before.0, hits(&cache).1 - before.1),
        (models as u64, 0),
        "every model decoded"
    );
    g.bench_function("hit_decoded", |b| b.iter(|| toggle(&mut cached, &cm)));
    // The same toggles as a user makes them (one undo step per toggle, all models in one
    // gesture): the results of the value before are held by the previous step, and come
    // back from there. Its regeneration is the same toggle without a cache
    // (`regenerate_toggled`: every toggle runs every generator).
    let toggle_undoable = |e: &mut Engine, ms: &[Ref], v: &std::cell::Cell<f64>| {
        let value = flip(v);
        e.begin_gesture();
        for &m in ms {
            e.set_attribute(m, "Variant", Some(Variant::Float64(value)))
                .unwrap();
        }
        e.end_gesture();
        let r = e.step();
        assert_eq!(r.len(), ms.len());
    };
    g.bench_function("regenerate_toggled", |b| {
        b.iter(|| toggle_undoable(&mut fresh, &fm, &fresh_value))
    });
    drop(fresh);
    toggle_undoable(&mut cached, &cm, &value);
    toggle_undoable(&mut cached, &cm, &value);
    let before = hits(&cache);
    toggle_undoable(&mut cached, &cm, &value);
    assert_eq!(
        (hits(&cache).0 - before.0, hits(&cache).1 - before.1),
        (0, models as u64),
        "every model's results back from the undo history"
    );
    g.bench_function("hit_toggled", |b| {
        b.iter(|| toggle_undoable(&mut cached, &cm, &value))
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn scene_200(c: &mut Criterion) {
    let src = include_str!("../../../examples/SpiralStaircase.luau");
    compare(
        c,
        "cache_scene_200_models",
        src,
        200,
        Vector3::new(12.0, 20.0, 12.0),
    );
}

fn parts_100k(c: &mut Criterion) {
    let body = include_str!("../../../bench/parts/body.luau");
    let src = format!(
        "local body = (function()\n{body}\nend)()\nreturn {{ Attributes = {{}}, OnGenerate = function(params, target) body(target) end }}"
    );
    compare(
        c,
        "cache_parts_100k",
        &src,
        1,
        Vector3::new(12.0, 12.0, 12.0),
    );
}

criterion_group!(benches, scene_200, parts_100k);
criterion_main!(benches);
