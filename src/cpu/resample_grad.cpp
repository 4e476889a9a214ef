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
// (slot k = the element's k-th tap; weight 0 and value 0 where it has fewer), each dY row is gathered once into
// that layout, and the inner loop is a plain vector multiply-add. An unused slot adds +0.0f, which changes no
// accumulator: acc starts at +0, and float32 sums rounded to nearest never reach -0 from there. Where slots would
// mostly be empty (very uneven tap counts), the inner loop walks the tap lists instead.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
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

// Elements [first, first + count) that all have `slots` taps starting at dY first_dy + stride * (i - first):
// slot k of the run is a strided copy of the dY row.
struct RegularRun {
    int64_t first;
    int64_t count;
    int64_t first_dy;
    int64_t stride;
};

// The last axis as K slots per element, slot-major (slot k of element i at k * width + i), and how to gather a
// dY row into it: regular runs (vectorizable copies) plus the remaining taps one by one.
struct SlotLayout {
    int64_t slots = 0;
    std::vector<float> weight;  // 0 in unused slots
    std::vector<RegularRun> runs;
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
    RegularRun run{i, 0, 0, 0};
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

SlotLayout slot_layout(const AxisView& axis, int64_t width, int64_t slots) {
    SlotLayout s;
    s.slots = slots;
    s.weight.assign(size_t(slots * width), 0.0f);
    for (int64_t i = 0; i < width; ++i)
        for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t)
            s.weight[size_t(int64_t(t - axis.begin[i]) * width + i)] = axis.weight[t];
    for (int64_t i = 0; i < width;) {
        const RegularRun run = regular_run_at(axis, width, slots, i);
        if (run.count >= kMinRunLength) {
            s.runs.push_back(run);
            i += run.count;
            continue;
        }
        for (uint32_t t = axis.begin[i]; t < axis.begin[i + 1]; ++t) {
            s.single_position.push_back(uint32_t(int64_t(t - axis.begin[i]) * width + i));
            s.single_dy.push_back(axis.dy_index[t]);
        }
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

template <int64_t kStride>
void strided_copy(const float* __restrict from, int64_t count, float* __restrict to) {
    for (int64_t j = 0; j < count; ++j) to[j] = from[j * kStride];
}

// dY row -> slot layout. Unused slots are never written, so they keep the zeros they were created with.
void gather_slots(const SlotLayout& layout, int64_t width, const float* dy_row, float* gathered) {
    for (const RegularRun& run : layout.runs)
        for (int64_t k = 0; k < layout.slots; ++k) {
            const float* from = dy_row + run.first_dy + k;
            float* to = gathered + k * width + run.first;
            if (run.stride == 1)
                strided_copy<1>(from, run.count, to);
            else
                strided_copy<2>(from, run.count, to);
        }
    const size_t singles = layout.single_dy.size();
    for (size_t t = 0; t < singles; ++t) gathered[layout.single_position[t]] = dy_row[layout.single_dy[t]];
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

// The same on the slot layout. Blocks of kLanes elements keep their sums in registers across the slots, which
// the compiler turns into vector code.
void accumulate_slots(const SlotLayout& layout, int64_t width, float prefix, const float* gathered, float* acc) {
    constexpr int64_t kLanes = 16;
    const float* weight = layout.weight.data();
    int64_t i = 0;
    for (; i + kLanes <= width; i += kLanes) {
        float sum[kLanes];
        for (int64_t j = 0; j < kLanes; ++j) sum[j] = acc[i + j];
        for (int64_t k = 0; k < layout.slots; ++k) {
            const float* w = weight + k * width + i;
            const float* v = gathered + k * width + i;
            for (int64_t j = 0; j < kLanes; ++j) sum[j] += (prefix * w[j]) * v[j];
        }
        for (int64_t j = 0; j < kLanes; ++j) acc[i + j] = sum[j];
    }
    for (; i < width; ++i) {
        float sum = acc[i];
        for (int64_t k = 0; k < layout.slots; ++k) sum += (prefix * weight[k * width + i]) * gathered[k * width + i];
        acc[i] = sum;
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
        if (g.use_slots) gathered_.assign(g.last.weight.size(), 0.0f);  // unused slots stay 0 for good
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
                if (g_.use_slots) gather_slots(g_.last, width, row, gathered_.data());
            }
            const float p2 = p1 * rows.weight[t];
            float* acc_row = acc + (i2 - row_first) * width;
            if (g_.use_slots)
                accumulate_slots(g_.last, width, p2, gathered_.data(), acc_row);
            else
                accumulate_taps(g_.axes[3], width, p2, row, acc_row);
        }
    }

    const Geometry& g_;
    const T* dy_;
    std::vector<float> row_scratch_;
    std::vector<float> gathered_;
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

// Every (plane, band of rows) unit, each in the widest vectors this CPU has (cpu/vector_dispatch.h). The threads
// take units one at a time from a shared counter rather than a fixed half each: on this kind of shared machine a
// thread that starts late or loses its core for a while would otherwise leave its whole half to finish alone.
// Which thread runs a unit changes no bit: units write disjoint bands, and a thread's scratch keeps no values.
template <class T, class Output>
void gather_all(const Geometry& g, const T* dy, const Output& output) {
    const int64_t planes = g.dx_size[0] * g.dx_size[1], rows = g.dx_size[2], width = g.dx_size[3];
    const int64_t wanted = int64_t(worker_count()) * kUnitsPerWorker;
    const int64_t bands = std::clamp<int64_t>((wanted + planes - 1) / planes, 1, rows);
    const int64_t units = planes * bands;
    std::atomic<int64_t> next_unit{0};
    parallel_for(uint64_t(std::min<int64_t>(units, worker_count())), 1, [&](uint64_t, uint64_t) {
        BandGather<T> gather(g, dy);
        Output out = output;
        for (int64_t unit = next_unit.fetch_add(1); unit < units; unit = next_unit.fetch_add(1)) {
            const int64_t plane = unit / bands, band = unit % bands;
            const int64_t row_first = rows * band / bands, row_last = rows * (band + 1) / bands;
            const Band b{(plane * rows + row_first) * width, (row_last - row_first) * width};
            const int64_t i0 = plane / g.dx_size[1], i1 = plane % g.dx_size[1];
            float* acc = out.accumulator(b);
            cpu::with_widest_vectors([&] { gather.run(i0, i1, row_first, row_last, acc); });
            out.finish(b);
        }
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
