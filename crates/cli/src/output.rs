//! Writing outputs: the format follows the extension; every file is written to a temporary
//! sibling and renamed into place, so a failed run never leaves a half-written file.

use anyhow::{Context, Result, bail};
use procmodel_engine::Hashing;
use procmodel_export::WarningKind;
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
    /// A Roblox file (`.rbxm`, `.rbxmx`, `.rbxl`, `.rbxlx`): one a scene can be saved as.
    pub fn is_roblox(self) -> bool {
        matches!(
            self,
            Format::Rbxm | Format::Rbxmx | Format::Rbxl | Format::Rbxlx
        )
    }

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

/// The main file written: its size and BLAKE3 hash.
pub struct Written {
    pub len: u64,
    pub hash: blake3::Hash,
}

/// The context of an exporter's error: the file it was exporting.
pub(crate) fn cannot_export(path: &Path) -> impl Fn() -> String + '_ {
    move || format!("cannot export {}", path.display())
}

/// Serialises `roots` of `dom` in `format` and writes them (and sidecar files) to `path`.
/// Roblox files stream into the file (hashed on the way); the others are built in memory.
/// Export warnings go to stderr. Every error names the file it was writing.
pub fn write(dom: &WeakDom, roots: &[Ref], format: Format, path: &Path) -> Result<Written> {
    let opts = export_options(path);
    let exporting = cannot_export(path);
    let (bytes, warnings) = match format {
        Format::Rbxm | Format::Rbxl => {
            return stream(path, |w| {
                procmodel_dom::encode_binary(w, dom, roots).with_context(|| {
                    format!("cannot encode {} as a binary Roblox file", path.display())
                })
            });
        }
        Format::Rbxmx | Format::Rbxlx => {
            return stream(path, |w| {
                procmodel_dom::encode_xml(w, dom, roots).with_context(|| {
                    format!("cannot encode {} as an XML Roblox file", path.display())
                })
            });
        }
        Format::Glb => {
            let e = procmodel_export::to_glb(dom, roots, &opts).with_context(exporting)?;
            (e.output, e.warnings)
        }
        Format::Gltf => {
            let e = procmodel_export::to_gltf(dom, roots, &opts).with_context(exporting)?;
            if !e.output.bin.is_empty() {
                write_atomic(&path.with_file_name(&opts.bin_name), &e.output.bin)?;
            }
            (e.output.json.into_bytes(), e.warnings)
        }
        Format::Obj => {
            let e = procmodel_export::to_obj(dom, roots, &opts).with_context(exporting)?;
            for (name, png) in &e.output.textures {
                write_atomic(&path.with_file_name(name), png)?;
            }
            write_atomic(
                &path.with_file_name(&opts.mtl_name),
                e.output.mtl.as_bytes(),
            )?;
            (e.output.obj.into_bytes(), e.warnings)
        }
    };
    print_warnings(&warnings, false);
    write_atomic(path, &bytes)?;
    Ok(Written {
        len: bytes.len() as u64,
        hash: blake3::hash(&bytes),
    })
}

/// Writes what `encode` produces to `path` atomically, hashing it on the way.
fn stream(path: &Path, encode: impl FnOnce(&mut Hashing<'_>) -> Result<()>) -> Result<Written> {
    let mut written = None;
    procmodel_engine::write_atomic_with(
        path,
        |file| {
            let mut w = Hashing::new(file);
            encode(&mut w)?;
            written = Some(Written {
                len: w.len,
                hash: w.hasher.finalize(),
            });
            Ok(())
        },
        |e| anyhow::Error::new(e).context(format!("cannot write {}", path.display())),
    )?;
    Ok(written.expect("set by a successful write"))
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

/// Prints an export's warnings on stderr (see [`warning_lines`]); `terrain_meshed`: the
/// Terrain was meshed separately, so its "no geometry" warning is not printed.
pub(crate) fn print_warnings(warnings: &[procmodel_export::ExportWarning], terrain_meshed: bool) {
    for line in warning_lines(warnings, terrain_meshed) {
        eprintln!("warning: {line}");
    }
}

/// One line per kind of warning, in first-seen order: a warning that recurs (a Decal on
/// each of 10,000 parts) is one line with its count and its first instance, not 10,000.
fn warning_lines(
    warnings: &[procmodel_export::ExportWarning],
    terrain_meshed: bool,
) -> Vec<String> {
    // (what, first path, count), keyed by `what` in first-seen order.
    let mut groups: Vec<(String, &str, usize)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for w in warnings {
        if terrain_meshed
            && matches!(&w.kind, WarningKind::GeometrySkipped { class } if class == "Terrain")
        {
            continue;
        }
        let line = w.to_string();
        let what = line
            .strip_prefix(&format!("{}: ", w.path))
            .unwrap_or(&line)
            .to_owned();
        match index.get(&what) {
            Some(&i) => groups[i].2 += 1,
            None => {
                index.insert(what.clone(), groups.len());
                groups.push((what, &w.path, 1));
            }
        }
    }
    groups
        .into_iter()
        .map(|(what, path, n)| match n {
            1 => format!("{path}: {what}"),
            n => format!("{path}: {what} (and {} more like it)", n - 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_export::ExportWarning;

    fn w(path: &str, kind: WarningKind) -> ExportWarning {
        ExportWarning {
            path: path.to_owned(),
            kind,
        }
    }

    #[test]
    fn recurring_warnings_are_one_line_with_a_count() {
        let decal = || WarningKind::AppearanceIgnored {
            class: "Decal".to_owned(),
        };
        let warnings = [
            w("W.A.Decal", decal()),
            w(
                "W.Statue",
                WarningKind::BoundingBoxOnly {
                    class: "MeshPart".to_owned(),
                },
            ),
            w("W.B.Decal", decal()),
            w(
                "Workspace.Terrain",
                WarningKind::GeometrySkipped {
                    class: "Terrain".to_owned(),
                },
            ),
            w("W.C.Decal", decal()),
        ];
        assert_eq!(
            warning_lines(&warnings[..2], false),
            [
                "W.A.Decal: Decal is not applied to the exported geometry",
                "W.Statue: MeshPart has no mesh data here, exported as its bounding box",
            ]
        );
        assert_eq!(
            warning_lines(&warnings, true),
            [
                "W.A.Decal: Decal is not applied to the exported geometry (and 2 more like it)",
                "W.Statue: MeshPart has no mesh data here, exported as its bounding box",
            ]
        );
    }
}
