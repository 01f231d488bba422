//! `FillBlock`, `FillBall`, `FillCylinder`, `FillWedge` and `FillRegion`: the partial-occupancy
//! kernels and the rule that merges a fill with what is already there.
//!
//! # Kernel (the "per-axis coverage" model)
//! For a voxel with centre `p` (studs) and the shape's local point `o = cframe⁻¹ · p`:
//! - **Block** of size `s`: per axis `f_a = clamp(s_a/8 + 0.5 − |o_a|/4, 0, min(1, s_a/4))`,
//!   occupancy `min(f_x, f_y, f_z)` — the fraction of the voxel's 4-stud extent the block
//!   covers along each axis (a voxel centred on a face gets 0.5), capped by the block's
//!   thickness for blocks thinner than a voxel. This is the public emulation of FillBlock by
//!   ReadVoxels/WriteVoxels (notes §1.3).
//! - **Ball** of radius `r` at distance `d`: `clamp((r − d)/4 + 0.5, 0, min(1, r/2))` — the
//!   block model's +0.5 (a voxel centred on the surface gets 0.5) with the same thickness cap
//!   (diameter / 4 studs). Terrain Tools' brush uses `(r − d)/4` without the +0.5; we keep
//!   the block model so a ball and a box of the same extent agree on their faces.
//! - **Cylinder** (axis = local Y, height `h`, radius `r`): `min(radial, axial)` with the ball
//!   rule on the radial distance `√(o_x² + o_z²)` and the block rule on `o_y` with size `h`.
//! - **Wedge** (WedgePart orientation: full bottom (−Y) and back (+Z) faces, the slope from
//!   the top-back edge to the bottom-front edge): the block factors and the slope factor
//!   `clamp(0.5 − δ/4, 0, 1)`, `δ = (o_y·s_z − o_z·s_y)/√(s_y² + s_z²)` the signed distance
//!   to the slope plane (positive outside).
//!
//! Occupancy is quantized once, `q = round(occ·255)`; `q = 0` leaves the voxel untouched
//! (anything below 1/510 is air, as smooth terrain drops occupancies under ~1/256).
//!
//! # Merge rule
//! - Solid material `m`: where `q ≥` the voxel's occupancy the voxel becomes `(m, q)` (the
//!   fill wins ties); elsewhere it is unchanged — occupancy is `max(old, new)` and the fill's
//!   material is written exactly where it adds. Liquid stays unless the voxel is now full.
//! - `Air` carves: occupancy and liquid become `min(old, 255 − q)`.
//! - `Water` fills the liquid channel: `liquid = max(old, q)`; full solid voxels stay dry.
//!
//! The engine's own merge and ball kernel are not documented publicly: this is the documented
//! choice, pinned by tests; a golden corpus from Studio can replace it later.

use crate::error::TerrainError;
use crate::material::Material;
use crate::region::{VoxelCap, check_cap};
use crate::storage::{CellRegion, Terrain, Voxel, quantize};
use glam::{Affine3A, IVec3, Vec3, Vec3A};

/// Merges a fill of `material` with quantized occupancy `q` into a voxel (see the module docs).
#[inline]
pub fn merge(old: Voxel, material: Material, q: u8) -> Voxel {
    if q == 0 {
        return old;
    }
    match material {
        Material::Air => Voxel {
            material: old.material,
            occupancy: old.occupancy.min(255 - q),
            liquid: old.liquid.min(255 - q),
        },
        Material::Water => Voxel {
            liquid: old.liquid.max(q),
            ..old
        },
        m => {
            if q >= old.occupancy {
                Voxel {
                    material: m,
                    occupancy: q,
                    liquid: old.liquid,
                }
            } else {
                old
            }
        }
    }
    .normalized()
}

#[inline]
fn block_factor(size: f32, o: f32) -> f32 {
    (size / 8.0 + 0.5 - o.abs() / 4.0).clamp(0.0, (size / 4.0).min(1.0))
}

#[inline]
fn radial_factor(radius: f32, d: f32) -> f32 {
    ((radius - d) / 4.0 + 0.5).clamp(0.0, (radius / 2.0).min(1.0))
}

/// Block kernel: occupancy of a voxel whose centre has local coordinates `o`.
pub fn block_occupancy(size: Vec3, o: Vec3) -> f32 {
    block_factor(size.x, o.x)
        .min(block_factor(size.y, o.y))
        .min(block_factor(size.z, o.z))
}

/// Ball kernel at distance `d` from the centre.
pub fn ball_occupancy(radius: f32, d: f32) -> f32 {
    radial_factor(radius, d)
}

/// Cylinder kernel (axis local Y) at local point `o`.
pub fn cylinder_occupancy(height: f32, radius: f32, o: Vec3) -> f32 {
    radial_factor(radius, (o.x * o.x + o.z * o.z).sqrt()).min(block_factor(height, o.y))
}

/// Wedge kernel at local point `o`.
pub fn wedge_occupancy(size: Vec3, o: Vec3) -> f32 {
    let b = block_occupancy(size, o);
    let n = (size.y * size.y + size.z * size.z).sqrt();
    if n == 0.0 {
        return b;
    }
    let delta = (o.y * size.z - o.z * size.y) / n;
    b.min((0.5 - delta / 4.0).clamp(0.0, 1.0))
}

fn check_vec(what: &'static str, v: Vec3) -> Result<(), TerrainError> {
    for c in v.to_array() {
        if !c.is_finite() {
            return Err(TerrainError::NonFinite {
                what,
                value: f64::from(c),
            });
        }
    }
    Ok(())
}

fn check_len(what: &'static str, v: f32) -> Result<(), TerrainError> {
    if !v.is_finite() {
        return Err(TerrainError::NonFinite {
            what,
            value: f64::from(v),
        });
    }
    if v < 0.0 {
        return Err(TerrainError::Negative {
            what,
            value: f64::from(v),
        });
    }
    Ok(())
}

fn check_cframe(cf: &Affine3A) -> Result<(), TerrainError> {
    check_vec("cframe position", cf.translation.into())?;
    for c in [cf.matrix3.x_axis, cf.matrix3.y_axis, cf.matrix3.z_axis] {
        check_vec("cframe rotation", c.into())?;
    }
    Ok(())
}

/// The cells whose centres may lie within `pad` studs of the AABB `[lo, hi]`, checked against
/// the Fill cap by the AABB expanded to the grid (as the engine counts it).
fn cells_for(lo: Vec3, hi: Vec3) -> Result<CellRegion, TerrainError> {
    for v in [lo, hi] {
        for c in v.to_array() {
            if f64::from(c).abs() > crate::region::MAX_STUDS {
                return Err(TerrainError::OutOfRange {
                    what: "fill extent",
                    value: f64::from(c),
                });
            }
        }
    }
    let glo = floor_cells(lo / 4.0);
    let ghi = ceil_cells(hi / 4.0);
    let s = (ghi - glo).max(IVec3::ZERO).as_i64vec3();
    check_cap(s.x as u128 * s.y as u128 * s.z as u128, VoxelCap::Fill)?;
    // A voxel centre 4i+2 has non-zero coverage only within 2 studs of the shape.
    Ok(CellRegion {
        min: floor_cells((lo - 2.0) / 4.0),
        max: ceil_cells((hi + 2.0) / 4.0),
    })
}

/// `v.floor().as_ivec3()` without libm calls (baseline x86-64 has no rounding instruction);
/// exact for the bounded extents `cells_for` accepts.
fn floor_cells(v: Vec3) -> IVec3 {
    let f = |x: f32| {
        let t = x as i32;
        if (t as f32) > x { t - 1 } else { t }
    };
    IVec3::new(f(v.x), f(v.y), f(v.z))
}

/// `v.ceil().as_ivec3()`, as [`floor_cells`].
fn ceil_cells(v: Vec3) -> IVec3 {
    -floor_cells(-v)
}

fn local_aabb(cf: &Affine3A, half: Vec3) -> (Vec3, Vec3) {
    let m = cf.matrix3;
    let ext = m.x_axis.abs() * half.x + m.y_axis.abs() * half.y + m.z_axis.abs() * half.z;
    let c: Vec3 = cf.translation.into();
    (c - Vec3::from(ext), c + Vec3::from(ext))
}

fn fill_kernel(
    t: &mut Terrain,
    cells: CellRegion,
    material: Material,
    inv: Affine3A,
    kernel: impl Fn(Vec3) -> f32,
) {
    t.modify(cells, |c, v| {
        let p = Vec3A::from(c.as_vec3() * 4.0 + Vec3::splat(2.0));
        let o: Vec3 = inv.transform_point3a(p).into();
        *v = merge(*v, material, quantize(kernel(o)));
    });
}

/// Fills the oriented box `size` at `cframe` (FillBlock, FillWedge) with `kernel`'s
/// occupancy, after checking the CFrame and the size.
fn fill_box(
    t: &mut Terrain,
    cframe: Affine3A,
    size: Vec3,
    material: Material,
    kernel: impl Fn(Vec3) -> f32,
) -> Result<(), TerrainError> {
    let cells = box_cells(&cframe, size)?;
    fill_kernel(t, cells, material, cframe.inverse(), kernel);
    Ok(())
}

/// The cells an oriented box `size` at `cframe` may cover, after checking the CFrame, the
/// size and the Fill cap.
fn box_cells(cframe: &Affine3A, size: Vec3) -> Result<CellRegion, TerrainError> {
    check_cframe(cframe)?;
    check_vec("size", size)?;
    if size.min_element() < 0.0 {
        return Err(TerrainError::Negative {
            what: "size",
            value: f64::from(size.min_element()),
        });
    }
    let (lo, hi) = local_aabb(cframe, size / 2.0);
    cells_for(lo, hi)
}

/// For a rotation that is exactly a signed permutation of the axes (identity, quarter turns):
/// per local axis, the world axis it lies along.
fn axis_permutation(cf: &Affine3A) -> Option<[usize; 3]> {
    let mut map = [usize::MAX; 3];
    for (a, col) in [cf.matrix3.x_axis, cf.matrix3.y_axis, cf.matrix3.z_axis]
        .into_iter()
        .enumerate()
    {
        let c = col.to_array();
        let mut along = None;
        for (w, &v) in c.iter().enumerate() {
            if v == 0.0 {
                continue;
            }
            if v.abs() != 1.0 || along.is_some() {
                return None;
            }
            along = Some(w);
        }
        map[a] = along?;
    }
    (map[0] != map[1] && map[1] != map[2] && map[0] != map[2]).then_some(map)
}

/// FillBlock with an axis-aligned CFrame (the terrain tutorial's one block per column): the
/// block kernel is then separable — `|o_a|` is `|p_w − t_w|` exactly for the world axis `w`
/// the local axis `a` lies along, and quantizing commutes with `min` (it is monotonic) — so
/// each axis's quantized factor is computed once, and only the cells where all three are
/// non-zero are visited, a row at a time. Gives the same voxels as the general kernel, bit
/// for bit (tested against it).
fn fill_block_aligned(
    t: &mut Terrain,
    cframe: Affine3A,
    map: [usize; 3],
    size: Vec3,
    material: Material,
    cells: CellRegion,
) {
    let size = size.to_array();
    let centre: Vec3 = cframe.translation.into();
    let centre = centre.to_array();
    let (mut lo, mut hi) = (cells.min.to_array(), cells.max.to_array());
    // All three axes' factors in one buffer (one allocation, none for a column-sized block).
    let total: usize = (0..3).map(|w| (hi[w] - lo[w]).max(0) as usize).sum();
    let mut small = [0u8; 96];
    let mut large = Vec::new();
    let buf: &mut [u8] = if total <= small.len() {
        &mut small[..total]
    } else {
        large.resize(total, 0);
        &mut large
    };
    let mut spans = [(0usize, 0usize); 3];
    let mut at = 0;
    for (a, &w) in map.iter().enumerate() {
        let n = (hi[w] - lo[w]).max(0) as usize;
        let q = &mut buf[at..at + n];
        for (k, v) in q.iter_mut().enumerate() {
            let p = (lo[w] + k as i32) as f32 * 4.0 + 2.0;
            *v = quantize(block_factor(size[a], p - centre[w]));
        }
        // Trim the cells with no coverage along this axis (the kernel's 2-stud padding).
        let Some(first) = q.iter().position(|&v| v > 0) else {
            return;
        };
        let last = q.iter().rposition(|&v| v > 0).unwrap_or(first);
        spans[w] = (at + first, at + last + 1);
        hi[w] = lo[w] + last as i32 + 1;
        lo[w] += first as i32;
        at += n;
    }
    let [fx, fy, fz] = spans.map(|(s, e)| &buf[s..e]);
    let trimmed = CellRegion {
        min: IVec3::from_array(lo),
        max: IVec3::from_array(hi),
    };
    t.modify_rows(trimmed, |start, row| {
        let q_yz = fy[(start.y - lo[1]) as usize].min(fz[(start.z - lo[2]) as usize]);
        let fx = &fx[(start.x - lo[0]) as usize..][..row.len()];
        for (v, &q_x) in row.iter_mut().zip(fx) {
            *v = merge(*v, material, q_x.min(q_yz));
        }
    });
}

impl Terrain {
    /// `FillBlock(cframe, size, material)`. `cframe` is rigid (rotation + translation).
    pub fn fill_block(
        &mut self,
        cframe: Affine3A,
        size: Vec3,
        material: Material,
    ) -> Result<(), TerrainError> {
        let cells = box_cells(&cframe, size)?;
        match axis_permutation(&cframe) {
            Some(map) => fill_block_aligned(self, cframe, map, size, material, cells),
            None => fill_kernel(self, cells, material, cframe.inverse(), |o| {
                block_occupancy(size, o)
            }),
        }
        Ok(())
    }

    /// `FillBall(center, radius, material)`.
    pub fn fill_ball(
        &mut self,
        center: Vec3,
        radius: f32,
        material: Material,
    ) -> Result<(), TerrainError> {
        check_vec("center", center)?;
        check_len("radius", radius)?;
        let cells = cells_for(center - radius, center + radius)?;
        fill_kernel(
            self,
            cells,
            material,
            Affine3A::from_translation(-center),
            |o| ball_occupancy(radius, o.length()),
        );
        Ok(())
    }

    /// `FillCylinder(cframe, height, radius, material)`; the axis is the CFrame's up vector.
    pub fn fill_cylinder(
        &mut self,
        cframe: Affine3A,
        height: f32,
        radius: f32,
        material: Material,
    ) -> Result<(), TerrainError> {
        check_cframe(&cframe)?;
        check_len("height", height)?;
        check_len("radius", radius)?;
        let (lo, hi) = local_aabb(&cframe, Vec3::new(radius, height / 2.0, radius));
        let cells = cells_for(lo, hi)?;
        fill_kernel(self, cells, material, cframe.inverse(), |o| {
            cylinder_occupancy(height, radius, o)
        });
        Ok(())
    }

    /// `FillWedge(cframe, size, material)`, oriented as a WedgePart with that CFrame and Size.
    pub fn fill_wedge(
        &mut self,
        cframe: Affine3A,
        size: Vec3,
        material: Material,
    ) -> Result<(), TerrainError> {
        fill_box(self, cframe, size, material, |o| wedge_occupancy(size, o))
    }

    /// `FillRegion(region, 4, material)` over a region validated by
    /// [`crate::validate_region`] (cap [`VoxelCap::Fill`]): every cell gets occupancy 1 of
    /// the material, merged by the module's rule (so Air empties the region).
    pub fn fill_region(&mut self, region: CellRegion, material: Material) {
        self.modify(region, |_, v| *v = merge(*v, material, 255));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Voxel;
    use glam::Quat;

    fn occ(t: &Terrain, x: i32, y: i32, z: i32) -> u8 {
        t.get(IVec3::new(x, y, z)).occupancy
    }

    #[test]
    fn aligned_block_is_full_and_exact() {
        let mut t = Terrain::new();
        // A block covering cells 0..2 on every axis.
        t.fill_block(
            Affine3A::from_translation(Vec3::splat(4.0)),
            Vec3::splat(8.0),
            Material::Rock,
        )
        .unwrap();
        for x in -1..3 {
            for y in -1..3 {
                for z in -1..3 {
                    let inside = (0..2).contains(&x) && (0..2).contains(&y) && (0..2).contains(&z);
                    assert_eq!(
                        occ(&t, x, y, z),
                        if inside { 255 } else { 0 },
                        "{x} {y} {z}"
                    );
                }
            }
        }
        assert_eq!(t.get(IVec3::ZERO).material, Material::Rock);
    }

    #[test]
    fn sub_voxel_block_thickness_cap() {
        let mut t = Terrain::new();
        // 1 stud thick slab through the centres of the y = 0 cells: 1/4 occupancy.
        t.fill_block(
            Affine3A::from_translation(Vec3::new(2.0, 2.0, 2.0)),
            Vec3::new(4.0, 1.0, 4.0),
            Material::Sand,
        )
        .unwrap();
        assert_eq!(occ(&t, 0, 0, 0), 64); // round(0.25 * 255)
        assert_eq!(occ(&t, 0, 1, 0), 0);
        // Half-offset block: the face passes through voxel centres → 0.5.
        let mut t = Terrain::new();
        t.fill_block(
            Affine3A::from_translation(Vec3::new(4.0, 2.0, 2.0)),
            Vec3::new(4.0, 4.0, 4.0),
            Material::Sand,
        )
        .unwrap();
        assert_eq!(occ(&t, 0, 0, 0), 128);
        assert_eq!(occ(&t, 1, 0, 0), 128);
        assert_eq!(occ(&t, 2, 0, 0), 0);
    }

    #[test]
    fn rotated_block() {
        // A 90° turn about Y maps the long X side onto Z.
        let mut t = Terrain::new();
        let cf = Affine3A::from_rotation_translation(
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            Vec3::splat(2.0),
        );
        t.fill_block(cf, Vec3::new(12.0, 4.0, 4.0), Material::Rock)
            .unwrap();
        assert_eq!(occ(&t, 0, 0, 1), 255);
        assert_eq!(occ(&t, 0, 0, -1), 255);
        assert_eq!(occ(&t, 1, 0, 0), 0);
        // 45°: a cell centre at distance d from the rotated face gets 0.5 + (inside depth)/4.
        let mut t = Terrain::new();
        let cf = Affine3A::from_rotation_translation(
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_4),
            Vec3::splat(2.0),
        );
        t.fill_block(cf, Vec3::new(8.0, 4.0, 8.0), Material::Rock)
            .unwrap();
        // Cell (1,0,0): centre offset (4,0,0) → local (2.83, 0, ±2.83): f = 1 + .5 - .707 = 0.79.
        let f = (8.0f32 / 8.0 + 0.5 - (4.0 * std::f32::consts::FRAC_1_SQRT_2) / 4.0).min(1.0);
        assert_eq!(occ(&t, 1, 0, 0), quantize(f));
        assert_eq!(occ(&t, 0, 0, 0), 255);
    }

    #[test]
    fn ball_kernel_and_sub_voxel_ball() {
        let mut t = Terrain::new();
        t.fill_ball(Vec3::splat(2.0), 6.0, Material::Snow).unwrap();
        assert_eq!(occ(&t, 0, 0, 0), 255);
        // Neighbour centre at distance 4: (6-4)/4 + 0.5 = 1.
        assert_eq!(occ(&t, 1, 0, 0), 255);
        // Diagonal at 4√2 = 5.657: (6-5.657)/4+0.5 = 0.586.
        assert_eq!(occ(&t, 1, 1, 0), quantize((6.0 - 32f32.sqrt()) / 4.0 + 0.5));
        // Radius 1 ball on a voxel centre: capped at r/2 = 0.5.
        let mut t = Terrain::new();
        t.fill_ball(Vec3::splat(2.0), 1.0, Material::Snow).unwrap();
        assert_eq!(occ(&t, 0, 0, 0), 128);
        assert_eq!(occ(&t, 1, 0, 0), 0);
        assert!(t.fill_ball(Vec3::ZERO, -1.0, Material::Snow).is_err());
        assert!(
            t.fill_ball(Vec3::new(f32::NAN, 0.0, 0.0), 1.0, Material::Snow)
                .is_err()
        );
    }

    #[test]
    fn cylinder_axis_is_up() {
        let mut t = Terrain::new();
        t.fill_cylinder(
            Affine3A::from_translation(Vec3::splat(2.0)),
            12.0,
            2.0,
            Material::Basalt,
        )
        .unwrap();
        // Radius 2 → radial factor at the axis: min(2/4 + .5, 1) = 1, capped at min(1, 1) = 1.
        assert_eq!(occ(&t, 0, 1, 0), 255);
        assert_eq!(occ(&t, 0, -1, 0), 255);
        assert_eq!(occ(&t, 0, 2, 0), 0);
        assert_eq!(occ(&t, 1, 0, 0), 0);
    }

    #[test]
    fn wedge_slope() {
        let mut t = Terrain::new();
        // 3×3×3 cells wedge centred on cell (1,1,1).
        t.fill_wedge(
            Affine3A::from_translation(Vec3::splat(6.0)),
            Vec3::splat(12.0),
            Material::Brick,
        )
        .unwrap();
        // Bottom-back is inside, top-front outside, the diagonal on the slope is half.
        assert_eq!(occ(&t, 1, 0, 2), 255);
        assert_eq!(occ(&t, 1, 2, 0), 0);
        assert_eq!(occ(&t, 1, 1, 1), 128);
        assert_eq!(occ(&t, 1, 0, 0), 128);
    }

    #[test]
    fn tutorial_column_block_straddles_voxels() {
        // The tutorial's FillBlock(CFrame.new(x*GRID, y, z*GRID), Vector3.new(GRID, 2*GRID, GRID))
        // is centred on a voxel corner column: each of the four voxels around it is half covered
        // along X and Z.
        let mut t = Terrain::new();
        t.fill_block(
            Affine3A::from_translation(Vec3::new(0.0, 6.0, 0.0)),
            Vec3::new(4.0, 8.0, 4.0),
            Material::Grass,
        )
        .unwrap();
        for (x, z) in [(-1, -1), (-1, 0), (0, -1), (0, 0)] {
            assert_eq!(occ(&t, x, 1, z), 128, "{x} {z}");
            // Y from 2 to 10: cell 0 (centre 2) half, cell 2 (centre 10) half.
            assert_eq!(occ(&t, x, 0, z), 128);
            assert_eq!(occ(&t, x, 2, z), 128);
            assert_eq!(occ(&t, x, 3, z), 0);
        }
        assert_eq!(occ(&t, 1, 1, 0), 0);
    }

    #[test]
    fn aligned_fast_path_matches_the_general_kernel_voxel_for_voxel() {
        // Every rigid signed permutation of the axes (the 24 quarter-turn rotations).
        let mut rotations = Vec::new();
        for perm in [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ] {
            for signs in 0..8 {
                let mut cols = [Vec3A::ZERO; 3];
                for (a, &w) in perm.iter().enumerate() {
                    let mut c = [0.0f32; 3];
                    c[w] = if signs >> a & 1 == 1 { -1.0 } else { 1.0 };
                    cols[a] = Vec3A::from_array(c);
                }
                let m = glam::Mat3A::from_cols(cols[0], cols[1], cols[2]);
                if m.determinant() == 1.0 {
                    rotations.push(m);
                }
            }
        }
        assert_eq!(rotations.len(), 24);
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let materials = [
            Material::Grass,
            Material::Rock,
            Material::Air,
            Material::Water,
            Material::Sand,
        ];
        let (mut fast, mut general) = (Terrain::new(), Terrain::new());
        for i in 0..600 {
            let r = rotations[next() as usize % rotations.len()];
            let mut unit = || (next() % 10_000) as f32 / 10_000.0;
            let pos = Vec3::new(
                unit() * 40.0 - 20.0,
                unit() * 40.0 - 20.0,
                unit() * 40.0 - 20.0,
            );
            let size = Vec3::new(
                unit() * 18.0 + 0.1,
                unit() * 18.0 + 0.1,
                unit() * 18.0 + 0.1,
            );
            let cf = Affine3A::from_mat3_translation(r.into(), pos);
            assert!(axis_permutation(&cf).is_some());
            let m = materials[i % materials.len()];
            fast.fill_block(cf, size, m).unwrap();
            fill_box(&mut general, cf, size, m, |o| block_occupancy(size, o)).unwrap();
        }
        let mut compared = 0;
        for x in -12..12 {
            for y in -12..12 {
                for z in -12..12 {
                    let c = IVec3::new(x, y, z);
                    assert_eq!(fast.get(c), general.get(c), "cell {c}");
                    compared += (fast.get(c) != Voxel::EMPTY) as usize;
                }
            }
        }
        assert!(
            compared > 1000,
            "the fills cover the compared cells ({compared})"
        );
        // A rotation off the grid by a hair is not taken for aligned.
        let tilted = Affine3A::from_rotation_y(1e-3);
        assert!(axis_permutation(&tilted).is_none());
        assert!(
            axis_permutation(&Affine3A::from_rotation_y(std::f32::consts::FRAC_PI_2)).is_none()
        );
    }

    #[test]
    fn cell_rounding_matches_floor_and_ceil() {
        for x in [
            -9.5f32,
            -8.0,
            -7.25,
            -0.5,
            -0.0,
            0.0,
            0.25,
            1.0,
            3.999,
            4.0,
            1e6 + 0.5,
            -1e6 - 0.5,
        ] {
            let v = Vec3::new(x, -x, x * 0.5);
            assert_eq!(floor_cells(v), v.floor().as_ivec3(), "{x}");
            assert_eq!(ceil_cells(v), v.ceil().as_ivec3(), "{x}");
        }
    }

    #[test]
    fn fills_merge_with_existing_terrain() {
        let mut t = Terrain::new();
        t.fill_ball(Vec3::splat(2.0), 8.0, Material::Rock).unwrap();
        // A half-covering sand block over the rock: rock keeps the voxels it fills more.
        t.fill_block(
            Affine3A::from_translation(Vec3::new(4.0, 2.0, 2.0)),
            Vec3::splat(4.0),
            Material::Sand,
        )
        .unwrap();
        assert_eq!(t.get(IVec3::ZERO), Voxel::solid(Material::Rock, 255));
        // Carving with Air removes exactly the block's coverage.
        t.fill_block(
            Affine3A::from_translation(Vec3::splat(2.0)),
            Vec3::splat(4.0),
            Material::Air,
        )
        .unwrap();
        assert!(t.get(IVec3::ZERO).is_empty());
        assert_eq!(t.get(IVec3::new(0, 1, 0)).occupancy, 255);
    }

    #[test]
    fn merge_rule() {
        let rock = Voxel::solid(Material::Rock, 200);
        assert_eq!(merge(rock, Material::Sand, 100), rock);
        assert_eq!(
            merge(rock, Material::Sand, 200),
            Voxel::solid(Material::Sand, 200)
        );
        assert_eq!(
            merge(rock, Material::Air, 100),
            Voxel::solid(Material::Rock, 155)
        );
        assert_eq!(merge(rock, Material::Air, 255), Voxel::EMPTY);
        let wet = merge(rock, Material::Water, 90);
        assert_eq!(
            (wet.material, wet.occupancy, wet.liquid),
            (Material::Rock, 200, 90)
        );
        assert_eq!(
            merge(Voxel::solid(Material::Rock, 255), Material::Water, 255).liquid,
            0
        );
        assert_eq!(merge(rock, Material::Sand, 0), rock);
    }

    #[test]
    fn fill_cap_uses_the_aabb() {
        let mut t = Terrain::new();
        let e = t
            .fill_block(Affine3A::IDENTITY, Vec3::splat(4000.0), Material::Rock)
            .unwrap_err();
        assert!(matches!(
            e,
            TerrainError::TooLarge {
                limit: 67_108_864,
                ..
            }
        ));
        assert!(t.is_empty());
    }
}
