#include "cli/runner.h"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iterator>

#include "cli/background_release.h"
#include "cli/determinism.h"
#include "cli/error_line.h"
#include "cli/explain.h"
#include "cli/list_parsing.h"
#include "cli/mistrust.h"
#include "cli/plan_parameters.h"
#include "cli/save_diff.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/printable.h"
#include "cpu/cpu_backend.h"
#include "gpu/gpu.h"
#include "io/standard_streams.h"
#include "test_hooks/test_hooks.h"

namespace dmlgrad::cli {
namespace {

namespace fs = std::filesystem;

// A missing output folder is the user's mistake: say so before any work, not after the computation.
void require_output_folder(const Operand& output) {
    if (is_standard_stream(output.path)) return;
    fs::path folder = fs::path(output.path).parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw UsageError(fmt::format("{}: folder '{}' does not exist", output.label(), folder.string()));
    if (fs::is_directory(output.path, ec))
        throw UsageError(fmt::format("{}: is a folder, expected a file name", output.label()));
}

// "--input-gradient" -> "input_gradient"
std::string json_name(const std::string& flag) {
    std::string name = flag.substr(flag.find_first_not_of('-'));
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

// Standard input can be read once, so at most one of the inputs and the --compare reference may name it.
void require_one_standard_input(const std::vector<Operand>& inputs, const std::string& reference) {
    const auto count = std::count_if(inputs.begin(), inputs.end(),
                                     [](const Operand& input) { return is_standard_stream(input.path); });
    if (count + is_standard_stream(reference) > 1)
        throw UsageError("only one input can be - (standard input), --compare's reference included");
}

std::vector<const Tensor*> input_pointers(const PreparedJob& job) {
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : job.tensors) inputs.push_back(&t);
    return inputs;
}

// --check and --compare compare bit for bit, or within the summing operators' tolerance; --rtol/--atol replace
// either part of that default, and either one given makes it the formula (core/tolerance.h).
Tolerance comparison_tolerance(const PreparedJob& job) {
    Tolerance tolerance = default_tolerance(job.plan);
    if (!job.options.rtol.empty()) tolerance.relative = parse_tolerance("--rtol", job.options.rtol);
    if (!job.options.atol.empty()) tolerance.absolute = parse_tolerance("--atol", job.options.atol);
    tolerance.bitwise = tolerance.bitwise && job.options.rtol.empty() && job.options.atol.empty();
    return tolerance;
}

std::string_view rule_broken(const Tolerance& tolerance, bool same_dtype) {
    if (!tolerance.exact()) return "beyond the tolerance";
    return same_dtype ? "bit for bit" : "in value";
}

// Compares `result` with `expected` and describes the first difference in one line.
ComparisonSummary compare_result(const Tensor& result, const Tensor& expected, const Tolerance& tolerance,
                                 std::string_view result_name, std::string_view expected_name) {
    ComparisonSummary summary;
    summary.tolerance = tolerance;
    summary.diff = compare_tensors(result, expected, tolerance);
    if (summary.passed()) return summary;
    const uint64_t first = summary.diff.first_beyond;
    summary.description = fmt::format(
        "{} of {} elements differ {}; first at index {} {}: {} {}, {} {}", summary.diff.beyond, result.elements(),
        rule_broken(tolerance, summary.diff.same_dtype), first, coordinate_string(result.shape(), first), result_name,
        element_string(result, first), expected_name, element_string(expected, first));
    return summary;
}

// What every comparison ends with: its warnings and, on a failure, the one line and --save-diff's maps.
void conclude(ComparisonSummary& summary, const PreparedJob& job, const Tensor& result, const Tensor& reference,
              std::string_view label) {
    summary.warnings = mistrust_reasons(summary.diff, reference, job.command.inputs, job.tensors, job.plan);
    if (summary.passed()) return;
    summary.description = fmt::format("{} failed: {}", label, summary.description);
    if (!job.options.save_diff.empty()) save_error_map(job.options.save_diff, label, result, reference, job.tolerance);
}

// --check: the other backend on the same inputs.
ComparisonSummary check_against_other(const PreparedJob& job, Backend& other, const Tensor& result) {
    Tensor expected(plan_output_info(job.plan));
    other.run(job.plan, input_pointers(job), expected, RunOptions{1});
    if (test_hooks::corrupt_check()) expected.buffer.data()[0] ^= std::byte{1};
    ComparisonSummary summary =
        compare_result(result, expected, job.tolerance, job.options.cpu ? "cpu" : "gpu", other.kind());
    summary.against = other.kind();
    summary.device = other.device_name();
    conclude(summary, job, result, expected, "check");
    return summary;
}

void require_reference_shape(const std::string& path, const Shape& reference, const Shape& result) {
    if (reference != result)
        throw UsageError(fmt::format("--compare {}: shape {} differs from the result's {}", printable_path(path),
                                     shape_string(reference), shape_string(result)));
}

// --compare: a reference file of the result's shape (any dtype: values are then compared).
ComparisonSummary compare_with_reference(const PreparedJob& job, const Tensor& result) {
    const std::string& path = job.options.compare;
    const Tensor& reference = *job.reference;
    require_reference_shape(path, reference.shape(), result.shape());  // it may have changed since validate_job
    ComparisonSummary summary = compare_result(result, reference, job.tolerance, "result", printable_path(path));
    summary.against = path;
    conclude(summary, job, result, reference, "compare");
    return summary;
}

RunReport describe(const PreparedJob& job, const Backend& backend, ExecutionStats stats) {
    RunReport report;
    report.op = job.command.name;
    report.backend = backend.kind();
    report.device = backend.device_name();
    if (report.backend == "gpu") report.api = gpu_api_name(gpu_api_of(job.options.api));
    report.dtype = plan_dtype(job.plan);
    for (const Operand& input : job.command.inputs) report.shapes.emplace_back(json_name(input.flag), input.info.shape);
    report.shapes.emplace_back(json_name(job.command.output.flag), job.command.output.info.shape);
    for (const Operand& input : job.command.inputs) report.input_paths.emplace_back(json_name(input.flag), input.path);
    report.parameters_json = parameters_json(job.plan);
    report.output_path = job.command.output.path;
    report.stats = std::move(stats);
    report.load_ms = job.load_ms;
    report.min_bytes = plan_min_bytes(job.plan);
    return report;
}

}  // namespace

std::unique_ptr<Backend> make_backend(bool cpu, std::optional<int> device, GpuApi api) {
    return cpu ? make_cpu_backend() : make_gpu_backend(device, api);
}

WorkerBackends::~WorkerBackends() {
    if (gpu_pending_.valid()) {  // never used (no GPU job, or the batch stopped first): waited for, not destroyed
        try {
            gpu_slot(api_) = gpu_pending_.get();
        } catch (...) {
        }
    }
    for (std::unique_ptr<Backend>& gpu : gpus_) static_cast<void>(gpu.release());
}

// Not std::async, whose get() joins the thread: see run_unjoined.
void WorkerBackends::start_gpu(std::optional<Plan> reserve_for) {
    if (gpu_slot(api_) || gpu_pending_.valid()) return;
    std::packaged_task<std::unique_ptr<Backend>()> make([device = device_, api = api_, plan = std::move(reserve_for)] {
        std::unique_ptr<Backend> backend = make_backend(false, device, api);
        if (ReservedRuns* reserved = backend->reserved_runs(); reserved && plan) reserved->reserve(*plan);
        return backend;
    });
    gpu_pending_ = make.get_future();
    run_unjoined(std::move(make));
}

std::unique_ptr<Backend> WorkerBackends::take_gpu() {
    if (gpu_pending_.valid()) gpu_slot(api_) = gpu_pending_.get();
    return std::move(gpu_slot(api_));
}

Backend& WorkerBackends::get(bool cpu, GpuApi api) {
    std::unique_ptr<Backend>& slot = cpu ? cpu_ : gpu_slot(api);
    // A failure is this job's; the next one retries.
    if (!cpu && api == api_ && gpu_pending_.valid()) gpu_slot(api_) = gpu_pending_.get();
    if (!slot) slot = make_backend(cpu, device_, api);
    return *slot;
}

namespace {

// The time the program started (its static initialisation, about 1 ms after exec on the H100 machine).
const auto g_started = std::chrono::system_clock::now();

// %* of the -v pattern: milliseconds since the program started, so that a run's log is its timeline.
class SinceStart final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const double ms = std::chrono::duration<double, std::milli>(msg.time - g_started).count();
        fmt::format_to(std::back_inserter(dest), "{:8.2f} ms", ms);
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SinceStart>(); }
};

}  // namespace

void configure_logging(Verbosity verbosity) {
    auto logger = spdlog::get("dmlgrad");
    if (!logger) logger = spdlog::stderr_color_mt("dmlgrad");
    const bool verbose = verbosity == Verbosity::verbose;
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SinceStart>('*').set_pattern(verbose ? "dmlgrad: [%*] %v" : "dmlgrad: %v");
    logger->set_formatter(std::move(formatter));
    logger->set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
    spdlog::set_default_logger(logger);
}

PreparedJob validate_job(OperatorCommand command, const CommonOptions& options) {
    PreparedJob job{std::move(command), options, {}, {}, {}, {}, {}, {}, 0, 0};
    OperatorCommand& c = job.command;
    if (options.repeat < 1 || options.repeat > kMaxRepeat)
        throw UsageError(fmt::format("--repeat: must be between 1 and {}", kMaxRepeat));
    require_one_standard_input(c.inputs, options.compare);
    for (Operand& input : c.inputs) input.info = read_npy_header(input.path).info;
    require_output_folder(c.output);
    job.plan = c.make_plan(c.inputs);
    c.output.info = plan_output_info(job.plan);
    job.tolerance = comparison_tolerance(job);
    if (!options.compare.empty())
        require_reference_shape(options.compare, read_npy_header(options.compare).info.shape, c.output.info.shape);
    if (!options.save_diff.empty()) {
        if (!options.check && options.compare.empty()) throw UsageError("--save-diff: needs --check or --compare");
        require_save_diff_folder(options.save_diff);
    }
    spdlog::debug("{}: validated, output {} {}", c.name, dtype_name(c.output.info.dtype),
                  shape_string(c.output.info.shape));
    return job;
}

void load_inputs(PreparedJob& job) {
    Stopwatch load;
    for (const Operand& input : job.command.inputs) {
        job.tensors.push_back(load_npy(input.path, PayloadAccess::map_read_only));
        job.file_bytes += job.tensors.back().bytes();
    }
    if (!job.options.compare.empty()) job.reference = load_npy(job.options.compare, PayloadAccess::map_read_only);
    job.file_bytes += job.command.output.info.bytes();
    job.load_ms = load.elapsed_ms();
    spdlog::debug("loaded {} input(s) in {:.2f} ms", job.tensors.size(), job.load_ms);
}

void create_output(PreparedJob& job) {
    // The result is written straight into the output's temporary file; nothing is moved into place before
    // commit_job(), and destroying an uncommitted output removes its temporary file.
    job.output = std::make_unique<NpyOutput>(job.command.output.path, job.command.output.info);
}

PreparedJob prepare_job(OperatorCommand command, const CommonOptions& options) {
    PreparedJob job = validate_job(std::move(command), options);
    load_inputs(job);
    create_output(job);
    return job;
}

ComputedJob compute_job(PreparedJob& job, WorkerBackends& backends) {
    Stopwatch compute;
    Backend& backend = backends.get(job.options.cpu, gpu_api_of(job.options.api));
    if (!job.output) create_output(job);
    std::unique_ptr<NpyOutput> output = std::move(job.output);
    // --deterministic: --repeat separate runs rather than repeated kernels in one.
    const int kernel_repeats = job.options.deterministic ? 1 : job.options.repeat;
    ExecutionStats stats = backend.run(job.plan, input_pointers(job), output->tensor(), RunOptions{kernel_repeats});
    std::optional<DeterminismSummary> determinism;
    if (job.options.deterministic)
        determinism = check_determinism(backend, job.plan, input_pointers(job), output->tensor(),
                                        std::max(job.options.repeat, 2), stats);
    ComputedJob computed{std::move(output), describe(job, backend, std::move(stats)), 0, {}, job.started};
    RunReport& report = computed.report;
    report.determinism = determinism;
    const Tensor& result = computed.output->tensor();
    if (determinism && !determinism->identical()) {
        computed.exit_code = 3;
        computed.difference =
            fmt::format("deterministic failed: run {} of {} differs from run 1 in {} elements; first at index {} {}",
                        determinism->first_differing_run, determinism->runs, determinism->differing,
                        determinism->first_index, coordinate_string(result.shape(), determinism->first_index));
    }
    if (job.options.check)
        report.check = check_against_other(job, backends.get(!job.options.cpu, gpu_api_of(job.options.api)), result);
    if (!job.options.compare.empty()) report.compare = compare_with_reference(job, result);
    for (const auto* comparison : {&report.check, &report.compare})
        if (*comparison && !(*comparison)->passed() && computed.exit_code == 0) {
            computed.exit_code = 3;  // a disputed result is not written
            computed.difference = (*comparison)->description;
        }
    if (computed.exit_code == 3) {
        report.reproducer = reproducer_line(job.options.command_words);
        if (!job.options.save_diff.empty()) save_result(job.options.save_diff, result);
    }
    if (!report.api.empty())
        spdlog::debug("{}: kernel {} on {} ({})", job.command.output.path, report.stats.kernel, report.device,
                      report.api);
    spdlog::debug("{}: computed in {:.3f} ms", job.command.output.path, compute.elapsed_ms());
    return computed;
}

namespace {

// The worker's GPU backend if the job can be overlapped on it.
OverlappedRuns* overlapping_backend(const PreparedJob& job, WorkerBackends& backends) {
    const CommonOptions& o = job.options;
    if (o.cpu || o.check || !o.compare.empty() || o.deterministic) return nullptr;
    return backends.get(false, gpu_api_of(o.api)).overlapped_runs();
}

}  // namespace

bool start_job(PreparedJob& job, WorkerBackends& backends) {
    OverlappedRuns* overlapped = overlapping_backend(job, backends);
    if (!overlapped) return false;
    if (!job.output) create_output(job);
    const std::vector<const Tensor*> inputs = input_pointers(job);
    if (!overlapped->can_start(job.plan, inputs, job.output->tensor(), RunOptions{job.options.repeat})) return false;
    spdlog::debug("{}: starting", job.command.output.path);
    overlapped->start(job.plan, inputs, job.output->tensor());
    return true;
}

ComputedJob finish_job(PreparedJob& job, WorkerBackends& backends) {
    Backend& backend = backends.get(false, gpu_api_of(job.options.api));
    ExecutionStats stats = backend.overlapped_runs()->finish();
    ComputedJob computed{std::move(job.output), describe(job, backend, std::move(stats)), 0, {}, job.started};
    spdlog::debug("{}: finished", job.command.output.path);
    return computed;
}

void commit_job(ComputedJob& job) {
    Stopwatch save;
    job.output->commit();
    job.report.save_ms = save.elapsed_ms();
    job.report.total_ms = job.started.elapsed_ms();
    spdlog::debug("saved {} in {:.2f} ms", job.report.output_path, job.report.save_ms);
}

int run_operator(OperatorCommand command, const CommonOptions& options) {
    PreparedJob job = validate_job(std::move(command), options);
    if (options.explain) {
        fmt::print("{}{}", explain_kernel(job.plan), explain_plan(job.plan));
        return 0;
    }
    // Device set-up (100-600 ms on a discrete GPU) and the allocation of the job's buffers run while the inputs are
    // read and the output is made. Their time comes back in the first run's ExecutionStats::setup_ms.
    WorkerBackends backends(options.device, gpu_api_of(options.api));
    if (!options.cpu) backends.start_gpu(job.plan);
    load_inputs(job);
    create_output(job);
    spdlog::debug("inputs read and output made after {:.2f} ms", job.started.elapsed_ms());
    backends.get(options.cpu, gpu_api_of(options.api));
    spdlog::debug("backend ready after {:.2f} ms", job.started.elapsed_ms());

    ComputedJob computed = compute_job(job, backends);
    // What the process's exit would free anyway, one thing after the other, is freed now on threads of its own
    // while the output is committed and the report written: the device and its memory, and the inputs' mappings;
    // then the output's mapping and the file it replaced (atomic_file.h). For 2 x 1 GiB in and 1 GiB out on the
    // H100 machine: the backend 150-200 ms (staging 40-50, device memory 80, device 27, instance 23), the output
    // and the replaced file 70-90 ms, side by side; left to the exit, they took 70-90 ms, then 140-145 ms.
    BackgroundRelease release;
    if (std::unique_ptr<Backend> gpu = backends.take_gpu()) release.destroy("the device", std::move(gpu));
    release.destroy("the inputs' mappings", std::move(job.tensors));
    if (computed.exit_code != 0) {
        print_error_line(computed.difference);
        computed.report.total_ms = computed.started.elapsed_ms();
    } else {
        commit_job(computed);
    }
    release.destroy("the output's mapping and the file it replaced", std::move(computed.output));
    // With the result on standard output, the report goes to standard error.
    std::FILE* report_stream = is_standard_stream(job.command.output.path) ? stderr : stdout;
    if (options.json)
        fmt::print(report_stream, "{}\n", json_report(computed.report));
    else if (options.verbosity != Verbosity::quiet)
        print_text_report(computed.report, report_stream);
    // The report is the run's result: one that cannot be written (stdout closed or full) is a failure.
    if (std::fflush(report_stream) != 0 || std::ferror(report_stream))
        throw RuntimeFailure(fmt::format("cannot write the report: {}", std::strerror(errno)));
    release.wait();
    spdlog::debug("released after {:.2f} ms", job.started.elapsed_ms());
    return computed.exit_code;
}

}  // namespace dmlgrad::cli
