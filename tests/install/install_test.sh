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
for f in share/doc/dmlgrad/README.md share/doc/dmlgrad/docs/BATCH.md share/doc/dmlgrad/docs/OPERATORS.md \
    share/doc/dmlgrad/samples/batch/parallel.sh share/doc/dmlgrad/copyright share/doc/dmlgrad/changelog.gz \
    share/man/man1/dmlgrad.1.gz share/bash-completion/completions/dmlgrad; do
    [[ -f $work/prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
# Every relative link of the installed README and docs leads to an installed file (links into the sources aside).
doc=$work/prefix/share/doc/dmlgrad
for page in "$doc"/README.md "$doc"/docs/*.md; do
    { grep -o '](\([a-z][a-zA-Z_./-]*\))' "$page" || true; } | sed 's/^](//; s/)$//; s/#.*//' | sort -u | while read -r link; do
        [[ $link == src/* || $link == ../src/* || $link == tests/* || $link == ../tests/* ]] && continue
        [[ -e $(dirname "$page")/$link ]] || { echo "FAIL: $page links to $link, not installed"; exit 1; }
    done
done
# The man page is the binary's --help: every subcommand and every flag of one of them.
man_text=$(zcat "$work/prefix/share/man/man1/dmlgrad.1.gz")
for word in relu-grad clip-grad slice-grad maxpool-grad resample-grad batch devices --end-padding --torch-mode; do
    grep -q -- "$word" <<<"$man_text" || { echo "FAIL: the man page lacks $word"; exit 1; }
done

(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package" >/dev/null)
deb=$(ls "$work"/package/dmlgrad_*_amd64.deb)
info=$(dpkg-deb -I "$deb")
grep -q "Depends: libvulkan1" <<<"$info" || { echo "FAIL: no Depends: libvulkan1 in $deb"; echo "$info"; exit 1; }
grep -q "Suggests: mesa-vulkan-drivers" <<<"$info" || { echo "FAIL: no Suggests in $deb"; exit 1; }
grep -q "Recommends: bash-completion" <<<"$info" || { echo "FAIL: no Recommends: bash-completion in $deb"; exit 1; }
grep -q "Maintainer: .*@" <<<"$info" && ! grep -q "Maintainer: .*@localhost" <<<"$info" ||
    { echo "FAIL: no real maintainer address in $deb"; exit 1; }
dpkg-deb -x "$deb" "$work/root"
file "$work/root/usr/bin/dmlgrad" | grep -q ", stripped" || { echo "FAIL: the packaged binary is not stripped"; exit 1; }
for f in copyright changelog.gz docs/OPERATORS.md samples/batch/slurm-array.sbatch; do
    [[ -f $work/root/usr/share/doc/dmlgrad/$f ]] || { echo "FAIL: $f not in $deb"; exit 1; }
done
# lintian (scripts/install-deps.sh installs it): no error, and no warning either.
if ! command -v lintian >/dev/null; then echo "FAIL: lintian is not installed (scripts/install-deps.sh)"; exit 1; fi
findings=$(lintian --fail-on error,warning "$deb" 2>&1) || { echo "FAIL: lintian on $deb:"; echo "$findings"; exit 1; }
run_relu "$work/root/usr/bin/dmlgrad" package
echo "prefix install and $(basename "$deb") run relu-grad"
