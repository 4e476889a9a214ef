// Resample grad (docs/OPERATORS.md section 5) as a gather over the host's per-axis tap tables: every dX element
// sums the dY elements that sample it, in the CPU reference's exact order (src/cpu/resample_grad.cpp):
//
//     acc = +0.0f;  for t0 in taps_0(i0) ... for t3 in taps_3(i3):  acc += (((w0 * w1) * w2) * w3) * dY[o]
//
// in float32, `precise` (no fused multiply-add). Variants: MODE = NEAREST (every weight is 1: acc += dY[o]) or
// LINEAR; DTYPE = f32 or f16; STRIPS = 0 or 1, the thread mapping (interface/resample_grad.h). A thread makes
// several dX elements, which share taps and their products (the per-element set-up was what limited speed):
// runs (STRIPS 0): fp16 two neighbours (one 32-bit word of dX), f32 four elements RUN_THREADS apart (so the
// lanes of a warp load and store consecutive elements), sharing their row's taps; strips (STRIPS 1, where dX is
// one chunk): STRIP_ROWS rows of one f32 column or fp16 word, sharing the column's taps. Strips variants that know
// more of the plan: ONE_TAP (one tap at every index of every axis) and, linear f32, TAPS = 2 to MAX_FIXED_TAPS
// (no list of axes 2 and 3 longer: the steps run without testing a list's length).
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
// weights and their products are normal, each term is then a multiple of 2^-124, and so is every sum. A dX
// element that meets a dY below the bound is recomputed with integer arithmetic (exact_float.hlsli), which
// rounds exactly like IEEE float32 with denormals. A NaN result is recomputed the same way, which gives it the
// bits x86-64 gives it. The paths for several elements convert halves in hardware, which may flush subnormal
// ones: an element that reads one is made again with them converted by hand (NEEDS_FAST below).
#include "common.hlsli"
#include "exact_float.hlsli"
#include "resample_grad_common.hlsli"
#include "interface/resample_grad.h"

#define NEAREST 1
#define LINEAR 2
#ifndef MODE
#error "the build passes -DMODE=NEAREST or LINEAR"
#endif

DMLGRAD_PARAMS(Params);

DMLGRAD_SRV(uint, dy_buf, 0);
DMLGRAD_UAV(uint, dx_buf, 1);
DMLGRAD_SRV(uint, tables, 2);

// ---- dY values and the tap tables ----

// dY values travel as raw bits (a half in the low 16 bits for fp16) until they are used, so the watch for
// tiny values sees them as stored. Halves are converted three ways: by the hardware alone (HW_VALUE: the paths
// for several elements; a device may flush subnormal halves, so an element that reads one is made again),
// by the hardware for normal halves only (FAST_VALUE, resample_grad_common.hlsli), or exactly, NaN payloads
// kept (EXACT_VALUE).
#if DTYPE == DT_F16
uint load_raw(uint j) { return (dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu; }
#define HW_VALUE(raw) f16tof32(raw)
#define FAST_VALUE(raw) fast_half_to_float(raw)
#define EXACT_VALUE(raw) asfloat(half_to_float_bits(raw))
#define MAGNITUDE_KEY(raw) (((raw) << 17) - 1u)  // sign dropped, both zeros to the top
#define NORMAL_HALF_KEY ((0x400u << 17) - 1u)    // keys below it: subnormal halves
#else
uint load_raw(uint j) { return dy_buf[j]; }
#define HW_VALUE(raw) asfloat(raw)
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

// The log2 of dX size 1, 2 or 3 (axis 0, 1, 2 here) or of strip_groups (3) for div_by, or NO_SHIFT where it is not
// a power of two (the host packs 8 bits each, NO_SHIFT_8 for none).
uint shift_of(uint axis) {
    uint shift = (pc.shifts >> (8u * axis)) & 0xFFu;
    return shift == NO_SHIFT_8 ? NO_SHIFT : shift;
}

// dX element e split over the view's axes: the taps of axes 0-2 and its coordinate along axis 3.
void outer_taps(uint e, out Taps t0, out Taps t1, out Taps t2, out uint i3) {
    uint r3 = div_by(e, pc.dx_size3, shift_of(2));
    i3 = e - r3 * pc.dx_size3;
    uint r2 = div_by(r3, pc.dx_size2, shift_of(1));
    uint i0 = div_by(r2, pc.dx_size1, shift_of(0));
    t0 = taps_of(pc.table0, i0);
    t1 = taps_of(pc.table1, r2 - i0 * pc.dx_size1);
    t2 = taps_of(pc.table2, r3 - r2 * pc.dx_size2);
}

// ---- the arithmetic, in the CPU's order ----

#ifndef STRIPS
#error "the build passes -DSTRIPS=0 (runs of elements) or 1 (strips of rows)"
#endif
#ifndef ONE_TAP
#define ONE_TAP 0  // strips: 1 where the host found one tap at every index of every axis (strip_is_fast below)
#endif

#if MODE == LINEAR
#define TERM(MUL, P, W, V) MUL(MUL(P, W), V)
#define PRODUCT(MUL, P, W) MUL(P, W)
#else
#define TERM(MUL, P, W, V) (V)
#define PRODUCT(MUL, P, W) (P)
#endif
#define HW_MUL(a, b) ((a) * (b))

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

#define INNER_EXACT                                                                       \
    for (uint k3 = 0; k3 < t3.count; ++k3)                                                \
        acc = soft_add(acc, TERM(soft_mul, p2, weight(t3, k3), EXACT_VALUE(load_raw(row + k3))));

// Element e of dX from its coordinates, with the exact arithmetic (the rare path).
float gather_exact(uint e) {
    Taps t0, t1, t2;
    uint i3;
    outer_taps(e, t0, t1, t2, i3);
    Taps t3 = taps_of(pc.table3, i3);
    float acc = 0.0f;
    NEST(soft_mul, INNER_EXACT)
    return acc;
}

// Steps with at most FEW_TAPS taps per axis are written out rather than [unroll]ed: spirv-opt's unrolling
// drops NoContraction from the copies it makes.
#define FEW_TAPS 4

// Fast paths for dX elements with one tap on axes 0 and 1 (identity axes such as N and C, or size 1) and at most
// FEW_TAPS on axes 2 and 3 (2x linear has 4): every step written out, weights of axis 3 in registers, no loop
// counters. Every path notes the smallest magnitude key of the dY values it reads in LOW, and converts them with
// VALUE (HW_VALUE or FAST_VALUE).
#ifndef TAPS
#define TAPS 0  // linear f32: the host found every list of axes 2 and 3 at most TAPS long (below)
#endif
#if TAPS > FEW_TAPS
#error "TAPS is at most FEW_TAPS (the weights a step can find in registers)"
#endif
#if TAPS
// Fixed-tap variants: every step up to TAPS runs, with no test of the list's count: a step past the count has
// weight 0 and reads the list's last tap again (within the bound dY window), so its term is (p2 * 0) * v = +-0,
// which leaves every sum as it was (a sum starts at +0, so it is never -0, and x + +-0 = x), except where v is inf
// or NaN: then the sum is NaN, and a NaN sum is recomputed exactly (checked). A list must have a tap (FITS).
#define COLUMN_STEP(ACC, LOW, T3, W3, ROW, k3, VALUE)                                     \
    if (k3 < TAPS) {                                                                      \
        uint raw = load_raw(ROW + min(k3, T3.count - 1u));                                \
        LOW = min(LOW, MAGNITUDE_KEY(raw));                                               \
        ACC = ACC + TERM(HW_MUL, p2, W3[k3], VALUE(raw));                                 \
    }
#define FITS(T) (T.count - 1u < TAPS)
#else
#define COLUMN_STEP(ACC, LOW, T3, W3, ROW, k3, VALUE)                                     \
    if (k3 < T3.count) {                                                                  \
        uint raw = load_raw(ROW + k3);                                                    \
        LOW = min(LOW, MAGNITUDE_KEY(raw));                                               \
        ACC = ACC + TERM(HW_MUL, p2, W3[k3], VALUE(raw));                                 \
    }
#define FITS(T) (T.count <= FEW_TAPS)
#endif
#define COLUMNS(ACC, LOW, T3, W3, ROW, VALUE)                                             \
    COLUMN_STEP(ACC, LOW, T3, W3, ROW, 0, VALUE) COLUMN_STEP(ACC, LOW, T3, W3, ROW, 1, VALUE) \
    COLUMN_STEP(ACC, LOW, T3, W3, ROW, 2, VALUE) COLUMN_STEP(ACC, LOW, T3, W3, ROW, 3, VALUE)
// Row k2 of the taps T2 of axis 2, then INNER with p2 and the row's start in the window.
#if TAPS
#define ROW_STEP_OF(T2, k2, INNER)                                                        \
    if (k2 < TAPS) {                                                                      \
        precise float p2 = k2 < T2.count ? PRODUCT(HW_MUL, p1, weight(T2, k2)) : 0.0f;    \
        uint row_start = (o01 + T2.first + min(k2, T2.count - 1u)) * pc.dy_size3 - pc.dy_origin; \
        INNER                                                                             \
    }
#else
#define ROW_STEP_OF(T2, k2, INNER)                                                        \
    if (k2 < T2.count) {                                                                  \
        precise float p2 = PRODUCT(HW_MUL, p1, weight(T2, k2));                           \
        uint row_start = (o01 + T2.first + k2) * pc.dy_size3 - pc.dy_origin;              \
        INNER                                                                             \
    }
#endif
#define ROWS_OF(T2, INNER) \
    ROW_STEP_OF(T2, 0, INNER) ROW_STEP_OF(T2, 1, INNER) ROW_STEP_OF(T2, 2, INNER) ROW_STEP_OF(T2, 3, INNER)
#define ROWS(INNER) ROWS_OF(t2, INNER)
// Strips load only the weights a list has (an if; ?: is evaluated on both sides by glslang): 5% faster at 2x
// from 45 wide, 2-4% for fp16. Runs load all FEW_TAPS (?:): with the if, NVIDIA's compiler made linear 2x f32
// 1.8x slower (H100, 2026-11-24).
#if STRIPS
#define LOAD_WEIGHTS(W3, T3)                                                              \
    float W3[FEW_TAPS];                                                                   \
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) {                                        \
        W3[k] = 0.0f;                                                                     \
        if (MODE == LINEAR && k < T3.count) W3[k] = weight(T3, k);                        \
    }
#else
#define LOAD_WEIGHTS(W3, T3)                                                              \
    float W3[FEW_TAPS];                                                                   \
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) W3[k] = MODE == LINEAR && k < T3.count ? weight(T3, k) : 0.0f;
#endif
#define INNER_ANY                                                                         \
    for (uint k3 = 0; k3 < t3.count; ++k3) {                                              \
        uint raw = load_raw(row + k3);                                                    \
        lowest = min(lowest, MAGNITUDE_KEY(raw));                                         \
        acc = acc + TERM(HW_MUL, p2, weight(t3, k3), FAST_VALUE(raw));                    \
    }

// The fast paths return a sum's bits, or NEEDS_EXACT where a dY value the hardware might flush was read or the
// sum is a NaN (whose bits the hardware chose): main() then recomputes that element exactly, from one call site
// (the exact code is large; one inlined copy keeps the kernel small). The paths for several elements return
// NEEDS_FAST where a subnormal half met HW_VALUE: main() makes it again with gather(). Signalling NaNs: no sum
// has these bits.
#define NEEDS_EXACT 0x7F800001u
#define NEEDS_FAST 0x7F800002u
uint checked(float acc, uint lowest) {
    return lowest < pc.tiny_limit || is_nan(asuint(acc)) ? NEEDS_EXACT : asuint(positive_zero(acc));
}
uint checked_hw(float acc, uint lowest) {
#if DTYPE == DT_F16
    if (lowest < NORMAL_HALF_KEY && lowest >= pc.tiny_limit && !is_nan(asuint(acc))) return NEEDS_FAST;
#endif
    return checked(acc, lowest);
}

// One element alone.
uint gather(uint e) {
    Taps t0, t1, t2;
    uint i3;
    outer_taps(e, t0, t1, t2, i3);
    Taps t3 = taps_of(pc.table3, i3);

    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    [branch] if (t0.count == 1 && t1.count == 1 && FITS(t2) && FITS(t3)) {
        precise float p1 = PRODUCT(HW_MUL, PRODUCT(HW_MUL, 1.0f, weight(t0, 0)), weight(t1, 0));
        uint o01 = (t0.first * pc.dy_size1 + t1.first) * pc.dy_size2;
        LOAD_WEIGHTS(w3, t3)
        ROWS(COLUMNS(acc, lowest, t3, w3, row_start + t3.first, FAST_VALUE))
    } else {
        NEST(HW_MUL, INNER_ANY)
    }
    return checked(acc, lowest);
}

// Two elements `gap` apart, each if wanted (an element outside the chunk or the tensor must not be computed: its
// taps may lie outside the bound dY window, or its coordinates outside the tables). Where both are wanted and
// share a row (and the fast path), they share its taps and products and each keeps its own columns and sum;
// else one after the other. An element not wanted gets 0.
void gather_two(uint ea, uint gap, bool want_a, bool want_b, out uint out_a, out uint out_b) {
    Taps t0, t1, t2;
    uint ia;
    outer_taps(ea, t0, t1, t2, ia);
    bool same_row = want_a && want_b && ia + gap < pc.dx_size3;
    Taps ta = taps_of(pc.table3, ia);
    Taps tb = taps_of(pc.table3, same_row ? ia + gap : ia);
    [branch] if (same_row && t0.count == 1 && t1.count == 1 && FITS(t2) && FITS(ta) &&
                 FITS(tb)) {
        precise float p1 = PRODUCT(HW_MUL, PRODUCT(HW_MUL, 1.0f, weight(t0, 0)), weight(t1, 0));
        uint o01 = (t0.first * pc.dy_size1 + t1.first) * pc.dy_size2;
        LOAD_WEIGHTS(wa, ta)
        LOAD_WEIGHTS(wb, tb)
        precise float acc_a = 0.0f;
        precise float acc_b = 0.0f;
        uint low_a = 0xFFFFFFFFu, low_b = 0xFFFFFFFFu;
        ROWS(COLUMNS(acc_a, low_a, ta, wa, row_start + ta.first, HW_VALUE)
             COLUMNS(acc_b, low_b, tb, wb, row_start + tb.first, HW_VALUE))
        out_a = checked_hw(acc_a, low_a);
        out_b = checked_hw(acc_b, low_b);
    } else {
        out_a = 0;
        out_b = 0;
        [loop] for (uint h = 0; h < 2; ++h) {
            if (h == 0 ? want_a : want_b) {
                uint sum = gather(ea + h * gap);
                out_a = h == 0 ? sum : out_a;
                out_b = h == 1 ? sum : out_b;
            }
        }
    }
}

#if DTYPE == DT_F32
// Four elements RUN_THREADS apart: where they share a row (and the fast path), as gather_two with four columns.
void gather_four(uint e, out uint out_0, out uint out_1, out uint out_2, out uint out_3) {
    Taps t0, t1, t2;
    uint i3;
    outer_taps(e, t0, t1, t2, i3);
    bool same_row = i3 + 3u * RUN_THREADS < pc.dx_size3;
    Taps c0 = taps_of(pc.table3, i3);
    Taps c1 = taps_of(pc.table3, same_row ? i3 + RUN_THREADS : i3);
    Taps c2 = taps_of(pc.table3, same_row ? i3 + 2u * RUN_THREADS : i3);
    Taps c3 = taps_of(pc.table3, same_row ? i3 + 3u * RUN_THREADS : i3);
    [branch] if (same_row && t0.count == 1 && t1.count == 1 && FITS(t2) && FITS(c0) &&
                 FITS(c1) && FITS(c2) && FITS(c3)) {
        precise float p1 = PRODUCT(HW_MUL, PRODUCT(HW_MUL, 1.0f, weight(t0, 0)), weight(t1, 0));
        uint o01 = (t0.first * pc.dy_size1 + t1.first) * pc.dy_size2;
        LOAD_WEIGHTS(w0, c0)
        LOAD_WEIGHTS(w1, c1)
        LOAD_WEIGHTS(w2, c2)
        LOAD_WEIGHTS(w3, c3)
        precise float acc_0 = 0.0f;
        precise float acc_1 = 0.0f;
        precise float acc_2 = 0.0f;
        precise float acc_3 = 0.0f;
        uint low_0 = 0xFFFFFFFFu, low_1 = 0xFFFFFFFFu, low_2 = 0xFFFFFFFFu, low_3 = 0xFFFFFFFFu;
        ROWS(COLUMNS(acc_0, low_0, c0, w0, row_start + c0.first, HW_VALUE)
             COLUMNS(acc_1, low_1, c1, w1, row_start + c1.first, HW_VALUE)
             COLUMNS(acc_2, low_2, c2, w2, row_start + c2.first, HW_VALUE)
             COLUMNS(acc_3, low_3, c3, w3, row_start + c3.first, HW_VALUE))
        out_0 = checked(acc_0, low_0);
        out_1 = checked(acc_1, low_1);
        out_2 = checked(acc_2, low_2);
        out_3 = checked(acc_3, low_3);
    } else {
        uint pairs[4];
        [loop] for (uint h = 0; h < 2; ++h)
            gather_two(e + 2u * RUN_THREADS * h, RUN_THREADS, true, true, pairs[2 * h], pairs[2 * h + 1]);
        out_0 = pairs[0];
        out_1 = pairs[1];
        out_2 = pairs[2];
        out_3 = pairs[3];
    }
}
#endif

float exact_sum(uint e) { return positive_zero(gather_exact(e)); }

// ---- strips (the STRIPS variants) ----
// Where dX is one chunk (and, in fp16, rows have an even length): thread j makes STRIP_ROWS consecutive rows of a
// plane (the view's axes 0 and 1) in `unit` columns (f32: one; fp16: two, one word), the lanes of a warp
// consecutive units. The elements share the columns' taps and weights; each row has its own. A variant of its
// own: the strip code in the same kernel as the runs took registers from them (near 2x f32 9% slower).
#if STRIPS

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

#if MODE == LINEAR && DTYPE == DT_F16 && !ONE_TAP
// Linear fp16 strips whose rows' taps lie within SPAN_ROWS dY rows (2x: 10, 1.5x: 8) walk those rows once: each dY
// row is loaded once and its terms go to every strip row that taps it (at 2x each row feeds two), instead of each
// strip row loading its own (H100: linear 2x 988 -> 793 us, 1.5x 743 -> 625). Every sum still adds its terms in
// the CPU's order: its rows' taps in increasing dY row, each row's column taps in increasing dY column. (f32 strips
// were slower this way, 4-8% as a loop and 14-24% written out: one sum's four terms a branch, each a chain of
// dependent adds, where the fp16 strips have two sums a branch.)
//
// A column takes FEW_TAPS taps: a tap past its list's count has weight 0 and reads a column clamped into the row,
// a zero term that changes no sum, as in the fixed-tap steps above (TAPS). So the taps need no per-term test.
// (Strips are one chunk: the whole of dY is bound.)
#define SPAN_ROWS 12

// The dY rows [lo, hi) a strip's rows tap: an interval, as each list is contiguous and the lists are monotonic
// (an empty list's first is 0, which only widens it).
struct RowSpan {
    uint lo, hi;
};
RowSpan span_of(Strip s) {
    RowSpan r;
    r.lo = min(min(s.ra.first, s.rb.first), min(s.rc.first, s.rd.first));
    r.hi = max(max(s.ra.first + s.ra.count, s.rb.first + s.rb.count),
               max(s.rc.first + s.rc.count, s.rd.first + s.rd.count));
    return r;
}
bool takes_shared_rows(RowSpan r) { return r.hi > r.lo && r.hi - r.lo <= SPAN_ROWS; }

// The columns a column's FEW_TAPS taps read, clamped into the row.
void tap_columns(Taps t, out uint c[FEW_TAPS]) {
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) c[k] = min(t.first + k, pc.dy_size3 - 1u);
}

// dY row ROW's values at columns C into V (converted with HW_VALUE), their smallest magnitude key into LOW.
#define LOAD_ROW(V, LOW, ROW, C)                                                            \
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) {                                          \
        uint raw = load_raw(ROW + C[k]);                                                    \
        LOW = min(LOW, MAGNITUDE_KEY(raw));                                                 \
        V[k] = HW_VALUE(raw);                                                               \
    }
// ACC += (p2 * W[k]) * V[k] for each column tap k (written out: spirv-opt's unrolling drops NoContraction from
// the copies it makes).
#define ROW_TERMS(ACC, W, V)                                                                \
    ACC = ACC + (p2 * W[0]) * V[0];                                                         \
    ACC = ACC + (p2 * W[1]) * V[1];                                                         \
    ACC = ACC + (p2 * W[2]) * V[2];                                                         \
    ACC = ACC + (p2 * W[3]) * V[3];
// TERMS with p2, strip row R's weight product for dY row `o`, if R taps that row.
#define IF_ROW_TAPS(R, TERMS)                                                               \
    {                                                                                       \
        uint k2 = o - R.first;                                                              \
        [branch] if (k2 < R.count) {                                                        \
            precise float p2 = p1 * weight(R, k2);                                          \
            TERMS                                                                           \
        }                                                                                   \
    }

// The strip's sums s0 to s7 by walking its dY rows once (SPAN_ROWS above).
void strip_by_shared_rows(Strip s, Taps ta, Taps tb, RowSpan span, inout uint s0, inout uint s1, inout uint s2,
                          inout uint s3, inout uint s4, inout uint s5, inout uint s6, inout uint s7) {
    STRIP_PLANE(s)
    LOAD_WEIGHTS(wa, ta)
    LOAD_WEIGHTS(wb, tb)
    uint ca[FEW_TAPS], cb[FEW_TAPS];
    tap_columns(ta, ca);
    tap_columns(tb, cb);
    precise float acc_0 = 0.0f;
    precise float acc_1 = 0.0f;
    precise float acc_2 = 0.0f;
    precise float acc_3 = 0.0f;
    precise float acc_4 = 0.0f;
    precise float acc_5 = 0.0f;
    precise float acc_6 = 0.0f;
    precise float acc_7 = 0.0f;
    uint low_a = 0xFFFFFFFFu, low_b = 0xFFFFFFFFu;
    [loop] for (uint o = span.lo; o < span.hi; ++o) {
        uint row_start = (o01 + o) * pc.dy_size3 - pc.dy_origin;
        float va[FEW_TAPS], vb[FEW_TAPS];
        LOAD_ROW(va, low_a, row_start, ca)
        LOAD_ROW(vb, low_b, row_start, cb)
        IF_ROW_TAPS(s.ra, ROW_TERMS(acc_0, wa, va) ROW_TERMS(acc_1, wb, vb))
        IF_ROW_TAPS(s.rb, ROW_TERMS(acc_2, wa, va) ROW_TERMS(acc_3, wb, vb))
        IF_ROW_TAPS(s.rc, ROW_TERMS(acc_4, wa, va) ROW_TERMS(acc_5, wb, vb))
        IF_ROW_TAPS(s.rd, ROW_TERMS(acc_6, wa, va) ROW_TERMS(acc_7, wb, vb))
    }
    s0 = checked_hw(acc_0, low_a);
    s1 = checked_hw(acc_1, low_b);
    s2 = checked_hw(acc_2, low_a);
    s3 = checked_hw(acc_3, low_b);
    s4 = checked_hw(acc_4, low_a);
    s5 = checked_hw(acc_5, low_b);
    s6 = checked_hw(acc_6, low_a);
    s7 = checked_hw(acc_7, low_b);
}
#endif

#if DTYPE == DT_F32
// One row of a strip into OUT: its taps T2 (at most FEW_TAPS) of axis 2, the strip's p1, o01, t3 and w3.
#define STRIP_ROW(T2, OUT)                                                                  \
    {                                                                                       \
        precise float acc = 0.0f;                                                           \
        uint low = 0xFFFFFFFFu;                                                             \
        ROWS_OF(T2, COLUMNS(acc, low, t3, w3, row_start + t3.first, HW_VALUE))              \
        OUT = checked(acc, low);                                                            \
    }

#if TAPS == 4
// Four taps (TAPS 4): where the strip's four rows have the same weights (integer upscales such as 2x, away from
// the edges), the products (p1 * w2) * w3 of the first row serve all four: q[k2 * 4 + k3], written out
// (spirv-opt's unrolling drops NoContraction from the copies it makes); a step past a list's count has the product
// 0, as in TERM. (Not with 3 taps: at 1.5x the rows' weights differ in their last bits, and the test alone made
// linear 1.5x 6% slower, 420 -> 446 us on the H100.)
#define Q_STEP(k2, k3) q[k2 * 4 + k3] = (k2 < s.ra.count ? p1 * weight(s.ra, k2) : 0.0f) * w3[k3];
#define Q_ROW(k2) Q_STEP(k2, 0) Q_STEP(k2, 1) Q_STEP(k2, 2) Q_STEP(k2, 3)
#define Q_TERM(k2, k3)                                                                      \
    {                                                                                       \
        uint raw = load_raw(row_start + t3.first + min(k3, t3.count - 1u));                 \
        low = min(low, MAGNITUDE_KEY(raw));                                                 \
        acc = acc + q[k2 * 4 + k3] * HW_VALUE(raw);                                         \
    }
#define Q_ROW_TERMS(T2, k2)                                                                 \
    {                                                                                       \
        uint row_start = (o01 + T2.first + min(k2, T2.count - 1u)) * pc.dy_size3 - pc.dy_origin; \
        Q_TERM(k2, 0) Q_TERM(k2, 1) Q_TERM(k2, 2) Q_TERM(k2, 3)                             \
    }
// One row of a strip into OUT with the shared products q.
#define STRIP_ROW_Q(T2, OUT)                                                                \
    {                                                                                       \
        precise float acc = 0.0f;                                                           \
        uint low = 0xFFFFFFFFu;                                                             \
        Q_ROW_TERMS(T2, 0) Q_ROW_TERMS(T2, 1) Q_ROW_TERMS(T2, 2) Q_ROW_TERMS(T2, 3)         \
        OUT = checked(acc, low);                                                            \
    }

// Where moreover the rows' four taps each start two dY rows apart (2x away from the edges), the strip's rows tap
// dY rows ra.first + 2 r + k2 (r = 0-3, k2 = 0-3): ten rows, each loaded once for the two strip rows that tap it.
#define PAIRED_LOAD(n)                                                                      \
    {                                                                                       \
        uint row_start = (o01 + s.ra.first + n) * pc.dy_size3 - pc.dy_origin;               \
        [unroll] for (uint k3 = 0; k3 < 4; ++k3) {                                          \
            uint raw = load_raw(row_start + t3.first + min(k3, t3.count - 1u));             \
            low = min(low, MAGNITUDE_KEY(raw));                                             \
            v[n * 4 + k3] = HW_VALUE(raw);                                                  \
        }                                                                                   \
    }
#define PAIRED_TERMS(ACC, r, k2)                                                            \
    ACC = ACC + q[k2 * 4 + 0] * v[(2 * r + k2) * 4 + 0];                                    \
    ACC = ACC + q[k2 * 4 + 1] * v[(2 * r + k2) * 4 + 1];                                    \
    ACC = ACC + q[k2 * 4 + 2] * v[(2 * r + k2) * 4 + 2];                                    \
    ACC = ACC + q[k2 * 4 + 3] * v[(2 * r + k2) * 4 + 3];
#define PAIRED_ROW(ACC, r)                                                                  \
    PAIRED_TERMS(ACC, r, 0) PAIRED_TERMS(ACC, r, 1) PAIRED_TERMS(ACC, r, 2) PAIRED_TERMS(ACC, r, 3)
bool rows_paired(Strip s) {
    return s.ra.count == 4 && s.rb.first == s.ra.first + 2u && s.rc.first == s.ra.first + 4u &&
           s.rd.first == s.ra.first + 6u;
}

// Whether rows A and B have the same taps' weights (bits: all are positive and finite) and counts.
bool same_weights(Taps a, Taps b) {
    bool same = a.count == b.count;
    [unroll] for (uint k = 0; k < 4; ++k) same = same && (k >= a.count || tables[a.start + k] == tables[b.start + k]);
    return same;
}
#endif

// f32: one column, sums s0 to s3 (s4 to s7 unused).
void run_strip(uint j) {
    Strip s = strip_of(j, 1u, shift_of(2));
    Taps t3 = taps_of(pc.table3, s.col);
    if (ONE_TAP) t3.count = 1;
    uint s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    bool fast = strip_is_fast(s) && FITS(t3);
#if TAPS == 4
    [branch] if (fast && same_weights(s.ra, s.rb) && same_weights(s.ra, s.rc) && same_weights(s.ra, s.rd)) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(w3, t3)
        precise float q[16];
        Q_ROW(0) Q_ROW(1) Q_ROW(2) Q_ROW(3)
        [branch] if (rows_paired(s)) {
            float v[40];
            uint low = 0xFFFFFFFFu;
            PAIRED_LOAD(0) PAIRED_LOAD(1) PAIRED_LOAD(2) PAIRED_LOAD(3) PAIRED_LOAD(4)
            PAIRED_LOAD(5) PAIRED_LOAD(6) PAIRED_LOAD(7) PAIRED_LOAD(8) PAIRED_LOAD(9)
            precise float acc_a = 0.0f;
            precise float acc_b = 0.0f;
            precise float acc_c = 0.0f;
            precise float acc_d = 0.0f;
            PAIRED_ROW(acc_a, 0) PAIRED_ROW(acc_b, 1) PAIRED_ROW(acc_c, 2) PAIRED_ROW(acc_d, 3)
            s0 = checked(acc_a, low);
            s1 = checked(acc_b, low);
            s2 = checked(acc_c, low);
            s3 = checked(acc_d, low);
        } else {
            STRIP_ROW_Q(s.ra, s0) STRIP_ROW_Q(s.rb, s1) STRIP_ROW_Q(s.rc, s2) STRIP_ROW_Q(s.rd, s3)
        }
    } else
#endif
    [branch] if (fast) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(w3, t3)
        STRIP_ROW(s.ra, s0) STRIP_ROW(s.rb, s1) STRIP_ROW(s.rc, s2) STRIP_ROW(s.rd, s3)
    } else {
        [loop] for (uint k = 0; k < s.rows; ++k) {
            uint sum = gather(s.e0 + k * pc.dx_size3);
            SET_SUM(k, sum)
        }
    }
    uint exact = MASK_OF(NEEDS_EXACT) & ((1u << s.rows) - 1u);
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        uint sum = asuint(exact_sum(s.e0 + k * pc.dx_size3));
        SET_SUM(k, sum)
    }
    uint at = s.e0 - pc.dx_origin;
    dx_buf[at] = s0;
    if (s.rows > 1) dx_buf[at + pc.dx_size3] = s1;
    if (s.rows > 2) dx_buf[at + 2u * pc.dx_size3] = s2;
    if (s.rows > 3) dx_buf[at + 3u * pc.dx_size3] = s3;
}
#else
// One row of a strip into OUT_A and OUT_B (its two columns): as STRIP_ROW with the columns' ta, wa and tb, wb.
#define STRIP_ROW_PAIR(T2, OUT_A, OUT_B)                                                    \
    {                                                                                       \
        precise float acc_a = 0.0f;                                                         \
        precise float acc_b = 0.0f;                                                         \
        uint low_a = 0xFFFFFFFFu, low_b = 0xFFFFFFFFu;                                      \
        ROWS_OF(T2, COLUMNS(acc_a, low_a, ta, wa, row_start + ta.first, HW_VALUE)           \
                    COLUMNS(acc_b, low_b, tb, wb, row_start + tb.first, HW_VALUE))          \
        OUT_A = checked_hw(acc_a, low_a);                                                   \
        OUT_B = checked_hw(acc_b, low_b);                                                   \
    }

#if ONE_TAP
// One-tap fp16 strips: each sum is a single term, so a column or a row whose tap (dY index and weight) is its
// neighbour's has its neighbour's sum (linear 0.5x: both halves of every word, and rows in pairs): made once.
bool same_tap(Taps a, Taps b) {
#if MODE == LINEAR
    if (tables[a.start] != tables[b.start]) return false;
#endif
    return a.first == b.first;
}
// Row T2 of the strip into OUT_A and OUT_B (its two columns, the second a copy where same_columns).
#define ONE_TAP_ROW(T2, OUT_A, OUT_B)                                                       \
    {                                                                                       \
        precise float p2 = PRODUCT(HW_MUL, p1, weight(T2, 0));                              \
        uint row_start = (o01 + T2.first) * pc.dy_size3 - pc.dy_origin;                     \
        uint raw_a = load_raw(row_start + ta.first);                                        \
        precise float acc_a = 0.0f;                                                         \
        acc_a = acc_a + TERM(HW_MUL, p2, wa, HW_VALUE(raw_a));                              \
        OUT_A = checked_hw(acc_a, MAGNITUDE_KEY(raw_a));                                    \
        OUT_B = OUT_A;                                                                      \
        [branch] if (!same_columns) {                                                       \
            uint raw_b = load_raw(row_start + tb.first);                                    \
            precise float acc_b = 0.0f;                                                     \
            acc_b = acc_b + TERM(HW_MUL, p2, wb, HW_VALUE(raw_b));                          \
            OUT_B = checked_hw(acc_b, MAGNITUDE_KEY(raw_b));                                \
        }                                                                                   \
    }

// The strip's sums s0 to s7, each made once for a run of equal taps.
void one_tap_strip(Strip s, Taps ta, Taps tb, inout uint s0, inout uint s1, inout uint s2, inout uint s3,
                   inout uint s4, inout uint s5, inout uint s6, inout uint s7) {
    STRIP_PLANE(s)
    float wa = 1.0f, wb = 1.0f;
#if MODE == LINEAR
    wa = weight(ta, 0);
    wb = weight(tb, 0);
#endif
    bool same_columns = same_tap(ta, tb);
    ONE_TAP_ROW(s.ra, s0, s1)
    s2 = s0;
    s3 = s1;
    [branch] if (!same_tap(s.rb, s.ra)) ONE_TAP_ROW(s.rb, s2, s3)
    s4 = s2;
    s5 = s3;
    [branch] if (!same_tap(s.rc, s.rb)) ONE_TAP_ROW(s.rc, s4, s5)
    s6 = s4;
    s7 = s5;
    [branch] if (!same_tap(s.rd, s.rc)) ONE_TAP_ROW(s.rd, s6, s7)
}
#endif

// fp16: two columns (one word of each row): sums s0 to s7, row k's in s(2k) and s(2k + 1). The words are stored
// first, then each sum that needs it is made again and its half patched in place. Redoing into s0 to s7 in the
// loop (SET_SUM) and storing after it gave 0 for every redone sum on the H100 (driver 580.159, seen in nearest;
// lavapipe right, and the SPIR-V's loop reads right): tests/gpu/resample_specials_test.cpp.
void run_strip(uint j) {
    uint shift = shift_of(2);
    Strip s = strip_of(j, 2u, shift == NO_SHIFT ? NO_SHIFT : shift - 1u);
    Taps ta = taps_of(pc.table3, s.col), tb = taps_of(pc.table3, s.col + 1u);
    if (ONE_TAP) ta.count = tb.count = 1;
    uint s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    bool fast_path = strip_is_fast(s) && FITS(ta) && FITS(tb);
#if MODE == LINEAR && !ONE_TAP
    RowSpan span = span_of(s);
    [branch] if (fast_path && takes_shared_rows(span)) {
        strip_by_shared_rows(s, ta, tb, span, s0, s1, s2, s3, s4, s5, s6, s7);
    } else
#endif
#if ONE_TAP
    [branch] if (fast_path) {
        one_tap_strip(s, ta, tb, s0, s1, s2, s3, s4, s5, s6, s7);
    } else
#endif
    [branch] if (fast_path) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(wa, ta)
        LOAD_WEIGHTS(wb, tb)
        STRIP_ROW_PAIR(s.ra, s0, s1) STRIP_ROW_PAIR(s.rb, s2, s3)
        STRIP_ROW_PAIR(s.rc, s4, s5) STRIP_ROW_PAIR(s.rd, s6, s7)
    } else {
        [loop] for (uint k = 0; k < 2u * s.rows; ++k) {
            uint sum = gather(s.e0 + (k >> 1) * pc.dx_size3 + (k & 1u));
            SET_SUM(k, sum)
        }
    }
    uint valid = (1u << (2u * s.rows)) - 1u;
    uint fast = MASK_OF(NEEDS_FAST) & valid, exact = MASK_OF(NEEDS_EXACT) & valid;
    uint at = (s.e0 - pc.dx_origin) / 2u, step = pc.dx_size3 / 2u;
    dx_buf[at] = float_to_half_bits_fast(s0) | (float_to_half_bits_fast(s1) << 16);
    if (s.rows > 1) dx_buf[at + step] = float_to_half_bits_fast(s2) | (float_to_half_bits_fast(s3) << 16);
    if (s.rows > 2) dx_buf[at + 2u * step] = float_to_half_bits_fast(s4) | (float_to_half_bits_fast(s5) << 16);
    if (s.rows > 3) dx_buf[at + 3u * step] = float_to_half_bits_fast(s6) | (float_to_half_bits_fast(s7) << 16);
    [loop] while ((fast | exact) != 0) {
        uint k = firstbitlow(fast | exact);
        uint e = s.e0 + (k >> 1) * pc.dx_size3 + (k & 1u);
        uint sum = NEEDS_EXACT;
        [branch] if ((fast & (1u << k)) != 0) sum = gather(e);
        fast &= ~(1u << k);
        exact &= ~(1u << k);
        [branch] if (sum == NEEDS_EXACT) sum = asuint(exact_sum(e));
        uint word = at + (k >> 1) * step, low_bit = (k & 1u) * 16u;  // the thread's own word: no race
        dx_buf[word] = (dx_buf[word] & ~(0xFFFFu << low_bit)) | (float_to_half_bits_fast(sum) << low_bit);
    }
}
#endif
#endif  // STRIPS

void run(uint j) {
#if STRIPS
    run_strip(j);
#elif DTYPE == DT_F16
    // One 32-bit word of dX: two neighbours.
    uint word = pc.elem_begin / 2u + j;
    uint e = 2u * word;
    uint sums[2];
    gather_two(e, 1u, e >= pc.elem_begin, e + 1u < pc.elem_end, sums[0], sums[1]);
    uint fast = (sums[0] == NEEDS_FAST ? 1u : 0u) | (sums[1] == NEEDS_FAST ? 2u : 0u);
    uint exact = (sums[0] == NEEDS_EXACT ? 1u : 0u) | (sums[1] == NEEDS_EXACT ? 2u : 0u);
    [loop] while ((fast | exact) != 0) {
        uint h = firstbitlow(fast | exact);
        uint sum = (fast & (1u << h)) != 0 ? gather(e + h) : NEEDS_EXACT;
        fast &= ~(1u << h);
        exact &= ~(1u << h);
        if (sum == NEEDS_EXACT) sum = asuint(exact_sum(e + h));
        sums[0] = h == 0 ? sum : sums[0];
        sums[1] = h == 1 ? sum : sums[1];
    }
    uint old = 0;
    bool partial = e < pc.elem_begin || (e + 2u > pc.elem_end && pc.elem_end < pc.total);
    if (partial) old = dx_buf[word - pc.dx_origin / 2u];  // the half another chunk owns is kept
    uint result = 0;
    [unroll] for (uint h = 0; h < 2; ++h) {
        uint half_bits = (old >> (16u * h)) & 0xFFFFu;
        if (e + h >= pc.elem_begin && e + h < pc.elem_end) half_bits = float_to_half_bits_fast(sums[h]);
        else if (e + h >= pc.total) half_bits = 0;  // padding
        result |= half_bits << (16u * h);
    }
    dx_buf[word - pc.dx_origin / 2u] = result;
#else
    // Elements e + RUN_THREADS * h, h < 4, of a run of RUN_ELEMENTS: the lanes of a warp stay on consecutive
    // elements.
    uint e = pc.elem_begin + (j >> RUN_THREADS_LOG2) * RUN_ELEMENTS + (j & (RUN_THREADS - 1u));
    uint exact = 0;  // a bit per element that needs the exact sum
    if (e + 3u * RUN_THREADS < pc.elem_end) {
        uint sums[4];
        gather_four(e, sums[0], sums[1], sums[2], sums[3]);
        [unroll] for (uint h = 0; h < 4; ++h) {
            dx_buf[e + RUN_THREADS * h - pc.dx_origin] = sums[h];
            exact |= sums[h] == NEEDS_EXACT ? 1u << h : 0u;
        }
    } else {
        [loop] for (uint h = 0; e + RUN_THREADS * h < pc.elem_end; ++h) {
            uint sum = gather(e + RUN_THREADS * h);
            dx_buf[e + RUN_THREADS * h - pc.dx_origin] = sum;
            exact |= sum == NEEDS_EXACT ? 1u << h : 0u;
        }
    }
    [loop] while (exact != 0) {
        uint h = firstbitlow(exact);
        exact &= exact - 1u;
        dx_buf[e + RUN_THREADS * h - pc.dx_origin] = asuint(exact_sum(e + RUN_THREADS * h));
    }
#endif
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint j = pc.base + id.x;
    if (j < pc.count) run(j);
}
