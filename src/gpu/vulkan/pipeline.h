#pragma once
// A compute pipeline for one kernel variant: shader module, descriptor set layout (bindings 0..n-1 of set 0),
// pipeline layout with one push-constant range, and the pipeline.
#include <cstdint>
#include <vector>

#include "gpu/kernel_registry.h"
#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

class ComputePipeline {
public:
    // types[i]: the descriptor type of binding i (storage or uniform buffer).
    ComputePipeline(const Device& device, const KernelBinary& kernel, std::vector<VkDescriptorType> types,
                    uint32_t push_bytes);
    ~ComputePipeline();
    ComputePipeline(const ComputePipeline&) = delete;
    ComputePipeline& operator=(const ComputePipeline&) = delete;

    VkPipeline handle() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    const std::vector<VkDescriptorType>& binding_types() const { return types_; }
    uint32_t push_bytes() const { return push_bytes_; }

private:
    const Device& device_;
    std::vector<VkDescriptorType> types_;
    uint32_t push_bytes_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace dmlgrad::vk
