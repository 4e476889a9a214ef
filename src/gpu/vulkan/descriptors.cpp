#include "gpu/vulkan/descriptors.h"

#include <algorithm>
#include <vector>

#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {

DescriptorPool::DescriptorPool(const Device& device, uint32_t max_sets, uint32_t max_storage_buffers,
                               uint32_t max_uniform_buffers)
    : device_(device) {
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(max_storage_buffers, 1u)},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, std::max(max_uniform_buffers, 1u)}};
    VkDescriptorPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    info.maxSets = max_sets > 0 ? max_sets : 1;
    info.poolSizeCount = 2;
    info.pPoolSizes = sizes;
    check(device.fns().vkCreateDescriptorPool(device.handle(), &info, nullptr, &pool_), "vkCreateDescriptorPool");
}

DescriptorPool::~DescriptorPool() { device_.fns().vkDestroyDescriptorPool(device_.handle(), pool_, nullptr); }

VkDescriptorSet DescriptorPool::make_set(VkDescriptorSetLayout layout, std::span<const VkDescriptorBufferInfo> buffers,
                                         std::span<const VkDescriptorType> types) {
    VkDescriptorSetAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    allocate.descriptorPool = pool_;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(device_.fns().vkAllocateDescriptorSets(device_.handle(), &allocate, &set), "vkAllocateDescriptorSets");

    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
        writes[i] = {};
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = set;
        writes[i].dstBinding = uint32_t(i);
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = types[i];
        writes[i].pBufferInfo = &buffers[i];
    }
    device_.fns().vkUpdateDescriptorSets(device_.handle(), uint32_t(writes.size()), writes.data(), 0, nullptr);
    return set;
}

}  // namespace dmlgrad::vk
