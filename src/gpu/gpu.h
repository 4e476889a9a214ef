#pragma once
// The GPU side as the rest of the program sees it; the API behind it (Vulkan today) stays in its own folder.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/backend.h"

namespace dmlgrad {

struct GpuDeviceInfo {
    int index = 0;
    std::string name;
    std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
    std::string driver;
    std::string api_version;
    uint64_t memory_bytes = 0;
};

// "Vulkan loader 1.3.239": the GPU API's run-time library, as found. Throws RuntimeFailure when there is none.
std::string gpu_api_version();

// Every device the GPU API reports, in its own order. Throws RuntimeFailure when the API is unavailable.
std::vector<GpuDeviceInfo> list_gpu_devices();

// The backend on `device_index` (an index of list_gpu_devices()), or on the preferred device: discrete before
// integrated before virtual before CPU devices. Throws RuntimeFailure when there is no usable device.
std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index);

// The index make_gpu_backend(std::nullopt) takes. Throws as it does when there is no usable device.
int preferred_gpu_device();

}  // namespace dmlgrad
