//! Methods of StyleRule: the properties a rule sets (`SetProperty`, `SetProperties`,
//! `GetProperty`, `GetProperties`), kept in its `Properties` (saved as Roblox saves them,
//! `PropertiesSerialize`). As the reference says, a name that is no property of a GUI object
//! or UI component is ignored, and a value of the wrong type is refused with a line in the
//! output; a `$Token` string is kept as it is. Transitions are not implemented (their saved
//! form is undocumented). Must never apply a rule to the instances it selects.

use super::instance::{attribute_map, read_attribute_map};
use crate::context::{Instance, LogLevel, ctx};
use crate::methods::MethodTable;
use mlua::{Lua, Value};
use rbx_dom_weak::ustr;
use rbx_reflection::DataType;
use rbx_types::Variant;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Each property name of the classes a style rule can affect (GUI objects and UI
/// components) with the types it has there (`Color` is a Color3 on a UIStroke and a
/// ColorSequence on a UIGradient).
fn styleable() -> &'static BTreeMap<&'static str, BTreeSet<String>> {
    static TABLE: OnceLock<BTreeMap<&'static str, BTreeSet<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let db = procmodel_dom::db();
        let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
        for (name, class) in &db.classes {
            if !(procmodel_dom::is_a(name, "GuiBase2d") || procmodel_dom::is_a(name, "UIComponent"))
            {
                continue;
            }
            for (prop, p) in &class.properties {
                let scriptable = !p.tags.contains(&rbx_reflection::PropertyTag::NotScriptable)
                    && !p.tags.contains(&rbx_reflection::PropertyTag::ReadOnly);
                if !scriptable {
                    continue;
                }
                let ty = match &p.data_type {
                    DataType::Value(v) => format!("{v:?}"),
                    DataType::Enum(e) => format!("Enum.{e}"),
                    _ => continue,
                };
                out.entry(prop.as_ref()).or_default().insert(ty);
            }
        }
        out
    })
}

/// Whether `value` (as an attribute stores it) may be given to a property of type `ty`.
fn fits(value: &Variant, ty: &str) -> bool {
    match value {
        Variant::String(s) if s.starts_with('$') => true,
        Variant::String(_) => matches!(ty, "String" | "ContentId" | "Content"),
        Variant::Float64(_) => matches!(ty, "Float32" | "Float64" | "Int32" | "Int64"),
        Variant::EnumItem(e) => ty.strip_prefix("Enum.") == Some(e.ty.as_str()),
        other => format!("{:?}", other.ty()) == ty,
    }
}

/// The type a script would name for `value`.
fn value_type(value: &Variant) -> String {
    match value {
        Variant::Float64(_) => "number".into(),
        Variant::String(_) => "string".into(),
        Variant::Bool(_) => "boolean".into(),
        Variant::EnumItem(e) => format!("Enum.{}", e.ty),
        other => format!("{:?}", other.ty()),
    }
}

/// Sets (or, with nil, clears) one property of the rule; `method` names the caller.
fn set(lua: &Lua, this: &Instance, name: &str, value: &Value, method: &str) -> mlua::Result<()> {
    let variant = match value {
        Value::Nil => None,
        v => Some(procmodel_luau_types::lua_to_attribute(v).map_err(|e| {
            mlua::Error::runtime(format!("StyleRule:{method}: property \"{name}\": {e}"))
        })?),
    };
    let mut c = ctx(lua)?;
    c.check_write(this.r, || format!("StyleRule:{method}"))?;
    // A name no GUI object or UI component has is ignored, as the reference says.
    let Some(types) = styleable().get(name) else {
        return Ok(());
    };
    if let Some(v) = &variant {
        if !types.iter().any(|ty| fits(v, ty)) {
            let wanted: Vec<&str> = types.iter().map(String::as_str).collect();
            c.log(
                LogLevel::Warn,
                format!(
                    "StyleRule:{method}: {name} is a {} property, got {}",
                    wanted.join(" or "),
                    value_type(v)
                ),
            );
            return Ok(());
        }
        c.charge_text(v)?;
    }
    let inst = c
        .dom
        .get_by_ref_mut(this.r)
        .ok_or_else(|| mlua::Error::runtime("instance no longer exists"))?;
    let mut props = attribute_map(inst, ustr("Properties"))
        .cloned()
        .unwrap_or_default();
    match variant {
        Some(v) => {
            props.insert(name.to_owned(), v);
        }
        None => {
            props.remove(name);
        }
    }
    inst.properties
        .insert("Properties".into(), Variant::Attributes(props));
    Ok(())
}

pub fn register(m: &mut MethodTable) {
    m.class("StyleRule");
    m.add_method("GetProperty", |lua, this, name: String| {
        read_attribute_map(lua, this, ustr("Properties"), Some(&name))
    });
    m.add_method("GetProperties", |lua, this, ()| {
        read_attribute_map(lua, this, ustr("Properties"), None)
    });
    m.add_method(
        "SetProperty",
        |lua, this, (name, value): (String, Value)| set(lua, this, &name, &value, "SetProperty"),
    );
    m.add_method("SetProperties", |lua, this, props: Value| {
        let Value::Table(t) = props else {
            return Err(mlua::Error::runtime(format!(
                "StyleRule:SetProperties: argument 1 must be a table of property names and values, got {}",
                procmodel_luau_types::type_name(&props)
            )));
        };
        // In name order: the result never depends on the table's iteration order.
        let mut pairs = Vec::new();
        for pair in t.pairs::<Value, Value>() {
            let (k, v) = pair?;
            let Value::String(k) = k else {
                return Err(mlua::Error::runtime(format!(
                    "StyleRule:SetProperties: keys must be property names, got {}",
                    procmodel_luau_types::type_name(&k)
                )));
            };
            pairs.push((k.to_string_lossy(), v));
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in pairs {
            set(lua, this, &k, &v, "SetProperties")?;
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_styleable_table_knows_gui_and_component_properties() {
        let t = styleable();
        assert!(t["BackgroundColor3"].contains("Color3"));
        assert!(t["AnchorPoint"].contains("Vector2"));
        let color = &t["Color"];
        assert!(
            color.contains("Color3") && color.contains("ColorSequence"),
            "{color:?}"
        );
        assert!(!t.contains_key("AnchorPt"));
        assert!(fits(&Variant::String("$Token".into()), "Color3"));
        assert!(fits(&Variant::Float64(3.0), "Int32"));
        assert!(!fits(&Variant::Float64(3.0), "Color3"));
    }
}
