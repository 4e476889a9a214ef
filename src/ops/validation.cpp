#include "ops/validation.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace dmlgrad {

namespace {
constexpr uint64_t kMaxElements = 0xFFFFFFFFull;  // DML_BUFFER_TENSOR_DESC: at most 2^32 - 1 elements
}

namespace {

bool allows(std::span<const DType> allowed, DType type) {
    return std::find(allowed.begin(), allowed.end(), type) != allowed.end();
}

// numpy makes float64 and int64 arrays unless told otherwise: name the cast that fits (a float to float32, an
// integer to int32 where the operator takes it, else to float32).
std::string cast_hint(DType type, std::span<const DType> allowed) {
    const DType target = !dtype_is_float(type) && allows(allowed, DType::i32) ? DType::i32 : DType::f32;
    if (!allows(allowed, target)) return "";
    return fmt::format("; cast it before saving, e.g. np.save(path, x.astype(np.{}))", dtype_name(target));
}

}  // namespace

void require_dtype(std::string_view op, const Operand& t, std::span<const DType> allowed) {
    if (allows(allowed, t.info.dtype)) return;
    throw UsageError(fmt::format("{}: dtype {} is not supported by {} (supported: {}){}", t.label(),
                                 dtype_name(t.info.dtype), op, dtype_list(allowed), cast_hint(t.info.dtype, allowed)));
}

void require_rank(std::string_view op, const Operand& t, size_t min_rank, size_t max_rank) {
    size_t rank = t.info.shape.size();
    if (rank >= min_rank && rank <= max_rank) return;
    std::string expected =
        min_rank == max_rank ? fmt::format("{}", min_rank) : fmt::format("{} to {}", min_rank, max_rank);
    throw UsageError(
        fmt::format("{}: rank {} is not supported by {} (expected {} dimensions)", t.label(), rank, op, expected));
}

void require_valid_sizes(const Operand& t) {
    for (int64_t d : t.info.shape)
        if (d < 1)
            throw UsageError(fmt::format("{}: shape {} has an axis of size {} (every axis must be at least 1)",
                                         t.label(), shape_string(t.info.shape), d));
    if (t.info.elements() > kMaxElements)
        throw UsageError(fmt::format("{}: {} elements exceed the limit of 2^32 - 1 elements per tensor", t.label(),
                                     t.info.elements()));
}

void require_valid_sizes(std::string_view flag, const std::vector<int64_t>& sizes) {
    uint64_t count = 1;
    for (int64_t d : sizes) {
        if (d < 1) throw UsageError(fmt::format("{}: size {} is invalid (every axis must be at least 1)", flag, d));
        count *= uint64_t(d);
        if (count > kMaxElements)
            throw UsageError(fmt::format("{}: the shape exceeds the limit of 2^32 - 1 elements per tensor", flag));
    }
}

void require_same_dtype(const Operand& a, const Operand& b) {
    if (a.info.dtype != b.info.dtype)
        throw UsageError(fmt::format("{}: dtype {} does not match {} dtype {}", b.label(), dtype_name(b.info.dtype),
                                     a.label(), dtype_name(a.info.dtype)));
}

void require_same_shape(const Operand& a, const Operand& b) {
    if (a.info.shape != b.info.shape)
        throw UsageError(fmt::format("{}: shape {} does not match {} shape {}", b.label(), shape_string(b.info.shape),
                                     a.label(), shape_string(a.info.shape)));
}

void require_elementwise_pair(std::string_view op, const Operand& x, const Operand& dy,
                              std::span<const DType> allowed) {
    require_dtype(op, x, allowed);
    require_rank(op, x, 1, 8);
    require_valid_sizes(x);
    require_same_dtype(x, dy);
    require_same_shape(x, dy);
}

void require_length(std::string_view flag, size_t actual, size_t expected, std::string_view what) {
    if (actual != expected)
        throw UsageError(fmt::format("{}: {} value(s) given, expected {} ({})", flag, actual, expected, what));
}

}  // namespace dmlgrad
