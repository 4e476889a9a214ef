#include "ops/relu_grad.h"

#include "ops/validation.h"

namespace dmlgrad {

ReluGradPlan plan_relu_grad(const ReluGradDesc&, const Operand& x, const Operand& dy) {
    constexpr std::string_view op = "relu-grad";
    require_dtype(op, x, kReluGradTypes);
    require_rank(op, x, 1, 8);
    require_valid_sizes(x);
    // dY must match X exactly; with that, dY's dtype, rank and sizes are valid too.
    require_same_dtype(x, dy);
    require_same_shape(x, dy);
    return ReluGradPlan{x.info.dtype, x.info.shape, x.info.elements()};
}

}  // namespace dmlgrad
