//! `procmodel generate`: run one generator module and write what it builds.

use crate::{attrs, output};
use anyhow::{Context, Result, anyhow, bail};
use glam::Vec3;
use procmodel_luau::{Generator, Host, HostConfig, RunInputs};
use rbx_dom_weak::{InstanceBuilder, WeakDom, ustr};
use rbx_types::{Attributes, Ref, Variant};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// The generator module (.luau) returning { Attributes = {...}, OnGenerate = function }.
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
    /// Output file; the format follows the extension (.rbxm, .rbxmx, .glb, .gltf, .obj).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print a JSON summary (instances, time, output hash) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Seconds a generator may run without yielding.
    #[arg(long, default_value = "10", allow_hyphen_values = true, value_parser = crate::flags::seconds)]
    pub timeout: Duration,
}

/// Resolves `--attr` arguments against the generator's declared attributes.
pub fn resolve_attrs(generator: &Generator, args: &[String]) -> Result<Vec<(String, Variant)>> {
    let mut out: Vec<(String, Variant)> = Vec::new();
    for arg in args {
        let (name, text) = attrs::split(arg)?;
        let value = match &generator.attributes {
            Some(declared) => {
                let Some((_, default)) = declared.iter().find(|(n, _)| n == name) else {
                    let known: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
                    bail!(
                        "--attr {name}: the generator has no attribute '{name}' (it has: {})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    );
                };
                attrs::parse(name, text, default)?
            }
            // Without declared attributes, guess: number, then boolean, then string.
            None => text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(Variant::Float64)
                .or_else(|| match text {
                    "true" => Some(Variant::Bool(true)),
                    "false" => Some(Variant::Bool(false)),
                    _ => None,
                })
                .unwrap_or_else(|| Variant::String(text.to_owned())),
        };
        out.retain(|(n, _)| n != name);
        out.push((name.to_owned(), value));
    }
    Ok(out)
}

/// Runs the generator and returns the output DOM with a Model holding the results.
pub struct Built {
    pub dom: WeakDom,
    pub model: Ref,
    pub instances: usize,
    pub elapsed: Duration,
}

pub fn build(args: &Args) -> Result<Built> {
    if !(args.scale.is_finite() && args.scale > 0.0) {
        bail!("--scale must be a positive number, got {}", args.scale);
    }
    let config = HostConfig {
        timeout: args.timeout,
        ..HostConfig::default()
    };
    let mut host = Host::new(config)?;
    let storage = host.with_dom_ref(|dom| {
        dom.root()
            .children()
            .iter()
            .copied()
            .find(|&r| {
                dom.get_by_ref(r)
                    .is_some_and(|i| i.class == "ServerStorage")
            })
            .unwrap_or(dom.root_ref())
    });
    let generator = host.load_generator_file(&args.generator, storage)?;
    let attributes = resolve_attrs(&generator, &args.attrs)?;
    let size = args.size.unwrap_or(Vec3::splat(12.0));
    let inputs = RunInputs {
        attributes: attributes.clone(),
        size: size / args.scale,
        // A generator run from the command line sees a fresh DataModel; its container is all
        // it may write (as a sandboxed generator without AccessOutsideWrite).
        allow_outside_write: false,
    };
    let start = Instant::now();
    let out = host
        .run_generator(&generator, &inputs)
        .map_err(|e| match e {
            procmodel_luau::HostError::Script { message, traceback } => anyhow!(
                "{}: generation failed: {message}{}",
                args.generator.display(),
                traceback.map(|t| format!("\n{t}")).unwrap_or_default()
            ),
            other => anyhow!(other),
        })?;
    let elapsed = start.elapsed();

    // Apply results (SPEC §4): pivot at the model's pivot (the origin here), scale, attributes.
    let name = args
        .generator
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("Generated")
        .to_owned();
    let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
    let mut final_attrs = Attributes::new();
    for (n, v) in generator.attributes.iter().flatten() {
        final_attrs.insert(n.clone(), v.clone());
    }
    for (n, v) in &attributes {
        final_attrs.insert(n.clone(), v.clone());
    }
    let model = dom.insert(
        dom.root_ref(),
        InstanceBuilder::new("Model")
            .with_name(name)
            .with_property("Attributes", Variant::Attributes(final_attrs))
            .with_property(
                "WorldPivotData",
                Variant::OptionalCFrame(Some(rbx_types::CFrame::identity())),
            ),
    );
    host.with_dom_mut(|src| {
        let children = src
            .get_by_ref(out.container)
            .map(|i| i.children().to_vec())
            .unwrap_or_default();
        procmodel_dom::move_into(src, &children, &mut dom, model);
    });
    if let Some(pp) = out.primary_part.filter(|r| dom.get_by_ref(*r).is_some())
        && let Some(m) = dom.get_by_ref_mut(model)
    {
        m.properties.insert(ustr("PrimaryPart"), Variant::Ref(pp));
    }
    if args.scale != 1.0 {
        procmodel_dom::scale_to(&mut dom, model, args.scale);
    }
    let instances = procmodel_dom::count_subtree(&dom, model) - 1;
    Ok(Built {
        dom,
        model,
        instances,
        elapsed,
    })
}

pub fn run(args: Args) -> Result<ExitCode> {
    let format = output::Format::from_path(&args.output)?;
    let built = build(&args)?;
    let written = output::write(&built.dom, &[built.model], format, &args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let hash = written.hash.to_hex().to_string();
    if args.json {
        let summary = serde_json::json!({
            "generator": args.generator.display().to_string(),
            "output": args.output.display().to_string(),
            "instances": built.instances,
            "time_ms": built.elapsed.as_secs_f64() * 1000.0,
            "bytes": written.len,
            "blake3": hash,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        eprintln!(
            "generated {} instances in {:.1} ms -> {} ({} bytes)",
            built.instances,
            built.elapsed.as_secs_f64() * 1000.0,
            args.output.display(),
            written.len
        );
    }
    Ok(ExitCode::SUCCESS)
}
