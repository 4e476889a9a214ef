#pragma once
// DML_ACTIVATION_RELU_GRAD_OPERATOR_DESC: dX = X > 0 ? dY : 0 (docs/OPERATORS.md section 1).
#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kReluGradTypes[] = {DType::f32, DType::f16, DType::i32, DType::i16, DType::i8};

struct ReluGradDesc {};  // the operator has no parameters besides its tensors

struct ReluGradPlan {
    static constexpr bool sums = false;  // each dX element is one value or 0 (plan_sums)
    DType dtype = DType::f32;
    Shape shape;
    uint64_t count = 0;
};

ReluGradPlan plan_relu_grad(const ReluGradDesc& desc, const Operand& x, const Operand& dy);

}  // namespace dmlgrad
