#pragma once
// The Vulkan backend behind gpu.h, with the knobs tests need to reach paths a small tensor would not.
#include <memory>
#include <optional>

#include "gpu/gpu.h"
#include "ops/backend.h"

namespace dmlgrad::vk {

using VulkanOptions = GpuBackendOptions;  // the knobs both GPU backends share (gpu.h)

// `device_index`: an index of list_gpu_devices(), or the preferred device.
std::unique_ptr<Backend> make_vulkan_backend(std::optional<int> device_index, const VulkanOptions& options = {});

}  // namespace dmlgrad::vk
