#pragma once
// One command buffer with its pool and fence: record, submit (possibly several copies back to back), wait.
#include <cstdint>

#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

class CommandStream {
public:
    explicit CommandStream(const Device& device);
    ~CommandStream();
    CommandStream(const CommandStream&) = delete;
    CommandStream& operator=(const CommandStream&) = delete;

    // Starts recording (resetting what was there). `reusable`: may be submitted several times at once.
    VkCommandBuffer begin(bool reusable = false);
    void end();
    // Submits the recorded commands `copies` times in one batch, in order; wait() waits for them (if submitted).
    void submit(uint32_t copies = 1);
    void wait();
    void submit_and_wait(uint32_t copies = 1) {
        submit(copies);
        wait();
    }

    // A memory barrier: what the `before` stages wrote (compute, transfer, host) becomes visible to the `after`
    // stages. Used between passes that touch the same bytes, between repeated executions, before a copy reads
    // the kernel's output and before the host reads mapped memory.
    void barrier(VkPipelineStageFlags before = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VkPipelineStageFlags after = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);

    VkCommandBuffer handle() const { return buffer_; }

private:
    const Device& device_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer buffer_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    bool pending_ = false;
};

}  // namespace dmlgrad::vk
