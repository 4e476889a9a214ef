#include "gpu/vulkan/instance.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {
namespace {

std::string version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

std::string type_name(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

int type_rank(VkPhysicalDeviceType type) {  // lower is preferred
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
        default: return 4;
    }
}

bool has_extension(const InstanceFunctions& fns, VkPhysicalDevice device, const char* name) {
    uint32_t count = 0;
    if (fns.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> extensions(count);
    if (fns.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()) != VK_SUCCESS)
        return false;
    return std::any_of(extensions.begin(), extensions.end(),
                       [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

Instance::Instance() {
    const GlobalFunctions& g = global_functions();
    // The newest API the loader offers, up to 1.3; dmlgrad needs 1.1 (its kernels target vulkan1.1).
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (g.vkEnumerateInstanceVersion) g.vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1)
        throw RuntimeFailure("the Vulkan loader offers only Vulkan " + version_string(loader_version) +
                             "; dmlgrad needs 1.1: " + kNoDeviceAdvice);
    api_version_ = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);

    VkApplicationInfo app{};

    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "dmlgrad";
    app.pEngineName = "dmlgrad";
    app.apiVersion = api_version_;
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    const VkResult created = g.vkCreateInstance(&info, nullptr, &instance_);
    if (created == VK_ERROR_INCOMPATIBLE_DRIVER)  // what the loader says when it finds no driver at all
        throw RuntimeFailure(std::string("no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER): ") +
                             kNoDeviceAdvice);
    check(created, "vkCreateInstance");
    try {
        fns_ = load_instance_functions(instance_);
    } catch (...) {
        auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(g.vkGetInstanceProcAddr(instance_, "vkDestroyInstance"));
        if (destroy) destroy(instance_, nullptr);
        throw;
    }
}

Instance::~Instance() {
    if (instance_) fns_.vkDestroyInstance(instance_, nullptr);
}

std::vector<PhysicalDevice> Instance::physical_devices() const {
    uint32_t count = 0;
    check(fns_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> handles(count);
    check(fns_.vkEnumeratePhysicalDevices(instance_, &count, handles.data()), "vkEnumeratePhysicalDevices");
    handles.resize(count);

    std::vector<PhysicalDevice> devices;
    for (uint32_t i = 0; i < count; ++i) {
        PhysicalDevice d;
        d.handle = handles[i];
        VkPhysicalDeviceProperties props{};
        fns_.vkGetPhysicalDeviceProperties(d.handle, &props);
        d.type = props.deviceType;
        d.api_version = props.apiVersion;
        d.info.index = int(i);
        d.info.name = props.deviceName;
        d.info.type = type_name(props.deviceType);
        d.info.api_version = version_string(props.apiVersion);

        // Driver name and info: core in 1.2, an extension before.
        const uint32_t effective = std::min(api_version_, props.apiVersion);
        if (effective >= VK_API_VERSION_1_2 || has_extension(fns_, d.handle, "VK_KHR_driver_properties")) {
            VkPhysicalDeviceDriverProperties driver{};
            driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
            VkPhysicalDeviceProperties2 props2{};
            props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
            props2.pNext = &driver;
            fns_.vkGetPhysicalDeviceProperties2(d.handle, &props2);
            d.info.driver = driver.driverName;
            if (driver.driverInfo[0]) d.info.driver += std::string(" (") + driver.driverInfo + ")";
        } else {
            d.info.driver = "driver version " + std::to_string(props.driverVersion);
        }

        VkPhysicalDeviceMemoryProperties memory{};
        fns_.vkGetPhysicalDeviceMemoryProperties(d.handle, &memory);
        for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
            if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
                d.info.memory_bytes = std::max<uint64_t>(d.info.memory_bytes, memory.memoryHeaps[h].size);

        // A compute queue, preferably one that can write timestamps.
        uint32_t family_count = 0;
        fns_.vkGetPhysicalDeviceQueueFamilyProperties(d.handle, &family_count, nullptr);
        std::vector<VkQueueFamilyProperties> families(family_count);
        fns_.vkGetPhysicalDeviceQueueFamilyProperties(d.handle, &family_count, families.data());
        for (uint32_t f = 0; f < family_count; ++f) {
            if (!(families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[f].queueCount == 0) continue;
            if (d.compute_family < 0 ||
                (families[f].timestampValidBits > 0 && families[size_t(d.compute_family)].timestampValidBits == 0))
                d.compute_family = int(f);
        }

        if (props.apiVersion < VK_API_VERSION_1_1)
            d.unusable = "it supports only Vulkan " + d.info.api_version + " (1.1 needed)";
        else if (d.compute_family < 0)
            d.unusable = "it has no compute queue";
        devices.push_back(std::move(d));
    }
    return devices;
}

int choose_device(const std::vector<PhysicalDevice>& devices, std::optional<int> requested) {
    if (devices.empty()) throw RuntimeFailure(std::string("no Vulkan device found: ") + kNoDeviceAdvice);
    if (requested) {
        const int n = int(devices.size());
        if (*requested < 0 || *requested >= n)
            throw UsageError("--device " + std::to_string(*requested) + ": no such device; there " +
                             (n == 1 ? "is 1 device (index 0)"
                                     : "are " + std::to_string(n) + " devices (0-" + std::to_string(n - 1) + ")") +
                             ", see `dmlgrad devices`");
        const PhysicalDevice& d = devices[size_t(*requested)];
        if (!d.unusable.empty())
            throw RuntimeFailure("device " + std::to_string(*requested) + " (" + d.info.name +
                                 ") cannot be used: " + d.unusable);
        return *requested;
    }
    int best = -1;
    for (const PhysicalDevice& d : devices) {
        if (!d.unusable.empty()) continue;
        if (best < 0 || type_rank(d.type) < type_rank(devices[size_t(best)].type)) best = d.info.index;
    }
    if (best < 0)
        throw RuntimeFailure("no usable Vulkan device (" + devices[0].info.name + ": " + devices[0].unusable +
                             "): " + kNoDeviceAdvice);
    return best;
}

}  // namespace dmlgrad::vk
