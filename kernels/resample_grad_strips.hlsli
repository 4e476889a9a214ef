// Resample grad, strips (interface/resample_grad.h): the common part of resample_grad_strips_f32.hlsl and
// resample_grad_strips_f16.hlsl, over resample_grad_gather.hlsli.
#ifndef DMLGRAD_RESAMPLE_GRAD_STRIPS_HLSLI
#define DMLGRAD_RESAMPLE_GRAD_STRIPS_HLSLI
#define STRIPS 1
#include "resample_grad_gather.hlsli"

float exact_sum(uint e) { return positive_zero(gather_exact(e)); }

// ---- strips (the STRIPS variants) ----
// Where dX is one chunk (and, in fp16, rows have an even length): thread j makes STRIP_ROWS consecutive rows of a
// plane (the view's axes 0 and 1) in `unit` columns (f32: one; fp16: two, one word), the lanes of a warp
// consecutive units. The elements share the columns' taps and weights; each row has its own. A variant of its
// own: the strip code in the same kernel as the runs took registers from them (near 2x f32 9% slower).


// Where thread j's strip lies, and the taps of its planes and rows (rows past the plane's end repeat its last:
// not computed, not stored).
struct Strip {
    uint e0;    // its first element (first row, first column)
    uint rows;  // its rows within the plane, 1 to STRIP_ROWS
    uint col;   // its first column
    Taps t0, t1, ra, rb, rc, rd;
};

Strip strip_of(uint j, uint unit, uint units_shift) {
    Strip s;
    uint units = pc.dx_size3 / unit;
    uint q = div_by(j, units, units_shift);  // (plane, group of rows)
    s.col = (j - q * units) * unit;
    uint plane = div_by(q, pc.strip_groups, shift_of(3));
    uint r0 = (q - plane * pc.strip_groups) * STRIP_ROWS;
    s.rows = min(STRIP_ROWS, pc.dx_size2 - r0);
    s.e0 = (plane * pc.dx_size2 + r0) * pc.dx_size3 + s.col;
    uint i0 = div_by(plane, pc.dx_size1, shift_of(0));
    s.t0 = taps_of(pc.table0, i0);
    s.t1 = taps_of(pc.table1, plane - i0 * pc.dx_size1);
    s.ra = taps_of(pc.table2, r0);
    s.rb = taps_of(pc.table2, r0 + min(1u, s.rows - 1u));
    s.rc = taps_of(pc.table2, r0 + min(2u, s.rows - 1u));
    s.rd = taps_of(pc.table2, r0 + min(3u, s.rows - 1u));
    return s;
}

// ONE_TAP variants (plans with one tap at every index of every axis, such as linear 0.5x) set every count to
// the known 1: the compiler then drops the count loads, the slow branch and the steps past the first.
bool strip_is_fast(inout Strip s) {
#if ONE_TAP
    s.t0.count = 1;
    s.t1.count = 1;
    s.ra.count = 1;
    s.rb.count = 1;
    s.rc.count = 1;
    s.rd.count = 1;
#endif
    return s.t0.count == 1 && s.t1.count == 1 && FITS(s.ra) && FITS(s.rb) &&
           FITS(s.rc) && FITS(s.rd);
}

// Whether the strip's plane has no tap on axis 0 or 1 (an index a nearest downscale does not take): +0 throughout,
// the sums' starting value. The nearest strips (but one-tap) skip their general code there, which would make each
// element alone (coordinates by divisions, tap lookups, empty loops). Linear keeps its code as it was.
bool plane_is_empty(Strip s) { return s.t0.count == 0 || s.t1.count == 0; }

// The strip's p1 and o01 (the fast path's one tap on axes 0 and 1).
#define STRIP_PLANE(S)                                                                      \
    precise float p1 = PRODUCT(HW_MUL, PRODUCT(HW_MUL, 1.0f, weight(S.t0, 0)), weight(S.t1, 0)); \
    uint o01 = (S.t0.first * pc.dy_size1 + S.t1.first) * pc.dy_size2;

// Sets bit k of a mask of eight where sum k (s0 to s7) has bits V.
#define MASK_OF(V) ((s0 == V ? 1u : 0u) | (s1 == V ? 2u : 0u) | (s2 == V ? 4u : 0u) | (s3 == V ? 8u : 0u) |  \
                    (s4 == V ? 16u : 0u) | (s5 == V ? 32u : 0u) | (s6 == V ? 64u : 0u) | (s7 == V ? 128u : 0u))
#define SET_SUM(k, V)                                                                       \
    s0 = k == 0 ? V : s0; s1 = k == 1 ? V : s1; s2 = k == 2 ? V : s2; s3 = k == 3 ? V : s3; \
    s4 = k == 4 ? V : s4; s5 = k == 5 ? V : s5; s6 = k == 6 ? V : s6; s7 = k == 7 ? V : s7;

#endif  // DMLGRAD_RESAMPLE_GRAD_STRIPS_HLSLI
