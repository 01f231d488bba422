//! A tool call's arguments (a JSON object) read strictly: unknown names are refused, every
//! value is checked for its type and range, and every error names the argument and the form
//! it expects.

use serde_json::{Map, Value};

/// Largest accepted Size component, in studs (as `--size`).
pub const MAX_STUDS: f64 = 1_000_000.0;
/// Largest accepted Scale (and smallest: its inverse), as `--scale`.
pub const MAX_SCALE: f64 = 1_000_000.0;

/// The arguments of one call.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Checks that every given argument is one of `known`.
    pub fn new(map: &'a Map<String, Value>, known: &[&str]) -> Result<Args<'a>, String> {
        for k in map.keys() {
            if !known.contains(&k.as_str()) {
                return Err(format!(
                    "unknown argument '{k}' (this tool takes: {})",
                    if known.is_empty() {
                        "no arguments".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
        Ok(Args { map })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// An optional text argument.
    pub fn string(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(format!("argument {name}: expected text, got {v}")),
        }
    }

    /// A required text argument.
    pub fn required(&self, name: &str) -> Result<&'a str, String> {
        self.string(name)?
            .ok_or_else(|| format!("argument {name} is required"))
    }

    /// An optional boolean.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(format!("argument {name}: expected true or false, got {v}")),
        }
    }

    /// An optional Size: `[x, y, z]` or `"x,y,z"`, each 0.001 to 1,000,000 studs.
    pub fn size(&self, name: &str) -> Result<Option<glam::Vec3>, String> {
        self.get(name).map(|v| size(name, v)).transpose()
    }

    /// An optional Scale: a number from 0.000001 to 1,000,000.
    pub fn scale(&self, name: &str) -> Result<Option<f32>, String> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = number(v).ok_or_else(|| format!("argument {name}: expected a number, got {v}"))?;
        if !(1.0 / MAX_SCALE..=MAX_SCALE).contains(&n) {
            return Err(format!(
                "argument {name}: {n} is out of range: use {} to {MAX_SCALE}",
                1.0 / MAX_SCALE
            ));
        }
        Ok(Some(n as f32))
    }

    /// An optional object of attribute values: name → value (`null`: reset to the default).
    pub fn attributes(&self, name: &str) -> Result<Vec<(String, Option<String>)>, String> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    if v.is_null() {
                        Ok((k.clone(), None))
                    } else {
                        value_text(v)
                            .map(|t| (k.clone(), Some(t)))
                            .map_err(|e| format!("attribute {k}: {e}"))
                    }
                })
                .collect(),
            Some(v) => Err(format!(
                "argument {name}: expected an object of attribute names and values, got {v}"
            )),
        }
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    }
}

fn size(name: &str, v: &Value) -> Result<glam::Vec3, String> {
    let bad = || format!("argument {name}: expected [x, y, z] or \"x,y,z\" (studs), got {v}");
    let parts: Vec<Value> = match v {
        Value::Array(a) => a.clone(),
        Value::String(s) => s.split(',').map(|p| Value::String(p.to_owned())).collect(),
        _ => return Err(bad()),
    };
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0.0f32; 3];
    for ((o, p), axis) in out.iter_mut().zip(&parts).zip(["X", "Y", "Z"]) {
        let n = number(p).ok_or_else(bad)?;
        if !(0.001..=MAX_STUDS).contains(&n) {
            return Err(format!(
                "argument {name}: {axis} is {n}: use 0.001 to {MAX_STUDS} studs"
            ));
        }
        *o = n as f32;
    }
    Ok(glam::Vec3::from_array(out))
}

/// An attribute value as the text `--attr` takes (then parsed by the declared type): text as
/// it is, numbers and booleans written out, arrays of numbers joined with commas.
pub fn value_text(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Array(a) if a.iter().all(Value::is_number) => {
            Ok(a.iter().map(Value::to_string).collect::<Vec<_>>().join(","))
        }
        _ => Err(format!(
            "expected text, a number, true/false or an array of numbers, got {v}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn unknown_arguments_are_named() {
        let m = map(json!({ "model": "A", "sise": [1, 2, 3] }));
        let e = Args::new(&m, &["model", "size"]).err().unwrap();
        assert_eq!(e, "unknown argument 'sise' (this tool takes: model, size)");
    }

    #[test]
    fn sizes_in_both_forms_and_ranges() {
        let m = map(
            json!({ "a": [1, 2.5, 3], "b": "4, 5,6", "c": [1, 2], "d": [0, 1, 1], "e": "x,1,1", "f": null }),
        );
        let a = Args::new(&m, &["a", "b", "c", "d", "e", "f"]).unwrap();
        assert_eq!(a.size("a").unwrap(), Some(glam::Vec3::new(1.0, 2.5, 3.0)));
        assert_eq!(a.size("b").unwrap(), Some(glam::Vec3::new(4.0, 5.0, 6.0)));
        assert!(a.size("c").unwrap_err().contains("expected [x, y, z]"));
        assert!(a.size("d").unwrap_err().contains("X is 0"));
        assert!(a.size("e").is_err());
        assert_eq!(a.size("f").unwrap(), None);
        assert_eq!(a.size("missing").unwrap(), None);
    }

    #[test]
    fn scalars() {
        let m = map(json!({ "s": 2, "t": "x", "b": 1, "z": 0, "name": 3 }));
        let a = Args::new(&m, &["s", "t", "b", "z", "name"]).unwrap();
        assert_eq!(a.scale("s").unwrap(), Some(2.0));
        assert!(a.scale("z").unwrap_err().contains("out of range"));
        assert!(a.scale("t").unwrap_err().contains("expected a number"));
        assert!(a.bool("b").unwrap_err().contains("true or false"));
        assert_eq!(
            a.required("name").unwrap_err(),
            "argument name: expected text, got 3"
        );
        assert_eq!(a.required("nope").unwrap_err(), "argument nope is required");
    }

    #[test]
    fn attribute_values_become_attr_text() {
        let m = map(json!({ "attributes": {
            "Steps": 7, "On": true, "Tint": [255, 0, 0], "Name": "a b", "Reset": null
        }}));
        let a = Args::new(&m, &["attributes"]).unwrap();
        let mut got = a.attributes("attributes").unwrap();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Name".into(), Some("a b".into())),
                ("On".into(), Some("true".into())),
                ("Reset".into(), None),
                ("Steps".into(), Some("7".into())),
                ("Tint".into(), Some("255,0,0".into())),
            ]
        );
        let m = map(json!({ "attributes": { "X": { "nested": 1 } } }));
        let e = Args::new(&m, &["attributes"])
            .unwrap()
            .attributes("attributes")
            .unwrap_err();
        assert!(e.starts_with("attribute X: expected text"), "{e}");
    }
}
