// ReLU grad (docs/OPERATORS.md section 1): dX = X > 0 ? dY : 0, uint4s whatever the element type (the thread
// mapping of interface/elementwise.h). Variants: DTYPE = f32, f16, i32, i16, i8.
#include "common.hlsli"
#include "interface/relu_grad.h"

DMLGRAD_PARAMS(Params);

#include "elementwise.hlsli"

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

uint4 relu_uint4(uint4 x, uint4 dy) {
    return dy & uint4(keep_mask(x.x), keep_mask(x.y), keep_mask(x.z), keep_mask(x.w));
}

ELEMENTWISE_MAIN(relu_uint4)
