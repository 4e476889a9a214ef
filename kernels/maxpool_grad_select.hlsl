// Max-pooling grad by dX element where each element is a tap of one window at most: windows of one tap on every
// axis (a window of 1, whatever the dilation; the selection), or (CELLS defined) windows that do not overlap (each
// axis's span at most its stride). Each dX element's sum has one term at most, the CPU's +0 + dY (-0 becomes +0, a
// NaN is quieted: guarded_add; the rest passes bit for bit) where it is its window's chosen element, else +0.
// A window of one tap chooses its tap without a comparison: the selection does not read X at all, and dX is dY
// scattered at the taps. The cell variant finds the window an element is a tap of and that window's choice (the
// first greatest key in row-major tap order, as the CPU), once per window a thread meets; elements that are no
// window's tap (gaps between windows, past the last window, between dilated taps) are +0 without a read of X.
// A window whose taps all lie in the padding (or past the input, in ceil mode) chooses nothing (docs/OPERATORS.md
// 4.2).
//
// A thread per uint4 of dX (4 fp32 or 8 fp16 elements): its first element's coordinates by divisions, then element
// by element with carries; per axis, a coordinate's entry from the axis's table (or, where every coordinate of the
// axis is a window's only tap, arithmetic). The host merges such axes into the axis outside them where that one is
// one too (a max-pool of k1 s1 is one axis: a copy), so short axes cost few divisions.
// Variants: DTYPE = DT_F32 or DT_F16; CELLS.
//
// Bindings of the cell variant: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli with MAXPOOL_GRAD_VECTORS: X and dX as
// uint4s, dY as uint2s), 3 the geometry of interface/maxpool_grad_select.h, written by
// src/gpu/ops/maxpool_grad_select.cpp; the selection binds no X: 0 dY, 1 dX, 2 the geometry. The host takes these
// kernels only where X, dX and dY are bound whole (one chunk of every plane), so every uint4 of dX is this thread's
// alone; a last uint4 past dX's end writes zeros into the buffer's padding.
#if defined(CELLS)
#define MAXPOOL_GRAD_VECTORS 1
#include "maxpool_grad_common.hlsli"
DMLGRAD_SRV(uint, geometry, 3);
#else
#include "common.hlsli"
#include "exact_float.hlsli"
#include "interface/maxpool_grad.h"
DMLGRAD_PARAMS(Params);
DMLGRAD_SRV(uint2, dy_buf, 0);
DMLGRAD_UAV(uint4, dx_buf, 1);
DMLGRAD_SRV(uint, geometry, 2);
#endif
#include "interface/maxpool_grad_select.h"

#if DTYPE == DT_F16
static const uint UNIT = 8;
#else
static const uint UNIT = 4;
#endif

SelectAxis load_select_axis(uint a) {
    uint w = SELECT_AXIS_WORDS * a;
    SelectAxis ax;
    ax.size = geometry[w]; ax.size_log2 = geometry[w + 1]; ax.table = geometry[w + 2]; ax.dy_stride = geometry[w + 3];
    ax.x_stride = geometry[w + 4]; ax.dilation = geometry[w + 5]; ax.unused0 = 0; ax.unused1 = 0;
    return ax;
}

// The dY offset coordinate p of `ax` contributes, or NOT_SELECTED.
uint offset_of(SelectAxis ax, uint p) {
    return ax.table == ARITHMETIC ? p * ax.dy_stride : geometry[ax.table + p * SELECT_ENTRY_WORDS];
}

// dY element j as float32 bits.
uint load_dy_bits(uint j) {
#if DTYPE == DT_F16
    uint2 pair = dy_buf[j >> 2];
    uint word = (j & 2u) != 0u ? pair.y : pair.x;
    return half_to_float_bits_fast((word >> ((j & 1u) * 16u)) & 0xFFFFu);
#else
    uint2 pair = dy_buf[j >> 1];
    return (j & 1u) != 0u ? pair.y : pair.x;
#endif
}

// The bits of the uint4 of elements v, as dX stores them.
uint4 packed(uint v[UNIT]) {
#if DTYPE == DT_F16
    uint4 words;
    words.x = float_to_half_bits_fast(v[0]) | float_to_half_bits_fast(v[1]) << 16;
    words.y = float_to_half_bits_fast(v[2]) | float_to_half_bits_fast(v[3]) << 16;
    words.z = float_to_half_bits_fast(v[4]) | float_to_half_bits_fast(v[5]) << 16;
    words.w = float_to_half_bits_fast(v[6]) | float_to_half_bits_fast(v[7]) << 16;
    return words;
#else
    return uint4(v[0], v[1], v[2], v[3]);
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

// The coordinates after c (in memory order); past the end, the outermost runs past its axis.
void advance(inout uint4 c, SelectAxis a1, SelectAxis a2, SelectAxis a3) {
    if (++c.w < a3.size) return;
    c.w = 0;
    if (++c.z < a2.size) return;
    c.z = 0;
    if (++c.y < a1.size) return;
    c.y = 0;
    ++c.x;
}

#if defined(CELLS)

// X element i's raw bits (a half in the low 16 bits).
uint load_x_bits(uint i) {
#if DTYPE == DT_F16
    uint4 q = x_buf[i >> 3];
    uint s = (i >> 1) & 3u;
    uint word = s == 0u ? q.x : s == 1u ? q.y : s == 2u ? q.z : q.w;
    return (word >> ((i & 1u) * 16u)) & 0xFFFFu;
#else
    uint4 q = x_buf[i >> 2];
    uint s = i & 3u;
    return s == 0u ? q.x : s == 1u ? q.y : s == 2u ? q.z : q.w;
#endif
}

// Coordinate p of `ax`: (dY offset or NOT_SELECTED, the window's first tap inside the input, its taps there).
uint3 entry_of(SelectAxis ax, uint p) {
    if (ax.table == ARITHMETIC) return uint3(p * ax.dy_stride, p, 1u);
    uint w = ax.table + p * SELECT_ENTRY_WORDS;
    return uint3(geometry[w], geometry[w + 1], geometry[w + 2]);
}

// The element the window chooses whose first taps inside the input are f (per axis; the outermost axis is
// arithmetic: its own coordinate) with n taps per axis: its first greatest key in row-major tap order.
uint window_choice(SelectAxis a1, SelectAxis a2, SelectAxis a3, uint base, uint3 n) {
    int best = int(0x80000000u);  // below every key: the first tap wins
    uint chosen = 0;
    uint step1 = a1.dilation * a1.x_stride, step2 = a2.dilation * a2.x_stride, step3 = a3.dilation * a3.x_stride;
    [loop] for (uint k1 = 0; k1 < n.x; ++k1) {
        [loop] for (uint k2 = 0; k2 < n.y; ++k2) {
            uint row = base + k1 * step1 + k2 * step2;
            [loop] for (uint k3 = 0; k3 < n.z; ++k3) {
                uint i = row + k3 * step3;
                int key = pool_key(load_x_bits(i));
                if (key > best) {
                    best = key;
                    chosen = i;
                }
            }
        }
    }
    return chosen;
}

// dX's uint4 `unit`: each element +0, or its window's dY where it is that window's choice.
uint4 unit_bits(uint unit, SelectAxis a0, SelectAxis a1, SelectAxis a2, SelectAxis a3) {
    uint e = unit * UNIT;
    uint4 c = coordinates(a1, a2, a3, e);
    uint window = NOT_SELECTED, chosen = 0;  // the last window met and its choice
    uint v[UNIT];
    [unroll] for (uint k = 0; k < UNIT; ++k) {
        uint3 t1 = entry_of(a1, c.y), t2 = entry_of(a2, c.z), t3 = entry_of(a3, c.w);
        bool tap = c.x < a0.size && t1.x != NOT_SELECTED && t2.x != NOT_SELECTED && t3.x != NOT_SELECTED;
        uint bits = 0;  // +0: no window's tap, past dX's end, or not the window's choice
        if (tap) {
            uint w = c.x * a0.dy_stride + t1.x + t2.x + t3.x;
            if (w != window) {
                uint base = e + k - (c.y - t1.y) * a1.x_stride - (c.z - t2.y) * a2.x_stride - (c.w - t3.y) * a3.x_stride;
                window = w;
                chosen = window_choice(a1, a2, a3, base, uint3(t1.z, t2.z, t3.z));
            }
            if (chosen == e + k) bits = guarded_add(0u, load_dy_bits(w));
        }
        v[k] = bits;
        advance(c, a1, a2, a3);
    }
    return packed(v);
}

#else  // the selection: windows of one tap

// The dY offset of the outer axes' coordinates c.xyz, or NOT_SELECTED.
uint outer_offset(SelectAxis a0, SelectAxis a1, SelectAxis a2, uint4 c) {
    uint o0 = offset_of(a0, c.x), o1 = offset_of(a1, c.y), o2 = offset_of(a2, c.z);
    bool selected = o0 != NOT_SELECTED && o1 != NOT_SELECTED && o2 != NOT_SELECTED;
    return selected ? o0 + o1 + o2 : NOT_SELECTED;
}

// dX's uint4 `unit`: each element its tap's window's dY, or +0.
uint4 unit_bits(uint unit, SelectAxis a0, SelectAxis a1, SelectAxis a2, SelectAxis a3) {
    uint4 c = coordinates(a1, a2, a3, unit * UNIT);
    uint outer = outer_offset(a0, a1, a2, c);
    uint v[UNIT];
    [unroll] for (uint k = 0; k < UNIT; ++k) {
        uint inner = offset_of(a3, c.w);
        uint bits = 0;  // +0: no tap here, or past dX's end
        if (c.x < a0.size && outer != NOT_SELECTED && inner != NOT_SELECTED)
            bits = guarded_add(0u, load_dy_bits(outer + inner));
        v[k] = bits;
        if (c.w + 1u < a3.size) {
            ++c.w;
        } else {  // a carry into the outer axes
            advance(c, a1, a2, a3);
            outer = outer_offset(a0, a1, a2, c);
        }
    }
    return packed(v);
}

#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    SelectAxis a0 = load_select_axis(0), a1 = load_select_axis(1), a2 = load_select_axis(2);
    SelectAxis a3 = load_select_axis(3);
    uint unit = pc.first + i;
    dx_buf[unit] = unit_bits(unit, a0, a1, a2, a3);
}
