//! `procmodel regen`: regenerate a scene's dirty (or all) ProceduralModels and save it.

use crate::output::Format;
use anyhow::{Result, bail};
use procmodel_engine::{Engine, EngineConfig};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The scene (.rbxl, .rbxlx, .rbxm, .rbxmx).
    pub scene: PathBuf,
    /// Where to save (default: overwrite the scene, atomically).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
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
    let out = args.output.clone().unwrap_or_else(|| args.scene.clone());
    if !matches!(
        Format::from_path(&out)?,
        Format::Rbxl | Format::Rbxlx | Format::Rbxm | Format::Rbxmx
    ) {
        bail!(
            "{}: a scene is saved as .rbxl, .rbxlx, .rbxm or .rbxmx",
            out.display()
        );
    }
    let mut config = EngineConfig::default();
    args.limits.apply(&mut config.host);
    config.jobs = args.jobs.max(1);
    let cache = args.cache.open(None);
    config.cache = cache.clone().map(|c| c as _);
    let mut engine = Engine::load(&args.scene, config)?;
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
    engine.save(&out)?;
    let failed = reports.iter().filter(|r| !r.ok).count();
    if args.json {
        let rows: Vec<_> = reports
            .iter()
            .map(|r| {
                serde_json::json!({
                    "model": r.path, "ok": r.ok, "ms": r.elapsed.as_secs_f64() * 1000.0,
                    "instances": r.instances, "error": r.error,
                    "content_hash": engine.with_dom(|d| crate::lock::stored_hash(d, r.model)).filter(|_| r.ok),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "models": rows, "failed": failed, "cache": crate::lock::cache_json(&cache),
            }))?
        );
    } else {
        let w = reports
            .iter()
            .map(|r| r.path.len())
            .max()
            .unwrap_or(5)
            .max(5);
        println!(
            "{:<w$}  {:<6}  {:>9}  {:>9}  error",
            "model", "status", "ms", "instances"
        );
        for r in &reports {
            let first_line = r
                .error
                .as_deref()
                .and_then(|e| e.lines().next())
                .unwrap_or("");
            println!(
                "{:<w$}  {:<6}  {:>9.1}  {:>9}  {}",
                r.path,
                if r.ok { "ok" } else { "FAILED" },
                r.elapsed.as_secs_f64() * 1000.0,
                r.instances,
                first_line
            );
        }
        eprintln!(
            "{} regenerated, {failed} failed -> {}",
            reports.len(),
            out.display()
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
