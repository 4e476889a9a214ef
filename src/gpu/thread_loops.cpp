#include "gpu/thread_loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "core/error.h"
#include "core/integer.h"
#include "core/overloaded.h"

namespace dmlgrad {
namespace {

// llvmpipe's budget (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS).
constexpr uint32_t kLlvmpipeLoopIterations = 65535;

// The most loop iterations a kernel thread spends on one input value, twice over. Resample: on lavapipe the fp16
// linear kernels stopped after 5456 dY rows of a dX element (12 iterations a value, their loops over a thread's
// elements and taps nested), the fp16 nearest blocks with their exact recomputation near 4095 (16 a value).
// Max-pool: the two-pass choose stopped after ~65000 window taps (1-2 a tap), its fp16 scatter walks 2 elements'
// windows twice (4 a window).
constexpr uint64_t kResampleIterationsPerValue = 32;
constexpr uint64_t kMaxPoolIterationsPerValue = 8;

// Products of counts, held at 2^31 (far past any limit) so that they never overflow.
uint64_t capped_product(uint64_t a, uint64_t b) {
    constexpr uint64_t kCap = uint64_t(1) << 31;
    return std::min(std::min(a, kCap) * std::min(b, kCap), kCap);
}

uint64_t values_read(const ResampleGradPlan& plan) {
    uint64_t taps = 1;
    for (const AxisTaps& axis : plan.axes) taps = capped_product(taps, std::max<uint64_t>(1, tap_counts(axis).second));
    return taps;
}

// Along one axis: the windows that can hold one element (at most one a tap, and no more than the windows whose
// span reaches it).
uint64_t windows_over_an_element(int64_t out, int64_t window, int64_t stride, int64_t dilation) {
    const uint64_t span = uint64_t((window - 1) * dilation + 1);
    return std::min({uint64_t(out), uint64_t(window), ceil_div<uint64_t>(span, uint64_t(stride))});
}

uint64_t values_read(const MaxPoolGradPlan& plan) {
    uint64_t taps = 1, windows = 1;
    for (size_t a = 0; a < 3; ++a) {
        taps = capped_product(taps, uint64_t(plan.window[a]));
        windows = capped_product(
            windows, windows_over_an_element(plan.out[a], plan.window[a], plan.stride[a], plan.dilation[a]));
    }
    return std::max(taps, windows);
}

uint64_t iterations_per_value(const Plan& plan) {
    return std::holds_alternative<MaxPoolGradPlan>(plan) ? kMaxPoolIterationsPerValue : kResampleIterationsPerValue;
}

}  // namespace

uint32_t thread_loop_limit(std::string_view device_name) {
    return device_name.starts_with("llvmpipe") ? kLlvmpipeLoopIterations : 0;
}

uint64_t most_values_an_element_reads(const Plan& plan) {
    return std::visit(
        Overloaded{[](const ResampleGradPlan& p) { return values_read(p); },
                   [](const MaxPoolGradPlan& p) { return values_read(p); }, [](const auto&) { return uint64_t(1); }},
        plan);
}

void check_thread_loops(const Plan& plan, const DeviceLimits& limits) {
    if (limits.thread_loop_limit == 0) return;
    const uint64_t values = most_values_an_element_reads(plan);
    if (capped_product(values, iterations_per_value(plan)) <= limits.thread_loop_limit) return;
    throw RuntimeFailure(fmt::format(
        "{} on the GPU: an output element reads up to {} input values, up to {} loop iterations each in its "
        "thread, more than this device's threads can loop over (llvmpipe leaves a thread's loops after {} "
        "iterations and would write a partial result); run it with --cpu",
        plan_op_name(plan), values, iterations_per_value(plan), limits.thread_loop_limit));
}

}  // namespace dmlgrad
