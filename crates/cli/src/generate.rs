//! `procmodel generate`: run one generator module and write what it builds.

use crate::one_model::{Attrs, OneModel, Placement, Spec, one_model_scene};
use crate::output;
use anyhow::{Result, anyhow, bail};
use glam::Vec3;
use procmodel_engine::EngineConfig;
use rbx_dom_weak::{WeakDom, ustr};
use rbx_types::{Ref, Variant};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// The generator module (.luau) returning { Attributes = {...}, OnGenerate = function },
    /// or a folder whose init.luau is the module and whose other files are its children
    /// (Rojo's layout: `require(script.Util)` finds Util.luau).
    pub generator: PathBuf,
    /// The model's Size, the box to generate in: X,Y,Z (default 12,12,12 as in Studio).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::flags::size)]
    pub size: Option<Vec3>,
    /// Set an attribute: Name=Value, parsed to the type of the generator's default.
    #[arg(long = "attr", value_name = "NAME=VALUE")]
    pub attrs: Vec<String>,
    /// The model's Scale: params.Size is Size/scale and the results are scaled back up.
    #[arg(long, default_value = "1", allow_hyphen_values = true, value_parser = crate::flags::scale)]
    pub scale: f32,
    /// Output file; the format follows the extension (.rbxm, .rbxmx, .glb, .gltf, .obj; .rbxl or
    /// .rbxlx write a place: the results in its Workspace beside the Terrain the generator
    /// wrote through params.Terrain, which .glb/.gltf/.obj carry as a mesh).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print a JSON summary (instances, time, output hash) on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: crate::limits::Limits,
    #[command(flatten)]
    pub cache: crate::lock::CacheArgs,
}

/// Runs the generator and returns the output DOM with a Model holding the results.
pub struct Built {
    pub dom: WeakDom,
    pub model: Ref,
    pub instances: usize,
    pub elapsed: Duration,
    /// Models nested in the results whose generation failed: (path, error).
    pub nested_failures: Vec<(String, String)>,
    /// What the generator put outside its targetContainer (full names of the tops of new
    /// subtrees), which a model file leaves out.
    pub strays: Vec<String>,
    /// The results came from the result cache: the generator did not run (nor print).
    pub cached: bool,
    /// The run made instances but left its results empty ([`procmodel_engine::Report::warning`]).
    pub warning: Option<String>,
}

/// Generates through the engine, exactly as a ProceduralModel in a scene regenerates: a
/// one-model scene (the generator as a ModuleScript in ServerStorage, a ProceduralModel at
/// the origin with the given Size, Scale and attributes), one settle, and the model's
/// results folder turned into a plain Model in place (results are positioned, scaled and
/// given their PrimaryPart by the engine's own result application).
pub fn build(args: &Args) -> Result<Built> {
    let mut config = EngineConfig::default();
    args.limits.apply(&mut config.host);
    config.host.echo_output = true;
    // Files beside the generator may be required by path: they are part of every key.
    let cache = crate::lock::files_salt(&args.generator).and_then(|s| args.cache.open(Some(s)));
    config.cache = cache.clone().map(|c| c as _);
    // The output is the results alone (the folder's provenance attributes are not kept).
    config.provenance = false;
    let OneModel {
        mut engine,
        model: pm,
        ..
    } = one_model_scene(
        config,
        Spec {
            generator: &args.generator,
            size: args.size.unwrap_or(Vec3::splat(12.0)),
            scale: args.scale,
            attributes: Attrs::Cli(&args.attrs),
            placement: Placement::ServerStorage,
            source: None,
        },
    )?;
    let name = args
        .generator
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("Generated")
        .to_owned();
    let before = engine.with_dom(|dom| scene_outside(dom, pm));
    let reports = engine.settle(args.limits.max_frames());
    crate::lock::report_cache(&cache);
    let report = reports
        .iter()
        .rev()
        .find(|r| r.model == pm)
        .ok_or_else(|| anyhow!("{}: the generator did not run", args.generator.display()))?;
    if !report.is_ok() {
        let error = report.error();
        let error = error.as_deref().unwrap_or("unknown error");
        bail!(
            "{}: generation failed: {error}{}",
            args.generator.display(),
            crate::one_model::project_hint(&args.generator, error)
        );
    }
    let elapsed = report.elapsed;
    let cached = report.cached;
    let warning = report.warning();
    let strays = engine.with_dom(|dom| strays(dom, pm, &before));
    let outcome = crate::one_model::outcome(&engine, &reports, pm);
    let instances = outcome.instances;

    // The results folder becomes the output Model where it is, and is written from the
    // scene's own DOM: no instance is moved or copied (moving 100k children one by one costs
    // time in the number of siblings each, and a second DOM would double the instance table).
    let model = engine.with_dom_mut(|dom| -> Result<Ref> {
        let inst = dom.get_by_ref(pm).expect("the model stays in the scene");
        let attributes = inst.properties.get(&ustr("Attributes")).cloned();
        let primary = procmodel_dom::primary_part_of(dom, pm);
        let folder = inst
            .children()
            .iter()
            .copied()
            .find(|&c| {
                dom.get_by_ref(c)
                    .is_some_and(|i| i.class == "GeneratedFolder")
            })
            .ok_or_else(|| anyhow!("{}: the model has no results", args.generator.display()))?;
        let m = dom.get_by_ref_mut(folder).expect("a child of the model");
        m.class = ustr("Model");
        m.name = name;
        m.properties.clear();
        m.properties.insert(
            ustr("WorldPivotData"),
            Variant::OptionalCFrame(Some(rbx_types::CFrame::identity())),
        );
        if let Some(a) = attributes {
            m.properties.insert(ustr("Attributes"), a);
        }
        if args.scale != 1.0 {
            m.properties
                .insert(ustr("Scale"), Variant::Float32(args.scale));
        }
        if let Some(pp) = primary {
            m.properties.insert(ustr("PrimaryPart"), Variant::Ref(pp));
        }
        Ok(folder)
    })?;
    // The VM is done with: its memory is free for the output.
    let dom = engine.into_dom();
    crate::release_free_memory();
    Ok(Built {
        dom,
        model,
        instances,
        elapsed,
        nested_failures: outcome.nested_failures,
        strays,
        cached,
        warning,
    })
}

/// The instances of the scene outside the model `pm` (a handful before a generation).
fn scene_outside(dom: &WeakDom, pm: Ref) -> HashSet<Ref> {
    let mut seen = HashSet::new();
    procmodel_dom::preorder(dom, &[dom.root_ref()], |r, _| {
        seen.insert(r);
        r != pm
    });
    seen
}

/// What a generation added outside the model `pm` (the tops of new subtrees, by full name)
/// beyond what the engine makes for any script (services, the Workspace's Terrain and
/// Camera, instances files do not keep).
fn strays(dom: &WeakDom, pm: Ref, before: &HashSet<Ref>) -> Vec<String> {
    let mut out = Vec::new();
    procmodel_dom::preorder(dom, &[dom.root_ref()], |r, i| {
        if r == pm || !procmodel_dom::is_archivable(i) {
            return false;
        }
        if before.contains(&r) {
            return true;
        }
        let made_for_scripts = procmodel_dom::is_service(i.class.as_str())
            || matches!(i.class.as_str(), "Terrain" | "Camera");
        if !made_for_scripts {
            out.push(procmodel_dom::full_name(dom, r));
            return false;
        }
        true
    });
    out
}

/// Whether the scene's `Workspace.Terrain` holds voxels (what generators wrote).
fn terrain_in(dom: &WeakDom) -> bool {
    procmodel_dom::workspace_terrain(dom).is_some_and(|t| {
        match t.properties.get(&ustr("SmoothGrid")) {
            Some(Variant::BinaryString(b)) => {
                let bytes: &[u8] = b.as_ref();
                bytes.len() > procmodel_terrain::smoothgrid::HEADER.len()
            }
            _ => false,
        }
    })
}

/// Turns the scene into the place `generate` writes: the generated Model moved into the
/// Workspace (the ProceduralModel that held it removed), so the Workspace holds the Model and
/// the Terrain. Returns the Workspace.
fn as_place(built: &mut Built) -> Result<Ref> {
    let dom = &mut built.dom;
    let workspace = dom
        .root()
        .children()
        .iter()
        .copied()
        .find(|&c| dom.get_by_ref(c).is_some_and(|i| i.class == "Workspace"))
        .ok_or_else(|| anyhow!("the scene has no Workspace"))?;
    let holder = dom
        .get_by_ref(built.model)
        .map(|i| i.parent())
        .ok_or_else(|| anyhow!("the generated model left the scene"))?;
    dom.transfer_within(built.model, workspace);
    if holder != workspace && dom.get_by_ref(holder).is_some() {
        dom.destroy(holder);
    }
    Ok(workspace)
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = output::Format::from_path(&args.output)?;
    output::destination(&args.output)?;
    let mut built = build(&args)?;
    let has_terrain = terrain_in(&built.dom);
    let is_place = matches!(format, output::Format::Rbxl | output::Format::Rbxlx);
    // Every warning, each printed as `warning: <file>: <text>` and listed in --json.
    let mut warnings: Vec<(String, String)> = Vec::new();
    let roots = match format {
        // A place holds the model in its Workspace, beside the Terrain the generator wrote.
        output::Format::Rbxl | output::Format::Rbxlx => vec![as_place(&mut built)?],
        _ => {
            if has_terrain && matches!(format, output::Format::Rbxm | output::Format::Rbxmx) {
                warnings.push((
                    args.output.display().to_string(),
                    "the generator wrote terrain, which a model file cannot hold: write a place (.rbxl, .rbxlx) or .glb/.gltf/.obj to keep it".to_owned(),
                ));
            }
            // The model alone at the top, so what names instances by path (OBJ objects,
            // export warnings) starts at it, not at the one-model scene it was made in
            // (`Workspace.Gen.Gen.Part`); the model's own bytes do not depend on its parent.
            let top = built.dom.root_ref();
            built.dom.transfer_within(built.model, top);
            vec![built.model]
        }
    };
    // A place holds the whole Workspace, so only what was put elsewhere is left out.
    let left_out: Vec<&String> = built
        .strays
        .iter()
        .filter(|p| !(is_place && p.starts_with("Workspace.")))
        .collect();
    // Instances put elsewhere in the scene are named below instead.
    if let Some(w) = built.warning.as_ref().filter(|_| built.strays.is_empty()) {
        warnings.push((args.generator.display().to_string(), w.clone()));
    }
    if !left_out.is_empty() {
        let shown: Vec<&str> = left_out.iter().take(3).map(|p| p.as_str()).collect();
        let more = match left_out.len() {
            n if n > 3 => format!(" and {} more", n - 3),
            _ => String::new(),
        };
        warnings.push((
            args.generator.display().to_string(),
            format!(
                "the generator put {} outside its targetContainer ({}{more}), which {} does not hold: parent what it builds to targetContainer, the second argument of OnGenerate",
                match left_out.len() {
                    1 => "an instance".to_owned(),
                    n => format!("{n} instances"),
                },
                shown.join(", "),
                args.output.display(),
            ),
        ));
    }
    for (file, text) in &warnings {
        eprintln!("warning: {file}: {text}");
    }
    let written = crate::export::write_with_terrain(
        &built.dom,
        &roots,
        format,
        &args.output,
        &args.generator,
    )?;
    let hash = written.hash.to_hex().to_string();
    if args.json {
        let summary = serde_json::json!({
            "generator": args.generator.display().to_string(),
            "output": args.output.display().to_string(),
            "instances": built.instances,
            "time_ms": built.elapsed.as_secs_f64() * 1000.0,
            "cached": built.cached,
            "bytes": written.len,
            "blake3": hash,
            "content_hash": procmodel_dom::hash::to_hex(&procmodel_dom::hash::children_hash(&built.dom, built.model)),
            "nested_failures": built.nested_failures.iter().map(|(p, e)| serde_json::json!({"model": p, "error": e})).collect::<Vec<_>>(),
            // As `regen --json` carries each model's: the run made instances its results lack.
            "warning": built.warning,
            // Everything said on stderr as a warning, in order.
            "warnings": warnings.iter().map(|(file, text)| serde_json::json!({"file": file, "message": text})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let plural = if built.instances == 1 { "" } else { "s" };
        let how = if built.cached {
            // Nothing ran, so nothing printed: say why, and how to run it.
            format!(
                "{} instance{plural} from the result cache (generated before with these inputs; --no-cache runs the generator)",
                built.instances
            )
        } else {
            format!("generated {} instance{plural}", built.instances)
        };
        eprintln!(
            "{how} in {:.1} ms -> {} ({} bytes)",
            built.elapsed.as_secs_f64() * 1000.0,
            args.output.display(),
            written.len
        );
    }
    // The output is written either way (it holds the error placeholders); a nested model
    // that failed makes the exit status non-zero, as `regen` does.
    for (path, error) in &built.nested_failures {
        eprintln!("error: nested model {path} failed: {error}");
    }
    let code = if built.nested_failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    // The process ends now: freeing a scene of many instances one by one would only cost time.
    std::mem::forget(built);
    Ok(code)
}
