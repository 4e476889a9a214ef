// Max-pooling grad, the fast kernel for the common case: 2-D pooling (the depth of 5-D tensors folded into the
// planes), square windows of K = 2 or 3 (compile time: loops unrolled), dilation 1, strides 1-3, any padding.
// Same rule and order of additions as kernels/maxpool_grad.hlsl (the general kernel), so the same bits.
//
// One workgroup per tile of 16 rows x 64 columns of one plane, in three steps:
//   1. stage: the pool keys of the input region the tile's windows read, padding as INT_MIN (never wins), each
//      X element loaded and keyed once, all loads of a thread issued together;
//   2. argmax: every window reaching the tile, K x K taps from groupshared memory; its chosen region index and
//      its dY go to groupshared memory;
//   3. gather: each dX element compares its region index with the choices of the (at most ceil(K/T)^2) windows
//      covering it, then adds the matching dY in increasing dY order.
// Variants: DTYPE = DT_F32 or DT_F16 (even row lengths only: a thread writes one word of two elements), K.
//
// Bindings: 0 X, 1 dY, 2 dX (windows over a chunk of planes), 3 the geometry (uints, written by
// src/gpu/ops/maxpool_grad_dispatch.cpp):
//   [0..3] I_h, I_w, O_h, O_w   [4..7] T_h, T_w, S_h, S_w   [8..11] log2 tile columns, log2 tile rows (grid,
//   padded to powers of two), tile columns, tile rows   [12..15] X plane, dY plane, offset of the row tables,
//   offset of the column tables. A row table holds, per tile row, (first window row | count << 16), then per
//   input row (first covering window row | count << 16); likewise the column table.
#include "maxpool_grad_arith.hlsli"

#ifndef K
#error "the build passes -DK=2 or 3"
#endif
#define TILE_H 16
#define TILE_W 64
#define BOX_H (TILE_H + K - 1)             // most window rows that reach a tile's rows (stride 1)
#define BOX_W (TILE_W + K - 1)
#define REGION_H (TILE_H + 2 * K - 2)      // input rows those windows read, for strides 1-3
#define REGION_W (TILE_W + 2 * K - 2)
#define STAGE_ROWS ((REGION_H + 3) / 4)    // 4 rows of 64 lanes per pass
#define BOX_ROWS ((BOX_H + 3) / 4)
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

groupshared int g_key[REGION_H * REGION_W];
groupshared uint g_chosen[BOX_H * BOX_W];  // region index of each window's chosen element, or NONE
groupshared uint g_dy[BOX_H * BOX_W];      // its dY as float32 bits

#if DTYPE == DT_F16
uint load_x(uint i) { return (x_buf[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu; }
uint load_dy_f32(uint j) { return half_to_float_bits((dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu); }
#else
uint load_x(uint i) { return x_buf[i]; }
uint load_dy_f32(uint j) { return dy_buf[j]; }
#endif

// dX at tile-relative (r, c) of the tile: element region index `me`, covering windows from the tables.
uint gather(uint row_cover, uint col_cover, uint box_row0, uint box_col0, uint me) {
    uint rows = row_cover >> 16, cols = col_cover >> 16;
    uint slot0 = ((row_cover & 0xFFFFu) - box_row0) * BOX_W + (col_cover & 0xFFFFu) - box_col0;
    uint matches = 0;  // bit j * K + k: window (first row + j, first column + k) chose this element
    [unroll] for (uint j = 0; j < K; ++j) {
        [unroll] for (uint k = 0; k < K; ++k) {
            if (j < rows && k < cols) {  // nested: glslang's && evaluates both sides
                if (g_chosen[slot0 + j * BOX_W + k] == me) matches |= 1u << (j * K + k);
            }
        }
    }
    uint acc = 0;  // +0.0f
    [loop] while (matches != 0) {  // increasing bits: increasing (row, column) of dY
        uint b = firstbitlow(matches);
        matches &= matches - 1u;
        acc = exact_add(acc, g_dy[slot0 + (b / K) * BOX_W + b % K]);
    }
    return acc;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint tile = pc.base / WORKGROUP_SIZE + group.x;
    if (tile >= pc.count) return;  // uniform per group, before any barrier
    tile += pc.first;
    uint in_h = geometry[0], in_w = geometry[1], out_w = geometry[3];
    uint stride_h = geometry[4], stride_w = geometry[5], pad_h = geometry[6], pad_w = geometry[7];
    uint cols_log2 = geometry[8], rows_log2 = geometry[9];
    uint tx = tile & ((1u << cols_log2) - 1u), ty = (tile >> cols_log2) & ((1u << rows_log2) - 1u);
    uint plane = tile >> (cols_log2 + rows_log2);
    if (tx >= geometry[10] || ty >= geometry[11]) return;  // grid padding, uniform per group
    uint x_plane = geometry[12], dy_plane = geometry[13], row_table = geometry[14], col_table = geometry[15];
    uint row_box = geometry[row_table + ty], col_box = geometry[col_table + tx];
    uint box_row0 = row_box & 0xFFFFu, box_rows = row_box >> 16;
    uint box_col0 = col_box & 0xFFFFu, box_cols = col_box >> 16;
    int region_row0 = int(box_row0 * stride_h) - int(pad_h), region_col0 = int(box_col0 * stride_w) - int(pad_w);
    uint tid = local.x, lane = tid & 63u, lane_row = tid >> 6;
    uint x_base = pc.x_origin + plane * x_plane;

    // 1. Stage the region's keys: every load first, then the keys.
    {
        uint v[STAGE_ROWS][2];
        [unroll] for (uint i = 0; i < STAGE_ROWS; ++i) {
            int r = region_row0 + int(lane_row + 4u * i);
            bool row_in = r >= 0 && r < int(in_h);
            [unroll] for (uint h = 0; h < 2; ++h) {
                int c = region_col0 + int(lane + 64u * h);
                v[i][h] = 0xFFFFFFFFu;  // marks padding (no X element is read as this: see below)
                if (row_in && c >= 0 && c < int(in_w)) v[i][h] = load_x(x_base + uint(r) * in_w + uint(c));
            }
        }
        [unroll] for (uint i = 0; i < STAGE_ROWS; ++i) {
            uint r = lane_row + 4u * i;
            int rr = region_row0 + int(r);
            bool row_in = rr >= 0 && rr < int(in_h);
            [unroll] for (uint h = 0; h < 2; ++h) {
                uint c = lane + 64u * h;
                int cc = region_col0 + int(c);
                bool inside = row_in && cc >= 0 && cc < int(in_w);
                if (r < REGION_H && c < REGION_W) g_key[r * REGION_W + c] = inside ? pool_key(v[i][h]) : int(0x80000000u);
            }
        }
    }
    GroupMemoryBarrierWithGroupSync();

    // 2. The argmax and dY of every window of the box: dY loads first.
    {
        uint dy_base = pc.dy_origin + plane * dy_plane;
        uint dy[BOX_ROWS][2];
        [unroll] for (uint i = 0; i < BOX_ROWS; ++i) {
            uint r = lane_row + 4u * i;
            [unroll] for (uint h = 0; h < 2; ++h) {
                uint c = lane + 64u * h;
                dy[i][h] = 0;
                if (r < box_rows && c < box_cols) dy[i][h] = load_dy_f32(dy_base + (box_row0 + r) * out_w + box_col0 + c);
            }
        }
        [unroll] for (uint i = 0; i < BOX_ROWS; ++i) {
            uint r = lane_row + 4u * i;
            [unroll] for (uint h = 0; h < 2; ++h) {
                uint c = lane + 64u * h;
                if (r < box_rows && c < box_cols) {
                    uint base = r * stride_h * REGION_W + c * stride_w;
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
                    g_chosen[r * BOX_W + c] = chosen;
                    g_dy[r * BOX_W + c] = dy[i][h];
                }
            }
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
    [unroll] for (uint i = 0; i < TILE_H / 4; ++i) {
        uint r = lane_row + 4u * i;
        uint h = row0 + r, w = col0 + lane;
        if (h < in_h && w < in_w) {
            uint me = (h - uint(region_row0)) * REGION_W + w - uint(region_col0);
            dx_buf[x_base + h * in_w + w] = gather(geometry[row_table + geometry[11] + h],
                                                   geometry[col_table + geometry[10] + w], box_row0, box_col0, me);
        }
    }
#endif
}
