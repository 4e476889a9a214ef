// Resample grad plans for the kernel tests: DirectML's pixel offsets (half-pixel or any), dY's sizes dX's times the
// scales (a scale of 1 an identity axis); PyTorch's linear align_corners and nearest rules between two shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "ops/resample_grad.h"

namespace dmlgrad::testing {

// Limits that split no plan for its size: the kernel chosen is the plan's own.
constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};

// The kernel the GPU program of `plan` runs.
inline std::string kernel_of(const ResampleGradPlan& plan, const DeviceLimits& limits = kRoomy) {
    return build_resample_grad_program(plan, limits).kernel;
}

// dY's sizes dX's times the scales; every axis's input pixel offset is `offset` and its output offset the negation
// (-0.5: half-pixel; 0: asymmetric).
inline ResampleGradPlan offset_plan(const Shape& dx, const std::vector<float>& scales, InterpolationMode mode,
                                    RoundingDirection rounding, float offset, DType type) {
    ResampleGradDesc desc{dx, mode, rounding, scales, {}, {}};
    Shape dy;
    for (size_t a = 0; a < dx.size(); ++a) {
        dy.push_back(int64_t(float(dx[a]) * scales[a]));
        desc.input_pixel_offsets.push_back(offset);
        desc.output_pixel_offsets.push_back(-offset);
    }
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy}});
}

inline ResampleGradPlan half_pixel_plan(const Shape& dx, const std::vector<float>& scales, InterpolationMode mode,
                                        RoundingDirection rounding, DType type) {
    return offset_plan(dx, scales, mode, rounding, -0.5f, type);
}

// PyTorch's align_corners=True on the resampled axes (scale (dY - 1) / (dX - 1), no offsets), dY of `dy` sizes.
inline ResampleGradPlan align_corners_plan(DType type, const Shape& dx, const Shape& dy) {
    ResampleGradDesc desc{dx, InterpolationMode::linear, RoundingDirection::decreasing, {}, {}, {}};
    for (size_t a = 0; a < dx.size(); ++a) {
        desc.scales.push_back(dx[a] == dy[a] ? 1.0f : float(dy[a] - 1) / float(dx[a] - 1));
        desc.input_pixel_offsets.push_back(0.0f);
        desc.output_pixel_offsets.push_back(0.0f);
    }
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy}});
}

// PyTorch's nearest rule (floor(o * in / out)) from dY's shape to dX's.
inline ResampleGradPlan torch_plan(const Shape& dx, const Shape& dy, DType type) {
    ResampleGradDesc torch;
    torch.output_sizes = dx;
    torch.framework = TorchInterpolate{TorchMode::nearest, false, {}};
    return plan_resample_grad(torch, {"-g", "dy.npy", {type, dy}});
}

}  // namespace dmlgrad::testing
