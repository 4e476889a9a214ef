// The linear fp16 walk (kernels/resample_grad_walk.hlsl, MODE=LINEAR: plans the fp16 strips or runs would make
// element by element or a word at a time) against the CPU reference, bit for bit, on fresh random inputs (the
// output poisoned first): the geometries of the slow H100 sweep cases, scaled down (many taps on three axes, a
// resampled axis of 2 with rows that no dY element reads, columns without taps, odd rows downsampled on one or
// three axes), rows of 7 and 9 halves (every thread, or some, in two rows), the last thread's fewer elements,
// special values and raw bits (NaN sums and tiny values made again on bits); and which plans take it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <bit>

#include "gpu/dispatch.h"
#include "gpu/ops/resample_geometry.h"
#include "gpu_testing.h"
#include "interface/resample_grad.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

const std::string kLinearWalk = "resample_grad_linear_f16_walk";      // a uint4 a thread
const std::string kWordWalk = "resample_grad_linear_f16_walk_words";  // a word a thread

// Linear with DirectML's parameters and pixel offsets `offset` (resample_plans.h's offset_plan).
ResampleGradPlan linear_plan(const Shape& dx, const std::vector<float>& scales, float offset, DType type = DType::f16) {
    return offset_plan(dx, scales, InterpolationMode::linear, RoundingDirection::decreasing, offset, type);
}

void expect_walk_matches_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng,
                             const std::string& kernel = kWordWalk) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), kernel);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng, /*specials=*/false));
}

TEST(ResampleLinearWalkGpu, TakesFp16RowsTheStripsMakeElementByElementOrCannotSplitIntoWords) {
    // Small dX (below 2^21 elements): a word a thread.
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 23}, {1, 1.5f, 0.6f}, -0.5f)), kWordWalk);  // odd rows
    EXPECT_EQ(kernel_of(linear_plan({1, 4, 9, 8}, {1, 3, 1, 3}, 0)), kWordWalk);       // several taps on axis 1
    EXPECT_EQ(kernel_of(linear_plan({40}, {1.5f}, -0.5f)), kWordWalk);                 // one row
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 24}, {1, 1.5f, 0.6f}, -0.5f)),
              kWordWalk);  // even rows: the strips' few threads
    // From 2^20 elements even rows take the strips (their threads fill the GPU).
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 29958}, {1, 1.5f, 0.6f}, -0.5f)), kWordWalk);
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 29960}, {1, 1.5f, 0.6f}, -0.5f)), "resample_grad_linear_f16_strips");
    // Small dX whose rows read more than 16 dY rows: the runs (not the strips' general code, even rows).
    EXPECT_EQ(kernel_of(linear_plan({1, 4, 9, 8}, {1, 3, 3, 3}, 0)), "resample_grad_linear_f16");
    EXPECT_EQ(kernel_of(linear_plan({1, 4, 9, 9}, {1, 3, 3, 3}, 0)), "resample_grad_linear_f16");
    EXPECT_EQ(kernel_of(linear_plan({1, 4, 9, 8}, {1, 3, 3, 3}, 0, DType::f32)), "resample_grad_linear_f32_elements");
    // Large dX: a uint4 a thread where axis 3 has at most 2 taps an element, else a word.
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 60001}, {1, 1.5f, 0.6f}, -0.5f)), kLinearWalk);
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 60001}, {1, 1.5f, 1.5f}, -0.5f)), kWordWalk);
    // Rows shorter than a thread's elements less one keep the runs, as do tensors beyond one binding and float32.
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 5}, {1, 1.5f, 0.6f}, -0.5f)), "resample_grad_linear_f16");
    EXPECT_EQ(kernel_of(linear_plan({4, 5, 6, 73}, {1, 1, 1, 1.49f}, -0.5f), DeviceLimits{4096, 16, 65535}),
              "resample_grad_linear_f16");
    EXPECT_EQ(kernel_of(linear_plan({5, 7, 23}, {1, 1.5f, 0.6f}, -0.5f, DType::f32)),
              "resample_grad_linear_f32_strips_taps3");
}

TEST(ResampleLinearWalkGpu, PhasedCopyHoldsEachColumnsTapsWhereItsPhaseReadsThem) {
    using namespace kernels::resample_grad;
    // Axis 3 of 11 columns, 2.5x (3 to 5 taps a column: past PHASED_WEIGHTS), in phases of 8: 2 entries a phase.
    const ResampleGradPlan plan = linear_plan({3, 11}, {1, 2.5f}, -0.5f);
    const resample_gpu::View view = resample_gpu::make_view(plan);
    std::array<uint32_t, 4> offsets{};
    const std::vector<uint32_t> plain = resample_gpu::tap_tables(view, plan.mode, offsets);
    std::vector<uint32_t> tables = plain;
    resample_gpu::insert_phased_columns(view, plan.mode, 8, tables);
    constexpr uint32_t kN = 16, kArrays = PHASED_WEIGHT + PHASED_WEIGHTS;
    ASSERT_EQ(tables.size(), plain.size() + kArrays * kN);
    const uint32_t base = plain[offsets[3] + TABLE_PAIR_WORDS * 11 + TABLE_START];  // the sentinel's tap start
    ASSERT_EQ(base, plain.size() - TABLE_PAD_WORDS);
    const AxisTaps& taps = plan.axes[1];
    for (uint32_t i = 0; i < 16; ++i) {
        SCOPED_TRACE(i);
        const uint32_t at = base + (i % 8) * 2 + i / 8;
        const uint32_t count = i < 11 ? taps.begin[i + 1] - taps.begin[i] : 0;
        ASSERT_EQ(tables[at + PHASED_COUNT * kN], count);
        if (count == 0) continue;
        EXPECT_EQ(tables[at + PHASED_FIRST * kN], uint32_t(taps.dy_index[taps.begin[i]]));
        for (uint32_t k = 0; k < count; ++k) {
            const uint32_t weight = std::bit_cast<uint32_t>(taps.weight[taps.begin[i] + k]);
            EXPECT_EQ(tables[tables[at + PHASED_START * kN] + k], weight);
            if (k < PHASED_WEIGHTS) {
                EXPECT_EQ(tables[at + (PHASED_WEIGHT + k) * kN], weight);
            }
        }
    }
    EXPECT_EQ(std::vector<uint32_t>(tables.end() - TABLE_PAD_WORDS, tables.end()),
              std::vector<uint32_t>(TABLE_PAD_WORDS, 0u));
}

TEST(ResampleLinearWalkGpu, MatchesCpuOnTheSlowSweepGeometries) {
    SeededRng rng;
    expect_walk_matches_cpu(linear_plan({1, 4, 9, 8}, {1, 3, 1, 3}, 0), rng);          // 5 taps on two axes
    expect_walk_matches_cpu(linear_plan({37, 2, 33, 1}, {1, 0.5f, 1, 1}, 0), rng);     // rows without dY rows
    expect_walk_matches_cpu(linear_plan({41, 21, 1, 13}, {1, 1, 1, 0.231f}, 0), rng);  // columns without taps
    expect_walk_matches_cpu(linear_plan({29, 1, 83}, {1, 1, 0.494f}, -0.5f), rng);     // rows of 83
    expect_walk_matches_cpu(linear_plan({7, 9, 15}, {0.6f, 0.6f, 0.6f}, 0), rng);      // three axes down
}

TEST(ResampleLinearWalkGpu, UintFourWalkMatchesCpuOnLargeTensors) {
    SeededRng rng;
    // Odd rows of 0.6x (the phased table), two taps on axis 1, a last thread of 3 elements; rows without dY rows
    // (at most one tap an index: the sparse walk, resample_sparse_walk_test.cpp).
    expect_walk_matches_cpu(linear_plan({5, 7, 60001}, {1, 1.5f, 0.6f}, -0.5f), rng, kLinearWalk);
    expect_walk_matches_cpu(linear_plan({512, 2, 33, 65}, {1, 0.5f, 1, 1}, 0), rng,
                            "resample_grad_linear_f16_walk_sparse");
}

TEST(ResampleLinearWalkGpu, MatchesCpuWhereAThreadCrossesRowsAndOnTheLastThread) {
    SeededRng rng;
    expect_walk_matches_cpu(linear_plan({3, 11, 7}, {1, 1, 1.43f}, -0.5f), rng);         // every thread in two rows
    expect_walk_matches_cpu(linear_plan({2, 3, 5, 9}, {1.5f, 1.5f, 1, 2}, -0.5f), rng);  // two taps on axes 0 and 1
    expect_walk_matches_cpu(linear_plan({3, 4, 9}, {1, 2.5f, 2.5f}, -0.5f), rng);        // 5 or 6 taps a column
    expect_walk_matches_cpu(linear_plan({13}, {1.5f}, -0.5f), rng);  // the last thread's 5 elements, then padding
}

TEST(ResampleLinearWalkGpu, MatchesCpuOnRawBitsAndAcrossDispatches) {
    SeededRng rng;
    for (const ResampleGradPlan& plan :
         {linear_plan({3, 5, 9}, {1, 1.5f, 0.6f}, -0.5f), linear_plan({2, 3, 5, 9}, {1.5f, 1.5f, 1, 2}, -0.5f)}) {
        SCOPED_TRACE(describe(plan));
        expect_gpu_matches_cpu(plan, random_bits(DType::f16, plan.dy_shape, rng));
    }
    const ResampleGradPlan plan = linear_plan({9, 40, 37}, {1, 1.5f, 0.4f}, -0.5f);
    ASSERT_EQ(kernel_of(plan, kFewGroups), kWordWalk);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
}

}  // namespace
}  // namespace dmlgrad::testing
