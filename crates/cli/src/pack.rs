//! `procmodel pack`: a generator as a package for Studio and the Creator Store — a
//! ProceduralModel holding its generator ModuleScript, its attributes, Size and its current
//! results in a GeneratedFolder (Dirty false), so it stays procedural once inserted.
//!
//! Must never write a package whose results the engine did not generate from the packed
//! module itself (the module runs as it will from the package: no file behind it), nor
//! write one that failed or is still dirty.

use crate::one_model::{
    Attrs, MINIMAL_CAPABILITIES, OneModel, Placement, Spec, capabilities, one_model_scene,
};
use crate::output::{self, Format};
use anyhow::{Result, anyhow, bail};
use glam::Vec3;
use procmodel_engine::EngineConfig;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The generator module (.luau, .lua), packed as one ModuleScript; or a folder with
    /// init.luau, packed as that ModuleScript with the folder's files as its children. The
    /// files it requires by path (`./X`, `@self/X`) are packed around it, where the same
    /// requires resolve over the package's tree.
    pub generator: PathBuf,
    /// The model's Size: X,Y,Z (default 12,12,12 as in Studio).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::flags::size)]
    pub size: Option<Vec3>,
    /// Set an attribute: Name=Value, parsed to the type of the generator's default.
    #[arg(long = "attr", value_name = "NAME=VALUE")]
    pub attrs: Vec<String>,
    /// Mark the generator module Sandboxed with the minimal capabilities (Basic,
    /// RunServerScript, CreateInstances); the packed results are generated sandboxed too.
    #[arg(long)]
    pub sandboxed: bool,
    /// With --sandboxed, grant one more capability (an `Enum.SecurityCapability` name, such
    /// as CSG for solid modelling or AccessOutsideWrite); repeatable.
    #[arg(long = "capability", value_name = "NAME", requires = "sandboxed")]
    pub capabilities: Vec<String>,
    /// The package to write (.rbxm or .rbxmx).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let packed = pack(&Package {
        generator: &args.generator,
        source: None,
        size: args.size.unwrap_or(Vec3::splat(12.0)),
        attributes: Attrs::Cli(&args.attrs),
        sandboxed: args.sandboxed,
        capabilities: &args.capabilities,
        output: &args.output,
        limits: &args.limits,
    })?;
    if let Some(w) = packed.toolkit_warning(&args.generator) {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "packed {} ({} generated instances{}) -> {} ({} bytes)",
        args.generator.display(),
        packed.instances,
        if args.sandboxed { ", sandboxed" } else { "" },
        args.output.display(),
        packed.len
    );
    Ok(ExitCode::SUCCESS)
}

/// What to pack (the command's arguments, or an MCP client's request).
pub struct Package<'a> {
    /// The generator file; with `source`, only its name (the module's name is its stem).
    pub generator: &'a Path,
    /// The generator's text when it is held in memory rather than read from `generator`.
    pub source: Option<&'a str>,
    pub size: Vec3,
    pub attributes: Attrs<'a>,
    pub sandboxed: bool,
    /// Capabilities granted besides the minimal ones, when sandboxed.
    pub capabilities: &'a [String],
    pub output: &'a Path,
    pub limits: &'a crate::limits::Limits,
}

impl<'a> Package<'a> {
    /// The package's one-model scene with its generator placed by `placement`: in
    /// ServerStorage it is read from its file, inside the model from its text (`source`,
    /// else the file's).
    fn spec(&self, attributes: Attrs<'a>, placement: Placement) -> Spec<'a> {
        let source = match placement {
            Placement::ServerStorage => None,
            Placement::InsideModel { .. } => self.source,
        };
        Spec {
            generator: self.generator,
            source,
            size: self.size,
            scale: 1.0,
            attributes,
            placement,
        }
    }
}

/// A package written.
pub struct Packed {
    /// Generated instances in the package's results.
    pub instances: usize,
    /// Bytes written.
    pub len: u64,
    /// The `@procmodel/*` toolkit modules the packed code names (sorted): they exist only in
    /// procmodel, so Roblox Studio keeps the packed results but cannot regenerate them.
    pub toolkit: Vec<String>,
}

impl Packed {
    /// The warning for a package whose code needs the toolkit, if it does.
    pub fn toolkit_warning(&self, generator: &Path) -> Option<String> {
        let names = self.toolkit.join(", ");
        (!self.toolkit.is_empty()).then(|| format!(
            "{} requires {names}, which only procmodel has: the package carries the results generated here, but Roblox Studio cannot regenerate it (its require fails there); for a package that regenerates in Studio, use Roblox's own APIs (math.noise, Random, ...)",
            generator.display()
        ))
    }
}

/// The `@procmodel/<name>` modules named in the Source of the ModuleScripts under `root`
/// (their string requires; a literal is how the toolkit is reached).
fn toolkit_modules(dom: &rbx_dom_weak::WeakDom, root: rbx_types::Ref) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    for inst in dom.descendants_of(root) {
        if let Some(rbx_types::Variant::String(source)) = inst.properties.get(&"Source".into()) {
            names.extend(procmodel_luau::requires::toolkit_requires(source));
        }
    }
    names.into_iter().collect()
}

/// Why a string require of a packed generator file can fail when it did not from the files.
const SPLIT_GENERATOR_HINT: &str = "a package holds the generator and the modules its run required from the files beside it, and resolves requires over that tree: a .luaurc alias means nothing there (require by ./, ../ or @self/), and a module no run of these inputs required is not there";

/// What to add to an error that is a failed string require of a generator file: it runs
/// from the files beside it, but the package holds its module alone.
fn split_hint(p: &Package<'_>, error: &str) -> String {
    let split = p.source.is_none() && error.contains("cannot require '");
    if split {
        format!(" ({SPLIT_GENERATOR_HINT})")
    } else {
        String::new()
    }
}

/// A run of generator file `p` from its file (requires by path resolve among the files
/// beside it), with the package's inputs: the files it required other than the
/// generator's own, and its error if it failed.
fn run_from_files(
    p: &Package<'_>,
    mut config: EngineConfig,
    attributes: Attrs<'_>,
) -> (Vec<PathBuf>, Option<Failed>) {
    // Its prints were the package run's to show.
    config.host.echo_output = false;
    let mut engine = match one_model_scene(config, p.spec(attributes, Placement::ServerStorage)) {
        Ok(OneModel { engine, .. }) => engine,
        Err(e) => return (Vec::new(), Some(Failed::Scene(e))),
    };
    let error = engine
        .settle(p.limits.max_frames())
        .iter()
        .find_map(|r| r.error().map(|e| Failed::Run(e.to_string())));
    // The generator's own file, or its module folder's files.
    let own = crate::output::resolved(
        &procmodel_engine::module_folder(p.generator).unwrap_or_else(|| p.generator.to_path_buf()),
    );
    let files: Vec<PathBuf> = engine
        .module_files()
        .into_iter()
        .filter(|f| !crate::output::resolved(f).starts_with(&own))
        .collect();
    std::mem::forget(engine);
    (files, error)
}

/// Why a package was not made.
enum Failed {
    /// Its scene could not be built (the generator's top level failed, a bad `--attr`...).
    Scene(anyhow::Error),
    /// The generator ran and failed.
    Run(String),
}

impl Failed {
    /// The error to show for `p`.
    fn error(self, p: &Package<'_>) -> anyhow::Error {
        match self {
            Failed::Scene(e) => {
                let hint = split_hint(p, &format!("{e:#}"));
                if hint.is_empty() {
                    e
                } else {
                    anyhow!("{}: nothing packed: {e:#}{hint}", p.generator.display())
                }
            }
            Failed::Run(e) => {
                let project = if p.source.is_none() {
                    crate::one_model::project_hint(p.generator, &e)
                } else {
                    String::new()
                };
                anyhow!(
                    "{}: generation failed, nothing packed: {e}{}{project}",
                    p.generator.display(),
                    split_hint(p, &e)
                )
            }
        }
    }
}

/// The files beside generator file `generator` that its code requires by a literal path
/// (`require("./Desert")`, in any branch, whether this run takes it or not), followed from
/// file to file ([`procmodel_engine::required_by_text`]): what the package needs for inputs
/// other than the ones it is packed with. The flag is true when a literal spec named no
/// file (an alias, a file that is not there, perhaps under `pcall`): only a run says what
/// that needs.
fn required_by_text(generator: &Path) -> (Vec<PathBuf>, bool) {
    let folder = procmodel_engine::module_folder(generator);
    let own = crate::output::resolved(folder.as_deref().unwrap_or(generator));
    let Some(root) = own.parent() else {
        return (Vec::new(), false);
    };
    let start = match &folder {
        Some(dir) => procmodel_engine::read_module_folder(dir)
            .map(|built| built.scripts.into_iter().map(|(_, f)| f).collect())
            .unwrap_or_default(),
        None => vec![own.clone()],
    };
    let found = procmodel_engine::required_by_text(&*procmodel_luau::runtime(), &start, Some(root));
    let files = found
        .files
        .into_iter()
        .filter(|f| !f.starts_with(&own))
        .collect();
    (files, !found.unresolved.is_empty())
}

/// `a` and the files of `b` it lacks, sorted.
fn union(a: Vec<PathBuf>, b: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut all: std::collections::BTreeSet<PathBuf> = a.into_iter().collect();
    all.extend(b);
    all.into_iter().collect()
}

/// The package's scene generated: the engine, the model and the reports.
struct Attempt {
    engine: procmodel_engine::Engine,
    model: rbx_types::Ref,
    reports: Vec<procmodel_engine::Report>,
}

/// Builds the package's scene (the generator inside the model, `beside` placed around it)
/// and generates it.
fn attempt(
    p: &Package<'_>,
    config: EngineConfig,
    attributes: Attrs<'_>,
    beside: Vec<PathBuf>,
) -> Result<Attempt, Failed> {
    let sandboxed = if p.sandboxed {
        let mut names: Vec<&str> = MINIMAL_CAPABILITIES.to_vec();
        names.extend(p.capabilities.iter().map(String::as_str));
        Some(capabilities(&names).map_err(Failed::Scene)?)
    } else {
        None
    };
    let OneModel { mut engine, model } = one_model_scene(
        config,
        p.spec(attributes, Placement::InsideModel { beside, sandboxed }),
    )
    .map_err(Failed::Scene)?;
    let reports = engine.settle(p.limits.max_frames());
    let failed = match reports.iter().rev().find(|r| r.model == model) {
        None => Some("the generator did not run".to_owned()),
        Some(r) => r.error().map(|e| e.to_string()),
    };
    if let Some(e) = failed {
        std::mem::forget(engine);
        return Err(Failed::Run(e));
    }
    Ok(Attempt {
        engine,
        model,
        reports,
    })
}

/// Generates `p` in a scene of its own and writes the package (atomically).
pub fn pack(p: &Package<'_>) -> Result<Packed> {
    // Any other extension, known or not, gets the package's rule, not the list of formats
    // `generate` writes.
    let format = match Format::from_path(p.output) {
        Ok(f @ (Format::Rbxm | Format::Rbxmx)) => f,
        _ => bail!(
            "{}: a package is a model file (.rbxm or .rbxmx)",
            p.output.display()
        ),
    };
    crate::output::destination(p.output)?;
    if p.source.is_none() && !crate::lock::is_generator(p.generator) {
        bail!(
            "{}: pack takes a generator module (.luau or .lua, or a folder with init.luau)",
            p.generator.display()
        );
    }
    let mut config = EngineConfig::default();
    p.limits.apply(&mut config.host);
    config.host.echo_output = true;
    // The package is what `procmodel regen` of it saves: the same configuration (provenance
    // on, no cache), so regenerating a fresh package changes no byte.
    let attributes = || match &p.attributes {
        Attrs::Cli(a) => Attrs::Cli(a),
        Attrs::Values(v) => Attrs::Values(v.clone()),
    };
    // The package runs the generator as it will run from the package: no file behind it,
    // every require resolved over the tree. The files a generator file requires by a
    // literal path are read from its text and packed around it, where the same requires
    // resolve (a module folder's own files are its children already), whichever input takes
    // them. What the text cannot settle — a spec that resolved to no file, or a run that
    // failed (a require of a computed path) — a run from the files settles: it names the
    // files it required, and the package is made once more with those too.
    let (by_text, unresolved) = match p.source {
        None => required_by_text(p.generator),
        Some(_) => (Vec::new(), false),
    };
    let Attempt {
        engine,
        model,
        reports,
    } = match attempt(p, config.clone(), attributes(), by_text.clone()) {
        // A spec the text did not resolve may be a file a run finds (a `pcall(require,
        // "./X")` of a path the scan could not follow): the files say.
        Ok(first) if p.source.is_none() && unresolved => {
            let (by_run, _) = run_from_files(p, config.clone(), attributes());
            if by_run
                .iter()
                .all(|f| by_text.contains(&crate::output::resolved(f)))
            {
                first
            } else {
                std::mem::forget(first.engine);
                attempt(p, config, attributes(), union(by_text, by_run)).map_err(|e| e.error(p))?
            }
        }
        Ok(a) => a,
        Err(first) if p.source.is_none() => {
            let (by_run, from_files) = run_from_files(p, config.clone(), attributes());
            if by_run
                .iter()
                .all(|f| by_text.contains(&crate::output::resolved(f)))
            {
                // Nothing more beside it to place: the run from the files says what
                // failed, naming the file and line (the first run names the module in the
                // tree).
                return Err(from_files.unwrap_or(first).error(p));
            }
            attempt(p, config, attributes(), union(by_text, by_run)).map_err(|e| e.error(p))?
        }
        Err(e) => return Err(e.error(p)),
    };
    if engine.is_dirty(model) {
        bail!(
            "{}: the model is still dirty after generating (does it change its own inputs?)",
            p.generator.display()
        );
    }
    let outcome = crate::one_model::outcome(&engine, &reports, model);
    if let Some((path, error)) = outcome.nested_failures.first() {
        bail!(
            "{}: nested model {path} failed, nothing packed: {error}",
            p.generator.display()
        );
    }
    let instances = outcome.instances;
    let dom = engine.into_dom();
    let toolkit = toolkit_modules(&dom, model);
    let written = output::write(&dom, &[model], format, p.output, false)?;
    Ok(Packed {
        instances,
        len: written.len,
        toolkit,
    })
}
