#!/usr/bin/env bash
# Runs every dmlgrad subcommand once on the inputs in this folder; results go to samples/out/.
set -euo pipefail
dmlgrad=$(readlink -f "${1:-build/dmlgrad}")
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
mkdir -p "$out"
run() { echo "\$ dmlgrad $*"; "$dmlgrad" "$@"; echo; }

run devices
run relu-grad --input "$here/x.npy" --input-gradient "$here/dy.npy" --output "$out/relu_dx.npy"
run relu-grad --input "$here/x_half.npy" --input-gradient "$here/dy_half.npy" --output "$out/relu_half_dx.npy" --check
run clip-grad --input "$here/x.npy" --input-gradient "$here/dy.npy" --output "$out/clip_dx.npy" --min -0.5 --max 0.5
run slice-grad --input-gradient "$here/dy_slice.npy" --output "$out/slice_dx.npy" --output-sizes 2,3,8,8 \
    --input-window-offsets 0,0,0,0 --input-window-sizes 2,3,7,7 --input-window-strides 1,1,2,2
run maxpool-grad --input "$here/x_pool.npy" --input-gradient "$here/dy_pool.npy" --output "$out/maxpool_dx.npy" \
    --window-size 3,3 --strides 2,2 --start-padding 1,1 --end-padding 1,1 --check
run resample-grad --input-gradient "$here/dy_resample.npy" --output "$out/resample_dx.npy" --output-sizes 1,2,8,8 \
    --interpolation-mode linear --scales 1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 --output-pixel-offsets 0,0,0.5,0.5 --json
run resample-grad --input-gradient "$here/dy_resample.npy" --output "$out/resample_cpu_dx.npy" --output-sizes 1,2,8,8 \
    --interpolation-mode nearest --cpu --repeat 5
echo "\$ dmlgrad batch batch/jobs.txt   # from samples/: every operator again, one device set-up"
(cd "$here" && "$dmlgrad" batch batch/jobs.txt)
echo
echo "results in $out"
