// Max-pooling grad: validation and plan (ops/maxpool_grad), the CPU reference (cpu/maxpool_grad) against
// docs/OPERATORS.md's worked examples and against a naive transcription of docs/OPERATORS.md 4.2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "cpu/kernels.h"
#include "ops/maxpool_grad.h"
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Operand input(DType type, Shape shape) { return {"--input", "x.npy", {type, std::move(shape)}}; }
Operand gradient(DType type, Shape shape) { return {"--input-gradient", "dy.npy", {type, std::move(shape)}}; }

MaxPoolGradPlan plan_for(const MaxPoolGradDesc& desc, const Tensor& x, const Tensor& dy) {
    return plan_maxpool_grad(desc, {"--input", "x.npy", x.info}, {"--input-gradient", "dy.npy", dy.info});
}

// Plans and runs the CPU kernel on a poisoned output.
Tensor run_cpu(const MaxPoolGradDesc& desc, const Tensor& x, const Tensor& dy) {
    const MaxPoolGradPlan plan = plan_for(desc, x, dy);
    Tensor dx(x.info);
    poison(dx);
    cpu::maxpool_grad(plan, x, dy, dx);
    return dx;
}

// A full parameter set (no defaults) for the naive reference.
struct Pooling {
    std::vector<int64_t> window, strides, start, end, dilations;
    MaxPoolGradDesc desc() const { return {window, strides, start, end, dilations}; }
};

// docs/OPERATORS.md 4.2 as written: every dY position in row-major order, its window offsets in row-major order,
// padding skipped, first strictly greater (NaN above all, first NaN wins), scattered into an Acc accumulator.
template <class Acc>
Tensor naive_maxpool_grad(const Tensor& x, const Tensor& dy, const Pooling& p) {
    const Shape& xs = x.shape();
    const Shape& ys = dy.shape();
    const size_t spatial = xs.size() - 2;
    const std::vector<double> xv = to_doubles(x), yv = to_doubles(dy);
    std::vector<Acc> acc(xv.size(), Acc(0));
    int64_t x_plane = 1, y_plane = 1, window_count = 1;
    for (size_t j = 0; j < spatial; ++j) {
        x_plane *= xs[2 + j];
        y_plane *= ys[2 + j];
        window_count *= p.window[j];
    }
    for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
        for (int64_t o = 0; o < y_plane; ++o) {
            std::vector<int64_t> oi(spatial);
            for (int64_t j = int64_t(spatial) - 1, r = o; j >= 0; --j) oi[j] = r % ys[2 + j], r /= ys[2 + j];
            int64_t best_pos = -1;
            double best = 0;
            for (int64_t k = 0; k < window_count; ++k) {
                std::vector<int64_t> ki(spatial);
                for (int64_t j = int64_t(spatial) - 1, r = k; j >= 0; --j) ki[j] = r % p.window[j], r /= p.window[j];
                int64_t pos = 0;
                bool padding = false;
                for (size_t j = 0; j < spatial; ++j) {
                    const int64_t c = oi[j] * p.strides[j] - p.start[j] + ki[j] * p.dilations[j];
                    padding = padding || c < 0 || c >= xs[2 + j];
                    pos = pos * xs[2 + j] + c;
                }
                if (padding) continue;
                const double v = xv[size_t(nc * x_plane + pos)];
                if (best_pos < 0 || (!std::isnan(best) && (v > best || std::isnan(v)))) best = v, best_pos = pos;
            }
            if (best_pos >= 0) acc[size_t(nc * x_plane + best_pos)] += Acc(yv[size_t(nc * y_plane + o)]);
        }
    return tensor_from(x.dtype(), xs, std::vector<double>(acc.begin(), acc.end()));
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

class MaxPoolGradTypes : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(MaxPoolGrad, MaxPoolGradTypes, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- docs/OPERATORS.md 4.4 worked examples (N = C = 1) ----

TEST_P(MaxPoolGradTypes, P1Seed) {
    Tensor x = tensor_from(GetParam(), {1, 1, 3, 3}, {1, 2, 3, 2, 4, 2, 5, 6, 7});
    Tensor dy = tensor_from(GetParam(), {1, 1, 2, 2}, {1, 2, 4, 5});
    EXPECT_EQ(to_doubles(run_cpu({{2, 2}, {1, 1}, {}, {}, {}}, x, dy)),
              (std::vector<double>{0, 0, 0, 0, 3, 0, 0, 4, 5}));
}

TEST_P(MaxPoolGradTypes, P2PaddingNeverWins) {
    Tensor x = tensor_from(GetParam(), {1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
    Tensor dy = tensor_from(GetParam(), {1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(to_doubles(run_cpu({{3, 3}, {2, 2}, {1, 1}, {1, 1}, {}}, x, dy)),
              (std::vector<double>{1, 2, 0, 3, 4, 0, 0, 0, 0}));
}

TEST_P(MaxPoolGradTypes, P3TiesGoToTheLowestIndex) {
    Tensor x = tensor_from(GetParam(), {1, 1, 2, 3}, {5, 5, 5, 5, 5, 5});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 2}, {10, 20});
    EXPECT_EQ(to_doubles(run_cpu({{2, 2}, {}, {}, {}, {}}, x, dy)), (std::vector<double>{10, 20, 0, 0, 0, 0}));
}

TEST_P(MaxPoolGradTypes, P4OverlapsAdd) {
    Tensor x = tensor_from(GetParam(), {1, 1, 3, 3}, {0, 0, 0, 0, 9, 0, 0, 0, 0});
    Tensor dy = tensor_from(GetParam(), {1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(to_doubles(run_cpu({{2, 2}, {1, 1}, {}, {}, {}}, x, dy)),
              (std::vector<double>{0, 0, 0, 0, 10, 0, 0, 0, 0}));
}

TEST_P(MaxPoolGradTypes, P5Dilation) {
    Tensor x = tensor_from(GetParam(), {1, 1, 1, 5}, {3, 1, 4, 1, 5});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 3}, {1, 2, 3});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 1}, {}, {}, {1, 2}}, x, dy)), (std::vector<double>{0, 2, 1, 0, 3}));
}

TEST_P(MaxPoolGradTypes, P6FiveD) {
    Tensor x = tensor_from(GetParam(), {1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 1, 1}, {7});
    EXPECT_EQ(to_doubles(run_cpu({{2, 2, 2}, {}, {}, {}, {}}, x, dy)), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 7}));
}

TEST_P(MaxPoolGradTypes, P7AllPaddingWindowIsDropped) {
    Tensor x = tensor_from(GetParam(), {1, 1, 1, 2}, {1, 2});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 2}, {5, 6});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 1}, {0, 1}, {0, 2}, {1, 3}}, x, dy)), (std::vector<double>{6, 0}));
}

// ---- selection rules ----

TEST_P(MaxPoolGradTypes, NaNBeatsEveryNumberAndTheFirstNaNWins) {
    // one window over the whole row
    Tensor x = tensor_from(GetParam(), {1, 1, 1, 5}, {1, kNaN, kInf, kNaN, 3});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 1}, {7});
    EXPECT_EQ(to_doubles(run_cpu({{1, 5}, {}, {}, {}, {}}, x, dy)), (std::vector<double>{0, 7, 0, 0, 0}));
}

TEST_P(MaxPoolGradTypes, ASumOfTwoNaNsKeepsTheFirst) {
    // Windows {0, 9} and {9, 0} both pick the 9: dX = +0 + NaN_a + NaN_b keeps NaN_a, quieted (core/nan_sum.h),
    // whatever order the compiler gives the operands of its additions.
    const bool half = GetParam() == DType::f16;
    const Tensor x = tensor_from(GetParam(), {1, 1, 1, 3}, {0, 9, 0});
    const Tensor dy =
        tensor_from_bits(GetParam(), {1, 1, 1, 2}, {half ? 0x7D01u : 0x7F812345u, half ? 0xFE2Au : 0xFFC0ABCDu});
    const Tensor want = tensor_from_bits(GetParam(), {1, 1, 1, 3}, {0, half ? 0x7F01u : 0x7FC12345u, 0});
    EXPECT_TRUE(testing::bitwise_equal(want, run_cpu({{1, 2}, {1, 1}, {}, {}, {}}, x, dy)));
}

TEST_P(MaxPoolGradTypes, InfinityAndZeroRules) {
    // windows of width 2, stride 2: {+inf, 1} -> +inf; {-0, +0} tie -> first; {-inf, -inf} tie -> first
    Tensor x = tensor_from(GetParam(), {1, 1, 1, 6}, {1, kInf, -0.0, 0.0, -kInf, -kInf});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 3}, {1, 2, 3});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 2}, {}, {}, {}}, x, dy)), (std::vector<double>{0, 1, 2, 0, 3, 0}));
}

TEST_P(MaxPoolGradTypes, MinusInfinityNextToPaddingIsSelected) {
    Tensor x = tensor_from(GetParam(), {1, 1, 1, 2}, {-kInf, -kInf});
    Tensor dy = tensor_from(GetParam(), {1, 1, 1, 2}, {4, 5});
    // windows of 2 with one padding cell on each side: {pad, x0}, {x1, pad}
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 2}, {0, 1}, {0, 1}, {}}, x, dy)), (std::vector<double>{4, 5}));
}

TEST(MaxPoolGrad, DenormalsCompareExactly) {
    // smallest float32 denormals: 0 < 1e-45, -1e-45 < 0
    Tensor x = tensor_from(DType::f32, {1, 1, 1, 4}, {0, 1e-45, -1e-45, 0});
    Tensor dy = tensor_from(DType::f32, {1, 1, 1, 2}, {1, 2});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 2}, {}, {}, {}}, x, dy)), (std::vector<double>{0, 1, 0, 2}));
    Tensor xh = tensor_from(DType::f16, {1, 1, 1, 4}, {0, 6e-8, -6e-8, 0});
    Tensor dyh = tensor_from(DType::f16, {1, 1, 1, 2}, {1, 2});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 2}, {}, {}, {}}, xh, dyh)), (std::vector<double>{0, 1, 0, 2}));
}

TEST(MaxPoolGrad, WindowsPastTheInputAreDroppedAndGapsStayZero) {
    // padding 3 on each side of a 1x2 row with a window of 1: only windows 3 and 4 see the input
    Tensor x = tensor_from(DType::f32, {1, 1, 1, 2}, {1, 2});
    Tensor dy = tensor_from(DType::f32, {1, 1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(to_doubles(run_cpu({{1, 1}, {1, 1}, {0, 3}, {0, 3}, {}}, x, dy)), (std::vector<double>{4, 5}));
    // stride larger than the window leaves unreferenced elements at 0
    Tensor x2 = tensor_from(DType::f32, {1, 1, 1, 7}, {1, 2, 3, 4, 5, 6, 7});
    Tensor dy2 = tensor_from(DType::f32, {1, 1, 1, 3}, {1, 2, 3});
    EXPECT_EQ(to_doubles(run_cpu({{1, 1}, {1, 3}, {}, {}, {}}, x2, dy2)), (std::vector<double>{1, 0, 0, 2, 0, 0, 3}));
}

TEST(MaxPoolGrad, CeilModeWindowRunsPastThePaddedEnd) {
    // I = 4, W = 2, T = 3: P - span = 2, not a multiple of 3 -> O_floor = 1, ceil mode 2 (window 1 = {3, pad})
    Tensor x = tensor_from(DType::f32, {1, 1, 1, 4}, {1, 2, 3, 4});
    Tensor dy = tensor_from(DType::f32, {1, 1, 1, 2}, {5, 6});
    EXPECT_EQ(to_doubles(run_cpu({{1, 2}, {1, 3}, {}, {}, {}}, x, dy)), (std::vector<double>{0, 5, 0, 6}));
}

TEST(MaxPoolGrad, Fp16AccumulatesInFloat32AndRoundsOnce) {
    // 2047 stride-1 windows of width 2048 over a row whose maximum is in the middle: every window picks it.
    // dY = 0.1 (fp16 0.0999755859375) each; fp16 running sums would stall far below the float32 sum.
    const int64_t width = 4094, windows = 2047;
    std::vector<double> xv(width, 0.0);
    xv[2047] = 1;
    Tensor x = tensor_from(DType::f16, {1, 1, 1, width}, xv);
    Tensor dy = tensor_from(DType::f16, {1, 1, 1, windows}, std::vector<double>(windows, 0.1));
    float sum = 0;
    for (int64_t i = 0; i < windows; ++i) sum += half_to_float(float_to_half(0.1f));
    std::vector<double> expected(width, 0.0);
    expected[2047] = half_to_float(float_to_half(sum));
    EXPECT_EQ(to_doubles(run_cpu({{1, 2048}, {}, {}, {}, {}}, x, dy)), expected);
}

// ---- validation ----

TEST(MaxPoolGradValidation, OutputSizeFormula) {
    EXPECT_EQ(maxpool_output_size(3, 2, 1, 0, 0, 1), 2);
    EXPECT_EQ(maxpool_output_size(3, 3, 2, 1, 1, 1), 2);
    EXPECT_EQ(maxpool_output_size(5, 2, 1, 0, 0, 2), 3);
    EXPECT_EQ(maxpool_output_size(2, 2, 1, 1, 2, 3), 2);
    EXPECT_EQ(maxpool_output_size(128, 3, 2, 1, 1, 1), 64);
    EXPECT_EQ(maxpool_output_size(4, 2, 3, 0, 0, 1), 1);
    EXPECT_EQ(maxpool_output_size(2, 3, 1, 0, 0, 1), 0);  // the window does not fit
}

TEST(MaxPoolGradValidation, PlanRightAlignsSpatialAxes) {
    const MaxPoolGradPlan p4 = plan_maxpool_grad({{3, 2}, {2, 1}, {1, 0}, {1, 0}, {1, 2}},
                                                 input(DType::f16, {2, 3, 7, 9}), gradient(DType::f16, {2, 3, 4, 7}));
    EXPECT_EQ(p4.dtype, DType::f16);
    EXPECT_EQ(p4.planes, 6u);
    EXPECT_EQ(p4.in, (std::array<int64_t, 3>{1, 7, 9}));
    EXPECT_EQ(p4.out, (std::array<int64_t, 3>{1, 4, 7}));
    EXPECT_EQ(p4.window, (std::array<int64_t, 3>{1, 3, 2}));
    EXPECT_EQ(p4.stride, (std::array<int64_t, 3>{1, 2, 1}));
    EXPECT_EQ(p4.start_padding, (std::array<int64_t, 3>{0, 1, 0}));
    EXPECT_EQ(p4.dilation, (std::array<int64_t, 3>{1, 1, 2}));
    EXPECT_EQ(p4.x_shape, (Shape{2, 3, 7, 9}));
    EXPECT_EQ(p4.dy_shape, (Shape{2, 3, 4, 7}));
    const MaxPoolGradPlan p5 = plan_maxpool_grad({{2, 2, 2}, {}, {}, {}, {}}, input(DType::f32, {1, 2, 3, 4, 5}),
                                                 gradient(DType::f32, {1, 2, 2, 3, 4}));
    EXPECT_EQ(p5.in, (std::array<int64_t, 3>{3, 4, 5}));
    EXPECT_EQ(p5.out, (std::array<int64_t, 3>{2, 3, 4}));
    EXPECT_EQ(p5.window, (std::array<int64_t, 3>{2, 2, 2}));
}

TEST(MaxPoolGradValidation, RejectsTypesAndRanks) {
    const MaxPoolGradDesc d{{2, 2}, {}, {}, {}, {}};
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f64, {1, 1, 4, 4}), gradient(DType::f64, {1, 1, 3, 3}));
        },
        {"--input x.npy", "float64", "maxpool-grad"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::i8, {1, 1, 4, 4}), gradient(DType::i8, {1, 1, 3, 3}));
        },
        {"--input", "int8", "maxpool-grad"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {1, 1, 4, 4}), gradient(DType::f16, {1, 1, 3, 3}));
        },
        {"--input-gradient dy.npy", "float16"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {1, 4, 4}), gradient(DType::f32, {1, 3, 3}));
        },
        {"--input", "rank 3"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {1, 1, 1, 1, 4, 4}), gradient(DType::f32, {1, 1, 1, 1, 3, 3}));
        },
        {"--input", "rank 6"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {1, 1, 4, 4}), gradient(DType::f32, {1, 1, 1, 3, 3}));
        },
        {"--input-gradient", "rank"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {1, 0, 4, 4}), gradient(DType::f32, {1, 0, 3, 3}));
        },
        {"--input", "size 0"});
}

TEST(MaxPoolGradValidation, RejectsMismatchedBatchOrChannels) {
    const MaxPoolGradDesc d{{2, 2}, {}, {}, {}, {}};
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {2, 3, 4, 4}), gradient(DType::f32, {1, 3, 3, 3}));
        },
        {"--input-gradient", "axis 0"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad(d, input(DType::f32, {2, 3, 4, 4}), gradient(DType::f32, {2, 4, 3, 3}));
        },
        {"--input-gradient", "axis 1"});
}

TEST(MaxPoolGradValidation, RejectsBadParameterLists) {
    const Operand x = input(DType::f32, {1, 1, 4, 4}), dy = gradient(DType::f32, {1, 1, 3, 3});
    expect_usage_error([&] { plan_maxpool_grad({{}, {}, {}, {}, {}}, x, dy); }, {"--window-size", "required"});
    expect_usage_error([&] { plan_maxpool_grad({{2}, {}, {}, {}, {}}, x, dy); }, {"--window-size", "expected 2"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {1, 1, 1}, {}, {}, {}}, x, dy); }, {"--strides"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {0}, {}, {}}, x, dy); }, {"--start-padding"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {}, {0, 0, 0}, {}}, x, dy); }, {"--end-padding"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {}, {}, {1}}, x, dy); }, {"--dilations"});
    expect_usage_error([&] { plan_maxpool_grad({{0, 2}, {}, {}, {}, {}}, x, dy); }, {"--window-size", "0"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {1, 0}, {}, {}, {}}, x, dy); }, {"--strides", "0"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {}, {}, {0, 1}}, x, dy); }, {"--dilations", "0"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {-1, 0}, {}, {}}, x, dy); }, {"--start-padding", "-1"});
    expect_usage_error([&] { plan_maxpool_grad({{2, 2}, {}, {}, {0, -2}, {}}, x, dy); }, {"--end-padding", "-2"});
    expect_usage_error(
        [&] {
            plan_maxpool_grad({{2, 2}, {int64_t(1) << 32, 1}, {}, {}, {}}, x, dy);
        },
        {"--strides", "4294967296"});
}

TEST(MaxPoolGradValidation, RejectsWindowLargerThanThePaddedInput) {
    // span (3 - 1) * 2 + 1 = 5 > 4
    expect_usage_error(
        [&] {
            plan_maxpool_grad({{1, 3}, {}, {}, {}, {1, 2}}, input(DType::f32, {1, 1, 1, 4}),
                              gradient(DType::f32, {1, 1, 1, 1}));
        },
        {"--window-size", "padded input"});
    // padding makes it fit: span 5 <= 4 + 1
    EXPECT_NO_THROW(plan_maxpool_grad({{1, 3}, {}, {0, 1}, {}, {1, 2}}, input(DType::f32, {1, 1, 1, 4}),
                                      gradient(DType::f32, {1, 1, 1, 1})));
    // huge values do not overflow into acceptance
    expect_usage_error(
        [&] {
            plan_maxpool_grad({{1, 0xFFFFFFFF}, {}, {}, {}, {1, 0xFFFFFFFF}}, input(DType::f32, {1, 1, 1, 4}),
                              gradient(DType::f32, {1, 1, 1, 1}));
        },
        {"--window-size"});
}

TEST(MaxPoolGradValidation, AcceptsFloorAndCeilModeSizesOnly) {
    auto plan_with = [](int64_t input_width, int64_t dy_width, int64_t window, int64_t stride) {
        return plan_maxpool_grad({{1, window}, {1, stride}, {}, {}, {}}, input(DType::f32, {1, 1, 1, input_width}),
                                 gradient(DType::f32, {1, 1, 1, dy_width}));
    };
    // P - span = 2, stride 3: floor 1, ceil 2
    EXPECT_NO_THROW(plan_with(4, 1, 2, 3));
    EXPECT_NO_THROW(plan_with(4, 2, 2, 3));
    expect_usage_error([&] { plan_with(4, 3, 2, 3); }, {"--input-gradient dy.npy", "size 3", "axis 3", "1 or 2"});
    // P - span = 4, stride 2: exact, so only the floor size 3
    EXPECT_NO_THROW(plan_with(5, 3, 1, 2));
    expect_usage_error([&] { plan_with(5, 4, 1, 2); }, {"--input-gradient", "expected 3)"});
    expect_usage_error([&] { plan_with(5, 2, 1, 2); }, {"--input-gradient", "expected 3)"});
    // the H axis is checked too
    expect_usage_error(
        [&] {
            plan_maxpool_grad({{2, 2}, {}, {}, {}, {}}, input(DType::f32, {1, 1, 4, 4}),
                              gradient(DType::f32, {1, 1, 2, 3}));
        },
        {"axis 2", "expected 3"});
}

// ---- random cases against the naive reference ----

struct RandomCase {
    Pooling pooling;
    Shape x_shape, dy_shape;
};

// A random valid geometry: rank 4 or 5, windows, strides, dilations, paddings (often past the window), dY of the
// floor or the ceil-mode size. One case in eight pools the whole padded last axis with one or two windows.
RandomCase random_case(std::mt19937_64& rng) {
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    for (;;) {
        const size_t spatial = uniform(0, 2) ? 2 : 3;
        const bool wide = uniform(0, 7) == 0;
        RandomCase c;
        c.x_shape = {uniform(1, 3), uniform(1, 3)};
        c.dy_shape = c.x_shape;
        bool fits = true;
        for (size_t j = 0; j < spatial; ++j) {
            const bool wide_axis = wide && j + 1 == spatial;
            const int64_t in = wide_axis ? uniform(18, 30) : uniform(1, spatial == 2 ? 12 : 6),
                          d = wide_axis ? 1 : uniform(1, 3), t = uniform(1, 4), s = uniform(0, 4), e = uniform(0, 4),
                          w = wide_axis ? in + s + e - uniform(0, 1) : uniform(1, 4);
            const int64_t out = maxpool_output_size(in, w, t, s, e, d);
            if (out == 0) fits = false;
            const int64_t span = (w - 1) * d + 1;
            const bool ceil = (in + s + e - span) % t != 0 && uniform(0, 1);
            c.pooling.window.push_back(w);
            c.pooling.strides.push_back(t);
            c.pooling.start.push_back(s);
            c.pooling.end.push_back(e);
            c.pooling.dilations.push_back(d);
            c.x_shape.push_back(in);
            c.dy_shape.push_back(out + (ceil ? 1 : 0));
        }
        if (fits) return c;
    }
}

TEST_P(MaxPoolGradTypes, RandomCasesMatchTheNaiveReferenceExactly) {
    testing::SeededRng rng;
    for (int trial = 0; trial < 300; ++trial) {
        const RandomCase c = random_case(rng);
        // half of the inputs full of ties, half with NaN, infinities, signed zeros and denormals
        Tensor x = trial % 2 ? random_small_integers(GetParam(), c.x_shape, rng, 1)
                             : random_tensor(GetParam(), c.x_shape, rng, true, 4.0);
        Tensor dy = random_small_integers(GetParam(), c.dy_shape, rng, 8);  // sums exact in any order
        const Tensor got = run_cpu(c.pooling.desc(), x, dy);
        ASSERT_TRUE(same_bits(naive_maxpool_grad<double>(x, dy, c.pooling), got))
            << "trial " << trial << " x " << shape_string(c.x_shape) << " dy " << shape_string(c.dy_shape);
    }
}

TEST_P(MaxPoolGradTypes, RandomCasesFollowTheDocumentedAdditionOrder) {
    // Real-valued dY: the float32 scatter in increasing dY order is the documented order, bit for bit.
    testing::SeededRng rng;
    for (int trial = 0; trial < 200; ++trial) {
        RandomCase c = random_case(rng);
        Tensor x = random_small_integers(GetParam(), c.x_shape, rng, 1);  // ties: many windows share an element
        Tensor dy = random_tensor(GetParam(), c.dy_shape, rng, trial % 4 == 0, 100.0);
        const Tensor got = run_cpu(c.pooling.desc(), x, dy);
        ASSERT_TRUE(same_bits(naive_maxpool_grad<float>(x, dy, c.pooling), got))
            << "trial " << trial << " x " << shape_string(c.x_shape) << " dy " << shape_string(c.dy_shape);
    }
}

TEST_P(MaxPoolGradTypes, TypicalAndGlobalPoolingMatchTheNaiveReference) {
    // The benchmark geometry (3x3, stride 2, padding 1), a stride-3 5-D pooling and a global pooling, on several
    // planes so that the threads share the work.
    testing::SeededRng rng;
    const std::vector<RandomCase> cases = {
        {{{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}, {2, 4, 33, 34}, {2, 4, 17, 17}},
        {{{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}, {2, 4, 33, 34}, {2, 4, 17, 18}},  // ceil mode on W
        {{{2, 3, 2}, {2, 3, 3}, {0, 1, 1}, {1, 0, 2}, {2, 1, 2}}, {1, 5, 6, 14, 17}, {1, 5, 3, 5, 6}},
        {{{20, 20}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, {3, 3, 20, 20}, {3, 3, 1, 1}},
        {{{1, 40}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, {1, 8, 2, 41}, {1, 8, 2, 2}},
        {{{2, 1, 25}, {1, 1, 7}, {0, 0, 2}, {1, 0, 0}, {1, 1, 1}}, {2, 2, 3, 2, 30}, {2, 2, 3, 2, 2}},
    };
    for (const RandomCase& c : cases) {
        Tensor x = random_tensor(GetParam(), c.x_shape, rng, true, 4.0);
        Tensor dy = random_small_integers(GetParam(), c.dy_shape, rng, 8);
        ASSERT_TRUE(same_bits(naive_maxpool_grad<double>(x, dy, c.pooling), run_cpu(c.pooling.desc(), x, dy)))
            << shape_string(c.x_shape);
        Tensor x_ties = random_small_integers(GetParam(), c.x_shape, rng, 1);
        Tensor dy_real = random_tensor(GetParam(), c.dy_shape, rng, false, 10.0);
        ASSERT_TRUE(same_bits(naive_maxpool_grad<float>(x_ties, dy_real, c.pooling),
                              run_cpu(c.pooling.desc(), x_ties, dy_real)))
            << shape_string(c.x_shape);
    }
}

}  // namespace
}  // namespace dmlgrad
