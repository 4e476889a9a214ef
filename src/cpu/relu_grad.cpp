// ReLU grad on the CPU: dX = X > 0 ? dY : 0, X = NaN gives 0, masked elements are +0 / integer 0 (docs/OPERATORS.md 1).
#include <stdexcept>

#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace dmlgrad {
namespace {

// X > 0 for a float on its bits: the positive patterns from the smallest denormal up to +inf are exactly
// [1, inf_bits]; zeros, negatives (sign bit set) and NaNs (above inf_bits) fall outside. One unsigned compare.
template <class Bits, Bits kInfBits>
void relu_grad_float(uint64_t count, const Tensor& x, const Tensor& dy, Tensor& dx) {
    cpu::for_each_element<Bits>(count, x, dy, dx, [](Bits xb, Bits dyb) {
        const bool positive = Bits(xb - 1) < kInfBits;
        return positive ? dyb : Bits(0);
    });
}

template <class Int>
void relu_grad_int(uint64_t count, const Tensor& x, const Tensor& dy, Tensor& dx) {
    cpu::for_each_element<Int>(count, x, dy, dx, [](Int xv, Int dyv) { return xv > 0 ? dyv : Int(0); });
}

}  // namespace

void cpu::relu_grad(const ReluGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx) {
    switch (plan.dtype) {
        case DType::f32: return relu_grad_float<uint32_t, 0x7F800000u>(plan.count, x, dy, dx);
        case DType::f16: return relu_grad_float<uint16_t, 0x7C00u>(plan.count, x, dy, dx);
        case DType::i32: return relu_grad_int<int32_t>(plan.count, x, dy, dx);
        case DType::i16: return relu_grad_int<int16_t>(plan.count, x, dy, dx);
        case DType::i8: return relu_grad_int<int8_t>(plan.count, x, dy, dx);
        default: throw std::logic_error("cpu::relu_grad: dtype not in the plan's table");
    }
}

}  // namespace dmlgrad
