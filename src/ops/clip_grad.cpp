#include "core/error.h"
#include "ops/clip_grad.h"

namespace dmlgrad {
ClipGradPlan plan_clip_grad(const ClipGradDesc&, const Operand&, const Operand&) { throw RuntimeFailure("not implemented"); }
uint64_t parse_clip_bound(std::string_view, std::string_view, DType) { throw RuntimeFailure("not implemented"); }
}  // namespace dmlgrad
