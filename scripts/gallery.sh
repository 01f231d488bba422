#!/usr/bin/env bash
# Renders every example in examples/ through procmodel studio's viewport in Debian's headless
# chromium (playwright-core, no browser download) and writes the pictures to docs/gallery/,
# replacing the committed ones: the gallery test (crates/cli/tests/gallery.rs) with
# UPDATE_GALLERY=1. Look at the pictures before committing them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d crates/studio/tests/browser/node_modules ]; then
    npm ci --prefix crates/studio/tests/browser --no-audit --no-fund --loglevel=error
fi
UPDATE_GALLERY=1 cargo test -p procmodel --test gallery "$@" -- --nocapture every_example_renders
