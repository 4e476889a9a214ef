// core/timing_summary.h against hand-checked samples and against the definitions computed here by counting: the
// p-th percentile is the smallest sample that at least p% of the samples do not exceed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/timing_summary.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

TEST(TimingSummary, HandChecked) {
    const TimingSummary s = summarize({5, 1, 4, 2, 3});
    EXPECT_EQ(s.n, 5u);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.max, 5);
    EXPECT_EQ(s.median, 3);
    EXPECT_EQ(s.mean, 3);
    EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(10.0 / 4));  // (4 + 1 + 0 + 1 + 4) / (5 - 1)
    EXPECT_DOUBLE_EQ(s.cv, std::sqrt(10.0 / 4) / 3);
    EXPECT_EQ(s.p90, 5);  // 4 of 5 samples (80%) do not exceed 4: not enough
    EXPECT_EQ(s.p99, 5);
    EXPECT_TRUE(s.noisy());  // cv 53%
    const TimingSummary steady = summarize({10, 10, 10.5});
    EXPECT_NEAR(steady.cv, std::sqrt(1.0 / 12) / (61.0 / 6), 1e-12);  // 2.8%
    EXPECT_FALSE(steady.noisy());
    EXPECT_FALSE(summarize({1, 100}).noisy());  // too few samples to call it noise
    EXPECT_EQ(summarize({1, 100}).median, 50.5);
    EXPECT_EQ(summarize({}).n, 0u);
}

TEST(TimingSummary, PercentilesByCountingOnFreshSamples) {
    SeededRng rng;
    std::exponential_distribution<double> latency(2.0);
    for (size_t n : {1u, 7u, 100u, 101u, 1000u}) {
        std::vector<double> samples(n);
        for (double& v : samples) v = 0.1 + latency(rng);
        const TimingSummary s = summarize(samples);
        for (auto [percent, value] : {std::pair{90, s.p90}, std::pair{99, s.p99}}) {
            size_t not_above = 0, below = 0;
            for (double v : samples) not_above += v <= value, below += v < value;
            EXPECT_GE(100 * not_above, size_t(percent) * n) << n << " p" << percent;
            EXPECT_LT(100 * below, size_t(percent) * n) << n << " p" << percent;  // nothing smaller would do
        }
    }
}

}  // namespace
}  // namespace dmlgrad::testing
