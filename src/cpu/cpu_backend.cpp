#include "cpu/cpu_backend.h"

#include <fmt/format.h>

#include "core/overloaded.h"
#include "core/parallel.h"
#include "core/stopwatch.h"
#include "cpu/kernels.h"

namespace dmlgrad {
namespace {

void run_once(const Plan& plan, std::span<const Tensor* const> in, Tensor& out) {
    std::visit(Overloaded{[&](const ReluGradPlan& p) { cpu::relu_grad(p, *in[0], *in[1], out); },
                          [&](const ClipGradPlan& p) { cpu::clip_grad(p, *in[0], *in[1], out); },
                          [&](const SliceGradPlan& p) { cpu::slice_grad(p, *in[0], out); },
                          [&](const MaxPoolGradPlan& p) { cpu::maxpool_grad(p, *in[0], *in[1], out); },
                          [&](const ResampleGradPlan& p) { cpu::resample_grad(p, *in[0], out); }},
               plan);
}

class CpuBackend final : public Backend {
public:
    std::string kind() const override { return "cpu"; }
    std::string device_name() const override { return fmt::format("CPU ({} threads)", worker_count()); }

protected:
    ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                           const RunOptions& options) override {
        ExecutionStats stats;
        // With --repeat, one untimed run first brings the pages of the output and the caches in.
        if (options.repeat > 1) run_once(plan, inputs, output);
        for (int i = 0; i < std::max(options.repeat, 1); ++i) {
            Stopwatch watch;
            run_once(plan, inputs, output);
            stats.kernel_ms.push_back(watch.elapsed_ms());
        }
        return stats;
    }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dmlgrad
