// Clip grad: docs/OPERATORS.md section 2 worked examples, the parsing of --min/--max into the tensor's type, every
// validation rule, and the CPU kernel against a naive scalar reference on random tensors with special values.
#include <fmt/format.h>
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
#include "core/half.h"
#include "cpu/kernels.h"
#include "ops/clip_grad.h"
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

Tensor run_clip_grad(const Tensor& x, const Tensor& dy, std::string min, std::string max) {
    const ClipGradPlan plan =
        plan_clip_grad(ClipGradDesc{std::move(min), std::move(max)}, Operand{"--input", "x.npy", x.info},
                       Operand{"--input-gradient", "dy.npy", dy.info});
    Tensor dx(TensorInfo{plan.dtype, plan.shape});
    poison(dx);
    cpu::clip_grad(plan, x, dy, dx);
    return dx;
}

void expect_bound_rejected(std::string_view text, DType type, const std::vector<std::string>& parts) {
    SCOPED_TRACE(::testing::Message() << text << " as " << dtype_name(type));
    expect_usage_error([&] { parse_clip_bound("--max", text, type); }, parts);
}

// ---- worked examples (docs/OPERATORS.md 2.3) ----

TEST(ClipGradExamples, C1Float32) {
    const Shape shape{8};
    Tensor x = tensor_from(DType::f32, shape, {-2, -1, -0.5, 0, 0.5, 1, 2, kNaN});
    Tensor dy = tensor_from(DType::f32, shape, {10, 20, 30, 40, 50, 60, 70, 80});
    EXPECT_TRUE(
        bitwise_equal(tensor_from(DType::f32, shape, {0, 0, 30, 40, 50, 0, 0, 80}), run_clip_grad(x, dy, "-1", "1")));
}

TEST(ClipGradExamples, C2Int8) {
    const Shape shape{7};
    Tensor x = tensor_from(DType::i8, shape, {-128, -5, -4, 0, 3, 4, 127});
    Tensor dy = tensor_from(DType::i8, shape, {1, 2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::i8, shape, {0, 0, 0, 4, 5, 0, 0}), run_clip_grad(x, dy, "-4", "4")));
}

TEST(ClipGradExamples, C3Uint8) {
    const Shape shape{4};
    Tensor x = tensor_from(DType::u8, shape, {0, 1, 254, 255});
    Tensor dy = tensor_from(DType::u8, shape, {1, 2, 3, 4});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::u8, shape, {0, 2, 3, 0}), run_clip_grad(x, dy, "0", "255")));
}

// Min = 0.1 becomes fp16 0.0999755859375, which equals fp16(0.1): X there is at Min and gets 0.
TEST(ClipGradExamples, C4Float16BoundRoundedToTheType) {
    const Shape shape{3};
    Tensor x = tensor_from(DType::f16, shape, {0.1, 0.0999755859375, 0.10003662109375});
    Tensor dy = tensor_from(DType::f16, shape, {1, 1, 1});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f16, shape, {0, 0, 1}), run_clip_grad(x, dy, "0.1", "1")));
}

// ---- rules beyond the examples ----

TEST(ClipGradRules, MinAboveMaxGivesZerosExceptNaN) {
    const Shape shape{6};
    Tensor x = tensor_from(DType::f32, shape, {-kInf, -1, 0, 1, kInf, kNaN});
    Tensor dy = tensor_from(DType::f32, shape, {1, 2, 3, 4, 5, 6});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, shape, {0, 0, 0, 0, 0, 6}), run_clip_grad(x, dy, "1", "-1")));
    Tensor xi = tensor_from(DType::i32, {4}, {-5, 0, 1, 5});
    Tensor dyi = tensor_from(DType::i32, {4}, {1, 2, 3, 4});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::i32, {4}, {0, 0, 0, 0}), run_clip_grad(xi, dyi, "2", "-2")));
}

TEST(ClipGradRules, EqualBoundsGiveZerosExceptNaN) {
    Tensor x = tensor_from(DType::f16, {4}, {-1, 0, 1, kNaN});
    Tensor dy = tensor_from(DType::f16, {4}, {1, 2, 3, 4});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f16, {4}, {0, 0, 0, 4}), run_clip_grad(x, dy, "0", "0")));
}

// -0 equals +0 on both sides; a denormal X is strictly inside (0, 1); infinite bounds exclude only infinities.
TEST(ClipGradRules, SignedZerosDenormalsAndInfiniteBounds) {
    Tensor x = tensor_from(DType::f32, {5}, {-0.0, 0.0, 1e-45, -1e-45, 1});
    Tensor dy = tensor_from(DType::f32, {5}, {1, 2, 3, 4, 5});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {5}, {0, 0, 3, 0, 0}), run_clip_grad(x, dy, "0", "1")));
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {5}, {0, 0, 3, 0, 0}), run_clip_grad(x, dy, "-0", "1")));
    Tensor x2 = tensor_from(DType::f32, {5}, {-kInf, -3.4e38, 3.4e38, kInf, kNaN});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {5}, {0, 2, 3, 0, 5}), run_clip_grad(x2, dy, "-inf", "inf")));
    Tensor xh = tensor_from(DType::f16, {4}, {-0.0, 6e-8, -6e-8, 0.5});
    Tensor dyh = tensor_from(DType::f16, {4}, {1, 2, 3, 4});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f16, {4}, {0, 2, 0, 4}), run_clip_grad(xh, dyh, "0", "1")));
}

// dY's bits pass unchanged (NaN payloads, -0.0), masked elements are +0.
TEST(ClipGradRules, PassesGradientBitsUnchanged) {
    const std::vector<uint32_t> x_bits = {0x3F000000, 0x3F000000, 0x7FC00001, 0xBF000000};
    const std::vector<uint32_t> dy_bits = {0x7FC12345, 0x80000000, 0xFFC00042, 0x80000000};
    const std::vector<uint32_t> want = {0x7FC12345, 0x80000000, 0xFFC00042, 0};
    Tensor x(TensorInfo{DType::f32, {4}}), dy(TensorInfo{DType::f32, {4}}), expected(TensorInfo{DType::f32, {4}});
    std::memcpy(x.as<uint32_t>(), x_bits.data(), 16);
    std::memcpy(dy.as<uint32_t>(), dy_bits.data(), 16);
    std::memcpy(expected.as<uint32_t>(), want.data(), 16);
    EXPECT_TRUE(bitwise_equal(expected, run_clip_grad(x, dy, "0", "1")));
}

// 2^53 + 1 has no double: a comparison through doubles would treat 2^53 as equal to Max.
TEST(ClipGradRules, Int64ComparesExactlyAbove2To53) {
    const std::vector<int64_t> xs = {INT64_MIN,        INT64_MIN + 1,    9007199254740992,
                                     9007199254740993, 9007199254740994, INT64_MAX};
    Tensor x(TensorInfo{DType::i64, {6}}), dy(TensorInfo{DType::i64, {6}}), expected(TensorInfo{DType::i64, {6}});
    std::memcpy(x.as<int64_t>(), xs.data(), 48);
    const std::vector<int64_t> dys = {1, 2, 3, 4, 5, 6}, want = {0, 2, 3, 0, 0, 0};
    std::memcpy(dy.as<int64_t>(), dys.data(), 48);
    std::memcpy(expected.as<int64_t>(), want.data(), 48);
    EXPECT_TRUE(bitwise_equal(expected, run_clip_grad(x, dy, "-9223372036854775808", "9007199254740993")));
}

TEST(ClipGradRules, Uint64ComparesUnsignedToTheTop) {
    const std::vector<uint64_t> xs = {0, 1, 0x8000000000000000u, UINT64_MAX - 1, UINT64_MAX};
    Tensor x(TensorInfo{DType::u64, {5}}), dy(TensorInfo{DType::u64, {5}}), expected(TensorInfo{DType::u64, {5}});
    std::memcpy(x.as<uint64_t>(), xs.data(), 40);
    const std::vector<uint64_t> dys = {1, 2, 3, 4, 5}, want = {0, 2, 3, 4, 0};
    std::memcpy(dy.as<uint64_t>(), dys.data(), 40);
    std::memcpy(expected.as<uint64_t>(), want.data(), 40);
    EXPECT_TRUE(bitwise_equal(expected, run_clip_grad(x, dy, "0", "18446744073709551615")));
}

// ---- parse_clip_bound ----

TEST(ClipGradBounds, IntegerExtremesParseExactly) {
    EXPECT_EQ(parse_clip_bound("--min", "-9223372036854775808", DType::i64), 0x8000000000000000u);
    EXPECT_EQ(parse_clip_bound("--max", "9223372036854775807", DType::i64), 0x7FFFFFFFFFFFFFFFu);
    EXPECT_EQ(parse_clip_bound("--max", "18446744073709551615", DType::u64), 0xFFFFFFFFFFFFFFFFu);
    EXPECT_EQ(parse_clip_bound("--max", "9007199254740993", DType::i64), 9007199254740993u);
    EXPECT_EQ(parse_clip_bound("--max", "9007199254740993", DType::u64), 9007199254740993u);
    EXPECT_EQ(parse_clip_bound("--min", "-128", DType::i8), 0x80u);
    EXPECT_EQ(parse_clip_bound("--min", "127", DType::i8), 0x7Fu);
    EXPECT_EQ(parse_clip_bound("--min", "-1", DType::i16), 0xFFFFu);
    EXPECT_EQ(parse_clip_bound("--min", "-2147483648", DType::i32), 0x80000000u);
    EXPECT_EQ(parse_clip_bound("--max", "4294967295", DType::u32), 0xFFFFFFFFu);
    EXPECT_EQ(parse_clip_bound("--max", "65535", DType::u16), 0xFFFFu);
    EXPECT_EQ(parse_clip_bound("--max", "255", DType::u8), 0xFFu);
}

TEST(ClipGradBounds, IntegerSignsAndZeros) {
    EXPECT_EQ(parse_clip_bound("--max", "+5", DType::u8), 5u);
    EXPECT_EQ(parse_clip_bound("--max", "+5", DType::i64), 5u);
    EXPECT_EQ(parse_clip_bound("--max", "-0", DType::u8), 0u);
    EXPECT_EQ(parse_clip_bound("--max", "007", DType::i8), 7u);
}

TEST(ClipGradBounds, IntegerOutOfRangeNamesFlagValueTypeAndRange) {
    try {
        parse_clip_bound("--max", "300", DType::u8);
        ADD_FAILURE() << "no UsageError";
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "--max 300: out of range for uint8 (0 to 255)");
    }
    expect_bound_rejected("-129", DType::i8, {"--max -129", "int8", "-128 to 127"});
    expect_bound_rejected("128", DType::i8, {"--max 128", "int8"});
    expect_bound_rejected("-1", DType::u8, {"--max -1", "uint8"});
    expect_bound_rejected("-1", DType::u64, {"--max -1", "uint64", "0 to 18446744073709551615"});
    expect_bound_rejected("65536", DType::u16, {"--max 65536", "uint16"});
    expect_bound_rejected("-32769", DType::i16, {"--max -32769", "int16"});
    expect_bound_rejected("4294967296", DType::u32, {"--max 4294967296", "uint32"});
    expect_bound_rejected("2147483648", DType::i32, {"--max 2147483648", "int32"});
    expect_bound_rejected("9223372036854775808", DType::i64,
                          {"--max 9223372036854775808", "int64", "-9223372036854775808 to 9223372036854775807"});
    expect_bound_rejected("-9223372036854775809", DType::i64, {"--max -9223372036854775809", "int64"});
    expect_bound_rejected("18446744073709551616", DType::u64, {"--max 18446744073709551616", "uint64"});
    expect_bound_rejected("99999999999999999999999", DType::i8, {"--max 99999999999999999999999", "out of range"});
}

TEST(ClipGradBounds, IntegerTypesTakeIntegersOnly) {
    for (const char* text : {"1.5", "1.0", "abc", "", "1e3", " 5", "5 ", "0x10", "+-5", "--5", "-", "+", "inf", "nan"})
        expect_bound_rejected(text, DType::i32, {fmt::format("--max {}:", text), "not an integer", "int32"});
    expect_bound_rejected("1.5", DType::u64, {"--max 1.5", "not an integer", "uint64"});
}

TEST(ClipGradBounds, Float16RoundsToNearestEven) {
    EXPECT_EQ(parse_clip_bound("--min", "0.1", DType::f16), float_to_half(0.1f));
    EXPECT_EQ(half_to_float(uint16_t(parse_clip_bound("--min", "0.1", DType::f16))), 0.0999755859375f);
    EXPECT_EQ(parse_clip_bound("--min", "65504", DType::f16), 0x7BFFu);
    EXPECT_EQ(parse_clip_bound("--min", "65519.99", DType::f16), 0x7BFFu);
    EXPECT_EQ(parse_clip_bound("--min", "-0", DType::f16), 0x8000u);
    EXPECT_EQ(parse_clip_bound("--min", "3e-8", DType::f16), 0x0001u);  // just above half the smallest subnormal
    EXPECT_EQ(parse_clip_bound("--min", "1.00048828125", DType::f16), 0x3C00u);  // 1 + 2^-11: tie, to even
    EXPECT_EQ(parse_clip_bound("--min", "1.00146484375", DType::f16), 0x3C02u);  // 1 + 3 * 2^-11: tie, to even
}

// Every half value parses to itself; every midpoint between neighbours goes to the even one; a hair off the
// midpoint goes to the nearer one. The oracle is the integer bits of the neighbours, not a conversion routine.
// The doubles are written out exactly ("{:.100e}" prints every digit of a double of this range): the shortest
// text that reads back as the midpoint double lies off the midpoint, and is rounded from what it says.
TEST(ClipGradBounds, Float16ExhaustiveRoundTripsAndTies) {
    for (uint16_t bits = 0; bits < 0x7C00; ++bits) {
        const double value = half_to_float(bits);
        ASSERT_EQ(parse_clip_bound("--min", fmt::format("{}", value), DType::f16), bits) << value;
        ASSERT_EQ(parse_clip_bound("--min", fmt::format("{}", -value), DType::f16), bits | 0x8000u) << -value;
        if (bits == 0x7BFF) continue;  // the midpoint above 65504 rounds to inf: rejected, tested apart
        const double next = half_to_float(uint16_t(bits + 1));
        const double middle = (value + next) / 2;  // exact in double
        const double below = std::nextafter(middle, 0.0), above = std::nextafter(middle, kInf);
        ASSERT_EQ(parse_clip_bound("--min", fmt::format("{:.100e}", above), DType::f16), uint16_t(bits + 1)) << above;
        if (bits == 0) continue;  // 2^-25 and below round to 0: rejected, tested apart
        const uint16_t even = (bits & 1) ? uint16_t(bits + 1) : bits;
        ASSERT_EQ(parse_clip_bound("--min", fmt::format("{:.100e}", middle), DType::f16), even) << middle;
        ASSERT_EQ(parse_clip_bound("--min", fmt::format("{:.100e}", below), DType::f16), bits) << below;
    }
}

TEST(ClipGradBounds, Float32ParsesWithOneRounding) {
    EXPECT_EQ(parse_clip_bound("--min", "0.1", DType::f32), std::bit_cast<uint32_t>(0.1f));
    EXPECT_EQ(parse_clip_bound("--min", "-0", DType::f32), 0x80000000u);
    EXPECT_EQ(parse_clip_bound("--min", "1.4e-45", DType::f32), 0x00000001u);
    EXPECT_EQ(parse_clip_bound("--min", "3.4028235e38", DType::f32), 0x7F7FFFFFu);
    // 1 + 2^-24 + 2^-60: just above a float tie; through a double (1 + 2^-24 exactly) it would round to even, 1.
    EXPECT_EQ(parse_clip_bound("--min", "1.00000005960464477539930133", DType::f32), 0x3F800001u);
    EXPECT_EQ(parse_clip_bound("--min", "+2.5", DType::f32), std::bit_cast<uint32_t>(2.5f));
}

TEST(ClipGradBounds, InfinitiesAreAccepted) {
    for (DType type : {DType::f32, DType::f16}) {
        const uint64_t inf = type == DType::f32 ? 0x7F800000u : 0x7C00u;
        const uint64_t minus_inf = type == DType::f32 ? 0xFF800000u : 0xFC00u;
        EXPECT_EQ(parse_clip_bound("--max", "inf", type), inf);
        EXPECT_EQ(parse_clip_bound("--max", "+inf", type), inf);
        EXPECT_EQ(parse_clip_bound("--max", "infinity", type), inf);
        EXPECT_EQ(parse_clip_bound("--min", "-inf", type), minus_inf);
    }
}

TEST(ClipGradBounds, NaNIsRejected) {
    for (DType type : {DType::f32, DType::f16})
        for (const char* text : {"nan", "-nan", "NaN", "nan(123)"})
            expect_bound_rejected(text, type, {fmt::format("--max {}:", text), "NaN", std::string(dtype_name(type))});
}

TEST(ClipGradBounds, FloatsThatWouldRoundToInfOrZeroAreRejected) {
    for (const char* text : {"65520", "70000", "-1e5", "1e-8", "-2.9e-8", "1e400"})
        expect_bound_rejected(text, DType::f16, {fmt::format("--max {}:", text), "out of range for float16"});
    expect_bound_rejected("2.98023223876953125e-8", DType::f16, {"out of range for float16"});  // 2^-25: tie to 0
    for (const char* text : {"1e39", "-3.5e38", "1e-46", "1e-400"})
        expect_bound_rejected(text, DType::f32, {fmt::format("--max {}:", text), "out of range for float32"});
}

TEST(ClipGradBounds, FloatsRejectWhatIsNotANumber) {
    for (DType type : {DType::f32, DType::f16})
        for (const char* text : {"abc", "", "1.5x", " 1", "1 ", "0x1p3", "+-1", "1,5", "--1"})
            expect_bound_rejected(text, type,
                                  {fmt::format("--max {}:", text), "not a number", std::string(dtype_name(type))});
}

// ---- validation (docs/OPERATORS.md 2.2 and section 0) ----

void expect_plan_rejected(const ClipGradDesc& desc, const Operand& x, const Operand& dy,
                          const std::vector<std::string>& parts) {
    expect_usage_error([&] { plan_clip_grad(desc, x, dy); }, parts);
}

const ClipGradDesc kUnitBounds{"-1", "1"};

TEST(ClipGradValidation, AcceptsEveryTypeOfItsTable) {
    for (DType type : testing::kClipGradDocumentedTypes) {
        const ClipGradPlan plan = plan_clip_grad(ClipGradDesc{"0", "3"}, operand("--input", "x.npy", type, {2, 3}),
                                                 operand("--input-gradient", "dy.npy", type, {2, 3}));
        EXPECT_EQ(plan.dtype, type);
        EXPECT_EQ(plan.shape, (Shape{2, 3}));
        EXPECT_EQ(plan.count, 6u);
        EXPECT_EQ(plan.min_bits, 0u);
        const uint64_t three = type == DType::f32 ? 0x40400000u : type == DType::f16 ? 0x4200u : 3u;
        EXPECT_EQ(plan.max_bits, three) << dtype_name(type);
    }
}

TEST(ClipGradValidation, RejectsFloat64) {
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::f64, {4}),
                         operand("--input-gradient", "dy.npy", DType::f64, {4}),
                         {"--input x.npy", "clip-grad", "float64"});
}

TEST(ClipGradValidation, RejectsScalarAndRankNine) {
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::f32, {}),
                         operand("--input-gradient", "dy.npy", DType::f32, {}), {"--input x.npy", "rank 0"});
    const Shape nine(9, 1);
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::f32, nine),
                         operand("--input-gradient", "dy.npy", DType::f32, nine), {"--input x.npy", "rank 9"});
}

TEST(ClipGradValidation, RejectsZeroSizedAxis) {
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::f32, {0}),
                         operand("--input-gradient", "dy.npy", DType::f32, {0}), {"--input x.npy", "size 0"});
}

TEST(ClipGradValidation, RejectsGradientOfAnotherType) {
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::i32, {4}),
                         operand("--input-gradient", "dy.npy", DType::u32, {4}),
                         {"--input-gradient dy.npy", "uint32", "int32"});
}

TEST(ClipGradValidation, RejectsGradientOfAnotherShape) {
    expect_plan_rejected(kUnitBounds, operand("--input", "x.npy", DType::f32, {4, 1}),
                         operand("--input-gradient", "dy.npy", DType::f32, {4}), {"--input-gradient dy.npy", "4x1"});
}

TEST(ClipGradValidation, BoundErrorsNameTheirFlag) {
    const Operand x = operand("--input", "x.npy", DType::u8, {4});
    const Operand dy = operand("--input-gradient", "dy.npy", DType::u8, {4});
    expect_plan_rejected(ClipGradDesc{"-1", "10"}, x, dy, {"--min -1", "uint8"});
    expect_plan_rejected(ClipGradDesc{"0", "2.5"}, x, dy, {"--max 2.5", "uint8"});
}

TEST(ClipGradValidation, AcceptsMinAboveMax) {
    const ClipGradPlan plan = plan_clip_grad(ClipGradDesc{"5", "-5"}, operand("--input", "x.npy", DType::i8, {1}),
                                             operand("--input-gradient", "dy.npy", DType::i8, {1}));
    EXPECT_EQ(plan.min_bits, 5u);
    EXPECT_EQ(plan.max_bits, 0xFBu);
}

// ---- the kernel against a naive reference ----

template <class T>
T element(const Tensor& t, uint64_t i) {
    T v;
    std::memcpy(&v, t.buffer.data() + i * sizeof(T), sizeof(T));
    return v;
}

// A bound as the test chose it: the exact value (of the tensor's type) and the text given to the plan.
struct Bound {
    double real = 0;      // float types
    int64_t signed_ = 0;  // signed integer types
    uint64_t unsigned_ = 0;
    std::string text;
};

// Deliberately plain: decode each X, apply the literal rule, copy dY's bytes or write zero bytes.
Tensor naive_clip_grad(const Tensor& x, const Tensor& dy, const Bound& low, const Bound& high) {
    Tensor dx(dy.info);
    const DType type = x.dtype();
    const size_t size = dtype_size(type);
    const std::vector<double> xs = dtype_is_float(type) ? testing::to_doubles(x) : std::vector<double>{};
    for (uint64_t i = 0; i < x.elements(); ++i) {
        bool zero;
        if (dtype_is_float(type)) {
            zero = xs[i] <= low.real || xs[i] >= high.real;  // false for NaN
        } else if (dtype_is_signed_int(type)) {
            int64_t v = size == 1   ? element<int8_t>(x, i)
                        : size == 2 ? element<int16_t>(x, i)
                        : size == 4 ? element<int32_t>(x, i)
                                    : element<int64_t>(x, i);
            zero = v <= low.signed_ || v >= high.signed_;
        } else {
            uint64_t v = size == 1   ? element<uint8_t>(x, i)
                         : size == 2 ? element<uint16_t>(x, i)
                         : size == 4 ? element<uint32_t>(x, i)
                                     : element<uint64_t>(x, i);
            zero = v <= low.unsigned_ || v >= high.unsigned_;
        }
        if (zero)
            std::memset(dx.buffer.data() + i * size, 0, size);
        else
            std::memcpy(dx.buffer.data() + i * size, dy.buffer.data() + i * size, size);
    }
    return dx;
}

// A bound that often equals an element of X (the boundary cases), else a special or random value of the type.
Bound random_bound(DType type, const Tensor& x, std::mt19937_64& rng) {
    Bound b;
    const uint64_t pick = rng() % 4;
    const uint64_t i = rng() % x.elements();
    if (dtype_is_float(type)) {
        const double specials[] = {0.0, -0.0, kInf, -kInf, 1e-45, -1e-45, 6e-8, 1.0};
        double v = pick == 0   ? specials[rng() % 8]
                   : pick == 1 ? testing::to_doubles(x)[i]
                               : std::uniform_real_distribution<double>(-4, 4)(rng);
        if (std::isnan(v)) v = 0.5;
        v = type == DType::f16 ? double(half_to_float(float_to_half(float(v)))) : double(float(v));
        b.real = v;
        b.text = fmt::format("{}", v);  // shortest text that reads back as exactly v
    } else if (dtype_is_signed_int(type)) {
        const size_t bits = 8 * dtype_size(type);
        const int64_t lowest = bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1));
        const int64_t highest = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
        const int64_t from_x = bits == 8    ? element<int8_t>(x, i)
                               : bits == 16 ? element<int16_t>(x, i)
                               : bits == 32 ? element<int32_t>(x, i)
                                            : element<int64_t>(x, i);
        const int64_t values[] = {lowest, highest, from_x,
                                  std::uniform_int_distribution<int64_t>(lowest, highest)(rng)};
        b.signed_ = values[pick];
        b.text = std::to_string(b.signed_);
    } else {
        const size_t bits = 8 * dtype_size(type);
        const uint64_t highest = bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
        const uint64_t from_x = bits == 8    ? element<uint8_t>(x, i)
                                : bits == 16 ? element<uint16_t>(x, i)
                                : bits == 32 ? element<uint32_t>(x, i)
                                             : element<uint64_t>(x, i);
        const uint64_t values[] = {0, highest, from_x, rng() & highest};
        b.unsigned_ = values[pick];
        b.text = std::to_string(b.unsigned_);
    }
    return b;
}

void check_against_naive(DType type, const Shape& shape, std::mt19937_64& rng) {
    Tensor x = random_tensor(type, shape, rng);
    Tensor dy = random_tensor(type, shape, rng);
    const Bound low = random_bound(type, x, rng), high = random_bound(type, x, rng);
    SCOPED_TRACE(::testing::Message() << dtype_name(type) << " " << shape_string(shape) << " --min " << low.text
                                      << " --max " << high.text);
    EXPECT_TRUE(bitwise_equal(naive_clip_grad(x, dy, low, high), run_clip_grad(x, dy, low.text, high.text)));
}

TEST(ClipGradRandom, MatchesNaiveReferenceForEveryTypeAndRank) {
    testing::SeededRng rng;
    for (DType type : testing::kClipGradDocumentedTypes)
        for (size_t rank = 1; rank <= 8; ++rank)
            for (int repeat = 0; repeat < 4; ++repeat) check_against_naive(type, random_shape(rng, rank, 3000), rng);
}

TEST(ClipGradRandom, MatchesNaiveReferenceAcrossThreads) {
    testing::SeededRng rng;
    for (DType type : testing::kClipGradDocumentedTypes) check_against_naive(type, Shape{100003, 3}, rng);
}

}  // namespace
}  // namespace dmlgrad
