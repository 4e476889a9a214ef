// Slice grad (docs/OPERATORS.md section 3) as a gather: every dX element is written exactly once, with its dY element
// when the slice reaches it, else 0. A bit copy, so the variants only differ in element size:
// DTYPE = u8, u16, u32, u64 serve every type of that size. Two layouts: ROWS=0, any geometry, each thread writes
// one uint4 of dX; ROWS=1 (rows of whole uint4s, dY bound whole), the workgroup shares each row's set-up. ROWS=0
// with ROW_ENDS=1 (slice_grad_rowends_*): also the uint4s in which a row at least a uint4 long ends take the fast
// path, for rows that are not whole uint4s.
// Bindings: 0 dY (a window of it), 1 dX (a window of it, uint4s), 2 the per-axis geometry.
#include "common.hlsli"

#ifndef ROW_ENDS
#define ROW_ENDS 0
#endif
#include "interface/slice_grad.h"

DMLGRAD_PARAMS(Params);

#include "slice_grad_axes.hlsli"
#include "slice_grad_words.hlsli"

// The first of the coordinates c0, c0 + 1, ... that the slice reaches along `ax`, as an offset e from c0, and its dY
// coordinate k. False when there is none within ELEMS.
bool first_reached(Axis ax, uint c0, out uint e, out uint k) {
    e = 0;
    k = 0;
    if (ax.negative == 0) {
        e = next_on_grid(c0, ax.start, ax, k);
        return e < ELEMS && k < ax.dy_size;
    }
    if (c0 > ax.start) return false;
    uint d = ax.start - c0;  // k decreases as the coordinate grows
    k = div_by(d, ax.stride, ax.stride_shift);
    e = d - k * ax.stride;
    if (k >= ax.dy_size) {  // below the window's far end: skip to its last reached coordinate
        uint t = k - (ax.dy_size - 1u);
        if (t >= ELEMS || ax.stride >= ELEMS) return false;
        e += t * ax.stride;
        k = ax.dy_size - 1u;
    }
    return e < ELEMS;
}

// Splits element `idx` into its innermost coordinate and what the outer axes contribute.
void locate(uint idx, Axis inner, out uint c0, out bool outer_ok, out uint dy_base) {
    uint row = div_by(idx, inner.dx_size, inner.dx_shift);
    c0 = idx - row * inner.dx_size;
    locate_row(row, outer_ok, dy_base);
}

VALUE extract(uint4 v, uint e) {
#if LANE_BITS == 64
    return e == 0 ? v.xy : v.zw;
#else
    uint w = e / LANES_PER_WORD;
    uint word = w == 0 ? v.x : (w == 1 ? v.y : (w == 2 ? v.z : v.w));
    return lane_get(word, e % LANES_PER_WORD);
#endif
}

// What the innermost axis alone decides for a uint4 inside a row (first element at coordinate c0): the same for
// every row, so the rows layout works it out once per column. n == 0: the slice reaches none of its elements.
struct Columns {
    uint k;  // stride 1: the dY offset in the row of element e (backwards: of element e + n - 1); else the dY
             // coordinate of element e
    uint e;  // the first element of the uint4 that the slice reaches
    uint n;  // step +-1, and 2 (8-, 16-bit): how many elements (from e, every |stride|-th) come from dY; else 1
};

Columns plan_columns(Axis inner, uint c0) {
    Columns col;
    col.k = 0;
    col.e = 0;
    col.n = 0;
    if (inner.stride == 1 && inner.negative == 0) {
        // A run of dY (crops, whole rows): the elements with start <= c0 + e < start + dY size.
        uint end = inner.start + inner.dy_size;
        uint e_lo = c0 >= inner.start ? 0u : min(inner.start - c0, (uint)ELEMS);
        uint e_hi = c0 >= end ? 0u : min(end - c0, (uint)ELEMS);
        if (e_lo < e_hi) {
            col.k = c0 + e_lo - inner.start;
            col.e = e_lo;
            col.n = e_hi - e_lo;
        }
    } else if (inner.stride == 1) {
        // A run of dY backwards (a flip): the elements with start - (dY size - 1) <= c0 + e <= start; k is the dY
        // coordinate of the run's last element, the lowest.
        uint low = inner.start + 1u - inner.dy_size;
        uint e_lo = c0 >= low ? 0u : min(low - c0, (uint)ELEMS);
        uint e_hi = c0 > inner.start ? 0u : min(inner.start + 1u - c0, (uint)ELEMS);
        if (e_lo < e_hi) {
            col.k = inner.start + 1u - (c0 + e_hi);
            col.e = e_lo;
            col.n = e_hi - e_lo;
        }
#if LANE_BITS < 32
    } else if (inner.stride == 2 && inner.negative == 0) {
        uint e, k;
        if (first_reached(inner, c0, e, k)) {
            col.k = k;
            col.e = e;
            col.n = min((ELEMS + 1u - e) / 2u, inner.dy_size - k);
        }
#endif
    } else {
        uint e, k;
        if (first_reached(inner, c0, e, k)) {
            col.k = k;
            col.e = e;
            col.n = 1;
        }
    }
    return col;
}

// The uint4 of a row whose outer coordinates the slice reaches from dY element dy_base, as `col` plans it.
uint4 gather_planned(Axis inner, Columns col, uint dy_base) {
    uint4 result = uint4(0, 0, 0, 0);
    if (col.n == 0) return result;
    if (inner.stride == 1 && inner.negative == 0) {
        result = load_run(dy_base + col.k - pc.dy_origin, col.e, col.e + col.n);
    } else if (inner.stride == 1) {
        // Backwards: element by element, the loop below costs ~30 instructions an element (8-bit flips ran at a
        // quarter of the bound); here one run and a mirror. A branch of its own: one for both directions (the run's
        // place and the mirror chosen by the step's sign) cost forward runs 3-6% (H200).
        result = mirror_elements(load_run(dy_base + col.k - pc.dy_origin, ELEMS - col.e - col.n, ELEMS - col.e));
#if LANE_BITS < 32
    } else if (inner.stride == 2 && inner.negative == 0) {
        // Every other element, 8- and 16-bit (downsampling by 2): element by element, the generic loop
        // below costs ~30 instructions per element; here the run of dY is spread with word operations.
        result = spread_by_two(dy_base + col.k - pc.dy_origin, col.n, col.e);
#endif
    } else {
        // Strided: from the first element the slice reaches, every |stride|-th one, while dY lasts.
        uint e = col.e, k = col.k;
        [loop] for (;;) {
            result = insert(result, e, load_dy(dy_base + k - pc.dy_origin));
            if (inner.stride >= ELEMS - e) break;  // (compared so, a huge stride cannot wrap)
            e += inner.stride;
            if (inner.negative != 0) {
                if (k == 0) break;
                k -= 1u;
            } else {
                k += 1u;
                if (k >= inner.dy_size) break;
            }
        }
    }
    return result;
}

#if ROW_ENDS
// `col`, a plan of a row's first uint4, moved up by p elements: the plan of a uint4 in which a row ends before element
// p and the next row (at least a uint4 long) starts. Cut at the uint4's end, so only its own elements' dY is read.
Columns moved_up(Axis inner, Columns col, uint p) {
    if (col.n == 0 || col.e >= ELEMS - p) {
        col.n = 0;
        return col;
    }
    col.e += p;
    if (inner.stride == 1) {  // cut at the uint4's end; backwards, the cut elements are the run's lowest dY
        uint n = min(col.n, ELEMS - col.e);
        if (inner.negative != 0) col.k += col.n - n;
        col.n = n;
    }
#if LANE_BITS < 32
    if (inner.stride == 2 && inner.negative == 0) col.n = min(col.n, (ELEMS + 1u - col.e) / 2u);
#endif
    return col;  // other steps: gather_planned's loop stops at the uint4's end
}
#endif

// Element by element, for the uint4s where a pass begins or ends, the tensor ends or a row ends (ROW_ENDS: a row
// shorter than a uint4). `old`: the uint4's current contents (the elements another pass owns are kept).
uint4 gather_elements(uint first, uint4 old, Axis inner, uint c0, bool outer_ok, uint dy_base) {
    uint4 result = uint4(0, 0, 0, 0);
    [loop] for (uint e = 0; e < ELEMS; ++e) {
        uint idx = first + e;
        if (e > 0) {
            c0 += 1;
            if (c0 == inner.dx_size) locate(idx, inner, c0, outer_ok, dy_base);  // next row
        }
        VALUE value = (VALUE)0;
        uint k;
        if (idx < pc.elem_begin || idx >= pc.elem_end) {
            value = extract(old, e);
        } else if (reach(inner, c0, k) && outer_ok && idx < pc.total) {
            value = load_dy(dy_base + k - pc.dy_origin);
        }
        result = insert(result, e, value);
    }
    return result;
}

#if ROWS
// 32- and 64-bit rows skip the uint4s outside the innermost span before plan_columns' division, and find a uint4's
// row by a compare where rows are a workgroup's uint4s or longer (H200, with ROWS_UINT4S_PER_THREAD 2: 20261210/17
// f64 rows of 378 uint4s 180.9 -> 122.3 us, every 32/64-bit rows case 0.68-0.95x). 8- and 16-bit rows keep a
// division and a plan per uint4: that code measured 1.02-1.04x there (20261210/95, /78; docs/PERFORMANCE.md).
#define ROWS_SKIP_OUTSIDE_SPAN (LANE_BITS >= 32)

#if ROWS_SKIP_OUTSIDE_SPAN
// The lowest and highest innermost coordinates the slice reaches.
void inner_span(Axis inner, out uint low, out uint high) {
    uint reach = inner.stride * (inner.dy_size - 1u);
    low = inner.negative != 0 ? inner.start - reach : inner.start;
    high = inner.negative != 0 ? inner.start : inner.start + reach;
}
#endif

// The rows layout (chosen by the host when every row is whole uint4s and dY is bound whole): the outer-axis
// arithmetic of each row a workgroup touches is done once, by one thread, and so is the innermost axis's of each
// column when a row is at most a workgroup long. Without it, that arithmetic (~100 instructions) is paid per
// uint4, 4x as often per byte for 8-bit elements as for 32-bit. A thread writes PER_THREAD uint4s,
// WORKGROUP_SIZE apart.
static const uint PER_THREAD = ROWS_UINT4S_PER_THREAD;
static const uint GROUP_UINT4S = WORKGROUP_SIZE * PER_THREAD;
static const uint NOT_REACHED = 0xFFFFFFFFu;  // a row's dY base where the slice does not reach the row
groupshared uint row_base[GROUP_UINT4S];  // per row touched, from the workgroup's first: dY base or NOT_REACHED
groupshared uint col_k[WORKGROUP_SIZE];   // per column (when a row has at most WORKGROUP_SIZE uint4s): Columns
groupshared uint col_e[WORKGROUP_SIZE];
groupshared uint col_n[WORKGROUP_SIZE];

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint t : SV_GroupIndex) {
    Axis inner = load_axis(0);
    uint row_vec4s = inner.dx_size / ELEMS;  // whole uint4s (the host's condition)
    uint row_shift = inner.dx_shift == NO_SHIFT ? NO_SHIFT : inner.dx_shift - firstbitlow((uint)ELEMS);
    uint first = (pc.base + group.x * WORKGROUP_SIZE) * PER_THREAD;  // the workgroup's first uint4 (< pc.count)
    uint first_row = div_by(pc.window_vec4 + first, row_vec4s, row_shift);
    uint last_row = div_by(pc.window_vec4 + min(first + GROUP_UINT4S, pc.count) - 1u, row_vec4s, row_shift);
#if ROWS_SKIP_OUTSIDE_SPAN
    uint first_column = pc.window_vec4 + first - first_row * row_vec4s;  // of the workgroup's first uint4
    // Rows of a workgroup's uint4s or more: its uint4s lie in two rows at most, told apart by a compare.
    bool two_rows_at_most = row_vec4s >= GROUP_UINT4S;
    uint span_low, span_high;
    inner_span(inner, span_low, span_high);
#endif
    [unroll] for (uint r = t; r < GROUP_UINT4S; r += WORKGROUP_SIZE) {
        if (first_row + r <= last_row) {
            bool outer_ok;
            uint dy_base;
            locate_row(first_row + r, outer_ok, dy_base);
            row_base[r] = outer_ok ? dy_base : NOT_REACHED;
        }
    }
    bool shared_columns = row_vec4s <= WORKGROUP_SIZE;
    if (shared_columns && t < row_vec4s) {
        Columns col = plan_columns(inner, t * ELEMS);
        col_k[t] = col.k;
        col_e[t] = col.e;
        col_n[t] = col.n;
    }
    GroupMemoryBarrierWithGroupSync();

    uint4 results[PER_THREAD];  // all gathered before any is stored: the dY loads are in flight together
    [unroll] for (uint j = 0; j < PER_THREAD; ++j) {
        results[j] = uint4(0, 0, 0, 0);
        uint i = first + t + j * WORKGROUP_SIZE;
        if (i >= pc.count) continue;
#if ROWS_SKIP_OUTSIDE_SPAN
        uint local = first_column + t + j * WORKGROUP_SIZE;  // from the first row's start
        uint r = two_rows_at_most ? (local >= row_vec4s ? 1u : 0u) : div_by(local, row_vec4s, row_shift);
        uint column = local - r * row_vec4s;
        uint dy_base = row_base[r];
#else
        uint g = pc.window_vec4 + i;
        uint row = div_by(g, row_vec4s, row_shift);
        uint column = g - row * row_vec4s;
        uint dy_base = row_base[row - first_row];
#endif
        if (dy_base == NOT_REACHED) continue;
        Columns col;
        if (shared_columns) {
            col.k = col_k[column];
            col.e = col_e[column];
            col.n = col_n[column];
        } else {
#if ROWS_SKIP_OUTSIDE_SPAN
            // A uint4 outside the innermost coordinates the slice reaches is zeros without plan_columns' division.
            if (column * ELEMS > span_high || column * ELEMS + ELEMS <= span_low) continue;
#endif
            col = plan_columns(inner, column * ELEMS);
        }
        results[j] = gather_planned(inner, col, dy_base);
    }
    [unroll] for (uint j = 0; j < PER_THREAD; ++j) {
        uint i = first + t + j * WORKGROUP_SIZE;
        if (i < pc.count) dx_buf[i] = results[j];
    }
}
#else
[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint first = (pc.window_vec4 + i) * ELEMS;

    Axis inner = load_axis(0);
    uint c0;
    bool outer_ok;
    uint dy_base;
    locate(first, inner, c0, outer_ok, dy_base);

    // dY is read only where the slice reaches (explicit branches: an index computed for an element the slice
    // does not reach may point outside the bound dY window).
    uint4 result = uint4(0, 0, 0, 0);
    // Only the uint4s where a pass begins or ends, or where the tensor ends, need more than the fast path.
    bool partial = first < pc.elem_begin || first + ELEMS > pc.elem_end || first + ELEMS > pc.total;
#if ROW_ENDS
    // And, in the ROW_ENDS variant, where rows shorter than a uint4 end. A uint4 in which a row at least a uint4
    // long ends (one in every warp on rows of up to 32 uint4s) takes the fast path: the slice reaches no coordinate
    // past a row's end, so the plan of the row's part is the plan of the whole uint4; the next row's part follows.
    // (Element by element, a step and a reach test per element, its whole warp waited for it: 25% of the bound on
    // fp16 rows of 28 uint4s, H100.) Its own variant: in the plain one the extra code cost 2-8% on one-axis slices.
    bool row_ends = c0 + ELEMS > inner.dx_size;
    if (!partial && (!row_ends || inner.dx_size >= ELEMS)) {
        Columns col = plan_columns(inner, c0);
        [loop] for (;;) {
            if (outer_ok) result |= gather_planned(inner, col, dy_base);
            if (!row_ends) break;
            row_ends = false;  // the next row's part: its coordinates 0, 1, ... in the uint4's last elements
            locate_row(div_by(first, inner.dx_size, inner.dx_shift) + 1u, outer_ok, dy_base);
            col = moved_up(inner, plan_columns(inner, 0), inner.dx_size - c0);
        }
#else
    if (!partial && c0 + ELEMS <= inner.dx_size) {
        if (outer_ok) result = gather_planned(inner, plan_columns(inner, c0), dy_base);
#endif
    } else {
        uint4 old = uint4(0, 0, 0, 0);
        if (partial) old = dx_buf[i];  // read-modify-write: elements of another pass (or the padding) are kept
        result = gather_elements(first, old, inner, c0, outer_ok, dy_base);
    }
    dx_buf[i] = result;
}
#endif
