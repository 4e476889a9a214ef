// Resample grad's planes (kernels/resample_grad_planes.hlsl: nearest plans whose resampled axes make planes whose
// rows read several dY rows: tiny planes, or rows shorter than the walk's in planes of up to 4096 elements) against
// the CPU reference, bit for bit, outputs poisoned: fp16 and float32, planes of 1x1 to 2048x2 elements from integer
// and fractional scales, three resampled axes, elements without taps (+0), one plane alone, an odd dX (fp16: the
// last word's upper half past the end), odd fp16 rows (words across rows and planes), a grid split over several
// dispatches, special values and raw bits (NaNs, -0, subnormal halves and denormal floats, made again on bits);
// which plans take them.
#include <gtest/gtest.h>

#include <string>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "interface/resample_grad.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

bool takes_planes(const ResampleGradPlan& plan, const DeviceLimits& limits = kRoomy) {
    return kernel_of(plan, limits)
        .starts_with("resample_grad_nearest_" + std::string(plan.dtype == DType::f16 ? "f16" : "f32") + "_planes");
}

// The plan takes the planes and matches the CPU on random values with specials, without, and on raw bits.
void expect_planes_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_TRUE(takes_planes(plan)) << kernel_of(plan);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
}

TEST(ResamplePlanesGpu, TakeTinyPlanesWhoseRowsReadSeveralDyRows) {
    for (DType type : {DType::f16, DType::f32}) {
        SCOPED_TRACE(type == DType::f16 ? "f16" : "f32");
        EXPECT_TRUE(takes_planes(torch_plan({40, 18, 1, 1}, {40, 18, 2, 5}, type)));
        EXPECT_TRUE(takes_planes(torch_plan({40, 18, 2, 2}, {40, 18, 3, 3}, type)));      // fractional
        EXPECT_TRUE(takes_planes(torch_plan({40, 8, 1, 1, 1}, {40, 8, 2, 2, 2}, type)));  // three axes
        // Rows the walk takes in planes of more than PLANE_MOST_DX dX or PLANE_MOST_DY dY elements: other kernels.
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 3, 8}, {40, 18, 6, 16}, type)));  // 24 dX
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 2, 7}, {40, 18, 5, 14}, type)));  // 70 dY
        // fp16 rows that the walk takes (a uint4's halves less one and longer): the walk.
        EXPECT_EQ(takes_planes(torch_plan({40, 18, 1, 11}, {40, 18, 4, 4}, type)), type == DType::f32);
        // Rows of one dY row at most: the lines.
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 2, 2}, {40, 18, 1, 1}, type)));
        // dX or dY beyond one binding: the runs.
        constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
        EXPECT_FALSE(takes_planes(torch_plan({400, 18, 1, 1}, {400, 18, 2, 2}, type), kTinyBindings));
    }
}

TEST(ResamplePlanesGpu, TakeLargerPlanesOfRowsShorterThanTheWalks) {
    // Rows shorter than the walk's uint4 less one (float32 1-2, fp16 1-6), fp16 only odd ones (the strips take even
    // rows), in planes of up to 4096 dX and 16384 dY elements.
    for (DType type : {DType::f16, DType::f32}) {
        SCOPED_TRACE(type == DType::f16 ? "f16" : "f32");
        EXPECT_TRUE(takes_planes(torch_plan({40, 18, 137, 1}, {40, 18, 400, 3}, type)));
        EXPECT_TRUE(takes_planes(torch_plan({40, 18, 4096, 1}, {40, 18, 8191, 2}, type)));   // 4096 dX
        EXPECT_TRUE(takes_planes(torch_plan({40, 18, 1365, 1}, {40, 18, 4094, 4}, type)));   // 16376 dY
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 4097, 1}, {40, 18, 8193, 2}, type)));  // 4097 dX
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 1366, 1}, {40, 18, 4097, 4}, type)));  // 16388 dY
        EXPECT_EQ(takes_planes(torch_plan({40, 18, 137, 2}, {40, 18, 400, 5}, type)), type == DType::f32);
        EXPECT_EQ(takes_planes(torch_plan({40, 18, 137, 5}, {40, 18, 400, 10}, type)), type == DType::f16);
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 137, 6}, {40, 18, 400, 12}, type)));  // fp16: the strips
        EXPECT_FALSE(takes_planes(torch_plan({40, 18, 137, 7}, {40, 18, 400, 14}, type)));  // the walk's rows
        // dX and dY in one binding each but the planes' runs past it: other kernels.
        EXPECT_TRUE(takes_planes(torch_plan({1, 1, 100, 1}, {1, 1, 450, 2}, type)));
        EXPECT_FALSE(takes_planes(torch_plan({1, 1, 100, 1}, {1, 1, 450, 2}, type), kTinyLimits));
    }
}

TEST(ResamplePlanesGpu, MatchCpuOnLargerPlanesOfShortRows) {
    // Odd fp16 rows (words across rows and planes), rows of one element, fractional scales (1 to 3 taps), three
    // axes, upsampled rows, columns of no tap, a plane of 4096 elements.
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        const Shape rows = type == DType::f16 ? Shape{7, 3, 33, 5} : Shape{7, 3, 33, 1};
        expect_planes_match_cpu(
            half_pixel_plan(rows, {1, 1, 2, 2}, InterpolationMode::nearest, RoundingDirection::decreasing, type), rng);
        expect_planes_match_cpu(torch_plan({5, 3, 41, 1}, {5, 3, 103, 3}, type), rng);
        expect_planes_match_cpu(torch_plan({3, 5, 7, 9, 1}, {3, 5, 13, 20, 3}, type), rng);  // three axes
        expect_planes_match_cpu(torch_plan({3, 1, 4096, 1}, {3, 1, 8191, 2}, type), rng);    // 4096 dX
    }
    expect_planes_match_cpu(torch_plan({5, 3, 29, 2}, {5, 3, 70, 5}, DType::f32), rng);
    expect_planes_match_cpu(torch_plan({9, 2, 31, 2}, {9, 2, 80, 1}, DType::f32), rng);  // rows up from 1
    expect_planes_match_cpu(torch_plan({9, 2, 31, 3}, {9, 2, 80, 2}, DType::f16), rng);  // rows up from 2
    expect_planes_match_cpu(torch_plan({9, 3, 31, 3}, {9, 3, 77, 7}, DType::f16), rng);
}

TEST(ResamplePlanesGpu, MatchCpuOnPlanesOfOneToNineElements) {
    SeededRng rng;
    expect_planes_match_cpu(torch_plan({37, 5, 1, 1}, {37, 5, 2, 2}, DType::f32), rng);  // fp16: the blocks
    for (DType type : {DType::f16, DType::f32}) {
        expect_planes_match_cpu(torch_plan({37, 5, 1, 1}, {37, 5, 2, 5}, type), rng);  // odd dX: 185 elements
        expect_planes_match_cpu(torch_plan({23, 3, 1, 2}, {23, 3, 2, 5}, type), rng);
        expect_planes_match_cpu(torch_plan({11, 3, 2, 3}, {11, 3, 4, 7}, type), rng);
        expect_planes_match_cpu(torch_plan({13, 2, 3, 3}, {13, 2, 4, 4}, type), rng);  // 1 or 2 taps an axis
    }
}

TEST(ResamplePlanesGpu, MatchCpuOnThreeAxesElementsWithoutTapsAndOnePlane) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        expect_planes_match_cpu(torch_plan({17, 3, 1, 2, 1}, {17, 3, 2, 4, 3}, type), rng);
        expect_planes_match_cpu(torch_plan({19, 2, 2, 3}, {19, 2, 5, 2}, type), rng);  // columns of no tap: +0
        expect_planes_match_cpu(torch_plan({1, 1, 1, 3}, {1, 1, 3, 7}, type), rng);    // dX one plane
    }
}

TEST(ResamplePlanesGpu, MatchCpuOnAGridSplitOverDispatches) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        const ResampleGradPlan plan = torch_plan({301, 7, 1, 1}, {301, 7, 2, 5}, type);  // 2107 or 1054 threads
        SCOPED_TRACE(describe(plan));
        ASSERT_TRUE(takes_planes(plan, kFewGroups));
        expect_gpu_matches_cpu(plan, random_tensor(type, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
