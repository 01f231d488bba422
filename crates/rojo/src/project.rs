//! `*.project.json` (or `.jsonc`): the top-level fields (`syncRules` among them), and the tree
//! of instance descriptions (`$className`, `$path`, `$properties`, `$attributes`, `$id`,
//! `$ignoreUnknownInstances`, children by key).

use crate::files::{self, Ctx, Kind, Scope, SyncRule, read_json};
use crate::glob::{Glob, IgnoreGlob};
use crate::{RojoError, Snap, value};
use serde_json::{Map, Value};
use std::path::Path;

const TOP_LEVEL: &[&str] = &[
    "$schema",
    "name",
    "tree",
    "servePort",
    "servePlaceIds",
    "placeId",
    "gameId",
    "serveAddress",
    "globIgnorePaths",
    "emitLegacyScripts",
    "syncRules",
    "blockedPlaceIds",
    "serveAllowedHosts",
    "syncbackRules",
];

/// Loads a project file; `name` replaces the project's `name` (a project included by a
/// parent project or found in a folder takes the name it is included under).
pub(crate) fn load(
    ctx: &mut Ctx<'_>,
    file: &Path,
    name: Option<&str>,
) -> Result<Option<Snap>, RojoError> {
    let canon = ctx.enter_project(file)?;
    let result = load_inner(ctx, file, name);
    ctx.leave_project(&canon);
    result
}

fn load_inner(
    ctx: &mut Ctx<'_>,
    file: &Path,
    name: Option<&str>,
) -> Result<Option<Snap>, RojoError> {
    let json = read_json(ctx, file)?;
    let Value::Object(top) = &json else {
        return Err(RojoError::file(file, "a project must be a JSON object"));
    };
    for key in top.keys() {
        if !TOP_LEVEL.contains(&key.as_str()) {
            return Err(RojoError::field(
                file,
                key,
                format!(
                    "unknown project field (known: {})",
                    TOP_LEVEL[1..].join(", ")
                ),
            ));
        }
    }
    // `name` may be left out (Rojo 7.4.1): a folder's default project takes the folder's
    // name, any other the name it is included under, or its file's name.
    let file_name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let project_name = match top.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(RojoError::field(file, "name", "must be a string")),
        None if crate::DEFAULT_PROJECTS.contains(&file_name) => file
            .parent()
            .and_then(|d| d.canonicalize().ok())
            .and_then(|d| d.file_name().and_then(|n| n.to_str()).map(str::to_owned))
            .ok_or_else(|| {
                RojoError::field(file, "name", "missing, and the folder has no name to take")
            })?,
        None => match name {
            Some(n) => n.to_owned(),
            None => crate::project_stem(file_name)
                .unwrap_or(file_name)
                .to_owned(),
        },
    };
    let check = |key: &str, ok: fn(&Value) -> bool, what: &str| match top.get(key) {
        Some(v) if !ok(v) => Err(RojoError::field(file, key, format!("must be {what}"))),
        _ => Ok(()),
    };
    check(
        "servePort",
        |v| v.as_u64().is_some_and(|p| p <= 65535),
        "a port number",
    )?;
    check("placeId", |v| v.as_u64().is_some(), "a number")?;
    check("gameId", |v| v.as_u64().is_some(), "a number")?;
    check("serveAddress", Value::is_string, "a string")?;
    check("$schema", Value::is_string, "a string")?;
    for ids in ["servePlaceIds", "blockedPlaceIds"] {
        check(
            ids,
            |v| {
                v.as_array()
                    .is_some_and(|a| a.iter().all(|i| i.as_u64().is_some()))
            },
            "an array of place ids",
        )?;
    }
    check(
        "serveAllowedHosts",
        |v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        "an array of host names",
    )?;
    // Syncback (Studio → files) is not part of procmodel: its rules are only checked.
    check("syncbackRules", Value::is_object, "an object")?;
    let legacy = match top.get("emitLegacyScripts") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(RojoError::field(
                file,
                "emitLegacyScripts",
                "must be a boolean",
            ));
        }
    };
    let mut globs = Vec::new();
    match top.get("globIgnorePaths") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let field = format!("globIgnorePaths[{i}]");
                let Value::String(s) = item else {
                    return Err(RojoError::field(file, field, "must be a string"));
                };
                globs.push(IgnoreGlob::new(s).map_err(|e| RojoError::field(file, field, e))?);
            }
        }
        Some(_) => {
            return Err(RojoError::field(
                file,
                "globIgnorePaths",
                "must be an array of globs",
            ));
        }
    }
    let Some(tree) = top.get("tree") else {
        return Err(RojoError::field(
            file,
            "tree",
            "missing (every project has a tree)",
        ));
    };
    let Value::Object(tree) = tree else {
        return Err(RojoError::field(
            file,
            "tree",
            "must be an object (an instance description)",
        ));
    };
    let rules = sync_rules(file, top.get("syncRules"))?;
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    ctx.push_scope(Scope {
        dir: dir.clone(),
        ignore: globs,
        legacy,
        rules,
    });
    let name = name.unwrap_or(&project_name).to_owned();
    let result = node(ctx, file, &dir, "tree", tree, &name, None);
    ctx.pop_scope();
    result
}

/// A project's `syncRules`: each `{"pattern", "use", "suffix"?, "exclude"?}`.
fn sync_rules(file: &Path, rules: Option<&Value>) -> Result<Vec<SyncRule>, RojoError> {
    let Some(rules) = rules else {
        return Ok(Vec::new());
    };
    let Value::Array(rules) = rules else {
        return Err(RojoError::field(
            file,
            "syncRules",
            "must be an array of rules",
        ));
    };
    let mut out = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let at = |key: &str| format!("syncRules[{i}].{key}");
        let Value::Object(rule) = rule else {
            return Err(RojoError::field(
                file,
                format!("syncRules[{i}]"),
                "must be an object (pattern, use, suffix, exclude)",
            ));
        };
        for key in rule.keys() {
            if !["pattern", "use", "suffix", "exclude"].contains(&key.as_str()) {
                return Err(RojoError::field(
                    file,
                    at(key),
                    "unknown sync rule field (known: pattern, use, suffix, exclude)",
                ));
            }
        }
        let text = |key: &str, required: bool| -> Result<Option<&str>, RojoError> {
            match rule.get(key) {
                Some(Value::String(s)) => Ok(Some(s)),
                None if !required => Ok(None),
                None => Err(RojoError::field(file, at(key), "missing")),
                Some(_) => Err(RojoError::field(file, at(key), "must be a string")),
            }
        };
        let glob =
            |key: &str, g: &str| Glob::new(g).map_err(|e| RojoError::field(file, at(key), e));
        let include = glob("pattern", text("pattern", true)?.unwrap_or_default())?;
        let exclude = text("exclude", false)?
            .map(|g| glob("exclude", g))
            .transpose()?;
        let used = text("use", true)?.unwrap_or_default();
        let Some(&(_, kind)) = Kind::USES.iter().find(|(n, _)| *n == used) else {
            let known: Vec<&str> = Kind::USES.iter().map(|(n, _)| *n).collect();
            return Err(RojoError::field(
                file,
                at("use"),
                format!("unknown file type '{used}' (known: {})", known.join(", ")),
            ));
        };
        out.push(SyncRule {
            include,
            exclude,
            kind,
            suffix: text("suffix", false)?.map(str::to_owned),
        });
    }
    Ok(out)
}

/// One instance description. `field` is its JSON path (for errors).
fn node(
    ctx: &mut Ctx<'_>,
    file: &Path,
    dir: &Path,
    field: &str,
    obj: &Map<String, Value>,
    name: &str,
    parent_class: Option<&str>,
) -> Result<Option<Snap>, RojoError> {
    let at = |key: &str| format!("{field}.{key}");
    for key in obj.keys() {
        if key.starts_with('$')
            && !matches!(
                key.as_str(),
                "$className"
                    | "$path"
                    | "$properties"
                    | "$attributes"
                    | "$id"
                    | "$ignoreUnknownInstances"
            )
        {
            return Err(RojoError::field(
                file,
                at(key),
                "unknown field (known: $className, $path, $properties, $attributes, $id, $ignoreUnknownInstances; other keys are children)",
            ));
        }
    }
    let class_name = match obj.get("$className") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(RojoError::field(file, at("$className"), "must be a string")),
    };
    match obj.get("$ignoreUnknownInstances") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(RojoError::field(
                file,
                at("$ignoreUnknownInstances"),
                "must be a boolean",
            ));
        }
    }
    let (path, optional) = match obj.get("$path") {
        None => (None, false),
        Some(Value::String(s)) => (Some(s.clone()), false),
        Some(Value::Object(o))
            if o.len() == 1 && o.get("optional").is_some_and(Value::is_string) =>
        {
            (o["optional"].as_str().map(str::to_owned), true)
        }
        Some(_) => {
            return Err(RojoError::field(
                file,
                at("$path"),
                "must be a path string or {\"optional\": \"path\"}",
            ));
        }
    };
    let mut base = None;
    if let Some(p) = &path {
        let full = dir.join(p);
        if !full.exists() {
            if !optional {
                return Err(RojoError::field(
                    file,
                    at("$path"),
                    format!("no file or folder {}", full.display()),
                ));
            }
        } else {
            base = files::snapshot_path(ctx, &full, Some(name))?;
            if base.is_none() && class_name.is_none() {
                // A path Rojo does not turn into an instance (unknown file type, ignored).
                return Ok(None);
            }
        }
    }
    let mut snap = match base {
        Some(mut s) => {
            // A service (or a known fixed child) keeps its class when its $path is a folder.
            let class_name = class_name.or_else(|| {
                (s.class == "Folder")
                    .then(|| infer_class(name, parent_class))
                    .flatten()
            });
            if let Some(c) = &class_name {
                if s.class != "Folder" && &s.class != c {
                    return Err(RojoError::field(
                        file,
                        at("$className"),
                        format!(
                            "'{c}' conflicts with $path, which is a {} (only a Folder's class can be set)",
                            s.class
                        ),
                    ));
                }
                s.class = c.clone();
            }
            s.name = name.to_owned();
            s
        }
        None => {
            let class = match class_name.or_else(|| infer_class(name, parent_class)) {
                Some(c) => c,
                None if path.is_some() => return Ok(None),
                None => {
                    return Err(RojoError::field(
                        file,
                        field,
                        "$className is required when there is no $path (it may be left out only for services)",
                    ));
                }
            };
            Snap::new(name, &class, file)
        }
    };
    match obj.get("$properties") {
        None => {}
        Some(Value::Object(props)) => {
            for (k, v) in props {
                let (name, value) = value::property(&snap.class, k, v)
                    .map_err(|e| RojoError::field(file, format!("{field}.$properties.{k}"), e))?;
                snap.props.insert(name, value);
            }
        }
        Some(_) => {
            return Err(RojoError::field(
                file,
                at("$properties"),
                "must be an object",
            ));
        }
    }
    if let Some(rbx_types::Variant::Attributes(a)) = snap.props.remove("Attributes") {
        for (k, v) in a {
            snap.attrs.insert(k, v);
        }
    }
    if let Some(attrs) = obj.get("$attributes") {
        let map = value::attributes_map(attrs)
            .map_err(|e| RojoError::field(file, at("$attributes"), e))?;
        for (k, v) in map {
            snap.attrs.insert(k, v);
        }
    }
    match obj.get("$id") {
        None => {}
        Some(Value::String(s)) => snap.id = Some(s.clone()),
        Some(_) => return Err(RojoError::field(file, at("$id"), "must be a string")),
    }
    let class = snap.class.clone();
    for (key, child) in obj {
        if key.starts_with('$') {
            continue;
        }
        let child_field = format!("{field}.{key}");
        let Value::Object(child) = child else {
            return Err(RojoError::field(
                file,
                child_field,
                "a child must be an instance description (an object)",
            ));
        };
        if let Some(c) = node(ctx, file, dir, &child_field, child, key, Some(&class))? {
            snap.children.push(c);
        }
    }
    Ok(Some(snap))
}

/// The class of a description without `$className` or `$path`: a service named by its key,
/// or one of the fixed children Rojo knows (Workspace.Terrain, StarterPlayer's script folders).
fn infer_class(name: &str, parent_class: Option<&str>) -> Option<String> {
    if procmodel_dom::is_service(name) {
        return Some(name.to_owned());
    }
    match (parent_class, name) {
        (Some("Workspace"), "Terrain")
        | (Some("StarterPlayer"), "StarterPlayerScripts" | "StarterCharacterScripts") => {
            Some(name.to_owned())
        }
        _ => None,
    }
}
