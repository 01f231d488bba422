#!/usr/bin/env bash
# Sharded bakes, 1 → 2 processes on one machine, for a 200-model scene and for a world, and
# the merge's throughput and memory (BENCHMARKS.md, "Sharded bakes").
#
#   cargo build --release -p procmodel && bench/bake/run.sh [runs]
#
# Every process runs on one core (RAYON_NUM_THREADS=1, --jobs 1), as one process per core or
# node would on a cluster; "2 processes" is shards 0/2 and 1/2 side by side. Prints one line
# per measurement (seconds are wall time; the median of `runs` back-to-back pairs is what
# BENCHMARKS.md quotes).
set -euo pipefail
cd "$(dirname "$0")/../.."
P=${PROCMODEL:-target/release/procmodel}
RUNS=${1:-3}
W=${WORLD:-bench/worlds/w1025.toml}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export RAYON_NUM_THREADS=1
"$P" sweep examples/SpiralStaircase.luau --attr DegreesPerStep=10..209 --size 8,160,8 \
    -o "$T/scene200.rbxl" 2>/dev/null
now() { date +%s.%N; }
bake_one() { # input out extra...
    local input=$1 out=$2
    shift 2
    "$P" bake "$input" --shard 0/1 --out "$out" "$@" >/dev/null
}
bake_two() {
    local input=$1 out=$2
    shift 2
    "$P" bake "$input" --shard 0/2 --out "$out" "$@" >/dev/null &
    "$P" bake "$input" --shard 1/2 --out "$out" "$@" >/dev/null
    wait
}
for run in $(seq 1 "$RUNS"); do
    for what in scene world; do
        if [ $what = scene ]; then
            input="$T/scene200.rbxl"
            extra=()
        else
            input="$W"
            extra=(--tile-size 512 --tile-output glb,png)
        fi
        rm -rf "$T/one" "$T/two"
        a=$(now)
        bake_one "$input" "$T/one" "${extra[@]+"${extra[@]}"}"
        b=$(now)
        bake_two "$input" "$T/two" "${extra[@]+"${extra[@]}"}"
        c=$(now)
        one=$(echo "$b - $a" | bc)
        two=$(echo "$c - $b" | bc)
        echo "run $run $what: 1 process ${one}s, 2 processes ${two}s, speed-up $(echo "scale=3; $one / $two" | bc)"
    done
    rm -rf "$T/merged"
    /usr/bin/time -f "%e %M" -o "$T/merge.time" "$P" bake --merge "$T/two" -o "$T/merged" >"$T/merge.json"
    read -r secs kb <"$T/merge.time"
    bytes=$(grep -o '"verified_bytes": [0-9]*' "$T/merge.json" | grep -o '[0-9]*$')
    echo "run $run world merge: ${bytes} bytes in ${secs}s = $(echo "scale=1; $bytes / 1000000 / $secs" | bc) MB/s, peak RSS ${kb} kB"
done
