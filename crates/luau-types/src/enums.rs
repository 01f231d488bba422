//! `Enum`, `Enum.X` and `EnumItem` from the bundled reflection database, built lazily per VM.
//!
//! Enum and EnumItem userdata are cached per VM (app data) so each item is a single object:
//! `==` and use as a table key behave as in Roblox.

use std::cmp::Ordering;
use std::collections::HashMap;

use mlua::{AnyUserData, Lua, MetaMethod, MultiValue, UserDataFields, UserDataMethods, Value};
use rbx_reflection::EnumDescriptor;

use crate::args::{Args, as_ud, no_member};
use crate::tagged::Tagged;

/// The reflection database this crate reads: always the bundled one (no file or environment
/// lookups, so every run sees the same enums).
pub fn database() -> &'static rbx_reflection::ReflectionDatabase<'static> {
    rbx_reflection_database::get_bundled()
}

fn descriptor(enum_name: &str) -> Option<&'static EnumDescriptor<'static>> {
    database().enums.get(enum_name)
}

/// Enum items renamed by Roblox whose old names scripts still use and Roblox still accepts
/// (the API dump's `LegacyNames`; the reflection database does not carry them): (enum,
/// legacy name, the item's name now), sorted by enum and legacy name.
const LEGACY_NAMES: &[(&str, &str, &str)] = &[
    ("AccessoryType", "TeeShirt", "TShirt"),
    ("AssetType", "TeeShirt", "TShirt"),
    ("AssetType", "TeeShirtAccessory", "TShirtAccessory"),
    ("AvatarAssetType", "TeeShirtAccessory", "TShirtAccessory"),
    ("Axis", "Back", "Z"),
    ("Axis", "Bottom", "Y"),
    ("Axis", "Front", "Z"),
    ("Axis", "Left", "X"),
    ("Axis", "Right", "X"),
    ("Axis", "Top", "Y"),
    ("BinType", "Laser", "Script"),
    ("BinType", "Rocket", "Script"),
    ("BinType", "Slingshot", "Script"),
    ("CatalogSortType", "RecentlyUpdated", "RecentlyCreated"),
    ("ContextActionPriority", "Default", "Medium"),
    ("ControlMode", "Mouse Lock Switch", "MouseLockSwitch"),
    ("ExplosionType", "CratersAndDebris", "Craters"),
    ("Font", "GothamSemibold", "GothamMedium"),
    ("Font", "Montserrat", "Gotham"),
    ("Font", "MontserratBlack", "GothamBlack"),
    ("Font", "MontserratBold", "GothamBold"),
    ("Font", "MontserratMedium", "GothamMedium"),
    ("FormFactor", "Block", "Brick"),
    ("InputType", "Action1", "NoInput"),
    ("InputType", "Action2", "NoInput"),
    ("InputType", "Action3", "NoInput"),
    ("InputType", "Action4", "NoInput"),
    ("InputType", "Action5", "NoInput"),
    ("InputType", "LeftTread", "NoInput"),
    ("InputType", "RightTread", "NoInput"),
    ("InputType", "Steer", "NoInput"),
    ("InputType", "Throtle", "NoInput"),
    ("InputType", "Throttle", "NoInput"),
    ("InputType", "UpDown", "NoInput"),
    ("Material", "Aluminum", "Foil"),
    ("Material", "Corroded Metal", "CorrodedMetal"),
    ("ModelLevelOfDetail", "Enabled", "StreamingMesh"),
    ("QualityLevel", "Level  1", "Level01"),
    ("QualityLevel", "Level  2", "Level02"),
    ("QualityLevel", "Level  3", "Level03"),
    ("QualityLevel", "Level  4", "Level04"),
    ("QualityLevel", "Level  5", "Level05"),
    ("QualityLevel", "Level  6", "Level06"),
    ("QualityLevel", "Level  7", "Level07"),
    ("QualityLevel", "Level  8", "Level08"),
    ("QualityLevel", "Level  9", "Level09"),
    ("QualityLevel", "Level 10", "Level10"),
    ("QualityLevel", "Level 11", "Level11"),
    ("QualityLevel", "Level 12", "Level12"),
    ("QualityLevel", "Level 13", "Level13"),
    ("QualityLevel", "Level 14", "Level14"),
    ("QualityLevel", "Level 15", "Level15"),
    ("QualityLevel", "Level 16", "Level16"),
    ("QualityLevel", "Level 17", "Level17"),
    ("QualityLevel", "Level 18", "Level18"),
    ("QualityLevel", "Level 19", "Level19"),
    ("QualityLevel", "Level 20", "Level20"),
    ("QualityLevel", "Level 21", "Level21"),
    ("RaycastFilterType", "Blacklist", "Exclude"),
    ("RaycastFilterType", "Whitelist", "Include"),
    ("Style", "Alternating Supports", "AlternatingSupports"),
    ("Style", "Bridge Style Supports", "BridgeStyleSupports"),
    ("Style", "No Supports", "NoSupports"),
    ("SurfaceType", "Bumps", "Glue"),
    ("SurfaceType", "Spawn", "Smooth"),
    ("SurfaceType", "Unjoinable", "Smooth"),
    ("ThreadPoolConfig", "PartialThread", "Auto"),
];

/// The current name of `enum_name`'s item once called `legacy`.
fn legacy_item(enum_name: &str, legacy: &str) -> Option<&'static str> {
    LEGACY_NAMES
        .binary_search_by(|&(e, l, _)| (e, l).cmp(&(enum_name, legacy)))
        .ok()
        .map(|i| LEGACY_NAMES[i].2)
}

/// One Roblox `EnumItem`, e.g. `Enum.Material.Plastic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EnumItem {
    /// The enum's name, e.g. `Material`.
    pub enum_name: &'static str,
    /// The item's name, e.g. `Plastic`.
    pub name: &'static str,
    /// The item's value, e.g. 256.
    pub value: u32,
}

crate::tagged::impl_tagged!(EnumItem);

impl EnumItem {
    /// Looks up `Enum.<enum_name>.<name>`; a legacy name (`Enum.RaycastFilterType.Blacklist`)
    /// gives the item that carries it now.
    pub fn from_name(enum_name: &str, name: &str) -> Option<Self> {
        let desc = descriptor(enum_name)?;
        let (n, v) = match desc.items.get_key_value(name) {
            Some(found) => found,
            None => desc.items.get_key_value(legacy_item(enum_name, name)?)?,
        };
        Some(EnumItem {
            enum_name: desc.name,
            name: n,
            value: *v,
        })
    }

    /// Looks up the item of `enum_name` with `value` (the first by name when values alias).
    pub fn from_value(enum_name: &str, value: u32) -> Option<Self> {
        let desc = descriptor(enum_name)?;
        let name = desc
            .items
            .iter()
            .filter(|(_, v)| **v == value)
            .map(|(n, _)| n.as_ref())
            .min()?;
        Some(EnumItem {
            enum_name: desc.name,
            name,
            value,
        })
    }

    /// The lowest value among the items of `enum_name` (no allocation), if it has any.
    pub fn lowest_value(enum_name: &str) -> Option<u32> {
        descriptor(enum_name)?.items.values().copied().min()
    }

    /// Every item of `enum_name`, sorted by value then name.
    pub fn all(enum_name: &str) -> Vec<Self> {
        let Some(desc) = descriptor(enum_name) else {
            return Vec::new();
        };
        let mut items: Vec<EnumItem> = desc
            .items
            .iter()
            .map(|(n, v)| EnumItem {
                enum_name: desc.name,
                name: n,
                value: *v,
            })
            .collect();
        items.sort_by(|a, b| match a.value.cmp(&b.value) {
            Ordering::Equal => a.name.cmp(b.name),
            o => o,
        });
        items
    }
}

impl From<EnumItem> for rbx_types::EnumItem {
    fn from(e: EnumItem) -> Self {
        rbx_types::EnumItem {
            ty: e.enum_name.to_string(),
            value: e.value,
        }
    }
}

impl TryFrom<rbx_types::EnumItem> for EnumItem {
    type Error = crate::ConvertError;
    fn try_from(e: rbx_types::EnumItem) -> Result<Self, Self::Error> {
        EnumItem::from_value(&e.ty, e.value).ok_or_else(|| {
            crate::ConvertError::message(format!(
                "{} is not a valid value of Enum.{}",
                e.value, e.ty
            ))
        })
    }
}

/// Per-VM cache of Enum and EnumItem userdata, keyed by the database's `'static` names.
#[derive(Default)]
struct EnumCache {
    enums: HashMap<&'static str, AnyUserData>,
    items: HashMap<(&'static str, &'static str), AnyUserData>,
}

/// Runs `f` on the VM's cache; `None` when there is none (the cache is installed by
/// [`register`]) or it is busy, in which case callers create uncached userdata.
fn with_cache<R>(lua: &Lua, f: impl FnOnce(&mut EnumCache) -> R) -> Option<R> {
    match lua.try_app_data_mut::<EnumCache>() {
        Ok(Some(mut cache)) => Some(f(&mut cache)),
        _ => None,
    }
}

/// The VM's unique userdata for `item` (created on first use), so `==`, `rawequal` and table
/// keys behave as in Roblox. Prefer this over `IntoLua`, which makes a fresh userdata.
pub fn enum_item_value(lua: &Lua, item: EnumItem) -> mlua::Result<Value> {
    let key = (item.enum_name, item.name);
    if let Some(ud) = with_cache(lua, |c| c.items.get(&key).cloned()).flatten() {
        return Ok(Value::UserData(ud));
    }
    let v = crate::tagged::to_value(lua, item)?;
    if let Value::UserData(ud) = &v {
        with_cache(lua, |c| c.items.insert(key, ud.clone()));
    }
    Ok(v)
}

/// A Roblox `Enum` object such as `Enum.Material`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LuaEnum {
    /// The enum's name.
    pub name: &'static str,
}

fn enum_value(lua: &Lua, name: &str) -> mlua::Result<Option<Value>> {
    let Some(desc) = descriptor(name) else {
        return Ok(None);
    };
    if let Some(ud) = with_cache(lua, |c| c.enums.get(desc.name).cloned()).flatten() {
        return Ok(Some(Value::UserData(ud)));
    }
    let v = crate::tagged::to_value(lua, LuaEnum { name: desc.name })?;
    if let Value::UserData(ud) = &v {
        with_cache(lua, |c| c.enums.insert(desc.name, ud.clone()));
    }
    Ok(Some(v))
}

impl Tagged for LuaEnum {
    const TAG: std::ffi::c_int = crate::tagged::TAG_ENUM;
    const NAME: &'static str = "Enum";

    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Enum");
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("GetEnumItems", |lua, e, ()| {
            let items = EnumItem::all(e.name);
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for item in items {
                t.raw_push(enum_item_value(lua, item)?)?;
            }
            Ok(t)
        });
        m.add_method("FromName", |lua, e, a: MultiValue| {
            let a = Args::new("FromName", a);
            let name = a.string(1)?;
            match EnumItem::from_name(e.name, &name) {
                Some(item) => enum_item_value(lua, item),
                None => Ok(Value::Nil),
            }
        });
        m.add_method("FromValue", |lua, e, a: MultiValue| {
            let a = Args::new("FromValue", a);
            let n = a.number(1)?;
            if n < 0.0 || n.fract() != 0.0 {
                return Ok(Value::Nil);
            }
            match EnumItem::from_value(e.name, n as u32) {
                Some(item) => enum_item_value(lua, item),
                None => Ok(Value::Nil),
            }
        });
        m.add_meta_method(MetaMethod::ToString, |_, e, ()| Ok(e.name));
        m.add_meta_method(MetaMethod::Index, |lua, e, k: mlua::LuaString| {
            let k = k.to_string_lossy();
            match EnumItem::from_name(e.name, &k) {
                Some(item) => enum_item_value(lua, item),
                None => Err(no_member(&k, &format!("Enum.{}", e.name))),
            }
        });
    }
}

crate::tagged::impl_tagged!(LuaEnum);

/// The global `Enum` object (typeof `Enums`).
#[derive(Clone, Copy, Debug)]
struct Enums;

crate::tagged::impl_tagged!(Enums);

impl Tagged for Enums {
    const TAG: std::ffi::c_int = crate::tagged::TAG_ENUMS;
    const NAME: &'static str = "Enums";

    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Enums");
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("GetEnums", |lua, _, ()| {
            let mut names: Vec<&str> = database().enums.keys().map(|k| k.as_ref()).collect();
            names.sort_unstable();
            let t = lua.create_table_with_capacity(names.len(), 0)?;
            for name in names {
                if let Some(v) = enum_value(lua, name)? {
                    t.raw_push(v)?;
                }
            }
            Ok(t)
        });
        m.add_meta_method(MetaMethod::ToString, |_, _, ()| Ok("Enums"));
        m.add_meta_method(MetaMethod::Index, |lua, _, k: mlua::LuaString| {
            let k = k.to_string_lossy();
            enum_value(lua, &k)?.ok_or_else(|| no_member(&k, "Enum"))
        });
    }
}

impl crate::tagged::FastFields for EnumItem {
    fn field(&self, key: &[u8]) -> Option<crate::tagged::Field<EnumItem>> {
        use crate::tagged::Field;
        Some(match key {
            b"Name" => Field::Str(self.name),
            b"Value" => Field::Number(self.value.into()),
            _ => return None,
        })
    }
}

impl Tagged for EnumItem {
    const TAG: std::ffi::c_int = crate::tagged::TAG_ENUM_ITEM;
    const NAME: &'static str = "EnumItem";

    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "EnumItem");
        f.add_field_method_get("Name", |_, e| Ok(e.name));
        f.add_field_method_get("Value", |_, e| Ok(e.value));
        f.add_field_method_get("EnumType", |lua, e| enum_value(lua, e.enum_name));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("IsA", |_, e, a: MultiValue| {
            let a = Args::new("IsA", a);
            Ok(a.string(1)? == e.enum_name)
        });
        m.add_meta_method(MetaMethod::ToString, |_, e, ()| {
            Ok(format!("Enum.{}.{}", e.enum_name, e.name))
        });
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(match (as_ud::<EnumItem>(&a), as_ud::<EnumItem>(&b)) {
                (Some(a), Some(b)) => a.enum_name == b.enum_name && a.value == b.value,
                _ => false,
            })
        });
        m.add_meta_method(MetaMethod::Index, |_, e, k: mlua::LuaString| {
            Err::<(), _>(no_member(
                &k.to_string_lossy(),
                &format!("Enum.{}.{}", e.enum_name, e.name),
            ))
        });
    }
}

/// Installs the global `Enum` and the VM's (empty) Enum/EnumItem cache.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    // Fails only if the host holds an app-data borrow right now; items then just aren't cached.
    let _ = lua.try_set_app_data(EnumCache::default());
    crate::tagged::register::<EnumItem>(lua, &[], crate::tagged::fields_index::<EnumItem>())?;
    // `Enum` and `Enum.X` are unique objects with fixed members: lookups are memoised.
    crate::tagged::register::<LuaEnum>(lua, &[], crate::tagged::Index::Memo)?;
    crate::tagged::register::<Enums>(lua, &[], crate::tagged::Index::Memo)?;
    lua.globals().set("Enum", Enums)
}

#[cfg(test)]
mod legacy_tests {
    use super::*;

    /// The table is sorted (the look-up is a binary search), and every legacy name leads to
    /// an item the database has.
    #[test]
    fn legacy_names_are_sorted_and_lead_to_items() {
        assert!(
            LEGACY_NAMES
                .windows(2)
                .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1))
        );
        for &(e, legacy, now) in LEGACY_NAMES {
            let item = EnumItem::from_name(e, legacy);
            assert!(item.is_some_and(|i| i.name == now), "Enum.{e}.{legacy}");
        }
    }
}
