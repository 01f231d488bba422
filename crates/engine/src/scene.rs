//! Scene files: `.rbxl`/`.rbxm` (rbx_binary) and `.rbxlx`/`.rbxmx` (rbx_xml), written
//! atomically. `GenerationError` is dropped on load (it describes a past run).

use crate::EngineError;
use rbx_dom_weak::WeakDom;
use std::io::Write;
use std::path::Path;

/// A scene file format, from the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneFormat {
    Binary,
    Xml,
}

impl SceneFormat {
    pub fn from_path(path: &Path) -> Result<SceneFormat, EngineError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("rbxl") | Some("rbxm") => Ok(SceneFormat::Binary),
            Some("rbxlx") | Some("rbxmx") => Ok(SceneFormat::Xml),
            _ => Err(EngineError::File {
                path: path.display().to_string(),
                message: "not a Roblox scene (use .rbxl, .rbxlx, .rbxm or .rbxmx)".into(),
            }),
        }
    }
}

pub fn read(path: &Path) -> Result<WeakDom, EngineError> {
    let format = SceneFormat::from_path(path)?;
    let err = |message: String| EngineError::File {
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| err(format!("cannot open: {e}")))?;
    let reader = std::io::BufReader::new(file);
    let mut dom = match format {
        SceneFormat::Binary => rbx_binary::from_reader(reader)
            .map_err(|e| err(format!("not a valid binary Roblox file: {e}")))?,
        SceneFormat::Xml => rbx_xml::from_reader_default(reader)
            .map_err(|e| err(format!("not a valid XML Roblox file: {e}")))?,
    };
    let root = dom.root_ref();
    if let Some(r) = dom.get_by_ref_mut(root) {
        r.class = "DataModel".into();
    }
    let models: Vec<_> = dom
        .descendants()
        .filter(|i| i.class == "ProceduralModel")
        .map(|i| i.referent())
        .collect();
    for m in models {
        if let Some(inst) = dom.get_by_ref_mut(m) {
            inst.properties.remove(&"GenerationError".into());
        }
    }
    Ok(dom)
}

pub fn write(dom: &WeakDom, path: &Path) -> Result<(), EngineError> {
    let format = SceneFormat::from_path(path)?;
    let err = |message: String| EngineError::File {
        path: path.display().to_string(),
        message,
    };
    let roots = dom.root().children().to_vec();
    write_atomic_with(
        path,
        |w| match format {
            SceneFormat::Binary => {
                procmodel_rbxm::to_writer(w, dom, &roots).map_err(|e| err(e.to_string()))
            }
            SceneFormat::Xml => {
                rbx_xml::to_writer_default(w, dom, &roots).map_err(|e| err(e.to_string()))
            }
        },
        |e| err(format!("cannot write: {e}")),
    )
}

/// Temp file in the same folder, fsync, rename: a crash never leaves a half-written scene.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes), |e| e)
}

/// [`write_atomic`] of what `f` writes (buffered), without holding the whole file in memory.
/// I/O errors of the file itself become `E` through `io_err`.
pub fn write_atomic_with<E>(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), E>,
    io_err: impl Fn(std::io::Error) -> E,
) -> Result<(), E> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp).map_err(&io_err)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
        f(&mut w)?;
        let file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
        file.sync_all().map_err(&io_err)?;
        std::fs::rename(&tmp, path).map_err(&io_err)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
