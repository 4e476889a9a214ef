// core/integer.h: division rounded toward minus and plus infinity, against hand-checked values on both signs.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/integer.h"

namespace dmlgrad {
namespace {

TEST(FloorDiv, RoundsTowardMinusInfinityOnBothSigns) {
    EXPECT_EQ(floor_div(7, 2), 3);
    EXPECT_EQ(floor_div(6, 2), 3);
    EXPECT_EQ(floor_div(0, 5), 0);
    EXPECT_EQ(floor_div(-1, 2), -1);  // C++'s -1 / 2 is 0
    EXPECT_EQ(floor_div(-6, 3), -2);
    EXPECT_EQ(floor_div(-7, 3), -3);
    EXPECT_EQ(floor_div(INT64_MIN + 1, 1), INT64_MIN + 1);
    EXPECT_EQ(floor_div(INT64_MIN, 1), INT64_MIN);
    EXPECT_EQ(floor_div(INT64_MIN, 2), INT64_MIN / 2);
    EXPECT_EQ(floor_div(INT64_MIN + 1, INT64_MAX), -1);
    EXPECT_EQ(floor_div(-(int64_t(1) << 40) - 1, int64_t(1) << 20), -(int64_t(1) << 20) - 1);
}

TEST(CeilDiv, RoundsTowardPlusInfinityOnBothSignsWithoutOverflow) {
    EXPECT_EQ(ceil_div(7, 2), 4);
    EXPECT_EQ(ceil_div(6, 2), 3);
    EXPECT_EQ(ceil_div(0, 5), 0);
    EXPECT_EQ(ceil_div(1, 5), 1);
    EXPECT_EQ(ceil_div(-1, 2), 0);
    EXPECT_EQ(ceil_div(-7, 3), -2);
    EXPECT_EQ(ceil_div(-6, 3), -2);
    EXPECT_EQ(ceil_div(INT64_MAX, int64_t(2)), int64_t(1) << 62);
    EXPECT_EQ(ceil_div(INT64_MIN, int64_t(2)), INT64_MIN / 2);
    EXPECT_EQ(ceil_div(INT64_MIN, INT64_MAX), -1);
    EXPECT_EQ(ceil_div(uint64_t(0), uint64_t(16)), 0u);
    EXPECT_EQ(ceil_div(uint64_t(17), uint64_t(16)), 2u);
    EXPECT_EQ(ceil_div(UINT64_MAX, uint64_t(2)), uint64_t(1) << 63);  // (a + b - 1) / b would wrap
    EXPECT_EQ(ceil_div(UINT64_MAX, UINT64_MAX), 1u);
    // The signed case agrees with -floor(-a / b) wherever -a exists.
    for (int64_t a = -40; a <= 40; ++a)
        for (int64_t b = 1; b <= 9; ++b) EXPECT_EQ(ceil_div(a, b), -floor_div(-a, b)) << a << " / " << b;
}

}  // namespace
}  // namespace dmlgrad
