//! Scene files: `.rbxl`/`.rbxm` (rbx_binary) and `.rbxlx`/`.rbxmx` (rbx_xml), checked before
//! they are decoded and written atomically. `GenerationError` is dropped on load (it
//! describes a past run). Bad files are errors naming the file and the problem, never panics.

mod attributes;
mod binary;

pub use attributes::{AttributeBlobError, check_attributes};

use crate::EngineError;
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::cell::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};

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
            // Rojo 0.4's project file (2018–2019 repositories), which Rojo itself no
            // longer reads either.
            _ if path.file_name().is_some_and(|n| n == "rojo.json") => Err(EngineError::file(
                path.display().to_string(),
                "a Rojo 0.4 project (\"partitions\"), which current Rojo and procmodel no longer read: write a default.project.json whose \"tree\" places each partition's \"path\" at its \"target\" (a \"$path\" under the service it names)",
            )),
            _ => Err(EngineError::file(
                path.display().to_string(),
                "not a Roblox scene (use .rbxl, .rbxlx, .rbxm or .rbxmx, or a Rojo project: a *.project.json(c) file or a folder with default.project.json(c))",
            )),
        }
    }
}

/// Whether `path` names a model file (`.rbxm`, `.rbxmx`), not a place: its instances have
/// no DataModel of their own.
pub fn is_model_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("rbxm") || e.eq_ignore_ascii_case("rbxmx"))
}

/// Reads a scene file or a Rojo project, with (when `digest`) the BLAKE3 digest of the
/// file's bytes; none for a Rojo project, which is many files.
pub fn read_digested(
    path: &Path,
    digest: bool,
) -> Result<(WeakDom, Option<[u8; 32]>), EngineError> {
    if is_rojo_project(path) {
        return read_project(path).map(|dom| (dom, None));
    }
    let format = SceneFormat::from_path(path)?;
    let bytes = std::fs::read(path)
        .map_err(|e| EngineError::file(path.display().to_string(), format!("cannot open: {e}")))?;
    let hash = digest.then(|| *blake3::hash(&bytes).as_bytes());
    read_bytes(bytes, format, &path.display().to_string()).map(|dom| (dom, hash))
}

/// Whether `path` is a Rojo project (`*.project.json`, or a folder with
/// `default.project.json`), which [`crate::Engine::load`] builds as a scene.
pub fn is_rojo_project(path: &Path) -> bool {
    procmodel_rojo::is_project(path)
}

/// Reads a scene file or a Rojo project, as [`crate::Engine::load`] does.
pub fn read(path: &Path) -> Result<WeakDom, EngineError> {
    read_digested(path, false).map(|(dom, _)| dom)
}

/// A Rojo project (`*.project.json`, or a folder with `default.project.json`), built by
/// procmodel-rojo; its model files are checked and decoded as scene files are.
fn read_project(path: &Path) -> Result<WeakDom, EngineError> {
    read_project_files(path).map(|(dom, _)| dom)
}

/// What a Rojo project was built from, for a front end to watch.
#[derive(Debug, Clone, Default)]
pub struct ProjectFiles {
    /// Each script of the tree and the Luau file it was read from (canonical paths): what
    /// a front end watches to put an edited file back into its script
    /// ([`crate::Engine::set_source`]).
    pub scripts: Vec<(PathBuf, Ref)>,
    /// Every file the project was built from (the project files, scripts, meta, model and
    /// data files), sorted: a change of one that is not a script's text changes the
    /// project's structure.
    pub files: Vec<PathBuf>,
    /// Whether the project's tree is a DataModel (a place), not a model.
    pub place: bool,
}

/// [`read_project`], with what it was built from.
pub(crate) fn read_project_files(path: &Path) -> Result<(WeakDom, ProjectFiles), EngineError> {
    let loaded = procmodel_rojo::load(path, &read_model_file).map_err(rojo_error)?;
    let scripts = loaded
        .scripts
        .into_iter()
        .map(|(r, f)| (f.canonicalize().unwrap_or(f), r))
        .collect();
    Ok((
        loaded.dom,
        ProjectFiles {
            scripts,
            files: loaded.files.into_iter().collect(),
            place: loaded.place,
        },
    ))
}

/// `dom` with its DataModel under the referent `root` and its (first) Workspace under
/// `workspace`, every other instance keeping its own, and references to the two following
/// them: a scene read again can replace the one a VM holds while `game` and `workspace`,
/// bound to those referents, still reach it.
pub(crate) fn rekey_top(mut dom: WeakDom, root: Ref, workspace: Option<Ref>) -> WeakDom {
    use rbx_dom_weak::InstanceBuilder;
    use rbx_types::Variant;
    let builder = |i: &rbx_dom_weak::Instance, referent: Ref| {
        InstanceBuilder::new(i.class)
            .with_name(i.name.clone())
            .with_properties(i.properties.iter().map(|(k, v)| (*k, v.clone())))
            .with_referent(referent)
    };
    let old_root = dom.root_ref();
    let mut out = WeakDom::new(builder(dom.root(), root));
    let mut moved = vec![(old_root, root)];
    let mut workspace = workspace;
    for child in dom.root().children().to_vec() {
        let Some(i) = dom.get_by_ref(child) else {
            continue;
        };
        match workspace.take_if(|_| i.class == "Workspace") {
            Some(ws) => {
                let grandchildren = i.children().to_vec();
                out.insert(root, builder(i, ws));
                for g in grandchildren {
                    dom.transfer(g, &mut out, ws);
                }
                moved.push((child, ws));
            }
            None => dom.transfer(child, &mut out, root),
        }
    }
    let mut fixes = Vec::new();
    for i in out.descendants() {
        for (k, v) in &i.properties {
            if let Variant::Ref(r) = v
                && let Some(&(_, to)) = moved.iter().find(|(from, _)| from == r)
            {
                fixes.push((i.referent(), *k, to));
            }
        }
    }
    for (r, k, to) in fixes {
        if let Some(i) = out.get_by_ref_mut(r) {
            i.properties.insert(k, Variant::Ref(to));
        }
    }
    out
}

/// A model file inside a Rojo tree, checked and decoded as scene files are.
fn read_model_file(
    file: &Path,
    bytes: Vec<u8>,
    format: procmodel_rojo::ModelFormat,
) -> Result<WeakDom, String> {
    let format = match format {
        procmodel_rojo::ModelFormat::Binary => SceneFormat::Binary,
        procmodel_rojo::ModelFormat::Xml => SceneFormat::Xml,
    };
    match read_bytes(bytes, format, &file.display().to_string()) {
        Ok(dom) => Ok(dom),
        Err(e) => Err(e
            .file_message()
            .map_or_else(|| e.to_string(), str::to_owned)),
    }
}

fn rojo_error(e: procmodel_rojo::RojoError) -> EngineError {
    let message = match e.field_name() {
        Some(field) => format!("{field}: {}", e.message()),
        None => e.message().to_owned(),
    };
    EngineError::file(e.path().display().to_string(), message)
}

/// The names of the script Rojo makes a folder's ModuleScript from.
pub(crate) const MODULE_INITS: [&str; 2] = ["init.luau", "init.lua"];

/// The init script of module folder `dir` (`init.luau`, else `init.lua`), if it has one.
pub fn module_init(dir: &Path) -> Option<std::path::PathBuf> {
    MODULE_INITS
        .iter()
        .map(|n| dir.join(n))
        .find(|f| f.is_file())
}

/// The folder of a generator written the way Rojo lays out a module with children: `path`
/// itself when it is a folder holding an `init.luau` (or `init.lua`), or the folder of such
/// a file named directly. None for any other path.
pub fn module_folder(path: &Path) -> Option<std::path::PathBuf> {
    if path.is_dir() {
        return module_init(path).map(|_| path.to_path_buf());
    }
    let name = path.file_name()?.to_str()?;
    if !MODULE_INITS.contains(&name) {
        return None;
    }
    let dir = path.parent()?;
    Some(if dir.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        dir.to_path_buf()
    })
}

/// Builds a module folder ([`module_folder`]) as Rojo does: a ModuleScript named after the
/// folder, its Source from the init script, the folder's other files its children.
pub fn read_module_folder(dir: &Path) -> Result<procmodel_rojo::LoadedPath, EngineError> {
    let loaded = procmodel_rojo::load_path(dir, &read_model_file).map_err(rojo_error)?;
    let class = loaded
        .dom
        .get_by_ref(loaded.top)
        .map_or("nothing", |i| i.class.as_str());
    if class != "ModuleScript" {
        return Err(EngineError::file(
            dir.display().to_string(),
            format!(
                "builds a {class}, not a ModuleScript: a generator folder's init script is init.luau (init.server.luau and init.client.luau make scripts, and init.meta.json must not change its class)"
            ),
        ));
    }
    Ok(loaded)
}

/// Refuses a file whose instances nest deeper than `procmodel_dom::deep::MAX_FILE_DEPTH`.
fn too_deep(depth: usize) -> Result<(), String> {
    let most = procmodel_dom::deep::MAX_FILE_DEPTH;
    if depth > most {
        return Err(format!(
            "its instances nest {depth} levels deep; procmodel reads files nesting at most {most}"
        ));
    }
    Ok(())
}

/// Decodes the bytes of a scene file; `name` (the file's path) is what errors name.
/// The container is checked first (binary: header, chunks, sizes, counts; both: attribute
/// blobs), and a panic of the decoder on data the checks let through is an error too.
pub fn read_bytes(
    mut bytes: Vec<u8>,
    format: SceneFormat,
    name: &str,
) -> Result<WeakDom, EngineError> {
    let err = |message: String| EngineError::file(name.to_owned(), message);
    let mut dom = match format {
        SceneFormat::Binary => {
            const WHAT: &str = "not a valid binary Roblox file";
            binary::check(&mut bytes).map_err(|e| err(format!("{WHAT}: {e}")))?;
            let dom = contain(|| procmodel_dom::decode_binary(bytes.as_slice()))
                .map_err(|e| err(format!("{WHAT}: {e}")))?
                .map_err(|e| err(format!("{WHAT}: {e}")))?;
            too_deep(procmodel_dom::deep::tree_depth(&dom)).map_err(err)?;
            dom
        }
        SceneFormat::Xml => {
            const WHAT: &str = "not a valid XML Roblox file";
            attributes::check_xml_attributes(&bytes)
                .map_err(|(at, e)| err(format!("{WHAT}: AttributesSerialize at byte {at}: {e}")))?;
            too_deep(procmodel_dom::deep::xml_item_depth(&bytes)).map_err(err)?;
            // rbx_xml recurses once per level of nesting.
            procmodel_dom::deep::deep_stack(|| {
                contain(|| procmodel_dom::decode_xml(bytes.as_slice()))
            })
            .map_err(|e| err(format!("{WHAT}: {e}")))?
            .map_err(|e| err(format!("{WHAT}: {e}")))?
        }
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

/// Writes the scene (atomically) and returns the BLAKE3 digest of the bytes written.
pub fn write(dom: &WeakDom, path: &Path) -> Result<[u8; 32], EngineError> {
    let format = SceneFormat::from_path(path)?;
    let err = |message: String| EngineError::file(path.display().to_string(), message);
    let roots = dom.root().children().to_vec();
    let mut digest = [0; 32];
    write_atomic_with(
        path,
        |w| {
            let mut w = Hashing::new(w);
            match format {
                SceneFormat::Binary => procmodel_dom::encode_binary(&mut w, dom, &roots)
                    .map_err(|e| err(e.to_string()))?,
                SceneFormat::Xml => procmodel_dom::encode_xml(&mut w, dom, &roots)
                    .map_err(|e| err(e.to_string()))?,
            }
            digest = *w.hasher.finalize().as_bytes();
            Ok(())
        },
        |e| err(format!("cannot write: {e}")),
    )?;
    Ok(digest)
}

/// A writer that hashes (BLAKE3) and counts what passes through it.
pub struct Hashing<'a> {
    inner: &'a mut (dyn Write + Send),
    pub hasher: blake3::Hasher,
    pub len: u64,
}

impl<'a> Hashing<'a> {
    pub fn new(inner: &'a mut (dyn Write + Send)) -> Hashing<'a> {
        Hashing {
            inner,
            hasher: blake3::Hasher::new(),
            len: 0,
        }
    }
}

impl Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Temp file in the same folder, fsync, rename: a crash never leaves a half-written scene.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes), |e| e)
}

/// [`write_atomic`] of what `f` writes (buffered), without holding the whole file in memory.
/// I/O errors of the file itself become `E` through `io_err`. Temp files that saves of the
/// same path left behind when they were killed are removed first ([`remove_stale_temp_files`]).
pub fn write_atomic_with<E>(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), E>,
    io_err: impl Fn(std::io::Error) -> E,
) -> Result<(), E> {
    stage_atomic_with(path, f, &io_err)?
        .commit()
        .map_err(io_err)
}

/// The first half of [`write_atomic_with`]: the file written and synced under a temp name
/// beside `path`, which [`Staged::commit`] renames into place. Several outputs that belong
/// together (a heightmap and its sidecar, a `.gltf` and its `.bin`) are all staged before
/// any is committed, so a failure leaves every old file as it was. A staged file that is
/// dropped uncommitted is removed.
pub fn stage_atomic_with<E>(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<(), E>,
    io_err: impl Fn(std::io::Error) -> E,
) -> Result<Staged, E> {
    let (dir, name) = dir_and_name(path);
    // A file made read-only is not replaced (a rename would, silently); a writable one
    // keeps its permissions.
    let keep = match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.permissions().readonly() => {
            return Err(io_err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the file is read-only (make it writable to replace it)",
            )));
        }
        Ok(m) if m.is_file() => Some(m.permissions()),
        _ => None,
    };
    remove_stale_temp_files(path);
    let staged = Staged {
        tmp: dir.join(temp_name(&name, std::process::id())),
        path: path.to_path_buf(),
        done: false,
    };
    let file = std::fs::File::create(&staged.tmp).map_err(&io_err)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
    f(&mut w)?;
    let file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
    if let Some(p) = keep {
        file.set_permissions(p).map_err(&io_err)?;
    }
    file.sync_all().map_err(&io_err)?;
    Ok(staged)
}

/// A file written under a temp name, waiting to be renamed into place ([`stage_atomic_with`]).
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    path: PathBuf,
    done: bool,
}

impl Staged {
    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file into place (atomically replacing what was there).
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.path)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A temp file untouched this long is stale even when a live process has its id (ids are
/// reused); a save rewrites its temp file continuously, so a live save never looks this old.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Removes the temp files of earlier saves of `path` (`.NAME.PID.tmp` beside it) whose
/// process is no longer alive, or that nothing has written for [`STALE_TEMP_AGE`]. Never the
/// temp file of this process or of a live one (liveness from `/proc`; where there is no
/// `/proc`, only the age rule applies). Failures are ignored: this is tidying, not the save.
/// Returns the files removed.
pub fn remove_stale_temp_files(path: &Path) -> Vec<PathBuf> {
    let (dir, name) = dir_and_name(path);
    let prefix = format!(".{name}.");
    let own = std::process::id();
    let proc_fs = Path::new("/proc/self").exists();
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return removed;
    };
    let mut stale: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name();
            let pid: u32 = file
                .to_str()?
                .strip_prefix(&prefix)?
                .strip_suffix(".tmp")?
                .parse()
                .ok()?;
            if pid == own {
                return None;
            }
            let meta = entry.metadata().ok()?;
            if !meta.is_file() {
                return None;
            }
            let old = meta
                .modified()
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_TEMP_AGE);
            let dead = proc_fs && !Path::new(&format!("/proc/{pid}")).exists();
            (dead || old).then(|| entry.path())
        })
        .collect();
    stale.sort();
    for file in stale {
        if std::fs::remove_file(&file).is_ok() {
            removed.push(file);
        }
    }
    removed
}

/// The temp file name a save of `name` by process `pid` writes.
fn temp_name(name: &str, pid: u32) -> String {
    format!(".{name}.{pid}.tmp")
}

fn dir_and_name(path: &Path) -> (PathBuf, String) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

thread_local! {
    /// Set while [`contain`] runs a decoder on this thread: its panics are reported as errors,
    /// so the panic hook stays quiet for them.
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// Runs a decoder, turning a panic into an error with the panic's message, without the
/// default hook's report on stderr (the caller prints one clean error instead). Panics on
/// other threads, or outside this call, are reported as before.
fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINED.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was = CONTAINED.replace(true);
    // The decoder's state is dropped on a panic; nothing it touched is used afterwards.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CONTAINED.set(was);
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".to_owned());
        format!("the decoder stopped on corrupt data ({message})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rekeyed_scene_keeps_its_tree_and_follows_references_to_its_top() {
        use rbx_dom_weak::InstanceBuilder;
        use rbx_types::Variant;
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel").with_name("Game"));
        let root = dom.root_ref();
        let rs = dom.insert(root, InstanceBuilder::new("ReplicatedStorage"));
        let ws = dom.insert(
            root,
            InstanceBuilder::new("Workspace").with_name("Workspace"),
        );
        let part = dom.insert(ws, InstanceBuilder::new("Part").with_name("P"));
        let value = dom.insert(
            rs,
            InstanceBuilder::new("ObjectValue")
                .with_property("Value", Variant::Ref(ws))
                .with_property("Other", Variant::Ref(part)),
        );
        let (new_root, new_ws) = (Ref::new(), Ref::new());
        let out = rekey_top(dom, new_root, Some(new_ws));
        assert_eq!(out.root_ref(), new_root);
        assert_eq!(out.root().name, "Game");
        assert_eq!(out.root().children(), [rs, new_ws], "the order kept");
        assert_eq!(out.get_by_ref(new_ws).unwrap().children(), [part]);
        let v = &out.get_by_ref(value).unwrap().properties;
        assert_eq!(v.get(&"Value".into()), Some(&Variant::Ref(new_ws)));
        assert_eq!(v.get(&"Other".into()), Some(&Variant::Ref(part)));
    }

    /// A file that is no scene names what procmodel reads; Rojo 0.4's `rojo.json` is named
    /// as such, with how to move it to a current project.
    #[test]
    fn a_file_that_is_no_scene_says_what_would_be() {
        let e = SceneFormat::from_path(Path::new("notes.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(".rbxl") && e.contains("*.project.json"), "{e}");
        let e = SceneFormat::from_path(Path::new("old/rojo.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Rojo 0.4") && e.contains("default.project.json"),
            "{e}"
        );
    }

    /// The child half of [`contained_panics_are_quiet`].
    const CHILD: &str = "PROCMODEL_CONTAIN_CHILD";

    #[test]
    fn contained_panics_are_errors() {
        let e = contain(|| -> u32 { panic!("chunk {} is bad", 3) }).unwrap_err();
        assert_eq!(e, "the decoder stopped on corrupt data (chunk 3 is bad)");
        assert_eq!(contain(|| 7), Ok(7));
    }

    #[test]
    fn contained_panics_are_quiet() {
        if std::env::var_os(CHILD).is_some() {
            let e = contain(|| -> u32 { panic!("boom") }).unwrap_err();
            eprintln!("contained: {e}");
            return;
        }
        // Run this test again in a child process and read what it printed.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "scene::tests::contained_panics_are_quiet",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains("contained: the decoder stopped on corrupt data (boom)"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }

    /// A save keeps the permissions of the file it replaces and refuses a read-only one
    /// (the rename replaced it silently, as 0644), leaving it as it was.
    #[cfg(unix)]
    #[test]
    fn saves_keep_permissions_and_refuse_read_only_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = procmodel_testkit::scratch("perm");
        let f = dir.join("place.rbxl");
        std::fs::write(&f, b"old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&f, b"new").unwrap();
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!((std::fs::read(&f).unwrap(), mode), (b"new".to_vec(), 0o600));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&f, b"newer").unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed() {
        let dir = procmodel_testkit::scratch("stale");
        let target = dir.join("place.rbxl");
        // A process that has exited: its id is free (until reused, which the age rule covers).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let own = std::process::id();
        // A live process other than this one: the parent of the test harness.
        let live = std::os::unix::process::parent_id();
        for pid in [dead, own, live] {
            std::fs::write(dir.join(temp_name("place.rbxl", pid)), b"partial").unwrap();
        }
        std::fs::write(dir.join(".other.rbxl.1.tmp"), b"another target's").unwrap();
        std::fs::write(dir.join(".place.rbxl.x.tmp"), b"not ours").unwrap();
        let removed = remove_stale_temp_files(&target);
        assert_eq!(removed, [dir.join(temp_name("place.rbxl", dead))]);
        write_atomic(&target, b"done").unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            temp_name("place.rbxl", own),
            temp_name("place.rbxl", live),
            ".other.rbxl.1.tmp".to_owned(),
            ".place.rbxl.x.tmp".to_owned(),
            "place.rbxl".to_owned(),
        ];
        want.sort();
        // This process's own temp file is the one the save wrote and renamed.
        want.retain(|f| *f != temp_name("place.rbxl", own));
        assert_eq!(left, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
