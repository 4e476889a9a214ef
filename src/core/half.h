#pragma once
// IEEE binary16 <-> binary32 conversions done on bits, so no FPU mode (flush-to-zero) can change them.
#include <bit>
#include <cstdint>

namespace dmlgrad {

inline float half_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1Fu;
    uint32_t mantissa = h & 0x3FFu;
    uint32_t bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000u | (mantissa << 13);  // inf or NaN (payload kept)
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else {                                          // subnormal half: normalize
        int shift = std::countl_zero(mantissa) - 21;  // leading zeros within the 10-bit field
        mantissa = (mantissa << shift) & 0x3FFu;
        bits = sign | uint32_t(113 - shift) << 23 | (mantissa << 13);
    }
    return std::bit_cast<float>(bits);
}

// Round to nearest, ties to even; overflow gives inf; NaN stays NaN (quiet).
inline uint16_t float_to_half(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    uint32_t abs = x & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((abs >> 13) & 0x1FFu));
    if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // rounds to >= 65520: inf
    if (abs < 0x38800000u) {                                  // below the smallest normal half
        if (abs < 0x33000000u) return sign;                   // below half the smallest subnormal
        uint32_t exponent = abs >> 23;
        uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
        uint32_t shift = 126 - exponent;  // 14 .. 24
        uint32_t value = mantissa >> shift;
        uint32_t rest = mantissa & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (value & 1u))) ++value;
        return uint16_t(sign | value);
    }
    uint32_t value = (abs >> 13) - (112u << 10);
    uint32_t rest = abs & 0x1FFFu;
    // Branch-free rounding: the branchy form mispredicts on real data and dominated fp16 kernels.
    value += uint32_t(rest > 0x1000u) | (uint32_t(rest == 0x1000u) & value & 1u);
    return uint16_t(sign | value);
}

}  // namespace dmlgrad
