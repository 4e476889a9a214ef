// Resample grad plans for the kernel tests: DirectML's half-pixel offsets, dY's sizes dX's times the scales (a scale
// of 1 an identity axis); PyTorch's nearest rule between two shapes.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/resample_grad.h"

namespace dmlgrad::testing {

inline ResampleGradPlan half_pixel_plan(const Shape& dx, const std::vector<float>& scales, InterpolationMode mode,
                                        RoundingDirection rounding, DType type) {
    ResampleGradDesc desc{dx, mode, rounding, scales, {}, {}};
    Shape dy;
    for (size_t a = 0; a < dx.size(); ++a) {
        dy.push_back(int64_t(float(dx[a]) * scales[a]));
        desc.input_pixel_offsets.push_back(-0.5f);
        desc.output_pixel_offsets.push_back(0.5f);
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
