#pragma once
// The geometry of the max-pool selection kernels (kernels/maxpool_grad_select.hlsl): pooling whose windows are one
// tap on every axis, where dX is dY scattered at the taps, and windows that do not overlap, chosen per dX element.
// Kept apart from the family table (maxpool_grad_dispatch.cpp), which takes them where select_geometry_words()
// gives a geometry.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace dmlgrad::maxpool_gpu {

// One pooled axis whose windows do not overlap ((window - 1) * dilation < stride): window o's taps are coordinates
// o * stride - pad + k * dilation, 0 <= k < window (those outside [0, size) lie in the padding).
struct TapAxis {
    uint64_t size, out, window, stride, pad, dilation;
};

// The geometry buffer of interface/maxpool_grad_select.h for `planes` planes pooled along `axes` (depth, rows,
// columns); nullopt where its tables would pass kMaxSelectTableWords.
std::optional<std::vector<uint32_t>> select_geometry_words(const std::array<TapAxis, 3>& axes, uint64_t planes);

inline constexpr uint64_t kMaxSelectTableWords = uint64_t(1) << 22;

}  // namespace dmlgrad::maxpool_gpu
