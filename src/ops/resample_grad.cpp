#include "core/error.h"
#include "ops/resample_grad.h"

namespace dmlgrad {
ResampleGradPlan plan_resample_grad(const ResampleGradDesc&, const Operand&) { throw RuntimeFailure("not implemented"); }
AxisTaps build_axis_taps(InterpolationMode, RoundingDirection, int64_t, int64_t, float, float, float) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
