#include "ops/backend.h"

#include <fmt/format.h>

#include <stdexcept>

namespace dmlgrad {
namespace {

bool matches(const TensorInfo& expected, const Tensor& actual) {
    return actual.dtype() == expected.dtype && actual.elements() == expected.elements();
}

}  // namespace

void require_tensors_match_plan(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output) {
    const std::vector<TensorInfo> expected = plan_input_infos(plan);
    if (inputs.size() != expected.size())
        throw std::invalid_argument(
            fmt::format("{}: {} inputs given, the plan takes {}", plan_op_name(plan), inputs.size(), expected.size()));
    for (size_t i = 0; i < inputs.size(); ++i)
        if (!matches(expected[i], *inputs[i]))
            throw std::invalid_argument(fmt::format("{}: input {} is {} {}, the plan takes {} {}", plan_op_name(plan),
                                                    i, dtype_name(inputs[i]->dtype()), shape_string(inputs[i]->shape()),
                                                    dtype_name(expected[i].dtype), shape_string(expected[i].shape)));
    if (!matches(plan_output_info(plan), output))
        throw std::invalid_argument(fmt::format("{}: the output does not match the plan", plan_op_name(plan)));
}

ExecutionStats Backend::run(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                            const RunOptions& options) {
    require_tensors_match_plan(plan, inputs, output);
    return execute(plan, inputs, output, options);
}

}  // namespace dmlgrad
