// lavapipe's loop budget (gpu/thread_loops.h): a plan whose threads could loop past it is refused with a line that
// says to run it with --cpu, where it used to come back as a partial sum; inside the budget it runs and matches
// the CPU. On a device without the budget (a real GPU) every plan runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "gpu/thread_loops.h"
#include "gpu_testing.h"
#include "ops/maxpool_grad.h"
#include "ops/resample_grad.h"

namespace dmlgrad::testing {
namespace {

// dY (rows, 3) -> dX (1, 3), linear: dX's one row sums every dY row.
ResampleGradPlan linear_to_one_row(DType type, int64_t rows) {
    ResampleGradDesc desc;
    desc.output_sizes = {1, 3};
    desc.mode = InterpolationMode::linear;
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, {rows, 3}}});
}

// One window over each of two size x size planes (global pooling).
MaxPoolGradPlan global_pool(DType type, int64_t size) {
    const MaxPoolGradDesc desc{{size, size}, {1, 1}, {0, 0}, {0, 0}, {1, 1}};
    return plan_maxpool_grad(desc, {"--input", "x.npy", {type, {1, 2, size, size}}},
                             {"--input-gradient", "dy.npy", {type, {1, 2, 1, 1}}});
}

TEST(GpuThreadLoops, CountsTheValuesAnElementReads) {
    EXPECT_GE(most_values_an_element_reads(linear_to_one_row(DType::f32, 30000)), 30000u);
    EXPECT_LT(most_values_an_element_reads(linear_to_one_row(DType::f32, 30)), 100u);
    EXPECT_EQ(most_values_an_element_reads(global_pool(DType::f32, 260)), 260u * 260u);
    // k5 s2 on 40 x 40: 25 taps a window; 3 x 3 windows over an element.
    const MaxPoolGradDesc strided{{5, 5}, {2, 2}, {0, 0}, {0, 0}, {1, 1}};
    EXPECT_EQ(
        most_values_an_element_reads(plan_maxpool_grad(strided, {"--input", "x.npy", {DType::f32, {1, 1, 40, 40}}},
                                                       {"--input-gradient", "dy.npy", {DType::f32, {1, 1, 18, 18}}})),
        25u);
    // k40 s1 on 79 x 79: 1600 taps, and 40 x 40 windows over the middle element.
    const MaxPoolGradDesc overlapping{{40, 40}, {1, 1}, {0, 0}, {0, 0}, {1, 1}};
    EXPECT_EQ(
        most_values_an_element_reads(plan_maxpool_grad(overlapping, {"--input", "x.npy", {DType::f32, {1, 1, 79, 79}}},
                                                       {"--input-gradient", "dy.npy", {DType::f32, {1, 1, 40, 40}}})),
        1600u);
    EXPECT_EQ(thread_loop_limit("llvmpipe (LLVM 15.0.6, 256 bits)"), 65535u);
    EXPECT_EQ(thread_loop_limit("NVIDIA H100 80GB HBM3"), 0u);
}

// Plans whose dX elements read tens of thousands of values: lavapipe cut both short (linear fp16 summed 5456 of
// 16384 rows; the pooling gave dY to element 0 instead of the maximum).
TEST(GpuThreadLoops, PlansPastTheBudgetAreRefusedNotCutShort) {
    SeededRng rng;
    const bool budget = thread_loop_limit(gpu().device_name()) != 0;
    const ResampleGradPlan resample = linear_to_one_row(DType::f16, 16384);
    const MaxPoolGradPlan pool = global_pool(DType::f32, 260);
    const Tensor dy = random_tensor(DType::f16, resample.dy_shape, rng, false);
    const Tensor x = random_tensor(DType::f32, pool.x_shape, rng, false);
    const Tensor pool_dy = random_tensor(DType::f32, pool.dy_shape, rng, false);
    if (!budget) {
        expect_gpu_matches_cpu(resample, dy);
        expect_gpu_matches_cpu(pool, x, pool_dy);
        return;
    }
    const auto expect_refused = [](const Plan& plan, const std::vector<const Tensor*>& inputs) {
        try {
            run_on(gpu(), plan, inputs);
            ADD_FAILURE() << "ran: " << describe(plan);
        } catch (const RuntimeFailure& e) {
            EXPECT_NE(std::string(e.what()).find("run it with --cpu"), std::string::npos) << e.what();
        }
    };
    expect_refused(resample, {&dy});
    expect_refused(pool, {&x, &pool_dy});
}

// Just inside the budget (2000 rows; a 90 x 90 window, 8100 taps) the kernels run whole on every device.
TEST(GpuThreadLoops, PlansInsideTheBudgetRun) {
    SeededRng rng;
    const ResampleGradPlan resample = linear_to_one_row(DType::f16, 2000);
    expect_gpu_matches_cpu(resample, random_tensor(DType::f16, resample.dy_shape, rng, false));
    const MaxPoolGradPlan pool = global_pool(DType::f32, 90);
    expect_gpu_matches_cpu(pool, random_tensor(DType::f32, pool.x_shape, rng, false),
                           random_tensor(DType::f32, pool.dy_shape, rng, false));
}

}  // namespace
}  // namespace dmlgrad::testing
