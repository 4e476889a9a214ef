// Resample grad's walks (kernels/resample_grad_walk.hlsl: nearest plans the strips or runs would not make with their
// fast code) against the CPU reference, bit for bit: fp16 rows of odd lengths (7: every thread in two rows), planes of
// fewer rows than a strip, f32 rows that are not whole runs, a thread's elements in two rows (it crosses rows, planes
// and batches), the last thread's fewer elements, dX elements that receive no, one or several dY elements on each axis
// (scales below and above 1), rows without taps, outer axes with several taps, padding after the last element,
// PyTorch's nearest rule, float32 with special values and raw bits (denormal sums made on bits); which plans take them
// (fp16: a word a thread below 2^21 elements of dX or on rows shorter than a uint4 less one, a uint4 from there).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

// fp16 dX below 2^21 elements (every plan here but the large ones) takes the walk a word a thread, steps ahead;
// larger, a uint4.
const std::string kWalk = "resample_grad_nearest_f16_walk_words_ahead";
const std::string kWalkWords = "resample_grad_nearest_f16_walk_words";  // larger dX of rows shorter than a uint4
const std::string kWalkUint4 = "resample_grad_nearest_f16_walk";
const std::string kWalkF32 = "resample_grad_nearest_f32_walk";

// Nearest fp16 with DirectML's half-pixel offsets, rounding up at ties: dY's sizes are dX's times the scales.
ResampleGradPlan walk_plan(const Shape& dx, const std::vector<float>& scales,
                           InterpolationMode mode = InterpolationMode::nearest, DType type = DType::f16) {
    return half_pixel_plan(dx, scales, mode, RoundingDirection::increasing, type);
}

void expect_walk_matches_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), plan.dtype == DType::f16 ? kWalk : kWalkF32);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
}

ResampleGradPlan walk_plan_f32(const Shape& dx, const std::vector<float>& scales) {
    return walk_plan(dx, scales, InterpolationMode::nearest, DType::f32);
}

// Most plans here give an outer axis 1 or 2 taps an index: where every dX row reads one dY row at most, rows of at
// most 2 taps an element take the lines (resample_lines_test.cpp).
TEST(ResampleWalkGpu, TakesNearestFp16RowsTheStripsCannotSplitIntoWords) {
    EXPECT_EQ(kernel_of(walk_plan({37, 15}, {1.5f, 0.2f})), kWalk);
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 73}, {1, 1, 1.5f, 1.49f})), kWalk);
    // Even fp16 rows too, of at most 2 taps an element on axis 3 (the strips' loads a branch each were slower); of
    // more taps the strips.
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 74}, {1, 1, 1.5f, 1.49f})), kWalk);
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 74}, {1, 1, 1, 2.5f})), "resample_grad_nearest_f16_strips");
    // Rows of a thread's elements less one (a thread's elements in two rows at most) take the walk; shorter rows
    // the planes (resample_planes_test.cpp).
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 7}, {1, 1, 1.5f, 1.49f})), kWalk);
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 5}, {1, 1, 1.5f, 1.49f})), "resample_grad_nearest_f16_planes");
    EXPECT_EQ(kernel_of(walk_plan_f32({5, 7, 11, 3}, {1, 3, 3, 1})), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({5, 7, 11, 2}, {1, 3, 3, 1})), "resample_grad_nearest_f32_planes");
    // A last axis of 1 is no axis: the rows are those of the resampled axis before it (rows of 1 took the runs).
    EXPECT_EQ(kernel_of(walk_plan({5, 9, 13, 1}, {1, 1.5f, 1.25f, 1})), kWalk);
    // Several taps on view axes 0 or 1 (the strips' general code), whatever the row length and dtype.
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 74}, {1.5f, 1, 1.5f, 1})), kWalk);
    EXPECT_EQ(kernel_of(walk_plan_f32({5, 7, 11, 16}, {1, 3, 3, 3})), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({5, 7, 11, 17}, {1, 1, 3, 3})), "resample_grad_nearest_f32_strips");
    // Linear fp16 takes its own walk (resample_linear_walk_test.cpp); tensors beyond one binding keep the runs.
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 73}, {1, 1, 1, 1.49f}, InterpolationMode::linear)),
              "resample_grad_linear_f16_walk_words");
    constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
    EXPECT_EQ(kernel_of(walk_plan({4, 5, 6, 73}, {1, 1, 1.5f, 1.49f}), kTinyBindings), "resample_grad_nearest_f16");
}

// The uint4 walk's tables carry axis 3's phased copy: at every binding size the program fits its bindings (the
// walk was chosen where the tables fit one binding but the tables with their copy did not: a binding too large).
TEST(ResampleWalkGpu, TablesWithThePhasedCopyFitOneBindingAtEverySize) {
    const ResampleGradPlan plan = walk_plan({2, 1100000}, {1.5f, 0.2f});  // 2^21 halves and more: the uint4 walk
    ASSERT_EQ(kernel_of(plan), kWalkUint4);
    constexpr uint64_t kTableBytes = 8800064;  // the tables alone
    int walks = 0, others = 0;
    for (uint64_t bytes = kTableBytes; bytes <= 3 * kTableBytes; bytes += kTableBytes / 4) {
        const DeviceLimits limits{bytes, 16, 65535};
        const GpuProgram program = build_resample_grad_program(plan, limits);
        EXPECT_NO_THROW(validate(program, limits, Plan{plan})) << bytes << " bytes a binding, " << program.kernel;
        (program.kernel == kWalkUint4 ? walks : others) += 1;
    }
    EXPECT_GT(walks, 0);
    EXPECT_GT(others, 0);
}

TEST(ResampleWalkGpu, TakesPlanesOfFewerRowsThanAStripAndF32RowsThatAreNotWholeRuns) {
    // An identity plan is one row (the one-tap strips made a float a thread): the lines; planes of 3 rows, of 4
    // (strips).
    EXPECT_EQ(kernel_of(torch_plan({1, 2651, 8}, {1, 2651, 8}, DType::f32)), "resample_grad_nearest_f32_lines_taps1");
    EXPECT_EQ(kernel_of(walk_plan_f32({3, 42}, {1.5f, 1})), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({4, 42}, {1.5f, 1})), "resample_grad_nearest_f32_strips");
    EXPECT_EQ(kernel_of(walk_plan({3, 42}, {1.5f, 1})), kWalk);
    // f32 rows the strips do not take: runs across a row's end (131, 239) of 1 or 2 taps, or rows of whole runs (256),
    // of 8 runs and more (1031: few runs across a row's end) or of more taps (4, where the walk's loads would wait on
    // the L1): the runs, in dX of 2^21 elements and more (smaller, an element a thread: resample_elements_test.cpp).
    EXPECT_EQ(kernel_of(torch_plan({1, 2083, 15, 239}, {1, 2083, 23, 358}, DType::f32)), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({3, 131}, {1.5f, 1.5f})), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({8192, 256}, {1.5f, 1.5f})), "resample_grad_nearest_f32");
    EXPECT_EQ(kernel_of(walk_plan_f32({3, 1021}, {1.5f, 1.5f})), kWalkF32);
    EXPECT_EQ(kernel_of(walk_plan_f32({2048, 1031}, {1.5f, 1.5f})), "resample_grad_nearest_f32");
    EXPECT_EQ(kernel_of(walk_plan_f32({16384, 131}, {1.5f, 4})), "resample_grad_nearest_f32");
}

TEST(ResampleWalkGpu, MatchesCpuOnRowsOfSevenHalvesAndRowsThatAreNotWholeRuns) {
    SeededRng rng;
    expect_walk_matches_cpu(walk_plan({3, 11, 7}, {1, 1.5f, 1.43f}), rng);    // every thread's halves in two rows
    expect_walk_matches_cpu(walk_plan_f32({4, 5, 3}, {1.5f, 1, 1.5f}), rng);  // floats: rows of 3
    expect_walk_matches_cpu(walk_plan_f32({3, 42}, {1.5f, 1}), rng);          // planes of 3 rows
    expect_walk_matches_cpu(walk_plan({3, 42}, {1.5f, 1}), rng);
    expect_walk_matches_cpu(torch_plan({3, 4, 2, 131}, {3, 4, 3, 196}, DType::f32),
                            rng);  // rows of 1.5x, not whole runs
    const ResampleGradPlan rows_of_9 = torch_plan({1, 1, 3, 9}, {1, 1, 5, 9}, DType::f32);  // a last thread of 3
    expect_walk_matches_cpu(rows_of_9, rng);
    expect_gpu_matches_cpu(rows_of_9, random_bits(DType::f32, rows_of_9.dy_shape, rng));
}

TEST(ResampleWalkGpu, MatchesCpuOnRowsOfZeroOneOrSeveralTaps) {
    SeededRng rng;
    expect_walk_matches_cpu(walk_plan({37, 15}, {1.5f, 0.2f}), rng);              // 0 or 1 tap per column
    expect_walk_matches_cpu(walk_plan({3, 5, 7, 73}, {1, 1, 1.5f, 1.49f}), rng);  // 1 or 2 taps per column
    expect_walk_matches_cpu(walk_plan({21, 3, 11}, {0.315f, 1.5f, 1.5f}), rng);   // rows without taps
    expect_walk_matches_cpu(walk_plan({5, 7, 9}, {1, 1.5f, 0.34f}), rng);         // several dY rows per dX row
    expect_walk_matches_cpu(walk_plan({4, 8, 2, 9}, {1, 1, 1.5f, 2.5f}), rng);    // power-of-two outer sizes
    expect_walk_matches_cpu(walk_plan({3, 11}, {1.5f, 3.5f}), rng);               // 3 or 4 taps per column
    expect_walk_matches_cpu(walk_plan({3, 11}, {1, 5.5f}), rng);                  // 5 or 6 taps per column
    expect_walk_matches_cpu(walk_plan_f32({3, 11}, {1, 9.5f}), rng);              // 9 or 10: three passes of 4 steps
    expect_walk_matches_cpu(walk_plan({4, 6, 11}, {1, 2.5f, 3.5f}), rng);         // 3 or 4 taps, 2 or 3 dY rows a pass
    expect_walk_matches_cpu(walk_plan({5, 9, 13, 1}, {1, 1.5f, 1.25f, 1}), rng);  // a last axis of 1
    expect_walk_matches_cpu(walk_plan({5, 9, 74}, {1, 1.5f, 0.6f}), rng);         // even rows of 0 or 1 tap
    expect_walk_matches_cpu(walk_plan({7, 9}, {1.5f, 1}), rng);  // rows of one and of several taps on axis 0
}

// Nearest fp16 rows shorter than a uint4 less one (1 to 6 halves), where neither the planes (planes past
// kShortRowPlaneMostDx) nor the lines (rows of several dY rows) take them, take the word walk whatever dX's size (the
// runs did, at 4% of the bound past 2^24 rows): its two halves lie in two rows at most, across rows, planes and the
// last thread's single half.
TEST(ResampleWalkGpu, ShortFp16RowsTheOthersLeaveTakeTheWordWalk) {
    SeededRng rng;
    // 3 x 1501 x 3: an odd count, the last thread one half.
    for (const Shape& dx : {Shape{2, 1000, 5}, Shape{3, 1501, 3}, Shape{1, 4099, 1, 6}, Shape{2, 2049, 2, 1}})
        expect_walk_matches_cpu(walk_plan(dx, std::vector<float>(dx.size(), 2)), rng);
    EXPECT_EQ(kernel_of(walk_plan({2, 2000000, 5}, {1, 2, 2})), kWalkWords);  // past 2^21 halves too: a step a pass
    EXPECT_EQ(kernel_of(walk_plan({2, 2000000, 7}, {1, 2, 2})), kWalkUint4);
}

TEST(ResampleWalkGpu, StepsAheadMatchCpuOnEveryStepCount) {
    // The small nearest fp16 word walk takes four steps (a dY row's column) a pass, their loads before their adds:
    // threads of 1 to 64 steps (counts that 4 divides and not), their two halves in one row or two, raw bits (NaN,
    // infinities, subnormals, -0) as well as values.
    SeededRng rng;
    for (const ResampleGradPlan& plan : {walk_plan({7, 53, 5}, {4, 4, 4}), walk_plan({3, 9, 11}, {1, 2.5f, 3.5f}),
                                         walk_plan({5, 7, 9}, {1.5f, 1, 1.25f}), walk_plan({2, 3, 13}, {3, 3, 1}),
                                         walk_plan({13, 5, 9}, {1.5f, 1, 2})}) {
        ASSERT_EQ(kernel_of(plan), kWalk);
        expect_walk_matches_cpu(plan, rng);
        expect_gpu_matches_cpu(plan, random_bits(DType::f16, plan.dy_shape, rng));
    }
}

TEST(ResampleWalkGpu, MatchesCpuWhereAThreadCrossesRowsPlanesAndBatches) {
    SeededRng rng;
    expect_walk_matches_cpu(walk_plan({3, 5, 9}, {1, 1.5f, 0.34f}), rng);
    expect_walk_matches_cpu(walk_plan({2, 3, 11}, {1.5f, 0.67f, 1}), rng);
    expect_walk_matches_cpu(walk_plan({13, 5, 9}, {1.5f, 1, 2}), rng);  // several taps on axis 0
    expect_walk_matches_cpu(walk_plan({2, 11}, {1.5f, 0.5f}), rng);     // the last thread's 6 elements, then padding
}

TEST(ResampleWalkGpu, Float32MatchesCpuOnSpecialsAndRawBits) {
    SeededRng rng;
    for (const ResampleGradPlan& plan : {walk_plan_f32({5, 7, 11, 16}, {1, 3, 3, 3}),       // 27 taps an element
                                         walk_plan_f32({6, 5, 9}, {1.5f, 0.5f, 1.5f}),      // rows crossed
                                         walk_plan_f32({4, 3, 5}, {1.5f, 0.75f, 2.5f})}) {  // rows of 5
        expect_walk_matches_cpu(plan, rng);
        expect_gpu_matches_cpu(plan, random_bits(DType::f32, plan.dy_shape, rng));
    }
}

TEST(ResampleWalkGpu, ManyWorkgroupsInSeveralDispatchesAndThroughStaging) {
    SeededRng rng;
    const ResampleGradPlan plan = walk_plan({9, 40, 37}, {1, 1.5f, 0.4f});
    ASSERT_EQ(kernel_of(plan, kFewGroups), kWalk);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_staging());
}

TEST(ResampleWalkGpu, LargeFp16DxTakesTheUint4Walk) {
    // dX of 2^21 halves and more: eight halves a thread (its phased copy of axis 3's taps), a thread's halves in two
    // rows, rows of 0-2 taps an element; below, a word a thread (H200: the uint4 walk's threads would not fill the
    // GPU, 20261239/48 49.1 -> 25.5 us).
    SeededRng rng;
    const ResampleGradPlan large = walk_plan({64, 48, 683}, {1, 1.5f, 1.49f});
    ASSERT_GE(large.dx_shape[0] * large.dx_shape[1] * large.dx_shape[2], int64_t(1) << 21);
    ASSERT_EQ(kernel_of(large), kWalkUint4);
    expect_gpu_matches_cpu(large, random_tensor(DType::f16, large.dy_shape, rng));
    EXPECT_EQ(kernel_of(walk_plan({62, 48, 683}, {1, 1.5f, 1.49f})), kWalk);
}

TEST(ResampleWalkGpu, MatchesCpuWithPyTorchsNearestRule) {
    SeededRng rng;
    expect_walk_matches_cpu(torch_plan({3, 4, 2, 17}, {3, 4, 3, 5}, DType::f16), rng);
}

}  // namespace
}  // namespace dmlgrad::testing
