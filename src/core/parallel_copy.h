#pragma once
// Large host memory copies on all cores: inputs into mapped or staging memory and outputs out of it, for every GPU
// API alike.
#include <cstddef>
#include <cstdint>
#include <span>

namespace dmlgrad {

void parallel_copy(std::byte* dst, const std::byte* src, uint64_t bytes);

struct CopyRegion {
    std::byte* dst;
    const std::byte* src;
    uint64_t bytes;
};
// Several copies as one parallel pass, so that small ones (a small job's inputs) together use more cores.
void parallel_copy(std::span<const CopyRegion> regions);

}  // namespace dmlgrad
