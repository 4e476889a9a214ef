// Resample grad, runs (interface/resample_grad.h), the kernel for any plan: fp16 a thread makes one 32-bit word of
// dX (two neighbours), f32 four elements RUN_THREADS apart, sharing their row's taps. Variants: MODE and DTYPE, as
// resample_grad_gather.hlsli says, and ONE_ELEMENT (linear float32: a thread an element, the host's fits_elements).
#define STRIPS 0
#ifndef ONE_ELEMENT
#define ONE_ELEMENT 0
#endif
#include "resample_grad_gather.hlsli"


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

void run(uint j) {
#if ONE_ELEMENT
    // Element j alone (linear float32 plans that the other kernels make element by element in series, in dX too
    // small to fill the GPU with their threads: the time is a thread's chain of taps, a quarter as long here).
    uint e = pc.elem_begin + j;
    uint sum = gather(e);
    if (sum == NEEDS_EXACT) sum = asuint(exact_sum(e));
    dx_buf[e - pc.dx_origin] = sum;
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
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) run(j);
}
