//! `procmodel run`: run a plain Luau script in the generator environment with a DataModel it
//! may modify (runtime generation, as in seed 004), optionally saving the place.

use crate::output;
use anyhow::{Result, anyhow};
use procmodel_luau::{Host, HostConfig};
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
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = args
        .save
        .as_deref()
        .map(output::Format::from_path)
        .transpose()?;
    let config = HostConfig {
        timeout: Duration::from_secs_f64(args.timeout.max(0.001)),
        ..HostConfig::default()
    };
    let mut host = Host::new(config)?;
    host.run_script_file(&args.script).map_err(|e| match e {
        procmodel_luau::HostError::Script { message, traceback } => anyhow!(
            "{}: {message}{}",
            args.script.display(),
            traceback.map(|t| format!("\n{t}")).unwrap_or_default()
        ),
        other => anyhow!(other),
    })?;
    if let (Some(path), Some(format)) = (&args.save, format) {
        host.with_dom_ref(|dom| {
            let roots = dom.root().children().to_vec();
            output::write(dom, &roots, format, path)
        })?;
        eprintln!("saved {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
