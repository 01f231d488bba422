//! Attribute values as text: parsing `Name=Value` to the type of a generator's declared
//! default (what `--attr` and the MCP server's tools accept), the accepted syntax per type,
//! and a short rendering of values. One home, so every front end takes the same syntax and
//! names the attribute and the expected form in the same words.

use rbx_types::{
    BrickColor, CFrame, Color3, ColorSequence, ColorSequenceKeypoint, EnumItem, Font, FontStyle,
    FontWeight, Matrix3, NumberRange, NumberSequence, NumberSequenceKeypoint, Rect, UDim, UDim2,
    Variant, Vector2, Vector3,
};

/// A value that does not fit its attribute, or an attribute the generator does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttrError {
    /// The text does not parse as the type of the declared default.
    #[error("attribute {name}: cannot use '{text}' as {expected}: {reason} (expected {syntax})")]
    Value {
        name: String,
        text: String,
        expected: &'static str,
        syntax: &'static str,
        reason: String,
    },
    /// The generator declares attributes, and not this one.
    #[error("the generator has no attribute '{name}' (it has: {known})")]
    Unknown { name: String, known: String },
}

type Parsed<T> = Result<T, String>;

macro_rules! bail {
    ($($t:tt)*) => { return Err(format!($($t)*)) };
}

/// The fields of a list of numbers: separated by commas, or by spaces when there is no comma
/// (the form Roblox's `tostring` gives a NumberRange: `0.8 1.2`).
fn fields(s: &str) -> Vec<&str> {
    if s.contains(',') {
        s.split(',').map(str::trim).collect()
    } else {
        s.split_whitespace().collect()
    }
}

/// `n` numbers, as [`fields`] splits them.
fn numbers(s: &str, n: usize, what: &str) -> Parsed<Vec<f64>> {
    let parts = fields(s);
    let expected = match n {
        1 => format!("expected {what} as a number"),
        _ => format!("expected {what} as {n} numbers separated by commas"),
    };
    if parts.len() != n {
        bail!("{expected}");
    }
    parts
        .iter()
        .map(|p| {
            p.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("{expected} ('{p}' is not a number)"))
        })
        .collect()
}

/// The text of a string value: a `String`, or a `BinaryString` holding UTF-8 — how rbx_types
/// gives back every attribute string (attributes have one string type) and some string
/// properties read from a file. None for anything else.
pub fn string(v: &Variant) -> Option<&str> {
    match v {
        Variant::String(s) => Some(s),
        Variant::BinaryString(b) => std::str::from_utf8(b.as_ref()).ok(),
        _ => None,
    }
}

/// The type name shown to users for a value.
pub fn type_name(v: &Variant) -> &'static str {
    match v {
        Variant::Bool(_) => "boolean",
        Variant::Float64(_) | Variant::Float32(_) | Variant::Int32(_) | Variant::Int64(_) => {
            "number"
        }
        Variant::String(_) => "string",
        Variant::Color3(_) | Variant::Color3uint8(_) => "Color3",
        Variant::Vector3(_) => "Vector3",
        Variant::Vector2(_) => "Vector2",
        Variant::BrickColor(_) => "BrickColor",
        Variant::UDim(_) => "UDim",
        Variant::UDim2(_) => "UDim2",
        Variant::NumberRange(_) => "NumberRange",
        Variant::Rect(_) => "Rect",
        Variant::CFrame(_) => "CFrame",
        Variant::NumberSequence(_) => "NumberSequence",
        Variant::ColorSequence(_) => "ColorSequence",
        Variant::Font(_) => "Font",
        Variant::EnumItem(_) | Variant::Enum(_) => "EnumItem",
        _ => "value",
    }
}

/// The accepted syntax for a type, for error messages and schemas.
pub fn syntax(v: &Variant) -> &'static str {
    match v {
        Variant::Bool(_) => "true or false",
        Variant::Float64(_) | Variant::Float32(_) | Variant::Int32(_) | Variant::Int64(_) => {
            "a number"
        }
        Variant::String(_) => "any text",
        Variant::Color3(_) | Variant::Color3uint8(_) => "R,G,B (0-255) or #rrggbb",
        Variant::Vector3(_) => "x,y,z",
        Variant::Vector2(_) => "x,y",
        Variant::BrickColor(_) => "a BrickColor name or number",
        Variant::UDim(_) => "scale,offset",
        Variant::UDim2(_) => "xScale,xOffset,yScale,yOffset",
        Variant::NumberRange(_) => "min,max (or min max), or one number",
        Variant::Rect(_) => "minX,minY,maxX,maxY",
        Variant::CFrame(_) => "x,y,z or 12 numbers (position and rotation rows)",
        Variant::EnumItem(_) => "an item of its enum: Wood, Enum.Material.Wood or its number",
        Variant::NumberSequence(_) => {
            "a number, start,end, or keypoints time:value[:envelope] (0:0 0.5:1 1:0)"
        }
        Variant::ColorSequence(_) => {
            "a colour (#rrggbb or R,G,B), #start,#end, or keypoints time:colour (0:#ff0000 1:#0000ff)"
        }
        Variant::Font(_) => {
            "Family[,Weight[,Style]]: a family name (Arimo) or rbxasset:// id, Bold or 700, Italic"
        }
        _ => "a value of a type the command line cannot set",
    }
}

/// Parses `text` to the type of `default`.
pub fn parse(name: &str, text: &str, default: &Variant) -> Result<Variant, AttrError> {
    parse_inner(text, default).map_err(|reason| AttrError::Value {
        name: name.to_owned(),
        text: text.to_owned(),
        expected: type_name(default),
        syntax: syntax(default),
        reason,
    })
}

/// Parses `text` for attribute `name` against a generator's declared attributes (`None`:
/// it declares none, so the type is guessed: number, then boolean, then text).
pub fn resolve(
    declared: Option<&[(String, Variant)]>,
    name: &str,
    text: &str,
) -> Result<Variant, AttrError> {
    let Some(declared) = declared else {
        return Ok(text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Variant::Float64)
            .or(match text {
                "true" => Some(Variant::Bool(true)),
                "false" => Some(Variant::Bool(false)),
                _ => None,
            })
            .unwrap_or_else(|| Variant::String(text.to_owned())));
    };
    let Some((_, default)) = declared.iter().find(|(n, _)| n == name) else {
        let known: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
        return Err(AttrError::Unknown {
            name: name.to_owned(),
            known: if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            },
        });
    };
    parse(name, text, default)
}

fn parse_inner(text: &str, default: &Variant) -> Parsed<Variant> {
    let t = text.trim();
    Ok(match default {
        Variant::Bool(_) => Variant::Bool(match t.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => true,
            "false" | "0" | "no" | "off" => false,
            _ => bail!("not a boolean"),
        }),
        Variant::Float64(_) | Variant::Float32(_) | Variant::Int32(_) | Variant::Int64(_) => {
            let v: f64 = t.parse().map_err(|_| "not a number".to_owned())?;
            if !v.is_finite() {
                bail!("not a finite number");
            }
            Variant::Float64(v)
        }
        Variant::String(_) => Variant::String(text.to_owned()),
        Variant::Color3(_) | Variant::Color3uint8(_) => {
            if let Some(hex) = t.strip_prefix('#') {
                let n = u32::from_str_radix(hex, 16).map_err(|_| "bad hex colour".to_owned())?;
                if hex.len() != 6 {
                    bail!("hex colours have six digits");
                }
                Variant::Color3(Color3::new(
                    ((n >> 16) & 255) as f32 / 255.0,
                    ((n >> 8) & 255) as f32 / 255.0,
                    (n & 255) as f32 / 255.0,
                ))
            } else {
                let v = numbers(t, 3, "a colour")?;
                if v.iter().any(|c| !(0.0..=255.0).contains(c)) {
                    bail!("colour components must be within 0-255");
                }
                Variant::Color3(Color3::new(
                    (v[0] / 255.0) as f32,
                    (v[1] / 255.0) as f32,
                    (v[2] / 255.0) as f32,
                ))
            }
        }
        Variant::Vector3(_) => {
            let v = numbers(t, 3, "a Vector3")?;
            Variant::Vector3(Vector3::new(v[0] as f32, v[1] as f32, v[2] as f32))
        }
        Variant::Vector2(_) => {
            let v = numbers(t, 2, "a Vector2")?;
            Variant::Vector2(Vector2::new(v[0] as f32, v[1] as f32))
        }
        Variant::BrickColor(_) => {
            let bc = match t.parse::<u16>() {
                Ok(n) => BrickColor::from_number(n),
                Err(_) => BrickColor::from_name(t),
            };
            Variant::BrickColor(bc.ok_or_else(|| "no such BrickColor".to_owned())?)
        }
        Variant::UDim(_) => {
            let v = numbers(t, 2, "a UDim")?;
            Variant::UDim(UDim::new(v[0] as f32, v[1] as i32))
        }
        Variant::UDim2(_) => {
            let v = numbers(t, 4, "a UDim2")?;
            Variant::UDim2(UDim2::new(
                UDim::new(v[0] as f32, v[1] as i32),
                UDim::new(v[2] as f32, v[3] as i32),
            ))
        }
        Variant::NumberRange(_) => {
            let one = fields(t).len() == 1;
            let v = numbers(t, if one { 1 } else { 2 }, "a NumberRange")?;
            let (min, max) = (v[0], *v.last().unwrap_or(&v[0]));
            if max < min {
                bail!("max is less than min");
            }
            Variant::NumberRange(NumberRange::new(min as f32, max as f32))
        }
        Variant::Rect(_) => {
            let v = numbers(t, 4, "a Rect")?;
            Variant::Rect(Rect::new(
                Vector2::new(v[0] as f32, v[1] as f32),
                Vector2::new(v[2] as f32, v[3] as f32),
            ))
        }
        Variant::CFrame(_) => {
            let n = t.split(',').count();
            let v = numbers(t, if n == 12 { 12 } else { 3 }, "a CFrame")?;
            let f = |i: usize| v[i] as f32;
            let orientation = if n == 12 {
                Matrix3::new(
                    Vector3::new(f(3), f(4), f(5)),
                    Vector3::new(f(6), f(7), f(8)),
                    Vector3::new(f(9), f(10), f(11)),
                )
            } else {
                Matrix3::identity()
            };
            Variant::CFrame(CFrame::new(Vector3::new(f(0), f(1), f(2)), orientation))
        }
        Variant::EnumItem(item) => enum_item(&item.ty, t)?,
        Variant::NumberSequence(_) => Variant::NumberSequence(number_sequence(t)?),
        Variant::ColorSequence(_) => Variant::ColorSequence(color_sequence(t)?),
        Variant::Font(_) => Variant::Font(font(t)?),
        _ => bail!("this attribute type cannot be set from the command line"),
    })
}

/// A colour as `#rrggbb` or `R,G,B` (0-255).
/// One colour of a ColorSequence; an error names the text that is not one (the caller's
/// message gives the syntax).
fn colour(t: &str) -> Parsed<Color3> {
    match parse_inner(t, &Variant::Color3(Color3::new(0.0, 0.0, 0.0))) {
        Ok(Variant::Color3(c)) => Ok(c),
        _ => bail!("'{}' is not a colour", t.trim()),
    }
}

/// Keypoints written `time:rest`, separated by spaces or `;`.
fn keypoints(t: &str) -> Parsed<Vec<(f32, &str)>> {
    t.split([';', ' ', '\t'])
        .filter(|k| !k.is_empty())
        .map(|k| {
            let (time, rest) = k
                .split_once(':')
                .ok_or_else(|| format!("keypoint '{k}' is not time:value"))?;
            let time: f64 = time
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| format!("keypoint '{k}': '{time}' is not a time"))?;
            Ok((time as f32, rest.trim()))
        })
        .collect()
}

/// Roblox's rules for a sequence's keypoint times: 2-20 of them, from 0 to 1, ascending.
fn check_times(times: &[f32]) -> Parsed<()> {
    if times.len() > 20 {
        bail!("at most 20 keypoints");
    }
    if times.first() != Some(&0.0) || times.last() != Some(&1.0) {
        bail!("keypoint times must start at 0 and end at 1");
    }
    if times.windows(2).any(|w| w[1] < w[0]) {
        bail!("keypoints must be ordered by time");
    }
    Ok(())
}

fn number(t: &str, what: &str) -> Parsed<f32> {
    t.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v as f32)
        .ok_or_else(|| format!("'{t}' is not a number ({what})"))
}

fn number_sequence(t: &str) -> Parsed<NumberSequence> {
    let points: Vec<NumberSequenceKeypoint> = if t.contains(':') {
        let mut out = Vec::new();
        for (time, rest) in keypoints(t)? {
            let mut parts = rest.split(':');
            let value = number(parts.next().unwrap_or(""), "a keypoint's value")?;
            let envelope = match parts.next() {
                Some(e) => number(e, "a keypoint's envelope")?,
                None => 0.0,
            };
            if parts.next().is_some() || envelope < 0.0 {
                bail!("a keypoint is time:value or time:value:envelope (envelope 0 or more)");
            }
            out.push(NumberSequenceKeypoint::new(time, value, envelope));
        }
        out
    } else {
        let (a, b) = match t.split(',').count() {
            1 => {
                let v = number(t, "a NumberSequence's constant value")?;
                (v, v)
            }
            _ => {
                let v = numbers(t, 2, "a NumberSequence")?;
                (v[0] as f32, v[1] as f32)
            }
        };
        vec![
            NumberSequenceKeypoint::new(0.0, a, 0.0),
            NumberSequenceKeypoint::new(1.0, b, 0.0),
        ]
    };
    check_times(&points.iter().map(|k| k.time).collect::<Vec<_>>())?;
    Ok(NumberSequence { keypoints: points })
}

fn color_sequence(t: &str) -> Parsed<ColorSequence> {
    let points: Vec<ColorSequenceKeypoint> = if t.contains(':') {
        keypoints(t)?
            .into_iter()
            .map(|(time, c)| Ok(ColorSequenceKeypoint::new(time, colour(c)?)))
            .collect::<Parsed<_>>()?
    } else {
        let (a, b) = match t.split_once(',') {
            Some((a, b)) if a.trim().starts_with('#') => (colour(a)?, colour(b)?),
            _ => (colour(t)?, colour(t)?),
        };
        vec![
            ColorSequenceKeypoint::new(0.0, a),
            ColorSequenceKeypoint::new(1.0, b),
        ]
    };
    check_times(&points.iter().map(|k| k.time).collect::<Vec<_>>())?;
    Ok(ColorSequence { keypoints: points })
}

/// Where Roblox keeps the font families it ships (`Font.new`'s family ids).
const FAMILIES: &str = "rbxasset://fonts/families/";

const WEIGHTS: [(&str, FontWeight); 9] = [
    ("Thin", FontWeight::Thin),
    ("ExtraLight", FontWeight::ExtraLight),
    ("Light", FontWeight::Light),
    ("Regular", FontWeight::Regular),
    ("Medium", FontWeight::Medium),
    ("SemiBold", FontWeight::SemiBold),
    ("Bold", FontWeight::Bold),
    ("ExtraBold", FontWeight::ExtraBold),
    ("Heavy", FontWeight::Heavy),
];

fn font(t: &str) -> Parsed<Font> {
    let mut parts = t.split(',').map(str::trim);
    let family = parts.next().unwrap_or("");
    if family.is_empty() {
        bail!("no font family");
    }
    let family = if family.contains("://") {
        family.to_owned()
    } else {
        let name = family.trim_end_matches(".json").trim();
        if name.is_empty() {
            bail!("no font family");
        }
        format!("{FAMILIES}{name}.json")
    };
    let mut weight = FontWeight::Regular;
    let mut style = FontStyle::Normal;
    for part in parts {
        let strip = |p: &'static str| part.strip_prefix(p).unwrap_or(part);
        let name = strip("Enum.FontWeight.");
        let named = WEIGHTS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
        if let Some((_, w)) = named {
            weight = *w;
        } else if let Some(w) = part.parse::<u16>().ok().and_then(FontWeight::from_u16) {
            weight = w;
        } else {
            match strip("Enum.FontStyle.").to_ascii_lowercase().as_str() {
                "italic" => style = FontStyle::Italic,
                "normal" => style = FontStyle::Normal,
                _ => bail!(
                    "'{part}' is neither a FontWeight (Thin ... Heavy, or 100-900) nor a FontStyle (Normal, Italic)"
                ),
            }
        }
    }
    Ok(Font::new(&family, weight, style))
}

/// An item of `Enum.<ty>` named as Roblox prints it (`Enum.Material.Wood`), by its name
/// alone (`Wood`, `Material.Wood`), or by its number.
fn enum_item(ty: &str, t: &str) -> Parsed<Variant> {
    let Some(e) = crate::db().enums.get(ty) else {
        bail!("Enum.{ty} is not an enum this version knows");
    };
    let name = t.strip_prefix("Enum.").unwrap_or(t);
    let name = name
        .strip_prefix(ty)
        .and_then(|r| r.strip_prefix('.'))
        .unwrap_or(name);
    let value = match name.parse::<u32>() {
        Ok(n) if e.items.values().any(|&v| v == n) => Some(n),
        _ => e.items.get(name).copied(),
    };
    let Some(value) = value else {
        let mut items: Vec<(&u32, &str)> = e.items.iter().map(|(k, v)| (v, *k)).collect();
        items.sort();
        let names: Vec<&str> = items.iter().map(|(_, k)| *k).collect();
        bail!(
            "Enum.{ty} has no item '{name}' (it has: {})",
            names.join(", ")
        );
    };
    Ok(Variant::EnumItem(EnumItem {
        ty: ty.to_owned(),
        value,
    }))
}

/// The name of an enum item, as Roblox prints it (`Enum.Material.Wood`).
fn enum_item_name(item: &EnumItem) -> String {
    let name = crate::db()
        .enums
        .get(item.ty.as_str())
        .and_then(|e| e.items.iter().find(|(_, v)| **v == item.value))
        .map(|(k, _)| k.to_string())
        .unwrap_or_else(|| item.value.to_string());
    format!("Enum.{}.{name}", item.ty)
}

/// The text [`parse`] reads back as `v` (what `--attr Name=TEXT` takes); None for a type the
/// command line cannot set.
pub fn text(v: &Variant) -> Option<String> {
    let n = fmt_f32;
    let join = |xs: &[f32]| xs.iter().map(|x| n(*x)).collect::<Vec<_>>().join(",");
    Some(match v {
        Variant::Bool(b) => b.to_string(),
        Variant::Float64(x) => fmt_num(*x),
        Variant::Float32(x) => n(*x),
        Variant::Int32(x) => x.to_string(),
        Variant::Int64(x) => x.to_string(),
        Variant::String(s) => s.clone(),
        Variant::Color3(c) => {
            let b = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
            format!("{},{},{}", b(c.r), b(c.g), b(c.b))
        }
        Variant::Color3uint8(c) => format!("{},{},{}", c.r, c.g, c.b),
        Variant::Vector3(v) => join(&[v.x, v.y, v.z]),
        Variant::Vector2(v) => join(&[v.x, v.y]),
        Variant::BrickColor(b) => b.to_string(),
        Variant::EnumItem(item) => enum_item_name(item),
        Variant::NumberRange(r) => join(&[r.min, r.max]),
        Variant::UDim(u) => format!("{},{}", n(u.scale), u.offset),
        Variant::UDim2(u) => format!(
            "{},{},{},{}",
            n(u.x.scale),
            u.x.offset,
            n(u.y.scale),
            u.y.offset
        ),
        Variant::Rect(r) => join(&[r.min.x, r.min.y, r.max.x, r.max.y]),
        Variant::CFrame(c) => {
            let (p, o) = (c.position, c.orientation);
            if o == Matrix3::identity() {
                join(&[p.x, p.y, p.z])
            } else {
                join(&[
                    p.x, p.y, p.z, o.x.x, o.x.y, o.x.z, o.y.x, o.y.y, o.y.z, o.z.x, o.z.y, o.z.z,
                ])
            }
        }
        Variant::NumberSequence(seq) => {
            let k: Vec<String> = seq
                .keypoints
                .iter()
                .map(|k| match k.envelope {
                    0.0 => format!("{}:{}", n(k.time), n(k.value)),
                    e => format!("{}:{}:{}", n(k.time), n(k.value), n(e)),
                })
                .collect();
            k.join(" ")
        }
        Variant::ColorSequence(seq) => {
            let k: Vec<String> = seq
                .keypoints
                .iter()
                .map(|k| format!("{}:{}", n(k.time), hex(k.color)))
                .collect();
            k.join(" ")
        }
        Variant::Font(f) => {
            let family = f
                .family
                .strip_prefix(FAMILIES)
                .and_then(|r| r.strip_suffix(".json"))
                .filter(|r| !r.contains([',', '/']))
                .unwrap_or(&f.family);
            let weight = WEIGHTS
                .iter()
                .find(|(_, w)| *w == f.weight)
                .map(|(n, _)| *n);
            let mut out = family.to_owned();
            if f.weight != FontWeight::Regular || f.style != FontStyle::Normal {
                out += &format!(",{}", weight.unwrap_or("Regular"));
            }
            if f.style == FontStyle::Italic {
                out += ",Italic";
            }
            out
        }
        _ => return None,
    })
}

/// `#rrggbb` of a colour (components rounded to 0-255).
fn hex(c: Color3) -> String {
    let b = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}", b(c.r), b(c.g), b(c.b))
}

/// A short human-readable rendering of an attribute value: its [`text`] (strings quoted),
/// the form `--attr` takes, or the type's name for a value the command line cannot set.
pub fn show(v: &Variant) -> String {
    match v {
        Variant::String(s) => format!("{s:?}"),
        other => text(other).unwrap_or_else(|| type_name(other).to_owned()),
    }
}

/// An f32 in the fewest digits that read back (as the parser reads them: an f64 rounded to
/// f32) to the same value: `0.70710677`, not the f64 expansion `0.7071067690849304`.
fn fmt_f32(x: f32) -> String {
    let short = fmt_num(f64::from(x));
    if x.fract() == 0.0 {
        return short;
    }
    let s = format!("{x}");
    if s.parse::<f64>().is_ok_and(|d| d as f32 == x) && s.len() < short.len() {
        s
    } else {
        short
    }
}

fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, default: Variant, expected: Variant) {
        assert_eq!(parse("A", text, &default).unwrap(), expected);
    }

    #[test]
    fn parses_by_default_type() {
        check("3.5", Variant::Float64(1.0), Variant::Float64(3.5));
        check("yes", Variant::Bool(false), Variant::Bool(true));
        check(
            "hi there",
            Variant::String(String::new()),
            Variant::String("hi there".into()),
        );
        check(
            "255,0,0",
            Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
            Variant::Color3(Color3::new(1.0, 0.0, 0.0)),
        );
        check(
            "#00ff00",
            Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
            Variant::Color3(Color3::new(0.0, 1.0, 0.0)),
        );
        check(
            "1, 2,3",
            Variant::Vector3(Vector3::new(0.0, 0.0, 0.0)),
            Variant::Vector3(Vector3::new(1.0, 2.0, 3.0)),
        );
        check(
            "Bright red",
            Variant::BrickColor(BrickColor::MediumStoneGrey),
            Variant::BrickColor(BrickColor::BrightRed),
        );
    }

    /// A NumberRange is `min,max`, Roblox's printed form `min max`, or one number; a wrong
    /// count names the form in plain words.
    #[test]
    fn number_ranges_take_commas_spaces_or_one_number() {
        let range = |a, b| Variant::NumberRange(NumberRange::new(a, b));
        for text in ["0.5,1.5", "0.5, 1.5", "0.5 1.5", " 0.5 1.5 "] {
            check(text, range(0.0, 1.0), range(0.5, 1.5));
        }
        check("2", range(0.0, 1.0), range(2.0, 2.0));
        let e = parse("R", "1 2 3", &range(0.0, 1.0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected a NumberRange as 2 numbers separated by commas"),
            "{e}"
        );
        let e = parse("R", "x", &range(0.0, 1.0)).unwrap_err().to_string();
        assert!(
            e.contains("expected a NumberRange as a number ('x' is not a number)"),
            "{e}"
        );
        let e = parse("R", "3 1", &range(0.0, 1.0)).unwrap_err().to_string();
        assert!(e.contains("max is less than min"), "{e}");
    }

    /// EnumItem attributes (a generator's `Material = Enum.Material.Brick`) are set by item
    /// name, by Roblox's printed form or by number, and shown as Roblox prints them.
    #[test]
    fn enum_items_parse_by_name_and_number_and_show_as_roblox_prints_them() {
        let brick = Variant::EnumItem(EnumItem {
            ty: "Material".into(),
            value: 848,
        });
        let wood = Variant::EnumItem(EnumItem {
            ty: "Material".into(),
            value: 512,
        });
        for text in [
            "Wood",
            "Enum.Material.Wood",
            "Material.Wood",
            "512",
            " Wood ",
        ] {
            check(text, brick.clone(), wood.clone());
        }
        assert_eq!(show(&brick), "Enum.Material.Brick");
        let e = parse("Material", "Lava", &brick).unwrap_err().to_string();
        assert!(
            e.contains("Enum.Material has no item 'Lava'") && e.contains("Wood, "),
            "{e}"
        );
        // 9999 is no Material's number.
        assert!(parse("Material", "9999", &brick).is_err());
        assert_eq!(
            show(&Variant::NumberRange(NumberRange::new(1.0, 3.5))),
            "1,3.5"
        );
        assert_eq!(
            show(&Variant::CFrame(CFrame::new(
                Vector3::new(1.0, 2.0, 3.0),
                Matrix3::identity()
            ))),
            "1,2,3"
        );
    }

    /// What `info` shows of a sequence is what `--attr` takes (it once printed
    /// `NumberSequence(0:0 1:1)`, which the parser refused).
    #[test]
    fn shown_sequences_parse_back() {
        let values = [
            Variant::NumberSequence(NumberSequence {
                keypoints: vec![
                    NumberSequenceKeypoint::new(0.0, 0.0, 0.0),
                    NumberSequenceKeypoint::new(0.5, 2.5, 0.25),
                    NumberSequenceKeypoint::new(1.0, 1.0, 0.0),
                ],
            }),
            Variant::ColorSequence(ColorSequence {
                keypoints: vec![
                    ColorSequenceKeypoint::new(0.0, Color3::new(0.0, 0.0, 0.0)),
                    ColorSequenceKeypoint::new(1.0, Color3::new(1.0, 0.2, 0.0)),
                ],
            }),
        ];
        for v in values {
            let shown = show(&v);
            assert_eq!(parse("A", &shown, &v).unwrap(), v, "{shown}");
        }
        let ns = Variant::NumberSequence(NumberSequence { keypoints: vec![] });
        let e = parse("A", "0 1", &ns).unwrap_err().to_string();
        assert!(
            e.contains("'0 1' is not a number") && !e.contains("1 comma"),
            "{e}"
        );
    }

    /// Every value the command line can set reads back from its text as itself.
    #[test]
    fn text_parses_back_to_the_value() {
        let values = [
            Variant::Bool(true),
            Variant::Float64(-2.5),
            Variant::String("a, b".into()),
            Variant::Color3(Color3::new(1.0, 0.2, 0.0)),
            Variant::Vector3(Vector3::new(1.5, -2.0, 3.0)),
            Variant::Vector2(Vector2::new(0.25, 4.0)),
            Variant::BrickColor(BrickColor::BrightRed),
            Variant::EnumItem(EnumItem {
                ty: "Material".into(),
                value: 512,
            }),
            Variant::NumberRange(NumberRange::new(1.0, 3.5)),
            Variant::UDim(UDim::new(0.5, -3)),
            Variant::UDim2(UDim2::new(UDim::new(0.5, 1), UDim::new(0.25, 2))),
            Variant::Rect(Rect::new(Vector2::new(0.0, 1.0), Vector2::new(2.0, 3.0))),
            Variant::CFrame(CFrame::new(
                Vector3::new(1.0, 2.0, 3.0),
                Matrix3::new(
                    Vector3::new(0.0, 0.0, 1.0),
                    Vector3::new(0.0, 1.0, 0.0),
                    Vector3::new(-1.0, 0.0, 0.0),
                ),
            )),
        ];
        for v in values {
            let t = text(&v).unwrap();
            // (The colour's components are whole steps of 1/255, as the text's are.)
            assert_eq!(parse("A", &t, &v).unwrap(), v, "{t}");
        }
    }

    #[test]
    fn resolves_against_declared_defaults() {
        let declared = vec![
            ("Steps".to_owned(), Variant::Float64(4.0)),
            (
                "Tint".to_owned(),
                Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
            ),
        ];
        assert_eq!(
            resolve(Some(&declared), "Steps", "7"),
            Ok(Variant::Float64(7.0))
        );
        let e = resolve(Some(&declared), "Stairs", "7")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the generator has no attribute 'Stairs' (it has: Steps, Tint)"
        );
        assert_eq!(resolve(None, "X", "2"), Ok(Variant::Float64(2.0)));
        assert_eq!(resolve(None, "X", "true"), Ok(Variant::Bool(true)));
        assert_eq!(resolve(None, "X", "nan"), Ok(Variant::String("nan".into())));
    }

    #[test]
    fn bad_values_name_the_expected_type() {
        let e = parse("Steps", "many", &Variant::Float64(1.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("attribute Steps") && e.contains("number"), "{e}");
        let e = parse("Tint", "1,2", &Variant::Color3(Color3::new(0.0, 0.0, 0.0)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("R,G,B"), "{e}");
        let e = parse(
            "Tint",
            "300,0,0",
            &Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("0-255"), "{e}");
    }

    /// NumberSequence, ColorSequence and Font attributes are set from text too (they were
    /// "a type the command line cannot set"), and what [`text`] writes reads back.
    #[test]
    fn sequences_and_fonts_parse_and_read_back() {
        let ns = |t: &str| {
            parse(
                "A",
                t,
                &Variant::NumberSequence(NumberSequence { keypoints: vec![] }),
            )
        };
        let kp = |t, v, e| NumberSequenceKeypoint::new(t, v, e);
        let seq = |k: Vec<NumberSequenceKeypoint>| {
            Variant::NumberSequence(NumberSequence { keypoints: k })
        };
        assert_eq!(
            ns("0.5").unwrap(),
            seq(vec![kp(0.0, 0.5, 0.0), kp(1.0, 0.5, 0.0)])
        );
        assert_eq!(
            ns("1, 3").unwrap(),
            seq(vec![kp(0.0, 1.0, 0.0), kp(1.0, 3.0, 0.0)])
        );
        let three = ns("0:0 0.5:1:0.25;1:0").unwrap();
        assert_eq!(
            three,
            seq(vec![
                kp(0.0, 0.0, 0.0),
                kp(0.5, 1.0, 0.25),
                kp(1.0, 0.0, 0.0)
            ])
        );
        assert_eq!(text(&three).unwrap(), "0:0 0.5:1:0.25 1:0");
        assert_eq!(ns(&text(&three).unwrap()).unwrap(), three);
        for (bad, why) in [
            ("0:1 0.5:2", "start at 0 and end at 1"),
            ("0:1 0.7:0 0.5:1 1:1", "ordered by time"),
            ("0:x 1:1", "'x' is not a number"),
            ("0:1:-1 1:1", "envelope 0 or more"),
            ("zero", "'zero' is not a number"),
        ] {
            let e = ns(bad).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains("NumberSequence"),
                "{bad}: {e}"
            );
        }
        let cs = |t: &str| {
            parse(
                "C",
                t,
                &Variant::ColorSequence(ColorSequence { keypoints: vec![] }),
            )
        };
        let red = Color3::new(1.0, 0.0, 0.0);
        let blue = Color3::new(0.0, 0.0, 1.0);
        let cseq = |k: Vec<(f32, Color3)>| {
            Variant::ColorSequence(ColorSequence {
                keypoints: k
                    .into_iter()
                    .map(|(t, c)| ColorSequenceKeypoint::new(t, c))
                    .collect(),
            })
        };
        assert_eq!(cs("#ff0000").unwrap(), cseq(vec![(0.0, red), (1.0, red)]));
        assert_eq!(cs("255,0,0").unwrap(), cseq(vec![(0.0, red), (1.0, red)]));
        assert_eq!(
            cs("#ff0000,#0000ff").unwrap(),
            cseq(vec![(0.0, red), (1.0, blue)])
        );
        let two = cs("0:255,0,0; 1:#0000ff").unwrap();
        assert_eq!(two, cseq(vec![(0.0, red), (1.0, blue)]));
        assert_eq!(text(&two).unwrap(), "0:#ff0000 1:#0000ff");
        assert_eq!(cs(&text(&two).unwrap()).unwrap(), two);
        assert!(
            cs("0:#ff0000")
                .unwrap_err()
                .to_string()
                .contains("start at 0 and end at 1")
        );
        // A word that is no colour is named, once, before the syntax.
        assert_eq!(
            cs("red").unwrap_err().to_string(),
            "attribute C: cannot use 'red' as ColorSequence: 'red' is not a colour (expected \
             a colour (#rrggbb or R,G,B), #start,#end, or keypoints time:colour (0:#ff0000 \
             1:#0000ff))"
        );
        assert!(
            cs("0:#ff0000 1:blue")
                .unwrap_err()
                .to_string()
                .contains(": 'blue' is not a colour (")
        );
        let f = |t: &str| parse("F", t, &Variant::Font(Font::default()));
        let arimo_bold_italic = Variant::Font(Font::new(
            "rbxasset://fonts/families/Arimo.json",
            FontWeight::Bold,
            FontStyle::Italic,
        ));
        assert_eq!(f("Arimo, Bold, Italic").unwrap(), arimo_bold_italic);
        assert_eq!(
            f("Arimo,700,Enum.FontStyle.Italic").unwrap(),
            arimo_bold_italic
        );
        assert_eq!(text(&arimo_bold_italic).unwrap(), "Arimo,Bold,Italic");
        let plain = f("rbxasset://fonts/families/Ubuntu.json").unwrap();
        assert_eq!(text(&plain).unwrap(), "Ubuntu");
        assert_eq!(f(&text(&plain).unwrap()).unwrap(), plain);
        let other = f("rbxassetid://12187365364,Light").unwrap();
        assert_eq!(f(&text(&other).unwrap()).unwrap(), other);
        assert!(
            f("Arimo,Wide")
                .unwrap_err()
                .to_string()
                .contains("'Wide' is neither")
        );
        assert!(
            f(".json")
                .unwrap_err()
                .to_string()
                .contains("no font family")
        );
    }

    proptest::proptest! {
        /// Any valid NumberSequence (2-20 keypoints from 0 to 1 in order, any finite values
        /// and envelopes) reads back from its text exactly.
        #[test]
        fn any_number_sequence_reads_back_from_its_text(
            inner in proptest::collection::vec(
                (0.0f32..=1.0, -1e6f32..1e6, 0.0f32..1e3),
                0..18,
            ),
            ends in ((-1e6f32..1e6, 0.0f32..1e3), (-1e6f32..1e6, 0.0f32..1e3)),
        ) {
            let mut inner = inner;
            inner.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut keypoints = vec![NumberSequenceKeypoint::new(0.0, ends.0.0, ends.0.1)];
            keypoints.extend(inner.iter().map(|&(t, v, e)| NumberSequenceKeypoint::new(t, v, e)));
            keypoints.push(NumberSequenceKeypoint::new(1.0, ends.1.0, ends.1.1));
            let v = Variant::NumberSequence(NumberSequence { keypoints });
            let t = text(&v).unwrap();
            proptest::prop_assert_eq!(parse("A", &t, &v).unwrap(), v, "{}", t);
        }
    }

    #[test]
    fn f32s_are_written_in_their_shortest_form() {
        let turn = Variant::CFrame(CFrame::new(
            Vector3::new(1.0, 2.0, 3.0),
            Matrix3::new(
                Vector3::new(0.70710677, 0.0, 0.70710677),
                Vector3::new(0.0, 1.0, 0.0),
                Vector3::new(-0.70710677, 0.0, 0.70710677),
            ),
        ));
        assert_eq!(
            text(&turn).unwrap(),
            "1,2,3,0.70710677,0,0.70710677,0,1,0,-0.70710677,0,0.70710677"
        );
        assert_eq!(
            text(&Variant::Vector2(Vector2::new(0.1, -1e-7))).unwrap(),
            "0.1,-0.0000001"
        );
    }

    proptest::proptest! {
        /// Any finite f32 (every bit pattern, subnormals included) reads back exactly from
        /// its text, which is never longer than the f64 expansion.
        #[test]
        fn any_f32_reads_back_from_its_shortest_text(bits in proptest::prelude::any::<[u32; 3]>()) {
            let [x, y, z] = bits.map(f32::from_bits);
            proptest::prop_assume!(x.is_finite() && y.is_finite() && z.is_finite());
            let v = Variant::Vector3(Vector3::new(x, y, z));
            let t = text(&v).unwrap();
            proptest::prop_assert_eq!(parse("A", &t, &v).unwrap(), v, "{}", t);
            let long = [x, y, z].map(|c| fmt_num(f64::from(c))).join(",");
            proptest::prop_assert!(t.len() <= long.len(), "{} longer than {}", t, long);
        }
    }

    proptest::proptest! {
        /// Any text either parses or is an error for every type the command line sets, and
        /// what a parsed value's text form is parses again (the fuzz target `attr_flag`
        /// asks the same of arbitrary bytes).
        #[test]
        fn any_text_parses_or_is_an_error_and_parsed_values_read_back(
            text_in in "[-0-9a-zA-Z#:;,. /]{0,40}",
        ) {
            let defaults = [
                Variant::Bool(false),
                Variant::Float64(1.0),
                Variant::Vector3(Vector3::new(0.0, 0.0, 0.0)),
                Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
                Variant::UDim2(UDim2::new(UDim::new(0.0, 0), UDim::new(0.0, 0))),
                Variant::CFrame(CFrame::new(Vector3::new(0.0, 0.0, 0.0), Matrix3::identity())),
                Variant::NumberRange(NumberRange::new(0.0, 1.0)),
                Variant::NumberSequence(NumberSequence { keypoints: vec![] }),
                Variant::ColorSequence(ColorSequence { keypoints: vec![] }),
                Variant::Font(Font::default()),
            ];
            for default in &defaults {
                if let Ok(v) = parse("A", &text_in, default) {
                    proptest::prop_assert_eq!(v.ty(), default.ty());
                    if let Some(t) = text(&v) {
                        proptest::prop_assert!(parse("A", &t, default).is_ok(), "{} -> {}", text_in, t);
                    }
                }
            }
        }
    }
}
