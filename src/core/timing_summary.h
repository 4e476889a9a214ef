#pragma once
// Timed samples summarised: order statistics (percentiles by nearest rank: the smallest sample that at least p% of
// the samples do not exceed), the sample standard deviation and the coefficient of variation stddev / mean.
#include <cstddef>
#include <vector>

namespace dmlgrad {

struct TimingSummary {
    double min = 0, median = 0, mean = 0, max = 0, stddev = 0;
    double p90 = 0, p99 = 0, cv = 0;
    size_t n = 0;
    // A coefficient of variation this high (over at least kNoisySamples samples) makes the median doubtful.
    static constexpr double kNoisyCv = 0.1;
    static constexpr size_t kNoisySamples = 3;
    bool noisy() const { return n >= kNoisySamples && cv > kNoisyCv; }
};

TimingSummary summarize(const std::vector<double>& samples);

}  // namespace dmlgrad
