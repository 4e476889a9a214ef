// The interface of kernels/clip_grad.hlsl (see prelude.h). Every thread takes one uint4 of X, dY and dX.
#ifndef DMLGRAD_CLIP_GRAD_INTERFACE_H
#define DMLGRAD_CLIP_GRAD_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(clip_grad)

// The bounds as order keys (common.hlsli): 64-bit types use (low, high) as a pair compared exactly; the others
// the low word as an int, the high word 0.
struct Params {
    uint base;   // first uint4 of this dispatch, relative to the bound window
    uint count;  // uint4s in the bound window
    uint min_key_low;
    uint min_key_high;
    uint max_key_low;
    uint max_key_high;
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_CLIP_GRAD_INTERFACE_H
