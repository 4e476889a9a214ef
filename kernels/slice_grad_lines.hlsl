// Slice grad (docs/OPERATORS.md section 3) by dX rows of any length: a line of 2^lane_shift threads per row, each
// thread writing the whole uint4s of dX whose first element lies in its row (lane, lane + line, ...), every dX
// element taking its dY element or 0. The element kernel (slice_grad.hlsl) pays the outer axes' arithmetic (a
// division and a stride test per axis, ~100 instructions) per uint4; here it is paid once per thread, and within a
// uint4 the reached elements are stepped |stride| apart from the first, found with one division. No groupshared
// memory, so vkd3d-compiler builds it for Direct3D 12 too.
// The host's conditions: dY and dX bound whole, a row at least two uint4s long (a uint4 then reaches at most into
// the next row), a slice that reaches something. A bit copy: DTYPE = u8, u16, u32, u64 serve every type.
#include "common.hlsli"
#include "interface/slice_grad_lines.h"

DMLGRAD_PARAMS(LinesParams);

#include "slice_grad_axes.hlsli"

uint uint4s_before(uint element) { return element / ELEMS + (element % ELEMS != 0 ? 1u : 0u); }  // (no overflow)

// v with its elements [e_begin, e_end) gathered from a row the slice reaches (dY element dy_base at innermost
// coordinate 0), element e_begin lying at innermost coordinate c_begin and the others following it.
uint4 gather_span(uint4 v, Axis inner, uint e_begin, uint c_begin, uint e_end, uint dy_base) {
    uint e = e_begin, j = 0;  // element e: the j-th innermost coordinate the slice reaches, from inner_low
    if (c_begin < pc.inner_low) {
        if (pc.inner_low - c_begin >= e_end - e_begin) return v;
        e += pc.inner_low - c_begin;
    } else {
        uint d = c_begin - pc.inner_low;
        j = div_by(d, inner.stride, inner.stride_shift);
        uint r = d - j * inner.stride;
        if (r != 0) {
            if (inner.stride - r >= e_end - e_begin) return v;
            e += inner.stride - r;
            j += 1u;
        }
    }
    [loop] while (j < inner.dy_size) {
        uint k = inner.negative != 0 ? inner.dy_size - 1u - j : j;  // a negative step walks dY's row backwards
        v = insert(v, e, load_dy(dy_base + k));
        if (inner.stride >= e_end - e) break;  // (compared so, a huge stride cannot wrap)
        e += inner.stride;
        j += 1u;
    }
    return v;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint thread = pc.base + id.x;
    uint row = thread >> pc.lane_shift;
    if (row >= pc.rows) return;
    uint threads_per_row = 1u << pc.lane_shift;
    Axis inner = load_axis(0);
    uint row_first = row * inner.dx_size;  // the row's first element
    uint row_end = row_first + inner.dx_size;
    bool outer_ok;
    uint dy_base;
    locate_row(row, outer_ok, dy_base);
    [loop] for (uint u = uint4s_before(row_first) + (thread & (threads_per_row - 1u)); u < uint4s_before(row_end); u += threads_per_row) {
        uint c0 = u * ELEMS - row_first;
        uint in_row = min(inner.dx_size - c0, (uint)ELEMS);  // the uint4's elements in this row
        uint4 v = uint4(0, 0, 0, 0);
        if (outer_ok) v = gather_span(v, inner, 0, c0, in_row, dy_base);
        if (in_row < ELEMS && row + 1u < pc.rows) {  // the rest lies at the start of the next row
            bool next_ok;
            uint next_base;
            locate_row(row + 1u, next_ok, next_base);
            if (next_ok) v = gather_span(v, inner, in_row, 0, ELEMS, next_base);
        }
        dx_buf[u] = v;
    }
}
