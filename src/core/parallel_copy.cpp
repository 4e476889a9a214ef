#include "core/parallel_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"

namespace dmlgrad {

void parallel_copy(std::byte* dst, const std::byte* src, uint64_t bytes) {
    const CopyRegion region{dst, src, bytes};
    parallel_copy(std::span(&region, 1));
}

void parallel_copy(std::span<const CopyRegion> regions) {
    // Half a megabyte or more per thread: below that, waking a pool thread costs about what it saves.
    constexpr uint64_t kBlock = uint64_t(256) << 10;
    std::vector<uint64_t> first_block;  // of each region, in one numbering of all the regions' blocks
    uint64_t blocks = 0;
    for (const CopyRegion& r : regions) {
        first_block.push_back(blocks);
        blocks += (r.bytes + kBlock - 1) / kBlock;
    }
    parallel_for(blocks, 2, [&](uint64_t begin, uint64_t end) {
        for (size_t i = 0; i < regions.size(); ++i) {
            const CopyRegion& r = regions[i];
            const uint64_t from = std::max(begin, first_block[i]) - first_block[i];
            const uint64_t to = std::min(end - std::min(end, first_block[i]), (r.bytes + kBlock - 1) / kBlock);
            if (from >= to) continue;
            const uint64_t offset = from * kBlock, stop = std::min(to * kBlock, r.bytes);
            std::memcpy(r.dst + offset, r.src + offset, stop - offset);
        }
    });
}

}  // namespace dmlgrad
