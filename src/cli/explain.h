#pragma once
// --explain: which dY elements reach each dX index, axis by axis, read off the plan the run would use. It answers
// "which source pixels does this resize mode read" and "where does this slice go" without running anything.
#include <string>

#include "ops/plan.h"

namespace dmlgrad::cli {

// Per axis, one line per dX index (up to kExplainedIndices of them, then a count of the rest). For operators
// without a per-axis mapping (relu, clip, max-pool), a line saying so.
std::string explain_plan(const Plan& plan);

inline constexpr size_t kExplainedIndices = 512;

// "kernel: <name>\n": the GPU kernel the plan takes under typical limits (gpu/dispatch.h's kTypicalLimits), or
// why the GPU refuses it. No device is needed.
std::string explain_kernel(const Plan& plan);

}  // namespace dmlgrad::cli
