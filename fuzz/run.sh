#!/bin/sh
# Builds the libFuzzer targets with Debian's clang (-fsanitize=fuzzer,address,undefined) into fuzz/build and runs
# each for FUZZ_SECONDS (default 15), or for FUZZ_RUNS executions when that is set, from its committed seed corpus
# (fuzz/corpus/<target>, and tests/data/npy for npy). The library sources are compiled once into an archive that
# every target links. New inputs go to a scratch corpus, not the committed one; a crash leaves its input in
# fuzz/build and fails the script. docs/FUZZING.md says what each target checks.
#   fuzz/run.sh [target...]     targets: npy numbers relu clip slice maxpool resample (all when none given)
set -eu
cd "$(dirname "$0")/.."
CXX=${FUZZ_CXX:-clang++}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-15}
OUT=fuzz/build
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT/obj"
SANITIZERS="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
FLAGS="-std=c++20 -O1 -g $SANITIZERS -Isrc -DSPDLOG_COMPILED_LIB"  # spdlog as CMake builds it (CMakeLists.txt)
LIB_SOURCES="src/core/*.cpp src/io/*.cpp src/ops/*.cpp src/cpu/*.cpp src/cli/list_parsing.cpp"
LIB="$OUT/libdmlgrad_fuzz.a"

# Every library source once (-fsanitize=fuzzer-no-link: coverage without a main), in parallel; all again when a
# header changed.
build_library() {
    newest_header=$(find src -name '*.h' -newer "$LIB" 2>/dev/null | head -1)
    [ -f "$LIB" ] && [ -z "$newest_header" ] && [ -z "$(find src -name '*.cpp' -newer "$LIB" | head -1)" ] && return
    # shellcheck disable=SC2086  # the source list is a glob
    ls $LIB_SOURCES | xargs -P "$JOBS" -I{} sh -c \
        "$CXX $FLAGS -fsanitize=fuzzer-no-link -c {} -o $OUT/obj/\$(echo {} | tr / _).o"
    rm -f "$LIB"
    ar rcs "$LIB" "$OUT"/obj/*.o
}

build() {  # $1: target name, $2: its source
    [ "$OUT/$1" -nt "$2" ] && [ "$OUT/$1" -nt "$LIB" ] && [ "$OUT/$1" -nt fuzz/fuzz_input.h ] && return
    $CXX $FLAGS -fsanitize=fuzzer -o "$OUT/$1" "$2" "$LIB" -pthread
}

run() {  # $1: target name, then extra seed folders
    t=$1
    shift
    scratch="$OUT/corpus-$t"
    mkdir -p "$scratch"
    limit="-max_total_time=$SECONDS_PER_TARGET"
    [ -n "${FUZZ_RUNS:-}" ] && limit="-runs=$FUZZ_RUNS"
    status=0
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$OUT/$t" $limit -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
      -artifact_prefix="$OUT/$t-" -print_final_stats=1 "$scratch" "fuzz/corpus/$t" "$@" >"$OUT/$t.log" 2>&1 ||
      status=$?
    echo "$t: $(grep -E '^stat::number_of_executed_units' "$OUT/$t.log" | awk '{print $2}') executions," \
         "$(grep -E '^stat::average_exec_per_sec' "$OUT/$t.log" | awk '{print $2}') per second"
    grep -E 'ERROR|SUMMARY|Test unit written' "$OUT/$t.log" || true
    [ "$status" -eq 0 ] || { echo "fuzz/run.sh: $t failed (log: $OUT/$t.log)" >&2; exit 1; }
}

TARGETS=${*:-npy numbers relu clip slice maxpool resample}
build_library
for t in $TARGETS; do
    case $t in
        npy) build npy fuzz/npy_reader_fuzz.cpp; run npy tests/data/npy ;;  # + the unit tests' edge corpus
        numbers) build numbers fuzz/number_parsers_fuzz.cpp; run numbers ;;
        relu | clip | slice | maxpool | resample) build "$t" "fuzz/${t}_grad_fuzz.cpp"; run "$t" ;;
        *) echo "fuzz/run.sh: unknown target '$t' (npy numbers relu clip slice maxpool resample)" >&2; exit 2 ;;
    esac
done
