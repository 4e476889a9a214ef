#pragma once
// The test hooks, all in one place: knobs the end-to-end tests need to reach paths that correct inputs never
// reach. Each is declared here and defined twice: src/test_hooks/off.cpp (every hook off, no environment read)
// is linked into the `dmlgrad` users run; tests/hooks/test_hooks_from_environment.cpp (read from the
// environment) into the test binaries and into `dmlgrad_test_hooks`, the copy of the binary that the CLI tests
// run where they need a hook (CliHarness::run_with_hooks).
#include <cstdint>

namespace dmlgrad::test_hooks {

// DMLGRAD_TEST_CORRUPT_CHECK set: --check flips one bit of the other backend's result, so the exit-3 path of
// --check runs (the backends agree by design).
bool corrupt_check();

// DMLGRAD_TEST_CORRUPT_REPEAT=K: --deterministic flips one bit of run K's output (0: off), so the path of a
// run that differs runs (the kernels are deterministic by design).
int corrupt_repeat();

// DMLGRAD_TEST_GPU_ALLOCATION_CAP=N: the GPU backend takes N bytes as the largest allocation the device allows
// (0: the device's own), so the out-of-device-memory path runs without gigabyte files.
uint64_t gpu_allocation_cap();

// DMLGRAD_TEST_DELAY_FIRST_READ_MS=N: a batch's reader waits N ms before reading the first job, so that later jobs
// are read first every time and an outcome published out of manifest order shows, not by chance.
uint64_t first_read_delay_ms();

}  // namespace dmlgrad::test_hooks
