// Max-pooling grad on the CPU (docs/OPERATORS.md 4.2).
//
// Selection: per window, the first non-padding element in row-major window order whose pool_key is strictly
// greater than those before it (NaN above all numbers, -0 == +0, lowest index wins ties); a window of only
// padding (or lying past the input, in ceil mode) is dropped.
//
// Order of additions, fixed so that the GPU gather gives the same bits: every dX element starts at +0.0f and adds,
// in float32, the dY values (fp16 converted exactly to float) of the windows that select it, in increasing
// row-major dY order (o_d, o_h, o_w); a NaN sum keeps its NaN (core/nan_sum.h). Scattering window after window
// in that order into a float32 plane is the same sequence of additions per element. fp16 results are rounded once at
// the end (float_to_half).
//
// Two loop nests give identical results: "lanes" finds the argmax of a whole dY row at once, one window offset
// at a time, with the windows as vector lanes; "windows" scans one window at a time and serves the geometries
// where the lanes would mostly idle (windows much wider than the dY row, e.g. global pooling).
#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <vector>

#include "core/float_order.h"
#include "core/half.h"
#include "core/integer.h"
#include "core/nan_sum.h"
#include "core/parallel.h"
#include "cpu/kernels.h"
#include "cpu/vector_dispatch.h"

namespace dmlgrad {
namespace {

constexpr uint32_t kNoElement = UINT32_MAX;  // an in-plane index never reaches it: tensors hold < 2^32 elements

// One spatial axis: for each dY index, the input coordinate of window offset 0 and the offsets [k_begin, k_end)
// that land inside the input, so no inner loop tests for padding.
struct AxisWindows {
    int64_t dilation = 1;
    std::vector<int64_t> origin;
    std::vector<int64_t> k_begin;
    std::vector<int64_t> k_end;
};

AxisWindows axis_windows(const MaxPoolGradPlan& plan, size_t slot) {
    const int64_t in = plan.in[slot], window = plan.window[slot];
    AxisWindows axis;
    axis.dilation = plan.dilation[slot];
    for (int64_t o = 0; o < plan.out[slot]; ++o) {
        const int64_t origin = o * plan.stride[slot] - plan.start_padding[slot];
        const int64_t k_begin = std::clamp<int64_t>(ceil_div(-origin, axis.dilation), 0, window);
        const int64_t k_end = std::clamp<int64_t>(floor_div(in - 1 - origin, axis.dilation) + 1, k_begin, window);
        axis.origin.push_back(origin);
        axis.k_begin.push_back(k_begin);
        axis.k_end.push_back(k_end);
    }
    return axis;
}

// Lanes over the innermost axis: for window offset kw, the dY indices [first_lane, first_lane + lanes) whose
// element lies inside the input, starting at input column `column` and stepping by the stride.
struct LaneRun {
    int64_t first_lane;
    int64_t lanes;
    int64_t column;
};

struct PoolGeometry {
    std::array<int64_t, 3> in;
    std::array<int64_t, 3> out;
    std::array<AxisWindows, 3> axes;
    int64_t inner_stride = 1;
    bool use_lanes = false;
    std::vector<LaneRun> runs;  // increasing kw
    int64_t x_size() const { return in[0] * in[1] * in[2]; }
    int64_t dy_size() const { return out[0] * out[1] * out[2]; }
};

PoolGeometry pool_geometry(const MaxPoolGradPlan& plan) {
    PoolGeometry g;
    g.in = plan.in;
    g.out = plan.out;
    g.axes = {axis_windows(plan, 0), axis_windows(plan, 1), axis_windows(plan, 2)};
    const int64_t in = plan.in[2], out = plan.out[2], stride = plan.stride[2], dilation = plan.dilation[2];
    const int64_t padding = plan.start_padding[2];
    g.inner_stride = stride;
    // Window offsets that reach the input from at least one dY index.
    const int64_t kw_first = std::max<int64_t>(0, ceil_div(padding - (out - 1) * stride, dilation));
    const int64_t kw_last = std::min(plan.window[2] - 1, floor_div(padding + in - 1, dilation));
    g.use_lanes = kw_last - kw_first + 1 <= 4 * out + 16;
    if (!g.use_lanes) return g;
    for (int64_t kw = kw_first; kw <= kw_last; ++kw) {
        const int64_t offset = kw * dilation - padding;  // column of lane 0
        const int64_t first = std::max<int64_t>(0, ceil_div(-offset, stride));
        const int64_t end = std::min(out, floor_div(in - 1 - offset, stride) + 1);
        if (first < end) g.runs.push_back({first, end - first, offset + first * stride});
    }
    return g;
}

inline int32_t key_of(float v) { return pool_key_f32(std::bit_cast<uint32_t>(v)); }
inline int32_t key_of(uint16_t v) { return pool_key_f16(v); }
inline float to_float(float v) { return v; }
inline float to_float(uint16_t v) { return half_to_float(v); }

// best_key/best_index of `count` windows take element j * stride of `first` if its key is strictly greater.
// kStride != 0 fixes the stride at compile time, which lets the compiler vectorize the strided loads.
template <int64_t kStride, class T>
void update_lanes(const T* __restrict first, uint32_t first_index, int64_t runtime_stride, int64_t count,
                  int32_t* __restrict best_key, uint32_t* __restrict best_index) {
    const int64_t stride = kStride ? kStride : runtime_stride;
    for (int64_t j = 0; j < count; ++j) {
        const int32_t key = key_of(first[j * stride]);
        const bool better = key > best_key[j];
        best_key[j] = better ? key : best_key[j];
        best_index[j] = better ? first_index + uint32_t(j * stride) : best_index[j];
    }
}

// The selected in-plane element of every window of dY row (od, oh), written to best_index.
template <int64_t kStride, class T>
void argmax_row_lanes(const T* x, const PoolGeometry& g, int64_t od, int64_t oh, int32_t* best_key,
                      uint32_t* best_index) {
    std::fill(best_key, best_key + g.out[2], INT32_MIN);  // below every key: the first candidate always wins
    std::fill(best_index, best_index + g.out[2], kNoElement);
    const AxisWindows &d = g.axes[0], &h = g.axes[1];
    for (int64_t kd = d.k_begin[od]; kd < d.k_end[od]; ++kd) {
        const int64_t pd = d.origin[od] + kd * d.dilation;
        for (int64_t kh = h.k_begin[oh]; kh < h.k_end[oh]; ++kh) {
            const int64_t row = (pd * g.in[1] + h.origin[oh] + kh * h.dilation) * g.in[2];
            for (const LaneRun& run : g.runs)
                update_lanes<kStride>(x + row + run.column, uint32_t(row + run.column), g.inner_stride, run.lanes,
                                      best_key + run.first_lane, best_index + run.first_lane);
        }
    }
}

// The selected in-plane element of window (od, oh, ow), or kNoElement for a window of only padding.
template <class T>
uint32_t argmax_window(const T* x, const PoolGeometry& g, int64_t od, int64_t oh, int64_t ow) {
    const AxisWindows &d = g.axes[0], &h = g.axes[1], &w = g.axes[2];
    uint32_t best_index = kNoElement;
    int32_t best_key = INT32_MIN;
    for (int64_t kd = d.k_begin[od]; kd < d.k_end[od]; ++kd) {
        const int64_t pd = d.origin[od] + kd * d.dilation;
        for (int64_t kh = h.k_begin[oh]; kh < h.k_end[oh]; ++kh) {
            const int64_t row = (pd * g.in[1] + h.origin[oh] + kh * h.dilation) * g.in[2];
            for (int64_t kw = w.k_begin[ow]; kw < w.k_end[ow]; ++kw) {
                const int64_t index = row + w.origin[ow] + kw * w.dilation;
                const int32_t key = key_of(x[index]);
                if (key > best_key) {  // strict: equal keys keep the lower index
                    best_key = key;
                    best_index = uint32_t(index);
                }
            }
        }
    }
    return best_index;
}

// Scratch of one thread: the argmax of one dY row.
struct RowScratch {
    std::vector<int32_t> best_key;
    std::vector<uint32_t> best_index;
    explicit RowScratch(int64_t width) : best_key(size_t(width)), best_index(size_t(width)) {}
};

template <class T>
void argmax_row(const T* x, const PoolGeometry& g, int64_t od, int64_t oh, RowScratch& s) {
    if (!g.use_lanes) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow) s.best_index[size_t(ow)] = argmax_window(x, g, od, oh, ow);
        return;
    }
    int32_t* key = s.best_key.data();
    uint32_t* index = s.best_index.data();
    switch (g.inner_stride) {
        case 1: return argmax_row_lanes<1>(x, g, od, oh, key, index);
        case 2: return argmax_row_lanes<2>(x, g, od, oh, key, index);
        default: return argmax_row_lanes<0>(x, g, od, oh, key, index);
    }
}

// One (n, c) plane: acc (zeroed here) receives each window's dY, dY row after dY row, in increasing dY order.
template <class T>
void accumulate_plane(const T* x, const T* dy, float* acc, const PoolGeometry& g, RowScratch& s) {
    std::fill(acc, acc + g.x_size(), 0.0f);
    for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            argmax_row(x, g, od, oh, s);
            const T* dy_row = dy + (od * g.out[1] + oh) * g.out[2];
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                const uint32_t selected = s.best_index[size_t(ow)];
                if (selected != kNoElement) acc[selected] = add_keeping_nan(acc[selected], to_float(dy_row[ow]));
            }
        }
}

// Each plane runs in the widest vectors this CPU has (cpu/vector_dispatch.h).
void run_planes(const MaxPoolGradPlan& plan, const PoolGeometry& g, const float* x, const float* dy, float* dx) {
    parallel_for(plan.planes, 1, [&](uint64_t begin, uint64_t end) {
        RowScratch scratch(g.out[2]);
        for (uint64_t p = begin; p < end; ++p)
            cpu::with_widest_vectors(
                [&] { accumulate_plane(x + p * g.x_size(), dy + p * g.dy_size(), dx + p * g.x_size(), g, scratch); });
    });
}

void run_planes(const MaxPoolGradPlan& plan, const PoolGeometry& g, const uint16_t* x, const uint16_t* dy,
                uint16_t* dx) {
    parallel_for(plan.planes, 1, [&](uint64_t begin, uint64_t end) {
        RowScratch scratch(g.out[2]);
        std::vector<float> acc(size_t(g.x_size()));
        for (uint64_t p = begin; p < end; ++p) {
            cpu::with_widest_vectors(
                [&] { accumulate_plane(x + p * g.x_size(), dy + p * g.dy_size(), acc.data(), g, scratch); });
            uint16_t* out = dx + p * g.x_size();
            for (size_t i = 0; i < acc.size(); ++i) out[i] = float_to_half(acc[i]);
        }
    });
}

}  // namespace

void cpu::maxpool_grad(const MaxPoolGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx) {
    const PoolGeometry g = pool_geometry(plan);
    if (plan.dtype == DType::f16)
        run_planes(plan, g, x.as<uint16_t>(), dy.as<uint16_t>(), dx.as<uint16_t>());
    else
        run_planes(plan, g, x.as<float>(), dy.as<float>(), dx.as<float>());
}

}  // namespace dmlgrad
