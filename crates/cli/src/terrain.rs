//! `procmodel terrain`: a heightmap world described in TOML or JSON (noise, bands, zones,
//! resources) written as a place with real Terrain, a glTF mesh, heightmaps and splat maps.

use crate::export::{SceneTerrain, gltf_with_terrain};
use crate::output;
use anyhow::{Context, Result, anyhow, bail};
use procmodel_terrain::{
    BandRule, Falloff, HeightNoise, HeightRange, Heightfield, HeightmapExport, Material,
    MaterialBands, MaterialColors, RectCorners, Resource, ResourceConfig, SampleRect, SizeSnap,
    Terrain, TerrainError, VoxelColumns, World, WorldConfig, Zone, ZoneExclusion, ZoneShape,
    mesh_terrain, smoothgrid, snap_size, splat_maps,
};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{BinaryString, CFrame, Color3, Enum, Matrix3, Vector3};
use serde::Deserialize;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The world description (.toml or .json).
    pub world: PathBuf,
    /// Outputs, by extension: .rbxl/.rbxlx (place with Terrain), .glb/.gltf (terrain mesh
    /// and resources),
    /// .png (16-bit heightmap), .r16, .r32 — heightmaps get a `<file>.json` sidecar.
    #[arg(short, long, required = true)]
    pub output: Vec<PathBuf>,
    /// Also write splat maps (RGBA, four materials a map) and `splat.json` into this folder.
    #[arg(long)]
    pub splat: Option<PathBuf>,
    /// Heightmap size rule: `pow2` (2^n + 1) or `unreal` (Unreal's recommended sizes); the
    /// world is sampled over the larger size, so the extra rows are real terrain.
    #[arg(long, value_parser = parse_snap)]
    pub snap: Option<SizeSnap>,
    /// Print a JSON summary (columns, voxels, bytes and BLAKE3 of each output) to stdout.
    #[arg(long)]
    pub json: bool,
}

fn parse_snap(s: &str) -> Result<SizeSnap, String> {
    match s {
        "pow2" => Ok(SizeSnap::PowerOfTwoPlusOne),
        "unreal" => Ok(SizeSnap::Unreal),
        _ => Err(format!("unknown size rule '{s}' (use pow2 or unreal)")),
    }
}

/// The world file. Lengths in studs unless a field says columns.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct WorldFile {
    #[serde(default)]
    seed: f64,
    #[serde(default = "d_scale")]
    scale: f64,
    #[serde(default = "d_height")]
    height: f64,
    #[serde(default = "d_base")]
    base: f64,
    #[serde(default = "d_grid")]
    grid: f64,
    /// Added to `base + height·n` (default: `grid`, the top of the tutorial's blocks).
    surface_offset: Option<f64>,
    /// Columns along X and Z.
    columns: Option<[u64; 2]>,
    /// Extent along X and Z in studs (rounded up to whole columns).
    studs: Option<[f64; 2]>,
    /// First column index (i, j); default centres the world on the origin.
    origin: Option<[i64; 2]>,
    /// Bottom of the voxels (studs); default two columns below the lowest surface.
    floor: Option<f64>,
    noise: Option<NoiseFile>,
    bands: Option<Vec<BandFile>>,
    /// The material when no band matches (default Ground).
    default_material: Option<String>,
    #[serde(default)]
    zones: Vec<ZoneFile>,
    resources: Option<ResourcesFile>,
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

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct NoiseFile {
    /// `tutorial` (math.noise) or `perlin`, `simplex`, `opensimplex2`.
    #[serde(default = "d_basis")]
    basis: String,
    #[serde(default)]
    seed: u64,
    /// `none`, `fbm`, `ridged`, `billow`.
    #[serde(default = "d_fractal")]
    fractal: String,
    #[serde(default = "d_octaves")]
    octaves: u32,
    #[serde(default = "d_lacunarity")]
    lacunarity: f32,
    #[serde(default = "d_gain")]
    gain: f32,
    #[serde(default = "d_frequency")]
    frequency: f32,
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

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct BandFile {
    above: Option<f32>,
    below: Option<f32>,
    material: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ZoneFile {
    /// `circle` or `rect`.
    shape: String,
    /// Centre X, Z (studs).
    center: [f32; 2],
    /// Surface height of the flat part (studs).
    #[serde(default)]
    level: f32,
    r1: Option<f32>,
    r2: Option<f32>,
    x1: Option<f32>,
    x2: Option<f32>,
    z1: Option<f32>,
    z2: Option<f32>,
    /// `linear` (default) or `smoothstep`.
    falloff: Option<String>,
    /// `max` (default, the tutorial's) or `euclidean`.
    corners: Option<String>,
    material: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ResourcesFile {
    #[serde(default)]
    seed: u64,
    min_distance: f64,
    #[serde(default = "d_density")]
    density: f64,
    /// `inner` (default: outside the flat parts) or `whole` (outside the blend borders too).
    exclude: Option<String>,
    /// How far below the lowest ground under its footprint a resource's bottom goes
    /// (default `grid·2/3`, the tutorial's).
    sink: Option<f64>,
    /// Ground materials that grow trees; rocks elsewhere (default Grass, LeafyGrass, Ground, Mud).
    trees_on: Option<Vec<String>>,
}

fn d_density() -> f64 {
    1.0
}

/// A world file turned into the library's types.
struct Plan {
    world: World,
    rect: SampleRect,
    floor: Option<f64>,
    resources: Option<(ResourceConfig, f64, Vec<Material>)>,
}

fn material(name: &str) -> Result<Material, TerrainError> {
    Material::from_name(name)
}

fn parse_world(path: &Path) -> Result<Plan> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let file: WorldFile = match ext.as_str() {
        "toml" => toml::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?,
        "json" => serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?,
        _ => bail!(
            "{}: unknown world format '.{ext}' (use .toml or .json)",
            path.display()
        ),
    };
    plan(file).map_err(|e| anyhow!("{}: {e}", path.display()))
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

fn zone(index: usize, z: &ZoneFile) -> Result<Zone, TerrainError> {
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
        out.material = Some(material(m).map_err(|e| zone_err(index, "material", e.to_string()))?);
    }
    out.validate(index)?;
    Ok(out)
}

fn noise(n: &NoiseFile) -> Result<HeightNoise, TerrainError> {
    use procmodel_noise::{Basis, Fractal, NoiseConfig};
    let basis = match n.basis.as_str() {
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
    let fractal = match n.fractal.as_str() {
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
        seed: n.seed,
        frequency: n.frequency,
        fractal,
        octaves: n.octaves,
        lacunarity: n.lacunarity,
        gain: n.gain,
        warp: None,
    }))
}

/// Most columns a world may have (16,777,216: a 4096² world).
const MAX_COLUMNS: u64 = 1 << 24;

fn plan(f: WorldFile) -> Result<Plan, TerrainError> {
    let grid = f.grid;
    if !(grid.is_finite() && grid > 0.0) {
        return Err(cfg_err(
            "grid",
            format!("must be a positive number (got {grid})"),
        ));
    }
    let size = match (f.columns, f.studs) {
        (Some(_), Some(_)) => return Err(cfg_err("columns", "and studs are exclusive")),
        (None, None) => return Err(cfg_err("columns", "(or studs) is required")),
        (Some(c), None) => c,
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
            c
        }
    };
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
    let mut bands = MaterialBands::default();
    if let Some(bs) = &f.bands {
        bands.rules.clear();
        for (i, b) in bs.iter().enumerate() {
            let m = material(&b.material)
                .map_err(|e| cfg_err("bands", format!("band {i}: material: {e}")))?;
            bands.rules.push(match (b.above, b.below) {
                (Some(t), None) => BandRule::Above(t, m),
                (None, Some(t)) => BandRule::Below(t, m),
                _ => {
                    return Err(cfg_err(
                        "bands",
                        format!("band {i}: needs exactly one of above or below"),
                    ));
                }
            });
        }
    }
    if let Some(m) = &f.default_material {
        bands.default = material(m).map_err(|e| cfg_err("default_material", e.to_string()))?;
    }
    for (i, r) in bands.rules.iter().enumerate() {
        let (BandRule::Above(_, m) | BandRule::Below(_, m)) = *r;
        if !m.is_solid() {
            return Err(cfg_err(
                "bands",
                format!(
                    "band {i}: material must be a solid terrain material (got {})",
                    m.name()
                ),
            ));
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
        .map(|(i, z)| zone(i, z))
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
            Some(n) => noise(n)?,
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
    let resources = match &f.resources {
        None => None,
        Some(r) => {
            let exclude = match r.exclude.as_deref() {
                None | Some("inner") => ZoneExclusion::Inner,
                Some("whole") => ZoneExclusion::Whole,
                Some(o) => {
                    return Err(cfg_err(
                        "resources.exclude",
                        format!("must be inner or whole (got {o:?})"),
                    ));
                }
            };
            let sink = r.sink.unwrap_or(grid * 2.0 / 3.0);
            if !(sink.is_finite() && sink >= 0.0) {
                return Err(cfg_err(
                    "resources.sink",
                    format!("must be a non-negative number (got {sink})"),
                ));
            }
            let trees = match &r.trees_on {
                None => vec![
                    Material::Grass,
                    Material::LeafyGrass,
                    Material::Ground,
                    Material::Mud,
                ],
                Some(v) => v
                    .iter()
                    .map(|m| material(m).map_err(|e| cfg_err("resources.trees_on", e.to_string())))
                    .collect::<Result<_, _>>()?,
            };
            let rc = ResourceConfig {
                seed: r.seed,
                min_distance: r.min_distance,
                density: r.density,
                exclude,
            };
            Some((rc, sink, trees))
        }
    };
    Ok(Plan {
        world,
        rect: SampleRect {
            min: origin,
            size: [size[0] as usize, size[1] as usize],
        },
        floor: f.floor,
        resources,
    })
}

/// What an output is, by extension.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Place(output::Format),
    Gltf(output::Format),
    Png,
    R16,
    R32,
}

fn kind(path: &Path) -> Result<Kind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Ok(match ext.as_str() {
        "rbxl" => Kind::Place(output::Format::Rbxl),
        "rbxlx" => Kind::Place(output::Format::Rbxlx),
        "glb" => Kind::Gltf(output::Format::Glb),
        "gltf" => Kind::Gltf(output::Format::Gltf),
        "png" => Kind::Png,
        "r16" => Kind::R16,
        "r32" => Kind::R32,
        _ => bail!(
            "{}: unknown terrain output '.{ext}' (use .rbxl, .rbxlx, .glb, .gltf, .png, .r16 or .r32)",
            path.display()
        ),
    })
}

/// One resource as instances: a tree (trunk and crown) or a rock, its bottom `sink` below
/// the lowest voxel-column surface under its footprint, so it never floats.
struct Placed {
    tree: bool,
    bottom: f64,
    x: f64,
    z: f64,
    /// Half the footprint's side (studs).
    half: f64,
    height: f64,
}

/// The margin kept between resources and the terrain's edge (studs; ≥ any footprint's half).
const MAX_HALF: f64 = 4.0;

fn lowest_ground(world: &World, x: f64, z: f64, half: f64) -> f64 {
    // The voxel surface between voxel-column centres is interpolated from them, so the
    // lowest centre around the footprint (one voxel wider on each side) bounds it below.
    let (c0, c1) = (
        ((x - half) / 4.0).floor() - 1.0,
        ((x + half) / 4.0).floor() + 1.0,
    );
    let (d0, d1) = (
        ((z - half) / 4.0).floor() - 1.0,
        ((z + half) / 4.0).floor() + 1.0,
    );
    let mut low = f64::INFINITY;
    let mut cx = c0;
    while cx <= c1 {
        let mut cz = d0;
        while cz <= d1 {
            low = low.min(world.surface_at(cx * 4.0 + 2.0, cz * 4.0 + 2.0));
            cz += 1.0;
        }
        cx += 1.0;
    }
    low
}

fn place(world: &World, r: &Resource, index: usize, sink: f64, trees: &[Material]) -> Placed {
    // A small deterministic variation per resource (its index in the scatter's order).
    let h = (index as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .rotate_left(17);
    let v = (h >> 40) as f64 / f64::from(1u32 << 24);
    let tree = trees.contains(&r.material);
    let (half, height) = if tree {
        (1.0, 10.0 + 6.0 * v)
    } else {
        (1.5 + 1.5 * v, 2.0 + 2.0 * v)
    };
    let bottom = lowest_ground(world, r.x, r.z, half) - sink;
    Placed {
        tree,
        bottom,
        x: r.x,
        z: r.z,
        half,
        height: height + sink,
    }
}

fn part(name: &str, size: [f64; 3], centre: [f64; 3], color: [u8; 3], mat: u32) -> InstanceBuilder {
    let f = |v: f64| v as f32;
    InstanceBuilder::new("Part")
        .with_name(name)
        .with_property("Anchored", true)
        .with_property("Size", Vector3::new(f(size[0]), f(size[1]), f(size[2])))
        .with_property(
            "CFrame",
            CFrame::new(
                Vector3::new(f(centre[0]), f(centre[1]), f(centre[2])),
                Matrix3::identity(),
            ),
        )
        .with_property(
            "Color",
            Color3::new(
                f32::from(color[0]) / 255.0,
                f32::from(color[1]) / 255.0,
                f32::from(color[2]) / 255.0,
            ),
        )
        .with_property("Material", Enum::from_u32(mat))
}

fn resource_instances(p: &Placed) -> InstanceBuilder {
    const WOOD: u32 = 512;
    const GRASS: u32 = 1280;
    const SLATE: u32 = 800;
    if p.tree {
        let trunk_h = p.height;
        let crown = 7.0;
        InstanceBuilder::new("Model")
            .with_name("Tree")
            .with_child(part(
                "Trunk",
                [2.0 * p.half, trunk_h, 2.0 * p.half],
                [p.x, p.bottom + trunk_h / 2.0, p.z],
                [105, 64, 40],
                WOOD,
            ))
            .with_child(
                part(
                    "Crown",
                    [crown, crown, crown],
                    [p.x, p.bottom + trunk_h + crown / 2.0 - 1.0, p.z],
                    [75, 151, 75],
                    GRASS,
                )
                .with_property("Shape", Enum::from_u32(0)),
            )
    } else {
        part(
            "Rock",
            [2.0 * p.half, p.height, 2.0 * p.half],
            [p.x, p.bottom + p.height / 2.0, p.z],
            [99, 95, 98],
            SLATE,
        )
    }
}

/// The place: Workspace with its Terrain (SmoothGrid from the codec) and a `Resources` folder.
fn place_dom(grid: Vec<u8>, placed: &[Placed]) -> WeakDom {
    let mut folder = InstanceBuilder::new("Folder").with_name("Resources");
    for p in placed {
        folder = folder.with_child(resource_instances(p));
    }
    let workspace = InstanceBuilder::new("Workspace")
        .with_name("Workspace")
        .with_child(
            InstanceBuilder::new("Terrain")
                .with_name("Terrain")
                .with_property("SmoothGrid", BinaryString::from(grid)),
        )
        .with_child(folder);
    WeakDom::new(InstanceBuilder::new("DataModel").with_child(workspace))
}

/// The heightfield sampled for heightmaps and splat maps (snapped sizes sample more columns).
fn heightmap_field(plan: &Plan, snap: Option<SizeSnap>) -> Result<Heightfield, TerrainError> {
    let mut rect = plan.rect;
    if let Some(s) = snap {
        rect.size = [snap_size(rect.size[0], s)?, snap_size(rect.size[1], s)?];
    }
    Ok(plan.world.heightfield(rect, true))
}

fn count_voxels(t: &Terrain) -> u64 {
    let mut n = 0u64;
    for (_, c) in t.chunks() {
        if let Some(v) = c.uniform() {
            if !v.is_empty() {
                n += 32 * 32 * 32;
            }
            continue;
        }
        for y in 0..32 {
            for z in 0..32 {
                for x in 0..32 {
                    n += u64::from(!c.get(x, y, z).is_empty());
                }
            }
        }
    }
    n
}

fn sidecar_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

struct Out {
    path: PathBuf,
    len: u64,
    hash: blake3::Hash,
}

fn write_bytes(outs: &mut Vec<Out>, path: &Path, bytes: &[u8]) -> Result<()> {
    output::write_atomic(path, bytes)?;
    outs.push(Out {
        path: path.to_owned(),
        len: bytes.len() as u64,
        hash: blake3::hash(bytes),
    });
    Ok(())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let start = Instant::now();
    let kinds = args
        .output
        .iter()
        .map(|p| kind(p))
        .collect::<Result<Vec<_>>>()?;
    let plan = parse_world(&args.world)?;
    let world = &plan.world;
    let grid = world.config().grid;
    let [w, d] = plan.rect.size;
    let field = world.heightfield(plan.rect, true);
    let (lo, _hi) = field.range().unwrap_or((0.0, 0.0));
    let floor = plan.floor.unwrap_or(f64::from(lo) - 2.0 * grid);

    let mut outs = Vec::new();
    let needs_voxels = kinds
        .iter()
        .any(|k| matches!(k, Kind::Place(_) | Kind::Gltf(_)));
    // Voxel columns whose centres lie within the sampled columns.
    let (i0, j0) = (plan.rect.min[0] as f64, plan.rect.min[1] as f64);
    let to_cell = |v: f64| (v / 4.0).floor() as i32;
    let cells = VoxelColumns {
        min: [to_cell(i0 * grid), to_cell(j0 * grid)],
        max: [
            to_cell((i0 + w as f64 - 1.0) * grid).max(to_cell(i0 * grid) + 1),
            to_cell((j0 + d as f64 - 1.0) * grid).max(to_cell(j0 * grid) + 1),
        ],
    };
    let mut terrain = Terrain::new();
    let mut voxels = 0;
    if needs_voxels {
        world
            .write_voxels(&mut terrain, cells, floor, |_| ControlFlow::Continue(()))
            .map_err(|e| anyhow!("{}: {e}", args.world.display()))?;
        terrain.compact();
        voxels = count_voxels(&terrain);
    }
    let placed: Vec<Placed> = match &plan.resources {
        None => Vec::new(),
        Some((rc, sink, trees)) => {
            // One voxel in from the terrain's edge, so every footprint (at most 3 studs from
            // its centre) stands on voxels.
            let area = [
                f64::from(cells.min[0]) * 4.0 + MAX_HALF,
                f64::from(cells.min[1]) * 4.0 + MAX_HALF,
                f64::from(cells.max[0]) * 4.0 - MAX_HALF,
                f64::from(cells.max[1]) * 4.0 - MAX_HALF,
            ];
            world
                .resources(area, rc)
                .map_err(|e| anyhow!("{}: resources: {e}", args.world.display()))?
                .iter()
                .enumerate()
                .map(|(i, r)| place(world, r, i, *sink, trees))
                .collect()
        }
    };
    let mut heightmap: Option<HeightmapExport> = None;
    for (path, k) in args.output.iter().zip(&kinds) {
        match *k {
            Kind::Place(format) => {
                let dom = place_dom(smoothgrid::encode(&terrain), &placed);
                let roots = dom.root().children().to_vec();
                let written = output::write(&dom, &roots, format, path)?;
                outs.push(Out {
                    path: path.clone(),
                    len: written.len,
                    hash: written.hash,
                });
            }
            Kind::Gltf(format) => {
                // The place's instances (resources) and the terrain mesh in one document.
                let dom = place_dom(Vec::new(), &placed);
                let roots = dom.root().children().to_vec();
                let t = SceneTerrain {
                    mesh: mesh_terrain(&terrain),
                    colors: MaterialColors::default(),
                };
                for (p, bytes) in gltf_with_terrain(&dom, &roots, &t, format, path)? {
                    write_bytes(&mut outs, &p, &bytes)?;
                }
            }
            Kind::Png | Kind::R16 | Kind::R32 => {
                if heightmap.is_none() {
                    let hf = heightmap_field(&plan, args.snap)?;
                    let snap = SizeSnap::Exact;
                    heightmap = Some(HeightmapExport::new(&hf, HeightRange::Auto, snap)?);
                }
                let hm = heightmap.as_ref().expect("set above");
                let bytes = match k {
                    Kind::Png => hm.png16()?,
                    Kind::R16 => hm.r16(),
                    _ => hm.r32(),
                };
                write_bytes(&mut outs, path, &bytes)?;
                let mut json = hm.sidecar_json();
                json.push('\n');
                write_bytes(&mut outs, &sidecar_path(path), json.as_bytes())?;
            }
        }
    }
    if let Some(dir) = &args.splat {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let hf = heightmap_field(&plan, args.snap)?;
        let mut palette: Vec<Material> = Vec::new();
        for m in Material::ALL {
            if hf.materials.contains(&m) {
                palette.push(m);
            }
        }
        let maps = splat_maps(&hf, &palette)?;
        let mut index = Vec::new();
        for (i, (png, group)) in maps.iter().enumerate() {
            let name = format!("splat_{i}.png");
            write_bytes(&mut outs, &dir.join(&name), png)?;
            index.push(serde_json::json!({
                "file": name,
                "channels": group.iter().map(|m| m.name()).collect::<Vec<_>>(),
            }));
        }
        let mut json = serde_json::to_string_pretty(&serde_json::json!({ "maps": index }))?;
        json.push('\n');
        write_bytes(&mut outs, &dir.join("splat.json"), json.as_bytes())?;
    }
    if args.json {
        let summary = serde_json::json!({
            "world": args.world.display().to_string(),
            "columns": [w, d],
            "voxels": voxels,
            "resources": placed.len(),
            "outputs": outs.iter().map(|o| serde_json::json!({
                "path": o.path.display().to_string(),
                "bytes": o.len,
                "blake3": o.hash.to_hex().to_string(),
            })).collect::<Vec<_>>(),
            "seconds": start.elapsed().as_secs_f64(),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        for o in &outs {
            eprintln!("wrote {} ({} bytes)", o.path.display(), o.len);
        }
    }
    Ok(ExitCode::SUCCESS)
}
