#pragma once
// A compute pipeline for one kernel variant: shader module, descriptor set layout (storage buffers 0..n-1),
// pipeline layout with one push-constant range, and the pipeline.
#include <cstdint>

#include "gpu/kernel_registry.h"
#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

class ComputePipeline {
public:
    ComputePipeline(const Device& device, const KernelBinary& kernel, uint32_t binding_count, uint32_t push_bytes);
    ~ComputePipeline();
    ComputePipeline(const ComputePipeline&) = delete;
    ComputePipeline& operator=(const ComputePipeline&) = delete;

    VkPipeline handle() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    uint32_t binding_count() const { return binding_count_; }
    uint32_t push_bytes() const { return push_bytes_; }

private:
    const Device& device_;
    uint32_t binding_count_;
    uint32_t push_bytes_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace dmlgrad::vk
