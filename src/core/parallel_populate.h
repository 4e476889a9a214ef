#pragma once
// Takes the page faults of a large mapping on several threads. One madvise() or MAP_POPULATE fills the page
// tables on the calling thread only: for a 1 GiB input or output that is one core's work while the others wait,
// and on a many-core host it was a large part of a heavy job's host time.
#include <cstddef>
#include <cstdint>
#include <span>

namespace dmlgrad {

// Applies `advice` (MADV_POPULATE_READ or MADV_POPULATE_WRITE) to `bytes` (page-aligned start) in pieces, on as
// many threads as the affinity mask and the size allow; a mapping below one piece is done on the caller, as before.
// False when any piece is refused (a kernel before 5.14, or a file shorter than the mapping).
bool parallel_populate(std::span<std::byte> bytes, int advice);

// The piece each thread populates at a time: large enough that waking a pool thread costs little beside it.
inline constexpr uint64_t kPopulatePiece = uint64_t(8) << 20;

}  // namespace dmlgrad
