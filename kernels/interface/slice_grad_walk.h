// The interface of kernels/slice_grad_walk.hlsl (see prelude.h): slice grad by a walk over dX, each thread writing
// uint4s a workgroup apart. The geometry buffer is slice_grad's Axis per level (interface/slice_grad.h), innermost
// first, then a uint4 (step, table, 0, 0) per level.
#ifndef DMLGRAD_SLICE_GRAD_WALK_INTERFACE_H
#define DMLGRAD_SLICE_GRAD_WALK_INTERFACE_H
#include "interface/slice_grad.h"  // Axis, MAX_RANK, AXIS_UINT4S

DMLGRAD_INTERFACE_BEGIN(slice_grad_walk)

// Level 0 is dX's innermost axis (its rows); the others group the outer axes. A level's coordinate is one digit of
// the row index. Consecutive outer axes whose sizes multiply to at most TABLE_MAX_ENTRIES share a level and a table
// (per coordinate: the dY offset it contributes, or NOT_REACHED); a longer axis is a level of its own, tested by
// arithmetic (table == ARITHMETIC).
DMLGRAD_CONST uint TABLE_MAX_ENTRIES = 8192;
DMLGRAD_CONST uint NOT_REACHED = 0xFFFFFFFFu;
DMLGRAD_CONST uint ARITHMETIC = 0xFFFFFFFFu;

// Each thread writes up to this many uint4s, a workgroup apart; the host takes fewer where dX has too few uint4s
// to keep MIN_THREADS threads busy.
DMLGRAD_CONST uint MAX_UINT4S_PER_THREAD = 8;
DMLGRAD_CONST uint MIN_THREADS = 262144;  // about what an H100 holds at once (132 SMs x 2048)

struct WalkParams {
    uint base;           // first thread of this dispatch
    uint count;          // uint4s in the dX window
    uint window_vec4;    // uint4 index of the dX window in the whole dX
    uint total;          // dX elements
    uint rank;           // levels in the geometry buffer, at most MAX_RANK
    uint per_thread;     // uint4s per thread (at most MAX_UINT4S_PER_THREAD)
    uint inner_low;      // the lowest innermost coordinate the slice reaches (with a negative step, its last)
    uint column_stride;  // lines (LINES=1): a line's uint4s, rounded up (the column windows' and gaps' layout)
    uint gaps;           // lines with LINE_GAPS=1: the gap table's first entry in the tables (ELEMS phases of
                         // column_stride entries, column c at (c % ELEMS) * column_stride + c / ELEMS)
    uint zeros;          // 1: the dispatch writes zeros (uint4s between the blocks the slice reaches); else 0
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_SLICE_GRAD_WALK_INTERFACE_H
