#pragma once
// The one rule for NaNs in the CPU reference's float32 sums, the rule the GPU kernels implement on bits
// (kernels/exact_float.hlsli): once a sum is NaN it keeps that NaN. x86's addss gives
// the first operand's NaN when both are NaN, but a compiler may swap the operands of a commutative add, so
// `acc + v` alone leaves the bits to code generation. A single NaN operand, and inf - inf (the default NaN), give
// the same bits in either order.

namespace dmlgrad {

inline float add_keeping_nan(float acc, float v) { return acc != acc ? acc : acc + v; }

}  // namespace dmlgrad
