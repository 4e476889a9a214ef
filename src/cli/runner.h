#pragma once
// One operator job as a straight pass: headers -> plan -> load -> run (-> check) -> save -> report. A single
// command and every job of a batch go through these same steps.
#include <array>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/operator_command.h"
#include "cli/options.h"
#include "cli/report.h"
#include "core/stopwatch.h"
#include "io/npy.h"
#include "ops/backend.h"

namespace dmlgrad::cli {

// The backends one worker runs its jobs on, made on first use (or from start_gpu()) and kept: a GPU backend is its
// device, pipelines and buffers, paid for once per worker rather than once per job.
class WorkerBackends {
public:
    // `api`: the GPU API of start_gpu(); a job may name the other one (get()), made then.
    explicit WorkerBackends(std::optional<int> device, GpuApi api = GpuApi::vulkan) : device_(device), api_(api) {}
    // Leaves the GPU backend to the process's exit: destroying a device costs 40-60 ms on an H100 (a tenth of a
    // 200-job batch), and the driver frees everything when the process ends, which follows right after.
    ~WorkerBackends();
    WorkerBackends(const WorkerBackends&) = delete;
    WorkerBackends& operator=(const WorkerBackends&) = delete;
    // Starts making the GPU backend on a thread of its own, so that the device's creation (the larger part of a
    // batch of small jobs) overlaps whatever comes before the first GPU job; with `reserve_for`, that thread then
    // allocates the plan's buffers too (ops/backend.h's ReservedRuns). A failure is thrown by get().
    void start_gpu(std::optional<Plan> reserve_for = std::nullopt);
    Backend& get(bool cpu, GpuApi api = GpuApi::vulkan);
    // Hands the GPU backend over (waiting for it if it is being made; null if there is none), for a caller that
    // destroys it itself rather than leave it to the process's exit.
    std::unique_ptr<Backend> take_gpu();  // of start_gpu()'s API
    std::optional<int> device() const { return device_; }

private:
    std::unique_ptr<Backend>& gpu_slot(GpuApi api) { return gpus_[size_t(api)]; }

    std::optional<int> device_;
    GpuApi api_;
    std::unique_ptr<Backend> cpu_;
    std::array<std::unique_ptr<Backend>, 2> gpus_;  // per GpuApi
    std::future<std::unique_ptr<Backend>> gpu_pending_;
};

std::unique_ptr<Backend> make_backend(bool cpu, std::optional<int> device, GpuApi api = GpuApi::vulkan);

// A job whose inputs are read and validated.
struct PreparedJob {
    OperatorCommand command;
    CommonOptions options;
    Plan plan;
    Tolerance tolerance;  // of --check and --compare
    std::vector<Tensor> tensors;
    // --compare's reference, read with the inputs: a later batch job may replace the file once they are read.
    std::optional<Tensor> reference;
    // The output's temporary file, made by create_output (its pages faulted in off the computing thread's path);
    // compute_job makes it when nobody did.
    std::unique_ptr<NpyOutput> output;
    Stopwatch started;  // the job's total_ms counts from here
    double load_ms = 0;
    uint64_t file_bytes = 0;  // inputs read + output to write, for throughput
};

// A job computed into its output's temporary file, not yet in place. exit_code 3: --check found a difference
// (described in `difference`), and the output must not be committed.
struct ComputedJob {
    std::unique_ptr<NpyOutput> output;
    RunReport report;
    int exit_code = 0;
    std::string difference;
    Stopwatch started;
};

// Reads the headers, validates and plans (no payload read yet). Throws UsageError / RuntimeFailure.
PreparedJob validate_job(OperatorCommand command, const CommonOptions& options);
void load_inputs(PreparedJob& job);
void create_output(PreparedJob& job);
// The three above.
PreparedJob prepare_job(OperatorCommand command, const CommonOptions& options);
// Takes the job's output (or makes it) into the ComputedJob.
ComputedJob compute_job(PreparedJob& job, WorkerBackends& backends);
// Overlapped jobs, as a batch worker runs them on its GPU (ops/backend.h's OverlappedRuns): start_job submits the job
// and returns true, or returns false when the job cannot be overlapped (the CPU, --check, --compare, --repeat,
// large tensors; compute_job runs it). finish_job completes the oldest started job: jobs finish in the order
// they started, at most OverlappedRuns::kMaxStarted at a time, and compute_job is called only with none started.
bool start_job(PreparedJob& job, WorkerBackends& backends);
ComputedJob finish_job(PreparedJob& job, WorkerBackends& backends);
// Moves the output into place (records save_ms and total_ms in the report).
void commit_job(ComputedJob& job);

// The single command: returns the exit code (0, or 3 when --check finds a difference). Throws UsageError /
// RuntimeFailure.
int run_operator(OperatorCommand command, const CommonOptions& options);

void configure_logging(Verbosity verbosity);

}  // namespace dmlgrad::cli
