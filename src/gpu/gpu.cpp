// gpu.h: the API a caller names, Vulkan or Direct3D 12.
#include "gpu/gpu.h"

#include <string>

#include "core/error.h"
#include "gpu/vulkan/backend.h"
#include "gpu/vulkan/vulkan_api.h"
#include "test_hooks/test_hooks.h"
#ifdef DMLGRAD_HAVE_D3D12
#include "gpu/d3d12/backend.h"
#include "gpu/d3d12/runtime.h"
#endif

namespace dmlgrad {
namespace {

// Direct3D 12 where this build has it; otherwise the failure that says so.
void require_built(GpuApi api) {
    if (!gpu_api_built(api))
        throw RuntimeFailure(
            "this dmlgrad was built without Direct3D 12 (DirectX-Headers and vkd3d were not found "
            "when it was built): use --api vulkan");
}

}  // namespace

bool gpu_api_built([[maybe_unused]] GpuApi api) {
#ifdef DMLGRAD_HAVE_D3D12
    return true;
#else
    return api == GpuApi::vulkan;
#endif
}

std::vector<GpuDeviceInfo> list_gpu_devices(GpuApi api) {
    require_built(api);
#ifdef DMLGRAD_HAVE_D3D12
    if (api == GpuApi::d3d12) return d3d12::list_adapters();
#endif
    return vk::list_devices();
}

// Both APIs order their devices as Vulkan does (vkd3d is handed Vulkan's physical device), so they prefer the same.
int preferred_gpu_device() { return vk::preferred_device(); }

std::string gpu_api_version(GpuApi api) {
    require_built(api);
#ifdef DMLGRAD_HAVE_D3D12
    if (api == GpuApi::d3d12) return d3d12::runtime_version();
#endif
    return vk::loader_version();
}

std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index, GpuApi api,
                                          const GpuBackendOptions& options) {
    require_built(api);
#ifdef DMLGRAD_HAVE_D3D12
    if (api == GpuApi::d3d12) return d3d12::make_d3d12_backend(device_index, options);
#endif
    return vk::make_vulkan_backend(device_index, options);
}

std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index, GpuApi api) {
    GpuBackendOptions options;
    options.max_allocation_cap = test_hooks::gpu_allocation_cap();
    return make_gpu_backend(device_index, api, options);
}

}  // namespace dmlgrad
