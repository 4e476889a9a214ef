#include "gpu/ops/slice_geometry.h"

#include <algorithm>
#include <stdexcept>

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

}  // namespace

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

}  // namespace dmlgrad::slice_gpu
