#pragma once
// The frameworks' words for a resample, ONNX Resize and PyTorch's F.interpolate, turned into DirectML's resample
// parameters and into each framework's own source-pixel rule (docs/OPERATORS.md 5.7).
//
// Coordinates here are in the grad's R-swap convention (docs/OPERATORS.md 5.3): the axis maps dY index o (the
// forward output) to a coordinate in dX (the forward input). "in" is the dX size, "out" the dY size.
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace dmlgrad {

enum class InterpolationMode { nearest, linear };
enum class RoundingDirection { decreasing, increasing };

enum class OnnxCoordinateMode {
    half_pixel,
    pytorch_half_pixel,
    align_corners,
    asymmetric,
    tf_half_pixel_for_nn,
    half_pixel_symmetric,
};
enum class OnnxNearestMode { round_prefer_floor, round_prefer_ceil, floor, ceil };

// ONNX Resize with output sizes (no scales input, no roi); defaults as in ONNX.
struct OnnxResize {
    InterpolationMode mode = InterpolationMode::nearest;
    OnnxCoordinateMode coordinates = OnnxCoordinateMode::half_pixel;
    OnnxNearestMode nearest = OnnxNearestMode::round_prefer_floor;
};

enum class TorchMode { nearest, nearest_exact, linear, bilinear, trilinear };

// torch.nn.functional.interpolate; scale_factors empty means `size=` was given, one value applies to every
// spatial axis (recompute_scale_factor is not set).
struct TorchInterpolate {
    TorchMode mode = TorchMode::nearest;
    bool align_corners = false;
    std::vector<double> scale_factors;
};

// Raw DirectML parameters (no framework), an ONNX Resize or a PyTorch interpolate.
using ResampleFramework = std::variant<std::monostate, OnnxResize, TorchInterpolate>;

// The flags' words. A framework mode that DirectML's resample cannot express is a UsageError saying why.
InterpolationMode parse_interpolation_mode(std::string_view flag, std::string_view name);
OnnxCoordinateMode parse_onnx_coordinate_mode(std::string_view name);
OnnxNearestMode parse_onnx_nearest_mode(std::string_view name);
TorchMode parse_torch_mode(std::string_view name);
std::string_view torch_mode_name(TorchMode mode);
InterpolationMode torch_interpolation(TorchMode mode);

// DirectML's parameters for one axis of the grad (R-swap): Scales, InputPixelOffsets, OutputPixelOffsets.
struct AxisParameters {
    float scale = 1.0f;
    float input_pixel_offset = 0.0f;
    float output_pixel_offset = 0.0f;
};

// At most two (dX index, weight) taps of one dY index along one axis, in increasing dX index, none of weight 0.
struct SourceTaps {
    int count = 0;
    int64_t index[2] = {0, 0};
    float weight[2] = {0.0f, 0.0f};
};

// Which axes a framework resamples: the spatial ones (all but N and C from rank 3 on, every axis below), and for
// ONNX also any other axis whose sizes differ. The rest are the identity.
bool onnx_resamples_axis(size_t axis, size_t rank, int64_t in, int64_t out);
// `first_spatial` is 2, or 1 where a 5-D volume's N and C are folded into one axis (resample_grad.cpp).
inline bool torch_resamples_axis(size_t axis, size_t first_spatial = 2) { return axis >= first_spatial; }

// ONNX: DirectML's equivalent (onnxruntime's DirectML mapping, with ONNX's own rule for an output of length 1)
// and the exact taps. DirectML evaluates its formula in float32, which can land on the other neighbour where the
// real coordinate is exactly an integer or a half; the taps follow ONNX's formula in exact rational arithmetic.
AxisParameters onnx_axis_parameters(const OnnxResize& onnx, int64_t in, int64_t out);
RoundingDirection onnx_rounding(const OnnxResize& onnx);
SourceTaps onnx_source_taps(const OnnxResize& onnx, int64_t in, int64_t out, int64_t o);

// PyTorch: the shapes it accepts (UsageError otherwise), DirectML's equivalent in real arithmetic, and the taps
// computed as torch 1.13's CPU kernels do (aten/src/ATen/native/UpSample.h). `spatial` counts the spatial axes
// from 0.
void require_torch_shapes(const TorchInterpolate& torch, const std::vector<int64_t>& dx,
                          const std::vector<int64_t>& dy);
AxisParameters torch_axis_parameters(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out);
SourceTaps torch_source_taps(const TorchInterpolate& torch, size_t spatial, int64_t in, int64_t out, int64_t o);

}  // namespace dmlgrad
