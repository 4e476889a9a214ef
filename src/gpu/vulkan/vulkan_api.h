#pragma once
// Vulkan's side of gpu.h's device listing and version (src/gpu/gpu.cpp chooses the API).
#include <string>
#include <vector>

#include "gpu/gpu.h"

namespace dmlgrad::vk {

std::vector<GpuDeviceInfo> list_devices();
int preferred_device();        // the index make_vulkan_backend(std::nullopt) takes
std::string loader_version();  // "Vulkan loader 1.3.239"

}  // namespace dmlgrad::vk
