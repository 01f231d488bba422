#!/usr/bin/env bash
# Merges a finished bake into one place and its lockfile; names the shards to rerun if any
# are missing. Run it as a dependent job or by hand:
#   sbatch --dependency=afterok:<jobid> deploy/slurm/merge.sh OUT_URL place.baked.rbxl
#SBATCH --job-name=procmodel-merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=8G
#SBATCH --time=01:00:00
#SBATCH --output=procmodel-merge-%j.log
set -euo pipefail

out="${1:?usage: merge.sh OUT_URL PLACE}"
place="${2:?usage: merge.sh OUT_URL PLACE}"
procmodel="${PROCMODEL:-procmodel}"

"$procmodel" bake --merge "$out" -o "$place"
