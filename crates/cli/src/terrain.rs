//! `procmodel terrain`: a heightmap world described in TOML or JSON (noise, bands, zones,
//! resources) written as a place with real Terrain, a glTF mesh, heightmaps and splat maps.

use crate::export::{SceneTerrain, gltf_with_terrain};
use crate::output;
use crate::world_bake::{Bake, TileKind, TileOut, place_dom};
use anyhow::{Context, Result, anyhow, bail};
use procmodel_terrain::{
    HeightRange, Heightfield, HeightmapExport, Material, MaterialColors, PlacedResource,
    SampleRect, SizeSnap, TerrainError, World, WorldPlan, WorldSpec, snap_size, splat_maps,
};
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
    #[arg(short, long, required_unless_present = "tiles")]
    pub output: Vec<PathBuf>,
    /// Bake the world in square tiles into this folder, one tile at a time (memory stays
    /// bounded however large the world): `tile_<x>_<z>.glb` (mesh and resources) and
    /// heightmap crops over the whole world's height range, listed in `index.json`.
    #[arg(long, value_name = "DIR")]
    pub tiles: Option<PathBuf>,
    /// Tile side in studs: a multiple of 128 (a voxel chunk) and of the world's grid.
    #[arg(long, value_name = "STUDS", default_value = "1024", requires = "tiles")]
    pub tile_size: u32,
    /// What each tile holds: any of glb, png, r16, r32 (comma-separated).
    #[arg(
        long,
        value_name = "KINDS",
        default_value = "glb,png",
        requires = "tiles"
    )]
    pub tile_output: String,
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

/// A checked world file and the columns it covers (`columns` or `studs` is required here).
pub(crate) struct Plan {
    pub(crate) world: World,
    pub(crate) rect: SampleRect,
    pub(crate) spec: WorldPlan,
}

/// The checked world and the file's text (whose hash the tile index records: the text read
/// once is the text baked).
fn parse_world(path: &Path) -> Result<(Plan, String)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    // The format first: a place or a model passed here is named as such, not as bad UTF-8.
    world_format(&ext, &path.display().to_string())?;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let plan = parse_world_text(&text, &ext, &path.display().to_string())?;
    Ok((plan, text))
}

/// Refuses an extension that is not a world format (`toml`, `json`), naming the file `name`.
fn world_format(ext: &str, name: &str) -> Result<()> {
    match ext {
        "toml" | "json" => Ok(()),
        "" => bail!("{name}: a world is described in a .toml or .json file"),
        _ => bail!("{name}: unknown world format '.{ext}' (use .toml or .json)"),
    }
}

/// A world description's text in the format `ext` names (`toml` or `json`); `name` (the file)
/// prefixes every error.
pub(crate) fn parse_world_text(text: &str, ext: &str, name: &str) -> Result<Plan> {
    world_format(ext, name)?;
    let file: WorldSpec = if ext == "toml" {
        toml::from_str(text)
            .map_err(|e| anyhow!("{name}: {}", procmodel_lock::toml_error(text, &e)))?
    } else {
        serde_json::from_str(text).map_err(|e| anyhow!("{name}: {e}"))?
    };
    let spec = file.plan().map_err(|e| anyhow!("{name}: {e}"))?;
    let Some(rect) = spec.rect else {
        bail!("{name}: columns: (or studs) is required");
    };
    Ok(Plan {
        world: spec.world.clone(),
        rect,
        spec,
    })
}

/// The tile side in cells for `--tile-size` studs: a multiple of 128 and of the grid.
pub(crate) fn tile_cells(studs: u32, grid: f64) -> Result<i32> {
    let t = f64::from(studs);
    if studs == 0 || !studs.is_multiple_of(128) || (t / grid).fract() != 0.0 || studs > 1 << 20 {
        bail!(
            "--tile-size {studs}: must be a positive multiple of 128 studs (a voxel chunk) and of the world's grid ({grid}), at most 1048576"
        );
    }
    Ok((studs / 4) as i32)
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
        "" => bail!(
            "{}: the output format is the file's extension, and it has none (use .rbxl, .rbxlx, .glb, .gltf, .png, .r16 or .r32)",
            path.display()
        ),
        _ => bail!(
            "{}: unknown terrain output '.{ext}' (use .rbxl, .rbxlx, .glb, .gltf, .png, .r16 or .r32)",
            path.display()
        ),
    })
}

/// The heightfield sampled for heightmaps and splat maps (snapped sizes sample more columns).
fn heightmap_field(plan: &Plan, snap: Option<SizeSnap>) -> Result<Heightfield, TerrainError> {
    let mut rect = plan.rect;
    if let Some(s) = snap {
        rect.size = [snap_size(rect.size[0], s)?, snap_size(rect.size[1], s)?];
    }
    Ok(plan.world.heightfield(rect, true))
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
    record(outs, path, bytes);
    Ok(())
}

/// [`write_bytes`] into `batch`: renamed into place with the command's other whole outputs.
fn stage_bytes(
    batch: &mut output::Batch,
    outs: &mut Vec<Out>,
    path: &Path,
    bytes: &[u8],
) -> Result<()> {
    batch.stage(path, bytes)?;
    record(outs, path, bytes);
    Ok(())
}

fn record(outs: &mut Vec<Out>, path: &Path, bytes: &[u8]) {
    outs.push(Out {
        path: path.to_owned(),
        len: bytes.len() as u64,
        hash: blake3::hash(bytes),
    });
}

/// Most columns an output built whole in memory may have (67,108,864: an 8192² world);
/// tiles have no cap.
const WHOLE_MAX_COLUMNS: u64 = 1 << 26;

/// Bakes every tile into `dir` (a few at a time on the rayon pool; files written as each
/// batch completes), then `index.json` last. Returns the number of tiles.
fn write_tiles(
    bake: &Bake<'_>,
    dir: &Path,
    tile: i32,
    kinds: &[TileKind],
    world: &[u8],
    outs: &mut Vec<Out>,
) -> Result<usize> {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tiles = bake.tiles(tile);
    let bar = indicatif::ProgressBar::new(tiles.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tiles {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut records = Vec::new();
    let batch = 2 * rayon::current_num_threads().max(1);
    for group in tiles.chunks(batch) {
        let done: Vec<Result<TileOut>> = group
            .par_iter()
            .map(|&t| bake.tile(t, tile, kinds))
            .collect();
        for r in done {
            let t = r?;
            for (name, bytes) in &t.files {
                write_bytes(outs, &dir.join(name), bytes)?;
            }
            records.push(t.record());
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let json = bake.index(tile, kinds, &records, world)?;
    write_bytes(outs, &dir.join("index.json"), &json)?;
    Ok(tiles.len())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let start = Instant::now();
    let kinds = args
        .output
        .iter()
        .map(|p| kind(p))
        .collect::<Result<Vec<_>>>()?;
    for p in &args.output {
        output::destination(p)?;
    }
    let tile_kinds = match &args.tiles {
        Some(_) => {
            if args.snap.is_some() {
                bail!("--snap is for whole heightmaps: tiles are crops of the world's grid");
            }
            Some(TileKind::parse(&args.tile_output)?)
        }
        None => None,
    };
    let (plan, world_text) = parse_world(&args.world)?;
    let world = &plan.world;
    let [w, d] = plan.rect.size;
    let columns = w as u64 * d as u64;
    let whole = !kinds.is_empty() || args.splat.is_some();
    if whole && columns > WHOLE_MAX_COLUMNS {
        bail!(
            "{}: {w}×{d} columns is over the {WHOLE_MAX_COLUMNS} an output built whole in memory holds: bake it in tiles (--tiles DIR)",
            args.world.display()
        );
    }
    // A place or a glTF holds every voxel column of the world at once: at a grid over 4
    // studs those outnumber the columns.
    if kinds
        .iter()
        .any(|k| matches!(k, Kind::Place(_) | Kind::Gltf(_)))
        && let Some(c) = plan.spec.cells()
    {
        let (cw, cd) = ((c.max[0] - c.min[0]) as u64, (c.max[1] - c.min[1]) as u64);
        if cw * cd > WHOLE_MAX_COLUMNS {
            bail!(
                "{}: {cw}×{cd} voxel columns (4 studs each, at grid {}) is over the {WHOLE_MAX_COLUMNS} a place or glTF built whole in memory holds: bake it in tiles (--tiles DIR)",
                args.world.display(),
                world.config().grid
            );
        }
    }
    let tile_cells = match args.tiles {
        Some(_) => tile_cells(args.tile_size, world.config().grid)?,
        None => 0,
    };
    let bake = Bake::new(&plan.spec).map_err(|e| anyhow!("{}: {e}", args.world.display()))?;

    let mut outs = Vec::new();
    // Every whole output is staged and renamed into place only once all of them (and the
    // tiles, if any) are written: a failure leaves every old file as it was.
    let mut batch = output::Batch::default();
    // Solid voxels, counted when a place is written (its SmoothGrid is built strip by strip).
    let mut voxels: Option<u64> = None;
    let placed: Vec<PlacedResource> = if whole {
        bake.resources_in([f64::MIN, f64::MAX], [f64::MIN, f64::MAX])
            .map_err(|e| anyhow!("{}: {e}", args.world.display()))?
    } else {
        Vec::new()
    };
    let mut heightmap: Option<HeightmapExport> = None;
    for (path, k) in args.output.iter().zip(&kinds) {
        match *k {
            Kind::Place(format) => {
                let (grid, n) = bake
                    .smoothgrid()
                    .map_err(|e| anyhow!("{}: {e}", args.world.display()))?;
                voxels = Some(n);
                let dom = place_dom(grid, &placed);
                let roots = dom.root().children().to_vec();
                let written = output::stage(&dom, &roots, format, path, &mut batch, false)?;
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
                    mesh: bake
                        .whole_mesh()
                        .map_err(|e| anyhow!("{}: {e}", args.world.display()))?,
                    colors: MaterialColors::default(),
                    water_opacity: procmodel_dom::terrain_water(None).1,
                };
                for (p, bytes) in gltf_with_terrain(&dom, &roots, &t, format, path)? {
                    stage_bytes(&mut batch, &mut outs, &p, &bytes)?;
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
                stage_bytes(&mut batch, &mut outs, path, &bytes)?;
                let mut json = hm.sidecar_json();
                json.push('\n');
                stage_bytes(&mut batch, &mut outs, &sidecar_path(path), json.as_bytes())?;
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
            stage_bytes(&mut batch, &mut outs, &dir.join(&name), png)?;
            index.push(serde_json::json!({
                "file": name,
                "channels": group.iter().map(|m| m.name()).collect::<Vec<_>>(),
            }));
        }
        let mut json = serde_json::to_string_pretty(&serde_json::json!({ "maps": index }))?;
        json.push('\n');
        stage_bytes(
            &mut batch,
            &mut outs,
            &dir.join("splat.json"),
            json.as_bytes(),
        )?;
    }
    let mut tiles_done = 0;
    let whole_outs = outs.len();
    if let (Some(dir), Some(tk)) = (&args.tiles, &tile_kinds) {
        tiles_done = write_tiles(&bake, dir, tile_cells, tk, world_text.as_bytes(), &mut outs)
            .map_err(|e| anyhow!("{}: {e:#}", args.world.display()))?;
    }
    batch.commit()?;
    if args.json {
        let summary = serde_json::json!({
            "world": args.world.display().to_string(),
            "columns": [w, d],
            "voxels": voxels,
            "resources": placed.len(),
            "tiles": tiles_done,
            "outputs": outs.iter().map(|o| serde_json::json!({
                "path": o.path.display().to_string(),
                "bytes": o.len,
                "blake3": o.hash.to_hex().to_string(),
            })).collect::<Vec<_>>(),
            "seconds": start.elapsed().as_secs_f64(),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        for o in &outs[..whole_outs] {
            eprintln!("wrote {} ({} bytes)", o.path.display(), o.len);
        }
        if let Some(dir) = &args.tiles {
            let tiles = &outs[whole_outs..];
            eprintln!(
                "wrote {tiles_done} tiles ({} files, {} bytes) into {} (listed in index.json)",
                tiles.len(),
                tiles.iter().map(|o| o.len).sum::<u64>(),
                dir.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
