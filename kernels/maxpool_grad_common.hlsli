// Shared by the max-pooling grad kernels (kernels/maxpool_grad*.hlsl): the interface, the
// tensors' bindings and loads, the pool key, and the plain-sum rule. Sums use exact_float.hlsli's guarded_add (the
// CPU's bits under any denormal mode) or, where every term is plain, hardware adds.
#ifndef DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
#define DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
#include "common.hlsli"
#include "exact_float.hlsli"
#include "interface/maxpool_grad.h"

DMLGRAD_PARAMS(Params);

// Windows of the tensors covering one chunk of planes; binding 3, the geometry, is each kernel's own.
#ifdef MAXPOOL_GRAD_VECTORS
// The k2s2 kernel's view: X and dX as uint4s, dY as uint2s (the host aligns its rows and chunks to them).
DMLGRAD_SRV(uint4, x_buf, 0);
DMLGRAD_SRV(uint2, dy_buf, 1);
DMLGRAD_UAV(uint4, dx_buf, 2);
#else
DMLGRAD_SRV(uint, x_buf, 0);
DMLGRAD_SRV(uint, dy_buf, 1);
DMLGRAD_UAV(uint, dx_buf, 2);

// X as raw bits (a half in the low 16 bits), dY as float32 bits.
#if DTYPE == DT_F16
uint load_x(uint i) { return (x_buf[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu; }
uint load_dy_f32(uint j) { return half_to_float_bits_fast((dy_buf[j >> 1] >> ((j & 1u) * 16u)) & 0xFFFFu); }
#else
uint load_x(uint i) { return x_buf[i]; }
uint load_dy_f32(uint j) { return dy_buf[j]; }
#endif
#endif  // MAXPOOL_GRAD_VECTORS

// Max-pool's key (src/core/float_order.h): NaN above every number, -0 == +0.
int pool_key(uint v) { return lane_is_nan(v) ? 0x7FFFFFFF : lane_key(v); }

// A "plain" dY: a zero or a finite normal of at least 2^-101 (exponent 26-254). Sums of plain values in any order
// never meet a denormal (a sum of two normals, one at least 2^-101, is zero or at least 2^-125), so plain hardware
// adds give the CPU's bits under any denormal mode; the kernels take guarded_add only where a dY is not plain.
bool is_plain(uint v) {
    uint e = (v >> 23) & 0xFFu;
    return e - 26u < 229u || (v & 0x7FFFFFFFu) == 0;
}

// A plain sum's bits: a plain sum from +0 is never -0, but a compiler may drop the first add (+0 + -0); undo that.
uint plain_bits(float sum) {
    uint bits = asuint(sum);
    return bits == 0x80000000u ? 0u : bits;
}

#if DTYPE == DT_F16
// The same order for the two halves of a word at once, as unsigned 16-bit keys in place: -0 and +0 both 0x8000,
// negatives below (0x8000 - magnitude, -inf 0x0400), positives above (0x8000 | magnitude, +inf 0xFC00), every NaN
// 0xFFFF; 0 is below every half (padding).
uint half_keys(uint w) {
    uint magnitude = w & 0x7FFF7FFFu;
    uint negative = ((w >> 15) & 0x00010001u) * 0xFFFFu;
    uint nan = (((magnitude + 0x03FF03FFu) >> 15) & 0x00010001u) * 0xFFFFu;  // magnitude above 0x7C00
    // 0x8000 - magnitude stays within its 16 bits (magnitude <= 0x7FFF): no borrow between the halves.
    return ((0x80008000u | magnitude) & ~negative) | ((0x80008000u - magnitude) & negative) | nan;
}
#endif

#endif  // DMLGRAD_MAXPOOL_GRAD_COMMON_HLSLI
