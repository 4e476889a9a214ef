#!/usr/bin/env bash
# Direct3D 12 on the GPU machine: the GPU tests on D3D12 (vkd3d on the NVIDIA Vulkan driver), then the benchmark
# rows on both APIs side by side. Run from the repository root with the build carried along:
#
#   scripts/h100_d3d12.sh DEBS_DIR OUT_DIR
#
# DEBS_DIR holds Debian 12's libvkd3d1, libvkd3d-shader1 and libvkd3d-utils1 .debs (fetched on the development
# machine with `apt-get download libvkd3d1 libvkd3d-shader1 libvkd3d-utils1`); they are unpacked here beside the
# Vulkan loader, and dmlgrad opens libvkd3d.so.1 from LD_LIBRARY_PATH. Outputs (text and JSON) go to OUT_DIR.
set -euo pipefail
debs=${1:?DEBS_DIR}
out=${2:?OUT_DIR}
mkdir -p "$out"

root=$(mktemp -d)
for package in libvkd3d1 libvkd3d-shader1 libvkd3d-utils1; do
  deb=$(ls "$debs"/${package}_*.deb | head -n 1)
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$deb" "$root"
  else  # a .deb is an ar archive holding data.tar.*
    (cd "$root" && ar x "$deb" && tar xf data.tar.* && rm -f data.tar.* control.tar.* debian-binary)
  fi
done
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -z "${VK_DRIVER_FILES:-}" && -f $nvidia_icd ]]; then export VK_DRIVER_FILES=$nvidia_icd; fi

{ ./build/dmlgrad --version; ./build/dmlgrad devices; } 2>&1 | tee "$out/h100-d3d12-devices.txt"
# Every GPU test on D3D12 but the overlapped runs, which only the Vulkan backend implements.
DMLGRAD_TEST_GPU_API=d3d12 ./build/tests/dmlgrad_gpu_tests --gtest_filter='-GpuDeviceOverlappedRuns.*' 2>&1 |
  grep -v '^fixme:' | tee "$out/h100-d3d12-gputests.txt"
python3 bench/gpu_bench.py --dmlgrad ./build/dmlgrad --repeat 30 --api vulkan,d3d12 \
  --json-out "$out/h100-bench-both-apis.json" 2>&1 | tee "$out/h100-bench-both-apis.txt"
