#pragma once
// DML_RESAMPLE_GRAD1_OPERATOR_DESC: the transpose of RESAMPLE2, R-swap offsets (docs/OPERATORS.md section 5).
#include <cstdint>
#include <vector>

#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kResampleGradTypes[] = {DType::f32, DType::f16};

enum class InterpolationMode { nearest, linear };
enum class RoundingDirection { decreasing, increasing };

// Empty vectors take docs/OPERATORS.md's defaults: scales dY.size / dX.size, input offsets -0.5, output offsets 0.5.
struct ResampleGradDesc {
    Shape output_sizes;  // dX's shape
    InterpolationMode mode = InterpolationMode::nearest;
    RoundingDirection rounding = RoundingDirection::decreasing;
    std::vector<float> scales;
    std::vector<float> input_pixel_offsets;
    std::vector<float> output_pixel_offsets;
};

// For one axis, the dY positions that reach each dX position, in increasing dY order: dX index i takes the taps
// [begin[i], begin[i + 1]) of (dy_index, weight). Built once on the host in float32 (docs/OPERATORS.md 5.4) and shared by
// every backend, so all of them pick the same neighbours at ties. Taps of weight exactly 0 are left out.
struct AxisTaps {
    std::vector<uint32_t> begin;     // size I + 1
    std::vector<uint32_t> dy_index;  // size = number of taps
    std::vector<float> weight;
};

struct ResampleGradPlan {
    DType dtype = DType::f32;
    InterpolationMode mode = InterpolationMode::nearest;
    Shape dx_shape;
    Shape dy_shape;
    std::vector<float> scales;
    std::vector<float> input_pixel_offsets;
    std::vector<float> output_pixel_offsets;
    std::vector<AxisTaps> axes;  // one per axis
};

ResampleGradPlan plan_resample_grad(const ResampleGradDesc& desc, const Operand& dy);

// The taps of one axis (exposed for tests).
AxisTaps build_axis_taps(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, int64_t dy_size,
                         float scale, float input_pixel_offset, float output_pixel_offset);

}  // namespace dmlgrad
