// Resample grad: validation, plan and tap tables (ops/resample_grad), the CPU reference (cpu/resample_grad) against
// docs/OPERATORS.md's worked examples, a naive scatter transcribed from docs/OPERATORS.md 5.2/5.4, a forward resample
// (adjointness) and the documented order of additions.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "cpu/kernels.h"
#include "ops/resample_grad.h"
#include "support/tensor_testing.h"
#include "support/validation_testing.h"

namespace dmlgrad {
namespace {

using testing::expect_usage_error;
using testing::operand;
using testing::poison;
using testing::random_small_integers;
using testing::random_tensor;
using testing::tensor_from;
using testing::tensor_from_bits;
using testing::to_doubles;

constexpr auto kNearest = InterpolationMode::nearest;
constexpr auto kLinear = InterpolationMode::linear;
constexpr auto kDecreasing = RoundingDirection::decreasing;
constexpr auto kIncreasing = RoundingDirection::increasing;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Operand gradient(DType type, Shape shape) { return {"--input-gradient", "dy.npy", {type, std::move(shape)}}; }

// Plans and runs the CPU kernel on a poisoned output.
Tensor run_cpu(const ResampleGradDesc& desc, const Tensor& dy) {
    const ResampleGradPlan plan = plan_resample_grad(desc, {"--input-gradient", "dy.npy", dy.info});
    Tensor dx(TensorInfo{dy.dtype(), desc.output_sizes});
    poison(dx);
    cpu::resample_grad(plan, dy, dx);
    return dx;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
    std::vector<int64_t> index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) index[d] = flat % shape[d], flat /= shape[d];
    return index;
}

int64_t ravel(const std::vector<int64_t>& index, const Shape& shape) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
    return flat;
}

// One axis of docs/OPERATORS.md 5.1 in the forward convention: the (input index, weight) pairs that output index o
// samples, with u = (o - OutputPixelOffset) / Scale - InputPixelOffset in float32, one operation at a time.
std::vector<std::pair<int64_t, double>> forward_axis_taps(InterpolationMode mode, RoundingDirection rounding,
                                                          int64_t input_size, int64_t o, float scale,
                                                          float input_offset, float output_offset) {
    const float shifted = float(o) - output_offset;
    const float divided = shifted / scale;
    const float u = divided - input_offset;
    auto clamp_index = [&](double i) { return int64_t(std::clamp(i, 0.0, double(input_size - 1))); };
    if (mode == kNearest) return {{clamp_index(rounding == kDecreasing ? std::floor(u) : std::ceil(u)), 1.0}};
    const double uc = std::clamp(double(u), 0.0, double(input_size - 1));
    const int64_t i0 = int64_t(std::floor(uc));
    const double f = uc - double(i0);
    return {{i0, 1.0 - f}, {std::min(i0 + 1, input_size - 1), f}};
}

// All axes' taps of one output position, as the cartesian product (indices, product of weights).
void for_each_tap(const std::vector<std::vector<std::pair<int64_t, double>>>& axes,
                  const std::function<void(const std::vector<int64_t>&, double)>& visit) {
    std::vector<int64_t> index(axes.size());
    std::function<void(size_t, double)> walk = [&](size_t d, double weight) {
        if (d == axes.size()) return visit(index, weight);
        for (const auto& [i, w] : axes[d]) {
            index[d] = i;
            walk(d + 1, weight * w);
        }
    };
    walk(0, 1.0);
}

// DML_RESAMPLE2 as documented (R-fwd parameters), in double: y[o] = sum_i prod_d w_d(o_d, i_d) x[i].
std::vector<double> resample_forward(const std::vector<double>& x, const Shape& x_shape, const Shape& y_shape,
                                     InterpolationMode mode, RoundingDirection rounding,
                                     const std::vector<float>& scales, const std::vector<float>& input_offsets,
                                     const std::vector<float>& output_offsets) {
    std::vector<double> y(element_count(y_shape), 0.0);
    for (int64_t o = 0; o < int64_t(y.size()); ++o) {
        const std::vector<int64_t> oi = unravel(o, y_shape);
        std::vector<std::vector<std::pair<int64_t, double>>> axes;
        for (size_t d = 0; d < oi.size(); ++d)
            axes.push_back(
                forward_axis_taps(mode, rounding, x_shape[d], oi[d], scales[d], input_offsets[d], output_offsets[d]));
        for_each_tap(
            axes, [&](const std::vector<int64_t>& i, double w) { y[size_t(o)] += w * x[size_t(ravel(i, x_shape))]; });
    }
    return y;
}

// The resolved grad parameters of a test (R-swap: a = InputPixelOffsets, b = OutputPixelOffsets).
struct Params {
    InterpolationMode mode = kNearest;
    RoundingDirection rounding = kDecreasing;
    Shape dx_shape;
    std::vector<float> scales, a, b;
    ResampleGradDesc desc() const { return {dx_shape, mode, rounding, scales, a, b}; }
};

// docs/OPERATORS.md 5.2 as written: each dY[o] scattered to its taps in double. The grad's u(o) = (o - a)/s - b is the
// forward formula with the offsets swapped, so the forward taps serve with (input, output) offsets = (b, a).
std::vector<double> naive_resample_grad(const Tensor& dy, const Params& p) {
    const std::vector<double> dyv = to_doubles(dy);
    std::vector<double> dx(element_count(p.dx_shape), 0.0);
    for (int64_t o = 0; o < int64_t(dyv.size()); ++o) {
        const std::vector<int64_t> oi = unravel(o, dy.shape());
        std::vector<std::vector<std::pair<int64_t, double>>> axes;
        for (size_t d = 0; d < oi.size(); ++d)
            axes.push_back(forward_axis_taps(p.mode, p.rounding, p.dx_shape[d], oi[d], p.scales[d], p.b[d], p.a[d]));
        for_each_tap(axes, [&](const std::vector<int64_t>& i, double w) {
            if (w != 0) dx[size_t(ravel(i, p.dx_shape))] += w * dyv[size_t(o)];
        });
    }
    return dx;
}

// One axis of docs/OPERATORS.md 5.4, gathered: for each dX index i, the (dY index, float32 weight) pairs of the dY
// indices o that sample i, in increasing o, taps of weight 0 left out. Computed from the formula (forward_axis_taps
// with the R-swap offsets), not from the plan's tables.
std::vector<std::vector<std::pair<int64_t, float>>> gathered_axis_taps(const Params& p, size_t d, int64_t dy_size) {
    std::vector<std::vector<std::pair<int64_t, float>>> taps(size_t(p.dx_shape[d]));
    for (int64_t o = 0; o < dy_size; ++o)
        for (auto [i, w] : forward_axis_taps(p.mode, p.rounding, p.dx_shape[d], o, p.scales[d], p.b[d], p.a[d]))
            if (w != 0) taps[size_t(i)].push_back({o, float(w)});
    return taps;
}

// The documented order, in float32: per dX element, taps of axis 0 outermost, weight product left to right, then
// times dY, added to an accumulator starting at +0.
Tensor ordered_reference(const Params& p, const Tensor& dy) {
    const std::vector<double> dyv = to_doubles(dy);
    const size_t rank = p.dx_shape.size();
    std::vector<std::vector<std::vector<std::pair<int64_t, float>>>> axes;
    for (size_t d = 0; d < rank; ++d) axes.push_back(gathered_axis_taps(p, d, dy.shape()[d]));
    std::vector<double> dx(element_count(p.dx_shape));
    for (int64_t flat = 0; flat < int64_t(dx.size()); ++flat) {
        const std::vector<int64_t> i = unravel(flat, p.dx_shape);
        std::vector<int64_t> o(rank);
        float acc = 0.0f;
        std::function<void(size_t, float)> walk = [&](size_t d, float product) {
            if (d == rank) {
                acc += product * float(dyv[size_t(ravel(o, dy.shape()))]);
                return;
            }
            for (auto [dy_index, weight] : axes[d][size_t(i[d])]) {
                o[d] = dy_index;
                walk(d + 1, d == 0 ? weight : product * weight);
            }
        };
        walk(0, 1.0f);
        dx[size_t(flat)] = acc;
    }
    return tensor_from(dy.dtype(), p.dx_shape, dx);
}

// Bit-for-bit, except that any NaN matches any NaN (payloads are not part of the contract).
::testing::AssertionResult same_bits(const Tensor& expected, const Tensor& actual) {
    if (expected.info.shape != actual.info.shape || expected.dtype() != actual.dtype())
        return ::testing::AssertionFailure() << "layout differs";
    const std::vector<double> e = to_doubles(expected), a = to_doubles(actual);
    const size_t size = dtype_size(expected.dtype());
    for (size_t i = 0; i < e.size(); ++i) {
        if (std::isnan(e[i]) && std::isnan(a[i])) continue;
        if (std::memcmp(expected.buffer.data() + i * size, actual.buffer.data() + i * size, size) != 0)
            return ::testing::AssertionFailure() << "index " << i << ": expected " << e[i] << ", got " << a[i];
    }
    return ::testing::AssertionSuccess();
}

// |actual - expected| <= tolerance * (1 + scale), per element. A float32 sum's rounding error grows with the sum
// of its terms' magnitudes, not with the (possibly cancelling) sum: `scale` is that sum of magnitudes.
::testing::AssertionResult close_to(const std::vector<double>& expected, const Tensor& actual, double tolerance,
                                    const std::vector<double>& scale) {
    const std::vector<double> a = to_doubles(actual);
    for (size_t i = 0; i < a.size(); ++i)
        if (!(std::abs(a[i] - expected[i]) <= tolerance * (1 + scale[i])))
            return ::testing::AssertionFailure() << "index " << i << ": expected " << expected[i] << ", got " << a[i]
                                                 << " (sum of magnitudes " << scale[i] << ")";
    return ::testing::AssertionSuccess();
}

// The same gradient with every value made non-negative: its naive result is each element's sum of magnitudes.
Tensor magnitudes(const Tensor& dy) {
    std::vector<double> v = to_doubles(dy);
    for (double& x : v) x = std::abs(x);
    return tensor_from(dy.dtype(), dy.shape(), v);
}

class ResampleGradTypes : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(ResampleGrad, ResampleGradTypes, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

std::vector<double> grad(DType type, const ResampleGradDesc& desc, Shape dy_shape, const std::vector<double>& dy) {
    return to_doubles(run_cpu(desc, tensor_from(type, std::move(dy_shape), dy)));
}

// ---- docs/OPERATORS.md 5.6 worked examples (R-swap parameters) ----

TEST_P(ResampleGradTypes, Q1SeedNearestBothOffsetSets) {
    const std::vector<double> want = {9, 6, 0, 0};
    EXPECT_EQ(grad(GetParam(), {{2, 2}, kNearest, kDecreasing, {0.5f, 1.5f}, {0, 0}, {0, 0}}, {1, 3}, {4, 5, 6}), want);
    EXPECT_EQ(grad(GetParam(), {{2, 2}, kNearest, kDecreasing, {0.5f, 1.5f}, {-0.5f, -0.5f}, {0.5f, 0.5f}}, {1, 3},
                   {4, 5, 6}),
              want);
}

TEST_P(ResampleGradTypes, Q2Q3NearestFloorAndCeil) {
    const std::vector<double> dy = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(grad(GetParam(), {{3}, kNearest, kDecreasing, {2}, {0}, {0}}, {6}, dy), (std::vector<double>{3, 7, 11}));
    EXPECT_EQ(grad(GetParam(), {{3}, kNearest, kIncreasing, {2}, {0}, {0}}, {6}, dy), (std::vector<double>{1, 5, 15}));
}

TEST_P(ResampleGradTypes, Q4Q5RoundHalfDownAndUp) {
    const std::vector<double> dy = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(grad(GetParam(), {{3}, kNearest, kIncreasing, {2}, {0}, {0.5f}}, {6}, dy),
              (std::vector<double>{3, 7, 11}));
    EXPECT_EQ(grad(GetParam(), {{3}, kNearest, kDecreasing, {2}, {0}, {-0.5f}}, {6}, dy),
              (std::vector<double>{1, 5, 15}));
}

TEST_P(ResampleGradTypes, Q6NearestExact) {
    EXPECT_EQ(grad(GetParam(), {{2}, kNearest, kDecreasing, {2}, {-0.5f}, {0}}, {4}, {1, 2, 3, 4}),
              (std::vector<double>{3, 7}));
}

TEST_P(ResampleGradTypes, Q7LinearHalfPixelUsesTheSwappedReading) {
    const std::vector<double> got =
        grad(GetParam(), {{2}, kLinear, kDecreasing, {2}, {-0.5f}, {0.5f}}, {4}, {1, 2, 3, 4});
    EXPECT_EQ(got, (std::vector<double>{3.25, 6.75}));
    EXPECT_NE(got, (std::vector<double>{1.25, 8.75}));  // Q7': the forward reading
}

TEST_P(ResampleGradTypes, Q8BilinearAlignCorners) {
    EXPECT_EQ(
        grad(GetParam(), {{2, 2}, kLinear, kDecreasing, {2, 2}, {0, 0}, {0, 0}}, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
        (std::vector<double>{5.25, 8.25, 14.25, 17.25}));
}

TEST_P(ResampleGradTypes, Q9LinearDownscale) {
    EXPECT_EQ(grad(GetParam(), {{4}, kLinear, kDecreasing, {0.5f}, {-0.5f}, {0.5f}}, {2}, {2, 4}),
              (std::vector<double>{1, 1, 2, 2}));
}

TEST_P(ResampleGradTypes, Q10EdgeClamp) {
    EXPECT_EQ(grad(GetParam(), {{2}, kNearest, kDecreasing, {1.5f}, {0}, {0}}, {5}, {1, 2, 3, 4, 5}),
              (std::vector<double>{3, 12}));
}

// ---- tap tables ----

TEST(ResampleGradTaps, NearestTablesForBothRoundingDirections) {
    const AxisTaps floor_taps = build_axis_taps(kNearest, kDecreasing, 3, 6, 2, 0, 0);
    EXPECT_EQ(floor_taps.begin, (std::vector<uint32_t>{0, 2, 4, 6}));
    EXPECT_EQ(floor_taps.dy_index, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(floor_taps.weight, std::vector<float>(6, 1.0f));
    const AxisTaps ceil_taps = build_axis_taps(kNearest, kIncreasing, 3, 6, 2, 0, 0);
    EXPECT_EQ(ceil_taps.begin, (std::vector<uint32_t>{0, 1, 3, 6}));
    EXPECT_EQ(ceil_taps.dy_index, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(tap_counts(floor_taps), (std::pair<uint64_t, uint64_t>{2, 2}));
    EXPECT_EQ(tap_counts(ceil_taps), (std::pair<uint64_t, uint64_t>{1, 3}));
    EXPECT_EQ(tap_counts(AxisTaps{}), (std::pair<uint64_t, uint64_t>{0, 0}));
}

TEST(ResampleGradTaps, LinearTablesListTapsInIncreasingDyOrderWithoutZeroWeights) {
    // Q7: u = -0.25, 0.25, 0.75, 1.25 -> clamped 0, 0.25, 0.75, 1
    const AxisTaps taps = build_axis_taps(kLinear, kDecreasing, 2, 4, 2, -0.5f, 0.5f);
    EXPECT_EQ(taps.begin, (std::vector<uint32_t>{0, 3, 6}));
    EXPECT_EQ(taps.dy_index, (std::vector<uint32_t>{0, 1, 2, 1, 2, 3}));
    EXPECT_EQ(taps.weight, (std::vector<float>{1, 0.75f, 0.25f, 0.25f, 0.75f, 1}));
    // Q8's axis: u = 0, 0.5, 1 -> integral u gives a single tap
    const AxisTaps corners = build_axis_taps(kLinear, kDecreasing, 2, 3, 2, 0, 0);
    EXPECT_EQ(corners.begin, (std::vector<uint32_t>{0, 2, 4}));
    EXPECT_EQ(corners.dy_index, (std::vector<uint32_t>{0, 1, 1, 2}));
    EXPECT_EQ(corners.weight, (std::vector<float>{1, 0.5f, 0.5f, 1}));
}

TEST(ResampleGradTaps, ExtremeScalesClampBeforeConverting) {
    // scale 1e-30: u = 0.5e30 and more -> every dY on the last index, in both modes
    for (InterpolationMode mode : {kNearest, kLinear}) {
        const AxisTaps tiny = build_axis_taps(mode, kIncreasing, 3, 2, 1e-30f, -0.5f, 0.5f);
        EXPECT_EQ(tiny.begin, (std::vector<uint32_t>{0, 0, 0, 2}));
        EXPECT_EQ(tiny.weight, (std::vector<float>{1, 1}));
        // FLT_MAX: u = -0.5 for every o -> index 0 (floor -1 and ceil -0 both clamp to 0)
        for (RoundingDirection r : {kDecreasing, kIncreasing}) {
            const AxisTaps huge = build_axis_taps(mode, r, 3, 4, FLT_MAX, -0.5f, 0.5f);
            EXPECT_EQ(huge.begin, (std::vector<uint32_t>{0, 4, 4, 4}));
        }
    }
    // The last index of an axis longer than 2^24 is not a float; the clamp still lands on it exactly.
    const int64_t long_axis = (int64_t(1) << 24) + 2;
    const AxisTaps edge = build_axis_taps(kNearest, kDecreasing, long_axis, 1, 1e-30f, -1.0f, 0.0f);
    EXPECT_EQ(edge.begin[size_t(long_axis - 1)], 0u);
    EXPECT_EQ(edge.begin[size_t(long_axis)], 1u);
}

TEST(ResampleGradTaps, CoordinateIsFloat32AsWritten) {
    // A non-dyadic scale (2/7 rounded to float) with round-half-up offsets: every o lands where the float32
    // formula, one rounded operation at a time, puts it.
    const float scale = 2.0f / 7.0f;
    const AxisTaps taps = build_axis_taps(kNearest, kDecreasing, 2, 8, scale, 0, -0.5f);
    for (uint32_t i = 0; i < 2; ++i)
        for (uint32_t t = taps.begin[i]; t < taps.begin[i + 1]; ++t) {
            const float u = (float(taps.dy_index[t]) - 0.0f) / scale - -0.5f;
            EXPECT_EQ(std::clamp<int64_t>(int64_t(std::floor(u)), 0, 1), int64_t(i)) << "o " << taps.dy_index[t];
        }
    EXPECT_EQ(taps.begin[2], 8u);
}

// ---- plan and validation ----

TEST(ResampleGradValidation, PlanStoresResolvedDefaults) {
    const ResampleGradPlan plan =
        plan_resample_grad({{3, 4}, kLinear, kDecreasing, {}, {}, {}}, gradient(DType::f16, {7, 8}));
    EXPECT_EQ(plan.dtype, DType::f16);
    EXPECT_EQ(plan.mode, kLinear);
    EXPECT_EQ(plan.dx_shape, (Shape{3, 4}));
    EXPECT_EQ(plan.dy_shape, (Shape{7, 8}));
    EXPECT_EQ(plan.scales, (std::vector<float>{7.0f / 3.0f, 2.0f}));
    EXPECT_EQ(plan.input_pixel_offsets, (std::vector<float>{-0.5f, -0.5f}));
    EXPECT_EQ(plan.output_pixel_offsets, (std::vector<float>{0.5f, 0.5f}));
    ASSERT_EQ(plan.axes.size(), 2u);
    EXPECT_EQ(plan.axes[0].begin.size(), 4u);
    EXPECT_EQ(plan.axes[1].begin.size(), 5u);
    const ResampleGradPlan given =
        plan_resample_grad({{3}, kNearest, kIncreasing, {FLT_MAX}, {0.25f}, {-2}}, gradient(DType::f32, {5}));
    EXPECT_EQ(given.scales, (std::vector<float>{FLT_MAX}));
    EXPECT_EQ(given.input_pixel_offsets, (std::vector<float>{0.25f}));
    EXPECT_EQ(given.output_pixel_offsets, (std::vector<float>{-2.0f}));
}

TEST(ResampleGradValidation, RejectsTypesRanksAndSizes) {
    const ResampleGradDesc d{{2, 2}, kLinear, kDecreasing, {}, {}, {}};
    expect_usage_error(
        [&] {
            plan_resample_grad(d, gradient(DType::f64, {2, 2}));
        },
        {"--input-gradient dy.npy", "float64", "resample-grad"});
    expect_usage_error([&] { plan_resample_grad(d, gradient(DType::i32, {2, 2})); }, {"int32", "resample-grad"});
    expect_usage_error(
        [&] {
            plan_resample_grad({{1, 1, 1, 1, 2}, kLinear, kDecreasing, {}, {}, {}},
                               gradient(DType::f32, {1, 1, 1, 1, 2}));
        },
        {"--input-gradient", "rank 5"});
    expect_usage_error(
        [&] {
            plan_resample_grad({{}, kLinear, kDecreasing, {}, {}, {}}, gradient(DType::f32, {}));
        },
        {"--input-gradient", "rank 0"});
    expect_usage_error([&] { plan_resample_grad(d, gradient(DType::f32, {2, 0})); }, {"--input-gradient", "size 0"});
    expect_usage_error(
        [&] {
            plan_resample_grad({{2}, kLinear, kDecreasing, {}, {}, {}}, gradient(DType::f32, {2, 2}));
        },
        {"--output-sizes", "expected 2"});
    expect_usage_error(
        [&] {
            plan_resample_grad({{2, 0}, kLinear, kDecreasing, {}, {}, {}}, gradient(DType::f32, {2, 2}));
        },
        {"--output-sizes", "size 0"});
    expect_usage_error(
        [&] {
            plan_resample_grad({{65536, 65536}, kLinear, kDecreasing, {}, {}, {}}, gradient(DType::f32, {2, 2}));
        },
        {"--output-sizes", "2^32 - 1"});
}

TEST(ResampleGradValidation, RejectsBadScalesAndOffsets) {
    const Operand dy = gradient(DType::f32, {2, 2});
    auto with = [&](std::vector<float> scales, std::vector<float> a, std::vector<float> b) {
        return plan_resample_grad({{2, 2}, kNearest, kDecreasing, scales, a, b}, dy);
    };
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    expect_usage_error([&] { with({1}, {}, {}); }, {"--scales", "expected 2"});
    expect_usage_error([&] { with({1, 0}, {}, {}); }, {"--scales", "axis 1"});
    expect_usage_error([&] { with({-1, 1}, {}, {}); }, {"--scales", "axis 0"});
    expect_usage_error([&] { with({1, nan}, {}, {}); }, {"--scales"});
    expect_usage_error([&] { with({inf, 1}, {}, {}); }, {"--scales"});
    expect_usage_error([&] { with({}, {0, 0, 0}, {}); }, {"--input-pixel-offsets", "expected 2"});
    expect_usage_error([&] { with({}, {nan, 0}, {}); }, {"--input-pixel-offsets"});
    expect_usage_error([&] { with({}, {}, {0, -inf}); }, {"--output-pixel-offsets"});
    expect_usage_error([&] { with({}, {}, {1}); }, {"--output-pixel-offsets", "expected 2"});
    EXPECT_NO_THROW(with({FLT_MAX, 1e-30f}, {-3, 7}, {1e30f, 0}));
}

// ---- properties ----

TEST_P(ResampleGradTypes, LinearScaleOneWithBalancedOffsetsIsTheIdentity) {
    testing::SeededRng rng;
    const Shape shape{2, 3, 5, 7};
    const Tensor dy = random_tensor(GetParam(), shape, rng, true, 100.0);
    // Bit for bit, except -0: the accumulator starts at +0 and +0 + (1 * -0) = +0.
    std::vector<double> values = to_doubles(dy);
    for (double& v : values) v = v == 0 ? 0.0 : v;
    const Tensor expected = tensor_from(GetParam(), shape, values);
    for (float a : {-0.5f, 0.0f, 0.25f, 3.0f}) {
        const std::vector<float> as(4, a), bs(4, -a);
        EXPECT_TRUE(same_bits(expected, run_cpu({shape, kLinear, kDecreasing, {1, 1, 1, 1}, as, bs}, dy)))
            << "a = " << a;
    }
}

TEST(ResampleGradProperties, NonFiniteGradientReachesOnlyRealTaps) {
    // scale 1, a = b = 0: u = o, so every tap but one has weight 0 and is left out
    EXPECT_TRUE(same_bits(
        tensor_from(DType::f32, {4}, {1, kInf, 2, kNaN}),
        run_cpu({{4}, kLinear, kDecreasing, {1}, {0}, {0}}, tensor_from(DType::f32, {4}, {1, kInf, 2, kNaN}))));
    // Q8's axis: u = 0, 0.5, 1: dY[2] = inf reaches only dX[1] (its tap to dX[0] would have weight 0)
    EXPECT_EQ(
        to_doubles(run_cpu({{2}, kLinear, kDecreasing, {2}, {0}, {0}}, tensor_from(DType::f32, {3}, {1, 0, kInf}))),
        (std::vector<double>{1, kInf}));
    // half-pixel 2x: dY[3] (u = 1.25) reaches dX[1] and dX[2] only
    const std::vector<double> got = to_doubles(run_cpu({{4}, kLinear, kDecreasing, {2}, {-0.5f}, {0.5f}},
                                                       tensor_from(DType::f32, {8}, {0, 0, 0, -kInf, 0, 0, 0, 0})));
    EXPECT_EQ(got, (std::vector<double>{0, -kInf, -kInf, 0}));
}

TEST_P(ResampleGradTypes, ASumOfTwoNaNsKeepsTheFirst) {
    // Nearest 3x onto one dX element: +0 + dY[0] + dY[1] + dY[2] in order; once the sum is NaN it keeps that NaN
    // (core/nan_sum.h), whatever order the compiler gives the operands of its additions.
    const bool half = GetParam() == DType::f16;
    const uint64_t nan_a = half ? 0x7D01u : 0x7F812345u, nan_b = half ? 0xFE2Au : 0xFFC0ABCDu;
    const uint64_t inf = half ? 0x7C00u : 0x7F800000u, minus_inf = half ? 0xFC00u : 0xFF800000u;
    const ResampleGradDesc nearest3{{1}, kNearest, kDecreasing, {3}, {0}, {0}};
    auto sum_of = [&](std::vector<uint64_t> dy) { return run_cpu(nearest3, tensor_from_bits(GetParam(), {3}, dy)); };
    const uint64_t quiet_a = half ? 0x7F01u : 0x7FC12345u, default_nan = half ? 0xFE00u : 0xFFC00000u;
    EXPECT_TRUE(testing::bitwise_equal(tensor_from_bits(GetParam(), {1}, {quiet_a}), sum_of({nan_a, nan_b, 0})));
    // inf - inf makes the default NaN first; a later NaN input does not replace it
    EXPECT_TRUE(
        testing::bitwise_equal(tensor_from_bits(GetParam(), {1}, {default_nan}), sum_of({inf, minus_inf, nan_a})));
}

// Random parameters with exact arithmetic: power-of-two scales, offsets in quarters, so weights are dyadic.
Params random_dyadic_params(std::mt19937_64& rng, const Shape& dy_shape) {
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Params p;
    p.mode = uniform(0, 1) ? kLinear : kNearest;
    p.rounding = uniform(0, 1) ? kIncreasing : kDecreasing;
    for (size_t d = 0; d < dy_shape.size(); ++d) {
        p.dx_shape.push_back(uniform(1, 9));
        p.scales.push_back(std::ldexp(1.0f, int(uniform(-2, 1))));  // weights in eighths: float32 sums stay exact
        p.a.push_back(float(uniform(-8, 8)) / 4);
        p.b.push_back(float(uniform(-8, 8)) / 4);
    }
    return p;
}

// `rank` axes of 1 to `max_size` each (testing::random_shape instead caps the element count).
Shape random_axes_up_to(std::mt19937_64& rng, size_t rank, int64_t max_size) {
    Shape s;
    for (size_t d = 0; d < rank; ++d) s.push_back(std::uniform_int_distribution<int64_t>(1, max_size)(rng));
    return s;
}

TEST_P(ResampleGradTypes, RandomCasesMatchTheNaiveScatterExactly) {
    testing::SeededRng rng;
    for (int trial = 0; trial < 400; ++trial) {
        const Shape dy_shape = random_axes_up_to(rng, 1 + trial % 4, trial % 4 == 0 ? 40 : 10);
        const Params p = random_dyadic_params(rng, dy_shape);
        const Tensor dy = random_small_integers(GetParam(), dy_shape, rng, 8);
        const Tensor got = run_cpu(p.desc(), dy);
        ASSERT_TRUE(same_bits(tensor_from(GetParam(), p.dx_shape, naive_resample_grad(dy, p)), got))
            << "trial " << trial << " dy " << shape_string(dy_shape) << " dx " << shape_string(p.dx_shape);
    }
}

TEST(ResampleGradProperties, SumAndAdjointness) {
    // Any scales (non-dyadic too) and offsets: sum(dX) = sum(dY), and <forward(x), dy> = <x, grad(dy)> with the
    // forward at R-fwd parameters (forward InputPixelOffsets = grad's OutputPixelOffsets and vice versa).
    testing::SeededRng rng;
    std::uniform_real_distribution<float> offset(-2, 2), log_scale(-1.5f, 1.5f);
    for (int trial = 0; trial < 200; ++trial) {
        const Shape dy_shape = random_axes_up_to(rng, 1 + trial % 4, trial % 4 == 0 ? 30 : 8);
        Params p;
        p.mode = trial % 3 ? kLinear : kNearest;
        p.rounding = trial % 2 ? kIncreasing : kDecreasing;
        p.dx_shape = random_axes_up_to(rng, dy_shape.size(), trial % 4 == 0 ? 30 : 8);
        for (size_t d = 0; d < dy_shape.size(); ++d) {
            p.scales.push_back(std::exp(log_scale(rng)));
            p.a.push_back(offset(rng));
            p.b.push_back(offset(rng));
        }
        const Tensor dy = random_tensor(DType::f32, dy_shape, rng, false, 1.0);
        const Tensor dx = run_cpu(p.desc(), dy);
        const std::vector<double> dyv = to_doubles(dy), dxv = to_doubles(dx);
        double sum_dy = 0, sum_dx = 0, scale = 0;
        for (double v : dyv) sum_dy += v, scale += std::abs(v);
        for (double v : dxv) sum_dx += v;
        EXPECT_NEAR(sum_dx, sum_dy, 1e-5 * (1 + scale)) << "trial " << trial;

        const Tensor x = random_tensor(DType::f32, p.dx_shape, rng, false, 1.0);
        const std::vector<double> xv = to_doubles(x);
        const std::vector<double> y = resample_forward(xv, p.dx_shape, dy_shape, p.mode, p.rounding, p.scales,
                                                       /*input offsets*/ p.b, /*output offsets*/ p.a);
        double forward_side = 0, grad_side = 0, magnitude = 0;
        for (size_t i = 0; i < y.size(); ++i) forward_side += y[i] * dyv[i], magnitude += std::abs(y[i] * dyv[i]);
        for (size_t i = 0; i < xv.size(); ++i) grad_side += xv[i] * dxv[i];
        EXPECT_NEAR(forward_side, grad_side, 1e-5 * (1 + magnitude)) << "trial " << trial;
    }
}

TEST(ResampleGradProperties, AdjointnessTellsTheReadingsApart) {
    // Q7's parameters: the forward with the offsets swapped is the adjoint; with the same offsets it is not.
    const Params p{kLinear, kDecreasing, {2}, {2}, {-0.5f}, {0.5f}};
    const Tensor dy = tensor_from(DType::f32, {4}, {1, 2, 3, 4});
    const std::vector<double> dx = to_doubles(run_cpu(p.desc(), dy));
    const std::vector<double> x = {1, 10};
    auto inner = [&](const std::vector<double>& y) { return y[0] * 1 + y[1] * 2 + y[2] * 3 + y[3] * 4; };
    const double grad_side = x[0] * dx[0] + x[1] * dx[1];
    EXPECT_DOUBLE_EQ(inner(resample_forward(x, {2}, {4}, p.mode, p.rounding, p.scales, p.b, p.a)), grad_side);
    EXPECT_NE(inner(resample_forward(x, {2}, {4}, p.mode, p.rounding, p.scales, p.a, p.b)), grad_side);
}

TEST(ResampleGradProperties, MultiAxisLinearEqualsPerAxisApplication) {
    // 2, 3 and 4 resampled axes at once against one axis at a time (the others the identity); dyadic, so exact.
    testing::SeededRng rng;
    for (int trial = 0; trial < 60; ++trial) {
        const size_t rank = 2 + trial % 3;
        const Shape dy_shape = random_axes_up_to(rng, rank, 7);
        Params p = random_dyadic_params(rng, dy_shape);
        p.mode = kLinear;
        const Tensor dy = random_small_integers(DType::f32, dy_shape, rng, 8);
        Tensor step = tensor_from(DType::f32, dy_shape, to_doubles(dy));
        for (size_t axis = 0; axis < rank; ++axis) {
            Params one = p;
            one.dx_shape = step.shape();
            one.dx_shape[axis] = p.dx_shape[axis];
            for (size_t d = 0; d < rank; ++d)
                if (d != axis) one.scales[d] = 1, one.a[d] = -0.5f, one.b[d] = 0.5f;
            step = run_cpu(one.desc(), step);
        }
        ASSERT_TRUE(same_bits(step, run_cpu(p.desc(), dy))) << "trial " << trial;
    }
}

// ---- the documented order of additions, bit for bit ----

struct OrderCase {
    Params params;
    Shape dy_shape;
};

TEST_P(ResampleGradTypes, KernelFollowsTheDocumentedOrder) {
    // Real-valued dY with specials, non-dyadic weights: only the documented order gives these bits. The cases cover
    // the slot layout with regular runs (stride 1 and 2, slot weights shared or not, shorter or longer than a
    // vector block) and single taps, the tap-list fallback (one element with far more taps than the others),
    // several row bands per plane, and ranks 1 to 4.
    testing::SeededRng rng;
    const std::vector<OrderCase> cases = {
        {{kLinear, kDecreasing, {2, 3, 20, 37}, {1, 1, 2, 2}, {-0.5f, -0.5f, -0.5f, -0.5f}, {0.5f, 0.5f, 0.5f, 0.5f}},
         {2, 3, 40, 74}},
        {{kLinear, kDecreasing, {3, 50, 41}, {1.5f, 0.7f, 1}, {-0.5f, 0.3f, 0.1f}, {0.5f, 0.2f, 0.15f}}, {4, 33, 41}},
        {{kNearest, kIncreasing, {40, 64}, {2, 2}, {-0.5f, -0.5f}, {0.5f, 0.5f}}, {80, 128}},
        {{kLinear, kDecreasing, {3, 29, 45}, {1.5f, 2.0f / 3, 7.0f / 5}, {0.25f, -0.5f, -0.5f}, {-1, 0.5f, 0.5f}},
         {4, 19, 63}},
        {{kNearest, kDecreasing, {3, 5}, {1, 1}, {0, 0}, {0, 0}}, {3, 200}},
        {{kLinear, kDecreasing, {2, 3}, {1, 1}, {0, 0}, {0.5f, 0.5f}}, {9, 150}},
        {{kLinear, kDecreasing, {3, 4}, {1.3f, 0.9f}, {0.1f, -0.3f}, {0.2f, 0.35f}}, {5, 150}},
        {{kLinear, kDecreasing, {1000}, {3.3f}, {-0.5f}, {0.5f}}, {3300}},
        {{kLinear, kIncreasing, {2, 3, 4, 5}, {0.9f, 1.7f, 0.4f, 2.6f}, {1, -1, 0.5f, 0}, {0, 0.5f, -0.25f, 1}},
         {3, 4, 2, 13}},
        // regular runs shorter than a vector block (10 elements at stride 2, 9 at stride 1), and a stride-1 run
        // of 50 (its last block overlaps the one before)
        {{kLinear, kDecreasing, {5, 12}, {2, 2}, {-0.5f, -0.5f}, {0.5f, 0.5f}}, {10, 24}},
        {{kLinear, kDecreasing, {4, 10}, {1, 1}, {0, 0}, {0.3f, 0.3f}}, {4, 10}},
        {{kLinear, kDecreasing, {4, 51}, {1, 1}, {0, 0}, {0.3f, 0.3f}}, {4, 51}},
    };
    for (const OrderCase& c : cases) {
        for (bool specials : {false, true}) {
            const Tensor dy = random_tensor(GetParam(), c.dy_shape, rng, specials, 100.0);
            ASSERT_TRUE(same_bits(ordered_reference(c.params, dy), run_cpu(c.params.desc(), dy)))
                << "dy " << shape_string(c.dy_shape) << " dx " << shape_string(c.params.dx_shape);
            if (specials) continue;
            const double tolerance = GetParam() == DType::f16 ? 2e-3 : 1e-4;
            ASSERT_TRUE(close_to(naive_resample_grad(dy, c.params), run_cpu(c.params.desc(), dy), tolerance,
                                 naive_resample_grad(magnitudes(dy), c.params)))
                << "dy " << shape_string(c.dy_shape);
        }
    }
}

}  // namespace
}  // namespace dmlgrad
