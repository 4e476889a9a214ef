#pragma once
// Helpers for the validation tests: operands as the CLI names them, and the one-line UsageError they expect.
#include <functional>
#include <string>
#include <vector>

#include "ops/operand.h"

namespace dmlgrad::testing {

inline Operand operand(const char* flag, const char* path, DType type, Shape shape) {
    return Operand{flag, path, TensorInfo{type, std::move(shape)}};
}

// Expects `action` to throw a UsageError whose message is one line containing every one of `parts`.
void expect_usage_error(const std::function<void()>& action, const std::vector<std::string>& parts);

}  // namespace dmlgrad::testing
