#include "gpu_testing.h"

#include <cstring>
#include <map>
#include <memory>
#include <tuple>

#include "cpu/kernels.h"

namespace dmlgrad::testing {

Backend& gpu() {
    static std::unique_ptr<Backend> backend = [] {
        vk::VulkanOptions options;
        options.poison_output = true;
        return vk::make_vulkan_backend(std::nullopt, options);
    }();
    return *backend;
}

Backend& gpu_with_limits(const DeviceLimits& cap) {
    static std::map<std::tuple<uint64_t, uint64_t, uint32_t>, std::unique_ptr<Backend>> backends;
    auto& slot = backends[{cap.max_binding_bytes, cap.offset_alignment, cap.max_groups_x}];
    if (!slot) {
        vk::VulkanOptions options;
        options.poison_output = true;
        options.limits_cap = cap;
        slot = vk::make_vulkan_backend(std::nullopt, options);
    }
    return *slot;
}

Backend& gpu_with_staging() {
    static std::unique_ptr<Backend> backend = [] {
        vk::VulkanOptions options;
        options.poison_output = true;
        options.force_staging = true;
        return vk::make_vulkan_backend(std::nullopt, options);
    }();
    return *backend;
}

Tensor run_on(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs, ExecutionStats* stats,
              int repeat) {
    Tensor out(plan_output_info(plan));
    poison(out);
    RunOptions options;
    options.repeat = repeat;
    ExecutionStats s = backend.run(plan, inputs, out, options);
    if (stats) *stats = s;
    return out;
}

Tensor run_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs) {
    Tensor out(plan_output_info(plan));
    poison(out);
    if (auto* p = std::get_if<ReluGradPlan>(&plan)) cpu::relu_grad(*p, *inputs.at(0), *inputs.at(1), out);
    else if (auto* p = std::get_if<ClipGradPlan>(&plan)) cpu::clip_grad(*p, *inputs.at(0), *inputs.at(1), out);
    else if (auto* p = std::get_if<SliceGradPlan>(&plan)) cpu::slice_grad(*p, *inputs.at(0), out);
    else throw std::logic_error("run_cpu: operator not covered");
    return out;
}

Tensor random_bits(DType type, const Shape& shape, std::mt19937_64& rng) {
    Tensor t(TensorInfo{type, shape});
    const size_t bytes = t.bytes();
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t r = rng();
        std::memcpy(t.buffer.data() + i, &r, 8);
    }
    const uint64_t r = rng();
    std::memcpy(t.buffer.data() + i, &r, bytes - i);
    return t;
}

}  // namespace dmlgrad::testing
