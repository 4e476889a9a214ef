// Slice grad where the innermost axis is copied whole (gpu/ops/slice_geometry.h's with_wide_elements: its elements
// fold into wider ones of up to 8 bytes, a bit copy): bit for bit against the CPU on fresh random dY with the output
// poisoned, for 8-, 16- and 32-bit elements folded into every wider size, through each kernel the folded geometry
// takes (spans, walk, rows or element kernel, and the chunked element kernel under small limits), on both APIs.
#include <gtest/gtest.h>

#include <set>

#include "gpu/ops/slice_geometry.h"
#include "gpu_testing.h"
#include "slice_visit.h"

namespace dmlgrad::testing {
namespace {

// The kernel's element bits ("_b16"): the plan's, times the largest power of two dividing the row that keeps an
// element at most 8 bytes.
std::string folded_bits(DType type, int64_t row) {
    uint64_t bytes = dtype_size(type);
    while (bytes < 8 && row % 2 == 0) bytes *= 2, row /= 2;
    return "_b" + std::to_string(8 * bytes);
}

std::string bits_of(const std::string& kernel) { return kernel.substr(kernel.rfind("_b")); }

// The plan on the GPU (under `limits` for the choice, on `backend`) against the CPU, with a fresh random dY; its
// kernel's element size must be the folded one. Returns the kernel.
std::string expect_folded_matches_cpu(const SliceGradPlan& plan, int64_t row, std::mt19937_64& rng,
                                      const DeviceLimits& limits, Backend& backend) {
    const std::string kernel = program_of(plan, limits).kernel;
    EXPECT_EQ(bits_of(kernel), folded_bits(plan.dtype, row)) << kernel << ": " << describe(plan);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng), backend);
    return kernel;
}

DeviceLimits one_binding_here() {
    DeviceLimits limits = kOneBinding;
    limits.api = tested_api();
    return limits;
}

// Axes outside rows copied whole, with steps that keep the rows from merging into one axis (the kernels they take
// vary with the fold: spans, walk, element and rows kernels all run).
const std::vector<std::vector<Visit>> kOuterAxes = {
    // issue 23's 1206/38 ([:7:2, 1:, :, :, 7::4, :, 314::4, :] of int8, rows of 2 at every 4th column), smaller
    {{7, 0, 4, 2}, {17, 7, 3, 4}, {6, 0, 6, 1}, {120, 14, 27, 4}},
    // every other row, reversed, a third of them
    {{5, 4, 3, -2}, {301, 300, 150, -2}},
    // every row reversed: one axis of step -1 once folded
    {{1001, 1000, 1001, -1}},
    // two thirds of every third row, two of four planes
    {{4, 3, 2, -2}, {601, 2, 200, 3}},
    // every other of 16 columns, a third of the planes: rows of whole uint4s once folded
    {{40, 1, 13, 3}, {16, 0, 8, 2}},
};

const std::pair<DType, int64_t> kFolds[] = {
    {DType::u8, 2}, {DType::i8, 12}, {DType::u8, 8}, {DType::f16, 4}, {DType::i32, 6}};

TEST(SliceGradGpuWideElements, MatchesCpuWhereWholeRowsFoldIntoWiderElements) {
    // On Direct3D 12 (about 0.7 s a run through vkd3d on lavapipe) the first three geometries with every other fold:
    // the spans, walk and element kernels, which it compiles from the same sources.
    const bool d3d12 = tested_api() == GpuApi::d3d12;
    SeededRng rng;
    std::set<std::string> families;
    for (size_t g = 0; g < kOuterAxes.size() - (d3d12 ? 2 : 0); ++g)
        for (size_t f = 0; f < std::size(kFolds); f += d3d12 ? 2 : 1) {
            const auto& [t, row] = kFolds[f];
            std::vector<Visit> axes = kOuterAxes[g];
            axes.push_back({row, 0, row, 1});
            const std::string kernel =
                expect_folded_matches_cpu(visit_plan(t, axes), row, rng, one_binding_here(), gpu());
            families.insert(kernel.substr(0, kernel.rfind("_b")));
        }
    // Every family but the chunked element kernel (below) ran wide elements.
    for (const char* family : {"slice_grad_spans", "slice_grad_walk", "slice_grad"})
        EXPECT_EQ(families.count(family), 1u) << family;
    if (!d3d12) {
        EXPECT_EQ(families.count("slice_grad_rows"), 1u);
    }
}

TEST(SliceGradGpuWideElements, MatchesCpuInChunks) {
    // dY beyond a binding: the element kernel in box-shaped chunks, on the folded axes.
    SeededRng rng;
    for (DType t : {DType::u8, DType::i16, DType::f32}) {
        const SliceGradPlan chunked = visit_plan(t, {{400, 3, 130, 3}, {61, 60, 20, -3}, {2, 0, 2, 1}});
        ASSERT_GT(chunked.dy_shape[0] * 40 * int64_t(dtype_size(t)), int64_t(kTinyLimits.max_binding_bytes));
        expect_folded_matches_cpu(chunked, 2, rng, kTinyLimits, gpu_with_limits(kTinyLimits));
    }
}

TEST(SliceGradGpuWideElements, FoldsOnlyAnInnermostAxisCopiedWhole) {
    // The folded plan's type and innermost axis: int8 rows of 6 -> 16-bit elements, rows of 3; int16 rows of 12 ->
    // 64-bit elements, rows of 3; rows of 2 int8 -> one 16-bit element, merged with its outer axis of step 4.
    const SliceGradPlan six = slice_gpu::with_wide_elements(visit_plan(DType::i8, {{9, 0, 3, 4}, {6, 0, 6, 1}}));
    EXPECT_EQ(six.dtype, DType::u16);
    EXPECT_EQ(six.gather_axes.back().dx, 3);
    const SliceGradPlan twelve = slice_gpu::with_wide_elements(visit_plan(DType::i16, {{9, 0, 3, 4}, {12, 0, 12, 1}}));
    EXPECT_EQ(twelve.dtype, DType::u64);
    EXPECT_EQ(twelve.gather_axes.back().dx, 3);
    const SliceGradPlan pairs =
        slice_gpu::with_wide_elements(visit_plan(DType::i8, {{5, 1, 2, 2}, {9, 0, 3, 4}, {2, 0, 2, 1}}));
    EXPECT_EQ(pairs.dtype, DType::u16);
    ASSERT_EQ(pairs.gather_axes.size(), 2u);
    EXPECT_EQ(pairs.gather_axes.back().dx, 9);
    EXPECT_EQ(pairs.gather_axes.back().stride, 4);
    // Not folded: an odd row, a row not copied whole (a crop, a step), 64-bit elements.
    for (const SliceGradPlan& plan :
         {visit_plan(DType::i8, {{9, 0, 3, 4}, {7, 0, 7, 1}}), visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 1, 6, 1}}),
          visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 0, 4, 2}}), visit_plan(DType::f64, {{9, 0, 3, 4}, {8, 0, 8, 1}})}) {
        const SliceGradPlan same = slice_gpu::with_wide_elements(plan);
        EXPECT_EQ(same.dtype, plan.dtype) << describe(plan);
        EXPECT_EQ(same.gather_axes.back().dx, plan.gather_axes.back().dx) << describe(plan);
    }
}

TEST(SliceGradGpuWideElements, RunsFoldWhereTheyDivideIntoWiderElements) {
    // With runs: an innermost axis stepping by +1 folds where the wider element divides its size, its first reached
    // coordinate and its length (int8 [-4:] of rows of 8 -> u32 [1:] of rows of 2, merged with a reversed axis
    // outside into u32 rows of 2 * 47 at step -2; int16 [2:6] of rows of 10 -> u32 [1:3] of rows of 5); not a run
    // at an odd start, of an odd length, reversed or stepping by 2, nor without runs.
    const SliceGradPlan quads =
        slice_gpu::with_wide_elements(visit_plan(DType::i8, {{9, 0, 3, 3}, {47, 46, 47, -1}, {8, 4, 4, 1}}), true);
    EXPECT_EQ(quads.dtype, DType::u32);
    ASSERT_EQ(quads.gather_axes.size(), 2u);
    EXPECT_EQ(quads.gather_axes.back().dx, 94);
    EXPECT_EQ(quads.gather_axes.back().start, 93);
    EXPECT_EQ(quads.gather_axes.back().stride, -2);
    const SliceGradPlan halves =
        slice_gpu::with_wide_elements(visit_plan(DType::i16, {{9, 0, 3, 4}, {10, 2, 4, 1}}), true);
    EXPECT_EQ(halves.dtype, DType::u32);
    EXPECT_EQ(halves.gather_axes.back().dx, 5);
    EXPECT_EQ(halves.gather_axes.back().start, 1);
    EXPECT_EQ(halves.gather_axes.back().dy, 2);
    for (const SliceGradPlan& plan :
         {visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 3, 4, 1}}), visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 2, 3, 1}}),
          visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 5, 4, -1}}), visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 0, 4, 2}})}) {
        EXPECT_EQ(slice_gpu::with_wide_elements(plan, true).dtype, DType::i8) << describe(plan);
    }
    EXPECT_EQ(slice_gpu::with_wide_elements(visit_plan(DType::i8, {{9, 0, 3, 4}, {8, 4, 4, 1}})).dtype, DType::i8);
}

TEST(SliceGradGpuWideElements, MatchesCpuWhereTheWalksRunsFold) {
    // In the plain walk's place runs fold (20261232/21's [:, :24:3, ::-1, -4:] of int8 rows of 8, small: u32 rows at
    // step -2; int16 [:, ::2, 2:8] of rows of 10 and uint8 [4:8] of rows of 12: u32 lines); the spans' choice sees the
    // plan unfolded.
    SeededRng rng;
    const std::vector<std::pair<DType, std::vector<Visit>>> cases = {
        {DType::i8, {{31, 0, 31, 1}, {27, 0, 8, 3}, {47, 46, 47, -1}, {8, 4, 4, 1}}},
        {DType::i16, {{5, 0, 5, 1}, {9, 0, 5, 2}, {10, 2, 6, 1}}},
        {DType::u8, {{3, 2, 2, -2}, {701, 3, 175, 4}, {12, 4, 4, 1}}},
    };
    for (const auto& [t, axes] : cases) {
        const SliceGradPlan plan = visit_plan(t, axes);
        const std::string kernel = program_of(plan, one_binding_here()).kernel;
        EXPECT_EQ(kernel.rfind("slice_grad_walk", 0), 0u) << kernel << ": " << describe(plan);
        EXPECT_EQ(bits_of(kernel), "_b32") << kernel << ": " << describe(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
    }
}

}  // namespace
}  // namespace dmlgrad::testing
