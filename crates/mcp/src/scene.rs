//! What the tools read of a scene, on the engine thread: finding a model by path, the
//! generators' declared attributes (cached per Source), a model as JSON (inputs, status,
//! attributes with types) and generation reports (instances, time, content hash, or the
//! error with its file and line).

use procmodel_dom::attrs;
use procmodel_dom::keys::KEYS;
use procmodel_engine::{Engine, Report};
use rbx_dom_weak::WeakDom;
use rbx_types::{Attributes, Ref, Variant};
use serde_json::{Value, json};

pub use procmodel_engine::DeclaredDefaults as Defaults;

pub fn prop(d: &WeakDom, r: Ref, key: rbx_dom_weak::Ustr) -> Option<Variant> {
    d.get_by_ref(r)?.properties.get(&key).cloned()
}

/// The model's generator module, if it points at one in the scene.
pub fn generator_of(engine: &Engine, model: Ref) -> Option<Ref> {
    engine.with_dom(|d| match prop(d, model, KEYS.generator) {
        Some(Variant::Ref(g)) if d.get_by_ref(g).is_some() => Some(g),
        _ => None,
    })
}

/// The model's explicit attributes.
pub fn attributes_of(engine: &Engine, model: Ref) -> Attributes {
    engine.with_dom(|d| match prop(d, model, KEYS.attributes) {
        Some(Variant::Attributes(a)) => a,
        _ => Attributes::new(),
    })
}

/// The ProceduralModel `given` names: its full name (`Workspace.Stairs`) or, when only one
/// has it, its Name; without `given`, the scene's only model.
pub fn find_model(engine: &Engine, given: Option<&str>) -> Result<Ref, String> {
    let models: Vec<(Ref, String, String)> = engine.with_dom(|d| {
        engine
            .models()
            .into_iter()
            .filter_map(|m| {
                let i = d.get_by_ref(m)?;
                Some((m, procmodel_dom::full_name(d, m), i.name.clone()))
            })
            .collect()
    });
    let list = || {
        models
            .iter()
            .map(|(_, p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(given) = given else {
        return match &models[..] {
            [] => Err("the scene has no ProceduralModel (create one with create_generator)".into()),
            [(m, _, _)] => Ok(*m),
            _ => Err(format!(
                "the scene has several models: name one with the model argument ({})",
                list()
            )),
        };
    };
    if let Some((m, _, _)) = models.iter().find(|(_, p, _)| p == given) {
        return Ok(*m);
    }
    let by_name: Vec<&(Ref, String, String)> =
        models.iter().filter(|(_, _, n)| n == given).collect();
    match by_name[..] {
        [(m, _, _)] => Ok(*m),
        [] => Err(format!(
            "no ProceduralModel '{given}' (models: {})",
            if models.is_empty() {
                "none".to_owned()
            } else {
                list()
            }
        )),
        _ => Err(format!(
            "several models are named '{given}': use the full path ({})",
            by_name
                .iter()
                .map(|(_, p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A value as the tools show it: booleans, numbers and text as JSON, the rest in the text
/// form `set_attributes` takes back (`R,G,B`, `x,y,z`, a BrickColor name).
pub fn value_json(v: &Variant) -> Value {
    match v {
        Variant::Bool(b) => json!(b),
        Variant::Float64(n) => json!(n),
        Variant::Float32(n) => json!(n),
        Variant::Int32(n) => json!(n),
        Variant::Int64(n) => json!(n),
        Variant::String(s) => json!(s),
        other => json!(attrs::text(other).unwrap_or_else(|| attrs::show(other))),
    }
}

/// The model's attributes: declared ones (by name) with their current value and default,
/// then any others it carries.
pub fn attributes_json(
    engine: &Engine,
    model: Ref,
    declared: Option<&[(String, Variant)]>,
) -> Value {
    let current = attributes_of(engine, model);
    let mut out = Vec::new();
    for (name, default) in declared.unwrap_or(&[]) {
        let value = current.get(name.as_str()).unwrap_or(default);
        out.push(json!({
            "name": name,
            "type": attrs::type_name(default),
            "value": value_json(value),
            "default": value_json(default),
            "syntax": attrs::syntax(default),
            "changed": value != default,
        }));
    }
    let mut others: Vec<(&String, &Variant)> = current
        .iter()
        .filter(|(n, _)| !declared.unwrap_or(&[]).iter().any(|(d, _)| d == *n))
        .collect();
    others.sort_by(|a, b| a.0.cmp(b.0));
    for (name, value) in others {
        out.push(json!({
            "name": name,
            "type": attrs::type_name(value),
            "value": value_json(value),
            "default": null,
            "syntax": attrs::syntax(value),
            "changed": true,
        }));
    }
    Value::Array(out)
}

/// fresh, dirty, generating, failed or "no generator".
pub fn status(engine: &Engine, model: Ref) -> &'static str {
    if engine.is_generating(model) {
        "generating"
    } else if engine.is_dirty(model) {
        "dirty"
    } else if error_of(engine, model).is_some() {
        "failed"
    } else if generator_of(engine, model).is_none() {
        "no generator"
    } else {
        "fresh"
    }
}

/// The model's GenerationError, if its last generation failed.
pub fn error_of(engine: &Engine, model: Ref) -> Option<String> {
    engine.with_dom(|d| match prop(d, model, KEYS.generation_error) {
        Some(Variant::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    })
}

/// One model as `list_models` shows it.
pub fn model_json(engine: &Engine, model: Ref, defaults: &mut Defaults) -> Value {
    let generator = generator_of(engine, model);
    let declared = generator.and_then(|g| defaults.of(engine, g));
    let (path, name, generator_path, size, scale, instances) = engine.with_dom(|d| {
        let i = d.get_by_ref(model);
        let size = match prop(d, model, KEYS.size) {
            Some(Variant::Vector3(v)) => [v.x, v.y, v.z],
            _ => [12.0, 12.0, 12.0],
        };
        let scale = match prop(d, model, KEYS.scale) {
            Some(Variant::Float32(s)) => s,
            _ => 1.0,
        };
        (
            procmodel_dom::full_name(d, model),
            i.map(|i| i.name.clone()).unwrap_or_default(),
            generator.map(|g| procmodel_dom::full_name(d, g)),
            size,
            scale,
            folder_of(d, model).map(|f| procmodel_dom::count_subtree(d, f).saturating_sub(1)),
        )
    });
    let error = error_of(engine, model);
    json!({
        "path": path,
        "name": name,
        "generator": generator_path,
        "size": size,
        "scale": scale,
        "status": status(engine, model),
        "instances": instances,
        "error": error,
        "location": error.as_deref().and_then(location).map(|(f, l)| json!({ "file": f, "line": l })),
        "declares_attributes": declared.is_some(),
        "attributes": attributes_json(engine, model, declared.as_deref()),
    })
}

/// The model's GeneratedFolder (its results).
pub fn folder_of(d: &WeakDom, model: Ref) -> Option<Ref> {
    d.get_by_ref(model)?.children().iter().copied().find(|&c| {
        d.get_by_ref(c)
            .is_some_and(|i| i.class == "GeneratedFolder")
    })
}

/// Generation reports as JSON, and whether any failed.
pub fn reports_json(engine: &Engine, reports: &[Report]) -> (Value, bool) {
    let failed = reports.iter().any(|r| !r.is_ok());
    let list = reports
        .iter()
        .map(|r| {
            let hash = if r.is_ok() {
                engine.with_dom(|d| {
                    folder_of(d, r.model).map(|f| {
                        procmodel_dom::hash::to_hex(&procmodel_dom::hash::children_hash(d, f))
                    })
                })
            } else {
                None
            };
            json!({
                "model": r.path,
                "ok": r.is_ok(),
                "instances": r.instances,
                "ms": (r.elapsed.as_secs_f64() * 1e6).round() / 1e3,
                "cached": r.cached,
                "content_hash": hash,
                "error": r.error(),
                "failure": r.failure().map(|f| f.kind()),
                "warning": r.warning(),
                "location": r.error().as_deref().and_then(location).map(|(f, l)| json!({ "file": f, "line": l })),
            })
        })
        .collect();
    (Value::Array(list), failed)
}

/// The first `file:line:` of an error message (Luau's `chunk:line: message`).
pub fn location(message: &str) -> Option<(String, u32)> {
    for (i, _) in message.match_indices(':') {
        let rest = &message[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !rest[digits..].starts_with(':') {
            continue;
        }
        let Ok(line) = rest[..digits].parse::<u32>() else {
            continue;
        };
        let before = &message[..i];
        let start = before
            .rfind(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '(')
            .map_or(0, |s| s + 1);
        let file = &before[start..];
        if !file.is_empty() {
            return Some((file.to_owned(), line));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::location;

    #[test]
    fn locations_of_errors() {
        let check = |m: &str, e: Option<(&str, u32)>| {
            assert_eq!(location(m), e.map(|(f, l)| (f.to_owned(), l)), "{m}");
        };
        check(
            "ServerStorage.Stairs:7: boom",
            Some(("ServerStorage.Stairs", 7)),
        );
        check(
            "Generator error: Workspace.A.Gen:12: attempt to index nil\nstack traceback:",
            Some(("Workspace.A.Gen", 12)),
        );
        check("gen.luau:3: x: 4: y", Some(("gen.luau", 3)));
        check("no location here: 12 things", None);
        check("", None);
    }
}
