#include "gpu/vulkan/transfer.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

namespace dmlgrad::vk {
namespace {

// Chunks in flight: the host's copy of one overlaps the copy engine's transfer of another (two would do once the
// stream is steady). No more: each slot is pinned host memory, which took ~0.4 ms per MiB to allocate and ~0.35
// ms per MiB to free on the H100 machine (3 slots: 1 GiB transfers as fast as with 4, 25% less to pin and free).
constexpr size_t kSlots = 3;

// Transfers from this size on are logged with -v (a small job's would be one line per job).
constexpr uint64_t kLoggedBytes = uint64_t(4) << 20;

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

// Where a large transfer's time went, for -v: the host's copies against its waits for the copy engine.
void log_transfer(const char* what, uint64_t bytes, Clock::time_point start, double copies_ms) {
    if (bytes < kLoggedBytes) return;
    const double total_ms = ms_between(start, Clock::now());
    spdlog::debug("vulkan: {} of {:.1f} MiB in {:.1f} ms: host copies {:.1f} ms, the rest waits and submissions", what,
                  double(bytes) / double(1 << 20), total_ms, copies_ms);
}

}  // namespace

VkBufferUsageFlags staging_usage(MemoryUse use) {
    return use == MemoryUse::download ? VK_BUFFER_USAGE_TRANSFER_DST_BIT : VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
}

StagingRing::StagingRing(const Device& device, uint64_t chunk_bytes) : device_(device), chunk_(chunk_bytes) {
    const VkBufferUsageFlags usage = staging_usage(MemoryUse::upload) | staging_usage(MemoryUse::download);
    for (size_t i = 0; i < kSlots; ++i)
        slots_.push_back({Buffer(device, chunk_bytes, usage, MemoryUse::download, "a staging buffer"),
                          std::make_unique<CommandStream>(device)});
}

void StagingRing::upload(const std::byte* src, uint64_t bytes, VkBuffer dst) {
    const auto start = Clock::now();
    double copies_ms = 0;
    uint64_t chunk = 0;
    for (uint64_t offset = 0; offset < bytes; offset += chunk_, ++chunk) {
        Slot& slot = slots_[chunk % kSlots];
        slot.stream->wait();  // its previous chunk has left the staging buffer
        const uint64_t size = std::min(chunk_, bytes - offset);
        const auto copy_start = Clock::now();
        parallel_copy(slot.staging.mapped(), src + offset, size);
        copies_ms += ms_between(copy_start, Clock::now());
        slot.staging.flush();
        const VkCommandBuffer cmd = slot.stream->begin();
        const VkBufferCopy region{0, offset, size};
        device_.fns().vkCmdCopyBuffer(cmd, slot.staging.handle(), dst, 1, &region);
        slot.stream->end();
        slot.stream->submit();
    }
    log_transfer("upload", bytes, start, copies_ms);
    // No wait here: the kernel's submission on the same queue starts with a transfer -> compute barrier, and each
    // slot is waited for before its staging buffer is refilled. One fence round trip less per input.
}

void StagingRing::download(VkBuffer src, std::byte* dst, uint64_t bytes) {
    const auto start = Clock::now();
    double copies_ms = 0;
    const uint64_t chunks = (bytes + chunk_ - 1) / chunk_;
    auto issue = [&](uint64_t chunk) {
        Slot& slot = slots_[chunk % kSlots];
        const uint64_t offset = chunk * chunk_, size = std::min(chunk_, bytes - offset);
        slot.stream->begin();
        slot.stream->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_TRANSFER_BIT);
        const VkBufferCopy region{offset, 0, size};
        device_.fns().vkCmdCopyBuffer(slot.stream->handle(), src, slot.staging.handle(), 1, &region);
        slot.stream->barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
        slot.stream->end();
        slot.stream->submit();
    };
    for (uint64_t c = 0; c < std::min<uint64_t>(kSlots, chunks); ++c) issue(c);
    for (uint64_t c = 0; c < chunks; ++c) {
        Slot& slot = slots_[c % kSlots];
        slot.stream->wait();
        slot.staging.invalidate();
        const uint64_t offset = c * chunk_;
        const auto copy_start = Clock::now();
        parallel_copy(dst + offset, slot.staging.mapped(), std::min(chunk_, bytes - offset));
        copies_ms += ms_between(copy_start, Clock::now());
        if (c + kSlots < chunks) issue(c + kSlots);
    }
    log_transfer("download", bytes, start, copies_ms);
}

void StagingRing::record_download(VkCommandBuffer cmd, VkBuffer src, uint64_t bytes) {
    Slot& slot = slots_[0];
    slot.stream->wait();  // its last chunk has been copied out
    const VkBufferCopy region{0, 0, bytes};
    device_.fns().vkCmdCopyBuffer(cmd, src, slot.staging.handle(), 1, &region);
}

void StagingRing::finish_download(std::byte* dst, uint64_t bytes) {
    const Slot& slot = slots_[0];
    slot.staging.invalidate();
    parallel_copy(dst, slot.staging.mapped(), bytes);
}

}  // namespace dmlgrad::vk
