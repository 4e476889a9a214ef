#!/bin/sh
# Builds the libFuzzer targets with Debian's clang (-fsanitize=fuzzer,address,undefined) into fuzz/build and runs
# each for FUZZ_SECONDS (default 15) from its committed seed corpus (fuzz/corpus/<target>, and tests/data/npy for npy). New inputs go to a
# scratch corpus, not the committed one; a crash leaves its input in fuzz/build and fails the script.
#   fuzz/run.sh [target...]     targets: npy numbers relu (all when none given)
set -eu
cd "$(dirname "$0")/.."
CXX=${FUZZ_CXX:-clang++-14}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-15}
OUT=fuzz/build
mkdir -p "$OUT"
FLAGS="-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Isrc"
LIB_SOURCES="src/core/*.cpp src/io/*.cpp src/ops/*.cpp src/cpu/*.cpp src/cli/list_parsing.cpp"

build() {  # $1: target name, $2: its source
    [ "$OUT/$1" -nt "$2" ] && [ -z "$(find src -newer "$OUT/$1" -name '*.cpp' -o -newer "$OUT/$1" -name '*.h')" ] && return
    # shellcheck disable=SC2086  # the source list is a glob
    $CXX $FLAGS -o "$OUT/$1" "$2" $LIB_SOURCES -lfmt -pthread
}

run() {  # $1: target name, then extra seed folders
    t=$1
    shift
    scratch="$OUT/corpus-$t"
    mkdir -p "$scratch"
    status=0
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$OUT/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
      -artifact_prefix="$OUT/$t-" -print_final_stats=1 "$scratch" "fuzz/corpus/$t" "$@" >"$OUT/$t.log" 2>&1 ||
      status=$?
    grep -E '^(Done|stat::number_of_executed_units)|ERROR|SUMMARY|Test unit written' "$OUT/$t.log" || true
    [ "$status" -eq 0 ] || { echo "fuzz/run.sh: $t failed (log: $OUT/$t.log)" >&2; exit 1; }
}

TARGETS=${*:-npy numbers relu}
for t in $TARGETS; do
    case $t in
        npy) build npy fuzz/npy_reader_fuzz.cpp && run npy tests/data/npy ;;  # + the unit tests' edge corpus
        numbers) build numbers fuzz/number_parsers_fuzz.cpp && run numbers ;;
        relu) build relu fuzz/relu_grad_fuzz.cpp && run relu ;;
        *) echo "fuzz/run.sh: unknown target '$t' (npy, numbers, relu)" >&2; exit 2 ;;
    esac
done
