#include "ops/resample_modes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>

#include "core/error.h"

namespace dmlgrad {
namespace {

// Exact coordinates: (2o + 1) * in reaches 2^65 for the longest axes.
__extension__ typedef __int128 Int128;

constexpr std::string_view kNotExpressible = "DirectML's resample interpolates nearest or linear (2 taps per axis)";

// ---------------------------------------------------------------------------------------------------------------
// Names

template <class Enum, size_t N>
std::optional<Enum> find_name(const std::pair<std::string_view, Enum> (&names)[N], std::string_view name) {
    for (const auto& [text, value] : names)
        if (text == name) return value;
    return std::nullopt;
}

template <class Enum, size_t N>
std::string name_list(const std::pair<std::string_view, Enum> (&names)[N]) {
    std::string list;
    for (size_t i = 0; i < N; ++i)
        list += fmt::format("{}{}", i == 0 ? "" : i + 1 == N ? " or " : ", ", names[i].first);
    return list;
}

constexpr std::pair<std::string_view, OnnxCoordinateMode> kOnnxCoordinateNames[] = {
    {"half_pixel", OnnxCoordinateMode::half_pixel},
    {"pytorch_half_pixel", OnnxCoordinateMode::pytorch_half_pixel},
    {"align_corners", OnnxCoordinateMode::align_corners},
    {"asymmetric", OnnxCoordinateMode::asymmetric},
    {"tf_half_pixel_for_nn", OnnxCoordinateMode::tf_half_pixel_for_nn},
    {"half_pixel_symmetric", OnnxCoordinateMode::half_pixel_symmetric},
};

constexpr std::pair<std::string_view, OnnxNearestMode> kOnnxNearestNames[] = {
    {"round_prefer_floor", OnnxNearestMode::round_prefer_floor},
    {"round_prefer_ceil", OnnxNearestMode::round_prefer_ceil},
    {"floor", OnnxNearestMode::floor},
    {"ceil", OnnxNearestMode::ceil},
};

constexpr std::pair<std::string_view, TorchMode> kTorchNames[] = {
    {"nearest", TorchMode::nearest},   {"nearest-exact", TorchMode::nearest_exact}, {"linear", TorchMode::linear},
    {"bilinear", TorchMode::bilinear}, {"trilinear", TorchMode::trilinear},
};

constexpr std::pair<std::string_view, InterpolationMode> kInterpolationNames[] = {
    {"nearest", InterpolationMode::nearest},
    {"linear", InterpolationMode::linear},
};

// ---------------------------------------------------------------------------------------------------------------
// ONNX in exact arithmetic: the coordinate of dY index o in dX as num / den, den > 0.

struct Ratio {
    Int128 num, den;
};

Int128 floor_div(Int128 n, Int128 d) {
    const Int128 q = n / d;
    return (n % d != 0 && n < 0) ? q - 1 : q;
}

Ratio onnx_coordinate(OnnxCoordinateMode mode, int64_t in, int64_t out, int64_t o) {
    const Int128 i = in, n = out, x = o;
    const Ratio half_pixel{(2 * x + 1) * i - n, 2 * n};  // (o + 0.5) * in / out - 0.5
    switch (mode) {
        case OnnxCoordinateMode::half_pixel:
        case OnnxCoordinateMode::half_pixel_symmetric:  // its offset is 0 when the output size is given
            return half_pixel;
        case OnnxCoordinateMode::pytorch_half_pixel: return out > 1 ? half_pixel : Ratio{0, 1};
        case OnnxCoordinateMode::align_corners: return out > 1 ? Ratio{x * (i - 1), n - 1} : Ratio{0, 1};
        case OnnxCoordinateMode::asymmetric: return {x * i, n};
        case OnnxCoordinateMode::tf_half_pixel_for_nn: return {(2 * x + 1) * i, 2 * n};
    }
    return half_pixel;
}

Int128 onnx_round(OnnxNearestMode mode, Ratio u) {
    switch (mode) {
        case OnnxNearestMode::round_prefer_floor: return -floor_div(u.den - 2 * u.num, 2 * u.den);  // ceil(u - 1/2)
        case OnnxNearestMode::round_prefer_ceil: return floor_div(2 * u.num + u.den, 2 * u.den);    // floor(u + 1/2)
        case OnnxNearestMode::floor: return floor_div(u.num, u.den);
        case OnnxNearestMode::ceil: return -floor_div(-u.num, u.den);
    }
    return 0;
}

SourceTaps single(int64_t index) { return SourceTaps{1, {index, 0}, {1.0f, 0.0f}}; }

// ---------------------------------------------------------------------------------------------------------------
// PyTorch, as aten/src/ATen/native/UpSample.h computes it (compute_scales_value, area_pixel_compute_scale,
// area_pixel_compute_source_index, nearest_idx, nearest_exact_idx, compute_source_index_and_lambda): scales in
// float32. The expressions keep C++'s conversions of the original: an int64_t operand is converted to float, a
// double operand makes the operation double.

float torch_scale_value(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out) {
    if (!torch.scale_factors.empty()) {
        const double factor = torch.scale_factors[std::min(spatial, torch.scale_factors.size() - 1)];
        return static_cast<float>(1.0 / factor);
    }
    return static_cast<float>(in) / static_cast<float>(out);
}

float torch_linear_ratio(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out) {
    if (!torch.align_corners) return torch_scale_value(torch, spatial, in, out);
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
}

SourceTaps torch_nearest(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out, int64_t o) {
    const float scale = torch_scale_value(torch, spatial, in, out);
    if (torch.mode == TorchMode::nearest_exact) {
        const float product = static_cast<float>((static_cast<double>(o) + 0.5) * static_cast<double>(scale));
        return single(std::min(static_cast<int64_t>(std::floor(product)), in - 1));
    }
    if (out == in) return single(o);  // nearest_idx's special cases, whatever the scale factor
    if (out == 2 * in) return single(o >> 1);
    return single(std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1));
}

SourceTaps torch_linear(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out, int64_t o) {
    if (out == in) return single(o);  // compute_source_index_and_lambda copies, whatever the scale factor
    // The ratio is a float32; torch 1.13's CPU kernels then evaluate the source index in double and round lambda
    // to float32 once (every one-hot gradient of sizes 1-39, both align_corners settings, with and without scale
    // factors, agrees bit for bit with torch 1.13's autograd; a float32 source index does not).
    const double ratio = torch_linear_ratio(torch, spatial, in, out);
    const double real = torch.align_corners ? ratio * static_cast<double>(o)
                                            : std::max(ratio * (static_cast<double>(o) + 0.5) - 0.5, 0.0);
    const int64_t i0 = std::min(static_cast<int64_t>(real), in - 1);
    const int64_t i1 = i0 < in - 1 ? i0 + 1 : i0;
    const float lambda1 = static_cast<float>(std::min(std::max(real - static_cast<double>(i0), 0.0), 1.0));
    const float lambda0 = 1.0f - lambda1;
    if (i1 == i0) return SourceTaps{1, {i0, 0}, {lambda0 + lambda1, 0.0f}};  // both of PyTorch's taps, merged
    SourceTaps taps;
    if (lambda0 != 0.0f) taps.index[taps.count] = i0, taps.weight[taps.count++] = lambda0;
    if (lambda1 != 0.0f) taps.index[taps.count] = i1, taps.weight[taps.count++] = lambda1;
    return taps;
}

std::string_view torch_rank_rule(TorchMode mode) {
    switch (mode) {
        case TorchMode::linear: return "3-D (N, C, W)";
        case TorchMode::bilinear: return "4-D (N, C, H, W)";
        case TorchMode::trilinear: return "5-D (N, C, D, H, W)";
        default: return "3-D (N, C, W), 4-D (N, C, H, W) or 5-D (N, C, D, H, W)";
    }
}

// Channels-last data (N, ..., C) keeps N and the last axis and resizes the rest: the axes PyTorch wants first.
std::string channels_last_hint(const std::vector<int64_t>& dx, const std::vector<int64_t>& dy) {
    if (dx[0] != dy[0] || dx.back() != dy.back()) return "";
    std::string order = fmt::format("0, {}", dx.size() - 1);
    for (size_t d = 1; d + 1 < dx.size(); ++d) order += fmt::format(", {}", d);
    return fmt::format(
        "; the shapes fit channels-last data (N, spatial axes, C): PyTorch and dmlgrad take N, C first; "
        "transpose, e.g. x.transpose({})",
        order);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

InterpolationMode parse_interpolation_mode(std::string_view flag, std::string_view name) {
    if (auto mode = find_name(kInterpolationNames, name)) return *mode;
    if (name == "cubic")
        throw UsageError(fmt::format("{} cubic: not expressible: cubic interpolation uses 4 taps per axis; {}", flag,
                                     kNotExpressible));
    throw UsageError(fmt::format("{} {}: expected {}", flag, name, name_list(kInterpolationNames)));
}

OnnxCoordinateMode parse_onnx_coordinate_mode(std::string_view name) {
    if (auto mode = find_name(kOnnxCoordinateNames, name)) return *mode;
    if (name == "tf_crop_and_resize")
        throw UsageError(
            "--coordinate-transformation-mode tf_crop_and_resize: not expressible: it samples a region "
            "of interest (roi) and fills outside it with extrapolation_value, and resample-grad takes "
            "neither");
    throw UsageError(
        fmt::format("--coordinate-transformation-mode {}: expected {}", name, name_list(kOnnxCoordinateNames)));
}

OnnxNearestMode parse_onnx_nearest_mode(std::string_view name) {
    if (auto mode = find_name(kOnnxNearestNames, name)) return *mode;
    throw UsageError(fmt::format("--nearest-mode {}: expected {}", name, name_list(kOnnxNearestNames)));
}

TorchMode parse_torch_mode(std::string_view name) {
    if (auto mode = find_name(kTorchNames, name)) return *mode;
    if (name == "bicubic")
        throw UsageError(
            fmt::format("--torch-mode bicubic: not expressible: bicubic uses 4 taps per axis; {}", kNotExpressible));
    if (name == "area")
        throw UsageError(
            fmt::format("--torch-mode area: not expressible: area averages a box of about in/out pixels "
                        "per output (adaptive average pooling); {}",
                        kNotExpressible));
    throw UsageError(fmt::format("--torch-mode {}: expected {}", name, name_list(kTorchNames)));
}

std::string_view torch_mode_name(TorchMode mode) {
    for (const auto& [text, value] : kTorchNames)
        if (value == mode) return text;
    return "?";
}

InterpolationMode torch_interpolation(TorchMode mode) {
    return mode == TorchMode::nearest || mode == TorchMode::nearest_exact ? InterpolationMode::nearest
                                                                          : InterpolationMode::linear;
}

bool onnx_resamples_axis(size_t axis, size_t rank, int64_t in, int64_t out) {
    return rank <= 2 || axis >= 2 || in != out;
}

AxisParameters onnx_axis_parameters(const OnnxResize& onnx, int64_t in, int64_t out) {
    const float scale = static_cast<float>(out) / static_cast<float>(in);
    AxisParameters p;  // forward (InputPixelOffset, OutputPixelOffset) = grad (b, a)
    switch (onnx.coordinates) {
        case OnnxCoordinateMode::half_pixel:
        case OnnxCoordinateMode::half_pixel_symmetric: p = {scale, -0.5f, 0.5f}; break;
        case OnnxCoordinateMode::pytorch_half_pixel:
            p = out > 1 ? AxisParameters{scale, -0.5f, 0.5f} : AxisParameters{FLT_MAX, 0.0f, 0.0f};
            break;
        case OnnxCoordinateMode::align_corners:
            p = out > 1 && in > 1 ? AxisParameters{static_cast<float>(out - 1) / static_cast<float>(in - 1), 0, 0}
                                  : AxisParameters{FLT_MAX, 0.0f, 0.0f};
            break;
        case OnnxCoordinateMode::asymmetric: p = {scale, 0.0f, 0.0f}; break;
        case OnnxCoordinateMode::tf_half_pixel_for_nn: p = {scale, -0.5f, 0.0f}; break;
    }
    // Round to nearest as a shift of the coordinate by half a pixel (docs/OPERATORS.md 5.1).
    if (onnx.mode == InterpolationMode::nearest) {
        if (onnx.nearest == OnnxNearestMode::round_prefer_floor) p.output_pixel_offset += 0.5f;
        if (onnx.nearest == OnnxNearestMode::round_prefer_ceil) p.output_pixel_offset -= 0.5f;
    }
    return p;
}

RoundingDirection onnx_rounding(const OnnxResize& onnx) {
    if (onnx.mode == InterpolationMode::linear) return RoundingDirection::decreasing;
    return onnx.nearest == OnnxNearestMode::round_prefer_floor || onnx.nearest == OnnxNearestMode::ceil
               ? RoundingDirection::increasing
               : RoundingDirection::decreasing;
}

SourceTaps onnx_source_taps(const OnnxResize& onnx, int64_t in, int64_t out, int64_t o) {
    const Ratio u = onnx_coordinate(onnx.coordinates, in, out, o);
    const Int128 last = in - 1;
    if (onnx.mode == InterpolationMode::nearest)
        return single(int64_t(std::clamp(onnx_round(onnx.nearest, u), Int128(0), last)));
    // Linear: the coordinate clamped to [0, in - 1] (ONNX repeats the edge pixels), two neighbours.
    if (u.num <= 0) return single(0);
    const Int128 i0 = floor_div(u.num, u.den);
    if (i0 >= last) return single(in - 1);
    const Int128 rest = u.num - i0 * u.den;
    if (rest == 0) return single(int64_t(i0));
    const double den = double(u.den);
    return SourceTaps{2,
                      {int64_t(i0), int64_t(i0) + 1},
                      {static_cast<float>(double(u.den - rest) / den), static_cast<float>(double(rest) / den)}};
}

void require_torch_shapes(const TorchInterpolate& torch, const std::vector<int64_t>& dx,
                          const std::vector<int64_t>& dy) {
    const size_t rank = dy.size();
    const bool rank_ok = torch.mode == TorchMode::linear      ? rank == 3
                         : torch.mode == TorchMode::bilinear  ? rank == 4
                         : torch.mode == TorchMode::trilinear ? rank == 5
                                                              : rank >= 3 && rank <= 5;
    if (!rank_ok)
        throw UsageError(fmt::format("--torch-mode {}: takes {} tensors, and --input-gradient has rank {}",
                                     torch_mode_name(torch.mode), torch_rank_rule(torch.mode), rank));
    for (size_t d = 0; d < 2; ++d)
        if (dx[d] != dy[d])
            throw UsageError(
                fmt::format("--output-sizes: axis {} is {} and --input-gradient's is {}; PyTorch "
                            "resizes only the spatial axes (from axis 2 on){}",
                            d, dx[d], dy[d], channels_last_hint(dx, dy)));
    if (torch.align_corners && torch_interpolation(torch.mode) == InterpolationMode::nearest)
        throw UsageError(
            fmt::format("--align-corners: only with linear, bilinear or trilinear (PyTorch refuses it with {})",
                        torch_mode_name(torch.mode)));
    const size_t spatial = rank - 2;
    const std::vector<double>& factors = torch.scale_factors;
    if (factors.empty()) return;
    if (factors.size() != 1 && factors.size() != spatial)
        throw UsageError(
            fmt::format("--scale-factor: {} values; give 1 or one per spatial axis ({})", factors.size(), spatial));
    for (size_t s = 0; s < spatial; ++s) {
        const double factor = factors[std::min(s, factors.size() - 1)];
        if (!std::isfinite(factor) || factor <= 0.0)
            throw UsageError(fmt::format("--scale-factor: {} is invalid (must be finite and greater than 0)", factor));
        // PyTorch's output size: floor(input size * scale factor), in double.
        const double size = std::floor(static_cast<double>(dx[s + 2]) * factor);
        if (size != static_cast<double>(dy[s + 2]))
            throw UsageError(
                fmt::format("--scale-factor: {} makes axis {} of size {} into {} (floor of the product), "
                            "and --input-gradient has {}",
                            factor, s + 2, dx[s + 2], size, dy[s + 2]));
    }
}

AxisParameters torch_axis_parameters(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out) {
    const std::vector<double>& factors = torch.scale_factors;
    const float scale = factors.empty() ? static_cast<float>(out) / static_cast<float>(in)
                                        : static_cast<float>(factors[std::min(spatial, factors.size() - 1)]);
    switch (torch.mode) {
        case TorchMode::nearest: return {scale, 0.0f, 0.0f};
        case TorchMode::nearest_exact: return {scale, -0.5f, 0.0f};
        case TorchMode::linear:
        case TorchMode::bilinear:
        case TorchMode::trilinear:
            if (!torch.align_corners) return {scale, -0.5f, 0.5f};
            if (in > 1 && out > 1) return {static_cast<float>(out - 1) / static_cast<float>(in - 1), 0.0f, 0.0f};
            return {FLT_MAX, 0.0f, 0.0f};
    }
    return {};
}

SourceTaps torch_source_taps(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out, int64_t o) {
    return torch_interpolation(torch.mode) == InterpolationMode::nearest ? torch_nearest(torch, spatial, in, out, o)
                                                                         : torch_linear(torch, spatial, in, out, o);
}

}  // namespace dmlgrad
