// Decimal -> float16 in one rounding: every midpoint of two adjacent halves (subnormals, 2^-24 and the top of the
// range included), and its nearest decimal neighbours on either side.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/decimal_half.h"
#include "core/error.h"
#include "ops/clip_grad.h"

namespace dmlgrad {
namespace {

__extension__ typedef unsigned __int128 u128;  // wide enough for 2^12 * 5^26

std::string to_decimal(u128 v) {
    std::string s;
    do {
        s.insert(s.begin(), char('0' + int(v % 10)));
        v /= 10;
    } while (v);
    return s;
}

// The exact value of (half u + half u+1) / 2 as "<digits>e-<exponent>": with both as M * 2^k, k >= -25, the
// midpoint is an odd multiple of 2^-25 at worst, i.e. (count * 5^25) * 10^-25.
struct Midpoint {
    std::string digits;  // the integer count * 5^25
    int exponent = 25;
};

Midpoint midpoint_of(unsigned u) {
    // Count in units of 2^-25: a half of biased exponent e >= 1 and mantissa f is (1024 + f) * 2^(e - 25),
    // i.e. (1024 + f) * 2^e units of 2^-25 / 2; subnormals are f * 2^-24 = 2f units.
    auto units = [](unsigned h) -> u128 {
        unsigned e = h >> 10, f = h & 0x3FF;
        return e == 0 ? 2 * f : u128(1024 + f) << e;
    };
    u128 sum = units(u) + units(u + 1);  // twice the midpoint, in units of 2^-25
    u128 five = 1;
    for (int i = 0; i < 25; ++i) five *= 5;
    // midpoint = sum / 2 * 2^-25 = sum * 2^-26 = sum * 5^26 * 10^-26
    return {to_decimal(sum * five * 5), 26};
}

uint16_t parse(const std::string& text) { return decimal_to_half_magnitude(text, std::strtod(text.c_str(), nullptr)); }

TEST(DecimalToHalf, MidpointsTieToEvenAndNeighboursRoundToTheNearer) {
    int checked = 0;
    for (unsigned u = 0; u < 0x7C00; ++u) {
        const Midpoint m = midpoint_of(u);
        const std::string e = "e-" + std::to_string(m.exponent);
        const unsigned even = (u & 1) ? u + 1 : u;
        ASSERT_EQ(parse(m.digits + e), even) << "midpoint after " << u;
        // The next decimals up and down, 30 digits further: far closer to the midpoint than any double can tell.
        const std::string up = m.digits + std::string(29, '0') + "1";
        std::string down = m.digits;
        size_t i = down.size() - 1;
        while (down[i] == '0') down[i--] = '9';
        --down[i];
        down += std::string(30, '9');
        const std::string e30 = "e-" + std::to_string(m.exponent + 30);
        ASSERT_EQ(parse(up + e30), u + 1) << "above the midpoint after " << u;
        ASSERT_EQ(parse(down + e30), u) << "below the midpoint after " << u;
        checked += 3;
    }
    EXPECT_EQ(checked, 3 * 0x7C00);
}

// The findings: both were rounded twice through a double.
TEST(DecimalToHalf, ClipBoundsAreRoundedOnceFromTheText) {
    EXPECT_EQ(parse_clip_bound("--max", "1.00048828125000000000001", DType::f16), 0x3C01u);
    EXPECT_EQ(parse_clip_bound("--max", "1.00048828125", DType::f16), 0x3C00u);            // the tie: even
    EXPECT_EQ(parse_clip_bound("--min", "2.9802322387695313e-08", DType::f16), 0x0001u);   // just above 2^-25
    EXPECT_EQ(parse_clip_bound("--min", "-5.9604644775390625e-08", DType::f16), 0x8001u);  // -2^-24
    EXPECT_EQ(parse_clip_bound("--max", "65519.999999999999999999", DType::f16), 0x7BFFu);
    EXPECT_THROW(parse_clip_bound("--min", "2.98023223876953125e-08", DType::f16), UsageError);  // 2^-25: to 0
    EXPECT_THROW(parse_clip_bound("--max", "65520", DType::f16), UsageError);                    // to inf
    EXPECT_EQ(parse_clip_bound("--max", "inf", DType::f16), 0x7C00u);
}

}  // namespace
}  // namespace dmlgrad
