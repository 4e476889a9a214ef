// The lines gather of the walk kernel (kernels/slice_grad_walk.hlsl, LINES=1): level 0 is a line of the innermost
// axes folded together (the host's rule: src/gpu/ops/slice_grad_dispatch.cpp), at least a uint4 long, so that a
// uint4 touches two lines at most. Every line has the same columns: a table (pc.columns in the tables binding) gives
// each column's dY element relative to the line's first, or NOT_REACHED, phased as ELEMS arrays by column modulo
// ELEMS (a warp's threads, a uint4 apart, then read consecutive words). An element costs a table load and, where
// reached, a dY load: rows of a few elements cost no per-row test (the walk tests each row its uint4 touches and
// reached 16-19% of the bound on int8 rows of 3 or 5, H100). The includer includes slice_grad_walk.hlsli first.
#ifndef DMLGRAD_SLICE_GRAD_LINES_HLSLI
#define DMLGRAD_SLICE_GRAD_LINES_HLSLI

uint column_word(uint column) {
    return tables[pc.columns + (column % ELEMS) * pc.column_stride + column / ELEMS];
}

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
    [unroll] for (uint k = 0; k < ELEMS; ++k) {
        bool next = k >= split;
        if (k < limit && (next ? in_b : in_a)) {
            uint w = column_word(next ? c + k - inner.dx_size : c + k);
            if (w != NOT_REACHED) v = insert(v, k, load_dy((next ? base_b : base_a) + w));
        }
    }
    return v;
}

#endif  // DMLGRAD_SLICE_GRAD_LINES_HLSLI
