#include "ops/resample_grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <variant>

#include "core/error.h"
#include "core/overloaded.h"
#include "ops/validation.h"

namespace dmlgrad {
namespace {

constexpr std::string_view kOp = "resample-grad";

// An empty list takes `fallback`; a given one must have one entry per axis, each passing `valid`.
template <class Valid>
std::vector<float> resolve_list(std::string_view flag, const std::vector<float>& given, std::vector<float> fallback,
                                Valid valid, std::string_view rule) {
    if (given.empty()) return fallback;
    require_length(flag, given.size(), fallback.size(), "one per axis of --input-gradient");
    for (size_t d = 0; d < given.size(); ++d)
        if (!valid(given[d]))
            throw UsageError(fmt::format("{}: value {} on axis {} is invalid (must be {})", flag, given[d], d, rule));
    return given;
}

// docs/OPERATORS.md's default scale, dY.size / dX.size, evaluated in float32.
std::vector<float> default_scales(const Shape& dx, const Shape& dy) {
    std::vector<float> scales(dy.size());
    for (size_t d = 0; d < dy.size(); ++d) scales[d] = float(dy[d]) / float(dx[d]);
    return scales;
}

// The continuous dX coordinate sampled by dY index o (docs/OPERATORS.md 5.4, R-swap), in float32 one operation at a
// time: no contraction into FMA (the build uses -ffp-contract=off) and no excess precision on x86-64 SSE.
float source_coordinate(int64_t o, float scale, float input_pixel_offset, float output_pixel_offset) {
    const float centred = float(o) - input_pixel_offset;
    const float scaled = centred / scale;
    return scaled - output_pixel_offset;
}

// Clamped in double before converting: u may be huge or infinite (scale 1e-30) and dx_size - 1 need not be a float.
int64_t clamped_index(double u, int64_t dx_size) { return int64_t(std::clamp(u, 0.0, double(dx_size - 1))); }

// The (at most two) taps of dY index o, in increasing dX index, none of weight 0.
SourceTaps directml_taps(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, float u) {
    if (mode == InterpolationMode::nearest) {
        const float rounded = rounding == RoundingDirection::decreasing ? std::floor(u) : std::ceil(u);
        return SourceTaps{1, {clamped_index(rounded, dx_size), 0}, {1.0f, 0.0f}};
    }
    const double clamped = std::clamp(double(u), 0.0, double(dx_size - 1));
    const int64_t i0 = int64_t(std::floor(clamped));
    const float fraction = float(clamped - double(i0));  // exact: the fractional part of a float is a float
    if (fraction == 0.0f) return SourceTaps{1, {i0, 0}, {1.0f, 0.0f}};  // also whenever i0 is the last index
    return SourceTaps{2, {i0, std::min(i0 + 1, dx_size - 1)}, {1.0f - fraction, fraction}};
}

std::string joined(const std::vector<float>& values) {
    std::string text;
    for (float v : values) text += fmt::format("{}{}", text.empty() ? "" : ",", v);
    return text;
}

// One axis's DirectML-equivalent parameters and taps under the framework (the identity where it does not resample).
// PyTorch's spatial axes start at `first_spatial`.
void resolve_framework_axis(const ResampleFramework& framework, size_t axis, size_t first_spatial,
                            ResampleGradPlan& plan) {
    const int64_t in = plan.dx_shape[axis], out = plan.dy_shape[axis];
    const size_t rank = plan.dx_shape.size();
    AxisParameters p;
    std::function<SourceTaps(int64_t)> taps_of = [](int64_t o) { return SourceTaps{1, {o, 0}, {1.0f, 0.0f}}; };
    std::visit(Overloaded{[](const std::monostate&) {
                              throw std::logic_error("resample-grad: resolving the axes of no framework");
                          },
                          [&](const OnnxResize& onnx) {
                              if (!onnx_resamples_axis(axis, rank, in, out)) return;
                              p = onnx_axis_parameters(onnx, in, out);
                              taps_of = [&onnx, in, out](int64_t o) { return onnx_source_taps(onnx, in, out, o); };
                          },
                          [&](const TorchInterpolate& torch) {
                              if (!torch_resamples_axis(axis, first_spatial)) return;
                              const size_t spatial = axis - first_spatial;
                              p = torch_axis_parameters(torch, spatial, in, out);
                              taps_of = [&torch, spatial, in, out](int64_t o) {
                                  return torch_source_taps(torch, spatial, in, out, o);
                              };
                          }},
               framework);
    plan.scales.push_back(p.scale);
    plan.input_pixel_offsets.push_back(p.input_pixel_offset);
    plan.output_pixel_offsets.push_back(p.output_pixel_offset);
    plan.axes.push_back(axis_taps_from(in, out, taps_of));
}

// (N, C, D, H, W) -> (N * C, D, H, W): PyTorch resamples neither N nor C, so one identity axis holds both.
Shape fold_batch_and_channels(const Shape& volume) {
    Shape folded{volume[0] * volume[1]};
    folded.insert(folded.end(), volume.begin() + 2, volume.end());
    return folded;
}

void resolve_framework(const ResampleGradDesc& desc, ResampleGradPlan& plan) {
    size_t first_spatial = 2;
    if (const auto* onnx = std::get_if<OnnxResize>(&desc.framework)) {
        plan.mode = onnx->mode;
        plan.rounding = onnx_rounding(*onnx);
        plan.tap_rule = TapRule::onnx;
    } else {
        const auto& torch = std::get<TorchInterpolate>(desc.framework);
        require_torch_shapes(torch, plan.dx_shape, plan.dy_shape);
        plan.mode = torch_interpolation(torch.mode);
        plan.tap_rule = TapRule::pytorch;
        if (plan.dx_shape.size() == 5) {  // beyond DirectML's rank 4: fold N and C (the same bytes)
            plan.dx_volume_shape = std::exchange(plan.dx_shape, fold_batch_and_channels(plan.dx_shape));
            plan.dy_volume_shape = std::exchange(plan.dy_shape, fold_batch_and_channels(plan.dy_shape));
            first_spatial = 1;
        }
    }
    for (size_t d = 0; d < plan.dx_shape.size(); ++d) resolve_framework_axis(desc.framework, d, first_spatial, plan);
}

void resolve_raw(const ResampleGradDesc& desc, ResampleGradPlan& plan) {
    const size_t rank = plan.dx_shape.size();
    auto positive_finite = [](float v) { return std::isfinite(v) && v > 0.0f; };
    auto finite = [](float v) { return std::isfinite(v); };
    plan.mode = desc.mode;
    plan.rounding = desc.rounding;
    plan.scales = resolve_list("--scales", desc.scales, default_scales(plan.dx_shape, plan.dy_shape), positive_finite,
                               "finite and greater than 0");
    plan.input_pixel_offsets = resolve_list("--input-pixel-offsets", desc.input_pixel_offsets,
                                            std::vector<float>(rank, -0.5f), finite, "finite");
    plan.output_pixel_offsets = resolve_list("--output-pixel-offsets", desc.output_pixel_offsets,
                                             std::vector<float>(rank, 0.5f), finite, "finite");
    for (size_t d = 0; d < rank; ++d)
        plan.axes.push_back(build_axis_taps(desc.mode, desc.rounding, plan.dx_shape[d], plan.dy_shape[d],
                                            plan.scales[d], plan.input_pixel_offsets[d], plan.output_pixel_offsets[d]));
}

}  // namespace

std::pair<uint64_t, uint64_t> tap_counts(const AxisTaps& taps) {
    if (taps.begin.size() < 2) return {0, 0};
    uint64_t least = UINT64_MAX, most = 0;
    for (size_t i = 0; i + 1 < taps.begin.size(); ++i) {
        least = std::min<uint64_t>(least, taps.begin[i + 1] - taps.begin[i]);
        most = std::max<uint64_t>(most, taps.begin[i + 1] - taps.begin[i]);
    }
    return {least, most};
}

AxisTaps axis_taps_from(int64_t dx_size, int64_t dy_size, const std::function<SourceTaps(int64_t)>& taps_of) {
    // A counting sort of each dY index's taps into per-dX lists, in two passes over o (taps_of is deterministic,
    // and nothing but the tables is stored: axes can be billions long). Filling in increasing o keeps every list
    // in increasing dY order.
    AxisTaps axis;
    axis.begin.assign(size_t(dx_size) + 1, 0);
    uint64_t count = 0;
    for (int64_t o = 0; o < dy_size; ++o) {
        const SourceTaps taps = taps_of(o);
        for (int t = 0; t < taps.count; ++t) ++axis.begin[size_t(taps.index[t]) + 1];
        count += uint64_t(taps.count);
    }
    if (count > UINT32_MAX)
        throw RuntimeFailure(
            fmt::format("{}: {} taps on one axis exceed the 2^32 - 1 the tables can index", kOp, count));
    for (size_t i = 1; i < axis.begin.size(); ++i) axis.begin[i] += axis.begin[i - 1];
    axis.dy_index.resize(count);
    axis.weight.resize(count);
    std::vector<uint32_t> next(axis.begin.begin(), axis.begin.end() - 1);
    for (int64_t o = 0; o < dy_size; ++o) {
        const SourceTaps taps = taps_of(o);
        for (int t = 0; t < taps.count; ++t) {
            const uint32_t slot = next[size_t(taps.index[t])]++;
            axis.dy_index[slot] = uint32_t(o);
            axis.weight[slot] = taps.weight[t];
        }
    }
    return axis;
}

AxisTaps build_axis_taps(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, int64_t dy_size,
                         float scale, float input_pixel_offset, float output_pixel_offset) {
    return axis_taps_from(dx_size, dy_size, [&](int64_t o) {
        return directml_taps(mode, rounding, dx_size,
                             source_coordinate(o, scale, input_pixel_offset, output_pixel_offset));
    });
}

ResampleGradPlan plan_resample_grad(const ResampleGradDesc& desc, const Operand& dy) {
    require_dtype(kOp, dy, kResampleGradTypes);
    require_rank(kOp, dy, 1, std::holds_alternative<TorchInterpolate>(desc.framework) ? 5 : 4);
    require_valid_sizes(dy);
    const size_t rank = dy.info.shape.size();
    require_length("--output-sizes", desc.output_sizes.size(), rank, "one per axis of --input-gradient");
    require_valid_sizes("--output-sizes", desc.output_sizes);

    ResampleGradPlan plan;
    plan.dtype = dy.info.dtype;
    plan.dx_shape = desc.output_sizes;
    plan.dy_shape = dy.info.shape;
    if (std::holds_alternative<std::monostate>(desc.framework))
        resolve_raw(desc, plan);
    else
        resolve_framework(desc, plan);
    return plan;
}

std::vector<std::pair<std::string, std::string>> resolved_parameters(const ResampleGradPlan& plan) {
    constexpr std::string_view kRules[] = {"directml", "pytorch", "onnx"};
    return {{"interpolation_mode", plan.mode == InterpolationMode::linear ? "linear" : "nearest"},
            {"rounding_direction", plan.rounding == RoundingDirection::increasing ? "increasing" : "decreasing"},
            {"scales", joined(plan.scales)},
            {"input_pixel_offsets", joined(plan.input_pixel_offsets)},
            {"output_pixel_offsets", joined(plan.output_pixel_offsets)},
            {"taps", std::string(kRules[size_t(plan.tap_rule)])}};
}

}  // namespace dmlgrad
