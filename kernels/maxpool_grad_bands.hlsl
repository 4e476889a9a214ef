// Max-pooling grad, fp16, 2-D windows of any size at stride 1 and dilation 1 (any padding), on small planes or bands
// of rows in groupshared memory. Same rule and order of additions as kernels/maxpool_grad.hlsl (the general kernel), so
// the same bits.
//
// A workgroup owns BANDS_PLANES whole planes, or (planes too large for its slots) a band of BANDS_ROWS rows of one
// plane: the dX elements it writes. Its key rows are those the windows reaching those elements read (a band's rows
// with up to window_h - 1 rows above and below, recomputed by the neighbouring bands), laid one after the other as
// in X, so its keys are one run of X. Three phases, a barrier after each:
//   1. the keys of its rows, a thread per key;
//   2. each key row's best per window column: the first greatest key of the window's columns on that row (the
//      columns a window of stride 1 reads are the same on each of its rows);
//   3. each window's choice, a thread per window: the first greatest row best down the window's rows (an earlier
//      row wins ties), so the window's first greatest key in row-major tap order, as the general kernel chooses;
//      and its dY;
//   4. a thread per dX word sums, per element, the dY of the windows that chose it, in increasing dY order.
//      A window chooses element (r, c) only where its row best on row r is c, so the element first marks the
//      window columns whose row best is c (at most window_w of them: a mask of bits) and reads the choices of those
//      columns' windows alone, row by row.
// Per element of a group the work is about window_w taps (phase 2) plus window_h row bests per window (phase 3)
// plus window_w checks (phase 4), where the two-pass kernel reads window_h * window_w taps and choices; X and dY
// are read once and dX written once (a band's extra rows aside).
// One variant, DTYPE = DT_F16 (fp32 ran 1.2-2.2x slower than the two-pass kernel on an H100: docs/PERFORMANCE.md):
// a thread writes a word of two elements; the host makes every group's first element even.
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: the FAST_WORD_* header of
// interface/maxpool_grad.h (no tables) and the BANDS_WORD_* words, written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#define NONE 0xFFFFFFFFu
#define PADDING int(0x80000000u)  // below every key

DMLGRAD_SRV(uint, geometry, 3);

groupshared uint g_key_or_choice[BANDS_SLOTS];  // phases 1-2: the keys (int bits); 3-4: each window's chosen slot
groupshared int g_row_key[BANDS_SLOTS];         // per key row and window column: the row best's key
groupshared uint g_row_column[BANDS_SLOTS];     // and its column, or NONE where the window has no column there
groupshared uint g_dy[BANDS_SLOTS];             // per window: its dY, float32 bits

// A divisor of a group's slot numbers (below 2^20) with its reciprocal: n / d as a float product, corrected by
// one step (a quarter at most off), where an integer division costs a long sequence.
struct Divisor {
    uint d;
    float inverse;
};

Divisor divisor(uint d) {
    Divisor v;
    v.d = d;
    v.inverse = 1.0f / float(d);
    return v;
}

uint slot_div(uint n, Divisor v) {
    uint q = uint(float(n) * v.inverse);
    int rest = int(n) - int(q * v.d);
    return rest < 0 ? q - 1u : rest >= int(v.d) ? q + 1u : q;
}

struct Geometry {
    uint in_h, in_w, out_h, out_w, pad_h, pad_w, window_h, window_w, x_plane, dy_plane;
};

Geometry load_geometry() {
    Geometry g;
    g.in_h = geometry[FAST_WORD_IN_H], g.in_w = geometry[FAST_WORD_IN_W];
    g.out_h = geometry[FAST_WORD_OUT_H], g.out_w = geometry[FAST_WORD_OUT_W];
    g.pad_h = geometry[FAST_WORD_PAD_H], g.pad_w = geometry[FAST_WORD_PAD_W];
    g.window_h = geometry[BANDS_WORD_WINDOW_H], g.window_w = geometry[BANDS_WORD_WINDOW_W];
    g.x_plane = geometry[FAST_WORD_X_PLANE], g.dy_plane = geometry[FAST_WORD_DY_PLANE];
    return g;
}

// The windows of an axis (stride 1, dilation 1) reaching coordinates [p, p_last]: [first, last].
uint2 reaching(uint p, uint p_last, uint pad, uint window, uint out_size) {
    uint q = p + pad;
    return uint2(q + 1u > window ? q + 1u - window : 0u, min(out_size - 1u, p_last + pad));
}

// The input coordinates [first, end) that window o of an axis (stride 1, dilation 1) reads: [o - pad, o - pad +
// window) within [0, size); empty for a window of only padding.
uint2 taps(uint o, uint pad, uint window, uint size) {
    uint first = o > pad ? o - pad : 0u, end = o + window > pad ? min(size, o + window - pad) : 0u;
    return uint2(first, max(first, end));
}

// A workgroup's part: planes [plane, plane + planes) of the chunk and of each its dX rows [r0, r1), key rows
// [k0, k1) (the rows its windows read) and window rows [o0, o1) (those reaching [r0, r1)).
struct Group {
    uint plane, planes;
    uint r0, r1, k0, k1, o0, o1;
};

Group locate_group(uint item, Geometry g) {
    uint bands = geometry[BANDS_WORD_BANDS], rows = geometry[BANDS_WORD_ROWS], per_group = geometry[BANDS_WORD_PLANES];
    uint band = item % bands;
    Group w;
    w.plane = item / bands * per_group;
    w.planes = min(per_group, pc.planes - w.plane);
    w.r0 = band * rows;
    w.r1 = min(w.r0 + rows, g.in_h);
    uint2 o = reaching(w.r0, w.r1 - 1u, g.pad_h, g.window_h, g.out_h);
    w.o0 = o.x;
    w.o1 = o.y + 1u;
    // Every row is reached by a window (stride 1): the windows' rows run from the first's first to the last's end.
    w.k0 = taps(w.o0, g.pad_h, g.window_h, g.in_h).x;
    w.k1 = taps(w.o1 - 1u, g.pad_h, g.window_h, g.in_h).y;
    return w;
}

// Phase 1: the keys of the group's key rows of each plane, one run of X from key slot 0.
void load_keys(Group w, Geometry g, uint tid) {
    uint plane_keys = (w.k1 - w.k0) * g.in_w, keys = w.planes * plane_keys;
    // Whole planes (k0 = 0, k1 = in_h) or one plane: the slots are consecutive elements of X.
    uint first = pc.x_origin + w.plane * g.x_plane + w.k0 * g.in_w;
    // A word a thread: both halves' keys from one load (the run's first and last words may hold one of its keys).
    uint words = ((first + keys + 1u) >> 1) - (first >> 1);
    [loop] for (uint k = tid; k < words; k += WORKGROUP_SIZE) {
        uint word = x_buf[(first >> 1) + k], slot = 2u * k - (first & 1u);  // the low half's slot (may wrap)
        if (slot < keys) g_key_or_choice[slot] = uint(pool_key(word & 0xFFFFu));
        if (slot + 1u < keys) g_key_or_choice[slot + 1u] = uint(pool_key(word >> 16));
    }
}

// Phase 2: per key row and window column, the first greatest key of the window's columns on the row.
void choose_in_rows(Group w, Geometry g, uint tid) {
    uint entries = w.planes * (w.k1 - w.k0) * g.out_w;
    Divisor out_w = divisor(g.out_w);
    [loop] for (uint e = tid; e < entries; e += WORKGROUP_SIZE) {
        uint row = slot_div(e, out_w), ow = e - row * g.out_w;
        uint2 columns = taps(ow, g.pad_w, g.window_w, g.in_w);
        int best = PADDING;
        uint column = NONE;
        uint at = row * g.in_w;
        [loop] for (uint c = columns.x; c < columns.y; ++c) {
            int key = int(g_key_or_choice[at + c]);
            if (key > best) {
                best = key;
                column = c;
            }
        }
        g_row_key[e] = best;
        g_row_column[e] = column;
    }
}

// Phase 3: each window's choice (its key slot, or NONE) and dY.
void choose_windows(Group w, Geometry g, uint tid) {
    uint key_rows = w.k1 - w.k0, window_rows = w.o1 - w.o0;
    uint windows = w.planes * window_rows * g.out_w;
    uint dy_first = pc.dy_origin + w.plane * g.dy_plane + w.o0 * g.out_w;
    Divisor out_w = divisor(g.out_w), rows_per_plane = divisor(window_rows);
    [loop] for (uint v = tid; v < windows; v += WORKGROUP_SIZE) {
        uint row = slot_div(v, out_w), ow = v - row * g.out_w;
        uint i = slot_div(row, rows_per_plane), oh = w.o0 + row - i * window_rows;
        uint2 rows = taps(oh, g.pad_h, g.window_h, g.in_h);
        int best = PADDING;
        uint chosen = NONE;
        [loop] for (uint h = rows.x; h < rows.y; ++h) {
            uint key_row = i * key_rows + h - w.k0, e = key_row * g.out_w + ow;
            int key = g_row_key[e];
            if (key > best) {
                best = key;
                chosen = key_row * g.in_w + g_row_column[e];
            }
        }
        g_key_or_choice[v] = chosen;
        g_dy[v] = load_dy_f32(dy_first + i * g.dy_plane + (row - i * window_rows) * g.out_w + ow);
    }
}

// Phase 4: the sum, float32 bits, of element j of the group's dX (plane i, dX row r0 + its row, column c), whose
// planes hold `band` elements each and rows `in_w`.
uint gather(Group w, Geometry g, Divisor band, Divisor in_w, uint j) {
    uint i = slot_div(j, band), at = j - i * band.d;
    uint row = slot_div(at, in_w), c = at - row * g.in_w, r = w.r0 + row;
    uint key_row = i * (w.k1 - w.k0) + r - w.k0, me = key_row * g.in_w + c;
    // The window columns whose row best on row r is this element.
    uint2 ow = reaching(c, c, g.pad_w, g.window_w, g.out_w);
    uint mask = 0;
    [loop] for (uint o = ow.x; o <= ow.y; ++o) {
        if (g_row_column[key_row * g.out_w + o] == c) mask |= 1u << (o - ow.x);
    }
    uint sum = 0;  // +0.0f
    if (mask == 0) return sum;
    uint2 oh = reaching(r, r, g.pad_h, g.window_h, g.out_h);
    uint window_rows = w.o1 - w.o0;
    [loop] for (uint h = oh.x; h <= oh.y; ++h) {
        uint base = (i * window_rows + h - w.o0) * g.out_w + ow.x;
        [loop] for (uint left = mask; left != 0u; left &= left - 1u) {
            uint v = base + firstbitlow(left);
            if (g_key_or_choice[v] == me) sum = guarded_add(sum, g_dy[v]);
        }
    }
    return sum;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint index = pc.base / WORKGROUP_SIZE + group.x;
    if (index >= pc.count) return;  // uniform per group, before any barrier
    uint tid = local.x;
    Geometry g = load_geometry();
    Group w = locate_group(pc.first + index, g);
    load_keys(w, g, tid);
    GroupMemoryBarrierWithGroupSync();
    choose_in_rows(w, g, tid);
    GroupMemoryBarrierWithGroupSync();
    choose_windows(w, g, tid);
    GroupMemoryBarrierWithGroupSync();
    uint elements = w.planes * (w.r1 - w.r0) * g.in_w;
    uint first = pc.x_origin + w.plane * g.x_plane + w.r0 * g.in_w;  // even (the host's groups)
    Divisor band = divisor((w.r1 - w.r0) * g.in_w), in_w = divisor(g.in_w);
    // A word's second half past the group's last element (the chunk's last, odd) stays +0.
    [loop] for (uint j = 2u * tid; j < elements; j += 2u * WORKGROUP_SIZE) {
        uint low = gather(w, g, band, in_w, j), high = 0;
        if (j + 1u < elements) high = gather(w, g, band, in_w, j + 1u);
        dx_buf[(first + j) >> 1] = float_to_half_bits_fast(low) | float_to_half_bits_fast(high) << 16;
    }
}
