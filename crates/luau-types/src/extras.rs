//! Less common datatypes: `Ray`, `PhysicalProperties`, `Axes`, `Faces`, `Region3`, and the
//! Variant conversions for them.

use glam::Vec3;
use mlua::{
    IntoLua, Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value,
};
use rbx_types::{CustomPhysicalProperties, Variant, VariantType};

use crate::ConvertError;
use crate::args::{Args, as_ud, fmt_num, impl_from_lua, no_member};
use crate::cframe::CFrame;
use crate::enums::EnumItem;
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
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<Ray>(&a), as_ud::<Ray>(&b)), (Some(a), Some(b)) if a == b))
        });
        m.add_meta_function(MetaMethod::Index, |_, (_, k): (Value, mlua::LuaString)| {
            Err::<(), _>(no_member(&k.to_string_lossy(), "Ray"))
        });
    }
}

fn closest(r: &Ray, p: Vec3) -> Vec3 {
    let d = r.direction.normalize_or_zero();
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
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(
                matches!((as_ud::<PhysicalProperties>(&a), as_ud::<PhysicalProperties>(&b)),
                (Some(a), Some(b)) if a == b),
            )
        });
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
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<Faces>(&a), as_ud::<Faces>(&b)), (Some(a), Some(b)) if a == b))
        });
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
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<Axes>(&a), as_ud::<Axes>(&b)), (Some(a), Some(b)) if a == b))
        });
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
        m.add_meta_function(MetaMethod::Eq, |_, (a, b): (Value, Value)| {
            Ok(matches!((as_ud::<Region3>(&a), as_ud::<Region3>(&b)), (Some(a), Some(b)) if a == b))
        });
    }
}

/// Reads Faces/Axes constructor arguments: `NormalId` or `Axis` EnumItems.
fn enum_items(a: &Args) -> mlua::Result<Vec<EnumItem>> {
    (1..=a.len())
        .map(|i| a.ud::<EnumItem>(i, "EnumItem"))
        .collect()
}

/// Installs `Ray`, `PhysicalProperties`, `Faces`, `Axes` and `Region3`.
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let ctor = |global: &str, f: mlua::Function| -> mlua::Result<()> {
        let t = lua.create_table()?;
        t.raw_set("new", f)?;
        crate::args::install_global(lua, global, t)
    };
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
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            Ok(PhysicalProperties(CustomPhysicalProperties::new(
                a.f32(1)?,
                a.f32(2)?,
                a.f32(3)?,
                a.opt_f32(4, 1.0)?,
                a.opt_f32(5, 1.0)?,
                a.opt_f32(6, 1.0)?,
            )))
        })?,
    )?;
    ctor(
        "Faces",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("new", a);
            let mut bits = 0u8;
            for item in enum_items(&a)? {
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
            for item in enum_items(&a)? {
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
            Ok(Region3 {
                min: p.min(q),
                max: p.max(q),
            })
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
        Variant::Region3int16(r) => {
            let f = |v: rbx_types::Vector3int16| Vec3::new(v.x as f32, v.y as f32, v.z as f32);
            Region3 {
                min: f(r.min),
                max: f(r.max),
            }
            .into_lua(lua)
        }
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
        other => {
            return Err(ConvertError::message(format!(
                "{other:?} properties cannot be set from Luau"
            )));
        }
    })
}
