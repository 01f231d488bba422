//! Fuzz target: bake manifests. `bake --merge` reads one manifest per shard from a shared
//! directory or object store, written by other machines (or damaged on the way). Any bytes
//! parse to a manifest or are refused with an error naming it.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = procmodel_bake::Manifest::parse(bytes, "fuzz/manifest.json");
});
