//! Rojo projects as scenes: a `*.project.json` (or a folder holding `default.project.json`)
//! and the files it points at, built into an `rbx_dom_weak::WeakDom` with Rojo's rules
//! (docs/rojo.md lists them, and what differs).
//!
//! Owns: the project format, Rojo's file conventions, property values resolved through the
//! reflection database, Ref properties linked by `id` and `Rojo_Target_<Property>`. Must
//! never: run Luau, write files, or decode Roblox model files itself (the caller's reader
//! does, so one loader checks every binary file). Same files give the same tree: directory
//! entries and project children are taken in sorted order.

mod convert;
mod error;
mod files;
mod glob;
mod link;
mod project;
mod value;

pub use error::RojoError;

use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Which Roblox model format a model file holds: `.rbxm` (or a `syncRules` entry's `rbxm`)
/// is binary, `.rbxmx` (`rbxmx`) XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFormat {
    Binary,
    Xml,
}

/// Decodes a model file's bytes in the given format (the path names the file in errors).
pub type ModelReader<'a> = dyn Fn(&Path, Vec<u8>, ModelFormat) -> Result<WeakDom, String> + 'a;

/// A built project.
pub struct Loaded {
    /// The tree: a DataModel root (the project's own when its tree is a DataModel, else one
    /// holding the project's top instance).
    pub dom: WeakDom,
    /// Whether the project's tree is a DataModel (a place), not a model held in one.
    pub place: bool,
    /// Every file the project was built from (canonical paths, sorted): the sources a
    /// writer must never overwrite.
    pub files: BTreeSet<PathBuf>,
    /// Each script of the tree and the Luau file its Source was read from, breadth first:
    /// what a front end watches to put an edited file back into its script.
    pub scripts: Vec<(Ref, PathBuf)>,
}

/// The names a folder's own project file may have, in the order Rojo looks for them.
pub const DEFAULT_PROJECTS: [&str; 2] = ["default.project.json", "default.project.jsonc"];

/// Whether a file name is a project file's (`*.project.json`, or `*.project.jsonc` since
/// Rojo 7.7).
pub fn is_project_file_name(name: &str) -> bool {
    project_stem(name).is_some_and(|stem| !stem.is_empty())
}

/// A project file's name without `.project.json` or `.project.jsonc`.
pub(crate) fn project_stem(name: &str) -> Option<&str> {
    [".project.json", ".project.jsonc"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
}

/// The project file `path` names: itself when it is one ([`is_project_file_name`]), or a
/// folder's `default.project.json` (else `default.project.jsonc`).
pub fn project_file(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        return DEFAULT_PROJECTS
            .iter()
            .map(|n| path.join(n))
            .find(|p| p.is_file());
    }
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_project_file_name)
        .then(|| path.to_path_buf())
}

/// True when `path` is a Rojo project (see [`project_file`]).
pub fn is_project(path: &Path) -> bool {
    project_file(path).is_some()
}

/// Builds the project at `path` (a project file or a folder with `default.project.json`).
/// Model files are decoded by `read_model`.
pub fn load(path: &Path, read_model: &ModelReader<'_>) -> Result<Loaded, RojoError> {
    let file = project_file(path).ok_or_else(|| {
        RojoError::file(
            path,
            "not a Rojo project (a *.project.json file, or a folder with default.project.json or default.project.jsonc)",
        )
    })?;
    let mut ctx = files::Ctx::new(read_model, project::load);
    let snap = project::load(&mut ctx, &file, None)?
        .ok_or_else(|| RojoError::field(&file, "tree", "the project's tree is empty"))?;
    let place = snap.is_place();
    let linked = link::instantiate(snap)?;
    let scripts = linked.script_files();
    let dom = link::link_refs(linked)?;
    Ok(Loaded {
        dom,
        place,
        files: ctx.files,
        scripts,
    })
}

/// A file or folder built as Rojo builds it outside a project: a folder with an
/// `init.luau` is a ModuleScript whose children are the folder's other files.
pub struct LoadedPath {
    /// A DataModel root holding the built instance as its only child.
    pub dom: WeakDom,
    /// The built instance.
    pub top: Ref,
    /// Each script of the tree and the file its Source was read from, breadth first.
    pub scripts: Vec<(Ref, PathBuf)>,
}

/// Builds the file or folder at `path` with Rojo's file rules (a folder's
/// `default.project.json(c)` included). Model files are decoded by `read_model`.
pub fn load_path(path: &Path, read_model: &ModelReader<'_>) -> Result<LoadedPath, RojoError> {
    let mut ctx = files::Ctx::new(read_model, project::load);
    let snap = files::snapshot_path(&mut ctx, path, None)?
        .ok_or_else(|| RojoError::file(path, "Rojo builds nothing from this path"))?;
    let place = snap.is_place();
    let linked = link::instantiate(snap)?;
    let scripts = linked.script_files();
    let dom = link::link_refs(linked)?;
    // The built instance: the root itself when the path built a place (a DataModel).
    let top = match dom.root().children() {
        [only] if !place => *only,
        _ => dom.root_ref(),
    };
    Ok(LoadedPath { dom, top, scripts })
}

/// One instance to build, before it is placed in the DOM.
pub(crate) struct Snap {
    pub name: String,
    pub class: String,
    pub props: std::collections::BTreeMap<String, rbx_types::Variant>,
    pub attrs: rbx_types::Attributes,
    pub id: Option<String>,
    pub children: Vec<Snap>,
    /// A model file's instance: the decoded file, whose root has it as its only child.
    pub model: Option<Box<WeakDom>>,
    /// The file this instance comes from (errors name it).
    pub file: PathBuf,
}

impl Snap {
    /// Whether this tree is a place: a DataModel described by the project, not a model
    /// file's instance.
    pub(crate) fn is_place(&self) -> bool {
        self.class == "DataModel" && self.model.is_none()
    }

    pub(crate) fn new(name: &str, class: &str, file: &Path) -> Snap {
        Snap {
            name: name.to_owned(),
            class: class.to_owned(),
            props: Default::default(),
            attrs: Default::default(),
            id: None,
            children: Vec::new(),
            model: None,
            file: file.to_path_buf(),
        }
    }
}
