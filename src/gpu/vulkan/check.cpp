#include "gpu/vulkan/check.h"

#include <string>

#include "core/error.h"

namespace dmlgrad::vk {

const char* result_name(VkResult result) {
    switch (result) {
#define DMLGRAD_VK_NAME(r) \
    case r: return #r;
        DMLGRAD_VK_NAME(VK_SUCCESS)
        DMLGRAD_VK_NAME(VK_NOT_READY)
        DMLGRAD_VK_NAME(VK_TIMEOUT)
        DMLGRAD_VK_NAME(VK_INCOMPLETE)
        DMLGRAD_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
        DMLGRAD_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        DMLGRAD_VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
        DMLGRAD_VK_NAME(VK_ERROR_DEVICE_LOST)
        DMLGRAD_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
        DMLGRAD_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
        DMLGRAD_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
        DMLGRAD_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
        DMLGRAD_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
        DMLGRAD_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
        DMLGRAD_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
        DMLGRAD_VK_NAME(VK_ERROR_FRAGMENTED_POOL)
        DMLGRAD_VK_NAME(VK_ERROR_UNKNOWN)
        DMLGRAD_VK_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
        DMLGRAD_VK_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        DMLGRAD_VK_NAME(VK_ERROR_FRAGMENTATION)
        DMLGRAD_VK_NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef DMLGRAD_VK_NAME
        default: return "an unknown VkResult";
    }
}

void check(VkResult result, const char* call) {
    if (result == VK_SUCCESS) return;
    std::string message = std::string(call) + " failed: " + result_name(result);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY) message += " (out of GPU memory; try --cpu)";
    if (result == VK_ERROR_OUT_OF_HOST_MEMORY) message += " (out of host memory)";
    throw RuntimeFailure(message);
}

}  // namespace dmlgrad::vk
