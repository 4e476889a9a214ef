// dmlgrad's command line: CLI11 is bound straight to the option structs; each subcommand becomes an
// OperatorCommand run by runner.cpp. Exit codes: 0 ok, 1 run-time failure, 2 usage error, 3 --check difference.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <new>
#include <optional>

#include "cli/devices.h"
#include "cli/error_line.h"
#include "cli/list_parsing.h"
#include "cli/operator_command.h"
#include "cli/runner.h"
#include "core/error.h"

namespace {

using namespace dmlgrad;
using namespace dmlgrad::cli;

void add_common_flags(CLI::App& sub, CommonOptions& common, bool& quiet, bool& verbose) {
    sub.add_flag("--cpu", common.cpu, "Run the CPU reference instead of the GPU");
    sub.add_option("--device", common.device, "GPU index from `dmlgrad devices`")->check(CLI::NonNegativeNumber);
    sub.add_option("--repeat", common.repeat, "Timed executions of the kernel after a warm-up")
        ->check(CLI::Validator(check_repeat, ""));
    sub.add_flag("--check", common.check, "Also run the other backend and compare");
    sub.add_flag("--json", common.json, "Print the statistics as one JSON object");
    sub.add_flag("-q,--quiet", quiet, "Print nothing but errors");
    sub.add_flag("-v,--verbose", verbose, "Log each step on stderr");
}

void add_x(CLI::App& sub, TensorPaths& paths) {
    sub.add_option("-x,--input", paths.input, "Forward input X (.npy)")->required();
}
void add_dy_dx(CLI::App& sub, TensorPaths& paths) {
    sub.add_option("-g,--input-gradient", paths.input_gradient, "Incoming gradient dY (.npy)")->required();
    sub.add_option("-o,--output", paths.output, "Where to write the result dX (.npy)")->required();
}

// CLI11 checks required options before unknown ones, so `relu-grad --inptu x.npy` would be answered with
// "--input is required". Naming the misspelt flag helps more.
std::optional<std::string> first_unknown_flag(const CLI::App& app, int argc, char** argv) {
    const auto parsed = app.get_subcommands();  // the subcommand CLI11 had selected when it stopped
    if (parsed.empty()) return std::nullopt;
    const CLI::App* sub = parsed.front();
    for (int i = 2; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.')
            continue;  // a value, a negative number
        std::string name = arg.substr(0, arg.find('='));
        if (!sub->get_option_no_throw(name) && name != "-h" && name != "--help") return arg;
    }
    return std::nullopt;
}

int report_usage_error(const std::string& message) {
    print_error_line(message);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"dmlgrad: DirectML gradient operators on .npy files, on the GPU (Vulkan) or the CPU"};
    app.set_version_flag("--version", std::string("dmlgrad ") + DMLGRAD_VERSION);
    app.require_subcommand(1);
    app.fallthrough(false);

    CommonOptions common;
    bool quiet = false, verbose = false;
    TensorPaths paths;
    ClipOptions clip;
    SliceOptions slice;
    MaxPoolOptions pool;
    ResampleOptions resample;
    bool devices_json = false;

    auto* relu_cmd = app.add_subcommand("relu-grad", "dX = X > 0 ? dY : 0");
    add_x(*relu_cmd, paths);
    add_dy_dx(*relu_cmd, paths);

    auto* clip_cmd = app.add_subcommand("clip-grad", "dX = (X <= Min or X >= Max) ? 0 : dY");
    add_x(*clip_cmd, paths);
    add_dy_dx(*clip_cmd, paths);
    clip_cmd->add_option("--min", clip.min, "Min, in the tensors' type")->required();
    clip_cmd->add_option("--max", clip.max, "Max, in the tensors' type")->required();

    auto* slice_cmd = app.add_subcommand("slice-grad", "dX = 0, then dY scattered into the strided window");
    add_dy_dx(*slice_cmd, paths);
    slice_cmd->add_option("--output-sizes", slice.output_sizes, "dX shape, comma-separated")->required();
    slice_cmd->add_option("--input-window-offsets", slice.offsets, "Window offset per axis")->required();
    slice_cmd->add_option("--input-window-sizes", slice.sizes, "Window size per axis")->required();
    slice_cmd->add_option("--input-window-strides", slice.strides, "Signed stride per axis")->required();

    auto* pool_cmd = app.add_subcommand("maxpool-grad", "dY of each window to the window's first maximum of X");
    add_x(*pool_cmd, paths);
    add_dy_dx(*pool_cmd, paths);
    pool_cmd->add_option("--window-size", pool.window_size, "Window per spatial axis")->required();
    pool_cmd->add_option("--strides", pool.strides, "Stride per spatial axis (default 1)");
    pool_cmd->add_option("--start-padding", pool.start_padding, "Start padding per spatial axis (default 0)");
    pool_cmd->add_option("--end-padding", pool.end_padding, "End padding per spatial axis (default 0)");
    pool_cmd->add_option("--dilations", pool.dilations, "Dilation per spatial axis (default 1)");

    auto* resample_cmd = app.add_subcommand("resample-grad", "Transpose of a nearest or linear resample");
    add_dy_dx(*resample_cmd, paths);
    resample_cmd->add_option("--output-sizes", resample.output_sizes, "dX shape, comma-separated")->required();
    resample_cmd->add_option("--interpolation-mode", resample.interpolation_mode, "nearest or linear")->required();
    resample_cmd->add_option("--rounding-direction", resample.rounding_direction,
                             "decreasing (floor, default) or increasing (ceil)");
    resample_cmd->add_option("--scales", resample.scales, "Scale per axis (default dY size / dX size)");
    resample_cmd->add_option("--input-pixel-offsets", resample.input_pixel_offsets, "Per axis (default -0.5)");
    resample_cmd->add_option("--output-pixel-offsets", resample.output_pixel_offsets, "Per axis (default 0.5)");

    for (auto* sub : {relu_cmd, clip_cmd, slice_cmd, pool_cmd, resample_cmd})
        add_common_flags(*sub, common, quiet, verbose);

    auto* devices_cmd = app.add_subcommand("devices", "List the GPU devices and their --device index");
    devices_cmd->add_flag("--json", devices_json, "Print the list as JSON");

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::RequiredError& e) {
        if (auto unknown = first_unknown_flag(app, argc, argv))
            return report_usage_error("The following argument was not expected: " + *unknown);
        return report_usage_error(e.what());
    } catch (const CLI::ParseError& e) {
        return report_usage_error(e.what());
    }

    common.verbosity = verbose ? Verbosity::verbose : quiet ? Verbosity::quiet : Verbosity::normal;
    configure_logging(common.verbosity);
    try {
        if (devices_cmd->parsed()) return list_devices(devices_json);
        if (relu_cmd->parsed()) return run_operator(relu_grad_command(paths), common);
        if (clip_cmd->parsed()) return run_operator(clip_grad_command(paths, clip), common);
        if (slice_cmd->parsed()) return run_operator(slice_grad_command(paths, slice), common);
        if (pool_cmd->parsed()) return run_operator(maxpool_grad_command(paths, pool), common);
        return run_operator(resample_grad_command(paths, resample), common);
    } catch (const UsageError& e) {
        return report_usage_error(e.what());
    } catch (const RuntimeFailure& e) {
        print_error_line(e.what());
    } catch (const std::bad_alloc&) {
        print_error_line("out of host memory");
    } catch (const std::exception& e) {
        print_error_line(e.what());
    }
    return 1;
}
