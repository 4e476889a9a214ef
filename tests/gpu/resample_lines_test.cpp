// Resample grad's lines (kernels/resample_grad_lines.hlsl: nearest plans whose dX rows each read one dY row at most,
// of at most LINE_MOST_TAPS (4) taps an element) against the CPU reference, bit for bit, outputs poisoned: fp16 and
// float32, rows of one tap at most and of two to four (sums in the CPU's order, rounded to halves), rows shorter than a
// thread's elements (a thread crosses several row ends; rows of one element), rows of many uint4s (the phased column
// words), the last thread's fewer elements, columns without taps, an identity plan, downsampled outer axes (the row
// table: rows of one dY row or none), special values and raw bits (NaNs, -0, subnormal halves and denormal floats, made
// again on bits); which plans take them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu/ops/resample_geometry.h"
#include "gpu_testing.h"
#include "interface/resample_grad.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

// The lines of `taps` taps an element at most (fp16 of 4 taps: a word a thread), or (0) the bounds.
std::string lines(DType type, int taps) {
    const bool half = type == DType::f16;
    return "resample_grad_nearest_" + std::string(half ? "f16" : "f32") + "_lines_" +
           (taps == 0 ? "bounds" : "taps" + std::to_string(taps) + (half && taps == 4 ? "_words" : ""));
}

// The plan takes the lines of `taps` taps and matches the CPU on random values with specials, without, and on raw
// bits.
void expect_lines_match_cpu(const ResampleGradPlan& plan, int taps, std::mt19937_64& rng) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), lines(plan.dtype, taps));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(plan.dtype, plan.dy_shape, rng));
}

TEST(ResampleLinesGpu, TakeNearestPlansWhoseRowsReadTheirOwnDyRowOfAtMostFourTaps) {
    for (DType type : {DType::f16, DType::f32}) {
        EXPECT_EQ(kernel_of(torch_plan({1, 4000, 9}, {1, 4000, 11}, type)), lines(type, 2));  // 1 or 2 taps
        EXPECT_EQ(kernel_of(torch_plan({1, 4000, 27}, {1, 4000, 9}, type)), lines(type, 1));  // 0 or 1
        EXPECT_EQ(kernel_of(torch_plan({50, 8, 11}, {50, 8, 2}, type)), lines(type, 1));      // identity axes merged
        // A resampled outer axis (its dY rows looked up a row at a time: the walk or strips), more taps: not lines.
        EXPECT_NE(kernel_of(torch_plan({1, 1, 30, 9}, {1, 1, 45, 11}, type)), lines(type, 2));
        // 3-4 taps where the walk would take the plan (fp16 rows of an odd length, planes of fewer rows than a strip).
        EXPECT_EQ(kernel_of(torch_plan({1, 3, 9}, {1, 3, 26}, type)), lines(type, 3));  // 2 or 3 taps
        EXPECT_EQ(kernel_of(torch_plan({1, 3, 9}, {1, 3, 35}, type)), lines(type, 4));  // 3 or 4
        EXPECT_NE(kernel_of(torch_plan({1, 3, 9}, {1, 3, 40}, type)), lines(type, 4));  // 4 or 5: not the words
    }
    EXPECT_EQ(kernel_of(torch_plan({1, 30, 9}, {1, 30, 26}, DType::f16)), lines(DType::f16, 3));
    // But where the strips (fp16 rows of an even length) or the f32 strips or runs make them with their fast code,
    // those keep them: fp16, and f32 of 4 taps; f32 of 3 taps takes the lines there too, but for dX small enough
    // for an element a thread (the elements kernel).
    EXPECT_EQ(kernel_of(torch_plan({1, 30, 10}, {1, 30, 29}, DType::f16)), "resample_grad_nearest_f16_strips");
    EXPECT_EQ(kernel_of(torch_plan({1, 30, 9}, {1, 30, 35}, DType::f32)), "resample_grad_nearest_f32_strips");
    EXPECT_EQ(kernel_of(torch_plan({1, 2200, 999}, {1, 2200, 3996}, DType::f32)), "resample_grad_nearest_f32");
    EXPECT_EQ(kernel_of(torch_plan({1, 30, 9}, {1, 30, 26}, DType::f32)), lines(DType::f32, 3));
    EXPECT_EQ(kernel_of(torch_plan({1, 2200, 999}, {1, 2200, 2990}, DType::f32)), lines(DType::f32, 3));
    EXPECT_EQ(kernel_of(torch_plan({1, 1, 3825}, {1, 1, 11475}, DType::f32)), "resample_grad_nearest_f32_elements");
    // Integer factors keep the block kernel (fp16); tensors beyond one binding keep the runs.
    EXPECT_EQ(kernel_of(torch_plan({1, 40, 9}, {1, 40, 18}, DType::f16)), "resample_grad_block_x2_f16");
    constexpr DeviceLimits kTinyBindings{4096, 16, 65535};
    EXPECT_EQ(kernel_of(torch_plan({1, 400, 9}, {1, 400, 11}, DType::f16), kTinyBindings), "resample_grad_nearest_f16");
}

// PyTorch's nearest, dX 5 from dY 3: dY o takes dX floor(5 o / 3), columns 0, 1 and 3; dX 4 from dY 2: 0 and 2.
TEST(ResampleLinesGpu, ColumnWordsAndRowStartsByHand) {
    using namespace kernels::resample_grad;
    constexpr uint32_t kOne = 1u << LINE_COUNT_SHIFT;
    const ResampleGradPlan rows_plan = torch_plan({1, 4, 5}, {1, 4, 3}, DType::f16);  // the view points into it
    const resample_gpu::View rows = resample_gpu::make_view(rows_plan);
    ASSERT_TRUE(resample_gpu::rows_read_their_own_row(rows));
    EXPECT_EQ(resample_gpu::line_columns(rows, 8), (std::vector<uint32_t>{kOne, 1 | kOne, 0, 2 | kOne, 0, 0, 0, 0}));
    // Phased: column c at (c mod 4) 2 + c / 4.
    EXPECT_EQ(resample_gpu::line_columns(rows, 4), (std::vector<uint32_t>{kOne, 0, 1 | kOne, 0, 0, 0, 2 | kOne, 0}));
    const ResampleGradPlan plane_plan = torch_plan({1, 1, 5, 4}, {1, 1, 3, 2}, DType::f32);
    const resample_gpu::View plane = resample_gpu::make_view(plane_plan);
    ASSERT_FALSE(resample_gpu::rows_read_their_own_row(plane));
    EXPECT_EQ(resample_gpu::line_columns(plane, 4), (std::vector<uint32_t>{kOne, 0, 1 | kOne, 0}));
    // dX rows 0, 1 and 3 read dY rows 0, 1 and 2 (2 elements each); the last word is the row after the last.
    EXPECT_EQ(resample_gpu::line_row_starts(plane), (std::vector<uint32_t>{0, 2, NO_DY_ROW, 4, NO_DY_ROW, NO_DY_ROW}));
}

TEST(ResampleLinesGpu, MatchCpuOnRowsOfOneTapAtMost) {
    SeededRng rng;
    expect_lines_match_cpu(torch_plan({1, 37, 27}, {1, 37, 9}, DType::f16), 1, rng);  // 0 or 1 tap, row ends inside
    expect_lines_match_cpu(torch_plan({1, 37, 27}, {1, 37, 9}, DType::f32), 1, rng);
    expect_lines_match_cpu(torch_plan({1, 23, 3}, {1, 23, 2}, DType::f16), 1, rng);     // rows of 3: row ends a thread
    expect_lines_match_cpu(torch_plan({1, 41, 1}, {1, 41, 1}, DType::f32), 1, rng);     // one row: an identity plan
    expect_lines_match_cpu(torch_plan({1, 5, 1203}, {1, 5, 407}, DType::f16), 1, rng);  // rows of many uint4s
    expect_lines_match_cpu(torch_plan({1, 37, 5}, {1, 37, 3}, DType::f16), 1, rng);  // a last thread of 1 (185 halves)
}

TEST(ResampleLinesGpu, MatchCpuOnRowsOfTwoTapsAndOfOneElement) {
    SeededRng rng;
    expect_lines_match_cpu(torch_plan({1, 29, 9}, {1, 29, 11}, DType::f16), 2, rng);  // 1 or 2 taps
    expect_lines_match_cpu(torch_plan({1, 29, 9}, {1, 29, 11}, DType::f32), 2, rng);
    expect_lines_match_cpu(torch_plan({1, 61, 1}, {1, 61, 2}, DType::f32), 2, rng);     // rows of one element
    expect_lines_match_cpu(torch_plan({1, 61, 2}, {1, 61, 3}, DType::f16), 2, rng);     // rows of two
    expect_lines_match_cpu(torch_plan({1, 33, 5}, {1, 33, 7}, DType::f32), 2, rng);     // rows of 5 floats
    expect_lines_match_cpu(torch_plan({4, 3, 517}, {4, 3, 1030}, DType::f32), 2, rng);  // long rows, 2 taps each
}

// Three and four taps an element (downscales of 3x-4x on the row), summed in the CPU's order; with rows shorter than
// a thread's elements, a downsampled outer axis (the row table) and a one-dimensional plan (one long row).
TEST(ResampleLinesGpu, MatchCpuOnRowsOfThreeAndFourTaps) {
    SeededRng rng;
    expect_lines_match_cpu(torch_plan({1, 29, 13}, {1, 29, 38}, DType::f16), 3, rng);  // 2 or 3 taps
    // dY rows of an odd length: fp16 columns of 2, 3 and 4 taps from odd halves too (their taps' words differ).
    expect_lines_match_cpu(torch_plan({1, 29, 13}, {1, 29, 37}, DType::f16), 3, rng);
    expect_lines_match_cpu(torch_plan({1, 31, 13}, {1, 31, 45}, DType::f16), 4, rng);
    expect_lines_match_cpu(torch_plan({1, 3, 29}, {1, 3, 87}, DType::f32), 3, rng);   // planes of 3 rows
    expect_lines_match_cpu(torch_plan({1, 30, 9}, {1, 30, 26}, DType::f32), 3, rng);  // where the strips would be
    expect_lines_match_cpu(torch_plan({1, 31, 9}, {1, 31, 35}, DType::f16), 4, rng);  // 3 or 4
    expect_lines_match_cpu(torch_plan({1, 2, 9}, {1, 2, 35}, DType::f32), 4, rng);
    expect_lines_match_cpu(torch_plan({1, 43, 3}, {1, 43, 11}, DType::f16), 4, rng);           // rows of 3
    expect_lines_match_cpu(torch_plan({2, 3, 7, 5}, {2, 3, 4, 19}, DType::f16), 4, rng);       // the row table
    expect_lines_match_cpu(torch_plan({1, 1, 1, 1001}, {1, 1, 1, 3010}, DType::f16), 4, rng);  // one row
}

// DirectML's float32 coordinates past 2^24 (floats 2 apart): scale 1 maps dY o to dX float(o), ties to even, so dX
// 2^24 + 4k takes dY 2^24 + 4k - 1 to + 1 (k = 0: from 2^24), 2^24 + 4k + 2 itself, odd ones nothing; a 1-D plan
// of 0 to 3 taps an element (as 211937796 halves: the walk took it at 12% of the bound on the H100). Its column words
// by hand; the program is built, not run (lavapipe).
TEST(ResampleLinesGpu, TakeOneDimensionalPlansPastTwoToThe24WithTheirColumnWords) {
    using namespace kernels::resample_grad;
    constexpr int64_t kSize = (int64_t(1) << 24) + 16;
    ResampleGradDesc desc{{kSize, 1}, InterpolationMode::nearest, RoundingDirection::increasing, {1, 1}, {0, -0.5f},
                          {0, 1}};
    const ResampleGradPlan plan = plan_resample_grad(desc, {"-g", "dy.npy", {DType::f16, {kSize, 1}}});
    EXPECT_EQ(kernel_of(plan), lines(DType::f16, 3));
    const resample_gpu::View view = resample_gpu::make_view(plan);
    ASSERT_EQ(view[3].dx, uint64_t(kSize));
    EXPECT_TRUE(resample_gpu::rows_read_their_own_row(view));
    EXPECT_EQ(resample_gpu::row_taps(view), 3u);
    const std::vector<uint32_t> words = resample_gpu::line_columns(view, 8);
    const uint64_t per_phase = (kSize + 7) / 8;
    auto column = [&](uint32_t c) { return words[(c % 8) * per_phase + c / 8]; };
    auto word = [](uint32_t first, uint32_t taps) { return first | taps << LINE_COUNT_SHIFT; };
    constexpr uint32_t k24 = 1u << 24;
    EXPECT_EQ(column(k24 - 1), word(k24 - 1, 1));
    EXPECT_EQ(column(k24), word(k24, 2));
    EXPECT_EQ(column(k24 + 1), 0u);
    EXPECT_EQ(column(k24 + 2), word(k24 + 2, 1));
    EXPECT_EQ(column(k24 + 3), 0u);
    EXPECT_EQ(column(k24 + 4), word(k24 + 3, 3));
    EXPECT_EQ(column(k24 + 5), 0u);
    EXPECT_EQ(column(k24 + 8), word(k24 + 7, 3));
}

// Columns of more taps than the column words' variants (5 at 5x down), on rows of an odd length: the bounds where
// the walk would make them a uint4 a thread (fp16 dX of at least 2^21 elements), the walk below (fp16: a word a
// thread; its threads beat the bounds' loops there). The programs are built, not run (lavapipe); the bounds' sums are
// checked against the CPU above.
TEST(ResampleLinesGpu, TakeTheBoundsForColumnsOfMoreTapsWhereTheWalkWouldMakeUint4s) {
    EXPECT_EQ(kernel_of(torch_plan({1, 2049, 1025}, {1, 2049, 5125}, DType::f16)), lines(DType::f16, 0));
    EXPECT_EQ(kernel_of(torch_plan({1, 2000, 201}, {1, 2000, 1005}, DType::f16)),
              "resample_grad_nearest_f16_walk_words_ahead");
    EXPECT_EQ(kernel_of(torch_plan({1, 3, 110}, {1, 3, 1040}, DType::f32)), "resample_grad_nearest_f32_walk");
}

// DirectML's rule on the last axis (dY o to dX ceil((o + 0.5) / scale - 0.5 - offset), clamped): a downscale whose
// first or last dX column takes the spare dY columns (8 taps where the others have 4; 5 where they have 3) takes the
// variant of the columns between, and sums those ends' extra taps in a loop.
ResampleGradPlan ceil_plan(const Shape& dx, const Shape& dy, float scale, float input_offset) {
    const size_t last = dx.size() - 1;
    const std::vector<float> ones(dx.size(), 1.0f), zeros(dx.size(), 0.0f);
    ResampleGradDesc desc{dx, InterpolationMode::nearest, RoundingDirection::increasing, ones, zeros, zeros};
    desc.scales[last] = scale;
    desc.input_pixel_offsets[last] = input_offset;
    return plan_resample_grad(desc, {"-g", "dy.npy", {DType::f16, dy}});
}

TEST(ResampleLinesGpu, MatchCpuWhereTheEndColumnsHaveMoreTapsThanTheVariant) {
    using namespace kernels::resample_grad;
    SeededRng rng;
    const ResampleGradPlan fours = ceil_plan({2, 9, 11}, {2, 9, 44}, 4.0f, -0.5f);  // as 9x61x283x188 -> x47
    const resample_gpu::View view = resample_gpu::make_view(fours);
    ASSERT_EQ(resample_gpu::row_taps(view), 8u);
    ASSERT_EQ(resample_gpu::inner_column_taps(view), 4u);
    expect_lines_match_cpu(fours, 4, rng);
    expect_lines_match_cpu(ceil_plan({3, 31}, {3, 93}, 3.0f, 0.0f), 3, rng);  // as 65536x3027 -> x1009: 5 at the end
    // More taps at an end than a column word holds: the bounds.
    const ResampleGradPlan wide = ceil_plan({3, 9}, {3, 9 + LINE_MOST_COUNT}, 1.0f, 0.0f);
    EXPECT_GT(resample_gpu::row_taps(resample_gpu::make_view(wide)), uint64_t(LINE_MOST_COUNT));
    expect_lines_match_cpu(wide, 0, rng);
}

// Columns of more taps than a column word counts (LINE_MOST_COUNT): the bounds, each column's taps up to the next
// column's first dY index, summed in a loop; rows of one and of several uint4s, shorter than a thread's elements, the
// row table, columns without taps between (an upscale of the rest of the row), and the last thread's fewer elements.
TEST(ResampleLinesGpu, MatchCpuWithTheBoundsWhereNoColumnWordHoldsTheColumns) {
    SeededRng rng;
    expect_lines_match_cpu(torch_plan({1, 7, 5}, {1, 7, 100}, DType::f16), 0, rng);       // 20 taps an element
    expect_lines_match_cpu(torch_plan({1, 3, 9}, {1, 3, 171}, DType::f32), 0, rng);       // 19
    expect_lines_match_cpu(torch_plan({1, 2, 37}, {1, 2, 703}, DType::f16), 0, rng);      // rows of several uint4s
    expect_lines_match_cpu(torch_plan({1, 13, 3}, {1, 13, 50}, DType::f16), 0, rng);      // 16-17 taps, rows of 3
    expect_lines_match_cpu(torch_plan({2, 3, 7, 5}, {2, 3, 4, 90}, DType::f16), 0, rng);  // the row table
    expect_lines_match_cpu(torch_plan({1, 1, 1, 1}, {1, 1, 1, 33}, DType::f32), 0, rng);  // one element
    // dX 11 from dY 24 (dY o to dX 2 o + 1, clamped): columns of 0 and 1 tap, the last of 19.
    const std::vector<float> ones(2, 1.0f), zeros(2, 0.0f);
    ResampleGradDesc desc{{3, 11}, InterpolationMode::nearest, RoundingDirection::increasing, ones, zeros, zeros};
    desc.scales[1] = 0.5f;
    const ResampleGradPlan gaps = plan_resample_grad(desc, {"-g", "dy.npy", {DType::f16, {3, 24}}});
    expect_lines_match_cpu(gaps, 0, rng);
}

// dX 4 from dY 40 (PyTorch: dY o to dX floor(o / 10)): ten taps each; with phases of 2, column c at (c mod 2) 3 + c / 2
// (5 words, rounded up to 6).
TEST(ResampleLinesGpu, BoundsByHand) {
    const ResampleGradPlan plan = torch_plan({1, 1, 4}, {1, 1, 40}, DType::f32);
    const resample_gpu::View view = resample_gpu::make_view(plan);
    ASSERT_TRUE(resample_gpu::taps_cover_dy_rows_in_order(view));
    EXPECT_EQ(resample_gpu::line_bounds(view, 1), (std::vector<uint32_t>{0, 10, 20, 30, 40}));
    EXPECT_EQ(resample_gpu::line_bounds(view, 2), (std::vector<uint32_t>{0, 20, 40, 10, 30, 0}));
}

// Outer axes of at most one tap an index (downsampled: some dX rows read no dY row) take the lines through the row
// table; a thread past dX's end steps into its last entry.
TEST(ResampleLinesGpu, MatchCpuWhereOuterAxesGiveEachRowOneDyRowOrNone) {
    SeededRng rng;
    expect_lines_match_cpu(torch_plan({2, 3, 7, 11}, {2, 3, 4, 14}, DType::f16), 2, rng);  // rows of 11
    expect_lines_match_cpu(torch_plan({2, 3, 7, 11}, {2, 3, 4, 14}, DType::f32), 2, rng);
    expect_lines_match_cpu(torch_plan({1, 3, 5, 9, 27}, {1, 3, 3, 4, 9}, DType::f16), 1, rng);  // three axes
    expect_lines_match_cpu(torch_plan({1, 9, 13, 3}, {1, 9, 5, 2}, DType::f16), 1, rng);        // rows of 3
    expect_lines_match_cpu(torch_plan({1, 2, 17, 1}, {1, 2, 8, 2}, DType::f32), 2, rng);        // rows of one element
    expect_lines_match_cpu(torch_plan({2, 3, 7, 11}, {2, 3, 4, 11}, DType::f16), 1, rng);  // rows untouched: no columns
    // An outer axis of two taps an index (its dX rows read two dY rows) keeps the walk.
    EXPECT_EQ(kernel_of(torch_plan({1, 1, 7, 11}, {1, 1, 11, 14}, DType::f16)),
              "resample_grad_nearest_f16_walk_words_ahead");
}

// The row table takes a word a dX row: rows of one half over two downsampled axes make it larger than dX (and than
// the tap tables, a pair an index of each axis). At every binding size the program fits its bindings (the lines only
// where their tables fit one).
TEST(ResampleLinesGpu, TablesFitOneBindingAtEverySize) {
    const ResampleGradPlan plan = torch_plan({1, 1, 60, 50, 1}, {1, 1, 20, 17, 2}, DType::f16);  // dX 6000 bytes
    ASSERT_EQ(kernel_of(plan), lines(DType::f16, 2));
    int taken = 0, others = 0;
    for (uint64_t bytes = 6144; bytes <= 16384; bytes += 256) {  // the tables: 12008 bytes
        const DeviceLimits limits{bytes, 16, 65535};
        const GpuProgram program = build_resample_grad_program(plan, limits);
        EXPECT_NO_THROW(validate(program, limits, Plan{plan})) << bytes << " bytes a binding, " << program.kernel;
        (program.kernel == lines(DType::f16, 2) ? taken : others) += 1;
    }
    EXPECT_GT(taken, 0);
    EXPECT_GT(others, 0);
}

TEST(ResampleLinesGpu, ManyWorkgroupsInSeveralDispatchesAndThroughStaging) {
    SeededRng rng;
    const ResampleGradPlan plan = torch_plan({1, 3000, 11}, {1, 3000, 13}, DType::f16);
    ASSERT_EQ(kernel_of(plan, kFewGroups), lines(DType::f16, 2));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f16, plan.dy_shape, rng), gpu_with_staging());
}

}  // namespace
}  // namespace dmlgrad::testing
