// The CPU reference's threads: as many as the process's affinity mask allows (taskset, Slurm, cgroups).
#include <gtest/gtest.h>
#include <sched.h>

#include <mutex>
#include <set>
#include <thread>

#include "core/parallel.h"

namespace dmlgrad {
namespace {

// Narrows the process to its first allowed CPU for the test's lifetime.
class OneCpu {
public:
    OneCpu() {
        sched_getaffinity(0, sizeof(saved_), &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &saved_)) {
                CPU_SET(cpu, &one);
                break;
            }
        EXPECT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    }
    ~OneCpu() { sched_setaffinity(0, sizeof(saved_), &saved_); }

private:
    cpu_set_t saved_;
};

std::set<std::thread::id> threads_used(uint64_t count) {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    parallel_for(count, 1, [&](uint64_t, uint64_t) {
        std::lock_guard lock(mutex);
        ids.insert(std::this_thread::get_id());
    });
    return ids;
}

TEST(Parallel, WorkerCountFollowsTheAffinityMask) {
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    EXPECT_EQ(worker_count(), unsigned(CPU_COUNT(&allowed)));
    {
        OneCpu narrowed;
        EXPECT_EQ(worker_count(), 1u);
        EXPECT_EQ(threads_used(1000).size(), 1u);
    }
    EXPECT_EQ(worker_count(), unsigned(CPU_COUNT(&allowed)));
}

TEST(Parallel, EveryIndexIsCoveredOnce) {
    std::vector<int> hits(10007, 0);
    parallel_for(hits.size(), 16, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) ++hits[i];
    });
    for (int h : hits) ASSERT_EQ(h, 1);
}

}  // namespace
}  // namespace dmlgrad
