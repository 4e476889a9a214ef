// gpu.h on Vulkan.
#include "gpu/gpu.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "gpu/vulkan/backend.h"
#include "gpu/vulkan/check.h"
#include "gpu/vulkan/instance.h"
#include "test_hooks/test_hooks.h"

namespace dmlgrad {

std::vector<GpuDeviceInfo> list_gpu_devices() {
    vk::Instance instance;
    std::vector<GpuDeviceInfo> out;
    for (const vk::PhysicalDevice& d : instance.physical_devices()) out.push_back(d.info);
    if (out.empty()) throw RuntimeFailure(std::string("no Vulkan device found: ") + vk::kNoDeviceAdvice);
    return out;
}

std::string gpu_api_version() {
    const vk::GlobalFunctions& g = vk::global_functions();
    uint32_t version = VK_API_VERSION_1_0;
    if (g.vkEnumerateInstanceVersion) g.vkEnumerateInstanceVersion(&version);  // absent: a Vulkan 1.0 loader
    return fmt::format("Vulkan loader {}.{}.{}", VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version),
                       VK_API_VERSION_PATCH(version));
}

int preferred_gpu_device() {
    vk::Instance instance;
    return vk::choose_device(instance.physical_devices(), std::nullopt);
}

std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index) {
    vk::VulkanOptions options;
    options.max_allocation_cap = test_hooks::gpu_allocation_cap();
    return vk::make_vulkan_backend(device_index, options);
}

}  // namespace dmlgrad
