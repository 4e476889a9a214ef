#include "cli/batch.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "cli/batch_jobs.h"
#include "cli/batch_report.h"
#include "cli/batch_stop.h"
#include "cli/command_line.h"
#include "cli/runner.h"
#include "core/error.h"
#include "core/stopwatch.h"
#include "gpu/gpu.h"
#include "test_hooks/test_hooks.h"

namespace dmlgrad::cli {
namespace {

struct ReadyJob {
    size_t index = 0;
    PreparedJob job;
    std::string rerun_reason;  // why --skip-existing did not skip it ("" when it did not apply)
};

// What reading a job came to, published in manifest order: a job ready to run, a skipped job, or a failure.
struct ReadOutcome {
    std::optional<PreparedJob> prepared;
    std::optional<std::string> skipped;  // the existing output
    bool abandoned = false;              // the batch stopped while it waited for its inputs
    int exit_code = 0;
    std::string error;
    std::string rerun_reason;
    double read_ms = 0, output_ms = 0;  // reading its inputs, making its output file
};

ReadOutcome failed_outcome(int exit_code, std::string error) {
    ReadOutcome outcome;
    outcome.exit_code = exit_code;
    outcome.error = std::move(error);
    return outcome;
}

struct FinishedJob {
    size_t index = 0;
    ComputedJob job;
    uint64_t file_bytes = 0;
    std::vector<Tensor> inputs;  // released by the writer: unmapping them is kept off the worker's path
    std::string rerun_reason;
};

// Reader threads: reading a small job is mostly taking the write faults of its output file's pages (about 1 ms
// for 1 MiB on the H100 machine, twice a GPU worker's time per job), which several threads take in parallel.
constexpr int kReaders = 3;

// -v: where each thread's time went.
void log_phases(const std::vector<WorkerShare>& workers, const BatchPhases& p) {
    for (const WorkerShare& w : workers)
        spdlog::debug(
            "worker on device {}: {} jobs, busy {:.3f} s (upload {:.3f}, kernels {:.3f}, download {:.3f}), "
            "waiting for jobs {:.3f} s",
            w.device, w.jobs, w.busy_s, w.upload_s, w.kernel_s, w.download_s, w.waiting_s);
    spdlog::debug("{} readers: inputs {:.3f} s, outputs made {:.3f} s; saving {:.3f} s", p.readers, p.read_s,
                  p.output_s, p.save_s);
}

// The batch as a pipeline: reader threads read and validate jobs ahead of the workers, one worker per device
// entry computes them on its own long-lived backends, and a writer thread moves finished outputs into place.
class BatchEngine {
public:
    // `backends`: one per worker, each on its device, possibly with its GPU backend under way already.
    BatchEngine(const BatchOptions& options, std::vector<BatchJob> jobs,
                std::vector<std::unique_ptr<WorkerBackends>> backends, BatchReporter& reporter)
        : options_(options),
          jobs_(std::move(jobs)),
          reporter_(reporter),
          backends_(std::move(backends)),
          shares_(backends_.size()),
          settled_(jobs_.size(), kUnsettled),
          computed_on_(jobs_.size()) {
        phases_.readers = kReaders;
        for (size_t w = 0; w < backends_.size(); ++w) {
            const std::optional<int> device = backends_[w]->device();
            shares_[w].device = options_.cpu ? "cpu" : device ? std::to_string(*device) : "default";
        }
        default_device_ = resolve_default_device();
    }

    void run() {
        std::vector<std::thread> readers;
        for (int r = 0; r < kReaders; ++r) readers.emplace_back([this] { read_jobs(); });
        std::vector<std::thread> workers;
        for (size_t w = 0; w < backends_.size(); ++w) workers.emplace_back([this, w] { work(w); });
        std::thread writer([this] { write_results(); });
        for (std::thread& t : readers) t.join();
        for (std::thread& t : workers) t.join();
        {
            std::lock_guard lock(mutex_);
            workers_done_ = true;
        }
        changed_.notify_all();
        writer.join();
    }

    const std::vector<WorkerShare>& shares() const { return shares_; }
    const BatchPhases& phases() const { return phases_; }

private:
    static constexpr int kUnsettled = -1;

    bool stopping() const { return stop_.load() || stop_signal() != 0 || reporter_.output_closed(); }
    int line_of(size_t index) const { return jobs_[index].line; }

    // The job is over: its output written (or skipped as complete), or it failed with `exit_code`. Mutex held.
    void settle_locked(size_t index, int exit_code) {
        settled_[index] = exit_code;
        changed_.notify_all();
    }
    void settle(size_t index, int exit_code) {
        std::lock_guard lock(mutex_);
        settle_locked(index, exit_code);
    }

    // Reports the failure; the caller settles the job.
    void report_failure(size_t index, int exit_code, const std::string& message, const RunReport* report = nullptr) {
        reporter_.failed(line_of(index), exit_code, message, report);
        if (options_.fail_fast) stop_ = true;
    }
    void fail(size_t index, int exit_code, const std::string& message, const RunReport* report = nullptr) {
        report_failure(index, exit_code, message, report);
        settle(index, exit_code);
    }

    // Runs `step`, returning what it throws as an exit code and message: 2 for the user's mistakes, 1 otherwise.
    template <class Step>
    static std::optional<std::pair<int, std::string>> failure_of(Step&& step) {
        try {
            step();
            return std::nullopt;
        } catch (const UsageError& e) {
            return std::pair<int, std::string>{2, e.what()};
        } catch (const std::bad_alloc&) {
            return std::pair<int, std::string>{1, "out of host memory"};
        } catch (const std::exception& e) {
            return std::pair<int, std::string>{1, e.what()};
        }
    }

    // Runs `step`, reporting what it throws as the job's failure.
    template <class Step>
    bool guarded(size_t index, Step&& step) {
        const auto failure = failure_of(std::forward<Step>(step));
        if (failure) fail(index, failure->first, failure->second);
        return !failure;
    }

    // The preferred device's index, when a job pins a device and a worker runs on the preferred one: so that
    // `--device 0` finds the default worker on device 0.
    std::optional<int> resolve_default_device() const {
        const bool pins = std::any_of(jobs_.begin(), jobs_.end(),
                                      [](const BatchJob& j) { return j.request && j.request->common.device; });
        const bool default_worker =
            std::any_of(backends_.begin(), backends_.end(), [](const auto& b) { return !b->device(); });
        if (options_.cpu || !pins || !default_worker) return std::nullopt;
        try {
            return preferred_gpu_device();
        } catch (const std::exception&) {
            return std::nullopt;  // no device: the jobs fail on their own
        }
    }

    // Whether a worker on `worker_device` may run a job pinned to `pinned`.
    bool runs_on(std::optional<int> worker_device, std::optional<int> pinned) const {
        if (!pinned || options_.cpu) return true;
        return pinned == (worker_device ? worker_device : default_device_);
    }

    bool has_worker_on(std::optional<int> device) const {
        return std::any_of(backends_.begin(), backends_.end(),
                           [&](const auto& b) { return runs_on(b->device(), device); });
    }

    void read_jobs();
    std::optional<size_t> next_job_to_read();
    std::optional<ReadOutcome> wait_for_producers(size_t index);
    ReadOutcome read_job(BatchJob& job);
    void publish(size_t index, ReadOutcome outcome);
    void publish_one(size_t index, ReadOutcome& outcome);
    std::optional<ReadyJob> take_job(size_t worker, bool wait);
    bool may_take(size_t worker, const ReadyJob& job) const;
    void set_resident_keys(size_t worker, const ReadyJob& job);
    void record_computed(size_t worker, const ReadyJob& job);
    void count_phases(size_t worker, const ExecutionStats& stats);
    void work(size_t worker);
    void finish_started(size_t worker, ReadyJob& started);
    void compute(size_t worker, ReadyJob& ready);
    void hand_over(ReadyJob& ready, ComputedJob computed);
    std::optional<FinishedJob> take_result();
    void write_results();

    const BatchOptions& options_;
    std::vector<BatchJob> jobs_;
    BatchReporter& reporter_;
    std::vector<std::unique_ptr<WorkerBackends>> backends_;
    std::vector<WorkerShare> shares_;
    BatchPhases phases_;  // the readers' sums under the mutex, the writer's its own
    std::optional<int> default_device_;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<ReadyJob> ready_;
    // Reading: jobs_[i] for i < next_read_ have been taken by a reader; outcomes wait in `read_` until all earlier
    // ones are published (next_published_). `left_`: jobs no longer read ahead (taken by a worker, or published as
    // skipped, failed or abandoned), so next_read_ - left_ jobs are being read or wait in ready_.
    size_t next_read_ = 0, next_published_ = 0, left_ = 0;
    std::map<size_t, ReadOutcome> read_;
    int readers_running_ = kReaders;
    std::deque<FinishedJob> finished_;
    bool reader_done_ = false, workers_done_ = false;
    // Each job's exit code once it is over (0: its output is in place), kUnsettled before: what a job reading its
    // output waits for.
    std::vector<int> settled_;
    // The GPU worker that computed each job: a job taking an earlier job's output from device memory runs there.
    std::vector<std::optional<size_t>> computed_on_;
    std::atomic<bool> stop_{false};
};

// Each reader takes the next job while fewer than --max-in-flight are read ahead, waits until the jobs writing its
// inputs are over, and reads it; outcomes are published in manifest order, whichever reader finishes first.
void BatchEngine::read_jobs() {
    while (const std::optional<size_t> index = next_job_to_read()) {
        if (*index == 0 && test_hooks::first_read_delay_ms())
            std::this_thread::sleep_for(std::chrono::milliseconds(test_hooks::first_read_delay_ms()));
        std::optional<ReadOutcome> unread = wait_for_producers(*index);
        publish(*index, unread ? std::move(*unread) : read_job(jobs_[*index]));
    }
    {
        std::lock_guard lock(mutex_);
        reader_done_ = --readers_running_ == 0;
    }
    changed_.notify_all();
}

std::optional<size_t> BatchEngine::next_job_to_read() {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping() || next_read_ == jobs_.size()) return std::nullopt;
        if (next_read_ - left_ < size_t(options_.max_in_flight)) return next_read_++;
        changed_.wait_for(lock, std::chrono::milliseconds(50));  // also wakes to see a signal
    }
}

// A job reads its inputs only once every earlier job writing one of them is over: nothing, when they all wrote
// their outputs; else the job's failure (or its abandonment, when the batch stops first). The jobs waited for are
// earlier ones, taken by readers before this one, so the earliest job waiting always has what it waits for coming.
std::optional<ReadOutcome> BatchEngine::wait_for_producers(size_t index) {
    std::unique_lock lock(mutex_);
    for (size_t producer : jobs_[index].producers) {
        while (settled_[producer] == kUnsettled) {
            if (stopping()) {
                ReadOutcome abandoned;
                abandoned.abandoned = true;
                return abandoned;
            }
            changed_.wait_for(lock, std::chrono::milliseconds(50));  // also wakes to see a signal
        }
        if (const int code = settled_[producer]; code != 0)
            return failed_outcome(
                code, fmt::format("not run: it reads the output of line {}, which failed", line_of(producer)));
    }
    return std::nullopt;
}

ReadOutcome BatchEngine::read_job(BatchJob& job) {
    ReadOutcome outcome = failed_outcome(2, job.error);
    if (!job.request) return outcome;
    OperatorRequest& request = *job.request;
    if (!request.common.cpu && !has_worker_on(request.common.device)) {
        outcome.error = fmt::format("--device {}: the batch has no worker on that device (name it in batch --device)",
                                    *request.common.device);
        return outcome;
    }
    const auto failure = failure_of([&] {
        PreparedJob prepared = validate_job(std::move(request.command), request.common);
        const std::string& output = prepared.command.output.path;
        std::error_code ec;
        if (options_.skip_existing && std::filesystem::exists(output, ec)) {
            outcome.rerun_reason = incomplete_output_reason(output, prepared.command.output.info);
            if (outcome.rerun_reason.empty()) {
                outcome.skipped = output;
                return;
            }
            spdlog::debug("not skipped: the existing {}", outcome.rerun_reason);
        }
        load_inputs(prepared);
        outcome.read_ms = prepared.load_ms;
        Stopwatch making;
        create_output(prepared);
        outcome.output_ms = making.elapsed_ms();
        outcome.prepared = std::move(prepared);
    });
    if (failure)
        std::tie(outcome.exit_code, outcome.error) = *failure;
    else
        outcome.exit_code = 0;
    return outcome;
}

void BatchEngine::publish(size_t index, ReadOutcome outcome) {
    {
        std::lock_guard lock(mutex_);
        phases_.read_s += outcome.read_ms / 1e3;
        phases_.output_s += outcome.output_ms / 1e3;
        read_.emplace(index, std::move(outcome));
        for (auto it = read_.begin(); it != read_.end() && it->first == next_published_; it = read_.erase(it)) {
            publish_one(it->first, it->second);
            ++next_published_;
        }
    }
    changed_.notify_all();
}

// Under the lock.
void BatchEngine::publish_one(size_t index, ReadOutcome& outcome) {
    if (outcome.prepared && !stopping()) {
        ready_.push_back({index, std::move(*outcome.prepared), std::move(outcome.rerun_reason)});
        return;
    }
    ++left_;
    if (outcome.prepared || outcome.abandoned) return;  // abandoned: its output's unnamed temporary file goes too
    if (outcome.skipped) {
        reporter_.skipped(line_of(index), *outcome.skipped);
        settle_locked(index, 0);
    } else {
        report_failure(index, outcome.exit_code, outcome.error);
        settle_locked(index, outcome.exit_code);
    }
}

// The first ready job this worker may run, or nothing once none will come (or, without `wait`, when none is
// ready now).
std::optional<ReadyJob> BatchEngine::take_job(size_t worker, bool wait) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping()) return std::nullopt;
        for (auto it = ready_.begin(); it != ready_.end(); ++it) {
            if (!may_take(worker, *it)) continue;
            ReadyJob job = std::move(*it);
            ready_.erase(it);
            ++left_;
            changed_.notify_all();
            return job;
        }
        if (reader_done_ || !wait) return std::nullopt;
        changed_.wait_for(lock, std::chrono::milliseconds(50));  // also wakes to see a signal
    }
}

// A job's own --device pins it; a GPU job taking an earlier job's output from device memory runs on the worker
// that computed it (where the output is kept), when that worker may run it. Mutex held.
bool BatchEngine::may_take(size_t worker, const ReadyJob& ready) const {
    const CommonOptions& o = ready.job.options;
    if (o.cpu) return true;
    if (!runs_on(backends_[worker]->device(), o.device)) return false;
    for (size_t p : jobs_[ready.index].producers) {
        const std::optional<size_t> home = computed_on_[p];
        if (!jobs_[p].output_key.empty() && home && runs_on(backends_[*home]->device(), o.device))
            return *home == worker;
    }
    return true;
}

// Tells the worker's GPU backend which of the job's inputs may be kept outputs, and whether to keep its output.
// Set for every job of a GPU batch (none for a CPU job, whose --check runs the GPU), so that no key is left over
// from a job that failed before its run.
void BatchEngine::set_resident_keys(size_t worker, const ReadyJob& ready) {
    if (options_.cpu) return;
    const bool gpu_job = !ready.job.options.cpu;
    ResidentTensors* resident = nullptr;
    try {
        resident = backends_[worker]->get(false, gpu_api_of(ready.job.options.api)).resident_tensors();
    } catch (const std::exception&) {
        if (gpu_job) throw;  // the job's own failure; a CPU job needs no device
        return;
    }
    if (!resident) return;
    const BatchJob& job = jobs_[ready.index];
    if (gpu_job)
        resident->set_next_run_keys(job.input_keys, job.output_key);
    else
        resident->set_next_run_keys({}, {});
}

void BatchEngine::count_phases(size_t worker, const ExecutionStats& stats) {
    WorkerShare& share = shares_[worker];
    share.upload_s += stats.upload_ms / 1e3;
    for (double ms : stats.kernel_ms) share.kernel_s += ms / 1e3;
    share.download_s += stats.download_ms / 1e3;
}

void BatchEngine::record_computed(size_t worker, const ReadyJob& ready) {
    if (ready.job.options.cpu || options_.cpu) return;
    std::lock_guard lock(mutex_);
    computed_on_[ready.index] = worker;
}

// Jobs the GPU can overlap are started before the previous one is finished: while the device runs job k, the
// worker copies job k+1's inputs in, and then job k's output out. A started job is finished as soon as no next
// job is ready, so a slow reader never holds a computed result back; other jobs run one at a time.
void BatchEngine::work(size_t worker) {
    std::optional<ReadyJob> started;
    for (;;) {
        Stopwatch waiting;
        std::optional<ReadyJob> ready = take_job(worker, /*wait=*/!started);
        shares_[worker].waiting_s += waiting.elapsed_ms() / 1e3;
        if (!ready) {
            if (!started) return;
            finish_started(worker, *started);
            started.reset();
            continue;
        }
        Stopwatch busy;
        bool overlapped = false;
        const bool ok = guarded(ready->index, [&] {
            set_resident_keys(worker, *ready);
            overlapped = start_job(ready->job, *backends_[worker]);
        });
        shares_[worker].busy_s += busy.elapsed_ms() / 1e3;
        if (!ok) {
            ++shares_[worker].jobs;
            continue;
        }
        if (started) finish_started(worker, *started);
        started.reset();
        if (overlapped)
            started = std::move(ready);
        else
            compute(worker, *ready);
    }
}

void BatchEngine::finish_started(size_t worker, ReadyJob& started) {
    Stopwatch busy;
    std::optional<ComputedJob> computed;
    guarded(started.index, [&] { computed = finish_job(started.job, *backends_[worker]); });
    shares_[worker].busy_s += busy.elapsed_ms() / 1e3;
    ++shares_[worker].jobs;
    if (!computed) return;
    count_phases(worker, computed->report.stats);
    record_computed(worker, started);
    hand_over(started, std::move(*computed));
}

void BatchEngine::compute(size_t worker, ReadyJob& ready) {
    Stopwatch busy;
    std::optional<ComputedJob> computed;
    guarded(ready.index, [&] { computed = compute_job(ready.job, *backends_[worker]); });
    shares_[worker].busy_s += busy.elapsed_ms() / 1e3;
    ++shares_[worker].jobs;
    if (!computed) return;
    count_phases(worker, computed->report.stats);
    record_computed(worker, ready);
    if (auto* resident = ready.job.options.cpu
                             ? nullptr
                             : backends_[worker]->get(false, gpu_api_of(ready.job.options.api)).resident_tensors())
        if (const size_t n = resident->resident_inputs_of_last_run())
            spdlog::debug("{}: {} input(s) taken from device memory, not uploaded", ready.job.command.output.path, n);
    hand_over(ready, std::move(*computed));
}

void BatchEngine::hand_over(ReadyJob& ready, ComputedJob computed) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return finished_.size() < size_t(options_.max_in_flight); });
    finished_.push_back({ready.index, std::move(computed), ready.job.file_bytes, std::move(ready.job.tensors),
                         std::move(ready.rerun_reason)});
    changed_.notify_all();
}

std::optional<FinishedJob> BatchEngine::take_result() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !finished_.empty() || workers_done_; });
    if (finished_.empty()) return std::nullopt;
    FinishedJob job = std::move(finished_.front());
    finished_.pop_front();
    changed_.notify_all();
    return job;
}

void BatchEngine::write_results() {
    while (std::optional<FinishedJob> finished = take_result()) {
        ComputedJob& job = finished->job;
        if (job.exit_code != 0) {
            fail(finished->index, job.exit_code, job.difference, &job.report);
            continue;
        }
        Stopwatch save;
        const bool saved = guarded(finished->index, [&] { commit_job(job); });
        phases_.save_s += save.elapsed_ms() / 1e3;
        if (saved) {
            reporter_.succeeded(line_of(finished->index), job.report, finished->file_bytes, finished->rerun_reason);
            settle(finished->index, 0);
        }
    }
}

}  // namespace

int run_batch(const BatchOptions& options) {
    install_stop_handlers();  // first: a signal while the manifest is read is one the summary reports
    if (options.max_in_flight < 1 || options.max_in_flight > 1024)
        throw UsageError(fmt::format("--max-in-flight {}: must be between 1 and 1024", options.max_in_flight));
    const Shard shard = parse_shard(options.shard);
    const std::vector<std::optional<int>> devices = worker_devices(options);
    // The devices are made while the manifest is read and parsed (and the first inputs read).
    std::vector<std::unique_ptr<WorkerBackends>> backends;
    for (const std::optional<int>& device : devices) {
        backends.push_back(std::make_unique<WorkerBackends>(device, gpu_api_of(options.api)));
        if (!options.cpu) backends.back()->start_gpu();
    }
    require_devices_present(devices, options);
    const std::vector<ManifestLine> lines = load_manifest(options.manifest);
    const std::string name = options.manifest == "-" ? "<stdin>" : options.manifest;
    std::vector<BatchJob> jobs = parse_jobs(lines, options, shard, name);
    spdlog::debug("batch: {} of {} jobs (shard {}/{}), {} worker(s)", jobs.size(), lines.size(), shard.index,
                  shard.count, devices.size());

    BatchReporter reporter(options, name, jobs.size());
    BatchEngine engine(options, std::move(jobs), std::move(backends), reporter);
    engine.run();
    log_phases(engine.shares(), engine.phases());
    const int signal = stop_signal();
    reporter.finish(engine.shares(), engine.phases(), signal);
    return signal ? 128 + signal : reporter.exit_code();
}

}  // namespace dmlgrad::cli
