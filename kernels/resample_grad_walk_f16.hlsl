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

// A sum's bits, or NEEDS_EXACT where it is a NaN (nearest fp16 reads no dY value the kernel converts inexactly:
// tiny_limit is 0).
uint sum_bits(float acc) { return is_nan(asuint(acc)) ? NEEDS_EXACT : asuint(positive_zero(acc)); }

// The sum of column i3 of row r.
uint walk_sum(Row r, uint i3) {
    Taps t3 = taps_of(pc.table3, i3);
    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    [branch] if (!r.several) {
        [loop] for (uint k2 = 0; k2 < r.count; ++k2) {
            uint row = r.start + k2 * pc.dy_size3 + t3.first;
            [loop] for (uint k3 = 0; k3 < t3.count; ++k3) acc = ROUNDED(acc + FAST_VALUE(load_raw(row + k3)));
        }
        return sum_bits(acc);
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

// The coordinates of the row after (i0, i1, i2).
void next_row(inout uint i0, inout uint i1, inout uint i2) {
    i2 += 1u;
    if (i2 == pc.dx_size2) {
        i2 = 0;
        i1 += 1u;
        if (i1 == pc.dx_size1) {
            i1 = 0;
            i0 += 1u;
        }
    }
}

// The general walk: element after element, each with its own loops (n elements from e0, at column i3 of row r).
void walk_each(uint e0, uint n, uint i0, uint i1, uint i2, uint i3, Row r, inout uint4 words, inout uint exact) {
    [loop] for (uint k = 0; k < n; ++k) {
        uint sum = walk_sum(r, i3);
        if (sum == NEEDS_EXACT) exact |= 1u << k;
        else words = with_half(words, k, float_to_half_bits_fast(sum));
        i3 += 1u;
        [branch] if (i3 == pc.dx_size3 && k + 1u < n) {
            i3 = 0;
            next_row(i0, i1, i2);
            r = row_at(i0, i1, i2);
        }
    }
}

// The fast walk, where the eight elements lie in rows a and b (b = a where they all lie in a; `split` of them in
// a), neither with several taps on axes 0 and 1, and none has more than FEW_TAPS taps on axis 3 (else it returns
// false, having read no dY): every element's taps are loaded first, then each step k2 adds the k2-th dY row of every
// element (each sum in the CPU's order: its dY rows in order, a row's columns in order). The eight elements' loads
// are independent, where the general walk makes one element after another. Written out, not [unroll]ed (vkd3d 1.17's
// unrolling crashes around folded branches: kernels/README.md).
#define FAST_COLUMN(k)                                                                      \
    uint first##k, taps##k, rows##k;                                                        \
    {                                                                                       \
        bool in_a = k < split;                                                              \
        Taps t = taps_of(pc.table3, in_a ? i3 + k : k - split);                             \
        first##k = (in_a ? ra.start : rb.start) + t.first;                                  \
        taps##k = t.count;                                                                  \
        rows##k = in_a ? ra.count : rb.count;                                               \
        few = few && t.count <= FEW_TAPS;                                                   \
    }
#define FAST_TAP(k, at, k3) \
    if (k3 < taps##k) acc##k = ROUNDED(acc##k + FAST_VALUE(load_raw(at + k3)));
#define FAST_ROW(k)                                                                         \
    if (k2 < rows##k) {                                                                     \
        uint at = first##k + k2 * pc.dy_size3;                                              \
        FAST_TAP(k, at, 0) FAST_TAP(k, at, 1) FAST_TAP(k, at, 2) FAST_TAP(k, at, 3)         \
    }
#define FAST_STORE(k)                                                                       \
    {                                                                                       \
        uint sum = sum_bits(acc##k);                                                        \
        if (sum == NEEDS_EXACT) exact |= 1u << k;                                           \
        else words = with_half(words, k, float_to_half_bits_fast(sum));                     \
    }
bool walk_fast(Row ra, Row rb, uint i3, uint split, inout uint4 words, inout uint exact) {
    bool few = true;
    FAST_COLUMN(0) FAST_COLUMN(1) FAST_COLUMN(2) FAST_COLUMN(3)
    FAST_COLUMN(4) FAST_COLUMN(5) FAST_COLUMN(6) FAST_COLUMN(7)
    if (!few) return false;
    precise float acc0 = 0.0f;
    precise float acc1 = 0.0f;
    precise float acc2 = 0.0f;
    precise float acc3 = 0.0f;
    precise float acc4 = 0.0f;
    precise float acc5 = 0.0f;
    precise float acc6 = 0.0f;
    precise float acc7 = 0.0f;
    [loop] for (uint k2 = 0; k2 < max(ra.count, rb.count); ++k2) {
        FAST_ROW(0) FAST_ROW(1) FAST_ROW(2) FAST_ROW(3) FAST_ROW(4) FAST_ROW(5) FAST_ROW(6) FAST_ROW(7)
    }
    FAST_STORE(0) FAST_STORE(1) FAST_STORE(2) FAST_STORE(3)
    FAST_STORE(4) FAST_STORE(5) FAST_STORE(6) FAST_STORE(7)
    return true;
}

void walk(uint j) {
    uint e0 = WALK_ELEMENTS * j;
    uint r3 = div_by(e0, pc.dx_size3, shift_of(2));
    uint i3 = e0 - r3 * pc.dx_size3;
    uint r2 = div_by(r3, pc.dx_size2, shift_of(1));
    uint i2 = r3 - r2 * pc.dx_size2;
    uint i0 = div_by(r2, pc.dx_size1, shift_of(0));
    uint i1 = r2 - i0 * pc.dx_size1;
    Row ra = row_at(i0, i1, i2);
    uint4 words = uint4(0, 0, 0, 0);  // padding past the tensor's end stays 0
    uint exact = 0;                   // a bit per element whose sum is a NaN, made again on bits below
    uint n = min(WALK_ELEMENTS, pc.total - e0);
    // The fast walk takes whole threads whose elements span at most two rows.
    bool fast = n == WALK_ELEMENTS && pc.dx_size3 >= WALK_ELEMENTS && !ra.several;
    uint split = pc.dx_size3 - i3;
    Row rb = ra;
    [branch] if (fast && split < WALK_ELEMENTS) {
        uint b0 = i0, b1 = i1, b2 = i2;
        next_row(b0, b1, b2);
        rb = row_at(b0, b1, b2);
        fast = !rb.several;
    }
    [branch] if (fast) fast = walk_fast(ra, rb, i3, split, words, exact);
    [branch] if (!fast) walk_each(e0, n, i0, i1, i2, i3, ra, words, exact);
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
