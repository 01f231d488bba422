//! Rojo's file conventions: folders, scripts and `init` scripts, `*.meta.json`/`init.meta.json`,
//! `*.model.json`, `.txt`/`.csv`/`.json`/`.toml` data files, `.rbxm`/`.rbxmx` models and
//! nested projects. Folder entries are taken sorted by file name.

use crate::convert;
use crate::{ModelReader, RojoError, Snap, glob::Glob, value};
use rbx_types::Variant;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Projects nest at most this deep (a project including itself is caught before).
const MAX_PROJECT_DEPTH: usize = 64;

/// Builds a nested project file (`project::load`, given by the crate root, so that the file
/// conventions, which the project reader calls for its `$path`s, do not call back up).
pub(crate) type LoadProject =
    fn(&mut Ctx<'_>, &Path, Option<&str>) -> Result<Option<Snap>, RojoError>;

/// The state of one build.
pub(crate) struct Ctx<'a> {
    read_model: &'a ModelReader<'a>,
    load_project: LoadProject,
    /// Projects being loaded (canonical paths), outermost first.
    projects: Vec<PathBuf>,
    /// Per project being loaded: its folder, its ignore globs, its emitLegacyScripts.
    scopes: Vec<(PathBuf, Vec<Glob>, bool)>,
    /// Every file read.
    pub(crate) files: BTreeSet<PathBuf>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(read_model: &'a ModelReader<'a>, load_project: LoadProject) -> Ctx<'a> {
        Ctx {
            read_model,
            load_project,
            projects: Vec::new(),
            scopes: Vec::new(),
            files: BTreeSet::new(),
        }
    }

    pub(crate) fn enter_project(&mut self, file: &Path) -> Result<PathBuf, RojoError> {
        let canon = file
            .canonicalize()
            .map_err(|e| RojoError::file(file, format!("cannot open: {e}")))?;
        if self.projects.contains(&canon) {
            return Err(RojoError::file(file, "the project includes itself"));
        }
        if self.projects.len() >= MAX_PROJECT_DEPTH {
            return Err(RojoError::file(file, "projects nest too deeply"));
        }
        self.projects.push(canon.clone());
        Ok(canon)
    }

    pub(crate) fn leave_project(&mut self, canon: &Path) {
        if self.projects.last().map(PathBuf::as_path) == Some(canon) {
            self.projects.pop();
        }
    }

    pub(crate) fn push_scope(&mut self, dir: PathBuf, globs: Vec<Glob>, legacy: bool) {
        self.scopes.push((dir, globs, legacy));
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn legacy_scripts(&self) -> bool {
        self.scopes.last().is_none_or(|s| s.2)
    }

    /// True when the current project's globIgnorePaths exclude `path`.
    fn ignored(&self, path: &Path) -> bool {
        let Some((dir, globs, _)) = self.scopes.last() else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(dir) else {
            return false;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let rel = rel.join("/");
        globs.iter().any(|g| g.matches(&rel))
    }

    fn read(&mut self, file: &Path) -> Result<Vec<u8>, RojoError> {
        let bytes =
            std::fs::read(file).map_err(|e| RojoError::file(file, format!("cannot read: {e}")))?;
        self.files
            .insert(file.canonicalize().unwrap_or_else(|_| file.to_path_buf()));
        Ok(bytes)
    }

    fn read_text(&mut self, file: &Path) -> Result<String, RojoError> {
        String::from_utf8(self.read(file)?)
            .map_err(|e| RojoError::file(file, format!("not UTF-8 text: {e}")))
    }
}

/// Reads and parses a JSON file; syntax errors name the line and column.
pub(crate) fn read_json(ctx: &mut Ctx<'_>, file: &Path) -> Result<Value, RojoError> {
    let text = ctx.read_text(file)?;
    serde_json::from_str(&text).map_err(|e| RojoError::file(file, format!("not valid JSON: {e}")))
}

/// The instance a file or folder turns into (None: a file Rojo does not sync, or ignored).
/// `name` replaces the name the path would give.
pub(crate) fn snapshot_path(
    ctx: &mut Ctx<'_>,
    path: &Path,
    name: Option<&str>,
) -> Result<Option<Snap>, RojoError> {
    if ctx.ignored(path) {
        return Ok(None);
    }
    let meta =
        std::fs::metadata(path).map_err(|e| RojoError::file(path, format!("cannot open: {e}")))?;
    if meta.is_dir() {
        let own = file_name(path)?;
        let project = path.join("default.project.json");
        if project.is_file() {
            return (ctx.load_project)(ctx, &project, Some(name.unwrap_or(&own)));
        }
        return dir(ctx, path, name.unwrap_or(&own)).map(Some);
    }
    file(ctx, path, name)
}

fn file_name(path: &Path) -> Result<String, RojoError> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(|| RojoError::file(path, "the file name is not UTF-8"))
}

/// What a file name means: the instance's class (None: not synced) and the name's stem.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Module,
    Server,
    Client,
    ModelJson,
    Meta,
    Project,
    JsonModule,
    TomlModule,
    Text,
    Csv,
    Model,
}

fn classify(name: &str) -> Option<(Kind, &str)> {
    const SUFFIXES: &[(&str, Kind)] = &[
        (".server.luau", Kind::Server),
        (".server.lua", Kind::Server),
        (".client.luau", Kind::Client),
        (".client.lua", Kind::Client),
        (".model.json", Kind::ModelJson),
        (".meta.json", Kind::Meta),
        (".project.json", Kind::Project),
        (".luau", Kind::Module),
        (".lua", Kind::Module),
        (".json", Kind::JsonModule),
        (".toml", Kind::TomlModule),
        (".txt", Kind::Text),
        (".csv", Kind::Csv),
        (".rbxmx", Kind::Model),
        (".rbxm", Kind::Model),
    ];
    SUFFIXES.iter().find_map(|(suffix, kind)| {
        name.strip_suffix(suffix)
            .filter(|stem| !stem.is_empty())
            .map(|stem| (*kind, stem))
    })
}

const INIT_SCRIPTS: &[&str] = &[
    "init.luau",
    "init.lua",
    "init.server.luau",
    "init.server.lua",
    "init.client.luau",
    "init.client.lua",
];

fn dir(ctx: &mut Ctx<'_>, path: &Path, name: &str) -> Result<Snap, RojoError> {
    let mut entries = Vec::new();
    let listing =
        std::fs::read_dir(path).map_err(|e| RojoError::file(path, format!("cannot list: {e}")))?;
    for entry in listing {
        let entry = entry.map_err(|e| RojoError::file(path, format!("cannot list: {e}")))?;
        let p = entry.path();
        entries.push((file_name(&p)?, p));
    }
    entries.sort();
    let inits: Vec<&(String, PathBuf)> = entries
        .iter()
        .filter(|(n, _)| INIT_SCRIPTS.contains(&n.as_str()))
        .collect();
    if inits.len() > 1 {
        let names: Vec<&str> = inits.iter().map(|(n, _)| n.as_str()).collect();
        return Err(RojoError::file(
            path,
            format!(
                "a folder may have one init script, this one has {}",
                names.join(", ")
            ),
        ));
    }
    let mut snap = match inits.first() {
        Some((_, init)) => {
            let (kind, _) = classify(&file_name(init)?).expect("an init script name");
            script(ctx, init, kind, name)?
        }
        None => Snap::new(name, "Folder", path),
    };
    let init_meta = path.join("init.meta.json");
    if init_meta.is_file() {
        let meta = read_meta(ctx, &init_meta)?;
        apply_meta(&init_meta, meta, &mut snap, MetaUse::Folder)?;
    }
    for (child_name, child) in &entries {
        if INIT_SCRIPTS.contains(&child_name.as_str()) || child_name == "init.meta.json" {
            continue;
        }
        if let Some(c) = snapshot_path(ctx, child, None)? {
            snap.children.push(c);
        }
    }
    Ok(snap)
}

fn script(ctx: &mut Ctx<'_>, file: &Path, kind: Kind, name: &str) -> Result<Snap, RojoError> {
    let source = ctx.read_text(file)?;
    let legacy = ctx.legacy_scripts();
    let (class, run_context) = match (kind, legacy) {
        (Kind::Server, true) => ("Script", None),
        (Kind::Client, true) => ("LocalScript", None),
        (Kind::Server, false) => ("Script", Some("Server")),
        (Kind::Client, false) => ("Script", Some("Client")),
        _ => ("ModuleScript", None),
    };
    let mut snap = Snap::new(name, class, file);
    snap.props.insert("Source".into(), Variant::String(source));
    if let Some(rc) = run_context {
        let (n, v) = value::property("Script", "RunContext", &Value::String(rc.into()))
            .map_err(|e| RojoError::file(file, e))?;
        snap.props.insert(n, v);
    }
    Ok(snap)
}

fn file(ctx: &mut Ctx<'_>, path: &Path, name: Option<&str>) -> Result<Option<Snap>, RojoError> {
    let fname = file_name(path)?;
    let Some((kind, stem)) = classify(&fname) else {
        return Ok(None);
    };
    let instance_name = name.unwrap_or(stem).to_owned();
    let mut snap = match kind {
        Kind::Meta => return Ok(None),
        Kind::Project => return (ctx.load_project)(ctx, path, Some(&instance_name)),
        Kind::Module | Kind::Server | Kind::Client => script(ctx, path, kind, &instance_name)?,
        Kind::ModelJson => model_json(ctx, path, &instance_name)?,
        Kind::JsonModule => {
            let json = read_json(ctx, path)?;
            let mut s = Snap::new(&instance_name, "ModuleScript", path);
            s.props.insert(
                "Source".into(),
                Variant::String(convert::luau_module(&json)),
            );
            s
        }
        Kind::TomlModule => {
            let text = ctx.read_text(path)?;
            let json = convert::toml_to_json(&text)
                .map_err(|e| RojoError::file(path, format!("not valid TOML: {e}")))?;
            let mut s = Snap::new(&instance_name, "ModuleScript", path);
            s.props.insert(
                "Source".into(),
                Variant::String(convert::luau_module(&json)),
            );
            s
        }
        Kind::Text => {
            let text = ctx.read_text(path)?;
            let mut s = Snap::new(&instance_name, "StringValue", path);
            s.props.insert("Value".into(), Variant::String(text));
            s
        }
        Kind::Csv => {
            let text = ctx.read_text(path)?;
            let contents =
                convert::localization_contents(&text).map_err(|e| RojoError::file(path, e))?;
            let mut s = Snap::new(&instance_name, "LocalizationTable", path);
            s.props.insert("Contents".into(), Variant::String(contents));
            s
        }
        Kind::Model => {
            let bytes = ctx.read(path)?;
            let dom = (ctx.read_model)(path, bytes).map_err(|e| RojoError::file(path, e))?;
            let tops = dom.root().children();
            if tops.len() != 1 {
                return Err(RojoError::file(
                    path,
                    format!(
                        "a model file must hold exactly one top-level instance, this one holds {}",
                        tops.len()
                    ),
                ));
            }
            let class = dom
                .get_by_ref(tops[0])
                .map(|i| i.class.to_string())
                .unwrap_or_default();
            let mut s = Snap::new(&instance_name, &class, path);
            s.model = Some(Box::new(dom));
            s
        }
    };
    // `Name.meta.json` beside the file, named after the instance the file gives.
    let meta_path = path.with_file_name(format!("{stem}.meta.json"));
    if meta_path.is_file() {
        let meta = read_meta(ctx, &meta_path)?;
        let usage = match kind {
            Kind::ModelJson | Kind::Model => MetaUse::Model,
            _ => MetaUse::File,
        };
        apply_meta(&meta_path, meta, &mut snap, usage)?;
    }
    Ok(Some(snap))
}

/// Where a meta file applies: a folder (`init.meta.json`, may set `className`), a file
/// (`properties`, `attributes`), a model file (neither: the model has its own).
#[derive(Clone, Copy, PartialEq)]
enum MetaUse {
    Folder,
    File,
    Model,
}

const META_FIELDS: &[&str] = &[
    "$schema",
    "className",
    "properties",
    "attributes",
    "id",
    "ignoreUnknownInstances",
];

fn read_meta(ctx: &mut Ctx<'_>, file: &Path) -> Result<Map<String, Value>, RojoError> {
    let Value::Object(map) = read_json(ctx, file)? else {
        return Err(RojoError::file(file, "a meta file must be a JSON object"));
    };
    for key in map.keys() {
        if !META_FIELDS.contains(&key.as_str()) {
            return Err(RojoError::field(
                file,
                key,
                format!(
                    "unknown meta field (known: {})",
                    META_FIELDS[1..].join(", ")
                ),
            ));
        }
    }
    Ok(map)
}

fn apply_meta(
    file: &Path,
    meta: Map<String, Value>,
    snap: &mut Snap,
    usage: MetaUse,
) -> Result<(), RojoError> {
    match meta.get("ignoreUnknownInstances") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(RojoError::field(
                file,
                "ignoreUnknownInstances",
                "must be a boolean",
            ));
        }
    }
    match meta.get("id") {
        None => {}
        Some(Value::String(s)) => snap.id = Some(s.clone()),
        Some(_) => return Err(RojoError::field(file, "id", "must be a string")),
    }
    if let Some(c) = meta.get("className") {
        let Value::String(c) = c else {
            return Err(RojoError::field(file, "className", "must be a string"));
        };
        if usage != MetaUse::Folder {
            return Err(RojoError::field(
                file,
                "className",
                "only an init.meta.json may set className",
            ));
        }
        if snap.class != "Folder" {
            return Err(RojoError::field(
                file,
                "className",
                format!(
                    "the folder is a {} (it has an init script), so its class cannot be set",
                    snap.class
                ),
            ));
        }
        snap.class = c.clone();
    }
    for key in ["properties", "attributes"] {
        if meta.contains_key(key) && usage == MetaUse::Model {
            return Err(RojoError::field(
                file,
                key,
                "a model file has its own properties and attributes; set them in the model",
            ));
        }
    }
    apply_properties(file, "properties", meta.get("properties"), snap)?;
    if let Some(attrs) = meta.get("attributes") {
        let map =
            value::attributes_map(attrs).map_err(|e| RojoError::field(file, "attributes", e))?;
        for (k, v) in map {
            snap.attrs.insert(k, v);
        }
    }
    Ok(())
}

/// Resolves a `properties` object onto `snap` (its `Attributes` merge into the attributes).
fn apply_properties(
    file: &Path,
    field: &str,
    props: Option<&Value>,
    snap: &mut Snap,
) -> Result<(), RojoError> {
    let Some(props) = props else { return Ok(()) };
    let Value::Object(props) = props else {
        return Err(RojoError::field(file, field, "must be an object"));
    };
    for (k, v) in props {
        let (name, value) = value::property(&snap.class, k, v)
            .map_err(|e| RojoError::field(file, format!("{field}.{k}"), e))?;
        match value {
            Variant::Attributes(a) if name == "Attributes" => {
                for (k, v) in a {
                    snap.attrs.insert(k, v);
                }
            }
            value => {
                snap.props.insert(name, value);
            }
        }
    }
    Ok(())
}

/// Field names of a JSON model: Rojo 7's lower-case ones and the older capitalised ones.
fn model_field<'v>(obj: &'v Map<String, Value>, lower: &str, upper: &str) -> Option<&'v Value> {
    obj.get(lower).or_else(|| obj.get(upper))
}

const MODEL_FIELDS: &[&str] = &[
    "$schema",
    "name",
    "Name",
    "className",
    "ClassName",
    "properties",
    "Properties",
    "attributes",
    "children",
    "Children",
    "id",
    "ignoreUnknownInstances",
];

fn model_json(ctx: &mut Ctx<'_>, file: &Path, name: &str) -> Result<Snap, RojoError> {
    let json = read_json(ctx, file)?;
    let Value::Object(obj) = &json else {
        return Err(RojoError::file(file, "a JSON model must be an object"));
    };
    model_node(file, "", obj, Some(name))
}

/// One instance of a JSON model; `field` is its JSON path, `name` the file's name for the top.
fn model_node(
    file: &Path,
    field: &str,
    obj: &Map<String, Value>,
    name: Option<&str>,
) -> Result<Snap, RojoError> {
    let at = |key: &str| {
        if field.is_empty() {
            key.to_owned()
        } else {
            format!("{field}.{key}")
        }
    };
    for key in obj.keys() {
        if !MODEL_FIELDS.contains(&key.as_str()) {
            return Err(RojoError::field(
                file,
                at(key),
                "unknown JSON model field (known: name, className, properties, attributes, children, id, ignoreUnknownInstances)",
            ));
        }
    }
    let own_name = match model_field(obj, "name", "Name") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(RojoError::field(file, at("name"), "must be a string")),
    };
    // The file's name names the top instance, as in Rojo; children need their own.
    let name = match (name, own_name) {
        (Some(n), _) => n,
        (None, Some(n)) => n,
        (None, None) => {
            return Err(RojoError::field(
                file,
                at("name"),
                "missing (every child needs a name)",
            ));
        }
    };
    let class = match model_field(obj, "className", "ClassName") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(RojoError::field(file, at("className"), "must be a string")),
        None => {
            return Err(RojoError::field(
                file,
                at("className"),
                "missing (every instance needs a className)",
            ));
        }
    };
    let mut snap = Snap::new(name, &class, file);
    match obj.get("ignoreUnknownInstances") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(RojoError::field(
                file,
                at("ignoreUnknownInstances"),
                "must be a boolean",
            ));
        }
    }
    match obj.get("id") {
        None => {}
        Some(Value::String(s)) => snap.id = Some(s.clone()),
        Some(_) => return Err(RojoError::field(file, at("id"), "must be a string")),
    }
    apply_properties(
        file,
        &at("properties"),
        model_field(obj, "properties", "Properties"),
        &mut snap,
    )?;
    if let Some(attrs) = obj.get("attributes") {
        let map = value::attributes_map(attrs)
            .map_err(|e| RojoError::field(file, at("attributes"), e))?;
        for (k, v) in map {
            snap.attrs.insert(k, v);
        }
    }
    match model_field(obj, "children", "Children") {
        None => {}
        Some(Value::Array(children)) => {
            for (i, child) in children.iter().enumerate() {
                let child_field = at(&format!("children[{i}]"));
                let Value::Object(child) = child else {
                    return Err(RojoError::field(
                        file,
                        child_field,
                        "a child must be an object",
                    ));
                };
                snap.children
                    .push(model_node(file, &child_field, child, None)?);
            }
        }
        Some(_) => return Err(RojoError::field(file, at("children"), "must be an array")),
    }
    Ok(snap)
}
