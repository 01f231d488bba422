//! Sparse voxel storage: 32³-voxel chunks of 4-stud voxels in a `BTreeMap`, uniform chunks
//! kept as one voxel, empty chunks absent; per-voxel access and per-chunk region visits.

use crate::material::Material;
use glam::IVec3;
use std::collections::BTreeMap;

/// Voxels per chunk edge.
pub const CHUNK: i32 = 32;
/// Voxels per chunk.
pub const CHUNK_VOXELS: usize = 32 * 32 * 32;
/// Studs per voxel edge.
pub const VOXEL: f32 = 4.0;

/// One voxel: solid material and occupancy (u8 = value/255) plus the Shorelines liquid
/// occupancy. Invariants kept by every write ([`Voxel::normalized`]): `material == Air`
/// ⇔ `occupancy == 0`; `material` is never Water (water is `liquid`); a full solid voxel has
/// no liquid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Voxel {
    /// Solid material (Air when empty).
    pub material: Material,
    /// Solid occupancy, value/255.
    pub occupancy: u8,
    /// Liquid (water) occupancy, value/255.
    pub liquid: u8,
}

impl Voxel {
    /// Empty: Air, no liquid.
    pub const EMPTY: Voxel = Voxel {
        material: Material::Air,
        occupancy: 0,
        liquid: 0,
    };

    /// A solid voxel (normalised: occupancy 0 or Air gives [`Voxel::EMPTY`]; Water gives liquid).
    pub fn solid(material: Material, occupancy: u8) -> Voxel {
        Voxel {
            material,
            occupancy,
            liquid: 0,
        }
        .normalized()
    }

    /// Applies the invariants: Water as a solid material becomes liquid, zero occupancy or Air
    /// becomes empty solid, a full solid voxel drops its liquid.
    pub fn normalized(mut self) -> Voxel {
        if self.material == Material::Water {
            self.liquid = self.liquid.max(self.occupancy);
            self.material = Material::Air;
            self.occupancy = 0;
        }
        if self.material == Material::Air || self.occupancy == 0 {
            self.material = Material::Air;
            self.occupancy = 0;
        }
        if self.occupancy == 255 {
            self.liquid = 0;
        }
        self
    }

    /// Whether the voxel holds nothing (no solid, no liquid).
    pub fn is_empty(self) -> bool {
        self.occupancy == 0 && self.liquid == 0
    }
}

/// Quantizes an occupancy in 0..1 to u8 once: `round(clamp(v, 0, 1) · 255)`; NaN gives 0.
#[inline]
pub fn quantize(v: f32) -> u8 {
    if v.is_nan() {
        return 0;
    }
    // `round` (half away from zero) without a libm call on baseline x86-64: for x in 0..=255
    // the fraction `x − trunc(x)` is exact, so this is `x.round()` bit for bit.
    let x = v.clamp(0.0, 1.0) * 255.0;
    let t = x as u8;
    if x - f32::from(t) >= 0.5 { t + 1 } else { t }
}

/// Index of a voxel inside a chunk, in SmoothGrid order: X fastest, then Z, then Y.
#[inline]
pub fn local_index(x: i32, y: i32, z: i32) -> usize {
    (x + CHUNK * z + CHUNK * CHUNK * y) as usize
}

/// A chunk: one voxel for all 32³, or all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// Every voxel equal (never [`Voxel::EMPTY`] inside a [`Terrain`]: empty chunks are absent).
    Uniform(Voxel),
    /// 32768 voxels in [`local_index`] order.
    Dense(Box<[Voxel]>),
}

impl Chunk {
    /// The voxel at local coordinates (each in 0..32).
    #[inline]
    pub fn get(&self, x: i32, y: i32, z: i32) -> Voxel {
        match self {
            Chunk::Uniform(v) => *v,
            Chunk::Dense(d) => d[local_index(x, y, z)],
        }
    }

    /// The chunk's voxels as a slice (dense) or the uniform voxel.
    pub fn dense_mut(&mut self) -> &mut [Voxel] {
        if let Chunk::Uniform(v) = *self {
            *self = Chunk::Dense(vec![v; CHUNK_VOXELS].into_boxed_slice());
        }
        match self {
            Chunk::Dense(d) => d,
            Chunk::Uniform(_) => unreachable!("just made dense"),
        }
    }

    /// Turns a dense chunk whose voxels are all equal into a uniform one.
    pub fn compact(&mut self) {
        if let Chunk::Dense(d) = self {
            let first = d[0];
            if d.iter().all(|v| *v == first) {
                *self = Chunk::Uniform(first);
            }
        }
    }

    /// The uniform voxel, if the chunk is uniform.
    pub fn uniform(&self) -> Option<Voxel> {
        match self {
            Chunk::Uniform(v) => Some(*v),
            Chunk::Dense(_) => None,
        }
    }
}

/// A box of cells `[min, max)` (max exclusive), in voxel coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellRegion {
    /// First cell.
    pub min: IVec3,
    /// One past the last cell.
    pub max: IVec3,
}

impl CellRegion {
    /// A region from its first cell and its size in cells.
    pub fn from_min_size(min: IVec3, size: IVec3) -> CellRegion {
        CellRegion {
            min,
            max: min + size,
        }
    }

    /// Size in cells per axis (0 where inverted).
    pub fn size(&self) -> IVec3 {
        (self.max - self.min).max(IVec3::ZERO)
    }

    /// Number of cells.
    pub fn volume(&self) -> usize {
        let s = self.size();
        s.x as usize * s.y as usize * s.z as usize
    }

    /// Whether the region holds no cell.
    pub fn is_empty(&self) -> bool {
        self.volume() == 0
    }

    /// Intersection with another region (possibly empty).
    pub fn intersect(&self, o: &CellRegion) -> CellRegion {
        CellRegion {
            min: self.min.max(o.min),
            max: self.max.min(o.max),
        }
    }
}

/// The voxels of a region (what ReadVoxels/ReadVoxelChannels return and WriteVoxels takes):
/// three parallel arrays in X-fastest, then Y, then Z order — `index(x, y, z) = x + sx·(y + sy·z)`
/// with 0-based coordinates (Luau's `[x+1][y+1][z+1]`).
#[derive(Clone, Debug, PartialEq)]
pub struct VoxelBox {
    /// Size in cells (`.Size` of the Luau arrays).
    pub size: [usize; 3],
    /// `SolidMaterial` (Air where empty; never Water).
    pub materials: Vec<Material>,
    /// `SolidOccupancy` in 0..1 (multiples of 1/255).
    pub occupancy: Vec<f32>,
    /// `LiquidOccupancy` in 0..1.
    pub liquid: Vec<f32>,
}

impl VoxelBox {
    /// An all-empty box.
    pub fn empty(size: [usize; 3]) -> VoxelBox {
        let n = size[0] * size[1] * size[2];
        VoxelBox {
            size,
            materials: vec![Material::Air; n],
            occupancy: vec![0.0; n],
            liquid: vec![0.0; n],
        }
    }

    /// Array index of a 0-based cell.
    #[inline]
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.size[0] * (y + self.size[1] * z)
    }

    /// Number of voxels.
    pub fn len(&self) -> usize {
        self.size[0] * self.size[1] * self.size[2]
    }

    /// Whether the box has no voxel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The legacy `ReadVoxels` view: water-only voxels read as `Water` with the liquid
    /// occupancy; solid voxels as their material and solid occupancy.
    pub fn legacy(&self) -> (Vec<Material>, Vec<f32>) {
        let mut m = self.materials.clone();
        let mut o = self.occupancy.clone();
        for i in 0..m.len() {
            if m[i] == Material::Air && self.liquid[i] > 0.0 {
                m[i] = Material::Water;
                o[i] = self.liquid[i];
            }
        }
        (m, o)
    }
}

/// Roblox terrain as data: a sparse map of chunk coordinate → [`Chunk`], ordered by
/// (x, y, z) — the SmoothGrid chunk order. Memory is proportional to the surface: empty chunks
/// are absent and uniform ones are one voxel (call [`Terrain::compact`] after many small
/// edits; large edits compact the chunks they cover).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terrain {
    pub(crate) chunks: BTreeMap<(i32, i32, i32), Chunk>,
}

/// Chunk coordinate and local coordinate of a cell.
#[inline]
pub fn split_cell(c: IVec3) -> ((i32, i32, i32), IVec3) {
    let ch = c.div_euclid(IVec3::splat(CHUNK));
    ((ch.x, ch.y, ch.z), c - ch * CHUNK)
}

/// The chunks `region` touches, in chunk order (y, then z, then x): each chunk's key, its
/// first cell and the part of `region` inside it. Empty for an empty region.
fn chunks_of(region: CellRegion) -> impl Iterator<Item = ((i32, i32, i32), IVec3, CellRegion)> {
    let (kmin, _) = split_cell(region.min);
    let (kmax, _) = split_cell(region.max - IVec3::ONE);
    // An empty region touches no chunk (its max - 1 may lie below its min).
    let last_y = if region.is_empty() {
        kmin.1 - 1
    } else {
        kmax.1
    };
    (kmin.1..=last_y)
        .flat_map(move |ky| {
            (kmin.2..=kmax.2).flat_map(move |kz| (kmin.0..=kmax.0).map(move |kx| (kx, ky, kz)))
        })
        .map(move |key| {
            let base = IVec3::new(key.0, key.1, key.2) * CHUNK;
            let sub = region.intersect(&CellRegion {
                min: base,
                max: base + IVec3::splat(CHUNK),
            });
            (key, base, sub)
        })
}

impl Terrain {
    /// Empty terrain.
    pub fn new() -> Terrain {
        Terrain::default()
    }

    /// `Terrain:Clear()`.
    pub fn clear(&mut self) {
        self.chunks.clear();
    }

    /// The stored chunks, in SmoothGrid order.
    pub fn chunks(&self) -> impl Iterator<Item = (IVec3, &Chunk)> {
        self.chunks
            .iter()
            .map(|(&(x, y, z), c)| (IVec3::new(x, y, z), c))
    }

    /// Number of stored chunks (O(1)).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// `Terrain:CountCells()`: how many cells hold anything (a solid or a liquid).
    pub fn count_cells(&self) -> u64 {
        self.chunks
            .values()
            .map(|c| match c {
                Chunk::Uniform(v) if v.is_empty() => 0,
                Chunk::Uniform(_) => CHUNK_VOXELS as u64,
                Chunk::Dense(d) => d.iter().filter(|v| !v.is_empty()).count() as u64,
            })
            .sum()
    }

    /// Number of stored chunks and how many of them are dense.
    pub fn chunk_counts(&self) -> (usize, usize) {
        let dense = self
            .chunks
            .values()
            .filter(|c| matches!(c, Chunk::Dense(_)))
            .count();
        (self.chunks.len(), dense)
    }

    /// Approximate heap bytes used by voxel data.
    pub fn memory_bytes(&self) -> usize {
        self.chunks
            .values()
            .map(|c| match c {
                Chunk::Uniform(_) => 64,
                Chunk::Dense(_) => 64 + CHUNK_VOXELS * std::mem::size_of::<Voxel>(),
            })
            .sum()
    }

    /// Compacts uniform dense chunks and drops empty ones.
    pub fn compact(&mut self) {
        self.chunks.retain(|_, c| {
            c.compact();
            c.uniform() != Some(Voxel::EMPTY)
        });
    }

    /// Whether no voxel is stored.
    pub fn is_empty(&self) -> bool {
        self.chunks.values().all(|c| match c {
            Chunk::Uniform(v) => *v == Voxel::EMPTY,
            Chunk::Dense(d) => d.iter().all(|v| *v == Voxel::EMPTY),
        })
    }

    /// The voxel at a cell.
    pub fn get(&self, cell: IVec3) -> Voxel {
        let (k, l) = split_cell(cell);
        self.chunks
            .get(&k)
            .map_or(Voxel::EMPTY, |c| c.get(l.x, l.y, l.z))
    }

    /// Sets one voxel (normalised). Prefer region operations for many voxels.
    pub fn set(&mut self, cell: IVec3, v: Voxel) {
        let v = v.normalized();
        let (k, l) = split_cell(cell);
        match self.chunks.get_mut(&k) {
            Some(c) => {
                if c.uniform() == Some(v) {
                    return;
                }
                c.dense_mut()[local_index(l.x, l.y, l.z)] = v;
            }
            None => {
                if v == Voxel::EMPTY {
                    return;
                }
                let mut c = Chunk::Uniform(Voxel::EMPTY);
                c.dense_mut()[local_index(l.x, l.y, l.z)] = v;
                self.chunks.insert(k, c);
            }
        }
    }

    /// Inserts a whole chunk (used by the SmoothGrid decoder); empty chunks are dropped.
    pub(crate) fn insert_chunk(&mut self, key: (i32, i32, i32), mut chunk: Chunk) {
        chunk.compact();
        if chunk.uniform() == Some(Voxel::EMPTY) {
            self.chunks.remove(&key);
        } else {
            self.chunks.insert(key, chunk);
        }
    }

    /// Visits every cell of `region`, chunk by chunk, letting `f` rewrite its voxel
    /// (`f(cell, &mut voxel)`; the result is normalised). Chunks are created on demand;
    /// chunks where most of the volume was visited are compacted.
    pub fn modify(&mut self, region: CellRegion, mut f: impl FnMut(IVec3, &mut Voxel)) {
        self.modify_rows(region, |start, row| {
            for (x, v) in row.iter_mut().enumerate() {
                f(start + IVec3::new(x as i32, 0, 0), v);
                *v = v.normalized();
            }
        });
    }

    /// As [`Terrain::modify`], one run of cells along X at a time: `f(first cell, voxels)`.
    /// `f` must leave the voxels normalised ([`Voxel::normalized`]).
    pub fn modify_rows(&mut self, region: CellRegion, mut f: impl FnMut(IVec3, &mut [Voxel])) {
        for (key, base, sub) in chunks_of(region) {
            let chunk = self
                .chunks
                .entry(key)
                .or_insert(Chunk::Uniform(Voxel::EMPTY));
            // A uniform chunk fully covered by an edit that maps every voxel alike is still
            // handled voxel by voxel (f may depend on the cell).
            let d = chunk.dense_mut();
            let (lo, hi) = (sub.min - base, sub.max - base);
            let len = (hi.x - lo.x) as usize;
            for y in lo.y..hi.y {
                for z in lo.z..hi.z {
                    let row = local_index(lo.x, y, z);
                    f(base + IVec3::new(lo.x, y, z), &mut d[row..row + len]);
                }
            }
            if sub.volume() >= CHUNK_VOXELS / 8 {
                chunk.compact();
                if chunk.uniform() == Some(Voxel::EMPTY) {
                    self.chunks.remove(&key);
                }
            }
        }
    }

    /// Visits every cell of `region` read-only (`f(cell, voxel)`), in chunk order.
    pub fn visit(&self, region: CellRegion, mut f: impl FnMut(IVec3, Voxel)) {
        for (key, base, sub) in chunks_of(region) {
            let chunk = self.chunks.get(&key);
            let (lo, hi) = (sub.min - base, sub.max - base);
            for y in lo.y..hi.y {
                for z in lo.z..hi.z {
                    for x in lo.x..hi.x {
                        let v = chunk.map_or(Voxel::EMPTY, |c| c.get(x, y, z));
                        f(base + IVec3::new(x, y, z), v);
                    }
                }
            }
        }
    }

    /// `ReadVoxelChannels` for all three channels over a validated region.
    pub fn read_voxels(&self, region: CellRegion) -> VoxelBox {
        let s = region.size();
        let mut b = VoxelBox::empty([s.x as usize, s.y as usize, s.z as usize]);
        self.visit(region, |c, v| {
            let l = c - region.min;
            let i = b.index(l.x as usize, l.y as usize, l.z as usize);
            b.materials[i] = v.material;
            b.occupancy[i] = f32::from(v.occupancy) / 255.0;
            b.liquid[i] = f32::from(v.liquid) / 255.0;
        });
        b
    }

    /// `WriteVoxels`/`WriteVoxelChannels` over a validated region: occupancies are clamped to
    /// 0..1 (as Roblox does) and quantized; a legacy `Water` material with occupancy x writes
    /// liquid x. Array sizes must match the region exactly; NaN is an error.
    pub fn write_voxels(
        &mut self,
        region: CellRegion,
        data: &VoxelBox,
    ) -> Result<(), crate::TerrainError> {
        let s = region.size();
        let n = region.volume();
        if data.size != [s.x as usize, s.y as usize, s.z as usize] {
            return Err(crate::TerrainError::ArraySize {
                what: "voxel arrays",
                got: data.len(),
                expected: n,
            });
        }
        for (what, len) in [
            ("materials", data.materials.len()),
            ("occupancy", data.occupancy.len()),
            ("liquid", data.liquid.len()),
        ] {
            if len != n {
                return Err(crate::TerrainError::ArraySize {
                    what,
                    got: len,
                    expected: n,
                });
            }
        }
        for (what, arr) in [("occupancy", &data.occupancy), ("liquid", &data.liquid)] {
            if let Some(v) = arr.iter().find(|v| v.is_nan()) {
                return Err(crate::TerrainError::NonFinite {
                    what,
                    value: f64::from(*v),
                });
            }
        }
        self.modify(region, |c, v| {
            let l = c - region.min;
            let i = data.index(l.x as usize, l.y as usize, l.z as usize);
            *v = Voxel {
                material: data.materials[i],
                occupancy: quantize(data.occupancy[i]),
                liquid: quantize(data.liquid[i]),
            };
        });
        Ok(())
    }

    /// `ReplaceMaterial`: every solid voxel of `source` in the region becomes `target` (same
    /// occupancy). Replacing Air fills empty cells fully; target Air empties the voxels;
    /// source Water / target Water act on the liquid channel.
    pub fn replace_material(&mut self, region: CellRegion, source: Material, target: Material) {
        self.modify(region, |_, v| match (source, target) {
            (Material::Water, Material::Water) => {}
            (Material::Water, t) => {
                if v.liquid > 0 && v.occupancy == 0 && t != Material::Air {
                    *v = Voxel::solid(t, v.liquid);
                } else if t == Material::Air {
                    v.liquid = 0;
                }
            }
            (s, Material::Water) => {
                if v.material == s && (s != Material::Air || v.liquid == 0) {
                    let o = if s == Material::Air { 255 } else { v.occupancy };
                    *v = Voxel {
                        material: Material::Air,
                        occupancy: 0,
                        liquid: o,
                    };
                }
            }
            (Material::Air, t) => {
                if v.occupancy == 0 {
                    *v = Voxel::solid(t, 255);
                }
            }
            (s, t) => {
                if v.material == s && v.occupancy > 0 {
                    v.material = t;
                }
            }
        });
    }

    /// The part of `region` a copy of it holds voxels for: where the terrain has chunks
    /// (the rest is empty). `CopyRegion(terrain.MaxExtents)` copies what there is.
    pub fn copied_part(&self, region: CellRegion) -> CellRegion {
        match self.chunk_bounds() {
            Some(b) if !b.intersect(&region).is_empty() => b.intersect(&region),
            _ => CellRegion::from_min_size(region.min, IVec3::ZERO),
        }
    }

    /// `CopyRegion`: the voxels of a region, kept for [`Terrain::copied_part`] of it.
    pub fn copy_region(&self, region: CellRegion) -> TerrainRegion {
        let held = self.copied_part(region);
        TerrainRegion {
            size: region.size(),
            offset: held.min - region.min,
            voxels: self.read_voxels(held),
        }
    }

    /// `PasteRegion(region, corner, pasteEmptyCells)`: writes the copied region with its
    /// first cell at `corner`; with `paste_empty_cells` false, empty copied cells leave the
    /// destination as it was (with it, the whole region's place ends as the copy: empty
    /// where the copy held no voxels).
    /// A corner beyond the terrain's ±2^21-cell extent or a region whose arrays do not fit
    /// its size is an error (nothing is written).
    pub fn paste_region(
        &mut self,
        region: &TerrainRegion,
        corner: IVec3,
        paste_empty_cells: bool,
    ) -> Result<(), crate::TerrainError> {
        let b = &region.voxels;
        let s = region.size;
        let held = IVec3::new(b.size[0] as i32, b.size[1] as i32, b.size[2] as i32);
        let fits = s.min_element() >= 0
            && held.min_element() >= 0
            && region.offset.min_element() >= 0
            && (region.offset.as_i64vec3() + held.as_i64vec3())
                .cmple(s.as_i64vec3())
                .all();
        if !fits {
            return Err(crate::TerrainError::ArraySize {
                what: "TerrainRegion voxels",
                got: b.len(),
                expected: (s.max(IVec3::ZERO).as_i64vec3().element_product()) as usize,
            });
        }
        for (what, len) in [
            ("TerrainRegion materials", b.materials.len()),
            ("TerrainRegion occupancy", b.occupancy.len()),
            ("TerrainRegion liquid", b.liquid.len()),
        ] {
            if len != b.len() {
                return Err(crate::TerrainError::ArraySize {
                    what,
                    got: len,
                    expected: b.len(),
                });
            }
        }
        const LIMIT: i64 = 1 << 21;
        for a in 0..3 {
            let (lo, hi) = (i64::from(corner[a]), i64::from(corner[a]) + i64::from(s[a]));
            if lo < -LIMIT || hi > LIMIT {
                return Err(crate::TerrainError::OutOfRange {
                    what: "paste corner",
                    value: lo as f64,
                });
            }
        }
        if paste_empty_cells {
            // The region's place is emptied where the terrain has anything, then the copied
            // voxels are written.
            let dst = CellRegion::from_min_size(corner, region.size);
            if let Some(own) = self.chunk_bounds() {
                self.modify(dst.intersect(&own), |_, v| *v = Voxel::EMPTY);
            }
        }
        let first = corner + region.offset;
        let dst = CellRegion::from_min_size(first, held);
        self.modify(dst, |c, v| {
            let l = c - first;
            let i = b.index(l.x as usize, l.y as usize, l.z as usize);
            let src = Voxel {
                material: b.materials[i],
                occupancy: quantize(b.occupancy[i]),
                liquid: quantize(b.liquid[i]),
            }
            .normalized();
            if paste_empty_cells || !src.is_empty() {
                *v = src;
            }
        });
        Ok(())
    }

    /// Bounding region of the stored chunks (whole chunks), if any.
    pub fn chunk_bounds(&self) -> Option<CellRegion> {
        let mut it = self.chunks.keys();
        let &(x, y, z) = it.next()?;
        let (mut lo, mut hi) = (IVec3::new(x, y, z), IVec3::new(x, y, z));
        for &(x, y, z) in it {
            lo = lo.min(IVec3::new(x, y, z));
            hi = hi.max(IVec3::new(x, y, z));
        }
        Some(CellRegion {
            min: lo * CHUNK,
            max: (hi + IVec3::ONE) * CHUNK,
        })
    }
}

/// What `CopyRegion` returns (a `TerrainRegion`): its size in cells and the voxels of the
/// part of it the terrain had anything in ([`Terrain::copied_part`]; the rest is empty).
#[derive(Clone, Debug, PartialEq)]
pub struct TerrainRegion {
    /// Size in cells.
    pub size: IVec3,
    /// Where `voxels` begin within the region (cells from its first).
    pub offset: IVec3,
    /// The voxels, [`VoxelBox`] order.
    pub voxels: VoxelBox,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_is_round_half_away_from_zero_exactly() {
        let reference = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
        // Every float in 0..=1 with a stride, and the floats next to each rounding boundary.
        let mut bits = 0u32;
        while f32::from_bits(bits) <= 1.0 {
            let v = f32::from_bits(bits);
            assert_eq!(quantize(v), reference(v), "{v:e}");
            bits += 997;
        }
        for k in 0..=255u32 {
            let edge = (k as f32 + 0.5) / 255.0;
            let mut v = f32::from_bits(edge.to_bits().saturating_sub(8));
            for _ in 0..16 {
                assert_eq!(quantize(v), reference(v), "{v:e}");
                v = f32::from_bits(v.to_bits() + 1);
            }
        }
        for v in [
            -1.0,
            0.0,
            1.0,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ] {
            assert_eq!(quantize(v), if v.is_nan() { 0 } else { reference(v) });
        }
    }
}
