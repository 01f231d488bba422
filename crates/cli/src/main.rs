//! `procmodel`: the thin command-line edge over the procmodel libraries. One module per
//! subcommand; anyhow lives here only.

mod attrs;
mod bake;
mod bake_world;
mod cli_reference;
mod export;
mod flags;
mod generate;
mod info;
mod limits;
mod lock;
mod mcp;
mod new;
mod one_model;
mod output;
mod pack;
mod project;
mod regen;
mod run;
mod scaffold;
mod status;
mod studio;
mod terrain;
mod types;
mod verify;
mod world_bake;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

// mimalloc with exact size classes for the DOM's property maps (procmodel-alloc's docs; the
// workspace manifest says why mimalloc).
#[global_allocator]
static GLOBAL: procmodel_alloc::Allocator = procmodel_alloc::Allocator;

pub use procmodel_alloc::release_free_memory;

#[derive(Parser)]
#[command(
    name = "procmodel",
    version,
    about = "Run Roblox-style Luau procedural generators headless"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a generator module and write what it builds (.rbxm, .rbxmx, .rbxl, .rbxlx, .glb, .gltf, .obj).
    Generate(generate::Args),
    /// Write a commented template generator module.
    New(new::Args),
    /// Show a generator's attributes, their types and defaults.
    Info(info::Args),
    /// Open a generator or a scene in the browser editor (127.0.0.1).
    Studio(studio::Args),
    /// Serve the Model Context Protocol over stdio: an AI assistant creates, edits, regenerates,
    /// exports and packs generators through the engine (files only under --root).
    Mcp(mcp::Args),
    /// Run a plain Luau script with a DataModel it may modify.
    Run(run::Args),
    /// Regenerate the dirty (or all) ProceduralModels of a scene and save it.
    Regen(regen::Args),
    /// Export what a scene shows as .glb, .gltf or .obj: a place's Workspace with its Terrain (not the templates in its storage services), or a model file's instances.
    Export(export::Args),
    /// Build a heightmap world (TOML/JSON) as a place with Terrain, a .glb and heightmaps.
    Terrain(terrain::Args),
    /// Regenerate a scene's models (or a generator) and write a lockfile of inputs and results.
    Lock(lock::Args),
    /// Regenerate what a lockfile names from scratch and check every model against it.
    Verify(verify::Args),
    /// Show each model of a scene as fresh, stale (and why), failed or never generated.
    Status(status::Args),
    /// Pack a generator as a ProceduralModel package (.rbxm/.rbxmx) for Studio.
    Pack(pack::Args),
    /// Write luau-lsp definitions (procmodel.d.luau) and a .luaurc for editing generators.
    Types(types::Args),
    /// List a scene's (or sweep's) work units, their keys and sizes, and their shards.
    Plan(bake::PlanArgs),
    /// Write a sweep scene: one ProceduralModel per combination of swept attribute values.
    Sweep(bake::SweepArgs),
    /// Bake one shard of a scene or sweep into a directory or object store, or merge a bake.
    Bake(bake::BakeArgs),
    /// Print every subcommand's help as Markdown (the source of docs/cli.md).
    #[command(hide = true)]
    CliReference,
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a closed pipe (`procmodel status x | head`) would make the next
    // print panic; with the default action the process ends quietly, as Unix tools do.
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Still one thread: the allocator's options may change. Commands that build one scene
    // return freed memory at once; the others (world bakes reuse large buffers) keep
    // mimalloc's delay.
    if matches!(cli.command, Command::Generate(_) | Command::Run(_)) {
        procmodel_alloc::configure();
    }
    if matches!(
        cli.command,
        Command::Generate(_)
            | Command::Run(_)
            | Command::Regen(_)
            | Command::Export(_)
            | Command::Lock(_)
            | Command::Verify(_)
            | Command::Status(_)
            | Command::Pack(_)
            | Command::Bake(_)
    ) {
        procmodel_dom::decode_databases_in_background();
    }
    let result = match cli.command {
        Command::Generate(a) => generate::run(a),
        Command::New(a) => new::run(a),
        Command::Info(a) => info::run(a),
        Command::Run(a) => run::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Studio(a) => studio::run(a),
        Command::Regen(a) => regen::run(a),
        Command::Export(a) => export::run(a),
        Command::Terrain(a) => terrain::run(a),
        Command::Lock(a) => lock::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Status(a) => status::run(a),
        Command::Pack(a) => pack::run(a),
        Command::Types(a) => types::run(a),
        Command::Plan(a) => bake::plan(a),
        Command::Sweep(a) => bake::sweep(a),
        Command::Bake(a) => bake::bake(a),
        Command::CliReference => {
            print!("{}", cli_reference::markdown(Cli::command()));
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
