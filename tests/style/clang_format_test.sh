#!/usr/bin/env bash
# The C++ sources (src/, tests/, fuzz/, the kernels' shared interface headers) are formatted as .clang-format says.
# Lists the files that are not; `make format` rewrites them. clang-format 14 (Debian 12's) is the reference: other
# versions may format a few constructs differently.
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format not found: install Debian's clang-format" >&2; exit 1; }
mapfile -t files < <(find src tests fuzz kernels/interface -name '*.cpp' -o -name '*.h' | sort)
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "not formatted as .clang-format says (run: make format): ${unformatted[*]}" >&2
  exit 1
fi
echo "${#files[@]} files formatted"
