#pragma once
// The small interface every backend (CPU reference, Vulkan, later D3D12) implements. It lives with the plans it
// runs: core knows nothing of operators, and the backends depend on ops, not the other way round.
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
    std::string kernel;  // the GPU kernel that ran (its name in the kernel registry); "" on the CPU
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string kind() const = 0;         // "cpu" or "gpu"
    virtual std::string device_name() const = 0;  // what the report names

    // Runs the plan once (or options.repeat times, timed). `inputs` as plan_input_infos(plan) lists them; `output`
    // allocated by the caller with plan_output_info(plan); every element of it is written. Checks the tensors
    // against the plan first, for every backend alike (std::invalid_argument: a caller's bug, not the user's).
    ExecutionStats run(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                       const RunOptions& options);

protected:
    // run() after the checks.
    virtual ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                                   const RunOptions& options) = 0;
};

// The check run() makes: the dtype and element count of each input and of the output. Shapes may differ by
// axes of size 1 (a slice's integer index drops one), which changes no element's place in memory.
void require_tensors_match_plan(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output);

}  // namespace dmlgrad
