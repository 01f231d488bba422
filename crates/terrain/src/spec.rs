//! World descriptions with the world file's keys: [`WorldSpec`] is what `procmodel terrain`
//! reads from TOML/JSON (serde) and what `@procmodel/terrain` reads from a Luau table, and
//! [`WorldSpec::plan`] is the one place that checks it and turns it into a [`World`] with its
//! extent, floor and resource settings. Both front ends therefore build the same world from
//! the same description, and name a bad field the same way.
//!
//! Lengths are studs unless a field says columns. Zone errors are [`TerrainError::Zone`]
//! (0-based index, field); other errors are [`TerrainError::Config`] naming the key.

use crate::error::TerrainError;
use crate::material::Material;
use crate::region::MAX_STUDS;
use crate::resources::{ResourceConfig, ResourcePlan, ZoneExclusion};
use crate::world::{
    BandRule, HeightNoise, MaterialBands, SampleRect, VoxelColumns, World, WorldConfig,
};
use crate::zones::{Falloff, RectCorners, Zone, ZoneShape};
use serde::Deserialize;

/// Most columns a world may have (1,073,741,824: a 32768² world, 131 km a side at 4 studs a
/// column). Outputs built whole in memory have a lower cap of their own; tiles do not.
pub const MAX_COLUMNS: u64 = 1 << 30;

/// A world description (the world file's top level).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// SEED: the first `math.noise` coordinate (default 0).
    #[serde(default)]
    pub seed: f64,
    /// SCALE: columns per noise unit (default 15).
    #[serde(default = "d_scale")]
    pub scale: f64,
    /// HEIGHT: studs per noise unit (default 20).
    #[serde(default = "d_height")]
    pub height: f64,
    /// BASE: vertical offset in studs (default −4).
    #[serde(default = "d_base")]
    pub base: f64,
    /// GRID: studs between columns (default 4).
    #[serde(default = "d_grid")]
    pub grid: f64,
    /// Added to `base + height·n` (default: `grid`, the top of the tutorial's blocks).
    pub surface_offset: Option<f64>,
    /// Columns along X and Z.
    pub columns: Option<[u64; 2]>,
    /// Extent along X and Z in studs (rounded up to whole columns).
    pub studs: Option<[f64; 2]>,
    /// First column index (i, j); default centres the world on the origin.
    pub origin: Option<[i64; 2]>,
    /// Bottom of the voxels (studs); default two columns below the lowest surface.
    pub floor: Option<f64>,
    /// The noise source (default: the tutorial's `math.noise`).
    pub noise: Option<NoiseSpec>,
    /// Material bands (default: the tutorial's table).
    pub bands: Option<Vec<BandSpec>>,
    /// The material when no band matches (default Ground).
    pub default_material: Option<String>,
    /// Zones, applied in order (later zones win).
    #[serde(default)]
    pub zones: Vec<ZoneSpec>,
    /// Resource scattering.
    pub resources: Option<ResourcesSpec>,
}

impl Default for WorldSpec {
    fn default() -> Self {
        WorldSpec {
            seed: 0.0,
            scale: d_scale(),
            height: d_height(),
            base: d_base(),
            grid: d_grid(),
            surface_offset: None,
            columns: None,
            studs: None,
            origin: None,
            floor: None,
            noise: None,
            bands: None,
            default_material: None,
            zones: Vec::new(),
            resources: None,
        }
    }
}

fn d_scale() -> f64 {
    15.0
}
fn d_height() -> f64 {
    20.0
}
fn d_base() -> f64 {
    -4.0
}
fn d_grid() -> f64 {
    4.0
}

/// The `noise` table.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoiseSpec {
    /// `tutorial` (math.noise) or `perlin`, `simplex`, `opensimplex2`.
    #[serde(default = "d_basis")]
    pub basis: String,
    /// Seed of the noise field.
    #[serde(default)]
    pub seed: u64,
    /// `none`, `fbm`, `ridged`, `billow`.
    #[serde(default = "d_fractal")]
    pub fractal: String,
    /// Octaves of the fractal.
    #[serde(default = "d_octaves")]
    pub octaves: u32,
    /// Frequency multiplier per octave.
    #[serde(default = "d_lacunarity")]
    pub lacunarity: f32,
    /// Amplitude multiplier per octave.
    #[serde(default = "d_gain")]
    pub gain: f32,
    /// Input scale, on top of `scale`.
    #[serde(default = "d_frequency")]
    pub frequency: f32,
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec {
            basis: d_basis(),
            seed: 0,
            fractal: d_fractal(),
            octaves: d_octaves(),
            lacunarity: d_lacunarity(),
            gain: d_gain(),
            frequency: d_frequency(),
        }
    }
}

fn d_basis() -> String {
    "tutorial".into()
}
fn d_fractal() -> String {
    "fbm".into()
}
fn d_octaves() -> u32 {
    4
}
fn d_lacunarity() -> f32 {
    2.0
}
fn d_gain() -> f32 {
    0.5
}
fn d_frequency() -> f32 {
    1.0
}

/// One band: exactly one of `above`/`below`, and a material name.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BandSpec {
    /// Matches when the noise value is above this.
    pub above: Option<f32>,
    /// Matches when the noise value is below this.
    pub below: Option<f32>,
    /// `Enum.Material` name.
    pub material: String,
}

/// One zone.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    /// `circle` or `rect`.
    pub shape: String,
    /// Centre X, Z (studs).
    pub center: [f32; 2],
    /// Surface height of the flat part (studs).
    #[serde(default)]
    pub level: f32,
    /// Circle: flat radius.
    pub r1: Option<f32>,
    /// Circle: outer blend radius.
    pub r2: Option<f32>,
    /// Rect: inner side along X.
    pub x1: Option<f32>,
    /// Rect: outer side along X.
    pub x2: Option<f32>,
    /// Rect: inner side along Z.
    pub z1: Option<f32>,
    /// Rect: outer side along Z.
    pub z2: Option<f32>,
    /// `linear` (default) or `smoothstep`.
    pub falloff: Option<String>,
    /// `max` (default, the tutorial's) or `euclidean`.
    pub corners: Option<String>,
    /// Surface material inside the flat part.
    pub material: Option<String>,
}

/// The `resources` table.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResourcesSpec {
    /// Seed of the scatter.
    #[serde(default)]
    pub seed: u64,
    /// Minimum distance between resources (studs).
    pub min_distance: f64,
    /// Probability that a sampling cell has a candidate (default 1).
    #[serde(default = "d_density")]
    pub density: f64,
    /// `inner` (default: outside the flat parts) or `whole` (outside the blend borders too).
    pub exclude: Option<String>,
    /// How far below the lowest ground under its footprint a resource's bottom goes
    /// (default `grid·2/3`, the tutorial's).
    pub sink: Option<f64>,
    /// Ground materials that grow trees; rocks elsewhere (default Grass, LeafyGrass, Ground, Mud).
    pub trees_on: Option<Vec<String>>,
}

fn d_density() -> f64 {
    1.0
}

/// A checked world description.
#[derive(Clone, Debug)]
pub struct WorldPlan {
    /// The world.
    pub world: World,
    /// The columns covered (`None` when the description gives no `columns`/`studs`).
    pub rect: Option<SampleRect>,
    /// The floor given by the description.
    pub floor: Option<f64>,
    /// Resource settings, if any.
    pub resources: Option<ResourcePlan>,
}

fn zone_err(index: usize, field: &'static str, reason: impl Into<String>) -> TerrainError {
    TerrainError::Zone {
        index,
        field,
        reason: reason.into(),
    }
}

fn cfg_err(field: &'static str, reason: impl Into<String>) -> TerrainError {
    TerrainError::Config {
        field,
        reason: reason.into(),
    }
}

impl ZoneSpec {
    /// The zone (checked; errors name `index` and the field).
    pub fn zone(&self, index: usize) -> Result<Zone, TerrainError> {
        let z = self;
        let need = |field: &'static str, v: Option<f32>| {
            v.ok_or_else(|| zone_err(index, field, format!("is required for a {} zone", z.shape)))
        };
        let refuse = |field: &'static str, v: Option<f32>| match v {
            Some(_) => Err(zone_err(
                index,
                field,
                format!("does not apply to a {} zone", z.shape),
            )),
            None => Ok(()),
        };
        let [x, cz] = z.center;
        let mut out = match z.shape.as_str() {
            "circle" => {
                for (f, v) in [("x1", z.x1), ("x2", z.x2), ("z1", z.z1), ("z2", z.z2)] {
                    refuse(f, v)?;
                }
                if z.corners.is_some() {
                    return Err(zone_err(
                        index,
                        "corners",
                        "does not apply to a circle zone",
                    ));
                }
                Zone::circle(x, cz, z.level, need("r1", z.r1)?, need("r2", z.r2)?)
            }
            "rect" => {
                refuse("r1", z.r1)?;
                refuse("r2", z.r2)?;
                let mut r = Zone::rect(
                    x,
                    cz,
                    z.level,
                    need("x1", z.x1)?,
                    need("x2", z.x2)?,
                    need("z1", z.z1)?,
                    need("z2", z.z2)?,
                );
                if let ZoneShape::Rect { corners, .. } = &mut r.shape {
                    *corners = match z.corners.as_deref() {
                        None | Some("max") => RectCorners::Max,
                        Some("euclidean") => RectCorners::Euclidean,
                        Some(o) => {
                            return Err(zone_err(
                                index,
                                "corners",
                                format!("must be max or euclidean (got {o:?})"),
                            ));
                        }
                    };
                }
                r
            }
            o => {
                return Err(zone_err(
                    index,
                    "shape",
                    format!("must be circle or rect (got {o:?})"),
                ));
            }
        };
        out.falloff = match z.falloff.as_deref() {
            None | Some("linear") => Falloff::Linear,
            Some("smoothstep") => Falloff::Smoothstep,
            Some(o) => {
                return Err(zone_err(
                    index,
                    "falloff",
                    format!("must be linear or smoothstep (got {o:?})"),
                ));
            }
        };
        if let Some(m) = &z.material {
            out.material = Some(terrain_material(m).map_err(|e| zone_err(index, "material", e))?);
        }
        out.validate(index)?;
        Ok(out)
    }
}

impl NoiseSpec {
    /// The height noise.
    pub fn height_noise(&self) -> Result<HeightNoise, TerrainError> {
        use procmodel_noise::{Basis, Fractal, NoiseConfig};
        let basis = match self.basis.as_str() {
            "tutorial" => return Ok(HeightNoise::Tutorial),
            "perlin" => Basis::Perlin,
            "simplex" => Basis::Simplex,
            "opensimplex2" => Basis::OpenSimplex2,
            b => {
                return Err(cfg_err(
                    "noise.basis",
                    format!("must be tutorial, perlin, simplex or opensimplex2 (got {b:?})"),
                ));
            }
        };
        let fractal = match self.fractal.as_str() {
            "none" => Fractal::None,
            "fbm" => Fractal::Fbm,
            "ridged" => Fractal::Ridged,
            "billow" => Fractal::Billow,
            f => {
                return Err(cfg_err(
                    "noise.fractal",
                    format!("must be none, fbm, ridged or billow (got {f:?})"),
                ));
            }
        };
        Ok(HeightNoise::Field(NoiseConfig {
            basis,
            seed: self.seed,
            frequency: self.frequency,
            fractal,
            octaves: self.octaves,
            lacunarity: self.lacunarity,
            gain: self.gain,
            warp: None,
        }))
    }
}

impl ResourcesSpec {
    fn plan(&self, grid: f64) -> Result<ResourcePlan, TerrainError> {
        let exclude = match self.exclude.as_deref() {
            None | Some("inner") => ZoneExclusion::Inner,
            Some("whole") => ZoneExclusion::Whole,
            Some(o) => {
                return Err(cfg_err(
                    "resources.exclude",
                    format!("must be inner or whole (got {o:?})"),
                ));
            }
        };
        let sink = self.sink.unwrap_or(grid * 2.0 / 3.0);
        if !(sink.is_finite() && sink >= 0.0) {
            return Err(cfg_err(
                "resources.sink",
                format!("must be a non-negative number (got {sink})"),
            ));
        }
        let trees_on = match &self.trees_on {
            None => vec![
                Material::Grass,
                Material::LeafyGrass,
                Material::Ground,
                Material::Mud,
            ],
            Some(v) => v
                .iter()
                .map(|m| terrain_material(m).map_err(|e| cfg_err("resources.trees_on", e)))
                .collect::<Result<_, _>>()?,
        };
        let config = ResourceConfig {
            seed: self.seed,
            min_distance: self.min_distance,
            density: self.density,
            exclude,
        };
        config
            .validate()
            .map_err(|e| cfg_err("resources", e.to_string()))?;
        Ok(ResourcePlan {
            config,
            sink,
            trees_on,
        })
    }
}

/// The world's columns at `grid` studs apart must lie within the terrain's ±[`MAX_STUDS`]
/// and cover at most [`MAX_COLUMNS`] voxel columns (4 studs each): a large grid makes a few
/// columns span more voxels than any output can hold.
fn check_extent(rect: SampleRect, grid: f64) -> Result<(), TerrainError> {
    // Numbers as a person wrote them: 4, 0.5, 1e300 (not 300 digits).
    let show = |v: f64| {
        if v.is_finite() && v != 0.0 && !(1e-4..1e15).contains(&v.abs()) {
            format!("{v:e}")
        } else {
            format!("{v}")
        }
    };
    let mut cells = 1u64;
    for axis in 0..2 {
        let first = rect.min[axis] as f64 * grid;
        let last = (rect.min[axis] as f64 + rect.size[axis] as f64 - 1.0) * grid;
        for v in [first, last] {
            if v.abs() > MAX_STUDS {
                return Err(cfg_err(
                    "columns",
                    format!(
                        "at grid {} the world reaches {} studs along {}, beyond the terrain's ±{MAX_STUDS}",
                        show(grid),
                        show(v),
                        ["X", "Z"][axis]
                    ),
                ));
            }
        }
        cells = cells.saturating_mul(((last - first) / 4.0).floor() as u64 + 1);
    }
    if cells > MAX_COLUMNS {
        return Err(cfg_err(
            "columns",
            format!(
                "at grid {} the world covers {cells} voxel columns (4 studs each), more than {MAX_COLUMNS}: use fewer columns or a smaller grid",
                show(grid)
            ),
        ));
    }
    Ok(())
}

impl WorldSpec {
    /// Checks the description and builds the world.
    pub fn plan(&self) -> Result<WorldPlan, TerrainError> {
        let f = self;
        let grid = f.grid;
        if !(grid.is_finite() && grid > 0.0) {
            return Err(cfg_err(
                "grid",
                format!("must be a positive number (got {grid})"),
            ));
        }
        if grid > MAX_STUDS {
            return Err(cfg_err(
                "grid",
                format!("must be at most the terrain's extent, {MAX_STUDS} studs (got {grid:e})"),
            ));
        }
        let size = match (f.columns, f.studs) {
            (Some(_), Some(_)) => return Err(cfg_err("columns", "and studs are exclusive")),
            (None, None) => None,
            (Some(c), None) => Some(c),
            (None, Some(s)) => {
                let mut c = [0u64; 2];
                for (k, v) in s.into_iter().enumerate() {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(cfg_err(
                            "studs",
                            format!("must be positive numbers (got {v})"),
                        ));
                    }
                    c[k] = ((v / grid).ceil() as u64).saturating_add(1);
                }
                Some(c)
            }
        };
        let rect = match size {
            None => {
                if f.origin.is_some() {
                    return Err(cfg_err("origin", "needs columns (or studs)"));
                }
                None
            }
            Some(size) => {
                if size.contains(&0) {
                    return Err(cfg_err("columns", "must not be 0"));
                }
                if size[0].saturating_mul(size[1]) > MAX_COLUMNS {
                    return Err(cfg_err(
                        "columns",
                        format!("{}×{} exceeds {MAX_COLUMNS} columns", size[0], size[1]),
                    ));
                }
                let origin = f
                    .origin
                    .unwrap_or([-(size[0] as i64 / 2), -(size[1] as i64 / 2)]);
                if origin.iter().any(|o| o.abs() > 1 << 20) {
                    return Err(cfg_err("origin", format!("{origin:?} is out of range")));
                }
                let rect = SampleRect {
                    min: origin,
                    size: [size[0] as usize, size[1] as usize],
                };
                check_extent(rect, grid)?;
                Some(rect)
            }
        };
        let mut bands = MaterialBands::default();
        if let Some(bs) = &f.bands {
            bands.rules.clear();
            for (i, b) in bs.iter().enumerate() {
                let m = terrain_material(&b.material).map_err(|e| TerrainError::Band {
                    index: i,
                    reason: format!("material: {e}"),
                })?;
                bands.rules.push(match (b.above, b.below) {
                    (Some(t), None) => BandRule::Above(t, m),
                    (None, Some(t)) => BandRule::Below(t, m),
                    _ => {
                        return Err(TerrainError::Band {
                            index: i,
                            reason: "needs exactly one of above or below".into(),
                        });
                    }
                });
            }
        }
        if let Some(m) = &f.default_material {
            bands.default = terrain_material(m).map_err(|e| cfg_err("default_material", e))?;
        }
        for (i, r) in bands.rules.iter().enumerate() {
            let (BandRule::Above(_, m) | BandRule::Below(_, m)) = *r;
            if !m.is_solid() {
                return Err(TerrainError::Band {
                    index: i,
                    reason: format!(
                        "material must be a solid terrain material (got {})",
                        m.name()
                    ),
                });
            }
        }
        if !bands.default.is_solid() {
            return Err(cfg_err(
                "default_material",
                format!(
                    "must be a solid terrain material (got {})",
                    bands.default.name()
                ),
            ));
        }
        let zones = f
            .zones
            .iter()
            .enumerate()
            .map(|(i, z)| z.zone(i))
            .collect::<Result<Vec<_>, _>>()?;
        let cfg = WorldConfig {
            seed: f.seed,
            scale: f.scale,
            height: f.height,
            base: f.base,
            grid,
            surface_offset: f.surface_offset.unwrap_or(grid),
            noise: match &f.noise {
                None => HeightNoise::Tutorial,
                Some(n) => n.height_noise()?,
            },
            bands,
            zones,
        };
        let world = World::new(cfg)?;
        if let Some(fl) = f.floor
            && !fl.is_finite()
        {
            return Err(cfg_err("floor", format!("is not a finite number ({fl})")));
        }
        let resources = f.resources.as_ref().map(|r| r.plan(grid)).transpose()?;
        Ok(WorldPlan {
            world,
            rect,
            floor: f.floor,
            resources,
        })
    }
}

impl WorldPlan {
    /// The voxel columns whose centres lie within the world's columns (`None` without an
    /// extent): what `procmodel terrain` writes.
    pub fn cells(&self) -> Option<VoxelColumns> {
        let rect = self.rect?;
        let grid = self.world.config().grid;
        let [w, d] = rect.size;
        let (i0, j0) = (rect.min[0] as f64, rect.min[1] as f64);
        let to_cell = |v: f64| (v / 4.0).floor() as i32;
        Some(VoxelColumns {
            min: [to_cell(i0 * grid), to_cell(j0 * grid)],
            max: [
                to_cell((i0 + w as f64 - 1.0) * grid).max(to_cell(i0 * grid) + 1),
                to_cell((j0 + d as f64 - 1.0) * grid).max(to_cell(j0 * grid) + 1),
            ],
        })
    }

    /// The floor of the voxels: the description's, else two columns below the lowest
    /// surface of the world's columns (`None` with neither). Computes every column's height
    /// in the second case (row by row, without keeping them), and fails as
    /// [`World::height_range`] does on a column the terrain cannot hold.
    pub fn floor(&self) -> Result<Option<f64>, TerrainError> {
        if let Some(f) = self.floor {
            return Ok(Some(f));
        }
        let Some(rect) = self.rect else {
            return Ok(None);
        };
        let (lo, _) = self.world.height_range(rect)?.unwrap_or((0.0, 0.0));
        Ok(Some(f64::from(lo) - 2.0 * self.world.config().grid))
    }

    /// The area resources are scattered over by default: the voxel columns less a margin
    /// of the largest footprint's half side, so every footprint stands on voxels.
    pub fn resource_area(&self) -> Option<[f64; 4]> {
        let cells = self.cells()?;
        let m = crate::resources::MAX_HALF;
        Some([
            f64::from(cells.min[0]) * 4.0 + m,
            f64::from(cells.min[1]) * 4.0 + m,
            f64::from(cells.max[0]) * 4.0 - m,
            f64::from(cells.max[1]) * 4.0 - m,
        ])
    }
}

/// A terrain material by its `Enum.Material` name; an error names it and lists the terrain
/// materials.
/// The terrain material called `name`, or what reads after a field's name: `"Neon" is
/// not a terrain material (terrain materials: …)`.
fn terrain_material(name: &str) -> Result<Material, String> {
    Material::from_name(name).map_err(|_| {
        let names: Vec<&str> = Material::ALL.iter().map(|m| m.name()).collect();
        format!(
            "{name:?} is not a terrain material (terrain materials: {})",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorldSpec {
        WorldSpec {
            columns: Some([16, 16]),
            ..WorldSpec::default()
        }
    }

    #[test]
    fn defaults_are_the_tutorials() {
        let p = spec().plan().unwrap();
        let c = p.world.config();
        assert_eq!(
            (c.seed, c.scale, c.height, c.base, c.grid, c.surface_offset),
            (0.0, 15.0, 20.0, -4.0, 4.0, 4.0)
        );
        assert_eq!(c.bands, MaterialBands::default());
        assert_eq!(c.noise, HeightNoise::Tutorial);
        assert_eq!(
            p.rect,
            Some(SampleRect {
                min: [-8, -8],
                size: [16, 16]
            })
        );
        // 16 columns from -32 studs to 28: cells -8 .. 7.
        assert_eq!(
            p.cells(),
            Some(VoxelColumns {
                min: [-8, -8],
                max: [7, 7]
            })
        );
        assert_eq!(p.resource_area(), Some([-28.0, -28.0, 24.0, 24.0]));
    }

    #[test]
    fn no_extent_is_allowed_but_then_nothing_defaults_to_it() {
        let p = WorldSpec::default().plan().unwrap();
        assert_eq!((p.rect, p.cells(), p.floor()), (None, None, Ok(None)));
        let e = WorldSpec {
            origin: Some([0, 0]),
            ..WorldSpec::default()
        };
        assert_eq!(
            e.plan().unwrap_err().to_string(),
            "origin: needs columns (or studs)"
        );
    }

    #[test]
    fn default_floor_is_two_columns_below_the_lowest_surface() {
        let p = spec().plan().unwrap();
        let hf = p.world.heightfield(p.rect.unwrap(), false);
        let lo = hf.range().unwrap().0;
        assert_eq!(p.floor(), Ok(Some(f64::from(lo) - 8.0)));
        let given = WorldSpec {
            floor: Some(-50.0),
            ..spec()
        };
        assert_eq!(given.plan().unwrap().floor(), Ok(Some(-50.0)));
    }

    #[test]
    fn errors_name_the_field() {
        let bad = |s: WorldSpec| s.plan().unwrap_err().to_string();
        let zone = |z: ZoneSpec| {
            bad(WorldSpec {
                zones: vec![z],
                ..spec()
            })
        };
        let circle = ZoneSpec {
            shape: "circle".into(),
            r1: Some(10.0),
            r2: Some(10.0),
            ..ZoneSpec::default()
        };
        assert_eq!(
            zone(circle.clone()),
            "zone 0: r2 must be greater than r1 (got r2 = 10, r1 = 10)"
        );
        assert_eq!(
            zone(ZoneSpec {
                x1: Some(1.0),
                r2: Some(20.0),
                ..circle.clone()
            }),
            "zone 0: x1 does not apply to a circle zone"
        );
        assert_eq!(
            zone(ZoneSpec {
                material: Some("Neon".into()),
                r2: Some(20.0),
                ..circle.clone()
            }),
            format!(
                "zone 0: material \"Neon\" is not a terrain material (terrain materials: {})",
                "Air, Water, Grass, Slate, Concrete, Brick, Sand, WoodPlanks, Rock, Glacier, Snow, \
                 Sandstone, Mud, Basalt, Ground, CrackedLava, Asphalt, Cobblestone, Ice, \
                 LeafyGrass, Salt, Limestone, Pavement"
            )
        );
        assert_eq!(
            zone(ZoneSpec {
                shape: "rect".into(),
                r1: None,
                r2: None,
                x1: Some(4.0),
                x2: Some(8.0),
                z1: Some(4.0),
                ..ZoneSpec::default()
            }),
            "zone 0: z2 is required for a rect zone"
        );
        assert_eq!(
            bad(WorldSpec {
                resources: Some(ResourcesSpec {
                    seed: 0,
                    min_distance: 0.0,
                    density: 1.0,
                    exclude: None,
                    sink: None,
                    trees_on: None,
                }),
                ..spec()
            }),
            "resources: min_distance: must be a positive number (got 0)"
        );
        assert_eq!(
            bad(WorldSpec {
                bands: Some(vec![BandSpec {
                    above: Some(0.0),
                    below: None,
                    material: "Water".into()
                }]),
                ..spec()
            }),
            "bands: band 0: material must be a solid terrain material (got Water)"
        );
    }
}
