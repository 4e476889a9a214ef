// Max-pooling grad where every window is one tap (a window of 1 on every axis, whatever the dilation): each window
// chooses its tap without a comparison, so X is not read (nor bound), and dX is dY scattered at the taps: a strided
// selection. Taps never coincide (a stride of at least 1), so each dX element's sum has one term at most, the
// CPU's +0 + dY (-0 becomes +0, a NaN is quieted; the rest passes bit for bit), or +0 where no window's tap lies;
// a window whose tap lies in the padding (or past the input, in ceil mode) chooses nothing (docs/OPERATORS.md 4.2).
//
// A thread per uint4 of dX (4 fp32 or 8 fp16 elements): its first element's coordinates by divisions, then element
// by element with carries; per axis, a coordinate's dY offset from the axis's table (or p * dy_stride where every
// coordinate of the axis is a tap), summed over the axes, or none where one axis's coordinate is no tap. The host
// merges such whole axes into the axis outside them where that one is whole too (k1 s1 is one axis: a copy), so
// short axes cost few divisions. fp16 stays in halves: +0 + dY's float and back is the half itself but for -0
// (+0) and a NaN (quieted: bit 9 set).
// Variants: DTYPE = DT_F32 or DT_F16.
//
// Bindings: 0 dY (as uint2s), 1 dX (as uint4s), 2 the geometry of interface/maxpool_grad_select.h, written by
// src/gpu/ops/maxpool_grad_select.cpp. The host takes this kernel only where dX and dY are bound whole (one chunk
// of every plane), so every uint4 of dX is this thread's alone; a last uint4 past dX's end writes zeros into the
// buffer's padding.
#include "common.hlsli"
#include "exact_float.hlsli"
#include "interface/maxpool_grad.h"
#include "interface/maxpool_grad_select.h"

DMLGRAD_PARAMS(Params);
DMLGRAD_SRV(uint2, dy_buf, 0);
DMLGRAD_UAV(uint4, dx_buf, 1);
DMLGRAD_SRV(uint, geometry, 2);

#if DTYPE == DT_F16
static const uint UNIT = 8;
#else
static const uint UNIT = 4;
#endif

SelectAxis load_select_axis(uint a) {
    uint w = SELECT_AXIS_WORDS * a;
    SelectAxis ax;
    ax.size = geometry[w]; ax.size_log2 = geometry[w + 1]; ax.table = geometry[w + 2]; ax.dy_stride = geometry[w + 3];
    return ax;
}

// The dY offset coordinate p of `ax` contributes, or NOT_SELECTED.
uint offset_of(SelectAxis ax, uint p) { return ax.table == ARITHMETIC ? p * ax.dy_stride : geometry[ax.table + p]; }

// The dY offset of the outer axes' coordinates c.xyz, or NOT_SELECTED.
uint outer_offset(SelectAxis a0, SelectAxis a1, SelectAxis a2, uint4 c) {
    uint o0 = offset_of(a0, c.x), o1 = offset_of(a1, c.y), o2 = offset_of(a2, c.z);
    bool selected = o0 != NOT_SELECTED && o1 != NOT_SELECTED && o2 != NOT_SELECTED;
    return selected ? o0 + o1 + o2 : NOT_SELECTED;
}

// +0 + dY element j, in dX's bits (a half in the low 16 bits).
uint selected_bits(uint j) {
#if DTYPE == DT_F16
    uint2 pair = dy_buf[j >> 2];
    uint h = (((j & 2u) != 0u ? pair.y : pair.x) >> ((j & 1u) * 16u)) & 0xFFFFu;
    return h == 0x8000u ? 0u : ((h & 0x7FFFu) > 0x7C00u ? h | 0x0200u : h);
#else
    uint2 pair = dy_buf[j >> 1];
    return guarded_add(0u, (j & 1u) != 0u ? pair.y : pair.x);
#endif
}

// The coordinates (outermost first) of element e.
uint4 coordinates(SelectAxis a1, SelectAxis a2, SelectAxis a3, uint e) {
    uint4 c;
    uint rest = div_by(e, a3.size, a3.size_log2);
    c.w = e - rest * a3.size;
    uint next = div_by(rest, a2.size, a2.size_log2);
    c.z = rest - next * a2.size;
    c.x = div_by(next, a1.size, a1.size_log2);
    c.y = next - c.x * a1.size;
    return c;
}

// The coordinates after c.xyz0 (c's row done); past the end, the outermost runs past its axis.
void next_row(inout uint4 c, SelectAxis a1, SelectAxis a2) {
    c.w = 0;
    if (++c.z < a2.size) return;
    c.z = 0;
    if (++c.y < a1.size) return;
    c.y = 0;
    ++c.x;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    SelectAxis a0 = load_select_axis(0), a1 = load_select_axis(1), a2 = load_select_axis(2);
    SelectAxis a3 = load_select_axis(3);
    uint unit = pc.first + i;
    uint4 c = coordinates(a1, a2, a3, unit * UNIT);
    uint outer = outer_offset(a0, a1, a2, c);
    uint v[UNIT];
    [unroll] for (uint k = 0; k < UNIT; ++k) {
        uint inner = offset_of(a3, c.w);
        uint bits = 0;  // +0: no tap here, or past dX's end
        if (c.x < a0.size && outer != NOT_SELECTED && inner != NOT_SELECTED) bits = selected_bits(outer + inner);
        v[k] = bits;
        if (++c.w == a3.size) {  // a carry into the outer axes
            next_row(c, a1, a2);
            outer = outer_offset(a0, a1, a2, c);
        }
    }
#if DTYPE == DT_F16
    dx_buf[unit] = uint4(v[0] | v[1] << 16, v[2] | v[3] << 16, v[4] | v[5] << 16, v[6] | v[7] << 16);
#else
    dx_buf[unit] = uint4(v[0], v[1], v[2], v[3]);
#endif
}
