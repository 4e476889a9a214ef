#pragma once
// The GPU side as the rest of the program sees it; the API behind it (Vulkan today) stays in its own folder.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

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

// "Vulkan loader 1.3.239": the GPU API's run-time library, as found. Throws RuntimeFailure when there is none.
std::string gpu_api_version();

// Every device the GPU API reports, in its own order. Throws RuntimeFailure when the API is unavailable.
std::vector<GpuDeviceInfo> list_gpu_devices();

// The backend on `device_index` (an index of list_gpu_devices()), or on the preferred device: discrete before
// integrated before virtual before CPU devices. Throws RuntimeFailure when there is no usable device.
std::unique_ptr<Backend> make_gpu_backend(std::optional<int> device_index);

// The index make_gpu_backend(std::nullopt) takes. Throws as it does when there is no usable device.
int preferred_gpu_device();

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

// Outputs kept in device memory for a later run on the same backend that reads them: a chain of jobs (a batch job
// reading an earlier job's output) then moves each intermediate over the bus once, downloaded for its file and not
// uploaded again. A key names a file (the batch's file identity); the caller guarantees that a kept output and the
// file of its key hold the same bytes. The GPU backend implements it beside Backend; a run whose keys are set goes
// through Backend::run(), never OverlappedRuns.
class ResidentTensors {
public:
    // Outputs kept per backend at most (the oldest goes first): the memory bound of a batch's worker grows by this.
    static constexpr size_t kMaxKept = 2;

    virtual ~ResidentTensors() = default;
    // For the next Backend::run() only: input i is taken from the kept output `input_keys[i]` when there is one of
    // its size ("" or none: uploaded), and the output is kept under `output_key` ("": not kept).
    virtual void set_next_run_keys(std::vector<std::string> input_keys, std::string output_key) = 0;
    // How many inputs the last run took from device memory.
    virtual size_t resident_inputs_of_last_run() const = 0;
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
