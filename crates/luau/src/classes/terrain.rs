//! Methods of Terrain (`workspace.Terrain`, made on first read by `services`), over `procmodel-terrain`'s voxel storage: the
//! fills, Read/WriteVoxels(Channels), ReplaceMaterial, Clear, Copy/PasteRegion, the cell and
//! world conversions and the material colours, with Roblox's argument rules (the terrain
//! crate checks resolution, alignment and the per-call voxel caps).
//!
//! A Terrain's voxels are decoded from its `SmoothGrid` on first use and kept beside the DOM
//! (app data); every DOM read from outside the VM first writes changed voxels back
//! ([`flush_terrain`]), so saved places carry them. TerrainRegions made by `CopyRegion` keep
//! their voxels the same way for `PasteRegion` (they are not encoded into saved files).
//!
//! A generator's `params.Terrain` is a Terrain of its own: an orphan Terrain instance whose
//! voxels start empty and live in the same store, so every method above works on it
//! unchanged, in the model's local space. When the run ends [`take_generator_terrain`] hands
//! its voxels to the host, which stores them in the results ([`GENERATED_TERRAIN`]); the
//! engine merges them into the scene's Terrain.

use crate::context::{Ctx, Instance, ctx};
use crate::methods::MethodTable;
use mlua::{Lua, Table, Value};
use procmodel_luau_types::{CFrame, Color3, Region3, Region3int16, Vector3, Vector3int16};
use procmodel_terrain::{
    CellRegion, Material, MaterialColors, Terrain, TerrainError, TerrainRegion, VoxelBox, VoxelCap,
};
use rbx_types::{BinaryString, Ref, Variant};
use rustc_hash::FxHashMap;

/// Voxels of the VM's Terrain instances and TerrainRegions (app data).
#[derive(Default)]
struct Store {
    terrains: FxHashMap<Ref, Loaded>,
    regions: FxHashMap<Ref, TerrainRegion>,
    /// Per running generation (its targetContainer), the Terrain its `params.Terrain` is
    /// (kept when `terrains` is forgotten: the voxels then live in the orphan's SmoothGrid).
    scratch: FxHashMap<Ref, Ref>,
}

/// Name of the TerrainRegion a run's results carry its `params.Terrain` voxels in (local
/// space, in its `SmoothGrid`).
pub use procmodel_script::GENERATED_TERRAIN;

/// `params.Terrain` of the run whose targetContainer is `container`: made on first use, an
/// orphan Terrain with no voxels (so a generator that never touches it pays nothing).
pub(crate) fn generator_terrain(lua: &Lua, container: Ref) -> mlua::Result<Value> {
    let existing = store(lua)?.scratch.get(&container).copied();
    let r = match existing {
        Some(r) => r,
        None => {
            let r = ctx(lua)?.dom.insert(
                Ref::none(),
                rbx_dom_weak::InstanceBuilder::new("Terrain").with_name("Terrain"),
            );
            let mut s = store(lua)?;
            s.scratch.insert(container, r);
            s.terrains.insert(
                r,
                Loaded {
                    terrain: Terrain::new(),
                    colors: MaterialColors::default(),
                    dirty: false,
                    writes: 0,
                    next_check: 0,
                },
            );
            r
        }
    };
    ctx(lua)?.push(r)
}

/// Ends the `params.Terrain` of the run whose targetContainer is `container`: its voxels
/// (None when the run never used it), and the orphan Terrain instance is destroyed.
pub(crate) fn take_generator_terrain(lua: &Lua, container: Ref) -> mlua::Result<Option<Terrain>> {
    let (r, loaded) = {
        let mut s = store(lua)?;
        let Some(r) = s.scratch.remove(&container) else {
            return Ok(None);
        };
        let loaded = s.terrains.remove(&r);
        (r, loaded)
    };
    let mut c = ctx(lua)?;
    let terrain = match loaded {
        Some(l) => l.terrain,
        // Forgotten since (the DOM was read from outside mid-run): written back first.
        None => decode(&c, r).map_err(mlua::Error::runtime)?.terrain,
    };
    if c.dom.get_by_ref(r).is_some() {
        c.dom.destroy(r);
    }
    Ok(Some(terrain))
}

fn is_generator_terrain(lua: &Lua, r: Ref) -> mlua::Result<bool> {
    Ok(store(lua)?.scratch.values().any(|&t| t == r))
}

pub(super) struct Loaded {
    terrain: Terrain,
    colors: MaterialColors,
    /// Changed since it was decoded or last written back.
    dirty: bool,
    /// Writes since the voxel memory was last measured, and the chunk count that triggers
    /// the next measurement (see [`check_quota`]).
    writes: u32,
    next_check: usize,
}

/// Measures the voxel memory against the host's terrain limit now and then: whenever the
/// chunk count grew by an eighth (at least 64 chunks) since the last measurement, and every
/// 1,024 writes (dense chunks can also appear in place of uniform ones). Amortised, the
/// O(chunks) measurement costs nothing per call; a limit is overshot by at most what those
/// writes add.
fn check_quota(
    t: &mut Loaded,
    limit: Option<usize>,
    what: impl FnOnce() -> String,
) -> mlua::Result<()> {
    let Some(limit) = limit else {
        return Ok(());
    };
    t.writes = t.writes.wrapping_add(1);
    let n = t.terrain.chunk_count();
    if n < t.next_check && !t.writes.is_multiple_of(1024) {
        return Ok(());
    }
    t.next_check = n + (n / 8).max(64);
    let bytes = t.terrain.memory_bytes();
    if bytes > limit {
        return Err(mlua::Error::runtime(format!(
            "{}: the terrain's voxels take {} MB, over the limit of {} MB {}",
            what(),
            bytes >> 20,
            limit >> 20,
            crate::error::TERRAIN_LIMIT
        )));
    }
    Ok(())
}

fn store(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Store>> {
    if lua.app_data_ref::<Store>().is_none() {
        lua.set_app_data(Store::default());
    }
    lua.try_app_data_mut::<Store>()
        .map_err(|_| mlua::Error::runtime("internal error: terrain store busy"))?
        .ok_or_else(|| mlua::Error::runtime("internal error: no terrain store"))
}

/// The raw C function's `Terrain:FillBlock` (see `crate::ffi::raw_fill_block`).
struct RawFillBlock;

impl crate::ffi::FillBlock for RawFillBlock {
    /// `Terrain:FillBlock` for the plain call (a Terrain handle, a CFrame, a Vector3 and an
    /// `Enum.Material` item): Ok(None) leaves everything else (and the error messages of
    /// wrong arguments) to the mlua method, which does the same work.
    #[inline]
    fn fill_block(
        lua: &Lua,
        this: &Value,
        cf: CFrame,
        size: glam::Vec3,
        material: procmodel_luau_types::EnumItem,
    ) -> mlua::Result<Option<()>> {
        let Some(inst) = ctx(lua)?.instance(this) else {
            return Ok(None);
        };
        if !procmodel_dom::is_a(&inst.class, "Terrain") || material.enum_name != "Material" {
            return Ok(None);
        }
        let mat = Material::from_enum_value(material.value).map_err(|e| terr(e, "FillBlock"))?;
        with_terrain(lua, &inst, "FillBlock", true, |t| {
            t.terrain
                .fill_block(affine(cf), size, mat)
                .map_err(|e| terr(e, "FillBlock"))
        })?;
        Ok(Some(()))
    }
}

fn terr(e: TerrainError, method: &str) -> mlua::Error {
    // A material that is not a terrain one is named as the script wrote it
    // (Enum.Material.Plastic, not its number), with the ones that are.
    if let TerrainError::NotTerrainMaterial(v) = &e
        && let Some(item) = v
            .parse::<u32>()
            .ok()
            .and_then(|v| procmodel_luau_types::enums::EnumItem::from_value("Material", v))
    {
        let all: Vec<&str> = Material::ALL.iter().map(|m| m.name()).collect();
        return mlua::Error::runtime(format!(
            "Terrain:{method}: Enum.Material.{} is not a terrain material (terrain materials: {})",
            item.name,
            all.join(", ")
        ));
    }
    mlua::Error::runtime(format!("Terrain:{method}: {e}"))
}

/// Runs `f` on the voxels of Terrain `this` (decoded on first use); `write` marks them changed
/// (and checks that a generator may write there).
pub(super) fn with_terrain<R>(
    lua: &Lua,
    this: &Instance,
    method: &str,
    write: bool,
    f: impl FnOnce(&mut Loaded) -> mlua::Result<R>,
) -> mlua::Result<R> {
    let c = ctx(lua)?;
    if write {
        c.check_write(this.r, || format!("Terrain:{method}"))?;
    }
    let mut s = store(lua)?;
    if let std::collections::hash_map::Entry::Vacant(slot) = s.terrains.entry(this.r) {
        let loaded = decode(&c, this.r)
            .map_err(|e| mlua::Error::runtime(format!("{}: {e}", c.full_name(this.r))))?;
        slot.insert(loaded);
    }
    let limit = c.terrain_limit;
    drop(c);
    let t = s.terrains.get_mut(&this.r).expect("inserted above");
    let out = f(t)?;
    if write {
        t.dirty = true;
        check_quota(t, limit, || format!("Terrain:{method}"))?;
    }
    Ok(out)
}

/// Runs `f` on the voxels of the Terrain instance `this` (decoded on first use), for reads
/// from other classes (spatial queries); `what` names the caller in errors.
pub(crate) fn read_voxels<R>(
    lua: &Lua,
    this: &Instance,
    what: &str,
    f: impl FnOnce(&Terrain) -> R,
) -> mlua::Result<R> {
    with_terrain(lua, this, what, false, |t| Ok(f(&t.terrain)))
}

/// Runs `edit` on the voxels of the Terrain instance `target` (`@procmodel/terrain`'s
/// `WriteTerrain`): the same storage, write check and write-back as the Terrain methods;
/// `what` names the caller in errors.
pub(crate) fn edit_voxels(
    lua: &Lua,
    target: &Value,
    what: &str,
    edit: &mut dyn FnMut(&mut Terrain) -> mlua::Result<()>,
) -> mlua::Result<()> {
    let inst = {
        let c = ctx(lua)?;
        let inst = c
            .instance(target)
            .filter(|i| procmodel_dom::is_a(&i.class, "Terrain"))
            .ok_or_else(|| {
                mlua::Error::runtime(format!(
                    "{what}: terrain must be a Terrain instance (workspace.Terrain), got {}",
                    match c.instance(target) {
                        Some(i) => i.class.to_string(),
                        None => procmodel_luau_types::type_name(target),
                    }
                ))
            })?;
        c.check_write(inst.r, || what.to_owned())?;
        (inst, c.terrain_limit)
    };
    let (inst, limit) = inst;
    with_terrain(lua, &inst, what, false, |t| {
        edit(&mut t.terrain)?;
        t.dirty = true;
        check_quota(t, limit, || what.to_owned())
    })
}

fn decode(c: &Ctx, r: Ref) -> Result<Loaded, String> {
    let inst = c.dom.get_by_ref(r).ok_or("instance no longer exists")?;
    let terrain = match inst.properties.get(&"SmoothGrid".into()) {
        Some(Variant::BinaryString(b)) if !AsRef::<[u8]>::as_ref(b).is_empty() => {
            procmodel_terrain::smoothgrid::decode(b.as_ref())
                .map_err(|e| format!("SmoothGrid: {e}"))?
        }
        _ => Terrain::new(),
    };
    let colors = match inst.properties.get(&"MaterialColors".into()) {
        Some(Variant::MaterialColors(m)) => {
            MaterialColors::decode(&m.encode()).map_err(|e| format!("MaterialColors: {e}"))?
        }
        _ => MaterialColors::default(),
    };
    Ok(Loaded {
        terrain,
        colors,
        dirty: false,
        writes: 0,
        next_check: 0,
    })
}

/// Writes changed voxels back into their Terrain instances' `SmoothGrid` and
/// `MaterialColors`, and forgets all decoded voxels when `forget` (the DOM is about to be
/// changed or replaced from outside).
pub(crate) fn flush_terrain(lua: &Lua, forget: bool) -> mlua::Result<()> {
    let Some(mut s) = lua.app_data_mut::<Store>() else {
        return Ok(());
    };
    if s.terrains.values().any(|t| t.dirty) {
        let mut c = ctx(lua)?;
        let mut refs: Vec<Ref> = s.terrains.keys().copied().collect();
        refs.sort_unstable_by_key(|r| r.to_string());
        for r in refs {
            let t = s.terrains.get_mut(&r).expect("key");
            if !t.dirty {
                continue;
            }
            t.dirty = false;
            t.terrain.compact();
            let grid = procmodel_terrain::smoothgrid::encode(&t.terrain);
            let colors = rbx_types::MaterialColors::decode(&t.colors.encode()).ok();
            if let Some(inst) = c.dom.get_by_ref_mut(r) {
                inst.properties
                    .insert("SmoothGrid".into(), BinaryString::from(grid).into());
                if let Some(colors) = colors {
                    inst.properties
                        .insert("MaterialColors".into(), Variant::MaterialColors(colors));
                }
            }
        }
    }
    if forget {
        s.terrains.clear();
    }
    Ok(())
}

fn material(v: &Value, method: &str, what: &str) -> mlua::Result<Material> {
    let item = procmodel_luau_types::lua_to_variant(v, &rbx_reflection::DataType::Enum("Material"))
        .map_err(|e| mlua::Error::runtime(format!("Terrain:{method}: {what}: {e}")))?;
    match item {
        Variant::Enum(e) => Material::from_enum_value(e.to_u32()).map_err(|e| terr(e, method)),
        _ => Err(mlua::Error::runtime(format!(
            "Terrain:{method}: {what}: Enum.Material expected"
        ))),
    }
}

fn material_value(lua: &Lua, m: Material) -> mlua::Result<Value> {
    procmodel_luau_types::variant_to_lua(
        lua,
        &Variant::Enum(rbx_types::Enum::from_u32(u32::from(m.enum_value()))),
        Some("Material"),
    )
}

fn affine(cf: CFrame) -> glam::Affine3A {
    procmodel_dom::cframe_to_affine(&rbx_types::CFrame::from(cf))
}

fn region(r: &Region3, cap: VoxelCap, res: f64, method: &str) -> mlua::Result<CellRegion> {
    let (a, b) = (r.min.as_dvec3(), r.max.as_dvec3());
    procmodel_terrain::validate_region(a.to_array(), b.to_array(), res, cap)
        .map_err(|e| terr(e, method))
}

/// A 1-based `[x][y][z]` array of `size` with a `.Size` field, filled by `value(i)` (the
/// [`VoxelBox`] index of the cell).
fn array3(
    lua: &Lua,
    size: [usize; 3],
    mut value: impl FnMut(usize) -> mlua::Result<Value>,
) -> mlua::Result<Table> {
    let [sx, sy, sz] = size;
    let outer = lua.create_table_with_capacity(sx, 1)?;
    for x in 0..sx {
        let ys = lua.create_table_with_capacity(sy, 0)?;
        for y in 0..sy {
            let zs = lua.create_table_with_capacity(sz, 0)?;
            for z in 0..sz {
                zs.raw_set(z + 1, value(x + sx * (y + sy * z))?)?;
            }
            ys.raw_set(y + 1, zs)?;
        }
        outer.raw_set(x + 1, ys)?;
    }
    outer.raw_set(
        "Size",
        Vector3(glam::Vec3::new(sx as f32, sy as f32, sz as f32)).value(),
    )?;
    Ok(outer)
}

/// Reads a 1-based `[x][y][z]` array that must be exactly `size`, cell by cell.
fn read_array3(
    arr: &Value,
    size: [usize; 3],
    method: &str,
    what: &str,
    mut cell: impl FnMut(usize, Value) -> mlua::Result<()>,
) -> mlua::Result<()> {
    let [sx, sy, sz] = size;
    let bad = |detail: String| {
        mlua::Error::runtime(format!(
            "Terrain:{method}: {what} must be a {sx}x{sy}x{sz} array matching the region ({detail})"
        ))
    };
    let Value::Table(xs) = arr else {
        return Err(bad(format!("got {}", procmodel_luau_types::type_name(arr))));
    };
    if xs.raw_len() != sx {
        return Err(bad(format!("{} entries on X", xs.raw_len())));
    }
    for x in 0..sx {
        let ys: Value = xs.raw_get(x + 1)?;
        let Value::Table(ys) = ys else {
            return Err(bad(format!("[{}] is not a table", x + 1)));
        };
        if ys.raw_len() != sy {
            return Err(bad(format!("{} entries on Y at [{}]", ys.raw_len(), x + 1)));
        }
        for y in 0..sy {
            let zs: Value = ys.raw_get(y + 1)?;
            let Value::Table(zs) = zs else {
                return Err(bad(format!("[{}][{}] is not a table", x + 1, y + 1)));
            };
            if zs.raw_len() != sz {
                return Err(bad(format!(
                    "{} entries on Z at [{}][{}]",
                    zs.raw_len(),
                    x + 1,
                    y + 1
                )));
            }
            for z in 0..sz {
                cell(x + sx * (y + sy * z), zs.raw_get(z + 1)?)?;
            }
        }
    }
    Ok(())
}

fn occupancy(v: Value, method: &str, what: &str) -> mlua::Result<f32> {
    match v {
        Value::Number(n) => Ok(n as f32),
        Value::Integer(n) => Ok(n as f32),
        other => Err(mlua::Error::runtime(format!(
            "Terrain:{method}: {what} entries must be numbers, got {}",
            procmodel_luau_types::type_name(&other)
        ))),
    }
}

/// The `Size` a channels table carries (`ReadVoxelChannels`' value written back): the
/// region's size in voxels, or an error naming both.
fn check_size(lua: &Lua, v: Value, size: [usize; 3]) -> mlua::Result<()> {
    let [sx, sy, sz] = size;
    let want = glam::Vec3::new(sx as f32, sy as f32, sz as f32);
    match <Vector3 as mlua::FromLua>::from_lua(v.clone(), lua) {
        Ok(Vector3(got)) if got == want => Ok(()),
        Ok(Vector3(got)) => Err(mlua::Error::runtime(format!(
            "Terrain:WriteVoxelChannels: Size is {}, {}, {} but the region is {sx}x{sy}x{sz} voxels",
            got.x, got.y, got.z
        ))),
        Err(_) => Err(mlua::Error::runtime(format!(
            "Terrain:WriteVoxelChannels: Size must be a Vector3 (the arrays' size), got {}",
            procmodel_luau_types::type_name(&v)
        ))),
    }
}

fn box_size(r: CellRegion) -> [usize; 3] {
    let s = r.size();
    [s.x as usize, s.y as usize, s.z as usize]
}

pub(super) fn cell_arg(x: f64, y: f64, z: f64, method: &str) -> mlua::Result<glam::IVec3> {
    for v in [x, y, z] {
        if !v.is_finite() || v.abs() > f64::from(i32::MAX) {
            return Err(mlua::Error::runtime(format!(
                "Terrain:{method}: cell coordinates must be finite integers, got {v}"
            )));
        }
    }
    Ok(glam::IVec3::new(
        x.floor() as i32,
        y.floor() as i32,
        z.floor() as i32,
    ))
}

/// The cells a Region3int16 names: its bounds are inclusive cells (`CopyRegion`, the legacy
/// `SetCells`); `method` names the caller in errors.
pub(super) fn inclusive_cells(r: &Region3int16, method: &str) -> mlua::Result<CellRegion> {
    let min = glam::IVec3::from_array(r.min.0.map(i32::from));
    let max = glam::IVec3::from_array(r.max.0.map(i32::from));
    if min.cmpgt(max).any() {
        return Err(mlua::Error::runtime(format!(
            "Terrain:{method}: region Min must not exceed Max"
        )));
    }
    Ok(CellRegion::from_min_size(min, max - min + 1))
}

/// Fills every voxel of `cells` with `v` (the legacy cell methods), within the fill cap.
pub(super) fn write_cells(
    loaded: &mut Loaded,
    cells: CellRegion,
    v: procmodel_terrain::Voxel,
    method: &str,
) -> mlua::Result<()> {
    procmodel_terrain::region::check_cap(cells.volume() as u128, VoxelCap::Fill)
        .map_err(|e| terr(e, method))?;
    loaded.terrain.modify(cells, |_, voxel| *voxel = v);
    Ok(())
}

const CHANNELS: [&str; 3] = ["SolidMaterial", "SolidOccupancy", "LiquidOccupancy"];

pub fn register(m: &mut MethodTable) {
    m.class("Terrain");
    m.add_raw_method(
        "FillBlock",
        crate::ffi::raw_fill_block::<RawFillBlock>,
        |lua, this, (cf, size, mat): (CFrame, Vector3, Value)| {
            let mat = material(&mat, "FillBlock", "material")?;
            with_terrain(lua, this, "FillBlock", true, |t| {
                t.terrain
                    .fill_block(affine(cf), size.0, mat)
                    .map_err(|e| terr(e, "FillBlock"))
            })
        },
    );
    m.add_method(
        "FillWedge",
        |lua, this, (cf, size, mat): (CFrame, Vector3, Value)| {
            let mat = material(&mat, "FillWedge", "material")?;
            with_terrain(lua, this, "FillWedge", true, |t| {
                t.terrain
                    .fill_wedge(affine(cf), size.0, mat)
                    .map_err(|e| terr(e, "FillWedge"))
            })
        },
    );
    m.add_method(
        "FillBall",
        |lua, this, (center, radius, mat): (Vector3, f64, Value)| {
            let mat = material(&mat, "FillBall", "material")?;
            with_terrain(lua, this, "FillBall", true, |t| {
                t.terrain
                    .fill_ball(center.0, radius as f32, mat)
                    .map_err(|e| terr(e, "FillBall"))
            })
        },
    );
    m.add_method(
        "FillCylinder",
        |lua, this, (cf, height, radius, mat): (CFrame, f64, f64, Value)| {
            let mat = material(&mat, "FillCylinder", "material")?;
            with_terrain(lua, this, "FillCylinder", true, |t| {
                t.terrain
                    .fill_cylinder(affine(cf), height as f32, radius as f32, mat)
                    .map_err(|e| terr(e, "FillCylinder"))
            })
        },
    );
    m.add_method(
        "FillRegion",
        |lua, this, (r, res, mat): (Region3, f64, Value)| {
            let mat = material(&mat, "FillRegion", "material")?;
            let cells = region(&r, VoxelCap::Fill, res, "FillRegion")?;
            with_terrain(lua, this, "FillRegion", true, |t| {
                t.terrain.fill_region(cells, mat);
                Ok(())
            })
        },
    );
    m.add_method(
        "ReplaceMaterial",
        |lua, this, (r, res, from, to): (Region3, f64, Value, Value)| {
            let from = material(&from, "ReplaceMaterial", "sourceMaterial")?;
            let to = material(&to, "ReplaceMaterial", "targetMaterial")?;
            let cells = region(&r, VoxelCap::Fill, res, "ReplaceMaterial")?;
            with_terrain(lua, this, "ReplaceMaterial", true, |t| {
                t.terrain.replace_material(cells, from, to);
                Ok(())
            })
        },
    );
    m.add_method("Clear", |lua, this, ()| {
        with_terrain(lua, this, "Clear", true, |t| {
            t.terrain.clear();
            Ok(())
        })
    });
    m.add_method("CountCells", |lua, this, ()| {
        with_terrain(lua, this, "CountCells", false, |t| {
            Ok(t.terrain.count_cells() as f64)
        })
    });
    m.add_method("ReadVoxels", |lua, this, (r, res): (Region3, f64)| {
        let cells = region(&r, VoxelCap::ReadWrite, res, "ReadVoxels")?;
        let b = with_terrain(lua, this, "ReadVoxels", false, |t| {
            Ok(t.terrain.read_voxels(cells))
        })?;
        let (mats, occ) = b.legacy();
        let mats = array3(lua, b.size, |i| material_value(lua, mats[i]))?;
        let occ = array3(lua, b.size, |i| Ok(Value::Number(f64::from(occ[i]))))?;
        Ok((mats, occ))
    });
    m.add_method(
        "WriteVoxels",
        |lua, this, (r, res, mats, occ): (Region3, f64, Value, Value)| {
            let cells = region(&r, VoxelCap::ReadWrite, res, "WriteVoxels")?;
            let size = box_size(cells);
            let mut b = VoxelBox::empty(size);
            read_array3(&mats, size, "WriteVoxels", "materials", |i, v| {
                b.materials[i] = material(&v, "WriteVoxels", "materials")?;
                Ok(())
            })?;
            read_array3(&occ, size, "WriteVoxels", "occupancy", |i, v| {
                b.occupancy[i] = occupancy(v, "WriteVoxels", "occupancy")?;
                Ok(())
            })?;
            // The legacy form: a Water cell writes the liquid channel.
            for i in 0..b.len() {
                if b.materials[i] == Material::Water {
                    b.materials[i] = Material::Air;
                    b.liquid[i] = b.occupancy[i];
                    b.occupancy[i] = 0.0;
                }
            }
            with_terrain(lua, this, "WriteVoxels", true, |t| {
                t.terrain
                    .write_voxels(cells, &b)
                    .map_err(|e| terr(e, "WriteVoxels"))
            })
        },
    );
    m.add_method(
        "ReadVoxelChannels",
        |lua, this, (r, res, ids): (Region3, f64, Vec<String>)| {
            let cells = region(&r, VoxelCap::ReadWrite, res, "ReadVoxelChannels")?;
            if let Some(bad) = ids.iter().find(|id| !CHANNELS.contains(&id.as_str())) {
                return Err(mlua::Error::runtime(format!(
                    "Terrain:ReadVoxelChannels: unknown channel \"{bad}\" (channels: {})",
                    CHANNELS.join(", ")
                )));
            }
            let b = with_terrain(lua, this, "ReadVoxelChannels", false, |t| {
                Ok(t.terrain.read_voxels(cells))
            })?;
            let out = lua.create_table()?;
            for id in &ids {
                let arr = match id.as_str() {
                    "SolidMaterial" => {
                        array3(lua, b.size, |i| material_value(lua, b.materials[i]))?
                    }
                    "SolidOccupancy" => array3(lua, b.size, |i| {
                        Ok(Value::Number(f64::from(b.occupancy[i])))
                    })?,
                    _ => array3(lua, b.size, |i| Ok(Value::Number(f64::from(b.liquid[i]))))?,
                };
                out.raw_set(id.as_str(), arr)?;
            }
            let [sx, sy, sz] = b.size;
            out.raw_set(
                "Size",
                Vector3(glam::Vec3::new(sx as f32, sy as f32, sz as f32)).value(),
            )?;
            Ok(out)
        },
    );
    m.add_method(
        "WriteVoxelChannels",
        |lua, this, (r, res, channels): (Region3, f64, Table)| {
            let cells = region(&r, VoxelCap::ReadWrite, res, "WriteVoxelChannels")?;
            let size = box_size(cells);
            for pair in channels.pairs::<Value, Value>() {
                let (k, v) = pair?;
                let key = match &k {
                    Value::String(s) => format!("\"{}\"", s.to_string_lossy()),
                    other => format!("a {} key", procmodel_luau_types::type_name(other)),
                };
                if key == "\"Size\"" {
                    // What ReadVoxelChannels returns carries the arrays' Size beside them
                    // (the reference: the write's argument is "similar to" that value).
                    check_size(lua, v, size)?;
                    continue;
                }
                let known = matches!(&k, Value::String(s) if CHANNELS.iter().any(|c| s.as_bytes() == c.as_bytes()));
                if !known {
                    return Err(mlua::Error::runtime(format!(
                        "Terrain:WriteVoxelChannels: unknown channel {key} (channels: {})",
                        CHANNELS.join(", ")
                    )));
                }
            }
            // Channels not given keep the voxels' current values.
            let mut b = with_terrain(lua, this, "WriteVoxelChannels", false, |t| {
                Ok(t.terrain.read_voxels(cells))
            })?;
            for id in CHANNELS {
                let v: Value = channels.raw_get(id)?;
                if v.is_nil() {
                    continue;
                }
                read_array3(&v, size, "WriteVoxelChannels", id, |i, v| {
                    match id {
                        "SolidMaterial" => {
                            let m = material(&v, "WriteVoxelChannels", id)?;
                            if m == Material::Water {
                                return Err(mlua::Error::runtime(
                                    "Terrain:WriteVoxelChannels: SolidMaterial cannot be Water (use LiquidOccupancy)",
                                ));
                            }
                            b.materials[i] = m;
                        }
                        "SolidOccupancy" => b.occupancy[i] = occupancy(v, "WriteVoxelChannels", id)?,
                        _ => b.liquid[i] = occupancy(v, "WriteVoxelChannels", id)?,
                    }
                    Ok(())
                })?;
            }
            with_terrain(lua, this, "WriteVoxelChannels", true, |t| {
                t.terrain
                    .write_voxels(cells, &b)
                    .map_err(|e| terr(e, "WriteVoxelChannels"))
            })
        },
    );
    m.add_method("CopyRegion", |lua, this, r: Region3int16| {
        // The copy holds voxels only where the terrain has any (`CopyRegion(terrain.MaxExtents)`
        // copies all there is).
        let cells = inclusive_cells(&r, "CopyRegion")?;
        let copy = with_terrain(lua, this, "CopyRegion", false, |t| {
            let held = t.terrain.copied_part(cells);
            procmodel_terrain::region::check_cap(held.volume() as u128, VoxelCap::Fill)
                .map_err(|e| terr(e, "CopyRegion"))?;
            Ok(t.terrain.copy_region(cells))
        })?;
        let mut c = ctx(lua)?;
        crate::classes::count_new_instance(&mut c)?;
        // Its size, as the reference's TerrainRegion.SizeInCells reads it.
        let size = copy.size.as_vec3();
        let r = c.dom.insert(
            Ref::none(),
            rbx_dom_weak::InstanceBuilder::new("TerrainRegion")
                .with_name("TerrainRegion")
                .with_property(
                    "SizeInCells",
                    rbx_types::Vector3::new(size.x, size.y, size.z),
                ),
        );
        store(lua)?.regions.insert(r, copy);
        c.push(r)
    });
    m.add_method(
        "PasteRegion",
        |lua, this, (region, corner, empty): (Value, Vector3int16, bool)| {
            let src = {
                let c = ctx(lua)?;
                crate::instance::opt_instance(&c, &region)?
                    .filter(|i| i.class == "TerrainRegion")
                    .ok_or_else(|| {
                        mlua::Error::runtime(
                            "Terrain:PasteRegion: Argument 1 must be a TerrainRegion",
                        )
                    })?
            };
            let copy = store(lua)?
                .regions
                .get(&src.r)
                .cloned()
                .unwrap_or_else(|| TerrainRegion {
                    size: glam::IVec3::ZERO,
                    offset: glam::IVec3::ZERO,
                    voxels: VoxelBox::empty([0, 0, 0]),
                });
            let corner = glam::IVec3::from_array(corner.0.map(i32::from));
            with_terrain(lua, this, "PasteRegion", true, |t| {
                t.terrain
                    .paste_region(&copy, corner, empty)
                    .map_err(|e| terr(e, "PasteRegion"))
            })
        },
    );
    m.add_method("CellCenterToWorld", |_, _, (x, y, z): (f64, f64, f64)| {
        let cell = cell_arg(x, y, z, "CellCenterToWorld")?;
        Ok(Vector3(procmodel_terrain::cell_center_to_world(cell)).value())
    });
    m.add_method("CellCornerToWorld", |_, _, (x, y, z): (f64, f64, f64)| {
        let cell = cell_arg(x, y, z, "CellCornerToWorld")?;
        Ok(Vector3(procmodel_terrain::cell_corner_to_world(cell)).value())
    });
    m.add_method("WorldToCell", |_, _, p: Vector3| {
        let cell = procmodel_terrain::world_to_cell(p.0).map_err(|e| terr(e, "WorldToCell"))?;
        Ok(Vector3(cell.as_vec3()).value())
    });
    m.add_method("WorldToCellPreferSolid", |lua, this, p: Vector3| {
        let cell = with_terrain(lua, this, "WorldToCellPreferSolid", false, |t| {
            t.terrain
                .world_to_cell_prefer_solid(p.0)
                .map_err(|e| terr(e, "WorldToCellPreferSolid"))
        })?;
        Ok(Vector3(cell.as_vec3()).value())
    });
    m.add_method("WorldToCellPreferEmpty", |lua, this, p: Vector3| {
        let cell = with_terrain(lua, this, "WorldToCellPreferEmpty", false, |t| {
            t.terrain
                .world_to_cell_prefer_empty(p.0)
                .map_err(|e| terr(e, "WorldToCellPreferEmpty"))
        })?;
        Ok(Vector3(cell.as_vec3()).value())
    });
    m.add_method("GetMaterialColor", |lua, this, mat: Value| {
        let mat = material(&mat, "GetMaterialColor", "material")?;
        let rgb = with_terrain(lua, this, "GetMaterialColor", false, |t| {
            Ok(t.colors.get(mat))
        })?;
        procmodel_luau_types::variant_to_lua(
            lua,
            &Variant::Color3(rbx_types::Color3::new(
                f32::from(rgb[0]) / 255.0,
                f32::from(rgb[1]) / 255.0,
                f32::from(rgb[2]) / 255.0,
            )),
            None,
        )
    });
    m.add_method(
        "SetMaterialColor",
        |lua, this, (mat, color): (Value, Color3)| {
            let mat = material(&mat, "SetMaterialColor", "material")?;
            if is_generator_terrain(lua, this.r)? {
                return Err(mlua::Error::runtime(
                    "Terrain:SetMaterialColor: params.Terrain holds voxels only; material colours belong to workspace.Terrain",
                ));
            }
            if matches!(mat, Material::Air | Material::Water) {
                return Err(mlua::Error::runtime(format!(
                    "Terrain:SetMaterialColor: {} has no colour to set",
                    mat.name()
                )));
            }
            let c3 = rbx_types::Color3::from(color);
            let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
            with_terrain(lua, this, "SetMaterialColor", true, |t| {
                t.colors.set(mat, [byte(c3.r), byte(c3.g), byte(c3.b)]);
                Ok(())
            })
        },
    );
}
