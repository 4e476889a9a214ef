#pragma once
// The host-side geometry of slice grad on the GPU (kept apart from the dispatch so tests can check it alone).
#include <cstdint>
#include <vector>

#include "gpu/ops/chunk.h"
#include "ops/slice_grad.h"

namespace dmlgrad::slice_gpu {

using dmlgrad::Chunk;  // what chunks() below returns (gpu/ops/chunk.h)

// Splits dX, seen through the plan's gather_axes, into chunks of at most `max_elements` each (at least 1), shaped as
// boxes (outer coordinates fixed, a range along one axis, inner axes whole), so that the dY span each one reads is no
// longer than the chunk.
std::vector<Chunk> chunks(const std::vector<SliceAxis>& axes, uint64_t max_elements);

}  // namespace dmlgrad::slice_gpu
