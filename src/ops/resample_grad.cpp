#include "ops/resample_grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.h"
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

// The continuous dX coordinate sampled by dY index o (docs/OPERATORS.md 5.4, R-swap), in float32 one operation at a time:
// no contraction into FMA (the build uses -ffp-contract=off) and no excess precision on x86-64 SSE.
float source_coordinate(int64_t o, float scale, float input_pixel_offset, float output_pixel_offset) {
    const float centred = float(o) - input_pixel_offset;
    const float scaled = centred / scale;
    return scaled - output_pixel_offset;
}

// Clamped in double before converting: u may be huge or infinite (scale 1e-30) and dx_size - 1 need not be a float.
int64_t clamped_index(double u, int64_t dx_size) { return int64_t(std::clamp(u, 0.0, double(dx_size - 1))); }

struct Tap {
    int64_t dx_index;
    float weight;
};

// The (at most two) taps of dY index o, in increasing dX index, none of weight 0.
int taps_of(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, float u, Tap out[2]) {
    if (mode == InterpolationMode::nearest) {
        const float rounded = rounding == RoundingDirection::decreasing ? std::floor(u) : std::ceil(u);
        out[0] = {clamped_index(rounded, dx_size), 1.0f};
        return 1;
    }
    const double clamped = std::clamp(double(u), 0.0, double(dx_size - 1));
    const int64_t i0 = int64_t(std::floor(clamped));
    const float fraction = float(clamped - double(i0));  // exact: the fractional part of a float is a float
    out[0] = {i0, 1.0f - fraction};
    if (fraction == 0.0f) return 1;  // also the case whenever i0 is the last index
    out[1] = {std::min(i0 + 1, dx_size - 1), fraction};
    return 2;
}

}  // namespace

AxisTaps build_axis_taps(InterpolationMode mode, RoundingDirection rounding, int64_t dx_size, int64_t dy_size,
                         float scale, float input_pixel_offset, float output_pixel_offset) {
    // Forward view: for each dY index o, its taps. Then a counting sort inverts it into per-dX lists; filling in
    // increasing o keeps every list in increasing dY order.
    std::vector<Tap> forward;
    forward.reserve(size_t(dy_size) * (mode == InterpolationMode::linear ? 2 : 1));
    std::vector<uint32_t> forward_dy;
    forward_dy.reserve(forward.capacity());
    for (int64_t o = 0; o < dy_size; ++o) {
        Tap taps[2];
        const int n = taps_of(mode, rounding, dx_size,
                              source_coordinate(o, scale, input_pixel_offset, output_pixel_offset), taps);
        for (int t = 0; t < n; ++t) {
            forward.push_back(taps[t]);
            forward_dy.push_back(uint32_t(o));
        }
    }
    if (forward.size() > UINT32_MAX)
        throw RuntimeFailure(fmt::format("{}: {} taps on one axis exceed the 2^32 - 1 the tables can index", kOp,
                                         forward.size()));

    AxisTaps axis;
    axis.begin.assign(size_t(dx_size) + 1, 0);
    for (const Tap& t : forward) ++axis.begin[size_t(t.dx_index) + 1];
    for (size_t i = 1; i < axis.begin.size(); ++i) axis.begin[i] += axis.begin[i - 1];
    axis.dy_index.resize(forward.size());
    axis.weight.resize(forward.size());
    std::vector<uint32_t> next(axis.begin.begin(), axis.begin.end() - 1);
    for (size_t k = 0; k < forward.size(); ++k) {
        const uint32_t slot = next[size_t(forward[k].dx_index)]++;
        axis.dy_index[slot] = forward_dy[k];
        axis.weight[slot] = forward[k].weight;
    }
    return axis;
}

ResampleGradPlan plan_resample_grad(const ResampleGradDesc& desc, const Operand& dy) {
    require_dtype(kOp, dy, kResampleGradTypes);
    require_rank(kOp, dy, 1, 4);
    require_valid_sizes(dy);
    const size_t rank = dy.info.shape.size();
    require_length("--output-sizes", desc.output_sizes.size(), rank, "one per axis of --input-gradient");
    require_valid_sizes("--output-sizes", desc.output_sizes);

    auto positive_finite = [](float v) { return std::isfinite(v) && v > 0.0f; };
    auto finite = [](float v) { return std::isfinite(v); };
    ResampleGradPlan plan;
    plan.dtype = dy.info.dtype;
    plan.mode = desc.mode;
    plan.dx_shape = desc.output_sizes;
    plan.dy_shape = dy.info.shape;
    plan.scales = resolve_list("--scales", desc.scales, default_scales(plan.dx_shape, plan.dy_shape),
                               positive_finite, "finite and greater than 0");
    plan.input_pixel_offsets = resolve_list("--input-pixel-offsets", desc.input_pixel_offsets,
                                            std::vector<float>(rank, -0.5f), finite, "finite");
    plan.output_pixel_offsets = resolve_list("--output-pixel-offsets", desc.output_pixel_offsets,
                                             std::vector<float>(rank, 0.5f), finite, "finite");
    for (size_t d = 0; d < rank; ++d)
        plan.axes.push_back(build_axis_taps(desc.mode, desc.rounding, plan.dx_shape[d], plan.dy_shape[d],
                                            plan.scales[d], plan.input_pixel_offsets[d],
                                            plan.output_pixel_offsets[d]));
    return plan;
}

}  // namespace dmlgrad
