#pragma once
// Integer helpers shared by the CPU reference and the GPU dispatch code.
#include <concepts>
#include <cstdint>

namespace dmlgrad {

// a / b rounded toward minus infinity, for b > 0; no intermediate overflows, INT64_MIN included.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -(-(a + 1) / b) - 1; }

// a / b rounded toward plus infinity, for b > 0, both of one integer type; no intermediate overflows. (For
// a <= 0, C++'s division rounds toward zero, which is up.)
template <std::integral T>
constexpr T ceil_div(T a, T b) {
    return a > 0 ? T((a - 1) / b + 1) : T(a / b);
}

}  // namespace dmlgrad
