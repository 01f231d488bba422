//! `params.Terrain` (issue #12 item 4): a generator's own Terrain in its local space, handed
//! to the run's results as a `GeneratedTerrain` TerrainRegion; the scene's Terrain untouched.

use procmodel_luau::{GENERATED_TERRAIN, Host, HostConfig, HostError, RunInputs};
use procmodel_terrain::{Material, Terrain, smoothgrid};
use rbx_types::{Ref, Variant};

fn run(source: &str) -> (Host, Result<Ref, String>) {
    let dir = procmodel_testkit::scratch("genterrain");
    let path = dir.join(format!("Gen{}.luau", blake(source)));
    std::fs::write(&path, source).unwrap();
    let mut h = Host::new(HostConfig {
        echo_output: false,
        ..HostConfig::default()
    })
    .unwrap();
    let root = h.with_dom_ref(|d| d.root_ref());
    let g = h.load_generator_file(&path, root).unwrap();
    let out = h
        .run_generator(&g, &RunInputs::default())
        .map(|o| o.container)
        .map_err(|e| match e {
            HostError::Script { message, traceback } => {
                format!("{message}\n{}", traceback.unwrap_or_default())
            }
            other => other.to_string(),
        });
    (h, out)
}

fn blake(s: &str) -> u64 {
    s.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    })
}

/// The voxels of the results' GeneratedTerrain, and the other children's names.
fn generated(h: &Host, container: Ref) -> (Option<Terrain>, Vec<String>) {
    h.with_dom_ref(|d| {
        let mut voxels = None;
        let mut others = Vec::new();
        for &c in d.get_by_ref(container).unwrap().children() {
            let i = d.get_by_ref(c).unwrap();
            if i.class == "TerrainRegion" && i.name == GENERATED_TERRAIN {
                match i.properties.get(&"SmoothGrid".into()) {
                    Some(Variant::BinaryString(b)) => {
                        voxels = Some(smoothgrid::decode(AsRef::<[u8]>::as_ref(b)).unwrap());
                    }
                    other => panic!("SmoothGrid: {other:?}"),
                }
            } else {
                others.push(i.name.clone());
            }
        }
        (voxels, others)
    })
}

#[test]
fn r12_4_params_terrain_voxels_go_into_the_results_in_local_space() {
    let (h, out) = run(r#"
local G = { Attributes = {} }
function G.OnGenerate(params, target)
    local t = params.Terrain
    assert(t == params.Terrain, "one object per run")
    assert(t.ClassName == "Terrain" and t.Parent == nil)
    t:FillBlock(CFrame.new(-6, 2, 2), Vector3.new(4, 4, 4), Enum.Material.Rock)
    t:FillRegion(Region3.new(Vector3.new(0, 0, 0), Vector3.new(8, 4, 4)), 4, Enum.Material.Sand)
    t:FillRegion(Region3.new(Vector3.new(4, 0, 0), Vector3.new(8, 4, 4)), 4, Enum.Material.Air)
    -- It reads back what this run wrote, and nothing of the scene's Terrain.
    local m = t:ReadVoxels(Region3.new(Vector3.new(-8, 0, 0), Vector3.new(8, 4, 4)), 4)
    assert(m[1][1][1] == Enum.Material.Rock, tostring(m[1][1][1]))
    assert(m[2][1][1] == Enum.Material.Air, tostring(m[2][1][1]))
    assert(m[3][1][1] == Enum.Material.Sand, tostring(m[3][1][1]))
    assert(m[4][1][1] == Enum.Material.Air, tostring(m[4][1][1]))
    local p = Instance.new("Part")
    p.Name = "P"
    p.Parent = target
end
return G
"#);
    let container = out.unwrap();
    let (voxels, others) = generated(&h, container);
    assert_eq!(others, ["P"]);
    let t = voxels.expect("a GeneratedTerrain");
    let at = |x| t.get(glam::IVec3::new(x, 0, 0));
    assert_eq!(at(-2).material, Material::Rock);
    assert_eq!(at(-2).occupancy, 255);
    assert_eq!(at(0).material, Material::Sand);
    assert!(at(1).is_empty() && at(-3).is_empty());
    // The scene's Terrain was not made nor written.
    let scene_terrain = h.with_dom_ref(|d| procmodel_dom::workspace_terrain(d).is_some());
    assert!(!scene_terrain);
}

#[test]
fn r12_4_a_generator_that_writes_no_voxels_leaves_no_terrain_region() {
    for body in [
        "",
        "local _ = params.Terrain",
        "params.Terrain:FillBall(Vector3.zero, 8, Enum.Material.Air)",
        "params.Terrain:FillBall(Vector3.zero, 8, Enum.Material.Rock); params.Terrain:Clear()",
    ] {
        let (h, out) = run(&format!(
            "local G = {{ Attributes = {{}} }}\nfunction G.OnGenerate(params, target)\n{body}\nend\nreturn G\n"
        ));
        let (voxels, _) = generated(&h, out.unwrap());
        assert!(voxels.is_none(), "{body:?}");
    }
}

#[test]
fn r12_4_a_failed_run_drops_its_voxels_and_names_the_call() {
    let (_, out) = run(r#"
local G = { Attributes = {} }
function G.OnGenerate(params, target)
    params.Terrain:FillBall(Vector3.zero, 8, Enum.Material.Rock)
    params.Terrain:WriteVoxels(Region3.new(Vector3.zero, Vector3.new(8, 4, 4)), 4, {}, {})
end
return G
"#);
    let e = out.unwrap_err();
    assert!(
        e.contains("Terrain:WriteVoxels: materials must be a 2x1x1 array"),
        "{e}"
    );
    assert!(
        e.contains(":5: in function 'OnGenerate'"),
        "the line of the call: {e}"
    );
}
