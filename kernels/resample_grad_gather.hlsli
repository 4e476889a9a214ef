// Resample grad (docs/OPERATORS.md section 5) as a gather over the host's per-axis tap tables: every dX element
// sums the dY elements that sample it, in the CPU reference's exact order (src/cpu/resample_grad.cpp):
//
//     acc = +0.0f;  for t0 in taps_0(i0) ... for t3 in taps_3(i3):  acc += (((w0 * w1) * w2) * w3) * dY[o]
//
// in float32, `precise` (no fused multiply-add). Variants: MODE = NEAREST (every weight is 1: acc += dY[o]) or
// LINEAR; DTYPE = f32 or f16; STRIPS = 0 or 1, the thread mapping (interface/resample_grad.h), defined by the
// kernel file that includes this common part: resample_grad.hlsl (runs) or resample_grad_strips_f32.hlsl and
// resample_grad_strips_f16.hlsl (strips, over resample_grad_strips.hlsli). A thread makes
// several dX elements, which share taps and their products (the per-element set-up was what limited speed):
// runs (STRIPS 0): fp16 two neighbours (one 32-bit word of dX), f32 four elements RUN_THREADS apart (so the
// lanes of a warp load and store consecutive elements), sharing their row's taps; strips (STRIPS 1, where dX is
// one chunk): STRIP_ROWS rows of one f32 column or fp16 word, sharing the column's taps. Strips variants that know
// more of the plan: ONE_TAP (one tap at every index of every axis) and, linear f32, TAPS = 2 to MAX_FIXED_TAPS
// (no list of axes 2 and 3 longer: the steps run without testing a list's length).
//
// The host (src/gpu/ops/resample_grad_dispatch.cpp) views dX as 4 axes (leading axes of size 1, adjacent
// identity axes merged, e.g. N and C into one). An identity axis (dX index i takes dY index i, weight 1) has
// no table; a table axis has the pairs (first dY index, tap start) of interface/resample_grad.h's table layout
// (TABLE_*): the taps of i are the dY indices first, first + 1, ... (contiguous, as the sampling coordinate is
// monotonic).
//
// Denormals: the GPU may flush them (lavapipe and NVIDIA promise nothing by default), the CPU does not. The
// host proves that with every |dY| >= a bound (or 0, inf, NaN) no product or partial sum can be denormal:
// weights and their products are normal, each term is then a multiple of 2^-124, and so is every sum. A dX
// element that meets a dY below the bound is recomputed with integer arithmetic (exact_float.hlsli), which
// rounds exactly like IEEE float32 with denormals. A NaN result is recomputed the same way, which gives it the
// bits x86-64 gives it. The paths for several elements convert halves in hardware, which may flush subnormal
// ones: an element that reads one is made again with them converted by hand (NEEDS_FAST below).
#ifndef DMLGRAD_RESAMPLE_GRAD_GATHER_HLSLI
#define DMLGRAD_RESAMPLE_GRAD_GATHER_HLSLI
#include "common.hlsli"
#include "exact_float.hlsli"
#include "resample_grad_common.hlsli"
#include "interface/resample_grad.h"

#ifndef MODE
#error "the build passes -DMODE=NEAREST or LINEAR"
#endif

DMLGRAD_PARAMS(Params);

#ifndef DY_UINT4
#define DY_UINT4 0  // dY's binding element: a 32-bit word, or (1, the rows) a uint4
#endif
#if DY_UINT4
DMLGRAD_SRV(uint4, dy_buf, 0);
#else
DMLGRAD_SRV(uint, dy_buf, 0);
#endif
#ifndef DX_WORDS
#define DX_WORDS uint  // dX's binding element: a 32-bit word, or (the walk) four of them
#endif
DMLGRAD_UAV(DX_WORDS, dx_buf, 1);
DMLGRAD_SRV(uint, tables, 2);

// ---- dY values and the tap tables ----

// dY word w.
#if DY_UINT4
uint dy_word(uint w) {
    uint4 v = dy_buf[w >> 2];
    uint c = w & 3u;
    return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w));
}
#else
#define dy_word(w) dy_buf[w]
#endif

// dY values travel as raw bits (a half in the low 16 bits for fp16) until they are used, so the watch for
// tiny values sees them as stored. Halves are converted three ways: by the hardware alone (HW_VALUE: the paths
// for several elements; a device may flush subnormal halves, so an element that reads one is made again),
// by the hardware for normal halves only (FAST_VALUE, resample_grad_common.hlsli), or exactly, NaN payloads
// kept (EXACT_VALUE).
#if DTYPE == DT_F16
uint load_raw(uint j) { return (dy_word(j >> 1) >> ((j & 1u) * 16u)) & 0xFFFFu; }
#define HW_VALUE(raw) f16tof32(raw)
#define FAST_VALUE(raw) fast_half_to_float(raw)
#define EXACT_VALUE(raw) asfloat(half_to_float_bits(raw))
#define MAGNITUDE_KEY(raw) (((raw) << 17) - 1u)  // sign dropped, both zeros to the top
#define NORMAL_HALF_KEY ((0x400u << 17) - 1u)    // keys below it: subnormal halves
#else
uint load_raw(uint j) { return dy_word(j); }
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
        t.start = TABLE_ONE;
        t.count = 1;
    } else {
        uint at = table + TABLE_PAIR_WORDS * i;
        t.first = tables[at];  // the first word of a pair
        t.start = tables[at + TABLE_START];
        t.count = tables[at + TABLE_NEXT_START] - t.start;
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
#error "the kernel file defines STRIPS: 0 (runs of elements) or 1 (strips of rows)"
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
// Direct3D 12: vkd3d 1.17 writes no `precise` into DXBC and vkd3d 1.2's translation adds no NoContraction, so a
// driver is free to fuse a product into the add after it and to reassociate (NVIDIA did, even with each product
// multiplied by an opaque 1.0f: its float32 sums were those of acc = fma(p2 * w3, v, acc), 1 to a few ulps off the
// CPU's; kernels/README.md). ROUNDED passes each product and each partial sum through an integer or with g_zero,
// a 0 the compiler cannot see (the tables' TABLE_ONE word, 1.0f, xor its own bits, read by set_opaque_zero() at the
// start of each main()): no float rewrite crosses an integer operation, so every value is the float32 the source
// rounds it to. An or, not an xor: a sum's first term, 0 + t folded to t, is ROUNDED twice, and (t ^ z) ^ z is t
// to any compiler (NVIDIA's then fused that product into the next add), where (t | z) | z is still t | z. On Vulkan
// the SPIR-V keeps NoContraction and ROUNDED is nothing.
#if DMLGRAD_D3D12
static uint g_zero;
#define ROUNDED(x) asfloat(asuint(x) | g_zero)
#else
#define ROUNDED(x) (x)
#endif
void set_opaque_zero() {
#if DMLGRAD_D3D12
    g_zero = tables[TABLE_ONE] ^ asuint(1.0f);
#endif
}
#define HW_MUL(a, b) ROUNDED((a) * (b))

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
        ACC = ROUNDED(ACC + TERM(HW_MUL, p2, W3[k3], VALUE(raw)));                        \
    }
#define FITS(T) (T.count - 1u < TAPS)
#else
#define COLUMN_STEP(ACC, LOW, T3, W3, ROW, k3, VALUE)                                     \
    if (k3 < T3.count) {                                                                  \
        uint raw = load_raw(ROW + k3);                                                    \
        LOW = min(LOW, MAGNITUDE_KEY(raw));                                               \
        ACC = ROUNDED(ACC + TERM(HW_MUL, p2, W3[k3], VALUE(raw)));                        \
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
        acc = ROUNDED(acc + TERM(HW_MUL, p2, weight(t3, k3), FAST_VALUE(raw)));           \
    }

// The fast paths return a sum's bits, or NEEDS_EXACT where a dY value the hardware might flush was read or the
// sum is a NaN (whose bits the hardware chose): main() then recomputes that element exactly, from one call site
// (the exact code is large; one inlined copy keeps the kernel small). The paths for several elements return
// NEEDS_FAST where a subnormal half met HW_VALUE: main() makes it again with gather(). NaN bits, which no checked
// sum has (a NaN sum becomes NEEDS_EXACT); quiet NaNs, as a device may quiet a signalling one that its code moves
// as a float (NVIDIA through vkd3d turned 0x7F800001 into 0x7FC00001, so the element was never made again).
#define NEEDS_EXACT 0x7FC00001u
#define NEEDS_FAST 0x7FC00002u
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

#endif  // DMLGRAD_RESAMPLE_GRAD_GATHER_HLSLI
