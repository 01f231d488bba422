//! `procmodel mcp`: a Model Context Protocol server over stdio (the official `rmcp` SDK), so
//! an AI assistant can create generators from Luau source, inspect and set their attributes,
//! Size and Scale, regenerate, read errors with file and line, undo, export and pack.
//!
//! Owns: the tool set (names, JSON Schemas, strict argument checks), the session over the
//! engine thread (`engine::thread`), and the confinement of every file it writes to the root
//! directory. Must never: hold an `Engine` off its thread, write outside the root, write to
//! stdout anything but protocol messages, or fail the server on a client's input (a bad
//! argument or a failed generation is a tool result with `isError`, a malformed message a
//! JSON-RPC error). File formats are not its business: the binary passes the writers in.

mod args;
mod paths;
mod scene;
mod server;
mod session;
mod tools;
mod wire;

pub use paths::Root;
pub use session::{Outcome, Session};

use procmodel_engine::EngineConfig;
use rbx_dom_weak::WeakDom;
use rbx_types::{Ref, Variant};
use std::path::{Path, PathBuf};

/// Writes `roots` of a scene to a file (format by extension); returns what it wrote (size,
/// hash) for the client. Called on the engine thread.
pub type WriteFn =
    Box<dyn Fn(&WeakDom, &[Ref], &Path) -> Result<serde_json::Value, String> + Send + Sync>;
/// Packs a generator as `procmodel pack` does; returns what it wrote.
pub type PackFn = Box<dyn Fn(&PackRequest) -> Result<serde_json::Value, String> + Send + Sync>;

/// The file writers the binary provides (the formats live there and in their crates).
pub struct Writers {
    pub write: WriteFn,
    pub pack: PackFn,
}

/// A package to write: a model's generator module as it is in the scene, with the model's
/// Size and explicit attributes.
#[derive(Debug, Clone)]
pub struct PackRequest {
    /// The module's Name (the package's model is named after it).
    pub name: String,
    pub source: String,
    pub size: glam::Vec3,
    /// Explicit attribute values, sorted by name.
    pub attributes: Vec<(String, Variant)>,
    pub sandboxed: bool,
    /// Inside the root (already confined).
    pub output: PathBuf,
}

/// What the server serves.
pub struct Config {
    /// A place (.rbxl, .rbxlx, .rbxm, .rbxmx) or a generator (.luau) to open; none: an
    /// empty scene.
    pub scene: Option<PathBuf>,
    /// Files are written only under this directory.
    pub root: PathBuf,
    /// The engine's limits (the usual sandbox and quotas).
    pub engine: EngineConfig,
    /// Frames a settle may take.
    pub max_frames: usize,
    pub writers: Writers,
}

/// Errors that end the server (never a client's bad input).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scene or the root could not be opened.
    #[error("{0}")]
    Start(String),
    /// The stdio transport failed.
    #[error("MCP transport: {0}")]
    Transport(String),
}

/// Serves `config` over stdin/stdout until the client closes the connection.
pub fn serve_stdio(config: Config) -> Result<(), Error> {
    let session = Session::start(config).map_err(Error::Start)?;
    server::run(session)
}
