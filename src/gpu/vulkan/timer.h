#pragma once
// Kernel time on the device: pairs of timestamps around each timed execution, in one query pool.
#include <cstdint>
#include <vector>

#include "gpu/vulkan/device.h"

namespace dmlgrad::vk {

class TimestampTimer {
public:
    // Room for `intervals` start/end pairs. Only on a queue with timestamp_valid_bits() > 0.
    TimestampTimer(const Device& device, uint32_t intervals);
    ~TimestampTimer();
    TimestampTimer(const TimestampTimer&) = delete;
    TimestampTimer& operator=(const TimestampTimer&) = delete;

    void reset(VkCommandBuffer cmd);
    // The start stamp waits for all earlier work (bottom of pipe), so an interval covers only what follows.
    void start(VkCommandBuffer cmd, uint32_t interval);
    void stop(VkCommandBuffer cmd, uint32_t interval);
    // Milliseconds of each interval, once the commands have completed.
    std::vector<double> intervals_ms() const;

private:
    const Device& device_;
    uint32_t intervals_;
    VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace dmlgrad::vk
