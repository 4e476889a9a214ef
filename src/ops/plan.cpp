#include "ops/plan.h"

#include "core/overloaded.h"

namespace dmlgrad {

std::string_view plan_op_name(const Plan& plan) {
    return std::visit(
        Overloaded{[](const ReluGradPlan&) { return "relu-grad"; }, [](const ClipGradPlan&) { return "clip-grad"; },
                   [](const SliceGradPlan&) { return "slice-grad"; },
                   [](const MaxPoolGradPlan&) { return "maxpool-grad"; },
                   [](const ResampleGradPlan&) { return "resample-grad"; }},
        plan);
}

DType plan_dtype(const Plan& plan) {
    return std::visit([](const auto& p) { return p.dtype; }, plan);
}

TensorInfo plan_output_info(const Plan& plan) {
    Shape shape = std::visit(
        Overloaded{
            [](const ReluGradPlan& p) { return p.shape; }, [](const ClipGradPlan& p) { return p.shape; },
            [](const SliceGradPlan& p) { return p.dx_shape; }, [](const MaxPoolGradPlan& p) { return p.x_shape; },
            [](const ResampleGradPlan& p) { return p.dx_volume_shape.empty() ? p.dx_shape : p.dx_volume_shape; }},
        plan);
    return TensorInfo{plan_dtype(plan), std::move(shape)};
}

std::vector<TensorInfo> plan_input_infos(const Plan& plan) {
    const DType type = plan_dtype(plan);
    const auto infos = [type](std::initializer_list<Shape> shapes) {
        std::vector<TensorInfo> out;
        for (const Shape& shape : shapes) out.push_back(TensorInfo{type, shape});
        return out;
    };
    return std::visit(Overloaded{[&](const ReluGradPlan& p) {
                                     return infos({p.shape, p.shape});
                                 },
                                 [&](const ClipGradPlan& p) {
                                     return infos({p.shape, p.shape});
                                 },
                                 [&](const SliceGradPlan& p) { return infos({p.dy_shape}); },
                                 [&](const MaxPoolGradPlan& p) {
                                     return infos({p.x_shape, p.dy_shape});
                                 },
                                 [&](const ResampleGradPlan& p) {
                                     return infos({p.dy_volume_shape.empty() ? p.dy_shape : p.dy_volume_shape});
                                 }},
                      plan);
}

uint64_t plan_min_bytes(const Plan& plan) {
    uint64_t bytes = plan_output_info(plan).bytes();
    for (const TensorInfo& input : plan_input_infos(plan)) bytes += input.bytes();
    return bytes;
}

}  // namespace dmlgrad
