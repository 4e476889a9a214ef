// Max-pooling grad, the fast kernel for the common case: 2-D pooling (the depth of 5-D tensors folded into the
// planes), square windows of K = 2 or 3 and strides T = 1-3 (compile time: loops unrolled, groupshared sizes
// exact), dilation 1, any padding. Same rule and order of additions as kernels/maxpool_grad.hlsl (the general
// kernel), so the same bits.
//
// A workgroup runs TILES_PER_GROUP consecutive tiles of TILE_W columns x TILE_H rows of one plane (sizes in
// interface/maxpool_grad.h), each in three steps:
//   1. load: the input region the tile's windows read and the windows' dY, every load of a thread issued at once
//      and issued during the previous tile's step 2, so their latency is hidden; the region's pool keys go to
//      groupshared memory, padding as INT_MIN (never wins), each X element keyed once;
//   2. argmax: every window reaching the tile, K x K taps from groupshared memory; its chosen region index and
//      its dY go to groupshared memory;
//   3. gather: each dX element compares its region index with the choices of the (at most ceil(K/T)^2) windows
//      covering it, then adds the matching dY in increasing dY order: plain float adds when every dY of the box
//      is "plain" (g_not_plain), guarded_add (exact_float.hlsli) otherwise.
// Variants: DTYPE = DT_F32 or DT_F16 (even row lengths only: a thread writes one word of two elements), K, T.
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: uints, the FAST_WORD_* header and the
// tables of interface/maxpool_grad.h, written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#if !defined(K) || !defined(T)
#error "the build passes -DK=2 or 3 and -DT=1, 2 or 3"
#endif
static const uint TILE_H = T == 1 ? FAST_TILE_ROWS_STRIDE_1 : FAST_TILE_ROWS_STRIDED;
static const uint TILE_W = FAST_TILE_COLS;
// Tiles a workgroup runs one after another, each one's loads issued while the previous one is computed.
static const uint TILES_PER_GROUP = FAST_TILES_PER_GROUP;
#define BOX_H ((TILE_H + K - 2) / T + 1)  // most window rows that reach a tile's rows
#define BOX_W ((TILE_W + K - 2) / T + 1)
#define REGION_H ((BOX_H - 1) * T + K)     // input rows those windows read
#define REGION_W ((BOX_W - 1) * T + K)
#define REGION (REGION_H * REGION_W)
#define BOX (BOX_H * BOX_W)
#define REGION_SLOTS ((REGION + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE)  // per thread
#define BOX_SLOTS ((BOX + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE)
#define COVER ((K + T - 1) / T)            // most windows covering a coordinate, per axis
#define ROW_BITS 0x111u                    // bit 4j of each of COVER (<= 3) rows
#define NONE 0xFFFFFFFFu

[[vk::binding(3, 0)]] StructuredBuffer<uint> geometry;

groupshared int g_key[REGION];
groupshared uint g_chosen[BOX + (COVER - 1) * (BOX_W + 1)];  // region index of each window's chosen element, or
                                                              // NONE; room past the box for masked-out reads
groupshared uint g_dy[BOX];      // its dY as float32 bits
// Per tile (double-buffered: the next tile clears its own while this one's are still read), non-zero when some
// dY of the box is not "plain": plain values are zeros and finite normals of at least 2^-101. Sums of plain
// values in any order never meet a denormal (a sum of two normals, one at least 2^-101, is zero or at least
// 2^-125), so plain hardware adds give the CPU's bits under any denormal mode.
groupshared uint g_not_plain[2];

bool is_plain(uint v) {
    uint e = (v >> 23) & 0xFFu;
    return e - 26u < 229u || (v & 0x7FFFFFFFu) == 0;  // exponent 26-254 or a zero
}

// dX of the element at region index `me`: its covering windows from the tables (first | count << 16). `plain`:
// every dY of the box is plain (see g_not_plain).
uint gather(uint row_cover, uint col_cover, uint box_row0, uint box_col0, uint me, bool plain) {
    uint rows = row_cover >> 16, cols = col_cover >> 16;
    // An element no window covers may get a first window before the box: its slots are read (g_chosen has room
    // for that) but masked out.
    uint slot0 = min(((row_cover & 0xFFFFu) - box_row0) * BOX_W + (col_cover & 0xFFFFu) - box_col0, BOX);
    uint valid = (((1u << cols) - 1u) * ROW_BITS) & ((1u << (4u * rows)) - 1u);
    uint matches = 0;  // bit 4j + k: window (first row + j, first column + k) chose this element
    [unroll] for (uint j = 0; j < COVER; ++j) {
        [unroll] for (uint k = 0; k < COVER; ++k)
            matches |= g_chosen[slot0 + j * BOX_W + k] == me ? 1u << (4u * j + k) : 0u;
    }
    matches &= valid;
    uint acc = 0;  // +0.0f
#if COVER == 1
    if (matches != 0) acc = guarded_add(0u, g_dy[slot0]);  // windows that do not overlap: one at most
#else
    // Increasing bits: increasing (row, column) of dY. A local maximum is chosen by up to K*K windows, and the
    // warp runs as many rounds as its busiest lane: keep the round short.
    if (plain) {
        precise float sum = 0.0f;
        [loop] while (matches != 0) {
            uint b = firstbitlow(matches);
            matches &= matches - 1u;
            sum += asfloat(g_dy[slot0 + (b >> 2) * BOX_W + (b & 3u)]);
        }
        return asuint(sum);
    }
    [loop] while (matches != 0) {
        uint b = firstbitlow(matches);
        matches &= matches - 1u;
        acc = guarded_add(acc, g_dy[slot0 + (b >> 2) * BOX_W + (b & 3u)]);
    }
#endif
    return acc;
}

// Where a tile lies; `valid` is false past the batch and for the grid's padding (both uniform per group).
struct Tile {
    bool valid;
    uint tx, ty;
    uint box_row0, box_rows, box_col0, box_cols;
    int region_row0, region_col0;
    uint x_base, dy_base;  // X's plane, dY's first window
};

Tile locate_tile(uint index) {  // index within the batch
    Tile t = (Tile)0;
    t.valid = index < pc.count;
    uint tile = pc.first + index;
    uint cols_log2 = geometry[FAST_WORD_GRID_COLS_LOG2], rows_log2 = geometry[FAST_WORD_GRID_ROWS_LOG2];
    t.tx = tile & ((1u << cols_log2) - 1u);
    t.ty = (tile >> cols_log2) & ((1u << rows_log2) - 1u);
    uint plane = tile >> (cols_log2 + rows_log2);
    t.valid = t.valid && t.tx < geometry[FAST_WORD_GRID_COLS] && t.ty < geometry[FAST_WORD_GRID_ROWS];
    if (t.valid) {
        uint row_box = geometry[geometry[FAST_WORD_ROW_TABLE] + t.ty];
        uint col_box = geometry[geometry[FAST_WORD_COL_TABLE] + t.tx];
        t.box_row0 = row_box & 0xFFFFu;
        t.box_rows = row_box >> 16;
        t.box_col0 = col_box & 0xFFFFu;
        t.box_cols = col_box >> 16;
    }
    t.region_row0 = int(t.box_row0 * T) - int(geometry[FAST_WORD_PAD_H]);
    t.region_col0 = int(t.box_col0 * T) - int(geometry[FAST_WORD_PAD_W]);
    t.x_base = pc.x_origin + plane * geometry[FAST_WORD_X_PLANE];
    t.dy_base = pc.dy_origin + plane * geometry[FAST_WORD_DY_PLANE] + t.box_row0 * geometry[FAST_WORD_OUT_W] +
                t.box_col0;
    return t;
}

bool region_inside(Tile t, uint s, out uint at) {  // region slot s: inside the plane (else padding), and where
    int r = t.region_row0 + int(s / REGION_W), c = t.region_col0 + int(s % REGION_W);
    at = t.x_base + uint(r) * geometry[FAST_WORD_IN_W] + uint(c);
    return s < REGION && r >= 0 && r < int(geometry[FAST_WORD_IN_H]) && c >= 0 && c < int(geometry[FAST_WORD_IN_W]);
}

// Step 1's loads, issued together and used only later (the next tile's, while this one is computed).
void load_tile(Tile t, uint tid, out uint x[REGION_SLOTS], out uint dy[BOX_SLOTS]) {
    [unroll] for (uint i = 0; i < REGION_SLOTS; ++i) {
        uint at;
        x[i] = 0;
        if (region_inside(t, tid + WORKGROUP_SIZE * i, at) && t.valid) x[i] = load_x(at);
    }
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        uint r = s / BOX_W, c = s % BOX_W;
        dy[i] = 0;
        if (s < BOX && r < t.box_rows && c < t.box_cols && t.valid)
            dy[i] = load_dy_f32(t.dy_base + r * geometry[FAST_WORD_OUT_W] + c);
    }
}

// Step 1: the region's pool keys (padding as INT_MIN) to groupshared memory.
void store_keys(Tile t, uint tid, uint x[REGION_SLOTS]) {
    [unroll] for (uint i = 0; i < REGION_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i, at;
        bool inside = region_inside(t, s, at);
        if (s < REGION) g_key[s] = inside ? pool_key(x[i]) : int(0x80000000u);
    }
}

// Step 2: the argmax of every window of the box, and its dY; g_not_plain[parity] notes a dY that is not plain.
void choose_windows(Tile t, uint tid, uint dy[BOX_SLOTS], uint parity) {
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        uint r = s / BOX_W, c = s % BOX_W;
        if (s < BOX && r < t.box_rows && c < t.box_cols) {
            uint base = r * T * REGION_W + c * T;
            int best = int(0x80000000u);  // padding keys equal it: they never win
            uint chosen = NONE;
            [unroll] for (uint kh = 0; kh < K; ++kh) {
                [unroll] for (uint kw = 0; kw < K; ++kw) {
                    uint at = base + kh * REGION_W + kw;
                    int key = g_key[at];
                    chosen = key > best ? at : chosen;
                    best = max(best, key);
                }
            }
            g_chosen[s] = chosen;
            g_dy[s] = dy[i];
            if (!is_plain(dy[i])) g_not_plain[parity] = 1;
        }
    }
}

// Step 3: gather and write, lanes along the row: f32 one element each (TILE_W lanes, WORKGROUP_SIZE / TILE_W rows
// at a time), fp16 a word of two (TILE_W / 2 lanes, twice the rows).
void write_tile(Tile t, uint tid, bool plain, uint in_h, uint in_w) {
    uint row0 = t.ty * TILE_H, col0 = t.tx * TILE_W;
    uint row_table = geometry[FAST_WORD_ROW_TABLE] + geometry[FAST_WORD_GRID_ROWS];
    uint col_table = geometry[FAST_WORD_COL_TABLE] + geometry[FAST_WORD_GRID_COLS];
#if DTYPE == DT_F16
    const uint lanes_log2 = FAST_TILE_COLS_LOG2 - 1u, rows = WORKGROUP_SIZE >> lanes_log2;
    uint c = 2u * (tid & ((1u << lanes_log2) - 1u));
    [unroll] for (uint i = 0; i < TILE_H / rows; ++i) {
        uint h = row0 + (tid >> lanes_log2) + rows * i, w = col0 + c;
        if (h < in_h && w < in_w) {  // in_w is even: w + 1 is in the row and in the tile
            uint row_cover = geometry[row_table + h];
            uint me = (h - uint(t.region_row0)) * REGION_W + w - uint(t.region_col0);
            uint low = gather(row_cover, geometry[col_table + w], t.box_row0, t.box_col0, me, plain);
            uint high = gather(row_cover, geometry[col_table + w + 1u], t.box_row0, t.box_col0, me + 1u, plain);
            dx_buf[(t.x_base + h * in_w + w) >> 1] = float_to_half_bits(low) | (float_to_half_bits(high) << 16);
        }
    }
#else
    const uint rows = WORKGROUP_SIZE >> FAST_TILE_COLS_LOG2;
    uint lane = tid & (TILE_W - 1u);
    [unroll] for (uint i = 0; i < TILE_H / rows; ++i) {
        uint h = row0 + (tid >> FAST_TILE_COLS_LOG2) + rows * i, w = col0 + lane;
        if (h < in_h && w < in_w) {
            uint me = (h - uint(t.region_row0)) * REGION_W + w - uint(t.region_col0);
            dx_buf[t.x_base + h * in_w + w] =
                gather(geometry[row_table + h], geometry[col_table + w], t.box_row0, t.box_col0, me, plain);
        }
    }
#endif
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint first = (pc.base / WORKGROUP_SIZE + group.x) * TILES_PER_GROUP;
    if (first >= pc.count) return;  // uniform per group, before any barrier
    uint tid = local.x;
    uint in_h = geometry[FAST_WORD_IN_H], in_w = geometry[FAST_WORD_IN_W];
    Tile t = locate_tile(first);
    uint x[REGION_SLOTS], dy[BOX_SLOTS];
    load_tile(t, tid, x, dy);

    [loop] for (uint j = 1; j <= TILES_PER_GROUP; ++j) {
        store_keys(t, tid, x);
        if (tid == 0) g_not_plain[j & 1u] = 0;
        GroupMemoryBarrierWithGroupSync();

        // The next tile's loads are under way during this one's steps 2 and 3.
        Tile next = locate_tile(first + j);
        next.valid = next.valid && j < TILES_PER_GROUP;
        uint next_x[REGION_SLOTS], next_dy[BOX_SLOTS];
        load_tile(next, tid, next_x, next_dy);
        choose_windows(t, tid, dy, j & 1u);
        GroupMemoryBarrierWithGroupSync();

        // The next tile's step 1 only writes g_key, which nobody reads after the barrier above.
        if (t.valid) write_tile(t, tid, g_not_plain[j & 1u] == 0, in_h, in_w);
        if (first + j >= pc.count || j == TILES_PER_GROUP) break;  // uniform (a padding tile is skipped, not an end)
        t = next;
        x = next_x;
        dy = next_dy;
    }
}
