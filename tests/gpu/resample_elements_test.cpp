// Resample grad's element kernel (kernels/resample_grad.hlsl with ONE_ELEMENT: small linear float32 plans that the
// strips and runs make element by element, several taps on the outer axes or more than MAX_FIXED_TAPS on the inner
// ones) against the CPU reference, bit for bit, on fresh random inputs with the output poisoned: a 3-D downsample of
// about a hundred taps an element (the H100 sweep's case, scaled down), four axes, columns without taps, special
// values and raw bits (NaN sums and tiny values made again on bits), several dispatches; and which plans take it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

const std::string kElements = "resample_grad_linear_f32_elements";

// Linear with DirectML's parameters: dY's sizes are dX's times the scales (rounded down), asymmetric (offsets 0) or
// half-pixel.
ResampleGradPlan linear_plan(const Shape& dx, const std::vector<float>& scales, bool half_pixel,
                             DType type = DType::f32) {
    ResampleGradDesc desc{dx, InterpolationMode::linear, RoundingDirection::decreasing, scales, {}, {}};
    Shape dy;
    for (size_t a = 0; a < dx.size(); ++a) {
        dy.push_back(int64_t(float(dx[a]) * scales[a]));
        desc.input_pixel_offsets.push_back(half_pixel ? -0.5f : 0.0f);
        desc.output_pixel_offsets.push_back(half_pixel ? 0.5f : 0.0f);
    }
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy}});
}

void expect_elements_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), kElements);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(DType::f32, plan.dy_shape, rng));
}

TEST(ResampleElementsGpu, TakeSmallLinearF32PlansTheStripsMakeElementByElement) {
    EXPECT_EQ(kernel_of(linear_plan({1, 2, 13, 16}, {1, 2.5f, 2.75f, 2.75f}, false)), kElements);  // 3 axes down
    EXPECT_EQ(kernel_of(linear_plan({9, 6}, {3, 3}, false)), kElements);  // 7 taps an index on axes 2 and 3
    EXPECT_EQ(kernel_of(linear_plan({5, 8, 12}, {1.5f, 1, 0.25f}, true)), kElements);  // 2-3 taps on view axis 1
    // At most MAX_FIXED_TAPS on axes 2 and 3 and one on 0 and 1: the fixed-tap strips share the taps.
    EXPECT_EQ(kernel_of(linear_plan({1, 1, 30, 20}, {1, 1, 2, 2}, true)), "resample_grad_linear_f32_strips_taps4");
    // dX of 2^21 elements and more (the strips' threads fill the GPU), fp16, tensors beyond one binding.
    EXPECT_NE(kernel_of(linear_plan({2, 1024, 1024}, {2, 1, 1}, true)), kElements);
    EXPECT_NE(kernel_of(linear_plan({1, 2, 13, 16}, {1, 2.5f, 2.75f, 2.75f}, false, DType::f16)),
              "resample_grad_linear_f16_elements");
    EXPECT_EQ(kernel_of(linear_plan({1, 2, 13, 16}, {1, 2.5f, 2.75f, 2.75f}, false), DeviceLimits{24 << 10, 16, 65535}),
              "resample_grad_linear_f32");
}

TEST(ResampleElementsGpu, MatchCpuOnManyTapsAnElement) {
    SeededRng rng;
    expect_elements_match_cpu(linear_plan({1, 2, 13, 16}, {1, 2.5f, 2.75f, 2.75f}, false), rng);  // ~100 taps
    expect_elements_match_cpu(linear_plan({3, 2, 5, 7}, {2, 1.5f, 3, 2.5f}, true), rng);          // four axes
    expect_elements_match_cpu(linear_plan({9, 6}, {3, 3}, false), rng);
    expect_elements_match_cpu(linear_plan({5, 8, 12}, {1.5f, 1, 0.25f}, true), rng);  // columns without taps
}

TEST(ResampleElementsGpu, ManyWorkgroupsInSeveralDispatches) {
    SeededRng rng;
    const ResampleGradPlan plan = linear_plan({4, 7, 61}, {1.5f, 2.5f, 2.5f}, true);  // 1708 threads, 7 workgroups
    ASSERT_EQ(kernel_of(plan, kFewGroups), kElements);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
