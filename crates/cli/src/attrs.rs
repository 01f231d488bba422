//! `--attr Name=Value` on the command line: splitting the argument and showing values. The
//! parsing by the declared default's type lives in `procmodel_dom::attrs` (shared with the
//! MCP server).

use anyhow::{Result, anyhow};
pub use procmodel_dom::attrs::{show, type_name};
use rbx_types::Variant;

/// Splits `Name=Value`.
pub fn split(arg: &str) -> Result<(&str, &str)> {
    arg.split_once('=')
        .ok_or_else(|| anyhow!("--attr {arg}: expected Name=Value"))
}

/// A JSON rendering of an attribute value.
pub fn to_json(v: &Variant) -> serde_json::Value {
    use serde_json::json;
    match v {
        Variant::Bool(b) => json!(b),
        Variant::Float64(n) => json!(n),
        Variant::Float32(n) => json!(n),
        Variant::String(s) => json!(s),
        Variant::Vector3(v) => json!([v.x, v.y, v.z]),
        Variant::Vector2(v) => json!([v.x, v.y]),
        Variant::Color3(c) => json!([c.r, c.g, c.b]),
        other => json!(show(other)),
    }
}
