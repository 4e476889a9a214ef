// The interface of the max-pool selection kernel (kernels/maxpool_grad_select.hlsl; see prelude.h): pooling whose
// windows are one tap on every axis. Its push constants are max-pool's Params (interface/maxpool_grad.h); binding
// 2, the geometry, is laid out here.
#ifndef DMLGRAD_MAXPOOL_GRAD_SELECT_INTERFACE_H
#define DMLGRAD_MAXPOOL_GRAD_SELECT_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(maxpool_grad_select)

// The geometry buffer, of uints: SELECT_AXES SelectAxis records, outermost first (dX's axes merged where they are
// copied whole, padded on the outside with axes of size 1; the outermost is never a table), then the tables.
DMLGRAD_CONST uint SELECT_AXES = 4;
struct SelectAxis {
    uint size;       // dX coordinates along the axis
    uint size_log2;  // its log2 where a power of two, else NO_SHIFT (common.hlsli's div_by)
    uint table;      // word of the axis's table (per coordinate: its dY offset, or NOT_SELECTED), or ARITHMETIC
    uint dy_stride;  // ARITHMETIC: the dY offset of coordinate p is p * dy_stride (every coordinate a tap)
};
DMLGRAD_CONST uint SELECT_AXIS_WORDS = 4;
DMLGRAD_CONST uint SELECT_TABLES_WORD = SELECT_AXES * SELECT_AXIS_WORDS;
DMLGRAD_CONST uint ARITHMETIC = 0xFFFFFFFFu;
// A table entry: the dY offset of the window whose tap the coordinate is (its index times the axis's dY stride),
// or NOT_SELECTED where it is no window's tap.
DMLGRAD_CONST uint NOT_SELECTED = 0xFFFFFFFFu;
// A thread's dX elements: one uint4 (4 fp32, 8 fp16).
DMLGRAD_CONST uint SELECT_UNIT_BYTES = 16;

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_MAXPOOL_GRAD_SELECT_INTERFACE_H
