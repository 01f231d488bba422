//! Stud ↔ cell conversions and the argument rules of the region methods: resolution 4,
//! alignment to the 4-stud grid, and the per-call voxel caps.

use crate::error::TerrainError;
use crate::storage::{CellRegion, Terrain};
use glam::{IVec3, Vec3};

/// Voxel cap per `ReadVoxels`/`WriteVoxels`/`ReadVoxelChannels`/`WriteVoxelChannels` call.
pub const MAX_VOXELS_READ_WRITE: u64 = 4_194_304;
/// Voxel cap per call of the other methods (Fill*, ReplaceMaterial, CopyRegion …); for
/// CFrame + size fills the AABB of the shape counts.
pub const MAX_VOXELS_FILL: u64 = 67_108_864;
/// The engine's terrain extent: coordinates beyond ±2^23 studs are rejected.
pub const MAX_STUDS: f64 = 8_388_608.0;

/// Which per-call cap applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoxelCap {
    /// 4,194,304 voxels.
    ReadWrite,
    /// 67,108,864 voxels.
    Fill,
}

impl VoxelCap {
    /// The cap in voxels.
    pub fn limit(self) -> u64 {
        match self {
            VoxelCap::ReadWrite => MAX_VOXELS_READ_WRITE,
            VoxelCap::Fill => MAX_VOXELS_FILL,
        }
    }
}

const AXES: [char; 3] = ['X', 'Y', 'Z'];

fn finite(what: &'static str, v: f64) -> Result<(), TerrainError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(TerrainError::NonFinite { what, value: v })
    }
}

/// Checks a voxel count against a cap.
pub fn check_cap(voxels: u128, cap: VoxelCap) -> Result<(), TerrainError> {
    if voxels > u128::from(cap.limit()) {
        Err(TerrainError::TooLarge {
            voxels,
            limit: cap.limit(),
        })
    } else {
        Ok(())
    }
}

/// Validates a Region3 (min/max corners in studs) and resolution as the region methods do,
/// checking in this order: resolution must be exactly 4; every coordinate finite, within
/// ±2^23 studs and a multiple of 4 (`NotAligned` names the corner and axis); min ≤ max per
/// axis; the voxel count within `cap`. Returns the cells `[min/4, max/4)`.
pub fn validate_region(
    min: [f64; 3],
    max: [f64; 3],
    resolution: f64,
    cap: VoxelCap,
) -> Result<CellRegion, TerrainError> {
    if resolution != 4.0 {
        return Err(TerrainError::Resolution(resolution));
    }
    let mut lo = IVec3::ZERO;
    let mut hi = IVec3::ZERO;
    for a in 0..3 {
        for (corner, v, out) in [("min", min[a], &mut lo), ("max", max[a], &mut hi)] {
            finite(
                if corner == "min" {
                    "region min"
                } else {
                    "region max"
                },
                v,
            )?;
            if v.abs() > MAX_STUDS {
                return Err(TerrainError::OutOfRange {
                    what: "region corner",
                    value: v,
                });
            }
            if v % 4.0 != 0.0 {
                return Err(TerrainError::NotAligned {
                    corner,
                    axis: AXES[a],
                    value: v,
                });
            }
            out[a] = (v / 4.0) as i32;
        }
        if min[a] > max[a] {
            return Err(TerrainError::Inverted {
                axis: AXES[a],
                min: min[a],
                max: max[a],
            });
        }
    }
    let s = (hi - lo).as_i64vec3();
    check_cap(s.x as u128 * s.y as u128 * s.z as u128, cap)?;
    Ok(CellRegion { min: lo, max: hi })
}

/// `Region3:ExpandToGrid(4)`: the smallest aligned region containing the box.
pub fn expand_to_grid(min: [f64; 3], max: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    (
        min.map(|v| (v / 4.0).floor() * 4.0),
        max.map(|v| (v / 4.0).ceil() * 4.0),
    )
}

/// `Terrain:CellCenterToWorld(x, y, z)`: `4·cell + 2` per axis.
pub fn cell_center_to_world(cell: IVec3) -> Vec3 {
    cell.as_vec3() * 4.0 + Vec3::splat(2.0)
}

/// `Terrain:CellCornerToWorld(x, y, z)`: `4·cell` per axis (the cell's minimum corner).
pub fn cell_corner_to_world(cell: IVec3) -> Vec3 {
    cell.as_vec3() * 4.0
}

/// `Terrain:WorldToCell(position)`: the cell containing the point, `floor(p / 4)`
/// (a point on a boundary belongs to the cell above it).
pub fn world_to_cell(p: Vec3) -> Result<IVec3, TerrainError> {
    let mut c = IVec3::ZERO;
    for a in 0..3 {
        let v = f64::from(p[a]);
        finite("position", v)?;
        if v.abs() > MAX_STUDS {
            return Err(TerrainError::OutOfRange {
                what: "position",
                value: v,
            });
        }
        c[a] = (v / 4.0).floor() as i32;
    }
    Ok(c)
}

impl Terrain {
    /// `WorldToCellPreferSolid`: on an axis where the point lies exactly on a cell boundary,
    /// both neighbouring cells are candidates; the first non-empty candidate (lower cells first,
    /// X then Y then Z) wins, otherwise [`world_to_cell`].
    pub fn world_to_cell_prefer_solid(&self, p: Vec3) -> Result<IVec3, TerrainError> {
        self.world_to_cell_prefer(p, true)
    }

    /// `WorldToCellPreferEmpty`: as [`Terrain::world_to_cell_prefer_solid`], preferring an
    /// empty candidate.
    pub fn world_to_cell_prefer_empty(&self, p: Vec3) -> Result<IVec3, TerrainError> {
        self.world_to_cell_prefer(p, false)
    }

    fn world_to_cell_prefer(&self, p: Vec3, solid: bool) -> Result<IVec3, TerrainError> {
        let base = world_to_cell(p)?;
        let on_edge = [0, 1, 2].map(|a| (p[a] / 4.0).fract() == 0.0);
        let mut first = None;
        for bits in 0..8u32 {
            let mut c = base;
            let mut ok = true;
            for a in 0..3 {
                if bits & (1 << a) == 0 {
                    // "lower" candidate: on an edge, the cell below the boundary.
                    if on_edge[a] {
                        c[a] -= 1;
                    }
                } else if !on_edge[a] {
                    ok = false;
                }
            }
            if !ok {
                continue;
            }
            first.get_or_insert(c);
            let v = self.get(c);
            if (v.occupancy > 0) == solid {
                return Ok(c);
            }
        }
        Ok(first.unwrap_or(base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;
    use crate::storage::Voxel;

    #[test]
    fn validate_rules_and_errors() {
        let r =
            validate_region([0.0, -8.0, 4.0], [8.0, 0.0, 12.0], 4.0, VoxelCap::ReadWrite).unwrap();
        assert_eq!(r.min, IVec3::new(0, -2, 1));
        assert_eq!(r.max, IVec3::new(2, 0, 3));
        assert_eq!(
            validate_region([0.0; 3], [4.0; 3], 2.0, VoxelCap::ReadWrite),
            Err(TerrainError::Resolution(2.0))
        );
        let e = validate_region([0.0, 1.0, 0.0], [4.0; 3], 4.0, VoxelCap::ReadWrite).unwrap_err();
        assert_eq!(
            e,
            TerrainError::NotAligned {
                corner: "min",
                axis: 'Y',
                value: 1.0
            }
        );
        assert_eq!(
            e.to_string(),
            "region must be aligned to the 4-stud grid: min.Y = 1"
        );
        // 128 × 256 × 128 = 4,194,304 voxels is allowed, one more layer is not.
        assert!(
            validate_region([0.0; 3], [512.0, 1024.0, 512.0], 4.0, VoxelCap::ReadWrite).is_ok()
        );
        let e = validate_region([0.0; 3], [512.0, 1028.0, 512.0], 4.0, VoxelCap::ReadWrite)
            .unwrap_err();
        assert_eq!(e.to_string(), "region too large: 4210688 voxels > 4194304");
        assert!(validate_region([0.0; 3], [512.0, 1028.0, 512.0], 4.0, VoxelCap::Fill).is_ok());
        let e =
            validate_region([0.0; 3], [2048.0, 1028.0, 2048.0], 4.0, VoxelCap::Fill).unwrap_err();
        assert_eq!(
            e,
            TerrainError::TooLarge {
                voxels: 512 * 257 * 512,
                limit: 67_108_864
            }
        );
        assert!(matches!(
            validate_region([f64::NAN, 0.0, 0.0], [4.0; 3], 4.0, VoxelCap::Fill),
            Err(TerrainError::NonFinite { .. })
        ));
        assert!(matches!(
            validate_region([8.0, 0.0, 0.0], [4.0; 3], 4.0, VoxelCap::Fill),
            Err(TerrainError::Inverted { axis: 'X', .. })
        ));
        assert_eq!(
            expand_to_grid([-1.0, 0.0, 5.0], [1.0, 4.0, 5.5]),
            ([-4.0, 0.0, 4.0], [4.0, 4.0, 8.0])
        );
    }

    #[test]
    fn cell_world_conversions() {
        assert_eq!(cell_center_to_world(IVec3::splat(10)), Vec3::splat(42.0));
        assert_eq!(
            cell_corner_to_world(IVec3::new(-1, 0, 2)),
            Vec3::new(-4.0, 0.0, 8.0)
        );
        assert_eq!(
            world_to_cell(Vec3::new(42.0, -0.5, 4.0)).unwrap(),
            IVec3::new(10, -1, 1)
        );
        let mut t = Terrain::new();
        t.set(IVec3::new(0, -1, 0), Voxel::solid(Material::Rock, 255));
        // (2, 0, 2) lies on the boundary between cells y = -1 (solid) and y = 0 (empty).
        let p = Vec3::new(2.0, 0.0, 2.0);
        assert_eq!(world_to_cell(p).unwrap(), IVec3::new(0, 0, 0));
        assert_eq!(
            t.world_to_cell_prefer_solid(p).unwrap(),
            IVec3::new(0, -1, 0)
        );
        assert_eq!(
            t.world_to_cell_prefer_empty(p).unwrap(),
            IVec3::new(0, 0, 0)
        );
        // Off the boundary both give the containing cell.
        let q = Vec3::new(2.0, 1.0, 2.0);
        assert_eq!(t.world_to_cell_prefer_solid(q).unwrap(), IVec3::ZERO);
    }
}
