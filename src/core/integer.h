#pragma once
// Integer helpers shared by the CPU reference and the GPU dispatch code.
#include <cstdint>

namespace dmlgrad {

// a / b rounded toward minus infinity, for b > 0; no intermediate overflows, INT64_MIN included.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -(-(a + 1) / b) - 1; }

}  // namespace dmlgrad
