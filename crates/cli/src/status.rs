//! `procmodel status`: each ProceduralModel of a scene as fresh, stale (and which input
//! changed), failed (with the error), never generated or baked, from the provenance its
//! GeneratedFolder records. Reads the scene only; runs nothing.

use anyhow::Result;
use procmodel_engine::provenance::{Status, models, status};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The scene (.rbxl, .rbxlx, .rbxm, .rbxmx, or a Rojo project).
    pub scene: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let dom = procmodel_engine::read_scene(&args.scene)?;
    let rows: Vec<(String, Status)> = models(&dom)
        .into_iter()
        .map(|m| (procmodel_dom::full_name(&dom, m), status(&dom, m)))
        .collect();
    if rows.is_empty() && !args.json {
        eprintln!("note: {} holds no ProceduralModel", args.scene.display());
    }
    if args.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(path, s)| {
                let (state, detail) = split(s);
                serde_json::json!({ "model": path, "status": state, "reasons": detail })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "models": list }))?
        );
    } else {
        let w = rows.iter().map(|(p, _)| p.len()).max().unwrap_or(5).max(5);
        if !rows.is_empty() {
            println!("{:<w$}  {:<15}  detail", "model", "status");
        }
        for (path, s) in &rows {
            let (state, detail) = split(s);
            println!("{path:<w$}  {state:<15}  {}", detail.join("; "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The status word and its details (the reasons a model is stale, or the error).
fn split(s: &Status) -> (&'static str, Vec<String>) {
    match s {
        Status::Fresh => ("fresh", Vec::new()),
        Status::Stale(why) => ("stale", why.clone()),
        Status::Failed(e) => ("failed", vec![e.lines().next().unwrap_or("").to_owned()]),
        Status::NeverGenerated => ("never generated", Vec::new()),
        Status::Baked => ("baked", Vec::new()),
    }
}
