//! The WebSocket wire types: messages from the page (JSON text), attribute values as JSON
//! (checked strictly against the attribute's current type), and the binary scene message
//! (`PMF1`, a JSON header, the frame body from `frame.rs`).

use rbx_types::{Color3, Variant, Vector2, Vector3};
use serde::Deserialize;
use serde_json::{Value, json};

/// A message from the page. Every edit carries the page's `seq`, echoed in the frame that
/// includes it (latency measurement) or in the error that refuses it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    SetAttribute {
        seq: u64,
        model: String,
        name: String,
        value: Value,
    },
    ResetAttribute {
        seq: u64,
        model: String,
        name: String,
    },
    SetSize {
        seq: u64,
        model: String,
        value: Value,
    },
    SetScale {
        seq: u64,
        model: String,
        value: Value,
    },
    Regenerate {
        seq: u64,
        model: String,
    },
    Undo {
        seq: u64,
    },
    Redo {
        seq: u64,
    },
    Save {
        seq: u64,
        #[serde(default)]
        path: Option<String>,
    },
    Cancel {
        seq: u64,
    },
    Resync {
        seq: u64,
    },
    /// A drag of a value starts: the edits until `gesture_end` make one undo step.
    GestureStart {
        seq: u64,
    },
    GestureEnd {
        seq: u64,
    },
}

impl ClientMessage {
    pub fn seq(&self) -> u64 {
        match self {
            ClientMessage::SetAttribute { seq, .. }
            | ClientMessage::ResetAttribute { seq, .. }
            | ClientMessage::SetSize { seq, .. }
            | ClientMessage::SetScale { seq, .. }
            | ClientMessage::Regenerate { seq, .. }
            | ClientMessage::Undo { seq }
            | ClientMessage::Redo { seq }
            | ClientMessage::Save { seq, .. }
            | ClientMessage::Cancel { seq }
            | ClientMessage::Resync { seq }
            | ClientMessage::GestureStart { seq }
            | ClientMessage::GestureEnd { seq } => *seq,
        }
    }
}

/// Parses a page message; the error says what was wrong (and the `seq` when there was one).
pub fn parse(text: &str) -> Result<ClientMessage, (Option<u64>, String)> {
    serde_json::from_str::<ClientMessage>(text).map_err(|e| {
        let seq = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("seq").and_then(Value::as_u64));
        (seq, format!("malformed message: {e}"))
    })
}

/// An error message for the page.
pub fn error(seq: Option<u64>, message: &str) -> String {
    json!({ "type": "error", "seq": seq, "message": message }).to_string()
}

/// The type name the page's widgets switch on.
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
        Variant::NumberRange(_) => "NumberRange",
        Variant::EnumItem(_) => "EnumItem",
        // Edited as `--attr` text (UDim, UDim2, Rect, CFrame, the sequences, Font).
        v if procmodel_dom::attrs::text(v).is_some() => "text",
        _ => "other",
    }
}

/// A value as the page shows it.
pub fn to_json(v: &Variant) -> Value {
    match v {
        Variant::Bool(b) => json!(b),
        Variant::Float64(n) => json!(n),
        Variant::Float32(n) => json!(n),
        Variant::Int32(n) => json!(n),
        Variant::Int64(n) => json!(n),
        Variant::String(s) => json!(s),
        Variant::Color3(c) => json!([c.r, c.g, c.b]),
        Variant::Color3uint8(c) => json!([c.r, c.g, c.b].map(|v| f32::from(v) / 255.0)),
        Variant::Vector3(v) => json!([v.x, v.y, v.z]),
        Variant::Vector2(v) => json!([v.x, v.y]),
        Variant::BrickColor(b) => json!(b.to_string()),
        Variant::NumberRange(r) => json!([r.min, r.max]),
        Variant::EnumItem(e) => json!({ "enum": e.ty, "value": e.value }),
        // The text its field edits, or (a type no text sets) a rendering to read.
        other => json!(
            procmodel_dom::attrs::text(other).unwrap_or_else(|| procmodel_dom::attrs::show(other))
        ),
    }
}

/// A page value as an error message shows it: its JSON, cut short past 80 characters (a
/// page may send megabytes of it).
struct Shown<'a>(&'a Value);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        match text.char_indices().nth(80) {
            Some((at, _)) => write!(f, "{}… ({} bytes)", &text[..at], text.len()),
            None => f.write_str(&text),
        }
    }
}

/// A page value converted to the type of `like` (the attribute's current value). Errors name
/// the expected form; NaN and infinities are refused.
pub fn from_json(v: &Value, like: &Variant) -> Result<Variant, String> {
    let num = |v: &Value| -> Result<f64, String> {
        match v.as_f64() {
            Some(n) if n.is_finite() => Ok(n),
            Some(_) => Err("numbers must be finite".into()),
            None => Err(format!("expected a number, got {}", Shown(v))),
        }
    };
    let nums = |v: &Value, n: usize, what: &str| -> Result<Vec<f64>, String> {
        match v.as_array() {
            Some(a) if a.len() == n => a.iter().map(num).collect(),
            _ => Err(format!(
                "expected {what} as an array of {n} numbers, got {}",
                Shown(v)
            )),
        }
    };
    Ok(match like {
        Variant::Bool(_) => Variant::Bool(
            v.as_bool()
                .ok_or_else(|| format!("expected true or false, got {}", Shown(v)))?,
        ),
        Variant::Float64(_) | Variant::Int32(_) | Variant::Int64(_) => Variant::Float64(num(v)?),
        Variant::Float32(_) => Variant::Float32(num(v)? as f32),
        Variant::String(_) => Variant::String(
            v.as_str()
                .ok_or_else(|| format!("expected text, got {}", Shown(v)))?
                .to_owned(),
        ),
        Variant::Color3(_) | Variant::Color3uint8(_) => {
            let c = nums(v, 3, "R, G, B (0-1)")?;
            if c.iter().any(|x| !(0.0..=1.0).contains(x)) {
                return Err("Color3 components must be between 0 and 1".into());
            }
            let c = Color3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            match like {
                Variant::Color3uint8(_) => Variant::Color3uint8(c.into()),
                _ => Variant::Color3(c),
            }
        }
        Variant::Vector3(_) => {
            let c = nums(v, 3, "x, y, z")?;
            Variant::Vector3(Vector3::new(c[0] as f32, c[1] as f32, c[2] as f32))
        }
        Variant::Vector2(_) => {
            let c = nums(v, 2, "x, y")?;
            Variant::Vector2(Vector2::new(c[0] as f32, c[1] as f32))
        }
        Variant::BrickColor(_) => {
            let b = match v {
                Value::Number(n) => n
                    .as_u64()
                    .and_then(|n| u16::try_from(n).ok())
                    .and_then(rbx_types::BrickColor::from_number),
                Value::String(s) => rbx_types::BrickColor::from_name(s),
                _ => None,
            };
            Variant::BrickColor(b.ok_or_else(|| format!("not a BrickColor name or number: {v}"))?)
        }
        Variant::NumberRange(_) => {
            let c = nums(v, 2, "min, max")?;
            if c[0] > c[1] {
                return Err("NumberRange min is greater than max".into());
            }
            Variant::NumberRange(rbx_types::NumberRange::new(c[0] as f32, c[1] as f32))
        }
        Variant::EnumItem(e) => {
            let value = match v {
                Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
                Value::Object(o) => o
                    .get("value")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok()),
                _ => None,
            }
            .ok_or_else(|| format!("expected an Enum.{} value, got {}", e.ty, Shown(v)))?;
            let known = enum_items(&e.ty).iter().any(|(_, n)| *n == value);
            if !known {
                return Err(format!("Enum.{} has no item with value {value}", e.ty));
            }
            Variant::EnumItem(rbx_types::EnumItem {
                ty: e.ty.clone(),
                value,
            })
        }
        // The `--attr` syntax of the type, as the page's text field sends it.
        other if type_name(other) == "text" => {
            let text = v
                .as_str()
                .ok_or_else(|| format!("expected text, got {}", Shown(v)))?;
            procmodel_dom::attrs::parse("", text, other).map_err(|e| match e {
                procmodel_dom::attrs::AttrError::Value { reason, syntax, .. } => {
                    format!("{reason} (expected {syntax})")
                }
                e => e.to_string(),
            })?
        }
        other => {
            return Err(format!(
                "attributes of type {:?} cannot be edited in the studio",
                other.ty()
            ));
        }
    })
}

/// An enum's items (name, value), sorted by value.
pub fn enum_items(name: &str) -> Vec<(String, u32)> {
    let mut items: Vec<(String, u32)> = procmodel_dom::db()
        .enums
        .get(name)
        .map(|e| e.items.iter().map(|(k, v)| (k.to_string(), *v)).collect())
        .unwrap_or_default();
    items.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    items
}

/// The value as `procmodel generate --attr Name=VALUE` parses it (None: not expressible).
pub fn cli_text(v: &Variant) -> Option<String> {
    procmodel_dom::attrs::text(v)
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./,=:+@%#".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The binary scene message: `PMF1`, header length (u32 LE), the JSON header padded with
/// spaces to 4 bytes, then the frame body.
pub fn scene_message(header: &str, body: &[u8]) -> Vec<u8> {
    binary_message(b"PMF1", header, body)
}

/// The binary terrain message: as the scene message, with `PMT1` (header: the terrain's id,
/// triangles and parts; body: see `terrain.rs`).
pub fn terrain_message(header: &str, body: &[u8]) -> Vec<u8> {
    binary_message(b"PMT1", header, body)
}

fn binary_message(magic: &[u8; 4], header: &str, body: &[u8]) -> Vec<u8> {
    let pad = (4 - header.len() % 4) % 4;
    let mut out = Vec::with_capacity(8 + header.len() + pad + body.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&((header.len() + pad) as u32).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(like: Variant, input: Value, expected: Result<Variant, &str>) {
        match (from_json(&input, &like), expected) {
            (Ok(got), Ok(want)) => assert_eq!(got, want),
            (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
            (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn a_long_bad_value_is_shown_cut_short() {
        let e = from_json(&json!("x".repeat(100_000)), &Variant::Float64(1.0)).unwrap_err();
        assert!(e.len() < 200 && e.contains("… (100002 bytes)"), "{e}");
    }

    #[test]
    fn values_convert_by_the_attribute_type() {
        check(Variant::Float64(1.0), json!(2.5), Ok(Variant::Float64(2.5)));
        check(Variant::Float64(1.0), json!("2"), Err("expected a number"));
        check(Variant::Bool(false), json!(true), Ok(Variant::Bool(true)));
        check(Variant::Bool(false), json!(1), Err("true or false"));
        check(
            Variant::Vector3(Vector3::new(0.0, 0.0, 0.0)),
            json!([1, 2, 3]),
            Ok(Variant::Vector3(Vector3::new(1.0, 2.0, 3.0))),
        );
        check(
            Variant::Vector3(Vector3::new(0.0, 0.0, 0.0)),
            json!([1, 2]),
            Err("x, y, z"),
        );
        check(
            Variant::Color3(Color3::new(0.0, 0.0, 0.0)),
            json!([1, 0.5, 2]),
            Err("between 0 and 1"),
        );
        check(
            Variant::String(String::new()),
            json!("hi"),
            Ok(Variant::String("hi".into())),
        );
        let e = Variant::EnumItem(rbx_types::EnumItem {
            ty: "Material".into(),
            value: 256,
        });
        check(
            e.clone(),
            json!(512),
            Ok(Variant::EnumItem(rbx_types::EnumItem {
                ty: "Material".into(),
                value: 512,
            })),
        );
        check(e, json!(7), Err("no item with value 7"));
        // The types the page edits as `--attr` text, shown as that text.
        let udim2 = Variant::UDim2(rbx_types::UDim2::new(
            rbx_types::UDim::new(0.5, 10),
            rbx_types::UDim::new(1.0, -20),
        ));
        assert_eq!(type_name(&udim2), "text");
        assert_eq!(to_json(&udim2), json!("0.5,10,1,-20"));
        check(
            udim2.clone(),
            json!("0.25,4,1,0"),
            Ok(Variant::UDim2(rbx_types::UDim2::new(
                rbx_types::UDim::new(0.25, 4),
                rbx_types::UDim::new(1.0, 0),
            ))),
        );
        check(udim2, json!([1, 2]), Err("expected text"));
        let seq = Variant::NumberSequence(rbx_types::NumberSequence { keypoints: vec![] });
        check(
            seq.clone(),
            json!("0:1 1:0"),
            Ok(Variant::NumberSequence(rbx_types::NumberSequence {
                keypoints: vec![
                    rbx_types::NumberSequenceKeypoint::new(0.0, 1.0, 0.0),
                    rbx_types::NumberSequenceKeypoint::new(1.0, 0.0, 0.0),
                ],
            })),
        );
        check(
            seq,
            json!("0:1 0.5:0"),
            Err("start at 0 and end at 1 (expected a number,"),
        );
        let font = Variant::Font(rbx_types::Font::default());
        assert_eq!(type_name(&font), "text");
        check(
            font,
            json!("Arimo,Bold"),
            Ok(Variant::Font(rbx_types::Font::new(
                "rbxasset://fonts/families/Arimo.json",
                rbx_types::FontWeight::Bold,
                rbx_types::FontStyle::Normal,
            ))),
        );
    }

    #[test]
    fn malformed_messages_name_the_problem() {
        let (seq, m) = parse(r#"{"type":"undo"}"#).unwrap_err();
        assert_eq!(seq, None);
        assert!(m.contains("seq"), "{m}");
        let (seq, m) = parse(r#"{"type":"explode","seq":4}"#).unwrap_err();
        assert_eq!(seq, Some(4));
        assert!(m.contains("explode"), "{m}");
        assert!(parse("not json").is_err());
        assert!(matches!(
            parse(r#"{"type":"set_attribute","seq":1,"model":"x","name":"A","value":1}"#),
            Ok(ClientMessage::SetAttribute { seq: 1, .. })
        ));
    }

    #[test]
    fn cli_text_matches_the_attr_syntax() {
        assert_eq!(cli_text(&Variant::Float64(3.0)).unwrap(), "3");
        assert_eq!(cli_text(&Variant::Float64(0.25)).unwrap(), "0.25");
        assert_eq!(
            cli_text(&Variant::Color3(Color3::new(1.0, 0.0, 0.5))).unwrap(),
            "255,0,128"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("Count=3"), "Count=3");
    }
}
