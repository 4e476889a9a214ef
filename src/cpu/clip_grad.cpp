// Clip grad on the CPU: dX = (X <= Min || X >= Max) ? 0 : dY, X = NaN passes dY (docs/OPERATORS.md 2).
#include <stdexcept>

#include "core/float_order.h"
#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace dmlgrad {
namespace {

// Floats compare through their order keys (core/float_order.h): -0 == +0, denormals exact whatever the FPU's
// flush mode, and the same rule as the GPU kernels. The bounds are never NaN (parse_clip_bound rejects it).
template <class Bits, auto order_key, auto is_nan>
void clip_grad_float(const ClipGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx) {
    const auto low = order_key(Bits(plan.min_bits));
    const auto high = order_key(Bits(plan.max_bits));
    cpu::for_each_element<Bits>(plan.count, x, dy, dx, [=](Bits xb, Bits dyb) {
        const auto key = order_key(xb);
        const bool passes = ((low < key) & (key < high)) | is_nan(xb);
        return passes ? dyb : Bits(0);
    });
}

// Integers (64-bit included) compare natively in their own signedness: no float detour.
template <class Int>
void clip_grad_int(const ClipGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx) {
    const Int low = Int(plan.min_bits);  // the bounds' bit patterns, zero-extended: truncate back
    const Int high = Int(plan.max_bits);
    cpu::for_each_element<Int>(plan.count, x, dy, dx, [=](Int xv, Int dyv) {
        const bool passes = (low < xv) & (xv < high);
        return passes ? dyv : Int(0);
    });
}

}  // namespace

void cpu::clip_grad(const ClipGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx) {
    switch (plan.dtype) {
        case DType::f32: return clip_grad_float<uint32_t, order_key_f32, is_nan_f32>(plan, x, dy, dx);
        case DType::f16: return clip_grad_float<uint16_t, order_key_f16, is_nan_f16>(plan, x, dy, dx);
        case DType::i64: return clip_grad_int<int64_t>(plan, x, dy, dx);
        case DType::i32: return clip_grad_int<int32_t>(plan, x, dy, dx);
        case DType::i16: return clip_grad_int<int16_t>(plan, x, dy, dx);
        case DType::i8: return clip_grad_int<int8_t>(plan, x, dy, dx);
        case DType::u64: return clip_grad_int<uint64_t>(plan, x, dy, dx);
        case DType::u32: return clip_grad_int<uint32_t>(plan, x, dy, dx);
        case DType::u16: return clip_grad_int<uint16_t>(plan, x, dy, dx);
        case DType::u8: return clip_grad_int<uint8_t>(plan, x, dy, dx);
        default: throw std::logic_error("cpu::clip_grad: dtype not in the plan's table");
    }
}

}  // namespace dmlgrad
