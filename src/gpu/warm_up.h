#pragma once
// The warm-up before timed executions (RunOptions::repeat > 1), shared by both GPU backends: the H100 idles at a
// low clock, so executions run back to back for a while first.
#include <cstdint>
#include <functional>

namespace dmlgrad {

// Calls `run_and_wait(copies)` (run that many executions back to back and wait for them) until `seconds` have
// passed, in batches of at most ~50 ms: they keep the GPU busy without overshooting the warm-up by much.
void warm_up_for(double seconds, const std::function<void(uint32_t copies)>& run_and_wait);

}  // namespace dmlgrad
