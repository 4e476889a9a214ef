#include "ops/plan.h"

#include <type_traits>

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

bool plan_sums(const Plan& plan) {
    return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::sums; }, plan);
}

Tolerance default_tolerance(const Plan& plan) {
    return plan_sums(plan) ? summing_tolerance(plan_dtype(plan)) : Tolerance{};
}

Tolerance summing_tolerance(DType type) {
    // float16 results are rounded once from a float32 sum: half an fp16 ulp is 2^-11 relative.
    return type == DType::f16 ? Tolerance::formula("1e-3", "1e-3") : Tolerance::formula("1e-5", "1e-6");
}

}  // namespace dmlgrad
