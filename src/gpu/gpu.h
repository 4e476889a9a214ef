#pragma once
// The GPU side as the rest of the program sees it; each API behind it (Vulkan, Direct3D 12) stays in its own folder.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu/gpu_api.h"
#include "ops/backend.h"

namespace dmlgrad {

struct GpuDeviceInfo {
    int index = 0;
    std::string name;
    std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
    std::string driver;
    std::string api_version;
    uint64_t memory_bytes = 0;
};

// Whether this build has the API (Direct3D 12: when DirectX-Headers and vkd3d were found, see CMakeLists.txt).
bool gpu_api_built(GpuApi api);

// "Vulkan loader 1.3.239", "vkd3d 1.2.0 on Vulkan loader 1.3.239": the API's run-time library, as found. Throws
// RuntimeFailure when there is none.
std::string gpu_api_version(GpuApi api = GpuApi::vulkan);

// Every device the API reports, in its own order. Throws RuntimeFailure when the API is unavailable.
std::vector<GpuDeviceInfo> list_gpu_devices(GpuApi api = GpuApi::vulkan);

// What tests change in a GPU backend to reach paths a small tensor would not.
struct GpuBackendOptions {
    // RunOptions::repeat > 1: back-to-back untimed executions for this long first (the H100 idles at a low clock).
    double warmup_seconds = 0.3;
    // Fill dX on the device with 0xA5 bytes before the kernel, so an element the kernel misses shows (tests).
    bool poison_output = false;
    // Vulkan: use device-only buffers with staging copies even where memory is unified (the discrete-GPU path).
    bool force_staging = false;
    // Pretend the device has at most these limits (0: the device's own), so that the window and grid
    // splitting run on small tensors (tests).
    DeviceLimits limits_cap{0, 0, 0};
    // Pretend no single allocation may exceed this many bytes (0: the device's own limit), so the
    // out-of-memory path runs on small tensors (tests).
    uint64_t max_allocation_cap = 0;
};

// The backend of `api` on `device_index` (an index of list_gpu_devices(api)), or on the preferred device: discrete
// before integrated before virtual before CPU devices. Throws RuntimeFailure when there is no usable device.
std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index, GpuApi api = GpuApi::vulkan);
std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index, GpuApi api,
                                          const GpuBackendOptions& options);

// The index make_gpu_backend(std::nullopt) takes. Throws as it does when there is no usable device.
int preferred_gpu_device();

}  // namespace dmlgrad
