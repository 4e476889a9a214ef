#pragma once
// Shared by the GPU tests: one backend per configuration for the whole binary (instance and pipeline creation
// are the slow part on lavapipe), runs with poisoned outputs, and the one comparison of a GPU result with the CPU
// backend's (the --cpu path) on the same plan and inputs. The backends are those of one GPU API, tested_api():
// the binary runs once per API (tests/CMakeLists.txt), so every test written against gpu() runs on both.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu/gpu.h"
#include "ops/backend.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {

// The API of this run: Direct3D 12 when the environment has DMLGRAD_TEST_GPU_API=d3d12, else Vulkan.
GpuApi tested_api();

// The default device of tested_api(), with the output poisoned on the device before each kernel. Fails the test
// (not skips) when there is no device.
Backend& gpu();
// The same device with its limits lowered to `cap`, so that window and grid splitting run on small tensors.
Backend& gpu_with_limits(const DeviceLimits& cap);
// The same device through staging buffers and copies, as on a discrete GPU (Direct3D 12 always copies so).
Backend& gpu_with_staging();
// The CPU backend of --cpu (src/cpu/cpu_backend.h).
Backend& cpu();

// Runs `plan` with `inputs` (X then dY, or dY alone: Backend::run's order); the host output is poisoned first.
Tensor run_on(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs,
              ExecutionStats* stats = nullptr, int repeat = 1);
// The same on the CPU backend.
Tensor run_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs);

// Runs `plan` on the CPU backend and on `backend` and expects the same bits (every operator: README's --check
// section); the failure names the operator, dtype, shapes and parameters.
void expect_gpu_matches_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs, Backend& backend = gpu(),
                            int repeat = 1);
// The same for operators of one input (dY) and of two (X, dY), which may be temporaries.
void expect_gpu_matches_cpu(const Plan& plan, const Tensor& dy, Backend& backend = gpu(), int repeat = 1);
void expect_gpu_matches_cpu(const Plan& plan, const Tensor& x, const Tensor& dy, Backend& backend = gpu(),
                            int repeat = 1);

// One line naming the operator, dtype, shapes and parameters of `plan`.
std::string describe(const Plan& plan);

// A tensor filled with raw random bits (fast, for large tensors; floats then include NaNs and denormals).
Tensor random_bits(DType type, const Shape& shape, std::mt19937_64& rng);

// Small limits for split tests. kTinyLimits: 4 KiB bindings at 64-byte alignment (16 workgroups of uint4s
// each), 2 workgroups per dispatch. kFewGroups: 1 MiB bindings, 3 workgroups per dispatch.
inline constexpr DeviceLimits kTinyLimits{4096, 64, 2};
inline constexpr DeviceLimits kFewGroups{1 << 20, 256, 3};

}  // namespace dmlgrad::testing
