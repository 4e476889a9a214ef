#include "gpu/vulkan/pipeline.h"

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {

ComputePipeline::ComputePipeline(const Device& device, const KernelBinary& kernel, std::vector<VkDescriptorType> types,
                                 uint32_t push_bytes)
    : device_(device), types_(std::move(types)), push_bytes_(push_bytes) {
    const auto binding_count = uint32_t(types_.size());
    const DeviceFunctions& f = device.fns();
    if (push_bytes > device.limits().maxPushConstantsSize)
        throw RuntimeFailure(std::string(kernel.name) + " needs " + std::to_string(push_bytes) +
                             " bytes of push constants; the device allows " +
                             std::to_string(device.limits().maxPushConstantsSize));

    VkShaderModule module = VK_NULL_HANDLE;
    try {
        std::vector<VkDescriptorSetLayoutBinding> bindings(binding_count);
        for (uint32_t i = 0; i < binding_count; ++i) {
            bindings[i].binding = i;
            bindings[i].descriptorType = types_[i];
            bindings[i].descriptorCount = 1;
            bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        }
        VkDescriptorSetLayoutCreateInfo set_info{};
        set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
        set_info.bindingCount = binding_count;
        set_info.pBindings = bindings.data();
        check(f.vkCreateDescriptorSetLayout(device.handle(), &set_info, nullptr, &set_layout_),
              "vkCreateDescriptorSetLayout");

        VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
        VkPipelineLayoutCreateInfo layout_info{};
        layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &set_layout_;
        layout_info.pushConstantRangeCount = push_bytes ? 1 : 0;
        layout_info.pPushConstantRanges = &push;
        check(f.vkCreatePipelineLayout(device.handle(), &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");

        VkShaderModuleCreateInfo module_info{};

        module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        module_info.codeSize = kernel.code.size_bytes();
        module_info.pCode = kernel.code.data();
        check(f.vkCreateShaderModule(device.handle(), &module_info, nullptr, &module), "vkCreateShaderModule");

        VkComputePipelineCreateInfo info{};

        info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        info.stage = {};
        info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        info.stage.module = module;
        info.stage.pName = "main";
        info.layout = layout_;
        check(f.vkCreateComputePipelines(device.handle(), VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_),
              "vkCreateComputePipelines");
        f.vkDestroyShaderModule(device.handle(), module, nullptr);  // the pipeline keeps what it needs
    } catch (...) {
        if (module) f.vkDestroyShaderModule(device.handle(), module, nullptr);
        if (layout_) f.vkDestroyPipelineLayout(device.handle(), layout_, nullptr);
        if (set_layout_) f.vkDestroyDescriptorSetLayout(device.handle(), set_layout_, nullptr);
        throw;
    }
}

ComputePipeline::~ComputePipeline() {
    const DeviceFunctions& f = device_.fns();
    f.vkDestroyPipeline(device_.handle(), pipeline_, nullptr);
    f.vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
    f.vkDestroyDescriptorSetLayout(device_.handle(), set_layout_, nullptr);
}

}  // namespace dmlgrad::vk
