// The lines gather of the walk kernel (kernels/slice_grad_walk.hlsl, LINES=1): level 0 is a line of the innermost
// axes folded together (the host's rule: src/gpu/ops/slice_grad_dispatch.cpp), at least a uint4 long, so that a
// uint4 touches two lines at most. Every line has the same columns: per column c, the column windows (binding 4,
// src/gpu/ops/slice_geometry.h's column_windows) give columns c, c + 1, ... (on into the next line), each's dY element
// relative to its line's first, or NOT_REACHED, in whole uint4s laid out so that a warp's threads, a uint4 of dX
// apart, read neighbouring ones. An element costs a dY load where reached and little arithmetic: rows of a few
// elements cost no per-row test (the walk tests each row its uint4 touches and reached 16-19% of the bound on int8
// rows of 3 or 5, H100), and a uint4's columns cost ELEMS / 4 loads, not a load and an address each (every lane
// of a warp pays the element loop wherever one of them reaches a column). The includer includes
// slice_grad_walk.hlsli first.
#ifndef DMLGRAD_SLICE_GRAD_LINES_HLSLI
#define DMLGRAD_SLICE_GRAD_LINES_HLSLI

#define WINDOW_UINT4S ((ELEMS + 3) / 4)  // a column window's uint4s
DMLGRAD_SRV(uint4, column_windows, 4);

#if LINE_GAPS
// Whether a column of the ELEMS from column c on (into the next line) is reached: c's gap is below ELEMS.
bool columns_reached(uint c) { return tables[pc.gaps + (c % ELEMS) * pc.column_stride + c / ELEMS] < ELEMS; }
#endif

// The uint4 whose first element is dX element `first`, at column c of the line at `coord`.
uint4 gather_lines_uint4(Axis inner, uint first, uint c, uint coord[MAX_RANK]) {
    uint4 v = uint4(0, 0, 0, 0);
#if LINE_GAPS
    if (!columns_reached(c)) return v;
#endif
    uint base_a, base_b = 0;
    bool in_a = row_reached(coord, base_a), in_b = false;
    uint split = inner.dx_size - c;  // elements of this line in the uint4 (ELEMS or more: all)
    if (split < ELEMS) {
        add_rows(coord, 1u, false);
        in_b = row_reached(coord, base_b);
    }
    if (!in_a && !in_b) return v;
    uint limit = min((uint)ELEMS, pc.total - first);  // the last uint4 may run past dX
    uint window = (c % ELEMS) * pc.column_stride + c / ELEMS;
    uint4 words[WINDOW_UINT4S];
    [unroll] for (uint g = 0; g < WINDOW_UINT4S; ++g) words[g] = column_windows[g * ELEMS * pc.column_stride + window];
    [unroll] for (uint k = 0; k < ELEMS; ++k) {
        bool next = k >= split;
        uint w = words[k / 4][k % 4];
        if (k < limit && (next ? in_b : in_a) && w != NOT_REACHED)
            v = insert(v, k, load_dy((next ? base_b : base_a) + w));
    }
    return v;
}

#if LINE_WORDS
// 8-bit lines whose reached columns among any window's 16 lie within 8 dY elements of each other in each of the
// two lines the window touches (the host's rule: src/gpu/ops/slice_grad_dispatch.cpp; slice_geometry.h's
// column_words): a column window is a uint4 of byte codes (its element of the 8 dY bytes from its line's lowest
// one: (line << 6) | (word << 5) | (byte << 3)) and a uint4 (each line's lowest dY element from the line's first,
// the reached columns' mask, each line's span), so that a uint4 costs a line's 8 bytes in 3 word loads and a
// shift per element, not a dY load per element.

// The 8 dY bytes from element j on, of which those up to j + span are read (the words past those are not read).
void load_eight(uint j, uint span, out uint lo, out uint hi) {
    uint q = j / 4u, last = (j + span) / 4u, s = (j % 4u) * 8u;
    uint w0 = dy_buf[q], w1 = dy_buf[min(q + 1u, last)], w2 = dy_buf[min(q + 2u, last)];
    lo = funnel_right(w0, w1, s);
    hi = funnel_right(w1, w2, s);
}

// 0xFF in byte i where bit i of b (below 16) is set (the 4 bits multiplied apart into bits 0, 8, 16 and 24).
uint byte_mask(uint b) { return ((b * 0x00204081u) & 0x01010101u) * 0xFFu; }

uint4 gather_line_words(Axis inner, uint first, uint c, uint coord[MAX_RANK]) {
    uint base_a, base_b = 0;
    bool in_a = row_reached(coord, base_a), in_b = false;
    uint split = inner.dx_size - c;  // elements of this line in the uint4 (ELEMS or more: all)
    if (split < ELEMS) {
        add_rows(coord, 1u, false);
        in_b = row_reached(coord, base_b);
    }
    if (!in_a && !in_b) return uint4(0, 0, 0, 0);
    uint window = (c % ELEMS) * pc.column_stride + c / ELEMS;
    uint4 codes = column_windows[window];
    uint4 lines = column_windows[ELEMS * pc.column_stride + window];
    uint line_a = low_bits(min(split, (uint)ELEMS));  // the elements of this line
    uint limit = min((uint)ELEMS, pc.total - first);  // the last uint4 may run past dX
    uint mask = lines.z & low_bits(limit) & ((in_a ? line_a : 0u) | (in_b ? ~line_a : 0u));
    uint a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
    if ((mask & line_a) != 0) load_eight(base_a + lines.x, (lines.z >> 16) & 0xFFu, a_lo, a_hi);
    if ((mask & ~line_a) != 0) load_eight(base_b + lines.y, lines.z >> 24, b_lo, b_hi);
    uint4 v;
    [unroll] for (uint m = 0; m < 4; ++m) {
        uint word = 0;
        [unroll] for (uint e = 0; e < 4; ++e) {
            uint code = (codes[m] >> (8u * e)) & 0xFFu;
            uint a = (code & 32u) != 0 ? a_hi : a_lo, b = (code & 32u) != 0 ? b_hi : b_lo;
            word |= ((((code & 64u) != 0 ? b : a) >> (code & 24u)) & 0xFFu) << (8u * e);
        }
        v[m] = word & byte_mask((mask >> (4u * m)) & 0xFu);
    }
    return v;
}
#endif

#endif  // DMLGRAD_SLICE_GRAD_LINES_HLSLI
