// --check's comparison (core/compare.h) with the tolerance of the summing operators (ops/plan.h): the
// README's bounds |gpu - cpu| <= absolute + relative * |cpu| checked just inside and just outside, per dtype, with
// values chosen by hand on each type's grid; NaN, infinities and signed zeros; and bit-for-bit comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/compare.h"
#include "ops/plan.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One-element tensors `expected` and `actual` of `type` (values rounded to the type) agree under `tolerance`.
bool agree(DType type, double expected, double actual, const Tolerance& tolerance) {
    return compare_tensors(tensor_from(type, {1}, {actual}), tensor_from(type, {1}, {expected}), tolerance).passed();
}
bool agree_within_summing_tolerance(DType type, double expected, double actual) {
    return agree(type, expected, actual, summing_tolerance(type));
}
bool agree_bits(DType type, uint64_t expected, uint64_t actual, const Tolerance& tolerance) {
    return compare_tensors(tensor_from_bits(type, {1}, {actual}), tensor_from_bits(type, {1}, {expected}), tolerance)
        .passed();
}

// float32 values `ulps` steps of the float32 grid above `base`.
double f32_above(float base, int ulps) {
    float v = base;
    for (int i = 0; i < ulps; ++i) v = std::nextafter(v, std::numeric_limits<float>::infinity());
    return v;
}

TEST(CheckTolerance, ReadmeStatesTheseBounds) {
    // README, --check: 1e-6 + 1e-5 |cpu| for float32, 1e-3 + 1e-3 |cpu| for float16.
    EXPECT_EQ(summing_tolerance(DType::f32).absolute.text, "1e-6");
    EXPECT_EQ(summing_tolerance(DType::f32).relative.text, "1e-5");
    EXPECT_EQ(summing_tolerance(DType::f16).absolute.text, "1e-3");
    EXPECT_EQ(summing_tolerance(DType::f16).relative.text, "1e-3");
    EXPECT_FALSE(summing_tolerance(DType::f32).exact());
    EXPECT_FALSE(summing_tolerance(DType::f16).exact());
}

// The plan carries the default: max-pool and resample sum (README: "the summing operators"), the others copy or
// select one value per element and compare exactly.
TEST(CheckTolerance, OnlyTheSummingOperatorsDefaultToATolerance) {
    for (DType type : {DType::f32, DType::f16}) {
        MaxPoolGradPlan pool;
        pool.dtype = type;
        ResampleGradPlan resample;
        resample.dtype = type;
        for (const Plan& summing : {Plan{pool}, Plan{resample}}) {
            EXPECT_TRUE(plan_sums(summing));
            EXPECT_EQ(default_tolerance(summing).relative.text, summing_tolerance(type).relative.text);
            EXPECT_EQ(default_tolerance(summing).absolute.text, summing_tolerance(type).absolute.text);
            EXPECT_FALSE(default_tolerance(summing).exact());
        }
        for (const Plan& exact : {Plan{ReluGradPlan{type, {1}, 1}}, Plan{ClipGradPlan{type, {1}, 1, 0, 0}},
                                  Plan{SliceGradPlan{type, {1}, {1}, {0}, {1}, {}}}}) {
            EXPECT_FALSE(plan_sums(exact));
            EXPECT_TRUE(default_tolerance(exact).exact());
        }
    }
}

TEST(CheckTolerance, Float32JustInsideAndJustOutside) {
    // At 1 the bound is 1.1e-5 = 92.27 steps of 2^-23.
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, 1, f32_above(1, 92)));
    EXPECT_FALSE(agree_within_summing_tolerance(DType::f32, 1, f32_above(1, 93)));
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, f32_above(1, 92), 1));  // |cpu| a step larger: still in
    // At 1000 (relative part dominant) the bound is 0.010001 = 163.86 steps of 2^-14; below 0 the same.
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, 1000, f32_above(1000, 163)));
    EXPECT_FALSE(agree_within_summing_tolerance(DType::f32, 1000, f32_above(1000, 164)));
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, -1000, -f32_above(1000, 163)));
    EXPECT_FALSE(agree_within_summing_tolerance(DType::f32, -1000, -f32_above(1000, 164)));
    // At 0 only the absolute part: 1e-6.
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, 0, 9.9e-7));
    EXPECT_FALSE(agree_within_summing_tolerance(DType::f32, 0, 1.01e-6));
    EXPECT_TRUE(agree_within_summing_tolerance(DType::f32, 0, -9.9e-7));
    EXPECT_FALSE(agree_within_summing_tolerance(DType::f32, 0, -1.01e-6));
}

TEST(CheckTolerance, Float16JustInsideAndJustOutside) {
    const Tolerance tolerance = summing_tolerance(DType::f16);
    // At 1 (0x3C00) the bound is 2e-3: two steps of 2^-10 in, three out.
    EXPECT_TRUE(agree_bits(DType::f16, 0x3C00, 0x3C02, tolerance));
    EXPECT_FALSE(agree_bits(DType::f16, 0x3C00, 0x3C03, tolerance));
    // At 1000 (0x63D0) the bound is 1.001: 1001 (0x63D2) in, 1001.5 (0x63D3) out; and below 0.
    EXPECT_TRUE(agree_bits(DType::f16, 0x63D0, 0x63D2, tolerance));
    EXPECT_FALSE(agree_bits(DType::f16, 0x63D0, 0x63D3, tolerance));
    EXPECT_TRUE(agree_bits(DType::f16, 0xE3D0, 0xE3D2, tolerance));
    EXPECT_FALSE(agree_bits(DType::f16, 0xE3D0, 0xE3D3, tolerance));
    // At 0 the bound is 1e-3: 0x1418 (9.9945e-4) in, 0x1419 (1.0004e-3) out.
    EXPECT_TRUE(agree_bits(DType::f16, 0x0000, 0x1418, tolerance));
    EXPECT_FALSE(agree_bits(DType::f16, 0x0000, 0x1419, tolerance));
}

TEST(CheckTolerance, Float64JustInsideAndJustOutside) {
    // Not a type of the summing operators, but the comparison takes it: the float32 bound, in double.
    const Tolerance tolerance = summing_tolerance(DType::f32);
    EXPECT_TRUE(agree(DType::f64, 1, 1 + 1.0999e-5, tolerance));
    EXPECT_FALSE(agree(DType::f64, 1, 1 + 1.1001e-5, tolerance));
    EXPECT_TRUE(agree(DType::f64, 0, 0.9999e-6, tolerance));
    EXPECT_FALSE(agree(DType::f64, 0, 1.0001e-6, tolerance));
}

class CheckToleranceFloats : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(Floats, CheckToleranceFloats, ::testing::Values(DType::f32, DType::f16, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(CheckToleranceFloats, NaNMeetsOnlyNaN) {
    const DType t = GetParam();
    const Tolerance tolerance = summing_tolerance(DType::f32);
    EXPECT_FALSE(agree(t, kNaN, 1, tolerance));
    EXPECT_FALSE(agree(t, 1, kNaN, tolerance));
    EXPECT_FALSE(agree(t, kNaN, 0, tolerance));
    EXPECT_FALSE(agree(t, kNaN, kInf, tolerance));
    EXPECT_FALSE(agree(t, -kInf, kNaN, tolerance));
    EXPECT_TRUE(agree(t, kNaN, kNaN, tolerance));
    EXPECT_TRUE(agree(t, kNaN, -kNaN, tolerance));  // any NaN meets any NaN within a tolerance
}

TEST_P(CheckToleranceFloats, InfinitiesMatchOnlyThemselves) {
    const DType t = GetParam();
    const Tolerance tolerance = summing_tolerance(DType::f32);
    const double largest = t == DType::f16 ? 65504.0 : t == DType::f32 ? double(FLT_MAX) : DBL_MAX;
    EXPECT_TRUE(agree(t, kInf, kInf, tolerance));
    EXPECT_TRUE(agree(t, -kInf, -kInf, tolerance));
    EXPECT_FALSE(agree(t, kInf, -kInf, tolerance));
    EXPECT_FALSE(agree(t, -kInf, kInf, tolerance));
    EXPECT_FALSE(agree(t, kInf, largest, tolerance));
    EXPECT_FALSE(agree(t, largest, kInf, tolerance));
    EXPECT_FALSE(agree(t, -largest, -kInf, tolerance));
    EXPECT_TRUE(agree(t, largest, largest, tolerance));
}

TEST_P(CheckToleranceFloats, SignedZerosAgreeWithinATolerance) {
    const DType t = GetParam();
    EXPECT_TRUE(agree(t, -0.0, 0.0, summing_tolerance(DType::f32)));
    EXPECT_TRUE(agree(t, 0.0, -0.0, summing_tolerance(DType::f32)));
    EXPECT_FALSE(agree(t, -0.0, 0.0, Tolerance{}));  // bit for bit they differ
}

TEST(CheckExact, ComparesBitsNotValues) {
    // Signed zeros and NaN payloads differ; equal bits agree; a tolerance given applies to integers too.
    EXPECT_FALSE(agree_bits(DType::f32, 0x00000000, 0x80000000, Tolerance{}));
    EXPECT_FALSE(agree_bits(DType::f32, 0x7FC00000, 0x7FC00001, Tolerance{}));
    EXPECT_TRUE(agree_bits(DType::f32, 0x7FC00001, 0x7FC00001, Tolerance{}));
    EXPECT_FALSE(agree_bits(DType::f16, 0x7E00, 0xFE00, Tolerance{}));
    EXPECT_FALSE(agree_bits(DType::f64, 0x7FF8000000000000, 0x7FF8000000000001, Tolerance{}));
    EXPECT_FALSE(agree(DType::f64, 1, std::nextafter(1.0, 2.0), Tolerance{}));
    const Tolerance loose = Tolerance::formula("0.5", "10");
    EXPECT_TRUE(agree(DType::i32, 1000, 1001, loose));
    EXPECT_TRUE(agree(DType::u8, 7, 8, loose));
    EXPECT_TRUE(agree_bits(DType::i64, uint64_t(1) << 60, (uint64_t(1) << 60) + 1, loose));
    EXPECT_FALSE(agree_bits(DType::i64, uint64_t(1) << 60, (uint64_t(1) << 60) + 1, Tolerance{}));
    EXPECT_FALSE(agree(DType::i16, 0, 11, loose));
    EXPECT_TRUE(agree(DType::i16, -5, -5, loose));
}

TEST(CheckDifference, CountsAndLocatesTheFirst) {
    const Tolerance tolerance = summing_tolerance(DType::f32);
    const Tensor expected = tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, kNaN, 6});
    const Tensor actual = tensor_from(DType::f32, {2, 3}, {1, 2.5, 3, 4.1, 0, 6});
    const Comparison diff = compare_tensors(actual, expected, tolerance);
    EXPECT_FALSE(diff.passed());
    EXPECT_EQ(diff.first_beyond, 1u);
    EXPECT_EQ(diff.beyond, 3u);
    EXPECT_EQ(coordinate_string(expected.shape(), 4), "(1,1)");
    EXPECT_TRUE(compare_tensors(expected, expected, tolerance).passed());
    EXPECT_TRUE(compare_tensors(expected, expected, Tolerance{}).passed());
}

}  // namespace
}  // namespace dmlgrad::testing
