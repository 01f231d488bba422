//! `procmodel plan`, `procmodel sweep` and `procmodel bake` (`--shard I/N|auto` and `--merge`):
//! sharded bakes of a scene's ProceduralModels or of a sweep's variants, through the
//! engine's result-cache seam. A shard generates its units and stores each applied result as
//! a cache entry (content-addressed by the blake3 of its bytes) and writes its manifest last;
//! the merge loads the same input with a cache made of the verified entries, so every unit is
//! a hit and the place is the bytes a one-process `regen --force` saves.
//!
//! Never writes a manifest before every file it names, never puts a time into anything that
//! must be byte-identical, and never treats an unverified file as a result.

use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use procmodel_bake::manifest::{FORMAT, InputRef};
use procmodel_bake::sweep::{Axis, Distribution};
use procmodel_bake::{
    Assignment, Manifest, Shard, Store, Timings, Unit, UnitRecord, UnitStatus, digest_hex,
    unit_keys,
};
use procmodel_dom::hash::hex;
use procmodel_engine::provenance::{self, CONTENT_HASH_ATTRIBUTE};
use procmodel_engine::{Engine, EngineConfig, Report, ResultCache};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::{Attributes, Ref, Variant};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// The attribute on a sweep scene's `Sweep` folder: the swept axes (JSON).
const SWEEP_ATTRIBUTE: &str = "ProcmodelSweep";

#[derive(clap::Args)]
pub struct PlanArgs {
    /// A scene (.rbxl, .rbxlx, .rbxm, .rbxmx), a sweep scene written by `procmodel sweep`,
    /// or a world file (.toml, .json: its tiles are the units).
    pub input: PathBuf,
    /// Also show which of N shards each unit goes to, and each shard's unit count.
    #[arg(long)]
    pub shards: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tiles: WorldTiles,
}

/// How a world (a `.toml`/`.json` world file) is cut into units: the tiles of
/// `procmodel terrain --tiles`.
#[derive(clap::Args)]
pub struct WorldTiles {
    /// World inputs: tile side in studs (a multiple of 128 and of the world's grid; default 1024).
    #[arg(long, value_name = "STUDS")]
    pub tile_size: Option<u32>,
    /// World inputs: what each tile holds, any of glb, png, r16, r32 (default glb,png).
    #[arg(long, value_name = "KINDS")]
    pub tile_output: Option<String>,
}

impl WorldTiles {
    fn args(&self) -> crate::bake_world::TileArgs<'_> {
        crate::bake_world::TileArgs {
            size: self.tile_size,
            output: self.tile_output.as_deref(),
        }
    }

    /// Refuses tile settings for an input that is not a world.
    fn only_for_worlds(&self, input: &Path) -> Result<()> {
        if self.tile_size.is_some() || self.tile_output.is_some() {
            bail!(
                "{}: --tile-size and --tile-output are for world files (.toml, .json)",
                input.display()
            );
        }
        Ok(())
    }
}

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The generator module (.luau, or a folder with init.luau and its child modules).
    pub generator: PathBuf,
    /// A swept attribute: Name=A..B (whole numbers, inclusive) or Name=v1,v2,... (Name=v1;v2;... when values hold commas, such as colours or vectors)
    /// (repeatable; the variants are every combination).
    #[arg(long = "attr", value_name = "NAME=VALUES")]
    pub attrs: Vec<String>,
    /// Where to write the sweep scene (.rbxl, .rbxlx, .rbxm, .rbxmx): one ProceduralModel per
    /// variant, an input for `plan`, `bake` and `regen`.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Size of every variant's model (X,Y,Z studs).
    #[arg(long, value_parser = crate::flags::size)]
    pub size: Option<Vec3>,
    /// Lay the variants out side by side in a square grid on the X/Z plane, GAP studs
    /// apart (default 4), to look at them together in Studio or an export. Without it every
    /// variant sits at the origin, so equal results have equal content hashes in a merge's
    /// summary; with it each variant's place is part of its results.
    #[arg(long, value_name = "GAP", num_args = 0..=1, default_missing_value = "4")]
    pub grid: Option<f32>,
}

#[derive(clap::Args)]
pub struct BakeArgs {
    /// The scene, sweep scene or world file (.toml, .json) to bake (not with --merge).
    pub input: Option<PathBuf>,
    /// Which shard this process bakes: I/N (0-based), or `auto` (JOB_COMPLETION_INDEX with
    /// PROCMODEL_SHARDS, or SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT).
    #[arg(long)]
    pub shard: Option<String>,
    /// Where the shard writes: a directory, or s3://, gs://, az:// (credentials from the
    /// standard environment variables).
    #[arg(long, value_name = "URL")]
    pub out: Option<String>,
    /// Merge the shards baked into URL instead of baking one.
    #[arg(long, value_name = "URL", conflicts_with_all = ["shard", "out"])]
    pub merge: Option<String>,
    /// The merged place (with --merge), or for a world the folder of its tiles.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The lockfile the merge writes (default: the output with the extension .lock).
    #[arg(long)]
    pub lock: Option<PathBuf>,
    /// A sweep's summary JSON (default: the output with the extension .summary.json).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    /// Worker VMs generating independent models at once (the bytes are the same for any value).
    #[arg(long, short = 'j', default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::jobs)]
    pub jobs: usize,
    #[command(flatten)]
    pub tiles: WorldTiles,
}

// ----- units -----

/// A unit of a loaded scene: its key and model.
struct SceneUnit {
    unit: Unit,
    model: Ref,
}

/// The units of a scene: its outermost ProceduralModels that have a generator, by instance
/// path (models nested in another's results are baked with it).
fn scene_units(dom: &WeakDom) -> Vec<SceneUnit> {
    let models: Vec<Ref> = provenance::models(dom)
        .into_iter()
        .filter(|&m| provenance::generator(dom, m).is_some() && !nested(dom, m))
        .collect();
    let paths: Vec<String> = models
        .iter()
        .map(|&m| procmodel_dom::full_name(dom, m))
        .collect();
    let keys = unit_keys(paths.iter().map(|s| s.as_str()));
    models
        .into_iter()
        .zip(keys)
        .map(|(model, key)| SceneUnit {
            unit: Unit {
                key,
                size: provenance::results(dom, model).map_or(0, |f| descendants(dom, f) as u64),
            },
            model,
        })
        .collect()
}

fn nested(dom: &WeakDom, model: Ref) -> bool {
    let mut r = dom.get_by_ref(model).map(|i| i.parent());
    while let Some(p) = r.filter(|p| p.is_some()) {
        let Some(i) = dom.get_by_ref(p) else { break };
        if i.class == "ProceduralModel" {
            return true;
        }
        r = Some(i.parent());
    }
    false
}

fn descendants(dom: &WeakDom, root: Ref) -> usize {
    let mut n = 0;
    let mut stack: Vec<Ref> = dom
        .get_by_ref(root)
        .map(|i| i.children().to_vec())
        .unwrap_or_default();
    while let Some(r) = stack.pop() {
        n += 1;
        if let Some(i) = dom.get_by_ref(r) {
            stack.extend_from_slice(i.children());
        }
    }
    n
}

/// The `Sweep` folder of a sweep scene, if `dom` is one.
fn sweep_folder(dom: &WeakDom) -> Option<Ref> {
    let ws = dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&r| dom.get_by_ref(r).is_some_and(|i| i.class == "Workspace"))?;
    dom.get_by_ref(ws)?
        .children()
        .iter()
        .copied()
        .find(|&r| provenance::string_attribute(dom, r, SWEEP_ATTRIBUTE).is_some())
}

// ----- plan -----

pub fn plan(args: PlanArgs) -> Result<ExitCode> {
    if args.shards == Some(0) {
        bail!("--shards 0: a bake has at least one shard");
    }
    if crate::bake_world::is_world(&args.input) {
        crate::bake_world::plan(&args.input, args.shards, args.json, &args.tiles.args())?;
        return Ok(ExitCode::SUCCESS);
    }
    args.tiles.only_for_worlds(&args.input)?;
    let engine = Engine::load(
        procmodel_luau::runtime(),
        &args.input,
        EngineConfig::default(),
    )?;
    let (units, sweep) = engine.with_dom(|d| (scene_units(d), sweep_folder(d).is_some()));
    let count = args.shards.unwrap_or(1);
    let deal = Assignment::new(units.iter().map(|u| &u.unit), count);
    let per_shard = deal.per_shard();
    let shard_of = |key: &str| deal.shard(key).unwrap_or(0);
    if args.json {
        let rows: Vec<_> = units
            .iter()
            .map(|u| {
                let mut row = serde_json::json!({ "key": u.unit.key, "size": u.unit.size });
                if args.shards.is_some() {
                    row["shard"] = shard_of(&u.unit.key).into();
                }
                row
            })
            .collect();
        let mut out = serde_json::json!({
            "input": args.input.display().to_string(),
            "kind": if sweep { "sweep" } else { "scene" },
            "count": units.len(),
            "units": rows,
        });
        if args.shards.is_some() {
            out["shards"] = count.into();
            out["per_shard"] = per_shard.clone().into();
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        crate::bake_world::print_plan(
            units.iter().map(|u| &u.unit),
            &deal,
            args.shards,
            &format!("{} units", units.len()),
            "instances when planned",
        );
    }
    std::mem::forget(engine);
    Ok(ExitCode::SUCCESS)
}

// ----- sweep -----

pub fn sweep(args: SweepArgs) -> Result<ExitCode> {
    crate::one_model::generator_file_exists(&args.generator)?;
    procmodel_engine::SceneFormat::from_path(&args.output)?;
    let axes: Vec<Axis> = args
        .attrs
        .iter()
        .map(|a| Axis::parse(a))
        .collect::<Result<_, _>>()?;
    let size = args.size.unwrap_or(Vec3::splat(12.0));
    if let Some(gap) = args.grid
        && !(gap.is_finite() && gap >= 0.0)
    {
        bail!("--grid: the gap must be a number of studs, 0 or more (got {gap})");
    }
    let mut engine = Engine::new(procmodel_luau::runtime(), EngineConfig::default())?;
    let storage = engine.server_storage();
    let g = engine.load_generator_file(&args.generator, storage)?;
    // The scene holds the modules it required by path beside it (the engine saves them
    // there), where relative requires resolve as they did; `.luaurc` aliases do not.
    for (file, spec) in alias_requires(&engine) {
        eprintln!(
            "warning: {file} requires '{spec}' through a .luaurc alias, which a scene cannot resolve: every variant will fail; require it by a relative path (./, ../ or @self/)"
        );
    }
    // Every swept name and value is resolved against the generator once, before the points
    // are counted: a misspelt attribute is named as such, not as a sweep too large.
    let mut resolved: HashMap<(&str, &str), Variant> = HashMap::new();
    for a in &axes {
        for v in &a.values {
            let text = format!("{}={v}", a.name);
            if let Some((_, value)) = crate::one_model::resolve_attrs(&g, &[text])?.pop() {
                resolved.insert((&a.name, v), value);
            }
        }
    }
    let points = procmodel_bake::sweep::points(&axes)?;
    // Columns of the square grid (`--grid`): the variants fill rows along X, rows along Z.
    let columns = (points.len() as f64).sqrt().ceil().max(1.0) as usize;
    let stem = args
        .generator
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("Variant")
        .to_owned();
    let axes_json = serde_json::to_string(&axes)?;
    let mut marker = Attributes::new();
    marker.insert(SWEEP_ATTRIBUTE.to_owned(), Variant::String(axes_json));
    let workspace = engine.workspace();
    let folder = engine.insert(
        workspace,
        InstanceBuilder::new("Folder")
            .with_name("Sweep")
            .with_property("Attributes", Variant::Attributes(marker)),
    );
    let width = points.len().saturating_sub(1).to_string().len().max(4);
    for (i, point) in points.iter().enumerate() {
        let mut attrs = Attributes::new();
        for (n, v) in point {
            if let Some(value) = resolved.get(&(n.as_str(), v.as_str())) {
                attrs.insert(n.clone(), value.clone());
            }
        }
        let mut builder = InstanceBuilder::new("ProceduralModel")
            .with_name(format!("{stem}_{i:0width$}"))
            .with_property("Generator", Variant::Ref(g.module))
            .with_property("Size", rbx_types::Vector3::new(size.x, size.y, size.z))
            .with_property("Scale", Variant::Float32(1.0))
            .with_property("Attributes", Variant::Attributes(attrs));
        if let Some(gap) = args.grid {
            let (column, row) = ((i % columns) as f32, (i / columns) as f32);
            let at = rbx_types::Vector3::new(column * (size.x + gap), 0.0, row * (size.z + gap));
            let pivot = rbx_types::CFrame::new(at, rbx_types::Matrix3::identity());
            builder = builder.with_property("WorldPivotData", Variant::OptionalCFrame(Some(pivot)));
        }
        let variant = engine.insert(folder, builder);
        // Saved dirty: a plain `regen` of the sweep generates every variant.
        engine.force_generation(variant);
    }
    engine.save(&args.output)?;
    eprintln!(
        "{} variants of {} -> {}",
        points.len(),
        args.generator.display(),
        args.output.display()
    );
    std::mem::forget(engine);
    Ok(ExitCode::SUCCESS)
}

/// The string requires through a `.luaurc` alias (`@lib/X`; `@self/X` and the toolkit's
/// `@procmodel/X` are not) in the files the engine loaded modules from, as (file, spec), in
/// file order: a scene resolves requires over its tree, where aliases mean nothing.
fn alias_requires(engine: &Engine) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in engine.module_files() {
        let Ok(source) = std::fs::read_to_string(&file) else {
            continue;
        };
        for spec in procmodel_luau::requires::string_requires(&source) {
            if procmodel_luau::requires::is_alias(spec) {
                found.push((file.display().to_string(), spec.to_owned()));
            }
        }
    }
    found
}

// ----- bake -----

pub fn bake(args: BakeArgs) -> Result<ExitCode> {
    if let Some(url) = args.merge.clone() {
        if args.input.is_some() {
            bail!("--merge takes the bake's location, not an input: the input is in the bake");
        }
        return merge(&url, args);
    }
    let input = args
        .input
        .clone()
        .ok_or_else(|| anyhow!("bake needs an input scene (or --merge URL)"))?;
    let spec = args
        .shard
        .as_deref()
        .ok_or_else(|| anyhow!("bake needs --shard I/N or --shard auto (or --merge URL)"))?;
    let shard = if spec == "auto" {
        Shard::from_env(|k| std::env::var(k).ok())?
    } else {
        Shard::parse(spec)?
    };
    let url = args
        .out
        .clone()
        .ok_or_else(|| anyhow!("bake needs --out DIR|URL: where the shard writes"))?;
    if args.output.is_some() || args.lock.is_some() || args.summary.is_some() {
        bail!("-o, --lock and --summary are for --merge");
    }
    let store = procmodel_bake::open(&url)?;
    if crate::bake_world::is_world(&input) {
        return crate::bake_world::bake_shard(&input, shard, store, &args.tiles.args());
    }
    args.tiles.only_for_worlds(&input)?;
    bake_shard(&input, shard, store, &args)
}

/// A result cache that stores what the engine puts into it as content-addressed files of the
/// bake, and never has a hit (a shard generates everything it owns).
#[derive(Debug)]
struct Capture {
    store: StoreHandle,
    entries: Mutex<BTreeMap<String, String>>,
    /// Per key, the content hash its entry records.
    hashes: Mutex<BTreeMap<String, Option<String>>>,
    errors: Mutex<Vec<String>>,
}

/// `Arc<dyn Store>` with a Debug, as `ResultCache` wants one.
#[derive(Clone)]
struct StoreHandle(Arc<dyn Store>);

impl std::fmt::Debug for StoreHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.0.describe())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ResultCache for Capture {
    fn get(&self, _key: &[u8; 32]) -> Option<Vec<u8>> {
        None
    }

    fn put(&self, key: &[u8; 32], entry: &[u8]) {
        let file = format!("results/{}", digest_hex(entry));
        match self.store.0.put(&file, entry) {
            Ok(()) => {
                lock(&self.entries).insert(hex(key), file);
                lock(&self.hashes).insert(
                    hex(key),
                    procmodel_engine::cache::recorded_content_hash(entry),
                );
            }
            Err(e) => lock(&self.errors).push(e.to_string()),
        }
    }

    /// Which modules the results of a base key required: kept in the store for the merge,
    /// whose scene has no results to say.
    fn put_record(&self, key: &[u8; 32], record: &[u8]) {
        if let Err(e) = self.store.0.put(&requires_file(key), record) {
            lock(&self.errors).push(e.to_string());
        }
    }
}

/// The store file of a record of the modules the results of a base key required.
fn requires_file(key: &[u8; 32]) -> String {
    format!("requires/{}", hex(key))
}

fn progress(v: serde_json::Value) {
    println!("{v}");
}

/// The last report of each model (looked up only, never iterated into an output).
fn last_reports(reports: Vec<Report>) -> HashMap<Ref, Report> {
    let mut out = HashMap::new();
    for r in reports {
        out.insert(r.model, r);
    }
    out
}

fn input_kind(dom: &WeakDom) -> &'static str {
    if sweep_folder(dom).is_some() {
        "sweep"
    } else {
        "scene"
    }
}

fn extension(path: &Path) -> Result<String> {
    procmodel_engine::SceneFormat::from_path(path)?;
    Ok(path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("rbxl")
        .to_ascii_lowercase())
}

/// The bytes a shard stores as its input, and their extension: a scene file's own, or for a
/// Rojo project the place it builds (binary), so the shards and the merge share one file.
fn input_bytes(input: &Path) -> Result<(Vec<u8>, String)> {
    if crate::project::is_project(input) {
        let dom = procmodel_engine::read_scene(input)?;
        let mut bytes = Vec::new();
        procmodel_dom::encode_binary(&mut bytes, &dom, dom.root().children())
            .with_context(|| format!("{}: cannot encode the place it builds", input.display()))?;
        return Ok((bytes, "rbxl".to_owned()));
    }
    let bytes = std::fs::read(input).with_context(|| format!("cannot read {}", input.display()))?;
    Ok((bytes, extension(input)?))
}

fn bake_shard(
    input: &Path,
    shard: Shard,
    store: Arc<dyn Store>,
    args: &BakeArgs,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let (bytes, ext) = input_bytes(input)?;
    let fingerprint = digest_hex(&bytes);
    let input_file = format!("input/{fingerprint}.{ext}");
    let capture = Arc::new(Capture {
        store: StoreHandle(store.clone()),
        entries: Mutex::new(BTreeMap::new()),
        hashes: Mutex::new(BTreeMap::new()),
        errors: Mutex::new(Vec::new()),
    });
    let mut config = crate::lock::engine_config(&args.limits, args.jobs);
    config.cache = Some(capture.clone() as Arc<dyn ResultCache>);
    let mut engine = Engine::load(procmodel_luau::runtime(), input, config)?;
    drop(bytes);
    let (units, kind) = engine.with_dom(|d| (scene_units(d), input_kind(d)));
    let deal = Assignment::new(units.iter().map(|u| &u.unit), shard.count);
    let (mine, others): (Vec<&SceneUnit>, Vec<&SceneUnit>) = units
        .iter()
        .partition(|u| deal.shard(&u.unit.key) == Some(shard.index));
    // Other shards' models are held as baked (no generator) in this process only, so the
    // step loop leaves them alone; the scene file is never saved from here.
    engine.with_dom_mut(|d| {
        for u in &others {
            if let Some(i) = d.get_by_ref_mut(u.model) {
                i.properties
                    .insert("Generator".into(), Variant::Ref(Ref::none()));
            }
        }
    });
    for u in &mine {
        engine.force_generation(u.model);
    }
    progress(serde_json::json!({
        "event": "start", "shard": shard.to_string(), "input": input.display().to_string(),
        "units": mine.len(), "of": units.len(), "out": store.describe(),
    }));
    engine.on_report(Some(Box::new(|r: &Report| {
        let mut event = serde_json::json!({
            "event": "unit", "model": r.path, "ok": r.is_ok(),
            "ms": r.elapsed.as_secs_f64() * 1000.0, "instances": r.instances,
        });
        // A failure says why where it is seen first: a shard's log.
        if let Some(e) = r.error() {
            event["error"] = e.into();
        }
        progress(event);
    })));
    let reports = last_reports(engine.settle(args.limits.max_frames()));
    // The key each unit's results were stored under: its inputs as applied, with the
    // modules its run required (recorded on its results).
    let keys: HashMap<Ref, String> = mine
        .iter()
        .map(|u| {
            let k = engine.with_dom(|d| provenance::Inputs::of(d, u.model).cache_key(d, u.model));
            (u.model, hex(&k))
        })
        .collect();
    engine.on_report(None);
    let errors = lock(&capture.errors).clone();
    if let Some(e) = errors.first() {
        bail!(
            "shard {shard}: {} result files could not be written (no manifest written; rerun the shard): {e}",
            errors.len()
        );
    }
    // The input goes in too, so the merge needs nothing but the bake's location.
    let (bytes, _) = input_bytes(input)?;
    if digest_hex(&bytes) != fingerprint {
        bail!("{}: the input changed while the shard ran", input.display());
    }
    store.put(&input_file, &bytes)?;
    drop(bytes);
    let entries = lock(&capture.entries).clone();
    let mut records = BTreeMap::new();
    let mut timings = Timings {
        shard: Some(shard),
        ..Timings::default()
    };
    let mut failed = 0;
    for u in &mine {
        let key = keys.get(&u.model).cloned().unwrap_or_default();
        let report = reports.get(&u.model);
        let ok = report.is_some_and(|r| r.is_ok());
        let status = match (ok, entries.contains_key(&key)) {
            (true, true) => UnitStatus::Ok,
            (true, false) => UnitStatus::Unstored,
            (false, _) => UnitStatus::Failed,
        };
        if status == UnitStatus::Failed {
            failed += 1;
        }
        // The stored results' hash, as their entry records it: a model whose results hold
        // nested models that fill in their own defaults when they generate is stored as
        // it was applied, before they did (the merge decodes it and they generate again).
        let content_hash = match (ok, lock(&capture.hashes).get(&key)) {
            (false, _) => None,
            (true, Some(h)) => h.clone(),
            (true, None) => engine.with_dom(|d| crate::lock::stored_hash(d, u.model)),
        };
        if let Some(r) = report {
            timings
                .units
                .insert(u.unit.key.clone(), r.elapsed.as_secs_f64() * 1000.0);
        }
        records.insert(
            u.unit.key.clone(),
            UnitRecord {
                status,
                cache_key: key,
                content_hash,
                instances: report.map_or(0, |r| r.instances as u64),
                error: match report {
                    None => Some("the engine made no report for this model".into()),
                    Some(r) if !r.is_ok() => r.error(),
                    Some(_) => None,
                },
            },
        );
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        input: InputRef {
            kind: kind.into(),
            file: input_file,
            fingerprint,
        },
        shard,
        units: records,
        entries,
    };
    timings.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    procmodel_bake::manifest::finish_shard(store.as_ref(), &manifest, &timings)?;
    progress(serde_json::json!({
        "event": "done", "shard": shard.to_string(), "units": mine.len(), "failed": failed,
        "manifest": shard.manifest_path(), "ms": timings.total_ms,
    }));
    std::mem::forget(engine);
    Ok(ExitCode::SUCCESS)
}

// ----- merge -----

/// The verified entries of a bake, read from the store as the engine asks for them.
#[derive(Debug)]
struct Merged {
    store: StoreHandle,
    entries: BTreeMap<String, String>,
    misses: Mutex<Vec<String>>,
    problems: Mutex<Vec<String>>,
}

impl ResultCache for Merged {
    fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let k = hex(key);
        let Some(file) = self.entries.get(&k) else {
            lock(&self.misses).push(k);
            return None;
        };
        match self.store.0.get(file) {
            Ok(Some(b)) if file.ends_with(&digest_hex(&b)) => Some(b),
            Ok(Some(_)) => {
                lock(&self.problems).push(format!("{file}: its bytes do not match its name"));
                None
            }
            Ok(None) => {
                lock(&self.problems).push(format!("{file}: missing"));
                None
            }
            Err(e) => {
                lock(&self.problems).push(e.to_string());
                None
            }
        }
    }

    fn put(&self, _key: &[u8; 32], _entry: &[u8]) {}

    /// A shard's record of the modules results required (a wrong one is only a miss).
    fn get_record(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        self.store.0.get(&requires_file(key)).ok().flatten()
    }

    fn reject(&self, key: &[u8; 32], reason: &str) {
        lock(&self.problems).push(format!("entry {}: {reason}", hex(key)));
    }
}

fn merge(url: &str, args: BakeArgs) -> Result<ExitCode> {
    let output = args
        .output
        .clone()
        .ok_or_else(|| {
            anyhow!("--merge needs -o place.rbxl (a scene) or -o DIR (a world's tiles): where the merge goes")
        })?;
    let outputs: Vec<(&str, &Path)> = [
        ("-o", Some(output.as_path())),
        ("--lock", args.lock.as_deref()),
        ("--summary", args.summary.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.map(|p| (flag, p)))
    .collect();
    crate::output::distinct_outputs(&outputs)?;
    if let Some(dir) = procmodel_bake::store::local_root(url) {
        for (flag, p) in &outputs {
            if crate::output::inside(p, Path::new(dir)) {
                bail!(
                    "{flag} {}: inside the bake at {url}, which the merge reads; write the merge outside it",
                    p.display()
                );
            }
        }
    }
    let started = std::time::Instant::now();
    let store = procmodel_bake::open(url)?;
    let mut manifests = Vec::new();
    for name in store.list("manifests/")? {
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = store
            .get(&name)?
            .ok_or_else(|| anyhow!("{name}: listed but gone"))?;
        manifests.push((name.clone(), Manifest::parse(&bytes, &name)?));
    }
    let Some((_, first)) = manifests.first() else {
        bail!(
            "{url}: no shard manifests (no shard has finished; run `procmodel bake INPUT --shard I/N --out {url}`)"
        );
    };
    if first.input.kind == "world" {
        if args.lock.is_some() || args.summary.is_some() {
            bail!(
                "--lock and --summary are for scene bakes: a world's index.json lists every file's hash"
            );
        }
        return crate::bake_world::merge(url, &store, &manifests, &output);
    }
    procmodel_engine::SceneFormat::from_path(&output)?;
    let input = first.input.clone();
    let bytes = store.get(&input.file)?.ok_or_else(|| {
        anyhow!(
            "{url}: the input {} named by the manifests is missing",
            input.file
        )
    })?;
    if digest_hex(&bytes) != input.fingerprint {
        bail!(
            "{url}/{}: the input's bytes do not match its fingerprint",
            input.file
        );
    }
    let mut entries = BTreeMap::new();
    for (_, m) in &manifests {
        for (k, f) in &m.entries {
            entries.insert(k.clone(), f.clone());
        }
    }
    let ext = input.file.rsplit('.').next().unwrap_or("rbxl");
    let temp = TempDir::new()?;
    let local_input = temp.0.join(format!("input.{ext}"));
    std::fs::write(&local_input, &bytes)
        .with_context(|| format!("cannot write {}", local_input.display()))?;
    drop(bytes);
    let merged = Arc::new(Merged {
        store: StoreHandle(store.clone()),
        entries,
        misses: Mutex::new(Vec::new()),
        problems: Mutex::new(Vec::new()),
    });
    let mut config = crate::lock::engine_config(&args.limits, args.jobs);
    config.cache = Some(merged.clone() as Arc<dyn ResultCache>);
    let mut engine = Engine::load(procmodel_luau::runtime(), &local_input, config)?;
    let units = engine.with_dom(scene_units);
    let expected: Vec<Unit> = units.iter().map(|u| u.unit.clone()).collect();
    let cov = procmodel_bake::manifest::coverage(&expected, &manifests);
    if let Some(msg) = cov.incomplete(url, expected.len()) {
        bail!("{msg}");
    }
    // Verify every stored result before anything uses it: its name is its blake3, it
    // decodes, its content hash is the one it records and the one its manifest names.
    let mut verified_bytes = 0u64;
    let mut recorded: BTreeMap<&str, Option<String>> = BTreeMap::new();
    for (key, file) in &merged.entries {
        if recorded.contains_key(file.as_str()) {
            continue;
        }
        let b = store.get(file)?.ok_or_else(|| {
            anyhow!(
                "{url}/{file}: result file missing (entry {key}); rerun the shard that lists it"
            )
        })?;
        if !file.ends_with(&digest_hex(&b)) {
            bail!(
                "{url}/{file}: corrupt (its blake3 is not its name); rerun the shard that lists it"
            );
        }
        let decoded = procmodel_engine::cache::decode(&b)
            .map_err(|e| anyhow!("{url}/{file}: corrupt result entry: {e}"))?;
        recorded.insert(
            file,
            provenance::string_attribute(&decoded.dom, decoded.folder, CONTENT_HASH_ATTRIBUTE),
        );
        verified_bytes += b.len() as u64;
    }
    for (name, m) in &manifests {
        for (k, u) in m.units.iter().filter(|(_, u)| u.status == UnitStatus::Ok) {
            let got = merged
                .entries
                .get(&u.cache_key)
                .and_then(|f| recorded.get(f.as_str()))
                .cloned()
                .flatten();
            if got != u.content_hash {
                bail!(
                    "{url}/{name}: unit {k}: the stored results' content hash {got:?} is not the manifest's {:?}",
                    u.content_hash
                );
            }
        }
    }
    let reports = last_reports(crate::lock::regenerate_all(&mut engine, &args.limits));
    let problems = lock(&merged.problems).clone();
    if let Some(p) = problems.first() {
        bail!(
            "{url}: {} stored results could not be used, nothing written: {p}",
            problems.len()
        );
    }
    // Units a shard could not store, or that failed, were regenerated here (deterministic).
    let mut regenerated = Vec::new();
    let mut failed = Vec::new();
    let status: BTreeMap<&str, UnitStatus> = manifests
        .iter()
        .flat_map(|(_, m)| m.units.iter().map(|(k, u)| (k.as_str(), u.status)))
        .collect();
    for u in &units {
        match status.get(u.unit.key.as_str()) {
            Some(UnitStatus::Ok) => {}
            _ => regenerated.push(u.unit.key.clone()),
        }
        if let Some(e) = reports.get(&u.model).and_then(|r| r.error()) {
            eprintln!("error: {}: {e}", u.unit.key);
            failed.push(u.unit.key.clone());
        }
    }
    engine.save(&output)?;
    let lock_path = args
        .lock
        .clone()
        .unwrap_or_else(|| output.with_extension("lock"));
    let models = engine.with_dom(|dom| -> Result<Vec<procmodel_lock::ModelLock>> {
        let by_path = crate::lock::models_by_path(dom, &output.display().to_string());
        Ok(match by_path {
            Ok(map) => map
                .values()
                .filter(|&&m| reports.get(&m).is_some_and(|r| r.is_ok()))
                .map(|&m| procmodel_lock::model_lock(dom, m, true))
                .collect(),
            Err(e) => {
                eprintln!("note: no lockfile: {e:#}");
                Vec::new()
            }
        })
    })?;
    let mut wrote_lock = false;
    if !models.is_empty() {
        let base = crate::lock::base_of(&lock_path);
        let source = procmodel_lock::Source {
            kind: procmodel_lock::SourceKind::Scene,
            path: crate::lock::relative(&output, &base),
        };
        let lockfile = procmodel_lock::Lockfile::new(source, Vec::new(), models);
        let text = lockfile.to_toml().map_err(|e| anyhow!(e))?;
        crate::output::write_atomic(&lock_path, text.as_bytes())?;
        wrote_lock = true;
    }
    let summary_path = if input.kind == "sweep" {
        let path = args
            .summary
            .clone()
            .unwrap_or_else(|| output.with_extension("summary.json"));
        let summary = engine.with_dom(|d| sweep_summary(d, &units, &reports));
        let mut text = serde_json::to_vec_pretty(&summary)?;
        text.push(b'\n');
        crate::output::write_atomic(&path, &text)?;
        Some(path)
    } else {
        None
    };
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "merged": output.display().to_string(),
            "units": units.len(),
            "manifests": manifests.len(),
            "shards": first.shard.count,
            "missing_shards": cov.missing_shards.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "duplicates": cov.duplicates.iter().map(|(k, m)| serde_json::json!({"unit": k, "manifests": m})).collect::<Vec<_>>(),
            "regenerated": regenerated,
            "failed": failed,
            "cache_misses": lock(&merged.misses).len(),
            "verified_bytes": verified_bytes,
            "lockfile": wrote_lock.then(|| lock_path.display().to_string()),
            "summary": summary_path.map(|p| p.display().to_string()),
            "seconds": secs,
        }))?
    );
    std::mem::forget(engine);
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Per variant of a sweep: attributes, instance count, bounding box, content hash, failure;
/// and the distribution of each over the sweep.
fn sweep_summary(
    dom: &WeakDom,
    units: &[SceneUnit],
    reports: &HashMap<Ref, Report>,
) -> serde_json::Value {
    let axes: serde_json::Value = sweep_folder(dom)
        .and_then(|f| provenance::string_attribute(dom, f, SWEEP_ATTRIBUTE))
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut rows = Vec::new();
    let (mut counts, mut sx, mut sy, mut sz) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut hashes: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = 0;
    for u in units {
        let r = reports.get(&u.model);
        let ok = r.is_some_and(|r| r.is_ok());
        let attrs: BTreeMap<String, serde_json::Value> = match dom
            .get_by_ref(u.model)
            .and_then(|i| i.properties.get(&procmodel_dom::keys::KEYS.attributes))
        {
            Some(Variant::Attributes(a)) => a
                .iter()
                .map(|(k, v)| (k.clone(), crate::attrs::to_json(v)))
                .collect(),
            _ => BTreeMap::new(),
        };
        let mut row = serde_json::json!({ "unit": u.unit.key, "attributes": attrs, "ok": ok });
        if ok {
            let folder = provenance::results(dom, u.model);
            let instances = folder.map_or(0, |f| descendants(dom, f));
            counts.push(instances as f64);
            row["instances"] = instances.into();
            if let Some(h) = crate::lock::stored_hash(dom, u.model) {
                *hashes.entry(h.clone()).or_default() += 1;
                row["content_hash"] = h.into();
            }
            let bbox = folder.and_then(|f| procmodel_dom::bounding_box(dom, f));
            if let Some((cf, size)) = bbox {
                sx.push(f64::from(size.x));
                sy.push(f64::from(size.y));
                sz.push(f64::from(size.z));
                let p = cf.translation;
                row["bounding_box"] = serde_json::json!({
                    "center": [p.x, p.y, p.z], "size": [size.x, size.y, size.z],
                });
            }
        } else {
            failures += 1;
            row["error"] = r
                .and_then(|r| r.error())
                .unwrap_or_else(|| "not generated".into())
                .into();
        }
        rows.push(row);
    }
    let dist = |v: &[f64]| serde_json::to_value(Distribution::of(v)).unwrap_or_default();
    serde_json::json!({
        "axes": axes,
        "variants": rows.len(),
        "failures": failures,
        "distinct_content_hashes": hashes.len(),
        "distribution": {
            "instances": dist(&counts),
            "size_x": dist(&sx), "size_y": dist(&sy), "size_z": dist(&sz),
            "failure_rate": if rows.is_empty() { 0.0 } else { failures as f64 / rows.len() as f64 },
        },
        "per_variant": rows,
    })
}

/// A temporary directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "procmodel-merge-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).with_context(|| format!("cannot create {}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
