#include "core/timing_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dmlgrad {

TimingSummary summarize(const std::vector<double>& samples) {
    TimingSummary s;
    s.n = samples.size();
    if (s.n == 0) return s;
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = s.n % 2 ? sorted[s.n / 2] : (sorted[s.n / 2 - 1] + sorted[s.n / 2]) / 2;
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(s.n);
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stddev = s.n > 1 ? std::sqrt(squares / double(s.n - 1)) : 0.0;
    s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
    const auto nearest_rank = [&](size_t percent) { return sorted[(percent * s.n + 99) / 100 - 1]; };
    s.p90 = nearest_rank(90);
    s.p99 = nearest_rank(99);
    return s;
}

}  // namespace dmlgrad
