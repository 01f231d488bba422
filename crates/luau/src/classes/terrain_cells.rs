//! Terrain's deprecated cell methods of the legacy terrain engine, as the reference says
//! Roblox still runs them on smooth terrain: `SetCell`/`SetCells` fill whole voxels (cell
//! `(x, y, z)` is the voxel whose corner is `4·(x, y, z)`) with the smooth material the
//! `Enum.CellMaterial` page converts each legacy material to, `SetWaterCell` with water,
//! `GetCell`/`GetWaterCell` read a voxel back as the closest legacy values, and
//! `AutowedgeCell`/`AutowedgeCells` do nothing. Old terrain generators call them in loops.
//! Must never keep cell shapes: blocks and orientations are checked and dropped, as smooth
//! terrain has none.

use super::instance::enum_arg;
use super::terrain::{inclusive_cells, read_voxels, with_terrain, write_cells};
use crate::context::Instance;
use crate::methods::MethodTable;
use mlua::{Lua, MultiValue, Value};
use procmodel_luau_types::{FromValue, Region3int16};
use procmodel_terrain::{CellRegion, Material, Voxel};

/// `Enum.CellMaterial` by value, and the smooth material it converts to (the reference's
/// CellMaterial page; Empty is air).
const CONVERTED: [(u32, &str, Material); 18] = [
    (0, "Empty", Material::Air),
    (1, "Grass", Material::Grass),
    (2, "Sand", Material::Sand),
    (3, "Brick", Material::Brick),
    (4, "Granite", Material::Slate),
    (5, "Asphalt", Material::Asphalt),
    (6, "Iron", Material::Concrete),
    (7, "Aluminum", Material::Concrete),
    (8, "Gold", Material::Concrete),
    (9, "WoodPlank", Material::WoodPlanks),
    (10, "WoodLog", Material::WoodPlanks),
    (11, "Gravel", Material::Asphalt),
    (12, "CinderBlock", Material::Concrete),
    (13, "MossyStone", Material::Pavement),
    (14, "Cement", Material::Concrete),
    (15, "RedPlastic", Material::Sandstone),
    (16, "BluePlastic", Material::Ice),
    (17, "Water", Material::Water),
];

/// The legacy material a voxel of `m` reads as (`GetCell`): the one converted to it (of
/// several, the one named for it: Concrete reads as Cement, WoodPlanks as WoodPlank,
/// Asphalt as Asphalt); a material no legacy one converts to reads as the legacy material
/// nearest in kind.
fn legacy(m: Material) -> u32 {
    match m {
        Material::Air => 0,
        Material::Grass | Material::LeafyGrass => 1,
        Material::Sand | Material::Snow | Material::Salt => 2,
        Material::Brick => 3,
        Material::Slate
        | Material::Rock
        | Material::Basalt
        | Material::Limestone
        | Material::Cobblestone
        | Material::CrackedLava => 4,
        Material::Asphalt => 5,
        Material::WoodPlanks => 9,
        Material::Ground | Material::Mud => 11,
        Material::Pavement => 13,
        Material::Concrete => 14,
        Material::Sandstone => 15,
        Material::Ice | Material::Glacier => 16,
        Material::Water => 17,
    }
}

fn number(v: &Value, method: &str, pos: usize) -> mlua::Result<f64> {
    let as_number = procmodel_luau_types::lua_to_variant(
        v,
        &rbx_reflection::DataType::Value(rbx_types::VariantType::Float64),
    );
    let number = match as_number {
        Ok(rbx_types::Variant::Float64(n)) => Some(n),
        _ => None,
    };
    number.ok_or_else(|| {
        mlua::Error::runtime(format!(
            "Terrain:{method}: argument {pos} must be a number (a cell coordinate), got {}",
            procmodel_luau_types::type_name(v)
        ))
    })
}

/// The cell `(x, y, z)` of arguments 1–3.
fn cell(args: &[Value], method: &str) -> mlua::Result<glam::IVec3> {
    let nil = Value::Nil;
    let at = |i: usize| args.get(i).unwrap_or(&nil);
    super::terrain::cell_arg(
        number(at(0), method, 1)?,
        number(at(1), method, 2)?,
        number(at(2), method, 3)?,
        method,
    )
}

/// The smooth material of legacy material argument `pos`, after checking the block and
/// orientation arguments that follow it.
fn converted(args: &[Value], pos: usize, method: &str) -> mlua::Result<Material> {
    let nil = Value::Nil;
    let at = |i: usize| args.get(i - 1).unwrap_or(&nil);
    let value = enum_arg(at(pos), "CellMaterial", method, pos)?;
    enum_arg(at(pos + 1), "CellBlock", method, pos + 1)?;
    enum_arg(at(pos + 2), "CellOrientation", method, pos + 2)?;
    CONVERTED
        .iter()
        .find(|(v, _, _)| *v == value)
        .map(|(_, _, m)| *m)
        .ok_or_else(|| {
            mlua::Error::runtime(format!(
                "Terrain:{method}: argument {pos} must be an Enum.CellMaterial"
            ))
        })
}

/// The voxel a legacy cell of `m` is: full, or empty for Empty (water fills the liquid).
fn full(m: Material) -> Voxel {
    Voxel::solid(m, 255)
}

fn set_cells(
    lua: &Lua,
    this: &Instance,
    cells: CellRegion,
    m: Material,
    method: &str,
) -> mlua::Result<()> {
    with_terrain(lua, this, method, true, |t| {
        write_cells(t, cells, full(m), method)
    })
}

fn item(lua: &Lua, name: &'static str, value: u32) -> mlua::Result<Value> {
    procmodel_luau_types::variant_to_lua(
        lua,
        &rbx_types::Variant::Enum(rbx_types::Enum::from_u32(value)),
        Some(name),
    )
}

pub fn register(m: &mut MethodTable) {
    m.class("Terrain");
    m.add_method("SetCell", |lua, this, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        let at = cell(&a, "SetCell")?;
        let material = converted(&a, 4, "SetCell")?;
        set_cells(
            lua,
            this,
            CellRegion::from_min_size(at, glam::IVec3::ONE),
            material,
            "SetCell",
        )
    });
    m.add_method("SetCells", |lua, this, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        let region = match a.first() {
            Some(v @ Value::UserData(_)) => Region3int16::from_value(v),
            _ => None,
        }
        .ok_or_else(|| {
            mlua::Error::runtime(format!(
                "Terrain:SetCells: argument 1 must be a Region3int16, got {}",
                procmodel_luau_types::type_name(a.first().unwrap_or(&Value::Nil))
            ))
        })?;
        let material = converted(&a, 2, "SetCells")?;
        let cells = inclusive_cells(&region, "SetCells")?;
        set_cells(lua, this, cells, material, "SetCells")
    });
    m.add_method("SetWaterCell", |lua, this, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        let at = cell(&a, "SetWaterCell")?;
        let nil = Value::Nil;
        enum_arg(a.get(3).unwrap_or(&nil), "WaterForce", "SetWaterCell", 4)?;
        enum_arg(
            a.get(4).unwrap_or(&nil),
            "WaterDirection",
            "SetWaterCell",
            5,
        )?;
        set_cells(
            lua,
            this,
            CellRegion::from_min_size(at, glam::IVec3::ONE),
            Material::Water,
            "SetWaterCell",
        )
    });
    m.add_method("GetCell", |lua, this, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        let at = cell(&a, "GetCell")?;
        let v = read_voxels(lua, this, "GetCell", |t| t.get(at))?;
        let material = if v.occupancy > 0 {
            legacy(v.material)
        } else if v.liquid > 0 {
            legacy(Material::Water)
        } else {
            0
        };
        Ok((
            item(lua, "CellMaterial", material)?,
            item(lua, "CellBlock", 0)?,
            item(lua, "CellOrientation", 1)?,
        ))
    });
    m.add_method("GetWaterCell", |lua, this, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        let at = cell(&a, "GetWaterCell")?;
        let v = read_voxels(lua, this, "GetWaterCell", |t| t.get(at))?;
        Ok((
            v.liquid > 0,
            item(lua, "WaterForce", 0)?,
            item(lua, "WaterDirection", 0)?,
        ))
    });
    m.add_method("AutowedgeCell", |_, _, a: MultiValue| {
        let a: Vec<Value> = a.into_iter().collect();
        cell(&a, "AutowedgeCell")?;
        Ok(true)
    });
    m.add_method("AutowedgeCells", |_, _, _a: MultiValue| Ok(()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every legacy material converts, and reads back as itself or as the legacy material
    /// named for its smooth one.
    #[test]
    fn legacy_materials_round_trip_through_their_conversion() {
        for (_, name, m) in CONVERTED {
            let back = legacy(m);
            let back_name = CONVERTED.iter().find(|(v, _, _)| *v == back).unwrap().1;
            assert_eq!(
                CONVERTED[back as usize].2, m,
                "{name} reads back as {back_name}"
            );
        }
    }
}
