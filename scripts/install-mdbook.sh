#!/usr/bin/env bash
# Installs mdBook, which builds the documentation book in docs/, when the pinned version is
# not on PATH (Debian has no package of it). From source with cargo into ~/.cargo/bin: about
# five minutes on two busy cores.
set -euo pipefail
version=0.4.52
export PATH="$HOME/.cargo/bin:$PATH"
if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$version" ]; then
    cargo install mdbook --locked --version "$version"
fi
