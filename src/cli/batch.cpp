#include "cli/batch.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "cli/batch_report.h"
#include "cli/command_line.h"
#include "cli/list_parsing.h"
#include "cli/manifest.h"
#include "cli/runner.h"
#include "core/error.h"
#include "core/fatal_signals.h"
#include "core/stopwatch.h"
#include "gpu/gpu.h"
#include "io/standard_streams.h"

namespace dmlgrad::cli {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int signal) {
    g_stop_signal.store(signal);
    std::signal(signal, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// SIGINT and SIGTERM stop the batch taking new jobs; the jobs in flight finish. Installed over the single
// command's handlers (core/fatal_signals, which end the process at once), which are installed first so that the
// first output file does not install them again over these; SIGHUP and SIGBUS keep theirs.
void install_stop_handlers() {
    install_fatal_signal_handlers();
    g_stop_signal.store(0);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

struct Shard {
    uint64_t index = 0, count = 1;
};

Shard parse_shard(const std::string& text) {
    if (text.empty()) return {};
    const size_t slash = text.find('/');
    const auto error = [&] { return UsageError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text)); };
    if (slash == std::string::npos) throw error();
    const std::vector<int64_t> index = parse_int_list("--shard", text.substr(0, slash));
    const std::vector<int64_t> count = parse_int_list("--shard", text.substr(slash + 1));
    if (index.size() != 1 || count.size() != 1 || index[0] < 0 || count[0] < 1 || index[0] >= count[0]) throw error();
    return {uint64_t(index[0]), uint64_t(count[0])};
}

// One device index per worker (std::nullopt: the preferred device).
std::vector<std::optional<int>> worker_devices(const BatchOptions& options) {
    if (options.cpu || options.devices.empty()) return {std::nullopt};
    std::vector<std::optional<int>> devices;
    if (options.devices == "all") {
        for (const GpuDeviceInfo& d : list_gpu_devices(gpu_api_of(options.api))) devices.emplace_back(d.index);
        return devices;
    }
    for (int64_t index : parse_int_list("--device", options.devices)) {
        if (index < 0 || index > 1024) throw UsageError(fmt::format("--device {}: not a device index", index));
        devices.emplace_back(int(index));
    }
    return devices;
}

// A manifest line parsed into its request, or the usage error that stops it.
struct BatchJob {
    int line = 0;
    std::optional<OperatorRequest> request;
    std::string error;
};

// What a single command can do but a job of many cannot: share the standard streams, or explain instead of run.
void require_batch_job(const OperatorRequest& request) {
    if (request.common.explain) throw UsageError("--explain is not a job (run it as a single command)");
    const OperatorCommand& c = request.command;
    bool uses_stream = is_standard_stream(c.output.path);
    for (const Operand& input : c.inputs) uses_stream = uses_stream || is_standard_stream(input.path);
    if (uses_stream) throw UsageError("- (standard input or output) cannot be a batch job's file");
}

std::vector<BatchJob> parse_jobs(const std::vector<ManifestLine>& lines, const BatchOptions& options,
                                 const Shard& shard) {
    std::vector<BatchJob> jobs;
    for (size_t index = 0; index < lines.size(); ++index) {
        if (index % shard.count != shard.index) continue;
        BatchJob job{lines[index].number, std::nullopt, {}};
        try {
            OperatorRequest request = parse_operator_words(lines[index].words);
            require_batch_job(request);
            request.common.cpu = request.common.cpu || options.cpu;
            if (request.common.api.empty()) request.common.api = options.api;
            request.common.verbosity = options.verbose ? Verbosity::verbose : Verbosity::quiet;
            job.request = std::move(request);
        } catch (const UsageError& e) {
            job.error = e.what();
        }
        jobs.push_back(std::move(job));
    }
    return jobs;
}

struct ReadyJob {
    int line = 0;
    PreparedJob job;
};

// What reading a job came to, published in manifest order: a job ready to run, a skipped job, or a failure.
struct ReadOutcome {
    int line = 0;
    std::optional<PreparedJob> prepared;
    std::optional<std::string> skipped;  // the existing output
    int exit_code = 0;
    std::string error;
};

struct FinishedJob {
    int line = 0;
    ComputedJob job;
    uint64_t file_bytes = 0;
    std::vector<Tensor> inputs;  // released by the writer: unmapping them is kept off the worker's path
};

// Reader threads: reading a small job is mostly taking the write faults of its output file's pages (about 1 ms
// for 1 MiB on the H100 machine, twice a GPU worker's time per job), which several threads take in parallel.
constexpr int kReaders = 3;

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
          shares_(backends_.size()) {
        for (size_t w = 0; w < backends_.size(); ++w) {
            const std::optional<int> device = backends_[w]->device();
            shares_[w].device = options_.cpu ? "cpu" : device ? std::to_string(*device) : "default";
        }
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

private:
    bool stopping() const { return stop_.load() || g_stop_signal.load() != 0; }

    void fail(int line, int exit_code, const std::string& message) {
        reporter_.failed(line, exit_code, message);
        if (options_.fail_fast) stop_ = true;
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
    bool guarded(int line, Step&& step) {
        const auto failure = failure_of(std::forward<Step>(step));
        if (failure) fail(line, failure->first, failure->second);
        return !failure;
    }

    bool has_worker_on(std::optional<int> device) const {
        if (!device || options_.cpu) return true;
        return std::any_of(backends_.begin(), backends_.end(), [&](const auto& b) { return b->device() == device; });
    }

    void read_jobs();
    std::optional<size_t> next_job_to_read();
    ReadOutcome read_job(BatchJob& job);
    void publish(size_t index, ReadOutcome outcome);
    void publish_one(ReadOutcome& outcome);
    std::optional<ReadyJob> take_job(std::optional<int> worker_device, bool wait);
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
    std::atomic<bool> stop_{false};
};

// Each reader takes the next job while fewer than --max-in-flight are read ahead; outcomes are published in
// manifest order, whichever reader finishes first.
void BatchEngine::read_jobs() {
    while (const std::optional<size_t> index = next_job_to_read()) publish(*index, read_job(jobs_[*index]));
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

ReadOutcome BatchEngine::read_job(BatchJob& job) {
    ReadOutcome outcome{job.line, std::nullopt, std::nullopt, 2, job.error};
    if (!job.request) return outcome;
    OperatorRequest& request = *job.request;
    const std::string& output = request.command.output.path;
    std::error_code ec;
    if (options_.skip_existing && std::filesystem::exists(output, ec)) {
        outcome.skipped = output;
        return outcome;
    }
    if (!request.common.cpu && !has_worker_on(request.common.device)) {
        outcome.error = fmt::format("--device {}: the batch has no worker on that device (name it in batch --device)",
                                    *request.common.device);
        return outcome;
    }
    const auto failure =
        failure_of([&] { outcome.prepared = prepare_job(std::move(request.command), request.common); });
    if (failure) std::tie(outcome.exit_code, outcome.error) = *failure;
    return outcome;
}

void BatchEngine::publish(size_t index, ReadOutcome outcome) {
    {
        std::lock_guard lock(mutex_);
        read_.emplace(index, std::move(outcome));
        for (auto it = read_.begin(); it != read_.end() && it->first == next_published_; it = read_.erase(it)) {
            publish_one(it->second);
            ++next_published_;
        }
    }
    changed_.notify_all();
}

// Under the lock.
void BatchEngine::publish_one(ReadOutcome& outcome) {
    if (outcome.prepared && !stopping()) {
        ready_.push_back({outcome.line, std::move(*outcome.prepared)});
        return;
    }
    ++left_;
    if (outcome.prepared) return;  // abandoned: its output's unnamed temporary file goes with it
    if (outcome.skipped)
        reporter_.skipped(outcome.line, *outcome.skipped);
    else
        fail(outcome.line, outcome.exit_code, outcome.error);
}

// The first ready job this worker may run (a job's own --device pins it), or nothing once none will come (or,
// without `wait`, when none is ready now).
std::optional<ReadyJob> BatchEngine::take_job(std::optional<int> worker_device, bool wait) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping()) return std::nullopt;
        for (auto it = ready_.begin(); it != ready_.end(); ++it) {
            const CommonOptions& o = it->job.options;
            if (o.cpu || !o.device || options_.cpu || o.device == worker_device) {
                ReadyJob job = std::move(*it);
                ready_.erase(it);
                ++left_;
                changed_.notify_all();
                return job;
            }
        }
        if (reader_done_ || !wait) return std::nullopt;
        changed_.wait_for(lock, std::chrono::milliseconds(50));  // also wakes to see a signal
    }
}

// Jobs the GPU can overlap are started before the previous one is finished: while the device runs job k, the
// worker copies job k+1's inputs in, and then job k's output out. A started job is finished as soon as no next
// job is ready, so a slow reader never holds a computed result back; other jobs run one at a time.
void BatchEngine::work(size_t worker) {
    std::optional<ReadyJob> started;
    for (;;) {
        std::optional<ReadyJob> ready = take_job(backends_[worker]->device(), /*wait=*/!started);
        if (!ready) {
            if (!started) return;
            finish_started(worker, *started);
            started.reset();
            continue;
        }
        Stopwatch busy;
        bool overlapped = false;
        const bool ok = guarded(ready->line, [&] { overlapped = start_job(ready->job, *backends_[worker]); });
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
    guarded(started.line, [&] { computed = finish_job(started.job, *backends_[worker]); });
    shares_[worker].busy_s += busy.elapsed_ms() / 1e3;
    ++shares_[worker].jobs;
    if (computed) hand_over(started, std::move(*computed));
}

void BatchEngine::compute(size_t worker, ReadyJob& ready) {
    Stopwatch busy;
    std::optional<ComputedJob> computed;
    guarded(ready.line, [&] { computed = compute_job(ready.job, *backends_[worker]); });
    shares_[worker].busy_s += busy.elapsed_ms() / 1e3;
    ++shares_[worker].jobs;
    if (computed) hand_over(ready, std::move(*computed));
}

void BatchEngine::hand_over(ReadyJob& ready, ComputedJob computed) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return finished_.size() < size_t(options_.max_in_flight); });
    finished_.push_back({ready.line, std::move(computed), ready.job.file_bytes, std::move(ready.job.tensors)});
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
            fail(finished->line, job.exit_code, job.difference);
            continue;
        }
        if (guarded(finished->line, [&] { commit_job(job); }))
            reporter_.succeeded(finished->line, job.report, finished->file_bytes);
    }
}

std::vector<ManifestLine> load_manifest(const std::string& path) {
    if (path == "-") return read_manifest(std::cin, "<stdin>");
    std::ifstream file(path);
    if (!file) throw UsageError(fmt::format("{}: cannot open the manifest", path));
    return read_manifest(file, path);
}

}  // namespace

int run_batch(const BatchOptions& options) {
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
    const std::vector<ManifestLine> lines = load_manifest(options.manifest);
    const std::string name = options.manifest == "-" ? "<stdin>" : options.manifest;
    std::vector<BatchJob> jobs = parse_jobs(lines, options, shard);
    spdlog::debug("batch: {} of {} jobs (shard {}/{}), {} worker(s)", jobs.size(), lines.size(), shard.index,
                  shard.count, devices.size());

    BatchReporter reporter(options, name, jobs.size());
    install_stop_handlers();
    BatchEngine engine(options, std::move(jobs), std::move(backends), reporter);
    engine.run();
    const int signal = g_stop_signal.load();
    reporter.finish(engine.shares(), signal);
    return signal ? 128 + signal : reporter.exit_code();
}

}  // namespace dmlgrad::cli
