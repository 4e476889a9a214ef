#pragma once
// One validated operator instance: what every backend consumes.
#include <string_view>
#include <variant>
#include <vector>

#include "core/compare.h"
#include "ops/clip_grad.h"
#include "ops/maxpool_grad.h"
#include "ops/relu_grad.h"
#include "ops/resample_grad.h"
#include "ops/slice_grad.h"

namespace dmlgrad {

using Plan = std::variant<ReluGradPlan, ClipGradPlan, SliceGradPlan, MaxPoolGradPlan, ResampleGradPlan>;

// "relu-grad", ...
std::string_view plan_op_name(const Plan& plan);
DType plan_dtype(const Plan& plan);
TensorInfo plan_output_info(const Plan& plan);
// The inputs a backend takes, in order: X then dY for relu, clip and max-pool; dY alone for slice and resample.
std::vector<TensorInfo> plan_input_infos(const Plan& plan);
// The fewest bytes the operator must move: each input read once, the output written once.
uint64_t plan_min_bytes(const Plan& plan);

// Whether the operator adds contributions into a dX element (max-pool, resample: each plan's `sums`).
bool plan_sums(const Plan& plan);
// The tolerance --check and --compare use unless --rtol/--atol replace a part: summing_tolerance for the summing
// operators, else exact.
Tolerance default_tolerance(const Plan& plan);
// The summing operators' tolerance (README states it), per dtype: float32 and float16.
Tolerance summing_tolerance(DType type);

}  // namespace dmlgrad
