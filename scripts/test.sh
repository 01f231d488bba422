#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs the glTF validator (npm) the export
# tests call, then every crate's unit, integration and Luau conformance tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d crates/export/tests/validator/node_modules ]; then
    npm ci --prefix crates/export/tests/validator --no-audit --no-fund --loglevel=error
fi
if [ ! -d crates/studio/tests/browser/node_modules ]; then
    npm ci --prefix crates/studio/tests/browser --no-audit --no-fund --loglevel=error
fi
# The result cache defaults to the user's cache folder; the suite uses an empty one of its own.
XDG_CACHE_HOME="$(mktemp -d)"
export XDG_CACHE_HOME
cargo test --workspace "$@"
# The determinism matrix (one lockfile per input across SIMD levels and --jobs 1/2), its debug
# half, with the binary the suite just built.
PROCMODEL_BIN="${CARGO_TARGET_DIR:-target}/debug/procmodel" ./scripts/determinism.sh debug
