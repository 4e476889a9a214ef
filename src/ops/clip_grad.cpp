#include "ops/clip_grad.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "core/decimal_half.h"
#include "core/error.h"
#include "core/number_text.h"
#include "ops/validation.h"

namespace dmlgrad {
namespace {

// ---- integer bounds: exact decimal parse over [-2^63, 2^64 - 1], never through a double ----

struct IntegerRange {
    int64_t min;
    uint64_t max;
};

IntegerRange integer_range(DType type) {
    switch (type) {
        case DType::i8: return {INT8_MIN, INT8_MAX};
        case DType::i16: return {INT16_MIN, INT16_MAX};
        case DType::i32: return {INT32_MIN, INT32_MAX};
        case DType::i64: return {INT64_MIN, INT64_MAX};
        case DType::u8: return {0, UINT8_MAX};
        case DType::u16: return {0, UINT16_MAX};
        case DType::u32: return {0, UINT32_MAX};
        case DType::u64: return {0, UINT64_MAX};
        default: throw std::logic_error("integer_range: not an integer type");
    }
}

// |range.min| as an unsigned number (2^63 for int64 does not fit in int64).
uint64_t magnitude_of_min(const IntegerRange& range) { return uint64_t(-(range.min + 1)) + 1; }

uint64_t width_mask(DType type) {
    return dtype_size(type) == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * dtype_size(type))) - 1;
}

uint64_t parse_integer_bound(std::string_view flag, std::string_view text, DType type) {
    std::string_view body = without_plus(text);
    const bool negative = !body.empty() && body[0] == '-';
    if (negative) body.remove_prefix(1);
    // from_chars on an unsigned type takes digits only: no sign, no blanks, no '.', no exponent.
    uint64_t magnitude = 0;
    auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), magnitude);
    const IntegerRange range = integer_range(type);
    if (error == std::errc::invalid_argument || end != body.data() + body.size())
        throw UsageError(
            fmt::format("{} {}: not an integer ({} bounds must be integers)", flag, text, dtype_name(type)));
    const bool in_range =
        error == std::errc{} && (negative ? magnitude <= magnitude_of_min(range) : magnitude <= range.max);
    if (!in_range)
        throw UsageError(
            fmt::format("{} {}: out of range for {} ({} to {})", flag, text, dtype_name(type), range.min, range.max));
    const uint64_t twos_complement = negative ? uint64_t(0) - magnitude : magnitude;
    return twos_complement & width_mask(type);
}

// ---- float bounds: correctly rounded to the tensor's type, never NaN, never a silent overflow ----

[[noreturn]] void throw_not_a_number(std::string_view flag, std::string_view text, DType type) {
    throw UsageError(
        fmt::format("{} {}: not a number ({} bounds are decimal numbers, inf or -inf)", flag, text, dtype_name(type)));
}

[[noreturn]] void throw_float_out_of_range(std::string_view flag, std::string_view text, DType type) {
    const char* range = type == DType::f16 ? "5.9604645e-08 to 65504" : "1.4e-45 to 3.4028235e+38";
    throw UsageError(fmt::format(
        "{} {}: out of range for {} (it would round to 0 or inf; nonzero magnitudes {}, or write 0, inf or -inf)", flag,
        text, dtype_name(type), range));
}

// from_chars reports result_out_of_range exactly when a nonzero finite text would round to 0 or inf.
template <class Float>
Float parse_float_text(std::string_view flag, std::string_view text, DType type) {
    std::string_view body = without_plus(text);
    Float value = 0;
    auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (error == std::errc::invalid_argument || end != body.data() + body.size()) throw_not_a_number(flag, text, type);
    if (error == std::errc::result_out_of_range) throw_float_out_of_range(flag, text, type);
    if (std::isnan(value))
        throw UsageError(fmt::format("{} {}: NaN is not a valid bound for {}", flag, text, dtype_name(type)));
    return value;
}

uint64_t parse_float32_bound(std::string_view flag, std::string_view text) {
    // Parsed straight to float: one correct rounding from the decimal text.
    return std::bit_cast<uint32_t>(parse_float_text<float>(flag, text, DType::f32));
}

uint64_t parse_float16_bound(std::string_view flag, std::string_view text) {
    const double value = parse_float_text<double>(flag, text, DType::f16);
    const uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
    if (std::isinf(value)) return sign | 0x7C00u;
    // One rounding from the decimal text itself, not decimal -> double -> half (core/decimal_half.h).
    std::string_view digits = without_plus(text);
    if (!digits.empty() && digits[0] == '-') digits.remove_prefix(1);
    const uint16_t magnitude = decimal_to_half_magnitude(digits, std::fabs(value));
    if (magnitude == 0x7C00u || (magnitude == 0 && value != 0)) throw_float_out_of_range(flag, text, DType::f16);
    return sign | magnitude;
}

}  // namespace

uint64_t parse_clip_bound(std::string_view flag, std::string_view text, DType type) {
    switch (type) {
        case DType::f32: return parse_float32_bound(flag, text);
        case DType::f16: return parse_float16_bound(flag, text);
        case DType::f64: throw std::logic_error("parse_clip_bound: clip-grad has no float64");
        default: return parse_integer_bound(flag, text, type);
    }
}

ClipGradPlan plan_clip_grad(const ClipGradDesc& desc, const Operand& x, const Operand& dy) {
    require_elementwise_pair("clip-grad", x, dy, kClipGradTypes);
    ClipGradPlan plan;
    plan.dtype = x.info.dtype;
    plan.shape = x.info.shape;
    plan.count = x.info.elements();
    // MinMaxDataType is the tensors' type; Min > Max is accepted (docs/OPERATORS.md 2.1: the rule then gives zeros).
    plan.min_bits = parse_clip_bound("--min", desc.min, plan.dtype);
    plan.max_bits = parse_clip_bound("--max", desc.max, plan.dtype);
    return plan;
}

}  // namespace dmlgrad
