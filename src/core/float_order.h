#pragma once
// Comparisons of floats on their bit patterns: exact for denormals whatever the FPU's flush mode, and the same
// rule the HLSL kernels use (kernels/common.hlsli), so CPU and GPU pick the same elements.
#include <cstdint>

namespace dmlgrad {

// A signed key whose integer order is the float order of non-NaN values; -0 and +0 get the same key.
inline int32_t order_key_f32(uint32_t bits) {
    int32_t magnitude = int32_t(bits & 0x7FFFFFFFu);
    return (bits & 0x80000000u) ? -magnitude : magnitude;
}
inline int32_t order_key_f16(uint16_t bits) {
    int32_t magnitude = int32_t(bits & 0x7FFFu);
    return (bits & 0x8000u) ? -magnitude : magnitude;
}
inline bool is_nan_f32(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
inline bool is_nan_f16(uint16_t bits) { return (bits & 0x7FFFu) > 0x7C00u; }

// Max-pool's key: NaN above every number (docs/OPERATORS.md 4.2), all NaNs equal so the lowest index wins.
inline int32_t pool_key_f32(uint32_t bits) { return is_nan_f32(bits) ? INT32_MAX : order_key_f32(bits); }
inline int32_t pool_key_f16(uint16_t bits) { return is_nan_f16(bits) ? INT32_MAX : order_key_f16(bits); }

}  // namespace dmlgrad
