//! `procmodel run`: run a plain Luau script in the generator environment with a DataModel it
//! may modify (runtime generation, as in seed 004), optionally saving the place.

use crate::output;
use anyhow::{Result, anyhow};
use procmodel_engine::{Engine, EngineConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// The script (.luau).
    pub script: PathBuf,
    /// Save the resulting DataModel (.rbxl, .rbxlx; .rbxm/.rbxmx/.glb/.gltf/.obj also work).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Seconds a script may run without yielding.
    #[arg(long, default_value = "10", allow_hyphen_values = true, value_parser = crate::flags::seconds)]
    pub timeout: Duration,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = args
        .save
        .as_deref()
        .map(output::Format::from_path)
        .transpose()?;
    let mut config = EngineConfig::default();
    config.host.timeout = args.timeout;
    config.host.echo_output = true;
    // Scripts are trusted local tools; ProceduralModels they create regenerate while they wait.
    let mut engine = Engine::new(config)?;
    engine.run_script(&args.script).map_err(|e| match e {
        procmodel_engine::EngineError::Host(procmodel_luau::HostError::Script {
            message,
            traceback,
        }) => anyhow!(
            "{}: {message}{}",
            args.script.display(),
            traceback.map(|t| format!("\n{t}")).unwrap_or_default()
        ),
        other => anyhow!(other),
    })?;
    // Models still dirty when the script ends are generated before saving.
    engine.settle(64);
    // The scene outlives the VM: its memory is free for the save.
    let dom = engine.into_dom();
    crate::release_free_memory();
    if let (Some(path), Some(format)) = (&args.save, format) {
        let roots = dom.root().children().to_vec();
        output::write(&dom, &roots, format, path)?;
        eprintln!("saved {}", path.display());
    }
    // The process ends now: freeing a scene of many instances one by one would only cost time.
    std::mem::forget(dom);
    Ok(ExitCode::SUCCESS)
}
