// Shared by the max-pooling grad kernels (kernels/maxpool_grad.hlsl, maxpool_grad_fast.hlsl): the interface, the
// tensors' bindings and loads, and the pool key. Sums use exact_float.hlsli's guarded_add: the CPU's bits under
// any denormal mode.
#ifndef DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
#define DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
#include "common.hlsli"
#include "exact_float.hlsli"
#include "interface/maxpool_grad.h"

[[vk::push_constant]] ConstantBuffer<Params> pc;  // not a bare "Params pc": glslang makes that a uniform buffer

// Windows of the tensors covering one chunk of planes; binding 3, the geometry, is each kernel's own.
[[vk::binding(0, 0)]] StructuredBuffer<uint> x_buf;
[[vk::binding(1, 0)]] StructuredBuffer<uint> dy_buf;
[[vk::binding(2, 0)]] RWStructuredBuffer<uint> dx_buf;

// X as raw bits (a half in the low 16 bits), dY as float32 bits.
#if DTYPE == DT_F16
// half_to_float_bits and float_to_half_bits (exact_float.hlsli) with the common cases (zeros and normals) done
// inline and the rest behind a branch a warp seldom takes: the conversions were a large share of fp16's work.
uint half_to_f32_bits(uint h) {
    uint magnitude = h & 0x7FFFu, e = magnitude >> 10;
    uint f = (h & 0x8000u) << 16 | (magnitude == 0 ? 0u : (magnitude << 13) + (112u << 23));
    [branch] if (e - 1u >= 30u && magnitude != 0) f = half_to_float_bits(h);  // denormals, infinities, NaNs
    return f;
}

uint f32_to_half_bits(uint x) {
    uint a = x & 0x7FFFFFFFu, sign = (x >> 16) & 0x8000u;
    // Normal halves: round to nearest even by a carry out of the 13 dropped bits.
    uint h = sign | (a < 0x33000000u ? 0u : ((a + 0xFFFu + ((a >> 13) & 1u)) >> 13) - (112u << 10));
    [branch] if (a - 0x33000000u < 0x38800000u - 0x33000000u || a >= 0x477FF000u) h = float_to_half_bits(x);
    return h;
}

uint load_x(uint i) { return (x_buf[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu; }
uint load_dy_f32(uint j) { return half_to_f32_bits((dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu); }
#else
uint load_x(uint i) { return x_buf[i]; }
uint load_dy_f32(uint j) { return dy_buf[j]; }
#endif

// Max-pool's key (src/core/float_order.h): NaN above every number, -0 == +0.
int pool_key(uint v) { return lane_is_nan(v) ? 0x7FFFFFFF : lane_key(v); }

#endif  // DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
