//! procmodel-bake: the pieces of a sharded bake that know nothing of Luau, the engine or the
//! command line — work units with stable keys, shard assignment by a stable hash of the key,
//! the shard manifest format, sweep axes and their summary statistics, and the storage a
//! shard writes into (a local directory or an object store).
//!
//! **Architecture invariant:** no clap, no printing, no clocks in anything that must be
//! byte-identical (timings live in a separate file the merge ignores), no hash-map order in
//! any output (`BTreeMap` everywhere a map is written).

pub mod manifest;
pub mod shard;
pub mod store;
pub mod sweep;
pub mod unit;

pub use manifest::{Coverage, Manifest, Timings, UnitRecord, UnitStatus};
pub use shard::Shard;
pub use store::{Store, open};
pub use unit::{Assignment, Unit, key_hash, unit_keys};

/// Errors of this crate: each names the thing that is wrong (a file, a field, a unit key).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BakeError(pub String);

impl BakeError {
    pub fn new(msg: impl Into<String>) -> BakeError {
        BakeError(msg.into())
    }
}

pub type Result<T, E = BakeError> = std::result::Result<T, E>;

/// The blake3 digest of `bytes` as hex: the name of a content-addressed file.
pub fn digest_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}
