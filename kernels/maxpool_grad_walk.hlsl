// Max-pooling grad, 3-D cube windows of 3 with stride 2 and a start padding of 1 on every axis (the common 3-D
// overlapping case), walking along the depth. Same rule and order of additions as kernels/maxpool_grad.hlsl (the
// general kernel), so the same bits.
//
// With these windows, window o of an axis reads coordinates 2o - 1, 2o, 2o + 1: coordinate 2o is read by window o
// alone, 2o + 1 by windows o and o + 1 (as its first coordinate). So dX splits into cells of 2 x 2 x 2 elements,
// cell o = coordinates {2o, 2o + 1} per axis, and cell o receives dY only from windows o + (a, b, c) with a, b,
// c in {0, 1}: window o through any of its elements, window o + 1 of an axis only through its first coordinate
// there. The host takes this kernel only where the cells cover the input (in <= 2 * out per axis).
//
// A workgroup owns the cells of WALK_TILE_ROWS x WALK_TILE_COLS windows of rows and columns (interface/maxpool_-
// grad.h; a thread per window) in one plane and walks through every depth window. Step s:
//   1. the keys of X's depth slices 2s and 2s + 1 (the rows and columns that the windows and the halo windows
//      one row and one column further read) go to groupshared memory; the loads were issued during step s - 1;
//   2. the argmax of each window (s, row, column), one more row and column included: the 3 x 3 argmax of slices
//      2s and 2s + 1, combined with the one of slice 2s - 1 kept in registers from step s - 1 (the first maximum
//      in (depth, row, column) order: a later slice wins only with a greater key);
//   3. each thread writes the 8 elements of its window's cell of depth window s - 1, adding the dY of the windows
//      (s - 1 or s, row or row + 1, column or column + 1) that chose each element in increasing dY order: plain
//      float adds when the dY of those of the 8 windows that chose an element are plain (see is_plain; a flag in
//      each window's code), guarded_add (exact_float.hlsli) otherwise.
// A window's argmax is read 8 times from groupshared memory, each X key once per step (plus the halo), and no
// element of dX is read back: X and dY are read about once, dX written once.
// Variants: DTYPE = DT_F32 or DT_F16 (rows of even length: a thread writes a word per cell row).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: the FAST_WORD_* header of
// interface/maxpool_grad.h (no tables), written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#define NONE 0xFFFFFFFFu
#define CODE_NONE 0x80u  // a window that chose nothing (or does not exist), in g_chosen
#define NOT_PLAIN 0x40u  // in g_chosen: the window chose an element and its dY is not plain
static const uint BOX_H = WALK_TILE_ROWS + 1;  // windows computed per step: the owned ones and the halo
static const uint BOX_W = WALK_TILE_COLS + 1;
static const uint BOX = BOX_H * BOX_W;
static const uint BOX_SLOTS = (BOX + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
static const uint REGION_H = 2 * BOX_H + 1;  // rows of X those windows read, from 2 * row0 - 1
// The KEY_W columns of X those windows read, from X's column key_col0: 2 * col0 - 1, for fp16 rounded down to even
// (loads of whole words); a window's first column is FIRST_KEY + 2c. Their keys in g_key, per row of the region:
//  - fp32: a key per column (pool_key);
//  - fp16: a word per loaded word of X, the 16-bit order keys of its halves (half_keys), padding 0 (below every
//    element's key): window c reads word c's high half and word c + 1's two halves, consecutive words for a warp's
//    consecutive windows, where single keys would be read two apart (two-way bank conflicts).
#if DTYPE == DT_F16
#define KEY_UNIT 2
static const uint KEY_W = 2 * BOX_W + 2;
static const uint FIRST_KEY = 1;  // a window's first column in g_key, past the row's start
typedef uint Key;
#else
#define KEY_UNIT 1
static const uint KEY_W = 2 * BOX_W + 1;
static const uint FIRST_KEY = 0;
typedef int Key;
#endif
static const uint KEY_ROW = KEY_W / KEY_UNIT;  // words of g_key per row
static const uint KEY_SLICE = REGION_H * KEY_W;
static const uint KEYS = 2 * KEY_SLICE;  // two depth slices per step
static const uint LOAD_SLOTS = (KEYS / KEY_UNIT + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;

DMLGRAD_SRV(uint, geometry, 3);

groupshared Key g_key[KEYS / KEY_UNIT];
groupshared uint g_chosen[2][BOX];  // per step parity: each window's cell_code | NOT_PLAIN, or CODE_NONE
groupshared uint g_dy[2][BOX];      // its dY as float32 bits

struct Geometry {
    uint in_d, in_h, in_w, out_d, out_h, out_w;
};

struct Walk {
    uint row0, col0;       // the first owned window's row and column
    int key_col0;          // X's column of g_key's first column
    uint x_base, dy_base;  // the plane's first element of X (and dX), of dY
};

Walk locate_walk(uint item, Geometry g) {
    uint grid_cols = geometry[FAST_WORD_GRID_COLS], grid_rows = geometry[FAST_WORD_GRID_ROWS];
    uint tile = item % (grid_cols * grid_rows), plane = item / (grid_cols * grid_rows);
    Walk w;
    w.row0 = (tile / grid_cols) * WALK_TILE_ROWS;
    w.col0 = (tile % grid_cols) * WALK_TILE_COLS;
    w.key_col0 = int(2 * w.col0) - 1 - int(FIRST_KEY);
    w.x_base = pc.x_origin + plane * geometry[FAST_WORD_X_PLANE];
    w.dy_base = pc.dy_origin + plane * geometry[FAST_WORD_DY_PLANE];
    return w;
}

// A thread's load slots, the same in every step but for the depth: each X slot's element relative to step 0's
// (slice 0, row 2 * row0 - 1, column key_col0), with bit i of `x_inside` (inside the slice's rows and columns)
// and of `x_second` (in the second slice); each dY slot's window relative to the plane's, with bit i of
// `dy_inside` (a window of the plane's rows and columns, of the box). Slot i fills g_key's word
// tid + i * WORKGROUP_SIZE.
struct Slots {
    uint x_at[LOAD_SLOTS];
    uint x_inside, x_second;
    uint dy_at[BOX_SLOTS];
    uint dy_inside;
};

Slots thread_slots(Walk w, Geometry g, uint tid) {
    Slots t;
    t.x_inside = 0;
    t.x_second = 0;
    [unroll] for (uint i = 0; i < LOAD_SLOTS; ++i) {
        uint k = (tid + WORKGROUP_SIZE * i) * KEY_UNIT;
        uint sd = k / KEY_SLICE, sh = (k / KEY_W) % REGION_H, sw = k % KEY_W;
        int h = int(2 * w.row0 + sh) - 1, c = w.key_col0 + int(sw);
        t.x_at[i] = (sd * g.in_h + uint(h)) * g.in_w + uint(c);
        if (k < KEYS && h >= 0 && h < int(g.in_h) && c >= 0 && c < int(g.in_w)) t.x_inside |= 1u << i;
        if (sd != 0) t.x_second |= 1u << i;
    }
    t.dy_inside = 0;
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint b = tid + WORKGROUP_SIZE * i, r = w.row0 + b / BOX_W, c = w.col0 + b % BOX_W;
        t.dy_at[i] = r * g.out_w + c;
        if (b < BOX && r < g.out_h && c < g.out_w) t.dy_inside |= 1u << i;
    }
    return t;
}

// Step s's loads, issued together and used only in step s + 1's time: X's slices 2s and 2s + 1 (bit i of
// `inside`: x[i] was loaded, else padding), and the dY of the box's windows of depth s (0 past the windows).
void load_step(Walk w, Geometry g, Slots t, uint s, out uint x[LOAD_SLOTS], out uint inside, out uint dy[BOX_SLOTS]) {
    inside = t.x_inside & ((2 * s < g.in_d ? ~t.x_second : 0u) | (2 * s + 1u < g.in_d ? t.x_second : 0u));
    uint x_step = w.x_base + 2 * s * g.in_h * g.in_w;
    [unroll] for (uint i = 0; i < LOAD_SLOTS; ++i) {
        x[i] = 0;
        if ((inside >> i & 1u) != 0) {
#if DTYPE == DT_F16
            x[i] = x_buf[(x_step + t.x_at[i]) >> 1];  // an even column, in_w even: both elements in the row
#else
            x[i] = load_x(x_step + t.x_at[i]);
#endif
        }
    }
    uint dy_step = w.dy_base + s * g.out_h * g.out_w;
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        dy[i] = 0;
        if ((t.dy_inside >> i & 1u) != 0 && s < g.out_d) dy[i] = load_dy_f32(dy_step + t.dy_at[i]);
    }
}

// Step 1: the keys of a thread's loaded X words into g_key (the layout above); padding (not loaded) below every
// element's key.
void store_keys(uint tid, uint x[LOAD_SLOTS], uint inside) {
    [unroll] for (uint i = 0; i < LOAD_SLOTS; ++i) {
        uint k = (tid + WORKGROUP_SIZE * i) * KEY_UNIT;
        bool loaded = (inside >> i & 1u) != 0;
        if (k < KEYS) {
#if DTYPE == DT_F16
            g_key[k / 2] = loaded ? half_keys(x[i]) : 0u;
#else
            g_key[k] = loaded ? pool_key(x[i]) : int(0x80000000u);
#endif
        }
    }
}

// Where the element that window o chose (depth << 4 | row << 2 | column within the window) lies: in the cell of
// window o - n, n = (a, b, c) in {0, 1}^3 (per axis: the window's coordinate 0 is the previous cell's element 1,
// coordinates 1 and 2 its own cell's elements 0 and 1), as element e = depth << 2 | row << 1 | column: n << 3 | e.
// So the owner of cell o finds window o + n's contribution to its element e where the code is n << 3 | e.
uint cell_code(uint chosen) {
    uint kd = chosen >> 4, kh = (chosen >> 2) & 3u, kw = chosen & 3u;
    uint n = (kd == 0 ? 4u : 0u) | (kh == 0 ? 2u : 0u) | (kw == 0 ? 1u : 0u);
    uint e = (kd == 0 ? 1u : kd - 1u) << 2 | (kh == 0 ? 1u : kh - 1u) << 1 | (kw == 0 ? 1u : kw - 1u);
    return chosen == NONE ? CODE_NONE : n << 3 | e;
}

#if DTYPE == DT_F16

// A window's best tap so far, as (key << 6 | 63 - tap), tap = depth << 4 | row << 2 | column within the window:
// the largest is the first maximum (ties to the lowest tap); below 64 (padding keys are 0), no element.
struct Best {
    uint v;
};

Best no_best() {
    Best b;
    b.v = 0;
    return b;
}

// The first maximum of a window's 3 x 3 taps in depth slice `slice` of g_key (0 or 1), as window depth `kd`; the
// maxima of rows, then of the rows' (a shorter chain of dependent operations than tap after tap).
Best slice_argmax(uint slice, uint r, uint c, uint kd) {
    uint base = (slice * REGION_H + 2 * r) * KEY_ROW + c;
    uint row[3];
    [unroll] for (uint kh = 0; kh < 3; ++kh) {
        uint first = g_key[base + kh * KEY_ROW], next = g_key[base + kh * KEY_ROW + 1u];
        uint low = 63u - (kd << 4 | kh << 2);  // 63 - tap of the row's first column
        row[kh] = max(max((first >> 16) << 6 | low, (next & 0xFFFFu) << 6 | (low - 1u)), (next >> 16) << 6 | (low - 2u));
    }
    Best b;
    b.v = max(max(row[0], row[1]), row[2]);
    return b;
}

// `a` then the taps of `later` (all after a's).
Best combine(Best a, Best later) {
    a.v = max(a.v, later.v);
    return a;
}

uint chosen_of(Best b) { return b.v >= 64u ? 63u - (b.v & 63u) : NONE; }

// A window's last slice (depth 2) as the next window's first (depth 0): its taps 32 lower.
Best as_first_slice(Best last) {
    last.v = last.v >= 64u ? last.v + 32u : 0u;
    return last;
}

#else

// A window's best key so far and its chosen element (depth << 4 | row << 2 | column); with the padding key INT_MIN,
// no element (chosen_of).
struct Best {
    int key;
    uint chosen;
};

Best no_best() {
    Best b;
    b.key = int(0x80000000u);  // padding keys equal it: they never win
    b.chosen = NONE;
    return b;
}

// `a` then the taps of `later` (all after a's): a later tap wins only with a greater key.
Best combine(Best a, Best later) {
    a.chosen = later.key > a.key ? later.chosen : a.chosen;
    a.key = max(a.key, later.key);
    return a;
}

Best tap(uint at, uint chosen) {
    Best b;
    b.key = g_key[at];
    b.chosen = chosen;
    return b;
}

// The first maximum of a window's 3 x 3 taps in depth slice `slice` of g_key (0 or 1), as window depth `kd`; the
// maxima of rows, then of the rows' (a shorter chain of dependent operations than tap after tap).
Best slice_argmax(uint slice, uint r, uint c, uint kd) {
    uint base = (slice * REGION_H + 2 * r) * KEY_W + 2 * c + FIRST_KEY;
    Best row[3];
    [unroll] for (uint kh = 0; kh < 3; ++kh) {
        uint at = base + kh * KEY_W, first = kd << 4 | kh << 2;
        row[kh] = combine(combine(tap(at, first), tap(at + 1u, first + 1u)), tap(at + 2u, first + 2u));
    }
    return combine(combine(row[0], row[1]), row[2]);
}

// Only padding (its first tap kept by combine): no element.
uint chosen_of(Best b) { return b.key == int(0x80000000u) ? NONE : b.chosen; }

// A window's last slice (depth 2) as the next window's first (depth 0).
Best as_first_slice(Best last) {
    last.chosen &= 0xFu;
    return last;
}

#endif

// Step 2 for the box's windows of depth s: their choices and dY to g_chosen[s & 1] and g_dy[s & 1]; `kept`, the
// argmax of each slot's slice 2s - 1 (as window depth 0), becomes that of slice 2s + 1.
void choose_windows(Walk w, Geometry g, uint s, uint tid, uint dy[BOX_SLOTS], inout Best kept[BOX_SLOTS]) {
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint b = tid + WORKGROUP_SIZE * i, r = b / BOX_W, c = b % BOX_W;
        if (b < BOX) {
            Best mid = slice_argmax(0, r, c, 1), last = slice_argmax(1, r, c, 2);
            Best best = combine(combine(kept[i], mid), last);
            bool exists = s < g.out_d && w.row0 + r < g.out_h && w.col0 + c < g.out_w;
            uint code = exists ? cell_code(chosen_of(best)) : CODE_NONE;
            g_chosen[s & 1u][b] = code | (code != CODE_NONE && !is_plain(dy[i]) ? NOT_PLAIN : 0u);
            g_dy[s & 1u][b] = dy[i];
            kept[i] = as_first_slice(last);  // slice 2s + 1 is window s + 1's first
        }
    }
}

// Step 3: the cell of window (s - 1, row0 + r, col0 + c). Window n = a << 2 | b << 1 | c of the 8 neighbours
// (increasing dY order) can reach only the elements at or past it on each axis: 27 (element, window) pairs.
void write_cell(Walk w, Geometry g, uint s, uint r, uint c) {
    uint code[8], dy[8], flags = 0;
    [unroll] for (uint n = 0; n < 8; ++n) {
        uint a = n >> 2, b = (n >> 1) & 1u, cc = n & 1u;
        uint slot = (r + b) * BOX_W + c + cc;
        code[n] = g_chosen[(s - 1u + a) & 1u][slot];
        dy[n] = g_dy[(s - 1u + a) & 1u][slot];
        flags |= code[n];
    }
    bool plain = (flags & NOT_PLAIN) == 0;
    uint sum[8];
    // One branch around the whole gather: the rare path's guarded adds stay out of the plain one's instructions
    // (and registers).
    [branch] if (plain) {
        [unroll] for (uint e = 0; e < 8; ++e) {
            precise float f = 0.0f;
            [unroll] for (uint n = 0; n < 8; ++n) {
                // Window n can reach element e; only the terms are added (a predicated add).
                if ((n & ~e) == 0 && code[n] == (n << 3 | e)) f += asfloat(dy[n]);
            }
            sum[e] = plain_bits(f);
        }
    } else {
        [unroll] for (uint e = 0; e < 8; ++e) {
            uint acc = 0;  // +0.0f
            [unroll] for (uint n = 0; n < 8; ++n) {
                if ((n & ~e) == 0 && (code[n] & ~NOT_PLAIN) == (n << 3 | e)) acc = guarded_add(acc, dy[n]);
            }
            sum[e] = acc;
        }
    }
    uint h0 = 2 * (w.row0 + r), w0 = 2 * (w.col0 + c);
    [unroll] for (uint e = 0; e < 8; e += 2) {
        uint d = 2 * (s - 1u) + (e >> 2), h = h0 + ((e >> 1) & 1u);
        if (d < g.in_d && h < g.in_h && w0 < g.in_w) {
            uint at = w.x_base + (d * g.in_h + h) * g.in_w + w0;
#if DTYPE == DT_F16
            dx_buf[at >> 1] = float_to_half_bits_fast(sum[e]) | (float_to_half_bits_fast(sum[e + 1]) << 16);
#else
            dx_buf[at] = sum[e];
            if (w0 + 1u < g.in_w) dx_buf[at + 1u] = sum[e + 1];
#endif
        }
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint index = pc.base / WORKGROUP_SIZE + group.x;
    if (index >= pc.count) return;  // uniform per group, before any barrier
    uint tid = local.x;
    Geometry g;
    g.in_d = geometry[FAST_WORD_IN_D], g.in_h = geometry[FAST_WORD_IN_H], g.in_w = geometry[FAST_WORD_IN_W];
    g.out_d = geometry[FAST_WORD_OUT_D], g.out_h = geometry[FAST_WORD_OUT_H], g.out_w = geometry[FAST_WORD_OUT_W];
    Walk w = locate_walk(pc.first + index, g);
    uint r = tid / WALK_TILE_COLS, c = tid % WALK_TILE_COLS;  // the thread's owned window

    Best kept[BOX_SLOTS];  // slice -1: padding
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) kept[i] = no_best();
    const Slots slots = thread_slots(w, g, tid);
    uint x[LOAD_SLOTS], inside, dy[BOX_SLOTS];
    load_step(w, g, slots, 0, x, inside, dy);
    // Steps 0 to out_d: step s chooses depth window s (none at out_d) and writes the cells of s - 1.
    [loop] for (uint s = 0; s <= g.out_d; ++s) {
        store_keys(tid, x, inside);
        GroupMemoryBarrierWithGroupSync();
        uint next_x[LOAD_SLOTS], next_inside, next_dy[BOX_SLOTS];
        load_step(w, g, slots, s + 1u, next_x, next_inside, next_dy);  // under way during this step's work
        choose_windows(w, g, s, tid, dy, kept);
        GroupMemoryBarrierWithGroupSync();
        // The next step's store_keys writes g_key, read by nobody after the barrier above; its choose_windows
        // writes the g_chosen of parity s - 1, after its first barrier, which this step's reads precede.
        if (s > 0) write_cell(w, g, s, r, c);
        x = next_x;
        inside = next_inside;
        dy = next_dy;
    }
}
