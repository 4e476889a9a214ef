#include "gpu/ops/chunk.h"

#include <algorithm>
#include <stdexcept>

namespace dmlgrad {

uint64_t chunk_capacity(uint64_t element_bytes, const DeviceLimits& limits) {
    // Room for the chunk plus the alignment slack on both ends of its windows.
    const uint64_t slack = 2 * limits.offset_alignment + 32;
    if (limits.max_binding_bytes <= slack + element_bytes)
        throw std::logic_error("chunk_capacity: binding limit too small");
    return (limits.max_binding_bytes - slack) / element_bytes;
}

BufferWindow chunk_dy_window(uint32_t slot, const Chunk& c, uint64_t element_bytes, uint64_t dy_padded,
                             const DeviceLimits& limits) {
    if (!c.reads_dy) return {slot, 0, 16};
    const uint64_t offset = align_down(c.dy_first * element_bytes, limits.offset_alignment);
    return {slot, offset, std::min(padded_bytes((c.dy_last + 1) * element_bytes), dy_padded) - offset};
}

}  // namespace dmlgrad
