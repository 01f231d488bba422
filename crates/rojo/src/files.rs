//! Rojo's file conventions: folders, scripts and `init` files, `*.meta.json`/`init.meta.json`,
//! `*.model.json`, `.txt`/`.csv`/`.json`/`.toml`/`.yaml` data files, `.rbxm`/`.rbxmx` models
//! and nested projects — each JSON file also as `.jsonc` — and a project's `syncRules`. Folder
//! entries are taken sorted by file name.

use crate::convert;
use crate::glob::{Glob, IgnoreGlob};
use crate::{ModelFormat, ModelReader, RojoError, Snap, value};
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

/// What a project being loaded sets for the files under it.
pub(crate) struct Scope {
    /// The project's folder: its globs are relative to it.
    pub(crate) dir: PathBuf,
    /// Its `globIgnorePaths` (a nested project's add to its parents').
    pub(crate) ignore: Vec<IgnoreGlob>,
    /// Its `emitLegacyScripts`.
    pub(crate) legacy: bool,
    /// Its `syncRules` (not inherited by nested projects, as in Rojo).
    pub(crate) rules: Vec<SyncRule>,
}

/// A `syncRules` entry (Rojo 7.5): a file whose path relative to the project's folder
/// matches `include` and not `exclude` is read as `kind`, and named by its file name without
/// `suffix` (without its last extension when there is none).
pub(crate) struct SyncRule {
    pub(crate) include: Glob,
    pub(crate) exclude: Option<Glob>,
    pub(crate) kind: Kind,
    pub(crate) suffix: Option<String>,
}

impl SyncRule {
    fn matches(&self, rel: &Path) -> bool {
        self.include.matches(rel) && !self.exclude.as_ref().is_some_and(|g| g.matches(rel))
    }

    /// The instance name a matching file gets.
    fn name<'n>(&self, file_name: &'n str) -> &'n str {
        match &self.suffix {
            Some(suffix) => file_name.strip_suffix(suffix.as_str()).unwrap_or(file_name),
            None => Path::new(file_name)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(file_name),
        }
    }
}

/// The state of one build.
pub(crate) struct Ctx<'a> {
    read_model: &'a ModelReader<'a>,
    load_project: LoadProject,
    /// Projects being loaded (canonical paths), outermost first.
    projects: Vec<PathBuf>,
    /// Per project being loaded, outermost first.
    scopes: Vec<Scope>,
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

    pub(crate) fn push_scope(&mut self, scope: Scope) {
        self.scopes.push(scope);
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn legacy_scripts(&self) -> bool {
        self.scopes.last().is_none_or(|s| s.legacy)
    }

    /// True when the globIgnorePaths of the projects being loaded exclude `path` (the last
    /// glob matching it decides, a negation keeping it).
    fn ignored(&self, path: &Path) -> bool {
        let rules = self
            .scopes
            .iter()
            .flat_map(|s| s.ignore.iter().map(move |g| (s.dir.as_path(), g)));
        crate::glob::ignored(rules, path)
    }

    /// What the current project's first matching sync rule makes of the file `path` named
    /// `file_name`: its kind and instance name.
    fn user_rule<'n>(&self, path: &Path, file_name: &'n str) -> Option<(Kind, &'n str)> {
        let scope = self.scopes.last()?;
        let rel = path.strip_prefix(&scope.dir).ok()?;
        let rule = scope.rules.iter().find(|r| r.matches(rel))?;
        Some((rule.kind, rule.name(file_name)))
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

/// Reads and parses a JSON file — JSONC, as Rojo reads every JSON file since 7.6.1 (`//` and
/// `/* */` comments, trailing commas); syntax errors name the line and column.
pub(crate) fn read_json(ctx: &mut Ctx<'_>, file: &Path) -> Result<Value, RojoError> {
    let text = ctx.read_text(file)?;
    procmodel_jsonc::parse(&text, procmodel_jsonc::Dialect::Jsonc)
        .map(|(json, _)| json)
        .map_err(|e| RojoError::file(file, format!("not valid JSON: {e}")))
}

/// The instance a file or folder turns into (None: a file Rojo does not sync, or ignored).
/// `name` replaces the name the path would give.
pub(crate) fn snapshot_path(
    ctx: &mut Ctx<'_>,
    path: &Path,
    name: Option<&str>,
) -> Result<Option<Snap>, RojoError> {
    let meta =
        std::fs::metadata(path).map_err(|e| RojoError::file(path, format!("cannot open: {e}")))?;
    if meta.is_dir() {
        let own = file_name(path)?;
        if let Some(project) = crate::project_file(path) {
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

/// What Rojo makes of a file: its default rules' kinds and a `syncRules` entry's `use`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Module,
    /// A Script, or with `emitLegacyScripts: false` a Script with RunContext Server.
    Server,
    /// A LocalScript, or with `emitLegacyScripts: false` a Script with RunContext Client.
    Client,
    /// A Script with RunContext Plugin.
    Plugin,
    /// A Script (Legacy RunContext) whatever `emitLegacyScripts` says.
    LegacyServer,
    /// A LocalScript whatever `emitLegacyScripts` says.
    LegacyClient,
    RunContextServer,
    RunContextClient,
    ModelJson,
    Meta,
    Project,
    JsonModule,
    TomlModule,
    YamlModule,
    Text,
    Csv,
    Model(ModelFormat),
    /// Not synced.
    Ignore,
}

impl Kind {
    /// The `use` values of `syncRules`, with their kinds (Rojo 7.5's names).
    pub(crate) const USES: &[(&str, Kind)] = &[
        ("serverScript", Kind::Server),
        ("clientScript", Kind::Client),
        ("moduleScript", Kind::Module),
        ("pluginScript", Kind::Plugin),
        ("legacyServerScript", Kind::LegacyServer),
        ("legacyClientScript", Kind::LegacyClient),
        ("runContextServerScript", Kind::RunContextServer),
        ("runContextClientScript", Kind::RunContextClient),
        ("json", Kind::JsonModule),
        ("toml", Kind::TomlModule),
        ("yaml", Kind::YamlModule),
        ("csv", Kind::Csv),
        ("text", Kind::Text),
        ("jsonModel", Kind::ModelJson),
        ("rbxm", Kind::Model(ModelFormat::Binary)),
        ("rbxmx", Kind::Model(ModelFormat::Xml)),
        ("project", Kind::Project),
        ("ignore", Kind::Ignore),
    ];
}

/// Rojo's default rules: what a file name means, and the instance name (the name without
/// the suffix). The first suffix that fits wins.
fn classify(name: &str) -> Option<(Kind, &str)> {
    const SUFFIXES: &[(&str, Kind)] = &[
        (".server.luau", Kind::Server),
        (".server.lua", Kind::Server),
        (".client.luau", Kind::Client),
        (".client.lua", Kind::Client),
        (".plugin.luau", Kind::Plugin),
        (".plugin.lua", Kind::Plugin),
        (".model.json", Kind::ModelJson),
        (".model.jsonc", Kind::ModelJson),
        (".meta.json", Kind::Meta),
        (".meta.jsonc", Kind::Meta),
        (".project.json", Kind::Project),
        (".project.jsonc", Kind::Project),
        (".luau", Kind::Module),
        (".lua", Kind::Module),
        (".json", Kind::JsonModule),
        (".jsonc", Kind::JsonModule),
        (".toml", Kind::TomlModule),
        (".yaml", Kind::YamlModule),
        (".yml", Kind::YamlModule),
        (".txt", Kind::Text),
        (".csv", Kind::Csv),
        (".rbxmx", Kind::Model(ModelFormat::Xml)),
        (".rbxm", Kind::Model(ModelFormat::Binary)),
    ];
    SUFFIXES.iter().find_map(|(suffix, kind)| {
        name.strip_suffix(suffix)
            .filter(|stem| !stem.is_empty())
            .map(|stem| (*kind, stem))
    })
}

/// The files that make a folder an instance of their own, in the order Rojo looks for them.
const INITS: &[(&str, Kind)] = &[
    ("init.luau", Kind::Module),
    ("init.lua", Kind::Module),
    ("init.server.luau", Kind::Server),
    ("init.server.lua", Kind::Server),
    ("init.client.luau", Kind::Client),
    ("init.client.lua", Kind::Client),
    ("init.plugin.lua", Kind::Plugin),
    ("init.plugin.luau", Kind::Plugin),
    ("init.csv", Kind::Csv),
];

/// A meta file's suffixes, applied in this order: a folder's are `init` with one of them, a
/// file's its instance's name with one of them.
const META_SUFFIXES: [&str; 2] = [".meta.json", ".meta.jsonc"];

fn is_init_meta(name: &str) -> bool {
    name.strip_prefix("init")
        .is_some_and(|suffix| META_SUFFIXES.contains(&suffix))
}

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
    let is_init = |n: &str| INITS.iter().any(|(i, _)| *i == n);
    let inits: Vec<(&str, Kind)> = INITS
        .iter()
        .copied()
        .filter(|(n, _)| entries.iter().any(|(e, _)| e == n))
        .collect();
    if inits.len() > 1 {
        let names: Vec<&str> = inits.iter().map(|(n, _)| *n).collect();
        return Err(RojoError::file(
            path,
            format!(
                "a folder may have one init file, this one has {}",
                names.join(", ")
            ),
        ));
    }
    let mut snap = match inits.first() {
        Some(&(init, Kind::Csv)) => csv(ctx, &path.join(init), name)?,
        Some(&(init, kind)) => script(ctx, &path.join(init), kind, name)?,
        None => Snap::new(name, "Folder", path),
    };
    for init_meta in META_SUFFIXES.map(|suffix| path.join(format!("init{suffix}"))) {
        if init_meta.is_file() {
            let meta = read_meta(ctx, &init_meta)?;
            apply_meta(&init_meta, meta, &mut snap, MetaUse::Folder)?;
        }
    }
    for (child_name, child) in &entries {
        // globIgnorePaths leave out a folder's entries (a `$path` naming a file is taken).
        if is_init(child_name) || is_init_meta(child_name) || ctx.ignored(child) {
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
        (Kind::Server, true) | (Kind::LegacyServer, _) => ("Script", None),
        (Kind::Client, true) | (Kind::LegacyClient, _) => ("LocalScript", None),
        (Kind::Server, false) | (Kind::RunContextServer, _) => ("Script", Some("Server")),
        (Kind::Client, false) | (Kind::RunContextClient, _) => ("Script", Some("Client")),
        (Kind::Plugin, _) => ("Script", Some("Plugin")),
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
    let Some((kind, stem)) = ctx.user_rule(path, &fname).or_else(|| classify(&fname)) else {
        return Ok(None);
    };
    let instance_name = name.unwrap_or(stem).to_owned();
    // A data file: a ModuleScript returning its table.
    let module = |source: String| {
        let mut s = Snap::new(&instance_name, "ModuleScript", path);
        s.props.insert("Source".into(), Variant::String(source));
        s
    };
    let mut snap = match kind {
        Kind::Meta | Kind::Ignore => return Ok(None),
        Kind::Project => return (ctx.load_project)(ctx, path, Some(&instance_name)),
        Kind::Module
        | Kind::Server
        | Kind::Client
        | Kind::Plugin
        | Kind::LegacyServer
        | Kind::LegacyClient
        | Kind::RunContextServer
        | Kind::RunContextClient => script(ctx, path, kind, &instance_name)?,
        Kind::ModelJson => model_json(ctx, path, &instance_name)?,
        Kind::JsonModule => module(convert::luau_module(&read_json(ctx, path)?)),
        Kind::TomlModule => {
            let text = ctx.read_text(path)?;
            let json = convert::toml_to_json(&text)
                .map_err(|e| RojoError::file(path, format!("not valid TOML: {e}")))?;
            module(convert::luau_module(&json))
        }
        Kind::YamlModule => {
            let text = ctx.read_text(path)?;
            module(convert::yaml_module(&text).map_err(|e| RojoError::file(path, e))?)
        }
        Kind::Text => {
            let text = ctx.read_text(path)?;
            let mut s = Snap::new(&instance_name, "StringValue", path);
            s.props.insert("Value".into(), Variant::String(text));
            s
        }
        Kind::Csv => csv(ctx, path, &instance_name)?,
        Kind::Model(format) => {
            let bytes = ctx.read(path)?;
            let dom =
                (ctx.read_model)(path, bytes, format).map_err(|e| RojoError::file(path, e))?;
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
    // `Name.meta.json` (then `Name.meta.jsonc`) beside the file, named after the instance the
    // file gives.
    for suffix in META_SUFFIXES {
        let meta_path = path.with_file_name(format!("{stem}{suffix}"));
        if meta_path.is_file() {
            let meta = read_meta(ctx, &meta_path)?;
            let usage = match kind {
                Kind::ModelJson | Kind::Model(_) => MetaUse::Model,
                _ => MetaUse::File,
            };
            apply_meta(&meta_path, meta, &mut snap, usage)?;
        }
    }
    Ok(Some(snap))
}

/// A `.csv` file (or a folder's `init.csv`): a LocalizationTable holding its entries.
fn csv(ctx: &mut Ctx<'_>, path: &Path, name: &str) -> Result<Snap, RojoError> {
    let text = ctx.read_text(path)?;
    let contents = convert::localization_contents(&text).map_err(|e| RojoError::file(path, e))?;
    let mut s = Snap::new(name, "LocalizationTable", path);
    s.props.insert("Contents".into(), Variant::String(contents));
    Ok(s)
}

/// Where a meta file applies: a folder (`init.meta.json(c)`, may set `className`), a file
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
