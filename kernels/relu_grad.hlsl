// ReLU grad (docs/OPERATORS.md section 1): dX = X > 0 ? dY : 0, 16 bytes per thread whatever the element type.
// Variants: DTYPE = f32, f16, i32, i16, i8. Bindings: 0 X, 1 dY, 2 dX, all viewed as uint4.
#include "common.hlsli"
#include "interface/relu_grad.h"

DMLGRAD_PARAMS(Params);

DMLGRAD_SRV(uint4, x_buf, 0);
DMLGRAD_SRV(uint4, dy_buf, 1);
DMLGRAD_UAV(uint4, dx_buf, 2);

// Lanes holding X > 0 get all ones. On bits: v in [1, POSITIVE_LIMIT] means sign clear, not zero, and for
// floats not NaN (+inf included, denormals included), so no flush-to-zero mode can change it.
#if DTYPE == DT_F32
#define POSITIVE_LIMIT 0x7F800000u
#elif DTYPE == DT_F16
#define POSITIVE_LIMIT 0x7C00u
#else
#define POSITIVE_LIMIT (LANE_MASK >> 1)
#endif

uint keep_mask(uint x) {
    uint mask = 0;
    [unroll] for (uint lane = 0; lane < LANES_PER_WORD; ++lane) {
        // v - 1 wraps for v = 0, so one unsigned compare tests 1 <= v <= POSITIVE_LIMIT.
        bool positive = lane_get(x, lane) - 1u < POSITIVE_LIMIT;
        mask |= positive ? lane_field(lane) : 0u;
    }
    return mask;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint4 x = x_buf[i];
    uint4 dy = dy_buf[i];
    dx_buf[i] = dy & uint4(keep_mask(x.x), keep_mask(x.y), keep_mask(x.z), keep_mask(x.w));
}
