// Resample grad's rows (kernels/resample_grad_rows.hlsl: nearest plans that resample outer axes only, whose rows are
// whole uint4s, or (float32) of any length at least 8 warps' uint4s long (the shifted rows), and read several dY rows
// each)
// against the CPU reference, bit for bit, outputs poisoned: fp16 and
// float32, several taps on two outer axes (each element a sum of 9 dY rows), up- and downsampled outer axes together
// (rows of no dY row: zeros), rows of one uint4, sizes that are powers of two (divisions by shifts), a grid split over
// several dispatches, shifted rows of every phase of a uint4 (odd lengths, threads across a row's end, a last thread
// past dX's end), special values and raw bits (NaNs, -0, subnormal halves and denormal floats, made again on
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

// Nearest with DirectML's half-pixel offsets, rounding down at ties: dY's sizes are dX's times the scales (a scale
// of 1 an identity axis).
ResampleGradPlan rows_plan(const Shape& dx, const std::vector<float>& scales, DType type) {
    return half_pixel_plan(dx, scales, InterpolationMode::nearest, RoundingDirection::decreasing, type);
}

std::string suffix(DType type) { return type == DType::f16 ? "f16" : "f32"; }
std::string rows(DType type) { return "resample_grad_nearest_" + suffix(type) + "_rows"; }
const std::string kShifted = "resample_grad_nearest_f32_rows_shifted";
int64_t uint4_elements(DType type) { return type == DType::f16 ? 8 : 4; }

// The plan takes the rows and matches the CPU on random values with specials, without, and on raw bits.
void expect_rows_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng, bool is_shifted = false) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), is_shifted ? kShifted : rows(plan.dtype));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
}

TEST(ResampleRowsGpu, TakeOuterResamplesWhoseRowsAreWholeUint4sAndReadSeveralDyRows) {
    for (DType type : {DType::f16, DType::f32}) {
        SCOPED_TRACE(suffix(type));
        EXPECT_EQ(kernel_of(rows_plan({5, 7, 3, 16}, {3, 3, 1, 1}, type)), rows(type));  // identity axes merged
        EXPECT_EQ(kernel_of(rows_plan({5, 40}, {1.5f, 1}, type)), rows(type));           // one resampled axis
        EXPECT_EQ(kernel_of(rows_plan({9, 5, 8}, {1.5f, 0.4f, 1}, type)), rows(type));   // up and down
        // Rows that are not whole uint4s: float32 the shifted rows where at least 8 warps' uint4s long; else, and
        // fp16, other kernels.
        const int64_t long_row = 8 * 32 * uint4_elements(type);
        const bool f32 = type == DType::f32;
        EXPECT_EQ(kernel_of(rows_plan({5, long_row + 2}, {1.5f, 1}, type)) == kShifted, f32);
        EXPECT_EQ(kernel_of(rows_plan({5, long_row + 1}, {3, 1}, type)) == kShifted, f32);
        EXPECT_NE(kernel_of(rows_plan({5, long_row - 2}, {1.5f, 1}, type)), kShifted);
        EXPECT_NE(kernel_of(rows_plan({5, 7, 3, 18}, {3, 3, 1, 1}, type)), rows(type));
        // A resampled last axis, or rows of one dY row at most (the lines): other kernels.
        EXPECT_NE(kernel_of(rows_plan({5, 7, 16}, {3, 3, 1.5f}, type)), rows(type));
        EXPECT_EQ(kernel_of(rows_plan({9, 16}, {0.5f, 1}, type)),
                  "resample_grad_nearest_" + suffix(type) + "_lines_taps1");
        // dX or dY beyond one binding: the runs.
        constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
        const ResampleGradPlan long_plan = rows_plan({50, 7, 16}, {1.5f, 1, 1}, type);
        EXPECT_EQ(kernel_of(long_plan), rows(type));
        EXPECT_EQ(kernel_of(long_plan, kTinyBindings), "resample_grad_nearest_" + suffix(type));
    }
}

TEST(ResampleRowsGpu, MatchCpuOnSeveralTapsOnTwoOuterAxes) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        expect_rows_match_cpu(rows_plan({5, 7, 3, 16}, {3, 3, 1, 1}, type), rng);   // 9 dY rows a row
        expect_rows_match_cpu(rows_plan({3, 11, 24}, {1.5f, 2.5f, 1}, type), rng);  // 2 to 6
    }
}

TEST(ResampleRowsGpu, MatchCpuOnRowsWithoutDyRowsRowsOfOneUint4AndPowersOfTwo) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        const int64_t uint4 = uint4_elements(type);
        expect_rows_match_cpu(rows_plan({9, 5, 2 * uint4}, {1.5f, 0.4f, 1}, type), rng);  // rows of no dY row: +0
        expect_rows_match_cpu(rows_plan({7, 11, uint4}, {2.5f, 1.5f, 1}, type), rng);     // rows of one uint4
        expect_rows_match_cpu(rows_plan({4, 8, 2, 32}, {2, 1.5f, 1, 1}, type), rng);      // shifts, not divisions
    }
}

// Rows of 8 warps' uint4s and a few elements more: every phase of a dY row's terms in a uint4 (the rows' dY rows lie
// 1 to 3 rows apart), threads whose uint4 crosses a row's end, and a last thread with fewer elements.
TEST(ResampleRowsGpu, ShiftedMatchCpuOnEveryPhaseAndAcrossRowEnds) {
    SeededRng rng;
    const int64_t long_row = 8 * 32 * 4;
    expect_rows_match_cpu(rows_plan({3, 5, long_row + 1}, {2.5f, 1.5f, 1}, DType::f32), rng, true);
    expect_rows_match_cpu(rows_plan({7, long_row + 3}, {3, 1}, DType::f32), rng, true);
    expect_rows_match_cpu(rows_plan({2, 5, long_row + 6}, {1, 1.5f, 1}, DType::f32), rng, true);
}

TEST(ResampleRowsGpu, MatchCpuOnAGridSplitOverDispatches) {
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32}) {
        const ResampleGradPlan plan = rows_plan({6, 7, 3, 64}, {3, 1.5f, 1, 1}, type);  // 1008 or 2016 threads
        SCOPED_TRACE(describe(plan));
        ASSERT_EQ(kernel_of(plan, kFewGroups), rows(type));
        expect_gpu_matches_cpu(plan, random_tensor(type, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    }
    const ResampleGradPlan shifted_plan = rows_plan({3, 8 * 32 * 4 + 1}, {2.5f, 1}, DType::f32);  // 769 threads
    SCOPED_TRACE(describe(shifted_plan));
    ASSERT_EQ(kernel_of(shifted_plan, kFewGroups), kShifted);
    expect_gpu_matches_cpu(shifted_plan, random_tensor(DType::f32, shifted_plan.dy_shape, rng),
                           gpu_with_limits(kFewGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
