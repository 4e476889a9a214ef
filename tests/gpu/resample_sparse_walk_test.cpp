// The sparse walk (kernels/resample_grad_walk.hlsl, SPARSE: linear plans of at most one tap at every index of every
// axis and no tap at some) against the CPU reference, bit for bit, on fresh random inputs (the output poisoned
// first): asymmetric 0.5x on whole uint4 rows, the align_corners 0.398 x 0.241 geometry of the H100 sweep case on
// rows of 83 (threads across row ends), rows of 3 (every thread in two rows), outer axes whose rows have no dY row,
// the last thread's fewer elements, raw bits (NaN sums and tiny values made again on bits) and several dispatches;
// and which plans take it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

const std::string kSparseF32 = "resample_grad_linear_f32_walk_sparse";
const std::string kSparseF16 = "resample_grad_linear_f16_walk_sparse";

// Linear with DirectML's parameters and pixel offsets `offset` (resample_plans.h's offset_plan).
ResampleGradPlan linear_plan(DType type, const Shape& dx, const std::vector<float>& scales, float offset) {
    return offset_plan(dx, scales, InterpolationMode::linear, RoundingDirection::decreasing, offset, type);
}

const std::string& sparse_kernel(DType type) { return type == DType::f16 ? kSparseF16 : kSparseF32; }

void expect_sparse_matches_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), sparse_kernel(plan.dtype));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
}

TEST(ResampleSparseWalkGpu, TakesLinearDownscalesOfAtMostOneTapAnIndex) {
    EXPECT_EQ(kernel_of(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 0.5f, 0.5f}, 0)), kSparseF32);
    EXPECT_EQ(kernel_of(align_corners_plan(DType::f32, {2, 7, 113, 83}, {2, 7, 45, 20})), kSparseF32);
    EXPECT_EQ(kernel_of(linear_plan(DType::f32, {5000, 3}, {1, 0.34f}, 0)), kSparseF32);  // rows of 3
    EXPECT_EQ(kernel_of(linear_plan(DType::f16, {2, 5, 410, 512}, {1, 1, 0.5f, 0.5f}, 0)), kSparseF16);
    // 0.6x gives some index two taps, as do upscales; 0.5x half-pixel and identities give every index one (the
    // one-tap strips).
    EXPECT_NE(kernel_of(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 0.6f, 0.6f}, -0.5f)), kSparseF32);
    EXPECT_NE(kernel_of(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 1, 1.5f}, -0.5f)), kSparseF32);
    EXPECT_NE(kernel_of(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 1, 1}, -0.5f)), kSparseF32);
    EXPECT_EQ(kernel_of(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 0.5f, 0.5f}, -0.5f)),
              "resample_grad_linear_f32_strips_one_tap");
    EXPECT_EQ(kernel_of(linear_plan(DType::f16, {2, 5, 410, 512}, {1, 1, 0.5f, 0.5f}, -0.5f)),
              "resample_grad_linear_f16_strips_one_tap");
    // Rows shorter than a uint4 less one, small fp16 dX (the word walk), one-row plans (the fractions) and tensors
    // beyond one binding keep their kernels.
    EXPECT_EQ(kernel_of(linear_plan(DType::f32, {2, 3, 18, 2}, {1, 1, 0.5f, 0.5f}, 0)),
              "resample_grad_linear_f32_strips");
    EXPECT_EQ(kernel_of(linear_plan(DType::f16, {5000, 7}, {1, 0.5f}, 0)), "resample_grad_linear_f16_walk_words");
    EXPECT_EQ(kernel_of(linear_plan(DType::f16, {2, 3, 18, 256}, {1, 1, 0.5f, 0.5f}, 0)),
              "resample_grad_linear_f16_walk_words");
    EXPECT_EQ(kernel_of(linear_plan(DType::f32, {2521591}, {0.5f}, 0)), "resample_grad_linear_f32_fractions_steps2");
    EXPECT_EQ(
        kernel_of(linear_plan(DType::f32, {4, 5, 6, 73}, {1, 1, 0.5f, 0.5f}, -0.5f), DeviceLimits{4096, 16, 65535}),
        "resample_grad_linear_f32");
}

TEST(ResampleSparseWalkGpu, MatchesCpuOnDownscalesOfWholeUint4Rows) {
    SeededRng rng;
    expect_sparse_matches_cpu(linear_plan(DType::f32, {2, 3, 18, 256}, {1, 1, 0.5f, 0.5f}, 0), rng);
    expect_sparse_matches_cpu(linear_plan(DType::f16, {2, 5, 410, 512}, {1, 1, 0.5f, 0.5f}, 0), rng);
}

TEST(ResampleSparseWalkGpu, MatchesCpuWhereThreadsCrossRowEndsAndRowsHaveNoDyRow) {
    SeededRng rng;
    expect_sparse_matches_cpu(align_corners_plan(DType::f32, {2, 7, 113, 83}, {2, 7, 45, 20}), rng);  // rows of 83
    expect_sparse_matches_cpu(linear_plan(DType::f32, {5001, 3}, {1, 0.34f}, 0), rng);  // rows of 3, last thread 3
    expect_sparse_matches_cpu(linear_plan(DType::f32, {7, 41, 2, 13}, {1, 0.4f, 0.5f, 0.231f}, 0), rng);
    expect_sparse_matches_cpu(linear_plan(DType::f16, {5, 45, 113, 83}, {1, 0.4f, 0.398f, 0.241f}, 0), rng);
    expect_sparse_matches_cpu(linear_plan(DType::f16, {512, 2, 33, 65}, {1, 0.5f, 1, 1}, 0), rng);
}

TEST(ResampleSparseWalkGpu, MatchesCpuOnRawBitsAndAcrossDispatches) {
    SeededRng rng;
    for (const ResampleGradPlan& plan : {align_corners_plan(DType::f32, {2, 7, 113, 83}, {2, 7, 45, 20}),
                                         linear_plan(DType::f16, {5, 45, 113, 83}, {1, 0.4f, 0.398f, 0.241f}, 0)}) {
        SCOPED_TRACE(describe(plan));
        ASSERT_EQ(kernel_of(plan), sparse_kernel(plan.dtype));
        expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
    }
    const ResampleGradPlan plan = linear_plan(DType::f32, {9, 40, 37}, {1, 0.4f, 0.45f}, -0.5f);
    ASSERT_EQ(kernel_of(plan, kFewGroups), kSparseF32);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
