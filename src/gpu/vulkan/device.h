#pragma once
// The logical device on one physical device: its compute queue, the limits dmlgrad plans with, memory types.
#include <algorithm>
#include <cstdint>
#include <string>

#include "gpu/vulkan/instance.h"

namespace dmlgrad::vk {

class Device {
public:
    // `instance` must outlive the device.
    Device(const Instance& instance, const PhysicalDevice& physical);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    VkDevice handle() const { return device_; }
    VkPhysicalDevice physical() const { return physical_; }
    const DeviceFunctions& fns() const { return fns_; }
    VkQueue queue() const { return queue_; }
    uint32_t queue_family() const { return queue_family_; }
    const std::string& name() const { return name_; }

    const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
    const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
    uint64_t max_allocation_bytes() const { return max_allocation_bytes_; }
    // Lowers the largest allocation, so tests can reach the out-of-memory path with small tensors.
    void cap_max_allocation(uint64_t bytes) { max_allocation_bytes_ = std::min(max_allocation_bytes_, bytes); }
    // Bits of the queue's timestamps that are valid; 0 when the queue cannot time (then the host times).
    uint32_t timestamp_valid_bits() const { return timestamp_bits_; }
    // Device memory the host can map directly (lavapipe, integrated GPUs): no staging copies needed.
    bool unified_memory() const { return unified_memory_; }
    // 64-bit integers in kernels (shaderInt64), enabled where the device has them.
    bool shader_int64() const { return shader_int64_; }

private:
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    DeviceFunctions fns_;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    std::string name_;
    VkPhysicalDeviceProperties properties_{};
    VkPhysicalDeviceMemoryProperties memory_{};
    uint64_t max_allocation_bytes_ = 0;
    uint32_t timestamp_bits_ = 0;
    bool unified_memory_ = false;
    bool shader_int64_ = false;
};

}  // namespace dmlgrad::vk
