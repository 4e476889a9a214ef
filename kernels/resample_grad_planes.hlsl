// Resample grad, planes (interface/resample_grad.h's PLANE_*): where the view's resampled axes (from its first axis
// with a table on; the axes before it are identities) make small planes (the host's fits_planes: nearest tiny planes
// or planes of short rows; linear planes of few terms an element) and dX is one chunk. dX plane p is dY plane p
// resampled, and element k of a plane sums the same dY offsets in every plane: the host lists them once, nearest as
// runs of consecutive dY elements, linear as terms (a dY offset and its weight product), in the CPU's order. A thread
// makes one dX element (float32) or one word of two (fp16), the lanes of a warp consecutive elements, so a warp reads
// a contiguous stretch of dY. The strips made such nearest plans (20261227/28, float32 dX 105433x18x1x1 from 2x2
// planes) a row of one element at a time, with their per-row taps and a strip's set-up: 28% of the bound on the
// H100; the linear fp16 walk made planes of 9 short rows a uint4 at a time, each thread with the taps of its rows and
// loops over their dY rows (20261232/50: 7% of the bound on the H200).
//
// An element sums its terms from +0 in the CPU's order, each value converted with FAST_VALUE (fp16: subnormal halves
// by hand). Nearest fp16: every sum is a multiple of 2^-24 below 2^16 and the hardware adds give the CPU's bits,
// except a NaN's (made again on bits, exact_float.hlsli) and -0 (positive_zero). Float32 and linear: an element that
// reads a value below tiny_limit (a sum of such terms could be denormal, which the GPU may flush) or sums to a NaN is
// made again on bits. Linear: a term is w * v, w the host's weight product, which is the float32 product the walk
// makes ((p2 * w3) with p2 = ((w0 * w1) * w2), each rounded). Variants: MODE NEAREST and LINEAR, DTYPE f32 and f16.
// (A run's aligned quads of floats loaded as uint4s were slower: H100, round 1 of nearest32, 20261227/28 15.5 us
// against 14.5.)
#define STRIPS 0
#include "resample_grad_gather.hlsli"

#if MODE == LINEAR
// Term n of the step from word `at` of a list ending at `end` into the sum, in order, and its value's magnitude key
// into lowest; a term past the list's end (its loads those of `at` again) adds nothing.
#define PLANE_TERM(n)                                                                       \
    {                                                                                       \
        uint word = at + n * PLANE_TERM_WORDS;                                              \
        bool in_list = word < end;                                                          \
        uint term = in_list ? word : at;                                                    \
        uint raw = load_raw(base + tables[term]);                                           \
        float w = asfloat(tables[term + 1u]);                                               \
        lowest = in_list ? min(lowest, MAGNITUDE_KEY(raw)) : lowest;                        \
        acc = in_list ? ROUNDED(acc + HW_MUL(w, FAST_VALUE(raw))) : acc;                    \
    }

// Element k of plane `plane`: its sum (its smallest magnitude key in lowest). Two terms a step, their loads before
// their adds.
float plane_sum(uint plane, uint k, inout uint lowest) {
    precise float acc = 0.0f;
    uint base = plane * tables[pc.columns + PLANE_DY];
    uint at = tables[pc.columns + PLANE_RUN_STARTS + k];
    uint end = tables[pc.columns + PLANE_RUN_STARTS + k + 1u];
    [loop] for (; at < end; at += 2u * PLANE_TERM_WORDS) {
        PLANE_TERM(0u) PLANE_TERM(1u)
    }
    return acc;
}
#else
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
#endif

// Element e (element k of plane `plane`)'s bits (fp16: a half in the low 16 bits), made again on bits where the fast
// sum cannot be trusted.
uint element_bits(uint e, uint plane, uint k) {
    uint lowest = 0xFFFFFFFFu;
    float acc = plane_sum(plane, k, lowest);
#if DTYPE == DT_F16 && MODE == NEAREST
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

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j >= pc.count) return;
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
}
