#!/usr/bin/env bash
# The GNU parallel recipe of docs/BATCH.md, as shipped (samples/batch/parallel.sh): 4 shards cover a manifest.
set -euo pipefail
dmlgrad=$(readlink -f "$1")
samples=$(readlink -f "$2")
source "$(dirname "$0")/manifest.sh"
command -v parallel >/dev/null || { echo "FAIL: GNU parallel is not installed (scripts/install-deps.sh installs it)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_batch_folder "$work" 14
(cd "$work" && DMLGRAD="$dmlgrad" bash "$samples/batch/parallel.sh" jobs.txt 4)
expect_all_outputs "$work" 14
[[ $(grep -c "batch jobs.txt --shard" "$work/dmlgrad-parallel.log") -eq 4 ]] || { echo "FAIL: not 4 shards"; exit 1; }

# The one-liner of docs/BATCH.md, after removing some outputs: --skip-existing redoes only those.
rm "$work"/out/o3.npy "$work"/out/o10.npy
(cd "$work" && parallel "$dmlgrad" batch jobs.txt --shard {}/4 --skip-existing -q ::: 0 1 2 3)
expect_all_outputs "$work" 14
echo "GNU parallel recipe: every output correct"
