// Slice grad (docs/OPERATORS.md section 3) by a walk over dX: thread t of a workgroup writes the workgroup's uint4s
// t, t + WORKGROUP_SIZE, ... (a warp's stores are contiguous), each dX element taking its dY element or 0, whatever
// the steps, offsets, rank or row length. Most of dX is usually zeros, so what matters is the cost per uint4 of
// deciding that: the row's coordinates are split by divisions once per thread and then stepped by the host's digits
// of the walk's step (an add and a compare per level); whether the slice reaches a row is one table load per level
// (slice_grad_walk.h), and only rows it reaches read dY: runs of dY (step +-1) and every other element (+-2, 8- and
// 16-bit) a word at a time, other steps element by element from the first reached one, found with one division.
// No groupshared memory, so vkd3d-compiler builds it for Direct3D 12 too. The host's conditions: dY bound whole,
// dX's element count below 2^32 - 16. A bit copy: DTYPE = u8, u16, u32, u64 serve every type of that size.
// Bindings: 0 dY, 1 dX (a window of it, uint4s), 2 the geometry, 3 the levels' tables.
#include "common.hlsli"
#include "interface/slice_grad_walk.h"

DMLGRAD_PARAMS(WalkParams);

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

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint t : SV_GroupIndex) {
    uint u = (pc.base + group.x * WORKGROUP_SIZE) * pc.per_thread + t;  // the first uint4, in the window
    if (u >= pc.count) return;
    Axis inner = load_axis(0);
    uint first = (pc.window_vec4 + u) * ELEMS;
    uint row = div_by(first, inner.dx_size, inner.dx_shift);
    uint c = first - row * inner.dx_size;
    uint coord[MAX_RANK];
    split_row(row, coord);
    [loop] for (uint i = 1;; ++i) {
        dx_buf[u] = gather_uint4(inner, first, c, coord);
        u += WORKGROUP_SIZE;
        if (i >= pc.per_thread || u >= pc.count) break;
        first += WORKGROUP_SIZE * ELEMS;
        c += level_step(0);  // the step within a row, then the rows it carries into
        uint carry = c >= inner.dx_size ? 1u : 0u;
        if (carry != 0) c -= inner.dx_size;
        add_rows(coord, carry, true);
    }
}
