#include "cli/batch_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/error_line.h"

namespace dmlgrad::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

BatchReporter::BatchReporter(const BatchOptions& options, std::string manifest_name, size_t total_jobs)
    : options_(options),
      manifest_(std::move(manifest_name)),
      total_(total_jobs),
      progress_(isatty(STDERR_FILENO) && !options.quiet && !options.verbose) {}

void BatchReporter::succeeded(int line, const RunReport& report, uint64_t file_bytes) {
    std::lock_guard lock(mutex_);
    ++succeeded_;
    if (options_.json) fmt::print("{}\n", json_report(report, fmt::format(R"("line":{},"status":"ok",)", line)));
    if (options_.verbose)
        fmt::print(stderr, "dmlgrad: {} line {}: {} on {}{} in {:.2f} ms, wrote {}\n", manifest_, line, report.op,
                   report.backend, report.stats.kernel.empty() ? "" : " (" + report.stats.kernel + ")", report.total_ms,
                   report.output_path);
    job_done(file_bytes);
}

void BatchReporter::failed(int line, int exit_code, const std::string& message) {
    std::lock_guard lock(mutex_);
    ++failed_by_code_[exit_code];
    if (progress_) fmt::print(stderr, "\r\x1b[K");  // the error line replaces the progress line, which follows it
    print_error_line(fmt::format("{} line {}: {}", manifest_, line, message));
    if (options_.json)
        fmt::print(R"({{"line":{},"status":"failed","error":{},"exit_code":{}}})"
                   "\n",
                   line, json_string(message), exit_code);
    job_done(0);
}

void BatchReporter::skipped(int line, const std::string& output) {
    std::lock_guard lock(mutex_);
    ++skipped_;
    if (options_.json)
        fmt::print(R"({{"line":{},"status":"skipped","output":{}}})"
                   "\n",
                   line, json_string(output));
    if (options_.verbose) fmt::print(stderr, "dmlgrad: {} line {}: skipped, {} exists\n", manifest_, line, output);
    job_done(0);
}

void BatchReporter::job_done(uint64_t bytes) {
    ++done_;
    bytes_ += bytes;
    std::fflush(stdout);  // a pipeline reading the JSON lines sees each job as it finishes
    if (progress_ && (done_ == total_ || seconds_since(last_draw_) > 0.1)) draw_progress(false);
}

void BatchReporter::draw_progress(bool final) {
    last_draw_ = std::chrono::steady_clock::now();
    const double elapsed = seconds_since(start_);
    const double rate = elapsed > 0 ? double(done_) / elapsed : 0;
    size_t failed = 0;
    for (const auto& [code, n] : failed_by_code_) failed += n;
    const std::string eta =
        rate > 0 && done_ < total_ ? fmt::format(", ETA {:.1f} s", double(total_ - done_) / rate) : "";
    fmt::print(stderr, "\r\x1b[K{}/{} jobs, {} failed, {:.1f} jobs/s, {:.2f} GB/s, {:.1f} s{}{}", done_, total_, failed,
               rate, elapsed > 0 ? double(bytes_) / elapsed / 1e9 : 0.0, elapsed, eta, final ? "\n" : "");
    std::fflush(stderr);
}

int BatchReporter::exit_code() const {
    std::lock_guard lock(mutex_);
    for (int code : {1, 3, 2})
        if (failed_by_code_.count(code)) return code;
    return failed_by_code_.empty() ? 0 : failed_by_code_.begin()->first;
}

void BatchReporter::finish(const std::vector<WorkerShare>& workers, int signal) {
    const int status = signal ? 128 + signal : exit_code();
    std::lock_guard lock(mutex_);
    if (progress_) draw_progress(true);
    size_t failed = 0;
    std::string by_code, by_code_json;
    for (const auto& [code, n] : failed_by_code_) {
        failed += n;
        by_code += fmt::format("{}{} with exit {}", by_code.empty() ? "" : ", ", n, code);
        by_code_json += fmt::format(R"({}"{}":{})", by_code_json.empty() ? "" : ",", code, n);
    }
    const double elapsed = seconds_since(start_);
    if (options_.json) {
        std::string shares;
        for (const WorkerShare& w : workers)
            shares += fmt::format(R"({}{{"device":{},"jobs":{},"busy_s":{:.3f}}})", shares.empty() ? "" : ",",
                                  json_string(w.device), w.jobs, w.busy_s);
        fmt::print(R"({{"summary":{{"jobs":{},"succeeded":{},"failed":{},"failed_by_exit_code":{{{}}},)"
                   R"("skipped":{},"not_run":{},"elapsed_s":{:.3f},"interrupted":{},"exit_code":{},"workers":[{}]}}}})"
                   "\n",
                   total_, succeeded_, failed, by_code_json, skipped_, total_ - done_, elapsed, signal != 0, status,
                   shares);
    } else if (!options_.quiet) {
        fmt::print("batch: {} jobs: {} succeeded, {} failed{}, {} skipped{} in {:.2f} s\n", total_, succeeded_, failed,
                   failed ? " (" + by_code + ")" : "", skipped_,
                   done_ < total_ ? fmt::format(", {} not run", total_ - done_) : "", elapsed);
    }
    if (signal)
        fmt::print(stderr, "dmlgrad: interrupted by signal {}: {} of {} jobs not run\n", signal, total_ - done_,
                   total_);
    std::fflush(stdout);
}

}  // namespace dmlgrad::cli
