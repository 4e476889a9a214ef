#pragma once
// The diff report's statistics, gathered element by element (compare_tensors feeds them).
#include <cstdint>
#include <vector>

#include "core/compare.h"

namespace dmlgrad {

class DiffStatistics {
public:
    DiffStatistics(const Tensor& result, const Tensor& reference, const Tolerance& tolerance);
    // Element `index`, of values `r` (result) and `f` (reference), which passed the rule or not.
    void add(uint64_t index, const ExactNumber& r, const ExactNumber& f, bool passed);
    // Fills in every statistic of `report` but `elements`, `same_dtype` and `bit_identical`.
    void finish(Comparison& report);

private:
    struct Candidate {
        uint64_t index;
        int severity;  // 2: NaN/infinity mismatch, 1: beyond the rule, 0: within it
        long double error;
    };
    void add_finite(uint64_t index, const ExactNumber& r, const ExactNumber& f, bool passed);
    void consider(Candidate c);
    // Between the result's element and the reference's value `f` rounded to the result's dtype.
    uint64_t ulp_distance(uint64_t index, const ExactNumber& f) const;
    std::optional<std::string> smallest_passing(bool absolute) const;

    const Tensor& result_;
    const Tensor& reference_;
    const Tolerance& tolerance_;
    const bool float_result_;
    Comparison stats_;
    long double max_absolute_ = 0, max_relative_ = 0, squared_error_ = 0, squared_reference_ = 0;
    bool relative_infinite_ = false;
    bool nonfinite_mismatch_ = false;
    bool rtol_impossible_ = false;  // r - f beyond atol where f = 0
    long double atol_needed_ = 0, rtol_needed_ = 0;
    uint64_t atol_element_ = 0, rtol_element_ = 0;
    uint64_t zero_ulps_ = 0;
    std::vector<uint64_t> ulps_;  // the non-zero ULP distances
    std::vector<Candidate> worst_;
};

}  // namespace dmlgrad
