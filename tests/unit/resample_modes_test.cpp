// Resample grad in the frameworks' words (ops/resample_modes): the translation of every ONNX and PyTorch mode into
// DirectML's parameters, their own tap rules on hand-checked cases, the errors, the tap tables' invariants that the
// GPU relies on, and every case of tests/data/resample_vectors.txt (PyTorch autograd, ONNX's formulas) on the CPU.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <map>

#include "core/error.h"
#include "cpu/kernels.h"
#include "ops/resample_grad.h"
#include "support/resample_vectors.h"
#include "support/tensor_testing.h"
#include "support/validation_testing.h"

namespace dmlgrad {
namespace {

using testing::expect_usage_error;
using testing::tensor_from;
using testing::to_doubles;

constexpr auto kNearest = InterpolationMode::nearest;
constexpr auto kLinear = InterpolationMode::linear;
constexpr auto kDecreasing = RoundingDirection::decreasing;
constexpr auto kIncreasing = RoundingDirection::increasing;

// The dX index (nearest) each dY index of one axis takes.
std::vector<int64_t> nearest_sources(const std::function<SourceTaps(int64_t)>& taps_of, int64_t out) {
    std::vector<int64_t> sources;
    for (int64_t o = 0; o < out; ++o) {
        const SourceTaps t = taps_of(o);
        EXPECT_EQ(t.count, 1);
        EXPECT_EQ(t.weight[0], 1.0f);
        sources.push_back(t.index[0]);
    }
    return sources;
}

std::vector<int64_t> onnx_sources(OnnxCoordinateMode coordinates, OnnxNearestMode nearest, int64_t in, int64_t out) {
    const OnnxResize onnx{kNearest, coordinates, nearest};
    return nearest_sources([&](int64_t o) { return onnx_source_taps(onnx, in, out, o); }, out);
}

std::vector<int64_t> torch_sources(TorchMode mode, int64_t in, int64_t out, std::vector<double> factors = {}) {
    const TorchInterpolate torch{mode, false, std::move(factors)};
    return nearest_sources([&](int64_t o) { return torch_source_taps(torch, 0, in, out, o); }, out);
}

// The nearest sources under DirectML's float32 formula with the given parameters.
std::vector<int64_t> directml_sources(RoundingDirection rounding, int64_t in, int64_t out, AxisParameters p) {
    const AxisTaps taps =
        build_axis_taps(kNearest, rounding, in, out, p.scale, p.input_pixel_offset, p.output_pixel_offset);
    std::vector<int64_t> sources(size_t(out), -1);
    for (int64_t i = 0; i < in; ++i)
        for (uint32_t t = taps.begin[size_t(i)]; t < taps.begin[size_t(i) + 1]; ++t) sources[taps.dy_index[t]] = i;
    return sources;
}

// Per dY index, the weight each dX index gets (a sparse row of the forward matrix).
using Rows = std::vector<std::map<int64_t, double>>;
Rows rows_of(const AxisTaps& taps, int64_t in, int64_t out) {
    Rows rows(static_cast<size_t>(out));
    for (int64_t i = 0; i < in; ++i)
        for (uint32_t t = taps.begin[size_t(i)]; t < taps.begin[size_t(i) + 1]; ++t)
            rows[taps.dy_index[t]][i] += taps.weight[t];
    return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// ONNX

TEST(ResampleModesOnnx, ParametersOfEveryCoordinateMode) {
    const OnnxResize linear{kLinear, OnnxCoordinateMode::half_pixel, OnnxNearestMode::round_prefer_floor};
    auto params = [&](OnnxCoordinateMode c, int64_t in, int64_t out) {
        OnnxResize onnx = linear;
        onnx.coordinates = c;
        return onnx_axis_parameters(onnx, in, out);
    };
    auto expect = [](AxisParameters p, float scale, float a, float b) {
        EXPECT_EQ(p.scale, scale);
        EXPECT_EQ(p.input_pixel_offset, a);
        EXPECT_EQ(p.output_pixel_offset, b);
    };
    // Grad parameters (R-swap): forward (InputPixelOffset, OutputPixelOffset) = grad (b, a).
    expect(params(OnnxCoordinateMode::half_pixel, 4, 8), 2.0f, -0.5f, 0.5f);
    expect(params(OnnxCoordinateMode::half_pixel_symmetric, 4, 6), 1.5f, -0.5f, 0.5f);
    expect(params(OnnxCoordinateMode::pytorch_half_pixel, 4, 8), 2.0f, -0.5f, 0.5f);
    expect(params(OnnxCoordinateMode::pytorch_half_pixel, 4, 1), FLT_MAX, 0.0f, 0.0f);  // ONNX: coordinate 0
    expect(params(OnnxCoordinateMode::align_corners, 3, 5), 2.0f, 0.0f, 0.0f);          // (5 - 1) / (3 - 1)
    expect(params(OnnxCoordinateMode::align_corners, 3, 1), FLT_MAX, 0.0f, 0.0f);
    expect(params(OnnxCoordinateMode::align_corners, 1, 3), FLT_MAX, 0.0f, 0.0f);
    expect(params(OnnxCoordinateMode::asymmetric, 4, 2), 0.5f, 0.0f, 0.0f);
    expect(params(OnnxCoordinateMode::tf_half_pixel_for_nn, 2, 8), 4.0f, -0.5f, 0.0f);
    EXPECT_EQ(onnx_rounding(linear), kDecreasing);
}

TEST(ResampleModesOnnx, NearestModesShiftTheOutputOffsetAndPickTheDirection) {
    const struct {
        OnnxNearestMode mode;
        RoundingDirection rounding;
        float shift;
    } table[] = {{OnnxNearestMode::round_prefer_floor, kIncreasing, 0.5f},
                 {OnnxNearestMode::round_prefer_ceil, kDecreasing, -0.5f},
                 {OnnxNearestMode::floor, kDecreasing, 0.0f},
                 {OnnxNearestMode::ceil, kIncreasing, 0.0f}};
    for (const auto& row : table) {
        const OnnxResize onnx{kNearest, OnnxCoordinateMode::asymmetric, row.mode};
        EXPECT_EQ(onnx_rounding(onnx), row.rounding);
        EXPECT_EQ(onnx_axis_parameters(onnx, 3, 6).output_pixel_offset, row.shift);
        const OnnxResize half{kNearest, OnnxCoordinateMode::half_pixel, row.mode};
        EXPECT_EQ(onnx_axis_parameters(half, 3, 6).output_pixel_offset, 0.5f + row.shift);
    }
}

TEST(ResampleModesOnnx, HandCheckedNearestSources) {
    using C = OnnxCoordinateMode;
    using N = OnnxNearestMode;
    // docs/OPERATORS.md 5.6, scale 2, dX 3: asymmetric x = o / 2; ties at odd o.
    EXPECT_EQ(onnx_sources(C::asymmetric, N::round_prefer_floor, 3, 6), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(onnx_sources(C::asymmetric, N::round_prefer_ceil, 3, 6), (std::vector<int64_t>{0, 1, 1, 2, 2, 2}));
    EXPECT_EQ(onnx_sources(C::asymmetric, N::floor, 3, 6), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(onnx_sources(C::asymmetric, N::ceil, 3, 6), (std::vector<int64_t>{0, 1, 1, 2, 2, 2}));
    // half_pixel 2 -> 4: x = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25.
    EXPECT_EQ(onnx_sources(C::half_pixel, N::round_prefer_ceil, 2, 4), (std::vector<int64_t>{0, 0, 1, 1}));
    EXPECT_EQ(onnx_sources(C::half_pixel, N::floor, 2, 4), (std::vector<int64_t>{0, 0, 0, 1}));  // floor(-0.25) clamps
    EXPECT_EQ(onnx_sources(C::half_pixel, N::ceil, 2, 4), (std::vector<int64_t>{0, 1, 1, 1}));   // ceil(1.25) clamps
    // tf_half_pixel_for_nn 2 -> 4: x = (o + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75.
    EXPECT_EQ(onnx_sources(C::tf_half_pixel_for_nn, N::round_prefer_floor, 2, 4), (std::vector<int64_t>{0, 1, 1, 1}));
    // align_corners 3 -> 5: x = o / 2 with ties at odd o; 3 -> 1: x = 0.
    EXPECT_EQ(onnx_sources(C::align_corners, N::round_prefer_floor, 3, 5), (std::vector<int64_t>{0, 0, 1, 1, 2}));
    EXPECT_EQ(onnx_sources(C::align_corners, N::round_prefer_ceil, 3, 1), (std::vector<int64_t>{0}));
    // pytorch_half_pixel to length 1 samples 0, where half_pixel samples the centre.
    EXPECT_EQ(onnx_sources(C::pytorch_half_pixel, N::round_prefer_floor, 5, 1), (std::vector<int64_t>{0}));
    EXPECT_EQ(onnx_sources(C::half_pixel, N::round_prefer_floor, 5, 1), (std::vector<int64_t>{2}));
    // half_pixel_symmetric with the output size given is half_pixel.
    EXPECT_EQ(onnx_sources(C::half_pixel_symmetric, N::floor, 7, 3), onnx_sources(C::half_pixel, N::floor, 7, 3));
}

TEST(ResampleModesOnnx, ExactTieWhereDirectMLsFloatFormulaRoundsTheOtherWay) {
    // asymmetric 7 -> 2: x(1) = 3.5 exactly. ONNX: round_prefer_ceil 4, round_prefer_floor 3. DirectML divides by
    // float32(2/7) and lands on 3.4999998 + 0.5, which floors to 3.
    const OnnxResize ceil_mode{kNearest, OnnxCoordinateMode::asymmetric, OnnxNearestMode::round_prefer_ceil};
    EXPECT_EQ(onnx_sources(ceil_mode.coordinates, ceil_mode.nearest, 7, 2), (std::vector<int64_t>{0, 4}));
    EXPECT_EQ(onnx_sources(ceil_mode.coordinates, OnnxNearestMode::round_prefer_floor, 7, 2),
              (std::vector<int64_t>{0, 3}));
    EXPECT_EQ(directml_sources(onnx_rounding(ceil_mode), 7, 2, onnx_axis_parameters(ceil_mode, 7, 2)),
              (std::vector<int64_t>{0, 3}));
}

TEST(ResampleModesOnnx, HandCheckedLinearTaps) {
    // docs/OPERATORS.md 5.6: half_pixel 2 -> 4, dY = 1, 2, 3, 4 gives dX = 3.25, 6.75.
    ResampleGradDesc desc;
    desc.output_sizes = {2};
    desc.framework = OnnxResize{kLinear, OnnxCoordinateMode::half_pixel, OnnxNearestMode::round_prefer_floor};
    const Tensor dy = tensor_from(DType::f32, {4}, {1, 2, 3, 4});
    const ResampleGradPlan plan = plan_resample_grad(desc, {"--input-gradient", "dy.npy", dy.info});
    Tensor dx(TensorInfo{DType::f32, {2}});
    cpu::resample_grad(plan, dy, dx);
    EXPECT_EQ(to_doubles(dx), (std::vector<double>{3.25, 6.75}));
    // align_corners 3 -> 4: x = 2o/3 = 0, 2/3, 4/3, 2: weights 1/3, 2/3 rounded once each.
    const OnnxResize corners{kLinear, OnnxCoordinateMode::align_corners, OnnxNearestMode::round_prefer_floor};
    const SourceTaps t = onnx_source_taps(corners, 3, 4, 1);
    ASSERT_EQ(t.count, 2);
    EXPECT_EQ(t.index[0], 0);
    EXPECT_EQ(t.weight[0], 1.0f / 3.0f);
    EXPECT_EQ(t.weight[1], 2.0f / 3.0f);
    EXPECT_EQ(onnx_source_taps(corners, 3, 4, 3).count, 1);  // x = 2 exactly: one tap
}

// Wherever float32 is not at a rounding boundary, DirectML's formula with the translated parameters picks the
// same taps as ONNX's exact formula: a check of the translation for every mode over all sizes up to 16.
TEST(ResampleModesOnnx, TranslatedParametersAgreeWithTheExactFormulaAwayFromTies) {
    const OnnxCoordinateMode coordinates[] = {
        OnnxCoordinateMode::half_pixel,           OnnxCoordinateMode::pytorch_half_pixel,
        OnnxCoordinateMode::align_corners,        OnnxCoordinateMode::asymmetric,
        OnnxCoordinateMode::tf_half_pixel_for_nn, OnnxCoordinateMode::half_pixel_symmetric};
    std::vector<OnnxResize> modes;
    for (OnnxCoordinateMode c : coordinates) {
        for (OnnxNearestMode n : {OnnxNearestMode::round_prefer_floor, OnnxNearestMode::round_prefer_ceil,
                                  OnnxNearestMode::floor, OnnxNearestMode::ceil})
            modes.push_back({kNearest, c, n});
        modes.push_back({kLinear, c, OnnxNearestMode::round_prefer_floor});
    }
    int compared = 0, ties = 0;
    for (const OnnxResize& onnx : modes)
        for (int64_t in = 1; in <= 16; ++in)
            for (int64_t out = 1; out <= 16; ++out) {
                const AxisParameters p = onnx_axis_parameters(onnx, in, out);
                const Rows dml = rows_of(build_axis_taps(onnx.mode, onnx_rounding(onnx), in, out, p.scale,
                                                         p.input_pixel_offset, p.output_pixel_offset),
                                         in, out);
                for (int64_t o = 0; o < out; ++o) {
                    const SourceTaps exact = onnx_source_taps(onnx, in, out, o);
                    std::map<int64_t, double> row;
                    for (int t = 0; t < exact.count; ++t) row[exact.index[t]] += exact.weight[t];
                    if (onnx.mode == kNearest && row != dml[size_t(o)]) {
                        // Only a tie may differ: the DirectML coordinate is then within float32 rounding of x.5 or x.0.
                        const double u = (double(o) - p.input_pixel_offset) / double(p.scale) - p.output_pixel_offset;
                        EXPECT_LT(std::abs(u - std::round(u)), 1e-5) << in << "->" << out << " o " << o;
                        ++ties;
                        continue;
                    }
                    const auto& got = dml[size_t(o)];
                    for (const auto& [i, w] : row) EXPECT_NEAR(got.count(i) ? got.at(i) : 0.0, w, 1e-5);
                    ++compared;
                }
            }
    EXPECT_GT(compared, 30000);
    EXPECT_GT(ties, 0);  // the exact rule is needed
}

// ---------------------------------------------------------------------------------------------------------------
// PyTorch

TEST(ResampleModesTorch, ParametersOfEveryMode) {
    auto expect = [](AxisParameters p, float scale, float a, float b) {
        EXPECT_EQ(p.scale, scale);
        EXPECT_EQ(p.input_pixel_offset, a);
        EXPECT_EQ(p.output_pixel_offset, b);
    };
    expect(torch_axis_parameters({TorchMode::nearest, false, {}}, 0, 4, 8), 2.0f, 0.0f, 0.0f);
    expect(torch_axis_parameters({TorchMode::nearest_exact, false, {}}, 0, 4, 2), 0.5f, -0.5f, 0.0f);
    expect(torch_axis_parameters({TorchMode::linear, false, {}}, 0, 4, 6), 1.5f, -0.5f, 0.5f);
    expect(torch_axis_parameters({TorchMode::bilinear, true, {}}, 1, 3, 5), 2.0f, 0.0f, 0.0f);
    expect(torch_axis_parameters({TorchMode::bilinear, true, {}}, 0, 3, 1), FLT_MAX, 0.0f, 0.0f);
    // scale_factor is the scale: 5 -> 7 with 1.5, and the second of two factors for the second spatial axis.
    expect(torch_axis_parameters({TorchMode::linear, false, {1.5}}, 0, 5, 7), 1.5f, -0.5f, 0.5f);
    expect(torch_axis_parameters({TorchMode::nearest, false, {2.0, 0.5}}, 1, 4, 2), 0.5f, 0.0f, 0.0f);
}

TEST(ResampleModesTorch, NearestMultipliesByInOverOutInFloat32) {
    // 14 -> 2: PyTorch floor(1 * float(14/2)) = 7; DirectML's 1 / float(2/14) = 6.9999995 floors to 6.
    EXPECT_EQ(torch_sources(TorchMode::nearest, 14, 2), (std::vector<int64_t>{0, 7}));
    EXPECT_EQ(directml_sources(kDecreasing, 14, 2, torch_axis_parameters({TorchMode::nearest, false, {}}, 0, 14, 2)),
              (std::vector<int64_t>{0, 6}));
    // nearest-exact: floor((o + 0.5) * in / out): 4 -> 3 gives 0.67, 2, 3.33.
    EXPECT_EQ(torch_sources(TorchMode::nearest_exact, 4, 3), (std::vector<int64_t>{0, 2, 3}));
    EXPECT_EQ(torch_sources(TorchMode::nearest, 4, 3), (std::vector<int64_t>{0, 1, 2}));  // floor(o * 1.33)
}

TEST(ResampleModesTorch, NearestSpecialCasesIgnoreTheScaleFactor) {
    // nearest_idx copies when the sizes are equal and halves when the output is twice the input, whatever the
    // factor: 3 -> 6 with 2.1 (not floor(o / 2.1) = 0, 0, 0, 1, 1, 2) and 3 -> 3 with 1.2.
    EXPECT_EQ(torch_sources(TorchMode::nearest, 3, 6, {2.1}), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(torch_sources(TorchMode::nearest, 3, 3, {1.2}), (std::vector<int64_t>{0, 1, 2}));
    // Otherwise the factor replaces in/out: 4 -> 6 with 1.7 is floor(o / 1.7), 4 -> 6 by size floor(o * 4/6).
    EXPECT_EQ(torch_sources(TorchMode::nearest, 4, 6, {1.7}), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(torch_sources(TorchMode::nearest, 4, 6), (std::vector<int64_t>{0, 0, 1, 2, 2, 3}));
    // nearest-exact has no special case: floor((o + 0.5) * float(1 / 1.5)) for 5 -> 7.
    EXPECT_EQ(torch_sources(TorchMode::nearest_exact, 5, 7, {1.5}), (std::vector<int64_t>{0, 1, 1, 2, 3, 3, 4}));
}

TEST(ResampleModesTorch, LinearClampsNegativeSourcesAndMergesTheLastPixel) {
    const TorchInterpolate linear{TorchMode::linear, false, {}};
    // 2 -> 4: src = (o + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (both taps on pixel 1).
    SourceTaps t = torch_source_taps(linear, 0, 2, 4, 0);
    EXPECT_EQ(t.count, 1);
    EXPECT_EQ(t.index[0], 0);
    EXPECT_EQ(t.weight[0], 1.0f);
    t = torch_source_taps(linear, 0, 2, 4, 1);
    ASSERT_EQ(t.count, 2);
    EXPECT_EQ(t.weight[0], 0.75f);
    EXPECT_EQ(t.weight[1], 0.25f);
    t = torch_source_taps(linear, 0, 2, 4, 3);
    ASSERT_EQ(t.count, 1);
    EXPECT_EQ(t.index[0], 1);
    EXPECT_EQ(t.weight[0], 1.0f);  // 0.75 + 0.25
    // align_corners 3 -> 5: src = o / 2: 0, 0.5, 1, 1.5, 2.
    const TorchInterpolate corners{TorchMode::linear, true, {}};
    t = torch_source_taps(corners, 0, 3, 5, 3);
    ASSERT_EQ(t.count, 2);
    EXPECT_EQ(t.index[0], 1);
    EXPECT_EQ(t.weight[0], 0.5f);
    EXPECT_EQ(torch_source_taps(corners, 0, 3, 5, 4).count, 1);
    // Equal sizes copy, even with a scale factor that would say otherwise.
    t = torch_source_taps({TorchMode::linear, false, {1.2}}, 0, 3, 3, 2);
    EXPECT_EQ(t.count, 1);
    EXPECT_EQ(t.index[0], 2);
}

TEST(ResampleModesTorch, PlanResamplesOnlyTheSpatialAxes) {
    ResampleGradDesc desc;
    desc.output_sizes = {2, 3, 4, 5};
    desc.framework = TorchInterpolate{TorchMode::bilinear, false, {}};
    const ResampleGradPlan plan = plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f32, {2, 3, 8, 10}}});
    EXPECT_EQ(plan.mode, kLinear);
    EXPECT_EQ(plan.tap_rule, TapRule::pytorch);
    EXPECT_EQ(plan.scales, (std::vector<float>{1, 1, 2, 2}));
    EXPECT_EQ(plan.input_pixel_offsets, (std::vector<float>{0, 0, -0.5f, -0.5f}));
    EXPECT_EQ(plan.output_pixel_offsets, (std::vector<float>{0, 0, 0.5f, 0.5f}));
    EXPECT_EQ(plan.axes[0].begin, (std::vector<uint32_t>{0, 1, 2}));  // N and C: the identity
    EXPECT_EQ(plan.axes[1].begin, (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(plan.axes[1].dy_index, (std::vector<uint32_t>{0, 1, 2}));
    const auto params = resolved_parameters(plan);
    const std::vector<std::pair<std::string, std::string>> want = {
        {"interpolation_mode", "linear"},         {"rounding_direction", "decreasing"},    {"scales", "1,1,2,2"},
        {"input_pixel_offsets", "0,0,-0.5,-0.5"}, {"output_pixel_offsets", "0,0,0.5,0.5"}, {"taps", "pytorch"}};
    EXPECT_EQ(params, want);
}

TEST(ResampleModesOnnx, PlanKeepsEqualBatchAndChannelAxesAndResamplesOthers) {
    ResampleGradDesc desc;
    desc.output_sizes = {2, 3, 4};
    desc.framework = OnnxResize{kNearest, OnnxCoordinateMode::asymmetric, OnnxNearestMode::floor};
    // Axis 0 equal (identity), axis 1 differs (resampled: x = o * 3 / 6), axis 2 spatial.
    const ResampleGradPlan plan = plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f32, {2, 6, 2}}});
    EXPECT_EQ(plan.tap_rule, TapRule::onnx);
    EXPECT_EQ(plan.scales, (std::vector<float>{1, 2, 0.5f}));
    EXPECT_EQ(plan.axes[1].begin, (std::vector<uint32_t>{0, 2, 4, 6}));
    EXPECT_EQ(plan.axes[2].begin, (std::vector<uint32_t>{0, 1, 1, 2, 2}));  // x = 2o: sources 0, 2
    EXPECT_EQ(resolved_parameters(plan).back(), (std::pair<std::string, std::string>{"taps", "onnx"}));
    // Rank 2: every axis is spatial, also where the sizes are equal (tf_half_pixel_for_nn then shifts).
    desc.output_sizes = {3, 3};
    desc.framework = OnnxResize{kNearest, OnnxCoordinateMode::tf_half_pixel_for_nn, OnnxNearestMode::round_prefer_ceil};
    const ResampleGradPlan shifted = plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f32, {3, 3}}});
    EXPECT_EQ(shifted.axes[0].begin, (std::vector<uint32_t>{0, 0, 1, 3}));  // floor(o + 1): 1, 2, 3 -> 2
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

TEST(ResampleModesErrors, NamesAndModesDirectMLCannotExpress) {
    expect_usage_error([] { parse_torch_mode("bicubic"); }, {"--torch-mode bicubic", "not expressible", "4 taps"});
    expect_usage_error([] { parse_torch_mode("area"); }, {"--torch-mode area", "not expressible"});
    expect_usage_error([] { parse_torch_mode("nearest_exact"); }, {"--torch-mode nearest_exact", "nearest-exact"});
    expect_usage_error([] { parse_interpolation_mode("--interpolation-mode", "cubic"); },
                       {"--interpolation-mode cubic", "not expressible"});
    expect_usage_error([] { parse_interpolation_mode("--interpolation-mode", "bilinear"); },
                       {"--interpolation-mode bilinear", "nearest or linear"});
    expect_usage_error([] { parse_onnx_coordinate_mode("tf_crop_and_resize"); },
                       {"tf_crop_and_resize", "not expressible", "roi"});
    expect_usage_error([] { parse_onnx_coordinate_mode("half-pixel"); },
                       {"--coordinate-transformation-mode half-pixel", "half_pixel_symmetric"});
    expect_usage_error([] { parse_onnx_nearest_mode("round"); }, {"--nearest-mode round", "round_prefer_floor"});
}

TEST(ResampleModesErrors, TorchShapesAndScaleFactors) {
    auto plan = [](TorchInterpolate torch, Shape dx, Shape dy) {
        ResampleGradDesc desc;
        desc.output_sizes = std::move(dx);
        desc.framework = std::move(torch);
        plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f32, std::move(dy)}});
    };
    expect_usage_error(
        [&] {
            plan({TorchMode::bilinear, false, {}}, {1, 1, 4}, {1, 1, 8});
        },
        {"--torch-mode bilinear", "4-D", "rank 3"});
    expect_usage_error(
        [&] {
            plan({TorchMode::linear, false, {}}, {1, 1, 4, 4}, {1, 1, 8, 8});
        },
        {"--torch-mode linear", "3-D", "rank 4"});
    expect_usage_error(
        [&] {
            plan({TorchMode::nearest, false, {}}, {4, 4}, {8, 8});
        },
        {"--torch-mode nearest", "rank 2"});
    expect_usage_error(
        [&] {
            plan({TorchMode::nearest, false, {}}, {1, 2, 4}, {1, 3, 8});
        },
        {"--output-sizes", "axis 1", "spatial"});
    expect_usage_error(
        [&] {
            plan({TorchMode::nearest_exact, true, {}}, {1, 1, 4}, {1, 1, 8});
        },
        {"--align-corners", "linear, bilinear or trilinear"});
    expect_usage_error(
        [&] {
            plan({TorchMode::bilinear, false, {2, 2, 2}}, {1, 1, 4, 4}, {1, 1, 8, 8});
        },
        {"--scale-factor", "3 values", "one per spatial axis (2)"});
    expect_usage_error(
        [&] {
            plan({TorchMode::linear, false, {1.5}}, {1, 1, 5}, {1, 1, 8});
        },
        {"--scale-factor", "into 7", "has 8"});
    expect_usage_error(
        [&] {
            plan({TorchMode::linear, false, {0.0}}, {1, 1, 5}, {1, 1, 8});
        },
        {"--scale-factor", "greater than 0"});
    expect_usage_error(
        [&] {
            plan({TorchMode::trilinear, false, {}}, {1, 1, 4, 4}, {1, 1, 8, 8});
        },
        {"--torch-mode trilinear", "5-D (N, C, D, H, W)", "rank 4"});
    expect_usage_error(
        [&] {
            plan({TorchMode::nearest, false, {}}, {1, 1, 1, 4, 4, 4}, {1, 1, 1, 8, 8, 8});
        },
        {"rank 6", "1 to 5"});
    plan({TorchMode::bilinear, false, {1.5, 2}}, {1, 1, 5, 4}, {1, 1, 7, 8});  // floor(5 * 1.5) = 7
}

// ---------------------------------------------------------------------------------------------------------------
// The vectors, and the tables' invariants the GPU kernels rely on (gpu/ops/resample_geometry.cpp): each dX
// index's taps are consecutive dY indices, and the first and last of them never decrease with the dX index.

::testing::AssertionResult tables_are_monotonic_and_contiguous(const ResampleGradPlan& plan) {
    for (size_t d = 0; d < plan.axes.size(); ++d) {
        const AxisTaps& taps = plan.axes[d];
        int64_t first = -1, last = -1;
        for (size_t i = 0; i + 1 < taps.begin.size(); ++i) {
            if (taps.begin[i] == taps.begin[i + 1]) continue;
            for (uint32_t t = taps.begin[i] + 1; t < taps.begin[i + 1]; ++t)
                if (taps.dy_index[t] != taps.dy_index[t - 1] + 1)
                    return ::testing::AssertionFailure() << "axis " << d << " dX " << i << ": taps not contiguous";
            const int64_t f = taps.dy_index[taps.begin[i]], l = taps.dy_index[taps.begin[i + 1] - 1];
            if (f < first || l < last)
                return ::testing::AssertionFailure() << "axis " << d << " dX " << i << ": taps move backwards";
            first = f, last = l;
        }
    }
    return ::testing::AssertionSuccess();
}

TEST(ResampleModesVectors, EveryCaseMatchesPyTorchAutogradOrOnnxOnTheCpu) {
    const std::string path = std::string(DMLGRAD_TEST_DATA) + "/resample_vectors.txt";
    const auto cases = testing::read_resample_vectors(path);
    size_t checked = 0, torch = 0;
    for (const auto& v : cases) {
        SCOPED_TRACE(v.describe());
        const Tensor dy = tensor_from(DType::f32, v.dy_shape, v.dy);
        const ResampleGradPlan plan = plan_resample_grad(v.desc(), {"--input-gradient", "dy.npy", dy.info});
        EXPECT_TRUE(tables_are_monotonic_and_contiguous(plan));
        Tensor dx(TensorInfo{DType::f32, v.dx_shape});
        testing::poison(dx);
        cpu::resample_grad(plan, dy, dx);
        std::vector<double> abs_dy = v.dy;
        for (double& x : abs_dy) x = std::abs(x);
        Tensor magnitude(TensorInfo{DType::f32, v.dx_shape});
        cpu::resample_grad(plan, tensor_from(DType::f32, v.dy_shape, abs_dy), magnitude);
        if (testing::matches_vector(v, to_doubles(dx), to_doubles(magnitude)))
            ++checked;
        else
            ADD_FAILURE() << testing::matches_vector(v, to_doubles(dx), to_doubles(magnitude)).message();
        torch += v.torch;
    }
    std::cout << "resample vectors: " << checked << " of " << cases.size() << " cases match (" << torch << " PyTorch, "
              << cases.size() - torch << " ONNX)\n";
    EXPECT_EQ(cases.size(), testing::resample_vector_lines(path));
    EXPECT_EQ(checked, cases.size());
    EXPECT_GT(torch, 100u);
    EXPECT_GT(cases.size() - torch, 100u);
}

}  // namespace
}  // namespace dmlgrad
