#include "core/error.h"
#include "cpu/kernels.h"

namespace dmlgrad {
void cpu::clip_grad(const ClipGradPlan&, const Tensor&, const Tensor&, Tensor&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
