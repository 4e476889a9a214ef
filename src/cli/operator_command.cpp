#include "cli/operator_command.h"

#include <fmt/format.h>

#include "cli/list_parsing.h"
#include "cli/numpy_slice.h"
#include "core/error.h"

namespace dmlgrad::cli {
namespace {

Operand operand(std::string flag, const std::string& path) { return Operand{std::move(flag), path, {}}; }

Operand x_of(const TensorPaths& p) { return operand("--input", p.input); }
Operand dy_of(const TensorPaths& p) { return operand("--input-gradient", p.input_gradient); }
Operand dx_of(const TensorPaths& p) { return operand("--output", p.output); }

InterpolationMode parse_mode(const std::string& text) {
    if (text == "nearest") return InterpolationMode::nearest;
    if (text == "linear") return InterpolationMode::linear;
    throw UsageError(fmt::format("--interpolation-mode {}: expected 'nearest' or 'linear'", text));
}

RoundingDirection parse_rounding(const std::string& text) {
    if (text == "decreasing") return RoundingDirection::decreasing;
    if (text == "increasing") return RoundingDirection::increasing;
    throw UsageError(fmt::format("--rounding-direction {}: expected 'decreasing' or 'increasing'", text));
}

}  // namespace

Tolerance summing_tolerance(DType type) {
    // float16 results are rounded once from a float32 sum: half an fp16 ulp is 2^-11 relative.
    return type == DType::f16 ? Tolerance{1e-3, 1e-3} : Tolerance{1e-5, 1e-6};
}

OperatorCommand relu_grad_command(const TensorPaths& paths) {
    return {"relu-grad", {x_of(paths), dy_of(paths)}, dx_of(paths),
            [](std::span<const Operand> in) { return Plan{plan_relu_grad(ReluGradDesc{}, in[0], in[1])}; },
            {}};
}

OperatorCommand clip_grad_command(const TensorPaths& paths, const ClipOptions& options) {
    ClipGradDesc desc{options.min, options.max};
    return {"clip-grad", {x_of(paths), dy_of(paths)}, dx_of(paths),
            [desc](std::span<const Operand> in) { return Plan{plan_clip_grad(desc, in[0], in[1])}; },
            {}};
}

namespace {

// The window in DirectML's three flags, or in numpy's --slice: exactly one of the two forms.
void require_one_slice_form(const SliceOptions& options) {
    const bool raw = !options.offsets.empty() || !options.sizes.empty() || !options.strides.empty();
    if (!options.slice.empty() && raw)
        throw UsageError("--slice replaces --input-window-offsets, --input-window-sizes and --input-window-strides: "
                         "give one form");
    if (options.slice.empty())
        for (const auto& [flag, text] : {std::pair{"--input-window-offsets", &options.offsets},
                                         std::pair{"--input-window-sizes", &options.sizes},
                                         std::pair{"--input-window-strides", &options.strides}})
            if (text->empty()) throw UsageError(fmt::format("{} is required (or give the window as --slice)", flag));
}

}  // namespace

OperatorCommand slice_grad_command(const TensorPaths& paths, const SliceOptions& options) {
    require_one_slice_form(options);
    const Shape output_sizes = parse_int_list("--output-sizes", options.output_sizes);
    if (!options.slice.empty()) {
        NumpySlice slice = resolve_numpy_slice(options.slice, output_sizes);
        return {"slice-grad", {dy_of(paths)}, dx_of(paths),
                [slice, text = options.slice](std::span<const Operand> in) {
                    return Plan{plan_slice_grad(slice.desc, slice.plan_view(in[0], text))};
                },
                {}};
    }
    SliceGradDesc desc{output_sizes, parse_int_list("--input-window-offsets", options.offsets),
                       parse_int_list("--input-window-sizes", options.sizes),
                       parse_int_list("--input-window-strides", options.strides)};
    return {"slice-grad", {dy_of(paths)}, dx_of(paths),
            [desc](std::span<const Operand> in) { return Plan{plan_slice_grad(desc, in[0])}; },
            {}};
}

OperatorCommand maxpool_grad_command(const TensorPaths& paths, const MaxPoolOptions& options) {
    MaxPoolGradDesc desc{parse_int_list("--window-size", options.window_size),
                         parse_int_list("--strides", options.strides),
                         parse_int_list("--start-padding", options.start_padding),
                         parse_int_list("--end-padding", options.end_padding),
                         parse_int_list("--dilations", options.dilations)};
    return {"maxpool-grad", {x_of(paths), dy_of(paths)}, dx_of(paths),
            [desc](std::span<const Operand> in) { return Plan{plan_maxpool_grad(desc, in[0], in[1])}; },
            true};
}

OperatorCommand resample_grad_command(const TensorPaths& paths, const ResampleOptions& options) {
    ResampleGradDesc desc{parse_int_list("--output-sizes", options.output_sizes),
                          parse_mode(options.interpolation_mode),
                          parse_rounding(options.rounding_direction),
                          parse_float_list("--scales", options.scales),
                          parse_float_list("--input-pixel-offsets", options.input_pixel_offsets),
                          parse_float_list("--output-pixel-offsets", options.output_pixel_offsets)};
    return {"resample-grad", {dy_of(paths)}, dx_of(paths),
            [desc](std::span<const Operand> in) { return Plan{plan_resample_grad(desc, in[0])}; },
            true};
}

}  // namespace dmlgrad::cli
