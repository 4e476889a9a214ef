#include "cli/runner.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>

#include "cli/report.h"
#include "core/error.h"
#include "core/stopwatch.h"
#include "cpu/cpu_backend.h"
#include "gpu/gpu.h"
#include "io/npy.h"

namespace dmlgrad::cli {
namespace {

namespace fs = std::filesystem;

// A missing output folder is the user's mistake: say so before any work, not after the computation.
void require_output_folder(const Operand& output) {
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

std::unique_ptr<Backend> make_backend(bool cpu, std::optional<int> device) {
    return cpu ? make_cpu_backend() : make_gpu_backend(device);
}

// Runs the other backend on the same inputs and compares; prints the first difference on stderr.
CheckSummary check_against_other(const OperatorCommand& command, const Plan& plan, const CommonOptions& options,
                                 std::span<const Tensor* const> inputs, const Tensor& result) {
    auto other = make_backend(!options.cpu, options.device);
    Tensor expected(plan_output_info(plan));
    other->run(plan, inputs, expected, RunOptions{1});
    // Test hook: the end-to-end tests need a way to see --check fail, and the backends agree by design.
    if (std::getenv("DMLGRAD_TEST_CORRUPT_CHECK")) expected.buffer.data()[0] ^= std::byte{1};
    Tolerance tolerance = command.sums ? summing_tolerance(plan_dtype(plan)) : Tolerance{};
    CheckSummary summary{other->kind(), other->device_name(), tolerance.exact(), true};
    if (auto diff = find_difference(expected, result, tolerance)) {
        summary.passed = false;
        const std::string mine = options.cpu ? "cpu" : "gpu";
        fmt::print(stderr,
                   "dmlgrad: check failed: {} of {} elements differ {}; first at index {} {}: {} {}, {} {}\n",
                   diff->count, result.elements(), tolerance.exact() ? "bit for bit" : "beyond the tolerance",
                   diff->first_index, coordinate_string(result.shape(), diff->first_index), mine,
                   element_string(result, diff->first_index), other->kind(),
                   element_string(expected, diff->first_index));
    }
    return summary;
}

}  // namespace

void configure_logging(Verbosity verbosity) {
    auto logger = spdlog::stderr_color_mt("dmlgrad");
    logger->set_pattern("dmlgrad: %v");
    logger->set_level(verbosity == Verbosity::verbose ? spdlog::level::debug : spdlog::level::warn);
    spdlog::set_default_logger(logger);
}

int run_operator(OperatorCommand command, const CommonOptions& options) {
    Stopwatch total;
    if (options.repeat < 1 || options.repeat > kMaxRepeat)
        throw UsageError(fmt::format("--repeat: must be between 1 and {}", kMaxRepeat));

    for (Operand& input : command.inputs) input.info = read_npy_header(input.path).info;
    require_output_folder(command.output);
    const Plan plan = command.make_plan(command.inputs);
    command.output.info = plan_output_info(plan);
    spdlog::debug("{}: validated, output {} {}", command.name, dtype_name(command.output.info.dtype),
                  shape_string(command.output.info.shape));

    // Device set-up (100-600 ms on a discrete GPU) runs while the inputs are read. Its time comes back in the
    // first run's ExecutionStats::setup_ms.
    auto backend_ready = std::async(std::launch::async, [&] { return make_backend(options.cpu, options.device); });

    Stopwatch load;
    std::vector<Tensor> tensors;
    for (const Operand& input : command.inputs) tensors.push_back(load_npy(input.path, PayloadAccess::map_read_only));
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : tensors) inputs.push_back(&t);
    const double load_ms = load.elapsed_ms();
    spdlog::debug("loaded {} input(s) in {:.2f} ms", inputs.size(), load_ms);

    auto backend = backend_ready.get();
    spdlog::debug("backend {} on {} ready after {:.2f} ms", backend->kind(), backend->device_name(),
                  total.elapsed_ms());

    // The result is written straight into the output's temporary file; nothing is renamed into place before
    // commit(), and an early return or an exception removes the temporary file.
    NpyOutput output(command.output.path, command.output.info);
    Tensor& result = output.tensor();
    ExecutionStats stats = backend->run(plan, inputs, result, RunOptions{options.repeat});

    RunReport report;
    if (options.check) report.check = check_against_other(command, plan, options, inputs, result);
    if (report.check && !report.check->passed) return 3;  // a disputed result is not written

    Stopwatch save;
    output.commit();
    report.save_ms = save.elapsed_ms();
    spdlog::debug("saved {} in {:.2f} ms", command.output.path, report.save_ms);

    report.op = command.name;
    report.backend = backend->kind();
    report.device = backend->device_name();
    report.dtype = plan_dtype(plan);
    for (const Operand& input : command.inputs) report.shapes.emplace_back(json_name(input.flag), input.info.shape);
    report.shapes.emplace_back(json_name(command.output.flag), command.output.info.shape);
    report.output_path = command.output.path;
    report.stats = std::move(stats);
    report.load_ms = load_ms;
    report.min_bytes = plan_min_bytes(plan);
    report.total_ms = total.elapsed_ms();
    if (options.json)
        print_json_report(report);
    else if (options.verbosity != Verbosity::quiet)
        print_text_report(report);
    // The report is the run's result: one that cannot be written (stdout closed or full) is a failure.
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        throw RuntimeFailure(fmt::format("cannot write the report to standard output: {}", std::strerror(errno)));
    return 0;
}

}  // namespace dmlgrad::cli
