#include "core/error.h"
#include "cpu/kernels.h"

namespace dmlgrad {
void cpu::slice_grad(const SliceGradPlan&, const Tensor&, Tensor&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
