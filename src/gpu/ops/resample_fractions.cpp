#include "gpu/ops/resample_fractions.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace dmlgrad::resample_gpu {
namespace {

constexpr uint64_t kNoColumn = std::numeric_limits<uint64_t>::max();

// Per dY column, the dX columns it reaches (in increasing order, as the lists are walked by dX column) and their
// weights.
struct DyTaps {
    uint64_t lower = kNoColumn;
    float lower_weight = 0.0f;
    uint64_t upper = kNoColumn;
    float upper_weight = 0.0f;
    bool more = false;  // a third tap
};

std::vector<DyTaps> taps_by_dy_column(const Axis& axis) {
    const AxisTaps& t = *axis.taps;
    std::vector<DyTaps> by_dy(axis.dy);
    for (uint64_t i = 0; i < axis.dx; ++i)
        for (uint32_t k = t.begin[i]; k < t.begin[i + 1]; ++k) {
            DyTaps& d = by_dy[t.dy_index[k]];
            if (d.lower == kNoColumn) {
                d.lower = i, d.lower_weight = t.weight[k];
            } else if (d.upper == kNoColumn) {
                d.upper = i, d.upper_weight = t.weight[k];
            } else {
                d.more = true;
            }
        }
    return by_dy;
}

// The fraction f of a dY column whose taps are (lower, 1 - f) and (lower + 1, f), or (lower, 1) with f = 0; none
// where they are not of that form.
std::optional<float> fraction_of(const DyTaps& d) {
    if (d.lower == kNoColumn || d.more) return std::nullopt;
    if (d.upper == kNoColumn) return d.lower_weight == 1.0f ? std::optional<float>(0.0f) : std::nullopt;
    const float f = d.upper_weight;
    const bool neighbours = d.upper == d.lower + 1;
    // Bits, not values: the kernel computes 1.0f - f, and the plan's weight must be that float.
    if (!neighbours || f == 0.0f || std::bit_cast<uint32_t>(d.lower_weight) != std::bit_cast<uint32_t>(1.0f - f))
        return std::nullopt;
    return f;
}

}  // namespace

std::optional<std::vector<uint32_t>> fraction_tables(const View& view) {
    const Axis& axis = view[3];
    if (!rows_read_their_own_row(view) || axis.identity || axis.dy > UINT32_MAX - 1) return std::nullopt;
    const std::vector<DyTaps> by_dy = taps_by_dy_column(axis);
    std::vector<uint32_t> words(axis.dx + 2, 0u);
    std::vector<uint32_t> fractions(axis.dy);
    uint64_t next_bound = 1;  // the next bound to set: bounds[b] is the first dY column of lower >= b - 1
    uint64_t last_lower = 0;
    for (uint64_t o = 0; o < axis.dy; ++o) {
        const std::optional<float> f = fraction_of(by_dy[o]);
        const uint64_t lower = by_dy[o].lower;
        if (!f || lower < last_lower) return std::nullopt;
        last_lower = lower;
        while (next_bound <= lower + 1) words[next_bound++] = uint32_t(o);
        fractions[o] = std::bit_cast<uint32_t>(*f);
    }
    while (next_bound <= axis.dx + 1) words[next_bound++] = uint32_t(axis.dy);
    words.insert(words.end(), fractions.begin(), fractions.end());
    return words;
}

uint64_t longest_fraction_range(const std::vector<uint32_t>& tables, uint64_t n) {
    uint64_t longest = 0;
    for (uint64_t i = 0; i < n; ++i) longest = std::max<uint64_t>(longest, tables[i + 2] - tables[i]);
    return longest;
}

}  // namespace dmlgrad::resample_gpu
