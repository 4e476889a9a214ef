#!/usr/bin/env bash
# The layers of docs/ARCHITECTURE.md: every #include "<folder>/..." of a source file names its own folder or one
# the table below allows (the layers beneath it, and the seams: kernels/interface for gpu, test_hooks for gpu
# and cli). CMake links the same layers (one static library each); this catches an include that would compile
# against a header of a layer above or beside.
set -euo pipefail
root=$1
declare -A allowed=(
    [core]="core"
    [io]="core io"
    [ops]="core ops"
    [cpu]="core ops cpu"
    [gpu]="core ops gpu interface test_hooks"
    [cli]="core io ops cpu gpu cli test_hooks"
    [test_hooks]="test_hooks"
)
failed=0
for layer in "${!allowed[@]}"; do
    while IFS=: read -r file line folder; do
        if [[ " ${allowed[$layer]} " != *" $folder "* ]]; then
            echo "FAIL: $file:$line: src/$layer includes $folder/ (allowed: ${allowed[$layer]})"
            failed=1
        fi
    done < <(grep -rnoE '^#include "[a-z_]+/' "$root/src/$layer" --include='*.h' --include='*.cpp' |
             sed -E 's|^([^:]+):([0-9]+):#include "([a-z_]+)/$|\1:\2:\3|')
done
# The kernels' interface headers are read by HLSL too: they include nothing but each other.
if grep -rnE '^#include "' "$root/kernels/interface" | grep -vE '#include "interface/'; then
    echo "FAIL: kernels/interface includes a header outside it"
    failed=1
fi
for folder in "$root"/src/*/; do
    name=$(basename "$folder")
    [[ -n ${allowed[$name]+set} ]] || { echo "FAIL: src/$name is no layer of this table"; failed=1; }
done
[[ $failed == 0 ]] && echo "every include follows the layers"
exit $failed
