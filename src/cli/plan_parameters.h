#pragma once
// The operator's parameters as the plan resolved them, in DirectML's terms: what --json reports under
// "parameters", so a run given numpy or framework vocabulary shows the DirectML call it became.
#include <string>

#include "ops/plan.h"

namespace dmlgrad::cli {

// A JSON object, e.g. {"input_window_offsets":[0,1],"input_window_sizes":[2,3],"input_window_strides":[1,2]}.
std::string parameters_json(const Plan& plan);

// A clip bound, kept by the plan as the tensors' bit pattern, as a JSON number ("inf" and "-inf" as strings).
std::string clip_bound_json(DType type, uint64_t bits);

}  // namespace dmlgrad::cli
