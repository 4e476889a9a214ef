// Clip grad on the GPU: kernels/clip_grad.hlsl, one variant per dtype, 16 bytes per thread. The bounds travel
// as order keys (kernels/common.hlsli): the kernel compares keys with one signed compare per element (two words
// for 64-bit types), exactly as the CPU compares the bounds' values.
#include "core/float_order.h"
#include "gpu/dispatch.h"

namespace dmlgrad {
namespace {

// The key of a bound's bit pattern, as push-constant words (low, high).
std::vector<uint32_t> bound_key(DType type, uint64_t bits) {
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
    std::vector<uint32_t> extra = bound_key(plan.dtype, plan.min_bits);
    std::vector<uint32_t> max_key = bound_key(plan.dtype, plan.max_bits);
    extra.insert(extra.end(), max_key.begin(), max_key.end());
    return elementwise_program("clip_grad_" + dtype_suffix(plan.dtype), plan.count * dtype_size(plan.dtype), extra,
                               limits);
}

}  // namespace dmlgrad
