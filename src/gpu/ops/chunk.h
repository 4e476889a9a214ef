#pragma once
// How the gather kernels of slice grad and resample grad split tensors larger than one binding: dX is cut into
// chunks (slice_geometry.h, resample_geometry.h), and each pass binds the dX window it writes and the dY window
// it reads.
#include <cstdint>

#include "gpu/dispatch.h"

namespace dmlgrad {

// A contiguous range of dX elements written by one pass, and the dY elements it may read.
struct Chunk {
    uint64_t begin = 0, end = 0;         // dX elements [begin, end)
    bool reads_dy = false;               // false: the range only gets zeros
    uint64_t dy_first = 0, dy_last = 0;  // dY elements it reads lie in [dy_first, dy_last]
};

// The most elements of `element_bytes` a chunk may span: its windows, aligned down at their start and padded to
// whole uint4s at their end, then fit one binding.
uint64_t chunk_capacity(uint64_t element_bytes, const DeviceLimits& limits);

// The dY binding of chunk `c`: the window over [dy_first, dy_last] (dY's `dy_padded` bytes in all), or 16 bytes
// at offset 0 for a chunk that reads nothing (a binding must still be valid).
BufferWindow chunk_dy_window(uint32_t slot, const Chunk& c, uint64_t element_bytes, uint64_t dy_padded,
                             const DeviceLimits& limits);

}  // namespace dmlgrad
