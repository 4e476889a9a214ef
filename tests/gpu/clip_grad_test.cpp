// Clip grad: GPU against the CPU reference, bit for bit, every dtype of docs/OPERATORS.md 2.2, with bounds taken from
// the data (X equal to a bound), Min > Max, infinite and signed-zero bounds, 64-bit bounds beyond 2^53.
#include <gtest/gtest.h>

#include <cstring>

#include "core/half.h"
#include "gpu_testing.h"
#include "ops/clip_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

ClipGradPlan clip_plan(DType type, const Shape& shape, uint64_t min_bits, uint64_t max_bits) {
    return ClipGradPlan{type, shape, element_count(shape), min_bits, max_bits};
}

// The bits of a float bound in `type` (f32 or f16).
uint64_t float_bits(DType type, float v) { return type == DType::f16 ? float_to_half(v) : std::bit_cast<uint32_t>(v); }

bool is_nan_bits(DType type, uint64_t bits) {
    if (type == DType::f32) return (bits & 0x7FFFFFFF) > 0x7F800000;
    if (type == DType::f16) return (bits & 0x7FFF) > 0x7C00;
    return false;
}

class ClipGradGpu : public ::testing::TestWithParam<DType> {};

TEST_P(ClipGradGpu, MatchesCpuWithBoundsFromTheData) {
    const DType type = GetParam();
    SeededRng rng;
    for (int64_t n : {1, 3, 17, 1000003}) {
        const Tensor x = random_tensor(type, {n}, rng);
        const Tensor dy = random_tensor(type, {n}, rng);
        // Bounds equal to elements of X (not NaN), in both orders, so both Min < Max and Min > Max occur.
        for (int trial = 0; trial < 3; ++trial) {
            uint64_t a = element_bits(x, rng() % uint64_t(n)), b = element_bits(x, rng() % uint64_t(n));
            if (is_nan_bits(type, a)) a = 0;
            if (is_nan_bits(type, b)) b = 0;
            expect_gpu_matches_cpu(clip_plan(type, {n}, a, b), {&x, &dy});
        }
    }
}

TEST_P(ClipGradGpu, MatchesCpuOnRank8AndSplits) {
    const DType type = GetParam();
    SeededRng rng;
    const Shape shape = {3, 1, 2, 5, 7, 2, 3, 11};
    const Tensor x = random_tensor(type, shape, rng);
    const Tensor dy = random_tensor(type, shape, rng);
    uint64_t lo = element_bits(x, 5), hi = element_bits(x, 77);
    if (is_nan_bits(type, lo)) lo = 0;
    if (is_nan_bits(type, hi)) hi = 0;
    expect_gpu_matches_cpu(clip_plan(type, shape, lo, hi), {&x, &dy});
    expect_gpu_matches_cpu(clip_plan(type, shape, hi, lo), {&x, &dy}, gpu_with_limits(kTinyLimits));
    const Tensor xl = random_tensor(type, {70001}, rng), dyl = random_tensor(type, {70001}, rng);
    expect_gpu_matches_cpu(clip_plan(type, {70001}, lo, hi), {&xl, &dyl}, gpu_with_limits(kTinyLimits));
    expect_gpu_matches_cpu(clip_plan(type, {70001}, lo, hi), {&xl, &dyl}, gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(clip_plan(type, {70001}, lo, hi), {&xl, &dyl}, gpu_with_staging());
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ClipGradGpu, ::testing::ValuesIn(kClipGradDocumentedTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(ClipGradGpu, FloatBoundsInfiniteZeroAndDenormal) {
    SeededRng rng;
    for (DType type : {DType::f32, DType::f16}) {
        const Tensor x = random_tensor(type, {4001}, rng);
        const Tensor dy = random_tensor(type, {4001}, rng);
        const float inf = std::numeric_limits<float>::infinity();
        const float pairs[][2] = {{-inf, inf},     {-0.0f, 0.0f}, {0.0f, -0.0f}, {-1e-45f, 1e-45f},
                                  {-6e-8f, 6e-8f}, {1.0f, 1.0f},  {2.0f, -2.0f}, {-inf, -inf}};
        for (const auto& p : pairs)
            expect_gpu_matches_cpu(clip_plan(type, {4001}, float_bits(type, p[0]), float_bits(type, p[1])), {&x, &dy});
    }
}

TEST(ClipGradGpu, WorkedExamples) {
    // docs/OPERATORS.md 2.3 C1-C4.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor x = tensor_from(DType::f32, {8}, {-2, -1, -0.5, 0, 0.5, 1, 2, nan});
    const Tensor dy = tensor_from(DType::f32, {8}, {10, 20, 30, 40, 50, 60, 70, 80});
    EXPECT_EQ(to_doubles(run_on(
                  gpu(), clip_plan(DType::f32, {8}, float_bits(DType::f32, -1), float_bits(DType::f32, 1)), {&x, &dy})),
              (std::vector<double>{0, 0, 30, 40, 50, 0, 0, 80}));
    const Tensor xi = tensor_from(DType::i8, {7}, {-128, -5, -4, 0, 3, 4, 127});
    const Tensor dyi = tensor_from(DType::i8, {7}, {1, 2, 3, 4, 5, 6, 7});
    EXPECT_EQ(to_doubles(run_on(gpu(), clip_plan(DType::i8, {7}, 0xFC, 4), {&xi, &dyi})),
              (std::vector<double>{0, 0, 0, 4, 5, 0, 0}));
    const Tensor xu = tensor_from(DType::u8, {4}, {0, 1, 254, 255});
    const Tensor dyu = tensor_from(DType::u8, {4}, {1, 2, 3, 4});
    EXPECT_EQ(to_doubles(run_on(gpu(), clip_plan(DType::u8, {4}, 0, 255), {&xu, &dyu})),
              (std::vector<double>{0, 2, 3, 0}));
    const Tensor xh = tensor_from(DType::f16, {3}, {0.1, 0.1, 0.10003662109375});
    const Tensor dyh = tensor_from(DType::f16, {3}, {1, 1, 1});
    EXPECT_EQ(
        to_doubles(run_on(gpu(), clip_plan(DType::f16, {3}, float_to_half(0.1f), float_to_half(1.0f)), {&xh, &dyh})),
        (std::vector<double>{0, 0, 1}));
}

TEST(ClipGradGpu, SixtyFourBitBoundsBeyond2To53) {
    // Neighbours of bounds that a double cannot tell apart: only an exact two-word compare gets these right.
    const uint64_t big = (uint64_t(1) << 60) + 1, top = (uint64_t(1) << 62) - 3;
    const std::vector<uint64_t> x_bits = {big - 1,
                                          big,
                                          big + 1,
                                          top - 1,
                                          top,
                                          top + 1,
                                          0,
                                          UINT64_MAX,
                                          uint64_t(INT64_MIN),
                                          uint64_t(INT64_MAX),
                                          uint64_t(-int64_t(big)),
                                          uint64_t(-int64_t(big)) + 1,
                                          0xFFFFFFFF,
                                          0x100000000,
                                          0x80000000,
                                          0x7FFFFFFF};
    const Shape shape = {int64_t(x_bits.size())};
    std::vector<uint64_t> dy_bits;
    for (size_t i = 0; i < x_bits.size(); ++i) dy_bits.push_back(0x0102030405060708ull * (i + 1));
    for (DType type : {DType::i64, DType::u64}) {
        const Tensor x = tensor_from_bits(type, shape, x_bits);
        const Tensor dy = tensor_from_bits(type, shape, dy_bits);
        const std::pair<uint64_t, uint64_t> bounds[] = {{big, top},
                                                        {uint64_t(-int64_t(big)), big},
                                                        {0x7FFFFFFF, 0x100000000},
                                                        {top, big},
                                                        {uint64_t(INT64_MIN), uint64_t(INT64_MAX)},
                                                        {0, UINT64_MAX}};
        for (auto [lo, hi] : bounds) expect_gpu_matches_cpu(clip_plan(type, shape, lo, hi), {&x, &dy});
    }
    // By hand: u64 with bounds (big, top) passes only big + 1 and top - 1 (indices 2 and 3).
    const Tensor x = tensor_from_bits(DType::u64, shape, x_bits);
    const Tensor dy = tensor_from_bits(DType::u64, shape, dy_bits);
    const Tensor out = run_on(gpu(), clip_plan(DType::u64, shape, big, top), {&x, &dy});
    std::vector<uint64_t> expected(x_bits.size(), 0);
    expected[2] = dy_bits[2];
    expected[3] = dy_bits[3];
    EXPECT_TRUE(bitwise_equal(tensor_from_bits(DType::u64, shape, expected), out));
}

}  // namespace
}  // namespace dmlgrad::testing
