//! `procmodel info`: a generator's attributes, their types and defaults.

use crate::attrs;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The generator module (.luau, or a folder with init.luau and its child modules).
    pub generator: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    crate::one_model::generator_file_exists(&args.generator)?;
    // Loaded as the engine loads it (its top-level code sees ProceduralModels as a run does,
    // and a module folder gets its children).
    let mut engine = procmodel_engine::Engine::new(
        procmodel_luau::runtime(),
        procmodel_engine::EngineConfig::default(),
    )?;
    let storage = engine.server_storage();
    let generator = engine.load_generator_file(&args.generator, storage)?;
    let attributes = generator.attributes.clone().unwrap_or_default();
    if args.json {
        let list: Vec<serde_json::Value> = attributes
            .iter()
            .map(|(n, v)| {
                serde_json::json!({ "name": n, "type": attrs::type_name(v), "default": attrs::to_json(v) })
            })
            .collect();
        let out = serde_json::json!({
            "generator": args.generator.display().to_string(),
            "declares_attributes": generator.attributes.is_some(),
            "attributes": list,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{}", args.generator.display());
        if generator.attributes.is_none() {
            println!("  (declares no Attributes: every attribute of the model is passed)");
        }
        let w = attributes
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let tw = attributes
            .iter()
            .map(|(_, v)| attrs::type_name(v).len())
            .max()
            .unwrap_or(0);
        for (n, v) in &attributes {
            println!(
                "  {n:<w$}  {:<tw$}  {}",
                attrs::type_name(v),
                attrs::show(v)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
