// Resample grad, walks (interface/resample_grad.h): thread j makes the ELEMENTS consecutive dX elements from
// ELEMENTS * j (one uint4 of dX, WALK_BYTES: eight halves or four floats), for rows of any length, where dX is one
// chunk. The runs split each element over the view's axes with divisions and look up the taps of every axis for it;
// a walk splits its first element once and steps to the next (a carry into the row's outer coordinates at a row's
// end, which then looks up that row's taps once), so each element costs its axis-3 taps and its loads. That is what
// fp16 rows of an odd length need (the fp16 strips make whole words of a row; the runs reached 6-15% of the bound
// there on the H100, 2026-11-27, slower than PyTorch, nearest and linear alike), what rows that take several dY rows
// through axes 0 and 1 need (the strips make those element by element with their general code, one after another),
// and what planes of fewer rows than a strip (an identity plan: one row, a float a strip) and f32 rows that are not
// whole runs of the runs kernel (a run across a row's end makes its elements one by one) need. Variants: MODE
// (nearest: fp16 and f32; linear: fp16, and the SPARSE f32 and fp16 walks below) and DTYPE.
//
// An element sums its terms from +0 in the CPU's order (its dY rows: the taps of axes 0-2; then a row's taps on
// axis 3), each value converted with FAST_VALUE (fp16: subnormal halves by hand, as a device may flush them).
// Nearest: every weight is 1. fp16: each term is a multiple of 2^-24 below 2^16 and so is every sum of them, so the
// hardware adds give the CPU's bits, except a NaN's (made again on bits, exact_float.hlsli) and -0 (positive_zero).
// Linear: a term is (p2 * w3) * v, p2 = ((w0 * w1) * w2) the dY row's weight product (made once a row), as in the
// runs. Linear, and float32: an element that reads a value below tiny_limit (whose terms or sums could be denormal,
// which the GPU may flush) or sums to a NaN is made again on bits.
//
// WORDS variants (fp16) make one 32-bit word a thread (two halves, WALK_WORD_ELEMENTS), the lanes of a warp on
// consecutive words: for small dX, and (linear) for plans of more than two taps an element on axis 3 (the host's
// word_walk).
//
// The AHEAD variant (nearest fp16 words of small dX, the host's steps_ahead) takes AHEAD_STEPS steps a pass, every
// step's loads before the adds (in order): a thread's sums wait on their loads there, one after another.
//
// SPARSE variants (linear, f32 and fp16: the host's sparse_walk) take sparse downscales, plans of at most one tap at
// every index of every axis: an element then has one term or none, so the fast walk makes one step, not loops over
// dY rows and taps, and a thread whose rows have no dY row (no tap on axes 0-2) writes zeros without loading its
// columns' taps.
#define STRIPS 0
#ifndef WORDS
#define WORDS 0
#endif
#ifndef SPARSE
#define SPARSE 0
#endif
#ifndef AHEAD
#define AHEAD 0
#endif
#if SPARSE && (WORDS || MODE != LINEAR)
#error "sparse walks are linear, a uint4 a thread"
#endif
#if AHEAD && !(WORDS && MODE == NEAREST)
#error "steps ahead are the nearest word walk's"
#endif
#if WORDS
#define DX_WORDS uint  // a thread's two halves, one store
#else
#define DX_WORDS uint4  // a thread's elements, one store
#endif
#include "resample_grad_gather.hlsli"
#if WORDS
#if DTYPE != DT_F16
#error "word walks are fp16"
#endif
#define ELEMENTS WALK_WORD_ELEMENTS
#elif DTYPE == DT_F16
#define ELEMENTS 8  // a thread's elements: one uint4 of halves
#else
#define ELEMENTS 4  // one uint4 of floats
#endif

// The taps of a dX row (coordinates i0, i1, i2 of the view): its dY rows are those of every tap of axis 0, then
// axis 1, then axis 2 (the CPU's order), `count` of them.
struct Row {
    Taps t0, t1, t2;
    uint count;
};

Row row_at(uint i0, uint i1, uint i2) {
    Row r;
    r.t0 = taps_of(pc.table0, i0);
    r.t1 = taps_of(pc.table1, i1);
    r.t2 = taps_of(pc.table2, i2);
    r.count = r.t0.count * r.t1.count * r.t2.count;
    return r;
}

// A place among a row's dY rows: the taps k0, k1, k2 of axes 0-2, that dY row's first element and (linear) its
// weight product, in the CPU's order.
struct RowCursor {
    uint k0, k1, k2;
    uint start;
    float p2;
};

// The cursor's dY row: its first element and its weight product.
void place(Row r, inout RowCursor c) {
    c.start = ((r.t0.first + c.k0) * pc.dy_size1 + r.t1.first + c.k1) * pc.dy_size2 * pc.dy_size3 +
              (r.t2.first + c.k2) * pc.dy_size3;
    precise float p0 = PRODUCT(HW_MUL, 1.0f, weight(r.t0, c.k0));
    precise float p1 = PRODUCT(HW_MUL, p0, weight(r.t1, c.k1));
    precise float p2 = PRODUCT(HW_MUL, p1, weight(r.t2, c.k2));
    c.p2 = p2;
}

RowCursor first_row(Row r) {
    RowCursor c;
    c.k0 = 0;
    c.k1 = 0;
    c.k2 = 0;
    place(r, c);
    return c;
}

// The row's next dY row (axis 2 fastest).
void step_row(Row r, inout RowCursor c) {
    c.k2 += 1u;
    if (c.k2 == r.t2.count) {
        c.k2 = 0;
        c.k1 += 1u;
        if (c.k1 == r.t1.count) {
            c.k1 = 0;
            c.k0 += 1u;
        }
    }
    place(r, c);
}

// A sum's bits, or NEEDS_EXACT where it must be made again on bits (checked()).
uint sum_bits(float acc, uint lowest) {
#if DTYPE == DT_F16 && MODE == NEAREST
    return is_nan(asuint(acc)) ? NEEDS_EXACT : asuint(positive_zero(acc));  // tiny_limit is 0 for nearest fp16
#else
    return checked(acc, lowest);
#endif
}

// Element k of the thread's DX_WORDS W set to its result (fp16: rounded to a half).
#if WORDS
uint with_element(uint w, uint k, uint sum) {
    uint shift = k * 16u;
    return (w & ~(0xFFFFu << shift)) | (float_to_half_bits_fast(sum) << shift);
}
#else
#include "resample_uint4_element.hlsli"
#endif
#include "resample_element_bits.hlsli"

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

// The sum of column i3 of row r.
uint walk_sum(Row r, uint i3) {
    Taps t3 = taps_of(pc.table3, i3);
    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    RowCursor c = first_row(r);
    [loop] for (uint q = 0; q < r.count; ++q) {
        uint row = c.start + t3.first;
        [loop] for (uint k3 = 0; k3 < t3.count; ++k3) {
            uint raw = load_raw(row + k3);
            lowest = min(lowest, MAGNITUDE_KEY(raw));
            acc = ROUNDED(acc + TERM(HW_MUL, c.p2, weight(t3, k3), FAST_VALUE(raw)));
        }
        step_row(r, c);
    }
    return sum_bits(acc, lowest);
}

// The general walk: element after element, each with its own loops (n elements from column i3 of row r).
void walk_each(uint n, uint i0, uint i1, uint i2, uint i3, Row r, inout DX_WORDS words, inout uint exact) {
    [loop] for (uint k = 0; k < n; ++k) {
        uint sum = walk_sum(r, i3);
        if (sum == NEEDS_EXACT) exact |= 1u << k;
        else words = with_element(words, k, sum);
        i3 += 1u;
        [branch] if (i3 == pc.dx_size3 && k + 1u < n) {
            i3 = 0;
            next_row(i0, i1, i2);
            r = row_at(i0, i1, i2);
        }
    }
}

// A column's taps on axis 3 for the fast walk: its first dY index, its count, and where its weights lie in the
// tables (weight k at weights + k weight_step; nearest has none).
struct Column {
    uint first, count, weights, weight_step;
};

// Axis 3's phased copy (interface/resample_grad.h's PHASED_*), if it has a table (not in WORDS variants): where its
// arrays start (after axis 3's pairs, nearest, or weights, linear, where its sentinel's tap start points) and their
// length n.
struct Phased {
    uint base, n;
};
Phased phased_copy() {
    Phased p;
    p.n = ELEMENTS * ((pc.dx_size3 + ELEMENTS - 1u) / ELEMENTS);
    p.base = 0;
#if !WORDS
    if (pc.table3 != IDENTITY_AXIS) {
#if MODE == LINEAR
        p.base = tables[pc.table3 + TABLE_PAIR_WORDS * pc.dx_size3 + TABLE_START];
#else
        p.base = pc.table3 + TABLE_PAIR_WORDS * (pc.dx_size3 + 1u);
#endif
    }
#endif
    return p;
}

// Column i's taps: from the phased copy, where a warp's lanes read consecutive words (linear: the weights there too,
// up to PHASED_WEIGHTS of them); identity axes (and WORDS variants) from taps_of.
Column column_at(uint i, Phased p) {
    Column c;
    [branch] if (p.base != 0) {
        uint at = p.base + (i % ELEMENTS) * (p.n / ELEMENTS) + i / ELEMENTS;
        c.first = tables[at + PHASED_FIRST * p.n];
        c.count = tables[at + PHASED_COUNT * p.n];
#if MODE == LINEAR
#if SPARSE
        bool phased_weights = true;  // at most one tap: no tap start loaded
#else
        bool phased_weights = c.count <= PHASED_WEIGHTS;
#endif
        c.weights = phased_weights ? at + PHASED_WEIGHT * p.n : tables[at + PHASED_START * p.n];
        c.weight_step = phased_weights ? p.n : 1u;
#else
        c.weights = TABLE_ONE;
        c.weight_step = 0;
#endif
        return c;
    }
    Taps t = taps_of(pc.table3, i);
    c.first = t.first;
    c.count = t.count;
    c.weights = t.start;
    c.weight_step = 1;
    return c;
}

// The fast walk, where the elements lie in rows a and b (b = a where they all lie in a; `split` of them in a):
// every element's taps are loaded first, then each step (q, k3) adds the k3-th column of the q-th dY row of rows a
// and b to each element that has them (each sum in the CPU's order: its dY rows in order, a row's columns in
// order). No branch guards a load: a step an element does not have loads dY element 0 and leaves its sum as it
// was (a select), so the compiler can issue the elements' loads together (with each load under its own branch, the
// H100 waited for one element's load after another: this kernel then reached 10-23% of the bound). Written out,
// not [unroll]ed (vkd3d 1.17's unrolling crashes around folded branches: kernels/README.md).
#define FAST_COLUMN(k)                                                                      \
    uint first##k, weights##k, weight_step##k, taps##k;                                     \
    bool in_a##k = k < split;                                                               \
    {                                                                                       \
        Column c = column_at(in_a##k ? i3 + k : k - split, phased);                         \
        first##k = c.first;                                                                 \
        weights##k = c.weights;                                                             \
        weight_step##k = c.weight_step;                                                     \
        taps##k = c.count;                                                                  \
        most = max(most, c.count);                                                          \
    }                                                                                       \
    precise float acc##k = 0.0f;                                                            \
    uint low##k = 0xFFFFFFFFu;
// A step (q, k3) of the fast walk: the k3-th column of the q-th dY row of rows a and b, their cursors ca and cb.
struct Step {
    uint q, k3;
    RowCursor ca, cb;
};

// Element k's load of step S (dY element 0 where it does not have that step), then its add (a select where it does
// not). Names carry S, so a pass can load several steps before their adds.
#define TAP_LOAD(k, S)                                                                      \
    bool has##k##S = S.k3 < taps##k && (in_a##k ? S.q < ra.count : S.q < rb.count);        \
    uint raw##k##S = load_raw(has##k##S ? (in_a##k ? S.ca.start : S.cb.start) + first##k + S.k3 : 0u);
#define TAP_ADD(k, S)                                                                       \
    low##k = has##k##S ? min(low##k, MAGNITUDE_KEY(raw##k##S)) : low##k;                    \
    float w##k##S = asfloat(tables[has##k##S ? weights##k + S.k3 * weight_step##k : TABLE_ONE]); \
    acc##k = has##k##S ? ROUNDED(acc##k + TERM(HW_MUL, in_a##k ? S.ca.p2 : S.cb.p2, w##k##S, FAST_VALUE(raw##k##S))) \
                       : acc##k;
#define FAST_TAP(k) {TAP_LOAD(k, s) TAP_ADD(k, s)}
#if AHEAD
// A pass is written out for AHEAD_STEPS = 4 steps (interface/resample_grad.h).
// The step after s (k3 fastest, up to `most`).
Step next_step(Row ra, Row rb, uint most, Step s) {
    s.k3 += 1u;
    [branch] if (s.k3 == most) {
        s.k3 = 0;
        s.q += 1u;
        step_row(ra, s.ca);
        step_row(rb, s.cb);
    }
    return s;
}
#define AHEAD_STEP(F, S) F(0, S) F(1, S)
#endif
// Element k's bits in bits##k (a sum made again after the store: 0 there).
#define FAST_STORE(k) ELEMENT_DONE(k, sum_bits)
#if ELEMENTS == 8
#define FAST_TAPS FAST_TAP(0) FAST_TAP(1) FAST_TAP(2) FAST_TAP(3) FAST_TAP(4) FAST_TAP(5) FAST_TAP(6) FAST_TAP(7)
#elif ELEMENTS == 4
#define FAST_TAPS FAST_TAP(0) FAST_TAP(1) FAST_TAP(2) FAST_TAP(3)
#else
#define FAST_TAPS FAST_TAP(0) FAST_TAP(1)
#endif
void walk_fast(Row ra, Row rb, uint i3, uint split, out DX_WORDS words, inout uint exact) {
#if SPARSE
    words = (DX_WORDS)0;
    [branch] if (ra.count == 0 && rb.count == 0) return;  // +0 throughout, the sums' starting value
#endif
    Phased phased = phased_copy();
    uint most = 0;  // the most taps an element has on axis 3
    FAST_COLUMN(0) FAST_COLUMN(1)
#if ELEMENTS >= 4
    FAST_COLUMN(2) FAST_COLUMN(3)
#endif
#if ELEMENTS == 8
    FAST_COLUMN(4) FAST_COLUMN(5) FAST_COLUMN(6) FAST_COLUMN(7)
#endif
#if SPARSE
    RowCursor ca = first_row(ra), cb = ca;
    [branch] if (split < ELEMENTS) cb = first_row(rb);  // a second row's weight product only where it has one
    {
        Step s = {0u, 0u, ca, cb};  // the one step: every count is 0 or 1
        FAST_TAPS
    }
#else
    RowCursor ca = first_row(ra), cb = first_row(rb);
    uint rows = max(ra.count, rb.count);
    // A step (q, k3) a pass. Steps written out up to 4 taps (a branch on the taps around them) measured no faster
    // on the H100 and made 4x on four f32 axes 2x slower (88 -> 177 us, 2026-11-27); the coalesced copy of axis 3's
    // taps is what made the walk fast.
#if AHEAD
    Step s0 = {0u, 0u, ca, cb};
    [loop] for (uint n = 0; n < rows * most; n += AHEAD_STEPS) {
        // Steps past the last one (where AHEAD_STEPS does not divide the count): no element has them.
        Step s1 = next_step(ra, rb, most, s0), s2 = next_step(ra, rb, most, s1), s3 = next_step(ra, rb, most, s2);
        AHEAD_STEP(TAP_LOAD, s0) AHEAD_STEP(TAP_LOAD, s1) AHEAD_STEP(TAP_LOAD, s2) AHEAD_STEP(TAP_LOAD, s3)
        AHEAD_STEP(TAP_ADD, s0) AHEAD_STEP(TAP_ADD, s1) AHEAD_STEP(TAP_ADD, s2) AHEAD_STEP(TAP_ADD, s3)
        s0 = next_step(ra, rb, most, s3);
    }
#else
    [loop] for (uint q = 0; q < rows; ++q) {
        [loop] for (uint k3 = 0; k3 < most; ++k3) {
            Step s = {q, k3, ca, cb};
            FAST_TAPS
        }
        step_row(ra, ca);
        step_row(rb, cb);
    }
#endif
#endif
    // The words made whole from their elements' bits (with_element's selects, an element at a time, cost about 15
    // instructions an element).
    FAST_STORE(0) FAST_STORE(1)
#if ELEMENTS >= 4
    FAST_STORE(2) FAST_STORE(3)
#endif
#if ELEMENTS == 8
    FAST_STORE(4) FAST_STORE(5) FAST_STORE(6) FAST_STORE(7)
    words = uint4(bits0 | bits1 << 16, bits2 | bits3 << 16, bits4 | bits5 << 16, bits6 | bits7 << 16);
#elif ELEMENTS == 4
    words = uint4(bits0, bits1, bits2, bits3);
#else
    words = bits0 | bits1 << 16;  // WORDS: two halves
#endif
}

void walk(uint j) {
    uint e0 = ELEMENTS * j;
    uint r3 = div_by(e0, pc.dx_size3, shift_of(2));
    uint i3 = e0 - r3 * pc.dx_size3;
    uint r2 = div_by(r3, pc.dx_size2, shift_of(1));
    uint i2 = r3 - r2 * pc.dx_size2;
    uint i0 = div_by(r2, pc.dx_size1, shift_of(0));
    uint i1 = r2 - i0 * pc.dx_size1;
    Row ra = row_at(i0, i1, i2);
    DX_WORDS words = (DX_WORDS)0;  // padding past the tensor's end stays 0
    uint exact = 0;                   // a bit per element made again on bits below
    uint n = min(ELEMENTS, pc.total - e0);
    // The fast walk takes whole threads, whose elements then span at most two rows: rows of ELEMENTS - 1 and more
    // (from a row's last element, the next ELEMENTS - 1 fill the next row at most).
    bool fast = n == ELEMENTS && pc.dx_size3 + 1u >= ELEMENTS;
    uint split = pc.dx_size3 - i3;
    Row rb = ra;
    [branch] if (fast && split < ELEMENTS) {
        uint b0 = i0, b1 = i1, b2 = i2;
        next_row(b0, b1, b2);
        rb = row_at(b0, b1, b2);
    }
    [branch] if (fast) walk_fast(ra, rb, i3, split, words, exact);
    else walk_each(n, i0, i1, i2, i3, ra, words, exact);
    // Stored first, then each sum made again patched in place: redoing into registers in a loop and storing after
    // it gave 0 for every redone sum in the fp16 strips on the H100 (kernels/resample_grad_strips_f16.hlsl).
    dx_buf[j] = words;
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        dx_buf[j] = with_element(dx_buf[j], k, asuint(positive_zero(gather_exact(e0 + k))));
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) walk(j);
}
