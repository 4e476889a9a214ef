// Resample grad, planes (interface/resample_grad.h's PLANE_*): where the view's resampled axes (from its first axis
// with a table on; the axes before it are identities) make small planes (the host's fits_planes: nearest tiny planes
// or planes of short rows; linear planes of rows that read several dY rows) and dX is one chunk. dX plane p is dY
// plane p resampled, and element k of a plane sums the same dY offsets in every plane: the host lists them once,
// nearest as runs of consecutive dY elements, linear as terms (a dY offset and its weight product), in the CPU's
// order. Nearest: a thread makes one dX element (float32) or one word of two (fp16), the lanes of a warp consecutive
// elements, so a warp reads a contiguous stretch of dY; the strips made such plans (20261227/28, float32 dX
// 105433x18x1x1 from 2x2 planes) a row of one element at a time, with their per-row taps and a strip's set-up: 28% of
// the bound on the H100. Linear: a thread makes a uint4 of dX (planes of a uint4 less one and more: its elements lie
// in two planes at most), every element's list loaded first, then a step a term of all of them together; the fp16
// walk made such plans a uint4 at a time with the taps of its rows and loops over their dY rows (20261232/50, rows of
// 51 halves in planes of 9 rows: 7% of the bound on the H200).
//
// An element sums its terms from +0 in the CPU's order, each value converted with FAST_VALUE (fp16: subnormal halves
// by hand). Nearest fp16: every sum is a multiple of 2^-24 below 2^16 and the hardware adds give the CPU's bits,
// except a NaN's (made again on bits, exact_float.hlsli) and -0 (positive_zero). Float32 and linear: an element that
// reads a value below tiny_limit (a sum of such terms could be denormal, which the GPU may flush) or sums to a NaN is
// made again on bits. Linear: a term is w * v, w the host's weight product, the float32 product the walk makes
// ((p2 * w3) with p2 = ((w0 * w1) * w2), each rounded). Variants: MODE NEAREST and LINEAR, DTYPE f32 and f16.
// (A nearest run's aligned quads of floats loaded as uint4s were slower: H100, round 1 of nearest32, 20261227/28
// 15.5 us against 14.5.)
#define STRIPS 0
#include "common.hlsli"
#include "resample_grad_common.hlsli"  // the modes, for dX's binding element
#if MODE == LINEAR
#define DX_WORDS uint4  // a thread's elements, one store
#endif
#include "resample_grad_gather.hlsli"

#if MODE == NEAREST
// Value `at + t` of a run ending at `end` into the sum, in order, and its magnitude key into lowest; a value past the
// run's end (its load that of `at` again) adds nothing.
#define PLANE_VALUE(t)                                                                      \
    {                                                                                       \
        bool in_run = at + t < end;                                                         \
        uint raw = load_raw(in_run ? at + t : at);                                          \
        lowest = in_run ? min(lowest, MAGNITUDE_KEY(raw)) : lowest;                         \
        acc = in_run ? ROUNDED(acc + FAST_VALUE(raw)) : acc;                                \
    }

// Element k of plane `plane`: its sum (its smallest magnitude key in lowest). A run's values four a step, their loads
// before their adds (a value a step waited on each load in turn). Written out, not [unroll]ed (vkd3d 1.17's
// unrolling crashes around folded branches: kernels/README.md).
float plane_sum(uint plane, uint k, inout uint lowest) {
    precise float acc = 0.0f;
    uint base = plane * tables[pc.columns + PLANE_DY];
    uint first_run = tables[pc.columns + PLANE_RUN_STARTS + k];
    uint end_run = tables[pc.columns + PLANE_RUN_STARTS + k + 1u];
    [loop] for (uint r = first_run; r < end_run; ++r) {
        uint run = tables[r];
        uint at = base + (run & PLANE_OFFSET_MASK);
        uint end = at + (run >> PLANE_LENGTH_SHIFT);
        [loop] for (; at < end; at += 4u) {
            PLANE_VALUE(0u) PLANE_VALUE(1u) PLANE_VALUE(2u) PLANE_VALUE(3u)
        }
    }
    return acc;
}

// Element e (element k of plane `plane`)'s bits (fp16: a half in the low 16 bits), made again on bits where the fast
// sum cannot be trusted.
uint element_bits(uint e, uint plane, uint k) {
    uint lowest = 0xFFFFFFFFu;
    float acc = plane_sum(plane, k, lowest);
#if DTYPE == DT_F16
    uint sum = is_nan(asuint(acc)) ? NEEDS_EXACT : asuint(positive_zero(acc));  // tiny_limit is 0 for nearest fp16
#else
    uint sum = checked(acc, lowest);
#endif
    [branch] if (sum == NEEDS_EXACT) sum = asuint(positive_zero(gather_exact(e)));
#if DTYPE == DT_F16
    sum = float_to_half_bits_fast(sum);
#endif
    return sum;
}

#else  // LINEAR
#if DTYPE == DT_F16
#define ELEMENTS 8
#else
#define ELEMENTS 4
#endif
// Element k of the thread: its terms [at##k, end##k) (none past dX's end), its plane's first dY element.
#define SLOT(k)                                                                             \
    uint at##k, end##k, base##k;                                                            \
    {                                                                                       \
        uint kk = k0 + k;                                                                   \
        bool next = kk >= dx_plane;                                                         \
        uint kp = next ? kk - dx_plane : kk;                                                \
        base##k = (next ? plane + 1u : plane) * dy_plane;                                   \
        at##k = tables[lists + kp];                                                         \
        end##k = e0 + k < pc.total ? tables[lists + kp + 1u] : at##k;                       \
        most = max(most, end##k - at##k);                                                   \
    }                                                                                       \
    precise float acc##k = 0.0f;                                                            \
    uint low##k = 0xFFFFFFFFu;
// Step s (a term's words) of element k: its term, if it has one, into its sum.
#define STEP(k)                                                                             \
    {                                                                                       \
        bool has = at##k + s < end##k;                                                      \
        uint term = has ? at##k + s : pc.columns;                                           \
        uint raw = load_raw(has ? base##k + tables[term] : 0u);                             \
        float w = asfloat(tables[term + 1u]);                                               \
        low##k = has ? min(low##k, MAGNITUDE_KEY(raw)) : low##k;                            \
        acc##k = has ? ROUNDED(acc##k + HW_MUL(w, FAST_VALUE(raw))) : acc##k;               \
    }
#define DONE(k) ELEMENT_DONE(k, checked)

#include "resample_element_bits.hlsli"
#include "resample_uint4_element.hlsli"

// Thread j's uint4 of dX: every element's list first, then a step a term of all of them together (planes of
// ELEMENTS - 1 elements and more: a thread's elements lie in two planes at most).
void make_uint4(uint j) {
    uint e0 = ELEMENTS * j;
    uint dx_plane = tables[pc.columns + PLANE_DX];
    uint dy_plane = tables[pc.columns + PLANE_DY];
    uint lists = pc.columns + PLANE_RUN_STARTS;
    uint plane = e0 / dx_plane;
    uint k0 = e0 - plane * dx_plane;
    uint most = 0;
    SLOT(0) SLOT(1) SLOT(2) SLOT(3)
#if ELEMENTS == 8
    SLOT(4) SLOT(5) SLOT(6) SLOT(7)
#endif
    [loop] for (uint s = 0; s < most; s += PLANE_TERM_WORDS) {
        STEP(0) STEP(1) STEP(2) STEP(3)
#if ELEMENTS == 8
        STEP(4) STEP(5) STEP(6) STEP(7)
#endif
    }
    uint exact = 0;
    DONE(0) DONE(1) DONE(2) DONE(3)
#if ELEMENTS == 8
    DONE(4) DONE(5) DONE(6) DONE(7)
    dx_buf[j] = uint4(bits0 | bits1 << 16, bits2 | bits3 << 16, bits4 | bits5 << 16, bits6 | bits7 << 16);
#else
    dx_buf[j] = uint4(bits0, bits1, bits2, bits3);
#endif
    // Stored first, then each sum made again patched in place (as the walk: redoing into registers in a loop gave 0
    // for every redone sum in the fp16 strips on the H100).
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        dx_buf[j] = with_element(dx_buf[j], k, asuint(positive_zero(gather_exact(e0 + k))));
    }
}
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j >= pc.count) return;
#if MODE == LINEAR
    make_uint4(j);
#else
#if DTYPE == DT_F16
    uint e = 2u * j;
#else
    uint e = j;
#endif
    uint dx_plane = tables[pc.columns + PLANE_DX];
    uint plane = e / dx_plane;
    uint k = e - plane * dx_plane;
#if DTYPE == DT_F16
    // The word's second element: the next of the plane, or the next plane's first (one division a thread).
    bool next_plane = k + 1u == dx_plane;
    uint high = e + 1u < pc.total ? element_bits(e + 1u, next_plane ? plane + 1u : plane, next_plane ? 0u : k + 1u)
                                  : 0u;  // 0 for padding past dX's end
    dx_buf[j] = element_bits(e, plane, k) | (high << 16);
#else
    dx_buf[j] = element_bits(e, plane, k);
#endif
#endif
}
