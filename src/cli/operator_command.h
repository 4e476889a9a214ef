#pragma once
// One operator invocation, ready to run: its tensors as named on the command line and how to plan it.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cli/options.h"
#include "ops/operand.h"
#include "ops/plan.h"

namespace dmlgrad::cli {

struct OperatorCommand {
    std::string name;             // the subcommand, e.g. "relu-grad"
    std::vector<Operand> inputs;  // flag and path; the runner fills in each header's TensorInfo
    Operand output;               // flag and path of the result
    // Validates the inputs against the operator's parameters (throws UsageError) and returns the plan.
    std::function<Plan(std::span<const Operand>)> make_plan;
};

// Builds each subcommand's OperatorCommand from its options; list flags are parsed here (UsageError on bad text).
OperatorCommand relu_grad_command(const TensorPaths& paths);
OperatorCommand clip_grad_command(const TensorPaths& paths, const ClipOptions& options);
OperatorCommand slice_grad_command(const TensorPaths& paths, const SliceOptions& options);
OperatorCommand maxpool_grad_command(const TensorPaths& paths, const MaxPoolOptions& options);
OperatorCommand resample_grad_command(const TensorPaths& paths, const ResampleOptions& options);

}  // namespace dmlgrad::cli
