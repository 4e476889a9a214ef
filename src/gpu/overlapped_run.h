#pragma once
// The runs both GPU backends overlap (OverlappedRuns, ops/backend.h).
#include <algorithm>
#include <cstdint>
#include <span>

#include "core/tensor.h"
#include "gpu/dispatch.h"
#include "ops/backend.h"

namespace dmlgrad {

// Small runs, where the device's latency is most of a run's time: every tensor at most `max_bytes` once padded, one
// timed execution, and no device-resident hand-over asked for (ResidentTensors goes through run() only). A backend
// adds what its queue needs (timestamps).
inline bool is_overlappable_run(std::span<const Tensor* const> inputs, const Tensor& output, const RunOptions& options,
                                bool has_resident_keys, uint64_t max_bytes) {
    if (options.repeat != 1 || has_resident_keys) return false;
    const auto small = [max_bytes](const Tensor* t) { return padded_bytes(t->bytes()) <= max_bytes; };
    return small(&output) && std::all_of(inputs.begin(), inputs.end(), small);
}

}  // namespace dmlgrad
