#include "core/parallel.h"

#include <sched.h>

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace dmlgrad {

// The CPUs this process may run on (taskset, Slurm and cgroup CPU sets narrow them), not the machine's count:
// more threads than that only take turns on the same CPUs.
unsigned worker_count() {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(uint64_t count, uint64_t min_per_thread, const std::function<void(uint64_t, uint64_t)>& body) {
    uint64_t workers = std::min<uint64_t>(worker_count(), count / std::max<uint64_t>(min_per_thread, 1));
    if (workers <= 1) {
        if (count) body(0, count);
        return;
    }
    std::vector<std::exception_ptr> errors(workers);
    {
        std::vector<std::jthread> threads;
        threads.reserve(workers - 1);
        auto run = [&](uint64_t w) {
            try {
                body(count * w / workers, count * (w + 1) / workers);
            } catch (...) {
                errors[w] = std::current_exception();
            }
        };
        for (uint64_t w = 1; w < workers; ++w) threads.emplace_back(run, w);
        run(0);
    }
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace dmlgrad
