// Clip grad (docs/OPERATORS.md section 2): dX = (X <= Min || X >= Max) ? 0 : dY; NaN X passes dY.
// 16 bytes per thread. Variants: DTYPE = f32, f16, i64, i32, i16, i8, u64, u32, u16, u8.
// Bindings: 0 X, 1 dY, 2 dX, all viewed as uint4. The bounds arrive as order keys (common.hlsli) computed by
// the host from the plan's bit patterns (never NaN: src/ops/clip_grad.cpp rejects NaN bounds).
#include "common.hlsli"
#include "interface/clip_grad.h"

DMLGRAD_PARAMS(Params);

DMLGRAD_SRV(uint4, x_buf, 0);
DMLGRAD_SRV(uint4, dy_buf, 1);
DMLGRAD_UAV(uint4, dx_buf, 2);

#if LANE_BITS == 64
uint2 clip_pair(uint2 x, uint2 dy) {
    uint2 key = key64(x);
    uint2 min_key = uint2(pc.min_key_low, pc.min_key_high), max_key = uint2(pc.max_key_low, pc.max_key_high);
    bool inside = less64(min_key, key) && less64(key, max_key);
    return inside ? dy : uint2(0, 0);
}
#else
uint clip_word(uint x, uint dy) {
    int min_key = int(pc.min_key_low);
    int max_key = int(pc.max_key_low);
    uint mask = 0;
    [unroll] for (uint lane = 0; lane < LANES_PER_WORD; ++lane) {
        uint v = lane_get(x, lane);
        int key = lane_key(v);
        bool kept = lane_is_nan(v) || (key > min_key && key < max_key);
        mask |= kept ? lane_field(lane) : 0u;
    }
    return dy & mask;
}
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint4 x = x_buf[i];
    uint4 dy = dy_buf[i];
#if LANE_BITS == 64
    dx_buf[i] = uint4(clip_pair(x.xy, dy.xy), clip_pair(x.zw, dy.zw));
#else
    dx_buf[i] = uint4(clip_word(x.x, dy.x), clip_word(x.y, dy.y), clip_word(x.z, dy.z), clip_word(x.w, dy.w));
#endif
}
