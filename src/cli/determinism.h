#pragma once
// --deterministic: the same computation run several times must give the same bits every time.
#include <vector>

#include "cli/report.h"
#include "ops/backend.h"

namespace dmlgrad::cli {

// Runs `plan` `runs - 1` more times, each into a fresh output filled with the complement of `result`'s bits (so an
// element a run leaves unwritten differs), and compares each output with `result` bit for bit. Each run's kernel
// time is appended to `stats`.
DeterminismSummary check_determinism(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs,
                                     const Tensor& result, int runs, ExecutionStats& stats);

}  // namespace dmlgrad::cli
