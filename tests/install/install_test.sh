#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, and the Debian package from CPack: both run an operator from where
# they were put.
set -euo pipefail
build=$1
samples=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_relu() {  # the installed binary on the samples, checked against the build's own result
    "$1" relu-grad -x "$samples/x.npy" -g "$samples/dy.npy" -o "$work/dx_$2.npy" --cpu -q
    "$build/dmlgrad" relu-grad -x "$samples/x.npy" -g "$samples/dy.npy" -o "$work/expected.npy" --cpu -q
    cmp -s "$work/dx_$2.npy" "$work/expected.npy" || { echo "FAIL: $2 result differs"; exit 1; }
}

cmake --install "$build" --prefix "$work/prefix" >/dev/null
"$work/prefix/bin/dmlgrad" --version | grep -q "^dmlgrad [0-9]" || { echo "FAIL: --version from the prefix"; exit 1; }
run_relu "$work/prefix/bin/dmlgrad" prefix
for f in share/doc/dmlgrad/README.md share/doc/dmlgrad/BATCH.md share/doc/dmlgrad/OPERATORS.md \
    share/bash-completion/completions/dmlgrad; do
    [[ -f $work/prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done

(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package" >/dev/null)
deb=$(ls "$work"/package/dmlgrad_*_amd64.deb)
info=$(dpkg-deb -I "$deb")
grep -q "Depends: libvulkan1" <<<"$info" || { echo "FAIL: no Depends: libvulkan1 in $deb"; echo "$info"; exit 1; }
grep -q "Suggests: mesa-vulkan-drivers" <<<"$info" || { echo "FAIL: no Suggests in $deb"; exit 1; }
dpkg-deb -x "$deb" "$work/root"
run_relu "$work/root/usr/bin/dmlgrad" package
echo "prefix install and $(basename "$deb") run relu-grad"
