// Slice grad's walk kernel (kernels/slice_grad_walk.hlsl, rows of any length while dY fits a binding): bit for bit
// against the CPU on random slices of every element size (steps -4..4 on every axis, rows shorter and longer than a
// uint4, offsets, ranks 1-8), on each geometry class of issue 23's slow cases at small sizes, with several uint4s per
// thread (the stepped coordinates), split into dispatches, and walking only the stretches of dX a few reached outer
// coordinates make (zeros elsewhere); its level tables and those stretches against the plan's mapping; and the
// dispatch's choice of it from the geometry.
#include <gtest/gtest.h>

#include <optional>

#include "gpu/kernel_registry.h"
#include "gpu/ops/slice_geometry.h"
#include "gpu_testing.h"
#include "interface/slice_grad_walk.h"
#include "ops/slice_grad.h"
#include "random_slices.h"

namespace dmlgrad::testing {
namespace {

namespace walk = kernels::slice_grad_walk;

std::string walk_kernel(DType type) { return slice_kernel("slice_grad_walk", type); }

// Random slices: outer axes of 1 to `outer_max` elements, the innermost `row_min` to `row_min` + 40 long (after the
// plan merges axes it may be longer), steps -4..4 (|step| beyond the size now and then), every offset, dY sometimes
// shorter than the window allows.
SliceDraw walk_rows(int64_t row_min, int64_t outer_max) { return {row_min, row_min + 40, outer_max}; }

class SliceGradWalk : public ::testing::TestWithParam<DType> {};

TEST_P(SliceGradWalk, MatchesCpuOnRandomSlicesOfRanks1To8) {
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    for (size_t rank = 1; rank <= 8; ++rank)
        for (int64_t row : {int64_t(1), per_uint4 / 2 + 1, 2 * per_uint4 + 3, 17 * per_uint4 + 5}) {
            const SliceGradPlan plan = random_slice(t, rank, walk_rows(row, rank <= 3 ? 9 : rank <= 5 ? 5 : 3), rng);
            if (program_of(plan).kernel != walk_kernel(t)) continue;  // rows of whole uint4s: the rows kernel
            expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
        }
}

// issue 23's slow cases (H100 sweep, seed 20261128, and the int16 [:, :, ::3, 1::3]), each geometry at a small size.
const std::vector<std::vector<Visit>> kIssueGeometries = {
    // [26::-4, :, :, :1:-1]: rows reversed, two whole axes, few outer coordinates reached
    {{13, 12, 4, -4}, {17, 0, 17, 1}, {7, 0, 7, 1}, {23, 22, 21, -1}},
    // [::-3, :, -54::3, -168:112, -14::3] of rows of 15
    {{7, 6, 3, -3}, {11, 0, 11, 1}, {20, 3, 6, 3}, {18, 2, 10, 1}, {15, 1, 5, 3}},
    // [::-1, :5:-4, :, :-3:2, 68:-155:-3, :]: rows copied whole, not whole uint4s
    {{10, 9, 10, -1}, {11, 10, 3, -4}, {1, 0, 1, 1}, {7, 0, 3, 2}, {16, 12, 4, -3}, {43, 0, 43, 1}},
    // [:, 18:-6:-4, :, 0:-3, :7:4, 1::2, :, 1::4]: rank 8, rows of 13, several rows a uint4
    {{3, 0, 3, 1}, {7, 6, 2, -4}, {1, 0, 1, 1}, {7, 0, 4, 1}, {5, 0, 2, 4}, {13, 1, 6, 2}, {5, 0, 5, 1}, {13, 1, 3, 4}},
    // [27729770:21707819:-1, ::-4, :]: rows of 3 with one element reached, a long reversed outer axis
    {{9100, 8900, 8000, -1}, {3, 2, 1, -4}, {1, 0, 1, 1}},
    // [:, -26::-3, :0:-4, 13::-2, -601::-3]
    {{2, 0, 2, 1}, {31, 29, 10, -3}, {5, 4, 2, -4}, {14, 13, 7, -2}, {79, 19, 7, -3}},
    // [693:2063:2, 11::3, :2, :]: rows of 37 copied whole
    {{49, 9, 20, 2}, {32, 11, 7, 3}, {7, 0, 2, 1}, {37, 0, 37, 1}},
    // [:, :, ::3, 1::3] of rows of 255; [..., ::2] and [..., ::-2] of odd rows; reversed and plain crops
    {{3, 0, 3, 1}, {4, 0, 4, 1}, {25, 0, 9, 3}, {255, 1, 85, 3}},
    {{5, 0, 3, 2}, {7, 0, 7, 1}, {33, 0, 17, 2}},
    {{5, 0, 3, 2}, {7, 0, 7, 1}, {33, 32, 17, -2}},
    {{5, 0, 5, 1}, {7, 6, 4, -2}, {33, 31, 14, -2}},
    {{5, 0, 3, 2}, {7, 0, 7, 1}, {33, 30, 27, -1}},
    {{2, 0, 2, 1}, {6, 1, 3, 2}, {35, 3, 27, 1}},
};

TEST_P(SliceGradWalk, MatchesCpuOnTheGeometriesOfTheIssue) {
    const DType t = GetParam();
    SeededRng rng;
    for (const std::vector<Visit>& axes : kIssueGeometries) {
        const SliceGradPlan plan = visit_plan(t, axes);
        // The sparsest take the spans kernel, short rows one of the lines walks, runs that divide into wider
        // elements the walk at that width; rows of one element reached merge into one long axis (the element or rows
        // kernel's), and so do rows of whole periods with the axis outside them (the rows kernel's where those are
        // whole uint4s, the element kernel's where two axes are left, the inner one of long runs).
        const std::string kernel = program_of(plan).kernel;
        const bool merged = plan.gather_axes.size() < axes.size();
        ASSERT_TRUE(
            kernel.rfind("slice_grad_walk_", 0) == 0 || kernel.rfind("slice_grad_spans_", 0) == 0 ||
            plan.gather_axes.size() == 1 ||
            (merged && (kernel.rfind("slice_grad_rows_", 0) == 0 || kernel.rfind("slice_grad_rowends_", 0) == 0)))
            << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

// The uint4s per thread the plan's walk takes (its first dispatch's push constants).
uint32_t uint4s_per_thread(const SliceGradPlan& plan) {
    return pushed_params<walk::WalkParams>(program_of(plan).steps.at(0)).per_thread;
}

TEST(SliceGradWalk, MatchesCpuWithSeveralUint4sPerThread) {
    // dX of 8 MiB and more: threads step their coordinates from one uint4 to the next, a workgroup apart, through
    // rows shorter than a uint4, table levels and an axis too long for a table.
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> cases = {
        {DType::u8, {{23, 0, 23, 1}, {97, 96, 49, -2}, {101, 0, 101, 1}, {270, 1, 134, 2}}},
        {DType::u8, {{9001, 9000, 4501, -2}, {3, 2, 3, -1}, {311, 1, 104, 3}}},
        {DType::f32, {{7, 6, 7, -1}, {449, 3, 219, 2}, {1009, 1008, 1009, -1}}},
        {DType::f16, {{2, 0, 2, 1}, {3001, 7, 2990, 1}, {701, 700, 350, -2}}},
    };
    for (const auto& [t, axes] : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        ASSERT_EQ(program_of(plan).kernel, walk_kernel(t));
        ASSERT_GE(uint4s_per_thread(plan), 2u) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

TEST_P(SliceGradWalk, MatchesCpuSplitIntoDispatchesAndWindows) {
    // kFewGroups: 3 workgroups a dispatch (each pushes its thread base); kTinyLimits: dX in windows of 4 KiB.
    const DType t = GetParam();
    SeededRng rng;
    // (32- and 64-bit rows at a step beyond 1 are lines of their own: the lines walk, which shares the stepping.)
    const auto walks = [t](const std::string& kernel) {
        return kernel == walk_kernel(t) || (dtype_size(t) >= 4 && kernel == slice_kernel("slice_grad_walk_lines", t));
    };
    const SliceGradPlan plan = visit_plan(t, {{3, 0, 3, 1}, {41, 40, 21, -2}, {301, 1, 100, 3}});
    ASSERT_TRUE(walks(program_of(plan, kFewGroups).kernel));
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    const SliceGradPlan windows = visit_plan(t, {{2, 1, 1, 1}, {50, 44, 10, -4}, {301, 2, 40, 3}});
    const GpuProgram tiny = program_of(windows, kTinyLimits);
    ASSERT_TRUE(walks(tiny.kernel));
    ASSERT_GT(tiny.steps.size(), 1u);
    expect_gpu_matches_cpu(windows, random_tensor(t, windows.dy_shape, rng), gpu_with_limits(kTinyLimits));
}

// The uint4s of dX a walk program's dispatches cover, those that write zeros (WalkParams::zeros) and those that walk.
struct Covered {
    uint64_t zeros = 0, walked = 0;
};
Covered covered_uint4s(const GpuProgram& program) {
    const uint64_t group = find_kernel(program.kernel).workgroup_size;
    Covered covered;
    for (const DispatchStep& step : program.steps) {
        const auto p = pushed_params<walk::WalkParams>(step);
        const uint64_t first = uint64_t(p.base) * p.per_thread;
        const uint64_t end = std::min<uint64_t>(p.count, (uint64_t(p.base) + step.groups * group) * p.per_thread);
        (p.zeros != 0 ? covered.zeros : covered.walked) += end - first;
    }
    return covered;
}

TEST(SliceGradWalk, WalksOnlyTheStretchesTheSliceReaches) {
    // A few outer coordinates reached (2 planes of 19, rows of 3 at every other; 3 of 7, backwards at every other;
    // one item of 3, a middle axis at every other backwards; rows of 5 with 2 elements reached), dX of about 16 MB (a
    // stretch's dispatches cost what a few MB of zeros do): the walk's dispatches cover their stretches of dX, widened
    // to a thread's uint4s, and write zeros over the rest, each uint4 once. A slice reaching 18 planes of 19 walks all
    // of dX (zeros over the 19th would save less than a stretch's dispatches cost).
    SeededRng rng;
    for (const DType t : {DType::u8, DType::f16, DType::f32}) {
        const int64_t e = int64_t(dtype_size(t)), n = 15000 / e, planes = 460000 / e, rows = 270000 / e;
        const std::vector<std::vector<Visit>> few = {{{19, 3, 2, 1}, {19, 0, 19, 1}, {n, 0, n, 1}, {3, 0, 2, 2}},
                                                     {{7, 6, 3, -2}, {planes, 0, planes, 1}, {5, 1, 2, 2}},
                                                     {{3, 1, 1, 1}, {4, 3, 2, -2}, {rows, 0, rows, 1}, {5, 1, 2, 2}}};
        for (const std::vector<Visit>& axes : few) {
            const SliceGradPlan plan = visit_plan(t, axes);
            const GpuProgram program = program_of(plan);
            ASSERT_TRUE(program.kernel.starts_with("slice_grad_walk_")) << describe(plan) << program.kernel;
            const Covered covered = covered_uint4s(program);
            EXPECT_EQ(covered.zeros + covered.walked,
                      ceil_div<uint64_t>(element_count(plan.dx_shape) * dtype_size(t), 16));
            EXPECT_LT(covered.walked, covered.zeros) << describe(plan);
            expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
        }
        const GpuProgram most = program_of(visit_plan(t, {{19, 1, 18, 1}, {19, 0, 19, 1}, {n, 0, n, 1}, {3, 0, 2, 2}}));
        ASSERT_TRUE(most.kernel.starts_with("slice_grad_walk_")) << most.kernel;
        EXPECT_EQ(covered_uint4s(most).zeros, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(AllSizes, SliceGradWalk, ::testing::Values(DType::u8, DType::f16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The dY element of dX row `row` (innermost coordinate 0) as the plan maps it, or none (the slice misses the row).
std::optional<uint64_t> row_source(const std::vector<SliceAxis>& axes, uint64_t row) {
    uint64_t dy = 0, dy_stride = uint64_t(axes.back().dy);
    bool reached = true;
    for (size_t a = axes.size() - 1; a-- > 0;) {
        const int64_t c = int64_t(row % uint64_t(axes[a].dx)), d = c - axes[a].start;
        row /= uint64_t(axes[a].dx);
        reached = reached && d % axes[a].stride == 0 && d / axes[a].stride >= 0 && d / axes[a].stride < axes[a].dy;
        if (reached) dy += uint64_t(d / axes[a].stride) * dy_stride;
        dy_stride *= uint64_t(axes[a].dy);
    }
    return reached ? std::optional<uint64_t>(dy) : std::nullopt;
}

TEST(SliceGradWalk, LevelsMapEveryRowAsThePlanDoes) {
    // Random plans of up to 8 axes under small table limits (so that levels split and long axes go without a table):
    // the levels' coordinates of every row, looked up in their tables or tested by arithmetic, give the row's dY.
    SeededRng rng;
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    for (int trial = 0; trial < 200; ++trial) {
        const SliceGradPlan plan = random_slice(DType::u8, 1 + rng() % 8, walk_rows(1, 7), rng);
        const uint64_t table_max = 1 + rng() % 30;
        const slice_gpu::WalkLevels w = slice_gpu::walk_levels(plan.gather_axes, table_max, kNone);
        ASSERT_EQ(w.levels.back().dx, plan.gather_axes.back().dx);
        const uint64_t rows = element_count(plan.dx_shape) / uint64_t(plan.gather_axes.back().dx);
        for (uint64_t row = 0; row < rows; ++row) {
            uint64_t rest = row, dy = 0, dy_stride = uint64_t(w.levels.back().dy);
            bool reached = true;
            for (size_t a = w.levels.size() - 1; a-- > 0;) {
                const SliceAxis& level = w.levels[a];
                const uint64_t c = rest % uint64_t(level.dx);
                rest /= uint64_t(level.dx);
                if (w.table_at[a] != slice_gpu::kNoTable) {
                    ASSERT_LE(uint64_t(level.dx), table_max);
                    const uint32_t offset = w.tables.at(w.table_at[a] + c);
                    reached = reached && offset != kNone;
                    dy += offset;
                } else {
                    ASSERT_GT(uint64_t(level.dx), table_max);
                    const int64_t d = int64_t(c) - level.start;
                    reached = reached && d % level.stride == 0 && d / level.stride >= 0 && d / level.stride < level.dy;
                    dy += uint64_t(d / level.stride) * dy_stride;
                }
                dy_stride *= uint64_t(level.dy);
            }
            const std::optional<uint64_t> want = row_source(plan.gather_axes, row);
            ASSERT_EQ(reached, want.has_value()) << "trial " << trial << " row " << row;
            if (reached) {
                ASSERT_EQ(dy, *want) << "trial " << trial << " row " << row;
            }
        }
    }
}

TEST(SliceGradWalk, StretchesHoldEveryElementOfTheReachedOuterCoordinates) {
    // Random plans, every outer level count: an element lies in a stretch exactly where the slice reaches its
    // coordinates on those levels; the stretches ascend, apart; more tuples than allowed give none (the innermost
    // level's coordinates count once where it steps by +-1: one run).
    SeededRng rng;
    for (int trial = 0; trial < 200; ++trial) {
        const SliceGradPlan plan = random_slice(DType::u8, 2 + rng() % 6, walk_rows(1, 6), rng);
        const std::vector<SliceAxis>& axes = plan.gather_axes;
        for (size_t levels = 1; levels < axes.size(); ++levels) {
            uint64_t tuples = 1, inner = 1;
            for (size_t a = 0; a < axes.size(); ++a) {
                const bool one_run = a + 1 == levels && (axes[a].stride == 1 || axes[a].stride == -1);
                if (a < levels)
                    tuples *= one_run ? 1 : uint64_t(axes[a].dy);
                else
                    inner *= uint64_t(axes[a].dx);
            }
            ASSERT_TRUE(slice_gpu::reached_stretches(axes, levels, tuples - 1).empty());
            const std::vector<slice_gpu::Stretch> stretches = slice_gpu::reached_stretches(axes, levels, tuples);
            for (size_t i = 1; i < stretches.size(); ++i) ASSERT_LT(stretches[i - 1].end, stretches[i].begin);
            const uint64_t elements = element_count(plan.dx_shape);
            // The outer levels' coordinates of e: row_source over them and an innermost axis of one element.
            std::vector<SliceAxis> levels_only(axes.begin(), axes.begin() + ptrdiff_t(levels));
            levels_only.push_back(SliceAxis{});
            size_t s = 0;
            for (uint64_t e = 0; e < elements; e += inner) {
                while (s < stretches.size() && stretches[s].end <= e) ++s;
                const bool in_stretch = s < stretches.size() && stretches[s].begin <= e;
                ASSERT_EQ(in_stretch, row_source(levels_only, e / inner).has_value())
                    << "trial " << trial << " levels " << levels << " element " << e;
            }
        }
    }
}

TEST(SliceGradWalk, StepDigitsCarryLikeAddition) {
    // A step of s elements: adding its digits (with carries) to the coordinates of element i gives those of i + s.
    const std::vector<SliceAxis> levels = {{5, 1, 0, 1}, {7, 1, 0, 1}, {13, 1, 0, 1}};
    for (uint64_t step : {1u, 12u, 13u, 91u, 100u, 454u}) {
        const std::vector<uint64_t> digits = slice_gpu::step_digits(levels, step);
        EXPECT_EQ(digits[0] * 91 + digits[1] * 13 + digits[2], step % 455) << step;
        for (size_t a = 0; a < 3; ++a) EXPECT_LT(digits[a], uint64_t(levels[a].dx));
    }
}

TEST(SliceGradWalk, ChosenByTheGeometry) {
    // Rows that are not whole uint4s with dY bound whole, on either API, but rows of at least 16 uint4s on one axis or
    // two with step 1 (the element kernel); rows of whole uint4s take the rows kernel on Vulkan, the element kernel
    // on D3D12.
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{3, 0, 3, 1}, {4, 0, 2, 3}, {255, 1, 85, 3}})).kernel,
              "slice_grad_walk_b16");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{9, 0, 9, 1}, {270, 0, 60, 3}})).kernel, "slice_grad_walk_b8");
    // Rows of a uint4 to 255 bytes take the lines walk instead (tests/gpu/slice_grad_lines_test.cpp).
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{8, 0, 4, 2}, {63, 0, 63, 1}})).kernel, "slice_grad_walk_lines_b32");
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{9000, 8000, 4500, -1}, {3, 2, 2, -1}})).kernel,
              "slice_grad_walk_b32");
    // Spans over at most 2/5 of dX: the spans kernel (tests/gpu/slice_grad_spans_test.cpp).
    EXPECT_EQ(program_of(visit_plan(DType::f32, {{9000, 8000, 100, -1}, {3, 2, 1, 1}})).kernel, "slice_grad_spans_b32");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{8, 0, 4, 2}, {64, 0, 32, 2}})).kernel, "slice_grad_rows_b8");
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{8, 0, 4, 2}, {64, 0, 32, 2}}), d3d12).kernel, "slice_grad_b8");
    // One axis, or two with step-1 rows, rows of 16 uint4s and more: the element kernel.
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{1000, 1, 499, 2}})).kernel, "slice_grad_b8");
    // Its variant for rows that end inside uint4s where rows of at least a uint4 are not whole uint4s (here 255
    // int16s), the plain one elsewhere.
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{4, 0, 2, 3}, {255, 1, 200, 1}})).kernel, "slice_grad_rowends_b16");
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{4, 0, 2, 3}, {256, 1, 200, 1}}), d3d12).kernel, "slice_grad_b16");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{9, 8, 9, -1}, {255, 0, 255, 1}})).kernel, "slice_grad_walk_lines_b8");
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{4, 0, 2, 3}, {255, 1, 85, 3}})).kernel, "slice_grad_walk_b16");
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{9, 0, 9, 1}, {255, 0, 128, 2}})).kernel, "slice_grad_walk_b16");
    // dY beyond a binding: box chunks of the element kernel.
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{8, 0, 8, 1}, {4099, 0, 2050, 2}}), kTinyLimits).kernel,
              "slice_grad_rowends_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{8, 0, 8, 1}, {4096, 0, 2048, 2}}), kTinyLimits).kernel,
              "slice_grad_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{8199, 0, 4100, 2}}), kTinyLimits).kernel, "slice_grad_b8");
}

}  // namespace
}  // namespace dmlgrad::testing
