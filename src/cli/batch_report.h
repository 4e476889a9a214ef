#pragma once
// What a batch tells its user while and after it runs: one stderr line per failed job, per-job JSON objects,
// a progress line on a terminal, and the summary. Called from several threads.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/batch.h"
#include "cli/report.h"

namespace dmlgrad::cli {

// One worker's share of the batch, and where its time went: computing its jobs (busy, of which the inputs' upload,
// the kernels and the output's download or hand-over to a writer: ExecutionStats), or waiting for a job to be read.
struct WorkerShare {
    std::string device;
    uint64_t jobs = 0;
    double busy_s = 0;
    double upload_s = 0, kernel_s = 0, download_s = 0;
    double waiting_s = 0;
};

// The time of the batch's other threads, summed over them: the readers' reading of inputs and making of outputs,
// and the saving (moving outputs into place); the readers' count.
struct BatchPhases {
    size_t readers = 0;
    double read_s = 0, output_s = 0;
    double save_s = 0;
};

class BatchReporter {
public:
    BatchReporter(const BatchOptions& options, std::string manifest_name, size_t total_jobs);

    // `rerun_reason`: why --skip-existing did not take the existing output as done ("" when it did not apply).
    void succeeded(int line, const RunReport& report, uint64_t file_bytes, const std::string& rerun_reason = {});
    // `report`: a job that ran and whose comparison failed (its JSON line then carries the report).
    void failed(int line, int exit_code, const std::string& message, const RunReport* report = nullptr);
    void skipped(int line, const std::string& output);
    // Prints the summary (and ends the progress line). `signal` is non-zero when the batch was interrupted.
    void finish(const std::vector<WorkerShare>& workers, const BatchPhases& phases, int signal);
    // 0, or 1 / 3 / 2 by the failures seen, 1 when standard output could not be written (the batch's exit status
    // when not interrupted).
    int exit_code() const;
    // Whether a write to standard output failed (a closed pipe): the batch stops taking jobs.
    bool output_closed() const { return output_closed_.load(); }

private:
    void job_done(uint64_t bytes);                   // counts a finished job and redraws the progress line; mutex held
    void count_comparison(const RunReport& report);  // mutex held
    void draw_progress(bool final);

    const BatchOptions options_;
    const std::string manifest_;
    const size_t total_;
    const bool progress_;  // a progress line on stderr (a terminal, and neither -q nor -v)
    mutable std::mutex mutex_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_draw_{};
    size_t done_ = 0, succeeded_ = 0, skipped_ = 0;
    // Jobs with --check, --compare or --deterministic: passed (mistrusted ones included), mistrusted, failed.
    size_t compared_passed_ = 0, compared_mistrusted_ = 0, compared_failed_ = 0;
    std::map<int, size_t> failed_by_code_;
    uint64_t bytes_ = 0;
    std::atomic<bool> output_closed_{false};
};

}  // namespace dmlgrad::cli
