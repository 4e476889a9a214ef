#include "gpu/vulkan/timer.h"

#include "gpu/vulkan/check.h"

namespace dmlgrad::vk {

TimestampTimer::TimestampTimer(const Device& device, uint32_t intervals) : device_(device), intervals_(intervals) {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2 * intervals;
    check(device.fns().vkCreateQueryPool(device.handle(), &info, nullptr, &pool_), "vkCreateQueryPool");
}

TimestampTimer::~TimestampTimer() { device_.fns().vkDestroyQueryPool(device_.handle(), pool_, nullptr); }

void TimestampTimer::reset(VkCommandBuffer cmd) { device_.fns().vkCmdResetQueryPool(cmd, pool_, 0, 2 * intervals_); }

void TimestampTimer::start(VkCommandBuffer cmd, uint32_t interval) {
    device_.fns().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 2 * interval);
}

void TimestampTimer::stop(VkCommandBuffer cmd, uint32_t interval) {
    device_.fns().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, 2 * interval + 1);
}

std::vector<double> TimestampTimer::intervals_ms() const {
    std::vector<uint64_t> stamps(2 * size_t(intervals_));
    check(device_.fns().vkGetQueryPoolResults(device_.handle(), pool_, 0, 2 * intervals_,
                                              stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    const uint32_t bits = device_.timestamp_valid_bits();
    const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    const double ns_per_tick = device_.limits().timestampPeriod;
    std::vector<double> ms(intervals_);
    for (uint32_t i = 0; i < intervals_; ++i) {
        const uint64_t ticks = (stamps[2 * i + 1] - stamps[2 * i]) & mask;  // modular: survives a wrap
        ms[i] = double(ticks) * ns_per_tick * 1e-6;
    }
    return ms;
}

}  // namespace dmlgrad::vk
