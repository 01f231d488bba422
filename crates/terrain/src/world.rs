//! Heightmap worlds: height per column from noise with the tutorial's parameters, materials
//! by height band, zones, chunk-independent generation in bands, and voxelisation.
//!
//! # Coordinates
//! Sample `(i, j)` is the tutorial's column `(x, z)`: world position `(i·grid, j·grid)` studs,
//! noise `n = math.noise(seed, i/scale, j/scale)` (bit-exact, [`HeightNoise::Tutorial`]) or a
//! `procmodel-noise` field at `(i/scale, j/scale)`. The raw surface height is
//! `base + height·n + surface_offset` — the top of the tutorial's `FillBlock` of size
//! `grid × 2·grid × grid` centred at `base + height·n` when `surface_offset = grid`. Zones
//! then apply in order (later zones win where they overlap) on the surface height, in studs
//! and world space (the tutorial measures zones in column units: multiply by `grid`).
//! Every sample is a pure function of `(i, j)`, so any rectangle — a chunk, a band — gives
//! exactly the values of the whole world there, on any thread count.

use crate::error::TerrainError;
use crate::material::Material;
use crate::region::MAX_STUDS;
use crate::storage::{CellRegion, Terrain, Voxel, quantize};
use crate::zones::{Zone, validate_zones};
use glam::IVec3;
use procmodel_noise::{Fractal, Noise, NoiseConfig};
use rayon::prelude::*;
use std::ops::ControlFlow;

/// Where the per-column noise value `n` (nominally −1..1) comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeightNoise {
    /// `math.noise(seed, i/scale, j/scale)` exactly as Luau computes it.
    Tutorial,
    /// A procmodel-noise field sampled at `(i/scale, j/scale)` (its own `frequency`
    /// applies on top); fractal outputs in 0..1 are mapped to −1..1 (`2v − 1`).
    Field(NoiseConfig),
}

/// One band rule: `n > threshold` ([`BandRule::Above`]) or `n < threshold`
/// ([`BandRule::Below`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BandRule {
    /// Matches when `n > t`.
    Above(f32, Material),
    /// Matches when `n < t`.
    Below(f32, Material),
}

/// Materials by the noise value: the first matching rule wins, else `default`.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialBands {
    /// Rules in order.
    pub rules: Vec<BandRule>,
    /// When no rule matches.
    pub default: Material,
}

impl Default for MaterialBands {
    /// The tutorial's table: > 0.5 Glacier, > 0.4 Snow, > 0.2 LeafyGrass, > 0 Grass,
    /// < −0.2 Mud, else Ground.
    fn default() -> Self {
        MaterialBands {
            rules: vec![
                BandRule::Above(0.5, Material::Glacier),
                BandRule::Above(0.4, Material::Snow),
                BandRule::Above(0.2, Material::LeafyGrass),
                BandRule::Above(0.0, Material::Grass),
                BandRule::Below(-0.2, Material::Mud),
            ],
            default: Material::Ground,
        }
    }
}

impl MaterialBands {
    /// The material for a noise value.
    pub fn material(&self, n: f64) -> Material {
        for r in &self.rules {
            match *r {
                BandRule::Above(t, m) if n > f64::from(t) => return m,
                BandRule::Below(t, m) if n < f64::from(t) => return m,
                _ => {}
            }
        }
        self.default
    }
}

/// Everything that defines a world. Same config → same bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldConfig {
    /// SEED (the first `math.noise` coordinate for [`HeightNoise::Tutorial`]).
    pub seed: f64,
    /// SCALE: columns per noise unit.
    pub scale: f64,
    /// HEIGHT: studs per noise unit.
    pub height: f64,
    /// BASE: vertical offset (studs).
    pub base: f64,
    /// GRID: studs between columns.
    pub grid: f64,
    /// Added to `base + height·n` to give the surface (default `grid`, the tutorial block's top).
    pub surface_offset: f64,
    /// The noise source.
    pub noise: HeightNoise,
    /// Materials by height band.
    pub bands: MaterialBands,
    /// Zones, applied in order.
    pub zones: Vec<Zone>,
}

impl Default for WorldConfig {
    /// The tutorial's world: seed 0, SCALE 15, HEIGHT 20, BASE −4, GRID 4 (the tutorial does
    /// not print HEIGHT; 20 is our default), its band table, no zones.
    fn default() -> Self {
        WorldConfig {
            seed: 0.0,
            scale: 15.0,
            height: 20.0,
            base: -4.0,
            grid: 4.0,
            surface_offset: 4.0,
            noise: HeightNoise::Tutorial,
            bands: MaterialBands::default(),
            zones: Vec::new(),
        }
    }
}

/// A rectangle of samples: `size[0]` along X from `min[0]`, `size[1]` along Z from `min[1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRect {
    /// First sample index (i, j).
    pub min: [i64; 2],
    /// Samples along X and Z.
    pub size: [usize; 2],
}

/// Heights and materials of a [`SampleRect`], row-major (X fastest, rows along Z).
#[derive(Clone, Debug, PartialEq)]
pub struct Heightfield {
    /// The samples covered.
    pub rect: SampleRect,
    /// Surface height per sample (studs).
    pub heights: Vec<f32>,
    /// Surface material per sample (a zone's material inside its flat part).
    pub materials: Vec<Material>,
    /// Studs between samples.
    pub grid: f64,
}

impl Heightfield {
    /// Height at sample offset `(x, z)` within the rect.
    pub fn at(&self, x: usize, z: usize) -> f32 {
        self.heights[z * self.rect.size[0] + x]
    }

    /// [`TerrainError::Surface`] naming the first sample (row by row) whose height is not
    /// finite or beyond the terrain's extent, as [`World::height_range`] names it.
    pub fn check(&self) -> Result<(), TerrainError> {
        let Some(k) = self.heights.iter().position(|&h| !within_extent(h)) else {
            return Ok(());
        };
        let w = self.rect.size[0].max(1);
        Err(TerrainError::Surface {
            i: self.rect.min[0] + (k % w) as i64,
            j: self.rect.min[1] + (k / w) as i64,
            value: f64::from(self.heights[k]),
        })
    }

    /// (min, max) of the heights, `None` when empty.
    pub fn range(&self) -> Option<(f32, f32)> {
        let mut it = self.heights.iter().copied();
        let f = it.next()?;
        Some(it.fold((f, f), |(a, b), h| (a.min(h), b.max(h))))
    }
}

/// One column: surface height and material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    /// Surface height (studs).
    pub height: f64,
    /// Surface material.
    pub material: Material,
}

/// A compiled world (validated config, built noise). `Send + Sync`.
#[derive(Clone, Debug)]
pub struct World {
    cfg: WorldConfig,
    noise: Option<Noise>,
}

/// A surface height the terrain can hold: finite and within ±[`MAX_STUDS`].
fn within_extent(h: f32) -> bool {
    f64::from(h).abs() <= MAX_STUDS
}

fn cfg_err(field: &'static str, reason: String) -> TerrainError {
    TerrainError::Config { field, reason }
}

impl World {
    /// Validates the config (finite numbers, scale ≠ 0, grid > 0, zones) and builds the noise.
    pub fn new(cfg: WorldConfig) -> Result<World, TerrainError> {
        for (field, v) in [
            ("seed", cfg.seed),
            ("scale", cfg.scale),
            ("height", cfg.height),
            ("base", cfg.base),
            ("grid", cfg.grid),
            ("surface_offset", cfg.surface_offset),
        ] {
            if !v.is_finite() {
                return Err(cfg_err(field, format!("is not a finite number ({v})")));
            }
        }
        if cfg.scale == 0.0 {
            return Err(cfg_err("scale", "must not be 0".into()));
        }
        if cfg.grid <= 0.0 {
            return Err(cfg_err(
                "grid",
                format!("must be positive (got {})", cfg.grid),
            ));
        }
        for (i, r) in cfg.bands.rules.iter().enumerate() {
            let (BandRule::Above(t, _) | BandRule::Below(t, _)) = *r;
            if t.is_nan() {
                return Err(cfg_err("bands", format!("rule {i} threshold is NaN")));
            }
        }
        validate_zones(&cfg.zones)?;
        let noise = match cfg.noise {
            HeightNoise::Tutorial => None,
            HeightNoise::Field(nc) => {
                Some(Noise::new(nc).map_err(|e| TerrainError::Noise(e.to_string()))?)
            }
        };
        Ok(World { cfg, noise })
    }

    /// The config.
    pub fn config(&self) -> &WorldConfig {
        &self.cfg
    }

    /// The noise value `n` of sample `(i, j)`.
    pub fn noise_at(&self, i: i64, j: i64) -> f64 {
        let (u, v) = (i as f64 / self.cfg.scale, j as f64 / self.cfg.scale);
        match &self.noise {
            None => procmodel_noise::perlin3(self.cfg.seed, u, v),
            Some(n) => {
                let s = f64::from(n.sample2(u as f32, v as f32));
                if n.config().fractal == Fractal::None {
                    s
                } else {
                    2.0 * s - 1.0
                }
            }
        }
    }

    /// Height and material of sample `(i, j)` (zones applied).
    pub fn column(&self, i: i64, j: i64) -> Column {
        self.column_among(i, j, self.cfg.zones.iter())
    }

    /// The zones that can touch row `j` (in order): [`World::column`] of any column of the
    /// row through [`World::column_among`] with them is the same column, without testing
    /// zones far from the row.
    pub fn row_zones(&self, j: i64) -> Vec<&Zone> {
        let z = j as f64 * self.cfg.grid;
        self.cfg
            .zones
            .iter()
            .filter(|zone| zone.reaches_row(z))
            .collect()
    }

    /// [`World::column`] applying only `zones` (a row's, from [`World::row_zones`]).
    pub fn column_among<'z>(
        &self,
        i: i64,
        j: i64,
        zones: impl Iterator<Item = &'z Zone>,
    ) -> Column {
        let n = self.noise_at(i, j);
        let mut material = self.cfg.bands.material(n);
        let mut h = self.cfg.base + self.cfg.height * n + self.cfg.surface_offset;
        let (x, z) = (i as f64 * self.cfg.grid, j as f64 * self.cfg.grid);
        for zone in zones {
            h = zone.apply(x, z, h);
            if let Some(m) = zone.material
                && zone.is_inner(x, z)
            {
                material = m;
            }
        }
        Column {
            height: h,
            material,
        }
    }

    /// The heightfield of a rectangle, rows computed on the rayon pool when `parallel`
    /// (identical bytes either way).
    pub fn heightfield(&self, rect: SampleRect, parallel: bool) -> Heightfield {
        let [w, d] = rect.size;
        let mut heights = vec![0f32; w * d];
        let mut materials = vec![Material::Air; w * d];
        let row = |j: usize, hs: &mut [f32], ms: &mut [Material]| {
            let zones = self.row_zones(rect.min[1] + j as i64);
            for i in 0..w {
                let c = self.column_among(
                    rect.min[0] + i as i64,
                    rect.min[1] + j as i64,
                    zones.iter().copied(),
                );
                hs[i] = c.height as f32;
                ms[i] = c.material;
            }
        };
        if w > 0 {
            if parallel {
                heights
                    .par_chunks_mut(w)
                    .zip(materials.par_chunks_mut(w))
                    .enumerate()
                    .for_each(|(j, (hs, ms))| row(j, hs, ms));
            } else {
                for (j, (hs, ms)) in heights
                    .chunks_mut(w)
                    .zip(materials.chunks_mut(w))
                    .enumerate()
                {
                    row(j, hs, ms);
                }
            }
        }
        Heightfield {
            rect,
            heights,
            materials,
            grid: self.cfg.grid,
        }
    }

    /// (min, max) surface height over a rectangle, computed row by row on the rayon pool
    /// without keeping the rows (memory does not grow with the rectangle); `None` when empty.
    /// Equals [`Heightfield::range`] of [`World::heightfield`] of the same rectangle, or
    /// [`TerrainError::Surface`] naming the first column (row by row) whose height is not
    /// finite or beyond the terrain's extent.
    pub fn height_range(&self, rect: SampleRect) -> Result<Option<(f32, f32)>, TerrainError> {
        Ok(self.height_ranges(rect, 0)?.0)
    }

    /// [`World::height_range`] of `rect` and of `rect` grown by `grow` samples on every side,
    /// in one pass over the larger one (the first bad column of either is the error).
    pub fn height_ranges(
        &self,
        rect: SampleRect,
        grow: usize,
    ) -> Result<(Option<(f32, f32)>, Option<(f32, f32)>), TerrainError> {
        let [w, d] = rect.size;
        if w == 0 || d == 0 {
            return Ok((None, None));
        }
        let g = grow as i64;
        let (ow, od) = (w + 2 * grow, d + 2 * grow);
        let empty = (f32::INFINITY, f32::NEG_INFINITY);
        let join = |a: (f32, f32), b: (f32, f32)| (a.0.min(b.0), a.1.max(b.1));
        // The first bad column of a row; rows are joined keeping the lowest (j, i), so the
        // column named does not depend on how rayon split the rows.
        let first = |a: Option<(i64, i64, f32)>, b: Option<(i64, i64, f32)>| {
            [a, b].into_iter().flatten().min_by_key(|&(j, i, _)| (j, i))
        };
        let (inner, outer, bad) = (0..od)
            .into_par_iter()
            .map(|r| {
                let j = rect.min[1] - g + r as i64;
                let row_inside = (grow..grow + d).contains(&r);
                let (mut inner, mut outer, mut bad) = (empty, empty, None);
                let zones = self.row_zones(j);
                for k in 0..ow {
                    let i = rect.min[0] - g + k as i64;
                    let h = self.column_among(i, j, zones.iter().copied()).height as f32;
                    if bad.is_none() && !within_extent(h) {
                        bad = Some((j, i, h));
                    }
                    outer = join(outer, (h, h));
                    if row_inside && (grow..grow + w).contains(&k) {
                        inner = join(inner, (h, h));
                    }
                }
                (inner, outer, bad)
            })
            .reduce(
                || (empty, empty, None),
                |a, b| (join(a.0, b.0), join(a.1, b.1), first(a.2, b.2)),
            );
        if let Some((j, i, h)) = bad {
            return Err(TerrainError::Surface {
                i,
                j,
                value: f64::from(h),
            });
        }
        Ok((Some(inner), Some(outer)))
    }

    /// The rectangle cut into bands of `rows` rows along Z, generated lazily: a caller can
    /// yield (Luau `params:Pause()`) between bands. Concatenated, the bands equal
    /// [`World::heightfield`] of the whole rectangle.
    pub fn bands(
        &self,
        rect: SampleRect,
        rows: usize,
        parallel: bool,
    ) -> impl Iterator<Item = Heightfield> + '_ {
        let rows = rows.max(1);
        (0..rect.size[1]).step_by(rows).map(move |j0| {
            let n = rows.min(rect.size[1] - j0);
            self.heightfield(
                SampleRect {
                    min: [rect.min[0], rect.min[1] + j0 as i64],
                    size: [rect.size[0], n],
                },
                parallel,
            )
        })
    }

    /// Surface height at any world point: bilinear between the four surrounding samples.
    pub fn surface_at(&self, x: f64, z: f64) -> f64 {
        bilinear(self.cfg.grid, x, z, |a, b| self.column(a, b).height)
    }

    /// Surface material at a world point: the nearest sample's (`floor(u + 0.5)`).
    pub fn material_at(&self, x: f64, z: f64) -> Material {
        let i = (x / self.cfg.grid + 0.5).floor() as i64;
        let j = (z / self.cfg.grid + 0.5).floor() as i64;
        self.column(i, j).material
    }

    /// Writes the world into voxels over the cell columns `[min_x, max_x) × [min_z, max_z)`:
    /// each voxel column is filled from `floor` (studs) to the surface at its centre
    /// (bilinear), the top and bottom voxels partial by the block kernel
    /// `clamp(min((h − c)/4 + 0.5, (c − floor)/4 + 0.5), 0, 1)` (`c` the voxel centre Y),
    /// in the surface material. Existing voxels in the columns' range are replaced.
    /// `on_band` is called after every band of 32 cell rows (Z) with the rows done so far;
    /// returning `Break` stops (the bands written so far stay).
    pub fn write_voxels(
        &self,
        terrain: &mut Terrain,
        cells: VoxelColumns,
        floor: f64,
        on_band: impl FnMut(usize) -> ControlFlow<()>,
    ) -> Result<(), TerrainError> {
        self.write_voxels_at(terrain, cells, floor, IVec3::ZERO, on_band)
    }

    /// [`World::write_voxels`] into a terrain whose cell `(0, 0, 0)` is the world's cell
    /// `origin`: world cell `c` is written at `c − origin` (a model's local voxels, its pivot
    /// at `origin · 4` studs). Same voxels as the world write, moved.
    pub fn write_voxels_at(
        &self,
        terrain: &mut Terrain,
        cells: VoxelColumns,
        floor: f64,
        origin: IVec3,
        mut on_band: impl FnMut(usize) -> ControlFlow<()>,
    ) -> Result<(), TerrainError> {
        const ORIGIN_LIMIT: i32 = 1 << 21;
        if origin.abs().max_element() > ORIGIN_LIMIT {
            return Err(TerrainError::OutOfRange {
                what: "origin",
                value: f64::from(origin.abs().max_element()),
            });
        }
        if !floor.is_finite() {
            return Err(cfg_err(
                "floor",
                format!("is not a finite number ({floor})"),
            ));
        }
        const LIMIT: i32 = 1 << 21;
        for (v, what) in [
            (cells.min[0], "columns min x"),
            (cells.min[1], "columns min z"),
            (cells.max[0], "columns max x"),
            (cells.max[1], "columns max z"),
        ] {
            if !(-LIMIT..=LIMIT).contains(&v) {
                return Err(TerrainError::OutOfRange {
                    what,
                    value: f64::from(v),
                });
            }
        }
        if floor.abs() > MAX_STUDS {
            return Err(TerrainError::OutOfRange {
                what: "floor",
                value: floor,
            });
        }
        let [x0, z0] = cells.min;
        let [x1, z1] = cells.max;
        let w = (x1 - x0).max(0) as usize;
        let mut z = z0;
        while z < z1 {
            let zb = (z + 32 - z.rem_euclid(32)).min(z1);
            let d = (zb - z) as usize;
            // Column data for the band, computed in parallel rows from the world's columns
            // around it, each evaluated once (a cell's surface interpolates four of them).
            let mut cols = vec![(0f64, Material::Air); w * d];
            if w > 0 {
                let around = Columns::around(self, [x0, x1], [z, zb]);
                cols.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
                    let cz = f64::from(z + r as i32) * 4.0 + 2.0;
                    for (k, c) in row.iter_mut().enumerate() {
                        let cx = f64::from(x0 + k as i32) * 4.0 + 2.0;
                        *c = (around.surface_at(cx, cz), around.material_at(cx, cz));
                    }
                });
            }
            let top = cols.iter().fold(floor, |m, c| m.max(c.0));
            let ylo = ((floor - 2.0) / 4.0).floor() as i32;
            let yhi = ((top + 2.0) / 4.0).ceil() as i32;
            if !(ylo > -2_097_152 && yhi < 2_097_152) {
                return Err(cfg_err(
                    "heights",
                    format!("out of the terrain's range ({floor}..{top})"),
                ));
            }
            let region = CellRegion {
                min: IVec3::new(x0, ylo, z),
                max: IVec3::new(x1, yhi, zb),
            };
            let local = CellRegion {
                min: region.min - origin,
                max: region.max - origin,
            };
            terrain.modify(local, |c, v| {
                let c = c + origin;
                let (h, m) = cols[(c.z - z) as usize * w + (c.x - x0) as usize];
                let cy = f64::from(c.y) * 4.0 + 2.0;
                let occ = ((h - cy) / 4.0 + 0.5).min((cy - floor) / 4.0 + 0.5);
                *v = Voxel::solid(m, quantize(occ as f32));
            });
            z = zb;
            if on_band((z - z0) as usize).is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl World {
    /// How many voxels [`World::write_voxels`] touches for these columns and floor (the
    /// cells of every band's region, bottom to top), computed without writing: bindings
    /// check it against a per-call cap before any work that cannot be interrupted.
    /// Columns or a floor `write_voxels` would refuse give `u128::MAX`.
    pub fn write_voxel_count(&self, cells: VoxelColumns, floor: f64) -> u128 {
        const LIMIT: i32 = 1 << 21;
        let ok = |v: i32| (-LIMIT..=LIMIT).contains(&v);
        if !(floor.is_finite()
            && floor.abs() <= MAX_STUDS
            && cells.min.iter().chain(&cells.max).all(|&v| ok(v)))
        {
            return u128::MAX;
        }
        let [x0, z0] = cells.min;
        let [x1, z1] = cells.max;
        let w = (x1 - x0).max(0);
        let mut total = 0u128;
        let mut z = z0;
        while z < z1 {
            let zb = (z + 32 - z.rem_euclid(32)).min(z1);
            let mut top = floor;
            for cz in z..zb {
                for cx in x0..x1 {
                    let (px, pz) = (f64::from(cx) * 4.0 + 2.0, f64::from(cz) * 4.0 + 2.0);
                    top = top.max(self.surface_at(px, pz));
                }
            }
            let ylo = ((floor - 2.0) / 4.0).floor() as i64;
            let yhi = ((top + 2.0) / 4.0).ceil() as i64;
            total += (w as u128) * ((zb - z) as u128) * ((yhi - ylo).max(0) as u128);
            z = zb;
        }
        total
    }
}

/// The height at world point `(x, z)` bilinear between the four columns around it, `h(i, j)`
/// giving column `(i, j)`'s height: the one formula for [`World::surface_at`] and its cache.
fn bilinear(grid: f64, x: f64, z: f64, h: impl Fn(i64, i64) -> f64) -> f64 {
    let (u, v) = (x / grid, z / grid);
    let (i, j) = (u.floor(), v.floor());
    let (fu, fv) = (u - i, v - j);
    let (i, j) = (i as i64, j as i64);
    let top = h(i, j) + (h(i + 1, j) - h(i, j)) * fu;
    let bot = h(i, j + 1) + (h(i + 1, j + 1) - h(i, j + 1)) * fu;
    top + (bot - top) * fv
}

/// The world's columns around a block of cells, each evaluated once: the same surface and
/// material as [`World::surface_at`] / [`World::material_at`] (the same arithmetic on the same
/// column values), without evaluating a column once per cell that touches it.
struct Columns<'a> {
    world: &'a World,
    i0: i64,
    j0: i64,
    w: usize,
    d: usize,
    cols: Vec<Column>,
}

impl<'a> Columns<'a> {
    /// The columns the cells `[x0, x1) × [z0, z1)` interpolate between.
    fn around(world: &'a World, x: [i32; 2], z: [i32; 2]) -> Columns<'a> {
        let g = world.cfg.grid;
        let first = |c: i32| ((f64::from(c) * 4.0 + 2.0) / g).floor() as i64;
        let (i0, i1) = (first(x[0]), first(x[1] - 1) + 1);
        let (j0, j1) = (first(z[0]), first(z[1] - 1) + 1);
        let (w, d) = ((i1 - i0 + 1) as usize, (j1 - j0 + 1) as usize);
        let mut cols = vec![
            Column {
                height: 0.0,
                material: Material::Air
            };
            w * d
        ];
        cols.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
            let j = j0 + r as i64;
            let zones = world.row_zones(j);
            for (k, c) in row.iter_mut().enumerate() {
                *c = world.column_among(i0 + k as i64, j, zones.iter().copied());
            }
        });
        Columns {
            world,
            i0,
            j0,
            w,
            d,
            cols,
        }
    }

    fn column(&self, i: i64, j: i64) -> Column {
        let (a, b) = (i - self.i0, j - self.j0);
        if (0..self.w as i64).contains(&a) && (0..self.d as i64).contains(&b) {
            self.cols[b as usize * self.w + a as usize]
        } else {
            self.world.column(i, j)
        }
    }

    /// [`World::surface_at`] over the cached columns (the same arithmetic).
    fn surface_at(&self, x: f64, z: f64) -> f64 {
        bilinear(self.world.cfg.grid, x, z, |a, b| self.column(a, b).height)
    }

    /// [`World::material_at`], step for step.
    fn material_at(&self, x: f64, z: f64) -> Material {
        let g = self.world.cfg.grid;
        let i = (x / g + 0.5).floor() as i64;
        let j = (z / g + 0.5).floor() as i64;
        self.column(i, j).material
    }
}

/// A rectangle of voxel columns `[min, max)` in cell coordinates (X, Z).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VoxelColumns {
    /// First cell (x, z).
    pub min: [i32; 2],
    /// One past the last cell (x, z).
    pub max: [i32; 2],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zones::Zone;

    #[test]
    fn a_rows_zones_give_the_same_columns_as_all_zones() {
        let zones = vec![
            Zone::circle(30.0, -20.0, 1.0, 10.0, 40.0),
            Zone::rect(-50.0, 60.0, -3.0, 20.0, 50.0, 30.0, 60.0),
            Zone::circle(0.0, 300.0, 9.0, 5.0, 12.0),
        ];
        let w = World::new(WorldConfig {
            seed: 5.0,
            grid: 4.0,
            zones,
            ..WorldConfig::default()
        })
        .unwrap();
        let mut skipped = 0;
        for j in -30..90 {
            let row = w.row_zones(j);
            skipped += 3 - row.len();
            for i in -40..40 {
                let a = w.column(i, j);
                let b = w.column_among(i, j, row.iter().copied());
                assert_eq!(a.height.to_bits(), b.height.to_bits(), "({i}, {j})");
                assert_eq!(a.material, b.material, "({i}, {j})");
            }
        }
        // Rows far from a zone skip it (the test would prove nothing otherwise).
        assert!(skipped > 100, "{skipped}");
    }

    #[test]
    fn column_cache_is_bit_identical_to_the_world_at_any_grid() {
        for grid in [4.0, 3.0, 6.5, 1.0] {
            let w = World::new(WorldConfig {
                seed: 2.0,
                grid,
                zones: vec![
                    Zone::circle(30.0, -20.0, 1.0, 10.0, 40.0),
                    Zone::rect(-50.0, 60.0, -3.0, 20.0, 50.0, 30.0, 60.0),
                ],
                ..WorldConfig::default()
            })
            .unwrap();
            let (x, z) = ([-37, 41], [-29, 33]);
            let cache = Columns::around(&w, x, z);
            for cz in z[0]..z[1] {
                for cx in x[0]..x[1] {
                    let (px, pz) = (f64::from(cx) * 4.0 + 2.0, f64::from(cz) * 4.0 + 2.0);
                    assert_eq!(
                        cache.surface_at(px, pz).to_bits(),
                        w.surface_at(px, pz).to_bits(),
                        "grid {grid}, cell ({cx}, {cz})"
                    );
                    assert_eq!(cache.material_at(px, pz), w.material_at(px, pz));
                }
            }
            // Every lookup was inside the cache (no fallback to the world).
            let first = |c: i32| ((f64::from(c) * 4.0 + 2.0) / grid).floor() as i64;
            assert_eq!(cache.i0, first(x[0]));
            assert_eq!(cache.w as i64, first(x[1] - 1) + 2 - first(x[0]));
        }
    }
}
