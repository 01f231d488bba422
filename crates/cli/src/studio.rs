//! `procmodel studio`: opens a generator or a scene in the browser editor (procmodel-studio).

use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A generator module (.luau, or a folder with init.luau; opened as a one-model scene) or
    /// a scene (.rbxl, .rbxlx, .rbxm, .rbxmx, a Rojo project; opened as it is).
    pub path: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value = "7878")]
    pub port: u16,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Serve the page from this folder instead of the copy built into the binary.
    #[arg(long, hide = true)]
    pub web_dir: Option<PathBuf>,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    #[command(flatten)]
    pub cache: crate::lock::CacheArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut options = procmodel_studio::Options::new(&args.path);
    options.port = args.port;
    options.web_dir = args.web_dir;
    args.limits.apply(&mut options.host);
    let cache = args.cache.open_for(Some(&args.path));
    options.cache = cache.clone().map(|c| c as _);
    // Export .glb carries the scene's Terrain as `procmodel export` does.
    options.glb = Some(procmodel_studio::GlbWriter(std::sync::Arc::new(
        |dom, roots| crate::export::glb_bytes(dom, roots).map_err(|e| format!("{e:#}")),
    )));
    let studio = procmodel_studio::Studio::start(options)?;
    let url = studio.url();
    println!(
        "procmodel studio: {} at {url} (Ctrl+C to stop)",
        args.path.display()
    );
    if args.open {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else if cfg!(windows) {
            "explorer"
        } else {
            "xdg-open"
        };
        if let Err(e) = std::process::Command::new(opener).arg(&url).spawn() {
            eprintln!("procmodel studio: could not open a browser ({opener}: {e}); open {url}");
        }
    }
    studio.wait();
    crate::lock::report_cache(&cache);
    Ok(ExitCode::SUCCESS)
}
