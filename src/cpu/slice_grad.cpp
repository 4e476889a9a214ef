// Slice grad on the CPU: dX = 0, then dX[start + Stride * k] = dY[k] (docs/OPERATORS.md 3). A pure copy of bit patterns
// by element size, so every dtype, NaN payload and -0.0 passes unchanged. Each thread owns a contiguous range of dX and
// writes each of its elements once: zeros and copies go out row segment by row segment, with no separate memset pass
// over the whole tensor.
#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/integer.h"
#include "core/parallel.h"
#include "cpu/kernels.h"

namespace dmlgrad {
namespace {

constexpr uint64_t kMinPerThread = uint64_t(1) << 16;
// Strided rows are zeroed and scattered block by block, so the block is still in L1 when the scatter hits it.
constexpr int64_t kScatterBlock = 4096;
constexpr size_t kMaxRank = 8;

struct Axis {
    int64_t dx;
    int64_t dy;
    int64_t start;
    int64_t stride;
    int64_t dy_step = 0;  // dY's row-major stride along this axis, in elements
};

// The dY index along `axis` that lands on dX coordinate `c`, or -1 when none does.
int64_t source_index(const Axis& axis, int64_t c) {
    const int64_t distance = c - axis.start;
    if (axis.stride != 1 && distance % axis.stride != 0) return -1;
    const int64_t k = axis.stride == 1 ? distance : distance / axis.stride;  // skip the division when it can
    return k >= 0 && k < axis.dy ? k : -1;
}

// The dY indices [lo, hi) along `axis` whose dX coordinates fall in [c0, c1).
struct SourceRange {
    int64_t lo;
    int64_t hi;
};
SourceRange sources_in(const Axis& axis, int64_t c0, int64_t c1) {
    int64_t lo, hi;
    if (axis.stride > 0) {  // k >= (c0 - start) / s and k < (c1 - start) / s, rounded up
        lo = -floor_div(axis.start - c0, axis.stride);
        hi = -floor_div(axis.start - c1, axis.stride);
    } else {  // the coordinate falls as k grows: start - |s| k in [c0, c1)
        const int64_t step = -axis.stride;
        lo = floor_div(axis.start - c1, step) + 1;
        hi = floor_div(axis.start - c0, step) + 1;
    }
    lo = std::max<int64_t>(lo, 0);
    hi = std::min(hi, axis.dy);
    return {lo, std::max(lo, hi)};
}

// The plan's gather axes, each with dY's row-major stride along it.
std::vector<Axis> strided_axes(const SliceGradPlan& plan) {
    if (plan.gather_axes.empty())
        throw std::logic_error("cpu::slice_grad: a plan without gather_axes (make it with plan_slice_grad)");
    std::vector<Axis> axes;
    for (const SliceAxis& a : plan.gather_axes) axes.push_back(Axis{a.dx, a.dy, a.start, a.stride});
    int64_t step = 1;
    for (size_t a = axes.size(); a-- > 0;) {
        axes[a].dy_step = step;
        step *= axes[a].dy;
    }
    return axes;
}

// Walks the rows of dX (all axes but the innermost) and knows which dY row, if any, lands on the current one.
class RowCursor {
public:
    RowCursor(const std::vector<Axis>& axes, uint64_t row) : axes_(axes), outer_(axes.size() - 1) {
        for (size_t a = outer_; a-- > 0;) {
            coord_[a] = int64_t(row % uint64_t(axes[a].dx));
            row /= uint64_t(axes[a].dx);
            source_[a] = source_index(axes[a], coord_[a]);
        }
    }

    void advance() {
        for (size_t a = outer_; a-- > 0;) {
            const bool carry = ++coord_[a] == axes_[a].dx;
            if (carry) coord_[a] = 0;
            source_[a] = source_index(axes_[a], coord_[a]);
            if (!carry) return;
        }
    }

    bool hit() const {
        for (size_t a = 0; a < outer_; ++a)
            if (source_[a] < 0) return false;
        return true;
    }

    int64_t dy_row_offset() const {
        int64_t offset = 0;
        for (size_t a = 0; a < outer_; ++a) offset += source_[a] * axes_[a].dy_step;
        return offset;
    }

private:
    const std::vector<Axis>& axes_;
    size_t outer_;
    std::array<int64_t, kMaxRank> coord_{};
    std::array<int64_t, kMaxRank> source_{};
};

template <class Element>
void zero(Element* dst, int64_t count) {
    if (count > 0) std::memset(dst, 0, size_t(count) * sizeof(Element));
}

// Columns [c0, c1) of a dX row that a dY row lands on: zeros around (and between) the copied elements.
template <class Element>
void fill_hit_segment(const Axis& inner, const Element* src, Element* row, int64_t c0, int64_t c1) {
    if (inner.stride == 1) {
        const SourceRange r = sources_in(inner, c0, c1);
        const int64_t first = r.lo < r.hi ? inner.start + r.lo : c1;
        const int64_t last = r.lo < r.hi ? inner.start + r.hi : c1;
        zero(row + c0, first - c0);
        std::memcpy(row + first, src + r.lo, size_t(r.hi - r.lo) * sizeof(Element));
        zero(row + last, c1 - last);
        return;
    }
    for (int64_t b0 = c0; b0 < c1; b0 += kScatterBlock) {
        const int64_t b1 = std::min(c1, b0 + kScatterBlock);
        zero(row + b0, b1 - b0);
        const SourceRange r = sources_in(inner, b0, b1);
        Element* target = row + inner.start;
        for (int64_t k = r.lo; k < r.hi; ++k) target[inner.stride * k] = src[k];
    }
}

// Writes dX's flat elements [begin, end), row segment by row segment.
template <class Element>
void slice_grad_range(const std::vector<Axis>& axes, const Element* dy, Element* dx, uint64_t begin, uint64_t end) {
    const Axis& inner = axes.back();
    const uint64_t row_length = uint64_t(inner.dx);
    uint64_t row = begin / row_length;
    int64_t column = int64_t(begin % row_length);
    RowCursor cursor(axes, row);
    for (uint64_t position = begin; position < end; ++row, column = 0, cursor.advance()) {
        const int64_t column_end = int64_t(std::min<uint64_t>(row_length, uint64_t(column) + (end - position)));
        Element* dx_row = dx + row * row_length;
        if (cursor.hit())
            fill_hit_segment(inner, dy + cursor.dy_row_offset(), dx_row, column, column_end);
        else
            zero(dx_row + column, column_end - column);
        position += uint64_t(column_end - column);
    }
}

template <class Element>
void slice_grad_typed(const SliceGradPlan& plan, const Tensor& dy, Tensor& dx) {
    const std::vector<Axis> axes = strided_axes(plan);
    const Element* src = dy.as<Element>();
    Element* dst = dx.as<Element>();
    parallel_for(dx.elements(), kMinPerThread,
                 [&](uint64_t begin, uint64_t end) { slice_grad_range(axes, src, dst, begin, end); });
}

}  // namespace

void cpu::slice_grad(const SliceGradPlan& plan, const Tensor& dy, Tensor& dx) {
    switch (dtype_size(plan.dtype)) {
        case 1: return slice_grad_typed<uint8_t>(plan, dy, dx);
        case 2: return slice_grad_typed<uint16_t>(plan, dy, dx);
        case 4: return slice_grad_typed<uint32_t>(plan, dy, dx);
        case 8: return slice_grad_typed<uint64_t>(plan, dy, dx);
        default: throw std::logic_error("cpu::slice_grad: unexpected element size");
    }
}

}  // namespace dmlgrad
