// What gpu.cpp asks of Vulkan: its devices, the one it prefers and its loader's version.
#include "gpu/vulkan/vulkan_api.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "gpu/vulkan/check.h"
#include "gpu/vulkan/instance.h"

namespace dmlgrad::vk {

std::vector<GpuDeviceInfo> list_devices() {
    Instance instance;
    std::vector<GpuDeviceInfo> out;
    for (const PhysicalDevice& d : instance.physical_devices()) out.push_back(d.info);
    if (out.empty()) throw RuntimeFailure(std::string("no Vulkan device found: ") + kNoDeviceAdvice);
    return out;
}

int preferred_device() {
    Instance instance;
    return choose_device(instance.physical_devices(), std::nullopt);
}

std::string loader_version() {
    const GlobalFunctions& g = global_functions();
    uint32_t version = VK_API_VERSION_1_0;
    if (g.vkEnumerateInstanceVersion) g.vkEnumerateInstanceVersion(&version);  // absent: a Vulkan 1.0 loader
    return fmt::format("Vulkan loader {}.{}.{}", VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version),
                       VK_API_VERSION_PATCH(version));
}

}  // namespace dmlgrad::vk
