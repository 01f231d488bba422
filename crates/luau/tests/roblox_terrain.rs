//! The Terrain conformance corpus: one #[test] per script in tests/roblox/terrain.
mod common;
roblox_tests!("terrain": workspace_terrain, fill_block, fill_shapes, voxels, voxel_channels,
    edit, cells, column_loop, legacy_cells);

use procmodel_luau::{Host, HostConfig};
use rbx_types::Variant;

/// Voxels a script writes reach the DOM as the Terrain's `SmoothGrid` (what a saved place
/// carries), and a later host over that DOM reads them back.
#[test]
fn terrain_written_by_a_script_is_saved_in_smoothgrid_and_loads_again() {
    let dir = procmodel_testkit::scratch("terrain");
    let write = dir.join("write.luau");
    std::fs::write(
        &write,
        "workspace.Terrain:FillBlock(CFrame.new(6, 2, 2), Vector3.new(12, 4, 4), Enum.Material.Basalt)\n\
         workspace.Terrain:SetMaterialColor(Enum.Material.Basalt, Color3.fromRGB(9, 8, 7))\n",
    )
    .unwrap();
    let config = HostConfig {
        echo_output: false,
        ..HostConfig::default()
    };
    let mut host = Host::new(config.clone()).unwrap();
    host.run_script_file(&write).unwrap();
    let dom = host.take_dom();
    let ws = dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&r| dom.get_by_ref(r).unwrap().class == "Workspace")
        .unwrap();
    let terrain = dom
        .get_by_ref(ws)
        .unwrap()
        .children()
        .iter()
        .copied()
        .find(|&r| dom.get_by_ref(r).unwrap().class == "Terrain")
        .expect("a Terrain under Workspace");
    let grid = match dom
        .get_by_ref(terrain)
        .unwrap()
        .properties
        .get(&"SmoothGrid".into())
    {
        Some(Variant::BinaryString(b)) => AsRef::<[u8]>::as_ref(b).to_vec(),
        other => panic!("SmoothGrid: {other:?}"),
    };
    let decoded = procmodel_terrain::smoothgrid::decode(&grid).unwrap();
    let v = decoded.get(glam::IVec3::new(2, 0, 0));
    assert_eq!(v.material, procmodel_terrain::Material::Basalt);
    assert_eq!(v.occupancy, 255);

    let read = dir.join("read.luau");
    std::fs::write(
        &read,
        "local m = workspace.Terrain:ReadVoxels(Region3.new(Vector3.new(0, 0, 0), Vector3.new(12, 4, 4)), 4)\n\
         assert(m[3][1][1] == Enum.Material.Basalt)\n\
         assert(workspace.Terrain:GetMaterialColor(Enum.Material.Basalt) == Color3.fromRGB(9, 8, 7))\n",
    )
    .unwrap();
    let mut again = Host::with_dom(config, dom).unwrap();
    again.run_script_file(&read).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}
