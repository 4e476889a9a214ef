#pragma once
// A descriptor pool for one run: one set per distinct group of buffer windows a program binds.
#include <cstdint>
#include <span>

#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

class DescriptorPool {
public:
    DescriptorPool(const Device& device, uint32_t max_sets, uint32_t max_storage_buffers, uint32_t max_uniform_buffers);
    ~DescriptorPool();
    DescriptorPool(const DescriptorPool&) = delete;
    DescriptorPool& operator=(const DescriptorPool&) = delete;

    // A set of `layout` whose binding i is buffers[i], of descriptor type types[i]. Freed with the pool.
    VkDescriptorSet make_set(VkDescriptorSetLayout layout, std::span<const VkDescriptorBufferInfo> buffers,
                             std::span<const VkDescriptorType> types);

private:
    const Device& device_;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

}  // namespace dmlgrad::vk
