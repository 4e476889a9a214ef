#include "cli/operator_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string_view>

#include "cli/list_parsing.h"
#include "cli/numpy_slice.h"
#include "core/error.h"

namespace dmlgrad::cli {
namespace {

Operand operand(std::string flag, const std::string& path) { return Operand{std::move(flag), path, {}}; }

Operand x_of(const TensorPaths& p) { return operand("--input", p.input); }
Operand dy_of(const TensorPaths& p) { return operand("--input-gradient", p.input_gradient); }
Operand dx_of(const TensorPaths& p) { return operand("--output", p.output); }

RoundingDirection parse_rounding(const std::string& text) {
    if (text.empty() || text == "decreasing") return RoundingDirection::decreasing;
    if (text == "increasing") return RoundingDirection::increasing;
    throw UsageError(fmt::format("--rounding-direction {}: expected 'decreasing' or 'increasing'", text));
}

// resample-grad's three forms. Each flag belongs to one; a flag of another form than the one chosen is named.
struct GivenFlag {
    std::string_view name;
    bool given;
};

void refuse_flags(std::initializer_list<GivenFlag> flags, std::string_view form) {
    for (const GivenFlag& flag : flags)
        if (flag.given) throw UsageError(fmt::format("{}: not with {}", flag.name, form));
}

ResampleFramework torch_form(const ResampleOptions& o) {
    refuse_flags({{"--interpolation-mode", !o.interpolation_mode.empty()},
                  {"--rounding-direction", !o.rounding_direction.empty()},
                  {"--scales", !o.scales.empty()},
                  {"--input-pixel-offsets", !o.input_pixel_offsets.empty()},
                  {"--output-pixel-offsets", !o.output_pixel_offsets.empty()},
                  {"--coordinate-transformation-mode", !o.coordinate_transformation_mode.empty()},
                  {"--nearest-mode", !o.nearest_mode.empty()}},
                 "--torch-mode (PyTorch's mode, sizes and scale factors set the resample)");
    TorchInterpolate torch{parse_torch_mode(o.torch_mode), o.align_corners,
                           parse_double_list("--scale-factor", o.scale_factor)};
    if (o.antialias)
        throw UsageError(
            "--antialias: not expressible: antialiased resampling widens the filter with the downscale "
            "factor, and DirectML's resample grad has no antialiasing (at most 2 taps per axis)");
    return torch;
}

ResampleFramework onnx_form(const ResampleOptions& o) {
    refuse_flags({{"--rounding-direction", !o.rounding_direction.empty()},
                  {"--scales", !o.scales.empty()},
                  {"--input-pixel-offsets", !o.input_pixel_offsets.empty()},
                  {"--output-pixel-offsets", !o.output_pixel_offsets.empty()},
                  {"--align-corners", o.align_corners},
                  {"--scale-factor", !o.scale_factor.empty()},
                  {"--antialias", o.antialias}},
                 "--coordinate-transformation-mode or --nearest-mode (ONNX's attributes set the resample)");
    OnnxResize onnx;
    if (!o.interpolation_mode.empty())
        onnx.mode = parse_interpolation_mode("--interpolation-mode", o.interpolation_mode);
    if (!o.coordinate_transformation_mode.empty())
        onnx.coordinates = parse_onnx_coordinate_mode(o.coordinate_transformation_mode);
    if (!o.nearest_mode.empty()) {
        if (onnx.mode != InterpolationMode::nearest)
            throw UsageError("--nearest-mode: only with --interpolation-mode nearest");
        onnx.nearest = parse_onnx_nearest_mode(o.nearest_mode);
    }
    return onnx;
}

ResampleGradDesc resample_desc(const ResampleOptions& o) {
    ResampleGradDesc desc;
    desc.output_sizes = parse_int_list("--output-sizes", o.output_sizes);
    if (!o.torch_mode.empty()) {
        desc.framework = torch_form(o);
        return desc;
    }
    if (!o.coordinate_transformation_mode.empty() || !o.nearest_mode.empty()) {
        desc.framework = onnx_form(o);
        return desc;
    }
    refuse_flags({{"--align-corners", o.align_corners},
                  {"--scale-factor", !o.scale_factor.empty()},
                  {"--antialias", o.antialias}},
                 "DirectML's parameters (it belongs to --torch-mode)");
    if (o.interpolation_mode.empty())
        throw UsageError(
            "--interpolation-mode is required (or --torch-mode, or ONNX's "
            "--coordinate-transformation-mode / --nearest-mode)");
    desc.mode = parse_interpolation_mode("--interpolation-mode", o.interpolation_mode);
    desc.rounding = parse_rounding(o.rounding_direction);
    desc.scales = parse_float_list("--scales", o.scales);
    desc.input_pixel_offsets = parse_float_list("--input-pixel-offsets", o.input_pixel_offsets);
    desc.output_pixel_offsets = parse_float_list("--output-pixel-offsets", o.output_pixel_offsets);
    return desc;
}

// "interpolation_mode=linear rounding_direction=decreasing scales=1,1,2,2 ..."
std::string parameters_text(const ResampleGradPlan& plan) {
    std::string text;
    for (const auto& [name, value] : resolved_parameters(plan))
        text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
    return text;
}

}  // namespace

OperatorCommand relu_grad_command(const TensorPaths& paths) {
    return {"relu-grad", {x_of(paths), dy_of(paths)}, dx_of(paths), [](std::span<const Operand> in) {
                return Plan{plan_relu_grad(ReluGradDesc{}, in[0], in[1])};
            }};
}

OperatorCommand clip_grad_command(const TensorPaths& paths, const ClipOptions& options) {
    ClipGradDesc desc{options.min, options.max};
    return {"clip-grad", {x_of(paths), dy_of(paths)}, dx_of(paths), [desc](std::span<const Operand> in) {
                return Plan{plan_clip_grad(desc, in[0], in[1])};
            }};
}

namespace {

// The window in DirectML's three flags, or in numpy's --slice: exactly one of the two forms.
void require_one_slice_form(const SliceOptions& options) {
    const bool raw = !options.offsets.empty() || !options.sizes.empty() || !options.strides.empty();
    if (!options.slice.empty() && raw)
        throw UsageError(
            "--slice replaces --input-window-offsets, --input-window-sizes and --input-window-strides: "
            "give one form");
    if (options.slice.empty())
        for (const auto& [flag, text] :
             {std::pair{"--input-window-offsets", &options.offsets}, std::pair{"--input-window-sizes", &options.sizes},
              std::pair{"--input-window-strides", &options.strides}})
            if (text->empty()) throw UsageError(fmt::format("{} is required (or give the window as --slice)", flag));
}

}  // namespace

OperatorCommand slice_grad_command(const TensorPaths& paths, const SliceOptions& options) {
    require_one_slice_form(options);
    const Shape output_sizes = parse_int_list("--output-sizes", options.output_sizes);
    if (!options.slice.empty()) {
        NumpySlice slice = resolve_numpy_slice(options.slice, output_sizes);
        return {"slice-grad", {dy_of(paths)}, dx_of(paths), [slice, text = options.slice](std::span<const Operand> in) {
                    return Plan{plan_slice_grad(slice.desc, slice.plan_view(in[0], text))};
                }};
    }
    SliceGradDesc desc{output_sizes, parse_int_list("--input-window-offsets", options.offsets),
                       parse_int_list("--input-window-sizes", options.sizes),
                       parse_int_list("--input-window-strides", options.strides)};
    return {"slice-grad", {dy_of(paths)}, dx_of(paths), [desc](std::span<const Operand> in) {
                return Plan{plan_slice_grad(desc, in[0])};
            }};
}

OperatorCommand maxpool_grad_command(const TensorPaths& paths, const MaxPoolOptions& options) {
    MaxPoolGradDesc desc{
        parse_int_list("--window-size", options.window_size), parse_int_list("--strides", options.strides),
        parse_int_list("--start-padding", options.start_padding), parse_int_list("--end-padding", options.end_padding),
        parse_int_list("--dilations", options.dilations)};
    return {"maxpool-grad", {x_of(paths), dy_of(paths)}, dx_of(paths), [desc](std::span<const Operand> in) {
                return Plan{plan_maxpool_grad(desc, in[0], in[1])};
            }};
}

OperatorCommand resample_grad_command(const TensorPaths& paths, const ResampleOptions& options) {
    ResampleGradDesc desc = resample_desc(options);
    return {"resample-grad", {dy_of(paths)}, dx_of(paths), [desc](std::span<const Operand> in) {
                ResampleGradPlan plan = plan_resample_grad(desc, in[0]);
                spdlog::debug("resample-grad: {}", parameters_text(plan));
                return Plan{std::move(plan)};
            }};
}

}  // namespace dmlgrad::cli
