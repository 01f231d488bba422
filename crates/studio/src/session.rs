//! The studio's scene on the engine thread: opening a generator file (as a one-model scene)
//! or a place (as it is), the generators' declared defaults, and the snapshot published after
//! every change (the viewport frame plus the JSON the page builds its panels from).

use crate::frame;
use crate::output::SharedOutput;
use crate::protocol::{cli_text, enum_items, shell_quote, to_json, type_name};
use crate::terrain::{TerrainCache, TerrainFrame};
use crate::watch::Watcher;
use procmodel_dom::keys::KEYS;
use procmodel_engine::thread::Step;
use procmodel_engine::{Engine, EngineConfig, EngineError};
use rbx_dom_weak::WeakDom;
use rbx_types::{Attributes, Ref, Variant};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What was opened.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The file given on the command line (absolute).
    pub file: PathBuf,
    /// True for a generator module opened as a one-model scene.
    pub generator_file: bool,
    /// Where Save writes by default: the place itself, or `<stem>.rbxl` beside a generator.
    pub save_path: PathBuf,
    /// Script files on disk and the scripts loaded from them, watched for hot reload: a
    /// generator's (and its module folder's), or every script of a Rojo project.
    pub sources: Vec<(PathBuf, Ref)>,
    /// Every file a Rojo project was built from (their folders are watched for changes of
    /// its structure); none for a generator or a place.
    pub project_files: Vec<PathBuf>,
}

pub use procmodel_engine::DeclaredDefaults as Defaults;

pub type SharedDefaults = Arc<Mutex<Defaults>>;

/// Builds the engine for `path` on the engine thread.
pub fn open(path: &Path, config: EngineConfig) -> Result<(Engine, Opened), EngineError> {
    let file = std::path::absolute(path)
        .map_err(|e| EngineError::file(path.display().to_string(), e.to_string()))?;
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(ext.as_str(), "rbxl" | "rbxlx" | "rbxm" | "rbxmx") {
        let engine = Engine::load(procmodel_luau::runtime(), &file, config)?;
        return Ok((
            engine,
            Opened {
                save_path: file.clone(),
                file,
                generator_file: false,
                sources: Vec::new(),
                project_files: Vec::new(),
            },
        ));
    }
    if procmodel_engine::is_rojo_project(&file) {
        // A project's files are sources, never written to: Save writes a place beside it,
        // named after the project. Its scripts' files are watched: an edit is put back into
        // its script, and the models using that code regenerate.
        let (engine, project) = Engine::load_project(procmodel_luau::runtime(), &file, config)?;
        let name = engine.with_dom(|d| d.root().name.clone());
        let name = if name.is_empty() || name.contains(['/', '\\']) {
            "place".to_owned()
        } else {
            name
        };
        let dir = if file.is_dir() {
            file.clone()
        } else {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        return Ok((
            engine,
            Opened {
                save_path: dir.join(format!("{name}.rbxl")),
                file,
                generator_file: false,
                sources: project.scripts,
                project_files: project.files,
            },
        ));
    }
    if ext != "luau" && ext != "lua" && procmodel_engine::module_folder(&file).is_none() {
        return Err(EngineError::invalid(format!(
            "{}: open a generator (.luau, or a folder with init.luau), a scene (.rbxl, .rbxlx, .rbxm, .rbxmx) or a Rojo project",
            path.display()
        )));
    }
    let mut engine = Engine::new(procmodel_luau::runtime(), config)?;
    // The module is added without being required: a generator that fails to load still
    // opens, and its model shows the error the engine reports. Every file of a module
    // folder is watched, each as the ModuleScript it made.
    let (model, sources) = engine.add_generator_model(&file)?;
    let name = engine.with_dom(|d| d.get_by_ref(model).map(|m| m.name.clone()));
    let file = procmodel_engine::module_folder(&file).unwrap_or(file);
    let file = file.canonicalize().unwrap_or(file);
    Ok((
        engine,
        Opened {
            save_path: file
                .with_file_name(format!("{}.rbxl", name.as_deref().unwrap_or("Generated"))),
            file,
            generator_file: true,
            sources,
            project_files: Vec::new(),
        },
    ))
}

/// One publication.
pub struct Published {
    /// The scene object of the header (JSON).
    pub scene: String,
    pub body: Vec<u8>,
    /// Highest command id applied so far (ids are handed out in order).
    pub max_command: u64,
    /// Nothing in flight and no model waiting to regenerate: every edit applied so far is
    /// in this snapshot's geometry (the only kind of snapshot that acknowledges edits).
    pub settled: bool,
    /// Generation time of every publication so far (ms), so an edit acknowledged several
    /// publications after it arrived reports the generation of all of them.
    pub gen_total_ms: f64,
    pub at: Instant,
    /// The scene's terrain mesh (id 0: none); sent to a page only when its id changes.
    pub terrain: Arc<TerrainFrame>,
}

/// Builds publications on the engine thread.
pub struct Publisher {
    pub opened: Opened,
    pub defaults: SharedDefaults,
    /// Hot reload, once it runs: told the folders of the module files generators required.
    watcher: Arc<OnceLock<Arc<Watcher>>>,
    terrain: TerrainCache,
    encoder: frame::Encoder,
    max_command: u64,
    gen_total_ms: f64,
    /// What the pages' Output panel shows.
    output: SharedOutput,
}

impl Publisher {
    pub fn new(
        opened: Opened,
        defaults: SharedDefaults,
        watcher: Arc<OnceLock<Arc<Watcher>>>,
        output: SharedOutput,
    ) -> Publisher {
        Publisher {
            opened,
            defaults,
            watcher,
            output,
            terrain: TerrainCache::default(),
            encoder: frame::Encoder::default(),
            max_command: 0,
            gen_total_ms: 0.0,
        }
    }

    pub fn publish(&mut self, engine: &mut Engine, step: &Step) -> Published {
        let t = Instant::now();
        if let Some(&m) = step.commands.iter().max() {
            self.max_command = self.max_command.max(m);
        }
        if let Some(w) = self.watcher.get() {
            w.watch_folders_of(&engine.module_files());
        }
        self.output
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(engine.take_output(), &step.reports);
        let encoded = engine.with_dom(|d| self.encoder.encode(d));
        let encode_ms = ms(t.elapsed());
        let terrain = engine.with_dom(|d| self.terrain.update(d));
        let mut defaults = self.defaults.lock().unwrap_or_else(|e| e.into_inner());
        let mut enums: BTreeMap<String, Value> = BTreeMap::new();
        let models: Vec<Value> = encoded
            .models
            .iter()
            .map(|&(r, node)| {
                let generator = engine.with_dom(|d| match prop(d, r, KEYS.generator) {
                    Some(Variant::Ref(g)) if d.get_by_ref(g).is_some() => Some(g),
                    _ => None,
                });
                let declared = generator.and_then(|g| defaults.of(engine, g));
                engine.with_dom(|d| {
                    model_json(
                        d,
                        r,
                        node,
                        declared.as_deref(),
                        &self.opened,
                        engine.is_generating(r),
                        terrain.triangles > 0,
                        &mut enums,
                    )
                })
            })
            .collect();
        drop(defaults);
        let gen_ms: f64 = step.reports.iter().map(|r| ms(r.elapsed)).sum();
        self.gen_total_ms += gen_ms;
        let settled = !step.busy && !encoded.models.iter().any(|&(r, _)| engine.is_dirty(r));
        let reports: Vec<Value> = step
            .reports
            .iter()
            .map(|r| {
                json!({
                    "model": r.model.to_string(), "path": r.path, "ok": r.is_ok(),
                    "error": r.error(), "ms": ms(r.elapsed), "instances": r.instances,
                    "cached": r.cached, "warning": r.warning(),
                })
            })
            .collect();
        let scene = json!({
            "revision": step.revision,
            "file": self.opened.file.display().to_string(),
            "generator_file": self.opened.generator_file,
            "save_path": self.opened.save_path.display().to_string(),
            "busy": step.busy,
            "parts": encoded.parts,
            "instances": encoded.instances,
            "nodes": encoded.nodes,
            "batches": encoded.batches,
            "meshes": encoded.meshes,
            "terrain": terrain.summary(),
            "models": models,
            "enums": enums,
            "reports": reports,
            "panic": step.panic,
            "timing": {
                "step_ms": ms(step.step_time),
                "gen_ms": gen_ms,
                "encode_ms": encode_ms + 0.0,
                "publish_ms": ms(t.elapsed()),
            },
        });
        Published {
            scene: scene.to_string(),
            body: encoded.body,
            max_command: self.max_command,
            settled,
            gen_total_ms: self.gen_total_ms,
            at: Instant::now(),
            terrain,
        }
    }
}

/// A module file changed on disk: when a generator required it (directly or through other
/// modules), its ModuleScript gets the new Source through [`Engine::set_source`], as a
/// generator file's edit does: the models whose generators required it regenerate, and the
/// edit is one undo step. Returns whether anything changed (the same text, or a file nothing
/// required, changes nothing).
pub fn reload_required(engine: &mut Engine, path: &Path) -> Result<bool, String> {
    let Some(module) = engine.file_module(path) else {
        return Ok(false);
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let same = engine.with_dom(
        |d| matches!(prop(d, module, KEYS.source), Some(Variant::String(s)) if s == text),
    );
    if same {
        return Ok(false);
    }
    engine
        .set_source(module, &text)
        .map_err(|e| e.to_string())?;
    Ok(true)
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn prop(d: &WeakDom, r: Ref, key: rbx_dom_weak::Ustr) -> Option<Variant> {
    d.get_by_ref(r)?.properties.get(&key).cloned()
}

fn model_json(
    d: &WeakDom,
    r: Ref,
    node: usize,
    declared: Option<&[(String, Variant)]>,
    opened: &Opened,
    generating: bool,
    with_terrain: bool,
    enums: &mut BTreeMap<String, Value>,
) -> Value {
    let inst = d.get_by_ref(r).expect("a model of the walk");
    let current = match inst.properties.get(&KEYS.attributes) {
        Some(Variant::Attributes(a)) => a.clone(),
        _ => Attributes::new(),
    };
    // Declared attributes in declaration (name) order, then any others the model carries.
    let mut attrs: Vec<(String, Variant, Option<Variant>)> = Vec::new();
    for (name, default) in declared.unwrap_or(&[]) {
        let value = current
            .get(name.as_str())
            .cloned()
            .unwrap_or_else(|| default.clone());
        attrs.push((name.clone(), value, Some(default.clone())));
    }
    for (name, value) in current.iter() {
        if !attrs.iter().any(|(n, _, _)| n == name) {
            attrs.push((name.clone(), value.clone(), None));
        }
    }
    let size = match inst.properties.get(&KEYS.size) {
        Some(Variant::Vector3(v)) => *v,
        _ => rbx_types::Vector3::new(12.0, 12.0, 12.0),
    };
    let scale = match inst.properties.get(&KEYS.scale) {
        Some(Variant::Float32(s)) => *s,
        _ => 1.0,
    };
    let error = match inst.properties.get(&KEYS.generation_error) {
        Some(Variant::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let mut cli = vec![
        "procmodel".to_owned(),
        "generate".to_owned(),
        shell_quote(&opened.file.display().to_string()),
        "--size".to_owned(),
        cli_text(&Variant::Vector3(size)).unwrap_or_default(),
    ];
    if scale != 1.0 {
        cli.push("--scale".into());
        cli.push(cli_text(&Variant::Float32(scale)).unwrap_or_default());
    }
    let list: Vec<Value> = attrs
        .iter()
        .map(|(name, value, default)| {
            if let Variant::EnumItem(e) = value {
                enums.entry(e.ty.clone()).or_insert_with(|| {
                    json!(
                        enum_items(&e.ty)
                            .into_iter()
                            .map(|(n, v)| json!([n, v]))
                            .collect::<Vec<_>>()
                    )
                });
            }
            let changed = default.as_ref().is_some_and(|d| d != value);
            if changed && let Some(t) = cli_text(value) {
                cli.push("--attr".into());
                cli.push(shell_quote(&format!("{name}={t}")));
            }
            json!({
                "name": name,
                "type": type_name(value),
                "value": to_json(value),
                "default": default.as_ref().map(to_json),
                "changed": changed,
                "cli": cli_text(value),
            })
        })
        .collect();
    let stem = opened
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    // A model file cannot hold terrain (generate warns and leaves it out): a place can.
    let ext = if with_terrain { "rbxl" } else { "rbxm" };
    cli.push("-o".into());
    cli.push(shell_quote(&format!("{stem}.{ext}")));
    json!({
        "id": r.to_string(),
        "node": node,
        "name": inst.name,
        "path": procmodel_dom::full_name(d, r),
        "size": [size.x, size.y, size.z],
        "scale": scale,
        "error": error,
        "generating": generating,
        "attributes": list,
        "cli": if opened.generator_file { Some(cli.join(" ")) } else { None },
    })
}
