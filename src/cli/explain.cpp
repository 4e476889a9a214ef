#include "cli/explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/plan_parameters.h"
#include "core/dtype.h"
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

std::string explain_relu(const ReluGradPlan& p) {
    return fmt::format(
        "relu-grad: dX[i] = dY[i] where X[i] > 0, else 0 (a NaN in X gives 0), for each of the {} elements of shape "
        "[{}]; dX[i] depends on X[i] and dY[i] alone\n",
        p.count, fmt::join(p.shape, ", "));
}

std::string explain_clip(const ClipGradPlan& p) {
    return fmt::format(
        "clip-grad: dX[i] = dY[i] where {} < X[i] < {} (the bounds in {}), else 0 (a NaN in X gives dY), for each of "
        "the {} elements of shape [{}]\n",
        clip_bound_json(p.dtype, p.min_bits), clip_bound_json(p.dtype, p.max_bits), dtype_name(p.dtype), p.count,
        fmt::join(p.shape, ", "));
}

// "X[-1] (padding)" or "X[3]": one position of a window, in X's coordinates.
std::string window_position(int64_t position, int64_t size) {
    return position < 0 || position >= size ? fmt::format("X[{}] (padding)", position) : fmt::format("X[{}]", position);
}

// Per spatial axis: where each window lies (which X each dY reaches), then which windows reach each dX index.
std::string explain_maxpool(const MaxPoolGradPlan& p) {
    std::string out;
    const size_t spatial_rank = p.x_shape.size() - 2;
    for (size_t j = 0; j < spatial_rank; ++j) {
        const size_t slot = 3 - spatial_rank + j, axis = 2 + j;
        const int64_t in = p.in[slot], count = p.out[slot], window = p.window[slot], stride = p.stride[slot];
        const int64_t pad = p.start_padding[slot], dilation = p.dilation[slot];
        const auto first = [&](int64_t o) { return o * stride - pad; };  // X position of window o's first element
        out += fmt::format(
            "axis {}: X size {}, dY size {}, window {}, stride {}, dilation {}, start padding {}, end padding {}\n",
            axis, in, count, window, stride, dilation, pad, p.end_padding[slot]);
        for (int64_t o = 0; o < std::min<int64_t>(count, kExplainedIndices); ++o) {
            std::vector<std::string> positions;
            for (int64_t k = 0; k < window; ++k) positions.push_back(window_position(first(o) + k * dilation, in));
            out += fmt::format("  window of dY[{}]: {}\n", o, fmt::join(positions, ", "));
        }
        if (count > int64_t(kExplainedIndices))
            out += fmt::format("  ... {} more windows\n", count - int64_t(kExplainedIndices));
        append_axis(out, "", in, [&](int64_t i) {
            std::vector<std::string> reached;
            // Only the windows starting within a window's span before i can reach it.
            const int64_t span = (window - 1) * dilation, lowest = i + pad - span;
            const int64_t begin = std::max<int64_t>(0, lowest <= 0 ? 0 : (lowest + stride - 1) / stride);
            for (int64_t o = begin; o < std::min(count, (i + pad) / stride + 1); ++o) {
                const int64_t distance = i - first(o);
                if (distance >= 0 && distance % dilation == 0 && distance / dilation < window)
                    reached.push_back(fmt::format("dY[{}]", o));
            }
            return reached.empty() ? std::string("0 (in no window)")
                                   : fmt::format("{} (each where X[{}] is its window's first maximum)",
                                                 fmt::join(reached, " + "), i);
        });
    }
    out +=
        "A window is the product of the axes' windows; its dY goes to the first maximum of X in it (in row-major "
        "order; padding never wins), and where windows overlap their dY add.\n";
    return out;
}

}  // namespace

std::string explain_plan(const Plan& plan) {
    return std::visit(Overloaded{
                          [](const ReluGradPlan& p) { return explain_relu(p); },
                          [](const ClipGradPlan& p) { return explain_clip(p); },
                          [](const SliceGradPlan& p) { return explain_slice(p); },
                          [](const MaxPoolGradPlan& p) { return explain_maxpool(p); },
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
