#pragma once
// Element-wise comparison of a result with a reference, for --check and --compare: the verdict under the rule of
// core/tolerance.h and the diff report's statistics (docs/COMPARISON.md defines each one).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/tolerance.h"

namespace dmlgrad {

// One element of the report's worst few.
struct ElementDifference {
    uint64_t index = 0;
    std::vector<int64_t> coordinate;  // row-major N-d index
    std::string result, reference;    // the values as text
    double absolute_error = 0;        // |result - reference|; NaN for a NaN or infinity mismatch
    bool beyond = false;              // fails the rule
};

struct Comparison {
    uint64_t elements = 0;
    bool same_dtype = true;
    bool bit_identical = false;  // same dtype, every bit equal
    uint64_t beyond = 0;         // elements failing the rule
    uint64_t first_beyond = 0;   // the first of them (row-major)
    // Over the pairs where both values are finite:
    double max_absolute_error = 0;                   // max |r - f|
    std::optional<double> max_relative_error = 0.0;  // max |r - f| / |f| over f != 0; nullopt: some r != 0 = f
    std::optional<uint64_t> max_ulp, p99_ulp;        // in the result's float type (nullopt for an integer result)
    std::optional<double> nmse = 0.0;                // sum (r - f)^2 / sum f^2; nullopt: f all 0 and r not
    uint64_t nan_mismatches = 0;                     // a NaN against a non-NaN
    uint64_t infinity_mismatches = 0;                // an infinity against anything but the same infinity (NaN aside)
    uint64_t signed_zero_mismatches = 0;             // -0 against +0
    uint64_t zeros_in_both = 0;                      // both values 0 (of either sign)
    std::vector<ElementDifference> worst;            // up to kWorstElements differing elements, the worst first
    // The smallest --atol (with the given --rtol) and --rtol (with the given --atol) that pass, as decimal text
    // rounded up to 3 significant digits; nullopt when none would (a NaN or infinity mismatch; for rtol also a
    // difference beyond atol where the reference is 0).
    std::optional<std::string> smallest_atol, smallest_rtol;

    bool passed() const { return beyond == 0; }
    double share_beyond() const { return elements ? double(beyond) / double(elements) : 0.0; }
};

inline constexpr size_t kWorstElements = 5;

// Tensors of the same shape.
Comparison compare_tensors(const Tensor& result, const Tensor& reference, const Tolerance& tolerance);

// "(0,2,1)": the row-major coordinate of a flat index.
std::vector<int64_t> coordinate_of(const Shape& shape, uint64_t index);
std::string coordinate_string(const Shape& shape, uint64_t index);
// "0.5": the element's value, the shortest text that reads back to it.
std::string value_string(const Tensor& t, uint64_t index);
// "0.5 (bits 0x3f000000)"
std::string element_string(const Tensor& t, uint64_t index);

}  // namespace dmlgrad
