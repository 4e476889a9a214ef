#pragma once
// Why a comparison that passes may prove little (oneDNN benchdnn calls such a pass MISTRUSTED): a result that is
// mostly zeros, a reference equal to an input, a max-pool whose windows are often decided by ties. A warning,
// never an error.
#include <string>
#include <vector>

#include "core/compare.h"
#include "ops/operand.h"
#include "ops/plan.h"

namespace dmlgrad::cli {

// At least this share of elements 0 in both tensors makes a pass mostly about zeros.
inline constexpr double kMostlyZeros = 0.9;
// At least this share of max-pool windows with two or more maximal elements makes the tie rule decide the result.
inline constexpr double kManyTies = 0.1;

// One sentence per reason. `inputs` and `tensors` are the job's inputs, in the same order.
std::vector<std::string> mistrust_reasons(const Comparison& diff, const Tensor& reference,
                                          const std::vector<Operand>& inputs, const std::vector<Tensor>& tensors,
                                          const Plan& plan);

// Of max-pool's windows (one per dY element), those whose maximum (NaN above all, -0 == +0) two or more
// non-padding elements of X share.
uint64_t tied_windows(const MaxPoolGradPlan& plan, const Tensor& x);

}  // namespace dmlgrad::cli
