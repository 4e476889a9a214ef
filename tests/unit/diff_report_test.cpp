// The diff report of core/compare.h, field by field, against numbers this test computes on its own: errors in
// double, ULP distances through a different ordered mapping, the percentile by sorting, worst elements by a
// full sort, and the smallest passing tolerances checked at themselves and 1% below.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/compare.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

float float_at(const Tensor& t, uint64_t i) { return t.as<float>()[i]; }

// float32 bits mapped onto a line: negative floats below INT32_MIN + ..., -0 and +0 on the same point.
int64_t line_position(float v) {
    const int32_t i = std::bit_cast<int32_t>(v);
    return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);
}

struct RandomPair {
    Tensor result, reference;
};

// A random float32 result and a reference equal to it but for a third of the elements moved 1 to 40 steps of
// the float grid, and one element moved far.
RandomPair random_pair(std::mt19937_64& rng, const Shape& shape) {
    RandomPair p{random_tensor(DType::f32, shape, rng, false), Tensor(TensorInfo{DType::f32, shape})};
    std::memcpy(p.reference.buffer.data(), p.result.buffer.data(), p.result.bytes());
    float* ref = p.reference.as<float>();
    for (uint64_t i = 0; i < p.reference.elements(); ++i) {
        if (i % 5 != 0 && rng() % 5) continue;  // at least every fifth
        const float target = rng() % 2 ? INFINITY : -INFINITY;
        for (int k = int(rng() % 40) + 1; k > 0; --k) ref[i] = std::nextafter(ref[i], target);
    }
    ref[rng() % p.reference.elements()] += 0.5f;
    return p;
}

TEST(DiffReport, FiniteStatisticsMatchAnIndependentComputation) {
    SeededRng rng;
    const Shape shape{3, 4, 5};
    const RandomPair p = random_pair(rng, shape);
    const double rtol = 1e-6;
    const Comparison report = compare_tensors(p.result, p.reference, Tolerance::formula("1e-6", "0"));

    const uint64_t n = p.result.elements();
    double max_abs = 0, max_rel = 0, squared_error = 0, squared_reference = 0;
    uint64_t beyond = 0, first_beyond = n;
    std::vector<int64_t> ulps;
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; ++i) {
        const double r = float_at(p.result, i), f = float_at(p.reference, i), d = std::fabs(r - f);
        max_abs = std::max(max_abs, d);
        if (f != 0) max_rel = std::max(max_rel, d / std::fabs(f));
        squared_error += d * d;
        squared_reference += f * f;
        ulps.push_back(std::abs(line_position(float(r)) - line_position(float(f))));
        if (d > rtol * std::fabs(f)) beyond++, first_beyond = std::min(first_beyond, i);
        order[i] = i;
    }
    std::sort(ulps.begin(), ulps.end());
    EXPECT_EQ(report.elements, n);
    EXPECT_FALSE(report.bit_identical);
    EXPECT_EQ(report.beyond, beyond);
    EXPECT_EQ(report.first_beyond, first_beyond);
    EXPECT_DOUBLE_EQ(report.share_beyond(), double(beyond) / double(n));
    EXPECT_DOUBLE_EQ(report.max_absolute_error, max_abs);
    ASSERT_TRUE(report.max_relative_error);
    EXPECT_NEAR(*report.max_relative_error, max_rel, max_rel * 1e-12);
    ASSERT_TRUE(report.nmse);
    EXPECT_NEAR(*report.nmse, squared_error / squared_reference, 1e-9 * squared_error / squared_reference);
    EXPECT_EQ(*report.max_ulp, uint64_t(ulps.back()));
    EXPECT_EQ(*report.p99_ulp, uint64_t(ulps[size_t(std::ceil(0.99 * double(n))) - 1]));  // nearest rank
    EXPECT_EQ(report.nan_mismatches + report.infinity_mismatches + report.signed_zero_mismatches, 0u);

    // The worst: beyond the rule first, then by error, then by index.
    const auto error = [&](uint64_t i) { return std::fabs(double(float_at(p.result, i)) - float_at(p.reference, i)); };
    const auto is_beyond = [&](uint64_t i) { return error(i) > rtol * std::fabs(double(float_at(p.reference, i))); };
    std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
        if (is_beyond(a) != is_beyond(b)) return is_beyond(a);
        return error(a) != error(b) ? error(a) > error(b) : a < b;
    });
    ASSERT_EQ(report.worst.size(), kWorstElements);
    for (size_t k = 0; k < kWorstElements; ++k) {
        const uint64_t i = order[k];
        EXPECT_EQ(report.worst[k].index, i);
        EXPECT_EQ(report.worst[k].coordinate,
                  (std::vector<int64_t>{int64_t(i / 20), int64_t(i / 5 % 4), int64_t(i % 5)}));
        EXPECT_EQ(report.worst[k].absolute_error, error(i));
        EXPECT_EQ(report.worst[k].beyond, is_beyond(i));
        EXPECT_EQ(std::stof(report.worst[k].result), float_at(p.result, i));
        EXPECT_EQ(std::stof(report.worst[k].reference), float_at(p.reference, i));
    }
}

// The largest amount by which an element misses the rule with this atol and rtol (<= 0: every element passes).
double worst_miss(const RandomPair& p, double atol, double rtol) {
    double miss = -kInf;
    for (uint64_t i = 0; i < p.result.elements(); ++i) {
        const double f = float_at(p.reference, i), d = std::fabs(double(float_at(p.result, i)) - f);
        miss = std::max(miss, d - atol - rtol * std::fabs(f));
    }
    return miss;
}

TEST(DiffReport, TheSmallestTolerancesPassAndOnePercentLessFails) {
    SeededRng rng;
    const RandomPair p = random_pair(rng, {50});
    for (const auto& [rtol, atol] : {std::pair{"0", "0"}, std::pair{"1e-6", "0"}, std::pair{"0", "1e-7"}}) {
        const Tolerance given = Tolerance::formula(rtol, atol);
        const Comparison report = compare_tensors(p.result, p.reference, given);
        ASSERT_TRUE(report.smallest_atol && report.smallest_rtol);
        const double a = std::stod(*report.smallest_atol), r = std::stod(*report.smallest_rtol);
        EXPECT_TRUE(compare_tensors(p.result, p.reference, Tolerance::formula(rtol, *report.smallest_atol)).passed());
        EXPECT_TRUE(compare_tensors(p.result, p.reference, Tolerance::formula(*report.smallest_rtol, atol)).passed());
        EXPECT_GT(worst_miss(p, a * 0.99, std::stod(rtol)), 0) << "atol " << a;
        EXPECT_GT(worst_miss(p, std::stod(atol), r * 0.99), 0) << "rtol " << r;
    }
}

TEST(DiffReport, NaNInfinityAndSignedZeroMismatchesAreCountedApart) {
    const Tensor result = tensor_from(DType::f32, {7}, {kNaN, 1, kInf, -kInf, -0.0, 0, 2});
    const Tensor reference = tensor_from(DType::f32, {7}, {1, kNaN, kInf, kInf, 0, 0, 2.5});
    const Comparison report = compare_tensors(result, reference, Tolerance{});
    EXPECT_EQ(report.nan_mismatches, 2u);
    EXPECT_EQ(report.infinity_mismatches, 1u);
    EXPECT_EQ(report.signed_zero_mismatches, 1u);
    EXPECT_EQ(report.zeros_in_both, 2u);
    EXPECT_EQ(report.beyond, 5u);               // bit for bit: the signed zero too
    EXPECT_EQ(report.max_absolute_error, 0.5);  // over the finite pairs only
    EXPECT_FALSE(report.smallest_atol);         // no tolerance passes a NaN against a number
    EXPECT_FALSE(report.smallest_rtol);
    ASSERT_EQ(report.worst.size(), 5u);
    for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(std::isnan(report.worst[k].absolute_error));  // mismatches first
    EXPECT_EQ(report.worst[3].index, 6u);
    EXPECT_EQ(report.worst[4].index, 4u);  // -0 against +0: no error, but not bit-identical
    const Comparison formula = compare_tensors(result, reference, Tolerance::formula("0", "0"));
    EXPECT_EQ(formula.beyond, 4u);  // -0 == +0 by the formula
}

TEST(DiffReport, ZeroReferenceNmseAndRelativeError) {
    const Tensor zeros = tensor_from(DType::f32, {3}, {0, -0.0, 0});
    const Comparison same = compare_tensors(zeros, zeros, Tolerance{});
    EXPECT_TRUE(same.bit_identical);
    EXPECT_EQ(same.nmse, 0.0);
    EXPECT_EQ(same.max_relative_error, 0.0);
    EXPECT_EQ(same.zeros_in_both, 3u);
    EXPECT_TRUE(same.worst.empty());
    const Comparison off = compare_tensors(tensor_from(DType::f32, {3}, {0, 0.25, 0}), zeros, Tolerance{});
    EXPECT_FALSE(off.nmse);                // 0.0625 / 0: undefined
    EXPECT_FALSE(off.max_relative_error);  // 0.25 / 0: infinite
    EXPECT_EQ(off.smallest_atol, "0.25");
    EXPECT_FALSE(off.smallest_rtol);  // no rtol passes a difference where the reference is 0 and atol is 0
    const Comparison nmse =
        compare_tensors(tensor_from(DType::f64, {2}, {1, 3}), tensor_from(DType::f64, {2}, {2, 2}), Tolerance{});
    EXPECT_EQ(nmse.nmse, 2.0 / 8.0);  // ((1-2)^2 + (3-2)^2) / (2^2 + 2^2)
    EXPECT_EQ(nmse.max_relative_error, 0.5);
}

TEST(DiffReport, UlpsOfFloat16AndOfAReferenceOfAnotherDtype) {
    const Comparison half = compare_tensors(tensor_from_bits(DType::f16, {3}, {0x3C00, 0x0001, 0x7BFF}),
                                            tensor_from_bits(DType::f16, {3}, {0x3C05, 0x8001, 0x7BFF}), Tolerance{});
    EXPECT_EQ(half.max_ulp, 5u);
    EXPECT_EQ(half.p99_ulp, 5u);  // nearest rank of 3 pairs: the largest
    // A float64 reference is rounded to float32 first: 1 + 2^-24 rounds to 1 (ties to even), 1 + 3 * 2^-24 to
    // 1 + 2^-22.
    const Comparison mixed = compare_tensors(
        tensor_from(DType::f32, {2}, {1, 1}),
        tensor_from(DType::f64, {2}, {1 + std::ldexp(1, -24), 1 + 3 * std::ldexp(1, -24)}), Tolerance{});
    EXPECT_EQ(mixed.max_ulp, 2u);
    EXPECT_EQ(mixed.beyond, 2u);
    const Comparison integers =
        compare_tensors(tensor_from(DType::i32, {2}, {10, -4}), tensor_from(DType::i32, {2}, {11, -4}), Tolerance{});
    EXPECT_FALSE(integers.max_ulp);  // no ULPs for integers
    EXPECT_EQ(integers.max_absolute_error, 1.0);
    EXPECT_EQ(integers.smallest_atol, "1");
}

TEST(DiffReport, CoordinatesAreNdIndices) {
    EXPECT_EQ(coordinate_of({2, 3, 4}, 23), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(coordinate_of({2, 3, 4}, 13), (std::vector<int64_t>{1, 0, 1}));
    EXPECT_EQ(coordinate_string({5}, 4), "(4)");
}

}  // namespace
}  // namespace dmlgrad::testing
