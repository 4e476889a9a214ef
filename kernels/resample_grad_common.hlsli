// Shared by the resample grad kernels (resample_grad.hlsl, resample_grad_block.hlsl): the modes a build's MODE names,
// a half to float conversion in hardware for the values that feed float arithmetic (exact, and cheaper there than
// exact_float.hlsli's integer conversions), and the sign of a zero sum.
#ifndef DMLGRAD_RESAMPLE_GRAD_COMMON_HLSLI
#define DMLGRAD_RESAMPLE_GRAD_COMMON_HLSLI
#include "exact_float.hlsli"

#define NEAREST 1
#define LINEAR 2

// A half (low 16 bits) as a float: the hardware converts normal halves, inf and NaN (a NaN's bits are the
// GPU's: NaN sums are recomputed on bits); a subnormal one, m 2^-24, is computed, as a device may flush it.
float fast_half_to_float(uint h) {
    precise float small = float(h & 0x3FFu) * 5.9604644775390625e-8f;
    float v = (h & 0x7C00u) != 0 ? f16tof32(h) : small;
    return asfloat(asuint(v) | ((h & 0x8000u) << 16));
}

// The sum starts at +0, so it is never -0; but compilers may fold the first `0 + t` into `t` (lavapipe does,
// as nothing asks it to keep signed zeros), which differs exactly when every term is -0.
float positive_zero(float acc) { return asuint(acc) == 0x80000000u ? 0.0f : acc; }

#endif  // DMLGRAD_RESAMPLE_GRAD_COMMON_HLSLI
