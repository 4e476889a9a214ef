#include "core/parallel_populate.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>

#include "core/parallel.h"

namespace dmlgrad {

bool parallel_populate(std::span<std::byte> bytes, int advice) {
    const uint64_t pieces = (bytes.size() + kPopulatePiece - 1) / kPopulatePiece;
    std::atomic<bool> refused{false};
    parallel_for(pieces, 1, [&](uint64_t begin, uint64_t end) {
        const uint64_t first = begin * kPopulatePiece, last = std::min<uint64_t>(end * kPopulatePiece, bytes.size());
        if (::madvise(bytes.data() + first, last - first, advice) != 0) refused = true;
    });
    return !refused;
}

}  // namespace dmlgrad
