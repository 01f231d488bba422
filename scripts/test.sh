#!/usr/bin/env bash
# Runs the whole test suite from a fresh clone: installs the glTF validator (npm) the export
# tests call, playwright-core for the studio's browser tests and mdBook for the book, builds
# the book, then every crate's unit, integration and Luau conformance tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d crates/export/tests/validator/node_modules ]; then
    npm ci --prefix crates/export/tests/validator --no-audit --no-fund --loglevel=error
fi
if [ ! -d crates/studio/tests/browser/node_modules ]; then
    npm ci --prefix crates/studio/tests/browser --no-audit --no-fund --loglevel=error
fi
# The documentation book: mdBook fails on a page SUMMARY.md lists that is missing (the links
# inside pages are checked by crates/cli/tests/docs.rs). Built into target/book.
./scripts/install-mdbook.sh
PATH="$HOME/.cargo/bin:$PATH" mdbook build docs
# The result cache defaults to the user's cache folder; the suite uses an empty one of its own.
XDG_CACHE_HOME="$(mktemp -d)"
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
cargo test --workspace "$@"
# The determinism matrix (one lockfile per input across SIMD levels and --jobs 1/2): the debug
# binary the suite just built, and an optimised one (the point: optimised float code gives
# the same bytes), compared with each other.
build_flags=()
for a in "$@"; do
    case $a in --locked | --frozen | --offline) build_flags+=("$a") ;; esac
done
cargo build --release -p procmodel ${build_flags[@]+"${build_flags[@]}"}
target="${CARGO_TARGET_DIR:-target}"
PROCMODEL_BIN_DEBUG="$target/debug/procmodel" PROCMODEL_BIN_RELEASE="$target/release/procmodel" \
    ./scripts/determinism.sh "debug release"
