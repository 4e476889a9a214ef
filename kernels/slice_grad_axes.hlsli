// Slice grad's bindings and per-axis helpers, shared by kernels/slice_grad.hlsl and kernels/slice_grad_walk.hlsl.
// The includer declares pc (with rank) first. Bindings: 0 dY (a window of it), 1 dX (uint4s), 2 the geometry.
#ifndef DMLGRAD_SLICE_GRAD_AXES_HLSLI
#define DMLGRAD_SLICE_GRAD_AXES_HLSLI
#include "interface/slice_grad.h"

#define ELEMS (128 / LANE_BITS)  // elements per uint4

#if LANE_BITS == 64
#define VALUE uint2
DMLGRAD_SRV(uint2, dy_buf, 0);
#else
#define VALUE uint
DMLGRAD_SRV(uint, dy_buf, 0);
#endif
DMLGRAD_UAV(uint4, dx_buf, 1);
// An Axis (interface/slice_grad.h) per axis, innermost first, as uint4s. A uniform buffer: every thread reads the
// same words, which then come from the constant cache (as a storage buffer, the per-thread loads cost about a
// sixth of the time of [:, :, ::2, ::2] on the H100).
// The walk kernel appends a uint4 per axis (SLICE_GEOMETRY_UINT4S, defined before this file is included).
#ifndef SLICE_GEOMETRY_UINT4S
#define SLICE_GEOMETRY_UINT4S (AXIS_UINT4S * MAX_RANK)
#endif
struct Geometry {
    uint4 axes[SLICE_GEOMETRY_UINT4S];
};
DMLGRAD_CBV(Geometry, geometry, 2);

Axis load_axis(uint a) {
    uint4 p = geometry.axes[AXIS_UINT4S * a];
    uint4 q = geometry.axes[AXIS_UINT4S * a + 1];
    Axis ax;
    ax.dx_size = p.x; ax.dx_shift = p.y; ax.start = p.z; ax.negative = p.w;
    ax.stride = q.x; ax.stride_shift = q.y; ax.dy_size = q.z; ax.dy_stride = q.w;
    return ax;
}

// Does the slice reach coordinate c of this axis, and from which dY coordinate k?
bool reach(Axis ax, uint c, out uint k) {
    bool side = ax.negative != 0 ? c <= ax.start : c >= ax.start;
    uint d = ax.negative != 0 ? ax.start - c : c - ax.start;
    k = div_by(d, ax.stride, ax.stride_shift);
    return side && k * ax.stride == d && k < ax.dy_size;
}

// The first coordinate from c on of the grid low, low + |stride|, ...: how far past c it lies, and its index j.
// An includer may define GRID_QUOTIENT(d, ax), d / |stride| (e.g. by a multiplication), before including this.
#ifndef GRID_QUOTIENT
#define GRID_QUOTIENT(d, ax) div_by(d, ax.stride, ax.stride_shift)
#endif
uint next_on_grid(uint c, uint low, Axis ax, out uint j) {
    j = 0;
    if (c < low) return low - c;
    uint d = c - low;
    j = GRID_QUOTIENT(d, ax);
    uint r = d - j * ax.stride;
    if (r == 0) return 0;
    j += 1u;
    return ax.stride - r;
}

// What the outer axes contribute to row `row` (a dX element's index divided by the innermost size): whether the
// slice reaches it, and the dY element of its coordinate 0 along the innermost axis.
void locate_row(uint row, out bool outer_ok, out uint dy_base) {
    uint rest = row;
    outer_ok = true;
    dy_base = 0;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            Axis ax = load_axis(a);
            uint q = a + 1 < pc.rank ? div_by(rest, ax.dx_size, ax.dx_shift) : 0u;
            uint c = rest - q * ax.dx_size;
            rest = q;
            uint k;
            outer_ok = reach(ax, c, k) && outer_ok;
            dy_base += k * ax.dy_stride;
        }
    }
}

VALUE load_dy(uint j) {
#if LANE_BITS >= 32
    return dy_buf[j];
#else
    return lane_get(dy_buf[j / LANES_PER_WORD], j % LANES_PER_WORD);
#endif
}

uint4 insert(uint4 v, uint e, VALUE value) {
#if LANE_BITS == 64
    return e == 0 ? uint4(value, v.zw) : uint4(v.xy, value);
#else
    uint w = e / LANES_PER_WORD;
    uint bits = value << ((e % LANES_PER_WORD) * LANE_BITS);
    return v | uint4(w == 0 ? bits : 0u, w == 1 ? bits : 0u, w == 2 ? bits : 0u, w == 3 ? bits : 0u);
#endif
}

#endif  // DMLGRAD_SLICE_GRAD_AXES_HLSLI
