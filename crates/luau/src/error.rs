//! Errors of the Luau host, stable to callers while inner details evolve.

use std::path::PathBuf;

/// A host-level failure. Script errors carry the Luau message and traceback.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot start the Luau VM: {0}")]
    Vm(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    BadGenerator { file: String, message: String },
    #[error("{message}")]
    Script {
        message: String,
        traceback: Option<String>,
    },
    #[error("attribute {name}: {message}")]
    Attribute { name: String, message: String },
}

impl HostError {
    pub(crate) fn vm(e: mlua::Error) -> HostError {
        HostError::Vm(e.to_string())
    }

    /// A script error from an mlua error, keeping only the innermost message and traceback.
    pub fn script(e: &mlua::Error) -> HostError {
        let (message, traceback) = split(e);
        HostError::Script { message, traceback }
    }
}

fn split(e: &mlua::Error) -> (String, Option<String>) {
    match e {
        mlua::Error::CallbackError { traceback, cause } => {
            let (m, t) = split(cause);
            (m, t.or_else(|| Some(traceback.clone())))
        }
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => {
            (m.clone(), None)
        }
        mlua::Error::MemoryError(m) => (format!("out of memory: {m}"), None),
        mlua::Error::WithContext { context, cause } => {
            let (m, t) = split(cause);
            (format!("{context}: {m}"), t)
        }
        other => (other.to_string(), None),
    }
}
