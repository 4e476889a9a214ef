#pragma once
// DML_RESAMPLE_GRAD1_OPERATOR_DESC: the transpose of RESAMPLE2, R-swap offsets (docs/OPERATORS.md section 5).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ops/operand.h"
#include "ops/resample_modes.h"

namespace dmlgrad {

inline constexpr DType kResampleGradTypes[] = {DType::f32, DType::f16};

// Raw form: empty vectors take docs/OPERATORS.md's defaults: scales dY.size / dX.size, input offsets -0.5, output
// offsets 0.5. A framework (ONNX, PyTorch) replaces mode, rounding, scales and offsets, which then stay unset.
struct ResampleGradDesc {
    Shape output_sizes;  // dX's shape
    InterpolationMode mode = InterpolationMode::nearest;
    RoundingDirection rounding = RoundingDirection::decreasing;
    std::vector<float> scales;
    std::vector<float> input_pixel_offsets;
    std::vector<float> output_pixel_offsets;
    ResampleFramework framework = {};
};

// Whose rule picked each axis's source pixels: DirectML's float32 formula with the plan's parameters, PyTorch's
// float32 formulas (UpSample.h), or ONNX Resize's formula in exact arithmetic.
enum class TapRule { directml, pytorch, onnx };

// For one axis, the dY positions that reach each dX position, in increasing dY order: dX index i takes the taps
// [begin[i], begin[i + 1]) of (dy_index, weight). Built once on the host in float32 (docs/OPERATORS.md 5.4) and shared
// by every backend, so all of them pick the same neighbours at ties. Taps of weight exactly 0 are left out.
struct AxisTaps {
    std::vector<uint32_t> begin;     // size I + 1
    std::vector<uint32_t> dy_index;  // size = number of taps
    std::vector<float> weight;
};

// The fewest and the most taps a dX index of the axis has ({0, 0} for an axis of no index).
std::pair<uint64_t, uint64_t> tap_counts(const AxisTaps& taps);

struct ResampleGradPlan {
    static constexpr bool sums = true;  // dX elements add contributions (plan_sums)
    DType dtype = DType::f32;
    InterpolationMode mode = InterpolationMode::nearest;
    RoundingDirection rounding = RoundingDirection::decreasing;
    TapRule tap_rule = TapRule::directml;
    Shape dx_shape;
    Shape dy_shape;
    // The shapes of the files where they differ from dx_shape and dy_shape: a PyTorch 5-D volume (N, C, D, H, W),
    // whose N and C the plan folds into one axis (N * C, D, H, W), the same memory. Empty otherwise.
    Shape dx_volume_shape;
    Shape dy_volume_shape;
    // DirectML's parameters; with a framework, the equivalent ones (docs/OPERATORS.md 5.7).
    std::vector<float> scales;
    std::vector<float> input_pixel_offsets;
    std::vector<float> output_pixel_offsets;
    std::vector<AxisTaps> axes;  // one per axis
};

// dY of rank 1 to 4 (DirectML's limit), or 5 with --torch-mode (N and C folded).
ResampleGradPlan plan_resample_grad(const ResampleGradDesc& desc, const Operand& dy);

// The resolved parameters by name, for the -v log and the JSON report: interpolation_mode, rounding_direction,
// scales, input_pixel_offsets, output_pixel_offsets (comma-separated lists) and taps (directml, pytorch or onnx).
std::vector<std::pair<std::string, std::string>> resolved_parameters(const ResampleGradPlan& plan);

// The taps of one axis by DirectML's formula (exposed for tests).
AxisTaps build_axis_taps(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, int64_t dy_size,
                         float scale, float input_pixel_offset, float output_pixel_offset);
// The taps of one axis from each dY index's taps, `taps_of(o)` (the framework rules; exposed for tests).
AxisTaps axis_taps_from(int64_t dx_size, int64_t dy_size, const std::function<SourceTaps(int64_t)>& taps_of);

}  // namespace dmlgrad
