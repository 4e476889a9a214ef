#include <gtest/gtest.h>

#include "core/half.h"

namespace dmlgrad {
namespace {

TEST(Half, RoundTripsEveryHalf) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7FFF) > 0x7C00) continue;  // NaNs are checked apart
        EXPECT_EQ(float_to_half(half_to_float(uint16_t(h))), h) << std::hex << h;
    }
}

TEST(Half, RoundsToNearestEven) {
    EXPECT_EQ(half_to_float(float_to_half(0.1f)), 0.0999755859375f);
    EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // rounds up to inf
    EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
    EXPECT_EQ(float_to_half(1e-45f), 0x0000);
    EXPECT_EQ(float_to_half(-6e-8f), 0x8001);
}

}  // namespace
}  // namespace dmlgrad
