//! Roblox voxel terrain and heightmap worlds as plain data: sparse 32³-voxel chunks with
//! `Terrain`'s method semantics, the `Terrain.SmoothGrid` and `MaterialColors` codecs, noise
//! worlds with flattened points of interest, surface-nets meshes and heightmap exports.
//!
//! Owns: voxel storage and every voxel operation's rules (kernels, merge, caps, alignment,
//! errors), the SmoothGrid byte format, world generation (height, bands, zones, resources),
//! meshing and heightmap/splat encodings. Must never: touch Luau, the DOM (`rbx_dom_weak`),
//! files, clocks or hash-map order — bytes in, bytes out; same inputs give the same bytes on
//! any thread count.
//!
//! # For the bindings (thin by design)
//! - `workspace.Terrain` methods map one to one: `FillBlock` → [`Terrain::fill_block`]
//!   (CFrame → `glam::Affine3A`), `FillBall`, `FillCylinder`, `FillWedge`; region methods first
//!   call [`validate_region`] with the Region3 corners, the resolution and the cap
//!   ([`VoxelCap::ReadWrite`] for Read/WriteVoxels(Channels), [`VoxelCap::Fill`] otherwise),
//!   then [`Terrain::fill_region`], [`Terrain::read_voxels`] (→ [`VoxelBox`], whose
//!   [`VoxelBox::index`] maps Luau's 1-based `[x][y][z]`; [`VoxelBox::legacy`] gives
//!   ReadVoxels' Water view), [`Terrain::write_voxels`], [`Terrain::replace_material`],
//!   [`Terrain::copy_region`] / [`Terrain::paste_region`], [`Terrain::clear`]; conversions
//!   [`cell_center_to_world`], [`cell_corner_to_world`], [`world_to_cell`],
//!   [`Terrain::world_to_cell_prefer_solid`] / [`Terrain::world_to_cell_prefer_empty`].
//!   `Enum.Material` values convert with [`Material::from_enum_value`]; every error is a
//!   [`TerrainError`] whose `Display` is the message to raise.
//! - Files: [`smoothgrid::encode`] / [`smoothgrid::decode`] for `Terrain.SmoothGrid` (a
//!   BinaryString), [`MaterialColors`] for `Terrain.MaterialColors`.
//! - Worlds: [`WorldSpec`] (the world file's keys; [`WorldSpec::plan`] checks it for the
//!   CLI and the Luau module alike), [`World::new`] (a [`WorldConfig`] with [`Zone`]s),
//!   [`World::bands`] and [`World::write_voxels`]'s per-band callback for cooperative
//!   pausing ([`World::write_voxel_count`] to cap a call first), [`World::resources`] and
//!   [`World::place_resources`]; outputs [`mesh_region`] (plain vertex/index arrays per material:
//!   no glTF writer here — the export crate wraps them), [`HeightmapExport`], [`splat_maps`].
//! - `workspace:Raycast` / FindPartOnRay: [`Terrain::raycast`] (origin, direction in studs,
//!   [`TerrainRay`] from `RaycastParams.IgnoreWater` / `terrainCellsAreCubes`) gives the first
//!   [`TerrainHit`] (`t` is the fraction of the direction: compare `t·|direction|` with the
//!   nearest part hit; Water hits carry [`Material::Water`]); rules in [`raycast`].
//!
//! # Rules chosen where Roblox documents none
//! Fill kernels and the merge rule: see [`fill`]. SmoothGrid's open points: see
//! [`smoothgrid`]. Meshing: see [`mesh`]. Ray casts: see [`raycast`].

pub mod error;
pub mod fill;
pub mod heightmap;
pub mod material;
pub mod mesh;
pub mod raycast;
pub mod region;
pub mod resources;
pub mod smoothgrid;
pub mod spec;
pub mod storage;
pub mod world;
pub mod zones;

pub use error::TerrainError;
pub use heightmap::{
    HeightRange, HeightmapExport, Sidecar, SizeSnap, UNITY_SIZES, UNREAL_SIZES, snap_size,
    splat_maps,
};
pub use material::{MATERIAL_COLORS_LEN, MATERIAL_COLORS_ORDER, Material, MaterialColors};
pub use mesh::{MeshPart, SampleBlock, TerrainMesh, mesh_block, mesh_region, mesh_terrain};
pub use raycast::{TerrainHit, TerrainRay};
pub use region::{
    MAX_VOXELS_FILL, MAX_VOXELS_READ_WRITE, VoxelCap, cell_center_to_world, cell_corner_to_world,
    expand_to_grid, validate_region, world_to_cell,
};
pub use resources::{
    MAX_HALF, PlacedResource, Resource, ResourceConfig, ResourceKind, ResourcePlan, ZoneExclusion,
};
pub use spec::{BandSpec, MAX_COLUMNS, NoiseSpec, ResourcesSpec, WorldPlan, WorldSpec, ZoneSpec};
pub use storage::{CHUNK, CellRegion, Chunk, Terrain, TerrainRegion, Voxel, VoxelBox, quantize};
pub use world::{
    BandRule, Column, HeightNoise, Heightfield, MaterialBands, SampleRect, VoxelColumns, World,
    WorldConfig,
};
pub use zones::{Falloff, RectCorners, Zone, ZoneShape, validate_zones};
