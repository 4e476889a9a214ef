// Max-pooling grad kernels' arithmetic on bits (kernels/maxpool_grad.hlsl, maxpool_grad_fast.hlsl): the float32
// sums and fp16 conversions of the CPU reference, exact whatever the device does with denormals, and the pool key.
#ifndef DMLGRAD_MAXPOOL_GRAD_ARITH_HLSLI
#define DMLGRAD_MAXPOOL_GRAD_ARITH_HLSLI
#include "common.hlsli"

// ---- float32 arithmetic on bits, exact under any denormal mode ----
// The CPU adds with SSE (no flush to zero). Hardware adds give the same bits whenever no denormal is an input or
// an output; the other cases are rare and handled on bits. NaNs follow SSE's rule for `acc + v`: the first NaN
// operand, quieted; inf + -inf gives SSE's default NaN.

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

uint exact_add_rare(uint acc, uint v) {
    uint ma = acc & 0x7FFFFFFFu, mv = v & 0x7FFFFFFFu;
    if (ma > 0x7F800000u || mv > 0x7F800000u) return (ma > 0x7F800000u ? acc : v) | 0x00400000u;
    if (ma == 0x7F800000u || mv == 0x7F800000u) {
        if (ma == mv && acc != v) return 0xFFC00000u;  // inf + -inf
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

// acc + v as the CPU's SSE addition gives it (acc the first operand).
uint exact_add(uint acc, uint v) {
    // +0 + v (the first term of every sum): v, but -0 gives +0 and a NaN is quieted.
    if (acc == 0u) return v == 0x80000000u ? 0u : ((v & 0x7FFFFFFFu) > 0x7F800000u ? v | 0x00400000u : v);
    uint ea = (acc >> 23) & 0xFFu, ev = (v >> 23) & 0xFFu;
    // Both normal and finite, one at least 2^-101: the sum is zero or at least 2^-125, never denormal.
    if (ea - 1u < 254u && ev - 1u < 254u && max(ea, ev) >= 26u) {
        precise float s = asfloat(acc) + asfloat(v);
        return asuint(s);
    }
    return exact_add_rare(acc, v);
}

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
        if (rest > halfway || (rest == halfway && (value & 1u) != 0)) ++value;
        return sign | value;
    }
    uint value = (a >> 13) - (112u << 10);
    uint rest = a & 0x1FFFu;
    value += (rest > 0x1000u ? 1u : 0u) | ((rest == 0x1000u ? 1u : 0u) & value & 1u);
    return sign | value;
}

// Max-pool's key (src/core/float_order.h): NaN above every number, -0 == +0.
int pool_key(uint v) { return lane_is_nan(v) ? 0x7FFFFFFF : lane_key(v); }

#endif  // DMLGRAD_MAXPOOL_GRAD_ARITH_HLSLI
