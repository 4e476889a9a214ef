// The GPU tests' comparison itself: for every operator it fails on one wrong bit and on one unwritten element,
// and its message names the operator's parameters. The "GPU" here is the CPU backend with a fault added.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "gpu_testing.h"

namespace dmlgrad::testing {
namespace {

enum class Fault { flip_last_bit, skip_first_element };

// The CPU backend's result with `fault` applied: what a wrong kernel would return.
class FaultyBackend final : public Backend {
public:
    explicit FaultyBackend(Fault fault) : fault_(fault) {}
    std::string kind() const override { return "gpu"; }
    std::string device_name() const override { return "faulty"; }

protected:
    ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                           const RunOptions& options) override {
        const size_t element = dtype_size(output.dtype());
        std::vector<std::byte> first(output.buffer.data(), output.buffer.data() + element);  // the poison
        ExecutionStats stats = cpu().run(plan, inputs, output, options);
        if (fault_ == Fault::flip_last_bit)
            output.buffer.data()[output.bytes() - 1] ^= std::byte{0x01};
        else
            std::copy(first.begin(), first.end(), output.buffer.data());
        return stats;
    }

private:
    Fault fault_;
};

struct Case {
    Plan plan;
    std::vector<const Tensor*> inputs;
    std::string parameters;  // a part of describe()'s line
};

// One small case per operator, inputs that give a nonzero first and last element.
std::vector<Case> one_case_per_operator() {
    static const Tensor matrix = tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4});
    static const Tensor planes = tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4});
    const Operand x{"--input", "x.npy", matrix.info}, dy{"--input-gradient", "dy.npy", matrix.info};
    const Operand x4{"--input", "x.npy", planes.info}, dy4{"--input-gradient", "dy.npy", planes.info};
    const ResampleGradDesc linear{{2, 4}, InterpolationMode::linear, RoundingDirection::decreasing, {}, {}, {}};
    return {{ReluGradPlan{DType::f32, {2, 2}, 4}, {&matrix, &matrix}, "relu-grad float32 2x2"},
            {plan_clip_grad({"0", "5"}, x, dy), {&matrix, &matrix}, "max bits 0x40a00000"},
            {plan_slice_grad({{2, 2}, {0, 0}, {2, 2}, {1, -1}}, dy), {&matrix}, "start 0 1 stride 1 -1"},
            {plan_maxpool_grad({{1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, x4, dy4), {&planes, &planes}, "window 1 1 1"},
            {plan_resample_grad(linear, dy), {&matrix}, "linear dX 2x4 dY 2x2 scales 1 0.5"}};
}

TEST(GpuTesting, FailsOnOneWrongBitOfEveryOperator) {
    FaultyBackend faulty(Fault::flip_last_bit);
    for (const Case& c : one_case_per_operator()) {
        SCOPED_TRACE(plan_op_name(c.plan));
        EXPECT_NONFATAL_FAILURE(expect_gpu_matches_cpu(c.plan, c.inputs, faulty), "1 element(s) differ");
    }
}

TEST(GpuTesting, FailsOnAnUnwrittenElementOfEveryOperator) {
    FaultyBackend faulty(Fault::skip_first_element);
    for (const Case& c : one_case_per_operator()) {
        SCOPED_TRACE(plan_op_name(c.plan));
        EXPECT_NONFATAL_FAILURE(expect_gpu_matches_cpu(c.plan, c.inputs, faulty), "first at index 0");
    }
}

TEST(GpuTesting, PassesOnTheSameResultAndNamesTheParameters) {
    for (const Case& c : one_case_per_operator()) {
        expect_gpu_matches_cpu(c.plan, c.inputs, cpu());
        EXPECT_NE(describe(c.plan).find(c.parameters), std::string::npos) << describe(c.plan);
    }
}

}  // namespace
}  // namespace dmlgrad::testing
