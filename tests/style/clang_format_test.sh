#!/usr/bin/env bash
# The C++ sources (src/, tests/, fuzz/, the kernels' shared interface headers) are formatted as .clang-format says.
# Lists the files that are not; `make format` rewrites them. clang-format 14 (Debian 12's) is the reference: other
# versions may format a few constructs differently.
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format not found: install Debian's clang-format" >&2; exit 1; }
mapfile -t files < <(find src tests fuzz kernels/interface -name '*.cpp' -o -name '*.h' | sort)
# One clang-format for every file (a process a file took 45 s); it names each unformatted file on stderr.
status=0
report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1 >/dev/null) || status=$?
if [[ $status -ne 0 ]]; then
  unformatted=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u | tr '\n' ' ' || true)
  echo "not formatted as .clang-format says (run: make format): ${unformatted:-$report}" >&2
  exit 1
fi
echo "${#files[@]} files formatted"
