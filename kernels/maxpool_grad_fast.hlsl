// Max-pooling grad, the fast kernel for the common case: 2-D pooling (the depth of 5-D tensors folded into the
// planes), square windows of K = 2 or 3 and strides T = 1-3 (compile time: loops unrolled, groupshared sizes
// exact), dilation 1, any padding. Same rule and order of additions as kernels/maxpool_grad.hlsl (the general
// kernel), so the same bits.
//
// One workgroup per tile of 64 columns x 8 rows (stride 1) or 16 rows of one plane, in three steps:
//   1. load: the input region the tile's windows read and the windows' dY, every load of a thread issued at once
//      (one memory latency per tile); the region's pool keys go to groupshared memory, padding as INT_MIN (never
//      wins), each X element keyed once;
//   2. argmax: every window reaching the tile, K x K taps from groupshared memory; its chosen region index and
//      its dY go to groupshared memory;
//   3. gather: each dX element compares its region index with the choices of the (at most ceil(K/T)^2) windows
//      covering it, then adds the matching dY in increasing dY order.
// Variants: DTYPE = DT_F32 or DT_F16 (even row lengths only: a thread writes one word of two elements), K, T.
//
// Bindings: 0 X, 1 dY, 2 dX (windows over a chunk of planes), 3 the geometry (uints, written by
// src/gpu/ops/maxpool_grad_dispatch.cpp):
//   [0..3] I_h, I_w, O_h, O_w   [4..7] T_h, T_w (both T), S_h, S_w   [8..11] log2 tile columns, log2 tile rows (grid,
//   padded to powers of two), tile columns, tile rows   [12..15] X plane, dY plane, offset of the row tables,
//   offset of the column tables. A row table holds, per tile row, (first window row | count << 16), then per
//   input row (first covering window row | count << 16); likewise the column table.
#include "maxpool_grad_arith.hlsli"

#if !defined(K) || !defined(T)
#error "the build passes -DK=2 or 3 and -DT=1, 2 or 3"
#endif
// Tile rows: taller tiles share more of the windows' overlap but hold more values per thread (fewer threads fit
// an SM); these were the fastest on an H100.
#if T == 1
#define TILE_H 8
#else
#define TILE_H 16
#endif
#define TILE_W 64
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

struct Params {
    uint base;      // first thread of this dispatch (append_dispatches)
    uint first;     // the batch's first tile
    uint count;     // tiles in the batch
    uint planes;    // planes in this chunk
    uint x_origin;  // element of the bound X window where the chunk's first plane starts (also dX's)
    uint dy_origin; // element of the bound dY window where the chunk's first plane starts
    uint pad0;
    uint pad1;
};
[[vk::push_constant]] ConstantBuffer<Params> pc;  // not a bare "Params pc": glslang makes that a uniform buffer

[[vk::binding(0, 0)]] StructuredBuffer<uint> x_buf;
[[vk::binding(1, 0)]] StructuredBuffer<uint> dy_buf;
[[vk::binding(2, 0)]] RWStructuredBuffer<uint> dx_buf;
[[vk::binding(3, 0)]] StructuredBuffer<uint> geometry;

groupshared int g_key[REGION];
groupshared uint g_chosen[BOX + (COVER - 1) * (BOX_W + 1)];  // region index of each window's chosen element, or
                                                              // NONE; room past the box for masked-out reads
groupshared uint g_dy[BOX];      // its dY as float32 bits

#if DTYPE == DT_F16
uint load_x(uint i) { return (x_buf[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu; }
uint load_dy_f32(uint j) { return half_to_float_bits((dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu); }
#else
uint load_x(uint i) { return x_buf[i]; }
uint load_dy_f32(uint j) { return dy_buf[j]; }
#endif

// dX of the element at region index `me`: its covering windows from the tables (first | count << 16).
uint gather(uint row_cover, uint col_cover, uint box_row0, uint box_col0, uint me) {
    uint rows = row_cover >> 16, cols = col_cover >> 16;
    // An element no window covers may get a first window before the box: its slots are read (g_chosen has room
    // for that) but masked out.
    uint slot0 = min(((row_cover & 0xFFFFu) - box_row0) * BOX_W + (col_cover & 0xFFFFu) - box_col0, BOX);
    uint valid = (((1u << cols) - 1u) * ROW_BITS) & ((1u << (4u * rows)) - 1u);
    uint matches = 0;  // bit 4j + k: window (first row + j, first column + k) chose this element
    [unroll] for (uint j = 0; j < COVER; ++j) {
        [unroll] for (uint k = 0; k < COVER; ++k) matches |= g_chosen[slot0 + j * BOX_W + k] == me ? 1u << (4u * j + k) : 0u;
    }
    matches &= valid;
    uint acc = 0;  // +0.0f
#if COVER == 1
    if (matches != 0) acc = exact_add(0u, g_dy[slot0]);  // windows that do not overlap: one at most
#else
    [loop] while (matches != 0) {  // increasing bits: increasing (row, column) of dY
        uint b = firstbitlow(matches);
        matches &= matches - 1u;
        acc = exact_add(acc, g_dy[slot0 + (b >> 2) * BOX_W + (b & 3u)]);
    }
#endif
    return acc;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint tile = pc.base / WORKGROUP_SIZE + group.x;
    if (tile >= pc.count) return;  // uniform per group, before any barrier
    tile += pc.first;
    uint in_h = geometry[0], in_w = geometry[1], out_w = geometry[3];
    uint pad_h = geometry[6], pad_w = geometry[7];
    uint cols_log2 = geometry[8], rows_log2 = geometry[9];
    uint tx = tile & ((1u << cols_log2) - 1u), ty = (tile >> cols_log2) & ((1u << rows_log2) - 1u);
    uint plane = tile >> (cols_log2 + rows_log2);
    if (tx >= geometry[10] || ty >= geometry[11]) return;  // grid padding, uniform per group
    uint x_plane = geometry[12], dy_plane = geometry[13], row_table = geometry[14], col_table = geometry[15];
    uint row_box = geometry[row_table + ty], col_box = geometry[col_table + tx];
    uint box_row0 = row_box & 0xFFFFu, box_rows = row_box >> 16;
    uint box_col0 = col_box & 0xFFFFu, box_cols = col_box >> 16;
    int region_row0 = int(box_row0 * T) - int(pad_h), region_col0 = int(box_col0 * T) - int(pad_w);
    uint tid = local.x;
    uint x_base = pc.x_origin + plane * x_plane;
    uint dy_base = pc.dy_origin + plane * dy_plane + box_row0 * out_w + box_col0;

    // 1. Every load of the thread first: X of the region (padding marked by `inside`), dY of the box.
    uint x[REGION_SLOTS];
    [unroll] for (uint i = 0; i < REGION_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        int r = region_row0 + int(s / REGION_W), c = region_col0 + int(s % REGION_W);
        x[i] = 0;
        if (s < REGION && r >= 0 && r < int(in_h) && c >= 0 && c < int(in_w)) x[i] = load_x(x_base + uint(r) * in_w + uint(c));
    }
    uint dy[BOX_SLOTS];
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        uint r = s / BOX_W, c = s % BOX_W;
        dy[i] = 0;
        if (s < BOX && r < box_rows && c < box_cols) dy[i] = load_dy_f32(dy_base + r * out_w + c);
    }
    [unroll] for (uint i = 0; i < REGION_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        int r = region_row0 + int(s / REGION_W), c = region_col0 + int(s % REGION_W);
        bool inside = r >= 0 && r < int(in_h) && c >= 0 && c < int(in_w);
        if (s < REGION) g_key[s] = inside ? pool_key(x[i]) : int(0x80000000u);
    }
    GroupMemoryBarrierWithGroupSync();

    // 2. The argmax of every window of the box.
    [unroll] for (uint i = 0; i < BOX_SLOTS; ++i) {
        uint s = tid + WORKGROUP_SIZE * i;
        uint r = s / BOX_W, c = s % BOX_W;
        if (s < BOX && r < box_rows && c < box_cols) {
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
        }
    }
    GroupMemoryBarrierWithGroupSync();

    // 3. Gather and write: lanes along the row (a word of two elements each for fp16).
    uint row0 = ty * TILE_H, col0 = tx * TILE_W;
#if DTYPE == DT_F16
    uint c = 2u * (tid & 31u);
    [unroll] for (uint i = 0; i < TILE_H / 8; ++i) {
        uint r = (tid >> 5) + 8u * i;
        uint h = row0 + r, w = col0 + c;
        if (h < in_h && w < in_w) {  // in_w is even: w + 1 is in the row and in the tile
            uint row_cover = geometry[row_table + geometry[11] + h];
            uint me = (h - uint(region_row0)) * REGION_W + w - uint(region_col0);
            uint low = gather(row_cover, geometry[col_table + geometry[10] + w], box_row0, box_col0, me);
            uint high = gather(row_cover, geometry[col_table + geometry[10] + w + 1u], box_row0, box_col0, me + 1u);
            dx_buf[(x_base + h * in_w + w) >> 1] = float_to_half_bits(low) | (float_to_half_bits(high) << 16);
        }
    }
#else
    uint lane = tid & 63u;
    [unroll] for (uint i = 0; i < TILE_H / 4; ++i) {
        uint r = (tid >> 6) + 4u * i;
        uint h = row0 + r, w = col0 + lane;
        if (h < in_h && w < in_w) {
            uint me = (h - uint(region_row0)) * REGION_W + w - uint(region_col0);
            dx_buf[x_base + h * in_w + w] = gather(geometry[row_table + geometry[11] + h],
                                                   geometry[col_table + geometry[10] + w], box_row0, box_col0, me);
        }
    }
#endif
}
