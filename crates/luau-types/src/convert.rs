//! Conversions between Lua values and `rbx_types::Variant`: property reads and strict writes,
//! attribute values and attribute names.

use mlua::{IntoLua, Lua, Value};
use rbx_reflection::DataType;
use rbx_types::{Variant, VariantType};

use crate::args::{as_number, as_ud};
use crate::enums::{EnumItem, enum_item_value};
use crate::{
    BrickColor, CFrame, Color3, ColorSequence, Font, NumberRange, NumberSequence, Rect, UDim,
    UDim2, Vector2, Vector3, type_name,
};

/// A Lua value that cannot become the requested Roblox value.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ConvertError {
    /// The value has the wrong type: `Vector3 expected, got string` (Roblox's and Lua's order).
    #[error("{expected} expected, got {given}")]
    Type {
        /// What the property or parameter takes.
        expected: String,
        /// `typeof` of what was given.
        given: String,
    },
    /// The value's type cannot be stored as an attribute.
    #[error("type {given} is not supported as an attribute value")]
    UnsupportedAttribute {
        /// `typeof` of what was given.
        given: String,
    },
    /// Anything else (an invalid enum item, an attribute name, ...), already worded.
    #[error("{0}")]
    Invalid(String),
}

impl ConvertError {
    /// A wrong-type error.
    pub fn type_mismatch(expected: impl Into<String>, given: &Value) -> Self {
        ConvertError::Type {
            expected: expected.into(),
            given: type_name(given),
        }
    }

    /// A free-form error.
    pub fn message(msg: impl Into<String>) -> Self {
        ConvertError::Invalid(msg.into())
    }
}

impl From<ConvertError> for mlua::Error {
    fn from(e: ConvertError) -> Self {
        mlua::Error::runtime(e.to_string())
    }
}

fn enum_to_lua(lua: &Lua, enum_name: Option<&str>, value: u32) -> mlua::Result<Value> {
    match enum_name.and_then(|n| EnumItem::from_value(n, value)) {
        Some(item) => enum_item_value(lua, item),
        None => Ok(Value::Number(value as f64)),
    }
}

/// A Variant as a Lua value. `Enum` values become EnumItems when `enum_name` names their enum
/// (else plain numbers). `Ref` and object `Content` are the host's job and are errors here.
pub fn variant_to_lua(lua: &Lua, v: &Variant, enum_name: Option<&str>) -> mlua::Result<Value> {
    let v3 = |v: &rbx_types::Vector3| Vector3::from(*v);
    Ok(match v {
        Variant::Bool(b) => Value::Boolean(*b),
        Variant::Float32(n) => Value::Number(*n as f64),
        Variant::Float64(n) => Value::Number(*n),
        Variant::Int32(n) => Value::Number(*n as f64),
        Variant::Int64(n) => Value::Number(*n as f64),
        Variant::String(s) => Value::String(lua.create_string(s)?),
        Variant::BinaryString(b) => Value::String(lua.create_string(AsRef::<[u8]>::as_ref(b))?),
        Variant::SharedString(s) => Value::String(lua.create_string(s.data())?),
        Variant::ContentId(c) => Value::String(lua.create_string(c.as_str())?),
        Variant::Vector3(v) => v3(v).into_lua(lua)?,
        Variant::Vector2(v) => Vector2::from(*v).into_lua(lua)?,
        Variant::CFrame(c) => CFrame::from(*c).into_lua(lua)?,
        Variant::OptionalCFrame(c) => match c {
            Some(c) => CFrame::from(*c).into_lua(lua)?,
            None => Value::Nil,
        },
        Variant::Color3(c) => Color3::from(*c).into_lua(lua)?,
        Variant::Color3uint8(c) => Color3::from(*c).into_lua(lua)?,
        Variant::BrickColor(b) => BrickColor(*b).into_lua(lua)?,
        Variant::UDim(u) => UDim::from(*u).into_lua(lua)?,
        Variant::UDim2(u) => UDim2::from(*u).into_lua(lua)?,
        Variant::NumberRange(r) => NumberRange::from(*r).into_lua(lua)?,
        Variant::NumberSequence(s) => NumberSequence::from(s.clone()).into_lua(lua)?,
        Variant::ColorSequence(s) => ColorSequence::from(s.clone()).into_lua(lua)?,
        Variant::Rect(r) => Rect::from(*r).into_lua(lua)?,
        Variant::Font(f) => Font(f.clone()).into_lua(lua)?,
        Variant::Enum(e) => enum_to_lua(lua, enum_name, e.to_u32())?,
        Variant::EnumItem(e) => enum_to_lua(lua, Some(&e.ty), e.value)?,
        Variant::Tags(tags) => Value::Table(lua.create_sequence_from(tags.iter())?),
        Variant::Attributes(attrs) => {
            let t = lua.create_table()?;
            for (k, v) in attrs.iter() {
                t.raw_set(k.as_str(), variant_to_lua(lua, v, None)?)?;
            }
            Value::Table(t)
        }
        Variant::UniqueId(id) => Value::String(lua.create_string(id.to_string())?),
        Variant::SecurityCapabilities(c) => {
            crate::capabilities::SecurityCapabilities::from(*c).into_lua(lua)?
        }
        Variant::Ref(_) => return Err(mlua::Error::runtime("Ref values are handled by the host")),
        other => crate::extras::variant_to_lua(lua, other)?,
    })
}

fn number(v: &Value, expected: &str) -> Result<f64, ConvertError> {
    crate::args::to_number(v).ok_or_else(|| ConvertError::type_mismatch(expected, v))
}

fn ud<T: crate::args::FromValue>(v: &Value, expected: &str) -> Result<T, ConvertError> {
    as_ud::<T>(v).ok_or_else(|| ConvertError::type_mismatch(expected, v))
}

/// Like [`ud`], naming the expected type only when the conversion fails (no allocation on
/// the hot path of property writes).
fn udt<T: crate::args::FromValue>(v: &Value, ty: VariantType) -> Result<T, ConvertError> {
    as_ud::<T>(v).ok_or_else(|| ConvertError::type_mismatch(format!("{ty:?}"), v))
}

fn string(v: &Value, expected: &str) -> Result<String, ConvertError> {
    match v {
        Value::String(s) => Ok(s.to_string_lossy()),
        Value::Integer(_) | Value::Number(_) => Ok(format!("{}", as_number(v).unwrap_or(0.0))),
        _ => Err(ConvertError::type_mismatch(expected, v)),
    }
}

fn bytes(v: &Value, expected: &str) -> Result<Vec<u8>, ConvertError> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        _ => Err(ConvertError::type_mismatch(expected, v)),
    }
}

/// An enum property value given as an EnumItem of that enum, its name or its number.
fn enum_value(v: &Value, enum_name: &str) -> Result<Variant, ConvertError> {
    let expected = || format!("Enum.{enum_name}");
    let item = if let Some(item) = as_ud::<EnumItem>(v) {
        if item.enum_name != enum_name {
            return Err(ConvertError::Type {
                expected: expected(),
                given: format!("Enum.{}", item.enum_name),
            });
        }
        Some(item)
    } else if let Value::String(s) = v {
        let name = s.to_string_lossy();
        Some(EnumItem::from_name(enum_name, &name).ok_or_else(|| {
            ConvertError::message(format!("{name} is not a valid member of Enum.{enum_name}"))
        })?)
    } else if let Some(n) = as_number(v) {
        Some(EnumItem::from_value(enum_name, n as u32).ok_or_else(|| {
            ConvertError::message(format!("{n} is not a valid value of Enum.{enum_name}"))
        })?)
    } else {
        None
    };
    item.map(|i| Variant::Enum(rbx_types::Enum::from_u32(i.value)))
        .ok_or_else(|| ConvertError::Type {
            expected: expected(),
            given: type_name(v),
        })
}

/// Strict conversion of a Lua value for a property of type `expected`. `Ref` is the host's job.
pub fn lua_to_variant(v: &Value, expected: &DataType) -> Result<Variant, ConvertError> {
    let ty = match expected {
        DataType::Enum(name) => return enum_value(v, name),
        DataType::Value(ty) => *ty,
        _ => return Err(ConvertError::message("unsupported property data type")),
    };
    Ok(match ty {
        VariantType::Bool => match v {
            Value::Boolean(b) => Variant::Bool(*b),
            _ => return Err(ConvertError::type_mismatch("boolean", v)),
        },
        VariantType::Float32 => Variant::Float32(number(v, "number")? as f32),
        VariantType::Float64 => Variant::Float64(number(v, "number")?),
        VariantType::Int32 => Variant::Int32(number(v, "number")? as i32),
        VariantType::Int64 => Variant::Int64(number(v, "number")? as i64),
        VariantType::String => Variant::String(string(v, "string")?),
        VariantType::ContentId => Variant::ContentId(string(v, "string")?.into()),
        VariantType::BinaryString => Variant::BinaryString(bytes(v, "string")?.into()),
        VariantType::SharedString => {
            Variant::SharedString(rbx_types::SharedString::new(bytes(v, "string")?))
        }
        VariantType::Vector3 => Variant::Vector3(udt::<Vector3>(v, ty)?.into()),
        VariantType::Vector2 => Variant::Vector2(udt::<Vector2>(v, ty)?.into()),
        VariantType::CFrame => Variant::CFrame(udt::<CFrame>(v, ty)?.into()),
        VariantType::OptionalCFrame => match v {
            Value::Nil => Variant::OptionalCFrame(None),
            _ => Variant::OptionalCFrame(Some(ud::<CFrame>(v, "CFrame")?.into())),
        },
        VariantType::Color3 => Variant::Color3(udt::<Color3>(v, ty)?.into()),
        VariantType::Color3uint8 => Variant::Color3uint8(ud::<Color3>(v, "Color3")?.into()),
        VariantType::BrickColor => Variant::BrickColor(udt::<BrickColor>(v, ty)?.0),
        VariantType::UDim => Variant::UDim(udt::<UDim>(v, ty)?.into()),
        VariantType::UDim2 => Variant::UDim2(udt::<UDim2>(v, ty)?.into()),
        VariantType::NumberRange => Variant::NumberRange(udt::<NumberRange>(v, ty)?.into()),
        VariantType::NumberSequence => {
            Variant::NumberSequence(udt::<NumberSequence>(v, ty)?.into())
        }
        VariantType::ColorSequence => Variant::ColorSequence(udt::<ColorSequence>(v, ty)?.into()),
        VariantType::Rect => Variant::Rect(udt::<Rect>(v, ty)?.into()),
        VariantType::Font => Variant::Font(udt::<Font>(v, ty)?.into()),
        VariantType::Enum => match as_ud::<EnumItem>(v) {
            Some(item) => Variant::Enum(rbx_types::Enum::from_u32(item.value)),
            None => Variant::Enum(rbx_types::Enum::from_u32(number(v, "EnumItem")? as u32)),
        },
        VariantType::EnumItem => Variant::EnumItem(ud::<EnumItem>(v, "EnumItem")?.into()),
        VariantType::SecurityCapabilities => Variant::SecurityCapabilities(
            udt::<crate::capabilities::SecurityCapabilities>(v, ty)?.into(),
        ),
        VariantType::Tags => {
            let Value::Table(t) = v else {
                return Err(ConvertError::type_mismatch("table", v));
            };
            let mut tags = Vec::new();
            for item in t.clone().sequence_values::<Value>() {
                let item = item.map_err(|e| ConvertError::message(e.to_string()))?;
                tags.push(string(&item, "string")?);
            }
            Variant::Tags(tags.into())
        }
        VariantType::Ref => {
            return Err(ConvertError::message("Ref values are handled by the host"));
        }
        other => return crate::extras::lua_to_variant(v, other),
    })
}

/// An attribute value under Roblox's rules (nil, meaning "remove", is the caller's job).
pub fn lua_to_attribute(v: &Value) -> Result<Variant, ConvertError> {
    let unsupported = || ConvertError::UnsupportedAttribute {
        given: type_name(v),
    };
    Ok(match v {
        Value::String(s) => Variant::String(s.to_string_lossy()),
        Value::Boolean(b) => Variant::Bool(*b),
        Value::Integer(_) | Value::Number(_) => Variant::Float64(as_number(v).unwrap_or(0.0)),
        Value::Vector(_) => Variant::Vector3(as_ud::<Vector3>(v).unwrap_or_default().into()),
        Value::UserData(_) => {
            macro_rules! try_ud {
                ($($t:ty => $var:ident),+) => {
                    $(if let Some(x) = as_ud::<$t>(v) {
                        return Ok(Variant::$var(x.into()));
                    })+
                };
            }
            try_ud!(UDim => UDim, UDim2 => UDim2, BrickColor => BrickColor, Color3 => Color3,
                Vector2 => Vector2, CFrame => CFrame,
                NumberSequence => NumberSequence, ColorSequence => ColorSequence,
                NumberRange => NumberRange, Rect => Rect, Font => Font, EnumItem => EnumItem);
            return Err(unsupported());
        }
        _ => return Err(unsupported()),
    })
}

/// Roblox attribute-name rules: 1–100 characters from letters, digits, `.`, `-`, `/`, `_`, and no
/// `RBX` prefix.
pub fn validate_attribute_name(name: &str) -> Result<(), ConvertError> {
    let bad = |why: &str| {
        Err(ConvertError::message(format!(
            "attribute name '{name}' {why}"
        )))
    };
    if name.is_empty() {
        return bad("is empty");
    }
    if name.chars().count() > 100 {
        return bad("is longer than 100 characters");
    }
    if name.starts_with("RBX") {
        return bad("uses the reserved prefix RBX");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '/' | '_')))
    {
        return bad(&format!("contains the invalid character {c:?}"));
    }
    Ok(())
}

/// The value a property of type `data_type` reads as when an instance has no value for it and
/// the reflection database gives no default: the type's zero (0, "", false, identity CFrame,
/// black Color3, `UDim2.new()`, empty Faces, `Content.none`, ...), and for an enum its
/// lowest-valued item. `None` for types Luau cannot read (the caller reports an error).
pub fn zero_value(data_type: &DataType) -> Option<Variant> {
    use rbx_types as t;
    let ty = match data_type {
        DataType::Enum(name) => {
            let value = EnumItem::lowest_value(name).unwrap_or(0);
            return Some(Variant::Enum(t::Enum::from_u32(value)));
        }
        DataType::Value(ty) => *ty,
        _ => return None,
    };
    let v3 = t::Vector3::new(0.0, 0.0, 0.0);
    let v2 = t::Vector2::new(0.0, 0.0);
    let black = t::Color3::new(0.0, 0.0, 0.0);
    Some(match ty {
        VariantType::Axes => Variant::Axes(t::Axes::empty()),
        VariantType::BinaryString => Variant::BinaryString(Vec::new().into()),
        VariantType::Bool => Variant::Bool(false),
        VariantType::BrickColor => Variant::BrickColor(t::BrickColor::MediumStoneGrey),
        VariantType::CFrame => Variant::CFrame(t::CFrame::identity()),
        VariantType::Color3 => Variant::Color3(black),
        VariantType::Color3uint8 => Variant::Color3uint8(t::Color3uint8::new(0, 0, 0)),
        VariantType::ColorSequence => Variant::ColorSequence(t::ColorSequence {
            keypoints: vec![
                t::ColorSequenceKeypoint::new(0.0, black),
                t::ColorSequenceKeypoint::new(1.0, black),
            ],
        }),
        VariantType::Content => Variant::Content(t::Content::none()),
        VariantType::ContentId => Variant::ContentId(t::ContentId::new()),
        VariantType::Enum => Variant::Enum(t::Enum::from_u32(0)),
        VariantType::Faces => Variant::Faces(t::Faces::empty()),
        VariantType::Float32 => Variant::Float32(0.0),
        VariantType::Float64 => Variant::Float64(0.0),
        VariantType::Font => Variant::Font(t::Font::default()),
        VariantType::Int32 => Variant::Int32(0),
        VariantType::Int64 => Variant::Int64(0),
        VariantType::NumberRange => Variant::NumberRange(t::NumberRange::new(0.0, 0.0)),
        VariantType::NumberSequence => Variant::NumberSequence(t::NumberSequence {
            keypoints: vec![
                t::NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
                t::NumberSequenceKeypoint::new(1.0, 0.0, 0.0),
            ],
        }),
        VariantType::OptionalCFrame => Variant::OptionalCFrame(None),
        VariantType::PhysicalProperties => {
            Variant::PhysicalProperties(t::PhysicalProperties::Default)
        }
        VariantType::Ray => Variant::Ray(t::Ray::new(v3, v3)),
        VariantType::Rect => Variant::Rect(t::Rect::new(v2, v2)),
        VariantType::Ref => Variant::Ref(t::Ref::none()),
        VariantType::Region3 => Variant::Region3(t::Region3::new(v3, v3)),
        VariantType::Region3int16 => {
            let z = t::Vector3int16::new(0, 0, 0);
            Variant::Region3int16(t::Region3int16::new(z, z))
        }
        VariantType::SharedString => Variant::SharedString(t::SharedString::new(Vec::new())),
        VariantType::String => Variant::String(String::new()),
        VariantType::Tags => Variant::Tags(t::Tags::new()),
        VariantType::UDim => Variant::UDim(t::UDim::new(0.0, 0)),
        VariantType::UDim2 => {
            Variant::UDim2(t::UDim2::new(t::UDim::new(0.0, 0), t::UDim::new(0.0, 0)))
        }
        VariantType::Vector2 => Variant::Vector2(v2),
        VariantType::Vector2int16 => Variant::Vector2int16(t::Vector2int16::new(0, 0)),
        VariantType::Vector3 => Variant::Vector3(v3),
        VariantType::Vector3int16 => Variant::Vector3int16(t::Vector3int16::new(0, 0, 0)),
        VariantType::Attributes => Variant::Attributes(t::Attributes::new()),
        VariantType::SecurityCapabilities => {
            Variant::SecurityCapabilities(t::SecurityCapabilities::default())
        }
        _ => return None,
    })
}
