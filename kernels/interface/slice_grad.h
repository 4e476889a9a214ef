// The interface of kernels/slice_grad.hlsl (see prelude.h). Every thread writes one uint4 of dX (the rows layout:
// ROWS_UINT4S_PER_THREAD of them).
#ifndef DMLGRAD_SLICE_GRAD_INTERFACE_H
#define DMLGRAD_SLICE_GRAD_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(slice_grad)

// Axes of the gather after merging (src/gpu/ops/slice_geometry.h); the geometry buffer holds this many.
DMLGRAD_CONST uint MAX_RANK = 8;
// The geometry buffer (a uniform buffer of uint4s): an Axis per axis, innermost first.
struct Axis {
    uint dx_size, dx_shift, start, negative;        // dX size and its log2 (or NO_SHIFT), 1: stride < 0
    uint stride, stride_shift, dy_size, dy_stride;  // |stride| and its log2 (or NO_SHIFT), dY size and stride
};
DMLGRAD_CONST uint AXIS_UINT4S = 2;  // uint4s per Axis

// The rows layout (slice_grad_rows_*): uint4s per thread, WORKGROUP_SIZE apart (a workgroup's stores stay
// contiguous). Two share a row's set-up among more uint4s: H100, int8 [:, :, ::2, ::2] 66 -> 64 us; H200, 32- and
// 64-bit rows 0.68-0.95x of one a thread (docs/PERFORMANCE.md).
DMLGRAD_CONST uint ROWS_UINT4S_PER_THREAD = 2;

struct Params {
    uint base;         // first thread of this dispatch (the rows layout: times its uint4s per thread, its first
                       // uint4), relative to the dX window
    uint count;        // uint4s in the dX window
    uint window_vec4;  // uint4 index of the dX window in the whole dX
    uint elem_begin;   // dX elements this pass owns; the others in its first and last uint4 are kept as they are
    uint elem_end;     // (read-modify-write where a pass boundary falls inside a uint4: passes run in order)
    uint total;        // dX elements
    uint dy_origin;    // dY element at the start of the dY window
    uint rank;         // axes in the geometry buffer, at most MAX_RANK
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_SLICE_GRAD_INTERFACE_H
