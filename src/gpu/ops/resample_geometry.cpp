#include "gpu/ops/resample_geometry.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/error.h"
#include "interface/resample_grad.h"

namespace dmlgrad::resample_gpu {
namespace {

bool is_identity(const AxisTaps& taps, uint64_t dx, uint64_t dy) {
    if (dx != dy || taps.begin[dx] != dx) return false;  // then there are dx taps to look at
    for (uint64_t i = 0; i < dx; ++i)
        if (taps.begin[i] != i || taps.dy_index[i] != i || taps.weight[i] != 1.0f) return false;
    return true;
}

void require_contiguous(const AxisTaps& taps, uint64_t dx) {
    for (uint64_t i = 0; i < dx; ++i)
        for (uint32_t t = taps.begin[i] + 1; t < taps.begin[i + 1]; ++t)
            if (taps.dy_index[t] != taps.dy_index[t - 1] + 1)
                throw std::logic_error("resample-grad: a tap list is not contiguous in dY");
}

// The dY indices that dX indices [lo, hi) of an axis reach: an interval, as the first and the last dY index of
// each list never decrease with the dX index. Empty when none of them has a tap.
struct Span {
    uint64_t first, last;
};
std::optional<Span> reach(const Axis& axis, uint64_t lo, uint64_t hi) {
    if (axis.identity) return Span{lo, hi - 1};
    const AxisTaps& t = *axis.taps;
    if (t.begin[lo] == t.begin[hi]) return std::nullopt;
    return Span{t.dy_index[t.begin[lo]], t.dy_index[t.begin[hi] - 1]};
}

// The longest dY interval a single dX index of the axis reaches, as last - first.
uint64_t widest_reach(const Axis& axis) {
    uint64_t widest = 0;
    for (uint64_t i = 0; !axis.identity && i < axis.dx; ++i)
        if (auto s = reach(axis, i, i + 1)) widest = std::max(widest, s->last - s->first);
    return widest;
}

// The outermost depth whose single steps fit `max_elements`, judged by the widest reach on every axis.
size_t split_depth(const View& view, const std::array<uint64_t, 4>& dx_slab, const std::array<uint64_t, 4>& dy_slab,
                   uint64_t max_elements) {
    for (size_t depth = 0; depth < 4; ++depth) {
        uint64_t dy_reach = 1;
        for (size_t a = 0; a < 4; ++a) {
            if (a <= depth) {
                dy_reach += widest_reach(view[a]) * dy_slab[a];
            } else if (auto s = reach(view[a], 0, view[a].dx)) {
                dy_reach += (s->last - s->first) * dy_slab[a];
            }
        }
        if (dx_slab[depth] <= max_elements && dy_reach <= max_elements) return depth;
    }
    throw RuntimeFailure(
        fmt::format("resample-grad on the GPU: one dX element reads a dY range longer than one "
                    "binding of this device holds ({} elements); run it with --cpu",
                    max_elements));
}

// f when dX index i takes exactly dY indices [f i, f i + f), each of weight 1 (an identity: 1); else 0.
uint64_t block_factor(const Axis& axis) {
    if (axis.identity) return 1;
    const AxisTaps& t = *axis.taps;
    const uint64_t f = axis.dy / axis.dx;
    if (f == 0 || axis.dy != f * axis.dx || t.begin[axis.dx] != axis.dy) return 0;
    for (uint64_t i = 0; i <= axis.dx; ++i)
        if (t.begin[i] != f * i) return 0;
    for (uint64_t k = 0; k < axis.dy; ++k)
        if (t.dy_index[k] != k || t.weight[k] != 1.0f) return 0;
    return f;
}

// The fewest and the most taps an index of `axis` has (an identity axis, or one of no index: one and one).
std::pair<uint64_t, uint64_t> tap_counts(const Axis& axis) {
    if (axis.identity || axis.dx == 0) return {1, 1};
    return dmlgrad::tap_counts(*axis.taps);
}

}  // namespace

std::optional<BlockFactors> block_factors(const View& view, uint32_t max_columns) {
    if (!view[0].identity || !view[1].identity) return std::nullopt;
    const uint64_t rows = block_factor(view[2]), columns = block_factor(view[3]);
    if (rows == 0 || rows > UINT32_MAX || columns == 0 || columns > max_columns) return std::nullopt;
    return BlockFactors{uint32_t(rows), uint32_t(columns)};
}

bool one_tap(const View& view) {
    return std::all_of(view.begin(), view.end(), [](const Axis& axis) {
        return tap_counts(axis) == std::pair<uint64_t, uint64_t>{1, 1};
    });
}

uint64_t inner_taps(const View& view) {
    return std::max<uint64_t>({1, tap_counts(view[2]).second, tap_counts(view[3]).second});
}

uint64_t outer_taps(const View& view) {
    return std::max<uint64_t>({1, tap_counts(view[0]).second, tap_counts(view[1]).second});
}

uint64_t row_taps(const View& view) { return std::max<uint64_t>(1, tap_counts(view[3]).second); }

uint64_t inner_column_taps(const View& view) {
    const Axis& axis = view[3];
    if (axis.identity) return 1;
    uint64_t most = 0;
    for (uint64_t i = 1; i + 1 < axis.dx; ++i)
        most = std::max<uint64_t>(most, axis.taps->begin[i + 1] - axis.taps->begin[i]);
    return most;
}

uint64_t dy_rows_of_a_row(const View& view) {
    return tap_counts(view[0]).second * tap_counts(view[1]).second * tap_counts(view[2]).second;
}

View make_view(const ResampleGradPlan& plan) {
    std::vector<Axis> axes;
    for (size_t d = 0; d < plan.axes.size(); ++d) {
        const uint64_t dx = uint64_t(plan.dx_shape[d]), dy = uint64_t(plan.dy_shape[d]);
        const AxisTaps& taps = plan.axes[d];
        require_contiguous(taps, dx);
        const bool identity = is_identity(taps, dx, dy);
        if (identity && dx == 1) continue;  // an axis of one element: no axis (rows of 1 would hide the next)
        if (identity && !axes.empty() && axes.back().identity) {
            axes.back().dx *= dx;
            axes.back().dy *= dy;
        } else {
            axes.push_back(Axis{dx, dy, identity, identity ? nullptr : &taps});
        }
    }
    if (axes.size() > 4) throw std::logic_error("resample-grad: rank above 4");
    View view;  // leading axes of size 1
    std::copy(axes.begin(), axes.end(), view.end() - axes.size());
    return view;
}

std::vector<uint32_t> tap_tables(const View& view, InterpolationMode mode, std::array<uint32_t, 4>& offsets) {
    using namespace kernels::resample_grad;
    std::vector<uint32_t> words(TABLE_ONE + 1, 0u);
    words[TABLE_ONE] = std::bit_cast<uint32_t>(1.0f);
    for (size_t a = 0; a < 4; ++a) {
        const Axis& axis = view[a];
        if (axis.identity) {
            offsets[a] = IDENTITY_AXIS;
            continue;
        }
        const AxisTaps& t = *axis.taps;
        const uint64_t pairs = words.size();
        const uint64_t weights = pairs + TABLE_PAIR_WORDS * (axis.dx + 1);
        const uint64_t tap_count = t.begin[axis.dx];
        if (weights + tap_count > UINT32_MAX) throw RuntimeFailure("resample-grad on the GPU: tap tables too large");
        offsets[a] = uint32_t(pairs);
        words.resize(weights, 0u);
        // Linear mode: the tap start is the word of the first weight; nearest mode has no weights to point at.
        const uint64_t start_base = mode == InterpolationMode::linear ? weights : 0;
        for (uint64_t i = 0; i <= axis.dx; ++i) {
            const uint32_t b = t.begin[i];
            const bool any = i < axis.dx && b < t.begin[i + 1];
            uint32_t* pair = &words[pairs + TABLE_PAIR_WORDS * i];
            pair[0] = any ? t.dy_index[b] : 0u;
            pair[TABLE_START] = uint32_t(start_base + b);
        }
        if (mode == InterpolationMode::linear)
            for (float w : t.weight) words.push_back(std::bit_cast<uint32_t>(w));
    }
    words.insert(words.end(), TABLE_PAD_WORDS, 0u);  // the kernels may read that many weights past a list's end
    return words;
}

uint64_t phased_words(const View& view, InterpolationMode mode, uint32_t phases) {
    using namespace kernels::resample_grad;
    if (view[3].identity) return 0;
    const uint64_t n = (view[3].dx + phases - 1) / phases * phases;
    return (mode == InterpolationMode::linear ? PHASED_WEIGHT + PHASED_WEIGHTS : PHASED_COUNT + 1) * n;
}

void insert_phased_columns(const View& view, InterpolationMode mode, uint32_t phases, std::vector<uint32_t>& tables) {
    using namespace kernels::resample_grad;
    const Axis& axis = view[3];
    if (axis.identity) return;
    const AxisTaps& t = *axis.taps;
    const uint64_t per_phase = (axis.dx + phases - 1) / phases, n = per_phase * phases;
    const bool linear = mode == InterpolationMode::linear;
    std::vector<uint32_t> phased(phased_words(view, mode, phases), 0u);  // past the row: no taps
    const uint64_t weights_end = tables.size() - TABLE_PAD_WORDS;
    for (uint64_t i = 0; i < axis.dx; ++i) {
        const uint64_t at = (i % phases) * per_phase + i / phases, begin = t.begin[i], taps = t.begin[i + 1] - begin;
        phased[PHASED_FIRST * n + at] = taps != 0 ? t.dy_index[begin] : 0u;
        phased[PHASED_COUNT * n + at] = uint32_t(taps);
        if (!linear) continue;
        phased[PHASED_START * n + at] = uint32_t(weights_end - t.weight.size() + begin);
        for (uint64_t k = 0; k < std::min<uint64_t>(taps, PHASED_WEIGHTS); ++k)
            phased[(PHASED_WEIGHT + k) * n + at] = std::bit_cast<uint32_t>(t.weight[begin + k]);
    }
    tables.insert(tables.end() - TABLE_PAD_WORDS, phased.begin(), phased.end());
}

bool rows_read_their_own_row(const View& view) { return view[0].identity && view[1].identity && view[2].identity; }

std::vector<uint32_t> line_row_starts(const View& view) {
    using namespace kernels::resample_grad;
    if (dy_rows_of_a_row(view) > 1) throw std::logic_error("resample_gpu::line_row_starts: a row of several dY rows");
    // The dY index each index of an outer axis reads, or none.
    std::array<std::vector<int64_t>, 3> dy_of;
    for (size_t a = 0; a < 3; ++a)
        for (uint64_t i = 0; i < view[a].dx; ++i) {
            const Axis& axis = view[a];
            const bool any = axis.identity || axis.taps->begin[i] < axis.taps->begin[i + 1];
            dy_of[a].push_back(!any            ? -1
                               : axis.identity ? int64_t(i)
                                               : int64_t(axis.taps->dy_index[axis.taps->begin[i]]));
        }
    std::vector<uint32_t> starts;
    starts.reserve(view[0].dx * view[1].dx * view[2].dx + 1);
    for (int64_t d0 : dy_of[0])
        for (int64_t d1 : dy_of[1])
            for (int64_t d2 : dy_of[2]) {
                const bool any = d0 >= 0 && d1 >= 0 && d2 >= 0;
                const uint64_t dy_row = (uint64_t(d0) * view[1].dy + uint64_t(d1)) * view[2].dy + uint64_t(d2);
                starts.push_back(any ? uint32_t(dy_row * view[3].dy) : NO_DY_ROW);
            }
    starts.push_back(NO_DY_ROW);
    return starts;
}

std::vector<uint32_t> line_columns(const View& view, uint32_t phases) {
    using namespace kernels::resample_grad;
    const Axis& axis = view[3];
    if (axis.identity || axis.dy > LINE_FIRST_MASK || row_taps(view) > LINE_MOST_COUNT)
        throw std::logic_error("resample_gpu::line_columns: a row the lines kernel does not take from a table");
    const AxisTaps& t = *axis.taps;
    const uint64_t per_phase = (axis.dx + phases - 1) / phases;
    std::vector<uint32_t> words(per_phase * phases, 0u);  // past the row: no taps
    for (uint64_t i = 0; i < axis.dx; ++i) {
        const uint64_t taps = t.begin[i + 1] - t.begin[i];
        const uint64_t first = taps != 0 ? t.dy_index[t.begin[i]] : 0;
        words[(i % phases) * per_phase + i / phases] = uint32_t(first | taps << LINE_COUNT_SHIFT);
    }
    return words;
}

bool taps_cover_dy_rows_in_order(const View& view) {
    const Axis& axis = view[3];
    if (axis.identity || axis.taps->dy_index.size() != axis.dy) return false;
    const std::vector<uint32_t>& dy_index = axis.taps->dy_index;
    for (uint64_t j = 0; j < dy_index.size(); ++j)
        if (dy_index[j] != j) return false;
    return true;
}

std::vector<uint32_t> line_bounds(const View& view, uint32_t phases) {
    if (!taps_cover_dy_rows_in_order(view))
        throw std::logic_error("resample_gpu::line_bounds: taps that do not cover the dY rows in order");
    const Axis& axis = view[3];
    const uint64_t per_phase = (axis.dx + phases) / phases;  // dx + 1 words
    std::vector<uint32_t> words(per_phase * phases, 0u);
    for (uint64_t i = 0; i <= axis.dx; ++i) words[(i % phases) * per_phase + i / phases] = axis.taps->begin[i];
    return words;
}

uint32_t tiny_limit(const View& view, InterpolationMode mode, DType type) {
    // The smallest weight product, in the kernel's order (monotonic rounding: no product of taps is smaller,
    // and no partial product either, as every weight is at most 1).
    float smallest_product = 1.0f;
    for (const Axis& axis : view)
        if (mode == InterpolationMode::linear && !axis.identity && !axis.taps->weight.empty())
            smallest_product *= *std::min_element(axis.taps->weight.begin(), axis.taps->weight.end());
    if (smallest_product < 0x1p-126f) return 0xFFFFFFFFu;  // a denormal product: every nonzero dY exactly
    // |v| >= 2^e with 2^e * smallest_product >= 2^-101 makes every term at least 2^-101 in magnitude, so a
    // multiple of 2^-124: every sum of them is 0 or normal.
    const int e = std::max(int(std::ceil(std::log2(0x1p-101 / double(smallest_product)))), -126);
    if (type == DType::f16) {  // on the half's bits; its smallest nonzero magnitude is 2^-24
        if (e <= -24) return 0;
        if (e > 15) return 0xFFFFFFFFu;
        const uint32_t bound = e >= -14 ? uint32_t(e + 15) << 10 : 1u << (e + 24);
        return (bound << 17) - 1u;
    }
    return ((uint32_t(e + 127) << 23) << 1) - 1u;
}

std::vector<Chunk> chunks(const View& view, uint64_t max_elements) {
    if (max_elements == 0) throw std::logic_error("resample_gpu::chunks: max_elements must be positive");
    std::array<uint64_t, 4> dx_slab{}, dy_slab{};  // elements per step of each axis
    uint64_t dx_total = 1, dy_total = 1;
    for (size_t a = 4; a-- > 0;) {
        dx_slab[a] = dx_total;
        dy_slab[a] = dy_total;
        dx_total *= view[a].dx;
        dy_total *= view[a].dy;
    }

    // The box: axes before `depth` at `index`, axis `depth` in [lo, hi), the inner axes whole.
    auto box = [&](size_t depth, const std::array<uint64_t, 4>& index, uint64_t lo, uint64_t hi) {
        Chunk c;
        c.begin = lo * dx_slab[depth];
        for (size_t a = 0; a < depth; ++a) c.begin += index[a] * dx_slab[a];
        c.end = c.begin + (hi - lo) * dx_slab[depth];
        c.reads_dy = true;
        for (size_t a = 0; a < 4 && c.reads_dy; ++a) {
            const auto span = a < depth    ? reach(view[a], index[a], index[a] + 1)
                              : a == depth ? reach(view[a], lo, hi)
                                           : reach(view[a], 0, view[a].dx);
            if (!span) {
                c = Chunk{c.begin, c.end, false, 0, 0};
                break;
            }
            c.dy_first += span->first * dy_slab[a];
            c.dy_last += span->last * dy_slab[a];
        }
        return c;
    };
    auto fits = [&](const Chunk& c) {
        return c.end - c.begin <= max_elements && (!c.reads_dy || c.dy_last - c.dy_first < max_elements);
    };

    const size_t depth = split_depth(view, dx_slab, dy_slab, max_elements);
    std::vector<Chunk> out;
    const uint64_t prefixes = dx_total / (view[depth].dx * dx_slab[depth]);
    for (uint64_t p = 0; p < prefixes; ++p) {
        std::array<uint64_t, 4> index{};
        for (size_t a = depth, rest = p; a-- > 0;) index[a] = rest % view[a].dx, rest /= view[a].dx;
        const uint64_t size = view[depth].dx;
        for (uint64_t lo = 0; lo < size;) {
            // The largest hi that fits: the chunk's dY range only grows with hi. One step always fits.
            uint64_t good = lo + 1, step = 1;
            while (good + step <= size && fits(box(depth, index, lo, good + step))) good += step, step *= 2;
            for (; step > 0; step /= 2)
                if (good + step <= size && fits(box(depth, index, lo, good + step))) good += step;
            out.push_back(box(depth, index, lo, good));
            lo = good;
        }
    }
    return out;
}

}  // namespace dmlgrad::resample_gpu
