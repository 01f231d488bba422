//! Writing outputs: the format follows the extension; every file is written to a temporary
//! sibling and renamed into place, so a failed run never leaves a half-written file; files
//! that belong together are renamed only once all of them are written ([`Batch`]).

use anyhow::{Context, Result, bail};
use procmodel_engine::Hashing;
use procmodel_export::WarningKind;
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::io::Write;
use std::path::{Path, PathBuf};

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
            "" => bail!(
                "{}: the output format is the file's extension, and it has none (use .rbxm, .rbxmx, .rbxl, .rbxlx, .glb, .gltf or .obj)",
                path.display()
            ),
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

/// Serialises `roots` of `dom` in `format` and writes them (and sidecar files) to `path`,
/// all or nothing ([`Batch`]). Roblox files stream into the file (hashed on the way); the
/// others are built in memory. Export warnings go to stderr. Every error names the file it
/// was writing. `terrain_meshed`: the caller meshed `Workspace.Terrain` itself or found it
/// empty, so the exporter's "Terrain has no geometry" warning says nothing true.
pub fn write(
    dom: &WeakDom,
    roots: &[Ref],
    format: Format,
    path: &Path,
    terrain_meshed: bool,
) -> Result<Written> {
    let mut batch = Batch::default();
    let written = stage(dom, roots, format, path, &mut batch, terrain_meshed)?;
    batch.commit()?;
    Ok(written)
}

/// [`write`] into `batch`: nothing replaces an old file until the batch is committed.
pub fn stage(
    dom: &WeakDom,
    roots: &[Ref],
    format: Format,
    path: &Path,
    batch: &mut Batch,
    terrain_meshed: bool,
) -> Result<Written> {
    let opts = export_options(path);
    let exporting = cannot_export(path);
    let (bytes, warnings) = match format {
        Format::Rbxm | Format::Rbxl => {
            return batch.stream(path, |w| {
                procmodel_dom::encode_binary(w, dom, roots).with_context(|| {
                    format!("cannot encode {} as a binary Roblox file", path.display())
                })
            });
        }
        Format::Rbxmx | Format::Rbxlx => {
            return batch.stream(path, |w| {
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
                batch.stage(&path.with_file_name(&opts.bin_name), &e.output.bin)?;
            }
            (e.output.json.into_bytes(), e.warnings)
        }
        Format::Obj => {
            let e = procmodel_export::to_obj(dom, roots, &opts).with_context(exporting)?;
            for (name, png) in &e.output.textures {
                batch.stage(&path.with_file_name(name), png)?;
            }
            batch.stage(
                &path.with_file_name(&opts.mtl_name),
                e.output.mtl.as_bytes(),
            )?;
            (e.output.obj.into_bytes(), e.warnings)
        }
    };
    print_warnings(&warnings, terrain_meshed);
    batch.stage(path, &bytes)?;
    Ok(Written {
        len: bytes.len() as u64,
        hash: blake3::hash(&bytes),
    })
}

/// Files that belong together (an output and its sidecars, every output of one command),
/// each written and synced under a temp name beside its destination; [`Batch::commit`]
/// renames them into place. If any fails to be written, none replaces an old file (a batch
/// dropped uncommitted removes its temp files). Naming one destination twice is an error.
#[derive(Default)]
pub struct Batch {
    staged: Vec<procmodel_engine::Staged>,
}

impl Batch {
    /// Stages `bytes` for `path`.
    pub fn stage(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.stream(path, |w| Ok(w.write_all(bytes)?)).map(|_| ())
    }

    /// Stages what `encode` writes for `path`, hashing it on the way.
    pub fn stream(
        &mut self,
        path: &Path,
        encode: impl FnOnce(&mut Hashing<'_>) -> Result<()>,
    ) -> Result<Written> {
        if self.staged.iter().any(|s| same_path(s.path(), path)) {
            bail!("{}: named twice as an output", path.display());
        }
        destination(path)?;
        let mut written = None;
        let staged = procmodel_engine::stage_atomic_with(
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
        self.staged.push(staged);
        Ok(written.expect("set by a successful write"))
    }

    /// Renames every staged file into place, in the order staged.
    pub fn commit(self) -> Result<()> {
        for s in self.staged {
            let path = s.path().to_path_buf();
            s.commit()
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }
}

/// Whether `a` and `b` name the same file: the same file on disk when both exist, else the
/// same absolute path once the folders that exist are resolved (links, `..`, [`resolved`]).
pub fn same_path(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        use std::os::unix::fs::MetadataExt;
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    resolved(a) == resolved(b)
}

/// `path` made absolute: canonical for the part of it that exists (the rest appended, as
/// for an output about to be written in a folder not made yet).
pub fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let full = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut cur = full.as_path();
    while let Some(parent) = cur.parent() {
        rest.push(cur.file_name().map(PathBuf::from).unwrap_or_default());
        if let Ok(p) = parent.canonicalize() {
            return rest.iter().rev().fold(p, |acc, c| acc.join(c));
        }
        cur = parent;
    }
    full
}

/// Whether `path` is `dir` or lies under it (folders resolved as in [`same_path`]).
pub fn inside(path: &Path, dir: &Path) -> bool {
    resolved(path).starts_with(resolved(dir))
}

/// Refuses outputs that name the same file twice: `outputs` are (flag, path) pairs.
pub fn distinct_outputs(outputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (fa, a)) in outputs.iter().enumerate() {
        if let Some((fb, _)) = outputs[i + 1..].iter().find(|(_, b)| same_path(a, b)) {
            bail!(
                "{fa} and {fb} name the same file, {}: one would overwrite the other",
                a.display()
            );
        }
    }
    Ok(())
}

/// Refuses an output that is a folder or whose folder does not exist. Commands call it
/// before any work (a long generation or bake would otherwise run to the end and then fail
/// to write), and [`Batch`] again as it writes.
pub fn destination(output: &Path) -> Result<()> {
    if output.is_dir() {
        bail!("cannot write {}: it is a folder", output.display());
    }
    let Some(folder) = output.parent().filter(|f| !f.as_os_str().is_empty()) else {
        return Ok(());
    };
    match std::fs::metadata(folder) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => bail!(
            "cannot write {}: {} is a file, not a folder",
            output.display(),
            folder.display()
        ),
        Err(_) => bail!(
            "cannot write {}: the folder it goes in does not exist (create it first)",
            output.display()
        ),
    }
}

/// Refuses an output that names one of the command's inputs: `what` says which input
/// (`"the generator"`, `"the scene"`), so nothing a command reads is replaced by what it writes.
pub fn not_an_input(output: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    for (what, input) in inputs {
        if same_path(output, input) {
            bail!(
                "{}: is {what} this command reads; writing there would replace it (choose another output path)",
                output.display()
            );
        }
    }
    Ok(())
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
