#pragma once
// The rule of --check and --compare, element by element (docs/COMPARISON.md states it for users):
// - no tolerance given: the bits must be equal (the values, when the two tensors have different dtypes);
// - a tolerance given (--atol 0 --rtol 0 included): |result - reference| <= atol + rtol * |reference|, evaluated
//   exactly on the values as typed and as stored (integers as integers at any width, floats as the binary
//   fractions they are), so a value exactly on the boundary passes; NaN meets any NaN, an infinity only the same
//   infinity, and -0 equals +0.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/big_natural.h"
#include "core/tensor.h"

namespace dmlgrad {

// A non-negative decimal as typed: significand * 10^exponent, exactly. Below 1e-1000 it is taken as 0 (it could
// change a verdict only beside another tolerance typed with more than 360 decimal places); above 1e1000 as 1e1000
// (either passes every pair the larger would).
struct Decimal {
    std::string text = "0";  // as typed
    BigNatural significand;
    int exponent = 0;
    long double approximation = 0;  // correctly rounded
    bool is_zero() const { return significand.is_zero(); }
};

// nullopt unless `text` is a number of core/number_text.h's grammar, finite and at least 0.
std::optional<Decimal> parse_decimal(std::string_view text);

struct Tolerance {
    bool bitwise = true;  // no tolerance given
    Decimal relative, absolute;
    // The formula with these tolerances, from their text ("1e-5"); throws std::invalid_argument on a bad one.
    static Tolerance formula(std::string_view relative, std::string_view absolute);
    bool exact() const { return bitwise; }
};

// An element's exact value: (-1)^negative * magnitude * 2^exponent, or NaN or an infinity.
struct ExactNumber {
    enum class Kind : uint8_t { finite, nan, infinity } kind = Kind::finite;
    bool negative = false;
    uint64_t magnitude = 0;
    int exponent = 0;
    long double number = 0;  // the same value (exact: every element fits a 64-bit significand)
    bool is_finite() const { return kind == Kind::finite; }
    bool is_zero() const { return is_finite() && magnitude == 0; }
    long double value() const { return number; }
};

ExactNumber exact_element(const Tensor& t, uint64_t index);
// The element's bits, zero-extended (inline: the comparison calls it for every element).
inline uint64_t element_bits(const Tensor& t, uint64_t index) {
    uint64_t bits = 0;
    const size_t size = dtype_size(t.dtype());
    std::memcpy(&bits, t.buffer.data() + index * size, size);
    return bits;
}

// The rule of "no tolerance" between two dtypes: the formula with both tolerances 0 (equal values).
const Tolerance& equal_values();

// The formula (not the bitwise rule) for one pair.
bool within_formula(const ExactNumber& result, const ExactNumber& reference, const Tolerance& tolerance);
// The element passes `tolerance`'s rule.
bool element_passes(const Tensor& result, const Tensor& reference, uint64_t index, const Tolerance& tolerance);

}  // namespace dmlgrad
