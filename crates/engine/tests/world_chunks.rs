//! A world in chunks (issue #12 item 6): `examples/village/VillageChunks.luau` makes one nested
//! ProceduralModel per chunk, each writing its square of the world into its own
//! `params.Terrain` at its pivot. The scene's Terrain is then exactly the world written in one
//! piece (borders match; the village circle crosses four chunks), and regenerating one chunk,
//! or everything, leaves the same bytes.

use procmodel_engine::{Engine, EngineConfig, Report};
use procmodel_terrain::{Terrain, WorldSpec, smoothgrid};
use rbx_dom_weak::InstanceBuilder;
use rbx_types::{Attributes, Ref, Variant, Vector3};
use std::ops::ControlFlow;
use std::path::PathBuf;

fn example() -> String {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/village/VillageChunks.luau");
    std::fs::read_to_string(p).unwrap()
}

/// A scene with the chunked world model at the origin: `chunks`² chunks of `studs`.
fn scene(jobs: usize, chunks: f64, studs: f64) -> (Engine, Ref) {
    let mut e = Engine::new(
        procmodel_luau::runtime(),
        EngineConfig {
            jobs,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let storage = e.server_storage();
    let g = e.insert(
        storage,
        InstanceBuilder::new("ModuleScript")
            .with_name("VillageChunks")
            .with_property("Source", Variant::String(example())),
    );
    let mut a = Attributes::new();
    a.insert("Chunks".into(), Variant::Float64(chunks));
    a.insert("ChunkStuds".into(), Variant::Float64(studs));
    let ws = e.workspace();
    let m = e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("World")
            .with_property("Generator", Variant::Ref(g))
            .with_property("Size", Vector3::new(256.0, 64.0, 256.0))
            .with_property("Attributes", Variant::Attributes(a)),
    );
    (e, m)
}

fn ok(reports: &[Report]) {
    for r in reports {
        assert!(r.is_ok(), "{}: {:?}", r.path, r.error());
    }
}

/// The scene's `Workspace.Terrain.SmoothGrid`.
fn grid(e: &Engine) -> Vec<u8> {
    e.with_dom(|d| {
        let terrain = d
            .descendants()
            .find(|i| i.class == "Terrain")
            .expect("the scene has a Terrain");
        match terrain.properties.get(&"SmoothGrid".into()) {
            Some(Variant::BinaryString(b)) => AsRef::<[u8]>::as_ref(b).to_vec(),
            _ => panic!("no SmoothGrid"),
        }
    })
}

/// The same world written in one piece by the terrain crate: the example's options as a
/// world file.
fn whole(chunks: f64, studs: f64) -> Vec<u8> {
    let half = chunks * studs / 2.0;
    let n = (2.0 * half / 4.0) as i64;
    let spec = format!(
        r#"
seed = 0
scale = 15
height = 20
base = -4
grid = 4
columns = [{n}, {n}]
origin = [{o}, {o}]
[[zones]]
shape = "rect"
center = [120, 120]
x1 = 80
x2 = 160
z1 = 120
z2 = 200
material = "Sandstone"
[[zones]]
shape = "rect"
center = [120, 240]
x1 = 80
x2 = 160
z1 = 120
z2 = 200
material = "Salt"
[[zones]]
shape = "rect"
center = [240, 240]
x1 = 80
x2 = 160
z1 = 120
z2 = 200
material = "Asphalt"
[[zones]]
shape = "rect"
center = [240, 120]
x1 = 80
x2 = 160
z1 = 120
z2 = 200
material = "Concrete"
[[zones]]
shape = "circle"
center = [0, 0]
r1 = 80
r2 = 160
material = "Asphalt"
"#,
        o = -(half / 4.0) as i64
    );
    let spec: WorldSpec = toml::from_str(&spec).unwrap();
    let plan = spec.plan().unwrap();
    let floor = plan.floor().unwrap().unwrap();
    let mut t = Terrain::new();
    // The chunks' regions, in studs: [-half, half) on each axis, as voxel columns.
    let c = (half / 4.0) as i32;
    plan.world
        .write_voxels(
            &mut t,
            procmodel_terrain::VoxelColumns {
                min: [-c, -c],
                max: [c, c],
            },
            floor,
            |_| ControlFlow::Continue(()),
        )
        .unwrap();
    t.compact();
    smoothgrid::encode(&t)
}

fn chunk_models(e: &Engine, world: Ref) -> Vec<Ref> {
    e.with_dom(|d| {
        d.descendants_of(world)
            .filter(|i| i.class == "ProceduralModel" && i.referent() != world)
            .map(|i| i.referent())
            .collect()
    })
}

#[test]
fn r12_6_chunk_models_make_the_world_seam_free() {
    let (mut e, world) = scene(1, 2.0, 256.0);
    let reports = e.settle(20);
    ok(&reports);
    // The world model, then its four chunks (top down).
    assert_eq!(
        reports.len(),
        5,
        "{:?}",
        reports.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let chunks = chunk_models(&e, world);
    assert_eq!(chunks.len(), 4);
    let merged = grid(&e);
    let reference = whole(2.0, 256.0);
    assert!(
        merged == reference,
        "the chunks' voxels differ from the world written whole ({} vs {} bytes)",
        merged.len(),
        reference.len()
    );
    // Resources: trees and rocks in the chunks, none twice (their positions are distinct).
    let mut spots: Vec<(i64, i64)> = e.with_dom(|d| {
        d.descendants_of(world)
            .filter(|i| i.name == "Trunk" || i.name == "Rock")
            .map(|i| match i.properties.get(&"CFrame".into()) {
                Some(Variant::CFrame(cf)) => (cf.position.x as i64, cf.position.z as i64),
                _ => panic!("a part without CFrame"),
            })
            .collect()
    });
    let n = spots.len();
    assert!(n > 10, "{n} resources");
    spots.sort();
    spots.dedup();
    assert_eq!(spots.len(), n, "a resource placed twice");

    // Regenerating one chunk gives back the same voxels, and only it runs.
    assert!(e.force_generation(chunks[1]));
    let r = e.settle(20);
    ok(&r);
    assert_eq!(r.len(), 1);
    assert!(
        grid(&e) == reference,
        "one chunk regenerated changed the world"
    );

    // Everything forced (what `regen --force` does): the world model replaces its chunks,
    // the old chunks are not generated on their own, and the voxels are the same.
    for m in std::iter::once(world).chain(chunk_models(&e, world)) {
        assert!(e.force_generation(m));
    }
    let r = e.settle(20);
    ok(&r);
    assert_eq!(
        r.len(),
        5,
        "{:?}",
        r.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert!(
        grid(&e) == reference,
        "regenerating everything changed the world"
    );
}

#[test]
fn r12_6_jobs_two_gives_the_same_world() {
    let run = |jobs| {
        let (mut e, world) = scene(jobs, 2.0, 128.0);
        ok(&e.settle(20));
        for m in std::iter::once(world).chain(chunk_models(&e, world)) {
            e.force_generation(m);
        }
        ok(&e.settle(20));
        grid(&e)
    };
    let one = run(1);
    assert!(one == whole(2.0, 128.0));
    assert!(run(2) == one, "--jobs 2 wrote other voxels");
}

#[test]
fn r12_6_bad_chunk_sizes_are_named() {
    let (mut e, _) = scene(1, 2.0, 100.0);
    let r = e.settle(20);
    assert!(!r[0].is_ok());
    let msg = r[0].error().unwrap();
    assert!(
        msg.contains("ChunkStuds must be a positive multiple of 8 (got 100)"),
        "{msg}"
    );
}

#[test]
fn r12_6_two_worlds_generated_by_workers_keep_their_chunks_generators() {
    // Both world models run at once on worker VMs: the chunk models they make point at the
    // generator module (`script`) of the scene, and generate in the next pass.
    let (mut e, first) = scene(2, 2.0, 128.0);
    let g = e.with_dom(|d| {
        match d
            .get_by_ref(first)
            .unwrap()
            .properties
            .get(&"Generator".into())
        {
            Some(Variant::Ref(r)) => *r,
            _ => panic!("no generator"),
        }
    });
    let ws = e.workspace();
    let mut a = Attributes::new();
    a.insert("Chunks".into(), Variant::Float64(2.0));
    a.insert("ChunkStuds".into(), Variant::Float64(128.0));
    let second = e.insert(
        ws,
        InstanceBuilder::new("ProceduralModel")
            .with_name("Far")
            .with_property("Generator", Variant::Ref(g))
            .with_property("Size", Vector3::new(256.0, 64.0, 256.0))
            .with_property("Attributes", Variant::Attributes(a))
            .with_property(
                "WorldPivotData",
                Variant::OptionalCFrame(Some(rbx_types::CFrame::new(
                    Vector3::new(1024.0, 0.0, 0.0),
                    rbx_types::Matrix3::identity(),
                ))),
            ),
    );
    let r = e.settle(20);
    ok(&r);
    assert_eq!(r.len(), 10);
    for w in [first, second] {
        let chunks = chunk_models(&e, w);
        assert_eq!(chunks.len(), 4);
        e.with_dom(|d| {
            for c in chunks {
                let generator = d.get_by_ref(c).unwrap().properties.get(&"Generator".into());
                assert_eq!(generator, Some(&Variant::Ref(g)));
            }
        });
    }
}
