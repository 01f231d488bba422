//! The engine over a `DirCache` on disk: a hit saves the fresh run's bytes, and an entry
//! with a flipped byte is reported, removed and regenerated — whether the store's own check
//! of the file catches it or only the engine's digest of the entry does.

use procmodel_engine::{Engine, EngineConfig, ResultCache};
use procmodel_lock::DirCache;
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Ref, Variant, Vector3};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const GEN: &str = r#"
return {
    Attributes = { Count = 3 },
    OnGenerate = function(params, target)
        for i = 1, params.Attributes.Count do
            local p = Instance.new("Part")
            p.Name = "P" .. i
            p.CFrame = CFrame.new(i, 0, 0) * CFrame.Angles(0, i / 7, 0)
            p.Color = Color3.new(i / 10, 0.5, 0.123)
            p.Parent = target
        end
    end,
}
"#;

fn temp(name: &str) -> PathBuf {
    let d = procmodel_testkit::scratch(&format!("lock-it-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn engine(cache: Option<Arc<DirCache>>) -> (Engine, Ref) {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            cache: cache.map(|c| c as Arc<dyn ResultCache>),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let root = e.with_dom(|d| d.root_ref());
    let g = e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name("Gen")
            .with_property("Source", Variant::String(GEN.to_owned())),
    );
    let ws = e.workspace();
    let m = e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("M")
            .with_property("Generator", Variant::Ref(g))
            .with_property("Size", Vector3::new(8.0, 8.0, 8.0)),
    );
    let r = e.settle(10);
    assert!(r.iter().all(|r| r.is_ok()), "{r:?}");
    (e, m)
}

fn saved(e: &Engine, dir: &Path) -> Vec<u8> {
    let path = dir.join("scene.rbxl");
    e.save(&path).unwrap();
    std::fs::read(&path).unwrap()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap().flatten() {
        if let Ok(files) = std::fs::read_dir(sub.path()) {
            out.extend(files.flatten().map(|f| f.path()));
        }
    }
    out.sort();
    out
}

/// Flips one byte in the middle of every entry's payload; with `fix_file_hash`, also writes
/// the store's file hash of the damaged payload, so only the engine's own digest can tell.
fn damage(dir: &Path, fix_file_hash: bool) {
    // Magic, length, the key, the payload's hash.
    const FILE_HEADER: usize = 8 + 8 + 32 + 32;
    for path in entries(dir) {
        let mut b = std::fs::read(&path).unwrap();
        let n = FILE_HEADER + (b.len() - FILE_HEADER) / 2;
        b[n] ^= 0x01;
        if fix_file_hash {
            let h = *blake3::hash(&b[FILE_HEADER..]).as_bytes();
            b[48..80].copy_from_slice(&h);
        }
        std::fs::write(&path, &b).unwrap();
    }
}

#[test]
fn r14_5_a_hit_from_disk_is_the_fresh_runs_bytes() {
    let dir = temp("hit");
    let out = temp("hit-out");
    std::fs::create_dir_all(&out).unwrap();
    let (fresh, _) = engine(None);
    let cache = Arc::new(DirCache::new(&dir, 1 << 30));
    let (fill, _) = engine(Some(cache.clone()));
    assert!(cache.stats().stores > 0);
    let (hit, _) = engine(Some(cache.clone()));
    assert_eq!(cache.stats().hits, 1);
    assert_eq!(saved(&fresh, &out), saved(&fill, &out));
    assert_eq!(saved(&fresh, &out), saved(&hit, &out));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn r14_5_a_flipped_payload_byte_is_reported_and_regenerated() {
    for fix_file_hash in [false, true] {
        let dir = temp(&format!("flip-{fix_file_hash}"));
        let out = temp(&format!("flip-out-{fix_file_hash}"));
        std::fs::create_dir_all(&out).unwrap();
        let (fresh, _) = engine(None);
        let fill = Arc::new(DirCache::new(&dir, 1 << 30));
        engine(Some(fill));
        damage(&dir, fix_file_hash);
        let cache = Arc::new(DirCache::new(&dir, 1 << 30));
        let (e, _) = engine(Some(cache.clone()));
        let s = cache.stats();
        assert_eq!(
            (s.hits, s.corrupt),
            (0, 1),
            "file hash fixed: {fix_file_hash}"
        );
        let w = cache.take_warnings();
        let why = if fix_file_hash {
            "entry digest mismatch"
        } else {
            "payload hash mismatch"
        };
        assert!(w.iter().any(|w| w.contains(why)), "{w:?}");
        assert_eq!(saved(&fresh, &out), saved(&e, &out), "regenerated");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&out);
    }
}
