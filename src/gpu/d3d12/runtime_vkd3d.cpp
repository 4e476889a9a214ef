// runtime.h on Linux: vkd3d, the D3D12 API implemented on Vulkan. libvkd3d.so.1 is opened at run time, so the
// program starts (and --cpu and Vulkan work) without it; vkd3d is given the process's Vulkan loader, and its
// adapters are the Vulkan physical devices, in the Vulkan backend's order.
#include "gpu/d3d12/runtime.h"

#include <dlfcn.h>
#include <link.h>

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "core/error.h"
#include "gpu/vulkan/check.h"
#include "gpu/vulkan/instance.h"

#define VKD3D_NO_PROTOTYPES
#include <vkd3d.h>

namespace dmlgrad::d3d12 {
namespace {

constexpr const char* kLibrary = "libvkd3d.so.1";
constexpr const char* kMissingAdvice =
    "install vkd3d (the Debian package libvkd3d1), or use --api vulkan (the default) or --cpu";

struct Vkd3dFunctions {
    void* library = nullptr;
    PFN_vkd3d_create_instance create_instance = nullptr;
    PFN_vkd3d_instance_decref instance_decref = nullptr;
    PFN_vkd3d_instance_get_vk_instance get_vk_instance = nullptr;
    PFN_vkd3d_create_device create_device = nullptr;
    PFN_vkd3d_serialize_root_signature serialize_root_signature = nullptr;
};

template <class F>
void load(void* library, F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(library, name));
    if (!fn) throw RuntimeFailure(std::string(kLibrary) + " lacks " + name + ": " + kMissingAdvice);
}

Vkd3dFunctions open_vkd3d() {
    Vkd3dFunctions f;
    f.library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!f.library) throw RuntimeFailure(std::string("no Direct3D 12 runtime (") + kLibrary + "): " + kMissingAdvice);
    load(f.library, f.create_instance, "vkd3d_create_instance");
    load(f.library, f.instance_decref, "vkd3d_instance_decref");
    load(f.library, f.get_vk_instance, "vkd3d_instance_get_vk_instance");
    load(f.library, f.create_device, "vkd3d_create_device");
    load(f.library, f.serialize_root_signature, "vkd3d_serialize_root_signature");
    return f;  // the library stays open for the life of the process
}

const Vkd3dFunctions& vkd3d() {
    static const Vkd3dFunctions functions = open_vkd3d();
    return functions;
}

// The event behind a HANDLE: vkd3d signals it from its fence thread through the instance's pfn_signal_event.
struct Event {
    std::mutex mutex;
    std::condition_variable signalled_cv;
    bool signalled = false;
};

HRESULT signal_event(HANDLE handle) {
    auto* event = static_cast<Event*>(handle);
    {
        std::lock_guard lock(event->mutex);
        event->signalled = true;
    }
    event->signalled_cv.notify_all();
    return S_OK;
}

// A vkd3d instance, released when done with (a device keeps its own reference).
struct Instance {
    vkd3d_instance* handle = nullptr;
    Instance() {
        vkd3d_instance_create_info info{};
        info.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
        info.pfn_signal_event = signal_event;
        info.wchar_size = sizeof(WCHAR);
        info.pfn_vkGetInstanceProcAddr = vk::global_functions().vkGetInstanceProcAddr;
        if (FAILED(vkd3d().create_instance(&info, &handle)))
            throw RuntimeFailure(std::string("vkd3d could not create its Vulkan instance: ") + vk::kNoDeviceAdvice);
    }
    ~Instance() { vkd3d().instance_decref(handle); }
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
};

// The Vulkan physical devices of vkd3d's own instance: the same devices, in the same order, as the Vulkan
// backend's instance lists.
std::vector<VkPhysicalDevice> physical_devices(const Instance& instance) {
    const VkInstance vk_instance = vkd3d().get_vk_instance(instance.handle);
    const auto enumerate = reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(
        vk::global_functions().vkGetInstanceProcAddr(vk_instance, "vkEnumeratePhysicalDevices"));
    uint32_t count = 0;
    vk::check(enumerate(vk_instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    vk::check(enumerate(vk_instance, &count, devices.data()), "vkEnumeratePhysicalDevices");
    devices.resize(count);
    return devices;
}

// "1.2.0" from the library's file name (libvkd3d.so.1 links to libvkd3d.so.1.2.0); vkd3d has no version call.
std::string library_version() {
    link_map* map = nullptr;
    if (dlinfo(vkd3d().library, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return "";
    std::error_code error;
    const std::string file = std::filesystem::canonical(map->l_name, error).filename().string();
    const std::string prefix = std::string(kLibrary) + ".";
    return error || file.rfind(prefix, 0) != 0 ? "" : "1." + file.substr(prefix.size());
}

}  // namespace

std::string runtime_version() {
    vkd3d();
    const std::string version = library_version();
    return "vkd3d" + (version.empty() ? std::string() : " " + version) + " on " + gpu_api_version(GpuApi::vulkan);
}

std::vector<GpuDeviceInfo> list_adapters() {
    vkd3d();
    std::vector<GpuDeviceInfo> adapters;
    for (const vk::PhysicalDevice& d : vk::Instance().physical_devices()) {
        GpuDeviceInfo info = d.info;
        info.driver = "vkd3d on " + info.driver;
        info.api_version = "feature level 11_0 (Vulkan " + info.api_version + ")";
        adapters.push_back(std::move(info));
    }
    if (adapters.empty()) throw RuntimeFailure(std::string("no Vulkan device for vkd3d: ") + vk::kNoDeviceAdvice);
    return adapters;
}

int choose_adapter(std::optional<int> requested) {
    return vk::choose_device(vk::Instance().physical_devices(), requested);
}

void* create_device(int index, const void* iid) {
    Instance instance;
    const std::vector<VkPhysicalDevice> devices = physical_devices(instance);
    if (index < 0 || size_t(index) >= devices.size())
        throw std::logic_error("d3d12: adapter " + std::to_string(index) + " is not one vkd3d lists");
    vkd3d_device_create_info info{};
    info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
    info.instance = instance.handle;
    info.vk_physical_device = devices[size_t(index)];
    void* device = nullptr;
    const HRESULT result = vkd3d().create_device(&info, *static_cast<const IID*>(iid), &device);
    if (FAILED(result) || !device)
        throw RuntimeFailure("vkd3d could not create a Direct3D 12 device on adapter " + std::to_string(index) +
                             " (HRESULT " + std::to_string(uint32_t(result)) + ")");
    return device;
}

std::vector<uint8_t> serialize_root_signature(const void* desc) {
    ID3DBlob* blob = nullptr;
    ID3DBlob* error = nullptr;
    const HRESULT result = vkd3d().serialize_root_signature(static_cast<const D3D12_ROOT_SIGNATURE_DESC*>(desc),
                                                            D3D_ROOT_SIGNATURE_VERSION_1_0, &blob, &error);
    std::string message;
    if (error) {
        message.assign(static_cast<const char*>(error->GetBufferPointer()), error->GetBufferSize());
        error->Release();
    }
    if (FAILED(result) || !blob) throw std::logic_error("d3d12: root signature refused: " + message);
    const auto* bytes = static_cast<const uint8_t*>(blob->GetBufferPointer());
    std::vector<uint8_t> serialized(bytes, bytes + blob->GetBufferSize());
    blob->Release();
    return serialized;
}

FenceEvent::FenceEvent() : handle_(new Event) {}

FenceEvent::~FenceEvent() { delete static_cast<Event*>(handle_); }

void FenceEvent::wait() {
    auto* event = static_cast<Event*>(handle_);
    std::unique_lock lock(event->mutex);
    event->signalled_cv.wait(lock, [event] { return event->signalled; });
    event->signalled = false;
}

}  // namespace dmlgrad::d3d12
