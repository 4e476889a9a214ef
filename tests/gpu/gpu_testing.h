#pragma once
// Shared by the GPU tests: one backend per configuration for the whole binary (instance and pipeline creation
// are the slow part on lavapipe), runs with poisoned outputs, and a comparison against the CPU reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ops/backend.h"
#include "gpu/dispatch.h"
#include "gpu/vulkan/backend.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {

// The default device, with the output poisoned on the device before each kernel. Fails the test (not skips)
// when there is no Vulkan device.
Backend& gpu();
// The same device with its limits lowered to `cap`, so that window and grid splitting run on small tensors.
Backend& gpu_with_limits(const DeviceLimits& cap);
// The same device through staging buffers and copies, as on a discrete GPU.
Backend& gpu_with_staging();

// Runs `plan` with `inputs`; the host output is poisoned first, the device one too.
Tensor run_on(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs,
              ExecutionStats* stats = nullptr, int repeat = 1);
// The CPU reference of relu, clip or slice.
Tensor run_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs);

// A tensor filled with raw random bits (fast, for large tensors; floats then include NaNs and denormals).
Tensor random_bits(DType type, const Shape& shape, std::mt19937_64& rng);

// Small limits for split tests. kTinyLimits: 4 KiB bindings at 64-byte alignment (16 workgroups of uint4s
// each), 2 workgroups per dispatch. kFewGroups: 1 MiB bindings, 3 workgroups per dispatch.
inline constexpr DeviceLimits kTinyLimits{4096, 64, 2};
inline constexpr DeviceLimits kFewGroups{1 << 20, 256, 3};

}  // namespace dmlgrad::testing
