#include "gpu/ops/slice_geometry.h"

#include <algorithm>
#include <stdexcept>

#include "core/dtype.h"
#include "core/integer.h"

namespace dmlgrad::slice_gpu {
namespace {

// The dY coordinates k of an axis whose dX coordinates lie in [lo, hi]: k in [k_min, k_max], or empty.
bool k_range(const SliceAxis& axis, int64_t lo, int64_t hi, int64_t& k_min, int64_t& k_max) {
    const int64_t start = axis.start, s = axis.stride, last = axis.dy - 1;
    if (s > 0) {  // p = start + s k
        k_min = std::max<int64_t>(0, ceil_div(lo - start, s));
        k_max = std::min<int64_t>(last, floor_div(hi - start, s));
    } else {  // p = start - |s| k
        k_min = std::max<int64_t>(0, ceil_div(start - hi, -s));
        k_max = std::min<int64_t>(last, floor_div(start - lo, -s));
    }
    return k_min <= k_max;
}

// The unsigned type of `bytes` bytes (1, 2, 4 or 8).
DType unsigned_of_size(uint64_t bytes) {
    return bytes == 1 ? DType::u8 : bytes == 2 ? DType::u16 : bytes == 4 ? DType::u32 : DType::u64;
}

// The largest power of two, at most 8 / element, that divides the innermost axis' size and, where it is copied
// whole or (with `runs`) steps by +1, its first reached coordinate and its dY length: its elements then move in
// groups of that many neighbours. 1 where none.
int64_t wide_element_factor(const SliceAxis& inner, uint64_t element, bool runs) {
    const bool neighbours = inner.dx > 0 && (copied_whole(inner) || (runs && inner.stride == 1));
    const auto divides = [&](int64_t f) { return inner.dx % f == 0 && inner.start % f == 0 && inner.dy % f == 0; };
    int64_t factor = 1;
    while (neighbours && element * uint64_t(factor) * 2 <= 8 && divides(factor * 2)) factor *= 2;
    return factor;
}

// The axes with axis `a` replaced by `outer` and `inner` (outer first).
std::vector<SliceAxis> with_axis_split(const std::vector<SliceAxis>& axes, size_t a, const SliceAxis& outer,
                                       const SliceAxis& inner) {
    std::vector<SliceAxis> out(axes.begin(), axes.begin() + ptrdiff_t(a));
    out.push_back(outer);
    out.push_back(inner);
    out.insert(out.end(), axes.begin() + ptrdiff_t(a) + 1, axes.end());
    return out;
}

}  // namespace

SliceGradPlan with_wide_elements(const SliceGradPlan& plan, bool runs) {
    SliceGradPlan wide = plan;
    for (;;) {  // folding may merge the axis of one element left with its outer neighbour: fold again
        const int64_t factor = wide_element_factor(wide.gather_axes.back(), dtype_size(wide.dtype), runs);
        if (factor == 1) return wide;
        SliceGradPlan next;
        next.dtype = unsigned_of_size(dtype_size(wide.dtype) * uint64_t(factor));
        for (const SliceAxis& axis : wide.gather_axes) {
            next.dx_shape.push_back(axis.dx);
            next.dy_shape.push_back(axis.dy);
            next.start.push_back(axis.start);
            next.stride.push_back(axis.stride);
        }
        next.dx_shape.back() /= factor;
        next.dy_shape.back() /= factor;
        next.start.back() /= factor;
        next.gather_axes = simplified_axes(next);
        wide = std::move(next);
    }
}

std::vector<Chunk> chunks(const std::vector<SliceAxis>& axes, uint64_t max_elements) {
    if (max_elements == 0) throw std::logic_error("slice_gpu::chunks: max_elements must be positive");
    const size_t rank = axes.size();
    std::vector<uint64_t> extent(rank);                 // dX's size along each axis
    std::vector<uint64_t> slab(rank), dy_stride(rank);  // elements per step of each axis, in dX and in dY
    uint64_t dx_total = 1, dy_total = 1;
    for (size_t a = rank; a-- > 0;) {
        extent[a] = uint64_t(axes[a].dx);
        slab[a] = dx_total;
        dy_stride[a] = dy_total;
        dx_total *= extent[a];
        dy_total *= uint64_t(axes[a].dy);
    }

    // The box: outer axes at `prefix` (flat index over axes < split), axis `split` in [lo, hi), inner axes whole.
    auto box = [&](size_t split, uint64_t prefix, uint64_t lo, uint64_t hi) {
        Chunk c;
        c.begin = prefix * extent[split] * slab[split] + lo * slab[split];
        c.end = c.begin + (hi - lo) * slab[split];
        int64_t first = 0, last = 0;
        bool reads = true;
        for (size_t a = 0; a < rank && reads; ++a) {
            int64_t p_lo = 0, p_hi = int64_t(extent[a]) - 1;
            if (a < split) {
                p_lo = p_hi = int64_t(prefix / (slab[a] / (extent[split] * slab[split])) % extent[a]);
            } else if (a == split) {
                p_lo = int64_t(lo), p_hi = int64_t(hi) - 1;
            }
            int64_t k_min = 0, k_max = 0;
            reads = k_range(axes[a], p_lo, p_hi, k_min, k_max);
            first += k_min * int64_t(dy_stride[a]);
            last += k_max * int64_t(dy_stride[a]);
        }
        c.reads_dy = reads;
        if (reads) c.dy_first = uint64_t(first), c.dy_last = uint64_t(last);
        return c;
    };

    if (dx_total <= max_elements) return {box(0, 0, 0, extent[0])};
    size_t split = 0;  // the outermost axis one step of which fits
    while (slab[split] > max_elements) ++split;
    const uint64_t rows = max_elements / slab[split];
    const uint64_t prefixes = dx_total / (extent[split] * slab[split]);
    std::vector<Chunk> out;
    for (uint64_t prefix = 0; prefix < prefixes; ++prefix)
        for (uint64_t lo = 0; lo < extent[split]; lo += rows)
            out.push_back(box(split, prefix, lo, std::min(lo + rows, extent[split])));
    return out;
}

namespace {

// Per coordinate of `axis`: the dY offset it contributes (k * dy_stride), or `not_reached`.
std::vector<uint32_t> axis_offsets(const SliceAxis& axis, uint64_t dy_stride, uint32_t not_reached) {
    std::vector<uint32_t> offsets(size_t(axis.dx), not_reached);
    for (int64_t k = 0; k < axis.dy; ++k)
        offsets[size_t(axis.start + axis.stride * k)] = uint32_t(uint64_t(k) * dy_stride);
    return offsets;
}

// A row-major table of a group of axes (per coordinate, the dY offset, or not_reached) grown by `axis` outside them,
// whose coordinate becomes the leading digit; `dy_stride` is the dY elements per step of that axis.
std::vector<uint32_t> with_outer_axis(const std::vector<uint32_t>& table, const SliceAxis& axis, uint64_t dy_stride,
                                      uint32_t not_reached) {
    const std::vector<uint32_t> offsets = axis_offsets(axis, dy_stride, not_reached);
    std::vector<uint32_t> grown;
    grown.reserve(offsets.size() * table.size());
    for (uint32_t outer : offsets)
        for (uint32_t inner : table)
            grown.push_back(outer == not_reached || inner == not_reached ? not_reached : outer + inner);
    return grown;
}

}  // namespace

size_t line_axes(const std::vector<SliceAxis>& axes, uint64_t min_columns, uint64_t max_columns) {
    size_t folded = 1;
    uint64_t columns = uint64_t(axes.back().dx);
    while (columns < min_columns && folded < axes.size() &&
           columns * uint64_t(axes[axes.size() - 1 - folded].dx) <= max_columns)
        columns *= uint64_t(axes[axes.size() - 1 - folded++].dx);
    return folded;
}

Lines lines(const std::vector<SliceAxis>& axes, size_t folded, uint32_t not_reached) {
    Lines out;
    out.axes.assign(axes.begin(), axes.end() - ptrdiff_t(folded));
    SliceAxis line{1, 1, 0, 1};
    out.columns = {0};
    for (size_t a = axes.size(); a-- > axes.size() - folded;) {
        out.columns = with_outer_axis(out.columns, axes[a], uint64_t(line.dy), not_reached);
        line.dx *= axes[a].dx;
        line.dy *= axes[a].dy;
    }
    out.axes.push_back(line);
    return out;
}

std::vector<SliceAxis> split_by_step(const std::vector<SliceAxis>& axes, size_t a) {
    const SliceAxis& axis = axes[a];
    const int64_t m = axis.stride < 0 ? -axis.stride : axis.stride;
    return with_axis_split(axes, a, {ceil_div(axis.dx, m), axis.dy, axis.start / m, axis.stride / m},
                           {m, 1, axis.start % m, 1});
}

std::vector<SliceAxis> split_into_blocks(const std::vector<SliceAxis>& axes, size_t a, int64_t n) {
    if (!copied_whole(axes[a]) || n < 1)
        throw std::logic_error("slice_gpu::split_into_blocks: not an axis copied whole");
    const int64_t blocks = ceil_div(axes[a].dx, n);
    return with_axis_split(axes, a, {blocks, blocks, 0, 1}, {n, n, 0, 1});
}

std::vector<uint32_t> column_gaps(const std::vector<uint32_t>& columns, uint32_t not_reached, uint32_t window) {
    const size_t n = columns.size();
    std::vector<uint32_t> gaps(n, window);
    uint32_t gap = window;  // from the column after c, the lines seen as one repeating sequence
    for (size_t i = 2 * n; i-- > 0;) {
        gap = columns[i % n] != not_reached ? 0 : std::min(window, gap + 1);
        if (i < n) gaps[i] = gap;
    }
    return gaps;
}

std::vector<uint32_t> column_windows(const std::vector<uint32_t>& columns, uint64_t elems, uint32_t filler) {
    const uint64_t n = columns.size(), length = (n + elems - 1) / elems, groups = (elems + 3) / 4;
    std::vector<uint32_t> out(4 * groups * elems * length, filler);
    for (uint64_t c = 0; c < n; ++c)
        for (uint64_t k = 0; k < elems; ++k)
            out[4 * ((k / 4 * elems + c % elems) * length + c / elems) + k % 4] = columns[(c + k) % n];
    return out;
}

std::vector<uint32_t> column_words(const std::vector<uint32_t>& columns, uint32_t not_reached) {
    constexpr uint64_t elems = 16, reach = 8;  // a uint4's bytes; the dY bytes a line's two words hold
    const uint64_t n = columns.size(), length = (n + elems - 1) / elems;
    std::vector<uint32_t> out(4 * 2 * elems * length, 0);
    for (uint64_t c = 0; c < n; ++c) {
        uint32_t low[2] = {not_reached, not_reached}, high[2] = {0, 0};
        for (uint64_t k = 0; k < elems; ++k) {
            const uint32_t w = columns[(c + k) % n];
            const int line = c + k >= n ? 1 : 0;
            if (w == not_reached) continue;
            low[line] = std::min(low[line], w);
            high[line] = std::max(high[line], w);
        }
        for (int line = 0; line < 2; ++line) {
            if (low[line] == not_reached) low[line] = high[line] = 0;
            if (high[line] - low[line] >= reach) return {};
        }
        const uint64_t codes = 4 * ((c % elems) * length + c / elems), lines = codes + 4 * elems * length;
        for (uint64_t k = 0; k < elems; ++k) {
            const uint32_t w = columns[(c + k) % n];
            if (w == not_reached) continue;
            const uint32_t line = c + k >= n ? 1 : 0, s = w - low[line];
            out[codes + k / 4] |= ((line << 6) | (s / 4 << 5) | (s % 4 << 3)) << (8 * (k % 4));
            out[lines + 2] |= 1u << k;
        }
        out[lines] = low[0];
        out[lines + 1] = low[1];
        out[lines + 2] |= (high[0] - low[0]) << 16 | (high[1] - low[1]) << 24;
    }
    return out;
}

std::vector<uint32_t> phased(const std::vector<uint32_t>& columns, uint64_t phases, uint32_t filler) {
    const uint64_t stride = (columns.size() + phases - 1) / phases;
    std::vector<uint32_t> out(phases * stride, filler);
    for (size_t c = 0; c < columns.size(); ++c) out[(c % phases) * stride + c / phases] = columns[c];
    return out;
}

WalkLevels walk_levels(const std::vector<SliceAxis>& axes, uint64_t table_max, uint32_t not_reached) {
    WalkLevels walk;
    walk.levels.push_back(axes.back());
    walk.table_at.push_back(kNoTable);
    uint64_t dy_stride = uint64_t(axes.back().dy);
    // Group (outermost first) of the current level and its table, row-major.
    SliceAxis group{1, 1, 0, 1};
    std::vector<uint32_t> table;
    auto close_group = [&] {
        if (table.empty()) return;
        walk.levels.push_back(group);
        walk.table_at.push_back(uint32_t(walk.tables.size()));
        walk.tables.insert(walk.tables.end(), table.begin(), table.end());
        group = SliceAxis{1, 1, 0, 1};
        table.clear();
    };
    for (size_t a = axes.size() - 1; a-- > 0;) {
        const SliceAxis& axis = axes[a];
        if (uint64_t(axis.dx) > table_max) {  // too long for a table: a level tested by arithmetic
            close_group();
            walk.levels.push_back(axis);
            walk.table_at.push_back(kNoTable);
        } else {
            if (!table.empty() && uint64_t(group.dx * axis.dx) > table_max) close_group();
            if (table.empty()) table = {0};
            table = with_outer_axis(table, axis, dy_stride, not_reached);
            group.dx *= axis.dx;
            group.dy *= axis.dy;
        }
        dy_stride *= uint64_t(axis.dy);
    }
    close_group();
    std::reverse(walk.levels.begin(), walk.levels.end());
    std::reverse(walk.table_at.begin(), walk.table_at.end());
    return walk;
}

std::vector<uint64_t> step_digits(const std::vector<SliceAxis>& levels, uint64_t step) {
    std::vector<uint64_t> digits(levels.size());
    uint64_t rest = step;
    for (size_t a = levels.size(); a-- > 0;) {
        digits[a] = rest % uint64_t(levels[a].dx);
        rest /= uint64_t(levels[a].dx);
    }
    return digits;
}

std::vector<Stretch> reached_stretches(const std::vector<SliceAxis>& axes, size_t levels, uint64_t most) {
    // The last level's reached coordinates are one run where it steps by +-1 (else a run each); the levels outside
    // it count every coordinate.
    const SliceAxis& last = axes[levels - 1];
    const bool one_run = last.stride == 1 || last.stride == -1;
    uint64_t count = one_run ? 1 : uint64_t(last.dy), inner = 1;
    for (size_t a = 0; a + 1 < levels && count <= most; ++a) count *= uint64_t(axes[a].dy);
    if (count > most) return {};
    for (size_t a = levels; a < axes.size(); ++a) inner *= uint64_t(axes[a].dx);
    // Each tuple's flat index over the levels outside the last, built a level at a time.
    std::vector<uint64_t> flat = {0};
    for (size_t a = 0; a + 1 < levels; ++a) {
        std::vector<uint64_t> next;
        for (uint64_t f : flat)
            for (int64_t k = 0; k < axes[a].dy; ++k)
                next.push_back(f * uint64_t(axes[a].dx) + uint64_t(axes[a].start + axes[a].stride * k));
        flat = std::move(next);
    }
    const int64_t low = std::min(last.start, last.start + last.stride * (last.dy - 1));
    const int64_t run_count = one_run ? 1 : last.dy, run_length = one_run ? last.dy : 1;
    std::vector<Stretch> runs;
    for (uint64_t f : flat)
        for (int64_t k = 0; k < run_count; ++k) {
            const uint64_t c = f * uint64_t(last.dx) + uint64_t(one_run ? low : last.start + last.stride * k);
            runs.push_back({c * inner, (c + uint64_t(run_length)) * inner});
        }
    std::sort(runs.begin(), runs.end(), [](const Stretch& a, const Stretch& b) { return a.begin < b.begin; });
    std::vector<Stretch> stretches;
    for (const Stretch& r : runs) {
        if (!stretches.empty() && stretches.back().end == r.begin)
            stretches.back().end = r.end;
        else
            stretches.push_back(r);
    }
    return stretches;
}

}  // namespace dmlgrad::slice_gpu
