//! Verifiable generation (issue 14): lockfiles that record every input of a scene's (or one
//! generator's) models and the content hash of their results, the comparison `procmodel
//! verify` reports, and a content-addressed cache directory of applied results.
//!
//! Owns: the lockfile format (`lockfile.rs`, TOML, checksummed), building lock entries from
//! a regenerated scene (`collect.rs`), naming what differs (`diff.rs`), the cache store
//! (`store.rs`). Must never: run generators itself (the engine does), or report a match it
//! did not check.

pub mod collect;
pub mod diff;
pub mod lockfile;
pub mod store;

pub use collect::{file_hash, model_lock};
pub use diff::{Finding, compare};
pub use lockfile::{
    FileLock, InputLock, Lockfile, ModelLock, ModuleLock, Source, SourceKind, toml_error,
};
pub use store::{CacheStats, DirCache};

/// A lockfile that cannot be used, naming the file and the entry.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct LockError {
    pub file: String,
    pub message: String,
}
