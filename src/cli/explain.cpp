#include "cli/explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/overloaded.h"
#include "gpu/dispatch.h"

namespace dmlgrad::cli {
namespace {

// Appends the lines of one axis: `line(i)` describes dX index i.
template <class Line>
void append_axis(std::string& out, std::string_view heading, int64_t dx_size, Line line) {
    out += heading;
    const int64_t shown = std::min<int64_t>(dx_size, kExplainedIndices);
    for (int64_t i = 0; i < shown; ++i) out += fmt::format("  dX[{}] <- {}\n", i, line(i));
    if (shown < dx_size) out += fmt::format("  ... {} more dX indices\n", dx_size - shown);
}

std::string explain_slice(const SliceGradPlan& p) {
    std::string out;
    for (size_t axis = 0; axis < p.dx_shape.size(); ++axis) {
        const int64_t start = p.start[axis], stride = p.stride[axis], count = p.dy_shape[axis];
        append_axis(out,
                    fmt::format("axis {}: dX size {}, dY size {}, dY[k] -> dX[{} {} {}*k]\n", axis, p.dx_shape[axis],
                                count, start, stride < 0 ? '-' : '+', std::abs(stride)),
                    p.dx_shape[axis], [&](int64_t i) {
                        const int64_t distance = i - start;
                        const bool hit = distance % stride == 0 && distance / stride >= 0 && distance / stride < count;
                        return hit ? fmt::format("dY[{}]", distance / stride) : std::string("0 (outside the slice)");
                    });
    }
    return out;
}

std::string explain_resample(const ResampleGradPlan& p) {
    std::string out;
    const bool linear = p.mode == InterpolationMode::linear;
    for (size_t axis = 0; axis < p.dx_shape.size(); ++axis) {
        const AxisTaps& taps = p.axes[axis];
        append_axis(out,
                    fmt::format("axis {}: dX size {}, dY size {}, scale {}, input offset {}, output offset {}\n", axis,
                                p.dx_shape[axis], p.dy_shape[axis], p.scales[axis], p.input_pixel_offsets[axis],
                                p.output_pixel_offsets[axis]),
                    p.dx_shape[axis], [&](int64_t i) {
                        std::vector<std::string> terms;
                        for (uint32_t t = taps.begin[size_t(i)]; t < taps.begin[size_t(i) + 1]; ++t)
                            terms.push_back(linear ? fmt::format("{} * dY[{}]", taps.weight[t], taps.dy_index[t])
                                                   : fmt::format("dY[{}]", taps.dy_index[t]));
                        return terms.empty() ? std::string("0 (no dY element reads it)")
                                             : fmt::format("{}", fmt::join(terms, " + "));
                    });
    }
    return out;
}

std::string no_mapping(std::string_view op) {
    return fmt::format(
        "{}: every dX element takes the dY element at the same index (or one of a pooling window); "
        "there is no per-axis mapping to explain\n",
        op);
}

}  // namespace

std::string explain_plan(const Plan& plan) {
    return std::visit(Overloaded{
                          [](const ReluGradPlan&) { return no_mapping("relu-grad"); },
                          [](const ClipGradPlan&) { return no_mapping("clip-grad"); },
                          [](const SliceGradPlan& p) { return explain_slice(p); },
                          [](const MaxPoolGradPlan&) { return no_mapping("maxpool-grad"); },
                          [](const ResampleGradPlan& p) { return explain_resample(p); },
                      },
                      plan);
}

std::string explain_kernel(const Plan& plan) {
    try {
        return fmt::format("kernel: {} (on the GPU, under an H100's limits)\n",
                           build_program(plan, kTypicalLimits).kernel);
    } catch (const RuntimeFailure& refused) {
        return fmt::format("kernel: none ({})\n", refused.what());
    }
}

}  // namespace dmlgrad::cli
