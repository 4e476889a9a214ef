#include "core/error.h"
#include "ops/slice_grad.h"

namespace dmlgrad {
SliceGradPlan plan_slice_grad(const SliceGradDesc&, const Operand&) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
