#include "gpu/dispatch.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "core/error.h"
#include "core/overloaded.h"
#include "gpu/kernel_registry.h"
#include "gpu/thread_loops.h"
#include "interface/prelude.h"

namespace dmlgrad {

GpuProgram build_program(const Plan& plan, const DeviceLimits& limits) {
    check_thread_loops(plan, limits);
    return std::visit(Overloaded{[&](const ReluGradPlan& p) { return build_relu_grad_program(p, limits); },
                                 [&](const ClipGradPlan& p) { return build_clip_grad_program(p, limits); },
                                 [&](const SliceGradPlan& p) { return build_slice_grad_program(p, limits); },
                                 [&](const MaxPoolGradPlan& p) { return build_maxpool_grad_program(p, limits); },
                                 [&](const ResampleGradPlan& p) { return build_resample_grad_program(p, limits); }},
                      plan);
}

std::string dtype_suffix(DType type) { return std::string(dtype_short_name(type)); }

uint32_t log2_or_none(uint64_t v) { return std::has_single_bit(v) ? uint32_t(std::countr_zero(v)) : kernels::NO_SHIFT; }

std::vector<std::pair<uint64_t, uint64_t>> split_windows(uint64_t padded, const DeviceLimits& limits) {
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (uint64_t offset = 0; offset < padded; offset += limits.max_binding_bytes)
        windows.emplace_back(offset, std::min(limits.max_binding_bytes, padded - offset));
    return windows;
}

void append_dispatches(GpuProgram& program, const std::vector<BufferWindow>& bindings, std::vector<uint32_t> push,
                       uint64_t first, uint64_t count, const DeviceLimits& limits, bool barrier_before) {
    const uint64_t group = find_kernel(program.kernel).workgroup_size;
    const uint64_t per_dispatch = uint64_t(limits.max_groups_x) * group;
    for (uint64_t done = 0; done < count; done += per_dispatch) {
        const uint64_t threads = std::min(per_dispatch, count - done);
        DispatchStep step;
        step.bindings = bindings;
        step.push = push;
        step.push[0] = uint32_t(first + done);
        step.groups = uint32_t(ceil_div(threads, group));
        step.barrier_before = barrier_before && done == 0;
        program.steps.push_back(std::move(step));
    }
}

}  // namespace dmlgrad
