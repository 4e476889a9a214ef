#pragma once
// Checks shared by the operators' plan builders. Each throws UsageError with one line naming the operand or flag.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "ops/operand.h"

namespace dmlgrad {

// The operator's dtype table (docs/OPERATORS.md) and rank range.
void require_dtype(std::string_view op, const Operand& t, std::span<const DType> allowed);
void require_rank(std::string_view op, const Operand& t, size_t min_rank, size_t max_rank);
// Common rules: every axis >= 1, at most 2^32 - 1 elements.
void require_valid_sizes(const Operand& t);
void require_same_dtype(const Operand& a, const Operand& b);
void require_same_shape(const Operand& a, const Operand& b);
// The element-wise operators' inputs: X of an allowed dtype, rank 1-8, valid sizes, and dY exactly like X (which
// makes dY's dtype, rank and sizes valid too).
void require_elementwise_pair(std::string_view op, const Operand& x, const Operand& dy, std::span<const DType> allowed);
// A per-axis parameter list given with `flag` must have `expected` entries.
void require_length(std::string_view flag, size_t actual, size_t expected, std::string_view what);
// Sizes given on the command line (--output-sizes): each >= 1, product <= 2^32 - 1.
void require_valid_sizes(std::string_view flag, const std::vector<int64_t>& sizes);

}  // namespace dmlgrad
