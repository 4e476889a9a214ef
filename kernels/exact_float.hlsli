// Float32 arithmetic and fp16 conversions on integer bits, exactly as x86-64 (SSE, no flush-to-zero) does them:
// round to nearest even, denormals kept, and x86's NaNs. For kernels that must match the CPU reference bit for
// bit where the GPU's own float unit may not: Vulkan lets a device flush denormals unless the shader asks
// otherwise (which glslang's HLSL cannot), and every GPU makes its own NaN bits.
#ifndef DMLGRAD_EXACT_FLOAT_HLSLI
#define DMLGRAD_EXACT_FLOAT_HLSLI

// Bits [k, 64) of the 64-bit value (hi:lo), low 32 bits of the result; k in [0, 63].
uint shift_right64(uint hi, uint lo, uint k) {
    if (k == 0) return lo;
    if (k < 32) return (lo >> k) | (hi << (32u - k));
    return hi >> (k - 32u);
}

// (hi:lo) * 2^e as a float32 with the given sign, rounded to nearest even; (hi:lo) != 0 and below 2^48.
uint round_pack(uint sign, uint hi, uint lo, int e) {
    int top = hi != 0 ? 32 + int(firstbithigh(hi)) : int(firstbithigh(lo));  // value in [2^top, 2^(top+1))
    int biased = top + e + 127;                                              // exponent field if normal
    if (biased >= 255) return sign | 0x7F800000u;
    int k = max(top - 23, -149 - e);  // bits to drop: 24 significant bits, or down to 2^-149
    uint r;
    if (k <= 0) {
        r = lo << uint(-k);  // exact (then hi == 0)
    } else if (k >= 50) {
        r = 0;  // below half the smallest denormal
    } else {
        uint uk = uint(k);
        r = shift_right64(hi, lo, uk);
        uint half_bit = shift_right64(hi, lo, uk - 1u) & 1u;
        uint below = uk - 1u;  // bits under the half bit
        bool sticky = below >= 32u ? (lo != 0 || (hi & ((1u << (below - 32u)) - 1u)) != 0)
                                   : (lo & ((1u << below) - 1u)) != 0;
        r += half_bit & ((sticky || (r & 1u) != 0) ? 1u : 0u);
    }
    // A rounding carry into bit 24 (normal) or bit 23 (denormal) steps the exponent field on its own.
    uint bits = biased >= 1 ? (uint(biased - 1) << 23) + r : r;
    return sign | min(bits, 0x7F800000u);
}

// Significand and exponent field (1 for denormals) of a finite float: value = sig * 2^(exp - 150).
void unpack(uint bits, out uint sig, out int exp) {
    uint field = (bits >> 23) & 0xFFu;
    sig = (bits & 0x7FFFFFu) | (field != 0 ? 0x800000u : 0u);
    exp = field != 0 ? int(field) : 1;
}

bool is_special(uint bits) { return (bits & 0x7F800000u) == 0x7F800000u; }  // inf or NaN
bool is_nan(uint bits) { return (bits << 1) > 0xFF000000u; }

// NaN results as x86-64 SSE makes them, where the CPU reference runs: the first NaN operand, quieted, else
// the default NaN (sign set) for inf * 0 and inf - inf. GPUs make their own NaNs, so the kernel only trusts
// the hardware with finite and infinite values.
#define DEFAULT_NAN 0xFFC00000u
uint quiet(uint bits) { return bits | 0x00400000u; }

float exact_mul(float a, float b) {
    uint x = asuint(a), y = asuint(b);
    uint sign = (x ^ y) & 0x80000000u;
    if (is_special(x) || is_special(y)) {
        if (is_nan(x)) return asfloat(quiet(x));
        if (is_nan(y)) return asfloat(quiet(y));
        if ((x << 1) == 0 || (y << 1) == 0) return asfloat(DEFAULT_NAN);  // inf * 0
        return asfloat(sign | 0x7F800000u);                                // inf * nonzero, denormal included
    }
    uint sx, sy;
    int ex, ey;
    unpack(x, sx, ex);
    unpack(y, sy, ey);
    if (sx == 0 || sy == 0) return asfloat(sign);
    // 24 x 24 bits -> 48 bits from 16-bit halves: (x1 2^16 + x0)(y1 2^16 + y0).
    uint x0 = sx & 0xFFFFu, x1 = sx >> 16, y0 = sy & 0xFFFFu, y1 = sy >> 16;
    uint low = x0 * y0;
    uint mid = x1 * y0 + x0 * y1;  // < 2^25
    uint lo = low + (mid << 16);
    uint hi = x1 * y1 + (mid >> 16) + (lo < low ? 1u : 0u);
    return asfloat(round_pack(sign, hi, lo, ex + ey - 300));
}

// Shifts right by k, or-ing the dropped bits into bit 0 (enough to round correctly afterwards).
uint shift_right_jam(uint v, uint k) {
    if (k == 0) return v;
    if (k >= 31) return v != 0 ? 1u : 0u;
    return (v >> k) | ((v & ((1u << k) - 1u)) != 0 ? 1u : 0u);
}

float exact_add(float a, float b) {
    uint x = asuint(a), y = asuint(b);
    if (is_special(x) || is_special(y)) {
        if (is_nan(x)) return asfloat(quiet(x));
        if (is_nan(y)) return asfloat(quiet(y));
        if (is_special(x) && is_special(y) && x != y) return asfloat(DEFAULT_NAN);  // inf - inf
        return asfloat(is_special(x) ? x : y);
    }
    if ((x & 0x7FFFFFFFu) < (y & 0x7FFFFFFFu)) {  // x the larger magnitude
        uint t = x;
        x = y;
        y = t;
    }
    uint sx, sy;
    int ex, ey;
    unpack(x, sx, ex);
    unpack(y, sy, ey);
    // 6 guard bits; y's bits beyond them only matter as a sticky bit.
    sx <<= 6;
    sy = shift_right_jam(sy << 6, uint(ex - ey));
    uint sig = ((x ^ y) & 0x80000000u) == 0 ? sx + sy : sx - sy;
    if (sig == 0) {  // exact cancellation gives +0; (-0) + (-0) stays -0
        return asfloat(x & y & 0x80000000u);
    }
    return asfloat(round_pack(x & 0x80000000u, 0u, sig, ex - 156));
}

// ---- fp16 ----

// Exact on bits, NaN payloads kept: a subnormal half m * 2^-24 is a normal float, computed by a multiplication
// that cannot round.
float half_to_float(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint field = (h >> 10) & 0x1Fu;
    uint mantissa = h & 0x3FFu;
    precise float subnormal = float(mantissa) * 5.9604644775390625e-8f;
    uint bits = field == 0x1Fu ? 0x7F800000u | (mantissa << 13)
                : field != 0   ? ((field + 112u) << 23) | (mantissa << 13)
                               : asuint(subnormal);
    return asfloat(sign | bits);
}

// src/core/half.h's float_to_half on bits: nearest even, overflow to inf, NaN kept quiet with its payload.
uint float_to_half(float f) {
    uint x = asuint(f);
    uint sign = (x >> 16) & 0x8000u;
    uint a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | 0x7E00u | ((a >> 13) & 0x1FFu);
    if (a >= 0x477FF000u) return sign | 0x7C00u;
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return sign;
        uint shift = 126u - (a >> 23);  // 14 .. 24
        uint mantissa = (a & 0x7FFFFFu) | 0x800000u;
        uint value = mantissa >> shift;
        uint rest = mantissa & ((1u << shift) - 1u);
        uint halfway = 1u << (shift - 1u);
        value += (rest > halfway || (rest == halfway && (value & 1u) != 0)) ? 1u : 0u;
        return sign | value;
    }
    uint value = (a >> 13) - (112u << 10);
    uint rest = a & 0x1FFFu;
    value += (rest > 0x1000u || (rest == 0x1000u && (value & 1u) != 0)) ? 1u : 0u;
    return sign | value;
}

#endif  // DMLGRAD_EXACT_FLOAT_HLSLI
