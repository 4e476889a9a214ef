#pragma once
// The small interface every backend (CPU reference, Vulkan, later D3D12) implements.
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/plan.h"

namespace dmlgrad {

struct RunOptions {
    int repeat = 1;  // timed executions after the warm-up
};

// Times in milliseconds. kernel_ms holds one entry per timed execution.
struct ExecutionStats {
    double setup_ms = 0;     // device and pipeline set-up
    double upload_ms = 0;    // host to device
    double download_ms = 0;  // device to host
    std::vector<double> kernel_ms;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string kind() const = 0;         // "cpu" or "gpu"
    virtual std::string device_name() const = 0;  // what the report names
    // inputs: X then dY for relu/clip/max-pool; dY alone for slice and resample. `output` is allocated by the
    // caller with plan_output_info(plan); every element of it is written.
    virtual ExecutionStats run(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                               const RunOptions& options) = 0;
};

}  // namespace dmlgrad
