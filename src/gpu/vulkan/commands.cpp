#include "gpu/vulkan/commands.h"

#include <chrono>
#include <vector>

#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {

CommandStream::CommandStream(const Device& device) : device_(device) {
    const DeviceFunctions& f = device.fns();
    VkCommandPoolCreateInfo pool_info{};
    pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = device.queue_family();
    check(f.vkCreateCommandPool(device.handle(), &pool_info, nullptr, &pool_), "vkCreateCommandPool");
    try {
        VkCommandBufferAllocateInfo allocate{};
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        allocate.commandPool = pool_;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        check(f.vkAllocateCommandBuffers(device.handle(), &allocate, &buffer_), "vkAllocateCommandBuffers");
        VkFenceCreateInfo fence_info{};
        fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        check(f.vkCreateFence(device.handle(), &fence_info, nullptr, &fence_), "vkCreateFence");
    } catch (...) {
        f.vkDestroyCommandPool(device.handle(), pool_, nullptr);  // frees the command buffer too
        throw;
    }
}

CommandStream::~CommandStream() {
    const DeviceFunctions& f = device_.fns();
    if (pending_) f.vkWaitForFences(device_.handle(), 1, &fence_, VK_TRUE, UINT64_MAX);  // never free in-flight work
    f.vkDestroyFence(device_.handle(), fence_, nullptr);
    f.vkDestroyCommandPool(device_.handle(), pool_, nullptr);
}

VkCommandBuffer CommandStream::begin(bool reusable) {
    const DeviceFunctions& f = device_.fns();
    wait();  // the buffer may still be in flight
    check(f.vkResetCommandBuffer(buffer_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    info.flags = reusable ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(f.vkBeginCommandBuffer(buffer_, &info), "vkBeginCommandBuffer");
    return buffer_;
}

void CommandStream::end() { check(device_.fns().vkEndCommandBuffer(buffer_), "vkEndCommandBuffer"); }

void CommandStream::submit(uint32_t copies) {
    const DeviceFunctions& f = device_.fns();
    std::vector<VkCommandBuffer> buffers(copies, buffer_);
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = copies;
    submit.pCommandBuffers = buffers.data();
    check(f.vkResetFences(device_.handle(), 1, &fence_), "vkResetFences");
    check(f.vkQueueSubmit(device_.queue(), 1, &submit, fence_), "vkQueueSubmit");
    pending_ = true;
}

void CommandStream::wait() {
    if (!pending_) return;
    pending_ = false;
    // Polled for the first 200 us, then a blocking wait: a blocking wait for a short submission (a small job's
    // kernel or copy) took 0.35-0.4 ms on the H100's driver, several times the work itself.
    const DeviceFunctions& f = device_.fns();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    do {
        const VkResult status = f.vkGetFenceStatus(device_.handle(), fence_);
        if (status == VK_SUCCESS) return;
        if (status != VK_NOT_READY) check(status, "vkGetFenceStatus");
    } while (std::chrono::steady_clock::now() < deadline);
    check(f.vkWaitForFences(device_.handle(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void CommandStream::barrier(VkPipelineStageFlags before, VkPipelineStageFlags after) {
    // Only the access types each stage supports (the spec requires it).
    VkAccessFlags written = 0, accessed = 0;
    if (before & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT) written |= VK_ACCESS_SHADER_WRITE_BIT;
    if (before & VK_PIPELINE_STAGE_TRANSFER_BIT) written |= VK_ACCESS_TRANSFER_WRITE_BIT;
    if (before & VK_PIPELINE_STAGE_HOST_BIT) written |= VK_ACCESS_HOST_WRITE_BIT;
    if (after & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT)
        accessed |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    if (after & VK_PIPELINE_STAGE_TRANSFER_BIT) accessed |= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    if (after & VK_PIPELINE_STAGE_HOST_BIT) accessed |= VK_ACCESS_HOST_READ_BIT;
    VkMemoryBarrier memory{};
    memory.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    memory.srcAccessMask = written;
    memory.dstAccessMask = accessed;
    device_.fns().vkCmdPipelineBarrier(buffer_, before, after, 0, 1, &memory, 0, nullptr, 0, nullptr);
}

}  // namespace dmlgrad::vk
