// Max-pooling grad, the fast kernel for the common cases: 2-D pooling (the depth of 5-D tensors folded into the
// planes) with square windows of K = 2 or 3 and strides T = 1-3, and 3-D pooling with cube windows of 2 at stride 1
// on every axis (DEPTH = 1); all compile time (loops unrolled, groupshared sizes exact), dilation 1, any
// padding. Same rule and order of additions as kernels/maxpool_grad.hlsl (the general kernel), so the same bits.
//
// A workgroup runs TILES_PER_GROUP consecutive tiles of TILE_W columns x TILE_H rows x TILE_D depth slices of one
// plane (sizes in interface/maxpool_grad.h; TILE_D = 1 for 2-D), each in three steps:
//   1. load: the input region the tile's windows read and the windows' dY, every load of a thread issued at once
//      and issued during the previous tile's step 2, so their latency is hidden; the region's pool keys go to
//      groupshared memory, padding as INT_MIN (never wins), each X element keyed once;
//   2. argmax: every window reaching the tile, K x K (x K) taps from groupshared memory; its chosen region index
//      and its dY go to groupshared memory;
//   3. gather: each dX element compares its region index with the choices of the (at most ceil(K/T) per axis)
//      windows covering it, then adds the matching dY in increasing dY order: plain float adds when every dY of
//      the box is "plain" (g_not_plain), guarded_add (exact_float.hlsli) otherwise.
// Variants: DTYPE = DT_F32 or DT_F16 (even row lengths only: a thread writes one word of two elements), K, T,
// DEPTH = 0 or 1, NARROW = 1 for 2-D tiles of half the columns and twice the rows (rows of up to 32 elements).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: uints, the FAST_WORD_* header and the
// tables of interface/maxpool_grad.h, written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#if !defined(K) || !defined(T) || !defined(DEPTH) || !defined(NARROW)
#error "the build passes -DK=2 or 3, -DT=1, 2 or 3, -DDEPTH=0 or 1 and -DNARROW=0 or 1"
#endif
#if DEPTH && (NARROW || K != 2 || T != 1)
#error "3-D tiles are wide, for windows of 2 at stride 1"
#endif
#if DEPTH
#define KD K  // the depth's window and stride
#define TD T
static const uint TILE_H = FAST_TILE_ROWS_3D;
static const uint TILE_D = FAST_TILE_DEPTH_3D;
#else
#define KD 1
#define TD 1
static const uint TILE_H = (T == 1 ? FAST_TILE_ROWS_STRIDE_1 : FAST_TILE_ROWS_STRIDED) << NARROW;
static const uint TILE_D = 1;
#endif
static const uint TILE_COLS_LOG2 = NARROW ? FAST_NARROW_TILE_COLS_LOG2 : FAST_TILE_COLS_LOG2;
static const uint TILE_W = 1u << TILE_COLS_LOG2;
// Tiles a workgroup runs one after another, each one's loads issued while the previous one is computed.
static const uint TILES_PER_GROUP = FAST_TILES_PER_GROUP;
#define BOX_D ((TILE_D + KD - 2) / TD + 1)  // most windows that reach a tile's depth slices
#define BOX_H ((TILE_H + K - 2) / T + 1)    // ... rows
#define BOX_W ((TILE_W + K - 2) / T + 1)    // ... columns
#define REGION_D ((BOX_D - 1) * TD + KD)     // input coordinates those windows read
#define REGION_H ((BOX_H - 1) * T + K)
#define REGION_W ((BOX_W - 1) * T + K)
// g_key holds the region as rows of KEY_W keys from column key_col0 (see Tile). X is loaded KEY_UNIT elements at a
// time: fp16 a word of two, from an even column (a row starts up to one column before the region).
#if DTYPE == DT_F16
#define KEY_UNIT 2
#define KEY_W (((REGION_W + 2) / 2) * 2)
#else
#define KEY_UNIT 1
#define KEY_W REGION_W
#endif
#define KEY_SLICE (REGION_H * KEY_W)
#define KEYS (REGION_D * KEY_SLICE)
#define BOX_SLICE (BOX_H * BOX_W)
#define BOX (BOX_D * BOX_SLICE)
#define LOAD_SLOTS ((KEYS / KEY_UNIT + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE)  // per thread: at most 21 (< 32, the
                                                                            // bits of load_tile's mask)
#define BOX_SLOTS ((BOX + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE)
#define COVER ((K + T - 1) / T)            // most windows covering a coordinate, per axis
#define COVER_D ((KD + TD - 1) / TD)
#define ROW_BITS 0x111u                    // bit 4j of each of COVER (<= 3) rows
#define NONE 0xFFFFFFFFu

DMLGRAD_SRV(uint, geometry, 3);

groupshared int g_key[KEYS];
groupshared uint g_chosen[BOX + (COVER - 1) * (BOX_W + 1)];  // region index of each window's chosen element, or
                                                              // NONE; room past the box for masked-out reads
groupshared uint g_dy[BOX];      // its dY as float32 bits
// Per tile (double-buffered: the next tile clears its own while this one's are still read), non-zero when some
// dY of the box is not plain (is_plain, maxpool_grad_common.hlsli).
groupshared uint g_not_plain[2];

// The windows of one depth slice of the box covering the element at region index `me` (rows and columns from
// the tables: first | count << 16), as bits 4j + k: window (first row + j, first column + k) chose it. `slot0`
// is the first one's box slot.
uint slice_matches(uint row_cover, uint col_cover, uint slice, uint box_row0, uint box_col0, uint me,
                   out uint slot0) {
    uint rows = row_cover >> 16, cols = col_cover >> 16;
    // An element no window covers may get a first window before the box: its slots are read (g_chosen has room
    // for that) but masked out.
    slot0 = slice * BOX_SLICE +
            min(((row_cover & 0xFFFFu) - box_row0) * BOX_W + (col_cover & 0xFFFFu) - box_col0, BOX_SLICE);
    uint valid = (((1u << cols) - 1u) * ROW_BITS) & ((1u << (4u * rows)) - 1u);
    uint matches = 0;
    [unroll] for (uint j = 0; j < COVER; ++j) {
        [unroll] for (uint k = 0; k < COVER; ++k)
            matches |= g_chosen[slot0 + j * BOX_W + k] == me ? 1u << (4u * j + k) : 0u;
    }
    return matches & valid;
}

// dX of the element at region index `me`: its covering windows from the tables (first | count << 16), box-
// relative depth slice first. `plain`: every dY of the box is plain (see g_not_plain).
uint gather(uint depth_cover, uint row_cover, uint col_cover, uint box_row0, uint box_col0, uint me, bool plain) {
    uint slot0;
#if COVER == 1 && COVER_D == 1
    // Windows that do not overlap: one at most. (An if, not ?:, which glslang runs both sides of: a depth slice
    // that no window covers may name a slice past the box.)
    uint acc = 0;
    if (depth_cover >> 16 != 0) {
        uint matches = slice_matches(row_cover, col_cover, depth_cover & 0xFFFFu, box_row0, box_col0, me, slot0);
        if (matches != 0) acc = guarded_add(0u, g_dy[slot0]);
    }
    return acc;
#else
    // Increasing slices, then increasing bits: increasing (depth, row, column) of dY. A local maximum is chosen
    // by up to K^3 windows, and the warp runs as many rounds as its busiest lane: keep the round short.
    precise float sum = 0.0f;
    uint acc = 0;  // +0.0f
    [unroll] for (uint jd = 0; jd < COVER_D; ++jd) {
        if (jd < depth_cover >> 16) {
            uint matches = slice_matches(row_cover, col_cover, (depth_cover & 0xFFFFu) + jd, box_row0, box_col0,
                                         me, slot0);
            if (plain) {
                [loop] while (matches != 0) {
                    uint b = firstbitlow(matches);
                    matches &= matches - 1u;
                    sum += asfloat(g_dy[slot0 + (b >> 2) * BOX_W + (b & 3u)]);
                }
            } else {
                [loop] while (matches != 0) {
                    uint b = firstbitlow(matches);
                    matches &= matches - 1u;
                    acc = guarded_add(acc, g_dy[slot0 + (b >> 2) * BOX_W + (b & 3u)]);
                }
            }
        }
    }
    return plain ? asuint(sum) : acc;
#endif
}

// An axis of a tile: the windows reaching it (box_first and box_count, from the tables) and the input coordinates
// they read (region_first, padding included; region_size of them, at most the compiled REGION_* size).
struct TileAxis {
    uint box_first, box_count;
    int region_first;
    uint region_size;
};

TileAxis tile_axis(uint table, uint index, uint stride, uint window, uint pad) {
    uint box = geometry[table + index];
    TileAxis a;
    a.box_first = box & 0xFFFFu;
    a.box_count = box >> 16;
    a.region_first = int(a.box_first * stride) - int(pad);
    a.region_size = a.box_count == 0 ? 0u : (a.box_count - 1u) * stride + window;
    return a;
}

// Where a tile lies; `valid` is false past the batch and for the grid's padding (both uniform per group).
struct Tile {
    bool valid;
    uint tx, ty, tz;
    TileAxis d, h, w;
    int key_col0;  // X's column of each g_key row's first key: the region's first, for fp16 rounded down to even
    uint x_base, dy_base;  // X's plane, dY's first window
};

Tile locate_tile(uint index) {  // index within the batch
    Tile t = (Tile)0;
    t.valid = index < pc.count;
    uint tile = pc.first + index;
    uint cols_log2 = geometry[FAST_WORD_GRID_COLS_LOG2], rows_log2 = geometry[FAST_WORD_GRID_ROWS_LOG2];
    t.tx = tile & ((1u << cols_log2) - 1u);
    t.ty = (tile >> cols_log2) & ((1u << rows_log2) - 1u);
    t.valid = t.valid && t.tx < geometry[FAST_WORD_GRID_COLS] && t.ty < geometry[FAST_WORD_GRID_ROWS];
#if DEPTH
    uint depth_log2 = geometry[FAST_WORD_GRID_DEPTH_LOG2];
    t.tz = (tile >> (cols_log2 + rows_log2)) & ((1u << depth_log2) - 1u);
    t.valid = t.valid && t.tz < geometry[FAST_WORD_GRID_DEPTH];
    uint plane = tile >> (cols_log2 + rows_log2 + depth_log2);
#else
    uint plane = tile >> (cols_log2 + rows_log2);  // tz = 0
#endif
    if (t.valid) {
#if DEPTH
        t.d = tile_axis(geometry[FAST_WORD_DEPTH_TABLE], t.tz, TD, KD, geometry[FAST_WORD_PAD_D]);
#else
        t.d.box_count = t.d.region_size = 1;  // one slice (2-D: kept constant so that it folds away)
#endif
        t.h = tile_axis(geometry[FAST_WORD_ROW_TABLE], t.ty, T, K, geometry[FAST_WORD_PAD_H]);
        t.w = tile_axis(geometry[FAST_WORD_COL_TABLE], t.tx, T, K, geometry[FAST_WORD_PAD_W]);
    }
#if DTYPE == DT_F16
    t.key_col0 = t.w.region_first & ~1;
#else
    t.key_col0 = t.w.region_first;
#endif
    t.x_base = pc.x_origin + plane * geometry[FAST_WORD_X_PLANE];
    uint out_h = geometry[FAST_WORD_OUT_H], out_w = geometry[FAST_WORD_OUT_W];
    t.dy_base = pc.dy_origin + plane * geometry[FAST_WORD_DY_PLANE] + (t.d.box_first * out_h + t.h.box_first) * out_w +
                t.w.box_first;
    return t;
}

// Load slot s, the keys from g_key index s * KEY_UNIT: inside the plane (else padding, or for 3-D a coordinate no
// window of the tile reads), and X's element there (fp16: even, and so is in_w: both elements are in the row).
bool load_inside(Tile t, uint s, out uint at) {
    uint k = s * KEY_UNIT;
#if DEPTH
    uint sd = k / KEY_SLICE, sh = (k / KEY_W) % REGION_H, sw = k % KEY_W;
#else
    uint sd = 0, sh = k / KEY_W, sw = k % KEY_W;  // k < KEYS where it matters
#endif
    int d = t.d.region_first + int(sd), h = t.h.region_first + int(sh), w = t.key_col0 + int(sw);
    uint in_h = geometry[FAST_WORD_IN_H], in_w = geometry[FAST_WORD_IN_W];
    at = t.x_base + (uint(d) * in_h + uint(h)) * in_w + uint(w);
    bool inside = k < KEYS && h >= 0 && h < int(in_h) && w >= 0 && w < int(in_w);
#if DEPTH
    // The compiled region holds the windows of any alignment; a tile's own may read fewer coordinates.
    inside = inside && sd < t.d.region_size && sh < t.h.region_size && d >= 0 && d < int(geometry[FAST_WORD_IN_D]);
#endif
    return inside;
}

// Box slot s: a window of the tile's box, and its box-relative (depth, row, column).
bool box_window(Tile t, uint s, out uint3 b) {
#if DEPTH
    b = uint3(s / BOX_SLICE, (s / BOX_W) % BOX_H, s % BOX_W);
#else
    b = uint3(0u, s / BOX_W, s % BOX_W);
#endif
    return s < BOX && b.x < t.d.box_count && b.y < t.h.box_count && b.z < t.w.box_count;
}

// Step 1's loads, issued together and used only later (the next tile's, while this one is computed); bit i of
// `inside`: x[i] was loaded (else padding or unused).
void load_tile(Tile t, uint tid, out uint x[LOAD_SLOTS], out uint inside, out uint dy[BOX_SLOTS]) {
    inside = 0;
    [unroll] for (uint i = 0; i < LOAD_SLOTS; ++i) {
        uint at;
        x[i] = 0;
        if (load_inside(t, tid + WORKGROUP_SIZE * i, at) && t.valid) {
#if DTYPE == DT_F16
            x[i] = x_buf[at >> 1];
#else
            x[i] = load_x(at);
#endif
            inside |= 1u << i;
        }
    }
    uint out_h = geometry[FAST_WORD_OUT_H], out_w = geometry[FAST_WORD_OUT_W];
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint3 b;
        dy[i] = 0;
        if (box_window(t, tid + WORKGROUP_SIZE * i, b) && t.valid)
            dy[i] = load_dy_f32(t.dy_base + (b.x * out_h + b.y) * out_w + b.z);
    }
}

// Step 1: the region's pool keys (padding as INT_MIN) to groupshared memory.
#include "maxpool_grad_keys.hlsli"

// Step 2: the argmax of every window of the box, and its dY; g_not_plain[parity] notes a dY that is not plain.
void choose_windows(Tile t, uint tid, uint dy[BOX_SLOTS], uint parity) {
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        uint3 b;
        if (box_window(t, s, b)) {
            uint base = (b.x * TD * REGION_H + b.y * T) * KEY_W + b.z * T;
#if DTYPE == DT_F16
            base += uint(t.w.region_first - t.key_col0);
#endif
            int best = int(0x80000000u);  // padding keys equal it: they never win
            uint chosen = NONE;
            [unroll] for (uint kd = 0; kd < KD; ++kd) {
                [unroll] for (uint kh = 0; kh < K; ++kh) {
                    [unroll] for (uint kw = 0; kw < K; ++kw) {
                        uint at = base + (kd * REGION_H + kh) * KEY_W + kw;
                        int key = g_key[at];
                        chosen = key > best ? at : chosen;
                        best = max(best, key);
                    }
                }
            }
            g_chosen[s] = chosen;
            g_dy[s] = dy[i];
            if (!is_plain(dy[i])) g_not_plain[parity] = 1;
        }
    }
}

// The covering windows of depth slice d and row h (tables' first | count << 16; the depth's box-relative) and the
// region index of the row's element 0.
struct RowCover {
    uint depth, row, me0;
};

RowCover row_cover(Tile t, uint d, uint h, uint depth_table, uint row_table) {
    RowCover c;
#if DEPTH
    uint depth = geometry[depth_table + d];
    c.depth = (depth & 0xFFFF0000u) | (((depth & 0xFFFFu) - t.d.box_first) & 0xFFFFu);
#else
    c.depth = 1u << 16;  // slice 0, one window
#endif
    c.row = geometry[row_table + h];
    c.me0 = (uint(int(d) - t.d.region_first) * REGION_H + uint(int(h) - t.h.region_first)) * KEY_W - uint(t.key_col0);
    return c;
}

// Step 3: gather and write, lanes along the row: f32 one element each (TILE_W lanes, WORKGROUP_SIZE / TILE_W rows
// at a time), fp16 a word of two (TILE_W / 2 lanes, twice the rows); a tile's rows are (depth slice, row).
void write_tile(Tile t, uint tid, bool plain, uint in_d, uint in_h, uint in_w) {
    uint d0 = t.tz * TILE_D, row0 = t.ty * TILE_H, col0 = t.tx * TILE_W;
    uint depth_table = geometry[FAST_WORD_DEPTH_TABLE] + geometry[FAST_WORD_GRID_DEPTH];
    uint row_table = geometry[FAST_WORD_ROW_TABLE] + geometry[FAST_WORD_GRID_ROWS];
    uint col_table = geometry[FAST_WORD_COL_TABLE] + geometry[FAST_WORD_GRID_COLS];
#if DTYPE == DT_F16
    const uint lanes_log2 = TILE_COLS_LOG2 - 1u, rows = WORKGROUP_SIZE >> lanes_log2;
    uint w = col0 + 2u * (tid & ((1u << lanes_log2) - 1u));
#else
    const uint lanes_log2 = TILE_COLS_LOG2, rows = WORKGROUP_SIZE >> lanes_log2;
    uint w = col0 + (tid & (TILE_W - 1u));
#endif
    [unroll] for (uint i = 0; i < TILE_D * TILE_H / rows; ++i) {
        uint r = (tid >> lanes_log2) + rows * i;
#if DEPTH
        uint d = d0 + r / TILE_H, h = row0 + r % TILE_H;
#else
        uint d = 0, h = row0 + r;
#endif
        if (d < in_d && h < in_h && w < in_w) {  // fp16: in_w is even, w + 1 is in the row and in the tile
            RowCover c = row_cover(t, d, h, depth_table, row_table);
            uint at = t.x_base + (d * in_h + h) * in_w + w;
            uint low = gather(c.depth, c.row, geometry[col_table + w], t.h.box_first, t.w.box_first, c.me0 + w,
                              plain);
#if DTYPE == DT_F16
            uint high = gather(c.depth, c.row, geometry[col_table + w + 1u], t.h.box_first, t.w.box_first,
                               c.me0 + w + 1u, plain);
            dx_buf[at >> 1] = float_to_half_bits_fast(low) | (float_to_half_bits_fast(high) << 16);
#else
            dx_buf[at] = low;
#endif
        }
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint first = (pc.base / WORKGROUP_SIZE + group.x) * TILES_PER_GROUP;
    if (first >= pc.count) return;  // uniform per group, before any barrier
    uint tid = local.x;
    uint in_d = 1, in_h = geometry[FAST_WORD_IN_H], in_w = geometry[FAST_WORD_IN_W];
#if DEPTH
    in_d = geometry[FAST_WORD_IN_D];
#endif
    Tile t = locate_tile(first);
    uint x[LOAD_SLOTS], inside, dy[BOX_SLOTS];
    load_tile(t, tid, x, inside, dy);

    [loop] for (uint j = 1; j <= TILES_PER_GROUP; ++j) {
        store_keys(tid, x, inside);
        if (tid == 0) g_not_plain[j & 1u] = 0;
        GroupMemoryBarrierWithGroupSync();

        // The next tile's loads are under way during this one's steps 2 and 3.
        Tile next = locate_tile(first + j);
        next.valid = next.valid && j < TILES_PER_GROUP;
        uint next_x[LOAD_SLOTS], next_inside, next_dy[BOX_SLOTS];
        load_tile(next, tid, next_x, next_inside, next_dy);
        choose_windows(t, tid, dy, j & 1u);
        GroupMemoryBarrierWithGroupSync();

        // The next tile's step 1 only writes g_key, which nobody reads after the barrier above.
        if (t.valid) write_tile(t, tid, g_not_plain[j & 1u] == 0, in_d, in_h, in_w);
        if (first + j >= pc.count || j == TILES_PER_GROUP) break;  // uniform (a padding tile is skipped, not an end)
        t = next;
        x = next_x;
        inside = next_inside;
        dy = next_dy;
    }
}
