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

// Memory for a run allocated before its inputs are ready. The single command calls reserve() on the thread that
// made the device, while its main thread reads the inputs and makes the output file: on an H100, 1 GiB of
// device memory took ~20 ms to allocate and 64 MiB of pinned staging memory ~25 ms, time that otherwise comes
// after both threads are done. The GPU backend implements it beside Backend.
class ReservedRuns {
public:
    virtual ~ReservedRuns() = default;
    // Allocates the device buffers and staging memory that Backend::run() of `plan` will use, so that run()
    // finds them made. Throws what run() would throw for them (RuntimeFailure: out of memory, too large).
    virtual void reserve(const Plan& plan) = 0;
};

// Runs overlapped on one device, as a batch worker needs them: start() copies a run's inputs and submits its work
// without waiting; finish() waits for the oldest started run and copies its output out. Starting run k+1 before
// finishing run k hides the device's latency (and run k's work) behind the host's copies of run k+1. The GPU
// backend implements it beside Backend; Backend::run() is only called with nothing started.
class OverlappedRuns {
public:
    // Runs that may be started and not yet finished.
    static constexpr size_t kMaxStarted = 2;

    virtual ~OverlappedRuns() = default;
    // Whether this run can be started (one timed execution, tensors of a size the overlap is for); if not, the
    // caller finishes what it started and uses Backend::run().
    virtual bool can_start(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output,
                           const RunOptions& options) const = 0;
    // The inputs may be released once it returns; `output` must live until the run's finish().
    virtual void start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) = 0;
    // The oldest started run's statistics once its output is filled (setup_ms: the device's creation, for a
    // first run, and the run's own set-up; upload_ms: the inputs' copy in start()).
    virtual ExecutionStats finish() = 0;
};

}  // namespace dmlgrad
