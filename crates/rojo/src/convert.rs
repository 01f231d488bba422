//! Data files as Rojo maps them: `.json`/`.toml`/`.yaml` → the Luau source of a ModuleScript
//! returning the same table, `.csv` → a LocalizationTable's `Contents` (its entries as JSON).

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A data file's value as the module returns it. Table keys are values too (a YAML map may
/// be keyed by numbers or booleans); a JSON object's are its strings.
enum Data {
    Nil,
    Bool(bool),
    /// The number as Luau source.
    Number(String),
    Str(String),
    Array(Vec<Data>),
    Map(Vec<(Data, Data)>),
}

impl From<&Value> for Data {
    fn from(v: &Value) -> Data {
        match v {
            Value::Null => Data::Nil,
            Value::Bool(b) => Data::Bool(*b),
            Value::Number(n) => Data::Number(luau_number(n)),
            Value::String(s) => Data::Str(s.clone()),
            Value::Array(items) => Data::Array(items.iter().map(Data::from).collect()),
            // In the map's order (serde_json keeps keys sorted).
            Value::Object(map) => Data::Map(
                map.iter()
                    .map(|(k, v)| (Data::Str(k.clone()), Data::from(v)))
                    .collect(),
            ),
        }
    }
}

/// `return <table>` for a JSON value (object keys in sorted order, as serde_json keeps them).
pub(crate) fn luau_module(value: &Value) -> String {
    data_module(&Data::from(value))
}

fn data_module(data: &Data) -> String {
    let mut out = String::from("return ");
    luau_value(&mut out, data, 0);
    out.push('\n');
    out
}

fn luau_value(out: &mut String, value: &Data, depth: usize) {
    match value {
        Data::Nil => out.push_str("nil"),
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Number(n) => out.push_str(n),
        Data::Str(s) => luau_string(out, s),
        Data::Array(items) if items.is_empty() => out.push_str("{}"),
        Data::Array(items) if items.iter().all(is_scalar) => {
            out.push('{');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                luau_value(out, item, depth + 1);
            }
            out.push('}');
        }
        Data::Array(items) => {
            out.push_str("{\n");
            for item in items {
                indent(out, depth + 1);
                luau_value(out, item, depth + 1);
                out.push_str(",\n");
            }
            indent(out, depth);
            out.push('}');
        }
        Data::Map(map) if map.is_empty() => out.push_str("{}"),
        Data::Map(map) => {
            out.push_str("{\n");
            for (k, v) in map {
                indent(out, depth + 1);
                match k {
                    Data::Str(k) if is_identifier(k) => out.push_str(k),
                    k => {
                        out.push('[');
                        luau_value(out, k, depth + 1);
                        out.push(']');
                    }
                }
                out.push_str(" = ");
                luau_value(out, v, depth + 1);
                out.push_str(",\n");
            }
            indent(out, depth);
            out.push('}');
        }
    }
}

fn is_scalar(v: &Data) -> bool {
    !matches!(v, Data::Array(_) | Data::Map(_))
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push('\t');
    }
}

fn luau_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    float_literal(n.as_f64().unwrap_or(0.0))
}

/// A float as Luau source: `math.huge`, `-math.huge` and `0/0` for the non-finite ones.
fn float_literal(f: f64) -> String {
    if f.is_finite() {
        format!("{f:?}")
    } else if f.is_nan() {
        "0/0".into()
    } else if f > 0.0 {
        "math.huge".into()
    } else {
        "-math.huge".into()
    }
}

/// `return <table>` for a YAML file (Rojo 7.6): one document; maps in the file's order, keyed
/// by strings, numbers or booleans; `~`/`null` is nil. Integers beyond 2^53, which a Luau
/// number cannot hold exactly, anchors and aliases, and several documents are errors.
pub(crate) fn yaml_module(text: &str) -> Result<String, String> {
    let mut docs =
        yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| format!("not valid YAML: {e}"))?;
    if docs.len() > 1 {
        return Err(format!(
            "a YAML data file must hold one document, this one holds {}",
            docs.len()
        ));
    }
    let doc = docs
        .pop()
        .ok_or("a YAML data file must hold a document (this one is empty)")?;
    Ok(data_module(&yaml_data(doc, "the document")?))
}

fn yaml_data(v: yaml_rust2::Yaml, at: &str) -> Result<Data, String> {
    use yaml_rust2::Yaml;
    const EXACT: i64 = 1 << 53;
    Ok(match v {
        Yaml::Null => Data::Nil,
        Yaml::Boolean(b) => Data::Bool(b),
        Yaml::Integer(i) if (-EXACT..=EXACT).contains(&i) => Data::Number(i.to_string()),
        Yaml::Integer(i) => {
            return Err(format!(
                "{at}: the integer {i} cannot be held exactly by a Luau number"
            ));
        }
        Yaml::Real(ref r) => match v.as_f64() {
            Some(f) => Data::Number(float_literal(f)),
            None => return Err(format!("{at}: '{r}' is not a number")),
        },
        Yaml::String(s) => Data::Str(s),
        Yaml::Array(items) => Data::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| yaml_data(item, &format!("{at}[{}]", i + 1)))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Hash(map) => {
            let mut out = Vec::with_capacity(map.len());
            for (k, v) in map {
                let key = yaml_data(k, at)?;
                let name = match &key {
                    Data::Str(s) => s.clone(),
                    Data::Number(n) => n.clone(),
                    Data::Bool(b) => b.to_string(),
                    _ => {
                        return Err(format!(
                            "{at}: a map key must be a string, a number or a boolean (Luau table keys)"
                        ));
                    }
                };
                let value = yaml_data(v, &format!("{at}.{name}"))?;
                out.push((key, value));
            }
            Data::Map(out)
        }
        Yaml::Alias(_) => return Err(format!("{at}: YAML aliases are not read (as in Rojo)")),
        Yaml::BadValue => return Err(format!("{at}: not a YAML value")),
    })
}

const KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
    "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

fn luau_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\{}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A TOML document as the JSON value it maps to (dates become strings, as in Rojo).
pub(crate) fn toml_to_json(text: &str) -> Result<Value, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    Ok(toml_value(toml::Value::Table(table)))
}

fn toml_value(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_value).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_value(v))).collect())
        }
    }
}

/// The `Contents` of a LocalizationTable from Roblox's CSV layout: a header row with `Key`,
/// `Source`, `Context`, `Example` and one column per locale. Rows without a key and a
/// source are skipped. Errors name the 1-based row.
pub(crate) fn localization_contents(text: &str) -> Result<String, String> {
    let rows = parse_csv(text)?;
    let Some((header, body)) = rows.split_first() else {
        return Ok("[]".into());
    };
    let mut entries = Vec::new();
    for (i, row) in body.iter().enumerate() {
        if row.len() > header.len() {
            return Err(format!(
                "row {}: {} fields, but the header has {}",
                i + 2,
                row.len(),
                header.len()
            ));
        }
        let mut entry = serde_json::Map::new();
        let mut values = BTreeMap::new();
        for (column, field) in header.iter().zip(row) {
            if field.is_empty() {
                continue;
            }
            let key = match column.as_str() {
                "Key" => "key",
                "Source" => "source",
                "Context" => "context",
                "Example" => "example",
                locale => {
                    values.insert(locale.to_owned(), Value::String(field.clone()));
                    continue;
                }
            };
            entry.insert(key.to_owned(), Value::String(field.clone()));
        }
        if !entry.contains_key("key") && !entry.contains_key("source") {
            continue;
        }
        entry.insert(
            "values".to_owned(),
            Value::Object(values.into_iter().collect()),
        );
        entries.push(Value::Object(entry));
    }
    Ok(Value::Array(entries).to_string())
}

/// RFC 4180 CSV: fields separated by commas, quoted fields with `""` for a quote, CRLF or LF.
fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut quoted_at = None;
    while let Some(c) = chars.next() {
        if let Some(start) = quoted_at {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    quoted_at = None;
                    let _ = start;
                }
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted_at = Some(line),
            ',' => row.push(std::mem::take(&mut field)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                line += 1;
            }
            c => field.push(c),
        }
    }
    if let Some(start) = quoted_at {
        return Err(format!("row {start}: a quoted field is never closed"));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows.retain(|r| !(r.len() == 1 && r[0].is_empty()));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_luau(json: &str, expected: &str) {
        let v: Value = serde_json::from_str(json).unwrap();
        assert_eq!(luau_module(&v), expected);
    }

    #[test]
    fn json_modules() {
        check_luau("[]", "return {}\n");
        check_luau("[1, 2.5, \"a\"]", "return {1, 2.5, \"a\"}\n");
        check_luau(
            r#"{"b": true, "a": {"key 1": 1337, "end": []}, "n": null}"#,
            "return {\n\ta = {\n\t\t[\"end\"] = {},\n\t\t[\"key 1\"] = 1337,\n\t},\n\tb = true,\n\tn = nil,\n}\n",
        );
        check_luau(r#""q\"\\\n""#, "return \"q\\\"\\\\\\n\"\n");
        check_luau(
            "[[1], {\"x\": 1}]",
            "return {\n\t{1},\n\t{\n\t\tx = 1,\n\t},\n}\n",
        );
    }

    #[test]
    fn toml_modules() {
        let v = toml_to_json("a = 1\n[b]\nc = \"x\"\n").unwrap();
        assert_eq!(
            luau_module(&v),
            "return {\n\ta = 1,\n\tb = {\n\t\tc = \"x\",\n\t},\n}\n"
        );
        assert!(toml_to_json("a = ").is_err());
    }

    #[test]
    fn yaml_modules() {
        let text = "string: a b\nflag: true\nint: 1337\nreal: 2.5\nnothing: ~\nlist: [x, 8]\n7: seven\nmap:\n  key: v\n  \"with space\": 2\n";
        assert_eq!(
            yaml_module(text).unwrap(),
            "return {\n\tstring = \"a b\",\n\tflag = true,\n\tint = 1337,\n\treal = 2.5,\n\tnothing = nil,\n\tlist = {\"x\", 8},\n\t[7] = \"seven\",\n\tmap = {\n\t\tkey = \"v\",\n\t\t[\"with space\"] = 2,\n\t},\n}\n"
        );
        assert_eq!(
            yaml_module("- .inf\n- -.inf\n").unwrap(),
            "return {math.huge, -math.huge}\n"
        );
        assert!(
            yaml_module("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .contains("one document")
        );
        assert!(yaml_module("").unwrap_err().contains("empty"));
        assert!(
            yaml_module("big: 9007199254740993\n")
                .unwrap_err()
                .contains("the document.big")
        );
        assert!(
            yaml_module("a: [1\n")
                .unwrap_err()
                .contains("not valid YAML")
        );
        assert!(yaml_module("? [1]\n: x\n").unwrap_err().contains("map key"));
    }

    #[test]
    fn localization_tables() {
        let csv = "Key,Source,Context,Example,es\r\nAck,Ack!,,An exclamation,\"¡Ay, \"\"no\"\"!\"\r\n,,,,\r\n";
        assert_eq!(
            localization_contents(csv).unwrap(),
            r#"[{"example":"An exclamation","key":"Ack","source":"Ack!","values":{"es":"¡Ay, \"no\"!"}}]"#
        );
        assert_eq!(
            localization_contents("Key,Source\nA,B,C\n").unwrap_err(),
            "row 2: 3 fields, but the header has 2"
        );
        assert!(
            localization_contents("Key\n\"open\n")
                .unwrap_err()
                .contains("never closed")
        );
    }
}
