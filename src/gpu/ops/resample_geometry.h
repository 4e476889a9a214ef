#pragma once
// The host-side geometry of resample grad on the GPU (kept apart from the dispatch so tests can check it alone):
// the kernel's 4-axis view of dX, its tap tables, the bound on dY below which the kernel recomputes exactly, and
// the chunks that keep each pass within one binding.
#include <array>
#include <cstdint>
#include <vector>

#include "gpu/ops/chunk.h"
#include "ops/resample_grad.h"

namespace dmlgrad::resample_gpu {

// One axis of the view. An identity axis maps dX index i to dY index i with weight 1 (no table); others keep
// the plan's taps.
struct Axis {
    uint64_t dx = 1;
    uint64_t dy = 1;
    bool identity = true;
    const AxisTaps* taps = nullptr;  // the plan's, when !identity
};
using View = std::array<Axis, 4>;

// The plan's axes with adjacent identity axes merged (N and C of an image batch become one) and padded in front
// to 4 axes of size 1. The same element order as the plan's shape. Throws std::logic_error if a tap list is not
// contiguous in dY (the kernel relies on it; the plan's monotonic coordinates guarantee it).
View make_view(const ResampleGradPlan& plan);

// The kernel's `tables` buffer (see kernels/resample_grad.hlsl): word 0 = 1.0f, then per table axis its
// (first dY index, tap start) pairs with a sentinel, then (linear mode) its weights. `offsets` gets the word
// offset of each axis' pairs, or the kernel's IDENTITY_AXIS (interface/resample_grad.h).
std::vector<uint32_t> tap_tables(const View& view, InterpolationMode mode, std::array<uint32_t, 4>& offsets);

// The kernel's tiny_limit: a dX element that reads a dY value whose magnitude key (its bits without the sign,
// minus 1, so that zeros come last) is below it is recomputed with exact integer arithmetic. See the kernel.
uint32_t tiny_limit(const View& view, InterpolationMode mode, DType type);

using dmlgrad::Chunk;  // what chunks() below returns (gpu/ops/chunk.h)

// dX cut into chunks of at most `max_elements` dX elements that read a dY range of at most `max_elements`:
// boxes (outer indices fixed, a range along one axis, inner axes whole). Throws RuntimeFailure when a single dX
// element already reads a longer dY range.
std::vector<Chunk> chunks(const View& view, uint64_t max_elements);

}  // namespace dmlgrad::resample_gpu
