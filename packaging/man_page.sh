#!/usr/bin/env bash
# Writes dmlgrad.1.gz from the binary's own --help, the top level and each subcommand's, with help2man: the page
# is rebuilt with the binary, so it cannot drift from the flags. Usage: man_page.sh DMLGRAD VERSION OUTPUT.gz
set -euo pipefail
dmlgrad=$1 version=$2 output=$3
include=$(mktemp)
trap 'rm -f "$include"' EXIT
{
    echo "[SUBCOMMANDS]"
    for sub in relu-grad clip-grad slice-grad maxpool-grad resample-grad batch devices; do
        echo ".SS $sub"
        echo ".nf"
        "$dmlgrad" "$sub" --help | sed 's/\\/\\e/g; s/^\./\\\&./'
        echo ".fi"
    done
    echo "[SEE ALSO]"
    echo "The operators' semantics, worked examples and PyTorch, ONNX and numpy equivalents:"
    echo ".I /usr/share/doc/dmlgrad/docs/OPERATORS.md"
    echo "; batch runs, Slurm and GNU parallel:"
    echo ".I /usr/share/doc/dmlgrad/docs/BATCH.md"
    echo "; the flags shared by every operator, exit codes and --json:"
    echo ".I /usr/share/doc/dmlgrad/README.md"
    echo "."
} >"$include"
help2man --no-info --version-string="$version" --include="$include" \
    --name="DirectML's gradient operators on .npy files, on the GPU (Vulkan) or the CPU" "$dmlgrad" |
    gzip -9n >"$output"
