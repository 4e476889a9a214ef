#pragma once
// --explain: which dY elements reach each dX index, axis by axis, read off the plan the run would use. It answers
// "which source pixels does this resize mode read", "where does this slice go" and "which X does each pooling
// window cover" without running anything.
#include <string>

#include "ops/plan.h"

namespace dmlgrad::cli {

// Per axis, one line per dX index (up to kExplainedIndices of them, then a count of the rest); max-pool first lists
// each window, with its padding. The elementwise operators (relu, clip) get their rule and shape in one line.
std::string explain_plan(const Plan& plan);

inline constexpr size_t kExplainedIndices = 512;

// "kernel: <name>\n": the GPU kernel the plan takes under typical limits (gpu/dispatch.h's kTypicalLimits), or
// why the GPU refuses it. No device is needed.
std::string explain_kernel(const Plan& plan);

}  // namespace dmlgrad::cli
