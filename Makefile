# Two commands for a newcomer: `make run` and `make test`. Only these two install what is missing (apt-get);
# the other targets build with what is there (CMake then says precisely what is missing).
BUILD_DIR    ?= build
SANITIZE_DIR ?= build-sanitize
PREFIX       ?= /usr/local
JOBS         ?= $(shell nproc)
CMAKE_FLAGS  ?=

.PHONY: all deps configure build build-all run test test-release test-sanitize install package fuzz fuzz-smoke bench-cpu format dxbc clean

all: build

deps:
	@scripts/install-deps.sh

# The binary alone (and its man page): no test target, so `make run`, `make install` and `make package` are quick.
configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target dmlgrad

# Everything: the binary, the three test executables and the test-hook binary.
build-all: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Runs every subcommand once on the inputs in samples/ (on the GPU; lavapipe where there is no real GPU).
run: deps
	$(MAKE) build
	samples/run.sh $(BUILD_DIR)/dmlgrad

# Every test with GCC, warnings as errors; then the whole suite again in a Clang build under AddressSanitizer and
# UndefinedBehaviorSanitizer, warnings as errors there too (one build checks Clang's warnings and the sanitizers);
# then a short run of every fuzz target.
test: deps
	$(MAKE) test-release CMAKE_FLAGS=-DDMLGRAD_WERROR=ON
	$(MAKE) test-sanitize
	$(MAKE) fuzz-smoke

test-release: build-all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# -O1 and line tables only (-g1): a sanitizer report still names file and line, and a file compiles in a third of
# -O2 -g's time (README.md, Tests).
# The kernels are not compiled again: they are copied from $(BUILD_DIR) (cmake/hlsl_kernels.cmake).
SANITIZE_FLAGS = -O1 -g1 -DNDEBUG
test-sanitize: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target kernels
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZE_FLAGS)" \
	  -DCMAKE_CXX_COMPILER=clang++ -DDMLGRAD_SANITIZE=ON -DDMLGRAD_WERROR=ON -DDMLGRAD_KERNELS_FROM=$(abspath $(BUILD_DIR))
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS)

# The binary, README, docs and bash completion under $(PREFIX).
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# $(BUILD_DIR)/dmlgrad_<version>_amd64.deb
package: build
	cd $(BUILD_DIR) && cpack -G DEB

# libFuzzer targets (.npy reader, number parsers, each operator) with clang, ASan and UBSan: FUZZ_SECONDS per
# target (default 15), or FUZZ_RUNS executions; docs/FUZZING.md.
fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),15) fuzz/run.sh

# What `make test` runs: every target for 5 seconds.
fuzz-smoke:
	FUZZ_SECONDS=5 fuzz/run.sh

# CPU figures of docs/PERFORMANCE.md: dmlgrad --cpu against PyTorch's CPU kernels on this machine.
bench-cpu: build
	@scripts/install-deps.sh --bench
	/usr/bin/python3 bench/cpu_bench.py --dmlgrad $(BUILD_DIR)/dmlgrad

# Rewrites the C++ sources as .clang-format says (the ctest style_clang_format checks it).
format:
	find src tests fuzz kernels/interface -name '*.cpp' -o -name '*.h' | xargs clang-format -i

# Regenerates the committed DXBC (kernels/dxbc/) of the Direct3D 12 variants; needs vkd3d-compiler on PATH.
dxbc: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target dxbc

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
