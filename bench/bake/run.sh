#!/usr/bin/env bash
# Sharded bakes, 1 → 2 processes on one machine, for a 200-model scene and for a world, and
# the merge's throughput and memory (BENCHMARKS.md, "Sharded bakes").
#
#   cargo build --release -p procmodel && TMPDIR=/dev/shm bench/bake/run.sh [runs]
#
# Every process runs on one core (RAYON_NUM_THREADS=1, --jobs 1), as one process per core or
# node would on a cluster; "2 processes" is shards 0/2 and 1/2 side by side. Per run it
# prints, for the scene and the world:
#   wall      1 process / 2 processes (wall time) — the speed-up on this machine;
#   ceiling   the same 1-process bake twice side by side (double the work): 2·T1 / T(pair),
#             what this machine's two vCPUs give on this very workload;
#   cpu       CPU time of the 1-process bake / the larger shard's CPU time of the 2-process
#             bake — the speed-up on two cores that run independently (no duplicated work
#             shows as a figure near 2).
# then the merge of the world bake: bytes verified and written per second, and its peak RSS.
# Output under $TMPDIR (tmpfs keeps disk flushes out of a CPU measurement).
set -euo pipefail
cd "$(dirname "$0")/../.."
P=${PROCMODEL:-$PWD/target/release/procmodel}
RUNS=${1:-3}
W=${WORLD:-bench/worlds/w1025.toml}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export RAYON_NUM_THREADS=1
"$P" sweep examples/SpiralStaircase.luau --attr DegreesPerStep=10..209 --size 8,160,8 \
    -o "$T/scene200.rbxl" 2>/dev/null
now() { date +%s.%N; }
# shard I/N of $input into $1, its "user+sys" seconds into $2
shard() {
    /usr/bin/time -f "%U %S" -o "$2" "$P" bake "$input" --shard "$3" --out "$1" \
        ${extra[@]+"${extra[@]}"} >/dev/null
}
cpu() { awk '{ print $1 + $2 }' "$1"; }
for run in $(seq 1 "$RUNS"); do
    for what in scene world; do
        if [ $what = scene ]; then
            input="$T/scene200.rbxl"
            extra=()
        else
            input="$W"
            extra=(--tile-size 512 --tile-output glb,png)
        fi
        rm -rf "$T"/o*
        a=$(now)
        shard "$T/o1" "$T/c1" 0/1
        b=$(now)
        shard "$T/o2" "$T/c20" 0/2 &
        shard "$T/o2" "$T/c21" 1/2
        wait
        c=$(now)
        shard "$T/o3" "$T/cx" 0/1 &
        shard "$T/o4" "$T/cy" 0/1
        wait
        d=$(now)
        one=$(echo "$b - $a" | bc)
        two=$(echo "$c - $b" | bc)
        pair=$(echo "$d - $c" | bc)
        c1=$(cpu "$T/c1")
        cmax=$(printf '%s\n%s\n' "$(cpu "$T/c20")" "$(cpu "$T/c21")" | sort -g | tail -1)
        printf 'run %s %s: wall %.3fs / %.3fs = %.2fx, ceiling %.2fx, cpu %.2fs / %.2fs = %.2fx\n' \
            "$run" "$what" "$one" "$two" "$(echo "$one / $two" | bc -l)" \
            "$(echo "2 * $one / $pair" | bc -l)" "$c1" "$cmax" "$(echo "$c1 / $cmax" | bc -l)"
    done
    rm -rf "$T/merged"
    /usr/bin/time -f "%e %M" -o "$T/merge.time" "$P" bake --merge "$T/o2" -o "$T/merged" >"$T/merge.json"
    read -r secs kb <"$T/merge.time"
    bytes=$(grep -o '"verified_bytes": [0-9]*' "$T/merge.json" | grep -o '[0-9]*$')
    printf 'run %s world merge: %s bytes in %ss = %.0f MB/s, peak RSS %s kB\n' \
        "$run" "$bytes" "$secs" "$(echo "$bytes / 1000000 / $secs" | bc -l)" "$kb"
done
