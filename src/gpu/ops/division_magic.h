// Division by a divisor the host knows, as a kernel's multiplication: kernels/slice_grad_spans.hlsl's div_magic
// computes value / d for every 32-bit value as (t + ((value - t) >> 1)) >> (ceil(log2 d) - 1), t the high word of
// value * magic (Hacker's Delight 10-8, the multiplier of 33 bits less its top bit); d = 1 returns the value.
#pragma once

#include <cstdint>

namespace dmlgrad {

// floor(2^32 * (2^l - d) / d) + 1 with l = ceil(log2 d), below 2^32 for 2 <= d < 2^32; 0 for d = 1 (unused).
constexpr uint32_t division_magic(uint64_t d) {
    if (d <= 1) return 0;
    uint64_t l = 0;
    while ((uint64_t(1) << l) < d) ++l;
    return uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << l) - d) / d + 1);
}

}  // namespace dmlgrad
