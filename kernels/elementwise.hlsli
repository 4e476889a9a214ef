// The element-wise kernels' main (relu_grad.hlsl, clip_grad.hlsl): bindings 0 X, 1 dY, 2 dX, all viewed as uint4;
// the thread mapping of interface/elementwise.h. OP(x, dy) makes a uint4 of dX.
#ifndef DMLGRAD_ELEMENTWISE_HLSLI
#define DMLGRAD_ELEMENTWISE_HLSLI
#include "common.hlsli"
#include "interface/elementwise.h"

DMLGRAD_SRV(uint4, x_buf, 0);
DMLGRAD_SRV(uint4, dy_buf, 1);
DMLGRAD_UAV(uint4, dx_buf, 2);

// Every load of a thread before its first store (a store could alias a later load for all the compiler knows).
#define ELEMENTWISE_MAIN(OP)                                                                      \
    [numthreads(WORKGROUP_SIZE, 1, 1)]                                                            \
    void main(uint3 id : SV_DispatchThreadID) {                                                   \
        uint t = pc.base + id.x;                                                                  \
        uint first = (t / WORKGROUP_SIZE) * (WORKGROUP_SIZE * ELEMENTWISE_UINT4S) + t % WORKGROUP_SIZE; \
        uint4 x[ELEMENTWISE_UINT4S], dy[ELEMENTWISE_UINT4S];                                      \
        [unroll] for (uint k = 0; k < ELEMENTWISE_UINT4S; ++k) {                                  \
            uint i = first + k * WORKGROUP_SIZE;                                                  \
            x[k] = 0;                                                                             \
            dy[k] = 0;                                                                            \
            if (i < pc.count) {                                                                   \
                x[k] = x_buf[i];                                                                  \
                dy[k] = dy_buf[i];                                                                \
            }                                                                                     \
        }                                                                                         \
        [unroll] for (uint k = 0; k < ELEMENTWISE_UINT4S; ++k) {                                  \
            uint i = first + k * WORKGROUP_SIZE;                                                  \
            if (i < pc.count) dx_buf[i] = OP(x[k], dy[k]);                                        \
        }                                                                                         \
    }

#endif  // DMLGRAD_ELEMENTWISE_HLSLI
