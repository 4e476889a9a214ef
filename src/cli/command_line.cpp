#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/list_parsing.h"
#include "cli/suggestions.h"
#include "core/error.h"

namespace dmlgrad::cli {

constexpr std::array<std::string_view, 5> kOperatorNames = {"relu-grad", "clip-grad", "slice-grad", "maxpool-grad",
                                                            "resample-grad"};

struct OperatorSubcommands::Bindings {
    CommonOptions common;
    bool quiet = false, verbose = false;
    TensorPaths paths;
    ClipOptions clip;
    SliceOptions slice;
    MaxPoolOptions pool;
    ResampleOptions resample;
    CLI::App *relu = nullptr, *clip_cmd = nullptr, *slice_cmd = nullptr, *pool_cmd = nullptr, *resample_cmd = nullptr;
};

namespace {

using Bindings = OperatorSubcommands::Bindings;

// How --help shows the comma-separated list flags (CLI11 would say TEXT: they are parsed by cli/list_parsing).
constexpr const char* kInts = "INT,...";
constexpr const char* kFloats = "FLOAT,...";

}  // namespace

void add_api_option(CLI::App& sub, std::string& api) {
    sub.add_option("--api", api, "GPU API: vulkan (the default) or d3d12 (Direct3D 12; vkd3d on Linux)")
        ->check(CLI::IsMember({std::string(gpu_api_name(GpuApi::vulkan)), std::string(gpu_api_name(GpuApi::d3d12))}));
}

namespace {

void add_common_flags(CLI::App& sub, Bindings& b) {
    sub.add_flag("--cpu", b.common.cpu, "Run the CPU reference instead of the GPU");
    sub.add_option("--device", b.common.device, "GPU index from `dmlgrad devices`")->check(CLI::NonNegativeNumber);
    add_api_option(sub, b.common.api);
    sub.add_option("--repeat", b.common.repeat, "Timed executions of the kernel after a warm-up")
        ->check(CLI::Validator(check_repeat, ""));
    sub.add_flag("--check", b.common.check, "Also run the other backend and compare");
    sub.add_option("--compare", b.common.compare, "Compare the result with this .npy (e.g. PyTorch's gradient)");
    sub.add_option("--rtol", b.common.rtol,
                   "Relative tolerance of --check/--compare (default: exact, or the "
                   "summing operators' tolerance)")
        ->type_name("FLOAT");
    sub.add_option("--atol", b.common.atol, "Absolute tolerance of --check/--compare")->type_name("FLOAT");
    sub.add_option("--save-diff", b.common.save_diff,
                   "On a difference, write PREFIX.result.npy and per comparison an error map and a mask")
        ->type_name("PREFIX");
    sub.add_flag("--deterministic", b.common.deterministic,
                 "Run --repeat N (at least 2) separate times and require bit-identical outputs");
    sub.add_flag("--json", b.common.json, "Print the statistics as one JSON object");
    sub.add_flag("-q,--quiet", b.quiet, "Print nothing but errors");
    sub.add_flag("-v,--verbose", b.verbose, "Log each step on stderr");
}

void add_x(CLI::App& sub, TensorPaths& paths) {
    sub.add_option("-x,--input", paths.input, "Forward input X (.npy)")->required();
}
void add_dy_dx(CLI::App& sub, TensorPaths& paths) {
    sub.add_option("-g,--input-gradient", paths.input_gradient, "Incoming gradient dY (.npy)")->required();
    sub.add_option("-o,--output", paths.output, "Where to write the result dX (.npy)")->required();
}

CLI::App* add_relu(CLI::App& app, Bindings& b) {
    auto* sub = app.add_subcommand("relu-grad", "dX = X > 0 ? dY : 0");
    sub->footer(
        "Examples:\n  dmlgrad relu-grad -x x.npy -g dy.npy -o dx.npy\n  dmlgrad relu-grad -x x.npy -g dy.npy -o dx.npy "
        "--check --json\n");
    add_x(*sub, b.paths);
    add_dy_dx(*sub, b.paths);
    return sub;
}

CLI::App* add_clip(CLI::App& app, Bindings& b) {
    auto* sub = app.add_subcommand("clip-grad", "dX = (X <= Min or X >= Max) ? 0 : dY");
    sub->footer("Example:\n  dmlgrad clip-grad -x x.npy -g dy.npy -o dx.npy --min -1 --max 1\n");
    add_x(*sub, b.paths);
    add_dy_dx(*sub, b.paths);
    sub->add_option("--min", b.clip.min, "Min, in the tensors' type")->required();
    sub->add_option("--max", b.clip.max, "Max, in the tensors' type")->required();
    return sub;
}

CLI::App* add_slice(CLI::App& app, Bindings& b) {
    auto* sub = app.add_subcommand("slice-grad", "dX = 0, then dY scattered into the strided window");
    sub->footer(
        "Examples, the gradient of x[:, :, ::2, ::2] for x of shape 2x3x8x8, in numpy's terms and in DirectML's:\n"
        "  dmlgrad slice-grad -g dy.npy -o dx.npy --output-sizes 2,3,8,8 --slice \"[:, :, ::2, ::2]\"\n"
        "  dmlgrad slice-grad -g dy.npy -o dx.npy --output-sizes 2,3,8,8 --input-window-offsets 0,0,0,0 "
        "--input-window-sizes 2,3,7,7 --input-window-strides 1,1,2,2\n");
    add_dy_dx(*sub, b.paths);
    sub->add_option("--output-sizes", b.slice.output_sizes, "dX shape, comma-separated")->required()->type_name(kInts);
    sub->add_option("--slice", b.slice.slice,
                    "numpy basic slicing of dX, e.g. \"[:, 1:, ::3, 2:9]\" or \"..., -1\" "
                    "(instead of the three window flags)")
        ->type_name("NUMPY");
    sub->add_option("--input-window-offsets", b.slice.offsets, "Window offset per axis")->type_name(kInts);
    sub->add_option("--input-window-sizes", b.slice.sizes, "Window size per axis")->type_name(kInts);
    sub->add_option("--input-window-strides", b.slice.strides, "Signed stride per axis")->type_name(kInts);
    return sub;
}

CLI::App* add_maxpool(CLI::App& app, Bindings& b) {
    auto* sub = app.add_subcommand("maxpool-grad", "dY of each window to the window's first maximum of X");
    sub->footer(
        "Example, 3x3 windows, stride 2, padding 1:\n  dmlgrad maxpool-grad -x x.npy -g dy.npy -o dx.npy --window-size "
        "3,3 --strides 2,2 --start-padding 1,1 --end-padding 1,1\n");
    add_x(*sub, b.paths);
    add_dy_dx(*sub, b.paths);
    sub->add_option("--window-size", b.pool.window_size, "Window per spatial axis")->required()->type_name(kInts);
    sub->add_option("--strides", b.pool.strides, "Stride per spatial axis (default 1)")->type_name(kInts);
    sub->add_option("--start-padding", b.pool.start_padding, "Start padding per spatial axis (default 0)")
        ->type_name(kInts);
    sub->add_option("--end-padding", b.pool.end_padding, "End padding per spatial axis (default 0)")->type_name(kInts);
    sub->add_option("--dilations", b.pool.dilations, "Dilation per spatial axis (default 1)")->type_name(kInts);
    return sub;
}

CLI::App* add_resample(CLI::App& app, Bindings& b) {
    auto* sub = app.add_subcommand("resample-grad", "Transpose of a nearest or linear resample");
    sub->footer(
        "Three forms, which do not mix: PyTorch's (--torch-mode ...), ONNX Resize's "
        "(--coordinate-transformation-mode,\n"
        "--nearest-mode) or DirectML's parameters (--rounding-direction, --scales, the pixel offsets). -v logs the\n"
        "DirectML parameters a framework form resolves to.\n"
        "Examples:\n"
        "  PyTorch F.interpolate(x, size=(8, 8), mode='bilinear', align_corners=False) for x of shape 1x2x4x4:\n"
        "  dmlgrad resample-grad -g dy.npy -o dx.npy --output-sizes 1,2,4,4 --torch-mode bilinear\n"
        "  PyTorch F.interpolate(x, scale_factor=1.5, mode='nearest-exact') for x of shape 1x3x10:\n"
        "  dmlgrad resample-grad -g dy.npy -o dx.npy --output-sizes 1,3,10 --torch-mode nearest-exact --scale-factor "
        "1.5\n"
        "  ONNX Resize, mode nearest, asymmetric coordinates, nearest_mode floor:\n"
        "  dmlgrad resample-grad -g dy.npy -o dx.npy --output-sizes 1,2,4,4 --interpolation-mode nearest "
        "--coordinate-transformation-mode asymmetric --nearest-mode floor\n"
        "  DirectML parameters, bilinear 2x upsampling with half-pixel centres:\n"
        "  dmlgrad resample-grad -g dy.npy -o dx.npy --output-sizes 1,2,4,4 --interpolation-mode linear --scales "
        "1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 --output-pixel-offsets 0,0,0.5,0.5\n");
    add_dy_dx(*sub, b.paths);
    ResampleOptions& r = b.resample;
    sub->add_option("--output-sizes", r.output_sizes, "dX shape, comma-separated")->required()->type_name(kInts);
    sub->add_option("--torch-mode", r.torch_mode,
                    "PyTorch interpolate: nearest, nearest-exact (3-D to 5-D), linear (3-D), bilinear (4-D) or "
                    "trilinear (5-D)");
    sub->add_flag("--align-corners", r.align_corners, "PyTorch align_corners=True (linear, bilinear, trilinear)");
    sub->add_option("--scale-factor", r.scale_factor, "PyTorch scale_factor, one or one per spatial axis")
        ->type_name(kFloats);
    sub->add_flag("--antialias", r.antialias, "PyTorch antialias=True: not expressible, refused");
    sub->add_option("--coordinate-transformation-mode", r.coordinate_transformation_mode,
                    "ONNX Resize: half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn "
                    "or half_pixel_symmetric");
    sub->add_option("--nearest-mode", r.nearest_mode,
                    "ONNX Resize: round_prefer_floor, round_prefer_ceil, floor or ceil");
    sub->add_option("--interpolation-mode", r.interpolation_mode,
                    "nearest or linear (DirectML's form: required; ONNX's: its mode, default nearest)");
    sub->add_option("--rounding-direction", r.rounding_direction, "decreasing (floor, default) or increasing (ceil)");
    sub->add_option("--scales", r.scales, "Scale per axis (default dY size / dX size)")->type_name(kFloats);
    sub->add_option("--input-pixel-offsets", r.input_pixel_offsets, "Per axis (default -0.5)")->type_name(kFloats);
    sub->add_option("--output-pixel-offsets", r.output_pixel_offsets, "Per axis (default 0.5)")->type_name(kFloats);
    return sub;
}

}  // namespace

OperatorSubcommands::OperatorSubcommands(CLI::App& app) : bindings_(std::make_unique<Bindings>()) {
    Bindings& b = *bindings_;
    b.relu = add_relu(app, b);
    b.clip_cmd = add_clip(app, b);
    b.slice_cmd = add_slice(app, b);
    b.pool_cmd = add_maxpool(app, b);
    b.resample_cmd = add_resample(app, b);
    for (auto* sub : {b.relu, b.clip_cmd, b.slice_cmd, b.pool_cmd, b.resample_cmd}) {
        add_common_flags(*sub, b);
        sub->add_flag("--explain", b.common.explain,
                      "Print the GPU kernel the run takes and which dY elements reach each dX index; run nothing");
    }
}

OperatorSubcommands::~OperatorSubcommands() = default;

std::optional<OperatorRequest> OperatorSubcommands::parsed() const {
    const Bindings& b = *bindings_;
    CommonOptions common = b.common;
    common.verbosity = b.verbose ? Verbosity::verbose : b.quiet ? Verbosity::quiet : Verbosity::normal;
    if (b.relu->parsed()) return OperatorRequest{relu_grad_command(b.paths), common};
    if (b.clip_cmd->parsed()) return OperatorRequest{clip_grad_command(b.paths, b.clip), common};
    if (b.slice_cmd->parsed()) return OperatorRequest{slice_grad_command(b.paths, b.slice), common};
    if (b.pool_cmd->parsed()) return OperatorRequest{maxpool_grad_command(b.paths, b.pool), common};
    if (b.resample_cmd->parsed()) return OperatorRequest{resample_grad_command(b.paths, b.resample), common};
    return std::nullopt;
}

std::string unknown_subcommand_message(std::string_view word, bool operators_only) {
    std::vector<std::string_view> names(kOperatorNames.begin(), kOperatorNames.end());
    if (!operators_only) names.insert(names.end(), {"batch", "devices"});
    const std::string_view best = closest_name(word, names);
    std::string message =
        fmt::format("'{}' is not {}", word, operators_only ? "an operator subcommand" : "a subcommand");
    return best.empty() ? message : fmt::format("{}; did you mean {}?", message, best);
}

bool is_operator_name(std::string_view word) {
    return std::find(kOperatorNames.begin(), kOperatorNames.end(), word) != kOperatorNames.end();
}

namespace {

// The first word that looks like a flag and is none of the subcommand's, as typed (with any "=value").
std::optional<std::string> first_unknown_flag(const CLI::App& sub, const std::vector<std::string>& args) {
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.')
            continue;  // a value, a negative number
        std::string name = arg.substr(0, arg.find('='));
        if (!sub.get_option_no_throw(name) && name != "-h" && name != "--help") return arg;
    }
    return std::nullopt;
}

std::vector<std::string> long_flags(const CLI::App& sub) {
    std::vector<std::string> flags;
    for (const CLI::Option* option : sub.get_options())
        for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    return flags;
}

// CLI11 lists unexpected words in reverse; the user typed them in this order.
std::string unexpected_words_message(const CLI::App& app) {
    std::vector<std::string> words = app.remaining(true);
    return fmt::format("unexpected word{}: {}", words.size() == 1 ? "" : "s", fmt::join(words, " "));
}

}  // namespace

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args) {
    if (auto slice = unquoted_slice_message(args)) return *slice;
    if (auto misplaced = flag_before_subcommand_message(args)) return *misplaced;
    const auto parsed = app.get_subcommands();  // the subcommand CLI11 had selected when it stopped
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
    if (!parsed.empty() && (extras || dynamic_cast<const CLI::RequiredError*>(&error))) {
        const CLI::App& sub = *parsed.front();
        if (auto unknown = first_unknown_flag(sub, args)) {
            const std::vector<std::string> flags = long_flags(sub);
            return unknown_flag_message(sub.get_name(), *unknown, {flags.begin(), flags.end()});
        }
    }
    return extras ? unexpected_words_message(app) : error.what();
}

void require_values(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands()) require_values(*sub);
    for (const CLI::Option* option : app.get_options()) {
        if (option->get_type_size_max() == 0) continue;  // a flag
        for (const std::string& value : option->results())
            if (value.empty())
                throw UsageError(
                    fmt::format("{}: an empty value; give a value or leave the option out", option->get_name()));
    }
}

OperatorRequest parse_operator_words(const std::vector<std::string>& words) {
    CLI::App app{"dmlgrad"};
    app.require_subcommand(1);
    app.fallthrough(false);
    OperatorSubcommands operators(app);
    try {
        app.parse(std::vector<std::string>(words.rbegin(), words.rend()));  // CLI11 takes the words reversed
    } catch (const CLI::Success&) {
        throw UsageError("--help is not a job");
    } catch (const CLI::ParseError& e) {
        throw UsageError(parse_error_message(app, e, words));
    }
    require_values(app);
    if (auto request = operators.parsed()) {
        request->common.command_words = words;
        return std::move(*request);
    }
    throw UsageError("not an operator subcommand");
}

}  // namespace dmlgrad::cli
