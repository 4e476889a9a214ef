#include "ops/plan.h"

#include "core/overloaded.h"

namespace dmlgrad {

std::string_view plan_op_name(const Plan& plan) {
    return std::visit(Overloaded{[](const ReluGradPlan&) { return "relu-grad"; },
                                 [](const ClipGradPlan&) { return "clip-grad"; },
                                 [](const SliceGradPlan&) { return "slice-grad"; },
                                 [](const MaxPoolGradPlan&) { return "maxpool-grad"; },
                                 [](const ResampleGradPlan&) { return "resample-grad"; }},
                      plan);
}

DType plan_dtype(const Plan& plan) {
    return std::visit([](const auto& p) { return p.dtype; }, plan);
}

TensorInfo plan_output_info(const Plan& plan) {
    Shape shape = std::visit(Overloaded{[](const ReluGradPlan& p) { return p.shape; },
                                        [](const ClipGradPlan& p) { return p.shape; },
                                        [](const SliceGradPlan& p) { return p.dx_shape; },
                                        [](const MaxPoolGradPlan& p) { return p.x_shape; },
                                        [](const ResampleGradPlan& p) { return p.dx_shape; }},
                             plan);
    return TensorInfo{plan_dtype(plan), std::move(shape)};
}

uint64_t plan_min_bytes(const Plan& plan) {
    const uint64_t element = dtype_size(plan_dtype(plan));
    const uint64_t out = plan_output_info(plan).elements();
    uint64_t in = std::visit(Overloaded{[](const ReluGradPlan& p) { return 2 * p.count; },
                                        [](const ClipGradPlan& p) { return 2 * p.count; },
                                        [](const SliceGradPlan& p) { return element_count(p.dy_shape); },
                                        [](const MaxPoolGradPlan& p) {
                                            return element_count(p.x_shape) + element_count(p.dy_shape);
                                        },
                                        [](const ResampleGradPlan& p) { return element_count(p.dy_shape); }},
                             plan);
    return (in + out) * element;
}

}  // namespace dmlgrad
