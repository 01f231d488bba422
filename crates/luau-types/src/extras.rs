//! Less common datatypes: `Ray`, `PhysicalProperties`, `Axes`, `Faces`, `Region3`, and the
//! Variant conversions for them (and for the 16-bit integer types of [`crate::int16`] and
//! [`crate::content::Content`]).

use glam::Vec3;
use mlua::{
    IntoLua, Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value,
};
use rbx_types::{CustomPhysicalProperties, Variant, VariantType};

use crate::ConvertError;
use crate::args::{Args, as_ud, fmt_num, impl_from_lua};
use crate::cframe::CFrame;
use crate::content::Content;
use crate::enums::EnumItem;
use crate::int16::{Region3int16, Vector2int16, Vector3int16};
use crate::vector3::Vector3;

/// A Roblox `Ray`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Ray {
    /// Start point.
    pub origin: Vec3,
    /// Direction (not normalised).
    pub direction: Vec3,
}

/// Roblox `PhysicalProperties` (custom values; `nil` on a part means the material default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicalProperties(pub CustomPhysicalProperties);

/// Roblox `Faces`: a set of `NormalId`s (bit `1 << NormalId.Value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Faces(pub u8);

/// Roblox `Axes`: a set of axes (X = 1, Y = 2, Z = 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Axes(pub u8);

/// Roblox `Region3`: an axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Region3 {
    /// Minimum corner.
    pub min: Vec3,
    /// Maximum corner.
    pub max: Vec3,
}

impl_from_lua!(Ray => "Ray", PhysicalProperties => "PhysicalProperties", Faces => "Faces",
    Axes => "Axes", Region3 => "Region3");

fn v3(v: rbx_types::Vector3) -> Vec3 {
    Vector3::from(v).0
}

fn rv3(v: Vec3) -> rbx_types::Vector3 {
    Vector3(v).into()
}

impl UserData for Ray {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Ray");
        f.add_field_method_get("Origin", |_, r| Ok(Vector3(r.origin)));
        f.add_field_method_get("Direction", |_, r| Ok(Vector3(r.direction)));
        f.add_field_method_get("Unit", |_, r| {
            Ok(Ray {
                origin: r.origin,
                direction: r.direction.normalize(),
            })
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("ClosestPoint", |_, r, a: MultiValue| {
            let p = Args::new("ClosestPoint", a).ud::<Vector3>(1, "Vector3")?.0;
            Ok(Vector3(closest(r, p)))
        });
        m.add_method("Distance", |_, r, a: MultiValue| {
            let p = Args::new("Distance", a).ud::<Vector3>(1, "Vector3")?.0;
            Ok(closest(r, p).distance(p))
        });
        m.add_meta_method(MetaMethod::ToString, |_, r, ()| {
            let f = |v: Vec3| format!("{}, {}, {}", fmt_num(v.x), fmt_num(v.y), fmt_num(v.z));
            Ok(format!("{{{}}}, {{{}}}", f(r.origin), f(r.direction)))
        });
        crate::args::value_meta::<Ray, M>(m, "Ray");
    }
}

/// Roblox's `Ray:ClosestPoint`: the projection onto the ray, clamped to its origin. As the
/// reference warns, the direction is used as given, so only unit rays give the true closest
/// point.
fn closest(r: &Ray, p: Vec3) -> Vec3 {
    let d = r.direction;
    r.origin + d * (p - r.origin).dot(d).max(0.0)
}

impl UserData for PhysicalProperties {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "PhysicalProperties");
        f.add_field_method_get("Density", |_, p| Ok(p.0.density()));
        f.add_field_method_get("Friction", |_, p| Ok(p.0.friction()));
        f.add_field_method_get("Elasticity", |_, p| Ok(p.0.elasticity()));
        f.add_field_method_get("FrictionWeight", |_, p| Ok(p.0.friction_weight()));
        f.add_field_method_get("ElasticityWeight", |_, p| Ok(p.0.elasticity_weight()));
        f.add_field_method_get("AcousticAbsorption", |_, p| Ok(p.0.acoustic_absorption()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, p, ()| {
            let p = p.0;
            Ok([
                p.density(),
                p.friction(),
                p.elasticity(),
                p.friction_weight(),
                p.elasticity_weight(),
            ]
            .map(fmt_num)
            .join(", "))
        });
        crate::args::value_meta::<PhysicalProperties, M>(m, "PhysicalProperties");
    }
}

const FACE_NAMES: [&str; 6] = ["Right", "Top", "Back", "Left", "Bottom", "Front"];

impl UserData for Faces {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Faces");
        for (i, name) in FACE_NAMES.into_iter().enumerate() {
            f.add_field_method_get(name, move |_, s| Ok(s.0 & (1 << i) != 0));
        }
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            let names: Vec<&str> = (0..6)
                .filter(|i| s.0 & (1 << i) != 0)
                .map(|i| FACE_NAMES[i])
                .collect();
            Ok(names.join(", "))
        });
        crate::args::value_meta::<Faces, M>(m, "Faces");
    }
}

impl UserData for Axes {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Axes");
        for (i, name) in ["X", "Y", "Z"].into_iter().enumerate() {
            f.add_field_method_get(name, move |_, s| Ok(s.0 & (1 << i) != 0));
        }
        // Face aliases: an axis covers both faces along it.
        for (i, name) in FACE_NAMES.into_iter().enumerate() {
            f.add_field_method_get(name, move |_, s| Ok(s.0 & (1 << (i % 3)) != 0));
        }
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, s, ()| {
            let names: Vec<&str> = (0..3)
                .filter(|i| s.0 & (1 << i) != 0)
                .map(|i| ["X", "Y", "Z"][i])
                .collect();
            Ok(names.join(", "))
        });
        crate::args::value_meta::<Axes, M>(m, "Axes");
    }
}

impl UserData for Region3 {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "Region3");
        f.add_field_method_get("CFrame", |_, r| {
            Ok(CFrame::from_position((r.min + r.max) * 0.5))
        });
        f.add_field_method_get("Size", |_, r| Ok(Vector3(r.max - r.min)));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("ExpandToGrid", |_, r, a: MultiValue| {
            let a = Args::new("ExpandToGrid", a);
            let res = a.f32(1)?;
            if !(res > 0.0 && res.is_finite()) {
                return Err(a.error(1, "resolution must be a positive number"));
            }
            Ok(r.expand_to_grid(res))
        });
        m.add_meta_method(MetaMethod::ToString, |_, r, ()| {
            let f = |v: Vec3| format!("{}, {}, {}", fmt_num(v.x), fmt_num(v.y), fmt_num(v.z));
            Ok(format!("{}; {}", f(r.min), f(r.max)))
        });
        crate::args::value_meta::<Region3, M>(m, "Region3");
    }
}

impl Region3 {
    /// `Region3:ExpandToGrid(res)`: the minimum corner rounded down and the maximum rounded
    /// up to multiples of `res` (`res > 0`), so the region never shrinks.
    pub fn expand_to_grid(&self, res: f32) -> Region3 {
        Region3 {
            min: (self.min / res).floor() * res,
            max: (self.max / res).ceil() * res,
        }
    }
}

/// Reads Faces/Axes constructor arguments: the EnumItems among them (other values are
/// ignored, as the reference says of `Faces.new`).
fn enum_items(a: &Args) -> Vec<EnumItem> {
    (1..=a.len())
        .filter_map(|i| as_ud::<EnumItem>(a.get(i)))
        .collect()
}

/// One row of the reference's "default physical properties" table: density, elasticity,
/// elasticity weight, friction, friction weight (the table's column order).
type MaterialRow = (&'static str, [f32; 5]);

/// The default physical properties of each `Enum.Material`, from the Roblox reference
/// (create.roblox.com/docs/parts/materials, "Default physical properties"). `Air` and `Water`
/// (terrain only) are not in that table; their values are those of the engine's API dump.
const MATERIAL_DEFAULTS: [MaterialRow; 45] = [
    ("Air", [0.01, 0.01, 1.0, 0.01, 1.0]),
    ("Asphalt", [2.36, 0.2, 1.0, 0.8, 0.3]),
    ("Basalt", [2.691, 0.15, 1.0, 0.7, 0.3]),
    ("Brick", [1.922, 0.15, 1.0, 0.8, 0.3]),
    ("Cardboard", [0.7, 0.05, 2.0, 0.5, 1.0]),
    ("Carpet", [1.1, 0.25, 2.0, 0.4, 1.0]),
    ("CeramicTiles", [2.4, 0.2, 1.0, 0.51, 1.0]),
    ("ClayRoofTiles", [2.0, 0.2, 1.0, 0.51, 1.0]),
    ("Cobblestone", [2.691, 0.17, 1.0, 0.5, 1.0]),
    ("Concrete", [2.403, 0.2, 1.0, 0.7, 0.3]),
    ("CorrodedMetal", [7.85, 0.2, 1.0, 0.7, 1.0]),
    ("CrackedLava", [2.691, 0.15, 1.0, 0.65, 1.0]),
    ("DiamondPlate", [7.85, 0.25, 1.0, 0.35, 1.0]),
    ("Fabric", [0.7, 0.05, 1.0, 0.35, 1.0]),
    ("Foil", [2.7, 0.25, 1.0, 0.4, 1.0]),
    ("ForceField", [2.403, 0.2, 1.0, 0.25, 1.0]),
    ("Glacier", [0.919, 0.15, 1.0, 0.05, 2.0]),
    ("Glass", [2.403, 0.2, 1.0, 0.25, 1.0]),
    ("Granite", [2.691, 0.2, 1.0, 0.4, 1.0]),
    ("Grass", [0.9, 0.1, 1.5, 0.4, 1.0]),
    ("Ground", [0.9, 0.1, 1.0, 0.45, 1.0]),
    ("Ice", [0.919, 0.15, 1.0, 0.02, 3.0]),
    ("LeafyGrass", [0.9, 0.1, 2.0, 0.4, 2.0]),
    ("Leather", [0.86, 0.25, 1.0, 0.35, 1.0]),
    ("Limestone", [2.691, 0.15, 1.0, 0.5, 1.0]),
    ("Marble", [2.563, 0.17, 1.0, 0.2, 1.0]),
    ("Metal", [7.85, 0.25, 1.0, 0.4, 1.0]),
    ("Mud", [0.9, 0.07, 4.0, 0.3, 3.0]),
    ("Neon", [0.7, 0.2, 1.0, 0.3, 1.0]),
    ("Pavement", [2.691, 0.17, 1.0, 0.5, 0.3]),
    ("Pebble", [2.403, 0.17, 1.5, 0.4, 1.0]),
    ("Plaster", [0.75, 0.2, 1.0, 0.6, 0.3]),
    ("Plastic", [0.7, 0.5, 1.0, 0.3, 1.0]),
    ("Rock", [2.691, 0.17, 1.0, 0.5, 1.0]),
    ("RoofShingles", [2.36, 0.2, 1.0, 0.8, 0.3]),
    ("Rubber", [1.3, 0.95, 2.0, 1.5, 3.0]),
    ("Salt", [2.165, 0.05, 1.0, 0.5, 1.0]),
    ("Sand", [1.602, 0.05, 2.5, 0.5, 5.0]),
    ("Sandstone", [2.691, 0.15, 1.0, 0.5, 5.0]),
    ("Slate", [2.691, 0.2, 1.0, 0.4, 1.0]),
    ("SmoothPlastic", [0.7, 0.5, 1.0, 0.2, 1.0]),
    ("Snow", [0.9, 0.03, 4.0, 0.3, 3.0]),
    ("Water", [1.0, 0.01, 1.0, 0.005, 1.0]),
    ("Wood", [0.35, 0.2, 1.0, 0.48, 1.0]),
    ("WoodPlanks", [0.35, 0.2, 1.0, 0.48, 1.0]),
];

impl PhysicalProperties {
    /// `PhysicalProperties.new(material)`: the material's defaults (AcousticAbsorption 1), or
    /// `None` for a name that is not an `Enum.Material` item.
    pub fn for_material(name: &str) -> Option<PhysicalProperties> {
        let i = MATERIAL_DEFAULTS
            .binary_search_by(|(n, _)| n.cmp(&name))
            .ok()?;
        let [
            density,
            elasticity,
            elasticity_weight,
            friction,
            friction_weight,
        ] = MATERIAL_DEFAULTS[i].1;
        Some(PhysicalProperties(CustomPhysicalProperties::new(
            density,
            friction,
            elasticity,
            friction_weight,
            elasticity_weight,
            1.0,
        )))
    }

    /// The numeric constructors, each value clamped to the reference's range: density
    /// [0.0001, 100], friction [0, 2], elasticity [0, 1], weights [0, 100], acoustic
    /// absorption [0, 1].
    pub fn clamped(values: [f32; 6]) -> PhysicalProperties {
        let [d, f, e, fw, ew, aa] = values;
        PhysicalProperties(CustomPhysicalProperties::new(
            d.clamp(0.0001, 100.0),
            f.clamp(0.0, 2.0),
            e.clamp(0.0, 1.0),
            fw.clamp(0.0, 100.0),
            ew.clamp(0.0, 100.0),
            aa.clamp(0.0, 1.0),
        ))
    }
}

fn physical_properties_new(a: &Args) -> mlua::Result<PhysicalProperties> {
    if let Some(item) = as_ud::<EnumItem>(a.get(1)) {
        if item.enum_name != "Material" {
            return Err(a.bad(1, "Enum.Material"));
        }
        return PhysicalProperties::for_material(item.name).ok_or_else(|| {
            a.error(
                1,
                &format!("Enum.Material.{} has no physical properties", item.name),
            )
        });
    }
    let (d, f, e) = (a.f32(1)?, a.f32(2)?, a.f32(3)?);
    // The 3-, 5- and 6-number forms: weights come as a pair.
    let (fw, ew) = if a.is_nil(4) && a.is_nil(5) {
        (1.0, 1.0)
    } else {
        (a.f32(4)?, a.f32(5)?)
    };
    let aa = a.opt_f32(6, 1.0)?;
    Ok(PhysicalProperties::clamped([d, f, e, fw, ew, aa]))
}

/// Installs `Ray`, `PhysicalProperties`, `Faces`, `Axes` and `Region3`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let ctor = |global: &str, f| crate::args::install_constructor(lua, global, f);
    ctor(
        "Ray",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(Ray {
                origin: a.ud::<Vector3>(1, "Vector3")?.0,
                direction: a.ud::<Vector3>(2, "Vector3")?.0,
            })
        })?,
    )?;
    ctor(
        "PhysicalProperties",
        lua.create_function(|_, a: MultiValue| physical_properties_new(&Args::new("new", a)))?,
    )?;
    ctor(
        "Faces",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let mut bits = 0u8;
            for item in enum_items(&a) {
                if item.enum_name == "NormalId" && item.value < 6 {
                    bits |= 1 << item.value;
                }
            }
            Ok(Faces(bits))
        })?,
    )?;
    ctor(
        "Axes",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let mut bits = 0u8;
            for item in enum_items(&a) {
                match item.enum_name {
                    "Axis" if item.value < 3 => bits |= 1 << item.value,
                    "NormalId" if item.value < 6 => bits |= 1 << (item.value % 3),
                    _ => {}
                }
            }
            Ok(Axes(bits))
        })?,
    )?;
    ctor(
        "Region3",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let (p, q) = (
                a.ud::<Vector3>(1, "Vector3")?.0,
                a.ud::<Vector3>(2, "Vector3")?.0,
            );
            // As given: swapping the corners gives negative size components, as in Roblox.
            Ok(Region3 { min: p, max: q })
        })?,
    )
}

/// `variant_to_lua` for the Variants of this module.
pub(crate) fn variant_to_lua(lua: &Lua, v: &Variant) -> mlua::Result<Value> {
    match v {
        Variant::Ray(r) => Ray {
            origin: v3(r.origin),
            direction: v3(r.direction),
        }
        .into_lua(lua),
        Variant::PhysicalProperties(rbx_types::PhysicalProperties::Custom(p)) => {
            PhysicalProperties(*p).into_lua(lua)
        }
        Variant::PhysicalProperties(_) => Ok(Value::Nil),
        Variant::Faces(f) => Faces(f.bits()).into_lua(lua),
        Variant::Axes(a) => Axes(a.bits()).into_lua(lua),
        Variant::Region3(r) => Region3 {
            min: v3(r.min),
            max: v3(r.max),
        }
        .into_lua(lua),
        Variant::Region3int16(r) => Region3int16::from(*r).into_lua(lua),
        Variant::Vector3int16(v) => Vector3int16::from(*v).into_lua(lua),
        Variant::Vector2int16(v) => Vector2int16::from(*v).into_lua(lua),
        Variant::Content(c) => match Content::try_from(c) {
            Ok(c) => c.into_lua(lua),
            Err(e) => Err(e.into()),
        },
        other => Err(mlua::Error::runtime(format!(
            "{:?} values are not available to Luau",
            other.ty()
        ))),
    }
}

/// `lua_to_variant` for the Variant types of this module.
pub(crate) fn lua_to_variant(v: &Value, ty: VariantType) -> Result<Variant, ConvertError> {
    let want = |name: &str| ConvertError::type_mismatch(name, v);
    Ok(match ty {
        VariantType::Ray => {
            let r = as_ud::<Ray>(v).ok_or_else(|| want("Ray"))?;
            Variant::Ray(rbx_types::Ray::new(rv3(r.origin), rv3(r.direction)))
        }
        VariantType::PhysicalProperties => match v {
            Value::Nil => Variant::PhysicalProperties(rbx_types::PhysicalProperties::Default),
            _ => {
                let p = as_ud::<PhysicalProperties>(v).ok_or_else(|| want("PhysicalProperties"))?;
                Variant::PhysicalProperties(rbx_types::PhysicalProperties::Custom(p.0))
            }
        },
        VariantType::Faces => {
            let f = as_ud::<Faces>(v).ok_or_else(|| want("Faces"))?;
            Variant::Faces(rbx_types::Faces::from_bits(f.0).unwrap_or(rbx_types::Faces::empty()))
        }
        VariantType::Axes => {
            let a = as_ud::<Axes>(v).ok_or_else(|| want("Axes"))?;
            Variant::Axes(rbx_types::Axes::from_bits(a.0).unwrap_or(rbx_types::Axes::empty()))
        }
        VariantType::Region3 => {
            let r = as_ud::<Region3>(v).ok_or_else(|| want("Region3"))?;
            Variant::Region3(rbx_types::Region3::new(rv3(r.min), rv3(r.max)))
        }
        VariantType::Region3int16 => Variant::Region3int16(
            as_ud::<Region3int16>(v)
                .ok_or_else(|| want("Region3int16"))?
                .into(),
        ),
        VariantType::Vector3int16 => Variant::Vector3int16(
            as_ud::<Vector3int16>(v)
                .ok_or_else(|| want("Vector3int16"))?
                .into(),
        ),
        VariantType::Vector2int16 => Variant::Vector2int16(
            as_ud::<Vector2int16>(v)
                .ok_or_else(|| want("Vector2int16"))?
                .into(),
        ),
        // Roblox takes a Content value; a plain URI string is accepted too (the legacy
        // ContentId form scripts still use).
        VariantType::Content => match v {
            Value::String(s) => {
                Variant::Content(Content::from_uri(s.to_string_lossy()).try_into()?)
            }
            _ => Variant::Content(
                as_ud::<Content>(v)
                    .ok_or_else(|| want("Content"))?
                    .try_into()?,
            ),
        },
        other => {
            return Err(ConvertError::message(format!(
                "{other:?} properties cannot be set from Luau"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_material_has_defaults_and_the_table_is_sorted() {
        assert!(MATERIAL_DEFAULTS.windows(2).all(|w| w[0].0 < w[1].0));
        let items = EnumItem::all("Material");
        assert_eq!(items.len(), MATERIAL_DEFAULTS.len());
        for item in items {
            let p = PhysicalProperties::for_material(item.name)
                .unwrap_or_else(|| panic!("no defaults for {}", item.name));
            assert!(p.0.density() > 0.0, "{}", item.name);
        }
        let ice = PhysicalProperties::for_material("Ice").unwrap().0;
        assert_eq!(
            [
                ice.density(),
                ice.friction(),
                ice.elasticity(),
                ice.friction_weight(),
                ice.elasticity_weight()
            ],
            [0.919, 0.02, 0.15, 3.0, 1.0]
        );
        assert!(PhysicalProperties::for_material("Nope").is_none());
    }

    #[test]
    fn expand_to_grid_rounds_min_down_and_max_up() {
        let r = Region3 {
            min: Vec3::new(-1.0, 0.5, 4.0),
            max: Vec3::new(5.0, 6.1, 8.0),
        };
        let g = r.expand_to_grid(4.0);
        assert_eq!(g.min, Vec3::new(-4.0, 0.0, 4.0));
        assert_eq!(g.max, Vec3::new(8.0, 8.0, 8.0));
    }
}
