#include "gpu/vulkan/loader.h"

#include <dlfcn.h>

#include <string>

#include "core/error.h"
#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {
namespace {

GlobalFunctions open_loader() {
    void* library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!library) throw RuntimeFailure(std::string("no Vulkan loader (libvulkan.so.1): ") + kNoDeviceAdvice);
    GlobalFunctions g;
    g.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
    if (!g.vkGetInstanceProcAddr)
        throw RuntimeFailure(std::string("the Vulkan loader lacks vkGetInstanceProcAddr: ") + kNoDeviceAdvice);
#define DMLGRAD_VK_LOAD(name) g.name = reinterpret_cast<PFN_##name>(g.vkGetInstanceProcAddr(nullptr, #name));
    DMLGRAD_VK_GLOBAL_FUNCTIONS(DMLGRAD_VK_LOAD)
#undef DMLGRAD_VK_LOAD
    if (!g.vkCreateInstance)
        throw RuntimeFailure(std::string("the Vulkan loader lacks vkCreateInstance: ") + kNoDeviceAdvice);
    return g;  // the library stays open for the life of the process
}

template <class F>
void require(F* fn, const char* name) {
    if (!fn) throw RuntimeFailure(std::string("the Vulkan implementation lacks ") + name + " (Vulkan 1.1 needed)");
}

}  // namespace

const GlobalFunctions& global_functions() {
    static const GlobalFunctions functions = open_loader();
    return functions;
}

InstanceFunctions load_instance_functions(VkInstance instance) {
    const auto get = global_functions().vkGetInstanceProcAddr;
    InstanceFunctions f;
#define DMLGRAD_VK_LOAD(name)                                    \
    f.name = reinterpret_cast<PFN_##name>(get(instance, #name)); \
    require(f.name, #name);
    DMLGRAD_VK_INSTANCE_FUNCTIONS(DMLGRAD_VK_LOAD)
#undef DMLGRAD_VK_LOAD
    return f;
}

DeviceFunctions load_device_functions(const InstanceFunctions& fns, VkDevice device) {
    DeviceFunctions f;
#define DMLGRAD_VK_LOAD(name)                                                      \
    f.name = reinterpret_cast<PFN_##name>(fns.vkGetDeviceProcAddr(device, #name)); \
    require(f.name, #name);
    DMLGRAD_VK_DEVICE_FUNCTIONS(DMLGRAD_VK_LOAD)
#undef DMLGRAD_VK_LOAD
    return f;
}

}  // namespace dmlgrad::vk
