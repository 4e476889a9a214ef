#include "core/error.h"
#include "cpu/kernels.h"

namespace dmlgrad {
void cpu::maxpool_grad(const MaxPoolGradPlan&, const Tensor&, const Tensor&, Tensor&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
