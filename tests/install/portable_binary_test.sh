#!/usr/bin/env bash
# The binary needs nothing but glibc's own objects where it runs (fmt, spdlog and the C++ runtime are built in,
# the Vulkan loader is opened at run time).
set -euo pipefail
binary=$1
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|/lib64/ld-linux-x86-64\.so\.2|ld-linux-x86-64\.so\.2)$'
status=0
while read -r name _; do
    [[ $name =~ $allowed ]] || { echo "FAIL: $binary needs $name"; status=1; }
done < <(ldd "$binary")
[[ $status -eq 0 ]] && echo "ldd lists only glibc's objects"
exit $status
