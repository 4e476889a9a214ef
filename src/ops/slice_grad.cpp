#include "ops/slice_grad.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "ops/validation.h"

namespace dmlgrad {
namespace {

constexpr const char* kOffsetsFlag = "--input-window-offsets";
constexpr const char* kSizesFlag = "--input-window-sizes";
constexpr const char* kStridesFlag = "--input-window-strides";

// |stride| without overflow for INT64_MIN.
uint64_t magnitude(int64_t value) { return value < 0 ? uint64_t(-(value + 1)) + 1 : uint64_t(value); }

// The window of one axis must lie inside dX (SLICE1's rule), checked without a sum that could overflow.
void check_window_bounds(const SliceGradDesc& desc, size_t axis) {
    const int64_t offset = desc.window_offsets[axis];
    const int64_t size = desc.window_sizes[axis];
    const int64_t extent = desc.output_sizes[axis];
    if (offset < 0) throw UsageError(fmt::format("{}: axis {}: offset {} is negative", kOffsetsFlag, axis, offset));
    if (size < 1)
        throw UsageError(
            fmt::format("{}: axis {}: size {} is invalid (a window holds at least 1 element)", kSizesFlag, axis, size));
    if (size > extent - offset)  // offset >= 0 and extent >= 1 here: the difference cannot overflow
        throw UsageError(fmt::format(
            "{}: axis {}: the window (offset {}, size {}) runs past the output's size {} (offset + size must be "
            "at most --output-sizes)",
            kSizesFlag, axis, offset, size, extent));
}

// DirectML's strides are signed 32-bit (INT), and a zero stride would send several dY elements to one place.
void check_window_stride(const SliceGradDesc& desc, size_t axis) {
    const int64_t stride = desc.window_strides[axis];
    if (stride == 0)
        throw UsageError(fmt::format("{}: axis {}: stride 0 is invalid (strides must be nonzero)", kStridesFlag, axis));
    if (stride < INT32_MIN || stride > INT32_MAX)
        throw UsageError(fmt::format("{}: axis {}: stride {} does not fit DirectML's 32-bit signed stride",
                                     kStridesFlag, axis, stride));
}

// dY may be shorter than the window allows, never longer: 1 <= dY size <= 1 + (Size - 1) / |Stride|.
void check_gradient_extent(const SliceGradDesc& desc, const Operand& dy, size_t axis) {
    const uint64_t reachable = 1 + uint64_t(desc.window_sizes[axis] - 1) / magnitude(desc.window_strides[axis]);
    const int64_t given = dy.info.shape[axis];
    if (uint64_t(given) > reachable)
        throw UsageError(fmt::format(
            "{}: axis {} has size {}, but the window (size {}, stride {}) holds at most {} element(s) (dY size must "
            "be at most 1 + (size - 1) / |stride|)",
            dy.label(), axis, given, desc.window_sizes[axis], desc.window_strides[axis], reachable));
}

// An axis whose positive stride divides its dX size and reaches every period of it: [start::stride] with start below
// the stride, so that a row's reached elements continue, a stride apart, into the next row's.
bool whole_periods(const SliceAxis& axis) {
    return axis.stride > 1 && axis.dx % axis.stride == 0 && axis.start < axis.stride &&
           axis.dy == axis.dx / axis.stride;
}

}  // namespace

SliceGradPlan plan_slice_grad(const SliceGradDesc& desc, const Operand& dy) {
    constexpr std::string_view op = "slice-grad";
    require_dtype(op, dy, kSliceGradTypes);
    require_rank(op, dy, 1, 8);
    require_valid_sizes(dy);
    const size_t rank = dy.info.shape.size();
    const std::string per_axis = fmt::format("one per axis of {}, shape {}", dy.label(), shape_string(dy.info.shape));
    require_length("--output-sizes", desc.output_sizes.size(), rank, per_axis);
    require_valid_sizes("--output-sizes", desc.output_sizes);
    require_length(kOffsetsFlag, desc.window_offsets.size(), rank, per_axis);
    require_length(kSizesFlag, desc.window_sizes.size(), rank, per_axis);
    require_length(kStridesFlag, desc.window_strides.size(), rank, per_axis);

    SliceGradPlan plan;
    plan.dtype = dy.info.dtype;
    plan.dx_shape = desc.output_sizes;
    plan.dy_shape = dy.info.shape;
    for (size_t axis = 0; axis < rank; ++axis) {
        check_window_bounds(desc, axis);
        check_window_stride(desc, axis);
        check_gradient_extent(desc, dy, axis);
        const int64_t stride = desc.window_strides[axis];
        // A negative stride walks the window from its end: dY[0] lands on the window's last element.
        plan.start.push_back(desc.window_offsets[axis] + (stride < 0 ? desc.window_sizes[axis] - 1 : 0));
        plan.stride.push_back(stride);
    }
    plan.gather_axes = simplified_axes(plan);
    return plan;
}

std::vector<SliceAxis> simplified_axes(const SliceGradPlan& plan) {
    std::vector<SliceAxis> axes;
    for (size_t a = 0; a < plan.dx_shape.size(); ++a) {
        SliceAxis axis{plan.dx_shape[a], plan.dy_shape[a], plan.start[a], plan.stride[a]};
        if (axis.dy == 1) axis.stride = 1;  // one element: the stride never applies
        if (axis.dx == 1) continue;         // then dy == 1 and start == 0: nothing to index
        axes.push_back(axis);
    }
    if (axes.empty()) return {SliceAxis{}};
    // From the inside out, pairs whose elements lie on one grid of the pair's dX become one axis (longer rows, fewer
    // levels: a slice whose inner axis takes one element would otherwise make rows of a few elements):
    //  - (outer with stride 1) x (inner copied whole): one axis of stride 1;
    //  - (outer with stride 1) x (inner a whole period: a positive stride that divides the row, from below it, to the
    //    row's end): one axis of the inner's stride (each row's last element is a stride before the next row's first);
    //  - (outer) x (inner taking one element): the outer's grid, its stride times the inner's size;
    //  - (outer taking one element) x (inner): the inner's grid, moved to the outer coordinate's row.
    std::vector<SliceAxis> merged = {axes.back()};
    for (size_t a = axes.size() - 1; a-- > 0;) {
        SliceAxis& inner = merged.back();
        const SliceAxis& outer = axes[a];
        const int64_t dx = outer.dx * inner.dx, row = outer.start * inner.dx;
        if (copied_whole(inner) && outer.stride == 1)
            inner = SliceAxis{dx, outer.dy * inner.dx, row, 1};
        else if (whole_periods(inner) && outer.stride == 1)
            inner = SliceAxis{dx, outer.dy * inner.dy, row + inner.start, inner.stride};
        else if (inner.dy == 1)
            inner = SliceAxis{dx, outer.dy, row + inner.start, outer.dy == 1 ? 1 : outer.stride * inner.dx};
        else if (outer.dy == 1)
            inner = SliceAxis{dx, inner.dy, row + inner.start, inner.stride};
        else
            merged.push_back(outer);
    }
    std::reverse(merged.begin(), merged.end());
    return merged;
}

}  // namespace dmlgrad
