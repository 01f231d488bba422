//! A heightmap world baked piece by piece: voxels in strips of one chunk column (encoded into
//! one SmoothGrid as they come, then dropped), meshes over any partition of the world's mesh
//! region, and square tiles (glTF mesh + resources, heightmap crops) written one by one with
//! an index — so a world of any size bakes in memory bounded by a few tiles, and the tiles
//! put together are exactly the whole world's outputs.
//!
//! # Geometry
//! The world's voxels are the cell columns [`WorldPlan::cells`] from the floor up. Its mesh
//! region is those cells grown by one on every side (so the world's outer faces close), Y
//! from one cell under the floor's to one cell over the highest surface. A piece of that
//! region is meshed from the voxels of its cells grown by one (the mesher's neighbour
//! border), so pieces agree bit for bit on shared vertices and their union is the mesh of the
//! whole. Tiles are squares of `tile` cells on a grid anchored at the world origin (tile
//! `(0, 0)` starts at stud `(0, 0)`), so a tile's key does not depend on the world's extent.

use anyhow::{Result, anyhow, bail};
use glam::IVec3;
use procmodel_terrain::{
    CellRegion, HeightRange, Heightfield, HeightmapExport, SampleRect, SizeSnap, Terrain,
    TerrainMesh, VoxelColumns, World, WorldPlan, mesh_region, smoothgrid,
};
use procmodel_terrain::{PlacedResource, ResourceKind};
use rayon::prelude::*;
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{BinaryString, CFrame, Color3, Enum, Matrix3, Vector3};
use std::ops::ControlFlow;

/// Cells per chunk edge: strips are one chunk column wide.
const STRIP: i32 = procmodel_terrain::CHUNK;

/// A checked world ready to bake in pieces.
pub struct Bake<'a> {
    pub plan: &'a WorldPlan,
    pub world: &'a World,
    pub rect: SampleRect,
    /// The voxel columns written.
    pub cells: VoxelColumns,
    /// Bottom of the voxels (studs).
    pub floor: f64,
    /// (min, max) surface height over the world's columns.
    pub range: (f32, f32),
    /// The mesh region's Y cells `[lo, hi)`.
    y: [i32; 2],
}

impl<'a> Bake<'a> {
    /// One pass over every column's height (row by row, nothing kept) gives the height range,
    /// the default floor and the mesh region's height.
    pub fn new(plan: &'a WorldPlan) -> Result<Bake<'a>> {
        let rect = plan
            .rect
            .ok_or_else(|| anyhow!("columns: (or studs) is required"))?;
        let cells = plan.cells().expect("the world has columns");
        let world = &plan.world;
        // Cells at the world's edge interpolate one column beyond it: the mesh region is
        // bounded by the heights of the columns around the world too (one pass for both).
        let (inner, around) = world.height_ranges(rect, 1)?;
        let range = inner.unwrap_or((0.0, 0.0));
        let floor = plan
            .floor
            .unwrap_or(f64::from(range.0) - 2.0 * world.config().grid);
        let (_, top) = around.unwrap_or(range);
        let top = f64::from(top).max(floor);
        let y = [
            ((floor - 2.0) / 4.0).floor() as i32 - 1,
            ((top + 2.0) / 4.0).ceil() as i32 + 1,
        ];
        Ok(Bake {
            plan,
            world,
            rect,
            cells,
            floor,
            range,
            y,
        })
    }

    /// Voxels of the world's cells within `[x0, x1) × [z0, z1)` (clipped to the world).
    pub fn voxels(&self, x: [i32; 2], z: [i32; 2]) -> Result<Terrain> {
        let mut t = Terrain::new();
        let cells = VoxelColumns {
            min: [x[0].max(self.cells.min[0]), z[0].max(self.cells.min[1])],
            max: [x[1].min(self.cells.max[0]), z[1].min(self.cells.max[1])],
        };
        if cells.min[0] < cells.max[0] && cells.min[1] < cells.max[1] {
            self.world
                .write_voxels(&mut t, cells, self.floor, |_| ControlFlow::Continue(()))
                .map_err(|e| anyhow!("{e}"))?;
        }
        t.compact();
        Ok(t)
    }

    /// The mesh region along X (or Z): the world's cells grown by one.
    fn mesh_span(&self, axis: usize) -> [i32; 2] {
        [self.cells.min[axis] - 1, self.cells.max[axis] + 1]
    }

    /// The mesh of the part of the world's mesh region within `[x0, x1) × [z0, z1)`.
    pub fn mesh(&self, x: [i32; 2], z: [i32; 2]) -> Result<TerrainMesh> {
        let (mx, mz) = (self.mesh_span(0), self.mesh_span(1));
        let x = [x[0].max(mx[0]), x[1].min(mx[1])];
        let z = [z[0].max(mz[0]), z[1].min(mz[1])];
        if x[0] >= x[1] || z[0] >= z[1] {
            return Ok(TerrainMesh::default());
        }
        let t = self.voxels([x[0] - 1, x[1] + 1], [z[0] - 1, z[1] + 1])?;
        Ok(mesh_region(
            &t,
            CellRegion {
                min: IVec3::new(x[0], self.y[0], z[0]),
                max: IVec3::new(x[1], self.y[1], z[1]),
            },
        ))
    }

    /// Strips of one chunk column along X covering `span`, in order.
    fn strips(span: [i32; 2]) -> Vec<[i32; 2]> {
        let mut out = Vec::new();
        let mut x = span[0];
        while x < span[1] {
            let next = ((x.div_euclid(STRIP) + 1) * STRIP).min(span[1]);
            out.push([x, next]);
            x = next;
        }
        out
    }

    /// Runs `f` over the strips a few at a time on the rayon pool and hands the results to
    /// `sink` in strip order: at most two strips per thread are alive at once.
    fn each_strip<T: Send>(
        strips: &[[i32; 2]],
        f: impl Fn([i32; 2]) -> Result<T> + Sync,
        mut sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        let batch = 2 * rayon::current_num_threads().max(1);
        for group in strips.chunks(batch) {
            let done: Vec<Result<T>> = group.par_iter().map(|&s| f(s)).collect();
            for r in done {
                sink(r?)?;
            }
        }
        Ok(())
    }

    /// The whole world's `Terrain.SmoothGrid`, built strip by strip, and its solid voxels.
    pub fn smoothgrid(&self) -> Result<(Vec<u8>, u64)> {
        let mut enc = smoothgrid::Encoder::new();
        let mut voxels = 0;
        let z = [self.cells.min[1], self.cells.max[1]];
        Self::each_strip(
            &Self::strips([self.cells.min[0], self.cells.max[0]]),
            |x| self.voxels(x, z),
            |t| {
                voxels += count_voxels(&t);
                enc.try_append(&t).map_err(|e| anyhow!("{e}"))
            },
        )?;
        Ok((enc.finish(), voxels))
    }

    /// The whole world's mesh, strip by strip.
    pub fn whole_mesh(&self) -> Result<TerrainMesh> {
        let mut mesh = TerrainMesh::default();
        let z = self.mesh_span(1);
        Self::each_strip(
            &Self::strips(self.mesh_span(0)),
            |x| self.mesh(x, z),
            |m| {
                mesh.append(m);
                Ok(())
            },
        )?;
        Ok(mesh)
    }

    /// The heightfield of the samples whose positions lie in `[x0, x1] × [z0, z1]` studs
    /// (closed: neighbouring tiles share their edge samples), clipped to the world's columns;
    /// `None` when no sample is inside.
    pub fn heightfield_in(&self, x: [f64; 2], z: [f64; 2]) -> Option<Heightfield> {
        let grid = self.world.config().grid;
        let span = |lo: f64, hi: f64, first: i64, n: usize| {
            let a = ((lo / grid).ceil() as i64).max(first);
            let b = ((hi / grid).floor() as i64).min(first + n as i64 - 1);
            (a <= b).then_some((a, (b - a + 1) as usize))
        };
        let (i0, w) = span(x[0], x[1], self.rect.min[0], self.rect.size[0])?;
        let (j0, d) = span(z[0], z[1], self.rect.min[1], self.rect.size[1])?;
        Some(self.world.heightfield(
            SampleRect {
                min: [i0, j0],
                size: [w, d],
            },
            true,
        ))
    }

    /// A heightmap over the world's height range (the whole world's scale, so tiles line up).
    pub fn heightmap(&self, hf: &Heightfield) -> Result<HeightmapExport> {
        HeightmapExport::new(
            hf,
            HeightRange::Fixed(self.range.0, self.range.1),
            SizeSnap::Exact,
        )
        .map_err(|e| anyhow!("{e}"))
    }

    /// The tiles of `tile` cells that hold any of the mesh region, in key order (x, then z).
    pub fn tiles(&self, tile: i32) -> Vec<[i32; 2]> {
        tiles_of(self.cells, tile)
    }

    /// The resources whose centres lie in `[x0, x1) × [z0, z1)` studs (within the world's
    /// resource area).
    pub fn resources_in(
        &self,
        x: [f64; 2],
        z: [f64; 2],
    ) -> Result<Vec<procmodel_terrain::PlacedResource>> {
        let Some(rp) = &self.plan.resources else {
            return Ok(Vec::new());
        };
        let a = self.plan.resource_area().expect("the world has columns");
        let area = [
            x[0].max(a[0]),
            z[0].max(a[1]),
            x[1].min(a[2]),
            z[1].min(a[3]),
        ];
        if area[0] >= area[2] || area[1] >= area[3] {
            return Ok(Vec::new());
        }
        self.world
            .place_resources(area, rp)
            .map_err(|e| anyhow!("resources: {e}"))
    }
}

/// The tiles of `tile` cells holding any of the mesh region of a world whose voxel columns
/// are `cells` (the cells grown by one), in key order (x, then z).
pub fn tiles_of(cells: VoxelColumns, tile: i32) -> Vec<[i32; 2]> {
    let span = |a: usize| [cells.min[a] - 1, cells.max[a] + 1];
    let range = |s: [i32; 2]| s[0].div_euclid(tile)..=(s[1] - 1).div_euclid(tile);
    let mut out = Vec::new();
    for tx in range(span(0)) {
        for tz in range(span(1)) {
            out.push([tx, tz]);
        }
    }
    out
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

fn resource_instances(p: &PlacedResource) -> InstanceBuilder {
    const WOOD: u32 = 512;
    const GRASS: u32 = 1280;
    const SLATE: u32 = 800;
    if p.kind == ResourceKind::Tree {
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
pub fn place_dom(grid: Vec<u8>, placed: &[PlacedResource]) -> WeakDom {
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

/// Solid (non-empty) voxels of a terrain.
pub fn count_voxels(t: &Terrain) -> u64 {
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

/// What a tile holds, by `--tile-output` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TileKind {
    Glb,
    Png,
    R16,
    R32,
}

impl TileKind {
    pub fn parse(s: &str) -> Result<Vec<TileKind>> {
        let mut out = Vec::new();
        for k in s.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            let kind = match k {
                "glb" => TileKind::Glb,
                "png" => TileKind::Png,
                "r16" => TileKind::R16,
                "r32" => TileKind::R32,
                _ => bail!("--tile-output: unknown tile output '{k}' (use glb, png, r16, r32)"),
            };
            if !out.contains(&kind) {
                out.push(kind);
            }
        }
        if out.is_empty() {
            bail!("--tile-output: name at least one of glb, png, r16, r32");
        }
        out.sort();
        Ok(out)
    }

    pub fn extension(self) -> &'static str {
        match self {
            TileKind::Glb => "glb",
            TileKind::Png => "png",
            TileKind::R16 => "r16",
            TileKind::R32 => "r32",
        }
    }
}

/// A tile's key: `tile_<x>_<z>` (tile indices, negative west/north of the origin).
pub fn tile_key(t: [i32; 2]) -> String {
    format!("tile_{}_{}", t[0], t[1])
}

/// One file of a tile, as the index lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileRecord {
    pub name: String,
    pub bytes: u64,
    pub blake3: String,
}

/// What a tile holds, as the index lists it (and a sharded bake stores it).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TileRecord {
    pub key: String,
    pub tile: [i32; 2],
    pub files: Vec<FileRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triangles: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<[usize; 2]>,
}

/// One baked tile: its files (name → bytes) and what it holds.
pub struct TileOut {
    pub key: String,
    pub tile: [i32; 2],
    pub files: Vec<(String, Vec<u8>)>,
    pub triangles: usize,
    pub resources: usize,
    /// Whether it holds a mesh (then `triangles` and `resources` count).
    pub has_mesh: bool,
    /// Heightmap pixels (width, height) when it has any.
    pub pixels: Option<[usize; 2]>,
}

impl TileOut {
    /// The tile's index entry.
    pub fn record(&self) -> TileRecord {
        TileRecord {
            key: self.key.clone(),
            tile: self.tile,
            files: self
                .files
                .iter()
                .map(|(name, bytes)| FileRecord {
                    name: name.clone(),
                    bytes: bytes.len() as u64,
                    blake3: blake3::hash(bytes).to_hex().to_string(),
                })
                .collect(),
            triangles: self.has_mesh.then_some(self.triangles),
            resources: self.has_mesh.then_some(self.resources),
            pixels: self.pixels,
        }
    }
}

impl Bake<'_> {
    /// `index.json` of a tiled bake: the world's grid, height range and floor, and every
    /// tile's files with their sizes and BLAKE3, in tile order (`records` in any order).
    /// `world` is the world file's text: its BLAKE3 goes in, with the procmodel version, so
    /// the index pins inputs and outputs alike (a lock for the tiles).
    pub fn index(
        &self,
        tile: i32,
        kinds: &[TileKind],
        records: &[TileRecord],
        world: &[u8],
    ) -> Result<Vec<u8>> {
        let mut records: Vec<&TileRecord> = records.iter().collect();
        records.sort_by_key(|r| r.tile);
        let rows: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                let c = [r.tile[0] * tile, r.tile[1] * tile];
                let mut row = serde_json::json!({
                    "key": r.key,
                    "tile": r.tile,
                    "studs": [c[0] * 4, c[1] * 4, (c[0] + tile) * 4, (c[1] + tile) * 4],
                    "files": r.files,
                });
                if let (Some(t), Some(n)) = (r.triangles, r.resources) {
                    row["triangles"] = t.into();
                    row["resources"] = n.into();
                }
                if let Some(px) = r.pixels {
                    row["pixels"] = serde_json::json!(px);
                }
                row
            })
            .collect();
        let cfg = self.world.config();
        let doc = serde_json::json!({
            "format": "procmodel-tiles/1",
            "procmodel": env!("CARGO_PKG_VERSION"),
            "world_blake3": blake3::hash(world).to_hex().to_string(),
            "tile_studs": tile * 4,
            "grid": cfg.grid,
            "columns": self.rect.size,
            "origin": self.rect.min,
            "floor": self.floor,
            "height_range": [self.range.0, self.range.1],
            "outputs": kinds.iter().map(|k| k.extension()).collect::<Vec<_>>(),
            "tiles": rows,
        });
        let mut json = serde_json::to_vec_pretty(&doc)?;
        json.push(b'\n');
        Ok(json)
    }

    /// Bakes one tile of `tile` cells: the glTF of its mesh and resources, and heightmap crops
    /// (each with its JSON sidecar) over the world's height range.
    pub fn tile(&self, t: [i32; 2], tile: i32, kinds: &[TileKind]) -> Result<TileOut> {
        let key = tile_key(t);
        let x = [t[0] * tile, (t[0] + 1) * tile];
        let z = [t[1] * tile, (t[1] + 1) * tile];
        let studs = |c: [i32; 2]| [f64::from(c[0]) * 4.0, f64::from(c[1]) * 4.0];
        let mut out = TileOut {
            key: key.clone(),
            tile: t,
            files: Vec::new(),
            triangles: 0,
            resources: 0,
            has_mesh: kinds.contains(&TileKind::Glb),
            pixels: None,
        };
        if kinds.contains(&TileKind::Glb) {
            let mesh = self.mesh(x, z)?;
            let placed = self.resources_in(studs(x), studs(z))?;
            out.triangles = mesh.triangle_count();
            out.resources = placed.len();
            let name = format!("{key}.glb");
            let dom = place_dom(Vec::new(), &placed);
            let roots = dom.root().children().to_vec();
            let st = crate::export::SceneTerrain {
                mesh,
                colors: procmodel_terrain::MaterialColors::default(),
                water_opacity: procmodel_dom::terrain_water(None).1,
            };
            for (p, bytes) in crate::export::gltf_with_terrain(
                &dom,
                &roots,
                &st,
                crate::output::Format::Glb,
                std::path::Path::new(&name),
            )? {
                let file = p
                    .file_name()
                    .and_then(|f| f.to_str())
                    .unwrap_or(&name)
                    .to_owned();
                out.files.push((file, bytes));
            }
        }
        let maps: Vec<TileKind> = kinds
            .iter()
            .copied()
            .filter(|k| *k != TileKind::Glb)
            .collect();
        if !maps.is_empty()
            && let Some(hf) = self.heightfield_in(studs(x), studs(z))
        {
            let hm = self.heightmap(&hf)?;
            out.pixels = Some([hm.sidecar.width, hm.sidecar.height]);
            for k in maps {
                let bytes = match k {
                    TileKind::Png => hm.png16().map_err(|e| anyhow!("{e}"))?,
                    TileKind::R16 => hm.r16(),
                    _ => hm.r32(),
                };
                let name = format!("{key}.{}", k.extension());
                let mut json = hm.sidecar_json();
                json.push('\n');
                out.files.push((format!("{name}.json"), json.into_bytes()));
                out.files.push((name, bytes));
            }
        }
        Ok(out)
    }
}
