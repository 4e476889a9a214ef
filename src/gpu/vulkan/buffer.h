#pragma once
// A VkBuffer with its own memory allocation (dmlgrad uses a handful of large buffers, so no sub-allocator).
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

enum class MemoryUse {
    device,     // device-local, not mapped: the kernels' buffers on a discrete GPU
    shared,     // device-local and mapped: the kernels' buffers where memory is unified
    upload,     // mapped, written by the host, read by a copy: staging
    constants,  // mapped, written by the host, read by kernels: small parameter buffers (device-local if it can)
    download,   // mapped, written by a copy, read by the host (cached where possible)
};

class Buffer {
public:
    // `what` names the buffer in errors ("dX", "staging for X"). Throws RuntimeFailure when the device cannot
    // hold it.
    Buffer(const Device& device, uint64_t bytes, VkBufferUsageFlags usage, MemoryUse use, const std::string& what);
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&&) = delete;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    VkBuffer handle() const { return buffer_; }
    uint64_t size() const { return size_; }
    std::byte* mapped() const { return mapped_; }  // null unless the memory is host-visible
    // For memory that is not host-coherent: make host writes visible to the device, and device writes to the host.
    void flush() const;
    void invalidate() const;

private:
    const Device* device_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    uint64_t size_ = 0;
    std::byte* mapped_ = nullptr;
    bool coherent_ = true;
};

}  // namespace dmlgrad::vk
