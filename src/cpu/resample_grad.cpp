#include "core/error.h"
#include "cpu/kernels.h"

namespace dmlgrad {
void cpu::resample_grad(const ResampleGradPlan&, const Tensor&, Tensor&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
