//! procmodel studio: a local web editor for ProceduralModels. An axum server on 127.0.0.1
//! serves an embedded page (three.js vendored) and talks to it over one WebSocket per page;
//! the engine runs on its own thread (`procmodel_engine::thread`) and every page receives the
//! latest snapshot after each change.
//!
//! Owns: the JSON wire types (the only crate that knows them), the viewport frame encoding,
//! Host/Origin checks, hot reload of generator files. Must never: listen beyond loopback,
//! block the server on a generator, or lose the connection or the scene on a bad message.

mod frame;
mod output;
pub mod protocol;
mod server;
mod session;
mod terrain;
mod watch;

pub use frame::{LISTED_RESULTS, Shape};
pub use session::Opened;

use std::net::SocketAddr;
use std::path::PathBuf;

/// What `procmodel studio` was asked to open.
#[derive(Debug, Clone)]
pub struct Options {
    /// A generator module (`.luau`) or a scene (`.rbxl`, `.rbxlx`, `.rbxm`, `.rbxmx`).
    pub path: PathBuf,
    /// 0 picks a free port.
    pub port: u16,
    /// Limits for generator runs (timeouts, quotas).
    pub host: procmodel_luau::HostConfig,
    /// Serve the page from this folder instead of the embedded copy (page development).
    pub web_dir: Option<PathBuf>,
    /// The result cache the engine looks results up in and fills (None: always generate).
    pub cache: Option<std::sync::Arc<dyn procmodel_engine::ResultCache>>,
    /// Writes Export .glb: the given instances of the scene as a `.glb` (the binary passes
    /// the one that adds the scene's Terrain as a mesh; None: the instances alone).
    pub glb: Option<GlbWriter>,
}

/// Writes instances of a scene as `.glb` bytes ([`Options::glb`]).
#[derive(Clone)]
pub struct GlbWriter(
    #[allow(clippy::type_complexity)]
    pub  std::sync::Arc<
        dyn Fn(&rbx_dom_weak::WeakDom, &[rbx_types::Ref]) -> Result<Vec<u8>, String> + Send + Sync,
    >,
);

impl std::fmt::Debug for GlbWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GlbWriter")
    }
}

impl Options {
    pub fn new(path: impl Into<PathBuf>) -> Options {
        Options {
            path: path.into(),
            port: 0,
            host: procmodel_luau::HostConfig {
                echo_output: false,
                ..Default::default()
            },
            web_dir: None,
            cache: None,
            glb: None,
        }
    }
}

/// Errors starting the studio.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StudioError {
    #[error("{0}")]
    Open(String),
    #[error("cannot listen on 127.0.0.1:{port}: {message}")]
    Bind { port: u16, message: String },
    #[error("{0}")]
    Runtime(String),
}

/// A running studio (server thread + engine thread). Dropping it stops both.
pub struct Studio {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Studio {
    /// Opens the scene, binds the port and starts serving in the background.
    pub fn start(options: Options) -> Result<Studio, StudioError> {
        server::start(options)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Blocks until the server ends (it runs until the process is stopped).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops the server and the engine.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Studio {
    fn drop(&mut self) {
        self.shutdown();
    }
}
