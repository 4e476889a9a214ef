#include "core/error.h"
#include "cpu/kernels.h"

namespace dmlgrad {
void cpu::relu_grad(const ReluGradPlan&, const Tensor&, const Tensor&, Tensor&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
