//! `procmodel pack`: a generator as a package for Studio and the Creator Store — a
//! ProceduralModel holding its generator ModuleScript, its attributes, Size and its current
//! results in a GeneratedFolder (Dirty false), so it stays procedural once inserted.
//!
//! Must never write a package whose results the engine did not generate from the packed
//! module itself (the module runs as it will from the package: no file behind it), nor
//! write one that failed or is still dirty.

use crate::one_model::{Attrs, OneModel, Placement, Spec, one_model_scene};
use crate::output::{self, Format};
use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use procmodel_engine::EngineConfig;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The generator module (.luau, .lua). It is packed as one ModuleScript: it may require
    /// ModuleScripts through the instance tree, not other files.
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
    /// The package to write (.rbxm or .rbxmx).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = Format::from_path(&args.output)?;
    if !matches!(format, Format::Rbxm | Format::Rbxmx) {
        bail!(
            "{}: a package is a model file (.rbxm or .rbxmx)",
            args.output.display()
        );
    }
    if !crate::lock::is_generator(&args.generator) {
        bail!(
            "{}: pack takes a generator module (.luau or .lua)",
            args.generator.display()
        );
    }
    let mut config = EngineConfig::default();
    args.limits.apply(&mut config.host);
    config.host.echo_output = true;
    // The package is what `procmodel regen` of it saves: the same configuration (provenance
    // on, no cache), so regenerating a fresh package changes no byte.
    let OneModel {
        mut engine, model, ..
    } = one_model_scene(
        config,
        Spec {
            generator: &args.generator,
            size: args.size.unwrap_or(Vec3::splat(12.0)),
            scale: 1.0,
            attributes: Attrs::Cli(&args.attrs),
            placement: Placement::InsideModel {
                sandboxed: args.sandboxed,
            },
        },
    )?;
    let reports = engine.settle(args.limits.max_frames());
    let report = reports
        .iter()
        .rev()
        .find(|r| r.model == model)
        .ok_or_else(|| anyhow!("{}: the generator did not run", args.generator.display()))?;
    if !report.ok {
        bail!(
            "{}: generation failed, nothing packed: {}",
            args.generator.display(),
            report.error.as_deref().unwrap_or("unknown error")
        );
    }
    if engine.is_dirty(model) {
        bail!(
            "{}: the model is still dirty after generating (does it change its own inputs?)",
            args.generator.display()
        );
    }
    let instances = report.instances;
    let dom = engine.into_dom();
    let written = output::write(&dom, &[model], format, &args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "packed {} ({instances} generated instances{}) -> {} ({} bytes)",
        args.generator.display(),
        if args.sandboxed { ", sandboxed" } else { "" },
        args.output.display(),
        written.len
    );
    Ok(ExitCode::SUCCESS)
}
