#include "core/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/half.h"

namespace dmlgrad {
namespace {

uint64_t element_bits(const Tensor& t, uint64_t i) {
    uint64_t bits = 0;
    size_t size = dtype_size(t.dtype());
    std::memcpy(&bits, t.buffer.data() + i * size, size);
    return bits;
}

template <class T>
T load(const Tensor& t, uint64_t i) {
    T v;
    std::memcpy(&v, t.buffer.data() + i * sizeof(T), sizeof(T));
    return v;
}

// An element as a number: how tensors of different dtypes (a float64 reference against a float32 result) and
// tensors compared with a tolerance are compared. 64-bit integers beyond 2^53 lose their last bits here.
double element_value(const Tensor& t, uint64_t i) {
    switch (t.dtype()) {
        case DType::f16: return half_to_float(load<uint16_t>(t, i));
        case DType::f32: return load<float>(t, i);
        case DType::f64: return load<double>(t, i);
        case DType::i8: return load<int8_t>(t, i);
        case DType::i16: return load<int16_t>(t, i);
        case DType::i32: return load<int32_t>(t, i);
        case DType::i64: return double(load<int64_t>(t, i));
        default: return double(element_bits(t, i));  // unsigned: the bits are the value
    }
}

bool within(double e, double a, Tolerance tol) {
    if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
    if (std::isinf(e) || std::isinf(a)) return e == a;
    return std::abs(a - e) <= tol.absolute + tol.relative * std::abs(e);
}

std::string value_string(const Tensor& t, uint64_t i) {
    switch (t.dtype()) {
        case DType::f16:
        case DType::f32:
        case DType::f64: return fmt::format("{:.9g}", element_value(t, i));
        case DType::i8: return fmt::format("{}", load<int8_t>(t, i));
        case DType::i16: return fmt::format("{}", load<int16_t>(t, i));
        case DType::i32: return fmt::format("{}", load<int32_t>(t, i));
        case DType::i64: return fmt::format("{}", load<int64_t>(t, i));
        default: return fmt::format("{}", element_bits(t, i));
    }
}

}  // namespace

std::optional<Difference> find_difference(const Tensor& expected, const Tensor& actual, Tolerance tolerance) {
    std::optional<Difference> diff;
    const bool by_bits = expected.dtype() == actual.dtype() && (tolerance.exact() || !dtype_is_float(actual.dtype()));
    if (by_bits && std::memcmp(expected.buffer.data(), actual.buffer.data(), expected.bytes()) == 0) return diff;
    for (uint64_t i = 0; i < expected.elements(); ++i) {
        bool same = by_bits ? element_bits(expected, i) == element_bits(actual, i)
                            : within(element_value(expected, i), element_value(actual, i), tolerance);
        if (same) continue;
        if (!diff) diff = Difference{i, 0};
        ++diff->count;
    }
    return diff;
}

std::string coordinate_string(const Shape& shape, uint64_t index) {
    std::vector<int64_t> c(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        c[d] = int64_t(index % uint64_t(shape[d]));
        index /= uint64_t(shape[d]);
    }
    return fmt::format("({})", fmt::join(c, ","));
}

std::string element_string(const Tensor& t, uint64_t index) {
    return fmt::format("{} (bits 0x{:0{}x})", value_string(t, index), element_bits(t, index),
                       2 * dtype_size(t.dtype()));
}

}  // namespace dmlgrad
