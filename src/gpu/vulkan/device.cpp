#include "gpu/vulkan/device.h"

#include <vector>

#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {

Device::Device(const Instance& instance, const PhysicalDevice& physical)
    : physical_(physical.handle), queue_family_(uint32_t(physical.compute_family)), name_(physical.info.name) {
    const InstanceFunctions& ifns = instance.fns();

    VkPhysicalDeviceMaintenance3Properties maintenance3{};

    maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceProperties2 props2{};
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &maintenance3;
    ifns.vkGetPhysicalDeviceProperties2(physical_, &props2);
    properties_ = props2.properties;
    max_allocation_bytes_ = maintenance3.maxMemoryAllocationSize;
    ifns.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

    uint32_t family_count = 0;
    ifns.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    ifns.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
    timestamp_bits_ = families[queue_family_].timestampValidBits;
    // Timestamps on a compute-only queue need timestampComputeAndGraphics or a graphics-capable family.
    const bool graphics = families[queue_family_].queueFlags & VK_QUEUE_GRAPHICS_BIT;
    if (!properties_.limits.timestampComputeAndGraphics && !graphics) timestamp_bits_ = 0;

    // Unified: not a discrete GPU, and a memory type that is both device-local and host-visible.
    if (properties_.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        const VkMemoryPropertyFlags both = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        for (uint32_t t = 0; t < memory_.memoryTypeCount; ++t)
            if ((memory_.memoryTypes[t].propertyFlags & both) == both) unified_memory_ = true;
    }

    VkPhysicalDeviceFeatures supported{};
    ifns.vkGetPhysicalDeviceFeatures(physical_, &supported);
    VkPhysicalDeviceFeatures enabled{};
    enabled.shaderInt64 = supported.shaderInt64;
    shader_int64_ = supported.shaderInt64 == VK_TRUE;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{};
    queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue_info.queueFamilyIndex = queue_family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.pEnabledFeatures = &enabled;
    check(ifns.vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
    try {
        fns_ = load_device_functions(ifns, device_);
    } catch (...) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(ifns.vkGetDeviceProcAddr(device_, "vkDestroyDevice"));
        if (destroy) destroy(device_, nullptr);
        throw;
    }
    fns_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
}

Device::~Device() {
    if (device_) {
        fns_.vkDeviceWaitIdle(device_);
        fns_.vkDestroyDevice(device_, nullptr);
    }
}

}  // namespace dmlgrad::vk
