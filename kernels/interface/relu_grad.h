// The interface of kernels/relu_grad.hlsl (see prelude.h). Every thread takes one uint4 of X, dY and dX.
#ifndef DMLGRAD_RELU_GRAD_INTERFACE_H
#define DMLGRAD_RELU_GRAD_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(relu_grad)

struct Params {
    uint base;   // first uint4 of this dispatch, relative to the bound window
    uint count;  // uint4s in the bound window
};

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_RELU_GRAD_INTERFACE_H
