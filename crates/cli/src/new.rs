//! `procmodel new`: write a commented template generator (like the one Studio inserts), or
//! one per toolkit technique with `--template` (the templates live in `scaffold.rs`).

use crate::output::write_atomic;
use crate::scaffold::Template;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the generator (Name.luau; `.luau` is added when there is no extension;
    /// missing folders are created).
    pub path: PathBuf,
    /// Which generator to start from.
    #[arg(long, value_enum, default_value = "blank")]
    pub template: Template,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let named = args.path.as_os_str().to_string_lossy();
    if args.path.is_dir() || named.ends_with('/') || named.ends_with(std::path::MAIN_SEPARATOR) {
        bail!(
            "{}: is a folder; name the generator file to write (e.g. {})",
            args.path.display(),
            args.path.join("Generator.luau").display()
        );
    }
    if args
        .path
        .file_stem()
        .is_none_or(|s| s.to_string_lossy().starts_with('.'))
    {
        bail!(
            "{}: name the generator file (e.g. Generator.luau)",
            args.path.display()
        );
    }
    let path = if args.path.extension().is_none() {
        args.path.with_extension("luau")
    } else {
        args.path.clone()
    };
    if !crate::lock::is_generator(&path) {
        bail!(
            "{}: a generator module is a .luau (or .lua) file",
            path.display()
        );
    }
    if path.exists() && !args.force {
        bail!(
            "{} already exists (use --force to overwrite)",
            path.display()
        );
    }
    let text = args
        .template
        .source()
        .replace("__FILE__", &path.display().to_string());
    // A new generator may start a new folder (`procmodel new generators/Fence.luau`).
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        if folder.exists() && !folder.is_dir() {
            bail!(
                "cannot write {}: {} is a file, not a folder",
                path.display(),
                folder.display()
            );
        }
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the folder {}", folder.display()))?;
    }
    write_atomic(&path, text.as_bytes())?;
    // Say up front where a toolkit template runs (pack says it again).
    let toolkit = procmodel_luau::requires::toolkit_requires(&text);
    if toolkit.is_empty() {
        eprintln!("wrote {}", path.display());
    } else {
        eprintln!(
            "wrote {} (it requires {}: it runs in procmodel, not in Roblox Studio)",
            path.display(),
            toolkit.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
