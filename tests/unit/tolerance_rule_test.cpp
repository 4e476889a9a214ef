// core/tolerance.h: tolerances kept as the decimals typed, and the formula |r - f| <= atol + rtol * |f| evaluated
// exactly, checked against an integer oracle computed here on values chosen at, just inside and just outside
// the boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "core/tolerance.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

__extension__ typedef unsigned __int128 Unsigned128;
__extension__ typedef __int128 Signed128;

TEST(ToleranceText, DecimalsAreKeptAsTyped) {
    const auto tenth = parse_decimal("0.1");
    ASSERT_TRUE(tenth);
    EXPECT_EQ(tenth->significand, BigNatural(1));
    EXPECT_EQ(tenth->exponent, -1);
    EXPECT_EQ(tenth->text, "0.1");
    const auto sci = parse_decimal("+12.50e-3");
    ASSERT_TRUE(sci);
    EXPECT_EQ(sci->significand, BigNatural(125));
    EXPECT_EQ(sci->exponent, -4);
    EXPECT_TRUE(parse_decimal("-0")->is_zero());
    EXPECT_TRUE(parse_decimal("0.000")->is_zero());
}

TEST(ToleranceText, TinyIsZeroHugeIsClampedBadIsRefused) {
    const auto tiny = parse_decimal("1e-400");  // below double's range: accepted, and kept exact
    ASSERT_TRUE(tiny);
    EXPECT_EQ(tiny->exponent, -400);
    EXPECT_FALSE(parse_decimal("1e-999")->is_zero());
    EXPECT_TRUE(parse_decimal("9e-1001")->is_zero());
    const auto huge = parse_decimal("5e2000");
    ASSERT_TRUE(huge);
    EXPECT_EQ(huge->significand, BigNatural(1));
    EXPECT_EQ(huge->exponent, 1000);
    for (const char* bad : {"-1", "-1e-400", "inf", "nan", "1e", "0x1", "+-1", "", ".", "1,5", " 1"})
        EXPECT_FALSE(parse_decimal(bad)) << bad;
}

TEST(BigNaturalArithmetic, AgreesWithUnsigned128) {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 1000; ++i) {
        const uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
        const unsigned shift = unsigned(rng() % 60);
        const Unsigned128 product = (Unsigned128)a * b;
        EXPECT_EQ(BigNatural(a) * BigNatural(b),
                  (BigNatural(uint64_t(product >> 64)).shift_left(64) += BigNatural(uint64_t(product))));
        const Unsigned128 shifted = (Unsigned128)a << shift;
        EXPECT_EQ(BigNatural(a).shift_left(shift),
                  (BigNatural(uint64_t(shifted >> 64)).shift_left(64) += BigNatural(uint64_t(shifted))));
        EXPECT_EQ(distance(BigNatural(a), BigNatural(b)), BigNatural(a > b ? a - b : b - a));
        EXPECT_EQ(BigNatural(a) < BigNatural(b), a < b);
    }
    EXPECT_EQ(BigNatural::power_of_ten(19), BigNatural(10000000000000000000u));
}

// float64 tensors of one element each: result and reference.
bool passes(double result, double reference, const Tolerance& tolerance) {
    return element_passes(tensor_from(DType::f64, {1}, {result}), tensor_from(DType::f64, {1}, {reference}), 0,
                          tolerance);
}

TEST(ToleranceRule, OnAndAroundTheBoundaryLikeAnIntegerOracle) {
    // f = n / 256, atol = a / 1000, rtol = b / 1000: |r - f| = k / 256 passes iff 1000 k <= 256 a + b |n|.
    SeededRng rng;
    int on_boundary = 0;
    for (int i = 0; i < 4000; ++i) {
        const int64_t n = int64_t(rng() % 200001) - 100000, b = int64_t(rng() % 3000);
        int64_t a = int64_t(rng() % 3000);
        if (i % 4 == 0 && n % 8 == 0) {  // 256 a + b |n| a multiple of 1000: 256 a = -b |n| (mod 1000)
            const int64_t c = (1000 - b * std::abs(n) % 1000) % 1000;
            a = c / 8 * 43 % 125;  // 43 = 32^-1 mod 125
        }
        const int64_t budget = 256 * a + b * (n < 0 ? -n : n);
        const int64_t k = budget / 1000 + int64_t(rng() % 3) - 1;  // just inside, on, or just outside
        if (k < 0) continue;
        on_boundary += 1000 * k == budget;
        const Tolerance t = Tolerance::formula(std::to_string(b) + "e-3", std::to_string(a) + "e-3");
        const double f = double(n) / 256, r = f + (rng() % 2 ? 1 : -1) * double(k) / 256;
        EXPECT_EQ(passes(r, f, t), 1000 * k <= budget) << "r " << r << " f " << f << " a " << a << " b " << b;
    }
    EXPECT_GT(on_boundary, 0);
}

TEST(ToleranceRule, Int64AndUint64AtFullWidthLikeAn128BitOracle) {
    SeededRng rng;
    for (int i = 0; i < 2000; ++i) {
        const uint64_t r = rng(), f = rng() % 2 ? r + (rng() % 9) - 4 : rng();
        const uint64_t atol = rng() % 5;
        const Tolerance t = Tolerance::formula("0", std::to_string(atol));
        const Tensor result = tensor_from_bits(DType::i64, {1}, {r});
        const Tensor reference = tensor_from_bits(DType::u64, {1}, {f});
        const Signed128 difference = Signed128(int64_t(r)) - Signed128(f);
        EXPECT_EQ(element_passes(result, reference, 0, t), (difference < 0 ? -difference : difference) <= atol)
            << int64_t(r) << " vs " << f;
    }
}

TEST(ToleranceRule, SpecialValues) {
    const Tolerance loose = Tolerance::formula("1", "1");
    const double inf = INFINITY, nan = NAN;
    EXPECT_TRUE(passes(nan, -nan, Tolerance::formula("0", "0")));
    EXPECT_FALSE(passes(nan, 1, loose));
    EXPECT_FALSE(passes(1, nan, loose));
    EXPECT_TRUE(passes(inf, inf, Tolerance::formula("0", "0")));
    EXPECT_FALSE(passes(inf, -inf, loose));
    EXPECT_FALSE(passes(1e308, inf, loose));
    EXPECT_TRUE(passes(-0.0, 0.0, Tolerance::formula("0", "0")));
    EXPECT_FALSE(passes(-0.0, 0.0, Tolerance{}));
    EXPECT_TRUE(passes(1.7e308, -1.7e308, Tolerance::formula("2", "0")));  // 3.4e308 overflows a double
    EXPECT_FALSE(passes(1.7e308, -1.7e308, Tolerance::formula("1.99", "0")));
    EXPECT_TRUE(passes(4.9406564584124654e-324, 0, Tolerance::formula("0", "4.9406564584124655e-324")));
    EXPECT_FALSE(passes(4.9406564584124654e-324, 0, Tolerance::formula("0", "4.94e-324")));
}

}  // namespace
}  // namespace dmlgrad::testing
