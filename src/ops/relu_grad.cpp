#include "core/error.h"
#include "ops/relu_grad.h"

namespace dmlgrad {
ReluGradPlan plan_relu_grad(const ReluGradDesc&, const Operand&, const Operand&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
