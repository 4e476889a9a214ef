#pragma once
// Slice-grad plans written as numpy's slice visits each axis (shared by the slice kernels' GPU tests).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/slice_grad.h"

namespace dmlgrad::testing {

// One axis as numpy's slice visits it: dX size n, the first index visited, how many, the step.
struct Visit {
    int64_t n, first, count, step;
};

inline SliceGradPlan visit_plan(DType type, const std::vector<Visit>& axes) {
    SliceGradDesc desc;
    Shape dy;
    for (const Visit& v : axes) {
        const int64_t last = v.first + v.step * (v.count - 1);
        desc.output_sizes.push_back(v.n);
        desc.window_offsets.push_back(std::min(v.first, last));
        desc.window_sizes.push_back(std::max(v.first, last) - std::min(v.first, last) + 1);
        desc.window_strides.push_back(v.step);
        dy.push_back(v.count);
    }
    return plan_slice_grad(desc, {"--input-gradient", "dy.npy", {type, dy}});
}

}  // namespace dmlgrad::testing
