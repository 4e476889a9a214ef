#include "core/error.h"
#include "ops/maxpool_grad.h"

namespace dmlgrad {
MaxPoolGradPlan plan_maxpool_grad(const MaxPoolGradDesc&, const Operand&, const Operand&) { throw RuntimeFailure("not implemented"); }
int64_t maxpool_output_size(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
