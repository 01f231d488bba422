//! `procmodel mcp`: the Model Context Protocol server over stdio (`procmodel-mcp`), with this
//! binary's writers: `output::write` for exports (every format, atomic) and `pack::pack` for
//! packages, so the tools write exactly what `export`/`generate -o` and `pack` write.

use crate::one_model::Attrs;
use crate::output::Format;
use crate::pack::{self, Package};
use anyhow::{Context, Result};
use procmodel_engine::EngineConfig;
use procmodel_mcp::{Config, PackRequest, Writers};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A scene (.rbxl, .rbxlx, .rbxm, .rbxmx, a Rojo project) or a generator (.luau, or a
    /// folder with init.luau) to open; without one, the scene starts empty and the client
    /// creates generators.
    #[arg(value_name = "SCENE-OR-GENERATOR")]
    pub scene: Option<PathBuf>,
    /// The only directory the server writes to (exports, packages, saves); default: the
    /// current directory.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    #[command(flatten)]
    pub cache: crate::lock::CacheArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let root = match args.root {
        Some(r) => r,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let mut engine = EngineConfig::default();
    args.limits.apply(&mut engine.host);
    let cache = args.cache.open_for(args.scene.as_deref());
    engine.cache = cache.clone().map(|c| c as _);
    // print/warn of generators go to stderr (stdout carries the protocol).
    engine.host.echo_output = true;
    let limits = args.limits.clone();
    let writers = Writers {
        write: Box::new(|dom, roots, path| {
            let format = Format::from_path(path).map_err(|e| format!("{e:#}"))?;
            let written = crate::export::write_with_terrain(dom, roots, format, path, path)
                .map_err(|e| format!("{e:#}"))?;
            Ok(json!({ "bytes": written.len, "blake3": written.hash.to_hex().to_string() }))
        }),
        pack: Box::new(move |req: &PackRequest| {
            let generator = Path::new(&req.name).with_extension("luau");
            let packed = pack::pack(&Package {
                generator: &generator,
                source: Some(&req.source),
                size: req.size,
                attributes: Attrs::Values(req.attributes.clone()),
                sandboxed: req.sandboxed,
                capabilities: &[],
                output: &req.output,
                limits: &limits,
            })
            .map_err(|e| format!("{e:#}"))?;
            let warning = packed.toolkit_warning(&generator);
            Ok(json!({ "bytes": packed.len, "instances": packed.instances, "warning": warning }))
        }),
    };
    procmodel_mcp::serve_stdio(Config {
        scene: args.scene,
        root,
        engine,
        max_frames: args.limits.max_frames(),
        writers,
    })?;
    crate::lock::report_cache(&cache);
    Ok(ExitCode::SUCCESS)
}
