//! Voxel storage and the region methods: Read/WriteVoxels, ReplaceMaterial, Copy/PasteRegion,
//! Clear, FillRegion, and memory that follows the surface.

use glam::IVec3;
use procmodel_terrain::*;

fn region(min: [f64; 3], max: [f64; 3], cap: VoxelCap) -> CellRegion {
    validate_region(min, max, 4.0, cap).unwrap()
}

#[test]
fn write_then_read_voxels() {
    let mut t = Terrain::new();
    let r = region([-8.0, 0.0, -4.0], [8.0, 8.0, 4.0], VoxelCap::ReadWrite);
    let mut b = VoxelBox::empty([4, 2, 2]);
    let i = b.index(1, 1, 0);
    b.materials[i] = Material::Grass;
    b.occupancy[i] = 0.5;
    let j = b.index(3, 0, 1);
    b.materials[j] = Material::Water; // legacy water
    b.occupancy[j] = 0.75;
    let k = b.index(0, 0, 0);
    b.materials[k] = Material::Rock;
    b.occupancy[k] = 7.0; // clamped to 1
    t.write_voxels(r, &b).unwrap();
    let back = t.read_voxels(r);
    assert_eq!(back.materials[i], Material::Grass);
    assert_eq!(back.occupancy[i], 128.0 / 255.0);
    assert_eq!((back.materials[j], back.occupancy[j]), (Material::Air, 0.0));
    assert_eq!(back.liquid[j], 191.0 / 255.0);
    assert_eq!(
        (back.materials[k], back.occupancy[k]),
        (Material::Rock, 1.0)
    );
    let (lm, lo) = back.legacy();
    assert_eq!((lm[j], lo[j]), (Material::Water, 191.0 / 255.0));
    // Cell (-2, 0, -1) is the box's (0, 0, 0).
    assert_eq!(t.get(IVec3::new(-2, 0, -1)).material, Material::Rock);
    // Size mismatch and NaN are errors.
    let e = t.write_voxels(r, &VoxelBox::empty([4, 2, 1])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "voxel arrays has 8 entries but the region has 16 voxels"
    );
    let mut nan = VoxelBox::empty([4, 2, 2]);
    nan.occupancy[3] = f32::NAN;
    assert!(matches!(
        t.write_voxels(r, &nan),
        Err(TerrainError::NonFinite { .. })
    ));
}

#[test]
fn replace_clear_fill_region() {
    let mut t = Terrain::new();
    let r = region([0.0; 3], [16.0; 3], VoxelCap::Fill);
    t.fill_region(r, Material::Rock);
    t.set(IVec3::new(1, 1, 1), Voxel::solid(Material::Sand, 100));
    t.replace_material(r, Material::Rock, Material::Snow);
    assert_eq!(t.get(IVec3::ZERO), Voxel::solid(Material::Snow, 255));
    assert_eq!(
        t.get(IVec3::new(1, 1, 1)),
        Voxel::solid(Material::Sand, 100)
    );
    t.replace_material(r, Material::Snow, Material::Air);
    assert!(t.get(IVec3::ZERO).is_empty());
    t.replace_material(r, Material::Air, Material::Mud);
    assert_eq!(t.get(IVec3::ZERO), Voxel::solid(Material::Mud, 255));
    t.fill_region(r, Material::Air);
    assert!(t.is_empty());
    t.fill_region(r, Material::Rock);
    t.clear();
    assert!(t.is_empty() && t.chunk_counts() == (0, 0));
}

#[test]
fn copy_and_paste_regions() {
    let mut t = Terrain::new();
    t.set(IVec3::new(0, 0, 0), Voxel::solid(Material::Brick, 255));
    t.set(IVec3::new(1, 0, 0), Voxel::solid(Material::Brick, 60));
    let src = t.copy_region(CellRegion {
        min: IVec3::ZERO,
        max: IVec3::new(3, 1, 1),
    });
    assert_eq!(src.size, IVec3::new(3, 1, 1));
    // Destination has something where the copy is empty.
    t.set(IVec3::new(12, 0, 0), Voxel::solid(Material::Salt, 255));
    t.paste_region(&src, IVec3::new(10, 0, 0), false).unwrap();
    assert_eq!(
        t.get(IVec3::new(10, 0, 0)),
        Voxel::solid(Material::Brick, 255)
    );
    assert_eq!(
        t.get(IVec3::new(11, 0, 0)),
        Voxel::solid(Material::Brick, 60)
    );
    assert_eq!(t.get(IVec3::new(12, 0, 0)).material, Material::Salt);
    t.paste_region(&src, IVec3::new(10, 0, 0), true).unwrap();
    assert!(
        t.paste_region(&src, IVec3::new(i32::MAX - 1, 0, 0), true)
            .is_err()
    );
    let mut bad = src.clone();
    bad.voxels.liquid.pop();
    assert!(t.paste_region(&bad, IVec3::ZERO, true).is_err());
    assert!(t.get(IVec3::new(12, 0, 0)).is_empty());
}

#[test]
fn memory_follows_the_surface() {
    let mut t = Terrain::new();
    // 8×2×8 chunks of solid ground, chunk aligned: every chunk uniform.
    let r = region([0.0; 3], [1024.0, 256.0, 1024.0], VoxelCap::Fill);
    t.fill_region(r, Material::Ground);
    assert_eq!(t.chunk_counts(), (128, 0));
    assert!(t.memory_bytes() < 64 * 1024);
    // A partial top layer makes only the top chunks dense.
    let top = region([0.0, 252.0, 0.0], [1024.0, 256.0, 1024.0], VoxelCap::Fill);
    t.fill_region(top, Material::Air);
    assert_eq!(t.chunk_counts(), (128, 64));
    // Many tiny edits compact on request.
    let mut s = Terrain::new();
    for x in 0..32 {
        for y in 0..32 {
            for z in 0..32 {
                s.set(IVec3::new(x, y, z), Voxel::solid(Material::Rock, 255));
            }
        }
    }
    assert_eq!(s.chunk_counts(), (1, 1));
    s.compact();
    assert_eq!(s.chunk_counts(), (1, 0));
    assert_eq!(smoothgrid::encode(&s).len(), 2 + 12 + 256);
}

/// A copy of a region far larger than the terrain (`CopyRegion(terrain.MaxExtents)`, the
/// usual way to keep a whole map) holds only the voxels there are; pasting it back where it
/// came from restores the terrain, and with `paste_empty_cells` empties what was added since.
#[test]
fn a_copy_of_the_whole_extent_holds_what_there_is() {
    let mut t = Terrain::new();
    t.set(IVec3::new(3, -2, 7), Voxel::solid(Material::Brick, 255));
    t.set(IVec3::new(-40, 5, 0), Voxel::solid(Material::Sand, 128));
    let extent = CellRegion {
        min: IVec3::splat(-32000),
        max: IVec3::splat(32001),
    };
    let copy = t.copy_region(extent);
    assert_eq!(copy.size, IVec3::splat(64001));
    assert!(copy.voxels.len() < 1 << 20, "{} voxels", copy.voxels.len());
    let before: Vec<_> = [IVec3::new(3, -2, 7), IVec3::new(-40, 5, 0)]
        .map(|c| t.get(c))
        .to_vec();
    t.clear();
    t.set(IVec3::new(100, 0, 0), Voxel::solid(Material::Salt, 255));
    t.paste_region(&copy, extent.min, false).unwrap();
    assert_eq!(t.get(IVec3::new(3, -2, 7)), before[0]);
    assert_eq!(t.get(IVec3::new(-40, 5, 0)), before[1]);
    assert_eq!(
        t.get(IVec3::new(100, 0, 0)).material,
        Material::Salt,
        "kept"
    );
    t.paste_region(&copy, extent.min, true).unwrap();
    assert!(t.get(IVec3::new(100, 0, 0)).is_empty(), "emptied");
    assert_eq!(t.get(IVec3::new(3, -2, 7)), before[0]);
    // Pasted elsewhere, the copy keeps its voxels' places within the region.
    let mut u = Terrain::new();
    u.paste_region(&copy, extent.min + IVec3::new(1, 0, 0), true)
        .unwrap();
    assert_eq!(u.get(IVec3::new(4, -2, 7)), before[0]);
    // A copy of an empty terrain holds nothing and pastes as nothing.
    let empty = Terrain::new().copy_region(extent);
    assert_eq!(empty.voxels.len(), 0);
    u.paste_region(&empty, extent.min, false).unwrap();
    assert_eq!(u.get(IVec3::new(4, -2, 7)), before[0]);
}
