#pragma once
// Objects destroyed on threads of their own while the caller goes on, waited for before the caller's scope ends:
// the single command frees what it no longer needs (the device, the inputs' mappings) while it commits its output
// and reports, rather than leave it all to the process's exit, which would do it one thing after the other.
#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"

namespace dmlgrad::cli {

class BackgroundRelease {
public:
    BackgroundRelease() = default;
    ~BackgroundRelease() { wait(); }
    BackgroundRelease(const BackgroundRelease&) = delete;
    BackgroundRelease& operator=(const BackgroundRelease&) = delete;

    // Destroys `owned` (`what`, for -v) on a thread of its own (run_unjoined: it may hold the Vulkan device).
    template <class Owned>
    void destroy(std::string what, Owned owned) {
        std::promise<void> done;
        pending_.push_back(done.get_future());
        run_unjoined([what = std::move(what), held = std::optional<Owned>(std::move(owned)),
                      done = std::move(done)]() mutable {
            const auto start = std::chrono::steady_clock::now();
            held.reset();
            spdlog::debug("freed {} in {:.1f} ms", what,
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            done.set_value();
        });
    }

    // Returns once everything handed to destroy() is destroyed.
    void wait() {
        for (std::future<void>& f : pending_) f.wait();
        pending_.clear();
    }

private:
    std::vector<std::future<void>> pending_;
};

}  // namespace dmlgrad::cli
