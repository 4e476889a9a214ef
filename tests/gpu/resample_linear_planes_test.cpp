// Resample grad's linear planes (kernels/resample_grad_planes.hlsl, MODE LINEAR: linear plans whose resampled axes
// make small planes of few terms an element) against the CPU reference, bit for bit, outputs poisoned: the
// align_corners 0.667 x 0.235 geometry of the H200 sweep case (fp16 rows of 51 from 12 in planes of 9 rows from 6:
// odd planes, so fp16 words across planes, and columns of no term), three resampled axes, an upscaled axis beside a
// downscaled one, one plane alone, an odd dX (fp16: the last word's upper half past the end), a grid split over
// several dispatches, special values and raw bits (NaNs, -0, subnormal halves and denormal floats, made again on
// bits); which plans take them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};

std::string kernel_of(const ResampleGradPlan& plan, const DeviceLimits& limits = kRoomy) {
    return build_resample_grad_program(plan, limits).kernel;
}

bool takes_linear_planes(const ResampleGradPlan& plan, const DeviceLimits& limits = kRoomy) {
    return kernel_of(plan, limits) ==
           "resample_grad_linear_" + std::string(plan.dtype == DType::f16 ? "f16" : "f32") + "_planes";
}

// Linear half-pixel with DirectML's parameters (resample_plans.h's half_pixel_plan).
ResampleGradPlan linear_plan(DType type, const Shape& dx, const std::vector<float>& scales) {
    return half_pixel_plan(dx, scales, InterpolationMode::linear, RoundingDirection::decreasing, type);
}

// The plan takes the linear planes and matches the CPU on random values with specials, without, and on raw bits.
void expect_linear_planes_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_TRUE(takes_linear_planes(plan)) << kernel_of(plan);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
}

TEST(ResamplePlanesGpu, LinearTakesSmallPlanesOfFewTermsAnElement) {
    for (DType type : {DType::f16, DType::f32}) {
        SCOPED_TRACE(type == DType::f16 ? "f16" : "f32");
        EXPECT_TRUE(takes_linear_planes(align_corners_plan(type, {3000, 9, 51}, {3000, 6, 12})));
        EXPECT_TRUE(takes_linear_planes(align_corners_plan(type, {300, 5, 9, 13}, {300, 3, 6, 5})));  // three axes
        // Planes of more than 4096 dX elements, or of more than 4 terms an element (4x on two axes: 16 or more).
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {30, 65, 64}, {30, 20, 12})));
        EXPECT_FALSE(takes_linear_planes(linear_plan(type, {3000, 9, 51}, {1, 4, 4})));
        // dX or dY beyond one binding: the runs.
        constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
        EXPECT_FALSE(takes_linear_planes(align_corners_plan(type, {300, 9, 51}, {300, 6, 12}), kTinyBindings));
    }
}

TEST(ResamplePlanesGpu, LinearMatchesCpuOnDownscaledPlanes) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        expect_linear_planes_match_cpu(align_corners_plan(type, {301, 9, 51}, {301, 6, 12}), rng);  // odd dX
        expect_linear_planes_match_cpu(align_corners_plan(type, {37, 5, 9, 13}, {37, 3, 6, 5}), rng);
        expect_linear_planes_match_cpu(linear_plan(type, {50, 7, 30}, {1, 1.5f, 0.4f}), rng);  // up and down
        expect_linear_planes_match_cpu(align_corners_plan(type, {1, 9, 51}, {1, 6, 12}), rng);  // one plane
    }
}

TEST(ResamplePlanesGpu, LinearMatchesCpuOnAGridSplitOverDispatches) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        const ResampleGradPlan plan = align_corners_plan(type, {11, 9, 51}, {11, 6, 12});  // 5049 or 2525 threads
        SCOPED_TRACE(describe(plan));
        ASSERT_TRUE(takes_linear_planes(plan, kFewGroups));
        expect_gpu_matches_cpu(plan, random_tensor(type, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
