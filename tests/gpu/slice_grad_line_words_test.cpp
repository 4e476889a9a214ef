// Slice grad's 8-bit lines read as words (slice_grad_walk_lines_words_b8, kernels/slice_grad_lines.hlsli with
// LINE_WORDS=1: each line's reached dY bytes within 8 of each other per window, loaded as words): bit for bit against
// the CPU, with the output poisoned first, on random int8 slices of short rows, on issue 23's int8 lines at small
// sizes, with several uint4s per thread, split into dispatches and windows, and with dX ending inside a uint4; its
// column words decoded against the columns; and the dispatch's choice of it from the geometry.
#include <gtest/gtest.h>

#include "gpu/ops/slice_geometry.h"
#include "gpu_testing.h"
#include "interface/slice_grad_walk.h"
#include "random_slices.h"

namespace dmlgrad::testing {
namespace {

namespace walk = kernels::slice_grad_walk;

constexpr const char* kWords = "slice_grad_walk_lines_words_b8";

TEST(SliceGradLineWords, MatchesCpuOnRandomSlicesOfShortRows) {
    // Int8 rows of 1 to 40 bytes folded into lines; draws until 24 take the words kernel (about one in four does).
    SeededRng rng;
    int taken = 0;
    for (int round = 0; round < 400 && taken < 24; ++round) {
        const size_t rank = 2 + rng() % 4;
        const DType t = rng() % 2 ? DType::u8 : DType::i8;
        const SliceGradPlan plan = random_slice(t, rank, {1, 40, rank <= 3 ? 40 : 9}, rng);
        if (program_of(plan).kernel != kWords) continue;
        ++taken;
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
    EXPECT_GE(taken, 24);
}

TEST(SliceGradLineWords, MatchesCpuOnTheIssuesInt8Lines) {
    // 20261208/25 ([-8::-3, ::2, ::-4, :] of uint8 rows of 3) and /38 ([:9666392:4, :, 3:1:-1] of int8 4x5 lines),
    // small; /38 again over 8 MiB (several uint4s a thread) and of an odd length (dX ends inside a uint4).
    SeededRng rng;
    const std::vector<std::vector<Visit>> cases = {
        {{17, 9, 4, -3}, {61, 0, 31, 2}, {9, 8, 3, -4}, {3, 0, 3, 1}},
        {{157, 0, 40, 4}, {4, 0, 4, 1}, {5, 3, 2, -1}},
        {{419431, 0, 104858, 4}, {4, 0, 4, 1}, {5, 3, 2, -1}},
        {{1001, 1000, 334, -3}, {3, 0, 3, 1}, {7, 1, 2, 4}},
    };
    for (const std::vector<Visit>& axes : cases) {
        const SliceGradPlan plan = visit_plan(DType::i8, axes);
        const GpuProgram program = program_of(plan);
        ASSERT_EQ(program.kernel, kWords) << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(DType::i8, plan.dy_shape, rng), gpu());
    }
    const GpuProgram large = program_of(visit_plan(DType::i8, cases[2]));
    EXPECT_GE(pushed_params<walk::WalkParams>(large.steps.at(0)).per_thread, 2u);
}

TEST(SliceGradLineWords, MatchesCpuSplitIntoDispatchesAndWindows) {
    // kFewGroups: 3 workgroups a dispatch; kTinyLimits: dX in windows of 4 KiB.
    SeededRng rng;
    const SliceGradPlan plan = visit_plan(DType::u8, {{3, 0, 3, 1}, {401, 400, 201, -2}, {7, 1, 2, 3}});
    ASSERT_EQ(program_of(plan, kFewGroups).kernel, kWords);
    expect_gpu_matches_cpu(plan, random_tensor(DType::u8, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    const SliceGradPlan windows = visit_plan(DType::u8, {{2, 1, 1, 1}, {300, 44, 10, -4}, {7, 3, 2, 2}, {5, 4, 2, -2}});
    const GpuProgram tiny = program_of(windows, kTinyLimits);
    ASSERT_EQ(tiny.kernel, kWords);
    ASSERT_GT(tiny.steps.size(), 1u);
    expect_gpu_matches_cpu(windows, random_tensor(DType::u8, windows.dy_shape, rng), gpu_with_limits(kTinyLimits));
}

TEST(SliceGradLineWords, ColumnWordsDecodeToTheColumns) {
    // Random lines' columns: where every window's reached columns lie within 8 dY elements per line, each column's
    // code, added to its line's lowest, gives its dY element, the mask its reached columns, the spans each line's
    // highest minus lowest; elsewhere no words.
    SeededRng rng;
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    int decoded = 0;
    for (int trial = 0; trial < 400; ++trial) {
        std::vector<uint32_t> columns(16 + rng() % 40);
        const uint64_t spread = 4 + rng() % 40, sparsity = 1 + rng() % 4;
        for (uint32_t& c : columns) c = rng() % sparsity == 0 ? uint32_t(rng() % spread) : kNone;
        const size_t n = columns.size(), length = (n + 15) / 16;
        const std::vector<uint32_t> words = slice_gpu::column_words(columns, kNone);
        bool narrow = true;  // every window's reached columns within 8 per line
        for (size_t c = 0; c < n; ++c)
            for (size_t line = 0; line < 2; ++line) {
                uint32_t low = kNone, high = 0;
                for (size_t k = 0; k < 16; ++k)
                    if ((c + k >= n) == (line == 1) && columns[(c + k) % n] != kNone)
                        low = std::min(low, columns[(c + k) % n]), high = std::max(high, columns[(c + k) % n]);
                narrow = narrow && (low == kNone || high - low < 8);
            }
        ASSERT_EQ(words.empty(), !narrow) << "trial " << trial;
        if (words.empty()) continue;
        ++decoded;
        ASSERT_EQ(words.size(), 4 * 2 * 16 * length);
        for (size_t c = 0; c < n; ++c) {
            const size_t codes = 4 * ((c % 16) * length + c / 16), lines = codes + 4 * 16 * length;
            for (size_t k = 0; k < 16; ++k) {
                const uint32_t w = columns[(c + k) % n], line = c + k >= n ? 1 : 0;
                ASSERT_EQ((words[lines + 2] >> k) & 1, w != kNone ? 1u : 0u) << "trial " << trial << " c " << c;
                if (w == kNone) continue;
                const uint32_t code = (words[codes + k / 4] >> (8 * (k % 4))) & 0xFF;
                ASSERT_EQ(code >> 6, line);
                ASSERT_EQ(words[lines + line] + ((code >> 5) & 1) * 4 + ((code >> 3) & 3), w)
                    << "trial " << trial << " c " << c << " k " << k;
                ASSERT_LE(w, words[lines + line] + ((words[lines + 2] >> (16 + 8 * line)) & 0xFF));
            }
        }
    }
    EXPECT_GE(decoded, 40);
}

TEST(SliceGradLineWords, ChosenByTheGeometry) {
    // Int8 lines whose windows' reached columns lie within 8 dY bytes per line, on Vulkan, without the gap table:
    // 20261208/38's lines of 20 with 8 reached. On D3D12 the plain lines kernel; lines whose reached columns lie
    // further apart (rows of 20 whole, folded) keep it too, as do 16-bit lines.
    DeviceLimits d3d12 = kOneBinding;
    d3d12.api = GpuApi::d3d12;
    const SliceGradPlan pairs = visit_plan(DType::i8, {{157, 0, 40, 4}, {4, 0, 4, 1}, {5, 3, 2, -1}});
    EXPECT_EQ(program_of(pairs).kernel, kWords);
    EXPECT_EQ(program_of(pairs, d3d12).kernel, "slice_grad_walk_lines_b8");
    EXPECT_EQ(program_of(visit_plan(DType::u8, {{157, 0, 40, 4}, {4, 0, 4, 1}, {20, 19, 20, -1}})).kernel,
              "slice_grad_walk_lines_b8");
    EXPECT_EQ(program_of(visit_plan(DType::i16, {{157, 0, 40, 4}, {4, 0, 4, 1}, {5, 3, 2, -1}})).kernel,
              "slice_grad_walk_lines_b16");
}

}  // namespace
}  // namespace dmlgrad::testing
