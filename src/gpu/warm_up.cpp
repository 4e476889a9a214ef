#include "gpu/warm_up.h"

#include <algorithm>
#include <chrono>

namespace dmlgrad {

void warm_up_for(double seconds, const std::function<void(uint32_t copies)>& run_and_wait) {
    using Clock = std::chrono::steady_clock;
    const auto ms_since = [](Clock::time_point t) {
        return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    };
    const auto warm_start = Clock::now();
    uint32_t copies = 1;
    for (;;) {
        const auto batch_start = Clock::now();
        run_and_wait(copies);
        const double per_execution_ms = std::max(ms_since(batch_start) / copies, 1e-3);
        const double left_ms = seconds * 1e3 - ms_since(warm_start);
        if (left_ms <= 0) break;
        copies = uint32_t(std::clamp(std::min(left_ms, 50.0) / per_execution_ms, 1.0, 4096.0));
    }
}

}  // namespace dmlgrad
