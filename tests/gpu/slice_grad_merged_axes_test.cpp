// Slice grad where axes take one element (the plan merges each with a neighbour: ops/slice_grad.h's
// simplified_axes): bit for bit against the CPU on 8-, 16- and 32-bit elements, on the geometries of issue 23's slow
// 8- and 16-bit cases at small sizes and on random slices of ranks 2-8 (odd sizes, steps -4..4 on the other axes),
// through whichever kernel the merged geometry takes (spans, walk, element).
#include <gtest/gtest.h>

#include "gpu_testing.h"
#include "ops/slice_grad.h"
#include "slice_visit.h"

namespace dmlgrad::testing {
namespace {

constexpr DType kTypes[] = {DType::u8, DType::i16, DType::u32};

// The axes of size above 1: what the plan would index without merging.
size_t indexed_axes(const SliceGradPlan& plan) {
    size_t n = 0;
    for (int64_t size : plan.dx_shape) n += size > 1 ? 1 : 0;
    return n;
}

// The merged plan on the GPU with a fresh random dY, against the CPU.
void expect_merged_matches_cpu(const SliceGradPlan& plan, std::mt19937_64& rng) {
    ASSERT_LT(plan.gather_axes.size(), indexed_axes(plan)) << describe(plan);
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng), gpu());
}

// issue 23's slow slices whose inner axis takes one element (H100 sweeps, seeds 20261204/5/15), at small sizes.
const std::vector<std::vector<Visit>> kOneElementGeometries = {
    // [-4950194:959656:-4, :, 1::-3] of 6593419x53x3: rows of 159 on a grid of step 3, every fourth row
    {{1001, 901, 201, -4}, {53, 0, 53, 1}, {3, 1, 1, -3}},
    // [-1::-3, 0:5:4, :, 0:2:2] of 9x7x477539x2
    {{9, 8, 3, -3}, {7, 0, 2, 4}, {1001, 0, 1001, 1}, {2, 0, 1, 2}},
    // [:, 1:15:2, ::-3, ::-1, :6, :3:2, 0::3, 0:2:3] of 19x19x17x57x7x4x11x3
    {{2, 0, 2, 1}, {5, 1, 2, 2}, {7, 6, 3, -3}, {5, 4, 5, -1}, {3, 0, 2, 1}, {4, 0, 2, 2}, {11, 0, 4, 3}, {3, 0, 1, 3}},
    // [52497:-26262:-1, -126::2, -1:0:-1] of 65536x143x2
    {{600, 500, 301, -1}, {143, 17, 63, 2}, {2, 1, 1, -1}},
    // [:27:4, ::-2, ::-2, :, 0::-3, :12:-3, :, ::-4] of 27x1x2x1151x3x41x7x2
    {{13, 0, 4, 4},
     {1, 0, 1, -2},
     {2, 1, 1, -2},
     {11, 0, 11, 1},
     {3, 0, 1, -3},
     {17, 11, 4, -3},
     {7, 0, 7, 1},
     {2, 1, 1, -4}},
};

TEST(SliceGradGpuMergedAxes, MatchesCpuOnTheGeometriesOfTheIssue) {
    SeededRng rng;
    for (DType t : kTypes)
        for (const std::vector<Visit>& axes : kOneElementGeometries)
            expect_merged_matches_cpu(visit_plan(t, axes), rng);
}

// A random slice of `rank` axes of odd sizes from 3 to 2 * half + 1, the innermost and about a third of the others
// taking one element (so at least the innermost merges), the rest steps -4..4 (|step| beyond the size now and then)
// from a random first index.
std::vector<Visit> random_one_element_slice(size_t rank, uint64_t half, std::mt19937_64& rng) {
    std::vector<Visit> axes;
    for (size_t a = 0; a < rank; ++a) {
        const int64_t n = 3 + 2 * int64_t(rng() % half);
        int64_t step = 1 + int64_t(rng() % 4);
        if (rng() % 8 == 0) step = n + 1;
        if (rng() % 2) step = -step;
        Visit v = random_visit(n, step, rng() % 4 != 0, rng);
        if (a + 1 == rank || rng() % 3 == 0) v.count = 1;
        axes.push_back(v);
    }
    return axes;
}

// Per rank, half the largest size: dX of at most about 120000 elements.
constexpr uint64_t kHalfSize[] = {0, 0, 100, 20, 7, 4, 3, 2, 1};

TEST(SliceGradGpuMergedAxes, MatchesCpuOnRandomSlicesOfRanks2To8) {
    SeededRng rng;
    for (DType t : kTypes)
        for (size_t rank = 2; rank <= 8; ++rank)
            expect_merged_matches_cpu(visit_plan(t, random_one_element_slice(rank, kHalfSize[rank], rng)), rng);
}

}  // namespace
}  // namespace dmlgrad::testing
