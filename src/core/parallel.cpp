#include "core/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dmlgrad {
namespace {

// One parallel_for call: its parts are taken by the caller and by idle pool threads alike.
struct Task {
    const std::function<void(uint64_t)>* part = nullptr;
    uint64_t parts = 0;
    std::atomic<uint64_t> next{0}, done{0};
    std::mutex error_mutex;
    std::exception_ptr error;

    // Runs parts until none is left to take.
    void work() {
        for (uint64_t p = next.fetch_add(1); p < parts; p = next.fetch_add(1)) {
            try {
                (*part)(p);
            } catch (...) {
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
            }
            if (done.fetch_add(1) + 1 == parts) done.notify_all();
        }
    }
};

thread_local bool t_in_pool = false;

// Threads started once and kept: starting threads per call cost more than copying a megabyte (a batch of small
// jobs calls parallel_for several times per job). Several callers may run tasks at once (a batch's reader,
// workers and writer); each caller works on its own task too, so every task finishes even when the pool is busy.
class Pool {
public:
    explicit Pool(unsigned threads) {
        for (unsigned i = 0; i < threads; ++i) std::thread([this] { serve(); }).detach();
    }

    void run(uint64_t parts, const std::function<void(uint64_t)>& part) {
        auto task = std::make_shared<Task>();
        task->part = &part;
        task->parts = parts;
        {
            std::lock_guard lock(mutex_);
            tasks_.push_back(task);
        }
        wake_.notify_all();
        task->work();
        for (uint64_t d = task->done.load(); d < parts; d = task->done.load()) task->done.wait(d);
        if (task->error) std::rethrow_exception(task->error);
    }

private:
    [[noreturn]] void serve() {
        t_in_pool = true;
        for (;;) {
            std::shared_ptr<Task> task;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [this] { return !tasks_.empty(); });
                task = tasks_.front();
                // A task whose parts are all taken leaves the queue; its caller waits for the last ones.
                if (task->next.load() >= task->parts) tasks_.pop_front();
            }
            task->work();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Task>> tasks_;
};

// Sized by the affinity at first use (a narrower one later only gives fewer parts per task). Never destroyed: its
// threads wait for work until the process exits (joining them at exit would only add time).
Pool& pool() {
    static Pool* const instance = new Pool(std::max(1u, worker_count()) - 1);
    return *instance;
}

}  // namespace

// The CPUs this process may run on (taskset, Slurm and cgroup CPU sets narrow them), not the machine's count:
// more threads than that only take turns on the same CPUs.
unsigned worker_count() {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) return unsigned(std::max(1, CPU_COUNT(&allowed)));
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(uint64_t count, uint64_t min_per_thread, const std::function<void(uint64_t, uint64_t)>& body) {
    const uint64_t workers = std::min<uint64_t>(worker_count(), count / std::max<uint64_t>(min_per_thread, 1));
    if (workers <= 1 || t_in_pool) {  // nested in a pool thread: inline, so no pool thread waits on another
        if (count) body(0, count);
        return;
    }
    const std::function<void(uint64_t)> part = [&](uint64_t w) {
        body(count * w / workers, count * (w + 1) / workers);
    };
    pool().run(workers, part);
}

}  // namespace dmlgrad
