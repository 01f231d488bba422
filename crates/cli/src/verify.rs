//! `procmodel verify`: regenerate everything a lockfile names from scratch (no cache) and
//! report per model whether inputs and results match; what differs when they do not.
//! Non-zero exit on any mismatch; a model is reported as matching only after its inputs
//! and its regenerated results were compared.

use crate::lock::{
    base_of, engine_config, generator_files, loaded_files, models_by_path, regenerate_all,
    relative, stored_hash,
};
use crate::one_model::{Attrs, Placement, Spec, one_model_scene};
use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use procmodel_lock::{Finding, Lockfile, SourceKind};
use rbx_types::Variant;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The lockfile written by `procmodel lock`.
    pub lockfile: PathBuf,
    /// Worker VMs regenerating at once (results are the same for any value).
    #[arg(long, short = 'j', default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::jobs)]
    pub jobs: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let name = args.lockfile.display().to_string();
    let text = std::fs::read_to_string(&args.lockfile)
        .with_context(|| format!("cannot read the lockfile {name}"))?;
    let lock = Lockfile::parse(&text, &name)?;
    let base = base_of(&args.lockfile);
    let source = base.join(&lock.source.path);
    // A file, or a folder: a Rojo project's or a module folder generator's.
    if !source.exists() {
        bail!(
            "{name}: source: the {} {} is missing",
            match lock.source.kind {
                SourceKind::Scene => "scene",
                SourceKind::Generator => "generator",
            },
            source.display()
        );
    }
    // Files the results depend on: the generator and the files its run required, as locked.
    let mut general: Vec<String> = Vec::new();
    // Locked paths as `lock` writes them now (lockfiles of earlier versions may hold
    // absolute ones, or `./`): relative to the lockfile's folder.
    let locked: Vec<String> = lock
        .files
        .iter()
        .map(|f| relative(&base.join(&f.path), &base))
        .collect();
    let is_locked = |path: &str| {
        lock.files
            .iter()
            .zip(&locked)
            .any(|(f, l)| f.path == path || l == path)
    };
    // The Luau files beside the generator now.
    let beside = match lock.source.kind {
        SourceKind::Generator => generator_files(&source, &base)?,
        SourceKind::Scene => Vec::new(),
    };
    for (f, path) in lock.files.iter().zip(&locked) {
        match beside.iter().find(|n| n.path == f.path || &n.path == path) {
            Some(n) if n.hash == f.hash => {}
            Some(_) => general.push(format!("file {} changed", f.path)),
            None => general.push(format!("file {} is missing", f.path)),
        }
    }
    let config = engine_config(&args.limits, args.jobs);
    let (mut engine, stored) = match lock.source.kind {
        SourceKind::Scene => {
            let stored = procmodel_engine::read_scene(&source)?;
            (
                procmodel_engine::Engine::load(procmodel_luau::runtime(), &source, config)?,
                Some(stored),
            )
        }
        SourceKind::Generator => {
            let [m] = lock.models.as_slice() else {
                bail!(
                    "{name}: a generator's lockfile holds one model, this one {}",
                    lock.models.len()
                );
            };
            let mut values = Vec::new();
            for i in &m.inputs {
                let Some(attr) = i.name.strip_prefix("attr.") else {
                    continue;
                };
                let json = i.value.as_deref().ok_or_else(|| {
                    anyhow!("{name}: model {}: input {}: no value", m.path, i.name)
                })?;
                let v: Variant = serde_json::from_str(json).map_err(|e| {
                    anyhow!("{name}: model {}: input {}: bad value: {e}", m.path, i.name)
                })?;
                values.push((attr.to_owned(), v));
            }
            let size = Vec3::new(m.size[0] as f32, m.size[1] as f32, m.size[2] as f32);
            let scene = one_model_scene(
                config,
                Spec {
                    generator: &source,
                    size,
                    scale: m.scale as f32,
                    attributes: Attrs::Values(values),
                    placement: Placement::ServerStorage,
                    source: None,
                },
            )?;
            (scene.engine, None)
        }
    };
    let reports = regenerate_all(&mut engine, &args.limits);
    // A file the run loaded now that the lockfile does not list: the generator requires
    // something it did not when it was locked.
    for n in loaded_files(beside, &base, &source, &engine.module_files()) {
        if !is_locked(&n.path) {
            general.push(format!(
                "file {} is required now and not in the lockfile",
                n.path
            ));
        }
    }
    let failed: BTreeMap<String, String> = reports
        .iter()
        .filter(|r| !r.is_ok())
        .map(|r| (r.path.clone(), r.error().unwrap_or_default()))
        .collect();
    // A Rojo project's modules are named with their files too.
    let files: BTreeMap<String, String> = engine.script_files().into_iter().collect();
    let with_file = |module: &mut String| {
        if let Some(file) = files.get(module.as_str()) {
            *module = format!("{module} ({file})");
        }
    };
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    engine.with_dom(|dom| -> Result<()> {
        let now = models_by_path(dom, &name)?;
        let before = match &stored {
            Some(s) => models_by_path(s, &name)?,
            None => BTreeMap::new(),
        };
        for locked in &lock.models {
            let mut findings: Vec<Finding> = Vec::new();
            let Some(&m) = now.get(&locked.path) else {
                rows.push((locked.path.clone(), vec![Finding::Missing.to_string()]));
                continue;
            };
            if let Some(e) = failed.get(&locked.path) {
                findings.push(Finding::Failed(e.lines().next().unwrap_or("").to_owned()));
            }
            let current = procmodel_lock::model_lock(dom, m, false);
            for mut f in procmodel_lock::compare(locked, &current) {
                match &mut f {
                    Finding::Input {
                        of: Some(module), ..
                    }
                    | Finding::Module { name: module, .. } => with_file(module),
                    _ => {}
                }
                findings.push(f);
            }
            let saved = stored.as_ref().zip(before.get(&locked.path).copied());
            // The first difference between the results saved in the scene and the fresh ones.
            let first_difference = || {
                let (s, sm) = saved?;
                let sf = procmodel_engine::provenance::results(s, sm)?;
                let nf = procmodel_engine::provenance::results(dom, m)?;
                procmodel_dom::hash::first_difference(s, sf, dom, nf)
                    .map(|d| format!("{}.GeneratedFolder: {d}", locked.path))
            };
            if current.content_hash != locked.content_hash {
                let saved_is_locked = saved
                    .and_then(|(s, sm)| stored_hash(s, sm))
                    .is_some_and(|h| h == locked.content_hash);
                findings.push(Finding::Output {
                    locked: locked.content_hash.clone(),
                    now: current.content_hash.clone(),
                    difference: if saved_is_locked {
                        first_difference()
                    } else {
                        None
                    },
                });
            } else {
                if current.instances != locked.instances {
                    findings.push(Finding::Instances {
                        locked: locked.instances,
                        now: current.instances,
                    });
                }
                if locked.stored {
                    let saved_hash = saved.and_then(|(s, sm)| stored_hash(s, sm));
                    if saved_hash.as_deref() != Some(locked.content_hash.as_str()) {
                        findings.push(Finding::Stored {
                            difference: first_difference()
                                .unwrap_or_else(|| "the scene holds no results for it".to_owned()),
                        });
                    }
                }
            }
            rows.push((
                locked.path.clone(),
                findings.iter().map(ToString::to_string).collect(),
            ));
        }
        for path in now.keys() {
            if !lock.models.iter().any(|l| &l.path == path) {
                rows.push((
                    path.clone(),
                    vec!["the model is not in the lockfile".to_owned()],
                ));
            }
        }
        Ok(())
    })?;
    let bad = rows.iter().filter(|(_, f)| !f.is_empty()).count();
    let ok = general.is_empty() && bad == 0;
    if args.json {
        let models: Vec<_> = rows
            .iter()
            .map(
                |(p, f)| serde_json::json!({ "model": p, "match": f.is_empty(), "differences": f }),
            )
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "lockfile": name, "match": ok, "models": models, "files": general,
            }))?
        );
    } else {
        for g in &general {
            println!("MISMATCH  {g}");
        }
        for (path, findings) in &rows {
            if findings.is_empty() {
                println!("match     {path}");
            } else {
                for f in findings {
                    println!("MISMATCH  {path}: {f}");
                }
            }
        }
        if ok {
            println!("all {} models match", rows.len());
        } else if bad == 0 {
            // The results are the locked ones; the inputs on disk are not.
            println!(
                "all {} models match, but the files the generator requires are not the locked ones: lock again if the change is meant",
                rows.len()
            );
        } else {
            println!(
                "{bad} of {} models do not match{}",
                rows.len(),
                if general.is_empty() {
                    ""
                } else {
                    "; the files the generator requires differ too"
                }
            );
        }
    }
    std::mem::forget(engine);
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
