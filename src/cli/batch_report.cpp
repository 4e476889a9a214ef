#include "cli/batch_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/error_line.h"

namespace dmlgrad::cli {
namespace {

// fmt::print, without its exception when the write fails: a closed standard output is found by ferror() after
// the flush (job_done), and stops the batch.
template <class... Args>
void print_to(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    std::fwrite(text.data(), 1, text.size(), stream);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

BatchReporter::BatchReporter(const BatchOptions& options, std::string manifest_name, size_t total_jobs)
    : options_(options),
      manifest_(std::move(manifest_name)),
      total_(total_jobs),
      progress_(isatty(STDERR_FILENO) && !options.quiet && !options.verbose) {}

void BatchReporter::count_comparison(const RunReport& report) {
    if (!report.check && !report.compare && !report.determinism) return;
    if (!report.passed()) {
        ++compared_failed_;
        return;
    }
    ++compared_passed_;
    compared_mistrusted_ += report.mistrusted();
}

void BatchReporter::succeeded(int line, const RunReport& report, uint64_t file_bytes, const std::string& rerun_reason) {
    std::lock_guard lock(mutex_);
    ++succeeded_;
    count_comparison(report);
    const std::string rerun_json =
        rerun_reason.empty() ? "" : fmt::format(R"("not_skipped":{},)", json_string(rerun_reason));
    if (options_.json)
        print_to(stdout, "{}\n", json_report(report, fmt::format(R"("line":{},"status":"ok",{})", line, rerun_json)));
    if (options_.verbose)
        print_to(stderr, "dmlgrad: {} line {}: {} on {}{} in {:.2f} ms, wrote {}{}\n", manifest_, line, report.op,
                 report.backend, report.stats.kernel.empty() ? "" : " (" + report.stats.kernel + ")", report.total_ms,
                 report.output_path, rerun_reason.empty() ? "" : " (not skipped: " + rerun_reason + ")");
    job_done(file_bytes);
}

void BatchReporter::failed(int line, int exit_code, const std::string& message, const RunReport* report) {
    std::lock_guard lock(mutex_);
    ++failed_by_code_[exit_code];
    if (report) count_comparison(*report);
    if (progress_) print_to(stderr, "\r\x1b[K");  // the error line replaces the progress line, which follows it
    print_error_line(fmt::format("{} line {}: {}", manifest_, line, message));
    const std::string fields =
        fmt::format(R"("line":{},"status":"failed","error":{},"exit_code":{})", line, json_string(message), exit_code);
    if (options_.json && report)
        print_to(stdout, "{}\n", json_report(*report, fields + ","));
    else if (options_.json)
        print_to(stdout, "{{{}}}\n", fields);
    job_done(0);
}

void BatchReporter::skipped(int line, const std::string& output) {
    std::lock_guard lock(mutex_);
    ++skipped_;
    if (options_.json)
        print_to(stdout,
                 R"({{"line":{},"status":"skipped","output":{}}})"
                 "\n",
                 line, json_string(output));
    if (options_.verbose) print_to(stderr, "dmlgrad: {} line {}: skipped, {} exists\n", manifest_, line, output);
    job_done(0);
}

void BatchReporter::job_done(uint64_t bytes) {
    ++done_;
    bytes_ += bytes;
    // A pipeline reading the JSON lines sees each job as it finishes. A closed pipe (EPIPE: SIGPIPE is ignored in
    // a batch) or a full disk stops the batch: what it reports is lost.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) output_closed_ = true;
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
    print_to(stderr, "\r\x1b[K{}/{} jobs, {} failed, {:.1f} jobs/s, {:.2f} GB/s, {:.1f} s{}{}", done_, total_, failed,
             rate, elapsed > 0 ? double(bytes_) / elapsed / 1e9 : 0.0, elapsed, eta, final ? "\n" : "");
    std::fflush(stderr);
}

int BatchReporter::exit_code() const {
    std::lock_guard lock(mutex_);
    if (output_closed_) return 1;
    for (int code : {1, 3, 2})
        if (failed_by_code_.count(code)) return code;
    return failed_by_code_.empty() ? 0 : failed_by_code_.begin()->first;
}

namespace {

std::string workers_json(const std::vector<WorkerShare>& workers) {
    std::string json;
    for (const WorkerShare& w : workers)
        json += fmt::format(
            R"({}{{"device":{},"jobs":{},"busy_s":{:.3f},"upload_s":{:.3f},"kernel_s":{:.3f},"download_s":{:.3f},)"
            R"("waiting_s":{:.3f}}})",
            json.empty() ? "" : ",", json_string(w.device), w.jobs, w.busy_s, w.upload_s, w.kernel_s, w.download_s,
            w.waiting_s);
    return json;
}

std::string phases_json(const BatchPhases& p) {
    return fmt::format(R"({{"readers":{},"read_s":{:.3f},"output_s":{:.3f},"save_s":{:.3f}}})", p.readers, p.read_s,
                       p.output_s, p.save_s);
}

}  // namespace

void BatchReporter::finish(const std::vector<WorkerShare>& workers, const BatchPhases& phases, int signal) {
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
        print_to(stdout,
                 R"({{"summary":{{"jobs":{},"succeeded":{},"failed":{},"failed_by_exit_code":{{{}}},)"
                 R"("skipped":{},"not_run":{},"elapsed_s":{:.3f},"interrupted":{},"exit_code":{},"workers":[{}],)"
                 R"("phases":{},"comparisons":{{"passed":{},"mistrusted":{},"failed":{}}}}}}})"
                 "\n",
                 total_, succeeded_, failed, by_code_json, skipped_, total_ - done_, elapsed, signal != 0, status,
                 workers_json(workers), phases_json(phases), compared_passed_, compared_mistrusted_, compared_failed_);
    } else if (!options_.quiet) {
        const bool compared = compared_passed_ + compared_failed_ > 0;
        print_to(stdout, "batch: {} jobs: {} succeeded, {} failed{}, {} skipped{}{} in {:.2f} s\n", total_, succeeded_,
                 failed, failed ? " (" + by_code + ")" : "", skipped_,
                 done_ < total_ ? fmt::format(", {} not run", total_ - done_) : "",
                 compared ? fmt::format("; comparisons: {} passed ({} mistrusted), {} failed", compared_passed_,
                                        compared_mistrusted_, compared_failed_)
                          : "",
                 elapsed);
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) output_closed_ = true;
    if (output_closed_)
        print_to(stderr, "dmlgrad: error: cannot write to standard output: the batch stopped, {} of {} jobs not run\n",
                 total_ - done_, total_);
    if (signal)
        print_to(stderr, "dmlgrad: interrupted by signal {}: {} of {} jobs not run\n", signal, total_ - done_, total_);
}

}  // namespace dmlgrad::cli
