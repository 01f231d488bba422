//! `@procmodel/terrain`: heightmap worlds with points of interest over `procmodel-terrain`.
//! `terrain.world(options)` reads a Luau table with the keys of `procmodel terrain`'s world
//! file into the crate's `WorldSpec` (the crate checks it, as it does for the CLI) and returns
//! a `TerrainWorld`: heights, materials, bulk heightfields, resources and `WriteTerrain`, which
//! fills a `workspace.Terrain` in native code. Every call's native work is capped (the
//! script timeout cannot interrupt it): a large world is written chunk by chunk, with
//! `params:Pause()` or `task.wait()` between chunks.

use std::cell::OnceCell;
use std::ops::ControlFlow;

use mlua::{Lua, Table, UserData, UserDataMethods, Value};
use procmodel_luau_types::{EnumItem, Region3, Vector2, enum_item_value, tagged};
use procmodel_terrain::{
    BandSpec, Material, NoiseSpec, ResourceKind, ResourcesSpec, SampleRect, TerrainError,
    VoxelColumns, WorldPlan, WorldSpec, ZoneSpec,
};

use super::{Options, TerrainAccess, cells, dim, err, finite, integer, seed, show};

/// Most voxel columns one `WriteTerrain` call fills: 262 144 (a 512 × 512-cell square, 2048
/// studs a side).
pub const MAX_WRITE_COLUMNS: u64 = 1 << 18;
/// Most voxels one `WriteTerrain` call touches (Roblox's cap for the Fill methods).
pub const MAX_WRITE_VOXELS: u128 = procmodel_terrain::MAX_VOXELS_FILL as u128;
/// Most Poisson-disk sampling cells one `Resources` call visits: 1 048 576.
pub const MAX_RESOURCE_CELLS: f64 = (1u64 << 20) as f64;

const WORLD_KEYS: &[&str] = &[
    "seed",
    "scale",
    "height",
    "base",
    "grid",
    "surface_offset",
    "columns",
    "studs",
    "origin",
    "floor",
    "noise",
    "bands",
    "default_material",
    "zones",
    "resources",
];
const NOISE_KEYS: &[&str] = &[
    "basis",
    "seed",
    "fractal",
    "octaves",
    "lacunarity",
    "gain",
    "frequency",
];
const BAND_KEYS: &[&str] = &["above", "below", "material"];
const ZONE_KEYS: &[&str] = &[
    "shape", "center", "level", "r1", "r2", "x1", "x2", "z1", "z2", "falloff", "corners",
    "material",
];
const RESOURCE_KEYS: &[&str] = &[
    "seed",
    "min_distance",
    "density",
    "exclude",
    "sink",
    "trees_on",
];

/// A checked world (`terrain.world`). Immutable.
struct TerrainWorld {
    plan: WorldPlan,
    /// The floor of `WriteTerrain` (the world's, computed once on first use).
    floor: OnceCell<Result<Option<f64>, TerrainError>>,
    access: TerrainAccess,
}

pub(super) fn module(lua: &Lua, access: TerrainAccess) -> mlua::Result<Table> {
    let m = lua.create_table()?;
    m.raw_set(
        "world",
        lua.create_function(move |_, options: Value| {
            const F: &str = "terrain.world";
            let spec = read_world(F, options)?;
            let plan = spec.plan().map_err(|e| err(F, spec_error(e)))?;
            Ok(TerrainWorld {
                plan,
                floor: OnceCell::new(),
                access,
            })
        })?,
    )?;
    let materials = lua.create_table_with_capacity(Material::ALL.len(), 0)?;
    for (i, mat) in Material::ALL.iter().enumerate() {
        materials.raw_set(i + 1, material_value(lua, *mat)?)?;
    }
    materials.set_readonly(true);
    m.raw_set("materials", materials)?;
    Ok(m)
}

/// A crate error in the Luau form: zones are named 1-based as `zones[i].field`.
fn spec_error(e: TerrainError) -> String {
    match e {
        TerrainError::Zone {
            index,
            field,
            reason,
        } => format!("zones[{}].{field} {reason}", index + 1),
        TerrainError::Band { index, reason } => match reason.strip_prefix("material: ") {
            Some(r) => format!("bands[{}].material {r}", index + 1),
            None if reason.starts_with("material ") => format!("bands[{}].{reason}", index + 1),
            None => format!("bands[{}] {reason}", index + 1),
        },
        other => other.to_string(),
    }
}

fn material_value(lua: &Lua, m: Material) -> mlua::Result<Value> {
    let item = EnumItem::from_value("Material", u32::from(m.enum_value()))
        .ok_or_else(|| mlua::Error::runtime(format!("no Enum.Material.{}", m.name())))?;
    enum_item_value(lua, item)
}

/// A material given as an `Enum.Material` item or its name, as the name the spec takes.
/// Names are checked by the crate (so a world file and a table give the same errors);
/// items must be terrain materials.
fn material_name(func: &str, name: &str, v: &Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_str()?.to_owned()),
        Value::UserData(ud) => match tagged::from_userdata::<EnumItem>(ud) {
            Some(item) if item.enum_name == "Material" => Material::from_enum_value(item.value)
                .map(|m| m.name().to_owned())
                .map_err(|_| {
                    err(
                        func,
                        format!(
                            "{name} must be a terrain material, got Enum.Material.{}",
                            item.name
                        ),
                    )
                }),
            _ => Err(err(
                func,
                format!(
                    "{name} must be an Enum.Material or a material name, got {}",
                    show(v)
                ),
            )),
        },
        other => Err(err(
            func,
            format!(
                "{name} must be an Enum.Material or a material name, got {}",
                show(other)
            ),
        )),
    }
}

/// Reads a field of an options table with a full name for messages (`zones[2].r1`).
struct Fields<'a> {
    func: &'a str,
    prefix: String,
    o: Options<'a>,
}

impl<'a> Fields<'a> {
    fn new(func: &'a str, prefix: String, v: Value, known: &[&str]) -> mlua::Result<Self> {
        let o = Options::new(func, &prefix, v, known)?;
        Ok(Fields { func, prefix, o })
    }

    fn name(&self, key: &str) -> String {
        if self.prefix.is_empty() || self.prefix == "options" {
            key.to_owned()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    fn get(&self, key: &str) -> mlua::Result<Value> {
        self.o.get(key)
    }

    fn f64(&self, key: &str) -> mlua::Result<Option<f64>> {
        match self.get(key)? {
            Value::Nil => Ok(None),
            v => finite(self.func, &self.name(key), &v).map(Some),
        }
    }

    fn f32(&self, key: &str) -> mlua::Result<Option<f32>> {
        Ok(self.f64(key)?.map(|v| v as f32))
    }

    fn string(&self, key: &str) -> mlua::Result<Option<String>> {
        super::string(self.func, &self.name(key), &self.get(key)?)
    }

    fn seed(&self, key: &str) -> mlua::Result<u64> {
        seed(self.func, &self.name(key), &self.get(key)?)
    }

    fn material(&self, key: &str) -> mlua::Result<Option<String>> {
        match self.get(key)? {
            Value::Nil => Ok(None),
            v => material_name(self.func, &self.name(key), &v).map(Some),
        }
    }

    /// Two numbers: `{ a, b }`, a Vector2 (X, Y) or, when `vector3` is set, a Vector3 (X, Z).
    fn pair(&self, key: &str, vector3: bool) -> mlua::Result<Option<[f64; 2]>> {
        let name = self.name(key);
        let v = self.get(key)?;
        let shape = if vector3 {
            "{ x, z }, a Vector3 or a Vector2"
        } else {
            "an array of two numbers"
        };
        let bad = |got: String| err(self.func, format!("{name} must be {shape}, got {got}"));
        let out = match &v {
            Value::Nil => return Ok(None),
            Value::Table(t) => {
                if t.raw_len() != 2 || t.pairs::<Value, Value>().count() != 2 {
                    return Err(bad("a table that is not a pair".into()));
                }
                [
                    finite(self.func, &format!("{name}[1]"), &t.raw_get(1)?)?,
                    finite(self.func, &format!("{name}[2]"), &t.raw_get(2)?)?,
                ]
            }
            Value::Vector(p) if vector3 => [f64::from(p.x()), f64::from(p.z())],
            Value::UserData(ud) if vector3 && ud.is::<Vector2>() => {
                let p = ud.borrow::<Vector2>()?.0;
                [f64::from(p.x), f64::from(p.y)]
            }
            other => return Err(bad(show(other))),
        };
        if out.iter().any(|c| !c.is_finite()) {
            return Err(bad(format!("{out:?}")));
        }
        Ok(Some(out))
    }

    /// Two integers in `min..=max`.
    fn int_pair(&self, key: &str, min: i64, max: i64) -> mlua::Result<Option<[i64; 2]>> {
        let Some(p) = self.pair(key, false)? else {
            return Ok(None);
        };
        let name = self.name(key);
        let mut out = [0i64; 2];
        for (k, v) in p.into_iter().enumerate() {
            out[k] = integer(
                self.func,
                &format!("{name}[{}]", k + 1),
                &Value::Number(v),
                min,
                max,
            )?;
        }
        Ok(Some(out))
    }

    /// An array of tables, each read by `item(index, value)` (1-based).
    fn array<T>(
        &self,
        key: &str,
        mut item: impl FnMut(usize, Value) -> mlua::Result<T>,
    ) -> mlua::Result<Option<Vec<T>>> {
        let name = self.name(key);
        match self.get(key)? {
            Value::Nil => Ok(None),
            Value::Table(t) => {
                let n = t.raw_len();
                if t.pairs::<Value, Value>().count() != n {
                    return Err(err(
                        self.func,
                        format!("{name} must be an array (keys 1..n), got a table with other keys"),
                    ));
                }
                (1..=n)
                    .map(|i| item(i, t.raw_get(i)?))
                    .collect::<mlua::Result<Vec<T>>>()
                    .map(Some)
            }
            other => Err(err(
                self.func,
                format!("{name} must be an array, got {}", show(&other)),
            )),
        }
    }
}

fn read_world(func: &str, v: Value) -> mlua::Result<WorldSpec> {
    if !matches!(v, Value::Table(_)) {
        return Err(err(
            func,
            format!("options must be a table, got {}", show(&v)),
        ));
    }
    let o = Fields::new(func, "options".into(), v, WORLD_KEYS)?;
    let d = WorldSpec::default();
    const COLUMNS: i64 = 1 << 40;
    let noise = match o.get("noise")? {
        Value::Nil => None,
        n => Some(read_noise(func, n)?),
    };
    let bands = o.array("bands", |i, b| {
        let b = Fields::new(func, format!("bands[{i}]"), b, BAND_KEYS)?;
        Ok(BandSpec {
            above: b.f32("above")?,
            below: b.f32("below")?,
            material: b
                .material("material")?
                .ok_or_else(|| err(func, format!("bands[{i}].material is required")))?,
        })
    })?;
    let zones = o
        .array("zones", |i, z| read_zone(func, i, z))?
        .unwrap_or_default();
    let resources = match o.get("resources")? {
        Value::Nil => None,
        r => Some(read_resources(func, r)?),
    };
    Ok(WorldSpec {
        seed: o.f64("seed")?.unwrap_or(d.seed),
        scale: o.f64("scale")?.unwrap_or(d.scale),
        height: o.f64("height")?.unwrap_or(d.height),
        base: o.f64("base")?.unwrap_or(d.base),
        grid: o.f64("grid")?.unwrap_or(d.grid),
        surface_offset: o.f64("surface_offset")?,
        columns: o
            .int_pair("columns", 0, COLUMNS)?
            .map(|c| c.map(|v| v as u64)),
        studs: o.pair("studs", false)?,
        origin: o.int_pair("origin", -COLUMNS, COLUMNS)?,
        floor: o.f64("floor")?,
        noise,
        bands,
        default_material: o.material("default_material")?,
        zones,
        resources,
    })
}

fn read_noise(func: &str, v: Value) -> mlua::Result<NoiseSpec> {
    let n = Fields::new(func, "noise".into(), v, NOISE_KEYS)?;
    let d = NoiseSpec::default();
    Ok(NoiseSpec {
        basis: n
            .string("basis")?
            .map_or(d.basis, |s| s.to_ascii_lowercase()),
        seed: n.seed("seed")?,
        fractal: n
            .string("fractal")?
            .map_or(d.fractal, |s| s.to_ascii_lowercase()),
        octaves: match n.get("octaves")? {
            Value::Nil => d.octaves,
            v => integer(func, "noise.octaves", &v, 1, 32)? as u32,
        },
        lacunarity: n.f32("lacunarity")?.unwrap_or(d.lacunarity),
        gain: n.f32("gain")?.unwrap_or(d.gain),
        frequency: n.f32("frequency")?.unwrap_or(d.frequency),
    })
}

fn read_zone(func: &str, i: usize, v: Value) -> mlua::Result<ZoneSpec> {
    if !matches!(v, Value::Table(_)) {
        return Err(err(
            func,
            format!("zones[{i}] must be a table, got {}", show(&v)),
        ));
    }
    let z = Fields::new(func, format!("zones[{i}]"), v, ZONE_KEYS)?;
    let shape = z.string("shape")?.ok_or_else(|| {
        err(
            func,
            format!("zones[{i}].shape is required (circle or rect)"),
        )
    })?;
    let center = z
        .pair("center", true)?
        .ok_or_else(|| err(func, format!("zones[{i}].center is required")))?;
    Ok(ZoneSpec {
        shape,
        center: center.map(|c| c as f32),
        level: z.f32("level")?.unwrap_or(0.0),
        r1: z.f32("r1")?,
        r2: z.f32("r2")?,
        x1: z.f32("x1")?,
        x2: z.f32("x2")?,
        z1: z.f32("z1")?,
        z2: z.f32("z2")?,
        falloff: z.string("falloff")?,
        corners: z.string("corners")?,
        material: z.material("material")?,
    })
}

fn read_resources(func: &str, v: Value) -> mlua::Result<ResourcesSpec> {
    let r = Fields::new(func, "resources".into(), v, RESOURCE_KEYS)?;
    Ok(ResourcesSpec {
        seed: r.seed("seed")?,
        min_distance: r
            .f64("min_distance")?
            .ok_or_else(|| err(func, "resources.min_distance is required"))?,
        density: r.f64("density")?.unwrap_or(1.0),
        exclude: r.string("exclude")?,
        sink: r.f64("sink")?,
        trees_on: r.array("trees_on", |i, m| {
            material_name(func, &format!("resources.trees_on[{i}]"), &m)
        })?,
    })
}

/// A coordinate argument in studs.
fn coord(func: &str, name: &str, v: &Value) -> mlua::Result<f64> {
    let c = finite(func, name, v)?;
    if c.abs() > 8_388_608.0 {
        return Err(err(
            func,
            format!("{name} is outside the terrain's range (±8388608 studs), got {c}"),
        ));
    }
    Ok(c)
}

/// A Region3 argument's X/Z extent as `[min_x, min_z, max_x, max_z]`, or `None` for nil.
fn region_xz(func: &str, v: &Value) -> mlua::Result<Option<[f64; 4]>> {
    match v {
        Value::Nil => Ok(None),
        Value::UserData(ud) if ud.is::<Region3>() => {
            let r = ud.borrow::<Region3>()?;
            let (a, b) = (r.min.as_dvec3(), r.max.as_dvec3());
            for c in [a.x, a.z, b.x, b.z] {
                if c.abs() > 8_388_608.0 {
                    return Err(err(
                        func,
                        format!("region is outside the terrain's range (±8388608 studs): {c}"),
                    ));
                }
            }
            Ok(Some([a.x, a.z, b.x, b.z]))
        }
        other => Err(err(
            func,
            format!("region must be a Region3 or nil, got {}", show(other)),
        )),
    }
}

/// `WriteTerrain`'s `origin`: the world position (studs) of the target's local origin, each
/// component a whole multiple of 4 (a voxel), as the cell it names; nil is the world origin.
fn origin_cell(func: &str, v: &Value) -> mlua::Result<glam::IVec3> {
    match v {
        Value::Nil => Ok(glam::IVec3::ZERO),
        Value::Vector(p) => {
            let (x, y, z) = (f64::from(p.x()), f64::from(p.y()), f64::from(p.z()));
            let mut cell = [0i32; 3];
            for (i, (c, axis)) in [(x, "X"), (y, "Y"), (z, "Z")].into_iter().enumerate() {
                if !c.is_finite() || c.abs() > 8_388_608.0 || c.rem_euclid(4.0) != 0.0 {
                    return Err(err(
                        func,
                        format!(
                            "origin.{axis} must be a whole multiple of 4 studs within ±8388608 (a voxel corner), got {c}"
                        ),
                    ));
                }
                cell[i] = (c / 4.0) as i32;
            }
            Ok(glam::IVec3::from_array(cell))
        }
        other => Err(err(
            func,
            format!("origin must be a Vector3 or nil, got {}", show(other)),
        )),
    }
}

impl TerrainWorld {
    fn floor(&self, func: &str) -> mlua::Result<Option<f64>> {
        self.floor
            .get_or_init(|| self.plan.floor())
            .clone()
            .map_err(|e| err(func, e))
    }

    fn heights(
        &self,
        lua: &Lua,
        a: (Value, Value, Value, Value),
    ) -> mlua::Result<(mlua::Buffer, mlua::Buffer)> {
        const F: &str = "TerrainWorld:Heights";
        let (i0, j0, nx, nz) = a;
        const RANGE: i64 = 1 << 40;
        let i0 = integer(F, "i0", &i0, -RANGE, RANGE)?;
        let j0 = integer(F, "j0", &j0, -RANGE, RANGE)?;
        let size = [dim(F, "nx", &nx)?, dim(F, "nz", &nz)?];
        let count = cells(F, &size)?;
        let hf = self.plan.world.heightfield(
            SampleRect {
                min: [i0, j0],
                size,
            },
            count >= 1 << 16,
        );
        // A surface pushed past the terrain's extent or to NaN is an error naming its column,
        // as everywhere else the heights are walked.
        hf.check().map_err(|e| err(F, e))?;
        let heights = super::f32_buffer(lua, &hf.heights)?;
        let mats: Vec<u8> = hf.materials.iter().map(|m| m.index()).collect();
        Ok((heights, lua.create_buffer(mats)?))
    }

    fn resources(&self, lua: &Lua, region: Value) -> mlua::Result<Table> {
        const F: &str = "TerrainWorld:Resources";
        let Some(plan) = &self.plan.resources else {
            return Err(err(F, "the world has no resources table"));
        };
        let area = match region_xz(F, &region)? {
            Some(a) => a,
            None => self.plan.resource_area().ok_or_else(|| {
                err(
                    F,
                    "region is required when the world has no columns or studs",
                )
            })?,
        };
        let n = plan.config.sampling_cells(area);
        if n > MAX_RESOURCE_CELLS {
            return Err(err(
                F,
                format!(
                    "the region has {n:.0} sampling cells, more than {MAX_RESOURCE_CELLS} per call: split it into smaller regions"
                ),
            ));
        }
        let placed = self
            .plan
            .world
            .place_resources(area, plan)
            .map_err(|e| err(F, e))?;
        let out = lua.create_table_with_capacity(placed.len(), 0)?;
        for (i, p) in placed.iter().enumerate() {
            let t = lua.create_table_with_capacity(0, 7)?;
            t.raw_set(
                "kind",
                match p.kind {
                    ResourceKind::Tree => "tree",
                    ResourceKind::Rock => "rock",
                },
            )?;
            t.raw_set(
                "position",
                procmodel_luau_types::Vector3(glam::Vec3::new(
                    p.x as f32,
                    p.ground as f32,
                    p.z as f32,
                ))
                .value(),
            )?;
            t.raw_set("bottom", p.bottom)?;
            t.raw_set("height", p.height)?;
            t.raw_set(
                "size",
                procmodel_luau_types::Vector3(glam::Vec3::new(
                    (2.0 * p.half) as f32,
                    p.height as f32,
                    (2.0 * p.half) as f32,
                ))
                .value(),
            )?;
            t.raw_set("material", material_value(lua, p.material)?)?;
            out.raw_set(i + 1, t)?;
        }
        Ok(out)
    }

    fn write_terrain(
        &self,
        lua: &Lua,
        target: Value,
        region: Value,
        origin: Value,
    ) -> mlua::Result<u64> {
        const F: &str = "TerrainWorld:WriteTerrain";
        let origin = origin_cell(F, &origin)?;
        let cells = match region_xz(F, &region)? {
            Some([x0, z0, x1, z1]) => VoxelColumns {
                min: [(x0 / 4.0).floor() as i32, (z0 / 4.0).floor() as i32],
                max: [(x1 / 4.0).ceil() as i32, (z1 / 4.0).ceil() as i32],
            },
            None => self.plan.cells().ok_or_else(|| {
                err(
                    F,
                    "region is required when the world has no columns or studs",
                )
            })?,
        };
        let w = i64::from(cells.max[0]) - i64::from(cells.min[0]);
        let d = i64::from(cells.max[1]) - i64::from(cells.min[1]);
        if w <= 0 || d <= 0 {
            return Err(err(
                F,
                format!("region covers no voxel columns ({w} × {d} cells)"),
            ));
        }
        let columns = (w as u64) * (d as u64);
        if columns > MAX_WRITE_COLUMNS {
            return Err(err(
                F,
                format!(
                    "the region has {w} × {d} voxel columns, more than {MAX_WRITE_COLUMNS} per call: write the world in chunks (e.g. 128 × 128 cells), with params:Pause() or task.wait() between them"
                ),
            ));
        }
        let floor = self.floor(F)?.ok_or_else(|| {
            err(
                F,
                "the world needs floor (or columns/studs, whose lowest surface sets it)",
            )
        })?;
        let voxels = self.plan.world.write_voxel_count(cells, floor);
        if voxels > MAX_WRITE_VOXELS {
            return Err(err(
                F,
                format!(
                    "the region spans {voxels} voxels from the floor ({floor}) up, more than {MAX_WRITE_VOXELS} per call: raise floor or write smaller chunks"
                ),
            ));
        }
        (self.access)(lua, &target, F, &mut |t| {
            self.plan
                .world
                .write_voxels_at(t, cells, floor, origin, |_| ControlFlow::Continue(()))
                .map_err(|e| err(F, e))
        })?;
        Ok(columns)
    }
}

impl UserData for TerrainWorld {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("TerrainWorld"));
        m.add_method("Height", |_, w, (x, z): (Value, Value)| {
            const F: &str = "TerrainWorld:Height";
            let (x, z) = (coord(F, "x", &x)?, coord(F, "z", &z)?);
            Ok(w.plan.world.surface_at(x, z))
        });
        m.add_method("Material", |lua, w, (x, z): (Value, Value)| {
            const F: &str = "TerrainWorld:Material";
            let (x, z) = (coord(F, "x", &x)?, coord(F, "z", &z)?);
            material_value(lua, w.plan.world.material_at(x, z))
        });
        m.add_method("Column", |lua, w, (i, j): (Value, Value)| {
            const F: &str = "TerrainWorld:Column";
            const RANGE: i64 = 1 << 40;
            let i = integer(F, "i", &i, -RANGE, RANGE)?;
            let j = integer(F, "j", &j, -RANGE, RANGE)?;
            let c = w.plan.world.column(i, j);
            Ok((c.height, material_value(lua, c.material)?))
        });
        m.add_method("Heights", |lua, w, a: (Value, Value, Value, Value)| {
            w.heights(lua, a)
        });
        m.add_method("Resources", |lua, w, region: Value| {
            w.resources(lua, region)
        });
        m.add_method(
            "WriteTerrain",
            |lua, w, (target, region, origin): (Value, Value, Value)| {
                w.write_terrain(lua, target, region, origin)
            },
        );
        m.add_method("Floor", |_, w, ()| w.floor("TerrainWorld:Floor"));
    }
}
