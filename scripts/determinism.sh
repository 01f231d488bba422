#!/usr/bin/env bash
# The determinism matrix (issue 14): locks every example generator and a multi-model scene
# with --jobs 1 and 2, at each noise SIMD level PROCMODEL_SIMD can force, in a debug and an
# optimised build, and requires one identical lockfile per input across all of them (the
# optimised build's lockfiles are compared with the debug build's). scripts/test.sh runs it
# (so .ci/run does) with the binaries it built:
#   ./scripts/determinism.sh                  both profiles, building what is missing
#   ./scripts/determinism.sh debug            one profile
# PROCMODEL_BIN_DEBUG=path / PROCMODEL_BIN_RELEASE=path use those binaries instead of
# building one (PROCMODEL_BIN=path: the binary for a single profile).
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=${1:-"debug release"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp examples/*.luau "$work/"
# No example draws noise, so a generator of the test fixtures does, through the SIMD grid
# fills the PROCMODEL_SIMD axis forces (the lock test's determinism check uses it too).
cp crates/cli/tests/fixtures/NoiseGrid.luau "$work/NoiseField.luau"
# A multi-model scene: every example generator as a ProceduralModel, with non-default sizes.
cat > "$work/scene.luau" <<'LUAU'
local storage = game:GetService("ServerStorage")
local names = { "CastleWall", "Cave", "LSystemTree", "MeshIsland", "NoiseField", "SpiralStaircase", "StoneCourtyard", "TableWithChairs", "WfcDungeon" }
for i, name in names do
    local m = Instance.new("ModuleScript")
    m.Name = name
    m.Source = SOURCES[name]
    m.Parent = storage
    for j = 1, 2 do
        local pm = Instance.new("ProceduralModel")
        pm.Name = name .. j
        pm.Generator = m
        pm.Size = Vector3.new(10 + 2 * j, 12, 10 + i)
        pm.Parent = workspace
    end
end
LUAU
# Inline the sources (plain scripts cannot read files).
{
    echo "local SOURCES = {}"
    for f in "$work"/*.luau; do
        n=$(basename "$f" .luau)
        case $n in scene*) continue ;; esac
        echo "SOURCES[\"$n\"] = [==========[$(cat "$f")]==========]"
    done
    cat "$work/scene.luau"
} > "$work/scene-full.luau"
first=""
for profile in $profiles; do
    given=""
    case $profile in
        debug) given=${PROCMODEL_BIN_DEBUG:-} ;;
        release) given=${PROCMODEL_BIN_RELEASE:-} ;;
    esac
    if [ -n "$given" ]; then
        bin="$given"
    elif [ -n "${PROCMODEL_BIN:-}" ]; then
        bin="$PROCMODEL_BIN"
    else
        flag=""; [ "$profile" = release ] && flag="--release"
        cargo build -q -p procmodel $flag
        bin="target/$profile/procmodel"
        [ -n "${CARGO_TARGET_DIR:-}" ] && bin="$CARGO_TARGET_DIR/$profile/procmodel"
    fi
    "$bin" run "$work/scene-full.luau" --save "$work/scene.rbxl" >/dev/null
    # Every level the noise crate can force (SimdLevel::name); one this CPU lacks is skipped,
    # any other failure fails the matrix.
    for simd in "" scalar sse2 avx2 avx512 avx512vbmi; do
        for jobs in 1 2; do
            tag="$profile-${simd:-auto}-j$jobs"
            mkdir -p "$work/$tag"
            # The noise generator first: it is what tells whether this level runs here.
            if ! PROCMODEL_SIMD=$simd "$bin" lock "$work/NoiseField.luau" -o "$work/$tag/NoiseField.lock" 2>"$work/$tag/err"; then
                if grep -q "is not available on this cpu" "$work/$tag/err"; then
                    echo "skip $tag: $(grep -m1 "not available" "$work/$tag/err")"
                    continue
                fi
                cat "$work/$tag/err"; exit 1
            fi
            if ! PROCMODEL_SIMD=$simd "$bin" lock "$work/scene.rbxl" --jobs "$jobs" -o "$work/$tag/scene.lock" 2>"$work/$tag/err"; then
                cat "$work/$tag/err"; exit 1
            fi
            for g in "$work"/*.luau; do
                case $(basename "$g") in scene*.luau | NoiseField.luau) continue ;; esac
                if ! PROCMODEL_SIMD=$simd "$bin" lock "$g" -o "$work/$tag/$(basename "$g" .luau).lock" 2>"$work/$tag/err"; then
                    echo "determinism: locking $(basename "$g") failed ($tag):" >&2
                    cat "$work/$tag/err" >&2; exit 1
                fi
            done
            # Lockfiles name their sources relative to themselves: compare from one folder.
            (cd "$work/$tag" && sha256sum ./*.lock | sed 's#\./##') > "$work/$tag.sums"
            if [ -z "$first" ]; then
                first="$tag"
            elif ! diff -u "$work/$first.sums" "$work/$tag.sums"; then
                echo "determinism: $tag differs from $first" >&2
                exit 1
            fi
            echo "ok $tag"
        done
    done
done
echo "one lockfile per input across: $profiles"
