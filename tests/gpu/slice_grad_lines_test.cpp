// Slice grad's lines walk (kernels/slice_grad_lines.hlsli: innermost rows shorter than 64 bytes folded with the axes
// outside them into lines that share their columns' windows): bit for bit against the CPU, with the output poisoned
// first, on random slices of every element size (short rows, steps -4..4, offsets, ranks 2-8), on issue 23's slow
// geometries of the seed-20261208 and 20261216 sweeps at small sizes, on rows folded with the periods of a long axis,
// with several uint4s per thread, split into dispatches and windows; its columns, their windows and the periods' split
// against the plan's mapping; and the dispatch's choice of it from the geometry.
#include <gtest/gtest.h>

#include "gpu/ops/slice_geometry.h"
#include "gpu_testing.h"
#include "interface/slice_grad_walk.h"
#include "random_slices.h"

namespace dmlgrad::testing {
namespace {

namespace walk = kernels::slice_grad_walk;

std::string lines_kernel(DType type) { return slice_kernel("slice_grad_walk_lines", type); }

// Any lines variant: the gap table's where many uint4s hold no reached column (over dX of 4 MiB and more), the
// words' for 8-bit lines whose reached dY bytes lie close (slice_grad_line_words_test.cpp).
bool is_lines_walk(const std::string& kernel, DType type) {
    return kernel == lines_kernel(type) || kernel == slice_kernel("slice_grad_walk_lines_gaps", type) ||
           kernel == slice_kernel("slice_grad_walk_lines_words", type);
}

// Random slices of short rows: the innermost axis 1 to `row_max` long, outer axes of 1 to `outer_max`, steps -4..4
// (|step| beyond the size now and then), every offset, dY sometimes shorter than the window allows.
SliceDraw short_rows(int64_t row_max, int64_t outer_max) { return {1, row_max, outer_max}; }

class SliceGradLines : public ::testing::TestWithParam<DType> {};

TEST_P(SliceGradLines, MatchesCpuOnRandomSlicesOfShortRows) {
    const DType t = GetParam();
    const int64_t row_max = 256 / int64_t(dtype_size(t));
    SeededRng rng;
    // Draws until `want` take the lines walk (rows that merge into long ones or whole uint4s, and sparse slices,
    // take other kernels: 8-byte rows of at most 8 elements take it in about one draw in 60, so the rounds leave room
    // for the rare seed that draws few).
    const int want = t == DType::f64 ? 8 : 16;
    int taken = 0;
    for (int round = 0; round < 512 && taken < want; ++round)
        for (size_t rank = 2; rank <= 8; ++rank) {
            const SliceGradPlan plan = random_slice(t, rank,
                                                    short_rows(row_max, rank <= 3   ? 40
                                                                        : rank <= 5 ? 9
                                                                                    : 4),
                                                    rng);
            if (!is_lines_walk(program_of(plan).kernel, t)) continue;
            ++taken;
            expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
        }
    EXPECT_GE(taken, want);
}

// issue 23's slow slice cases (H100; seed / case), each geometry at a small size.
const std::vector<std::pair<DType, std::vector<Visit>>> kIssueGeometries = {
    // 20261208/25: [-8::-3, ::2, ::-4, :] of uint8 17x620211x9x3, rows of 3 bytes
    {DType::u8, {{17, 9, 4, -3}, {61, 0, 31, 2}, {9, 8, 3, -4}, {3, 0, 3, 1}}},
    // 20261208/38: [:9666392:4, :, 3:1:-1] of int8 15599762x4x5, 2 of 5 bytes a row, reversed
    {DType::u8, {{157, 0, 24, 4}, {4, 0, 4, 1}, {5, 3, 2, -1}}},
    // 20261208/20: [-3::4, ::-1, 6:-15:2, 4:-5:-1] of int16 4x269569x47x7
    {DType::i16, {{4, 1, 1, 4}, {29, 28, 29, -1}, {47, 6, 13, 2}, {7, 4, 2, -1}}},
    // 20261216/136: [:, ::3, 2:, -13::3] of int16 3x1739821x5x19
    {DType::i16, {{3, 0, 3, 1}, {31, 0, 11, 3}, {5, 2, 3, 1}, {19, 6, 5, 3}}},
    // 20261215/8: [:, :611:-1, 318:61:-3, -2:-12:-3] of uint32 7x4096x421x13
    {DType::u32, {{7, 0, 7, 1}, {40, 39, 30, -1}, {421, 318, 86, -3}, {13, 11, 4, -3}}},
    // 20261208/38 with a step of 3 on an outer axis longer than the walk's tables (TABLE_MAX_ENTRIES): a table
    {DType::u8, {{9001, 2, 2900, 3}, {4, 0, 4, 1}, {5, 3, 2, -1}}},
    // rows of 1 and 2 elements folded into lines of exactly a uint4 and of an odd length; int64 rows of 3
    {DType::u8, {{9, 1, 4, 2}, {7, 6, 3, -3}, {2, 1, 1, 1}}},
    {DType::f16, {{11, 10, 4, -3}, {3, 0, 2, 2}, {3, 2, 2, -2}}},
    {DType::f64, {{13, 0, 5, 3}, {5, 4, 2, -4}, {3, 2, 2, -1}}},
};

TEST(SliceGradLines, MatchesCpuOnTheGeometriesOfTheIssue) {
    // At these sizes the sparser ones keep the spans (int8, lines under 512 bytes, or a cheap rewrite); the others
    // take the lines walk.
    SeededRng rng;
    int taken = 0;
    for (const auto& [t, axes] : kIssueGeometries) {
        const SliceGradPlan plan = visit_plan(t, axes);
        const std::string kernel = program_of(plan).kernel;
        ASSERT_TRUE(is_lines_walk(kernel, t) || kernel.rfind("slice_grad_spans_", 0) == 0) << describe(plan);
        taken += is_lines_walk(kernel, t);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
    EXPECT_GE(taken, 5);
}

TEST(SliceGradLines, MatchesCpuWithSeveralUint4sPerThread) {
    // dX of 8 MiB and more: threads step their line coordinates a workgroup apart, through lines shorter than a
    // workgroup's elements, a table level and an axis too long for a table.
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> cases = {
        {DType::u8, {{23, 0, 23, 1}, {9001, 9000, 4501, -2}, {9, 8, 3, -4}, {5, 3, 2, -1}}},
        {DType::f32, {{701, 700, 234, -3}, {449, 3, 219, 2}, {7, 1, 3, 2}}},
    };
    for (const auto& [t, axes] : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        const GpuProgram program = program_of(plan);
        ASSERT_TRUE(is_lines_walk(program.kernel, t)) << describe(plan);
        ASSERT_GE(pushed_params<walk::WalkParams>(program.steps.at(0)).per_thread, 2u) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST_P(SliceGradLines, MatchesCpuWhereALongAxisSplitsIntoPeriods) {
    // Rows that fold only with the phases of the long axis outside them (more coordinates than the column table's
    // TABLE_MAX_ENTRIES): the outermost axis of a length its step does not divide (the last period runs past dX),
    // either way, from each phase; an inner axis that its step divides; rows of 1 to 3 uint4s' worth.
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    const int64_t n = 9001 + int64_t(rng() % 3);  // 9001..9003: every remainder modulo 2 and 3
    const int64_t m = per_uint4 > 2 ? 4 : 2, last = n - 1 - int64_t(rng() % uint64_t(m)), first = int64_t(rng() % 3);
    // (every coordinate the step reaches, so that the spans would rewrite more than 3/2 of the fill)
    const std::vector<std::vector<Visit>> cases = {
        {{n, last, last / m + 1, -m}, {5, 0, 5, 1}},
        {{n, first, (n - 1 - first) / 3 + 1, 3}, {per_uint4 + 1, 0, per_uint4, 1}},
        {{3, 2, 2, -2}, {9000, 8999, 4500, -2}, {per_uint4 + 1, per_uint4, 2, -2}},
    };
    for (const std::vector<Visit>& axes : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_TRUE(is_lines_walk(program_of(plan).kernel, t)) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST(SliceGradLines, MatchesCpuWhereAWholeAxisSplitsIntoBlocks) {
    // Rows of 8- and 16-bit elements shorter than a uint4, every axis outside them copied whole: those merge into one
    // axis (src/ops/slice_grad.cpp) too long for the column table, which splits into blocks of the fewest rows that
    // make a line of 256 bytes: on the outermost axis whatever its length (24 rows of 11 bytes in 300 x 31 = 9300,
    // the last block running past dX; 19 rows of 14 bytes in 9100), inside another axis where a multiple of that
    // many divides it (25 of 1300; 1301, a prime, keeps the plain walk). int8 rows of 32 bytes and more keep it too (33
    // here).
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> blocks = {
        {DType::u8, {{300, 0, 300, 1}, {31, 0, 31, 1}, {11, 0, 2, 3}}},
        {DType::u8, {{3, 0, 2, 2}, {1300, 0, 1300, 1}, {11, 1, 3, 4}}},
        {DType::i16, {{700, 0, 700, 1}, {13, 0, 13, 1}, {7, 1, 3, 2}}},
    };
    for (const auto& [t, axes] : blocks) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_TRUE(is_lines_walk(program_of(plan).kernel, t)) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
    for (const std::vector<Visit>& axes : {std::vector<Visit>{{3, 0, 2, 2}, {1301, 0, 1301, 1}, {11, 1, 3, 4}},
                                           std::vector<Visit>{{300, 0, 300, 1}, {31, 0, 31, 1}, {33, 24, 2, -1}}}) {
        const SliceGradPlan walked = visit_plan(DType::u8, axes);
        EXPECT_EQ(program_of(walked).kernel, "slice_grad_walk_b8") << describe(walked);
        expect_gpu_matches_cpu(walked, random_tensor(DType::u8, walked.dy_shape, rng), gpu());
    }
    // The split itself: blocks and the coordinate within one, both copied whole; an axis not copied whole refused.
    const std::vector<SliceAxis> split = slice_gpu::split_into_blocks({{9300, 9300, 0, 1}, {11, 2, 0, 3}}, 0, 24);
    ASSERT_EQ(split.size(), 3u);
    EXPECT_TRUE(copied_whole(split[0]) && copied_whole(split[1]));
    EXPECT_EQ(split[0].dx, 388);
    EXPECT_EQ(split[1].dx, 24);
    EXPECT_EQ(split[2].stride, 3);
    EXPECT_THROW(slice_gpu::split_into_blocks({{9300, 4650, 0, 2}, {11, 2, 0, 3}}, 0, 24), std::logic_error);
}

TEST(SliceGradLines, PeriodsAndPhasesMapEveryCoordinateAsTheAxis) {
    // split_by_step: coordinate c of the split axis is period * m + phase; the slice reaches it exactly where it
    // reaches that period and phase, from the same dY coordinate (the phase axis reaches one coordinate).
    SeededRng rng;
    for (int trial = 0; trial < 200; ++trial) {
        const std::vector<SliceAxis> axes = random_slice(DType::u8, 2 + rng() % 3, short_rows(6, 40), rng).gather_axes;
        const size_t a = rng() % axes.size();
        const SliceAxis axis = axes[a];
        const int64_t m = axis.stride < 0 ? -axis.stride : axis.stride;
        if (m < 2) continue;
        const std::vector<SliceAxis> split = slice_gpu::split_by_step(axes, a);
        ASSERT_EQ(split.size(), axes.size() + 1);
        const SliceAxis& periods = split[a];
        const SliceAxis& phases = split[a + 1];
        ASSERT_EQ(phases.dx, m);
        ASSERT_EQ(phases.dy, 1);
        ASSERT_GE(periods.dx * m, axis.dx);
        ASSERT_LT((periods.dx - 1) * m, axis.dx);
        // The dY coordinate a coordinate takes on an axis, or -1.
        const auto dy_of = [](const SliceAxis& s, int64_t c) {
            const int64_t d = c - s.start;
            return d % s.stride == 0 && d / s.stride >= 0 && d / s.stride < s.dy ? d / s.stride : int64_t(-1);
        };
        for (int64_t c = 0; c < axis.dx; ++c) {
            const int64_t on_phase = dy_of(phases, c % m);
            ASSERT_EQ(dy_of(axis, c), on_phase < 0 ? -1 : dy_of(periods, c / m)) << "trial " << trial << " c " << c;
        }
        for (size_t b = 0; b < axes.size(); ++b) {
            if (b == a) continue;
            ASSERT_EQ(split[b < a ? b : b + 1].dx, axes[b].dx);
        }
    }
}

TEST_P(SliceGradLines, MatchesCpuSplitIntoDispatchesAndWindows) {
    // kFewGroups: 3 workgroups a dispatch (each pushes its thread base); kTinyLimits: dX in windows of 4 KiB.
    const DType t = GetParam();
    SeededRng rng;
    const SliceGradPlan plan = visit_plan(t, {{3, 0, 3, 1}, {401, 400, 201, -2}, {7, 1, 2, 3}});
    ASSERT_TRUE(is_lines_walk(program_of(plan, kFewGroups).kernel, t));
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    const SliceGradPlan windows = visit_plan(t, {{2, 1, 1, 1}, {300, 44, 10, -4}, {7, 3, 2, 2}, {5, 4, 2, -2}});
    const GpuProgram tiny = program_of(windows, kTinyLimits);
    ASSERT_TRUE(is_lines_walk(tiny.kernel, t));
    ASSERT_GT(tiny.steps.size(), 1u);
    expect_gpu_matches_cpu(windows, random_tensor(t, windows.dy_shape, rng), gpu_with_limits(kTinyLimits));
}

TEST_P(SliceGradLines, MatchesCpuWhereMostUint4sHoldNoReachedColumn) {
    // 20261224/73's [:, :, 19:6:-4, :4:3] (lines of 161 columns, 8 reached) over dX of 4 MiB: most uint4s hold no
    // reached column, so the lines walk reads the gap table first; rows 0, 7, 14 and 21 reached instead: the uint4s
    // past the last reached column of a line find the next line's column 0 (the gaps count on into the next line).
    const DType t = GetParam();
    const int64_t lines =
        (int64_t(walk::MIN_THREADS) * 16 + 161 * int64_t(dtype_size(t)) - 1) / (161 * int64_t(dtype_size(t)));
    SeededRng rng;
    for (const std::vector<Visit>& axes :
         std::vector<std::vector<Visit>>{{{lines, 0, lines, 1}, {23, 19, 4, -4}, {7, 0, 2, 3}},
                                         {{lines, 0, lines, 1}, {23, 0, 4, 7}, {7, 0, 2, 3}}}) {
        const SliceGradPlan plan = visit_plan(t, axes);
        const GpuProgram program = program_of(plan);
        ASSERT_EQ(program.kernel, slice_kernel("slice_grad_walk_lines_gaps", t)) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST(SliceGradLines, MatchesCpuOnLongRowsOfTheirOwn) {
    // 32/64-bit rows of 256 bytes and more at a step beyond 1, each a line (small forms of 20261201/17's f64
    // [0::2, :, ::-3] of rows of 59, 20261224/19's i32 [:, :, 109::3] of rows of 219, 20261206/75's i64
    // [::-2, :207:-2] of rows of 751, the last with several uint4s a thread).
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> cases = {
        {DType::f64, {{9, 0, 5, 2}, {121, 0, 121, 1}, {59, 57, 20, -3}}},
        {DType::i32, {{43, 0, 43, 1}, {9, 0, 9, 1}, {219, 109, 37, 3}}},
        {DType::i64, {{1601, 1600, 801, -2}, {751, 750, 272, -2}}},
    };
    for (const auto& [t, axes] : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_TRUE(is_lines_walk(program_of(plan).kernel, t)) << describe(plan);
        ASSERT_EQ(plan.gather_axes.back().dx, axes.back().n) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST(SliceGradLines, MatchesCpuOnRowsOfOneUint4) {
    // Rows of one uint4 that fold into lines, which the rows kernel would place one by one: 20261236/18's int64
    // [:97:-1, :, 216:-181:-1, :] of pairs (rows copied whole, at step -1), f32 rows of 4 at every other element, i16
    // rows of 8 at every third. Rows of two uint4s keep the rows kernel (20261203/134's int16 rows of 16).
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> cases = {
        {DType::i64, {{65, 64, 55, -1}, {46, 0, 46, 1}, {298, 216, 99, -1}, {2, 0, 2, 1}}},
        {DType::f32, {{9, 1, 4, 2}, {7, 6, 7, -1}, {4, 3, 2, -2}}},
        {DType::i16, {{600, 0, 200, 3}, {5, 1, 3, 1}, {8, 2, 2, 3}}},
    };
    for (const auto& [t, axes] : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_EQ(program_of(plan).kernel.rfind("slice_grad_walk_lines_", 0), 0u) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{24093, 24092, 8031, -3}, {41, 0, 41, 1}, {16, 0, 8, 2}})).kernel,
              "slice_grad_rows_b16");
}

TEST(SliceGradLines, ColumnWindowsFitOneBinding) {
    // int8 lines of 99 columns would take 7 KiB of column windows (64 bytes a column): under 4 KiB bindings the
    // rows fold no further than the windows fit, and the program runs.
    SeededRng rng;
    const SliceGradPlan plan = visit_plan(DType::u8, {{60, 0, 30, 2}, {11, 0, 11, 1}, {9, 0, 5, 2}});
    ASSERT_TRUE(is_lines_walk(program_of(plan).kernel, DType::u8));
    expect_gpu_matches_cpu(plan, random_tensor(DType::u8, plan.dy_shape, rng), gpu_with_limits(kTinyLimits));
}

INSTANTIATE_TEST_SUITE_P(AllSizes, SliceGradLines, ::testing::Values(DType::u8, DType::f16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(SliceGradLines, ColumnsMapEveryElementAsThePlanDoes) {
    // Random plans folded into lines: each column's entry, from the line's first dY element, is the dY element the
    // plan maps that dX element to (the lines walk adds it to the line's dY base), or none; the phased copy (the gap
    // table's layout) keeps each column at (c % phases) * length + c / phases; and the column windows give column c's
    // k-th neighbour (on into the next line) in uint4 k / 4, word k % 4, at (k / 4 * phases + c % phases) * length +
    // c / phases, the words past the window the filler.
    SeededRng rng;
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    for (int trial = 0; trial < 200; ++trial) {
        const std::vector<SliceAxis> axes = random_slice(DType::u8, 2 + rng() % 4, short_rows(6, 6), rng).gather_axes;
        const size_t folded = slice_gpu::line_axes(axes, 1 + rng() % 40, 200);
        ASSERT_GE(folded, 1u);
        const slice_gpu::Lines lines = slice_gpu::lines(axes, folded, kNone);
        ASSERT_EQ(lines.axes.size(), axes.size() - folded + 1);
        ASSERT_EQ(size_t(lines.axes.back().dx), lines.columns.size());
        for (size_t c = 0; c < lines.columns.size(); ++c) {
            // Column c's coordinates on the folded axes, innermost last, and the dY element they map to.
            uint64_t rest = c, dy = 0, dy_stride = 1;
            bool reached = true;
            for (size_t a = axes.size(); a-- > axes.size() - folded;) {
                const int64_t p = int64_t(rest % uint64_t(axes[a].dx)), d = p - axes[a].start;
                rest /= uint64_t(axes[a].dx);
                reached =
                    reached && d % axes[a].stride == 0 && d / axes[a].stride >= 0 && d / axes[a].stride < axes[a].dy;
                if (reached) dy += uint64_t(d / axes[a].stride) * dy_stride;
                dy_stride *= uint64_t(axes[a].dy);
            }
            ASSERT_EQ(lines.columns[c], reached ? uint32_t(dy) : kNone) << "trial " << trial << " column " << c;
        }
        const uint64_t phases = 1u << (rng() % 5);
        const std::vector<uint32_t> phased = slice_gpu::phased(lines.columns, phases, kNone);
        const size_t length = phased.size() / phases;
        ASSERT_EQ(phased.size() % phases, 0u);
        ASSERT_EQ(length, (lines.columns.size() + phases - 1) / phases);
        for (size_t c = 0; c < lines.columns.size(); ++c)
            ASSERT_EQ(phased[(c % phases) * length + c / phases], lines.columns[c]);
        const std::vector<uint32_t> windows = slice_gpu::column_windows(lines.columns, phases, kNone - 1);
        const uint64_t groups = (phases + 3) / 4;
        ASSERT_EQ(windows.size(), 4 * groups * phases * length);
        for (size_t c = 0; c < lines.columns.size(); ++c)
            for (uint64_t k = 0; k < 4 * groups; ++k) {
                const uint32_t word = windows[4 * ((k / 4 * phases + c % phases) * length + c / phases) + k % 4];
                ASSERT_EQ(word, k < phases ? lines.columns[(c + k) % lines.columns.size()] : kNone - 1)
                    << "trial " << trial << " column " << c << " k " << k;
            }
    }
}

TEST(SliceGradLines, GapsCountToTheNextReachedColumn) {
    // Per column, the columns on to the next reached one, the lines seen as one repeating sequence, at most the
    // window: against a count column by column.
    SeededRng rng;
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    for (int trial = 0; trial < 200; ++trial) {
        const uint32_t window = 1u << (rng() % 5);
        std::vector<uint32_t> columns(window + rng() % 40);
        const uint64_t sparsity = 1 + rng() % 20;
        for (uint32_t& c : columns) c = rng() % sparsity == 0 ? uint32_t(rng() % 100) : kNone;
        const std::vector<uint32_t> gaps = slice_gpu::column_gaps(columns, kNone, window);
        ASSERT_EQ(gaps.size(), columns.size());
        for (size_t c = 0; c < columns.size(); ++c) {
            uint32_t gap = 0;
            while (gap < window && columns[(c + gap) % columns.size()] == kNone) ++gap;
            ASSERT_EQ(gaps[c], gap) << "trial " << trial << " column " << c;
        }
    }
}

TEST(SliceGradLines, ChosenByTheGeometry) {
    // Rows shorter than 64 bytes that fold with their outer neighbours into lines of at least a uint4, dY bound
    // whole: the lines walk, on either API (its words variant for bytes3 on Vulkan), whatever share of dX the slice
    // covers.
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    const SliceGradPlan bytes3 = visit_plan(DType::u8, {{17, 9, 4, -3}, {61, 0, 31, 2}, {9, 8, 3, -4}, {3, 0, 3, 1}});
    EXPECT_EQ(program_of(bytes3).kernel, "slice_grad_walk_lines_words_b8");
    EXPECT_EQ(program_of(bytes3, d3d12).kernel, "slice_grad_walk_lines_b8");
    EXPECT_EQ(
        program_of(visit_plan(DType::i16, {{4, 1, 1, 4}, {29, 28, 29, -1}, {47, 6, 13, 2}, {7, 4, 2, -1}})).kernel,
        "slice_grad_walk_lines_b16");
    // The gap table's variant where at least 2/5 of the uint4s hold no reached column and dX has MIN_THREADS uint4s:
    // not for bytes3 above (360 of 1647) nor for none empty, for 20261224/73's lines of 161 halves with 8 reached (117
    // of 161) over 4 MiB, not over 9660 bytes.
    const SliceGradPlan dense = visit_plan(DType::f16, {{26200, 0, 13100, 2}, {23, 0, 23, 1}, {7, 0, 4, 2}});
    EXPECT_EQ(program_of(dense).kernel, "slice_grad_walk_lines_b16");
    const SliceGradPlan sparse = visit_plan(DType::f16, {{13100, 0, 13100, 1}, {23, 19, 4, -4}, {7, 0, 2, 3}});
    EXPECT_EQ(program_of(sparse).kernel, "slice_grad_walk_lines_gaps_b16");
    EXPECT_EQ(program_of(sparse, d3d12).kernel, "slice_grad_walk_lines_gaps_b16");
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{30, 0, 30, 1}, {23, 19, 4, -4}, {7, 0, 2, 3}})).kernel,
              "slice_grad_walk_lines_b16");
    // In the plain walk's place rows of 64 to 255 bytes fold into lines of 256 bytes and more (17 x 4 bytes); rows of
    // 256 bytes and more keep the walk (65 x 4 at step -1), unless the walk would gather them element by element (32-
    // and 64-bit elements at a step beyond 1: lines of their own, 65 x 4 at step 2; not 16-bit ones, 130 x 2 at step
    // 3); rows of whole uint4s take the rows kernel, but for 16-bit and wider rows of one uint4 that fold into
    // lines (f32 rows of 4 with the 7 outside them; not rows of 8 or 16, nor rows of 4 with nothing to fold: the axis
    // outside too long, nor int8 rows of 48). (Rows whose step takes every period of them to their end merge with a
    // stride-1 axis outside them into one axis, src/ops/slice_grad.cpp: the steps 3 and the 15 of 16 here keep them
    // apart.)
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {17, 0, 9, 2}})).kernel, "slice_grad_walk_lines_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {65, 63, 60, -1}})).kernel, "slice_grad_walk_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {65, 0, 33, 2}})).kernel, "slice_grad_walk_lines_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{8, 0, 4, 2}, {130, 0, 44, 3}})).kernel, "slice_grad_walk_b16");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {7, 0, 7, 1}, {4, 0, 2, 3}})).kernel,
              "slice_grad_walk_lines_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {7, 0, 7, 1}, {8, 0, 4, 2}})).kernel,
              "slice_grad_rows_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {7, 0, 7, 1}, {16, 0, 8, 2}})).kernel,
              "slice_grad_rows_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{9000, 1, 4000, 2}, {4, 0, 2, 2}})).kernel, "slice_grad_rows_b32");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{600, 0, 200, 3}, {5, 1, 3, 1}, {48, 2, 15, 3}})).kernel,
              "slice_grad_rows_b8");
    // No axis to fold into a line within the column windows' TABLE_MAX_ENTRIES: rows of 16-bit elements and wider, a
    // uint4 to 255 bytes long, are lines of their own (20261224/81's uint16 rows of 10); int8 rows and rows shorter
    // than a uint4 keep the plain walk.
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{9000, 8000, 4500, -1}, {10, 5, 2, -1}})).kernel,
              "slice_grad_walk_lines_b16");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{9000, 8000, 4500, -1}, {20, 5, 2, -1}})).kernel, "slice_grad_walk_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{9000, 8000, 4500, -1}, {3, 2, 2, -1}})).kernel, "slice_grad_walk_b8");
    // Unless that axis steps by m > 1 and is the outermost or a multiple of m long: its periods of m rows fold
    // (20261210/36's f16 rows of 5 at every 4th of 99509475); an inner axis that m does not divide keeps the walk.
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{2001, 2000, 400, -4}, {5, 0, 5, 1}})).kernel,
              "slice_grad_walk_lines_b16");
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{3, 0, 3, 1}, {2000, 3, 400, 4}, {5, 0, 5, 1}})).kernel,
              "slice_grad_walk_lines_b16");
    EXPECT_EQ(program_of(visit_plan(DType::f16, {{3, 0, 3, 1}, {2001, 2000, 400, -4}, {5, 0, 5, 1}})).kernel,
              "slice_grad_walk_b16");
    // dY beyond a binding: the element kernel's chunks.
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{4099, 0, 2050, 2}, {5, 1, 3, 1}}), kTinyLimits).kernel,
              "slice_grad_b8");
}

}  // namespace
}  // namespace dmlgrad::testing
