#!/usr/bin/env bash
# Installs the Debian packages dmlgrad needs to build, test and run, skipping those already present.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang pkg-config                # clang: `make test` builds once with it too
  clang-format                                          # the style check of `make test` (.clang-format)
  libclang-rt-dev                                       # clang's libFuzzer and sanitizers: make fuzz-smoke
  libcli11-dev libfmt-dev libspdlog-dev libgtest-dev   # command line, formatting, logging, tests
  libvulkan-dev glslc mesa-vulkan-drivers               # Vulkan loader, HLSL -> SPIR-V, lavapipe (CPU Vulkan)
  directx-headers-dev libvkd3d-dev libvkd3d1           # Direct3D 12: DirectX-Headers' API, vkd3d (D3D12 on Vulkan)
  parallel slurm-wlm munge util-linux                   # the batch recipes' tests: GNU parallel, a Slurm array, script
  help2man lintian file python3                         # the man page from --help; the package and docs tests
)
if [[ "${1:-}" == "--bench" ]]; then packages+=(python3-numpy python3-torch); fi

# Without apt (another distribution), say what is needed and carry on: CMake then names what is missing.
if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
  echo "no apt-get here: install the equivalents of these Debian packages yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
