// Resample grad's element kernels (kernels/resample_grad.hlsl with ONE_ELEMENT: small linear float32 plans that the
// strips and runs make element by element, several taps on the outer axes or more than MAX_FIXED_TAPS on the inner
// ones; small nearest float32 plans that reach the runs) against the CPU reference, bit for bit, on fresh random
// inputs with the output poisoned: a 3-D downsample of about a hundred taps an element (the H100 sweep's case,
// scaled down), nearest 1-D to 3-D downsamples of up to 16 taps an element, four axes, columns and rows without
// taps, special values and raw bits (NaN sums and tiny values made again on bits), several dispatches; and which
// plans take them.
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

// Nearest with DirectML's parameters (half-pixel or asymmetric offsets, rounding down), dY's sizes dX's times the
// scales.
ResampleGradPlan nearest_plan(const Shape& dx, const std::vector<float>& scales, bool half_pixel,
                              DType type = DType::f32) {
    return offset_plan(dx, scales, InterpolationMode::nearest, RoundingDirection::decreasing, half_pixel ? -0.5f : 0.0f,
                       type);
}

const std::string kNearestElements = "resample_grad_nearest_f32_elements";

TEST(ResampleElementsGpu, TakeSmallNearestF32PlansThatReachTheRuns) {
    EXPECT_EQ(kernel_of(nearest_plan({5, 19, 435}, {1, 3.84f, 3.88f}, true)), kNearestElements);  // ~15 taps
    EXPECT_EQ(kernel_of(nearest_plan({3, 5, 559}, {1, 4, 4}, false)), kNearestElements);
    EXPECT_EQ(kernel_of(nearest_plan({3825}, {3}, false)), kNearestElements);  // 1-D, 3 taps an element
    // dX of 2^21 elements and more keep the runs (their four elements a thread fill the GPU); rows the strips take
    // (f32 rows shorter than a run), the lines (one dY row, at most 2 taps) and one-tap plans keep theirs; fp16.
    EXPECT_EQ(kernel_of(nearest_plan({4, 1024, 512}, {1, 1, 4}, false)), "resample_grad_nearest_f32");
    EXPECT_EQ(kernel_of(nearest_plan({2, 45, 45}, {1, 2, 2}, false)), "resample_grad_nearest_f32_strips");
    EXPECT_EQ(kernel_of(nearest_plan({3, 999}, {1, 2}, false)), "resample_grad_nearest_f32_lines_taps2");
    EXPECT_EQ(kernel_of(nearest_plan({5, 19, 435}, {1, 3.84f, 3.88f}, true, DType::f16)),
              "resample_grad_nearest_f16_walk_words_ahead");
}

TEST(ResampleElementsGpu, NearestMatchCpuOnManyTapsAnElement) {
    SeededRng rng;
    for (const ResampleGradPlan& plan :
         {nearest_plan({5, 19, 435}, {1, 3.84f, 3.88f}, true), nearest_plan({2, 3, 5, 137}, {1, 1, 3, 4}, false),
          nearest_plan({3, 7, 259}, {1, 0.4f, 2.5f}, true),  // rows without taps
          nearest_plan({1531}, {2.94f}, true)}) {
        SCOPED_TRACE(describe(plan));
        ASSERT_EQ(kernel_of(plan), kNearestElements);
        expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng));
        expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng, /*specials=*/false));
        expect_gpu_matches_cpu(plan, random_bits(DType::f32, plan.dy_shape, rng));
    }
}

TEST(ResampleElementsGpu, ManyWorkgroupsInSeveralDispatches) {
    SeededRng rng;
    const ResampleGradPlan plan = linear_plan({4, 7, 61}, {1.5f, 2.5f, 2.5f}, true);  // 1708 threads, 7 workgroups
    ASSERT_EQ(kernel_of(plan, kFewGroups), kElements);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    const ResampleGradPlan nearest = nearest_plan({2, 5, 259}, {1, 2.5f, 3.5f}, true);  // 2590 threads
    ASSERT_EQ(kernel_of(nearest, kFewGroups), kNearestElements);
    expect_gpu_matches_cpu(nearest, random_tensor(DType::f32, nearest.dy_shape, rng), gpu_with_limits(kFewGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
