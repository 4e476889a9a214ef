// Resample grad's linear planes (kernels/resample_grad_planes.hlsl, MODE LINEAR: linear plans of 2^21 dX elements and
// more whose resampled axes make small planes of few terms an element) against the CPU reference, bit for bit,
// outputs poisoned: the align_corners 0.667 x 0.235 geometry of the H200 sweep case (fp16 rows of 51 from 12 in
// planes of 9 rows from 6: odd planes, so a thread's elements across planes, and columns of no term), three
// resampled axes, an upscaled axis beside a downscaled one, 1-D rows, an odd dX (fp16: the last uint4's halves past
// the end), a grid split over several dispatches, special values and raw bits (NaNs, -0, subnormal halves and
// denormal floats, made again on bits); which plans take them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

bool takes_linear_planes(const ResampleGradPlan& plan, const DeviceLimits& limits = kRoomy) {
    return kernel_of(plan, limits) ==
           "resample_grad_linear_" + std::string(plan.dtype == DType::f16 ? "f16" : "f32") + "_planes";
}

// Linear half-pixel with DirectML's parameters (resample_plans.h's half_pixel_plan).
ResampleGradPlan linear_plan(DType type, const Shape& dx, const std::vector<float>& scales) {
    return half_pixel_plan(dx, scales, InterpolationMode::linear, RoundingDirection::decreasing, type);
}

// The plan takes the linear planes and matches the CPU on random values with specials and on raw bits.
void expect_linear_planes_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_TRUE(takes_linear_planes(plan)) << kernel_of(plan);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
}

TEST(ResamplePlanesGpu, LinearTakesSmallPlanesOfFewTermsAnElement) {
    for (DType type : {DType::f16, DType::f32}) {
        SCOPED_TRACE(type == DType::f16 ? "f16" : "f32");
        EXPECT_TRUE(takes_linear_planes(align_corners_plan(type, {5000, 9, 51}, {5000, 6, 12})));
        EXPECT_TRUE(takes_linear_planes(align_corners_plan(type, {3600, 5, 9, 13}, {3600, 3, 6, 5})));  // three axes
        EXPECT_TRUE(takes_linear_planes(linear_plan(type, {140000, 5, 3}, {1, 1.2f, 1})));  // rows of 1-2 dY rows
        EXPECT_TRUE(takes_linear_planes(linear_plan(type, {50000, 51}, {1, 0.4f})));        // 1-D downscale
        // Fewer than 2^18 threads of a uint4 (fp16 dX below 2^21 elements, float32 below 2^20: they would not fill
        // the GPU): other kernels.
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {2000, 9, 51}, {2000, 6, 12})));
        EXPECT_EQ(takes_linear_planes(align_corners_plan(type, {4000, 9, 51}, {4000, 6, 12})), type == DType::f32);
        // Planes of more than 4096 dX elements; of rows of several dY rows and more than 3 terms an element; of rows
        // of one dY row and more than 2 terms an element (1.5x: 3) or 8192 words of lists (2100 elements of 1.8
        // terms: 9661); one-tap plans (0.5x half-pixel: the one-tap strips); planes of fewer elements than a
        // thread's uint4 less one.
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {600, 65, 64}, {600, 20, 12})));
        EXPECT_FALSE(takes_linear_planes(linear_plan(type, {5000, 9, 51}, {1, 2, 2})));
        EXPECT_FALSE(takes_linear_planes(linear_plan(type, {80000, 31}, {1, 1.5f})));
        EXPECT_FALSE(takes_linear_planes(linear_plan(type, {1000, 2100}, {1, 0.9f})));
        EXPECT_FALSE(takes_linear_planes(linear_plan(type, {80000, 32}, {1, 0.5f})));
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {1100000, 2, 1}, {1100000, 3, 1})));
        // dX or dY beyond one binding: the runs.
        constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {5000, 9, 51}, {5000, 6, 12}), kTinyBindings));
    }
}

TEST(ResamplePlanesGpu, LinearMatchesCpuOnDownscaledPlanes) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32})
        expect_linear_planes_match_cpu(align_corners_plan(type, {4571, 9, 51}, {4571, 6, 12}), rng);  // odd dX
    expect_linear_planes_match_cpu(align_corners_plan(DType::f16, {3585, 5, 9, 13}, {3585, 3, 6, 5}), rng);
    expect_linear_planes_match_cpu(linear_plan(DType::f32, {10000, 7, 30}, {1, 1.5f, 0.4f}), rng);      // up and down
    expect_linear_planes_match_cpu(linear_plan(DType::f16, {41131, 51}, {1, 0.4f}), rng);               // 1-D
    expect_linear_planes_match_cpu(align_corners_plan(DType::f32, {2287, 9, 51}, {2287, 6, 12}), rng);  // 2^20 + 1157
}

TEST(ResamplePlanesGpu, LinearMatchesCpuOnAGridSplitOverDispatches) {
    SeededRng rng;
    const ResampleGradPlan plan = align_corners_plan(DType::f16, {4571, 9, 51}, {4571, 6, 12});  // 262262 threads
    SCOPED_TRACE(describe(plan));
    constexpr DeviceLimits kManyGroups{1 << 30, 256, 200};  // 1025 workgroups in 6 dispatches
    ASSERT_TRUE(takes_linear_planes(plan, kManyGroups));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_limits(kManyGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
