//! Writing outputs: the format follows the extension; every file is written to a temporary
//! sibling and renamed into place, so a failed run never leaves a half-written file.

use anyhow::{Context, Result, bail};
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Rbxm,
    Rbxmx,
    Rbxl,
    Rbxlx,
    Glb,
    Gltf,
    Obj,
}

impl Format {
    pub fn from_path(path: &Path) -> Result<Format> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "rbxm" => Format::Rbxm,
            "rbxmx" => Format::Rbxmx,
            "rbxl" => Format::Rbxl,
            "rbxlx" => Format::Rbxlx,
            "glb" => Format::Glb,
            "gltf" => Format::Gltf,
            "obj" => Format::Obj,
            _ => bail!(
                "{}: unknown output format '.{ext}' (use .rbxm, .rbxmx, .rbxl, .rbxlx, .glb, .gltf or .obj)",
                path.display()
            ),
        })
    }
}

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    procmodel_engine::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Serialises `roots` of `dom` in `format` and writes them (and sidecar files) to `path`.
/// Returns the bytes of the main file (for hashing). Export warnings go to stderr.
pub fn write(dom: &WeakDom, roots: &[Ref], format: Format, path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let opts = export_options(path);
    let mut warnings = Vec::new();
    match format {
        Format::Rbxm | Format::Rbxl => procmodel_rbxm::to_writer(&mut bytes, dom, roots)
            .context("cannot encode the binary Roblox file")?,
        Format::Rbxmx | Format::Rbxlx => rbx_xml::to_writer_default(&mut bytes, dom, roots)
            .context("cannot encode the XML Roblox file")?,
        Format::Glb => {
            let e = procmodel_export::to_glb(dom, roots, &opts)?;
            warnings = e.warnings;
            bytes = e.output;
        }
        Format::Gltf => {
            let e = procmodel_export::to_gltf(dom, roots, &opts)?;
            warnings = e.warnings;
            if !e.output.bin.is_empty() {
                write_atomic(&path.with_file_name(&opts.bin_name), &e.output.bin)?;
            }
            bytes = e.output.json.into_bytes();
        }
        Format::Obj => {
            let e = procmodel_export::to_obj(dom, roots, &opts)?;
            warnings = e.warnings;
            write_atomic(
                &path.with_file_name(&opts.mtl_name),
                e.output.mtl.as_bytes(),
            )?;
            bytes = e.output.obj.into_bytes();
        }
    }
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    write_atomic(path, &bytes)?;
    Ok(bytes)
}

/// Sidecar files are named after the output: `stairs.gltf` → `stairs.bin`, `stairs.obj` → `stairs.mtl`.
fn export_options(path: &Path) -> procmodel_export::ExportOptions {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_owned();
    procmodel_export::ExportOptions {
        bin_name: format!("{stem}.bin"),
        mtl_name: format!("{stem}.mtl"),
        ..procmodel_export::ExportOptions::default()
    }
}
