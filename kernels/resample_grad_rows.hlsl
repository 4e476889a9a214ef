// Resample grad, nearest rows (interface/resample_grad.h): where view axis 3 is an identity (the plan resamples
// outer axes only, so a dX row and each of its dY rows are the same columns) whose rows are whole uint4s (dx size 3
// a multiple of ELEMENTS) and dX is one chunk, thread j makes dX uint4 j. It lies in one row, and each of that
// row's dY rows (the taps of view axes 0-2, in the CPU's order) holds its terms as one uint4 at the same column: a
// load a dY row, not an element (the walk loads each element of its uint4 on its own: a warp's load of one tap then
// spans four times the bytes it uses; H100, 20261224/28, f32 3x3 on the two outer axes, rows of 15528: 77% of the
// bound, slower than PyTorch). Variants: DTYPE f32 and f16, MODE NEAREST; SHIFTED 1 (float32) for rows of any length
// (fits_shifted_rows in the host): a dY row's terms then start anywhere in a uint4, so they are made from the two
// uint4s that hold them (the lanes' loads still consecutive), and a thread whose uint4 crosses a row's end makes its
// elements one by one (gather(), resample_grad_gather.hlsli).
//
// An element sums its terms from +0 in the CPU's order, each value converted with FAST_VALUE (fp16: subnormal halves
// by hand). fp16: every sum is a multiple of 2^-24 below 2^16 and the hardware adds give the CPU's bits, except a
// NaN's (made again on bits, exact_float.hlsli) and -0 (positive_zero). float32: an element that reads a value below
// tiny_limit (a sum of such terms could be denormal, which the GPU may flush) or sums to a NaN is made again on bits.
#define STRIPS 0
#define DX_WORDS uint4  // a thread's elements, one store
#define DY_UINT4 1  // a dY row's terms of a thread's elements, one load
#include "resample_grad_gather.hlsli"
#if MODE != NEAREST
#error "the rows are nearest"
#endif
#ifndef SHIFTED
#define SHIFTED 0
#endif
#if DTYPE == DT_F16
#define ELEMENTS 8  // a thread's elements: one uint4 of halves
#else
#define ELEMENTS 4  // one uint4 of floats
#endif

// Element k of dX uint4 w set to `bits` (fp16: a half in the low bits).
uint4 with_element(uint4 w, uint k, uint bits) {
#if DTYPE == DT_F16
    uint shift = (k & 1u) * 16u;
    bits <<= shift;
    uint keep = ~(0xFFFFu << shift);
    uint q = k >> 1;
#else
    uint keep = 0;
    uint q = k;
#endif
    return uint4(q == 0 ? (w.x & keep) | bits : w.x, q == 1 ? (w.y & keep) | bits : w.y,
                 q == 2 ? (w.z & keep) | bits : w.z, q == 3 ? (w.w & keep) | bits : w.w);
}

// A sum's bits, or NEEDS_EXACT where it must be made again on bits.
uint sum_bits(float acc, uint lowest) {
#if DTYPE == DT_F16
    return is_nan(asuint(acc)) ? NEEDS_EXACT : asuint(positive_zero(acc));  // tiny_limit is 0 for nearest fp16
#else
    return checked(acc, lowest);
#endif
}

#if SHIFTED
#if DTYPE != DT_F32
#error "the shifted rows are float32"
#endif
// The four dY values from element `start` on, as a uint4, from the two uint4s that hold them (one where start is a
// uint4's first: the next may lie past dY's end).
uint4 terms_at(uint start) {
    uint at = start / ELEMENTS, phase = start % ELEMENTS;
    uint4 a = dy_buf[at], b = dy_buf[phase == 0 ? at : at + 1u];
    return phase == 0 ? a : (phase == 1 ? uint4(a.yzw, b.x) : (phase == 2 ? uint4(a.zw, b.xy) : uint4(a.w, b.xyz)));
}
#endif

// A place among a thread's dY rows (the taps k0, k1, k2 of axes 0-2, axis 2 fastest: the CPU's order).
struct Cursor {
    Taps t0, t1, t2;
    uint k0, k1, k2;
};

// The cursor's dY row (its index over view axes 0-2), then the next row.
uint row_and_step(inout Cursor c) {
    uint row = ((c.t0.first + c.k0) * pc.dy_size1 + c.t1.first + c.k1) * pc.dy_size2 + c.t2.first + c.k2;
    c.k2 += 1u;
    if (c.k2 == c.t2.count) {
        c.k2 = 0;
        c.k1 += 1u;
        if (c.k1 == c.t1.count) {
            c.k1 = 0;
            c.k0 += 1u;
        }
    }
    return row;
}

// The loop over a thread's `rows` dY rows around ADD(v, has), ROWS_A_STEP of them a pass, their loads first. A row
// past the last loads the pass's first again (has false: ADD leaves the sums as they were), so no branch guards a
// load. H100, round 1 of nearest31 (1, 2 and 4 rows a pass): float32 2 (20261206/199, rows of 56 from 1.25x: 148.7,
// 123.4, 134.0 us), fp16 1, whose eight sums and conversions a row leave fewer threads (20261252/219, 2.48x on rows
// of 1048576: 78.2, 85.1, 95.1).
#if DTYPE == DT_F16
#define ROWS_A_STEP 1
#else
#define ROWS_A_STEP 2
#endif
#if SHIFTED
#define LOAD(i) uint4 v##i = terms_at(row##i * pc.dy_size3 + column);
#else
#define LOAD(i) uint4 v##i = dy_buf[(row##i * pc.dy_size3 + column) / ELEMENTS];
#endif
#define NEXT_ROW(i)                                                                       \
    bool has##i = q + i < rows;                                                           \
    uint row##i = row_and_step(c);                                                        \
    row##i = has##i ? row##i : row0;
#if ROWS_A_STEP == 1
#define EACH_DY_ROW(ADD)                                                                  \
    [loop] for (uint q = 0; q < rows; ++q) {                                              \
        uint row0 = row_and_step(c);                                                      \
        LOAD(0)                                                                           \
        ADD(v0, true)                                                                     \
    }
#elif ROWS_A_STEP == 2
#define EACH_DY_ROW(ADD)                                                                  \
    [loop] for (uint q = 0; q < rows; q += 2u) {                                          \
        uint row0 = row_and_step(c);                                                      \
        NEXT_ROW(1)                                                                       \
        LOAD(0) LOAD(1)                                                                   \
        ADD(v0, true) ADD(v1, has1)                                                       \
    }
#else
#define EACH_DY_ROW(ADD)                                                                  \
    [loop] for (uint q = 0; q < rows; q += 4u) {                                          \
        uint row0 = row_and_step(c);                                                      \
        NEXT_ROW(1) NEXT_ROW(2) NEXT_ROW(3)                                               \
        LOAD(0) LOAD(1) LOAD(2) LOAD(3)                                                   \
        ADD(v0, true) ADD(v1, has1) ADD(v2, has2) ADD(v3, has3)                           \
    }
#endif

// The thread's sums as bits (0 where made again) and a bit per element in `exact` where it must be made again.
#if DTYPE == DT_F16
// Halves 2w (low) and 2w + 1 (high) of word w: lane w of even and odd.
#define ADD_HALVES(v, has)                                                                                \
    {                                                                                                     \
        float4 e = ROUNDED(even + float4(fast_half_to_float(v.x & 0xFFFFu), fast_half_to_float(v.y & 0xFFFFu), \
                                         fast_half_to_float(v.z & 0xFFFFu), fast_half_to_float(v.w & 0xFFFFu))); \
        float4 o = ROUNDED(odd + float4(fast_half_to_float(v.x >> 16), fast_half_to_float(v.y >> 16),    \
                                        fast_half_to_float(v.z >> 16), fast_half_to_float(v.w >> 16)));  \
        even = has ? e : even;                                                                            \
        odd = has ? o : odd;                                                                              \
    }
#define HALF_OF(k, acc)                                                                                   \
    uint bits##k;                                                                                         \
    {                                                                                                     \
        uint sum = sum_bits(acc, 0xFFFFFFFFu);                                                            \
        exact |= sum == NEEDS_EXACT ? 1u << k : 0u;                                                       \
        bits##k = sum == NEEDS_EXACT ? 0u : float_to_half_bits_fast(sum);                                 \
    }
uint4 row_sums(Cursor c, uint rows, uint column, inout uint exact) {
    precise float4 even = 0.0f, odd = 0.0f;
    EACH_DY_ROW(ADD_HALVES)
    HALF_OF(0, even.x) HALF_OF(1, odd.x) HALF_OF(2, even.y) HALF_OF(3, odd.y)
    HALF_OF(4, even.z) HALF_OF(5, odd.z) HALF_OF(6, even.w) HALF_OF(7, odd.w)
    return uint4(bits0 | bits1 << 16, bits2 | bits3 << 16, bits4 | bits5 << 16, bits6 | bits7 << 16);
}
#else
#define ADD_FLOATS(v, has)                                      \
    lowest = has ? min(lowest, MAGNITUDE_KEY(v)) : lowest;      \
    acc = has ? ROUNDED(acc + asfloat(v)) : acc;
#define FLOAT_OF(k, sum_k, lowest_k)                                \
    uint bits##k;                                                   \
    {                                                               \
        uint sum = sum_bits(sum_k, lowest_k);                       \
        exact |= sum == NEEDS_EXACT ? 1u << k : 0u;                 \
        bits##k = sum == NEEDS_EXACT ? 0u : sum;                    \
    }
uint4 row_sums(Cursor c, uint rows, uint column, inout uint exact) {
    precise float4 acc = 0.0f;
    uint4 lowest = 0xFFFFFFFFu;
    EACH_DY_ROW(ADD_FLOATS)
    FLOAT_OF(0, acc.x, lowest.x) FLOAT_OF(1, acc.y, lowest.y) FLOAT_OF(2, acc.z, lowest.z)
    FLOAT_OF(3, acc.w, lowest.w)
    return uint4(bits0, bits1, bits2, bits3);
}
#endif

#if SHIFTED
// The elements from e0 on one by one (0 past dX's end), a bit in `exact` for each to be made again on bits.
uint4 one_by_one(uint e0, inout uint exact) {
    uint4 words = 0;
    [loop] for (uint k = 0; k < ELEMENTS && e0 + k < pc.total; ++k) {
        uint sum = gather(e0 + k);
        exact |= sum == NEEDS_EXACT ? 1u << k : 0u;
        words = with_element(words, k, sum == NEEDS_EXACT ? 0u : sum);
    }
    return words;
}
#endif

void make_uint4(uint j) {
    uint e0 = ELEMENTS * j;
    uint r3 = div_by(e0, pc.dx_size3, shift_of(2));
    uint column = e0 - r3 * pc.dx_size3;
    uint r2 = div_by(r3, pc.dx_size2, shift_of(1));
    uint i0 = div_by(r2, pc.dx_size1, shift_of(0));
    Cursor c;
    c.t0 = taps_of(pc.table0, i0);
    c.t1 = taps_of(pc.table1, r2 - i0 * pc.dx_size1);
    c.t2 = taps_of(pc.table2, r3 - r2 * pc.dx_size2);
    c.k0 = 0;
    c.k1 = 0;
    c.k2 = 0;
    uint exact = 0;  // a bit per element made again on bits below
#if SHIFTED
    [branch] if (column + ELEMENTS > pc.dx_size3) {  // across a row's end, or past dX's
        dx_buf[j] = one_by_one(e0, exact);
    } else {
        dx_buf[j] = row_sums(c, c.t0.count * c.t1.count * c.t2.count, column, exact);
    }
#else
    dx_buf[j] = row_sums(c, c.t0.count * c.t1.count * c.t2.count, column, exact);
#endif
    // Stored first, then each sum made again patched in place (as the walk: kernels/resample_grad_walk.hlsl).
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        uint sum = asuint(positive_zero(gather_exact(e0 + k)));
#if DTYPE == DT_F16
        sum = float_to_half_bits_fast(sum);
#endif
        dx_buf[j] = with_element(dx_buf[j], k, sum);
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) make_uint4(j);
}
