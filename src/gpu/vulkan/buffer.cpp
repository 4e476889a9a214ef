#include "gpu/vulkan/buffer.h"

#include <bit>
#include <cstdio>
#include <utility>

#include "core/error.h"
#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {
namespace {

// "0.25 GiB", or "64 KiB" / "3.5 MiB" for amounts that would print as 0.00 GiB.
std::string gib(uint64_t bytes) {
    char text[32];
    if (bytes >= (uint64_t(1) << 28))
        std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(uint64_t(1) << 30));
    else if (bytes >= (uint64_t(1) << 20))
        std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(uint64_t(1) << 20));
    else
        std::snprintf(text, sizeof text, "%.0f KiB", double(bytes) / 1024.0);
    return text;
}

// The memory type with every required flag and the most preferred ones; -1 if none.
int pick_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t allowed, VkMemoryPropertyFlags required,
                     VkMemoryPropertyFlags preferred) {
    int best = -1, best_score = -1;
    for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
        if (!(allowed & (1u << t))) continue;
        const VkMemoryPropertyFlags flags = memory.memoryTypes[t].propertyFlags;
        if ((flags & required) != required) continue;
        const int score = std::popcount(flags & preferred);
        if (score > best_score) best = int(t), best_score = score;
    }
    return best;
}

}  // namespace

Buffer::Buffer(const Device& device, uint64_t bytes, VkBufferUsageFlags usage, MemoryUse use, const std::string& what)
    : device_(&device), size_(bytes) {
    const DeviceFunctions& f = device.fns();
    if (bytes > device.max_allocation_bytes())
        throw RuntimeFailure(what + " needs " + gib(bytes) + " in one allocation; " + device.name() +
                             " allows at most " + gib(device.max_allocation_bytes()) + " (try --cpu)");

    VkBufferCreateInfo info{};

    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = bytes;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(f.vkCreateBuffer(device.handle(), &info, nullptr, &buffer_), "vkCreateBuffer");

    try {
        VkMemoryRequirements requirements{};
        f.vkGetBufferMemoryRequirements(device.handle(), buffer_, &requirements);
        constexpr VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        constexpr VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        constexpr VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        constexpr VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        VkMemoryPropertyFlags required = 0, preferred = 0;
        switch (use) {
            case MemoryUse::device: required = 0, preferred = local; break;
            case MemoryUse::shared: required = local | visible, preferred = coherent | cached; break;
            case MemoryUse::upload: required = visible, preferred = coherent; break;
            case MemoryUse::constants: required = visible, preferred = local | coherent; break;
            case MemoryUse::download: required = visible, preferred = cached | coherent; break;
        }
        const int type = pick_memory_type(device.memory(), requirements.memoryTypeBits, required, preferred);
        if (type < 0) throw RuntimeFailure(what + ": " + device.name() + " has no suitable memory type");
        const VkMemoryType& memory_type = device.memory().memoryTypes[type];
        coherent_ = memory_type.propertyFlags & coherent;
        const uint64_t heap = device.memory().memoryHeaps[memory_type.heapIndex].size;
        if (requirements.size > heap)
            throw RuntimeFailure(what + " needs " + gib(requirements.size) + " but " + device.name() +
                                 "'s memory holds " + gib(heap) + " (try --cpu)");

        VkMemoryAllocateInfo allocate{};

        allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        allocate.allocationSize = requirements.size;
        allocate.memoryTypeIndex = uint32_t(type);
        const VkResult result = f.vkAllocateMemory(device.handle(), &allocate, nullptr, &memory_);
        if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
            throw RuntimeFailure("out of GPU memory allocating " + gib(requirements.size) + " for " + what + " on " +
                                 device.name() + " (try --cpu)");
        check(result, "vkAllocateMemory");
        check(f.vkBindBufferMemory(device.handle(), buffer_, memory_, 0), "vkBindBufferMemory");
        if (memory_type.propertyFlags & visible) {
            void* p = nullptr;
            check(f.vkMapMemory(device.handle(), memory_, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
            mapped_ = static_cast<std::byte*>(p);
        }
    } catch (...) {
        if (memory_) f.vkFreeMemory(device.handle(), memory_, nullptr);
        f.vkDestroyBuffer(device.handle(), buffer_, nullptr);
        throw;
    }
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(other.memory_, VK_NULL_HANDLE)),
      size_(other.size_),
      mapped_(std::exchange(other.mapped_, nullptr)),
      coherent_(other.coherent_) {}

Buffer::~Buffer() {
    const DeviceFunctions& f = device_->fns();
    if (buffer_) f.vkDestroyBuffer(device_->handle(), buffer_, nullptr);
    if (memory_) f.vkFreeMemory(device_->handle(), memory_, nullptr);  // unmaps implicitly
}

void Buffer::flush() const {
    if (coherent_ || !mapped_) return;
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    check(device_->fns().vkFlushMappedMemoryRanges(device_->handle(), 1, &range), "vkFlushMappedMemoryRanges");
}

void Buffer::invalidate() const {
    if (coherent_ || !mapped_) return;
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    check(device_->fns().vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range),
          "vkInvalidateMappedMemoryRanges");
}

}  // namespace dmlgrad::vk
