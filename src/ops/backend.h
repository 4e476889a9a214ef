#pragma once
// The small interface every backend (CPU reference, Vulkan, Direct3D 12) implements. It lives with the plans it
// runs: core knows nothing of operators, and the backends depend on ops, not the other way round.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/plan.h"

namespace dmlgrad {

struct RunOptions {
    int repeat = 1;  // timed executions after the warm-up
};

// Times in milliseconds. kernel_ms holds one entry per timed execution.
struct ExecutionStats {
    double setup_ms = 0;     // device and pipeline set-up
    double upload_ms = 0;    // host to device
    double download_ms = 0;  // device to host
    std::vector<double> kernel_ms;
    std::string kernel;  // the compiled kernel that ran (the GPU's, e.g. "maxpool_grad_fast_k3s2_f32"); "" on the CPU
};

class ReservedRuns;
class OverlappedRuns;
class ResidentTensors;

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string kind() const = 0;         // "cpu" or "gpu"
    virtual std::string device_name() const = 0;  // what the report names

    // The capabilities a backend may add (the GPU's: below), or nullptr.
    virtual ReservedRuns* reserved_runs() { return nullptr; }
    virtual OverlappedRuns* overlapped_runs() { return nullptr; }
    virtual ResidentTensors* resident_tensors() { return nullptr; }

    // Runs the plan once (or options.repeat times, timed). `inputs` as plan_input_infos(plan) lists them; `output`
    // allocated by the caller with plan_output_info(plan); every element of it is written. Checks the tensors
    // against the plan first, for every backend alike (std::invalid_argument: a caller's bug, not the user's).
    ExecutionStats run(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                       const RunOptions& options);

protected:
    // run() after the checks.
    virtual ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                                   const RunOptions& options) = 0;
};

// Memory for a run allocated before its inputs are ready. The single command calls reserve() on the thread that
// made the device, while its main thread reads the inputs and makes the output file: on an H100, 1 GiB of
// device memory took ~20 ms to allocate and 64 MiB of pinned staging memory ~25 ms, time that otherwise comes
// after both threads are done. The GPU backend implements it beside Backend.
class ReservedRuns {
public:
    virtual ~ReservedRuns() = default;
    // Allocates the device buffers and staging memory that Backend::run() of `plan` will use, so that run()
    // finds them made. Throws what run() would throw for them (RuntimeFailure: out of memory, too large).
    virtual void reserve(const Plan& plan) = 0;
};

// Runs overlapped on one device, as a batch worker needs them: start() copies a run's inputs and submits its work
// without waiting; finish() waits for the oldest started run and copies its output out. Starting run k+1 before
// finishing run k hides the device's latency (and run k's work) behind the host's copies of run k+1. The GPU
// backend implements it (Backend::overlapped_runs); Backend::run() is only called with nothing started.
class OverlappedRuns {
public:
    // Runs that may be started and not yet finished.
    static constexpr size_t kMaxStarted = 2;

    virtual ~OverlappedRuns() = default;
    // Whether this run can be started (one timed execution, tensors of a size the overlap is for); if not, the
    // caller finishes what it started and uses Backend::run().
    virtual bool can_start(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output,
                           const RunOptions& options) const = 0;
    // The inputs may be released once it returns; `output` must live until the run's finish().
    virtual void start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) = 0;
    // The oldest started run's statistics once its output is filled (setup_ms: the device's creation, for a
    // first run, and the run's own set-up; upload_ms: the inputs' copy in start()).
    virtual ExecutionStats finish() = 0;
};

// Outputs kept in device memory for a later run on the same backend that reads them: a chain of jobs (a batch job
// reading an earlier job's output) then moves each intermediate over the bus once, downloaded for its file and not
// uploaded again. A key names a file (the batch's file identity); the caller guarantees that a kept output and the
// file of its key hold the same bytes. The GPU backend implements it (Backend::resident_tensors); a run whose keys
// are set goes through Backend::run(), never OverlappedRuns.
class ResidentTensors {
public:
    // Outputs kept per backend at most (the oldest goes first): the memory bound of a batch's worker grows by this.
    static constexpr size_t kMaxKept = 2;

    virtual ~ResidentTensors() = default;
    // For the next Backend::run() only: input i is taken from the kept output `input_keys[i]` when there is one of
    // its size ("" or none: uploaded), and the output is kept under `output_key` ("": not kept).
    virtual void set_next_run_keys(std::vector<std::string> input_keys, std::string output_key) = 0;
    // How many inputs the last run took from device memory.
    virtual size_t resident_inputs_of_last_run() const = 0;
};

// The check run() makes: the dtype and element count of each input and of the output. Shapes may differ by
// axes of size 1 (a slice's integer index drops one), which changes no element's place in memory.
void require_tensors_match_plan(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output);

}  // namespace dmlgrad
