// Clip grad on the GPU: kernels/clip_grad.hlsl, one variant per dtype, 16 bytes per thread. The bounds travel
// as order keys (kernels/common.hlsli): the kernel compares keys with one signed compare per element (two words
// for 64-bit types), exactly as the CPU compares the bounds' values.
#include "core/float_order.h"
#include "gpu/dispatch.h"
#include "interface/clip_grad.h"

namespace dmlgrad {
namespace {

struct BoundKey {
    uint32_t low, high;
};

// The key of a bound's bit pattern (low and high words).
BoundKey bound_key(DType type, uint64_t bits) {
    uint32_t low = uint32_t(bits), high = uint32_t(bits >> 32);
    switch (type) {
        case DType::f32: low = uint32_t(order_key_f32(low)); break;
        case DType::f16: low = uint32_t(order_key_f16(uint16_t(low))); break;
        case DType::i16: low = uint32_t(int32_t(int16_t(low))); break;
        case DType::i8: low = uint32_t(int32_t(int8_t(low))); break;
        case DType::u32: low ^= 0x80000000u; break;
        case DType::u64: high ^= 0x80000000u; break;  // unsigned order as a signed compare of the high words
        default: break;                               // i32, i64, u16, u8: the bits are the key
    }
    if (type != DType::i64 && type != DType::u64) high = 0;
    return {low, high};
}

}  // namespace

GpuProgram build_clip_grad_program(const ClipGradPlan& plan, const DeviceLimits& limits) {
    const BoundKey min_key = bound_key(plan.dtype, plan.min_bits), max_key = bound_key(plan.dtype, plan.max_bits);
    kernels::clip_grad::Params params{};
    params.min_key_low = min_key.low;
    params.min_key_high = min_key.high;
    params.max_key_low = max_key.low;
    params.max_key_high = max_key.high;
    return elementwise_program("clip_grad_" + dtype_suffix(plan.dtype), plan.count * dtype_size(plan.dtype), params,
                               limits);
}

}  // namespace dmlgrad
