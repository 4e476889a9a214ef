#include "ops/relu_grad.h"

#include "ops/validation.h"

namespace dmlgrad {

ReluGradPlan plan_relu_grad(const ReluGradDesc&, const Operand& x, const Operand& dy) {
    require_elementwise_pair("relu-grad", x, dy, kReluGradTypes);
    return ReluGradPlan{x.info.dtype, x.info.shape, x.info.elements()};
}

}  // namespace dmlgrad
