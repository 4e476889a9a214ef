#include "cli/mistrust.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/float_order.h"

namespace dmlgrad::cli {
namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.buffer.data(), b.buffer.data(), a.bytes()) == 0;
}

// max-pool's key of X's element `i` (core/float_order.h).
int32_t pool_key(const Tensor& x, uint64_t i) {
    return x.dtype() == DType::f16 ? pool_key_f16(x.as<uint16_t>()[i]) : pool_key_f32(x.as<uint32_t>()[i]);
}

// The in-input coordinates of window position `o` along one axis.
std::vector<int64_t> window_coordinates(const MaxPoolGradPlan& plan, size_t axis, int64_t o) {
    std::vector<int64_t> c;
    for (int64_t k = 0; k < plan.window[axis]; ++k) {
        const int64_t at = o * plan.stride[axis] - plan.start_padding[axis] + k * plan.dilation[axis];
        if (at >= 0 && at < plan.in[axis]) c.push_back(at);
    }
    return c;
}

}  // namespace

uint64_t tied_windows(const MaxPoolGradPlan& plan, const Tensor& x) {
    uint64_t tied = 0;
    const int64_t plane_size = plan.in[0] * plan.in[1] * plan.in[2];
    for (uint64_t plane = 0; plane < plan.planes; ++plane)
        for (int64_t o0 = 0; o0 < plan.out[0]; ++o0)
            for (int64_t o1 = 0; o1 < plan.out[1]; ++o1)
                for (int64_t o2 = 0; o2 < plan.out[2]; ++o2) {
                    int32_t best = INT32_MIN;
                    int count = 0;
                    for (int64_t c0 : window_coordinates(plan, 0, o0))
                        for (int64_t c1 : window_coordinates(plan, 1, o1))
                            for (int64_t c2 : window_coordinates(plan, 2, o2)) {
                                const int32_t key = pool_key(x, plane * uint64_t(plane_size) +
                                                                    uint64_t((c0 * plan.in[1] + c1) * plan.in[2] + c2));
                                if (key > best) best = key, count = 0;
                                count += key == best;
                            }
                    tied += count > 1;
                }
    return tied;
}

std::vector<std::string> mistrust_reasons(const Comparison& diff, const Tensor& reference,
                                          const std::vector<Operand>& inputs, const std::vector<Tensor>& tensors,
                                          const Plan& plan) {
    std::vector<std::string> reasons;
    if (diff.elements > 0 && double(diff.zeros_in_both) >= kMostlyZeros * double(diff.elements))
        reasons.push_back(fmt::format("{:.3g}% of the elements are 0 in both result and reference",
                                      100.0 * double(diff.zeros_in_both) / double(diff.elements)));
    for (size_t i = 0; i < inputs.size() && i < tensors.size(); ++i)
        if (same_tensor(reference, tensors[i]))
            reasons.push_back(fmt::format("the reference equals the input {} ({}): a copy of it would pass",
                                          inputs[i].flag, inputs[i].path));
    if (const auto* pool = std::get_if<MaxPoolGradPlan>(&plan); pool && !tensors.empty()) {
        const uint64_t windows = pool->planes * uint64_t(pool->out[0] * pool->out[1] * pool->out[2]);
        const uint64_t tied = tied_windows(*pool, tensors[0]);
        if (windows > 0 && double(tied) >= kManyTies * double(windows))
            reasons.push_back(
                fmt::format("{} of {} max-pool windows ({:.3g}%) have tied maxima: the tie rule "
                            "decides where their dY goes",
                            tied, windows, 100.0 * double(tied) / double(windows)));
    }
    return reasons;
}

}  // namespace dmlgrad::cli
