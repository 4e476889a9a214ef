// Float32 arithmetic and fp16 conversions on integer bits, exactly as x86-64 (SSE, no flush-to-zero) does them:
// round to nearest even, denormals kept, and x86's NaNs. For kernels that must match the CPU reference bit for
// bit where the GPU's own float unit may not: Vulkan lets a device flush denormals unless the shader asks
// otherwise (which glslang's HLSL cannot), and every GPU makes its own NaN bits.
//  - soft_add, soft_mul: software float32, integer operations only (resample grad's rare exact path);
//  - guarded_add: hardware adds where no denormal can be an input or an output, the other cases on bits (the
//    max-pool grad kernels' every sum);
//  - half_to_float_bits, float_to_half_bits: the conversions of src/core/half.h on bits.
#ifndef DMLGRAD_EXACT_FLOAT_HLSLI
#define DMLGRAD_EXACT_FLOAT_HLSLI

bool is_special(uint bits) { return (bits & 0x7F800000u) == 0x7F800000u; }  // inf or NaN
bool is_nan(uint bits) { return (bits << 1) > 0xFF000000u; }

// NaN results as x86-64 SSE makes them, where the CPU reference runs: the first NaN operand, quieted, else
// the default NaN (sign set) for inf * 0 and inf - inf. GPUs make their own NaNs, so the kernels only trust
// the hardware with finite and infinite values.
#define DEFAULT_NAN 0xFFC00000u
uint quiet(uint bits) { return bits | 0x00400000u; }

// ---- software float32 ----

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

float soft_mul(float a, float b) {
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

float soft_add(float a, float b) {
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

// ---- hardware adds, guarded ----
// Hardware adds give SSE's bits whenever no denormal is an input or an output; the other cases are rare and
// handled on bits. NaNs follow SSE's rule for `acc + v`: the first NaN operand, quieted; inf + -inf gives the
// default NaN.

// v * 2^100 as a normal float (or a zero of v's sign), for |v| < 2^-101.
float scaled_up(uint v) {
    uint m = v & 0x7FFFFFFFu;
    precise float s = (m >> 23) != 0 ? asfloat(m + (100u << 23)) : float(m) * asfloat((127u - 49u) << 23);
    return (v & 0x80000000u) != 0 ? -s : s;
}

// a + b for |a|, |b| < 2^-101: scaled by 2^100 no denormal occurs, a normal result rounds the same at either
// scale, and a result below 2^-126 is exact (a multiple of 2^-149).
uint add_tiny(uint a, uint b) {
    precise float s = scaled_up(a) + scaled_up(b);
    uint bits = asuint(s);
    uint m = bits & 0x7FFFFFFFu;
    if (m == 0) return bits;
    if ((m >> 23) >= 101) return bits - (100u << 23);
    precise float mantissa = abs(s) * asfloat((127u + 49u) << 23);  // an integer below 2^23
    return (bits & 0x80000000u) | uint(mantissa);
}

uint guarded_add_rare(uint acc, uint v) {
    uint ma = acc & 0x7FFFFFFFu, mv = v & 0x7FFFFFFFu;
    if (ma > 0x7F800000u || mv > 0x7F800000u) return quiet(ma > 0x7F800000u ? acc : v);
    if (ma == 0x7F800000u || mv == 0x7F800000u) {
        if (ma == mv && acc != v) return DEFAULT_NAN;  // inf + -inf
        return ma == 0x7F800000u ? acc : v;
    }
    uint ea = ma >> 23, ev = mv >> 23;
    if (max(ea, ev) <= 25) return add_tiny(acc, v);
    // One of them is 2^-101 or more: a zero or denormal other operand is below half its ulp.
    if (min(ea, ev) == 0) return ea > ev ? acc : v;
    // Both normal: the sum is zero or at least 2^-125, never denormal.
    precise float s = asfloat(acc) + asfloat(v);
    return asuint(s);
}

// acc + v as the CPU's SSE addition gives it (acc the first operand), on bits.
uint guarded_add(uint acc, uint v) {
    // +0 + v (the first term of every sum): v, but -0 gives +0 and a NaN is quieted.
    if (acc == 0u) return v == 0x80000000u ? 0u : ((v & 0x7FFFFFFFu) > 0x7F800000u ? quiet(v) : v);
    uint ea = (acc >> 23) & 0xFFu, ev = (v >> 23) & 0xFFu;
    // Both normal and finite, one at least 2^-101: the sum is zero or at least 2^-125, never denormal.
    if (ea - 1u < 254u && ev - 1u < 254u && max(ea, ev) >= 26u) {
        precise float s = asfloat(acc) + asfloat(v);
        return asuint(s);
    }
    return guarded_add_rare(acc, v);
}

// ---- fp16 ----

// src/core/half.h on bits: exact, NaN payloads kept.
uint half_to_float_bits(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    if (e == 0x1Fu) return sign | 0x7F800000u | (m << 13);
    if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
    if (m == 0) return sign;
    uint shift = 10u - firstbithigh(m);
    return sign | ((113u - shift) << 23) | (((m << shift) & 0x3FFu) << 13);
}

// Round to nearest even, as float_to_half in src/core/half.h (f32tof16 is not specified that closely).
uint float_to_half_bits(uint x) {
    uint sign = (x >> 16) & 0x8000u;
    uint a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | 0x7E00u | ((a >> 13) & 0x1FFu);
    if (a >= 0x477FF000u) return sign | 0x7C00u;
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return sign;
        uint mantissa = (a & 0x7FFFFFu) | 0x800000u;
        uint shift = 126u - (a >> 23);
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

// half_to_float_bits and float_to_half_bits with the common cases (zeros and normal halves) on a few integer
// operations and the rest behind a branch a warp seldom takes: the conversions were a large share of fp16 kernels'
// work. Same bits as the exact functions above.
uint half_to_float_bits_fast(uint h) {
    uint magnitude = h & 0x7FFFu, e = magnitude >> 10;
    uint f = (h & 0x8000u) << 16 | (magnitude == 0 ? 0u : (magnitude << 13) + (112u << 23));
    [branch] if (e - 1u >= 30u && magnitude != 0) f = half_to_float_bits(h);  // subnormals, infinities, NaNs
    return f;
}

uint float_to_half_bits_fast(uint x) {
    uint a = x & 0x7FFFFFFFu, sign = (x >> 16) & 0x8000u;
    // Normal halves: round to nearest even by a carry out of the 13 dropped bits.
    uint h = sign | (a < 0x33000000u ? 0u : ((a + 0xFFFu + ((a >> 13) & 1u)) >> 13) - (112u << 10));
    [branch] if (a - 0x33000000u < 0x38800000u - 0x33000000u || a >= 0x477FF000u) h = float_to_half_bits(x);
    return h;
}

#endif  // DMLGRAD_EXACT_FLOAT_HLSLI
