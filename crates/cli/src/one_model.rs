//! The one-model scene of a generator file, shared by `generate`, `lock`, `verify` and `pack`:
//! an engine with the generator as a ModuleScript and one ProceduralModel (Size, Scale,
//! attributes) pointing at it, ready to settle; and `--attr` resolution against the
//! generator's declared attributes.
//!
//! Must never run the generator's OnGenerate itself (the engine does, on settle) nor write
//! files: the commands decide what to keep of the scene.

use crate::attrs;
use anyhow::{Result, anyhow, bail};
use glam::Vec3;
use procmodel_dom::attrs::AttrError;
use procmodel_engine::{Engine, EngineConfig};
use rbx_dom_weak::{InstanceBuilder, ustr};
use rbx_types::{Attributes, Ref, SecurityCapabilities, Variant};
use std::path::Path;

/// Attributes of a one-model scene: `--attr` texts, or exact values from a lockfile.
pub enum Attrs<'a> {
    Cli(&'a [String]),
    Values(Vec<(String, Variant)>),
}

/// Where the generator module lives in the scene.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Placement {
    /// In ServerStorage, backed by its file: string requires resolve beside the file (what
    /// `generate`, `lock` and `verify` run).
    ServerStorage,
    /// Inside the ProceduralModel with no file behind it, as a package holds it: requires
    /// resolve through the instance tree only, exactly as it will run once inserted. The
    /// model is at the scene's root (as a model file holds it), not in Workspace.
    /// `sandboxed`: the module's Capabilities when it is Sandboxed.
    InsideModel {
        sandboxed: Option<SecurityCapabilities>,
        /// Files a generator file requires by path, put around it as a package holds them
        /// (`./X` a sibling inside the model, `@self/X` a child) before it loads.
        beside: Vec<std::path::PathBuf>,
    },
}

/// What a one-model scene is built from.
pub struct Spec<'a> {
    pub generator: &'a Path,
    /// The generator's text, when it is not read from `generator` (a module held in memory:
    /// `generator` then only names it). Only with [`Placement::InsideModel`].
    pub source: Option<&'a str>,
    pub size: Vec3,
    pub scale: f32,
    pub attributes: Attrs<'a>,
    pub placement: Placement,
}

/// The scene built by [`one_model_scene`].
pub struct OneModel {
    pub engine: Engine,
    /// The ProceduralModel.
    pub model: Ref,
}

/// Marks ModuleScript `module` Sandboxed with `caps`.
fn sandbox(dom: &mut rbx_dom_weak::WeakDom, module: Ref, caps: SecurityCapabilities) {
    if let Some(m) = dom.get_by_ref_mut(module) {
        m.properties.insert(ustr("Sandboxed"), Variant::Bool(true));
        m.properties
            .insert(ustr("Capabilities"), Variant::SecurityCapabilities(caps));
    }
}

/// The capabilities a sandboxed generator needs to generate at all (SPEC §4 "Sandboxing";
/// the engine refuses to run a sandboxed module lacking any of them).
pub const MINIMAL_CAPABILITIES: [&str; 3] = ["Basic", "RunServerScript", "CreateInstances"];

/// The `SecurityCapabilities` holding exactly `names` (bits from the reflection database).
pub fn capabilities(names: &[&str]) -> Result<SecurityCapabilities> {
    let Some(e) = procmodel_dom::db().enums.get("SecurityCapability") else {
        bail!("the reflection database has no SecurityCapability enum");
    };
    let mut bits = 0u64;
    for name in names {
        let Some(v) = e.items.get(name) else {
            bail!("unknown SecurityCapability '{name}'");
        };
        bits |= 1u64 << v;
    }
    Ok(SecurityCapabilities::from_bits(bits))
}

/// Builds the one-model scene of `spec` (nothing has run but the module's top level, to
/// read its declared attributes). The model is named after the file's stem.
pub fn one_model_scene(config: EngineConfig, spec: Spec<'_>) -> Result<OneModel> {
    let generator = spec.generator;
    let from_file = spec.source.is_none();
    build_scene(config, spec).map_err(|e| {
        let hint = if from_file {
            project_hint(generator, &format!("{e:#}"))
        } else {
            String::new()
        };
        if hint.is_empty() {
            e
        } else {
            anyhow!("{e:#}{hint}")
        }
    })
}

/// What to add to the error of generator file `generator` that looked in a service for an
/// instance its one-model scene lacks (`Packages is not a valid member of ReplicatedStorage`):
/// how to run it where that instance is — the Rojo project found in its folder or above, else
/// a place. Empty for other errors.
pub fn project_hint(generator: &Path, error: &str) -> String {
    // A lookup from a service (or the DataModel) that failed: in a lone run they are empty.
    let service = |class: &str| class == "DataModel" || procmodel_dom::is_service(class);
    let from_service = error
        .split("is not a valid member of ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .any(service)
        // A wait for a child of a service that never came (`ReplicatedStorage:WaitForChild(
        // "Assets")` in the wait limit's error).
        || error
            .rsplit(":WaitForChild(")
            .skip(1)
            .filter_map(|before| before.rsplit([' ', '\'', '"', '\n']).next())
            .any(|path| service(path.split('.').next().unwrap_or(path)));
    if !from_service {
        return String::new();
    }
    let start = crate::output::resolved(generator);
    match start.ancestors().skip(1).find_map(rojo_project_in) {
        Some(project) => format!(
            " (the generator is in the Rojo project {}, whose instances a generator file run alone does not have: its scene holds Workspace, ServerStorage and the generator; run it in the project with `procmodel regen {}`)",
            project.display(),
            project.display()
        ),
        // The host has said already which file beside it the lookup meant.
        None if error.contains("was loaded from a file, and the files beside it") => String::new(),
        None => " (a generator file run alone has a scene of its own: Workspace, ServerStorage holding the generator, and empty services; to generate with a place's instances, put a ProceduralModel using it in the place and run `procmodel regen <place>`)".to_owned(),
    }
}

/// The Rojo project file in `dir` (`default.project.json(c)`, else the first
/// `*.project.json(c)` by name).
fn rojo_project_in(dir: &Path) -> Option<std::path::PathBuf> {
    if let Some(default) = procmodel_rojo::project_file(dir) {
        return Some(default);
    }
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(procmodel_rojo::is_project_file_name)
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

fn build_scene(config: EngineConfig, spec: Spec<'_>) -> Result<OneModel> {
    if spec.source.is_none() {
        generator_file_exists(spec.generator)?;
    }
    let mut engine = Engine::new(procmodel_luau::runtime(), config)?;
    let name = generator_name(spec.generator);
    let (generator, model) = match spec.placement {
        Placement::ServerStorage => {
            let workspace = engine.workspace();
            let storage = engine.server_storage();
            let g = engine.load_generator_file(spec.generator, storage)?;
            let model = engine.insert(
                workspace,
                InstanceBuilder::new("ProceduralModel")
                    .with_name(name)
                    .with_property("Generator", Variant::Ref(g.module)),
            );
            (g, model)
        }
        Placement::InsideModel { sandboxed, beside } => {
            // At the scene's root, where a model file puts it when it is loaded again: the
            // provenance names the generator by its full name, the same now as after reload.
            let root = engine.with_dom(|dom| dom.root_ref());
            let model = engine.insert(
                root,
                InstanceBuilder::new("ProceduralModel").with_name(name.clone()),
            );
            let module = match (spec.source, procmodel_engine::module_folder(spec.generator)) {
                (Some(s), _) => engine.add_module_script(model, &name, s, None),
                // No file behind the folder's modules either: every require resolves over
                // the tree, as in the package.
                (None, Some(dir)) => engine.add_module_folder_unbound(&dir, model)?,
                (None, None) => {
                    let source = procmodel_luau::read_script_text(spec.generator)?;
                    engine.add_module_script(model, &name, &source, None)
                }
            };
            let caps = sandboxed;
            engine.with_dom_mut(|dom| {
                if let Some(caps) = caps {
                    sandbox(dom, module, caps);
                }
                if let Some(pm) = dom.get_by_ref_mut(model) {
                    pm.properties
                        .insert(ustr("Generator"), Variant::Ref(module));
                }
            });
            if !beside.is_empty() && spec.source.is_none() {
                // The file the generator stands for: a module folder's init script.
                let file = match procmodel_engine::module_folder(spec.generator) {
                    Some(dir) => {
                        let dir = crate::output::resolved(&dir);
                        procmodel_engine::module_init(&dir).unwrap_or_else(|| dir.join("init.luau"))
                    }
                    None => crate::output::resolved(spec.generator),
                };
                let roots = engine.place_file_modules(&file, module, &beside)?;
                // The modules placed for a sandboxed generator are sandboxed as it is.
                if let Some(caps) = caps {
                    engine.with_dom_mut(|dom| {
                        let placed: Vec<Ref> = roots
                            .iter()
                            .flat_map(|&r| dom.descendants_of(r))
                            .filter(|i| i.class == "ModuleScript")
                            .map(|i| i.referent())
                            .collect();
                        for r in placed {
                            sandbox(dom, r, caps);
                        }
                    });
                }
            }
            let g = engine.load_generator(module, &spec.generator.display().to_string())?;
            (g, model)
        }
    };
    let given = match spec.attributes {
        Attrs::Cli(args) => resolve_attrs(&generator, args)?,
        Attrs::Values(v) => v,
    };
    let mut attributes = Attributes::new();
    for (n, v) in given {
        attributes.insert(n, v);
    }
    let size = spec.size;
    // Size is the box at the model's scale: params.Size = Size / Scale, as in Studio.
    engine.with_dom_mut(|dom| {
        if let Some(pm) = dom.get_by_ref_mut(model) {
            pm.properties.insert(
                ustr("Size"),
                Variant::Vector3(rbx_types::Vector3::new(size.x, size.y, size.z)),
            );
            pm.properties
                .insert(ustr("Scale"), Variant::Float32(spec.scale));
            pm.properties
                .insert(ustr("Attributes"), Variant::Attributes(attributes));
        }
    });
    Ok(OneModel { engine, model })
}

/// Resolves `--attr` arguments against the generator's declared attributes.
pub fn resolve_attrs(
    generator: &procmodel_engine::LoadedGenerator,
    args: &[String],
) -> Result<Vec<(String, Variant)>> {
    let mut out: Vec<(String, Variant)> = Vec::new();
    for arg in args {
        let (name, text) = attrs::split(arg)?;
        let value = match procmodel_dom::attrs::resolve(generator.attributes.as_deref(), name, text)
        {
            Ok(v) => v,
            Err(e @ AttrError::Unknown { .. }) => bail!("--attr {name}: {e}"),
            Err(e) => return Err(e.into()),
        };
        out.retain(|(n, _)| n != name);
        out.push((name.to_owned(), value));
    }
    Ok(out)
}

/// What settling a one-model scene made of `model` and the models nested in its results.
pub struct Outcome {
    /// Instances of the results, nested models' results included.
    pub instances: usize,
    /// Nested models whose last run failed: (instance path, error), in path order.
    pub nested_failures: Vec<(String, String)>,
}

/// Sums the last report of `model` and of every model now inside it, and lists the nested
/// ones that failed (their results are error placeholders).
pub fn outcome(engine: &Engine, reports: &[procmodel_engine::Report], model: Ref) -> Outcome {
    let mut last: std::collections::BTreeMap<String, &procmodel_engine::Report> =
        std::collections::BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for r in reports.iter().rev() {
        if !seen.insert(r.model) {
            continue;
        }
        let inside = engine.with_dom(|d| {
            let mut cur = Some(r.model);
            while let Some(c) = cur.filter(|c| c.is_some()) {
                if c == model {
                    return true;
                }
                cur = d.get_by_ref(c).map(|i| i.parent());
            }
            false
        });
        if inside {
            last.insert(format!("{}\u{0}{:?}", r.path, r.model), r);
        }
    }
    let mut out = Outcome {
        instances: 0,
        nested_failures: Vec::new(),
    };
    for r in last.values() {
        out.instances += r.instances;
        if !r.is_ok() && r.model != model {
            out.nested_failures.push((
                r.path.clone(),
                r.error().unwrap_or_else(|| "unknown error".into()),
            ));
        }
    }
    out
}

/// The name a generator's model and module take: a file's stem, a module folder's name.
pub fn generator_name(path: &Path) -> String {
    let folder = procmodel_engine::module_folder(path).map(|dir| dir.canonicalize().unwrap_or(dir));
    folder
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| path.file_stem())
        .and_then(|s| s.to_str())
        .unwrap_or("Generated")
        .to_owned()
}

/// Refuses a generator path that names no file: missing, or a folder that is not a module
/// folder (an `init.luau` and its children, as Rojo lays them out).
pub fn generator_file_exists(path: &Path) -> Result<()> {
    if path.is_dir() && procmodel_engine::module_folder(path).is_none() {
        bail!(
            "{}: is a folder without an init.luau; name the generator file in it (e.g. {}), or make the folder a module with init.luau",
            path.display(),
            path.join("Generator.luau").display()
        );
    }
    if !path.is_file() && !path.is_dir() {
        bail!("{}: generator file not found", path.display());
    }
    Ok(())
}
