#pragma once
// Splits [0, count) into contiguous chunks run on the CPUs the process may use. Chunks are fixed by the count and
// the thread count only, and each index is handled by exactly one call, so results do not depend on timing.
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

namespace dmlgrad {

// body(begin, end) is called on disjoint ranges covering [0, count), by the caller and a pool of threads kept
// for the process's life. Runs inline when count < min_per_thread * 2, and when called from a pool thread.
void parallel_for(uint64_t count, uint64_t min_per_thread, const std::function<void(uint64_t, uint64_t)>& body);

// The number of CPUs the process may run on (its affinity mask), at least 1.
unsigned worker_count();

// Runs `work` on a new thread that is never joined: once done, the thread sleeps until the process exits. For work
// that touches the Vulkan driver: such a thread seemed slow to end (about 10 ms passed between a device's creation
// and std::async's get() returning on the H100 machine), and a join would put that on the caller.
template <class Work>
void run_unjoined(Work work) {
    std::thread([work = std::move(work)]() mutable {
        work();
        for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
    }).detach();
}

}  // namespace dmlgrad
