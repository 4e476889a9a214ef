// Max-pooling grad for windows of 2 with stride 2, no padding and no dilation on the rows and columns (and on the
// depth for 3-D pooling) that tile the input exactly (in = 2 * out on each pooled axis). Every X element lies in
// exactly one window, so each dX element is its window's dY (the CPU's sum of one term, +0 + dY) where it is the
// window's chosen element and +0 elsewhere: no additions, only the argmax on order keys of the bits and dY's bits
// passed on. The other windows that do not overlap take the general cell kernel (kernels/maxpool_grad.hlsl, CELLS).
//
// A thread unit is K2S2_UNIT_BYTES (one uint4) of each X row that a row of windows reads: WINDOWS neighbouring
// windows (2 for fp32, 4 for fp16). A thread loads those 2 (2-D) or 4 (3-D) uint4s and the WINDOWS dY as one uint2,
// and stores 2 or 4 uint4s of dX: whole vectors, every load issued before any is used, and nothing read twice.
// fp16 works on the halves' bits: two order keys per 32-bit word, never widened to float.
// Variants: DTYPE = DT_F32 or DT_F16; DEPTH = 1 (2-D pooling: the depth folded into the planes) or 2 (3-D).
//
// Bindings: 0 X, 1 dY, 2 dX as vectors (maxpool_grad_common.hlsli with MAXPOOL_GRAD_VECTORS; the host takes this
// kernel only where rows and chunk origins are whole vectors), 3 the K2s2Geometry of interface/maxpool_grad.h,
// written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#define MAXPOOL_GRAD_VECTORS 1
#include "maxpool_grad_common.hlsli"

DMLGRAD_SRV(uint4, geometry, 3);

static const uint ROWS = 2 * DEPTH;  // X rows a window reads, in (depth, row) order
#if DTYPE == DT_F16
static const uint VECTOR_ELEMENTS = 8;
#else
static const uint VECTOR_ELEMENTS = 4;
#endif
static const uint WINDOWS = VECTOR_ELEMENTS / 2;  // per thread unit; also the dY elements of its uint2

// The unit's dX rows, in X's (depth, row) order.
void store_rows(uint4 dx[ROWS], uint at, uint row_vectors, uint slice_vectors) {
    dx_buf[at] = dx[0];
    dx_buf[at + row_vectors] = dx[1];
#if DEPTH == 2
    dx_buf[at + slice_vectors] = dx[2];
    dx_buf[at + slice_vectors + row_vectors] = dx[3];
#endif
}

#if DTYPE == DT_F16

// +0 + dY in float32, rounded back to half, as the CPU's sum of one term gives it, on the half's bits: -0 becomes
// +0, a NaN is quieted (payload kept), every other half (subnormals included) is unchanged.
uint first_term_half(uint h) { return h == 0x8000u ? 0u : ((h & 0x7FFFu) > 0x7C00u ? h | 0x0200u : h); }

// Window j of the unit reads word j of each row. Its chosen element, 2 * row + column in window order: the
// largest (key << 3 | 7 - index) (half_keys, maxpool_grad_common.hlsli) is the largest key at its lowest index
// (ties to the lowest, NaNs all equal).
uint window_choice(uint4 x[ROWS], uint j) {
    uint best = 0;
    [unroll] for (uint r = 0; r < ROWS; ++r) {
        uint keys = half_keys(x[r][j]);
        best = max(best, ((keys << 16) >> 13) | (7u - 2u * r));
        best = max(best, ((keys >> 16) << 3) | (6u - 2u * r));
    }
    return 7u - (best & 7u);
}

void write_cells(uint4 x[ROWS], uint2 dy, uint at, uint row_vectors, uint slice_vectors) {
    uint4 dx[ROWS];
    [unroll] for (uint j = 0; j < WINDOWS; ++j) {
        uint chosen = window_choice(x, j);
        uint value = first_term_half((dy[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu) << ((chosen & 1u) * 16u);
        [unroll] for (uint r = 0; r < ROWS; ++r) dx[r][j] = chosen >> 1 == r ? value : 0u;
    }
    store_rows(dx, at, row_vectors, slice_vectors);
}

#else  // DT_F32

// Window j of the unit reads elements 2j and 2j + 1 of each row. Its chosen element, 2 * row + column in window
// order: the first strictly greater key wins (ties to the lowest index).
uint window_choice(uint4 x[ROWS], uint j) {
    int best = pool_key(x[0][2u * j]);
    uint chosen = 0;
    [unroll] for (uint i = 1; i < 2 * ROWS; ++i) {
        int key = pool_key(x[i >> 1][2u * j + (i & 1u)]);
        chosen = key > best ? i : chosen;
        best = max(best, key);
    }
    return chosen;
}

void write_cells(uint4 x[ROWS], uint2 dy, uint at, uint row_vectors, uint slice_vectors) {
    uint4 dx[ROWS];
    [unroll] for (uint j = 0; j < WINDOWS; ++j) {
        uint chosen = window_choice(x, j);
        uint value = guarded_add(0u, dy[j]);  // +0 + dY: -0 becomes +0, a NaN is quieted
        [unroll] for (uint i = 0; i < 2 * ROWS; ++i) dx[i >> 1][2u * j + (i & 1u)] = chosen == i ? value : 0u;
    }
    store_rows(dx, at, row_vectors, slice_vectors);
}

#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint unit = pc.first + i;  // chunk-relative; units run in dY order, WINDOWS dY elements each
    uint4 g = geometry[0];
    uint units_per_row = g.x, out_h = g.y, row_vectors = g.z, slice_vectors = g.w;
    uint window_row = unit / units_per_row;  // (plane, depth window, row window) in row-major order
    uint j = unit - window_row * units_per_row;
#if DEPTH == 2
    // Window row (q, oh) = q * out_h + oh reads X rows from (2q * out_h + oh) * 2 = (2 * window_row - oh) * 2,
    // counting rows over the chunk's planes (in = 2 * out on every axis).
    uint first_row = 2u * (2u * window_row - window_row % out_h);
#else
    uint first_row = 2u * window_row;
#endif
    uint at = pc.x_origin / VECTOR_ELEMENTS + first_row * row_vectors + j;
    uint4 x[ROWS];
    x[0] = x_buf[at];
    x[1] = x_buf[at + row_vectors];
#if DEPTH == 2
    x[2] = x_buf[at + slice_vectors];
    x[3] = x_buf[at + slice_vectors + row_vectors];
#endif
    uint2 dy = dy_buf[pc.dy_origin / WINDOWS + unit];
    write_cells(x, dy, at, row_vectors, slice_vectors);
}
