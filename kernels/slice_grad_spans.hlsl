// Slice grad (docs/OPERATORS.md section 3) in two kinds of steps, for slices that cover a small share of dX (the
// host's rule: src/gpu/ops/slice_grad_dispatch.cpp): fill steps write zeros over dX, a thread's uint4s a workgroup
// apart, at the copy ceiling; then, after a barrier, span steps write the uint4s from each dY row's first dX
// element to its last: row_threads threads a row, each up to per_thread of its uint4s, row_threads apart (the host
// gives a thread a whole span only where neighbouring rows' spans lie close enough for a warp's writes to meet in
// sectors; else a uint4 a thread). The rest of dX costs no arithmetic at all. A span thread computes each uint4 whole
// as the walk does (slice_grad_walk.hlsli): a uint4 that two rows' spans share (rows of a uint4 and more) is the
// earlier row's thread's to write; where rows are shorter, each of their threads writes it, with the same value. Its
// dX row comes from its dY row by multiplications, once per thread; a neighbouring row's from the levels a carry or a
// borrow changes (rows shorter than a uint4: by divisions, as the walk does). No groupshared memory, so
// vkd3d-compiler builds it for Direct3D 12 too. The host's conditions: dY and dX bound whole, dX's element count below 2^32 - 16. A bit
// copy: DTYPE = u8, u16, u32, u64 serve every type of that size.
// REGIONS=1 (Vulkan) adds the region step: a workgroup's zeros and then the span uint4s of its region of dX in one
// dispatch (write_region); REGIONS=2 the same step with a thread a span.
// Bindings: 0 dY, 1 dX (whole, uint4s), 2 the geometry (every axis a level, tested by arithmetic), 3 unused tables.
#include "common.hlsli"
#include "interface/slice_grad_spans.h"

DMLGRAD_PARAMS(SpansParams);

// next_on_grid's (slice_grad_axes.hlsli) quotient by the innermost axis' step, the only axis it is called with here.
#define GRID_QUOTIENT(d, ax) \
    (ax.stride_shift != NO_SHIFT ? (d) >> ax.stride_shift : div_magic(d, ax.stride, pc.step_magic))

#define WHOLE_RUNS 0  // load_run without its whole-uint4 path (slice_grad_words.hlsli)
#include "slice_grad_walk.hlsli"

// A level's magics (interface/slice_grad_spans.h): of its dY size, its dX size and its step.
uint dy_size_magic(uint a) { return geometry.axes[AXIS_UINT4S * MAX_RANK + a].z; }
uint dx_size_magic(uint a) { return geometry.axes[AXIS_UINT4S * MAX_RANK + a].w; }
uint step_magic(uint a) { return geometry.axes[AXIS_UINT4S * MAX_RANK + a].x; }

void fill_zeros(uint group, uint t) {
    uint u = (pc.base + group * WORKGROUP_SIZE) * pc.per_thread + t;
    [loop] for (uint i = 0; i < pc.per_thread && u < pc.count; ++i) {
        dx_buf[u] = uint4(0, 0, 0, 0);
        u += WORKGROUP_SIZE;
    }
}

// The outer coordinates (coord[a], 1 <= a < rank) of dY row `dy_row` placed in dX, that row's index in dX and the
// dY element of its innermost coordinate 0. In `dx_order`, dy_row counts the rows in dX's order instead: its index
// on an axis of negative step counted from that axis' last dY coordinate.
uint place_dy_row(uint dy_row, bool dx_order, out uint coord[MAX_RANK], out uint dy_base) {
    uint rest = dy_row, dx_row = 0, row_stride = 1;
    dy_base = 0;
    [unroll] for (uint a = 0; a < MAX_RANK; ++a) coord[a] = 0;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            Axis ax = load_axis(a);
            uint q = a + 1 < pc.rank ? div_magic(rest, ax.dy_size, dy_size_magic(a)) : 0u;
            uint k = rest - q * ax.dy_size;
            if (dx_order && ax.negative != 0) k = ax.dy_size - 1u - k;
            rest = q;
            coord[a] = ax.negative != 0 ? ax.start - k * ax.stride : ax.start + k * ax.stride;
            dx_row += coord[a] * row_stride;
            row_stride *= ax.dx_size;
            dy_base += k * ax.dy_stride;
        }
    }
    return dx_row;
}

// Whether the slice reaches the row after (next) or before the reached row at `coord`, whose innermost coordinate 0
// is dY element dy_base, and then the neighbour's. Only the levels a carry or borrow changes are tested: the level it
// stops at moves one coordinate from a reached one, which only a step of 1 reaches (no division); the levels it
// passes through wrap around (tested by arithmetic).
bool neighbour_reached(uint coord[MAX_RANK], uint dy_base, bool next, out uint neighbour_base) {
    bool reached = true, moving = true;
    neighbour_base = dy_base;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank && moving) {
            Axis ax = load_axis(a);
            uint c = coord[a];
            moving = next ? c + 1u == ax.dx_size : c == 0u;  // wraps around: the carry or borrow goes on
            uint to = moving ? (next ? 0u : ax.dx_size - 1u) : (next ? c + 1u : c - 1u);
            uint k_old = 0, k_new = 0;
            if (!moving && ax.stride != 1u) {
                reached = false;  // c is on the step's grid, its neighbours are not
            } else {
                reach(ax, c, k_old);
                // (past the outermost level's end there is no row)
                reached = reach(ax, to, k_new) && reached && (!moving || a + 1 < pc.rank);
            }
            neighbour_base += (k_new - k_old) * ax.dy_stride;
        }
    }
    return reached;
}

// The uint4 whose first element is `first`, touching row `row_first` (its first element; the slice reaches it, from
// dY element dy_base) and, rows being at least a uint4 long, at most one neighbour: the previous row's tail or the
// next row's head (neighbour_reached). False, with nothing gathered, for a uint4 that the previous row's span reaches
// too, the slice reaching that row: the previous row's thread writes it whole (with this row's head), each uint4 that
// two spans share then computed and written once.
bool gather_with_neighbour(Axis inner, uint first, uint row_first, uint coord[MAX_RANK], uint dy_base, out uint4 v) {
    v = uint4(0, 0, 0, 0);
    uint neighbour_base;
    bool previous = false;
    if (first < row_first) {
        previous = neighbour_reached(coord, dy_base, false, neighbour_base);
        // The previous row's span ends at row_first - dx_size + inner_high (compared so, nothing wraps below 0).
        if (previous && first + inner.dx_size <= row_first + pc.inner_high) return false;
    }
    uint end = min(first + ELEMS, pc.total);  // the last uint4 may run past dX
    uint own_lo = max(first, row_first), own_hi = min(end, row_first + inner.dx_size);
    v = gather_segment(v, inner, own_lo - first, own_lo - row_first, own_hi - own_lo, dy_base);
    if (previous) {
        uint n = row_first - first;
        v = gather_segment(v, inner, 0, inner.dx_size - n, n, neighbour_base);
    } else if (first >= row_first && own_hi < end) {
        if (neighbour_reached(coord, dy_base, true, neighbour_base))
            v = gather_segment(v, inner, own_hi - first, 0, end - own_hi, neighbour_base);
    }
    return true;
}

// Writes uint4 u of dX, in the span of the row whose first element is `row_first` (placed at `coord`, its innermost
// coordinate 0 at dY element dy_base), unless the previous row's thread writes it.
void write_span_uint4(Axis inner, uint u, uint row_first, uint coord[MAX_RANK], uint dy_base) {
    uint first = u * ELEMS;
    uint4 v;
    if (inner.dx_size >= ELEMS) {
        if (gather_with_neighbour(inner, first, row_first, coord, dy_base, v)) dx_buf[u] = v;
        return;
    }
    // Rows shorter than a uint4: the walk's gather, from the uint4's first row (split by divisions).
    uint row = div_by(first, inner.dx_size, inner.dx_shift);
    uint first_coord[MAX_RANK];
    split_row(row, first_coord);
    dx_buf[u] = gather_uint4(inner, first, first - row * inner.dx_size, first_coord);
}

// Thread g's share of dY row g / row_threads' span: up to per_thread of its uint4s, row_threads apart (the row's
// threads write neighbouring uint4s at each step), the row placed once for them all.
void write_span_uint4s(uint g) {
    uint dy_row = div_magic(g, pc.row_threads, pc.row_magic);
    uint share = g - dy_row * pc.row_threads;
    Axis inner = load_axis(0);
    uint coord[MAX_RANK];
    uint dy_base;
    uint row_first = place_dy_row(dy_row, false, coord, dy_base) * inner.dx_size;  // the row's first dX element
    uint u = (row_first + pc.inner_low) / ELEMS + share;
    uint last = (row_first + pc.inner_high) / ELEMS;  // the span's last uint4
    if (pc.per_thread == 1) {  // a uint4 a thread: without the loop, which cost such spans 2-3% (H100)
        if (u <= last) write_span_uint4(inner, u, row_first, coord, dy_base);
        return;
    }
    [loop] for (uint i = 0; i < pc.per_thread && u <= last; ++i) {
        write_span_uint4(inner, u, row_first, coord, dy_base);
        u += pc.row_threads;
    }
}

#if REGIONS  // (Vulkan only: vkd3d-compiler 1.17 did not finish the kernel with it in 400 s)
// The reached rows in dX's order (place_dy_row's dx_order) before the first whose dX row is `dx_row` or later: from
// the outermost level in, each level's first reached coordinate from the row's; past the level's last, the count
// carries into the level outside (a mixed-radix count); one past the row's coordinate, the levels inside start at 0.
uint rows_before(uint dx_row) {
    if (pc.rank == 1) return min(dx_row, 1u);  // one row
    uint coord[MAX_RANK];
    uint rest = dx_row;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        coord[a] = 0;
        if (a < pc.rank) {
            uint q = a + 1 < pc.rank ? div_magic(rest, level_size(a), dx_size_magic(a)) : 0u;
            coord[a] = rest - q * level_size(a);
            rest = q;
        }
    }
    uint count = 0;
    bool on_row = true;  // every level outside reached at the row's own coordinate
    [unroll] for (uint i = 1; i < MAX_RANK; ++i) {
        uint a = MAX_RANK - i;  // outermost first
        if (a < pc.rank) {
            Axis ax = load_axis(a);
            uint j = 0;
            if (on_row) {
                uint low = ax.negative != 0 ? ax.start - (ax.dy_size - 1u) * ax.stride : ax.start;
                bool below = coord[a] < low;
                uint d = below ? 0u : coord[a] - low;
                j = div_magic(d, ax.stride, step_magic(a));
                bool off_grid = j * ax.stride != d;
                if (off_grid) j += 1u;
                on_row = !below && !off_grid;
                if (j >= ax.dy_size) {
                    count += 1u;
                    j = 0;
                    on_row = false;
                }
            }
            count = count * ax.dy_size + j;
        }
    }
    return count;
}

// The reached rows whose span meets the region of dX uint4s [u0, u1), in dX's order: the first is `row0`, and
// returns their count.
uint region_rows(Axis inner, uint u0, uint u1, out uint row0) {
    uint e0 = u0 * ELEMS, e1 = u1 * ELEMS;
    // The dX rows whose span meets the region: the first ends at e0 or later, the last starts before e1.
    uint first_row = e0 > pc.inner_high ? (e0 - pc.inner_high - 1u) / inner.dx_size + 1u : 0u;
    uint end_row = e1 > pc.inner_low ? (e1 - 1u - pc.inner_low) / inner.dx_size + 1u : 0u;
    row0 = rows_before(first_row);
    return rows_before(end_row) - row0;
}

#if REGIONS == 1
// A region step's workgroup: zeros over its region of dX (per_thread uint4s a thread, a workgroup apart), then,
// after a barrier, every uint4 of the region that a span reaches (a thread a uint4 of a row's span, row_threads a
// row), the zeros they overwrite still in the cache: dX goes to memory once, where a span step after the fill of
// dX rewrites sectors the fill has flushed.
void write_region(uint group, uint t) {
    uint u0 = (pc.base + group * WORKGROUP_SIZE) * pc.per_thread;
    uint u1 = min(u0 + WORKGROUP_SIZE * pc.per_thread, pc.count);
    [loop] for (uint z = u0 + t; z < u1; z += WORKGROUP_SIZE) dx_buf[z] = uint4(0, 0, 0, 0);
    DeviceMemoryBarrierWithGroupSync();
    Axis inner = load_axis(0);
    uint row0;
    uint items = region_rows(inner, u0, u1, row0) * pc.row_threads;
    [loop] for (uint i = t; i < items; i += WORKGROUP_SIZE) {
        uint r = div_magic(i, pc.row_threads, pc.row_magic);
        uint coord[MAX_RANK];
        uint dy_base;
        uint row_first = place_dy_row(row0 + r, true, coord, dy_base) * inner.dx_size;
        uint u = (row_first + pc.inner_low) / ELEMS + (i - r * pc.row_threads);
        if (u >= u0 && u < u1 && u <= (row_first + pc.inner_high) / ELEMS)
            write_span_uint4(inner, u, row_first, coord, dy_base);
    }
}
#else
// The region step with a thread a span (row_threads unused): a thread places its row once (divisions at every
// level) and writes the span's uint4s in the region, where a thread a uint4 places the row once a uint4. A region
// that no span meets writes its zeros without the barrier. The host takes it where neighbouring rows' spans lie
// close, so that a warp's threads, a row each, write neighbouring sectors.
void write_region(uint group, uint t) {
    uint u0 = (pc.base + group * WORKGROUP_SIZE) * pc.per_thread;
    uint u1 = min(u0 + WORKGROUP_SIZE * pc.per_thread, pc.count);
    Axis inner = load_axis(0);
    uint row0;
    uint rows = region_rows(inner, u0, u1, row0);
    [loop] for (uint z = u0 + t; z < u1; z += WORKGROUP_SIZE) dx_buf[z] = uint4(0, 0, 0, 0);
    if (rows == 0) return;  // (uniform: the whole workgroup leaves)
    DeviceMemoryBarrierWithGroupSync();
    [loop] for (uint r = t; r < rows; r += WORKGROUP_SIZE) {
        uint coord[MAX_RANK];
        uint dy_base;
        uint row_first = place_dy_row(row0 + r, true, coord, dy_base) * inner.dx_size;
        uint last = min((row_first + pc.inner_high) / ELEMS, u1 - 1u);
        [loop] for (uint u = max((row_first + pc.inner_low) / ELEMS, u0); u <= last; ++u)
            write_span_uint4(inner, u, row_first, coord, dy_base);
    }
}
#endif
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint t : SV_GroupIndex) {
#if REGIONS
    if (pc.fill == STEP_REGION) {
        write_region(group.x, t);
        return;
    }
#endif
    if (pc.fill == STEP_FILL) {
        fill_zeros(group.x, t);
        return;
    }
    uint g = pc.base + group.x * WORKGROUP_SIZE + t;
    if (g < pc.count) write_span_uint4s(g);
}
