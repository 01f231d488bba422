//! `procmodel export`: write a whole scene as glTF or OBJ (no regeneration).

use crate::output::{self, Format};
use anyhow::{Result, bail};
use procmodel_engine::{Engine, EngineConfig};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The scene (.rbxl, .rbxlx, .rbxm, .rbxmx).
    pub scene: PathBuf,
    /// Output (.glb, .gltf, .obj).
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = Format::from_path(&args.output)?;
    if !matches!(format, Format::Glb | Format::Gltf | Format::Obj) {
        bail!(
            "{}: export writes .glb, .gltf or .obj",
            args.output.display()
        );
    }
    let engine = Engine::load(&args.scene, EngineConfig::default())?;
    engine.with_dom(|dom| {
        let roots = dom.root().children().to_vec();
        output::write(dom, &roots, format, &args.output)
    })?;
    eprintln!(
        "exported {} -> {}",
        args.scene.display(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
