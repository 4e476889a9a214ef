// Resample grad (SPEC.md section 5) as a gather over the host's per-axis tap tables: every dX element sums the
// dY elements that sample it, in the CPU reference's exact order (src/cpu/resample_grad.cpp):
//
//     acc = +0.0f;  for t0 in taps_0(i0) ... for t3 in taps_3(i3):  acc += (((w0 * w1) * w2) * w3) * dY[o]
//
// in float32, `precise` (no fused multiply-add). Variants: MODE = NEAREST (every weight is 1: acc += dY[o])
// or LINEAR, DTYPE = f32 (one dX element per thread) or f16 (two per thread: one 32-bit word of dX).
//
// The host (src/gpu/ops/resample_grad_dispatch.cpp) views dX as 4 axes (leading axes of size 1, adjacent
// identity axes merged, e.g. N and C into one). An identity axis (dX index i takes dY index i, weight 1) has
// no table. A table axis stores, per dX index i (and a sentinel at i = size), the uint pair
// (first dY index, tap start): the taps of i are the dY indices first, first + 1, ... (contiguous, as the
// sampling coordinate is monotonic), their count is the next pair's tap start minus this one's, and in LINEAR
// mode the tap start is the word of the first weight (float bits) in the same buffer. Word 0 holds 1.0f.
//
// Denormals: the GPU may flush them (lavapipe and NVIDIA promise nothing by default), the CPU does not. The
// host proves that with every |dY| >= a bound (or 0, inf, NaN) no product or partial sum can be denormal:
// weights and their products are normal, each term is then a multiple of 2^-125, and so is every sum. A dX
// element that meets a dY below the bound is recomputed with integer arithmetic (exact_mul/exact_add), which
// rounds exactly like IEEE float32 with denormals. A NaN result is recomputed the same way, which gives it the
// bits x86-64 gives it (see exact_mul).
#include "common.hlsli"

#define NEAREST 1
#define LINEAR 2
#ifndef MODE
#error "the build passes -DMODE=NEAREST or LINEAR"
#endif

#define IDENTITY_AXIS 0xFFFFFFFFu

struct Params {
    uint base;        // first thread of this dispatch, relative to the chunk
    uint count;       // threads of the chunk
    uint elem_begin;  // dX elements the chunk owns; in fp16 the other half of a boundary word is kept
    uint elem_end;
    uint total;       // dX elements
    uint dx_origin;   // dX element at the start of the bound dX window (even in fp16)
    uint dy_origin;   // dY element at the start of the bound dY window
    uint tiny_limit;  // a dX element that reads a dY whose MAGNITUDE_KEY is below this is recomputed exactly
    uint dx_size1;    // dX sizes of axes 1, 2, 3 of the view
    uint dx_size2;
    uint dx_size3;
    uint shifts;      // their log2 in 8 bits each, axis 1 lowest (0xFF: not a power of two)
    uint dy_size1;    // dY sizes of axes 1, 2, 3
    uint dy_size2;
    uint dy_size3;
    uint table0;      // word offset of each axis' pairs in `tables`, or IDENTITY_AXIS
    uint table1;
    uint table2;
    uint table3;
};
[[vk::push_constant]] ConstantBuffer<Params> pc;  // not a bare "Params pc": glslang makes that a uniform buffer

[[vk::binding(0, 0)]] StructuredBuffer<uint> dy_buf;
[[vk::binding(1, 0)]] RWStructuredBuffer<uint> dx_buf;
[[vk::binding(2, 0)]] StructuredBuffer<uint> tables;

// ---- exact float32 arithmetic on integers (round to nearest even, denormals kept) ----

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

// ---- dY values and the tap tables ----

#if DTYPE == DT_F16
// Exact on bits: a subnormal half m * 2^-24 is a normal float, computed by a multiplication that cannot round.
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

// dY values travel as raw bits (a half in the low 16 bits for fp16) until they are used, so the watch for
// tiny values sees them as stored. fp16 is converted by the hardware on the fast path (a subnormal half is
// watched, so no flushing conversion can matter) and on bits on the exact path.
uint load_raw(uint j) { return (dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu; }
#define FAST_VALUE(raw) f16tof32(raw)
#define EXACT_VALUE(raw) half_to_float(raw)
#define MAGNITUDE_KEY(raw) (((raw) << 17) - 1u)  // sign dropped, both zeros to the top
#else
uint load_raw(uint j) { return dy_buf[j]; }
#define FAST_VALUE(raw) asfloat(raw)
#define EXACT_VALUE(raw) asfloat(raw)
#define MAGNITUDE_KEY(raw) (((raw) << 1) - 1u)
#endif

struct Taps {
    uint first;  // dY index of the first tap
    uint start;  // LINEAR: word of its weight
    uint count;
};

Taps taps_of(uint table, uint i) {
    Taps t;
    if (table == IDENTITY_AXIS) {
        t.first = i;
        t.start = 0;  // word 0 holds 1.0f
        t.count = 1;
    } else {
        uint at = table + 2u * i;
        t.first = tables[at];
        t.start = tables[at + 1u];
        t.count = tables[at + 3u] - t.start;
    }
    return t;
}

float weight(Taps t, uint k) { return asfloat(tables[t.start + k]); }

// ---- the gather ----

#if MODE == LINEAR
#define TERM(MUL, P, W, V) MUL(MUL(P, W), V)
#define PRODUCT(MUL, P, W) MUL(P, W)
#else
#define TERM(MUL, P, W, V) (V)
#define PRODUCT(MUL, P, W) (P)
#endif
#define HW_MUL(a, b) ((a) * (b))
#define HW_ADD(a, b) ((a) + (b))

// The loops over the taps of axes 0-2 around INNER, the loop over axis 3 (which sees p2 and row).
#define NEST(MUL, INNER)                                                                   \
    for (uint k0 = 0; k0 < t0.count; ++k0) {                                              \
        precise float p0 = PRODUCT(MUL, 1.0f, weight(t0, k0));                            \
        uint o0 = t0.first + k0;                                                          \
        for (uint k1 = 0; k1 < t1.count; ++k1) {                                          \
            precise float p1 = PRODUCT(MUL, p0, weight(t1, k1));                          \
            uint o01 = (o0 * pc.dy_size1 + t1.first + k1) * pc.dy_size2;                  \
            for (uint k2 = 0; k2 < t2.count; ++k2) {                                      \
                precise float p2 = PRODUCT(MUL, p1, weight(t2, k2));                      \
                uint row = (o01 + t2.first + k2) * pc.dy_size3 + t3.first - pc.dy_origin; \
                INNER                                                                     \
            }                                                                             \
        }                                                                                 \
    }

// The fast path, for a dX element with one tap on axes 0 and 1 (identity axes such as N and C, or size 1) and
// at most 4 on axes 2 and 3 (2x linear has 4): every step written out, weights of axis 3 in registers, no loop
// counters. (Written out rather than [unroll]ed: spirv-opt's unrolling drops NoContraction from its copies.)
// Every path notes the smallest magnitude key of the dY values it reads in `lowest`.
#define FEW_TAPS 4
#define COLUMN_STEP(k3)                                                                   \
    if (k3 < t3.count) {                                                                  \
        uint raw = load_raw(row + k3);                                                    \
                                                                                          \
        acc = acc + TERM(HW_MUL, p2, w3[k3], FAST_VALUE(raw));                            \
    }
#define ROW_STEP(k2)                                                                      \
    if (k2 < t2.count) {                                                                  \
        precise float p2 = PRODUCT(HW_MUL, p1, weight(t2, k2));                           \
        uint row = (o01 + t2.first + k2) * pc.dy_size3 + t3.first - pc.dy_origin;        \
        COLUMN_STEP(0) COLUMN_STEP(1) COLUMN_STEP(2) COLUMN_STEP(3)                       \
    }
// Any number of taps.
#define INNER_ANY                                                                         \
    for (uint k3 = 0; k3 < t3.count; ++k3) {                                              \
        uint raw = load_raw(row + k3);                                                    \
                                                                                          \
        acc = acc + TERM(HW_MUL, p2, weight(t3, k3), FAST_VALUE(raw));                    \
    }
#define INNER_EXACT                                                                       \
    for (uint k3 = 0; k3 < t3.count; ++k3)                                                \
        acc = exact_add(acc, TERM(exact_mul, p2, weight(t3, k3), EXACT_VALUE(load_raw(row + k3))));

// value / divisor, a shift where the host found a power of two; a real branch, so that the division is not
// computed anyway and thrown away.
uint divide(uint value, uint divisor, uint shift) {
    uint q;
    [branch] if (shift != 0xFFu) {
        q = value >> shift;
    } else {
        q = value / divisor;
    }
    return q;
}

float gather(uint e) {
    uint r3 = divide(e, pc.dx_size3, (pc.shifts >> 16) & 0xFFu);
    uint i3 = e - r3 * pc.dx_size3;
    uint r2 = divide(r3, pc.dx_size2, (pc.shifts >> 8) & 0xFFu);
    uint i2 = r3 - r2 * pc.dx_size2;
    uint i0 = divide(r2, pc.dx_size1, pc.shifts & 0xFFu);
    uint i1 = r2 - i0 * pc.dx_size1;
    Taps t0 = taps_of(pc.table0, i0);
    Taps t1 = taps_of(pc.table1, i1);
    Taps t2 = taps_of(pc.table2, i2);
    Taps t3 = taps_of(pc.table3, i3);

    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    [branch] if (t0.count == 1 && t1.count == 1 && t2.count <= FEW_TAPS && t3.count <= FEW_TAPS) {
        precise float p1 = PRODUCT(HW_MUL, PRODUCT(HW_MUL, 1.0f, weight(t0, 0)), weight(t1, 0));
        uint o01 = (t0.first * pc.dy_size1 + t1.first) * pc.dy_size2;
        float w3[FEW_TAPS];
        [unroll] for (uint k = 0; k < FEW_TAPS; ++k) w3[k] = MODE == LINEAR && k < t3.count ? weight(t3, k) : 0.0f;
        ROW_STEP(0) ROW_STEP(1) ROW_STEP(2) ROW_STEP(3)
    } else {
        NEST(HW_MUL, INNER_ANY)
    }
    // A dY value the hardware might flush, or a NaN whose bits the hardware chose: recompute exactly.
    [branch] if (lowest < pc.tiny_limit || is_nan(asuint(acc))) {
        acc = 0.0f;
        NEST(exact_mul, INNER_EXACT)
    }
    // The sum starts at +0, so it is never -0; but compilers may fold the first `0 + t` into `t` (lavapipe
    // does, as nothing asks it to keep signed zeros), which differs exactly when every term is -0.
    return asuint(acc) == 0x80000000u ? 0.0f : acc;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint j = pc.base + id.x;
    if (j >= pc.count) return;
#if DTYPE == DT_F16
    uint word = pc.elem_begin / 2u + j;
    uint e = 2u * word;
    uint old = 0;
    bool partial = e < pc.elem_begin || (e + 2u > pc.elem_end && pc.elem_end < pc.total);
    if (partial) old = dx_buf[word - pc.dx_origin / 2u];  // the half another chunk owns is kept
    uint result = 0;
    [unroll] for (uint h = 0; h < 2; ++h) {
        uint half_bits = (old >> (16u * h)) & 0xFFFFu;
        if (e + h >= pc.elem_begin && e + h < pc.elem_end) half_bits = float_to_half(gather(e + h));
        else if (e + h >= pc.total) half_bits = 0;  // padding
        result |= half_bits << (16u * h);
    }
    dx_buf[word - pc.dx_origin / 2u] = result;
#else
    uint e = pc.elem_begin + j;
    dx_buf[e - pc.dx_origin] = asuint(gather(e));
#endif
}
