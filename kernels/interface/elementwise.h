// The thread mapping of the element-wise kernels (kernels/relu_grad.hlsl, clip_grad.hlsl; see prelude.h): a
// workgroup takes a block of ELEMENTWISE_UINT4S x WORKGROUP_SIZE consecutive uint4s of X, dY and dX, and its thread
// l the uint4s l, l + WORKGROUP_SIZE, ... of that block (a warp's loads and stores stay consecutive), all loaded
// before any is stored.
#ifndef DMLGRAD_ELEMENTWISE_INTERFACE_H
#define DMLGRAD_ELEMENTWISE_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(elementwise)

DMLGRAD_CONST uint ELEMENTWISE_UINT4S = 2;

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_ELEMENTWISE_INTERFACE_H
