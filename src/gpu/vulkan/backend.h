#pragma once
// The Vulkan backend behind gpu.h, with the knobs tests need to reach paths a small tensor would not.
#include <memory>
#include <optional>

#include "gpu/dispatch.h"
#include "ops/backend.h"

namespace dmlgrad::vk {

struct VulkanOptions {
    // RunOptions::repeat > 1: back-to-back untimed executions for this long first (the H100 idles at a low clock).
    double warmup_seconds = 0.3;
    // Fill dX on the device with 0xA5 bytes before the kernel, so an element the kernel misses shows (tests).
    bool poison_output = false;
    // Use device-only buffers with staging copies even where memory is unified: the discrete-GPU path (tests).
    bool force_staging = false;
    // Pretend the device has at most these limits (0: the device's own), so that the window and grid
    // splitting run on small tensors (tests).
    DeviceLimits limits_cap{0, 0, 0};
    // Pretend no single allocation may exceed this many bytes (0: the device's own limit), so the
    // out-of-memory path runs on small tensors (tests).
    uint64_t max_allocation_cap = 0;
};

// `device_index`: an index of list_gpu_devices(), or the preferred device.
std::unique_ptr<Backend> make_vulkan_backend(std::optional<int> device_index, const VulkanOptions& options = {});

}  // namespace dmlgrad::vk
