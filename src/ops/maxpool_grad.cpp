#include "ops/maxpool_grad.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

#include "core/error.h"
#include "ops/validation.h"

namespace dmlgrad {
namespace {

constexpr std::string_view kOp = "maxpool-grad";
// The DirectML fields are UINT: capping every parameter there also keeps the size arithmetic far from overflow.
constexpr int64_t kMaxParameter = 0xFFFFFFFFll;

struct SpatialParameters {
    std::vector<int64_t> window, stride, start_padding, end_padding, dilation;
};

// An empty list takes `fallback` on every spatial axis; a given one must have one entry per spatial axis.
std::vector<int64_t> resolve_list(std::string_view flag, const std::vector<int64_t>& given, size_t spatial_rank,
                                  int64_t fallback) {
    if (given.empty()) return std::vector<int64_t>(spatial_rank, fallback);
    require_length(flag, given.size(), spatial_rank, "one per spatial axis of --input");
    return given;
}

void require_in_range(std::string_view flag, const std::vector<int64_t>& values, int64_t lowest) {
    for (size_t j = 0; j < values.size(); ++j)
        if (values[j] < lowest || values[j] > kMaxParameter)
            throw UsageError(fmt::format("{}: value {} on spatial axis {} is out of range (expected {} to {})", flag,
                                         values[j], j, lowest, kMaxParameter));
}

SpatialParameters resolve_parameters(const MaxPoolGradDesc& desc, size_t spatial_rank) {
    if (desc.window_size.empty())
        throw UsageError(fmt::format("--window-size: required ({} values, one per spatial axis)", spatial_rank));
    SpatialParameters p{
        resolve_list("--window-size", desc.window_size, spatial_rank, 1),
        resolve_list("--strides", desc.strides, spatial_rank, 1),
        resolve_list("--start-padding", desc.start_padding, spatial_rank, 0),
        resolve_list("--end-padding", desc.end_padding, spatial_rank, 0),
        resolve_list("--dilations", desc.dilations, spatial_rank, 1),
    };
    require_in_range("--window-size", p.window, 1);
    require_in_range("--strides", p.stride, 1);
    require_in_range("--start-padding", p.start_padding, 0);
    require_in_range("--end-padding", p.end_padding, 0);
    require_in_range("--dilations", p.dilation, 1);
    return p;
}

void require_matching_tensors(const Operand& x, const Operand& dy) {
    for (const Operand* t : {&x, &dy}) {
        require_dtype(kOp, *t, kMaxPoolGradTypes);
        require_rank(kOp, *t, 4, 5);
        require_valid_sizes(*t);
    }
    require_same_dtype(x, dy);
    if (dy.info.shape.size() != x.info.shape.size())
        throw UsageError(fmt::format("{}: rank {} does not match {} rank {}", dy.label(), dy.info.shape.size(),
                                     x.label(), x.info.shape.size()));
    for (size_t axis = 0; axis < 2; ++axis)
        if (dy.info.shape[axis] != x.info.shape[axis])
            throw UsageError(fmt::format("{}: size {} on axis {} ({}) does not match {} size {}", dy.label(),
                                         dy.info.shape[axis], axis, axis == 0 ? "N" : "C", x.label(),
                                         x.info.shape[axis]));
}

bool window_fits(int64_t input, int64_t window, int64_t start_padding, int64_t end_padding, int64_t dilation) {
    int64_t padded = input + start_padding + end_padding;
    return window - 1 <= (padded - 1) / dilation;  // (W - 1) * D + 1 <= P, without overflowing
}

// Whether dY's size on one spatial axis can be `actual`: O_floor, or O_floor + 1 when the last stride step does not
// land on the end. `accepted` receives the sizes that would fit.
bool output_size_fits(int64_t input, int64_t actual, const SpatialParameters& p, size_t j, std::string* accepted) {
    const int64_t floor_size =
        maxpool_output_size(input, p.window[j], p.stride[j], p.start_padding[j], p.end_padding[j], p.dilation[j]);
    const int64_t span = (p.window[j] - 1) * p.dilation[j] + 1;
    const bool ceil_allowed = (input + p.start_padding[j] + p.end_padding[j] - span) % p.stride[j] != 0;
    if (accepted)
        *accepted = ceil_allowed ? fmt::format("{} or {}", floor_size, floor_size + 1) : fmt::format("{}", floor_size);
    return floor_size > 0 && (actual == floor_size || (ceil_allowed && actual == floor_size + 1));
}

void require_output_size(const Operand& x, const Operand& dy, size_t axis, const SpatialParameters& p, size_t j) {
    const int64_t input = x.info.shape[axis];
    if (!window_fits(input, p.window[j], p.start_padding[j], p.end_padding[j], p.dilation[j]))
        throw UsageError(fmt::format(
            "--window-size: the dilated window ({} with dilation {}) is larger than the padded input ({} + {} + {}) "
            "on spatial axis {} of {}",
            p.window[j], p.dilation[j], input, p.start_padding[j], p.end_padding[j], j, x.label()));
    std::string accepted;
    if (output_size_fits(input, dy.info.shape[axis], p, j, &accepted)) return;
    throw UsageError(fmt::format("{}: size {} on axis {} does not fit the pooling of {} (expected {})", dy.label(),
                                 dy.info.shape[axis], axis, x.label(), accepted));
}

// Whether a dY of shape `dy` fits the pooling of an X of shape `x` (the same N and C, every spatial size).
bool shapes_fit(const Shape& x, const Shape& dy, const SpatialParameters& p) {
    if (x.size() != dy.size() || x[0] != dy[0] || x[1] != dy[1]) return false;
    for (size_t j = 0; j + 2 < x.size(); ++j)
        if (!window_fits(x[2 + j], p.window[j], p.start_padding[j], p.end_padding[j], p.dilation[j]) ||
            !output_size_fits(x[2 + j], dy[2 + j], p, j, nullptr))
            return false;
    return true;
}

// The axes of a channels-last shape (N, H, W, C) put in the order N, C, H, W.
Shape channels_first(const Shape& shape) {
    Shape moved{shape.front(), shape.back()};
    moved.insert(moved.end(), shape.begin() + 1, shape.end() - 1);
    return moved;
}

// The two habits a refusal most often comes from: PyTorch's stride, which defaults to the window (dmlgrad's to 1,
// as DirectML's), and channels-last data. "" when neither explains the shapes.
std::string pytorch_habit_hint(const MaxPoolGradDesc& desc, const Shape& x, const Shape& dy) {
    if (x.size() != dy.size() || x.size() < 4 || x.size() > 5) return "";
    const size_t spatial_rank = x.size() - 2;
    SpatialParameters p;
    try {
        p = resolve_parameters(desc, spatial_rank);
    } catch (const UsageError&) {
        return "";
    }
    if (shapes_fit(x, dy, p)) return "";  // the refusal is about something else
    SpatialParameters pytorch_stride = p;
    pytorch_stride.stride = p.window;
    const std::string window = fmt::format("{}", fmt::join(p.window, ","));
    if (desc.strides.empty() && shapes_fit(x, dy, pytorch_stride))
        return fmt::format(
            "; PyTorch's max-pool stride defaults to the window, dmlgrad's to 1: add --strides {} "
            "(nn.MaxPool{}d({}) is --window-size {} --strides {})",
            window, spatial_rank, p.window[0], window, window);
    const bool channels_last =
        shapes_fit(channels_first(x), channels_first(dy), p) ||
        (desc.strides.empty() && shapes_fit(channels_first(x), channels_first(dy), pytorch_stride));
    if (channels_last)
        return fmt::format(
            "; the shapes fit channels-last data (N, {}, C): dmlgrad takes N, C, {} as PyTorch does; transpose "
            "both, e.g. x.transpose({})",
            spatial_rank == 2 ? "H, W" : "D, H, W", spatial_rank == 2 ? "H, W" : "D, H, W",
            spatial_rank == 2 ? "0, 3, 1, 2" : "0, 4, 1, 2, 3");
    return "";
}

MaxPoolGradPlan plan_checked(const MaxPoolGradDesc& desc, const Operand& x, const Operand& dy) {
    require_matching_tensors(x, dy);
    const size_t rank = x.info.shape.size();
    const size_t spatial_rank = rank - 2;
    const SpatialParameters p = resolve_parameters(desc, spatial_rank);

    MaxPoolGradPlan plan;
    plan.dtype = x.info.dtype;
    plan.x_shape = x.info.shape;
    plan.dy_shape = dy.info.shape;
    plan.planes = uint64_t(x.info.shape[0]) * uint64_t(x.info.shape[1]);
    for (size_t j = 0; j < spatial_rank; ++j) {
        const size_t axis = 2 + j;
        require_output_size(x, dy, axis, p, j);
        const size_t slot = 3 - spatial_rank + j;  // right-aligned: {H, W} fill slots 1 and 2
        plan.in[slot] = x.info.shape[axis];
        plan.out[slot] = dy.info.shape[axis];
        plan.window[slot] = p.window[j];
        plan.stride[slot] = p.stride[j];
        plan.start_padding[slot] = p.start_padding[j];
        plan.end_padding[slot] = p.end_padding[j];
        plan.dilation[slot] = p.dilation[j];
    }
    return plan;
}

}  // namespace

int64_t maxpool_output_size(int64_t input, int64_t window, int64_t stride, int64_t start_padding, int64_t end_padding,
                            int64_t dilation) {
    if (!window_fits(input, window, start_padding, end_padding, dilation)) return 0;
    const int64_t span = (window - 1) * dilation + 1;
    return (input + start_padding + end_padding - span) / stride + 1;
}

MaxPoolGradPlan plan_maxpool_grad(const MaxPoolGradDesc& desc, const Operand& x, const Operand& dy) {
    try {
        return plan_checked(desc, x, dy);
    } catch (const UsageError& e) {
        throw UsageError(e.what() + pytorch_habit_hint(desc, x.info.shape, dy.info.shape));
    }
}

}  // namespace dmlgrad
