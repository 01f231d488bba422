//! `procmodel lock`: regenerate a scene's models (or one generator) from scratch and write a
//! lockfile of every input and the content hash of the results; also the result-cache flags
//! shared by `generate` and `regen`.

use crate::one_model::{Attrs, Placement, Spec, one_model_scene};
use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use procmodel_engine::{Engine, EngineConfig, Report};
use procmodel_lock::{FileLock, Lockfile, ModelLock, Source, SourceKind};
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// A scene (.rbxl, .rbxlx, .rbxm, .rbxmx, a Rojo project) or a generator module (.luau,
    /// .lua, or a folder with init.luau).
    pub input: PathBuf,
    /// For a generator: set an attribute, Name=Value, parsed to the type of its default.
    #[arg(long = "attr", value_name = "NAME=VALUE")]
    pub attrs: Vec<String>,
    /// For a generator: the model's Size, X,Y,Z (default 12,12,12).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::flags::size)]
    pub size: Option<Vec3>,
    /// For a generator: the model's Scale.
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::scale)]
    pub scale: f32,
    /// The lockfile to write.
    #[arg(short, long, default_value = "procmodel.lock")]
    pub output: PathBuf,
    /// Worker VMs (the results, and so the lockfile, are the same for any value).
    #[arg(long, short = 'j', default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::jobs)]
    pub jobs: usize,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
}

/// The result-cache flags of the commands that generate.
#[derive(clap::Args, Debug, Clone)]
pub struct CacheArgs {
    /// Result cache directory (default: the platform's cache folder, e.g. ~/.cache/procmodel);
    /// may be shared by a team or CI.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Neither read nor fill the result cache: always run the generators.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache for what a command opens: a generator file's keys also cover the Luau
    /// files beside it (it may require them by path; none when they cannot be listed), a
    /// scene's need nothing more.
    pub fn open_for(&self, opened: Option<&Path>) -> Option<Arc<procmodel_lock::DirCache>> {
        match opened {
            Some(p) if is_generator(p) => files_salt(p).and_then(|s| self.open(Some(s))),
            _ => self.open(None),
        }
    }

    /// The cache to use (None with --no-cache, or when there is no cache folder). `salt`
    /// adds what the engine cannot see to every key (files a generator may require by path).
    pub fn open(&self, salt: Option<[u8; 32]>) -> Option<Arc<procmodel_lock::DirCache>> {
        if self.no_cache {
            return None;
        }
        let dir = self
            .cache
            .clone()
            .or_else(procmodel_lock::store::default_dir)?;
        let cache = procmodel_lock::DirCache::new(&dir, procmodel_lock::store::DEFAULT_MAX_BYTES);
        Some(Arc::new(match salt {
            Some(s) => cache.with_salt(s),
            None => cache,
        }))
    }
}

/// Prints the cache's warnings (corrupt entries, a directory it cannot write) on stderr.
pub fn report_cache(cache: &Option<Arc<procmodel_lock::DirCache>>) {
    if let Some(c) = cache {
        for w in c.take_warnings() {
            eprintln!("warning: {w}");
        }
    }
}

/// The cache's counters for `--json` reports (null without a cache).
pub fn cache_json(cache: &Option<Arc<procmodel_lock::DirCache>>) -> serde_json::Value {
    match cache {
        Some(c) => {
            let s = c.stats();
            serde_json::json!({
                "dir": c.dir().display().to_string(), "hits": s.hits, "kept": s.kept, "misses": s.misses,
                "stored": s.stores, "corrupt": s.corrupt, "evicted": s.evicted,
            })
        }
        None => serde_json::Value::Null,
    }
}

/// A generator file (`.luau`, `.lua`), or a module folder (an `init.luau` and its children,
/// as Rojo lays them out) that is not a Rojo project.
pub fn is_generator(path: &Path) -> bool {
    matches!(
        path.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("luau" | "lua")
    ) || (procmodel_engine::module_folder(path).is_some()
        && !procmodel_engine::is_rojo_project(path))
}

/// How many files and folders [`generator_files`] looks at beside a generator before it
/// gives up (a generator named in a home folder or `/tmp` would otherwise walk all of it).
const MAX_ENTRIES_BESIDE: usize = 20_000;

/// Luau files a generator file may require by path: those under its folder (sorted, at
/// most 1000, among at most [`MAX_ENTRIES_BESIDE`] entries; linked folders not followed),
/// each with its BLAKE3 hash; paths relative to `base`.
pub fn generator_files(generator: &Path, base: &Path) -> Result<Vec<FileLock>> {
    hashed(walk_beside(generator)?.0, base)
}

/// The `.luaurc` files of the folders above a generator's folder: Luau looks for an alias
/// from the requiring file's folder upwards, so these may define the aliases its requires use.
fn luaurc_above(generator: &Path) -> Vec<PathBuf> {
    crate::output::resolved(folder_of(generator))
        .ancestors()
        .skip(1)
        .map(|d| d.join(".luaurc"))
        .filter(|rc| rc.is_file())
        .collect()
}

/// The folder a generator file is in (`.` for a bare file name).
fn folder_of(generator: &Path) -> &Path {
    generator
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The Luau files and the `.luaurc` files under a generator's folder (within the bounds
/// [`generator_files`] states).
fn walk_beside(generator: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let dir = folder_of(generator);
    let mut found = Vec::new();
    let mut rcs = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot list {}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == ".luaurc" {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    rcs.push(p);
                }
                continue;
            }
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            seen += 1;
            if seen > MAX_ENTRIES_BESIDE {
                bail!(
                    "{}: more than {MAX_ENTRIES_BESIDE} files and folders beside the generator; keep it in a folder of its own",
                    dir.display()
                );
            }
            // A linked folder is not followed: it may lead back up (a loop) or anywhere.
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                stack.push(p);
            } else if is_generator(&p) {
                found.push(p);
            }
        }
        if found.len() > 1000 {
            bail!(
                "{}: more than 1000 Luau files beside the generator; lock it from a folder of its own",
                dir.display()
            );
        }
    }
    Ok((found, rcs))
}

/// `files` with their BLAKE3 hashes, paths relative to `base`, sorted by path.
fn hashed(files: Vec<PathBuf>, base: &Path) -> Result<Vec<FileLock>> {
    let mut out = Vec::new();
    for p in files {
        let bytes = std::fs::read(&p).with_context(|| format!("cannot read {}", p.display()))?;
        out.push(FileLock {
            path: relative(&p, base),
            hash: procmodel_lock::file_hash(&bytes),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The files of `beside` (the Luau files beside a generator, relative to `base`) that a run
/// loaded (`loaded`, absolute: [`procmodel_engine::Engine::module_files`]): the generator
/// itself, what its string requires loaded on any VM, and a module folder generator's own
/// files. A file beside it that nothing required is not an input of its results.
pub fn loaded_files(
    beside: Vec<FileLock>,
    base: &Path,
    generator: &Path,
    loaded: &[PathBuf],
) -> Vec<FileLock> {
    let loaded: std::collections::BTreeSet<PathBuf> =
        loaded.iter().map(|p| crate::output::resolved(p)).collect();
    let generator = crate::output::resolved(generator);
    beside
        .into_iter()
        .filter(|f| {
            let p = crate::output::resolved(&base.join(&f.path));
            loaded.contains(&p) || p.starts_with(&generator)
        })
        .collect()
}

/// `path` relative to the folder `base`, `/`-separated, with `..` where `path` is not
/// inside it (a lockfile and its generator may be published side by side, or the lockfile
/// in a folder below); absolute only when no relative path exists (another Windows drive).
/// Both are made absolute first, symbolic links resolved as far as they exist.
pub fn relative(path: &Path, base: &Path) -> String {
    let (p, b) = (crate::output::resolved(path), crate::output::resolved(base));
    relative_between(&p, &b)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The relative path from the folder `base` to `path`, both absolute; None when they have
/// no common root (another drive).
fn relative_between(path: &Path, base: &Path) -> Option<PathBuf> {
    use std::path::Component;
    /// Components without `.`, and `..` taken back lexically.
    fn normal(p: &Path) -> Vec<Component<'_>> {
        let mut out: Vec<Component<'_>> = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    /// The drive and root the path starts from.
    fn root<'a>(c: &[Component<'a>]) -> Vec<Component<'a>> {
        c.iter()
            .take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
            .copied()
            .collect()
    }
    let (p, b) = (normal(path), normal(base));
    if root(&p) != root(&b) {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// The folder a lockfile's relative paths start from.
pub fn base_of(lockfile: &Path) -> PathBuf {
    match lockfile.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Models of `dom` by full name; two models of one name are an error (a lockfile could not
/// tell them apart).
pub fn models_by_path(dom: &WeakDom, what: &str) -> Result<BTreeMap<String, Ref>> {
    let mut out = BTreeMap::new();
    for m in procmodel_engine::provenance::models(dom) {
        let path = procmodel_dom::full_name(dom, m);
        if out.insert(path.clone(), m).is_some() {
            bail!(
                "{what}: two ProceduralModels are named {path}; rename one so each has its own lock entry"
            );
        }
    }
    Ok(out)
}

/// Forces and settles every model, returning the last report of each.
pub fn regenerate_all(engine: &mut Engine, limits: &crate::limits::Limits) -> Vec<Report> {
    for m in engine.models() {
        engine.force_generation(m);
    }
    let mut last: Vec<Report> = Vec::new();
    for r in engine.settle(limits.max_frames()) {
        match last.iter_mut().find(|o| o.model == r.model) {
            Some(o) => *o = r,
            None => last.push(r),
        }
    }
    last
}

pub fn engine_config(limits: &crate::limits::Limits, jobs: usize) -> EngineConfig {
    let mut config = EngineConfig::default();
    limits.apply(&mut config.host);
    config.jobs = jobs.max(1);
    config
}

pub fn run(args: Args) -> Result<ExitCode> {
    let what = if is_generator(&args.input) {
        "the generator"
    } else {
        "the scene"
    };
    crate::output::not_an_input(&args.output, &[(what, &args.input)])?;
    crate::output::destination(&args.output)?;
    let base = base_of(&args.output);
    let config = engine_config(&args.limits, args.jobs);
    let (engine, source, files, stored) = if is_generator(&args.input) {
        let scene = one_model_scene(
            config,
            Spec {
                generator: &args.input,
                size: args.size.unwrap_or(Vec3::splat(12.0)),
                scale: args.scale,
                attributes: Attrs::Cli(&args.attrs),
                placement: Placement::ServerStorage,
                source: None,
            },
        )?;
        let engine = scene.engine;
        let files = generator_files(&args.input, &base)?;
        let source = Source {
            kind: SourceKind::Generator,
            path: relative(&args.input, &base),
        };
        (engine, source, files, None)
    } else {
        if !args.attrs.is_empty() || args.size.is_some() || args.scale != 1.0 {
            bail!(
                "--attr, --size and --scale are for a generator; a scene's models keep their own inputs"
            );
        }
        let stored = procmodel_engine::read_scene(&args.input)?;
        let engine = Engine::load(procmodel_luau::runtime(), &args.input, config)?;
        let source = Source {
            kind: SourceKind::Scene,
            path: relative(&args.input, &base),
        };
        (engine, source, Vec::new(), Some(stored))
    };
    let mut engine = engine;
    let reports = regenerate_all(&mut engine, &args.limits);
    // Of the files beside a generator, those its run loaded are inputs of its results.
    let files = loaded_files(files, &base, &args.input, &engine.module_files());
    let failed: Vec<&Report> = reports.iter().filter(|r| !r.is_ok()).collect();
    if let Some(r) = failed.first() {
        bail!(
            "{}: model {} failed to generate, nothing to lock: {}",
            args.input.display(),
            r.path,
            r.error()
                .as_deref()
                .unwrap_or("unknown error")
                .lines()
                .next()
                .unwrap_or("")
        );
    }
    let what = args.input.display().to_string();
    let models: Vec<ModelLock> = engine.with_dom(|dom| -> Result<Vec<ModelLock>> {
        let now = models_by_path(dom, &what)?;
        let before = match &stored {
            Some(s) => models_by_path(s, &what)?,
            None => BTreeMap::new(),
        };
        Ok(now
            .iter()
            .map(|(path, &m)| {
                let mut lock = procmodel_lock::model_lock(dom, m, false);
                lock.stored = match (&stored, before.get(path)) {
                    (Some(s), Some(&sm)) => {
                        stored_hash(s, sm).as_deref() == Some(&lock.content_hash)
                    }
                    _ => false,
                };
                lock
            })
            .collect())
    })?;
    if models.is_empty() {
        bail!("{}: no ProceduralModels to lock", args.input.display());
    }
    let unstored: Vec<String> = models
        .iter()
        .filter(|m| !m.stored && source.kind == SourceKind::Scene)
        .map(|m| m.path.clone())
        .collect();
    let lock = Lockfile::new(source, files, models);
    let text = lock.to_toml().map_err(|e| anyhow!(e))?;
    crate::output::write_atomic(&args.output, text.as_bytes())?;
    if !unstored.is_empty() && crate::project::is_project(&args.input) {
        // A project is never written over, so there is no saving the results into it.
        eprintln!(
            "note: the project's files do not hold the results of {} (verify checks the results it regenerates)",
            unstored.join(", ")
        );
    } else if !unstored.is_empty() {
        eprintln!(
            "note: the scene file does not hold the regenerated results of {} (run `procmodel regen --force` and lock again to have verify check the saved results too)",
            unstored.join(", ")
        );
    }
    eprintln!(
        "locked {} model{} -> {}",
        lock.models.len(),
        if lock.models.len() == 1 { "" } else { "s" },
        args.output.display()
    );
    std::mem::forget(engine);
    Ok(ExitCode::SUCCESS)
}

/// The content hash of the results a scene file holds for `model`.
pub fn stored_hash(dom: &WeakDom, model: Ref) -> Option<String> {
    let folder = procmodel_engine::provenance::results(dom, model)?;
    Some(procmodel_dom::hash::to_hex(
        &procmodel_dom::hash::children_hash(dom, folder),
    ))
}

/// The salt of a generator file's cache keys: the Luau files beside it and the `.luaurc`
/// files whose aliases their requires may use (None when they cannot be listed: then
/// nothing is cached, rather than something stale).
pub fn files_salt(generator: &Path) -> Option<[u8; 32]> {
    let dir = folder_of(generator);
    // Paths relative to the generator's folder: the same files elsewhere are the same key.
    // The `.luaurc` files count too: an alias edited there makes a require load another file.
    let files = walk_beside(generator).and_then(|(mut files, rcs)| {
        files.extend(rcs);
        files.extend(luaurc_above(generator));
        hashed(files, dir)
    });
    let files = match files {
        Ok(files) => files,
        Err(e) => {
            // Only the cache is lost: say so, once, and generate.
            if generator.exists() {
                eprintln!("warning: {e:#}: the result cache is off for this run");
            }
            return None;
        }
    };
    let mut h = blake3::Hasher::new();
    h.update(b"procmodel-files\0");
    for f in &files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(f.hash.as_bytes());
    }
    Some(*h.finalize().as_bytes())
}
