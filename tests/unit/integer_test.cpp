// core/integer.h: division rounded toward minus infinity, against hand-checked values on both signs.
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

}  // namespace
}  // namespace dmlgrad
