#pragma once
// Element-wise comparison of two results, for --check: bit for bit, or within a tolerance for summing operators.
#include <cstdint>
#include <optional>
#include <string>

#include "core/tensor.h"

namespace dmlgrad {

// |actual - expected| <= absolute + relative * |expected|; NaN matches NaN only, infinities match exactly.
// A default Tolerance (both 0) means bit for bit.
struct Tolerance {
    double relative = 0;
    double absolute = 0;
    bool exact() const { return relative == 0 && absolute == 0; }
};

struct Difference {
    uint64_t first_index = 0;
    uint64_t count = 0;
};

// Tensors of the same shape. nullopt when they agree. Of one dtype, a default tolerance compares bits (integer
// tensors always do); of two dtypes, values are compared (-0 then equals +0).
std::optional<Difference> find_difference(const Tensor& expected, const Tensor& actual, Tolerance tolerance);

// "(0,2,1)": the row-major coordinate of a flat index.
std::string coordinate_string(const Shape& shape, uint64_t index);
// "0.5 (bits 0x3f000000)"
std::string element_string(const Tensor& t, uint64_t index);

}  // namespace dmlgrad
