//! Terrain from generators (issue #12 item 4): `params.Terrain` voxels merged into the
//! scene's `Workspace.Terrain` at the model's pivot, owned by the model across regenerate,
//! delete, undo/redo, save/load and `--jobs`, with overlaps refused.

use glam::IVec3;
use procmodel_engine::{Engine, EngineConfig, Report};
use procmodel_terrain::{Material, Terrain, Voxel, smoothgrid};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Attributes, BinaryString, CFrame, Matrix3, Ref, Variant, Vector3};
use std::path::PathBuf;

/// A block `Width` × `Height` × `Width` studs standing on the model's origin.
const BLOCK: &str = r#"
local G = {}
G.Attributes = { Width = 16, Height = 8, Material = "Rock" }
function G.OnGenerate(params, target)
    local a = params.Attributes
    params.Terrain:FillBlock(
        CFrame.new(0, a.Height / 2, 0),
        Vector3.new(a.Width, a.Height, a.Width),
        Enum.Material[a.Material]
    )
    local marker = Instance.new("Part")
    marker.Name = "Marker"
    marker.Parent = target
end
return G
"#;

fn engine(jobs: usize) -> Engine {
    Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs,
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

fn module(e: &mut Engine, name: &str, source: &str) -> Ref {
    let root = e.with_dom(|d| d.root_ref());
    e.insert(
        root,
        InstanceBuilder::new("ModuleScript")
            .with_name(name)
            .with_property("Source", Variant::String(source.to_owned())),
    )
}

fn model(e: &mut Engine, name: &str, generator: Ref, at: [f32; 3], attrs: &[(&str, f64)]) -> Ref {
    let ws = e.workspace();
    let mut a = Attributes::new();
    for (k, v) in attrs {
        a.insert((*k).to_owned(), Variant::Float64(*v));
    }
    let m = e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name(name)
            .with_property("Generator", Variant::Ref(generator))
            .with_property("Size", Vector3::new(8.0, 8.0, 8.0))
            .with_property("Attributes", Variant::Attributes(a)),
    );
    set_pivot(
        e,
        m,
        CFrame::new(Vector3::new(at[0], at[1], at[2]), Matrix3::identity()),
    );
    m
}

fn set_pivot(e: &mut Engine, m: Ref, cf: CFrame) {
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(m)
            .unwrap()
            .properties
            .insert("WorldPivotData".into(), Variant::OptionalCFrame(Some(cf)));
    });
}

fn terrain_ref(e: &Engine) -> Option<Ref> {
    e.with_dom(|d| {
        let ws = d
            .get_by_ref(d.root_ref())?
            .children()
            .iter()
            .copied()
            .find(|&c| d.get_by_ref(c).unwrap().class == "Workspace")?;
        d.get_by_ref(ws)?
            .children()
            .iter()
            .copied()
            .find(|&c| d.get_by_ref(c).unwrap().class == "Terrain")
    })
}

/// The scene's `Workspace.Terrain.SmoothGrid` bytes (empty terrain when there is none).
fn grid(e: &Engine) -> Vec<u8> {
    let Some(t) = terrain_ref(e) else {
        return smoothgrid::encode(&Terrain::new());
    };
    e.with_dom(|d| {
        match d
            .get_by_ref(t)
            .unwrap()
            .properties
            .get(&"SmoothGrid".into())
        {
            Some(Variant::BinaryString(b)) => AsRef::<[u8]>::as_ref(b).to_vec(),
            _ => smoothgrid::encode(&Terrain::new()),
        }
    })
}

fn voxels(e: &Engine) -> Terrain {
    smoothgrid::decode(&grid(e)).unwrap()
}

/// Hand-made terrain: writes `t` as the scene's Terrain (as a place made in Studio has it).
fn hand_made(e: &mut Engine, t: &Terrain) {
    let ws = e.workspace();
    let r = match terrain_ref(e) {
        Some(r) => r,
        None => e.insert(ws, InstanceBuilder::new("Terrain").with_name("Terrain")),
    };
    let bytes = smoothgrid::encode(t);
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(r)
            .unwrap()
            .properties
            .insert("SmoothGrid".into(), BinaryString::from(bytes).into());
    });
}

fn rock() -> Voxel {
    Voxel::solid(Material::Rock, 255)
}

fn sand() -> Voxel {
    Voxel::solid(Material::Sand, 255)
}

fn at(t: &Terrain, x: i32, y: i32, z: i32) -> Voxel {
    t.get(IVec3::new(x, y, z))
}

/// The cells of a box, `[min, max)`.
fn cells(min: [i32; 3], max: [i32; 3]) -> Vec<IVec3> {
    let mut out = Vec::new();
    for x in min[0]..max[0] {
        for y in min[1]..max[1] {
            for z in min[2]..max[2] {
                out.push(IVec3::new(x, y, z));
            }
        }
    }
    out
}

/// Non-empty cells of `t`, sorted.
fn filled(t: &Terrain) -> Vec<IVec3> {
    let mut out = Vec::new();
    procmodel_engine::terrain::each_voxel(t, |c, _| out.push(c));
    out.sort_by_key(|c| c.to_array());
    out
}

fn sorted(mut v: Vec<IVec3>) -> Vec<IVec3> {
    v.sort_by_key(|c| c.to_array());
    v
}

fn ok(reports: &[Report]) {
    for r in reports {
        assert!(r.is_ok(), "{}: {:?}", r.path, r.error());
    }
}

fn set_num(e: &mut Engine, m: Ref, name: &str, v: f64) {
    e.set_attribute(m, name, Some(Variant::Float64(v))).unwrap();
}

fn tmp(name: &str) -> PathBuf {
    let dir = procmodel_testkit::scratch("terrain");
    dir.join(name)
}

/// Hand-made terrain of the tests: a Sand floor one cell thick under y = 0, and a Sand cell
/// in the corner of the block a model at (40, 0, −20) writes (cells 8..12 × 0..2 × −7..−3).
fn floor() -> Terrain {
    let mut t = Terrain::new();
    for c in cells([0, -1, -12], [16, 0, 0]) {
        t.set(c, sand());
    }
    t.set(IVec3::new(8, 0, -7), sand());
    t
}

#[test]
fn r12_4_a_generator_writes_terrain_at_its_pivot() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    let m = model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    // 16 × 8 × 16 studs centred on x = 40, z = −20: cells 8..12 × 0..2 × −7..−3.
    let t = voxels(&e);
    assert_eq!(filled(&t), sorted(cells([8, 0, -7], [12, 2, -3])));
    assert_eq!(at(&t, 8, 0, -7), rock());
    // The results carry the local voxels (a TerrainRegion) beside the parts.
    let names = e.with_dom(|d| {
        let f = d
            .get_by_ref(m)
            .unwrap()
            .children()
            .iter()
            .copied()
            .find(|&c| d.get_by_ref(c).unwrap().class == "GeneratedFolder")
            .unwrap();
        let mut n: Vec<String> = d
            .get_by_ref(f)
            .unwrap()
            .children()
            .iter()
            .map(|&c| {
                let i = d.get_by_ref(c).unwrap();
                format!("{}:{}", i.class, i.name)
            })
            .collect();
        n.sort();
        n
    });
    assert_eq!(names, ["Part:Marker", "TerrainRegion:GeneratedTerrain"]);
    // A position off the grid snaps to the nearest cell (41.9 → 40, −18.1 → −20).
    set_pivot(
        &mut e,
        m,
        CFrame::new(Vector3::new(41.9, 1.0, -18.1), Matrix3::identity()),
    );
    e.force_generation(m);
    ok(&e.step());
    assert_eq!(filled(&voxels(&e)), sorted(cells([8, 0, -7], [12, 2, -3])));
    // One more cell along X (x = 42.1 → 44): the old cells are given back.
    set_pivot(
        &mut e,
        m,
        CFrame::new(Vector3::new(42.1, 0.0, -20.0), Matrix3::identity()),
    );
    e.force_generation(m);
    ok(&e.step());
    assert_eq!(filled(&voxels(&e)), sorted(cells([9, 0, -7], [13, 2, -3])));
}

#[test]
fn r12_4_regenerating_replaces_exactly_the_models_voxels() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    let before = floor();
    hand_made(&mut e, &before);
    let m = model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    let t = voxels(&e);
    // The model's voxels cover the hand-made Sand cell; the floor below is untouched.
    assert_eq!(at(&t, 8, 0, -7), rock());
    assert_eq!(at(&t, 9, -1, -6), sand());
    assert_eq!(at(&t, 0, -1, -12), sand());
    // Narrower and lower: 8 × 4 × 8 studs → cells 9..11 × 0..1 × −6..−4.
    set_num(&mut e, m, "Width", 8.0);
    set_num(&mut e, m, "Height", 4.0);
    ok(&e.step());
    let t = voxels(&e);
    let mut expected = before.clone();
    for c in cells([9, 0, -6], [11, 1, -4]) {
        expected.set(c, rock());
    }
    expected.compact();
    assert_eq!(
        smoothgrid::encode(&t),
        smoothgrid::encode(&expected),
        "only the new block over the hand-made terrain"
    );
    // Another material in the same cells.
    e.set_attribute(m, "Material", Some(Variant::String("Basalt".into())))
        .unwrap();
    ok(&e.step());
    assert_eq!(
        at(&voxels(&e), 9, 0, -6),
        Voxel::solid(Material::Basalt, 255)
    );
    assert_eq!(at(&voxels(&e), 8, 0, -7), sand());
}

#[test]
fn r12_4_deleting_the_model_gives_back_what_was_under_it() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    let before = floor();
    hand_made(&mut e, &before);
    let m = model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    assert_ne!(grid(&e), smoothgrid::encode(&before));
    e.remove(m).unwrap();
    assert_eq!(grid(&e), smoothgrid::encode(&before));
    // A model deleted by a script goes the same way (at the next frame).
    let m2 = model(&mut e, "Second", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    assert_eq!(at(&voxels(&e), 8, 0, -7), rock());
    let script = tmp("delete.server.luau");
    std::fs::write(&script, "workspace.Second:Destroy()\n").unwrap();
    e.run_script(&script).unwrap();
    assert_eq!(grid(&e), smoothgrid::encode(&before));
    let _ = m2;
}

#[test]
fn r12_4_undo_and_redo_restore_the_voxels() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    hand_made(&mut e, &floor());
    let m = model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    let wide = grid(&e);
    set_num(&mut e, m, "Width", 4.0);
    ok(&e.step());
    let narrow = grid(&e);
    assert_ne!(wide, narrow);
    assert_eq!(
        at(&voxels(&e), 8, 0, -7),
        sand(),
        "the wide block gave its corner back"
    );
    let runs = e.runs(m);
    assert!(e.undo());
    assert_eq!(grid(&e), wide, "undo brings the wide block back");
    assert!(e.step().is_empty(), "without running the generator");
    assert!(e.redo());
    assert_eq!(grid(&e), narrow);
    assert_eq!(at(&voxels(&e), 8, 0, -7), sand());
    assert!(e.undo());
    assert_eq!(grid(&e), wide);
    assert!(e.step().is_empty());
    assert_eq!(e.runs(m), runs);
}

#[test]
fn r12_4_overlapping_models_the_second_fails_naming_the_first() {
    for jobs in [1, 2] {
        let mut e = engine(jobs);
        let g = module(&mut e, "Block", BLOCK);
        let a = model(&mut e, "A", g, [0.0, 0.0, 0.0], &[]);
        // 8 studs over: half of A's cells.
        let b = model(&mut e, "B", g, [8.0, 0.0, 0.0], &[]);
        let reports = e.step();
        let ra = reports.iter().find(|r| r.model == a).unwrap();
        let rb = reports.iter().find(|r| r.model == b).unwrap();
        assert!(ra.is_ok(), "{:?}", ra.error());
        assert!(!rb.is_ok(), "jobs {jobs}: B must fail");
        let msg = rb.error().unwrap();
        assert!(
            msg.contains("Workspace.A") && msg.contains("overlap"),
            "{msg}"
        );
        // Nothing of B was written: exactly A's block.
        assert_eq!(
            filled(&voxels(&e)),
            sorted(cells([-2, 0, -2], [2, 2, 2])),
            "jobs {jobs}"
        );
        // Moved clear of A, B generates; A's voxels stay.
        set_pivot(
            &mut e,
            b,
            CFrame::new(Vector3::new(16.0, 0.0, 0.0), Matrix3::identity()),
        );
        e.force_generation(b);
        ok(&e.step());
        let mut both = cells([-2, 0, -2], [2, 2, 2]);
        both.extend(cells([2, 0, -2], [6, 2, 2]));
        assert_eq!(filled(&voxels(&e)), sorted(both));
        // A grows into B: now A fails, naming B, and its old voxels are given back.
        set_num(&mut e, a, "Width", 24.0);
        let r = e.step();
        let ra = r.iter().find(|r| r.model == a).unwrap();
        assert!(!ra.is_ok());
        assert!(ra.error().as_deref().unwrap().contains("Workspace.B"));
        assert_eq!(filled(&voxels(&e)), sorted(cells([2, 0, -2], [6, 2, 2])));
    }
}

#[test]
fn r12_4_quarter_turns_about_y_are_exact_and_tilts_are_refused() {
    // A bar 16 studs along local X, one cell deep: cells x 0..4, y 0, z 0.
    const BAR: &str = r#"
local G = {}
G.Attributes = {}
function G.OnGenerate(params, target)
    params.Terrain:FillBlock(CFrame.new(8, 2, 2), Vector3.new(16, 4, 4), Enum.Material.Slate)
end
return G
"#;
    let mut e = engine(1);
    let g = module(&mut e, "Bar", BAR);
    let m = model(&mut e, "Bar", g, [0.0, 0.0, 0.0], &[]);
    ok(&e.step());
    assert_eq!(filled(&voxels(&e)), sorted(cells([0, 0, 0], [4, 1, 1])));
    // A quarter turn about Y takes +X to −Z: the bar now runs from z = −1 to z = −4.
    let turn = |deg: f32| {
        let r = glam::Mat3::from_rotation_y(deg.to_radians());
        Matrix3::new(
            Vector3::new(r.x_axis.x, r.y_axis.x, r.z_axis.x),
            Vector3::new(r.x_axis.y, r.y_axis.y, r.z_axis.y),
            Vector3::new(r.x_axis.z, r.y_axis.z, r.z_axis.z),
        )
    };
    for (deg, min, max) in [
        (90.0, [0, 0, -4], [1, 1, 0]),
        (180.0, [-4, 0, -1], [0, 1, 0]),
        (270.0, [-1, 0, 0], [0, 1, 4]),
        (-90.0, [-1, 0, 0], [0, 1, 4]),
    ] {
        set_pivot(
            &mut e,
            m,
            CFrame::new(Vector3::new(0.0, 0.0, 0.0), turn(deg)),
        );
        e.force_generation(m);
        ok(&e.step());
        assert_eq!(
            filled(&voxels(&e)),
            sorted(cells(min, max)),
            "turned {deg} degrees"
        );
    }
    // 30 degrees about Y, or any tilt: an error naming the model; its voxels are given back.
    set_pivot(
        &mut e,
        m,
        CFrame::new(Vector3::new(0.0, 0.0, 0.0), turn(30.0)),
    );
    e.force_generation(m);
    let r = e.step();
    assert!(!r[0].is_ok());
    assert_eq!(r[0].path, "Workspace.Bar");
    assert!(
        r[0].error().as_deref().unwrap().contains("quarter turns"),
        "{:?}",
        r[0].error()
    );
    assert!(filled(&voxels(&e)).is_empty());
}

#[test]
fn r12_4_ownership_survives_save_and_load() {
    for ext in ["rbxl", "rbxlx"] {
        let path = tmp(&format!("owned.{ext}"));
        let before = floor();
        {
            let mut e = engine(1);
            let g = module(&mut e, "Block", BLOCK);
            hand_made(&mut e, &before);
            model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
            ok(&e.step());
            e.save(&path).unwrap();
        }
        let mut e =
            Engine::load(procmodel_luau::runtime(), &path, EngineConfig::default()).unwrap();
        assert!(
            e.step().is_empty(),
            "{ext}: a clean model does not regenerate"
        );
        assert_eq!(at(&voxels(&e), 8, 0, -7), rock(), "{ext}");
        let m = e.models()[0];
        // After loading, a regeneration still gives back exactly its own cells...
        set_num(&mut e, m, "Width", 8.0);
        ok(&e.step());
        let t = voxels(&e);
        assert_eq!(
            at(&t, 8, 0, -7),
            sand(),
            "{ext}: the hand-made cell is back"
        );
        assert_eq!(at(&t, 11, 1, -4), Voxel::EMPTY, "{ext}");
        assert_eq!(at(&t, 9, 1, -6), rock(), "{ext}");
        assert_eq!(at(&t, 9, -1, -6), sand(), "{ext}");
        // ...and deleting it gives back the hand-made terrain, byte for byte.
        e.remove(m).unwrap();
        assert_eq!(grid(&e), smoothgrid::encode(&before), "{ext}");
    }
}

/// A scene of several terrain models (two of them overlapping) and plain ones.
fn busy_scene(jobs: usize) -> Vec<u8> {
    let mut e = engine(jobs);
    let g = module(&mut e, "Block", BLOCK);
    let plateau = module(
        &mut e,
        "Plateau",
        &std::fs::read_to_string(example("TerracedPlateau.luau")).unwrap(),
    );
    hand_made(&mut e, &floor());
    model(&mut e, "A", g, [0.0, 0.0, 0.0], &[]);
    model(&mut e, "B", g, [4.0, 0.0, 0.0], &[("Width", 8.0)]);
    model(&mut e, "C", g, [100.0, 0.0, 0.0], &[("Height", 12.0)]);
    model(&mut e, "D", plateau, [-200.0, 0.0, 0.0], &[]);
    model(&mut e, "E", g, [0.0, 40.0, 100.0], &[]);
    let reports = e.settle(10);
    assert_eq!(reports.iter().filter(|r| !r.is_ok()).count(), 1);
    let path = tmp(&format!("jobs{jobs}.rbxl"));
    e.save(&path).unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn r12_4_jobs_one_and_two_save_the_same_bytes() {
    let one = busy_scene(1);
    assert_eq!(one, busy_scene(1), "same inputs, same bytes");
    assert_eq!(
        one,
        busy_scene(2),
        "--jobs 2 merges the voxels as --jobs 1 does"
    );
}

#[test]
fn r12_4_bad_terrain_calls_fail_naming_the_model_and_the_call() {
    for (call, expect) in [
        (
            "params.Terrain:FillRegion(Region3.new(Vector3.new(1, 0, 0), Vector3.new(8, 4, 4)), 4, Enum.Material.Rock)",
            "Terrain:FillRegion: region must be aligned",
        ),
        (
            "params.Terrain:FillRegion(Region3.new(Vector3.new(0, 0, 0), Vector3.new(8, 4, 4)), 2, Enum.Material.Rock)",
            "Terrain:FillRegion: resolution must be 4",
        ),
        (
            "params.Terrain:FillBall(Vector3.new(0, 0, 0), 0/0, Enum.Material.Rock)",
            "Terrain:FillBall: radius is not a finite number",
        ),
        (
            "params.Terrain:FillBlock(CFrame.new(0/0, 0, 0), Vector3.new(4, 4, 4), Enum.Material.Rock)",
            "Terrain:FillBlock: cframe position is not a finite number",
        ),
        (
            "params.Terrain:SetMaterialColor(Enum.Material.Rock, Color3.new(1, 0, 0))",
            "Terrain:SetMaterialColor: params.Terrain holds voxels only",
        ),
    ] {
        let mut e = engine(1);
        let source = format!(
            "local G = {{}}\nG.Attributes = {{}}\nfunction G.OnGenerate(params, target)\n    {call}\nend\nreturn G\n"
        );
        let g = module(&mut e, "BadTerrain", &source);
        model(&mut e, "Broken", g, [0.0, 0.0, 0.0], &[]);
        let r = e.step();
        assert!(!r[0].is_ok(), "{call}");
        assert_eq!(r[0].path, "Workspace.Broken");
        let msg = r[0].error().unwrap();
        assert!(msg.contains(expect), "{call}: {msg}");
        assert!(msg.contains("BadTerrain:4"), "the generator's line: {msg}");
        assert!(filled(&voxels(&e)).is_empty(), "nothing written");
    }
}

#[test]
fn r12_4_scaled_models_cannot_write_terrain() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    let m = model(&mut e, "Scaled", g, [0.0, 0.0, 0.0], &[]);
    ok(&e.step());
    e.scale_to(m, 2.0).unwrap();
    e.force_generation(m);
    let r = e.step();
    assert!(!r[0].is_ok());
    assert!(
        r[0].error().as_deref().unwrap().contains("Scale"),
        "{:?}",
        r[0].error()
    );
    assert!(filled(&voxels(&e)).is_empty());
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

#[test]
fn r12_4_example_terraced_plateau_raises_terraces_and_carves_a_crater() {
    let mut e = engine(1);
    let src = std::fs::read_to_string(example("TerracedPlateau.luau")).unwrap();
    let g = module(&mut e, "TerracedPlateau", &src);
    let m = model(&mut e, "Plateau", g, [0.0, 0.0, 0.0], &[]);
    ok(&e.step());
    let t = voxels(&e);
    // Terraces: 4 steps of 8 studs, radius 64 − 12 per step; grass on each top.
    // The highest cell of a column at least half full (the crater's edge leaves slivers).
    let top = |t: &Terrain, x: i32| (0..40).rev().find(|&y| at(t, x, y, 0).occupancy >= 128);
    let column_top = |x: i32| top(&t, x);
    assert_eq!(column_top(14), Some(1), "outer ring: first terrace");
    assert_eq!(at(&t, 14, 1, 0).material, Material::Grass);
    assert_eq!(at(&t, 14, 0, 0).material, Material::Rock);
    assert_eq!(column_top(8), Some(5), "third terrace");
    // The crater: the summit's centre is carved out (radius 20 at y = 32).
    assert_eq!(column_top(0), Some(2), "crater floor");
    assert_eq!(column_top(6), Some(7), "crater rim");
    // Parts go with the voxels: the posts on the summit, placed as the voxels are.
    let posts = e.with_dom(|d| {
        d.descendants_of(m)
            .filter(|i| i.class == "Part" && i.name.starts_with("Post"))
            .count()
    });
    assert_eq!(posts, 8);
    // Without a crater the centre stands to the summit.
    set_num(&mut e, m, "CraterRadius", 0.0);
    ok(&e.step());
    let t = voxels(&e);
    assert_eq!(top(&t, 0), Some(7));
}

#[test]
fn r12_4_a_damaged_scene_terrain_fails_the_model_naming_it() {
    let mut e = engine(1);
    let g = module(&mut e, "Block", BLOCK);
    hand_made(&mut e, &floor());
    let t = terrain_ref(&e).unwrap();
    e.with_dom_mut(|d| {
        d.get_by_ref_mut(t).unwrap().properties.insert(
            "SmoothGrid".into(),
            BinaryString::from(vec![1u8, 5, 0, 0, 0]).into(),
        );
    });
    model(&mut e, "Plateau", g, [0.0, 0.0, 0.0], &[]);
    let r = e.step();
    assert!(!r[0].is_ok());
    let msg = r[0].error().unwrap();
    assert!(msg.contains("Workspace.Terrain: SmoothGrid"), "{msg}");
    // The error placeholder, not the results.
    let placeholder = e.with_dom(|d| {
        d.descendants_of(r[0].model)
            .any(|i| i.name == "GenerationErrorPlaceholder")
    });
    assert!(placeholder);
}

/// Results taken from the result cache carry their voxels like a run's: toggling an input
/// back is a hit that writes the same terrain, and the model still gives back exactly what
/// was under it afterwards (the hit must not bring back a stale record of what was under).
#[test]
fn r12_4_cache_hits_write_the_same_voxels_and_keep_ownership() {
    let cache = std::sync::Arc::new(procmodel_engine::MemoryCache::default());
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs: 1,
            cache: Some(cache.clone() as _),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let g = module(&mut e, "Block", BLOCK);
    let before = floor();
    hand_made(&mut e, &before);
    let m = model(&mut e, "Plateau", g, [40.0, 0.0, -20.0], &[]);
    ok(&e.step());
    let wide = grid(&e);
    set_num(&mut e, m, "Width", 8.0);
    ok(&e.step());
    let narrow = grid(&e);
    assert_ne!(wide, narrow);
    set_num(&mut e, m, "Width", 16.0);
    ok(&e.step());
    assert_eq!(cache.hits(), 1, "Width 16 again is a hit");
    assert_eq!(grid(&e), wide, "a hit writes the run's voxels");
    set_num(&mut e, m, "Width", 8.0);
    ok(&e.step());
    assert_eq!(grid(&e), narrow, "a second hit over the first");
    assert_eq!(cache.rejected(), 0, "no entry was refused");
    e.remove(m).unwrap();
    assert_eq!(
        grid(&e),
        smoothgrid::encode(&before),
        "deleting after hits gives back the hand-made terrain"
    );
}
