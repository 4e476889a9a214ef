// Resample grad on the CPU: a gather over the plan's per-axis tap tables (docs/OPERATORS.md 5.4).
//
// Exact arithmetic, fixed so that the GPU kernel gives the same bits. For the dX element (i_0, ..., i_r):
//
//     acc = +0.0f
//     for t_0 in taps_0(i_0)                      (axis 0 outermost; each list in table order = increasing dY)
//       ...
//         for t_r in taps_r(i_r)                  (last axis innermost)
//           acc += (((w_0 * w_1) * ...) * w_r) * dY[o_0, ..., o_r]
//
// all in float32: the weight product left to right, then times dY, then added to acc, and a NaN acc stays as it
// is (core/nan_sum.h). fp16 dY values are
// converted exactly to float and the result is rounded once (float_to_half). Zero-weight taps are not in the
// tables, so a non-finite dY reaches only the dX elements that really sample it.
//
// Tensors of rank below 4 run as rank 4 with leading identity axes (one tap, weight 1): the extra factors of 1
// change no bit of the product.
//
// Loop order (any order that keeps each element's sequence above gives the same bits): a work unit is one
// (i_0, i_1) plane and a band of its rows i_2. For each outer tap pair, the unit visits dY rows o_2 in increasing
// order and adds each to the rows i_2 of the band that it reaches (each i_2 list is in increasing o_2, so every
// element still sees its taps in table order). Along the last axis the taps are laid out as K slots per element
// (slot k = the element's k-th tap; weight 0 and value 0 where it has fewer), each dY row is brought once into
// that layout (regular runs of elements read it in place or from its even and odd halves, the other elements'
// taps are copied one by one), and the inner loop is a plain vector multiply-add. An unused slot adds +0.0f,
// which changes no accumulator: acc starts at +0, and float32 sums rounded to nearest never reach -0 from there.
// Where slots would mostly be empty (very uneven tap counts), the inner loop walks the tap lists instead.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/float_order.h"
#include "core/half.h"
#include "core/nan_sum.h"
#include "core/parallel.h"
#include "cpu/kernels.h"
#include "cpu/vector_dispatch.h"

namespace dmlgrad {
namespace {

constexpr size_t kAxes = 4;
constexpr int64_t kUnitsPerWorker = 8;  // enough units to balance the threads
constexpr int64_t kMinRunLength = 8;    // shorter regular stretches are gathered tap by tap

struct AxisView {
    const uint32_t* begin;
    const uint32_t* dy_index;
    const float* weight;
    uint32_t taps(int64_t i) const { return begin[i + 1] - begin[i]; }
    uint32_t first_dy(int64_t i) const { return dy_index[begin[i]]; }
};

const uint32_t kIdentityBegin[] = {0, 1};
const uint32_t kIdentityIndex[] = {0};
const float kIdentityWeight[] = {1.0f};

// One axis listed by dY index: the (dx_index, weight) taps of each o, from the plan's per-dX lists.
struct ForwardTaps {
    std::vector<uint32_t> begin;  // size O + 1
    std::vector<uint32_t> dx_index;
    std::vector<float> weight;
};

ForwardTaps forward_taps(const AxisView& axis, int64_t dx_size, int64_t dy_size) {
    ForwardTaps f;
    const uint32_t count = axis.begin[dx_size];
    f.begin.assign(size_t(dy_size) + 1, 0);
    for (uint32_t t = 0; t < count; ++t) ++f.begin[axis.dy_index[t] + 1];
    for (size_t o = 1; o < f.begin.size(); ++o) f.begin[o] += f.begin[o - 1];
    f.dx_index.resize(count);
    f.weight.resize(count);
    std::vector<uint32_t> next(f.begin.begin(), f.begin.end() - 1);
    for (int64_t i = 0; i < dx_size; ++i)
        for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t) {
            const uint32_t slot = next[axis.dy_index[t]]++;
            f.dx_index[slot] = uint32_t(i);
            f.weight[slot] = axis.weight[t];
        }
    return f;
}

// Elements [first, first + count) that all have `slots` taps starting at dY first_dy + stride * (i - first), so
// slot k of element i holds dY first_dy + stride * (i - first) + k. With stride 1 the dY row is read in place; with
// stride 2 it is split once into its two phases (even and odd dY), and slot k reads phase k % 2 shifted by k / 2:
// two half-length copies instead of one strided copy per slot.
struct RegularRun {
    int64_t first;
    int64_t count;
    int64_t first_dy;
    int64_t stride;
    std::array<int64_t, 2> phase_length{};  // dY values each phase needs (stride 2)
    int64_t phase_offset = 0;               // where the run's phases start in the phase scratch
    std::vector<float> slot_weight;         // the weight of each slot where the whole run shares it, else empty
};

// The elements [first, first + count): one regular run, or elements gathered into the slot layout tap by tap.
struct Segment {
    int64_t first;
    int64_t count;
    int64_t run;  // index in SlotLayout::runs, -1 for gathered elements
};

// The last axis as K slots per element, slot-major (slot k of element i at k * width + i), and how to gather a
// dY row into it: regular runs (read in place or from their phases) plus the remaining taps one by one.
struct SlotLayout {
    int64_t slots = 0;
    std::vector<float> weight;  // 0 in unused slots
    std::vector<RegularRun> runs;
    std::vector<Segment> segments;          // covering [0, width) in order
    int64_t phase_scratch = 0;              // floats of phases per dY row
    std::vector<uint32_t> single_position;  // slot position of each remaining tap
    std::vector<uint32_t> single_dy;        // and its dY index
};

int64_t widest_tap_list(const AxisView& axis, int64_t width) {
    uint32_t widest = 0;
    for (int64_t i = 0; i < width; ++i) widest = std::max(widest, axis.taps(i));
    return widest;
}

// Slots pay off unless a few elements have far more taps than the rest.
bool slots_pay_off(const AxisView& axis, int64_t width, int64_t slots) {
    return slots * width <= 2 * int64_t(axis.begin[width]) + 64;
}

// The end of the regular run starting at element i (i itself when there is none worth taking).
RegularRun regular_run_at(const AxisView& axis, int64_t width, int64_t slots, int64_t i) {
    RegularRun run{i, 0, 0, 0, {}, 0, {}};
    if (axis.taps(i) != slots || i + 1 >= width || axis.taps(i + 1) != slots) return run;
    run.first_dy = axis.first_dy(i);
    run.stride = int64_t(axis.first_dy(i + 1)) - int64_t(axis.first_dy(i));
    if (run.stride != 1 && run.stride != 2) return run;
    int64_t end = i + 1;
    while (end < width && axis.taps(end) == slots &&
           int64_t(axis.first_dy(end)) - int64_t(axis.first_dy(end - 1)) == run.stride)
        ++end;
    // taps are contiguous in dY within each list (u is monotonic), so slot k holds first_dy(i) + k
    run.count = end - i;
    return run;
}

// Slot weights shared by every element of the run (the interior of a plain upscale): the inner loop then
// multiplies the prefix by one weight per slot instead of one per element, which gives the same products.
constexpr int64_t kMaxSharedSlots = 16;
std::vector<float> shared_slot_weights(const std::vector<float>& weight, int64_t width, int64_t slots,
                                       const RegularRun& run) {
    if (slots > kMaxSharedSlots) return {};
    std::vector<float> shared(static_cast<size_t>(slots));
    for (int64_t k = 0; k < slots; ++k) {
        shared[size_t(k)] = weight[size_t(k * width + run.first)];
        for (int64_t i = run.first; i < run.first + run.count; ++i)
            if (std::bit_cast<uint32_t>(weight[size_t(k * width + i)]) != std::bit_cast<uint32_t>(shared[size_t(k)]))
                return {};
    }
    return shared;
}

// Where the run's stride-2 phases go; phase r holds dY first_dy + r + 2j for the j its slots reach.
void place_phases(RegularRun& run, int64_t slots, int64_t& phase_scratch) {
    if (run.stride != 2) return;
    run.phase_offset = phase_scratch;
    for (int64_t r = 0; r < 2; ++r) {
        const int64_t last_slot = r + 2 * ((slots - 1 - r) / 2);  // the last slot k with k % 2 == r
        run.phase_length[size_t(r)] = r < slots ? run.count + (last_slot - r) / 2 : 0;
        phase_scratch += run.phase_length[size_t(r)];
    }
}

void add_single_taps(const AxisView& axis, int64_t width, int64_t i, SlotLayout& s) {
    for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t) {
        s.single_position.push_back(uint32_t(int64_t(t - axis.begin[i]) * width + i));
        s.single_dy.push_back(axis.dy_index[t]);
    }
}

SlotLayout slot_layout(const AxisView& axis, int64_t width, int64_t slots) {
    SlotLayout s;
    s.slots = slots;
    s.weight.assign(size_t(slots * width), 0.0f);
    for (int64_t i = 0; i < width; ++i)
        for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t)
            s.weight[size_t(int64_t(t - axis.begin[i]) * width + i)] = axis.weight[t];
    for (int64_t i = 0; i < width;) {
        RegularRun run = regular_run_at(axis, width, slots, i);
        if (run.count >= kMinRunLength) {
            run.slot_weight = shared_slot_weights(s.weight, width, slots, run);
            place_phases(run, slots, s.phase_scratch);
            s.runs.push_back(std::move(run));
            s.segments.push_back({i, s.runs.back().count, int64_t(s.runs.size()) - 1});
            i += s.runs.back().count;
            continue;
        }
        add_single_taps(axis, width, i, s);
        if (s.segments.empty() || s.segments.back().run >= 0) s.segments.push_back({i, 0, -1});
        ++s.segments.back().count;
        ++i;
    }
    return s;
}

struct Geometry {
    std::array<AxisView, kAxes> axes;
    std::array<int64_t, kAxes> dx_size;
    std::array<int64_t, kAxes> dy_size;
    ForwardTaps rows;  // axis 2 listed by dY row
    bool use_slots = false;
    SlotLayout last;  // axis 3, when use_slots
};

Geometry geometry_of(const ResampleGradPlan& plan) {
    Geometry g;
    const size_t pad = kAxes - plan.axes.size();
    for (size_t d = 0; d < kAxes; ++d) {
        if (d < pad) {
            g.axes[d] = {kIdentityBegin, kIdentityIndex, kIdentityWeight};
            g.dx_size[d] = g.dy_size[d] = 1;
        } else {
            const AxisTaps& taps = plan.axes[d - pad];
            g.axes[d] = {taps.begin.data(), taps.dy_index.data(), taps.weight.data()};
            g.dx_size[d] = plan.dx_shape[d - pad];
            g.dy_size[d] = plan.dy_shape[d - pad];
        }
    }
    g.rows = forward_taps(g.axes[2], g.dx_size[2], g.dy_size[2]);
    const int64_t slots = widest_tap_list(g.axes[3], g.dx_size[3]);
    g.use_slots = slots_pay_off(g.axes[3], g.dx_size[3], slots);
    if (g.use_slots) g.last = slot_layout(g.axes[3], g.dx_size[3], slots);
    return g;
}

// A dY row in the slot layout's terms: the taps of gathered elements in their slots (unused slots are never
// written, so they keep the zeros they were created with), the phases of stride-2 runs, and the row itself.
struct GatheredRow {
    std::vector<float> slots;
    std::vector<float> phases;
    const float* row = nullptr;
};

void split_phases(const RegularRun& run, const float* __restrict from, float* __restrict even, float* __restrict odd) {
    const int64_t both = std::min(run.phase_length[0], run.phase_length[1]);
    for (int64_t j = 0; j < both; ++j) {
        even[j] = from[2 * j];
        odd[j] = from[2 * j + 1];
    }
    for (int64_t j = both; j < run.phase_length[0]; ++j) even[j] = from[2 * j];
    for (int64_t j = both; j < run.phase_length[1]; ++j) odd[j] = from[2 * j + 1];
}

void gather_row(const SlotLayout& layout, const float* dy_row, GatheredRow& out) {
    out.row = dy_row;
    for (const RegularRun& run : layout.runs) {
        float* even = out.phases.data() + run.phase_offset;
        if (run.stride == 2) split_phases(run, dy_row + run.first_dy, even, even + run.phase_length[0]);
    }
    const size_t singles = layout.single_dy.size();
    for (size_t t = 0; t < singles; ++t) out.slots[layout.single_position[t]] = dy_row[layout.single_dy[t]];
}

// Slot k of the run's element first + j is at values(k)[j].
struct RunValues {
    const float* base;
    int64_t stride, even_length;
    const float* operator()(int64_t k) const { return stride == 1 ? base + k : base + (k % 2) * even_length + k / 2; }
};

RunValues run_values(const RegularRun& run, const GatheredRow& row) {
    if (run.stride == 1) return {row.row + run.first_dy, 1, 0};
    return {row.phases.data() + run.phase_offset, 2, run.phase_length[0]};
}

// acc[i] += (prefix * w) * dy_row[o] over the last-axis taps of every i, walking the tap lists.
void accumulate_taps(const AxisView& axis, int64_t width, float prefix, const float* dy_row, float* acc) {
    for (int64_t i = 0; i < width; ++i) {
        float sum = acc[i];
        for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t)
            sum += (prefix * axis.weight[t]) * dy_row[axis.dy_index[t]];
        acc[i] = sum;
    }
}

// The slot loops keep each block of 16 sums in two 8-float vectors (GCC/Clang vector extension: two AVX
// registers, or four SSE ones in the baseline version) across the slots. Each lane multiplies and adds as the
// scalar code would; written out, because GCC's own vectorizer split such a block into 8 + 4 + 2 + 1 + 1 lanes.
using Vec8 = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 16;

inline void load(Vec8& v, const float* p) { std::memcpy(&v, p, sizeof v); }
inline void store(float* p, const Vec8& v) { std::memcpy(p, &v, sizeof v); }

// add_block(i, sum0, sum1) adds the slots of elements [i, i + 16) to their sums, add_one(i) those of element i to
// acc[i]. Blocks start at 0, 16, ...; a remainder is one more block, the 16 elements ending at count, kept only
// for the elements no other block has (each lane reads and adds only its own element's values, so the lanes it
// shares with the block before are merely computed twice): no element is left to the scalar loop unless the whole
// range is shorter than a block.
template <class AddBlock, class AddOne>
void for_each_block(int64_t count, float* acc, const AddBlock& add_block, const AddOne& add_one) {
    const auto run_block = [&](int64_t i, float* out) {
        Vec8 sum0, sum1;
        load(sum0, acc + i), load(sum1, acc + i + 8);
        add_block(i, sum0, sum1);
        store(out, sum0), store(out + 8, sum1);
    };
    const int64_t full = count / kLanes * kLanes;
    const bool overlapping_tail = full < count && count >= kLanes;
    float tail[kLanes];
    if (overlapping_tail) run_block(count - kLanes, tail);
    for (int64_t i = 0; i < full; i += kLanes) run_block(i, acc + i);
    if (overlapping_tail)
        std::copy(tail + (full - (count - kLanes)), tail + kLanes, acc + full);
    else
        for (int64_t i = full; i < count; ++i) add_one(i);
}

// Elements [0, count) of a segment: slot k of element i has weight weight(k)[i] and value value(k)[i].
template <class Weight, class Value>
void accumulate_block_range(int64_t count, int64_t slots, float prefix, const Weight& weight, const Value& value,
                            float* acc) {
    const auto add_block = [&](int64_t i, Vec8& sum0, Vec8& sum1) {
        Vec8 w0, w1, v0, v1;
        for (int64_t k = 0; k < slots; ++k) {
            load(w0, weight(k) + i), load(w1, weight(k) + i + 8);
            load(v0, value(k) + i), load(v1, value(k) + i + 8);
            sum0 += (prefix * w0) * v0;
            sum1 += (prefix * w1) * v1;
        }
    };
    const auto add_one = [&](int64_t i) {
        float sum = acc[i];  // in a register: the compiler cannot know that the stores to acc change no input
        for (int64_t k = 0; k < slots; ++k) sum += (prefix * weight(k)[i]) * value(k)[i];
        acc[i] = sum;
    };
    for_each_block(count, acc, add_block, add_one);
}

// A run whose elements share each slot's weight: one product prefix * w per slot, the same for every element.
// kSlots > 0 is the slot count fixed at compile time, so that the slot loop unrolls; 0 takes it from `slots`.
template <int64_t kSlots>
void accumulate_shared_run(const RegularRun& run, int64_t slots, float prefix, const RunValues& values, float* acc) {
    if constexpr (kSlots > 0) slots = kSlots;
    float weighted[kMaxSharedSlots];
    const float* value[kMaxSharedSlots];
    for (int64_t k = 0; k < slots; ++k) {
        weighted[k] = prefix * run.slot_weight[size_t(k)];
        value[k] = values(k);
    }
    const auto add_block = [&](int64_t i, Vec8& sum0, Vec8& sum1) {
        Vec8 v0, v1;
        for (int64_t k = 0; k < slots; ++k) {
            load(v0, value[k] + i), load(v1, value[k] + i + 8);
            sum0 += weighted[k] * v0;
            sum1 += weighted[k] * v1;
        }
    };
    const auto add_one = [&](int64_t i) {
        float sum = acc[i];
        for (int64_t k = 0; k < slots; ++k) sum += weighted[k] * value[k][i];
        acc[i] = sum;
    };
    for_each_block(run.count, acc, add_block, add_one);
}

// acc[i] += (prefix * w) * value over the slots of every element, segment by segment.
void accumulate_slots(const SlotLayout& layout, int64_t width, float prefix, const GatheredRow& row, float* acc) {
    const float* weight = layout.weight.data();
    for (const Segment& seg : layout.segments) {
        const auto weights = [&](int64_t k) { return weight + k * width + seg.first; };
        if (seg.run < 0) {
            const auto values = [&](int64_t k) { return row.slots.data() + k * width + seg.first; };
            accumulate_block_range(seg.count, layout.slots, prefix, weights, values, acc + seg.first);
            continue;
        }
        const RegularRun& run = layout.runs[size_t(seg.run)];
        const RunValues values = run_values(run, row);
        if (run.slot_weight.empty())
            accumulate_block_range(seg.count, layout.slots, prefix, weights, values, acc + seg.first);
        else if (layout.slots == 4)  // linear 2x upscales: the slot loop unrolled
            accumulate_shared_run<4>(run, layout.slots, prefix, values, acc + seg.first);
        else
            accumulate_shared_run<0>(run, layout.slots, prefix, values, acc + seg.first);
    }
}

// Every fp16 value as a float, filled with half_to_float: one load per conversion instead of a branchy decode.
const float* half_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t h = 0; h < 65536; ++h) t[h] = half_to_float(uint16_t(h));
        return t;
    }();
    return table.data();
}

inline float to_float(float v) { return v; }
inline float to_float(uint16_t h) { return half_to_float(h); }

// dY rows as float: float32 tensors in place, fp16 rows converted into a scratch row.
inline const float* float_row(const float* row, int64_t, float*) { return row; }
inline const float* float_row(const uint16_t* row, int64_t width, float* scratch) {
    const float* table = half_table();
    for (int64_t o = 0; o < width; ++o) scratch[o] = table[row[o]];
    return scratch;
}

// On the bits, as integers, so that the loop vectorizes (a float `v != v` per element did not).
bool any_nan(const float* values, int64_t count) {
    uint32_t seen = 0;
    for (int64_t i = 0; i < count; ++i) seen |= uint32_t(is_nan_f32(std::bit_cast<uint32_t>(values[i])));
    return seen != 0;
}

// One thread's worker: dX rows [row_first, row_last) of plane (i0, i1) into acc (band rows x width).
template <class T>
class BandGather {
public:
    BandGather(const Geometry& g, const T* dy) : g_(g), dy_(dy), row_scratch_(size_t(g.dy_size[3])) {
        if (g.use_slots) {
            gathered_.slots.assign(g.last.weight.size(), 0.0f);  // unused slots stay 0 for good
            gathered_.phases.resize(size_t(g.last.phase_scratch));
        }
    }

    void run(int64_t i0, int64_t i1, int64_t row_first, int64_t row_last, float* acc) {
        std::fill(acc, acc + (row_last - row_first) * g_.dx_size[3], 0.0f);
        const auto [dy_first, dy_last] = dy_rows_reaching(row_first, row_last);
        const AxisView &a0 = g_.axes[0], &a1 = g_.axes[1];
        for (uint32_t t0 = a0.begin[i0]; t0 < a0.begin[i0 + 1]; ++t0) {
            const float p0 = a0.weight[t0];
            for (uint32_t t1 = a1.begin[i1]; t1 < a1.begin[i1 + 1]; ++t1) {
                const float p1 = p0 * a1.weight[t1];
                const int64_t plane = int64_t(a0.dy_index[t0]) * g_.dy_size[1] + a1.dy_index[t1];
                for (int64_t o2 = dy_first; o2 < dy_last; ++o2)
                    add_dy_row(p1, dy_ + (plane * g_.dy_size[2] + o2) * g_.dy_size[3], o2, row_first, row_last, acc);
            }
        }
        // The vector loops add with plain `+`, whose NaN bits (when two NaNs meet) the compiler's operand order
        // decides: the rare NaN results are summed again, one element at a time, by the rule of core/nan_sum.h.
        const int64_t width = g_.dx_size[3], count = (row_last - row_first) * width;
        constexpr int64_t kBlock = 256;  // a vectorised test per block first: NaNs are rare
        for (int64_t block = 0; block < count; block += kBlock) {
            const int64_t end = std::min(count, block + kBlock);
            if (!any_nan(acc + block, end - block)) continue;
            for (int64_t i = block; i < end; ++i)
                if (std::isnan(acc[i])) acc[i] = element_keeping_nan(i0, i1, row_first + i / width, i % width);
        }
    }

private:
    // dX element (i0, i1, i2, i3) alone, in the sequence of additions of the header, NaNs kept (rare: NaN results).
    float element_keeping_nan(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        const AxisView &a0 = g_.axes[0], &a1 = g_.axes[1], &a2 = g_.axes[2], &a3 = g_.axes[3];
        float acc = 0.0f;
        for (uint32_t t0 = a0.begin[i0]; t0 < a0.begin[i0 + 1]; ++t0)
            for (uint32_t t1 = a1.begin[i1]; t1 < a1.begin[i1 + 1]; ++t1) {
                const float p1 = a0.weight[t0] * a1.weight[t1];
                const int64_t plane = int64_t(a0.dy_index[t0]) * g_.dy_size[1] + a1.dy_index[t1];
                for (uint32_t t2 = a2.begin[i2]; t2 < a2.begin[i2 + 1]; ++t2) {
                    const float p2 = p1 * a2.weight[t2];
                    const T* dy_row = dy_ + (plane * g_.dy_size[2] + a2.dy_index[t2]) * g_.dy_size[3];
                    for (uint32_t t3 = a3.begin[i3]; t3 < a3.begin[i3 + 1]; ++t3)
                        acc = add_keeping_nan(acc, (p2 * a3.weight[t3]) * to_float(dy_row[a3.dy_index[t3]]));
                }
            }
        return acc;
    }

    // The dY rows with a tap into [row_first, row_last): contiguous, as the taps are monotonic.
    std::pair<int64_t, int64_t> dy_rows_reaching(int64_t row_first, int64_t row_last) const {
        const AxisView& a2 = g_.axes[2];
        int64_t first = g_.dy_size[2], last = 0;
        for (int64_t i2 = row_first; i2 < row_last; ++i2)
            if (a2.taps(i2)) {
                first = std::min<int64_t>(first, a2.first_dy(i2));
                last = std::max<int64_t>(last, int64_t(a2.dy_index[a2.begin[i2 + 1] - 1]) + 1);
            }
        return {first, std::max(first, last)};
    }

    void add_dy_row(float p1, const T* dy_row, int64_t o2, int64_t row_first, int64_t row_last, float* acc) {
        const ForwardTaps& rows = g_.rows;
        const int64_t width = g_.dx_size[3];
        const float* row = nullptr;  // converted and gathered on first use
        for (uint32_t t = rows.begin[o2]; t < rows.begin[o2 + 1]; ++t) {
            const int64_t i2 = rows.dx_index[t];
            if (i2 < row_first || i2 >= row_last) continue;
            if (!row) {
                row = float_row(dy_row, g_.dy_size[3], row_scratch_.data());
                if (g_.use_slots) gather_row(g_.last, row, gathered_);
            }
            const float p2 = p1 * rows.weight[t];
            float* acc_row = acc + (i2 - row_first) * width;
            if (g_.use_slots)
                accumulate_slots(g_.last, width, p2, gathered_, acc_row);
            else
                accumulate_taps(g_.axes[3], width, p2, row, acc_row);
        }
    }

    const Geometry& g_;
    const T* dy_;
    std::vector<float> row_scratch_;
    GatheredRow gathered_;
};

// A band of dX rows: the first element's offset and the element count.
struct Band {
    int64_t offset;
    int64_t count;
};

// float32 dX: the band is accumulated in place.
struct FloatOutput {
    float* dx;
    float* accumulator(const Band& band) { return dx + band.offset; }
    void finish(const Band&) {}
};

// fp16 dX: the band is accumulated in float32 and rounded once.
struct HalfOutput {
    uint16_t* dx;
    std::vector<float> scratch;
    float* accumulator(const Band& band) {
        scratch.resize(size_t(band.count));
        return scratch.data();
    }
    void finish(const Band& band) {
        for (int64_t i = 0; i < band.count; ++i) dx[band.offset + i] = float_to_half(scratch[size_t(i)]);
    }
};

// Units [front, back) not yet taken: the worker that owns them takes them from the front, the others, once their own
// are done, from the back. A lock per take: a unit is a plane's band, microseconds of work at the least.
class UnitRange {
public:
    void assign(int64_t front, int64_t back) { front_ = front, back_ = back; }
    bool take_front(int64_t& unit) {
        std::lock_guard lock(mutex_);
        if (front_ >= back_) return false;
        unit = front_++;
        return true;
    }
    bool take_back(int64_t& unit) {
        std::lock_guard lock(mutex_);
        if (front_ >= back_) return false;
        unit = --back_;
        return true;
    }

private:
    alignas(64) std::mutex mutex_;
    int64_t front_ = 0, back_ = 0;
};

// Each worker sweeps its own contiguous share of the units, as a fixed split would, then takes units from the end
// of the others' shares: on a machine shared with other work, a thread that starts late or loses its core for a
// while no longer leaves its whole share to finish alone. (Handing out units one by one from a shared counter
// did that too, but in one series of runs on the 2-core development VM the interleaved units took 6.7 ms where
// the fixed halves took 3.9.) Which thread runs a unit changes no bit: units write disjoint bands, and a thread's
// scratch carries no values from one unit to the next.
// make_worker() gives each thread its own run_unit(unit).
template <class MakeWorker>
void run_units_shared_out(int64_t units, const MakeWorker& make_worker) {
    const int64_t workers = std::min<int64_t>(units, worker_count());
    std::vector<UnitRange> shares(size_t(std::max<int64_t>(workers, 1)));
    for (int64_t w = 0; w < workers; ++w) shares[size_t(w)].assign(units * w / workers, units * (w + 1) / workers);
    parallel_for(uint64_t(workers), 1, [&](uint64_t begin, uint64_t end) {
        auto run_unit = make_worker();
        int64_t unit = 0;
        for (uint64_t w = begin; w < end; ++w)
            while (shares[w].take_front(unit)) run_unit(unit);
        for (uint64_t offset = 1; offset < uint64_t(workers); ++offset) {
            UnitRange& other = shares[(begin + offset) % uint64_t(workers)];
            while (other.take_back(unit)) run_unit(unit);
        }
    });
}

// Every (plane, band of rows) unit, each in the widest vectors this CPU has (cpu/vector_dispatch.h).
template <class T, class Output>
void gather_all(const Geometry& g, const T* dy, const Output& output) {
    const int64_t planes = g.dx_size[0] * g.dx_size[1], rows = g.dx_size[2], width = g.dx_size[3];
    const int64_t wanted = int64_t(worker_count()) * kUnitsPerWorker;
    const int64_t bands = std::clamp<int64_t>((wanted + planes - 1) / planes, 1, rows);
    run_units_shared_out(planes * bands, [&] {
        return [&, gather = BandGather<T>(g, dy), out = output](int64_t unit) mutable {
            const int64_t plane = unit / bands, band = unit % bands;
            const int64_t row_first = rows * band / bands, row_last = rows * (band + 1) / bands;
            const Band b{(plane * rows + row_first) * width, (row_last - row_first) * width};
            const int64_t i0 = plane / g.dx_size[1], i1 = plane % g.dx_size[1];
            float* acc = out.accumulator(b);
            cpu::with_widest_vectors([&] { gather.run(i0, i1, row_first, row_last, acc); });
            out.finish(b);
        };
    });
}

}  // namespace

void cpu::resample_grad(const ResampleGradPlan& plan, const Tensor& dy, Tensor& dx) {
    const Geometry g = geometry_of(plan);
    if (plan.dtype == DType::f16)
        gather_all(g, dy.as<uint16_t>(), HalfOutput{dx.as<uint16_t>(), {}});
    else
        gather_all(g, dy.as<float>(), FloatOutput{dx.as<float>()});
}

}  // namespace dmlgrad
