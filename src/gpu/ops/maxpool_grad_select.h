#pragma once
// The geometry of the max-pool selection kernel (kernels/maxpool_grad_select.hlsl): pooling whose windows are one
// tap on every axis, where dX is dY scattered at the taps. Kept apart from the family table
// (maxpool_grad_dispatch.cpp), which takes the kernel where select_geometry_words() gives a geometry.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace dmlgrad::maxpool_gpu {

// One pooled axis of windows of one tap: dX coordinate o * stride - pad takes window o's dY, for 0 <= o < out
// (a tap outside [0, size) lies in the padding: that window chooses nothing).
struct TapAxis {
    uint64_t size, out, stride, pad;
};

// The geometry buffer of interface/maxpool_grad_select.h for `planes` planes pooled along `axes` (depth, rows,
// columns); nullopt where its tables would pass kMaxSelectTableWords.
std::optional<std::vector<uint32_t>> select_geometry_words(const std::array<TapAxis, 3>& axes, uint64_t planes);

inline constexpr uint64_t kMaxSelectTableWords = uint64_t(1) << 22;

}  // namespace dmlgrad::maxpool_gpu
