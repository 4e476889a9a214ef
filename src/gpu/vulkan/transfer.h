#pragma once
// Host <-> device copies for GPUs whose memory the host cannot map (discrete GPUs), through a few fixed-size
// staging buffers used in turn: the host's memcpy of one chunk overlaps the copy engine's transfer of another,
// and no staging buffer as large as the tensor is pinned. (On the H100 machine, allocating 1 GiB of mappable
// host memory took ~0.45 s and freeing it ~0.25 s: more than the transfer itself.)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/parallel_copy.h"
#include "gpu/vulkan/buffer.h"
#include "gpu/vulkan/commands.h"

namespace dmlgrad::vk {

// A staging buffer's usage: the copy's source for MemoryUse::upload, its destination for MemoryUse::download.
VkBufferUsageFlags staging_usage(MemoryUse use);

class StagingRing {
public:
    // Chunks of at most `chunk_bytes`, in host-cached memory where the device has it (the host reads a download
    // from it much faster than from write-combined memory, and writes an upload as fast), for copies either way.
    StagingRing(const Device& device, uint64_t chunk_bytes);
    uint64_t chunk_bytes() const { return chunk_; }

    // `bytes` from host memory into `dst` at offset 0. Returns once the copies are submitted (the host memory is
    // free again); work submitted later to the queue must start with a transfer -> consumer barrier.
    void upload(const std::byte* src, uint64_t bytes, VkBuffer dst);
    // `bytes` of `src` from offset 0 into host memory. Waits for earlier compute work on the queue first.
    void download(VkBuffer src, std::byte* dst, uint64_t bytes);

    // A download of at most one chunk in two halves, so that its copy rides in the caller's own submission (one
    // submission and one fence wait less per small job): record_download records the copy of `src` into `cmd`
    // (after a barrier from the writes it copies, before one to the host), the caller submits and waits, then
    // finish_download copies the chunk into host memory.
    void record_download(VkCommandBuffer cmd, VkBuffer src, uint64_t bytes);
    void finish_download(std::byte* dst, uint64_t bytes);

private:
    struct Slot {
        Buffer staging;
        std::unique_ptr<CommandStream> stream;
    };
    const Device& device_;
    uint64_t chunk_;
    std::vector<Slot> slots_;
};

}  // namespace dmlgrad::vk
