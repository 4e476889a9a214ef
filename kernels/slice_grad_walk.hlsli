// The walk's geometry and its gather of one uint4 of dX from every row it touches, shared by
// kernels/slice_grad_walk.hlsl and kernels/slice_grad_spans.hlsl. The includer declares pc (with rank, total and
// inner_low: interface/slice_grad_walk.h) first. Bindings: 0 dY, 1 dX (uint4s), 2 the geometry (an Axis per level,
// then a uint4 (step digit, table or ARITHMETIC, 0, 0) per level), 3 the levels' tables.
#ifndef DMLGRAD_SLICE_GRAD_WALK_HLSLI
#define DMLGRAD_SLICE_GRAD_WALK_HLSLI
#include "interface/slice_grad_walk.h"

#define SLICE_GEOMETRY_UINT4S ((AXIS_UINT4S + 1) * MAX_RANK)
#include "slice_grad_axes.hlsli"
#include "slice_grad_words.hlsli"

DMLGRAD_SRV(uint, tables, 3);

uint level_size(uint a) { return geometry.axes[AXIS_UINT4S * a].x; }
uint level_step(uint a) { return geometry.axes[AXIS_UINT4S * MAX_RANK + a].x; }   // its digit of the walk's step
uint level_table(uint a) { return geometry.axes[AXIS_UINT4S * MAX_RANK + a].y; }  // or ARITHMETIC

// The outer levels' coordinates (coord[a], 1 <= a < rank; coord[0] unused) of row `row`.
void split_row(uint row, out uint coord[MAX_RANK]) {
    uint rest = row;
    [unroll] for (uint a = 0; a < MAX_RANK; ++a) coord[a] = 0;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            Axis ax = load_axis(a);
            uint q = a + 1 < pc.rank ? div_by(rest, ax.dx_size, ax.dx_shift) : 0u;
            coord[a] = rest - q * ax.dx_size;
            rest = q;
        }
    }
}

// Adds `carry` rows, plus the walk's step digits where `stepping`, to the outer coordinates (each digit is below its
// level's size, so one compare carries). Past the last row the outermost coordinate runs on; nothing reads it then.
void add_rows(inout uint coord[MAX_RANK], uint carry, bool stepping) {
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            uint size = level_size(a);
            uint v = coord[a] + carry + (stepping ? level_step(a) : 0u);
            carry = v >= size ? 1u : 0u;
            coord[a] = carry != 0 ? v - size : v;
        }
    }
}

// Whether the slice reaches the row at `coord`, and then the dY element of its innermost coordinate 0.
bool row_reached(uint coord[MAX_RANK], out uint dy_base) {
    bool reached = true;
    dy_base = 0;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            uint table = level_table(a);
            if (table != ARITHMETIC) {
                uint offset = tables[table + coord[a]];
                reached = reached && offset != NOT_REACHED;
                dy_base += offset;
            } else {
                Axis ax = load_axis(a);
                uint k;
                reached = reach(ax, coord[a], k) && reached;
                dy_base += k * ax.dy_stride;
            }
        }
    }
    return reached;
}

// v's elements in reverse order (a run of dY placed mirrored comes out descending).
uint4 reverse_elements(uint4 v) {
#if LANE_BITS == 64
    return uint4(v.zw, v.xy);
#else
    uint4 r = v.wzyx;
#if LANE_BITS == 16
    r = (r >> 16) | (r << 16);
#elif LANE_BITS == 8
    r = ((r & 0xFFu) << 24) | ((r & 0xFF00u) << 8) | ((r >> 8) & 0xFF00u) | (r >> 24);
#endif
    return r;
#endif
}

// v with the elements [e, e + n) of a reached row (innermost coordinates c, c + 1, ...; dY element dy_base at
// coordinate 0) gathered from dY; the others of the segment stay 0.
uint4 gather_segment(uint4 v, Axis inner, uint e, uint c, uint n, uint dy_base) {
    // The first reached coordinate from c: f elements on, the j-th reached one from inner_low.
    uint j;
    uint f = next_on_grid(c, pc.inner_low, inner, j);
    if (f >= n || j >= inner.dy_size) return v;
    uint p = e + f;                     // its element of the uint4
    uint room = n - f;                  // elements from p to the segment's end
    uint left = inner.dy_size - j;      // dY elements of the row from the j-th
    uint mirror_top = inner.dy_size - j;  // negative steps: dY's row read backwards ends below this
    if (inner.stride == 1) {
        uint m = min(room, left);
        if (inner.negative == 0) return v | load_run(dy_base + j, p, p + m);
        return v | reverse_elements(load_run(dy_base + mirror_top - m, ELEMS - p - m, ELEMS - p));
    }
#if LANE_BITS < 32
    if (inner.stride == 2) {
        uint m = min((room + 1u) / 2u, left);
        if (inner.negative == 0) return v | spread_by_two(dy_base + j, m, p);
        return v | reverse_elements(spread_by_two(dy_base + mirror_top - m, m, ELEMS + 1u - p - 2u * m));
    }
#endif
    [loop] for (;;) {
        uint k = inner.negative != 0 ? inner.dy_size - 1u - j : j;
        v = insert(v, p, load_dy(dy_base + k));
        if (inner.stride >= e + n - p) break;  // (compared so, a huge stride cannot wrap)
        p += inner.stride;
        j += 1u;
        if (j >= inner.dy_size) break;
    }
    return v;
}

// The uint4 whose first element is dX element `first`, at innermost coordinate c of the row at `coord`: a segment
// per row it touches (more than two only where rows are shorter than a uint4).
uint4 gather_uint4(Axis inner, uint first, uint c, uint coord[MAX_RANK]) {
    uint4 v = uint4(0, 0, 0, 0);
    uint limit = min((uint)ELEMS, pc.total - first);  // the last uint4 may run past dX
    uint e = 0;
    [loop] for (;;) {
        uint n = min(limit - e, inner.dx_size - c);
        uint dy_base;
        if (row_reached(coord, dy_base)) v = gather_segment(v, inner, e, c, n, dy_base);
        e += n;
        if (e >= limit) break;
        c = 0;
        add_rows(coord, 1u, false);
    }
    return v;
}

#endif  // DMLGRAD_SLICE_GRAD_WALK_HLSLI
