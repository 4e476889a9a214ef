// The interface of kernels/slice_grad_spans.hlsl (see prelude.h): slice grad in two kinds of steps, where the slice
// covers a small share of dX. The geometry and tables are the walk's (interface/slice_grad_walk.h), with every axis
// of the plan a level of its own, tested by arithmetic, and no step digits: each level's walk uint4 is (the magic of
// its step, table, the magic of its dY size, the magic of its dX size) (src/gpu/ops/division_magic.h), by which a
// span thread places its dY row and a region step finds the rows its region holds.
#ifndef DMLGRAD_SLICE_GRAD_SPANS_INTERFACE_H
#define DMLGRAD_SLICE_GRAD_SPANS_INTERFACE_H
#include "interface/slice_grad_walk.h"  // the geometry's layout

DMLGRAD_INTERFACE_BEGIN(slice_grad_spans)

// A fill step's uint4s per thread (a workgroup apart), fewer where dX has too few uint4s to keep the walk's
// MIN_THREADS threads busy.
DMLGRAD_CONST uint FILL_UINT4S_PER_THREAD = 4;

// SpansParams::fill: what a step writes.
DMLGRAD_CONST uint STEP_SPANS = 0;   // the uint4s of each dY row's span, after a fill step
DMLGRAD_CONST uint STEP_FILL = 1;    // zeros over dX
DMLGRAD_CONST uint STEP_REGION = 2;  // a workgroup's region of dX: zeros, then the span uint4s in it

struct SpansParams {
    uint base;         // first thread of this dispatch
    uint count;        // dX's uint4s (fill, region); threads of a span step: dY's rows times `row_threads`
    uint fill;         // STEP_SPANS, STEP_FILL or STEP_REGION
    uint per_thread;   // uint4s per thread: of a fill or region step's zeros a workgroup apart, of a span step
                       // row_threads apart
    uint total;        // dX elements
    uint rank;         // levels (the plan's axes) in the geometry buffer, at most MAX_RANK
    uint inner_low;    // the lowest innermost coordinate the slice reaches (with a negative step, its last)
    uint inner_high;   // the highest
    uint row_threads;  // threads per dY row: per_thread uint4s each cover the most uint4s a span touches
    uint row_magic;    // division_magic(row_threads) (src/gpu/ops/division_magic.h)
    uint step_magic;   // division_magic(|the innermost axis' step|)
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_SLICE_GRAD_SPANS_INTERFACE_H
