//! Scenes that are sources at the command line: the files a scene was loaded from (a Rojo
//! project's every file, or the scene file), refusing to save over a project, and
//! `--write-generated DIR` (each model's GeneratedFolder as `.rbxm` at a path mirroring the
//! model's instance path).
//!
//! Must never write over a file the scene was loaded from, nor write anything but whole
//! files atomically (temp file then rename).

use crate::output::{self, Format};
use anyhow::{Context, Result, bail};
use procmodel_dom::is_a;
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// True when `scene` is a Rojo project (a `*.project.json`, or a folder with
/// `default.project.json`).
pub fn is_project(scene: &Path) -> bool {
    procmodel_rojo::is_project(scene)
}

/// The files a scene was loaded from (canonical): a project's every source, or the file.
pub fn source_files(scene: &Path) -> Result<BTreeSet<PathBuf>> {
    if is_project(scene) {
        let read = |file: &Path, bytes: Vec<u8>, format: procmodel_rojo::ModelFormat| {
            let format = match format {
                procmodel_rojo::ModelFormat::Binary => procmodel_engine::SceneFormat::Binary,
                procmodel_rojo::ModelFormat::Xml => procmodel_engine::SceneFormat::Xml,
            };
            procmodel_engine::read_scene_bytes(bytes, format, &file.display().to_string())
                .map_err(|e| e.to_string())
        };
        let loaded = procmodel_rojo::load(scene, &read).map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok(loaded.files);
    }
    Ok([canonical(scene)].into_iter().collect())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Where a model's results go under `dir`: one folder per ancestor below the DataModel,
/// then the model's name + `.rbxm`. A name that cannot be a file name is an error naming
/// the model.
pub fn mirrored_path(dom: &WeakDom, model: Ref, dir: &Path) -> Result<PathBuf> {
    let root = dom.root_ref();
    let mut names = Vec::new();
    let mut cur = model;
    while cur.is_some() && cur != root {
        let Some(inst) = dom.get_by_ref(cur) else {
            break;
        };
        names.push(inst.name.as_str());
        cur = inst.parent();
    }
    names.reverse();
    let full = names.join(".");
    let mut path = dir.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty()
            || *name == "."
            || *name == ".."
            || name.contains(['/', '\\', '\0'])
            || name.chars().any(char::is_control)
        {
            bail!(
                "--write-generated: model {full}: the name {name:?} cannot be a file name (empty, '.', '..', a slash or a control character)"
            );
        }
        if i + 1 == names.len() {
            path.push(format!("{name}.rbxm"));
        } else {
            path.push(name);
        }
    }
    Ok(path)
}

/// True when `r` is inside a GeneratedFolder (the results of an enclosing model).
fn inside_results(dom: &WeakDom, r: Ref) -> bool {
    let mut cur = dom.get_by_ref(r).map_or(Ref::none(), |i| i.parent());
    while let Some(inst) = dom.get_by_ref(cur) {
        if is_a(&inst.class, "GeneratedFolder") {
            return true;
        }
        cur = inst.parent();
    }
    false
}

/// Writes the GeneratedFolder of each model of `models` that has one under `dir` (nested
/// models' results are inside their enclosing model's file). Refuses, before writing
/// anything, a path that is one of `sources` or that two models would share. Returns the
/// files written, in the order of `models`.
pub fn write_generated(
    dom: &WeakDom,
    models: &[Ref],
    dir: &Path,
    sources: &BTreeSet<PathBuf>,
) -> Result<Vec<PathBuf>> {
    let mut planned: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut jobs = Vec::new();
    for &m in models {
        if inside_results(dom, m) {
            continue;
        }
        let Some(inst) = dom.get_by_ref(m) else {
            continue;
        };
        let folder = inst.children().iter().copied().find(|&c| {
            dom.get_by_ref(c)
                .is_some_and(|i| is_a(&i.class, "GeneratedFolder"))
        });
        let Some(folder) = folder else { continue };
        let full = procmodel_dom::full_name(dom, m);
        let path = mirrored_path(dom, m, dir)?;
        if let Some(other) = planned.get(&path) {
            bail!(
                "--write-generated: models {other} and {full} would both be written to {} (rename one)",
                path.display()
            );
        }
        planned.insert(path.clone(), full.clone());
        jobs.push((path, folder, full));
    }
    // Checked for every file before any is written: a refusal leaves nothing half done.
    let mut checked = Vec::new();
    for (path, folder, full) in jobs {
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent)
            .with_context(|| format!("--write-generated: cannot create {}", parent.display()))?;
        let canon = canonical(parent).join(path.file_name().unwrap_or_default());
        if sources.contains(&canon) {
            bail!(
                "--write-generated: model {full}: {} is a source file of the scene; choose another folder",
                path.display()
            );
        }
        checked.push((path, folder));
    }
    let mut written = Vec::new();
    for (path, folder) in checked {
        output::write(dom, &[folder], Format::Rbxm, &path, false)?;
        written.push(path);
    }
    Ok(written)
}
