//! `procmodel run`: run a plain Luau script in the generator environment with a DataModel it
//! may modify (runtime generation, as in seed 004), optionally saving the place.

use crate::output;
use anyhow::{Result, anyhow};
use procmodel_engine::{Engine, EngineConfig, Report};
use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

#[derive(clap::Args)]
pub struct Args {
    /// The script (.luau).
    pub script: PathBuf,
    /// Run the script against this place (.rbxl, .rbxlx, .rbxm, .rbxmx) instead of an empty
    /// DataModel, as a Studio command bar or plugin works on an open place. A model file's
    /// instances are put into Workspace, and `--save` to a model file saves Workspace's
    /// contents.
    #[arg(long)]
    pub place: Option<PathBuf>,
    /// Save the resulting DataModel (.rbxl, .rbxlx; .rbxm/.rbxmx/.glb/.gltf/.obj also work).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Save each model's GeneratedFolder as DIR/<instance path>.rbxm, never over a file the
    /// place was loaded from.
    #[arg(long, value_name = "DIR")]
    pub write_generated: Option<PathBuf>,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    /// Print the generated models (status, error, content hash) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cache: crate::lock::CacheArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = args
        .save
        .as_deref()
        .map(output::Format::from_path)
        .transpose()?;
    if let Some(save) = &args.save {
        output::destination(save)?;
    }
    let mut config = EngineConfig::default();
    args.limits.apply(&mut config.host);
    config.host.echo_output = true;
    // ProceduralModels the script creates are served from and stored in the result cache as
    // `generate` and `regen` do; a place saved here is recorded with its intact results, so
    // `regen --force` of it keeps them unread.
    // Keys as `regen` makes them for the saved place (its modules are in the scene).
    let cache = args.cache.open(None);
    config.cache = cache.clone().map(|c| c as _);
    // Scripts are trusted local tools; ProceduralModels they create regenerate while they wait.
    // A model file's instances are put into Workspace, as Studio inserts a model.
    let (mut engine, model_in_workspace) = match &args.place {
        Some(place) => Engine::load_into_place(procmodel_luau::runtime(), place, config)?,
        None => (Engine::new(procmodel_luau::runtime(), config)?, false),
    };
    let workspace = engine.workspace();
    // The last outcome of each model, in the order models first reported.
    let outcomes: Rc<RefCell<Vec<Report>>> = Rc::default();
    let sink = outcomes.clone();
    engine.on_report(Some(Box::new(move |r: &Report| {
        let mut all = sink.borrow_mut();
        match all.iter_mut().find(|o| o.model == r.model) {
            Some(o) => *o = r.clone(),
            None => all.push(r.clone()),
        }
    })));
    engine
        .run_script(&args.script)
        .map_err(|e| match e.script_error() {
            Some((message, traceback)) => anyhow!(
                "{}: {message}{}",
                args.script.display(),
                traceback.map(|t| format!("\n{t}")).unwrap_or_default()
            ),
            None => anyhow!(e),
        })?;
    // Models still dirty when the script ends are generated before saving.
    engine.settle(args.limits.max_frames());
    engine.on_report(None);
    let failed: Vec<Report> = outcomes
        .borrow()
        .iter()
        .filter(|r| !r.is_ok())
        .cloned()
        .collect();
    for r in &failed {
        let first = r
            .error()
            .and_then(|e| e.lines().next().map(str::to_owned))
            .unwrap_or_else(|| "failed".to_owned());
        eprintln!("model {} failed: {first}", r.path);
    }
    if let Some(dir) = &args.write_generated {
        let sources = match &args.place {
            Some(place) => crate::project::source_files(place)?,
            None => Default::default(),
        };
        let models = engine.models();
        let written =
            engine.with_dom(|dom| crate::project::write_generated(dom, &models, dir, &sources))?;
        eprintln!(
            "wrote {} result files under {}",
            written.len(),
            dir.display()
        );
    }
    // Which results are intact, for the saved place's record (taken now: the engine goes).
    let record = match format {
        Some(f) if f.is_roblox() => engine.saved_record(),
        _ => None,
    };
    crate::lock::report_cache(&cache);
    // The scene outlives the VM: its memory is free for the save.
    let dom = engine.into_dom();
    if args.json {
        let rows: Vec<_> = outcomes
            .borrow()
            .iter()
            .map(|r| {
                serde_json::json!({
                    "model": r.path, "ok": r.is_ok(), "error": r.error(),
                    "failure": r.failure().map(|f| f.kind()),
                    "content_hash": crate::lock::stored_hash(&dom, r.model).filter(|_| r.is_ok()),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "models": rows }))?
        );
    }
    crate::release_free_memory();
    if let (Some(path), Some(format)) = (&args.save, format) {
        // A model file edited in place is saved back as a model of Workspace's contents (not
        // the services around them); anything else saves the whole DataModel.
        let roots = if model_in_workspace
            && matches!(format, output::Format::Rbxm | output::Format::Rbxmx)
        {
            dom.get_by_ref(workspace).map_or_else(Vec::new, |w| {
                w.children()
                    .iter()
                    .copied()
                    .filter(|&r| dom.get_by_ref(r).is_some_and(|i| i.class != "Camera"))
                    .collect()
            })
        } else {
            dom.root().children().to_vec()
        };
        // glTF and OBJ carry the Terrain's mesh, as `procmodel export` of the place does.
        let written = crate::export::write_with_terrain(&dom, &roots, format, path, &args.script)?;
        if let Some(record) = record {
            record.store(*written.hash.as_bytes());
        }
        eprintln!("saved {}", path.display());
    }
    // The process ends now: freeing a scene of many instances one by one would only cost time.
    std::mem::forget(dom);
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "{} of {} generated models failed",
            failed.len(),
            outcomes.borrow().len()
        );
        Ok(ExitCode::FAILURE)
    }
}
