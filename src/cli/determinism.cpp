#include "cli/determinism.h"

#include <cstring>

#include "core/tolerance.h"
#include "test_hooks/test_hooks.h"

namespace dmlgrad::cli {

DeterminismSummary check_determinism(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs,
                                     const Tensor& result, int runs, ExecutionStats& stats) {
    DeterminismSummary summary;
    summary.runs = runs;
    Tensor again(result.info);
    for (int run = 2; run <= runs; ++run) {
        for (size_t b = 0; b < result.bytes(); ++b) again.buffer.data()[b] = ~result.buffer.data()[b];
        const ExecutionStats one = backend.run(plan, inputs, again, RunOptions{1});
        stats.kernel_ms.insert(stats.kernel_ms.end(), one.kernel_ms.begin(), one.kernel_ms.end());
        if (test_hooks::corrupt_repeat() == run) again.buffer.data()[0] ^= std::byte{1};
        if (summary.first_differing_run != 0 ||
            std::memcmp(again.buffer.data(), result.buffer.data(), result.bytes()) == 0)
            continue;
        summary.first_differing_run = run;
        for (uint64_t i = result.elements(); i-- > 0;)
            if (element_bits(again, i) != element_bits(result, i)) ++summary.differing, summary.first_index = i;
    }
    return summary;
}

}  // namespace dmlgrad::cli
