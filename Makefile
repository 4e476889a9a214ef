# Two commands for a newcomer: `make run` and `make test`. Both install what is missing (apt-get) and build.
BUILD_DIR    ?= build
SANITIZE_DIR ?= build-sanitize
JOBS         ?= $(shell nproc)

.PHONY: all deps build run test test-release test-sanitize fuzz bench-cpu clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Runs every subcommand once on the inputs in samples/ (on the GPU; lavapipe where there is no real GPU).
run: build
	samples/run.sh $(BUILD_DIR)/dmlgrad

# Every test, then the whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
test: test-release test-sanitize

test-release: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

test-sanitize: deps
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMLGRAD_SANITIZE=ON
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS)

# libFuzzer targets (.npy reader, number parsers) with clang, ASan and UBSan: FUZZ_SECONDS per target (default 15).
fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),15) fuzz/run.sh

# CPU figures of docs/PERFORMANCE.md: dmlgrad --cpu against PyTorch's CPU kernels on this machine.
bench-cpu: build
	@scripts/install-deps.sh --bench
	/usr/bin/python3 bench/cpu_bench.py --dmlgrad $(BUILD_DIR)/dmlgrad

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
