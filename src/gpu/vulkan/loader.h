#pragma once
// The Vulkan loader, opened at run time (dlopen) rather than linked: without libvulkan.so.1 the program still
// starts, `--cpu` still works, and the GPU path reports what to install. Function tables per level, as volk does.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

namespace dmlgrad::vk {

#define DMLGRAD_VK_GLOBAL_FUNCTIONS(X) \
    X(vkCreateInstance)                \
    X(vkEnumerateInstanceVersion)

#define DMLGRAD_VK_INSTANCE_FUNCTIONS(X)        \
    X(vkDestroyInstance)                        \
    X(vkEnumeratePhysicalDevices)               \
    X(vkGetPhysicalDeviceProperties)            \
    X(vkGetPhysicalDeviceProperties2)           \
    X(vkGetPhysicalDeviceFeatures)              \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetPhysicalDeviceMemoryProperties)      \
    X(vkEnumerateDeviceExtensionProperties)     \
    X(vkCreateDevice)                           \
    X(vkGetDeviceProcAddr)

#define DMLGRAD_VK_DEVICE_FUNCTIONS(X) \
    X(vkDestroyDevice)                 \
    X(vkGetDeviceQueue)                \
    X(vkDeviceWaitIdle)                \
    X(vkCreateBuffer)                  \
    X(vkDestroyBuffer)                 \
    X(vkGetBufferMemoryRequirements)   \
    X(vkAllocateMemory)                \
    X(vkFreeMemory)                    \
    X(vkBindBufferMemory)              \
    X(vkMapMemory)                     \
    X(vkUnmapMemory)                   \
    X(vkFlushMappedMemoryRanges)       \
    X(vkInvalidateMappedMemoryRanges)  \
    X(vkCreateShaderModule)            \
    X(vkDestroyShaderModule)           \
    X(vkCreateDescriptorSetLayout)     \
    X(vkDestroyDescriptorSetLayout)    \
    X(vkCreatePipelineLayout)          \
    X(vkDestroyPipelineLayout)         \
    X(vkCreateComputePipelines)        \
    X(vkDestroyPipeline)               \
    X(vkCreateDescriptorPool)          \
    X(vkDestroyDescriptorPool)         \
    X(vkAllocateDescriptorSets)        \
    X(vkUpdateDescriptorSets)          \
    X(vkCreateCommandPool)             \
    X(vkDestroyCommandPool)            \
    X(vkAllocateCommandBuffers)        \
    X(vkFreeCommandBuffers)            \
    X(vkBeginCommandBuffer)            \
    X(vkEndCommandBuffer)              \
    X(vkResetCommandBuffer)            \
    X(vkCmdBindPipeline)               \
    X(vkCmdBindDescriptorSets)         \
    X(vkCmdPushConstants)              \
    X(vkCmdDispatch)                   \
    X(vkCmdPipelineBarrier)            \
    X(vkCmdCopyBuffer)                 \
    X(vkCmdFillBuffer)                 \
    X(vkCmdWriteTimestamp)             \
    X(vkCmdResetQueryPool)             \
    X(vkCreateQueryPool)               \
    X(vkDestroyQueryPool)              \
    X(vkGetQueryPoolResults)           \
    X(vkCreateFence)                   \
    X(vkDestroyFence)                  \
    X(vkWaitForFences)                 \
    X(vkGetFenceStatus)                \
    X(vkResetFences)                   \
    X(vkQueueSubmit)

#define DMLGRAD_VK_DECLARE(name) PFN_##name name = nullptr;

struct GlobalFunctions {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    DMLGRAD_VK_GLOBAL_FUNCTIONS(DMLGRAD_VK_DECLARE)
};
struct InstanceFunctions {
    DMLGRAD_VK_INSTANCE_FUNCTIONS(DMLGRAD_VK_DECLARE)
};
struct DeviceFunctions {
    DMLGRAD_VK_DEVICE_FUNCTIONS(DMLGRAD_VK_DECLARE)
};

#undef DMLGRAD_VK_DECLARE

// Opens the loader once per process. Throws RuntimeFailure (suggesting --cpu) when there is none.
const GlobalFunctions& global_functions();
InstanceFunctions load_instance_functions(VkInstance instance);
DeviceFunctions load_device_functions(const InstanceFunctions& fns, VkDevice device);

}  // namespace dmlgrad::vk
