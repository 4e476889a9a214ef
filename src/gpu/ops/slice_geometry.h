#pragma once
// The host-side geometry of slice grad on the GPU (kept apart from the dispatch so tests can check it alone).
#include <cstdint>
#include <vector>

#include "gpu/ops/chunk.h"
#include "ops/slice_grad.h"

namespace dmlgrad::slice_gpu {

// One axis of the gather: dX coordinate p takes dY coordinate k when p == start + stride * k, 0 <= k < dy.
struct Axis {
    uint64_t dx = 1;
    uint64_t dy = 1;
    uint64_t start = 0;
    int64_t stride = 1;
};

// The plan's axes, outermost first, with size-1 axes dropped and an axis merged into its outer neighbour where
// the inner one is copied whole (start 0, stride 1, dY as long as dX) and the outer one has stride 1: the same
// element mapping with fewer axes (fewer divisions per element). Always at least one axis.
std::vector<Axis> simplify(const SliceGradPlan& plan);

using dmlgrad::Chunk;  // what chunks() below returns (gpu/ops/chunk.h)

// Splits dX into chunks of at most `max_elements` each (at least 1), shaped as boxes (outer coordinates fixed,
// a range along one axis, inner axes whole), so that the dY span each one reads is no longer than the chunk.
std::vector<Chunk> chunks(const std::vector<Axis>& axes, uint64_t max_elements);

}  // namespace dmlgrad::slice_gpu
