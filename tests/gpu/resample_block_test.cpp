// Resample grad's block kernel (kernels/resample_grad_block.hlsl: nearest fp16 with integer factors) against the
// CPU reference, bit for bit: every block width (1-4 columns) and several heights, odd row lengths and element
// counts (a thread's four elements span rows; padding after the last), rows of whole uint4s and of an even length
// (one column: a thread's two words of each dY row, from one uint4 or two; rows of 2 all across row ends), one row
// of any length (whole threads), special values, subnormal halves (the hand conversion), NaN payloads and inf - inf
// (the sums on bits), all -0 blocks, the order of the sums; which plans take it, and the general gather for the
// others (wider blocks, split tensors).
#include <gtest/gtest.h>

#include <string>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

// Nearest with PyTorch's legacy rule, floor(o * in / out) (offsets 0, rounding down): with integer factors
// every dX element sums a block. `factors` per axis of dx (1: untouched).
ResampleGradPlan block_plan(const Shape& dx, const Shape& factors, DType type = DType::f16) {
    ResampleGradDesc desc{dx, InterpolationMode::nearest, RoundingDirection::decreasing, {}, {}, {}};
    Shape dy;
    for (size_t a = 0; a < dx.size(); ++a) {
        dy.push_back(dx[a] * factors[a]);
        desc.scales.push_back(float(factors[a]));
        desc.input_pixel_offsets.push_back(0.0f);
        desc.output_pixel_offsets.push_back(0.0f);
    }
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy}});
}

TEST(ResampleBlockGpu, TakesNearestFp16WithIntegerFactors) {
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 2, 2})), "resample_grad_block_x2_f16");
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 3, 3})), "resample_grad_block_x3_f16");
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 1, 4})), "resample_grad_block_x4_f16");
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 2, 1})), "resample_grad_block_x1_f16");
    EXPECT_EQ(kernel_of(block_plan({6, 10}, {3, 2})), "resample_grad_block_x2_f16");
    EXPECT_EQ(kernel_of(block_plan({30}, {3})), "resample_grad_block_x3_f16");
    // PyTorch's nearest 2x through the framework rule.
    ResampleGradDesc torch;
    torch.output_sizes = {2, 3, 8, 10};
    torch.framework = TorchInterpolate{TorchMode::nearest, false, {}};
    EXPECT_EQ(kernel_of(plan_resample_grad(torch, {"-g", "dy.npy", {DType::f16, {2, 3, 16, 20}}})),
              "resample_grad_block_x2_f16");
}

TEST(ResampleBlockGpu, LeavesOtherPlansToTheGeneralGather) {
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 2, 2}, DType::f32)), "resample_grad_nearest_f32_strips");
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 1, 2, 5})), "resample_grad_nearest_f16_strips");  // too wide
    EXPECT_EQ(kernel_of(block_plan({2, 3, 8, 10}, {1, 2, 2, 2})),
              "resample_grad_nearest_f16_walk_words_ahead");  // C resampled
    EXPECT_EQ(kernel_of(block_plan({2, 3, 19, 21}, {1, 1, 2, 3}), kTinyLimits), "resample_grad_nearest_f16");  // split
    // DirectML's default half-pixel offsets: the edges take other counts of taps.
    const ResampleGradPlan half_pixel =
        plan_resample_grad({{4, 10}, InterpolationMode::nearest, RoundingDirection::decreasing, {}, {}, {}},
                           {"-g", "dy.npy", {DType::f16, {8, 20}}});
    EXPECT_EQ(kernel_of(half_pixel), "resample_grad_nearest_f16_strips");
}

TEST(ResampleBlockGpu, MatchesCpuOnEveryBlockShape) {
    SeededRng rng;
    for (int64_t columns = 1; columns <= 4; ++columns)
        for (int64_t rows : {1, 2, 3})
            for (const Shape& dx : {Shape{2, 3, 8, 16}, Shape{1, 3, 5, 12}, Shape{3, 5, 7, 13}, Shape{1, 2, 45, 45},
                                    Shape{2, 1, 9, 1}, Shape{17, 3}, Shape{3, 2, 7, 18}, Shape{13, 2}}) {
                const Shape factors = dx.size() == 4 ? Shape{1, 1, rows, columns} : Shape{rows, columns};
                const ResampleGradPlan plan = block_plan(dx, factors);
                SCOPED_TRACE(describe(plan));
                // A last axis of 1 that stays 1 is no axis of the view: the rows' factor is then the columns'. An
                // identity (no factor) is a copy, the one-tap lines'.
                const int64_t view_columns = dx.back() == 1 && columns == 1 ? rows : columns;
                ASSERT_EQ(kernel_of(plan), rows * columns == 1
                                               ? "resample_grad_nearest_f16_lines_taps1"
                                               : "resample_grad_block_x" + std::to_string(view_columns) + "_f16");
                expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng));
                expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng, /*specials=*/false));
            }
}

// fp16 values with many subnormals (the hardware may flush them), zeros of both signs, ordinary values.
Tensor subnormal_halves(const Shape& shape, std::mt19937_64& rng) {
    std::vector<uint64_t> bits(element_count(shape));
    for (uint64_t& b : bits) {
        const uint64_t sign = (rng() % 2) << 15;
        switch (rng() % 4) {
            case 0:
            case 1: b = sign | (1 + rng() % 0x3FF); break;                   // subnormal
            case 2: b = sign; break;                                         // +-0
            default: b = sign | ((1 + rng() % 20) << 10) | (rng() % 0x400);  // 2^-14 .. 2^5
        }
    }
    return tensor_from_bits(DType::f16, shape, bits);
}

TEST(ResampleBlockGpu, OneRowOfAnyLengthMatchesCpu) {
    // One dX row of one dY row takes whole threads at any length (1-D blocks of 1-2 columns; an identity, one row of
    // the view, too, past the lines' LINE_FIRST_MASK columns); a thread's uint4 of dY past the row's end reads dY's
    // padding, whose halves must not reach dX (poisoned) nor its sums. Rows of several dY rows, and 3-4 columns, keep
    // element by element.
    SeededRng rng;
    for (int64_t columns = 1; columns <= 4; ++columns)
        for (int64_t rows : {1, 2})
            for (const Shape& dx : {Shape{1, 1, 1, 4097}, Shape{1, 1, 1, 4098}, Shape{1, 1, 1, 4099}, Shape{1, 1, 1, 5},
                                    Shape{1, 1, 1, 2}}) {
                if (rows * columns == 1) continue;  // an identity: the lines (resample_grad_test.cpp)
                const ResampleGradPlan plan = block_plan(dx, {1, 1, rows, columns});
                SCOPED_TRACE(describe(plan));
                ASSERT_EQ(kernel_of(plan), "resample_grad_block_x" + std::to_string(columns) + "_f16");
                expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng));
                expect_gpu_matches_cpu(plan, subnormal_halves(plan.dy_shape, rng));
            }
}

TEST(ResampleBlockGpu, SubnormalHalvesMatchBitForBit) {
    SeededRng rng;
    for (int64_t columns = 1; columns <= 4; ++columns)
        for (const Shape& dx : {Shape{3, 11, 9}, Shape{3, 10, 8}, Shape{3, 9, 10}}) {  // any, whole uint4s, even
            const ResampleGradPlan plan = block_plan(dx, {1, 2, columns});
            expect_gpu_matches_cpu(plan, subnormal_halves(plan.dy_shape, rng));
        }
}

TEST(ResampleBlockGpu, NanPayloadsInfinitiesAndNegativeZerosMatchBitForBit) {
    // NaN sums are made on bits: the first NaN of a block, quieted, payload kept; inf - inf the default NaN.
    // Blocks of only -0 sum to +0.
    SeededRng rng;
    const uint64_t specials[] = {0x7C01, 0xFE55, 0x7E00, 0x7C00, 0xFC00, 0x8000, 0x8000, 0x8000, 0x3C00, 0x0001};
    for (int64_t columns = 1; columns <= 4; ++columns)
        for (const Shape& dx : {Shape{4, 7, 11}, Shape{4, 6, 12}, Shape{4, 5, 14}}) {
            const ResampleGradPlan plan = block_plan(dx, {1, 2, columns});
            std::vector<uint64_t> bits(element_count(plan.dy_shape));
            for (uint64_t& b : bits) b = rng() % 3 == 0 ? specials[rng() % std::size(specials)] : 0x8000;
            expect_gpu_matches_cpu(plan, tensor_from_bits(DType::f16, plan.dy_shape, bits));
        }
}

TEST(ResampleBlockGpu, AddsInTheCpusOrder) {
    // Normal halves 2^29 apart in magnitude: float32 sums of them round (2^15 + 2^-14 is 2^15), and what is left
    // after +-2^15 cancel shows, so an order other than rows outer, columns inner changes bits.
    SeededRng rng;
    const uint64_t values[] = {0x7800, 0xF800, 0x0400, 0x0600, 0x8400};  // +-2^15, +-2^-14, 1.5 2^-14
    for (int64_t columns = 1; columns <= 4; ++columns)
        for (const Shape& dx : {Shape{4, 7, 11}, Shape{4, 6, 12}, Shape{4, 5, 14}}) {
            const ResampleGradPlan plan = block_plan(dx, {1, 3, columns});
            std::vector<uint64_t> bits(element_count(plan.dy_shape));
            for (uint64_t& b : bits) b = values[rng() % std::size(values)];
            expect_gpu_matches_cpu(plan, tensor_from_bits(DType::f16, plan.dy_shape, bits));
        }
}

TEST(ResampleBlockGpu, SplitTensorsTakeTheGeneralGather) {
    // Beyond one binding (lowered limits) the chunked general gather runs; same bits.
    SeededRng rng;
    const ResampleGradPlan plan = block_plan({2, 3, 19, 21}, {1, 1, 2, 3});
    ASSERT_EQ(kernel_of(plan, kTinyLimits), "resample_grad_nearest_f16");
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_limits(kTinyLimits));
    // Many workgroups, in several dispatches.
    const ResampleGradPlan many = block_plan({2, 3, 40, 37}, {1, 1, 2, 2});
    expect_gpu_matches_cpu(many, random_tensor(DType::f16, many.dy_shape, rng), gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(many, random_tensor(DType::f16, many.dy_shape, rng), gpu_with_staging());
}

}  // namespace
}  // namespace dmlgrad::testing
