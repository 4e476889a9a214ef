// ReLU grad: GPU against the CPU reference, bit for bit, every dtype of docs/OPERATORS.md 1.2.
#include <gtest/gtest.h>

#include "gpu_testing.h"
#include "ops/relu_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

ReluGradPlan relu_plan(DType type, const Shape& shape) { return ReluGradPlan{type, shape, element_count(shape)}; }

void expect_random_inputs_match(Backend& backend, DType type, const Shape& shape, std::mt19937_64& rng) {
    const Tensor x = random_tensor(type, shape, rng);
    const Tensor dy = random_tensor(type, shape, rng);
    expect_gpu_matches_cpu(relu_plan(type, shape), {&x, &dy}, backend);
}

class ReluGradGpu : public ::testing::TestWithParam<DType> {};

TEST_P(ReluGradGpu, MatchesCpuOnOddSizes) {
    SeededRng rng;
    for (int64_t n : {1, 3, 17, 1000003}) expect_random_inputs_match(gpu(), GetParam(), {n}, rng);
}

TEST_P(ReluGradGpu, MatchesCpuOnRanksUpTo8) {
    SeededRng rng;
    expect_random_inputs_match(gpu(), GetParam(), {7, 33, 5}, rng);
    expect_random_inputs_match(gpu(), GetParam(), {2, 3, 1, 5, 2, 3, 1, 7}, rng);
}

TEST_P(ReluGradGpu, SplitsWindowsAndGrids) {
    SeededRng rng;
    for (int64_t n : {4099, 100001}) {
        expect_random_inputs_match(gpu_with_limits(kTinyLimits), GetParam(), {n}, rng);
        expect_random_inputs_match(gpu_with_limits(kFewGroups), GetParam(), {n}, rng);
    }
}

TEST_P(ReluGradGpu, MatchesCpuThroughStagingBuffers) {
    SeededRng rng;
    expect_random_inputs_match(gpu_with_staging(), GetParam(), {100003}, rng);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReluGradGpu, ::testing::ValuesIn(kReluGradDocumentedTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(ReluGradGpu, WorkedExamples) {
    // docs/OPERATORS.md 1.3 R1, R2.
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const Tensor x = tensor_from(DType::f32, {8}, {-2, -0.0, 0.0, 3, nan, inf, -inf, 0.001});
    const Tensor dy = tensor_from(DType::f32, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(to_doubles(run_on(gpu(), relu_plan(DType::f32, {8}), {&x, &dy})),
              (std::vector<double>{0, 0, 0, 4, 0, 6, 0, 8}));
    const Tensor xi = tensor_from(DType::i8, {5}, {-128, -1, 0, 1, 127});
    const Tensor dyi = tensor_from(DType::i8, {5}, {10, 20, 30, 40, 50});
    EXPECT_EQ(to_doubles(run_on(gpu(), relu_plan(DType::i8, {5}), {&xi, &dyi})),
              (std::vector<double>{0, 0, 0, 40, 50}));
}

TEST(ReluGradGpu, DenormalsAndSignedZerosOnBits) {
    // Smallest and largest denormals pass, -0 and -denormal do not; masked lanes are +0 (bits 0).
    const Tensor x =
        tensor_from_bits(DType::f32, {6}, {0x00000001, 0x007FFFFF, 0x80000000, 0x80000001, 0x7F800000, 0x7FC00000});
    const Tensor dy =
        tensor_from_bits(DType::f32, {6}, {0x80000000, 0x7FC00001, 0x3F800000, 0x3F800000, 0x00000001, 0x3F800000});
    const Tensor out = run_on(gpu(), relu_plan(DType::f32, {6}), {&x, &dy});
    EXPECT_TRUE(bitwise_equal(tensor_from_bits(DType::f32, {6}, {0x80000000, 0x7FC00001, 0, 0, 0x00000001, 0}), out));
    const Tensor xh = tensor_from_bits(DType::f16, {5}, {0x0001, 0x8001, 0x7C00, 0x7C01, 0x0000});
    const Tensor dyh = tensor_from_bits(DType::f16, {5}, {0x1234, 0x1234, 0xFC00, 0x1234, 0x1234});
    EXPECT_TRUE(bitwise_equal(tensor_from_bits(DType::f16, {5}, {0x1234, 0, 0xFC00, 0, 0}),
                              run_on(gpu(), relu_plan(DType::f16, {5}), {&xh, &dyh})));
}

}  // namespace
}  // namespace dmlgrad::testing
