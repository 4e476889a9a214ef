// Slice grad (docs/OPERATORS.md section 3) by a walk over dX: thread t of a workgroup writes the workgroup's uint4s
// t, t + WORKGROUP_SIZE, ... (a warp's stores are contiguous), each dX element taking its dY element or 0, whatever
// the steps, offsets, rank or row length. Most of dX is usually zeros, so what matters is the cost per uint4 of
// deciding that: the row's coordinates are split by divisions once per thread and then stepped by the host's digits
// of the walk's step (an add and a compare per level); whether the slice reaches a row is one table load per level
// (slice_grad_walk.h), and only rows it reaches read dY: runs of dY (step +-1) and every other element (+-2, 8- and
// 16-bit) a word at a time, other steps element by element from the first reached one, found with one division.
// No groupshared memory, so vkd3d-compiler builds it for Direct3D 12 too. The host's conditions: dY bound whole,
// dX's element count below 2^32 - 16. A bit copy: DTYPE = u8, u16, u32, u64 serve every type of that size.
// With LINES=1 (slice_grad_walk_lines_*), level 0 is a line of the innermost axes folded together, each element's dY
// found in column windows that every line shares (slice_grad_lines.hlsli); with LINE_GAPS=1 too
// (slice_grad_walk_lines_gaps_*), a uint4 without a reached column is found by one load in a gap table; with
// LINE_WORDS=1 too (slice_grad_walk_lines_words_b8, Vulkan), 8-bit lines read a line's dY bytes as words. Where
// the host walks only the stretches of dX a few reached outer coordinates make, dispatches with `zeros` set write
// zeros over the rest.
// Bindings: 0 dY, 1 dX (a window of it, uint4s), 2 the geometry, 3 the levels' tables (then the gap table), 4 (LINES=1)
// the column windows.
#include "common.hlsli"
#ifndef LINES
#define LINES 0
#endif
#ifndef LINE_GAPS
#define LINE_GAPS 0
#endif
#ifndef LINE_WORDS
#define LINE_WORDS 0
#endif
#include "interface/slice_grad_walk.h"

DMLGRAD_PARAMS(WalkParams);

#include "slice_grad_walk.hlsli"
#if LINE_WORDS
#include "slice_grad_lines.hlsli"
#define GATHER_UINT4 gather_line_words
#elif LINES
#include "slice_grad_lines.hlsli"
#define GATHER_UINT4 gather_lines_uint4
#else
#define GATHER_UINT4 gather_uint4
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint t : SV_GroupIndex) {
    uint u = (pc.base + group.x * WORKGROUP_SIZE) * pc.per_thread + t;  // the first uint4, in the window
    if (u >= pc.count) return;
    if (pc.zeros != 0) {  // dX between the stretches walked (the host's reached_stretches_pay): no arithmetic
        [loop] for (uint i = 0; i < pc.per_thread && u < pc.count; ++i, u += WORKGROUP_SIZE)
            dx_buf[u] = uint4(0, 0, 0, 0);
        return;
    }
    Axis inner = load_axis(0);
    uint first = (pc.window_vec4 + u) * ELEMS;
    uint row = div_by(first, inner.dx_size, inner.dx_shift);
    uint c = first - row * inner.dx_size;
    uint coord[MAX_RANK];
    split_row(row, coord);
    [loop] for (uint i = 1;; ++i) {
        dx_buf[u] = GATHER_UINT4(inner, first, c, coord);
        u += WORKGROUP_SIZE;
        if (i >= pc.per_thread || u >= pc.count) break;
        first += WORKGROUP_SIZE * ELEMS;
        c += level_step(0);  // the step within a row, then the rows it carries into
        uint carry = c >= inner.dx_size ? 1u : 0u;
        if (carry != 0) c -= inner.dx_size;
        add_rows(coord, carry, true);
    }
}
