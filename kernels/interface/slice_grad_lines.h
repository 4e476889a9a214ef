// The interface of kernels/slice_grad_lines.hlsl (see prelude.h): slice grad by dX rows of any length, a line of
// 2^lane_shift threads per row. The geometry buffer is slice_grad's (interface/slice_grad.h).
#ifndef DMLGRAD_SLICE_GRAD_LINES_INTERFACE_H
#define DMLGRAD_SLICE_GRAD_LINES_INTERFACE_H
#include "interface/slice_grad.h"  // Axis, MAX_RANK: the same geometry buffer

DMLGRAD_INTERFACE_BEGIN(slice_grad_lines)

// The host gives each row about this many uint4s a thread: the row's outer-axis arithmetic (a division and a
// stride test per axis) is then paid once per this many uint4s instead of once per uint4.
DMLGRAD_CONST uint UINT4S_PER_THREAD = 4;

struct LinesParams {
    uint base;        // first thread of this dispatch
    uint rows;        // dX rows (elements / the innermost size)
    uint lane_shift;  // log2 of the threads per row
    uint rank;        // axes in the geometry buffer, at most MAX_RANK
    uint inner_low;   // the lowest innermost coordinate the slice reaches (the first, or with a negative step the
                      // last, of the dY row)
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_SLICE_GRAD_LINES_INTERFACE_H
