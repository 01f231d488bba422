//! The server's scene: the engine on its own thread (`EngineThread`), the tool calls turned
//! into engine commands, and the snapshot of the models published after every change.

use crate::args::Args;
use crate::paths::Root;
use crate::scene::{self, Defaults};
use crate::{Config, PackRequest, Writers};
use procmodel_engine::thread::{Command, EngineThread, Reply, ThreadError};
use procmodel_engine::{Engine, EngineError};
use rbx_types::{Ref, Variant};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The answer of one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What the tool reports (also given to the client as text).
    pub value: Value,
    /// A refused call or a failed generation; `value` then carries `error`.
    pub is_error: bool,
}

impl Outcome {
    fn error(message: impl Into<String>) -> Outcome {
        Outcome {
            value: json!({ "error": message.into() }),
            is_error: true,
        }
    }
}

/// The models as last published.
struct Snapshot {
    /// Highest command id applied before it was taken.
    max_command: u64,
    models: Vec<Value>,
}

/// How long a tool waits for the snapshot after its command (a generator never holds the
/// engine this long: it is stopped by its limits first).
const SNAPSHOT_WAIT: Duration = Duration::from_secs(3600);

/// A scene served to one client.
pub struct Session {
    thread: EngineThread<Snapshot>,
    defaults: Arc<Mutex<Defaults>>,
    root: Root,
    /// The scene opened (a place saves over it by default).
    scene: Option<PathBuf>,
    max_frames: usize,
    writers: Arc<Writers>,
}

impl Session {
    /// Opens the scene (a place as it is, a generator file as a one-model scene, or nothing)
    /// on a new engine thread.
    pub fn start(config: Config) -> Result<Session, String> {
        let root = Root::new(&config.root)?;
        let scene = config.scene.clone();
        let engine_config = config.engine.clone();
        let defaults = Arc::new(Mutex::new(Defaults::default()));
        let d = defaults.clone();
        let mut max_command = 0;
        let thread = EngineThread::spawn(
            move || open(scene.as_deref(), engine_config),
            move |engine, step| {
                if let Some(&m) = step.commands.iter().max() {
                    max_command = max_command.max(m);
                }
                let mut d = lock(&d);
                Snapshot {
                    max_command,
                    models: engine
                        .models()
                        .into_iter()
                        .map(|m| scene::model_json(engine, m, &mut d))
                        .collect(),
                }
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(Session {
            thread,
            defaults,
            root,
            scene: config.scene,
            max_frames: config.max_frames,
            writers: Arc::new(config.writers),
        })
    }

    /// Runs one tool. Never panics on a client's input: every refusal is an error outcome,
    /// except a tool there is none of, which is `Err` naming the tools there are (the server
    /// answers it with a protocol error, as the MCP specification's tools section has it).
    pub fn call(&self, tool: &str, arguments: &Map<String, Value>) -> Result<Outcome, String> {
        let tools = crate::tools::all();
        let Some(spec) = tools.iter().find(|t| t.name == tool) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
            return Err(format!(
                "unknown tool '{tool}' (tools: {})",
                names.join(", ")
            ));
        };
        let known = spec.arguments();
        let args = match Args::new(arguments, &known) {
            Ok(a) => a,
            Err(e) => return Ok(Outcome::error(format!("{tool}: {e}"))),
        };
        let result = match tool {
            "create_generator" => self.create_generator(&args),
            "list_models" => self.snapshot().map(|m| json!({ "models": m })),
            "get_attributes" => self.get_attributes(&args),
            "set_attributes" => self.set_attributes(&args),
            "set_size" => self.set_size(&args),
            "regenerate" => self.regenerate(&args),
            "get_errors" => self.get_errors(),
            "undo" => self.history(true),
            "redo" => self.history(false),
            "export" => self.export(&args),
            "pack" => self.pack(&args),
            "save_scene" => self.save(&args),
            _ => Err(format!("{tool}: not implemented")),
        };
        Ok(match result {
            Ok(value) => {
                let is_error = value.get("ok") == Some(&Value::Bool(false));
                Outcome { value, is_error }
            }
            Err(e) => Outcome::error(format!("{tool}: {e}")),
        })
    }

    /// Runs `f` on the engine thread (a mutation: a snapshot is published after it).
    fn with<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&mut Engine, &mut Defaults) -> Result<T, String> + Send + 'static,
    {
        let defaults = self.defaults.clone();
        let reply = self.thread.call(Command::With(Box::new(move |e| {
            let mut d = lock(&defaults);
            f(e, &mut d).map(|v| Reply::Value(Box::new(v)))
        })));
        match reply {
            Ok(Reply::Value(v)) => v
                .downcast::<T>()
                .map(|v| *v)
                .map_err(|_| "the engine thread answered with something else".into()),
            Ok(other) => Err(format!("the engine thread answered {other:?}")),
            Err(ThreadError::Command { message, .. }) => Err(message),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The models as published after every command queued so far.
    fn snapshot(&self) -> Result<Vec<Value>, String> {
        let id = self
            .thread
            .submit(Command::Snapshot, None)
            .map_err(|e| e.to_string())?;
        let mut revision = 0;
        loop {
            if let Some(f) = self.thread.latest() {
                if f.value.max_command >= id {
                    return Ok(f.value.models.clone());
                }
                revision = f.revision;
            }
            if self.thread.wait_newer(revision, SNAPSHOT_WAIT).is_none() {
                return Err("the engine did not publish the scene in time".into());
            }
        }
    }

    fn create_generator(&self, a: &Args<'_>) -> Result<Value, String> {
        let name = a.required("name")?.to_owned();
        check_name(&name)?;
        let source = a.required("source")?.to_owned();
        let size = a.size("size")?;
        let scale = a.scale("scale")?;
        let attributes = a.attributes("attributes")?;
        let frames = self.max_frames;
        self.with(move |engine, defaults| {
            let workspace = engine.workspace();
            let existing = engine.with_dom(|d| {
                d.get_by_ref(workspace)?
                    .children()
                    .iter()
                    .copied()
                    .find(|&c| {
                        d.get_by_ref(c)
                            .is_some_and(|i| i.class == "ProceduralModel" && i.name == name)
                    })
            });
            // What to take back if the attributes do not fit the new generator: the call
            // then changes nothing.
            let mut created = Vec::new();
            let mut waypoint = false;
            // One undo step for the source, Size, Scale and attributes.
            engine.begin_gesture();
            let (model, replaced) = match existing {
                Some(model) => {
                    let set = match scene::generator_of(engine, model) {
                        Some(module) => engine.set_source(module, &source),
                        None => {
                            let module = add_module(engine, &name, &source);
                            created.push(module);
                            engine.set_generator(model, Some(module))
                        }
                    };
                    if let Err(e) = set {
                        engine.end_gesture();
                        for r in created {
                            let _ = engine.remove(r);
                        }
                        return Err(text(e));
                    }
                    waypoint = true;
                    (model, true)
                }
                None => {
                    let module = add_module(engine, &name, &source);
                    let model = engine.add_procedural_model(&name, module);
                    created.extend([model, module]);
                    (model, false)
                }
            };
            let parsed = match parse_attributes(engine, defaults, model, &attributes) {
                Ok(p) => p,
                Err(e) => {
                    if waypoint {
                        engine.undo();
                    } else {
                        engine.end_gesture();
                    }
                    for r in created {
                        let _ = engine.remove(r);
                    }
                    return Err(e);
                }
            };
            let mut applied = Ok(());
            if let Some(s) = size {
                applied = engine.set_size(model, s).map_err(text);
            }
            if let (Ok(()), Some(s)) = (&applied, scale) {
                applied = engine.scale_to(model, s).map_err(text);
            }
            let applied = applied.and_then(|()| {
                parsed
                    .into_iter()
                    .try_for_each(|(n, v)| engine.set_attribute(model, &n, v).map_err(text))
            });
            engine.end_gesture();
            applied?;
            engine.force_generation(model);
            let mut v = settle(engine, frames);
            v["replaced"] = json!(replaced);
            v["model"] = scene::model_json(engine, model, defaults);
            Ok(v)
        })
    }

    fn get_attributes(&self, a: &Args<'_>) -> Result<Value, String> {
        let given = a.string("model")?.map(str::to_owned);
        self.with(move |engine, defaults| {
            let model = scene::find_model(engine, given.as_deref())?;
            let generator = scene::generator_of(engine, model).ok_or(
                "the model has no generator (its Generator is not a ModuleScript in the scene)",
            )?;
            let declared = defaults.of(engine, generator);
            Ok(json!({
                "model": engine.with_dom(|d| procmodel_dom::full_name(d, model)),
                "generator": engine.with_dom(|d| procmodel_dom::full_name(d, generator)),
                "declares_attributes": declared.is_some(),
                "attributes": scene::attributes_json(engine, model, declared.as_deref()),
            }))
        })
    }

    fn set_attributes(&self, a: &Args<'_>) -> Result<Value, String> {
        let given = a.string("model")?.map(str::to_owned);
        let attributes = a.attributes("attributes")?;
        if attributes.is_empty() {
            return Err("give at least one attribute in attributes".into());
        }
        let frames = self.max_frames;
        self.with(move |engine, defaults| {
            let model = scene::find_model(engine, given.as_deref())?;
            let parsed = parse_attributes(engine, defaults, model, &attributes)?;
            engine.begin_gesture();
            let applied: Result<(), String> = parsed
                .into_iter()
                .try_for_each(|(n, v)| engine.set_attribute(model, &n, v).map_err(text));
            engine.end_gesture();
            applied?;
            Ok(settle(engine, frames))
        })
    }

    fn set_size(&self, a: &Args<'_>) -> Result<Value, String> {
        let given = a.string("model")?.map(str::to_owned);
        let size = a.size("size")?;
        let scale = a.scale("scale")?;
        if size.is_none() && scale.is_none() {
            return Err("give size, scale or both".into());
        }
        let frames = self.max_frames;
        self.with(move |engine, _| {
            let model = scene::find_model(engine, given.as_deref())?;
            engine.begin_gesture();
            let mut applied = Ok(());
            if let Some(s) = size {
                applied = engine.set_size(model, s).map_err(text);
            }
            if let (Ok(()), Some(s)) = (&applied, scale) {
                applied = engine.scale_to(model, s).map_err(text);
            }
            engine.end_gesture();
            applied?;
            Ok(settle(engine, frames))
        })
    }

    fn regenerate(&self, a: &Args<'_>) -> Result<Value, String> {
        let given = a.string("model")?.map(str::to_owned);
        let frames = self.max_frames;
        self.with(move |engine, _| {
            let models = match &given {
                Some(_) => vec![scene::find_model(engine, given.as_deref())?],
                None => engine.models(),
            };
            if models.is_empty() {
                return Err("the scene has no ProceduralModel".into());
            }
            for m in models {
                engine.force_generation(m);
            }
            Ok(settle(engine, frames))
        })
    }

    fn get_errors(&self) -> Result<Value, String> {
        let errors: Vec<Value> = self
            .snapshot()?
            .into_iter()
            .filter(|m| m["status"] == "failed")
            .map(|m| json!({ "model": m["path"], "error": m["error"], "location": m["location"] }))
            .collect();
        Ok(json!({ "count": errors.len(), "errors": errors }))
    }

    fn history(&self, undo: bool) -> Result<Value, String> {
        let frames = self.max_frames;
        self.with(move |engine, _| {
            let changed = if undo { engine.undo() } else { engine.redo() };
            let mut v = settle(engine, frames);
            v["changed"] = json!(changed);
            Ok(v)
        })
    }

    fn export(&self, a: &Args<'_>) -> Result<Value, String> {
        let given_path = a.required("path")?;
        let given = a.string("model")?.map(str::to_owned);
        extension(given_path, &["glb", "gltf", "obj", "rbxm", "rbxmx"])?;
        let path = self.root.confine(given_path)?;
        let writers = self.writers.clone();
        self.with(move |engine, _| {
            let roots = match &given {
                Some(_) => vec![scene::find_model(engine, given.as_deref())?],
                None => {
                    let workspace = engine.workspace();
                    engine.with_dom(|d| {
                        d.get_by_ref(workspace)
                            .map(|w| w.children().to_vec())
                            .unwrap_or_default()
                    })
                }
            };
            let written = engine.with_dom(|d| (writers.write)(d, &roots, &path))?;
            Ok(json!({ "path": path.display().to_string(), "written": written }))
        })
    }

    fn pack(&self, a: &Args<'_>) -> Result<Value, String> {
        let given_path = a.required("path")?;
        let given = a.string("model")?.map(str::to_owned);
        let sandboxed = a.bool("sandboxed")?.unwrap_or(false);
        extension(given_path, &["rbxm", "rbxmx"])?;
        let output = self.root.confine(given_path)?;
        let request = self.with(move |engine, _| {
            let model = scene::find_model(engine, given.as_deref())?;
            let module = scene::generator_of(engine, model).ok_or("the model has no generator")?;
            let (name, source, size) = engine.with_dom(|d| {
                let name = d
                    .get_by_ref(module)
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let source = match scene::prop(d, module, procmodel_dom::keys::KEYS.source) {
                    Some(Variant::String(s)) => s,
                    _ => String::new(),
                };
                let size = match scene::prop(d, model, procmodel_dom::keys::KEYS.size) {
                    Some(Variant::Vector3(v)) => glam::Vec3::new(v.x, v.y, v.z),
                    _ => glam::Vec3::splat(12.0),
                };
                (name, source, size)
            });
            let mut attributes: Vec<(String, Variant)> = scene::attributes_of(engine, model)
                .iter()
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect();
            attributes.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PackRequest {
                name,
                source,
                size,
                attributes,
                sandboxed,
                output,
            })
        })?;
        let packed = (self.writers.pack)(&request)?;
        Ok(json!({ "path": request.output.display().to_string(), "packed": packed }))
    }

    fn save(&self, a: &Args<'_>) -> Result<Value, String> {
        let path = match a.string("path")? {
            Some(p) => {
                extension(p, &["rbxl", "rbxlx", "rbxm", "rbxmx"])?;
                self.root.confine(p)?
            }
            None => match &self.scene {
                Some(s) if is_place(s) && self.root.confine(&s.display().to_string()).is_ok() => {
                    s.clone()
                }
                _ => return Err("give a path (.rbxl, .rbxlx, .rbxm or .rbxmx): the scene was not opened from a place under the root".into()),
            },
        };
        match self.thread.call(Command::Save(path.clone())) {
            Ok(_) => Ok(json!({ "path": path.display().to_string(), "saved": true })),
            Err(ThreadError::Command { message, .. }) => Err(message),
            Err(e) => Err(e.to_string()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(e: EngineError) -> String {
    e.to_string()
}

/// Lines of output a tool result carries at most (the newest; the count of the others is
/// given).
const OUTPUT_LINES: usize = 200;

/// Steps until no model is dirty; the reports of what ran and what the generators printed
/// since the last tool call (an assistant reads no stderr).
fn settle(engine: &mut Engine, frames: usize) -> Value {
    let reports = engine.settle(frames);
    let (list, failed) = scene::reports_json(engine, &reports);
    let printed = engine.take_output();
    let omitted = printed.len().saturating_sub(OUTPUT_LINES);
    let output: Vec<Value> = printed[omitted..]
        .iter()
        .map(|l| json!({ "level": l.level.name(), "text": l.message }))
        .collect();
    json!({ "ok": !failed, "generated": list, "output": output, "output_omitted": omitted })
}

/// Resolves attribute texts against the model's declared defaults (all before any is set).
fn parse_attributes(
    engine: &Engine,
    defaults: &mut Defaults,
    model: Ref,
    given: &[(String, Option<String>)],
) -> Result<Vec<(String, Option<Variant>)>, String> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    let declared = scene::generator_of(engine, model).and_then(|g| defaults.of(engine, g));
    given
        .iter()
        .map(|(name, text)| match text {
            Some(t) => procmodel_dom::attrs::resolve(declared.as_deref(), name, t)
                .map(|v| (name.clone(), Some(v)))
                .map_err(|e| e.to_string()),
            None => match &declared {
                Some(d) if !d.iter().any(|(n, _)| n == name) => {
                    Err(procmodel_dom::attrs::AttrError::Unknown {
                        name: name.clone(),
                        known: d
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                    .to_string())
                }
                _ => Ok((name.clone(), None)),
            },
        })
        .collect()
}

fn add_module(engine: &mut Engine, name: &str, source: &str) -> Ref {
    let storage = engine.server_storage();
    engine.add_module_script(storage, name, source, None)
}

/// Generator names: what a file stem and an instance path segment can both hold.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name '{name}': use 1 to 100 letters, digits, _ and - (it names the module and the model)"
        ))
    }
}

fn extension(path: &str, allowed: &[&str]) -> Result<(), String> {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if allowed.contains(&ext.as_str()) {
        Ok(())
    } else {
        Err(format!("{path}: use a .{} file", allowed.join(", .")))
    }
}

fn is_place(p: &Path) -> bool {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    matches!(ext.as_str(), "rbxl" | "rbxlx" | "rbxm" | "rbxmx")
}

/// Builds the engine on its thread: a place (or a Rojo project) as it is, a generator file
/// or module folder as a one-model scene (the module added without being required, so one
/// that fails still opens and its model shows the error), or an empty scene.
fn open(
    scene: Option<&Path>,
    config: procmodel_engine::EngineConfig,
) -> Result<Engine, EngineError> {
    let Some(file) = scene else {
        return Engine::new(procmodel_luau::runtime(), config);
    };
    if is_place(file) || procmodel_engine::is_rojo_project(file) {
        return Engine::load(procmodel_luau::runtime(), file, config);
    }
    let mut engine = Engine::new(procmodel_luau::runtime(), config)?;
    engine.add_generator_model(file)?;
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_extensions() {
        assert!(check_name("Stairs_2-b").is_ok());
        for bad in ["", "a.b", "a/b", "..", "a b", &"x".repeat(101)] {
            assert!(
                check_name(bad).unwrap_err().contains("letters, digits"),
                "{bad}"
            );
        }
        assert!(extension("a/b.GLB", &["glb"]).is_ok());
        assert_eq!(
            extension("a.fbx", &["glb", "rbxm"]).unwrap_err(),
            "a.fbx: use a .glb, .rbxm file"
        );
        assert!(extension("noext", &["glb"]).is_err());
    }
}
