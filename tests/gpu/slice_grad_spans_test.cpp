// Slice grad's spans kernel (kernels/slice_grad_spans.hlsl: a fill of zeros, then a thread per uint4 of each dY
// row's span, for slices that cover a small share of dX): bit for bit against the CPU, with the output poisoned
// first (the fill must reach every uint4), on random sparse slices of every element size (steps -4..4, rows shorter
// and longer than a uint4, ranks 1-8), on issue 23's slow geometries of the seed-20261201 sweep at small sizes, on
// spans that share uint4s with the next row's, split into dispatches; and the dispatch's choice of it from what the
// spans cost.
#include <gtest/gtest.h>

#include "gpu_testing.h"
#include "interface/slice_grad_spans.h"
#include "random_slices.h"

namespace dmlgrad::testing {
namespace {

namespace spans = kernels::slice_grad_spans;

std::string spans_kernel(DType type) { return slice_kernel("slice_grad_spans", type); }
std::string regions_kernel(DType type) { return slice_kernel("slice_grad_spans_regions", type); }
std::string region_rows_kernel(DType type) { return slice_kernel("slice_grad_spans_regions_rows", type); }
bool spans_or_regions(const std::string& kernel) { return kernel.starts_with("slice_grad_spans_"); }

// Random sparse slices: outer axes of 1 to `outer_max` elements with steps 2..4 (either sign), the innermost `row`
// long, steps 1..4 (either sign) over part of it.
SliceDraw sparse_rows(int64_t row, int64_t outer_max) { return {row, row, outer_max, 2, true}; }

class SliceGradSpans : public ::testing::TestWithParam<DType> {};

TEST_P(SliceGradSpans, MatchesCpuOnRandomSparseSlicesOfRanks1To8) {
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    // Rounds of draws until 12 take the spans kernel (a draw whose axes merge into dense rows takes another kernel;
    // one round of 32 draws gave fewer than 12 in 5 of 60 runs).
    int taken = 0;
    for (int round = 0; round < 8 && taken < 12; ++round)
        for (size_t rank = 1; rank <= 8; ++rank)
            for (int64_t row : {int64_t(2), per_uint4 + 3, 5 * per_uint4, 9 * per_uint4 + 5}) {
                const SliceGradPlan plan = random_slice(t, rank,
                                                        sparse_rows(row, rank <= 3   ? 12
                                                                         : rank <= 5 ? 7
                                                                                     : 4),
                                                        rng);
                if (!spans_or_regions(program_of(plan).kernel)) continue;  // dense after all: another kernel
                ++taken;
                expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
            }
    EXPECT_GE(taken, 12);
}

// issue 23's slice cases of the seed-20261201 sweep (docs/runs/2026-11-27c-h100-sweep-seed20261201-discovery.txt)
// that take the spans kernel (35 keeps the walk, below), each geometry at a small size (the sweep's case number
// first).
const std::vector<std::pair<DType, std::vector<Visit>>> kIssueGeometries = {
    // 37: [:, ::-1, -5:10:3, 4::-3, ::2, :11:2, :, :] of int16, rows of 9 (two axes merged)
    {DType::i16, {{3, 0, 3, 1}, {5, 4, 5, -1}, {11, 6, 2, 3}, {13, 4, 2, -3}, {16, 0, 6, 2}, {9, 0, 9, 1}}},
    // 73: [20:39:2, 2:-4:2, :, -36:16:-3, :, 0:7:2] of f16, rows of 8 (whole uint4s)
    {DType::f16, {{23, 20, 2, 2}, {7, 2, 1, 2}, {11, 0, 11, 1}, {59, 23, 3, -3}, {5, 0, 5, 1}, {8, 0, 4, 2}}},
    // 139: [::-4, ::-3, ::-3, 2:4] of uint8, rows of 9 with two elements reached
    {DType::u8, {{41, 40, 11, -4}, {5, 4, 2, -3}, {8, 7, 3, -3}, {9, 2, 2, 1}}},
    // 150: [2207:-23735:3, :, :, ::-3] of f16, rows of 22 reached every third element
    {DType::f16, {{301, 7, 30, 3}, {3, 0, 3, 1}, {5, 0, 5, 1}, {22, 21, 8, -3}}},
    // 135: [2:0:-2, :, :2274:3, 0::4, 0:, :] of int8, rows of 42 copied whole
    {DType::u8, {{8, 2, 1, -2}, {4, 0, 4, 1}, {89, 0, 8, 3}, {11, 0, 3, 4}, {42, 0, 42, 1}}},
    // 151: [59051:20656:-2, ::3, :] of int16, rows of 5
    {DType::i16, {{301, 250, 60, -2}, {53, 0, 18, 3}, {5, 0, 5, 1}}},
    // 92: [-11:5:-4, :, -4::-2, :, -1::-1, 7:16:3, :, 6:2:-4] of f32, one element a row of 8
    {DType::f32,
     {{9, 6, 1, -4},
      {3, 0, 3, 1},
      {11, 7, 4, -2},
      {2, 0, 2, 1},
      {7, 6, 7, -1},
      {23, 7, 3, 3},
      {5, 0, 5, 1},
      {8, 6, 1, -4}}},
};

TEST(SliceGradSpans, MatchesCpuOnTheGeometriesOfTheIssue) {
    SeededRng rng;
    for (const auto& [t, axes] : kIssueGeometries) {
        const SliceGradPlan plan = visit_plan(t, axes);
        // (135's rows copied whole fold into 16-bit elements: slice_geometry.h's with_wide_elements; rows shorter than
        // 64 bytes where the spans would rewrite more than 7/20 of the fill take the lines walk)
        const std::string kernel = program_of(plan).kernel;
        ASSERT_TRUE(spans_or_regions(kernel) || kernel.starts_with("slice_grad_walk_lines_")) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST_P(SliceGradSpans, MatchesCpuWhereSpansShareUint4s) {
    // Rows shorter than a uint4, every fourth one reached: each uint4 holds several rows' spans, written by as many
    // threads; rows a uint4 and a half long, reached whole or from their middle: spans cross uint4 and row ends.
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    const std::vector<std::vector<Visit>> cases = {
        // (sparse enough that the spans rewrite at most 7/20 of the fill: denser ones take the lines walk)
        {{400, 0, 4, 3}, {31, 1, 8, 4}, {3, 0, 3, 1}},
        {{600, 599, 6, -100}, {per_uint4 + per_uint4 / 2 + 1, 0, per_uint4 + per_uint4 / 2 + 1, 1}},
        {{600, 2, 8, 70}, {2 * per_uint4 + 1, 2 * per_uint4, per_uint4, -1}},
        // consecutive rows of two uint4s and an element, each reached at step 3 short of its last element (as
        // 20261227/24's): a uint4 that the previous row's span reaches is that row's thread's to write, one holding
        // only the previous row's unreached tail this row's.
        {{3000, 0, 100, 30}, {50, 0, 50, 1}, {2 * per_uint4 + 1, 0, (2 * per_uint4 - 1) / 3 + 1, 3}},
    };
    for (const std::vector<Visit>& axes : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_TRUE(spans_or_regions(program_of(plan).kernel)) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST_P(SliceGradSpans, MatchesCpuSplitIntoDispatches) {
    // kFewGroups: 3 workgroups a dispatch, so the fill and the spans each take several steps (each pushing its
    // thread base); dX of 9 MiB takes several uint4s per fill thread.
    const DType t = GetParam();
    SeededRng rng;
    const SliceGradPlan plan = visit_plan(t, {{5, 4, 2, -4}, {101, 1, 20, 5}, {67, 3, 16, 4}});
    const GpuProgram program = program_of(plan, kFewGroups);
    ASSERT_EQ(program.kernel, spans_kernel(t));
    ASSERT_GT(program.steps.size(), 2u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    const int64_t rows = 9 * 1024 * 1024 / (601 * int64_t(dtype_size(t)));
    const SliceGradPlan big = visit_plan(t, {{rows, 5, 100, 15}, {601, 600, 200, -3}});
    ASSERT_EQ(program_of(big).kernel, spans_kernel(t));
    ASSERT_GT(pushed_params<spans::SpansParams>(program_of(big).steps.at(0)).per_thread, 1u);
    expect_gpu_matches_cpu(big, random_tensor(t, big.dy_shape, rng), gpu());
}

TEST_P(SliceGradSpans, MatchesCpuAcrossRegions) {
    // A region step's workgroup writes the span uint4s of its region of dX (4 KiB here, dX of 0.1-1.2 MiB): spans
    // that cross regions' ends; regions that begin before a level's first reached coordinate, on one
    // past it, or past its last (the count of rows before carries into the level outside); negative steps (rows
    // counted in dX's order); rows shorter than a uint4. The last case's spans lie 34-48 bytes apart (a thread a
    // span, slice_grad_spans_regions_rows_*, but for 64-bit elements), the others' 100 and more (a thread a uint4).
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    const std::vector<std::vector<Visit>> cases = {
        {{7, 6, 3, -3}, {900, 898, 100, -7}, {4 * per_uint4 + 5, 2, per_uint4 / 2 + 1, 3}},
        {{3, 0, 2, 2}, {41, 3, 7, 5}, {200, 150, 30, -5}, {3 * per_uint4 + 1, 3 * per_uint4, per_uint4 + 1, -2}},
        {{3000, 0, 429, 7}, {5, 1, 2, 2}, {per_uint4 / 2 + 1, 0, 1, -1}},
        {{3000, 0, 429, 7}, {5, 1, 2, 2}, {per_uint4 + 1, per_uint4, 2, -1}},
    };
    for (const std::vector<Visit>& axes : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        const GpuProgram program = program_of(plan);
        const bool close = &axes == &cases.back() && dtype_size(t) <= 4;
        ASSERT_EQ(program.kernel, close ? region_rows_kernel(t) : regions_kernel(t)) << describe(plan);
        const spans::SpansParams params = pushed_params<spans::SpansParams>(program.steps.at(0));
        ASSERT_EQ(params.fill, spans::STEP_REGION) << describe(plan);
        ASSERT_GT(params.count, 8u * 256u * params.per_thread) << describe(plan);  // 8 regions and more
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST(SliceGradSpans, MatchesCpuInFullRegionsOfSpansOf4Uint4s) {
    // Spans of 4 uint4s take the region step over full regions (32 KiB: dX of 32 MiB and more): f32 [:, 86:98:3] of
    // rows of 139 (as 20261216/117's), every row reached.
    SeededRng rng;
    const SliceGradPlan plan = visit_plan(DType::f32, {{65536, 0, 65536, 1}, {139, 86, 4, 3}});
    const GpuProgram program = program_of(plan);
    ASSERT_EQ(program.kernel, regions_kernel(DType::f32));
    ASSERT_EQ(pushed_params<spans::SpansParams>(program.steps.at(0)).row_threads, 4u);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu());
}

TEST(SliceGradSpans, MatchesCpuWhereARegionMeetsMoreRowsThanThreads) {
    // Two planes whose every row is reached, among empty ones (fp16: enough that the spans pay against the lines
    // walk): a region (4 KiB here) meets up to 513 reached rows of 8 bytes (int8 rows of 8, fp16 of 4), more than
    // its 256 threads, so a thread of the region step with a thread a span takes several rows; the regions of empty
    // planes leave without their barrier.
    SeededRng rng;
    for (const auto& [t, row, planes] :
         {std::tuple{DType::u8, int64_t(8), int64_t(60)}, std::tuple{DType::f16, int64_t(4), int64_t(160)}}) {
        const SliceGradPlan plan = visit_plan(t, {{planes, 10, 2, 30}, {600, 0, 600, 1}, {row, 1, 2, 1}});
        ASSERT_EQ(program_of(plan).kernel, region_rows_kernel(t)) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST_P(SliceGradSpans, MatchesCpuWithOddDivisors) {
    // A span thread divides by multiplications (kernels/slice_grad_spans.hlsl's div_magic): its thread index by the
    // threads of a row (5 to 26 here), its dY row by each level's dY size (3, 100, 7) and an innermost coordinate by
    // the step (7); one of dY size 1.
    const DType t = GetParam();
    SeededRng rng;
    const SliceGradPlan plan =
        visit_plan(t, {{9, 8, 3, -4}, {300, 299, 100, -3}, {3, 1, 1, 1}, {7, 0, 7, 1}, {61, 3, 8, 7}});
    ASSERT_EQ(program_of(plan).kernel, spans_kernel(t)) << describe(plan);
    ASSERT_GT(pushed_params<spans::SpansParams>(program_of(plan).steps.back()).row_threads, 4u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
}

TEST(SliceGradSpans, MatchesCpuWithAWholeSpanPerThread) {
    // MIN_THREADS dY rows and more whose spans lie at most 32 bytes apart: a thread per row writes its whole span.
    // 20261224/21's int8 [::-4] rows of 21 (3 uint4s, each shared with a neighbouring row's span), one plane in 9 of
    // the outer axis; int8 rows of 4, 2 elements reached, every 4th row (a uint4 each, the short rows' gather). 80
    // and 128 planes reached: in a few, the walk over their stretches would take them.
    SeededRng rng;
    const std::vector<std::vector<Visit>> cases = {
        {{720, 719, 80, -9}, {3277, 0, 3277, 1}, {21, 20, 6, -4}},
        {{1024, 0, 128, 8}, {8192, 8191, 2048, -4}, {4, 0, 2, 3}},
    };
    for (const std::vector<Visit>& axes : cases) {
        const SliceGradPlan plan = visit_plan(DType::u8, axes);
        const GpuProgram program = program_of(plan);
        ASSERT_EQ(program.kernel, spans_kernel(DType::u8)) << describe(plan);
        const spans::SpansParams params = pushed_params<spans::SpansParams>(program.steps.back());
        ASSERT_GT(params.per_thread, 1u) << describe(plan);
        ASSERT_EQ(params.row_threads, 1u) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(DType::u8, plan.dy_shape, rng), gpu());
    }
}

INSTANTIATE_TEST_SUITE_P(AllSizes, SliceGradSpans, ::testing::Values(DType::u8, DType::f16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(SliceGradSpans, ChosenByWhatTheSpansCost) {
    // The sectors the spans rewrite after the fill (160 bytes' time each) cost at most 3/2 of the fill: 0.92 here.
    // dY and dX each fit a binding; on either API.
    const SliceGradPlan sparse = visit_plan(DType::u8, {{128, 0, 16, 8}, {64, 0, 32, 2}});
    EXPECT_EQ(program_of(sparse).kernel, "slice_grad_spans_b8");
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    EXPECT_EQ(program_of(sparse, d3d12).kernel, "slice_grad_spans_b8");
    // The bench's [:, :, ::2, ::2] and crop: the rows kernel.
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{4, 0, 4, 1}, {256, 0, 128, 2}, {256, 0, 128, 2}})).kernel,
              "slice_grad_rows_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{4, 0, 4, 1}, {256, 8, 240, 1}, {256, 8, 240, 1}})).kernel,
              "slice_grad_rows_b16");
    // int16 [:, :, ::3, 1::3] (1.75): the walk, which the H100 measured 4% faster there; sweep case 35's
    // [:5090346:3, 10:3:-3] (1.83), rows of 44 bytes: the lines walk (tests/gpu/slice_grad_lines_test.cpp).
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{3, 0, 3, 1}, {255, 0, 85, 3}, {255, 1, 85, 3}})).kernel,
              "slice_grad_walk_b16");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{601, 0, 170, 3}, {11, 10, 3, -3}})).kernel,
              "slice_grad_walk_lines_b32");
    // Where the element kernel (one axis, or two with step-1 rows) or the rows kernel would spread its arithmetic over
    // rows of 16 uint4s and more, at most 1/8: 1.35 and 1.28 keep those, 0.04 and 0.08 not.
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{40, 30, 10, -1}, {401, 0, 401, 1}})).kernel, "slice_grad_rowends_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{400, 30, 3, -1}, {401, 0, 401, 1}})).kernel, "slice_grad_spans_b8");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{64, 0, 16, 4}, {256, 0, 128, 2}})).kernel, "slice_grad_rows_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{256, 0, 4, 64}, {256, 0, 128, 2}})).kernel, "slice_grad_spans_b32");
    // Rows of two uint4s in the rows kernel: 1.09 takes the spans kernel, 2.19 not.
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{64, 0, 8, 8}, {8, 0, 4, 2}})).kernel, "slice_grad_spans_regions_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{64, 0, 16, 4}, {8, 0, 4, 2}})).kernel, "slice_grad_rows_b32");
    // A thread per span where a thread then takes a whole span of at most 4 uint4s, MIN_THREADS of them, and the
    // spans of neighbouring dY rows lie at most 48 bytes apart (int8 rows of 21, every one: 21 apart); else (int16
    // rows of 25, 50 bytes apart, in 160 planes: in a few, the walk over their stretches would take them) a thread
    // per uint4.
    const SliceGradPlan near = visit_plan(DType::u8, {{720, 0, 80, 9}, {4096, 0, 4096, 1}, {21, 20, 6, -4}});
    EXPECT_EQ(pushed_params<spans::SpansParams>(program_of(near).steps.back()).row_threads, 1u);
    const SliceGradPlan apart = visit_plan(DType::i16, {{1600, 0, 160, 10}, {1639, 0, 1639, 1}, {25, 6, 5, 3}});
    EXPECT_EQ(program_of(apart).kernel, "slice_grad_spans_b16");
    EXPECT_EQ(pushed_params<spans::SpansParams>(program_of(apart).steps.back()).per_thread, 1u);
    // Spans of rows copied whole (as 1215/5's [:, :, :7294586:4, :]) cost 112 bytes a sector: 1.41 of the fill here
    // (2.01 at 160), the spans kernel; a crop of the same span from rows of 38, 1.96: the lines walk (rows of 76
    // bytes that fold with nothing, each a line of its own).
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{350, 0, 100, 3}, {37, 0, 37, 1}})).kernel, "slice_grad_spans_b16");
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{350, 0, 100, 3}, {38, 0, 37, 1}})).kernel,
              "slice_grad_walk_lines_b16");
    // dX beyond a binding (a span thread may write anywhere in it), or a Vulkan device without 64-bit integers (the
    // span threads' divisions): another kernel.
    EXPECT_NE(program_of(sparse, kTinyLimits).kernel, "slice_grad_spans_b8");
    DeviceLimits no_int64 = kOneBinding;
    no_int64.shader_int64 = false;
    EXPECT_NE(program_of(sparse, no_int64).kernel, "slice_grad_spans_b8");
}

TEST(SliceGradSpans, PointsFarApartAsRowsOfOneElement) {
    // Reached elements of 4 bytes or more, 512 bytes or more apart along the innermost axis, in a dX of 48 MiB or
    // more: the spans plan as rows of one element (each reached element's uint4 after the fill), where the walk or
    // the rows kernel took them. 20261236/72's f32 [:, :, -258::-2, -57:27:-4] of 600 x 613 x 85 (one element every
    // other row of 340 bytes: 680 apart); not in fp16, not 504 bytes apart (rows of 63), not in a dX of 18 MiB.
    const std::vector<Visit> case72 = {{600, 0, 600, 1}, {613, 355, 178, -2}, {85, 28, 1, -4}};
    EXPECT_EQ(program_of(visit_plan(DType::f32, case72)).kernel, "slice_grad_spans_regions_b32");
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    EXPECT_EQ(program_of(visit_plan(DType::f32, case72), d3d12).kernel, "slice_grad_spans_b32");
    EXPECT_FALSE(spans_or_regions(program_of(visit_plan(DType::f16, case72)).kernel));
    EXPECT_FALSE(spans_or_regions(
        program_of(visit_plan(DType::f32, {{600, 0, 600, 1}, {613, 355, 178, -2}, {63, 28, 1, -4}})).kernel));
    EXPECT_FALSE(spans_or_regions(
        program_of(visit_plan(DType::f32, {{86, 0, 86, 1}, {613, 355, 178, -2}, {85, 28, 1, -4}})).kernel));
    // On the GPU: fp64 every other row of 107 (1712 bytes apart), 50 MiB; int32 every other row of 643 backwards
    // (5144 bytes apart), 70 MiB.
    SeededRng rng;
    for (const auto& [t, axes] : std::vector<std::pair<DType, std::vector<Visit>>>{
             {DType::f64, {{100, 0, 100, 1}, {613, 355, 178, -2}, {107, 28, 1, -4}}},
             {DType::i32, {{41, 40, 41, -1}, {701, 3, 349, 2}, {643, 600, 1, 1}}}}) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_TRUE(program_of(plan).kernel.starts_with("slice_grad_spans_regions_")) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST(SliceGradSpans, RegionRowsWhereNeighbouringSpansLieClose) {
    // The region step with a thread a span where neighbouring reached rows' spans lie at most 96 bytes apart, on
    // elements of at most 32 bits: int8 rows of 29, every third (87 bytes), as 20261216/59's; every fourth (116
    // bytes) and f32 rows of 139 (556 bytes, as 20261216/117's) keep a thread a uint4, and so do int64 rows of 7
    // back to back (56 bytes, as 20261227/75's), not int32 ones (28 bytes).
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{2500, 2499, 2000, -1}, {23, 21, 5, -3}, {29, 3, 3, 4}})).kernel,
              "slice_grad_spans_regions_rows_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{2500, 2499, 2000, -1}, {23, 21, 6, -4}, {29, 3, 3, 4}})).kernel,
              "slice_grad_spans_regions_b8");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{65536, 0, 65536, 1}, {139, 86, 4, 3}})).kernel,
              "slice_grad_spans_regions_b32");
    const std::vector<Visit> back_to_back = {{4000, 1915, 695, 3}, {28, 10, 3, -3}, {7, 0, 7, 1}, {7, 0, 3, 3}};
    EXPECT_EQ(program_of(visit_plan(DType::i64, back_to_back)).kernel, "slice_grad_spans_regions_b64");
    EXPECT_EQ(program_of(visit_plan(DType::i32, back_to_back)).kernel, "slice_grad_spans_regions_rows_b32");
}

TEST(SliceGradSpans, RegionsWhereSpansAreShortAndFewAThread) {
    // The region step (Vulkan) where spans are at most 3 uint4s and the busiest region's threads write at most 5 of
    // them each: int8 spans of 9 bytes every third row of 29 (as 20261216/59's), 2 uint4s a span; int16 rows of 38
    // bytes back to back on the axis outside them, but 3 of its 5 every third time on the next (as 20261216/136's):
    // a region meets a fifth of its rows reached, 2 uint4s a thread. Both with a thread a span (spans 87 and 38 bytes
    // apart: RegionRowsWhereNeighbouringSpansLieClose below).
    const SliceGradPlan sparse = visit_plan(DType::u8, {{2500, 2499, 2000, -1}, {23, 21, 5, -3}, {29, 3, 3, 4}});
    EXPECT_EQ(program_of(sparse).kernel, "slice_grad_spans_regions_rows_b8");
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    EXPECT_EQ(program_of(sparse, d3d12).kernel, "slice_grad_spans_b8");
    EXPECT_EQ(
        program_of(visit_plan(DType::i16, {{3, 0, 3, 1}, {3000, 0, 1000, 3}, {5, 2, 3, 1}, {19, 6, 5, 3}})).kernel,
        "slice_grad_spans_regions_rows_b16");
    // Spans of 4 uint4s over full regions (dX of 32 MiB and more: f32 [:, 86:98:3] of rows of 139, as
    // 20261216/117's), but not over smaller ones, nor where the rows are copied whole (f64 rows of 7, every fourth,
    // as 20261216/119's).
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{65536, 0, 65536, 1}, {139, 86, 4, 3}})).kernel,
              "slice_grad_spans_regions_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{4096, 0, 4096, 1}, {139, 86, 4, 3}})).kernel, "slice_grad_spans_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f64, {{800000, 1, 100000, 4}, {7, 0, 7, 1}})).kernel,
              "slice_grad_spans_b64");
    // Rows of 21 back to back (as 20261224/21's, in 80 planes), 3 uint4s a span: 18 a thread; spans of 6 and 11
    // uint4s.
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{720, 719, 80, -9}, {3277, 0, 3277, 1}, {21, 20, 6, -4}})).kernel,
              "slice_grad_spans_b8");
    EXPECT_EQ(program_of(visit_plan(DType::f64, {{4096, 0, 4096, 1}, {139, 86, 4, 3}})).kernel, "slice_grad_spans_b64");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{4000, 0, 1000, 4}, {139, 10, 20, 2}})).kernel,
              "slice_grad_spans_b32");
}

}  // namespace
}  // namespace dmlgrad::testing
