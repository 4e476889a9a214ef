// Resample grad, nearest fp16, walks (interface/resample_grad.h): thread j makes the WALK_ELEMENTS consecutive dX
// elements from WALK_ELEMENTS * j (whole 32-bit words, one uint4 store), for rows of any length, where dX is one
// chunk. The runs make one word a thread and split each element over the view's axes with divisions and two tap
// lookups per axis; a walk splits its first element once and steps to the next (a carry into the row's outer
// coordinates at a row's end, which then looks up that row's taps once), so each element costs its axis-3 taps
// and its loads. That is what an odd row length needs (the fp16 strips make whole words of a row) and what limited
// the runs on rows whose elements receive zero, one or two dY elements (PyTorch was faster there; the runs reached
// 6-15% of the bound on the H100, 2026-11-27).
//
// Every weight is 1: an element sums its dY halves from +0 in the CPU's order (axes 0-2, then axis 3), each
// converted with FAST_VALUE (subnormal halves by hand, as a device may flush them). Each term is a multiple of
// 2^-24 below 2^16 and so is every sum of them: the hardware adds give the CPU's bits, except a NaN's (made again
// on bits, exact_float.hlsli) and -0 (positive_zero).
#define STRIPS 0
#define DX_WORDS uint4  // a thread's WALK_ELEMENTS halves, one store
#include "resample_grad_gather.hlsli"
#if MODE != NEAREST || DTYPE != DT_F16
#error "the walk is nearest fp16: the build passes -DMODE=NEAREST -DDTYPE=DT_F16"
#endif

// The taps of a dX row (coordinates i0, i1, i2 of the view), and where its axes 0 and 1 have at most one tap
// (`several` false) the dY rows it sums: `count` rows from dY element `start`, dy_size3 apart (none where axis 0 or
// 1 has no tap).
struct Row {
    Taps t0, t1, t2;
    uint start;
    uint count;
    bool several;
};

Row row_at(uint i0, uint i1, uint i2) {
    Row r;
    r.t0 = taps_of(pc.table0, i0);
    r.t1 = taps_of(pc.table1, i1);
    r.t2 = taps_of(pc.table2, i2);
    r.several = r.t0.count > 1 || r.t1.count > 1;
    r.count = r.t0.count == 0 || r.t1.count == 0 ? 0 : r.t2.count;
    r.start = ((r.t0.first * pc.dy_size1 + r.t1.first) * pc.dy_size2 + r.t2.first) * pc.dy_size3;
    return r;
}

// The sum of column i3 of row r as float bits, or NEEDS_EXACT where it is a NaN.
uint walk_sum(Row r, uint i3) {
    Taps t3 = taps_of(pc.table3, i3);
    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    [branch] if (!r.several) {
        [loop] for (uint k2 = 0; k2 < r.count; ++k2) {
            uint row = r.start + k2 * pc.dy_size3 + t3.first;
            [loop] for (uint k3 = 0; k3 < t3.count; ++k3) acc = ROUNDED(acc + FAST_VALUE(load_raw(row + k3)));
        }
    } else {  // the general nest, over the row's taps
        Taps t0 = r.t0, t1 = r.t1, t2 = r.t2;
        NEST(HW_MUL, INNER_ANY)
    }
    return checked(acc, lowest);
}

// Half k (of WALK_ELEMENTS) of the words W set to the low 16 bits of h (its bits were 0).
uint4 with_half(uint4 w, uint k, uint h) {
    uint shifted = h << ((k & 1u) * 16u);
    uint q = k >> 1;
    return w | uint4(q == 0 ? shifted : 0u, q == 1 ? shifted : 0u, q == 2 ? shifted : 0u, q == 3 ? shifted : 0u);
}

void walk(uint j) {
    uint e0 = WALK_ELEMENTS * j;
    uint r3 = div_by(e0, pc.dx_size3, shift_of(2));
    uint i3 = e0 - r3 * pc.dx_size3;
    uint r2 = div_by(r3, pc.dx_size2, shift_of(1));
    uint i2 = r3 - r2 * pc.dx_size2;
    uint i0 = div_by(r2, pc.dx_size1, shift_of(0));
    uint i1 = r2 - i0 * pc.dx_size1;
    Row r = row_at(i0, i1, i2);
    uint4 words = uint4(0, 0, 0, 0);  // padding past the tensor's end stays 0
    uint exact = 0;                   // a bit per element whose sum is a NaN, made again on bits below
    uint n = min(WALK_ELEMENTS, pc.total - e0);
    [loop] for (uint k = 0; k < n; ++k) {
        uint sum = walk_sum(r, i3);
        if (sum == NEEDS_EXACT) exact |= 1u << k;
        else words = with_half(words, k, float_to_half_bits_fast(sum));
        i3 += 1u;
        [branch] if (i3 == pc.dx_size3 && k + 1u < n) {  // the next row
            i3 = 0;
            i2 += 1u;
            if (i2 == pc.dx_size2) {
                i2 = 0;
                i1 += 1u;
                if (i1 == pc.dx_size1) {
                    i1 = 0;
                    i0 += 1u;
                }
            }
            r = row_at(i0, i1, i2);
        }
    }
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        words = with_half(words, k, float_to_half_bits_fast(asuint(positive_zero(gather_exact(e0 + k)))));
    }
    dx_buf[j] = words;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) walk(j);
}
