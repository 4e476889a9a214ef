#include "core/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "core/diff_statistics.h"
#include "core/half.h"

namespace dmlgrad {
namespace {

template <class T>
T load(const Tensor& t, uint64_t i) {
    T v;
    std::memcpy(&v, t.buffer.data() + i * sizeof(T), sizeof(T));
    return v;
}

// The report of two bit-identical tensors: every error 0, every tolerance passes; only the zeros need counting.
Comparison identical(const Tensor& t, Comparison report) {
    const uint64_t magnitude =
        dtype_is_float(t.dtype()) ? (uint64_t(1) << (8 * dtype_size(t.dtype()) - 1)) - 1 : ~uint64_t(0);
    for (uint64_t i = 0; i < report.elements; ++i) report.zeros_in_both += (element_bits(t, i) & magnitude) == 0;
    if (dtype_is_float(t.dtype())) report.max_ulp = report.p99_ulp = 0;
    report.smallest_atol.emplace(1, '0');
    report.smallest_rtol.emplace(1, '0');
    return report;
}

}  // namespace

Comparison compare_tensors(const Tensor& result, const Tensor& reference, const Tolerance& tolerance) {
    Comparison report;
    report.elements = result.elements();
    report.same_dtype = result.dtype() == reference.dtype();
    report.bit_identical =
        report.same_dtype && std::memcmp(result.buffer.data(), reference.buffer.data(), result.bytes()) == 0;
    if (report.bit_identical) return identical(result, std::move(report));
    DiffStatistics statistics(result, reference, tolerance);
    const bool by_bits = tolerance.bitwise && report.same_dtype;
    const Tolerance& rule = tolerance.bitwise ? equal_values() : tolerance;
    for (uint64_t i = 0; i < report.elements; ++i) {
        const ExactNumber r = exact_element(result, i), f = exact_element(reference, i);
        const bool passed =
            by_bits ? element_bits(result, i) == element_bits(reference, i) : within_formula(r, f, rule);
        statistics.add(i, r, f, passed);
    }
    statistics.finish(report);
    return report;
}

std::vector<int64_t> coordinate_of(const Shape& shape, uint64_t index) {
    std::vector<int64_t> c(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        c[d] = int64_t(index % uint64_t(shape[d]));
        index /= uint64_t(shape[d]);
    }
    return c;
}

std::string coordinate_string(const Shape& shape, uint64_t index) {
    return fmt::format("({})", fmt::join(coordinate_of(shape, index), ","));
}

std::string value_string(const Tensor& t, uint64_t i) {
    switch (t.dtype()) {
        case DType::f16: return fmt::format("{}", half_to_float(load<uint16_t>(t, i)));
        case DType::f32: return fmt::format("{}", load<float>(t, i));
        case DType::f64: return fmt::format("{}", load<double>(t, i));
        case DType::i8: return fmt::format("{}", load<int8_t>(t, i));
        case DType::i16: return fmt::format("{}", load<int16_t>(t, i));
        case DType::i32: return fmt::format("{}", load<int32_t>(t, i));
        case DType::i64: return fmt::format("{}", load<int64_t>(t, i));
        default: return fmt::format("{}", element_bits(t, i));  // unsigned: the bits are the value
    }
}

std::string element_string(const Tensor& t, uint64_t index) {
    return fmt::format("{} (bits 0x{:0{}x})", value_string(t, index), element_bits(t, index),
                       2 * dtype_size(t.dtype()));
}

}  // namespace dmlgrad
