#include "core/tolerance.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/half.h"
#include "core/number_text.h"

namespace dmlgrad {

// The fast path below works in long double: its 64-bit significand holds every element exactly (int64 and
// uint64 included) and its range holds every product of a tolerance (1e-1000 to 1e1000) and an element.
static_assert(std::numeric_limits<long double>::digits >= 64 &&
              std::numeric_limits<long double>::max_exponent10 >= 1400 &&
              std::numeric_limits<long double>::min_exponent10 <= -1400);

namespace {

constexpr int kSmallestExponent = -1000, kLargestExponent = 1000;

// The decimal of `digits` (no leading or trailing zeros) * 10^exponent, clamped to [1e-1000, 1e1000] or 0.
Decimal make_decimal(std::string_view text, std::string digits, int64_t exponent) {
    Decimal d;
    d.text = std::string(text);
    const int64_t magnitude = int64_t(digits.size()) - 1 + exponent;  // floor(log10)
    if (digits.empty() || magnitude < kSmallestExponent) return d;
    if (magnitude > kLargestExponent || (magnitude == kLargestExponent && digits != "1"))
        digits = "1", exponent = kLargestExponent;
    for (char c : digits) d.significand.multiply_small(10) += BigNatural(uint64_t(c - '0'));
    d.exponent = int(exponent);
    d.approximation = std::strtold((digits + "e" + std::to_string(exponent)).c_str(), nullptr);
    return d;
}

// The exponent after 'e': saturated far beyond the clamping range.
int64_t exponent_value(std::string_view text) {
    const bool negative = !text.empty() && text[0] == '-';
    if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
    int64_t value = 0;
    for (char c : text) value = std::min<int64_t>(value * 10 + (c - '0'), 1'000'000'000);
    return negative ? -value : value;
}

}  // namespace

std::optional<Decimal> parse_decimal(std::string_view typed) {
    std::string_view text = without_plus(typed);
    double unused = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), unused);
    // The grammar is from_chars's; a value beyond double's range is still a decimal.
    if (end != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return std::nullopt;
    const bool negative = text.starts_with('-');
    if (negative) text.remove_prefix(1);
    std::string digits;
    int64_t exponent = 0;
    size_t i = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) digits += text[i];
    if (i < text.size() && text[i] == '.')
        for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, --exponent)
            digits += text[i];
    if (digits.empty()) return std::nullopt;                              // inf, nan
    if (i < text.size()) exponent += exponent_value(text.substr(i + 1));  // after 'e' or 'E'
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
    while (!digits.empty() && digits.back() == '0') digits.pop_back(), ++exponent;
    if (negative && !digits.empty()) return std::nullopt;
    return make_decimal(typed, std::move(digits), exponent);
}

Tolerance Tolerance::formula(std::string_view relative, std::string_view absolute) {
    const auto r = parse_decimal(relative), a = parse_decimal(absolute);
    if (!r || !a) throw std::invalid_argument("Tolerance::formula: not a tolerance");
    return Tolerance{false, *r, *a};
}

namespace {

ExactNumber float_number(uint64_t bits, int fraction_bits, int exponent_bits) {
    const uint64_t fraction = bits & ((uint64_t(1) << fraction_bits) - 1);
    const uint64_t field = (bits >> fraction_bits) & ((uint64_t(1) << exponent_bits) - 1);
    const int bias = (1 << (exponent_bits - 1)) - 1;
    ExactNumber n;
    n.negative = (bits >> (fraction_bits + exponent_bits)) & 1;
    if (field == (uint64_t(1) << exponent_bits) - 1) {
        n.kind = fraction ? ExactNumber::Kind::nan : ExactNumber::Kind::infinity;
    } else if (field == 0) {  // zero or subnormal
        n.magnitude = fraction;
        n.exponent = 1 - bias - fraction_bits;
    } else {
        n.magnitude = fraction | (uint64_t(1) << fraction_bits);
        n.exponent = int(field) - bias - fraction_bits;
    }
    return n;
}

ExactNumber signed_number(uint64_t bits, size_t bytes) {
    const unsigned unused = 64 - 8 * unsigned(bytes);
    const int64_t v = int64_t(bits << unused) >> unused;  // sign-extended
    ExactNumber n;
    n.negative = v < 0;
    n.magnitude = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    return n;
}

// `n` with its number filled in from the native value (a conversion, exact, and faster than scaling the
// significand).
ExactNumber with_number(ExactNumber n, long double native) {
    n.number = native;
    return n;
}

}  // namespace

ExactNumber exact_element(const Tensor& t, uint64_t index) {
    const uint64_t bits = element_bits(t, index);
    switch (t.dtype()) {
        case DType::f16: return with_number(float_number(bits, 10, 5), half_to_float(uint16_t(bits)));
        case DType::f32: return with_number(float_number(bits, 23, 8), std::bit_cast<float>(uint32_t(bits)));
        case DType::f64: return with_number(float_number(bits, 52, 11), std::bit_cast<double>(bits));
        case DType::i8:
        case DType::i16:
        case DType::i32:
        case DType::i64: {
            const ExactNumber n = signed_number(bits, dtype_size(t.dtype()));
            const long double magnitude = static_cast<long double>(n.magnitude);
            return with_number(n, n.negative ? -magnitude : magnitude);
        }
        default:  // unsigned: the bits are the value
            return with_number(ExactNumber{ExactNumber::Kind::finite, false, bits, 0}, static_cast<long double>(bits));
    }
}

namespace {

// The formula on exact integers: both sides multiplied by 10^-p and 2^-low (or the other side by their
// inverses) until every term is a natural number.
bool within_exactly(const ExactNumber& result, const ExactNumber& reference, const Tolerance& tolerance) {
    const int low = std::min(result.exponent, reference.exponent);
    BigNatural a(result.magnitude), b(reference.magnitude);
    a.shift_left(unsigned(result.exponent - low));
    b.shift_left(unsigned(reference.exponent - low));
    const BigNatural difference = result.negative == reference.negative ? distance(a, b) : (BigNatural(a) += b);
    const Decimal &atol = tolerance.absolute, &rtol = tolerance.relative;
    const int p = std::min({atol.exponent, rtol.exponent, 0});
    BigNatural lhs = difference * BigNatural::power_of_ten(unsigned(-p));
    BigNatural rhs = atol.significand * BigNatural::power_of_ten(unsigned(atol.exponent - p));
    BigNatural relative_part = rtol.significand * BigNatural::power_of_ten(unsigned(rtol.exponent - p)) * b;
    if (low >= 0) {
        lhs.shift_left(unsigned(low));
        relative_part.shift_left(unsigned(low));
    } else {
        rhs.shift_left(unsigned(-low));
    }
    rhs += relative_part;
    return lhs <= rhs;
}

}  // namespace

bool within_formula(const ExactNumber& result, const ExactNumber& reference, const Tolerance& tolerance) {
    using Kind = ExactNumber::Kind;
    if (result.kind == Kind::nan || reference.kind == Kind::nan) return result.kind == reference.kind;
    if (!result.is_finite() || !reference.is_finite())
        return result.kind == reference.kind && result.negative == reference.negative;
    // In long double the two sides carry relative errors below 1e-18: only a pair this close to the boundary
    // needs the exact evaluation.
    constexpr long double kMargin = 1e-15L;
    const long double b = reference.value();
    const long double difference = std::fabs(result.value() - b);
    const long double bound = tolerance.absolute.approximation + tolerance.relative.approximation * std::fabs(b);
    if (difference <= bound * (1 - kMargin)) return true;
    if (difference > bound * (1 + kMargin)) return false;
    return within_exactly(result, reference, tolerance);
}

bool element_passes(const Tensor& result, const Tensor& reference, uint64_t index, const Tolerance& tolerance) {
    if (tolerance.bitwise && result.dtype() == reference.dtype())
        return element_bits(result, index) == element_bits(reference, index);
    return within_formula(exact_element(result, index), exact_element(reference, index),
                          tolerance.bitwise ? equal_values() : tolerance);
}

const Tolerance& equal_values() {
    static const Tolerance rule = Tolerance::formula("0", "0");
    return rule;
}

}  // namespace dmlgrad
