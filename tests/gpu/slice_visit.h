#pragma once
// Slice-grad plans written as numpy's slice visits each axis (shared by the slice kernels' GPU tests).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
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

// An axis of n elements visited with `step` from a random first index: every index the step reaches from there, or
// (`all_reachable` false) a random number of them.
inline Visit random_visit(int64_t n, int64_t step, bool all_reachable, std::mt19937_64& rng) {
    const int64_t first = int64_t(rng() % uint64_t(n));
    const int64_t room = step > 0 ? n - 1 - first : first;  // indices the step can still move through
    const int64_t reachable = 1 + room / (step < 0 ? -step : step);
    return {n, first, all_reachable ? reachable : 1 + int64_t(rng() % uint64_t(reachable)), step};
}

inline constexpr DeviceLimits kOneBinding{uint64_t(1) << 27, 256, 65535};  // dY and dX bound whole

inline GpuProgram program_of(const SliceGradPlan& plan, const DeviceLimits& limits = kOneBinding) {
    return build_slice_grad_program(plan, limits);
}

// The variant of a slice kernel family ("slice_grad_walk") for elements of `type`.
inline std::string slice_kernel(const std::string& family, DType type) {
    return family + "_b" + std::to_string(8 * dtype_size(type));
}

}  // namespace dmlgrad::testing
