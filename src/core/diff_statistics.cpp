#include "core/diff_statistics.h"

#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <cmath>

#include "core/half.h"

namespace dmlgrad {
namespace {

// The float's bits as an integer whose order is the float order, -0 and +0 both 0: the ULP distance of two
// floats is the difference of these.
struct OrderedBits {
    bool negative;
    uint64_t magnitude;
};

OrderedBits ordered(uint64_t bits, DType type) {
    const unsigned sign_bit = unsigned(8 * dtype_size(type) - 1);
    return {bool((bits >> sign_bit) & 1), bits & ((uint64_t(1) << sign_bit) - 1)};
}

uint64_t ordered_distance(OrderedBits a, OrderedBits b) {
    if (a.negative == b.negative)
        return a.magnitude > b.magnitude ? a.magnitude - b.magnitude : b.magnitude - a.magnitude;
    return a.magnitude + b.magnitude;
}

// `value` rounded to the float type `type` (float16 through float32), as bits.
uint64_t bits_in(DType type, long double value) {
    switch (type) {
        case DType::f16: return float_to_half(static_cast<float>(value));
        case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(value));
        default: return std::bit_cast<uint64_t>(static_cast<double>(value));
    }
}

// `digits` and `exponent` (value digits * 10^exponent) as the plain decimal a user would type.
std::string decimal_text(std::string digits, int exponent) {
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back(), ++exponent;
    const int point = int(digits.size()) + exponent;  // digits before the decimal point
    if (exponent >= 0 && point <= 15) return digits + std::string(size_t(exponent), '0');
    if (exponent < 0 && point > 0) return digits.substr(0, size_t(point)) + "." + digits.substr(size_t(point));
    if (point > -4 && point <= 0) return "0." + std::string(size_t(-point), '0') + digits;
    return fmt::format("{}{}{}e{}", digits[0], digits.size() > 1 ? "." : "", digits.substr(1), point - 1);
}

// The smallest decimal of 3 significant digits at least `v` > 0 (a value within 1e-12 of a 3-digit decimal, its
// rounding noise, is that decimal), with `bump` added to its last digit.
std::string decimal_at_least(long double v, int bump) {
    const int exponent = int(std::floor(std::log10(v))) - 2;
    const long double scaled = v / std::pow(10.0L, exponent);
    const auto digits = static_cast<uint64_t>(std::ceil(scaled * (1 - 1e-12L))) + uint64_t(bump);
    return decimal_text(std::to_string(digits), exponent);
}

}  // namespace

DiffStatistics::DiffStatistics(const Tensor& result, const Tensor& reference, const Tolerance& tolerance)
    : result_(result), reference_(reference), tolerance_(tolerance), float_result_(dtype_is_float(result.dtype())) {}

void DiffStatistics::add(uint64_t index, const ExactNumber& r, const ExactNumber& f, bool passed) {
    if (!passed && stats_.beyond++ == 0) stats_.first_beyond = index;
    using Kind = ExactNumber::Kind;
    if (r.kind == Kind::nan || f.kind == Kind::nan) {
        if (r.kind != f.kind) ++stats_.nan_mismatches;
    } else if (!r.is_finite() || !f.is_finite()) {
        if (r.kind != f.kind || r.negative != f.negative) ++stats_.infinity_mismatches;
    } else {
        add_finite(index, r, f, passed);
        return;
    }
    const bool mismatch = r.kind != f.kind || (r.kind == Kind::infinity && r.negative != f.negative);
    nonfinite_mismatch_ |= mismatch;
    if (mismatch || !passed) consider({index, mismatch ? 2 : 1, 0});
}

void DiffStatistics::add_finite(uint64_t index, const ExactNumber& r, const ExactNumber& f, bool passed) {
    if (r.is_zero() && f.is_zero()) {
        ++stats_.zeros_in_both;
        if (r.negative != f.negative) ++stats_.signed_zero_mismatches;
    }
    const long double b = std::fabs(f.value());
    const long double error = std::fabs(r.value() - f.value());
    max_absolute_ = std::max(max_absolute_, error);
    if (b != 0)
        max_relative_ = std::max(max_relative_, error / b);
    else
        relative_infinite_ |= error != 0;
    squared_error_ += error * error;
    squared_reference_ += b * b;
    if (float_result_) {
        const uint64_t ulps = ulp_distance(index, f);
        ulps == 0 ? void(++zero_ulps_) : ulps_.push_back(ulps);
    }
    if (const long double needed = error - tolerance_.relative.approximation * b; needed > atol_needed_)
        atol_needed_ = needed, atol_element_ = index;
    if (const long double excess = error - tolerance_.absolute.approximation; excess > 0) {
        if (b == 0)
            rtol_impossible_ = true;
        else if (excess / b > rtol_needed_)
            rtol_needed_ = excess / b, rtol_element_ = index;
    }
    if (error != 0 || !passed) consider({index, passed ? 0 : 1, error});
}

uint64_t DiffStatistics::ulp_distance(uint64_t index, const ExactNumber& f) const {
    const DType type = result_.dtype();
    const uint64_t reference_bits =
        reference_.dtype() == type ? element_bits(reference_, index) : bits_in(type, f.value());
    return ordered_distance(ordered(element_bits(result_, index), type), ordered(reference_bits, type));
}

void DiffStatistics::consider(Candidate c) {
    const auto worse = [](const Candidate& a, const Candidate& b) {
        if (a.severity != b.severity) return a.severity > b.severity;
        if (a.error != b.error) return a.error > b.error;
        return a.index < b.index;
    };
    if (worst_.size() == kWorstElements && !worse(c, worst_.back())) return;
    worst_.insert(std::upper_bound(worst_.begin(), worst_.end(), c, worse), c);
    if (worst_.size() > kWorstElements) worst_.pop_back();
}

// The decimal, at least the needed value, that passes the element needing the most (checked by the exact rule:
// the needed value is computed in long double).
std::optional<std::string> DiffStatistics::smallest_passing(bool absolute) const {
    if (nonfinite_mismatch_ || (!absolute && rtol_impossible_)) return std::nullopt;
    if (result_.elements() == 0) return "0";
    const uint64_t element = absolute ? atol_element_ : rtol_element_;
    const auto passes = [&](const std::string& text) {
        Tolerance candidate{false, tolerance_.relative, tolerance_.absolute};
        (absolute ? candidate.absolute : candidate.relative) = *parse_decimal(text);
        return within_formula(exact_element(result_, element), exact_element(reference_, element), candidate);
    };
    long double needed = absolute ? atol_needed_ : rtol_needed_;
    if (needed <= 0) {
        if (passes("0")) return "0";
        needed = std::max(max_absolute_, 1e-300L) * 1e-30L;  // above 0 by less than the long double noise
    }
    for (int bump = 0; bump < 100; ++bump)
        if (std::string text = decimal_at_least(needed, bump); passes(text)) return text;
    return std::nullopt;  // not reached: each bump adds at least 1e-3 relative
}

void DiffStatistics::finish(Comparison& report) {
    const uint64_t elements = report.elements;
    const bool bit_identical = report.bit_identical, same_dtype = report.same_dtype;
    report = stats_;
    report.elements = elements;
    report.bit_identical = bit_identical;
    report.same_dtype = same_dtype;
    report.max_absolute_error = double(max_absolute_);
    report.max_relative_error = relative_infinite_ ? std::nullopt : std::optional(double(max_relative_));
    if (squared_reference_ > 0)
        report.nmse = double(squared_error_ / squared_reference_);
    else
        report.nmse = squared_error_ == 0 ? std::optional(0.0) : std::nullopt;
    if (dtype_is_float(result_.dtype())) {
        const uint64_t pairs = zero_ulps_ + ulps_.size();
        // Nearest rank: the smallest distance that at least 99% of the pairs do not exceed.
        const uint64_t rank = (99 * pairs + 99) / 100;
        auto p99 = ulps_.begin();
        if (rank > zero_ulps_) {
            p99 += ptrdiff_t(rank - zero_ulps_ - 1);
            std::nth_element(ulps_.begin(), p99, ulps_.end());
        }
        report.p99_ulp = rank > zero_ulps_ ? *p99 : 0;
        report.max_ulp = ulps_.empty() ? 0 : *std::max_element(ulps_.begin(), ulps_.end());
    }
    report.smallest_atol = smallest_passing(true);
    report.smallest_rtol = smallest_passing(false);
    for (const Candidate& c : worst_) {
        ElementDifference d{c.index,
                            coordinate_of(result_.shape(), c.index),
                            value_string(result_, c.index),
                            value_string(reference_, c.index),
                            c.severity == 2 ? NAN : double(c.error),
                            !element_passes(result_, reference_, c.index, tolerance_)};
        report.worst.push_back(std::move(d));
    }
}

}  // namespace dmlgrad
