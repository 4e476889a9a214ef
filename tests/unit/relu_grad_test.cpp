// ReLU grad: docs/OPERATORS.md section 1 worked examples, every validation rule, and the CPU kernel against a naive
// scalar reference on random tensors with special values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/kernels.h"
#include "ops/relu_grad.h"
#include "support/documented_dtypes.h"
#include "support/tensor_testing.h"
#include "support/validation_testing.h"

namespace dmlgrad {
namespace {

using testing::bitwise_equal;
using testing::expect_usage_error;
using testing::operand;
using testing::poison;
using testing::random_shape;
using testing::random_tensor;
using testing::tensor_from;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Plans and runs the CPU kernel the way the CLI does, into a poisoned output.
Tensor run_relu_grad(const Tensor& x, const Tensor& dy) {
    const ReluGradPlan plan = plan_relu_grad(ReluGradDesc{}, Operand{"--input", "x.npy", x.info},
                                             Operand{"--input-gradient", "dy.npy", dy.info});
    Tensor dx(TensorInfo{plan.dtype, plan.shape});
    poison(dx);
    cpu::relu_grad(plan, x, dy, dx);
    return dx;
}

void expect_plan_rejected(const Operand& x, const Operand& dy, const std::vector<std::string>& parts) {
    expect_usage_error([&] { plan_relu_grad(ReluGradDesc{}, x, dy); }, parts);
}

// ---- worked examples (docs/OPERATORS.md 1.3) ----

TEST(ReluGradExamples, R1Float32) {
    const Shape shape{8};
    Tensor x = tensor_from(DType::f32, shape, {-2, -0.0, 0.0, 3, kNaN, kInf, -kInf, 0.001});
    Tensor dy = tensor_from(DType::f32, shape, {1, 2, 3, 4, 5, 6, 7, 8});
    // +0.0 in the masked places: bitwise_equal tells +0 from -0.
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, shape, {0, 0, 0, 4, 0, 6, 0, 8}), run_relu_grad(x, dy)));
}

TEST(ReluGradExamples, R2Int8) {
    const Shape shape{5};
    Tensor x = tensor_from(DType::i8, shape, {-128, -1, 0, 1, 127});
    Tensor dy = tensor_from(DType::i8, shape, {10, 20, 30, 40, 50});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::i8, shape, {0, 0, 0, 40, 50}), run_relu_grad(x, dy)));
}

TEST(ReluGradExamples, R1InFloat16) {
    const Shape shape{8};
    Tensor x = tensor_from(DType::f16, shape, {-2, -0.0, 0.0, 3, kNaN, kInf, -kInf, 0.001});
    Tensor dy = tensor_from(DType::f16, shape, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f16, shape, {0, 0, 0, 4, 0, 6, 0, 8}), run_relu_grad(x, dy)));
}

TEST(ReluGradExamples, R2InInt16AndInt32) {
    for (DType type : {DType::i16, DType::i32}) {
        const Shape shape{6};
        Tensor x = tensor_from(type, shape,
                               {type == DType::i16 ? -32768.0 : -2147483648.0, -1, 0, 1, 127,
                                type == DType::i16 ? 32767.0 : 2147483647.0});
        Tensor dy = tensor_from(type, shape, {10, 20, 30, 40, 50, -60});
        EXPECT_TRUE(bitwise_equal(tensor_from(type, shape, {0, 0, 0, 40, 50, -60}), run_relu_grad(x, dy)))
            << dtype_name(type);
    }
}

// Denormal X is > 0 whatever the FPU's flush mode; every NaN of X masks; dY's bits pass unchanged.
TEST(ReluGradExamples, Float32BitPatterns) {
    const std::vector<uint32_t> x_bits = {0x00000001, 0x80000001, 0x007FFFFF, 0x7F800001,
                                          0xFFC00000, 0x7FC00000, 0x7F7FFFFF, 0x7F800000};
    const std::vector<uint32_t> dy_bits = {0x7FC12345, 0x3F800000, 0x80000000, 0x3F800000,
                                           0x3F800000, 0x3F800000, 0x00000001, 0xFF800000};
    const std::vector<uint32_t> want = {0x7FC12345, 0, 0x80000000, 0, 0, 0, 0x00000001, 0xFF800000};
    Tensor x(TensorInfo{DType::f32, {8}}), dy(TensorInfo{DType::f32, {8}}), expected(TensorInfo{DType::f32, {8}});
    std::memcpy(x.as<uint32_t>(), x_bits.data(), 32);
    std::memcpy(dy.as<uint32_t>(), dy_bits.data(), 32);
    std::memcpy(expected.as<uint32_t>(), want.data(), 32);
    EXPECT_TRUE(bitwise_equal(expected, run_relu_grad(x, dy)));
}

TEST(ReluGradExamples, Float16BitPatterns) {
    const std::vector<uint16_t> x_bits = {0x0001, 0x8001, 0x03FF, 0x7C01, 0xFE00, 0x7E00, 0x7BFF, 0x7C00};
    const std::vector<uint16_t> dy_bits = {0x7E55, 0x3C00, 0x8000, 0x3C00, 0x3C00, 0x3C00, 0x0001, 0xFC00};
    const std::vector<uint16_t> want = {0x7E55, 0, 0x8000, 0, 0, 0, 0x0001, 0xFC00};
    Tensor x(TensorInfo{DType::f16, {8}}), dy(TensorInfo{DType::f16, {8}}), expected(TensorInfo{DType::f16, {8}});
    std::memcpy(x.as<uint16_t>(), x_bits.data(), 16);
    std::memcpy(dy.as<uint16_t>(), dy_bits.data(), 16);
    std::memcpy(expected.as<uint16_t>(), want.data(), 16);
    EXPECT_TRUE(bitwise_equal(expected, run_relu_grad(x, dy)));
}

// ---- validation (docs/OPERATORS.md 1.2 and section 0) ----

TEST(ReluGradValidation, AcceptsEveryTypeOfItsTable) {
    for (DType type : testing::kReluGradDocumentedTypes) {
        const ReluGradPlan plan = plan_relu_grad(ReluGradDesc{}, operand("--input", "x.npy", type, {2, 3}),
                                                 operand("--input-gradient", "dy.npy", type, {2, 3}));
        EXPECT_EQ(plan.dtype, type);
        EXPECT_EQ(plan.shape, (Shape{2, 3}));
        EXPECT_EQ(plan.count, 6u);
    }
}

TEST(ReluGradValidation, RejectsTypesOutsideItsTable) {
    for (DType type : {DType::f64, DType::i64, DType::u8, DType::u16, DType::u32, DType::u64}) {
        expect_plan_rejected(operand("--input", "x.npy", type, {4}), operand("--input-gradient", "dy.npy", type, {4}),
                             {"--input x.npy", "relu-grad", std::string(dtype_name(type))});
    }
}

TEST(ReluGradValidation, RejectsScalar) {
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, {}),
                         operand("--input-gradient", "dy.npy", DType::f32, {}), {"--input x.npy", "rank 0"});
}

TEST(ReluGradValidation, RejectsRankNine) {
    const Shape shape(9, 1);
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, shape),
                         operand("--input-gradient", "dy.npy", DType::f32, shape), {"--input x.npy", "rank 9"});
}

TEST(ReluGradValidation, AcceptsRanksOneToEight) {
    for (size_t rank = 1; rank <= 8; ++rank) {
        const Shape shape(rank, 2);
        EXPECT_NO_THROW(plan_relu_grad(ReluGradDesc{}, operand("--input", "x.npy", DType::f32, shape),
                                       operand("--input-gradient", "dy.npy", DType::f32, shape)));
    }
}

TEST(ReluGradValidation, RejectsZeroSizedAxis) {
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, {3, 0}),
                         operand("--input-gradient", "dy.npy", DType::f32, {3, 0}), {"--input x.npy", "size 0"});
}

TEST(ReluGradValidation, RejectsMoreThan2To32Minus1Elements) {
    expect_plan_rejected(operand("--input", "x.npy", DType::i8, {65536, 65536}),
                         operand("--input-gradient", "dy.npy", DType::i8, {65536, 65536}), {"--input x.npy", "2^32"});
}

TEST(ReluGradValidation, RejectsGradientOfAnotherType) {
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, {4}),
                         operand("--input-gradient", "dy.npy", DType::f16, {4}),
                         {"--input-gradient dy.npy", "float16", "float32"});
}

TEST(ReluGradValidation, RejectsGradientOfAnotherShape) {
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, {2, 3}),
                         operand("--input-gradient", "dy.npy", DType::f32, {3, 2}),
                         {"--input-gradient dy.npy", "3x2", "2x3"});
}

TEST(ReluGradValidation, RejectsGradientOfAnotherRank) {
    expect_plan_rejected(operand("--input", "x.npy", DType::f32, {6}),
                         operand("--input-gradient", "dy.npy", DType::f32, {6, 1}), {"--input-gradient dy.npy"});
}

// ---- the kernel against a naive reference ----

// Deliberately plain: decode X to a double, compare, copy dY's bytes or write zero bytes.
Tensor naive_relu_grad(const Tensor& x, const Tensor& dy) {
    Tensor dx(dy.info);
    const std::vector<double> xs = testing::to_doubles(x);
    const size_t size = dtype_size(dy.dtype());
    for (size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] > 0)
            std::memcpy(dx.buffer.data() + i * size, dy.buffer.data() + i * size, size);
        else
            std::memset(dx.buffer.data() + i * size, 0, size);
    }
    return dx;
}

TEST(ReluGradRandom, MatchesNaiveReferenceForEveryTypeAndRank) {
    testing::SeededRng rng;
    for (DType type : testing::kReluGradDocumentedTypes) {
        for (size_t rank = 1; rank <= 8; ++rank) {
            const Shape shape = random_shape(rng, rank, 3000);
            SCOPED_TRACE(::testing::Message() << dtype_name(type) << " " << shape_string(shape));
            Tensor x = random_tensor(type, shape, rng);
            Tensor dy = random_tensor(type, shape, rng);
            EXPECT_TRUE(bitwise_equal(naive_relu_grad(x, dy), run_relu_grad(x, dy)));
        }
    }
}

// Large enough for several threads, with a count that splits unevenly.
TEST(ReluGradRandom, MatchesNaiveReferenceAcrossThreads) {
    testing::SeededRng rng;
    for (DType type : testing::kReluGradDocumentedTypes) {
        SCOPED_TRACE(dtype_name(type));
        const Shape shape{3, 100003};
        Tensor x = random_tensor(type, shape, rng);
        Tensor dy = random_tensor(type, shape, rng);
        EXPECT_TRUE(bitwise_equal(naive_relu_grad(x, dy), run_relu_grad(x, dy)));
    }
}

}  // namespace
}  // namespace dmlgrad
