//! Property and attribute values as Rojo writes them: *explicit* values (`{"Vector3": [1, 2,
//! 3]}`, rbx_types' serde form, not checked against the API) and *implicit* ones (`[1, 2, 3]`),
//! whose type comes from the reflection database's descriptor of the class's property.

use procmodel_dom::{db, find_property};
use rbx_reflection::DataType;
use rbx_types::{
    Attributes, CFrame, Color3, Color3uint8, Content, ContentId, Enum, Font, MaterialColors,
    Matrix3, Tags, Variant, VariantType, Vector2, Vector2int16, Vector3, Vector3int16,
};
use serde_json::Value;

/// Resolves `value` for property `name` of `class`: the name to store it under and its value.
/// Errors are messages for the caller to place (file and field).
pub(crate) fn property(
    class: &str,
    name: &str,
    value: &Value,
) -> Result<(String, Variant), String> {
    let attributes = name == "Attributes" || name == "AttributesSerialize";
    if let Some(v) = explicit(value)? {
        if attributes && matches!(v, Variant::Attributes(_)) {
            return Ok(("Attributes".to_owned(), v));
        }
        return Ok((name.to_owned(), v));
    }
    if attributes {
        return Ok((
            "Attributes".to_owned(),
            Variant::Attributes(attributes_map(value)?),
        ));
    }
    if name == "Tags" {
        return Ok(("Tags".to_owned(), Variant::Tags(tags(value)?)));
    }
    if !db().classes.contains_key(class) {
        return Err(format!(
            "class '{class}' is not in the reflection database, so the type of '{name}' is unknown; write it explicitly, e.g. {{\"String\": \"...\"}}"
        ));
    }
    let Some(info) = find_property(class, name) else {
        return Err(format!(
            "{class} has no property '{name}'; write the value explicitly (e.g. {{\"Float32\": 1}}) to set it anyway"
        ));
    };
    let v = implicit(info.data_type, value)
        .map_err(|e| format!("{class}.{name} is {}: {e}", type_name(info.data_type)))?;
    Ok((info.canonical.to_owned(), v))
}

/// An attribute value: explicit, or a bool, string or number (Rojo's unambiguous forms).
pub(crate) fn attribute(value: &Value) -> Result<Variant, String> {
    if let Some(v) = explicit(value)? {
        return match v {
            Variant::Bool(_)
            | Variant::BrickColor(_)
            | Variant::CFrame(_)
            | Variant::Color3(_)
            | Variant::ColorSequence(_)
            | Variant::Float64(_)
            | Variant::Font(_)
            | Variant::NumberRange(_)
            | Variant::NumberSequence(_)
            | Variant::Rect(_)
            | Variant::String(_)
            | Variant::UDim(_)
            | Variant::UDim2(_)
            | Variant::Vector2(_)
            | Variant::Vector3(_) => Ok(v),
            Variant::Float32(f) => Ok(Variant::Float64(f as f64)),
            Variant::Int32(i) => Ok(Variant::Float64(i as f64)),
            Variant::Int64(i) => Ok(Variant::Float64(i as f64)),
            // Enum attributes (Rojo 7.5): an item the reflection database knows.
            Variant::EnumItem(ref e) => match procmodel_dom::db().enums.get(e.ty.as_str()) {
                None => Err(format!("there is no enum named '{}'", e.ty)),
                Some(en) if !en.items.values().any(|&v| v == e.value) => Err(format!(
                    "Enum.{} has no item with the value {}",
                    e.ty, e.value
                )),
                Some(_) => Ok(v),
            },
            other => Err(format!("an attribute cannot hold a {:?} value", other.ty())),
        };
    }
    match value {
        Value::Bool(b) => Ok(Variant::Bool(*b)),
        Value::String(s) => Ok(Variant::String(s.clone())),
        Value::Number(n) => Ok(Variant::Float64(finite(n)?)),
        Value::Array(_) => Err(
            "an array is ambiguous as an attribute; write it explicitly, e.g. {\"Vector3\": [1, 2, 3]}"
                .into(),
        ),
        Value::Null => Err("null is not a value".into()),
        Value::Object(_) => Err(
            "an object attribute must be one explicit value, e.g. {\"Color3\": [1, 0, 0]}".into(),
        ),
    }
}

/// A map of attribute name → value (each resolved by [`attribute`]); errors name the attribute.
pub(crate) fn attributes_map(value: &Value) -> Result<Attributes, String> {
    let Value::Object(map) = value else {
        return Err("attributes must be an object of name → value".into());
    };
    let mut out = Attributes::new();
    for (k, v) in map {
        out.insert(
            k.clone(),
            attribute(v).map_err(|e| format!("attribute '{k}': {e}"))?,
        );
    }
    Ok(out)
}

fn ref_hint(name: &str) -> String {
    format!(
        "Ref properties cannot be written as values; give the target an \"id\" and set the attribute \"Rojo_Target_{name}\" to it"
    )
}

/// The type name when `value` is an object with exactly one field named after a variant type.
fn explicit_type(value: &Value) -> Option<&str> {
    let Value::Object(map) = value else {
        return None;
    };
    if map.len() != 1 {
        return None;
    }
    let key = map.keys().next()?;
    KNOWN_TYPES.contains(&key.as_str()).then_some(key.as_str())
}

/// Variant type names rbx_types' serde form knows (those Rojo documents, and a few more).
const KNOWN_TYPES: &[&str] = &[
    "Attributes",
    "Axes",
    "BinaryString",
    "Bool",
    "BrickColor",
    "CFrame",
    "Color3",
    "Color3uint8",
    "ColorSequence",
    "Content",
    "ContentId",
    "Enum",
    "EnumItem",
    "Faces",
    "Float32",
    "Float64",
    "Font",
    "Int32",
    "Int64",
    "MaterialColors",
    "NumberRange",
    "NumberSequence",
    "OptionalCFrame",
    "PhysicalProperties",
    "Ray",
    "Rect",
    "Ref",
    "Region3",
    "Region3int16",
    "SecurityCapabilities",
    "String",
    "Tags",
    "UDim",
    "UDim2",
    "UniqueId",
    "Vector2",
    "Vector2int16",
    "Vector3",
    "Vector3int16",
];

/// An explicit value, or None when `value` is not in the explicit form.
fn explicit(value: &Value) -> Result<Option<Variant>, String> {
    let Some(ty) = explicit_type(value) else {
        return Ok(None);
    };
    match ty {
        "Ref" => return Err(ref_hint("<Property>")),
        "UniqueId" => return Err("UniqueId values cannot be written in a project".into()),
        "Attributes" => {
            return Ok(Some(Variant::Attributes(attributes_map(&value[ty])?)));
        }
        _ => {}
    }
    serde_json::from_value::<Variant>(value.clone())
        .map(Some)
        .map_err(|e| format!("not a valid {ty}: {e}"))
}

fn type_name(t: &DataType<'_>) -> String {
    match t {
        DataType::Value(v) => format!("{v:?}"),
        DataType::Enum(e) => format!("an Enum.{e}"),
        _ => "of an unknown type".to_owned(),
    }
}

fn finite(n: &serde_json::Number) -> Result<f64, String> {
    n.as_f64()
        .filter(|f| f.is_finite())
        .ok_or_else(|| format!("{n} is not a finite number"))
}

fn numbers<const N: usize>(value: &Value) -> Result<[f64; N], String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "expected an array of {N} numbers, got {}",
            kind(value)
        ));
    };
    if items.len() != N {
        return Err(format!("expected {N} numbers, got {}", items.len()));
    }
    let mut out = [0.0; N];
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = match item {
            Value::Number(n) => finite(n)?,
            other => return Err(format!("expected numbers, got {}", kind(other))),
        };
    }
    Ok(out)
}

fn int_in<T: TryFrom<i64>>(f: f64, what: &str) -> Result<T, String> {
    if f.fract() != 0.0 {
        return Err(format!("{f} is not an integer"));
    }
    T::try_from(f as i64).map_err(|_| format!("{f} is out of range for {what}"))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn tags(value: &Value) -> Result<Tags, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "Tags must be an array of strings, got {}",
            kind(value)
        ));
    };
    let mut t = Tags::new();
    for item in items {
        match item {
            Value::String(s) => t.push(s),
            other => return Err(format!("a tag must be a string, got {}", kind(other))),
        }
    }
    Ok(t)
}

/// The implicit form of a value of type `t`.
fn implicit(t: &DataType<'_>, value: &Value) -> Result<Variant, String> {
    let expected = |what: &str| format!("expected {what}, got {}", kind(value));
    let ty = match t {
        DataType::Enum(name) => {
            let Value::String(item) = value else {
                return Err(expected("the name of an enum item (a string)"));
            };
            let items = db()
                .enums
                .get(name)
                .ok_or_else(|| format!("Enum.{name} is not in the reflection database"))?;
            let v = items.items.get(item.as_str()).ok_or_else(|| {
                let mut known: Vec<&str> = items.items.keys().copied().collect();
                known.sort_unstable();
                format!(
                    "Enum.{name} has no item '{item}' (it has: {})",
                    known.join(", ")
                )
            })?;
            return Ok(Variant::Enum(Enum::from_u32(*v)));
        }
        DataType::Value(v) => *v,
        _ => return Err("this property's type is unknown; write it explicitly".into()),
    };
    let num = || match value {
        Value::Number(n) => finite(n),
        _ => Err(expected("a number")),
    };
    let string = || match value {
        Value::String(s) => Ok(s.clone()),
        _ => Err(expected("a string")),
    };
    Ok(match ty {
        VariantType::Bool => match value {
            Value::Bool(b) => Variant::Bool(*b),
            _ => return Err(expected("a boolean")),
        },
        VariantType::String => Variant::String(string()?),
        VariantType::ContentId => Variant::ContentId(ContentId::from(string()?)),
        VariantType::Content => Variant::Content(Content::from_uri(string()?)),
        VariantType::Float32 => Variant::Float32(num()? as f32),
        VariantType::Float64 => Variant::Float64(num()?),
        VariantType::Int32 => Variant::Int32(int_in(num()?, "Int32")?),
        VariantType::Int64 => Variant::Int64(int_in(num()?, "Int64")?),
        VariantType::Vector2 => {
            let [x, y] = numbers::<2>(value)?;
            Variant::Vector2(Vector2::new(x as f32, y as f32))
        }
        VariantType::Vector3 => {
            let [x, y, z] = numbers::<3>(value)?;
            Variant::Vector3(Vector3::new(x as f32, y as f32, z as f32))
        }
        VariantType::Vector2int16 => {
            let [x, y] = numbers::<2>(value)?;
            Variant::Vector2int16(Vector2int16::new(int_in(x, "Int16")?, int_in(y, "Int16")?))
        }
        VariantType::Vector3int16 => {
            let [x, y, z] = numbers::<3>(value)?;
            Variant::Vector3int16(Vector3int16::new(
                int_in(x, "Int16")?,
                int_in(y, "Int16")?,
                int_in(z, "Int16")?,
            ))
        }
        VariantType::Color3 => {
            let [r, g, b] = numbers::<3>(value)?;
            Variant::Color3(Color3::new(r as f32, g as f32, b as f32))
        }
        VariantType::Color3uint8 => {
            let [r, g, b] = numbers::<3>(value)?;
            Variant::Color3uint8(Color3uint8::new(
                int_in(r, "a colour byte")?,
                int_in(g, "a colour byte")?,
                int_in(b, "a colour byte")?,
            ))
        }
        VariantType::CFrame => Variant::CFrame(cframe(value)?),
        VariantType::OptionalCFrame => Variant::OptionalCFrame(Some(cframe(value)?)),
        VariantType::Tags => Variant::Tags(tags(value)?),
        VariantType::Attributes => Variant::Attributes(attributes_map(value)?),
        VariantType::Font => Variant::Font(
            serde_json::from_value::<Font>(value.clone())
                .map_err(|e| format!("not a Font ({{\"family\", \"weight\", \"style\"}}): {e}"))?,
        ),
        VariantType::MaterialColors => Variant::MaterialColors(
            serde_json::from_value::<MaterialColors>(value.clone())
                .map_err(|e| format!("not MaterialColors (material → [r, g, b]): {e}"))?,
        ),
        VariantType::Ref => return Err(ref_hint("<Property>")),
        other => {
            return Err(format!(
                "a {other:?} cannot be written implicitly; write it explicitly, e.g. {{\"{other:?}\": ...}}"
            ));
        }
    })
}

fn cframe(value: &Value) -> Result<CFrame, String> {
    let c = numbers::<12>(value)?.map(|f| f as f32);
    Ok(CFrame::new(
        Vector3::new(c[0], c[1], c[2]),
        Matrix3::new(
            Vector3::new(c[3], c[4], c[5]),
            Vector3::new(c[6], c[7], c[8]),
            Vector3::new(c[9], c[10], c[11]),
        ),
    ))
}
