//! `procmodel regen`: regenerate a scene's dirty (or all) ProceduralModels and save it, or
//! write each model's results under a folder (`--write-generated`). A Rojo project is
//! sources: it is never saved over.

use crate::output::Format;
use crate::project;
use anyhow::{Result, bail};
use procmodel_engine::{Engine, EngineConfig};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The scene (.rbxl, .rbxlx, .rbxm, .rbxmx, a Rojo *.project.json(c) or a folder holding
    /// default.project.json(c)).
    pub scene: PathBuf,
    /// Where to save (default: overwrite the scene, atomically; with --write-generated, or
    /// for a Rojo project, the scene is saved only when this is given).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Save each model's GeneratedFolder as DIR/<instance path>.rbxm (e.g.
    /// DIR/Workspace/City.rbxm), never touching the scene's own files.
    #[arg(long, value_name = "DIR")]
    pub write_generated: Option<PathBuf>,
    /// Regenerate every model, not only the dirty ones.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Worker VMs generating independent models at once (the saved scene is the same bytes
    /// for any value).
    #[arg(long, short = 'j', default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::jobs)]
    pub jobs: usize,
    #[command(flatten)]
    pub cache: crate::lock::CacheArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let is_project = project::is_project(&args.scene);
    let out = match (&args.output, &args.write_generated) {
        (Some(o), _) => Some(o.clone()),
        (None, Some(_)) => None,
        (None, None) if is_project => bail!(
            "{}: a Rojo project's files are sources and are never overwritten; save the scene with -o FILE.rbxl or write the results with --write-generated DIR",
            args.scene.display()
        ),
        (None, None) => Some(args.scene.clone()),
    };
    if let Some(out) = &out
        && !Format::from_path(out).is_ok_and(Format::is_roblox)
    {
        bail!(
            "{}: a scene is saved as .rbxl, .rbxlx, .rbxm or .rbxmx",
            out.display()
        );
    }
    if let Some(out) = &out {
        crate::output::destination(out)?;
    }
    // The files the scene comes from, when something must never be written over them.
    let sources = if is_project || args.write_generated.is_some() {
        project::source_files(&args.scene)?
    } else {
        Default::default()
    };
    if is_project
        && let Some(out) = &out
        && sources.contains(&out.canonicalize().unwrap_or_else(|_| out.clone()))
    {
        bail!(
            "{}: a Rojo project's files are sources and are never overwritten; save the scene elsewhere",
            out.display()
        );
    }
    let mut config = EngineConfig::default();
    args.limits.apply(&mut config.host);
    config.jobs = args.jobs.max(1);
    let cache = args.cache.open(None);
    config.cache = cache.clone().map(|c| c as _);
    let mut engine = Engine::load(procmodel_luau::runtime(), &args.scene, config)?;
    if args.force {
        for m in engine.models() {
            engine.force_generation(m);
        }
    }
    // A progress bar on stderr when it is a terminal (indicatif hides it otherwise).
    let bar = indicatif::ProgressBar::new_spinner().with_message("regenerating");
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} models regenerated {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let progress = bar.clone();
    engine.on_report(Some(Box::new(move |r| {
        progress.inc(1);
        progress.set_message(r.path.clone());
    })));
    let reports = engine.settle(args.limits.max_frames());
    engine.on_report(None);
    bar.finish_and_clear();
    crate::lock::report_cache(&cache);
    for r in &reports {
        if let Some(w) = r.warning() {
            eprintln!("warning: {}: {w}", r.path);
        }
    }
    if let Some(out) = &out {
        engine.save(out)?;
    }
    let written = match &args.write_generated {
        Some(dir) => {
            let models = engine.models();
            engine.with_dom(|dom| project::write_generated(dom, &models, dir, &sources))?
        }
        None => Vec::new(),
    };
    let failed = reports.iter().filter(|r| !r.is_ok()).count();
    if args.json {
        let rows: Vec<_> = reports
            .iter()
            .map(|r| {
                serde_json::json!({
                    "model": r.path, "ok": r.is_ok(), "ms": r.elapsed.as_secs_f64() * 1000.0,
                    "instances": r.instances, "cached": r.cached, "error": r.error(),
                    "failure": r.failure().map(|f| f.kind()),
                    "warning": r.warning(),
                    "content_hash": engine.with_dom(|d| crate::lock::stored_hash(d, r.model)).filter(|_| r.is_ok()),
                })
            })
            .collect();
        let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "models": rows, "failed": failed, "cache": crate::lock::cache_json(&cache),
                "written": written,
            }))?
        );
    } else {
        let w = reports
            .iter()
            .map(|r| r.path.len())
            .max()
            .unwrap_or(5)
            .max(5);
        if !reports.is_empty() {
            println!(
                "{:<w$}  {:<6}  {:>9}  {:>9}  error",
                "model", "status", "ms", "instances"
            );
        }
        for r in &reports {
            let first_line = r
                .error()
                .and_then(|e| e.lines().next().map(str::to_owned))
                .unwrap_or_default();
            println!(
                "{:<w$}  {:<6}  {:>9.1}  {:>9}  {}",
                r.path,
                match (r.is_ok(), r.cached) {
                    (true, false) => "ok",
                    (true, true) => "cached",
                    (false, _) => "FAILED",
                },
                r.elapsed.as_secs_f64() * 1000.0,
                r.instances,
                first_line
            );
        }
        let mut to: Vec<String> = out.iter().map(|o| o.display().to_string()).collect();
        if let Some(dir) = &args.write_generated {
            to.push(format!(
                "{} result files under {}",
                written.len(),
                dir.display()
            ));
        }
        let cached = reports.iter().filter(|r| r.cached).count();
        let from_cache = match cached {
            0 => String::new(),
            n => format!(" ({n} from the result cache)"),
        };
        eprintln!(
            "{} regenerated{from_cache}, {failed} failed -> {}",
            reports.len(),
            to.join(", ")
        );
    }
    // The process ends now: freeing a scene of many instances one by one would only cost time.
    std::mem::forget(engine);
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
