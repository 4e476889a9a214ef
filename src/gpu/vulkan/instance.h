#pragma once
// The Vulkan instance and what it tells about the physical devices.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu.h"
#include "gpu/vulkan/loader.h"

namespace dmlgrad::vk {

// One physical device as seen through the instance.
struct PhysicalDevice {
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    GpuDeviceInfo info;  // what `dmlgrad devices` prints
    VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
    uint32_t api_version = 0;
    int compute_family = -1;  // queue family used for compute, -1 if none
    std::string unusable;     // why it cannot run dmlgrad's kernels; empty if it can
};

class Instance {
public:
    Instance();  // throws RuntimeFailure (suggesting --cpu) when Vulkan is missing
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    VkInstance handle() const { return instance_; }
    const InstanceFunctions& fns() const { return fns_; }
    uint32_t api_version() const { return api_version_; }

    // In the implementation's order; the index is the `--device` number.
    std::vector<PhysicalDevice> physical_devices() const;

private:
    VkInstance instance_ = VK_NULL_HANDLE;
    InstanceFunctions fns_;
    uint32_t api_version_ = 0;
};

// The index to use: `requested` when given (UsageError if out of range, RuntimeFailure if that device is
// unusable), else the preferred usable device: discrete, integrated, virtual, CPU, other.
int choose_device(const std::vector<PhysicalDevice>& devices, std::optional<int> requested);

}  // namespace dmlgrad::vk
